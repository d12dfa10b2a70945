//! Vehicles in one world meet: encounters and collisions, checked against
//! analytic crossings, and SimpleFlight fleets flown by `mavsitl fly`.

use std::path::{Path, PathBuf};
use std::process::Command;

use mavsitl::geo::{GeoPoint, LocalFrame};
use mavsitl::physics::BodyState;
use mavsitl::scenario::{Scenario, ScenarioSource, DEFAULT_HOME};
use mavsitl::time::SimTime;
use nalgebra::{UnitQuaternion, Vector3};

fn source() -> ScenarioSource {
    ScenarioSource {
        name: "test".into(),
        base_dir: ".".into(),
    }
}

/// Two quads (collision radius 1 m) flying level at 10 m towards the origin
/// at 5 m/s, one from the south, one from the west, placed on their
/// analytic paths at the start of every tick.
#[test]
fn a_right_angle_crossing_collides_at_the_analytic_time_and_place() {
    let s = Scenario::from_json(
        r#"{"physics_rate_hz": 1000, "vehicles": [
            {"name": "a", "kind": "multirotor", "collision_radius_m": 1.0},
            {"name": "b", "kind": "multirotor", "collision_radius_m": 1.0}]}"#,
        &source(),
    )
    .expect("scenario");
    let mut sim = s.build_simulation(&source()).expect("sim");
    let (v, d0) = (5.0, 20.0);
    let on_path = |t: f64, north: bool| {
        let d = d0 - v * t;
        let (pos, vel) = if north {
            (Vector3::new(-d, 0.0, -10.0), Vector3::new(v, 0.0, 0.0))
        } else {
            (Vector3::new(0.0, -d, -10.0), Vector3::new(0.0, v, 0.0))
        };
        BodyState {
            pos_ned_m: pos,
            vel_ned_m_s: vel,
            att_ned_frd: UnitQuaternion::identity(),
            rate_frd_rad_s: Vector3::zeros(),
        }
    };
    while sim.time() < SimTime::from_secs_f64(5.0) && !sim.is_wrecked(0) {
        let t = sim.time().as_secs_f64();
        sim.set_vehicle_state(0, on_path(t, true));
        sim.set_vehicle_state(1, on_path(t, false));
        sim.step().expect("step");
    }
    // Separation (d0 − v t)·√2 falls below 2 m after t* = (d0 − √2)/v.
    let t_star = (d0 - std::f64::consts::SQRT_2) / v;
    let first_tick_after = (t_star * 1000.0).floor() / 1000.0 + 0.001;
    let m = sim.encounters().expect("monitor");
    let c = m.collisions();
    assert_eq!(c.len(), 1, "{c:?}");
    let c = c[0];
    println!(
        "collision at {} (analytic {t_star:.4} s), {:?}, {:.3} m apart, closing {:.3} m/s",
        c.time, c.point_ned_m, c.separation_m, c.closing_speed_m_s
    );
    assert_eq!(c.time, SimTime::from_secs_f64(first_tick_after));
    let d = d0 - v * first_tick_after;
    assert!((c.point_ned_m - Vector3::new(-d / 2.0, -d / 2.0, -10.0)).norm() < 1e-3);
    assert!((c.separation_m - d * std::f64::consts::SQRT_2).abs() < 1e-3);
    assert!((c.closing_speed_m_s - v * std::f64::consts::SQRT_2).abs() < 1e-2);
    // The encounter began when they came within 20 m of each other.
    let e = m.encounters()[0];
    let t_in = (d0 - 20.0 / std::f64::consts::SQRT_2) / v;
    assert!((e.start.as_secs_f64() - t_in).abs() <= 0.001, "{e:?}");
    // Both are out of the flight: motors stopped, they fall to the ground.
    assert!(sim.is_wrecked(0) && sim.is_wrecked(1));
    while sim.time() < SimTime::from_secs_f64(8.0) {
        sim.step().expect("step");
    }
    for v in sim.vehicles() {
        let gt = v.ground_truth();
        assert!(
            gt.pos_ned_m.z > -0.5,
            "{} still {:.1} m up",
            v.name(),
            -gt.pos_ned_m.z
        );
    }
}

fn mavsitl() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mavsitl"))
}

