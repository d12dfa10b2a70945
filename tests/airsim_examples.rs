//! AirSim's own example scripts, as a new user runs them: the calls of
//! takeoff.py, box.py, pause_continue_drone.py, reset_test_drone.py,
//! multi_agent_drone.py and navigate.py in their order, through AirSim's
//! Python client (`.venv-airsim`), started the moment the server answers —
//! no waiting for the vehicle to be ready, as with AirSim. Each test checks
//! what its script means to do.

use std::path::Path;
use std::process::Command;

use crate::common::airsim_server::Server;

/// The server's clock speed: the scripts' waits pass four times faster.
const CLOCK_SPEED: &str = "4";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn server(extra: &[&str]) -> Server {
    let mut args = vec!["--seed", "5", "--clock-speed", CLOCK_SPEED];
    args.extend_from_slice(extra);
    Server::start(&args)
}

/// Runs `script`'s calls against a fresh server: its measurements.
fn run(script: &str) -> serde_json::Value {
    run_with(script, &[])
}

/// [`run`] with the server's extra arguments.
fn run_with(script: &str, extra: &[&str]) -> serde_json::Value {
    let server = server(extra);
    let port = server.port;
    let python = root().join(".venv-airsim/bin/python");
    assert!(python.exists(), "run tests/python/setup.sh first");
    let o = Command::new(python)
        .arg(root().join("tests/python/airsim_examples.py"))
        .args([&port.to_string(), CLOCK_SPEED, script])
        .output()
        .expect("python");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{script}: {}\n{stdout}",
        String::from_utf8_lossy(&o.stderr)
    );
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn xyz(v: &serde_json::Value) -> [f64; 3] {
    let f = |i: usize| v[i].as_f64().unwrap_or(f64::NAN);
    [f(0), f(1), f(2)]
}

fn dist(a: [f64; 3], b: [f64; 3]) -> f64 {
    (0..3).map(|i| (a[i] - b[i]).powi(2)).sum::<f64>().sqrt()
}

/// takeoff.py: armed at once (it was refused for 16 s), up 3 m, down again.
#[test]
fn takeoff_arms_at_once_and_reaches_3_m() {
    let r = run("takeoff");
    assert_eq!(r["armed"], true, "{r}");
    assert_eq!(r["landed_before"], 0, "{r}");
    let up = xyz(&r["after_takeoff"]);
    assert!((-3.6..=-2.4).contains(&up[2]), "take-off to {up:?}");
    let down = xyz(&r["after_land"]);
    assert!(down[2] > -0.3, "landed at {down:?}");
    assert_eq!(r["disarmed"], true, "{r}");
}

/// box.py: four 5 m sides by velocity at 7 m, turning to each side's yaw,
/// back where it began, holding between the sides.
#[test]
fn the_box_returns_to_its_start() {
    let r = run("box");
    let (start, end) = (xyz(&r["start"]), xyz(&r["end"]));
    assert!(
        dist([start[0], start[1], 0.0], [end[0], end[1], 0.0]) < 1.0,
        "{start:?} → {end:?}"
    );
    assert!((end[2] + 7.0).abs() < 0.5, "at {end:?}");
    for (got, want) in r["yaws_deg"]
        .as_array()
        .expect("yaws")
        .iter()
        .zip([90.0, 180.0, 270.0, 0.0])
    {
        let got = got.as_f64().expect("yaw");
        let e = (got - want + 540.0).rem_euclid(360.0) - 180.0;
        assert!(e.abs() < 5.0, "yaw {got} for {want}");
    }
}

/// pause_continue_drone.py: a climb from the ground by velocity, then a
/// command in flight that stops while paused, runs 7.5 s of sim time at the
/// clock speed on a continue (and is paused after it, as AirSim's is), and
/// goes on when resumed.
#[test]
fn motion_stops_while_paused_and_resumes_on_continue() {
    let r = run("pause_continue");
    let climb = xyz(&r["after_climb"]);
    assert!(climb[2] < -15.0, "climbed from the ground to {climb:?}");
    let f = |k: &str| r[k].as_f64().unwrap_or(f64::NAN);
    assert!(f("paused_moved_m") < 1e-6, "{r}");
    assert!(f("paused_time_s") < 1e-6, "{r}");
    assert!((f("continued_time_s") - 7.5).abs() < 0.01, "{r}");
    assert!(f("continued_moved_m") > 5.0, "{r}");
    // 7.5 s at clock speed 4: 1.9 s of wall time (it returned at once).
    assert!((1.5..4.0).contains(&f("continue_wall_s")), "{r}");
    assert_eq!(r["paused_after_continue"], true, "{r}");
    assert!(f("resumed_moved_m") > 0.5, "{r}");
}

