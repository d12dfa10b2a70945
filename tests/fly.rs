//! `mavsitl fly` end to end: every shipped mission flies to completion with the
//! estimator on, within the bounds a user would expect, also in wind, current
//! and turbulence; recordings are deterministic; broken missions are refused
//! with the documented messages.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

fn fly(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mavsitl"))
        .arg("fly")
        .args(args)
        .env_remove("PX4_HOME_LAT")
        .env_remove("PX4_HOME_LON")
        .env_remove("PX4_HOME_ALT")
        .output()
        .expect("run mavsitl")
}

/// The summary's numbers.
#[derive(Debug)]
struct Summary {
    text: String,
    completed: bool,
    reached: (usize, usize),
    xtrack_rms: f64,
    xtrack_max: f64,
    truth_rms: f64,
    from_takeoff: f64,
    vs_home: f64,
    est_rms: f64,
}

fn number_after(text: &str, key: &str) -> f64 {
    text.split(key)
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.trim_end_matches(',').parse().ok())
        .unwrap_or(f64::NAN)
}

fn line<'a>(text: &'a str, start: &str) -> &'a str {
    text.lines()
        .find(|l| l.trim_start().starts_with(start))
        .unwrap_or("")
}

fn summary(out: &Output) -> Summary {
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let reached = line(&text, "items reached");
    let r: Vec<usize> = reached
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    let xt = line(&text, "path following");
    let tr = line(&text, "cross-track");
    let fp = line(&text, "final position");
    Summary {
        completed: line(&text, "result").contains("mission completed"),
        reached: (
            r.first().copied().unwrap_or(0),
            r.get(1).copied().unwrap_or(usize::MAX),
        ),
        xtrack_rms: number_after(xt, "RMS"),
        xtrack_max: number_after(xt, "max"),
        truth_rms: number_after(tr, "RMS"),
        from_takeoff: fp
            .split("m,")
            .nth(1)
            .and_then(|s| s.split_whitespace().next())
            .and_then(|s| s.parse().ok())
            .unwrap_or(f64::NAN),
        vs_home: number_after(line(&text, "final vs home"), "home"),
        est_rms: number_after(line(&text, "estimator error"), "RMS"),
        text,
    }
}

fn ok(args: &[&str]) -> Summary {
    let out = fly(args);
    let s = summary(&out);
    assert!(
        out.status.success() && s.completed,
        "{args:?}\n{}\n{}",
        s.text,
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(s.reached.0, s.reached.1, "every item reached:\n{}", s.text);
    s
}

#[test]
fn quad_square_flies_within_bounds() {
    let s = ok(&[repo("missions/quad_square.plan").to_str().expect("utf8")]);
    println!("{}", s.text);
    assert!(s.xtrack_rms <= 0.3, "path-following RMS {}", s.xtrack_rms);
    // Blended corners pass inside the corner point: the blend's midpoint is
    // within NAV_ACC_RAD (2 m) of it, up to 2/√2 m off each leg.
    assert!(s.xtrack_max <= 1.5, "path-following max {}", s.xtrack_max);
    // Lands where it believes home is; against the true take-off point the GPS's
    // correlated error (0.5 m, 60 s) over the flight adds up to about a metre.
    assert!(s.vs_home <= 0.5, "landing vs home {}", s.vs_home);
    assert!(
        s.from_takeoff <= 1.5,
        "landing vs the true take-off point {}",
        s.from_takeoff
    );
    assert!(s.est_rms < 1.2 && s.truth_rms < 1.2);
}

#[test]
fn default_fly_is_the_quad_square() {
    let s = ok(&[]);
    assert!(
        s.text
            .starts_with("mavsitl fly <built-in missions/quad_square.plan> (quad, seed 0)"),
        "{}",
        s.text
    );
}

#[test]
fn quad_survey_covers_every_waypoint_and_skips_the_camera() {
    let tmp = tempfile::tempdir().expect("tmp");
    let rec = tmp.path().join("rec");
    let out = fly(&[
        repo("missions/quad_survey.plan").to_str().expect("utf8"),
        "--record",
        rec.to_str().expect("utf8"),
    ]);
    let s = summary(&out);
    assert!(out.status.success() && s.completed, "{}", s.text);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning:")
            && err.contains(
                "mission item 2 (MAV_CMD_DO_SET_CAM_TRIGG_DIST) is not supported; skipped"
            ),
        "{err}"
    );
    let events = std::fs::read_to_string(rec.join("mission_events.csv")).expect("events");
    // Items 1 and 3..=8 are the survey's waypoints (takeoff 0, camera 2 and 9, RTL 10).
    for item in [1, 3, 4, 5, 6, 7, 8] {
        assert!(
            events
                .lines()
                .any(|l| l.contains(&format!(",item_reached,{item},"))),
            "waypoint {item} not reached:\n{events}"
        );
    }
    assert!(events.contains(",item_skipped,2,") && events.contains(",item_skipped,9,"));
    assert!(events.contains(",landed,") && events.contains(",disarmed,"));
    assert!(s.xtrack_rms <= 0.3, "{}", s.text);
}