/// A WPL mission: take off to 10 m where the vehicle stands, then fly to
/// `to` (NED m from home) at `alt` m.
fn crossing_mission(dir: &Path, name: &str, to: (f64, f64), alt: f64) -> PathBuf {
    let h = DEFAULT_HOME;
    let frame = LocalFrame::new(GeoPoint::from_deg(h.lat_deg, h.lon_deg, h.alt_m));
    let g = frame.to_geodetic(&Vector3::new(to.0, to.1, 0.0));
    let text = format!(
        "QGC WPL 110\n0\t1\t0\t16\t0\t0\t0\t0\t{}\t{}\t{}\t1\n1\t0\t3\t22\t0\t0\t0\t0\t0\t0\t10\t1\n2\t0\t3\t16\t0\t0\t0\t0\t{:.9}\t{:.9}\t{alt}\t1\n",
        h.lat_deg,
        h.lon_deg,
        h.alt_m,
        g.lat_deg(),
        g.lon_deg()
    );
    let path = dir.join(name);
    std::fs::write(&path, text).expect("mission");
    path
}

/// A scenario of quads starting at `starts` (name, N, E), each flying its
/// mission file.
fn fleet_scenario(dir: &Path, quads: &[(&str, (f64, f64), &str)]) -> PathBuf {
    let vehicles: Vec<serde_json::Value> = quads
        .iter()
        .map(|(name, (n, e), mission)| {
            serde_json::json!({
                "name": name, "kind": "multirotor",
                "initial": {"north_m": n, "east_m": e},
                "controller": {"kind": "simpleflight", "mission": mission}
            })
        })
        .collect();
    let path = dir.join("fleet.json");
    std::fs::write(
        &path,
        serde_json::json!({ "vehicles": vehicles }).to_string(),
    )
    .expect("scenario");
    path
}

/// encounters.csv as (a, b, min separation m, closest ns, collision ns).
fn encounters(rec: &Path) -> Vec<(String, String, f64, u64, Option<u64>)> {
    let text = std::fs::read_to_string(rec.join("encounters.csv")).expect("encounters.csv");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("vehicle_a"))
        .map(|l| {
            let f: Vec<&str> = l.split(',').map(str::trim).collect();
            (
                f[0].to_string(),
                f[1].to_string(),
                f[5].parse().expect("separation"),
                f[4].parse().expect("closest"),
                f[12].parse().ok(),
            )
        })
        .collect()
}

/// Three quads cross above the origin at once, climbing to 10, 20 and
/// 30 m: about 10, 15 and 20 m up when they pass it.
fn three_crossing(dir: &Path) -> PathBuf {
    let a = crossing_mission(dir, "a.txt", (40.0, 0.0), 10.0);
    let b = crossing_mission(dir, "b.txt", (0.0, 40.0), 20.0);
    let c = crossing_mission(dir, "c.txt", (28.28, 28.28), 30.0);
    let s = |p: &Path| {
        p.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string()
    };
    let (a, b, c) = (s(&a), s(&b), s(&c));
    fleet_scenario(
        dir,
        &[
            ("a", (-40.0, 0.0), &a),
            ("b", (0.0, -40.0), &b),
            ("c", (-28.28, -28.28), &c),
        ],
    )
}

#[test]
fn three_quads_crossing_at_different_heights_pass_without_contact_repeatably() {
    let tmp = tempfile::tempdir().expect("tmp");
    let scenario = three_crossing(tmp.path());
    let run = |rec: &Path| {
        let o = mavsitl()
            .args(["fly", "--seed", "3", "--scenario"])
            .arg(&scenario)
            .arg("--record")
            .arg(rec)
            .output()
            .expect("run");
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(
            o.status.success(),
            "{out}\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(out.matches("mission completed").count(), 3, "{out}");
        out
    };
    let (ra, rb) = (tmp.path().join("a"), tmp.path().join("b"));
    let out = run(&ra);
    println!("{out}");
    let e = encounters(&ra);
    // Every pair meets above the origin, 5 m apart for neighbours in
    // height (half of 10 m) and 10 m for the outer two, never touching.
    assert_eq!(e.len(), 3, "{e:?}");
    for (a, b, sep, _, collided) in &e {
        let expect = if (a.as_str(), b.as_str()) == ("a", "c") {
            10.0
        } else {
            5.0
        };
        assert!(
            (sep - expect).abs() < 1.0,
            "{a}-{b}: {sep} m, expected {expect}"
        );
        assert!(collided.is_none());
    }
    // Each vehicle recorded on its own, on one time base; the same seed
    // gives the same run to the byte.
    run(&rb);
    for f in [
        "encounters.csv",
        "a/ground_truth.csv",
        "b/imu.csv",
        "c/gps.csv",
    ] {
        let (x, y) = (
            std::fs::read(ra.join(f)).expect(f),
            std::fs::read(rb.join(f)).expect(f),
        );
        assert!(!x.is_empty() && x == y, "{f} differs between runs");
    }
}

#[test]
fn two_quads_crossing_at_one_height_collide_where_their_legs_cross() {
    let tmp = tempfile::tempdir().expect("tmp");
    let a = crossing_mission(tmp.path(), "a.txt", (40.0, 0.0), 10.0);
    let b = crossing_mission(tmp.path(), "b.txt", (0.0, 40.0), 10.0);
    let s = |p: &Path| {
        p.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string()
    };
    let scenario = fleet_scenario(
        tmp.path(),
        &[("a", (-40.0, 0.0), &s(&a)), ("b", (0.0, -40.0), &s(&b))],
    );
    let rec = tmp.path().join("rec");
    let o = mavsitl()
        .args(["fly", "--scenario"])
        .arg(&scenario)
        .arg("--record")
        .arg(&rec)
        .output()
        .expect("run");
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(err.contains("2 of 2 flights failed: a, b"), "{err}");
    assert_eq!(out.matches("FAILED: collision with").count(), 2, "{out}");
    let e = encounters(&rec);
    assert_eq!(e.len(), 1, "{e:?}");
    let (_, _, sep, closest_ns, collided) = &e[0];
    let collided = collided.expect("a collision");
    assert!(*sep < 1.0, "{sep} m");
    // The legs cross at the origin: each vehicle is there when they touch.
    // Vehicle a's own track says when it passed the origin.
    let gt = std::fs::read_to_string(rec.join("a/ground_truth.csv")).expect("truth");
    let (passed_ns, off) = gt
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let f: Vec<f64> = l.split(',').filter_map(|x| x.trim().parse().ok()).collect();
            Some((*f.first()? as u64, f.get(1)?.hypot(*f.get(2)?)))
        })
        .min_by(|x, y| x.1.total_cmp(&y.1))
        .expect("rows");
    println!("collision at {collided} ns; a closest to the origin at {passed_ns} ns ({off:.2} m)");
    assert!(off < 1.0, "a passed {off} m from the crossing");
    assert!(
        collided.abs_diff(passed_ns) <= 300_000_000,
        "{collided} vs {passed_ns}"
    );
    assert!(*closest_ns >= collided);
}

