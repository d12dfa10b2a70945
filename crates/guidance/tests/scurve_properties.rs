//! Properties the ArduPilot S-curve guarantees, over random legs and limits.

use mavsitl_guidance::SCurve;
use nalgebra::Vector3;
use proptest::prelude::*;

#[derive(Debug, Clone, Copy)]
struct Limits {
    speed_xy: f32,
    speed_up: f32,
    speed_down: f32,
    accel_xy: f32,
    accel_z: f32,
    jerk: f32,
    snap: f32,
}

/// Limits as ArduPilot sets them: snap from jerk through a time constant
/// (AC_WPNav: snap = jerk·π/(2·tc), tc the attitude input time constant; AR_WPNav
/// fixes snap at 15 with jerk ≈ accel, i.e. tc ≈ 0.1).
fn limits() -> impl Strategy<Value = Limits> {
    (
        0.2f32..20.0,
        0.2f32..5.0,
        0.2f32..5.0,
        0.2f32..5.0,
        0.2f32..5.0,
        0.5f32..20.0,
        0.05f32..1.0,
    )
        .prop_map(
            |(speed_xy, speed_up, speed_down, accel_xy, accel_z, jerk, tc)| Limits {
                speed_xy,
                speed_up,
                speed_down,
                accel_xy,
                accel_z,
                jerk,
                snap: jerk * std::f32::consts::PI / (2.0 * tc),
            },
        )
}

/// Any positive limits, however inconsistent.
fn any_limits() -> impl Strategy<Value = Limits> {
    (
        0.01f32..50.0,
        0.01f32..10.0,
        0.01f32..10.0,
        0.01f32..10.0,
        0.01f32..10.0,
        0.01f32..50.0,
        0.01f32..100.0,
    )
        .prop_map(
            |(speed_xy, speed_up, speed_down, accel_xy, accel_z, jerk, snap)| Limits {
                speed_xy,
                speed_up,
                speed_down,
                accel_xy,
                accel_z,
                jerk,
                snap,
            },
        )
}

/// Legs from centimetres to kilometres, level, climbing and descending.
fn leg() -> impl Strategy<Value = Vector3<f32>> {
    (-3.0f32..3.0, 0.0f32..std::f32::consts::TAU, -1.0f32..1.0).prop_map(
        |(log_len, heading, slope)| {
            let len = 10f32.powf(log_len);
            let h = len / (1.0 + slope * slope).sqrt();
            Vector3::new(h * heading.cos(), h * heading.sin(), h * slope)
        },
    )
}

/// Legs of 5 cm to 200 m for chained runs (so a slow vehicle still finishes).
fn short_leg() -> impl Strategy<Value = Vector3<f32>> {
    (-1.3f32..2.3, 0.0f32..std::f32::consts::TAU, -1.0f32..1.0).prop_map(
        |(log_len, heading, slope)| {
            let len = 10f32.powf(log_len);
            let h = len / (1.0 + slope * slope).sqrt();
            Vector3::new(h * heading.cos(), h * heading.sin(), h * slope)
        },
    )
}

fn track(l: &Limits, o: &Vector3<f32>, d: &Vector3<f32>) -> SCurve {
    let mut s = SCurve::new();
    s.calculate_track(
        o,
        d,
        l.speed_xy,
        l.speed_up,
        l.speed_down,
        l.accel_xy,
        l.accel_z,
        l.snap,
        l.jerk,
    );
    s
}