#[test]
fn boat_box_stays_on_track() {
    let tmp = tempfile::tempdir().expect("tmp");
    let rec = tmp.path().join("rec");
    let plan = repo("missions/boat_box.plan");
    let s = ok(&[
        plan.to_str().expect("utf8"),
        "--record",
        rec.to_str().expect("utf8"),
    ]);
    println!("{}", s.text);
    assert!(s.text.contains("(boat, seed 0)"));
    assert!(
        s.xtrack_rms <= 0.6,
        "boat path-following RMS {}",
        s.xtrack_rms
    );
    // actuators.csv: the twin thrusters' two channels, a row beside every
    // ground-truth row, left minus right turning the hull the way it yaws
    // (correlated with the true yaw rate: swapped columns would be negative).
    let read = |f: &str| std::fs::read_to_string(rec.join(f)).expect("recording");
    let (truth, act) = (read("ground_truth.csv"), read("actuators.csv"));
    assert_eq!(act.lines().next(), Some("#timestamp [ns],u0 [],u1 []"));
    let rows = |t: &str| -> Vec<Vec<f64>> {
        t.lines()
            .skip(1)
            .map(|l| {
                l.split(',')
                    .map(|x| x.trim().parse().unwrap_or_else(|e| panic!("{l:?}: {e}")))
                    .collect()
            })
            .collect()
    };
    let (truth, act) = (rows(&truth), rows(&act));
    assert_eq!(truth.len(), act.len());
    let (mut sdr, mut sdd, mut srr) = (0.0, 0.0, 0.0);
    for (g, a) in truth.iter().zip(&act) {
        assert_eq!(g[0], a[0], "the same timestamps");
        assert!(a[1..].iter().all(|u| (-1.0..=1.0).contains(u)), "{a:?}");
        let (d, r) = (a[1] - a[2], g[13]);
        (sdr, sdd, srr) = (sdr + d * r, sdd + d * d, srr + r * r);
    }
    let corr = sdr / (sdd * srr).sqrt();
    assert!(corr > 0.6, "steering against yaw rate: {corr}");
}