/// reset_test_drone.py: after a reset the vehicle is back at its start,
/// ready, its time stamps going on, and flies again.
#[test]
fn the_vehicle_flies_after_a_reset() {
    let r = run("reset");
    for k in ["first", "second", "third"] {
        let p = xyz(&r[k]);
        assert!(dist(p, [0.0, 0.0, -10.0]) < 0.8, "{k}: {p:?}");
    }
    let back = xyz(&r["after_reset"]);
    assert!(dist(back, [0.0, 0.0, 0.0]) < 0.3, "{back:?}");
    assert_eq!(r["ready_after_reset"], true, "{r}");
    assert_eq!(r["time_goes_on"], true, "{r}");
    assert_eq!(r["armed_again"], true, "{r}");
    // The climb after a reset runs at the clock speed (4): its sim time over
    // four, give or take the client's calls.
    let (wall, sim) = (
        r["climb_after_reset_wall_s"].as_f64().unwrap_or(0.0),
        r["climb_after_reset_sim_s"].as_f64().unwrap_or(0.0),
    );
    assert!(sim > 2.0 && wall > 0.6 * sim / 4.0, "{r}");
}

/// hoverAsync after a 10 m/s leg holds the stop point and heading: 10 s
/// within 0.5 m and 5° (it swung 2.5–17 m away); a descent asked at 5 m/s
/// goes at the vehicle's 4 m/s limit (it was held to 1.5).
#[test]
fn hover_holds_the_stop_point_and_descents_go_as_fast_as_asked() {
    let r = run("hold");
    let f = |k: &str| r[k].as_f64().unwrap_or(f64::NAN);
    assert!(f("drift_m") < 0.5, "{r}");
    assert!(f("turn_deg") < 5.0, "{r}");
    assert!((3.5..=4.2).contains(&f("fastest_descent_m_s")), "{r}");
}

/// multi_agent_drone.py's flow on its own settings (two SimpleFlight
/// drones, 4 m apart): both addressed by name in one world, taking off
/// together and flying to (-5, 5) and (5, -5) of their own frames — 17 m
/// apart; an unknown name gets AirSim's error; reset brings both back.
#[test]
fn two_vehicles_fly_apart_each_addressed_by_name() {
    let tmp = tempfile::tempdir().expect("tmp");
    let settings = tmp.path().join("settings.json");
    std::fs::write(
        &settings,
        r#"{"SettingsVersion": 1.2, "SimMode": "Multirotor", "ClockSpeed": 1,
            "Vehicles": {
              "Drone1": {"VehicleType": "SimpleFlight", "X": 4, "Y": 0, "Z": -2},
              "Drone2": {"VehicleType": "SimpleFlight", "X": 8, "Y": 0, "Z": -2}}}"#,
    )
    .expect("settings");
    let r = run_with("multi", &["--settings", settings.to_str().expect("utf8")]);
    assert_eq!(r["vehicles"], serde_json::json!(["Drone1", "Drone2"]));
    assert_eq!(r["armed"], serde_json::json!([true, true]));
    let (d1, d2) = (xyz(&r["drone1"]), xyz(&r["drone2"]));
    assert!(dist(d1, [-5.0, 5.0, -10.0]) < 0.8, "{d1:?}");
    assert!(dist(d2, [5.0, -5.0, -10.0]) < 0.8, "{d2:?}");
    // World: (4 - 5, 5) and (8 + 5, -5): 17.2 m apart.
    let apart = r["apart_m"].as_f64().unwrap_or(0.0);
    assert!((apart - 17.2).abs() < 1.0, "{apart} m");
    assert!(
        r["unknown"]
            .as_str()
            .is_some_and(|e| e.contains("Vehicle API for 'Drone3' is not available")),
        "{r}"
    );
    // Each drone's DepthVis PNG and uncompressed scene, 256 × 144, saved
    // and read back; the two drones' pictures are their own.
    let images = r["images"].as_array().expect("images");
    let kinds: Vec<_> = images
        .iter()
        .map(|i| (&i["type"], &i["compress"]))
        .collect();
    let want = [(3, true), (0, false), (3, true), (0, false)];
    assert_eq!(kinds.len(), 4, "{r}");
    for ((t, c), (wt, wc)) in kinds.into_iter().zip(want) {
        assert_eq!((t.as_i64(), c.as_bool()), (Some(wt), Some(wc)), "{r}");
    }
    for i in images {
        assert_eq!(i["size"], serde_json::json!([256, 144]), "{i}");
        assert_eq!(i["decoded"], serde_json::json!([144, 256, 3]), "{i}");
    }
    // Each picture is taken where its own drone is: its camera 0.25 m
    // ahead of the drone at (-5, 5, -10) or (5, -5, -10) of its frame.
    // (Pixels can tell the drones apart only by the blocks in view, a
    // sixth of the picture, while a drone still swaying after its flight
    // changes a twelfth of its own DepthVis between two requests.)
    for (k, i) in images.iter().enumerate() {
        let at = if k < 2 { d1 } else { d2 };
        let from = xyz(&i["from"]);
        assert!(dist(from, at) < 0.5, "{k}: {from:?} from a drone at {at:?}");
    }
    let back = xyz(&r["drone1_after_reset"]);
    assert!(
        dist([back[0], back[1], 0.0], [0.0, 0.0, 0.0]) < 0.1,
        "{back:?}"
    );
}

