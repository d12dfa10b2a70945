//! The SCurve port against what ArduPilot's own, unmodified SCurve code
//! computes (`tests/data/scurve/`, see its README): every value of every row
//! must be the same float, bit for bit, on every case — the seed example, a
//! Rover box driven three times round, Copter missions with legs of hundreds of
//! metres and climbs and descents under different limits, many chained corners,
//! corners whose blend test sits on either side of its threshold, and speed
//! limits changed mid-leg in every phase of a leg, as AR_WPNav changes them,
//! and legs entered or left at speed.
//!
//! Each case's parameters are in `cases*.txt` exactly as
//! the generator printed them (`%.9g`, which gives back the float exactly);
//! the legs are chained as AR_WPNav chains them, with perfect tracking.

use std::io::Read;

use mavsitl_guidance::SCurve;
use nalgebra::Vector3;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/scurve");

/// One reference run.
#[derive(Debug)]
struct Case {
    name: String,
    speed_xy: f32,
    speed_up: f32,
    speed_down: f32,
    accel_xy: f32,
    accel_z: f32,
    jerk: f32,
    snap: f32,
    wp_radius: f32,
    accel_corner: f32,
    dt: f32,
    /// Start, then the waypoints (SCurve's frame: +z up), m.
    points: Vec<Vector3<f32>>,
    /// Speed changes as AR_WPNav makes them: at the start of tick k, the
    /// new limit v (m/s) for speed_xy, speed_up and speed_down.
    speed_changes: Vec<(usize, f32)>,
    /// The first leg's speed at its origin and at its destination (m/s),
    /// set right after it is planned (`set_origin_speed_max`,
    /// `set_destination_speed_max`).
    entry_speeds: (Option<f32>, Option<f32>),
}

/// The cases of `cases.txt` (fixed limits), `cases_speed.txt` (speed
/// changes mid-leg) and `cases_entry.txt` (a first leg entered or left at
/// speed).
fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for file in ["cases.txt", "cases_speed.txt", "cases_entry.txt"] {
        let text = std::fs::read_to_string(format!("{DATA}/{file}")).expect(file);
        let mut name = None;
        let mut params = None;
        let mut changes = String::new();
        let mut entry = String::new();
        for line in text.lines().map(str::trim) {
            if let Some(n) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                name = Some(n.to_string());
            } else if let Some(p) = line.strip_prefix("params:") {
                params = Some(p.to_string());
            } else if let Some(c) = line.strip_prefix("speed_changes:") {
                changes = c.to_string();
            } else if let Some(e) = line.strip_prefix("entry_speeds:") {
                entry = e.to_string();
            } else if let Some(p) = line.strip_prefix("points:") {
                let (n, ps) = (name.take().expect("[name]"), params.take().expect("params"));
                let mut c = case(n, &ps, p, &std::mem::take(&mut changes));
                c.entry_speeds = entry_speeds(&std::mem::take(&mut entry));
                out.push(c);
            }
        }
    }
    out
}

/// `origin=v destination=v`, either or both.
fn entry_speeds(text: &str) -> (Option<f32>, Option<f32>) {
    let get = |key: &str| {
        text.split_whitespace()
            .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
            .map(|v| v.parse().expect("speed"))
    };
    (get("origin"), get("destination"))
}

fn case(name: String, params: &str, points: &str, changes: &str) -> Case {
    let get = |key: &str| -> f32 {
        params
            .split_whitespace()
            .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
            .unwrap_or_else(|| panic!("{name}: {key}"))
            .parse()
            .expect("number")
    };
    let points = points
        .split_whitespace()
        .map(|p| {
            let v: Vec<f32> = p
                .trim_matches(['(', ')'])
                .split(',')
                .map(|x| x.parse().expect("coordinate"))
                .collect();
            Vector3::new(v[0], v[1], v[2])
        })
        .collect();
    Case {
        speed_xy: get("speed_xy"),
        speed_up: get("speed_up"),
        speed_down: get("speed_down"),
        accel_xy: get("accel_xy"),
        accel_z: get("accel_z"),
        jerk: get("jerk"),
        snap: get("snap"),
        wp_radius: get("wp_radius"),
        accel_corner: get("accel_corner"),
        dt: get("dt"),
        points,
        speed_changes: changes
            .split_whitespace()
            .map(|kv| {
                let (k, v) = kv.split_once('=').expect("k=v");
                (k.parse().expect("tick"), v.parse().expect("speed"))
            })
            .collect(),
        entry_speeds: (None, None),
        name,
    }
}