#[test]
fn rudder_boat_and_ground_truth_options_fly_the_box() {
    let tmp = tempfile::tempdir().expect("tmp");
    let sc = tmp.path().join("rudder.json");
    std::fs::write(&sc, r#"{"home":{"lat_deg":47.3544,"lon_deg":8.5497,"alt_m":406},"vehicles":[{"kind":"boat","airframe":"usv_rudder"}]}"#).expect("write");
    let s = ok(&[
        repo("missions/boat_box.plan").to_str().expect("utf8"),
        "--scenario",
        sc.to_str().expect("utf8"),
    ]);
    assert!(s.xtrack_rms <= 1.0, "rudder boat: {}", s.text);
    // On perfect state there is no navigation error: the track against truth is
    // the path following.
    let s = ok(&[
        repo("missions/quad_square.plan").to_str().expect("utf8"),
        "--ground-truth",
    ]);
    assert!(
        s.est_rms < 1e-9 || s.truth_rms <= s.xtrack_rms + 1e-6,
        "{}",
        s.text
    );
    assert!(s.truth_rms <= 0.3 && s.from_takeoff <= 0.5, "{}", s.text);
}

/// Without a scenario, `--vehicle` picks a rover by its drive or its
/// airframe's name; a quad's plan drives on the ground, its take-off
/// skipped with a warning.
#[test]
fn rovers_drive_a_plan_by_drive_or_airframe_name() {
    let plan = repo("missions/quad_square.plan");
    for vehicle in ["rover_skid", "jackal", "rover_ackermann", "f1tenth"] {
        let out = fly(&[plan.to_str().expect("utf8"), "--vehicle", vehicle]);
        let s = summary(&out);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && s.completed,
            "{vehicle}: {}{stderr}",
            s.text
        );
        assert!(s.text.contains("(rover, seed 0)"), "{}", s.text);
        assert!(
            stderr.contains("(MAV_CMD_NAV_TAKEOFF) has no meaning for a rover; skipped"),
            "{stderr}"
        );
        assert!(s.truth_rms < 1.5, "{vehicle}: {}", s.text);
    }
    let out = fly(&["--vehicle", "rover"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("rover_skid"),
        "{stderr}"
    );
}

/// Ground truth of a recording of the F1TENTH car: (t s, north m, east m,
/// speed m/s, the rear axle's slip angle deg). An Ackermann car's rear
/// wheels are not steered: their contact moves along its heading unless it
/// slides, however tight the turn (its CG's velocity does not).
fn rover_track(dir: &Path) -> Vec<[f64; 5]> {
    /// The F1TENTH car's CG ahead of its rear axle, m.
    const LR_M: f64 = 0.17145;
    let text = std::fs::read_to_string(dir.join("ground_truth.csv")).expect("recording");
    text.lines()
        .skip(1)
        .map(|l| {
            let c: Vec<f64> = l
                .split(',')
                .map(|x| x.trim().parse().expect("a number"))
                .collect();
            let (qw, qx, qy, qz) = (c[4], c[5], c[6], c[7]);
            let yaw = (2.0 * (qw * qz + qx * qy)).atan2(1.0 - 2.0 * (qy * qy + qz * qz));
            let (vn, ve, r) = (c[8], c[9], c[13]);
            let u = yaw.cos() * vn + yaw.sin() * ve;
            let v = -yaw.sin() * vn + yaw.cos() * ve - LR_M * r;
            let speed = vn.hypot(ve);
            let slip = if speed > 0.5 {
                v.atan2(u.abs()).to_degrees()
            } else {
                0.0
            };
            [c[0] * 1e-9, c[1], c[2], speed, slip]
        })
        .collect()
}

/// The skid-steer box: a 20 m square the Jackal drives at 1.5 m/s,
/// pivoting at each corner, on its estimate and on ground truth.
#[test]
fn rover_skid_box_stays_on_track() {
    let plan = repo("missions/rover_skid_box.plan");
    let plan = plan.to_str().expect("utf8");
    let s = ok(&[plan]);
    assert!(s.text.contains("(rover, seed 0)"), "{}", s.text);
    assert!(s.xtrack_rms <= 0.25, "path following: {}", s.text);
    assert!(s.truth_rms <= 1.0 && s.from_takeoff <= 1.5, "{}", s.text);
    let s = ok(&[plan, "--ground-truth"]);
    assert!(s.truth_rms <= 0.15 && s.xtrack_max <= 0.4, "{}", s.text);
}

/// The Ackermann course: 3 m/s legs, a hairpin 2.5 m wide taken at the
/// 1.5 m/s a DO_CHANGE_SPEED asks for (the car turns no tighter than
/// 0.74 m), back to 3 m/s after it, and square corners.
#[test]
fn rover_ackermann_course_takes_its_hairpin_at_the_speed_asked() {
    let tmp = tempfile::tempdir().expect("tmp");
    let rec = tmp.path().join("rec");
    let plan = repo("missions/rover_ackermann_course.plan");
    let s = ok(&[
        plan.to_str().expect("utf8"),
        "--vehicle",
        "rover_ackermann",
        "--ground-truth",
        "--record",
        rec.to_str().expect("utf8"),
    ]);
    assert!(s.truth_rms <= 0.3, "{}", s.text);
    let track = rover_track(&rec);
    let fastest = |keep: &dyn Fn(&[f64; 5]) -> bool| {
        track
            .iter()
            .filter(|p| keep(p))
            .map(|p| p[3])
            .fold(0.0, f64::max)
    };
    let first_leg = fastest(&|p| p[1] < 20.0 && p[2].abs() < 0.3);
    let hairpin = fastest(&|p| p[1] > 23.0 && p[2] > 0.5 && p[2] < 2.0);
    let back = fastest(&|p| p[1] < 20.0 && p[1] > 5.0 && (p[2] - 2.5).abs() < 1.0);
    assert!(first_leg > 2.8, "first leg at {first_leg} m/s");
    assert!(hairpin < 1.7, "hairpin at {hairpin} m/s");
    assert!(back > 2.8, "after the hairpin at {back} m/s");
}

/// The ice patch over a corner of the course: the car turning onto it at
/// speed slides (its rear wheels slip more than 10° from their heading),
/// the zone events record it driving onto μ 0.1 and off, and back on the
/// dry it grips again (under 3° from 3 s after) and finishes the course.
#[test]
fn rover_slides_on_the_ice_patch_and_grips_after_it() {
    let tmp = tempfile::tempdir().expect("tmp");
    let rec = tmp.path().join("rec");
    let _ = ok(&[
        repo("missions/rover_ackermann_course.plan")
            .to_str()
            .expect("utf8"),
        "--scenario",
        repo("scenarios/rover_ice.json").to_str().expect("utf8"),
        "--ground-truth",
        "--record",
        rec.to_str().expect("utf8"),
    ]);
    let events = std::fs::read_to_string(rec.join("zone_events.csv")).expect("events");
    let rows: Vec<Vec<&str>> = events
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(str::trim).collect())
        .collect();
    assert_eq!(rows.len(), 2, "{events}");
    assert_eq!(rows[0][1..], ["car", "ice", "enter", "0.1"], "{events}");
    assert_eq!(rows[1][1..], ["car", "ice", "exit", "0.1"], "{events}");
    let at = |r: &Vec<&str>| r[0].parse::<f64>().expect("a time") * 1e-9;
    let (on, off) = (at(&rows[0]), at(&rows[1]));
    let track = rover_track(&rec);
    let slip = |from: f64, to: f64| {
        track
            .iter()
            .filter(|p| p[0] >= from && p[0] < to)
            .map(|p| p[4].abs())
            .fold(0.0, f64::max)
    };
    assert!(slip(0.0, on) < 3.0, "on the dry before: {}°", slip(0.0, on));
    assert!(slip(on, off) > 10.0, "on the ice: {}°", slip(on, off));
    assert!(
        slip(off + 3.0, f64::MAX) < 3.0,
        "after: {}°",
        slip(off + 3.0, f64::MAX)
    );
}