proptest! {
    // A fixed seed: CI explores the same 300 cases every run (set
    // PROPTEST_RNG_SEED or change it here to explore others).
    #![proptest_config(ProptestConfig { cases: 300, rng_seed: proptest::test_runner::RngSeed::Fixed(0x5C0_12E), ..ProptestConfig::default() })]

    /// An isolated leg stays within its speed, acceleration and jerk limits along
    /// the track, ends exactly at the destination at rest, and its velocity
    /// profile is time-symmetric.
    #[test]
    fn isolated_leg_respects_limits_and_ends_at_rest(l in limits(), d in leg()) {
        let s = track(&l, &Vector3::zeros(), &d);
        prop_assert!(!s.is_empty());
        let t_end = s.time_end();
        prop_assert!(t_end.is_finite() && t_end > 0.0);
        let len = d.norm();
        let v_lim = s.get_speed_along_track();
        let a_lim = s.get_accel_along_track();
        let n = 2000;
        for k in 0..=n {
            let t = t_end * k as f32 / n as f32;
            let (j, a, v, p) = s.get_jerk_accel_vel_pos_at_time(t);
            prop_assert!(j.is_finite() && a.is_finite() && v.is_finite() && p.is_finite());
            // (Single precision, as ArduPilot: limits hold to a few ulp.)
            prop_assert!(v <= v_lim * (1.0 + 1e-5) + 1e-6, "v {} > {}", v, v_lim);
            prop_assert!(a.abs() <= a_lim * (1.0 + 1e-5) + 1e-6, "a {} > {}", a, a_lim);
            prop_assert!(j.abs() <= l.jerk * (1.0 + 1e-5) + 1e-6, "j {} > {}", j, l.jerk);
            prop_assert!(p >= 0.0 && p <= len * (1.0 + 1e-5) + 1e-6);
            // Symmetry: the leg decelerates as it accelerated.
            let (_, _, v_mirror, _) = s.get_jerk_accel_vel_pos_at_time(t_end - t);
            prop_assert!((v - v_mirror).abs() <= 2e-3 * v_lim.max(1.0), "v({}) {} vs v(T−t) {}", t, v, v_mirror);
        }
        // The projected 3-D speeds respect the axis limits too.
        let (_, _, v_peak, _) = s.get_jerk_accel_vel_pos_at_time(t_end * 0.5);
        let u = d / len;
        // (SCurve's frame is ArduPilot's NEU: +z climbs.)
        prop_assert!((u.xy() * v_peak).norm() <= l.speed_xy * (1.0 + 1e-5));
        prop_assert!(u.z * v_peak <= l.speed_up * (1.0 + 1e-5) + 1e-6);
        prop_assert!(-u.z * v_peak <= l.speed_down * (1.0 + 1e-5) + 1e-6);
        // Stepping the clock to the end lands exactly on the destination.
        let mut s = s;
        let (mut p, mut v, mut a) = (Vector3::zeros(), Vector3::zeros(), Vector3::zeros());
        s.move_from_pos_vel_accel(t_end + 1.0, &mut p, &mut v, &mut a);
        prop_assert!((p - d).norm() <= 2e-6 * len.max(1.0), "end {} vs {}", p, d);
        prop_assert!(v.norm() < 1e-6 && a.norm() < 1e-6);
        prop_assert!(s.finished());
    }

    /// Chained legs as AR_WPNav drives them: the target is continuous in
    /// position and velocity across the leg change, and the run ends at the last
    /// waypoint at rest.
    #[test]
    fn chained_legs_are_continuous(l in limits(), a in short_leg(), b in short_leg(), c in short_leg()) {
        let w1 = a;
        let w2 = w1 + b;
        let w3 = w2 + c;
        let wps = [w1, w2, w3];
        let mut prev = SCurve::new();
        let mut this = track(&l, &Vector3::zeros(), &w1);
        let mut next = track(&l, &w1, &w2);
        let mut origin = Vector3::zeros();
        let mut dest = w1;
        let mut fast = true;
        let mut leg = 0;
        let dt = 0.02;
        let (mut last_p, mut last_v) = (Vector3::zeros(), Vector3::zeros());
        let v_max = l.speed_xy.max(l.speed_up).max(l.speed_down);
        let a_max = l.accel_xy.max(l.accel_z);
        let mut steps = 0;
        loop {
            let (mut p, mut v, mut acc) = (origin, Vector3::zeros(), Vector3::zeros());
            let done = this.advance_target_along_track(&mut prev, &mut next, 2.0, l.accel_xy, fast, dt, &mut p, &mut v, &mut acc);
            prop_assert!(p.iter().chain(v.iter()).chain(acc.iter()).all(|x| x.is_finite()));
            if steps > 0 {
                // Position changes by about v·dt; velocity by at most a bit more
                // than a·dt (corner blends add two legs' accelerations).
                prop_assert!((p - last_p).norm() <= (v_max * 2.0 + 1e-3) * dt, "jump in position at step {}", steps);
                prop_assert!((v - last_v).norm() <= (a_max * 2.5 + 1e-3) * dt, "jump in velocity at step {}", steps);
            }
            last_p = p;
            last_v = v;
            steps += 1;
            prop_assert!(steps < 2_000_000);
            if done {
                if leg + 1 == wps.len() {
                    prop_assert!((p - w3).norm() < 1e-5 * w3.norm().max(1.0), "ends at {} not {}", p, w3);
                    // ArduPilot calls a leg finished once the float position
                    // reaches its length, which can be a tick before the clock
                    // ends: the speed is then within a tick of rest.
                    let one_tick = (a_max + l.jerk * dt) * dt;
                    prop_assert!(v.norm() < one_tick, "v {} at the end, step {}", v.norm(), steps);
                    break;
                }
                leg += 1;
                prev = this.clone();
                origin = dest;
                dest = wps[leg];
                if fast && !next.finished() {
                    this = next.clone();
                } else {
                    this = track(&l, &origin, &dest);
                }
                next.init();
                fast = false;
                if let Some(n) = wps.get(leg + 1) {
                    next = track(&l, &dest, n);
                    fast = true;
                }
            }
        }
    }

    /// With any positive limits, however inconsistent, a path is either empty
    /// (ArduPilot rejects it) or within its limits and ending at rest at the
    /// destination.
    #[test]
    fn any_limits_give_an_empty_or_a_valid_path(l in any_limits(), d in leg()) {
        let s = track(&l, &Vector3::zeros(), &d);
        if !s.is_empty() {
            let t_end = s.time_end();
            prop_assert!(t_end.is_finite() && t_end > 0.0);
            for k in 0..=200 {
                let (j, a, v, p) = s.get_jerk_accel_vel_pos_at_time(t_end * k as f32 / 200.0);
                prop_assert!(j.is_finite() && a.is_finite() && v.is_finite() && p.is_finite());
                prop_assert!(v <= s.get_speed_along_track() * (1.0 + 1e-5) + 1e-6);
            }
            let (_, _, v, p) = s.get_jerk_accel_vel_pos_at_time(t_end);
            prop_assert!((p - d.norm()).abs() <= 2e-6 * d.norm().max(1.0) && v.abs() < 1e-6);
        }
    }

    /// Degenerate inputs give an empty path or a valid one, never NaN or a panic.
    #[test]
    fn degenerate_inputs_are_safe(
        speed in prop_oneof![Just(0.0), Just(f32::NAN), Just(f32::INFINITY), -5.0f32..5.0],
        accel in prop_oneof![Just(0.0), Just(f32::NAN), -3.0f32..3.0],
        jerk in prop_oneof![Just(0.0), Just(-1.0), Just(f32::NAN), 0.0f32..5.0],
        snap in prop_oneof![Just(0.0), Just(f32::NAN), 0.0f32..10.0],
        d in prop_oneof![Just(Vector3::zeros()), Just(Vector3::new(f32::NAN, 0.0, 0.0)), leg()],
    ) {
        let mut s = SCurve::new();
        s.calculate_track(&Vector3::zeros(), &d, speed, speed, speed, accel, accel, snap, jerk);
        let (mut p, mut v, mut a) = (Vector3::zeros(), Vector3::zeros(), Vector3::zeros());
        let mut prev = SCurve::new();
        let mut next = SCurve::new();
        for _ in 0..100 {
            let _ = s.advance_target_along_track(&mut prev, &mut next, 2.0, 2.0, false, 0.1, &mut p, &mut v, &mut a);
        }
        if s.is_empty() {
            prop_assert_eq!(s.time_end(), 0.0);
            prop_assert!(p == Vector3::zeros() && v == Vector3::zeros());
        } else {
            prop_assert!(p.iter().chain(v.iter()).chain(a.iter()).all(|x| x.is_finite()));
        }
    }
}