/// The reference rows of `name` (`NAME.csv` or `NAME.csv.gz`).
fn reference(name: &str) -> String {
    let plain = format!("{DATA}/{name}.csv");
    if let Ok(t) = std::fs::read_to_string(&plain) {
        return t;
    }
    let gz = std::fs::File::open(format!("{plain}.gz")).expect("reference csv");
    let mut text = String::new();
    flate2::read::GzDecoder::new(gz)
        .read_to_string(&mut text)
        .expect("gzip");
    text
}

/// AR_WPNav's three legs with perfect tracking (`set_desired_location`).
struct Chain<'a> {
    c: &'a Case,
    prev: SCurve,
    this: SCurve,
    next: SCurve,
    origin: Vector3<f32>,
    destination: Vector3<f32>,
    fast_waypoint: bool,
    /// The speed limits in force: xy, up, down (m/s).
    speeds: [f32; 3],
}

impl<'a> Chain<'a> {
    fn new(c: &'a Case) -> Self {
        Chain {
            c,
            prev: SCurve::new(),
            this: SCurve::new(),
            next: SCurve::new(),
            origin: c.points[0],
            destination: c.points[0],
            fast_waypoint: false,
            speeds: [c.speed_xy, c.speed_up, c.speed_down],
        }
    }

    fn track(&self, curve: &mut SCurve, o: &Vector3<f32>, d: &Vector3<f32>) {
        let c = self.c;
        let [speed_xy, speed_up, speed_down] = self.speeds;
        curve.calculate_track(
            o, d, speed_xy, speed_up, speed_down, c.accel_xy, c.accel_z, c.snap, c.jerk,
        );
    }

    /// A new speed limit, as `AR_WPNav::update_speed_max()` sets it on the
    /// current and next legs (and every later track).
    fn set_speed_max(&mut self, v: f32) {
        self.speeds = [v, v, v];
        self.this.set_speed_max(v, v, v);
        self.next.set_speed_max(v, v, v);
    }

    /// Heads for waypoint `leg + 1`.
    fn set_destination(&mut self, leg: usize) {
        self.prev = self.this.clone();
        self.origin = self.destination;
        self.destination = self.c.points[leg + 1];
        if self.fast_waypoint && !self.next.finished() {
            self.this = self.next.clone();
        } else {
            let mut this = SCurve::new();
            self.track(&mut this, &self.origin, &self.destination);
            self.this = this;
        }
        self.next.init();
        self.fast_waypoint = false;
        if let Some(n) = self.c.points.get(leg + 2) {
            let mut next = std::mem::take(&mut self.next);
            self.track(&mut next, &self.destination, n);
            self.next = next;
            self.fast_waypoint = true;
        }
    }
}