#[test]
fn a_suite_asserts_the_fleets_separation_and_each_vehicles_flight() {
    let tmp = tempfile::tempdir().expect("tmp");
    let apart = tmp.path().join("apart");
    let together = tmp.path().join("together");
    for d in [&apart, &together] {
        std::fs::create_dir_all(d).expect("dir");
    }
    three_crossing(&apart);
    let a = crossing_mission(&together, "a.txt", (40.0, 0.0), 10.0);
    crossing_mission(&together, "b.txt", (0.0, 40.0), 10.0);
    fleet_scenario(
        &together,
        &[("a", (-40.0, 0.0), "a.txt"), ("b", (0.0, -40.0), "b.txt")],
    );
    let suite = tmp.path().join("fleet.toml");
    std::fs::write(
        &suite,
        format!(
            "[defaults.expect]\nmin_separation_m = 3.0\nmax_cross_track_m = 2.0\n\n\
             [[case]]\nname = \"apart\"\nmission = \"apart/a.txt\"\nscenario = \"apart/fleet.json\"\n\
             [case.expect]\nmission_completed = true\n\n\
             [[case]]\nname = \"together\"\nmission = \"{}\"\nscenario = \"together/fleet.json\"\n",
            a.display()
        ),
    )
    .expect("suite");
    let junit = tmp.path().join("junit.xml");
    let o = mavsitl()
        .arg("test")
        .arg(&suite)
        .arg("--out")
        .arg(tmp.path().join("out"))
        .arg("--junit")
        .arg(&junit)
        .arg("--json")
        .arg(tmp.path().join("summary.json"))
        .output()
        .expect("run");
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let j = std::fs::read_to_string(&junit).expect("junit");
    // The crossing at one height fails on separation (they collided); the
    // one at three heights passes every check, per vehicle.
    let failures: Vec<&str> = j.lines().filter(|l| l.contains("<failure")).collect();
    assert_eq!(failures.len(), 1, "{j}");
    assert!(
        failures[0].contains("min_separation_m") && failures[0].contains("collided"),
        "{j}"
    );
    // Each vehicle's track was checked against its own mission.
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(tmp.path().join("summary.json")).expect("json"),
    )
    .expect("json");
    let results = summary["results"].as_array().expect("results");
    let apart = results
        .iter()
        .find(|r| r["case"] == "apart")
        .expect("apart");
    for v in ["a", "b", "c"] {
        let checked = apart["checks"].as_array().expect("checks").iter().any(|k| {
            k["name"] == "max_cross_track_m"
                && k["passed"] == true
                && k["measured"]
                    .as_str()
                    .is_some_and(|m| m.starts_with(&format!("'{v}': ")))
        });
        assert!(checked, "{v}: {apart}");
    }
    println!("{out}");
}