#[test]
fn speed_changes_mid_leg_keep_the_destination() {
    let l = Limits {
        speed_xy: 5.0,
        speed_up: 2.5,
        speed_down: 1.5,
        accel_xy: 2.0,
        accel_z: 1.0,
        jerk: 4.0,
        snap: 8.0,
    };
    for (t_change, new_speed) in [(0.0, 2.0), (1.0, 2.0), (3.0, 8.0), (6.0, 1.0), (12.0, 3.0)] {
        let d = Vector3::new(60.0, 20.0, -5.0);
        let mut s = track(&l, &Vector3::zeros(), &d);
        let dt = 0.01;
        let mut t = 0.0;
        let mut changed = false;
        let mut prev_p = Vector3::zeros();
        loop {
            if !changed && t >= t_change {
                s.set_speed_max(new_speed, l.speed_up, l.speed_down);
                changed = true;
            }
            let (mut p, mut v, mut a) = (Vector3::zeros(), Vector3::zeros(), Vector3::zeros());
            s.move_from_pos_vel_accel(dt, &mut p, &mut v, &mut a);
            assert!(
                (p - prev_p).norm() < 0.2,
                "position jumps after a speed change at {t_change}"
            );
            prev_p = p;
            t += dt;
            if s.finished() {
                assert!(
                    (p - d).norm() < 1e-4,
                    "ends at {p} after a speed change at {t_change}"
                );
                break;
            }
            assert!(t < 200.0);
        }
    }
}