/// Flies `c` and compares every row; returns the ticks at which legs
/// finished.
fn check(c: &Case) -> Vec<usize> {
    let text = reference(&c.name);
    let mut lines = text.lines();
    assert!(lines.next().expect("header").starts_with("t,pos_x"));
    let rows: Vec<&str> = lines.collect();
    let mut chain = Chain::new(c);
    let mut leg = 0;
    chain.set_destination(leg);
    let (origin_speed, destination_speed) = c.entry_speeds;
    if let Some(v) = origin_speed {
        chain.this.set_origin_speed_max(v);
    }
    if let Some(v) = destination_speed {
        chain.this.set_destination_speed_max(v);
    }
    let legs = c.points.len() - 1;
    let mut finish_ticks = Vec::new();
    for (n, row) in rows.iter().enumerate().skip(1) {
        let f: Vec<&str> = row.split(',').collect();
        assert_eq!(f.len(), 14, "{} row {n}", c.name);
        if let Some(&(_, v)) = c.speed_changes.iter().find(|(k, _)| *k == n) {
            chain.set_speed_max(v);
        }
        let mut pos = chain.origin;
        let mut vel = Vector3::zeros();
        let mut acc = Vector3::zeros();
        let fast = chain.fast_waypoint;
        let Chain {
            prev, this, next, ..
        } = &mut chain;
        let finished = this.advance_target_along_track(
            prev,
            next,
            c.wp_radius,
            c.accel_corner,
            fast,
            c.dt,
            &mut pos,
            &mut vel,
            &mut acc,
        );
        let ours = [
            pos.x, pos.y, pos.z, vel.x, vel.y, vel.z, acc.x, acc.y, acc.z,
        ];
        let names = [
            "pos_x", "pos_y", "pos_z", "vel_x", "vel_y", "vel_z", "acc_x", "acc_y", "acc_z",
        ];
        for (i, (v, name)) in ours.iter().zip(names).enumerate() {
            let want: f32 = f[1 + i].parse().expect("number");
            assert!(
                v.to_bits() == want.to_bits(),
                "{} row {n} (t {}): {name} {v:.9e} but ArduPilot {want:.9e}",
                c.name,
                f[0]
            );
        }
        assert_eq!(f[10], leg.to_string(), "{} row {n}: leg", c.name);
        assert_eq!(f[11] == "1", fast, "{} row {n}: fast_waypoint", c.name);
        assert_eq!(f[12] == "1", finished, "{} row {n}: finished", c.name);
        let clock: f32 = f[13].parse().expect("clock");
        assert!(
            chain.this.get_time_elapsed().to_bits() == clock.to_bits(),
            "{} row {n}: leg clock {:.9e} but ArduPilot {clock:.9e}",
            c.name,
            chain.this.get_time_elapsed()
        );
        if finished && finish_ticks.len() == leg {
            finish_ticks.push(n);
            if leg + 1 < legs {
                leg += 1;
                chain.set_destination(leg);
            }
        }
    }
    assert_eq!(finish_ticks.len(), legs, "{}: legs finished", c.name);
    finish_ticks
}

#[test]
fn every_case_matches_ardupilot_bit_for_bit() {
    let all = cases();
    let names: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
    for want in [
        "ardupilot_seed",
        "rover_box",
        "copter_long",
        "copter_3d",
        "copter_many_corners",
        "copter_3d_soft_z",
        "near_threshold_below",
        "near_threshold_above",
        "speed_rover_time0",
        "speed_rover_accel_lower",
        "speed_rover_accel_raise",
        "speed_rover_box",
        "speed_rover_corner_late",
        "speed_rover_raise_late",
        "speed_copter_straight",
        "speed_copter_climb",
        "speed_copter_corners",
        "entry_rover_origin",
        "entry_rover_origin_above_max",
        "entry_rover_origin_slow",
        "entry_rover_destination",
        "entry_rover_short_both",
        "entry_rover_corner_destination",
        "entry_copter_climb_both",
        "entry_copter_long_both",
        "entry_copter_short_origin",
        "entry_copter_short_destination",
        "entry_copter_3m_origin",
        "entry_copter_3m_near_peak",
    ] {
        assert!(names.contains(&want), "{want} missing from cases.txt");
    }
    for c in &all {
        check(c);
    }
}

#[test]
fn the_seed_legs_finish_on_ardupilots_ticks() {
    // README: legs finish at t = 5.1, 10.6, 15.4 s at dt 0.1.
    let all = cases();
    let seed = all
        .iter()
        .find(|c| c.name == "ardupilot_seed")
        .expect("seed");
    assert_eq!(check(seed), [51, 106, 154]);
}