/// navigate.py's loop, twelve rounds. Its DepthVis PNGs decode as it
/// decodes them (144 × 256, three channels). On AirSim's scale (black at
/// 0 m, white at 100 m and beyond) the open air ahead is white, which the
/// script, written for the inverse scale, reads as a wall: it hovers and
/// waits for a key every round, as it does with AirSim, and with the key
/// taken as pressed flies on north along its heading, about 1 m a round
/// at 6 m.
/// Its bottom-left pixel sees the ground at the depth of the height and
/// the pitch.
#[test]
fn navigate_reads_its_depth_images_on_airsims_scale() {
    let r = run("navigate");
    let rounds = r["rounds"].as_array().expect("rounds");
    assert_eq!(rounds.len(), 12, "{r}");
    for (i, round) in rounds.iter().enumerate() {
        assert_eq!(round["shape"], serde_json::json!([144, 256, 3]), "{round}");
        assert_eq!(
            round["maxes"],
            serde_json::json!([255, 255, 255, 255, 255]),
            "{round}"
        );
        assert_eq!(round["stopped"], true, "{round}");
        let at = xyz(&round["at"]);
        let yaw = round["yaw_deg"].as_f64().unwrap_or(f64::NAN);
        assert!(yaw.abs() < 1.0, "round {i}: yaw {yaw}");
        assert!(at[1].abs() < 0.1, "round {i}: {at:?}");
        if i >= 4 {
            assert!((at[2] + 6.0).abs() < 0.1, "round {i}: {at:?}");
            // The image was taken paused, between two reads of the pose.
            let bottom = round["bottom_left"].as_f64().unwrap_or(-1.0);
            let pose = |k: &str, j: usize| round[k][j].as_f64().unwrap_or(f64::NAN);
            let [a, b] =
                [0, 1].map(|j| nearest_ground_depth_vis(pose("height_m", j), pose("pitch_deg", j)));
            let (lo, hi) = (a.min(b) - 1.5, a.max(b) + 1.5);
            assert!(
                (lo..=hi).contains(&bottom),
                "round {i}: {bottom} for {lo}..{hi}"
            );
            let before = xyz(&rounds[i - 1]["at"]);
            assert!(at[0] - before[0] > 0.5, "round {i}: {at:?}");
        }
    }
    // A metre a round on average: a second at 1 m/s, and the hover.
    let (first, last) = (xyz(&rounds[3]["at"]), xyz(&rounds[11]["at"]));
    let per_round = (last[0] - first[0]) / 8.0;
    assert!((per_round - 1.0).abs() < 0.1, "{per_round} m a round");
}

/// The DepthVis grey (0–255 over 0–100 m of planar depth) of the ground
/// seen by the bottom row of a 256 × 144, 90° camera at `height_m` over
/// flat ground, pitched `pitch_deg` (nose up): the row's centres look
/// atan(71.5 / 128) below the optical axis, whatever their column (the
/// planar depth of a ground point is the height over the ray's down
/// component, and pitch turns about the rows' axis).
fn nearest_ground_depth_vis(height_m: f64, pitch_deg: f64) -> f64 {
    let below_axis = (71.5_f64 / 128.0).atan();
    let below_horizon = below_axis - pitch_deg.to_radians();
    let range = height_m / below_horizon.sin();
    range * below_axis.cos() / 100.0 * 255.0
}