/// Rover's limits, as `rover_box` has them.
const ROVER: Limits = Limits {
    speed_xy: 2.0,
    speed_up: 2.0,
    speed_down: 2.0,
    accel_xy: 1.0,
    accel_z: 1.0,
    jerk: 1.0,
    snap: 15.0,
};

/// As ArduPilot's `calculate_track`, a track with |d|² under `FLT_EPSILON`
/// (0.1 mm here) is a zero-length path, one of 1 mm is not; and each limit
/// that is not positive, alone, leaves the path empty.
#[test]
fn a_track_too_short_or_a_limit_not_positive_leaves_the_path_empty() {
    let east = |m: f32| Vector3::new(m, 0.0, 0.0);
    for short in [1e-4, 2e-4, 3e-4, 3.4e-4] {
        assert!(
            track(&ROVER, &Vector3::zeros(), &east(short)).is_empty(),
            "{short}"
        );
    }
    assert!(!track(&ROVER, &Vector3::zeros(), &east(1e-3)).is_empty());
    let d = east(30.0);
    assert!(!track(&ROVER, &Vector3::zeros(), &d).is_empty());
    let speed = Limits {
        speed_xy: 0.0,
        ..ROVER
    };
    let accel = Limits {
        accel_xy: 0.0,
        ..ROVER
    };
    let jerk = Limits { jerk: 0.0, ..ROVER };
    let snap = Limits { snap: 0.0, ..ROVER };
    for (what, l) in [
        ("speed", speed),
        ("accel", accel),
        ("jerk", jerk),
        ("snap", snap),
    ] {
        let s = track(&l, &Vector3::zeros(), &d);
        assert!(s.is_empty(), "{what} 0");
        assert_eq!(s.time_end(), 0.0, "{what} 0");
    }
}