/// A parameter file written for another frame is refused naming its line:
/// a boat's FRAME_CLASS 2 for the skid-steer rover, a rover's 1 for the
/// boat; the rover's own file flies.
#[test]
fn a_parameter_file_for_another_frame_is_refused_by_its_line() {
    let plan = repo("missions/rover_skid_box.plan");
    let boat = repo("firmware_configs/ardupilot/boat.parm");
    let out = fly(&[
        plan.to_str().expect("utf8"),
        "--params",
        boat.to_str().expect("utf8"),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let line = std::fs::read_to_string(&boat)
        .expect("boat.parm")
        .lines()
        .position(|l| l.starts_with("FRAME_CLASS"))
        .expect("a frame class")
        + 1;
    assert!(
        stderr.contains(&format!("boat.parm:{line}: FRAME_CLASS 2 is not a rover's")),
        "{stderr}"
    );
    let rover = repo("firmware_configs/ardupilot/rover_skid.parm");
    let out = fly(&[
        repo("missions/boat_box.plan").to_str().expect("utf8"),
        "--params",
        rover.to_str().expect("utf8"),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("FRAME_CLASS 1 is not a boat's"), "{stderr}");
    let _ = ok(&[
        plan.to_str().expect("utf8"),
        "--params",
        rover.to_str().expect("utf8"),
        "--ground-truth",
    ]);
}

#[test]
fn boat_route_loops_once_and_changes_speed() {
    let tmp = tempfile::tempdir().expect("tmp");
    let rec = tmp.path().join("rec");
    let s = ok(&[
        repo("missions/boat_route.plan").to_str().expect("utf8"),
        "--record",
        rec.to_str().expect("utf8"),
    ]);
    let events = std::fs::read_to_string(rec.join("mission_events.csv")).expect("events");
    let count = |needle: &str| events.lines().filter(|l| l.contains(needle)).count();
    // Items: 0 speed 1.5, 1–4 route, 5 jump to 1 once, 6 speed 2.5, 7 home.
    assert_eq!(
        count(",item_reached,1,"),
        2,
        "the loop's first waypoint twice:\n{events}"
    );
    assert_eq!(count(",item_reached,4,"), 2);
    assert!(
        events.contains(",item_reached,5,jump to 1")
            && events.contains(",item_reached,5,jump done")
    );
    assert!(events.contains(",item_reached,6,speed Some(2.5)"));
    assert!(s.xtrack_rms <= 1.5, "{}", s.text);
}

fn windy_scenario(dir: &Path, kind: &str) -> PathBuf {
    let body = format!(
        r#"{{"seed":3,"environment":{{"wind":{{"speed_m_s":5,"from_deg":250}},"turbulence":{{}},"current":{{"speed_m_s":0.5,"towards_deg":80}}}},
            "vehicles":[{{"kind":"{kind}"}}]}}"#
    );
    let p = dir.join(format!("windy_{kind}.json"));
    std::fs::write(&p, body).expect("scenario");
    p
}

#[test]
fn missions_complete_in_wind_turbulence_and_current() {
    let tmp = tempfile::tempdir().expect("tmp");
    // With --scenario the scenario's home is used; give the plan's home explicitly.
    let quad = windy_scenario(tmp.path(), "multirotor");
    let s = ok(&[
        repo("missions/quad_square.plan").to_str().expect("utf8"),
        "--scenario",
        quad.to_str().expect("utf8"),
        "--home",
        "47.397742,8.545594,488",
    ]);
    println!("{}", s.text);
    // Looser bounds in 5 m/s wind with turbulence: RMS 0.6 m, max 2 m.
    assert!(s.xtrack_rms <= 0.6 && s.xtrack_max <= 2.0, "{}", s.text);
    let boat = windy_scenario(tmp.path(), "boat");
    let s = ok(&[
        repo("missions/boat_box.plan").to_str().expect("utf8"),
        "--scenario",
        boat.to_str().expect("utf8"),
        "--home",
        "47.3544,8.5497,406",
    ]);
    println!("{}", s.text);
    // A 0.5 m/s current across a 2 m/s boat's legs is a quarter of its speed;
    // with ArduPilot's stock rover position gains (PSC_POS_P 0.2, no velocity
    // integrator) it drifts metres off the line while it builds its crab angle:
    // RMS 2.5 m, max 6 m.
    assert!(s.xtrack_rms <= 2.5 && s.xtrack_max <= 6.0, "{}", s.text);
}

#[test]
fn same_seed_same_bytes_other_seed_same_outcome() {
    let tmp = tempfile::tempdir().expect("tmp");
    let m = repo("missions/quad_square.plan");
    let run = |name: &str, seed: &str| {
        let dir = tmp.path().join(name);
        let s = ok(&[
            m.to_str().expect("utf8"),
            "--seed",
            seed,
            "--record",
            dir.to_str().expect("utf8"),
        ]);
        (dir, s)
    };
    let (a, _) = run("a", "7");
    let (b, _) = run("b", "7");
    let (c, sc) = run("c", "8");
    for f in [
        "ground_truth.csv",
        "imu.csv",
        "gps.csv",
        "estimator.csv",
        "mission_events.csv",
    ] {
        let read = |d: &Path| std::fs::read(d.join(f)).expect("file");
        assert_eq!(read(&a), read(&b), "{f} differs with the same seed");
        if f != "mission_events.csv" {
            assert_ne!(read(&a), read(&c), "{f} does not depend on the seed");
        }
    }
    assert_eq!(sc.reached, (6, 6));
}

#[test]
fn wpl_missions_fly_from_their_home_line() {
    let tmp = tempfile::tempdir().expect("tmp");
    let p = tmp.path().join("m.waypoints");
    std::fs::write(
        &p,
        "QGC WPL 110\n0\t1\t0\t16\t0\t0\t0\t0\t47.397742\t8.545594\t488\t1\n1\t0\t3\t22\t0\t0\t0\t0\t0\t0\t10\t1\n2\t0\t3\t16\t0\t0\t0\t0\t47.39801\t8.545594\t10\t1\n3\t0\t3\t21\t0\t0\t0\t0\t0\t0\t0\t1\n",
    )
    .expect("write");
    let s = ok(&[p.to_str().expect("utf8")]);
    assert_eq!(s.reached, (3, 3));
}

#[test]
fn broken_and_unsupported_missions_are_refused() {
    let tmp = tempfile::tempdir().expect("tmp");
    let write = |name: &str, body: &str| {
        let p = tmp.path().join(name);
        std::fs::write(&p, body).expect("write");
        p
    };
    let refused = write(
        "turns.plan",
        r#"{"fileType":"Plan","version":1,"mission":{"plannedHomePosition":[47.3977,8.5456,488],"items":[
            {"type":"SimpleItem","command":22,"frame":3,"params":[0,0,0,null,47.3977,8.5456,10]},
            {"type":"SimpleItem","command":18,"frame":3,"params":[2,0,5,0,47.3979,8.5456,10]}]}}"#,
    );
    let out = fly(&[refused.to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with(&format!(
            "error: {}: mission item 1 (MAV_CMD_NAV_LOITER_TURNS): not supported by SimpleFlight, and skipping it would fly a different route",
            refused.display()
        )),
        "{err}"
    );
    let broken = write(
        "broken.plan",
        r#"{"fileType":"Plan","mission":{"items":[{"type":"SimpleItem","command":16,"frame":3,"params":[0,0,0]}]}}"#,
    );
    let out = fly(&[broken.to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("mission.items[0].params: expected 7 parameters, found 3"));
    let out = fly(&["/nonexistent.plan"]);
    assert_eq!(out.status.code(), Some(2));
    let bad_params = write("p.parm", "MPC_XY_CRUISE 500\n");
    let out = fly(&["--params", bad_params.to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("p.parm:1: MPC_XY_CRUISE: 500 is outside 0.5..=20"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn every_multirotor_frame_flies_the_square() {
    let tmp = tempfile::tempdir().expect("tmp");
    for (name, vehicle) in [
        ("x500", r#""airframe":"x500""#),
        (
            "hexa",
            r#""airframe":"generic_quad","overrides":{"frame":"hexa_x"}"#,
        ),
        (
            "octo",
            r#""airframe":"generic_quad","overrides":{"frame":"octo_x","mass_kg":1.6}"#,
        ),
    ] {
        let sc = tmp.path().join(format!("{name}.json"));
        std::fs::write(&sc, format!(r#"{{"home":{{"lat_deg":47.397742,"lon_deg":8.545594,"alt_m":488}},"vehicles":[{{"kind":"multirotor",{vehicle}}}]}}"#))
            .expect("write");
        let s = ok(&[
            repo("missions/quad_square.plan").to_str().expect("utf8"),
            "--scenario",
            sc.to_str().expect("utf8"),
        ]);
        assert!(
            // The estimate keeps following the GPS's correlated error
            // after touch-down: half a metre, give or take a centimetre.
            s.xtrack_rms <= 0.3 && s.xtrack_max <= 1.5 && s.vs_home <= 0.6,
            "{name}: {}",
            s.text
        );
    }
}

#[test]
fn arming_is_refused_with_a_reason() {
    let tmp = tempfile::tempdir().expect("tmp");
    let cases = [
        (
            "nogps",
            r#"{"vehicles":[{"kind":"multirotor","sensors":{"gps":{"enabled":false}}}]}"#,
            "arming refused: no GPS data",
        ),
        (
            "denied",
            r#"{"environment":{"zones":[{"name":"hangar","shape":{"cylinder":{"center_ne_m":[0,0],"radius_m":20,"down_min_m":-10,"down_max_m":5}},"gps_denied":true}]},
                "vehicles":[{"kind":"multirotor"}]}"#,
            "arming refused: no 3-D GPS fix",
        ),
    ];
    for (name, body, expect) in cases {
        let sc = tmp.path().join(format!("{name}.json"));
        std::fs::write(&sc, body).expect("write");
        let out = fly(&[
            repo("missions/quad_square.plan").to_str().expect("utf8"),
            "--scenario",
            sc.to_str().expect("utf8"),
        ]);
        let s = summary(&out);
        assert_eq!(out.status.code(), Some(1), "{name}: {}", s.text);
        assert!(
            s.text.contains(&format!("FAILED: {expect}")),
            "{name}: {}",
            s.text
        );
        assert!(String::from_utf8_lossy(&out.stderr).contains(expect));
    }
}

/// A DO_JUMP loop with no waypoint inside is refused at load (it used to end
/// "mission completed" with the quad left hovering), in a plan and in WPL.
#[test]
fn a_jump_loop_around_nothing_is_refused() {
    let tmp = tempfile::tempdir().expect("tmp");
    let text = std::fs::read_to_string(repo("missions/quad_square.plan")).expect("plan");
    let mut plan: serde_json::Value = serde_json::from_str(&text).expect("json");
    let items = plan["mission"]["items"].as_array_mut().expect("items");
    items.insert(
        2,
        serde_json::json!({"type": "SimpleItem", "command": 177, "doJumpId": 50, "frame": 2,
                           "autoContinue": true, "params": [50, -1, 0, 0, 0, 0, 0]}),
    );
    let path = tmp.path().join("loop.plan");
    std::fs::write(&path, plan.to_string()).expect("write");
    let out = fly(&[path.to_str().expect("utf8")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("mission item 2 (MAV_CMD_DO_JUMP): the jump to item 2 comes back")
            && !String::from_utf8_lossy(&out.stdout).contains("mission completed"),
        "{stderr}"
    );
    // WPL: two jumps pointing at each other.
    let wpl = "QGC WPL 110\n0\t1\t0\t16\t0\t0\t0\t0\t47.397742\t8.545594\t488\t1\n\
               1\t0\t3\t22\t0\t0\t0\t0\t0\t0\t10\t1\n\
               2\t0\t2\t177\t3\t5\t0\t0\t0\t0\t0\t1\n\
               3\t0\t2\t177\t2\t5\t0\t0\t0\t0\t0\t1\n\
               4\t0\t3\t16\t0\t0\t0\t0\t47.3982\t8.5456\t10\t1\n";
    let path = tmp.path().join("loop.waypoints");
    std::fs::write(&path, wpl).expect("write");
    let out = fly(&[path.to_str().expect("utf8")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("(MAV_CMD_DO_JUMP)"), "{stderr}");
}

/// A mission with nothing to fly is refused (it ended "mission completed"
/// with the quad hovering over its take-off point).
#[test]
fn a_mission_without_navigation_items_is_refused() {
    let tmp = tempfile::tempdir().expect("tmp");
    let path = tmp.path().join("empty.waypoints");
    std::fs::write(
        &path,
        "QGC WPL 110\n0\t1\t0\t16\t0\t0\t0\t0\t47.397742\t8.545594\t488\t1\n\
         1\t0\t2\t178\t1\t3\t-1\t0\t0\t0\t0\t1\n",
    )
    .expect("write");
    let out = fly(&[path.to_str().expect("utf8")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("empty.waypoints: the mission has no navigation item to fly"),
        "{stderr}"
    );
}

/// `estimator.csv` is 50 Hz of sim time at any physics rate (it used to be
/// every 20th tick: 100 Hz at 2 kHz physics).
#[test]
fn the_estimator_log_is_50_hz_at_any_physics_rate() {
    let tmp = tempfile::tempdir().expect("tmp");
    let scenario = tmp.path().join("s.json");
    std::fs::write(
        &scenario,
        r#"{"physics_rate_hz": 2000, "vehicles": [{"kind": "multirotor"}]}"#,
    )
    .expect("write");
    let dir = tmp.path().join("rec");
    let out = fly(&[
        "--scenario",
        scenario.to_str().expect("utf8"),
        "--timeout",
        "20",
        "--record",
        dir.to_str().expect("utf8"),
    ]);
    let text = std::fs::read_to_string(dir.join("estimator.csv")).expect("estimator.csv");
    let stamps: Vec<u64> = text
        .lines()
        .skip(1)
        .filter_map(|l| l.split(',').next()?.parse().ok())
        .collect();
    assert!(
        stamps.len() > 900,
        "{} rows; {:?}",
        stamps.len(),
        out.status
    );
    // The first row when the first estimate exists, then every 20 ms.
    assert!(
        stamps[1..].windows(2).all(|w| w[1] - w[0] == 20_000_000),
        "rows are not 20 ms apart"
    );
}

/// The file ArduPilot flies the boat with loads into SimpleFlight: its
/// firmware-only lines are listed once, in one line, and not applied; a
/// misspelt tuning parameter is refused with the file and line.
#[test]
fn a_firmware_parameter_file_loads_with_its_ignored_lines_listed_once() {
    let parm = repo("firmware_configs/ardupilot/boat.parm");
    let plan = repo("missions/boat_box.plan");
    let out = fly(&[
        plan.to_str().expect("utf8"),
        "--params",
        parm.to_str().expect("utf8"),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    let listed: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("SimpleFlight ignores"))
        .collect();
    assert_eq!(listed.len(), 1, "{err}");
    assert!(
        listed[0].contains(
            "ignores 11 firmware parameter(s) it has no use for: FRAME_CLASS, SERVO1_FUNCTION"
        ),
        "{err}"
    );
    assert!(listed[0].ends_with("SIM_RATE_HZ"), "{err}");
    let dir = std::env::temp_dir().join(format!("mavsitl-parm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let bad = dir.join("boat.parm");
    std::fs::write(&bad, "FRAME_CLASS 2\nWP_SPEED 2\nATC_STR_RAT_PP 1\n").expect("write");
    let out = fly(&[
        plan.to_str().expect("utf8"),
        "--params",
        bad.to_str().expect("utf8"),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "{}:3: unknown parameter ATC_STR_RAT_PP",
            bad.display()
        )),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A DO_JUMP flies back along a leg no other item makes (here the diagonal
/// from the square's last corner to its first): the summary measures the
/// track against the route with the jump followed, sampled as the recording
/// is, so it prints what `plot` (and `compare`) measure of the recording.
#[test]
fn the_summary_measures_a_jump_plan_as_plot_does() {
    let tmp = tempfile::tempdir().expect("tmp");
    let text = std::fs::read_to_string(repo("missions/quad_square.plan")).expect("plan");
    let mut plan: serde_json::Value = serde_json::from_str(&text).expect("json");
    let items = plan["mission"]["items"].as_array_mut().expect("items");
    // take-off, N50, N50 E50, E50, [home →] a jump back to N50 once, RTL.
    items[4] = serde_json::json!({"type": "SimpleItem", "command": 177, "doJumpId": 5,
        "frame": 2, "autoContinue": true, "params": [2, 1, 0, 0, 0, 0, 0]});
    let path = tmp.path().join("jump.plan");
    std::fs::write(&path, plan.to_string()).expect("write");
    let rec = tmp.path().join("rec");
    let s = ok(&[
        path.to_str().expect("utf8"),
        "--record",
        rec.to_str().expect("utf8"),
    ]);
    let xtrack_max = number_after(line(&s.text, "cross-track"), "max");
    // Flown well: the diagonal is on the plan (off it, the track would be
    // 25 m from every other leg halfway along).
    assert!(s.truth_rms < 1.0 && xtrack_max < 2.5, "{}", s.text);
    let out = Command::new(env!("CARGO_BIN_EXE_mavsitl"))
        .arg("plot")
        .arg(&rec)
        .arg("--out")
        .arg(tmp.path().join("plots"))
        .output()
        .expect("plot");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{report}");
    let metric = |name: &str| number_after(line(&report, name), name);
    assert!(
        (metric("xtrack_rms [m]") - s.truth_rms).abs() < 6e-4,
        "{report}\n{}",
        s.text
    );
    assert!(
        (metric("xtrack_max [m]") - xtrack_max).abs() < 6e-4,
        "{report}\n{}",
        s.text
    );
}

/// The physics rate `fly` steps at, from the recording's `meta.json` and
/// its ground-truth rows: SimpleFlight's 250 Hz for the built-in quad, the
/// file's rate where it gives one, and 1 kHz for the boat.
#[test]
fn fly_steps_a_quad_at_simpleflights_rate_unless_told_or_not_a_quad() {
    let tmp = tempfile::tempdir().expect("tmp");
    let given = tmp.path().join("given.json");
    std::fs::write(
        &given,
        r#"{"physics_rate_hz": 1000, "vehicles": [{"kind": "multirotor"}]}"#,
    )
    .expect("write");
    let boat = repo("missions/boat_box.plan");
    let flights: [(&str, Vec<&str>, u64, u64); 3] = [
        ("quad", vec![], 250, 4_000_000),
        (
            "given",
            vec!["--scenario", given.to_str().expect("utf8")],
            1000,
            5_000_000,
        ),
        ("boat", vec![boat.to_str().expect("utf8")], 1000, 5_000_000),
    ];
    for (name, args, physics, row_ns) in flights {
        let dir = tmp.path().join(name);
        let mut all = args.clone();
        all.extend(["--timeout", "2", "--record", dir.to_str().expect("utf8")]);
        let out = fly(&all);
        let meta: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).expect("meta"))
                .expect("json");
        assert_eq!(
            (
                &meta["physics_rate_hz"],
                &meta["scenario"]["physics_rate_hz"]
            ),
            (&physics.into(), &physics.into()),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let gt = std::fs::read_to_string(dir.join("ground_truth.csv")).expect("ground truth");
        let second: u64 = gt
            .lines()
            .nth(2)
            .and_then(|l| l.split(',').next()?.parse().ok())
            .expect("a second row");
        assert_eq!(second, row_ns, "{name}: ground truth's second row");
    }
}