#[test]
fn the_near_threshold_pair_straddles_the_blend_test() {
    // The two radii differ by one float step or one sweep step; one blends
    // into the next leg a tick earlier than the other.
    let all = cases();
    let blend_tick = |name: &str| {
        let c = all.iter().find(|c| c.name == name).expect(name);
        let mut chain = Chain::new(c);
        chain.set_destination(0);
        (1..100_000)
            .find(|_| {
                let mut pos = chain.origin;
                let (mut v, mut a) = (Vector3::zeros(), Vector3::zeros());
                let fast = chain.fast_waypoint;
                let Chain {
                    prev, this, next, ..
                } = &mut chain;
                this.advance_target_along_track(
                    prev,
                    next,
                    c.wp_radius,
                    c.accel_corner,
                    fast,
                    c.dt,
                    &mut pos,
                    &mut v,
                    &mut a,
                );
                chain.next.get_time_elapsed() > 0.0
            })
            .expect("blends")
    };
    let (below, above) = (
        blend_tick("near_threshold_below"),
        blend_tick("near_threshold_above"),
    );
    assert_eq!(below, above + 1, "below {below}, above {above}");
}

#[test]
fn the_leg_clock_is_a_float_that_falls_behind_n_dt() {
    // ArduPilot adds dt to a float each tick; after 50 s at 400 Hz the clock
    // is milliseconds behind n·dt — and so is the port.
    let mut s = SCurve::new();
    s.calculate_track(
        &Vector3::zeros(),
        &Vector3::new(1000.0, 0.0, 0.0),
        10.0,
        2.5,
        1.5,
        2.5,
        1.0,
        5.235_987_7,
        1.0,
    );
    let (mut p, mut v, mut a) = (Vector3::zeros(), Vector3::zeros(), Vector3::zeros());
    let mut float_clock = 0.0_f32;
    for _ in 0..20_000 {
        s.move_from_pos_vel_accel(0.0025, &mut p, &mut v, &mut a);
        float_clock += 0.0025;
    }
    assert_eq!(s.get_time_elapsed().to_bits(), float_clock.to_bits());
    let drift = 50.0 - f64::from(s.get_time_elapsed());
    assert!(drift.abs() > 1e-3, "drift {drift}");
}

/// `SCurve::calculate_path` alone, on ArduPilot's own answers over a grid of
/// limits (`calculate_path.csv`): every branch — a short ramp from rest, the
/// acceleration lowered for a moving start, solutions 5 and 7, a length or a
/// speed that binds, an entry at or above the limit, invalid limits — must give
/// the same five floats, bit for bit. Where ArduPilot's outputs fail its own
/// check (it raises an internal error and keeps only the ramp time), the
/// port's do too.
#[test]
fn calculate_path_matches_ardupilot_bit_for_bit_over_its_branches() {
    let text = reference("calculate_path");
    let (mut rows, mut rejected) = (0, 0);
    let mut shapes = std::collections::BTreeSet::new();
    for (n, line) in text.lines().enumerate().skip(1) {
        let f: Vec<f32> = line
            .split(',')
            .map(|x| x.parse().unwrap_or_else(|e| panic!("line {}: {e}", n + 1)))
            .collect();
        assert_eq!(f.len(), 12, "line {}", n + 1);
        let got = SCurve::calculate_path(f[0], f[1], f[2], f[3], f[4], f[5]);
        let got = [got.jm, got.tj, got.t2, got.t4, got.t6];
        let want = &f[6..11];
        assert!(
            got.iter()
                .zip(want)
                .all(|(g, w)| g.to_bits() == w.to_bits()),
            "line {}: (Sm, Jm, V0, Am, Vm, L) = {:?}: port {got:?}, ArduPilot {want:?}",
            n + 1,
            &f[..6]
        );
        if f[11] == 1.0 {
            assert_eq!([got[0], got[2], got[3], got[4]], [0.0; 4], "line {}", n + 1);
            rejected += 1;
        }
        shapes.insert(got.map(|x| x > 0.0));
        rows += 1;
    }
    assert_eq!((rows, rejected), (2651, 250));
    // The grid reaches every shape a path can take: nothing, ramps only,
    // ramps and a cruise, with constant jerk, with constant acceleration too.
    for shape in [
        [false; 5],
        [true, true, false, false, false],
        [true, true, false, true, false],
        [true, true, true, false, true],
        [true, true, true, true, true],
    ] {
        assert!(
            shapes.contains(&shape),
            "no row of shape {shape:?}: {shapes:?}"
        );
    }
}