/// A speed limit of zero is ignored mid-leg: the leg goes on exactly as
/// before.
#[test]
fn a_zero_speed_limit_mid_leg_changes_nothing() {
    let d = Vector3::new(30.0, 0.0, 0.0);
    let mut changed = track(&ROVER, &Vector3::zeros(), &d);
    let mut kept = changed.clone();
    for k in 0..1_000 {
        if k == 250 {
            changed.set_speed_max(0.0, 0.0, 0.0);
        }
        let mut out = [(Vector3::zeros(), Vector3::zeros(), Vector3::zeros()); 2];
        for (s, (p, v, a)) in [&mut changed, &mut kept].into_iter().zip(&mut out) {
            s.move_from_pos_vel_accel(0.02, p, v, a);
        }
        assert_eq!(out[0], out[1], "tick {k}");
    }
    assert_eq!(changed.get_speed_along_track(), 2.0);
}

/// `calculate_path` plans nothing for a snap, jerk, acceleration, speed or
/// length that is not positive, each alone, nor when the start speed is
/// already the target; with all valid it plans a path.
#[test]
fn calculate_path_plans_nothing_from_an_invalid_argument() {
    use mavsitl_guidance::scurve::PathTimes;
    let valid = [15.0, 1.0, 0.5, 1.0, 2.0, 30.0];
    let planned = SCurve::calculate_path(15.0, 1.0, 0.5, 1.0, 2.0, 30.0);
    assert!(planned.jm > 0.0 && planned.tj > 0.0, "{planned:?}");
    for (k, name) in [
        (0, "snap"),
        (1, "jerk"),
        (3, "accel"),
        (4, "speed"),
        (5, "length"),
    ] {
        for bad in [0.0, -1.0] {
            let mut a = valid;
            a[k] = bad;
            let p = SCurve::calculate_path(a[0], a[1], a[2], a[3], a[4], a[5]);
            assert_eq!(p, PathTimes::default(), "{name} {bad}");
        }
    }
    for v0 in [2.0, 2.5] {
        let p = SCurve::calculate_path(15.0, 1.0, v0, 1.0, 2.0, 30.0);
        assert_eq!(p, PathTimes::default(), "start speed {v0}");
    }
}

/// The jerk the S-curve reports is the rate of change of its acceleration
/// (central differences along a 50 m leg, in single precision): its
/// raised-cosine segments rise from 0 and fall back to 0, never the other
/// way about.
#[test]
fn the_jerk_is_the_derivative_of_the_acceleration() {
    let l = Limits {
        speed_xy: 5.0,
        speed_up: 2.0,
        speed_down: 2.0,
        accel_xy: 2.0,
        accel_z: 1.0,
        jerk: 2.0,
        snap: 2.0 * std::f32::consts::PI / (2.0 * 0.3),
    };
    let s = track(&l, &Vector3::zeros(), &Vector3::new(50.0, 0.0, 0.0));
    let t_end = s.time_end();
    let h = 1e-3f32;
    let mut largest = 0.0f32;
    let mut checked = 0;
    let mut t = 2.0 * h;
    while t < t_end - 2.0 * h {
        let (j, _, _, _) = s.get_jerk_accel_vel_pos_at_time(t);
        let (_, a1, _, _) = s.get_jerk_accel_vel_pos_at_time(t + h);
        let (_, a0, _, _) = s.get_jerk_accel_vel_pos_at_time(t - h);
        let da = (a1 - a0) / (2.0 * h);
        assert!(
            (da - j).abs() < 0.02 * l.jerk,
            "t {t}: jerk {j}, da/dt {da}"
        );
        largest = largest.max(j.abs());
        checked += 1;
        t += 0.01;
    }
    assert!(
        checked > 500 && largest > 0.9 * l.jerk,
        "{checked} checks, |j| up to {largest}"
    );
    // At rest before the first segment's jerk has risen, none.
    assert!(s.get_jerk_accel_vel_pos_at_time(0.0).0.abs() < 1e-6);
}
