//! `mavsitl airsim` against AirSim's own Python client (`airsim` 1.8.1 from
//! PyPI, in `.venv-airsim`, installed by `tests/python/setup.sh`): a flight
//! scripted as AirSim's examples script one, and lockstep IMU collection.

use std::path::{Path, PathBuf};

use crate::common::airsim_server::Server;
use std::process::{Command, Stdio};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn python() -> PathBuf {
    let p = root().join(".venv-airsim/bin/python");
    assert!(
        p.exists(),
        "{} missing: run tests/python/setup.sh",
        p.display()
    );
    p
}

fn server(extra: &[&str]) -> Server {
    let mut args = vec!["--seed", "7"];
    args.extend_from_slice(extra);
    Server::start(&args)
}

fn client(port: u16, what: &str) -> serde_json::Value {
    let o = Command::new(python())
        .arg(root().join("tests/python/airsim_flight.py"))
        .arg(port.to_string())
        .arg(what)
        .output()
        .expect("python");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "client failed: {}\n{}",
        String::from_utf8_lossy(&o.stderr),
        text
    );
    // The client prints its own greeting first; the result is the last line.
    let last = text.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn xyz(v: &serde_json::Value) -> [f64; 3] {
    let a = v.as_array().expect("position");
    [0, 1, 2].map(|i| a[i].as_f64().expect("number"))
}

fn dist(a: [f64; 3], b: [f64; 3]) -> f64 {
    (0..3).map(|i| (a[i] - b[i]).powi(2)).sum::<f64>().sqrt()
}

#[test]
fn airsims_client_flies_takeoff_move_box_yaw_and_land() {
    let s = server(&["--clock-speed", "10"]);
    let out = client(s.port, "flight");
    assert_eq!(out["version"], 1);
    // Take-off to 3 m above home (NED: z ≈ −3).
    let t = xyz(&out["after_takeoff"]);
    assert!((t[2] + 3.0).abs() < 0.6, "after take-off {t:?}");
    // moveToPosition arrives within 1 m.
    let m = xyz(&out["after_move"]);
    assert!(dist(m, [10.0, 5.0, -6.0]) < 1.0, "after move {m:?}");
    // A closed box by body velocities comes back near where it started.
    let b = xyz(&out["after_box"]);
    assert!(dist(b, m) < 2.0, "box ends at {b:?}, began at {m:?}");
    // 30 °/s for 3 s.
    let yaw = out["yaw_turned_deg"].as_f64().expect("yaw");
    assert!((yaw - 90.0).abs() < 15.0, "turned {yaw}°");
    // Landed and disarmed where it was.
    let l = xyz(&out["after_land"]);
    assert!(l[2].abs() < 0.3, "landed at {l:?}");
    assert_eq!(out["landed_state"], 0);
    assert_eq!(out["disarmed"], true);
    let e = out["weather_error"].as_str().expect("error text");
    assert!(e.contains("not supported by mavsitl"), "{e}");
}

#[test]
fn paused_collection_gets_every_imu_sample_evenly_spaced_and_repeatably() {
    let tmp = tempfile::tempdir().expect("tmp");
    let run = |rec: &Path| {
        // Continues run at the clock speed, as AirSim's: as fast as it goes.
        let s = server(&[
            "--paused",
            "--clock-speed",
            "max",
            "--record",
            rec.to_str().expect("utf8"),
        ]);
        client(s.port, "collect")
    };
    let (ra, rb) = (tmp.path().join("a"), tmp.path().join("b"));
    let a = run(&ra);
    // 400 × 5 ms = 2 s of sim time at the default 250 Hz IMU: every
    // sample, none twice, exactly 4 ms apart.
    let n = a["samples"].as_u64().expect("samples");
    let (lo, hi) = (
        a["dt_min_ns"].as_u64().expect("dt"),
        a["dt_max_ns"].as_u64().expect("dt"),
    );
    assert_eq!((lo, hi), (4_000_000, 4_000_000), "spacing");
    assert_eq!(n, 500);
    let span = a["last_ns"].as_u64().expect("last") - a["first_ns"].as_u64().expect("first");
    assert_eq!(span, (n - 1) * lo);
    // Turning at 45 °/s: the integrated gyro gives the ground truth's turn.
    let (truth, gyro) = (
        a["yaw_truth_rad"].as_f64().expect("truth"),
        a["yaw_gyro_rad"].as_f64().expect("gyro"),
    );
    println!("yaw over 2 s: ground truth {truth:.4} rad, integrated gyro {gyro:.4} rad");
    assert!(truth > 1.0, "the vehicle turned {truth} rad");
    assert!((truth - gyro).abs() < 0.02, "truth {truth} vs gyro {gyro}");
    // Same seed, same calls: the same answers and byte-identical recordings.
    let b = run(&rb);
    assert_eq!(a, b);
    for f in ["imu.csv", "ground_truth.csv", "gps.csv"] {
        let (x, y) = (
            std::fs::read(ra.join(f)).expect(f),
            std::fs::read(rb.join(f)).expect(f),
        );
        assert!(x.len() > 1000 && x == y, "{f} differs between runs");
    }
}

#[test]
fn a_settings_json_imu_at_500_hz_has_that_rate_and_by_allan_deviation_that_noise() {
    let tmp = tempfile::tempdir().expect("tmp");
    let settings = tmp.path().join("settings.json");
    std::fs::write(
        &settings,
        r#"{
          "SettingsVersion": 1.2, "SimMode": "Multirotor",
          "OriginGeopoint": {"Latitude": 47.641468, "Longitude": -122.140165, "Altitude": 122},
          "CameraDefaults": {"CaptureSettings": []},
          "Vehicles": {"Drone1": {"VehicleType": "SimpleFlight",
            "Sensors": {"Imu": {"SensorType": 2, "Enabled": true, "UpdateFrequency": 500,
                                "AngularRandomWalk": 0.6, "VelocityRandomWalk": 0.5}}}}
        }"#,
    )
    .expect("settings");
    let s = server(&[
        "--settings",
        settings.to_str().expect("utf8"),
        "--paused",
        "--clock-speed",
        "max",
    ]);
    let out = client(s.port, "allan");
    let rate = out["rate_hz"].as_f64().expect("rate");
    assert!((rate - 500.0).abs() < 1e-6, "{rate} Hz");
    assert!(out["samples"].as_u64().expect("n") >= 149_999);
    // White noise density N gives ADEV(1 s) = N; the bias terms add under
    // 2 % at 1 s with AirSim's default stabilities.
    let n_gyro = 0.6 / 60.0 * std::f64::consts::PI / 180.0;
    let n_accel = 0.5e-3 * 9.806_65;
    let g = out["adev_gyro_1s"].as_f64().expect("gyro");
    let a = out["adev_accel_1s"].as_f64().expect("accel");
    println!(
        "IMU {rate} Hz; ADEV(1 s): gyro {g:.4e} (N {n_gyro:.4e}), accel {a:.4e} (N {n_accel:.4e})"
    );
    assert!(
        (g / n_gyro - 1.0).abs() < 0.15,
        "gyro ADEV(1 s) {g} vs N {n_gyro}"
    );
    assert!(
        (a / n_accel - 1.0).abs() < 0.15,
        "accel ADEV(1 s) {a} vs N {n_accel}"
    );
}

#[test]
fn settings_that_would_change_the_run_are_refused_with_the_key() {
    let tmp = tempfile::tempdir().expect("tmp");
    let settings = tmp.path().join("settings.json");
    std::fs::write(&settings, r#"{"SimMode": "ComputerVision"}"#).expect("settings");
    let o = Command::new(env!("CARGO_BIN_EXE_mavsitl"))
        .args(["airsim", "--port", "0", "--settings"])
        .arg(&settings)
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("settings.json: SimMode \"ComputerVision\""),
        "{e}"
    );
}

#[test]
fn angle_and_rate_commands_fly_as_airsims_client_means_them() {
    let s = server(&["--clock-speed", "10"]);
    let out = client(s.port, "attitude");
    let (s, p, r) = (
        xyz(&out["start"]),
        xyz(&out["after_pitch_up"]),
        xyz(&out["after_roll_right"]),
    );
    // Nose up (positive pitch, as the client takes it) flies backwards, at
    // the height asked.
    assert!(p[0] < s[0] - 1.0, "pitch up: {s:?} → {p:?}");
    assert!((p[2] + 6.0).abs() < 0.7, "height {p:?}");
    // Right wing down flies right (east).
    assert!(r[1] > p[1] + 1.0, "roll right: {p:?} → {r:?}");
    // 0.5 rad/s for 2 s turns clockwise, lagging the ramp.
    let yaw = out["yaw_by_rate"].as_f64().expect("yaw");
    assert!((0.5..1.2).contains(&yaw), "turned {yaw} rad");
    // 80 % throttle for 1.5 s climbs.
    let climb = out["climb_by_throttle"].as_f64().expect("climb");
    assert!(climb > 1.0, "climbed {climb} m");
}

#[test]
fn with_external_physics_the_clients_poses_drive_the_sensors() {
    let tmp = tempfile::tempdir().expect("tmp");
    let settings = tmp.path().join("settings.json");
    std::fs::write(
        &settings,
        r#"{"SimMode": "Multirotor", "PhysicsEngineName": "ExternalPhysicsEngine"}"#,
    )
    .expect("settings");
    let s = server(&[
        "--settings",
        settings.to_str().expect("utf8"),
        "--paused",
        "--clock-speed",
        "max",
    ]);
    let out = client(s.port, "external");
    // Held where the poses put it, turning at 2 rad/s, reading 1 g up.
    assert_eq!(xyz(&out["position"]), [0.0, 0.0, -10.0]);
    let gz = out["gyro_z_mean"].as_f64().expect("gyro");
    let az = out["accel_z_mean"].as_f64().expect("accel");
    assert!((gz - 2.0).abs() < 0.01, "gyro z {gz}");
    assert!((az + 9.806_65).abs() < 0.02, "accel z {az}");
    let refused = out["refused"].as_str().expect("refused");
    assert!(refused.contains("ExternalPhysicsEngine"), "{refused}");
}

#[test]
fn a_px4_multirotor_is_flown_by_the_launched_px4_on_the_clients_clock() {
    // AirSim's settings for PX4 SITL; the PX4 stand-in (tests/standins)
    // answers every HIL_SENSOR in lockstep, as PX4's simulator_mavlink does.
    let tmp = tempfile::tempdir().expect("tmp");
    let (settings, mark, rec) = (
        tmp.path().join("settings.json"),
        tmp.path().join("mark"),
        tmp.path().join("rec"),
    );
    std::fs::write(
        &settings,
        r#"{
          "SettingsVersion": 1.2, "SimMode": "Multirotor", "ClockType": "SteppableClock",
          "OriginGeopoint": {"Latitude": 47.641468, "Longitude": -122.140165, "Altitude": 122},
          "Vehicles": {"PX4": {"VehicleType": "PX4Multirotor", "UseSerial": false,
            "LockStep": true, "UseTcp": true, "TcpPort": 4621,
            "ControlPortLocal": 14540, "ControlPortRemote": 14580,
            "Parameters": {"NAV_RCL_ACT": 0, "COM_OBL_ACT": 1}}}
        }"#,
    )
    .expect("settings");
    let child = Command::new(env!("CARGO_BIN_EXE_mavsitl"))
        .args(["airsim", "--port", "0", "--seed", "7", "--paused"])
        .args(["--keep-workdir", "--settings"])
        .arg(&settings)
        .arg("--record")
        .arg(&rec)
        .arg("--px4-build")
        .arg(root().join("tests/standins/px4_sitl_default"))
        .env("STANDIN_MARK", &mark)
        .env_remove("STANDIN_CUE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let (server, banner) = Server::ready(child);
    assert!(banner.contains("PX4"), "{banner}");
    let out = client(server.port, "px4");
    // Every IMU sample of 100 continues of 20 ms, 4 ms apart: the clock ran
    // exactly as far as the client asked, in lockstep with PX4.
    assert_eq!(out["samples"], 500, "{out}");
    assert_eq!(
        (out["dt_min_ns"].as_u64(), out["dt_max_ns"].as_u64()),
        (Some(4_000_000), Some(4_000_000))
    );
    assert_eq!(out["state_steps_ns"], serde_json::json!([20_000_000]));
    assert_eq!(out["paused"], true);
    // The stand-in sends no thrust: PX4's vehicle stands on the ground.
    assert_eq!(out["landed_state"], 0);
    assert!(out["z"].as_f64().expect("z").abs() < 0.2, "{out}");
    assert_eq!(out["home"][0], 47.641468);
    for (method, e) in out["errors"].as_object().expect("errors") {
        let e = e.as_str().expect("text");
        assert!(
            // PX4 instances from 10 on send their offboard link to 14549.
            e.contains("PX4 flies this vehicle") && e.contains("udp://:14549"),
            "{method}: {e}"
        );
    }
    // Ctrl-C: mavsitl stops PX4 with SIGTERM and closes its recording.
    let child = server.into_child();
    // SAFETY: kill(2) on our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let o = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&o.stderr);
    // 130: stopped by the user, as every subcommand ends on Ctrl-C.
    assert_eq!(o.status.code(), Some(130), "{stderr}");
    let marked = std::fs::read_to_string(&mark).expect("PX4 was asked to stop");
    assert!(marked.starts_with("SIGTERM "), "{marked}");
    // PX4 was started as instance 61 (TcpPort 4621 = 4560 + 61) with the
    // settings' home and Parameters.
    let dir = stderr
        .lines()
        .find_map(|l| l.split_once("working directory kept: "))
        .map(|(_, p)| PathBuf::from(p.trim()))
        .unwrap_or_else(|| panic!("no kept working directory in:\n{stderr}"));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("standin.json")).expect("report"))
            .expect("json");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(r["args"][1], "61", "{r}");
    assert_eq!(r["env"]["PX4_HOME_LAT"], "47.641468", "{r}");
    assert_eq!(r["env"]["PX4_PARAM_COM_OBL_ACT"], "1", "{r}");
    assert_eq!(r["env"]["PX4_PARAM_NAV_RCL_ACT"], "0", "{r}");
    let console = std::fs::read_to_string(rec.join("firmware.log")).expect("firmware.log");
    assert!(
        console.contains("Simulator connected on TCP port 4621"),
        "{console}"
    );
    let imu = std::fs::read_to_string(rec.join("imu.csv")).expect("imu.csv");
    assert!(
        imu.lines().count() > 500,
        "imu.csv has {} lines",
        imu.lines().count()
    );
}

/// AirSim's own client, hostile: a wind of 1e300 or 200 m/s, a pose 1e300 m
/// away or 1e9 m up, a continue of 1e300 s or 2^64 − 1 frames are refused
/// with an error the client raises, and the server goes on serving (the
/// wind used to end it with a non-finite position, the continues never
/// answered). A long continue from one client ends, answered, when another
/// pauses the clock.
#[test]
fn out_of_range_calls_are_refused_and_a_pause_ends_a_continue() {
    let server = server(&[]);
    let r = client(server.port, "hostile");
    for key in [
        "wind_1e300",
        "wind_200",
        "pose_x_1e300",
        "pose_z_-1e9",
        "continue_1e300",
        "frames_2^64-1",
    ] {
        let why = r["refused"][key].as_str().unwrap_or_default();
        assert!(!why.is_empty(), "{key} accepted: {r}");
    }
    assert!(r["refused"]["wind_200"]
        .as_str()
        .is_some_and(|w| w.contains("outside 100 m/s across")));
    assert!(r["refused"]["continue_1e300"]
        .as_str()
        .is_some_and(|w| w.contains("simContinueForTime: 1e300 is outside 0..=1e7")));
    assert_eq!(r["wind_50_ok"], true);
    let after = r["continue_answered_after_pause_s"]
        .as_f64()
        .expect("answered");
    assert!((0.3..10.0).contains(&after), "{r}");
    assert_eq!(
        (r["paused"].as_bool(), r["still_serving"].as_bool()),
        (Some(true), Some(true))
    );
}

/// A refused arming is what a script's user needs to see when nothing
/// moved: the server says why on stderr at its default verbosity, and
/// RUST_LOG=warn silences it.
#[test]
fn a_refused_arming_is_logged_by_default_and_rust_log_overrides() {
    for (rust_log, logged) in [(None, true), (Some("warn"), false)] {
        let mut command = Command::new(env!("CARGO_BIN_EXE_mavsitl"));
        command
            .args(["airsim", "--port", "0", "--seed", "7"])
            .env_remove("RUST_LOG")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(directives) = rust_log {
            command.env("RUST_LOG", directives);
        }
        let (server, _) = Server::ready(command.spawn().expect("spawn"));
        let port = server.port;
        let r = client(port, "no_control");
        assert_eq!(r["armed"], false, "{r}");
        let mut child = server.into_child();
        child.kill().expect("kill");
        let out = child.wait_with_output().expect("stderr");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let said = stderr.contains("armDisarm(True) refused: the vehicle cannot be armed via API");
        assert_eq!(said, logged, "RUST_LOG={rust_log:?}: {stderr}");
    }
}

/// Out of file descriptors (`ulimit -n 64`, 120 clients at once), every
/// connection is either served or closed — none is left hanging in the
/// listen queue — and the server keeps serving once clients leave.
#[test]
fn at_the_descriptor_limit_connections_are_served_or_closed_never_left_hanging() {
    use std::io::{Read, Write};
    use std::net::TcpStream;
    use std::time::Duration;
    let child = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -n 64 && exec {} airsim --port 0 --seed 7",
            env!("CARGO_BIN_EXE_mavsitl")
        ))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let (server, _) = Server::ready(child);
    let port = server.port;
    let ping = |id: u32| {
        let v = rmpv::Value::Array(vec![
            rmpv::Value::from(0),
            rmpv::Value::from(id),
            rmpv::Value::from("ping"),
            rmpv::Value::Array(vec![]),
        ]);
        let mut b = Vec::new();
        rmpv::encode::write_value(&mut b, &v).expect("encode");
        b
    };
    let mut clients = Vec::new();
    for id in 0..120 {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
            continue;
        };
        s.set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        let _ = s.write_all(&ping(id));
        clients.push(s);
    }
    let (mut served, mut closed, mut hanging) = (0, 0, 0);
    for s in &mut clients {
        let mut b = [0u8; 64];
        match s.read(&mut b) {
            Ok(0) => closed += 1,
            Ok(_) => served += 1,
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut =>
            {
                hanging += 1
            }
            Err(_) => closed += 1,
        }
    }
    assert_eq!(
        hanging, 0,
        "served {served}, closed {closed}, hanging {hanging}"
    );
    assert!(served > 0 && closed > 0, "served {served}, closed {closed}");
    drop(clients);
    std::thread::sleep(Duration::from_millis(500));
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect again");
    s.set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    s.write_all(&ping(999)).expect("send");
    let mut b = [0u8; 64];
    assert!(s.read(&mut b).expect("answer") > 0);
}

/// AirSim's own CarClient on SimMode "Car": hello_car.py's steps (forward,
/// brake, reverse in manual gear −1, reset) and a 20 m square driven by
/// throttle and steering alone on the paused, stepped clock; getCarState's
/// speed is the true forward speed all along, and the multirotor API is
/// refused for a car.
#[test]
fn airsims_car_client_drives_a_square_by_throttle_and_steering() {
    let dir = tempfile::tempdir().expect("tmp");
    let settings = dir.path().join("settings.json");
    std::fs::write(
        &settings,
        r#"{"SettingsVersion": 1.2, "SimMode": "Car", "ClockSpeed": 200}"#,
    )
    .expect("settings");
    let s = server(&["--settings", settings.to_str().expect("utf8")]);
    let o = Command::new(python())
        .arg(root().join("tests/python/airsim_car.py"))
        .arg(s.port.to_string())
        .output()
        .expect("python");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "client failed: {}\n{text}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out: serde_json::Value =
        serde_json::from_str(text.lines().last().unwrap_or_default()).expect("json");
    let num = |k: &str| out[k].as_f64().unwrap_or_else(|| panic!("{k}: {out}"));
    let said = |k: &str| out[k].as_str().unwrap_or_default().to_string();
    assert!(
        said("without_api_control").contains("API control is not enabled"),
        "{out}"
    );
    assert!(said("multirotor_call").contains("is a car"), "{out}");
    // Half throttle on the F1TENTH car: half its 7 m/s less its rolling
    // resistance, in gear 1; braked to a stop; the same backwards in −1.
    assert!((2.8..3.5).contains(&num("forward_speed")), "{out}");
    assert_eq!(out["forward_gear"], 1);
    assert!(num("braked_speed").abs() < 0.05, "{out}");
    assert!((-3.5..-2.8).contains(&num("reverse_speed")), "{out}");
    assert_eq!(out["reverse_gear"], -1);
    assert_eq!(
        out["controls_read_back"],
        serde_json::json!([-0.5, -1, true])
    );
    assert_eq!(out["after_reset"], serde_json::json!([0.0, 0.0]));
    // Four corners, about 10 s apart at 2 m/s, and back where it began.
    let corners = out["square_corners_s"].as_array().expect("corners");
    assert_eq!(corners.len(), 4, "{out}");
    let end = out["square_end"].as_array().expect("end");
    let (n, e) = (end[0].as_f64().expect("n"), end[1].as_f64().expect("e"));
    assert!(n.hypot(e) < 2.5, "ends {n}, {e} m from its start");
    assert!(
        num("speed_vs_truth_worst") < 1e-9 && num("speeds_compared") > 500.0,
        "{out}"
    );
}

/// AirSim's segmentation colours of ids 0 (the sky), 1 (the ground) and
/// the blocks' 10–21.
fn palette_of(id: usize) -> [u8; 3] {
    mavsitl::render::palette::PALETTE[id]
}

#[test]
fn hello_drones_images_and_a_lidar_come_through_airsims_client() {
    let tmp = tempfile::tempdir().expect("tmp");
    let settings = tmp.path().join("settings.json");
    std::fs::write(
        &settings,
        r#"{"SettingsVersion": 1.2, "SimMode": "Multirotor",
            "Vehicles": {"Drone1": {"VehicleType": "SimpleFlight",
              "Sensors": {"Lidar1": {"SensorType": 6, "Enabled": true, "PointsPerSecond": 20000}},
              "Cameras": {"front_left": {"CaptureSettings": [
                 {"ImageType": 0, "Width": 320, "Height": 240, "FOV_Degrees": 90}]}}}},
            "Recording": {"RecordInterval": 0.1, "Cameras": [
               {"CameraName": "front_left", "ImageType": 0},
               {"CameraName": "front_right", "ImageType": 0},
               {"CameraName": "front_left", "ImageType": 1}]}}"#,
    )
    .expect("settings");
    let record = tmp.path().join("rec");
    let s = server(&[
        "--clock-speed",
        "10",
        "--settings",
        settings.to_str().expect("utf8"),
        "--record",
        record.to_str().expect("utf8"),
    ]);
    let out_dir = tmp.path().join("images");
    std::fs::create_dir_all(&out_dir).expect("dir");
    let o = Command::new(python())
        .arg(root().join("tests/python/airsim_vision.py"))
        .arg(s.port.to_string())
        .arg(&out_dir)
        .output()
        .expect("python");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "client failed: {}\n{text}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out: serde_json::Value =
        serde_json::from_str(text.lines().last().unwrap_or_default()).expect("json");
    // hello_drone's four: DepthVis PNG of camera 0 (front_center, AirSim's
    // 256 × 144), camera 1's perspective depth as floats, its scene as a
    // PNG and as raw bytes.
    let hello = out["hello"].as_array().expect("hello");
    assert_eq!(hello.len(), 4);
    let row = |i: usize| -> Vec<i64> {
        hello[i].as_array().expect("row")[..5]
            .iter()
            .map(|v| v.as_i64().expect("number"))
            .collect()
    };
    assert_eq!(row(0)[..3], [3, 256, 144]);
    assert_eq!(row(1), [2, 256, 144, 0, 256 * 144]);
    assert_eq!(row(2)[..3], [0, 256, 144]);
    assert_eq!(row(3), [0, 256, 144, 256 * 144 * 3, 0]);
    assert_eq!(out["png_shape"], serde_json::json!([144, 256, 3]));
    assert_eq!(out["raw_equals_png"], true);
    // Files as the script writes them: PNGs, and a PFM of 4 bytes a pixel.
    let saved = out["saved"].as_array().expect("saved");
    assert!(saved[1].as_u64().expect("size") > 256 * 144 * 4);
    assert!(saved.iter().all(|s| s.as_u64().expect("size") > 100));
    // From 10 m up looking level, the lower half sees the ground.
    let share = out["depth_finite_share"].as_f64().expect("share");
    assert!((0.4..=0.95).contains(&share), "{share}");
    // The collection's three files: the left camera's 320 × 240 scene and
    // segmentation PNGs and its depth as a PFM of 4 bytes a pixel.
    let files: Vec<u64> = out["collection_files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| f.as_u64().expect("size"))
        .collect();
    assert!(files[1] > 320 * 240 * 4, "{files:?}");
    assert!(files[0] > 1000 && files[2] > 100, "{files:?}");
    // One instant for the pair, on the IMU's clock.
    let stamps = out["stamps"].as_array().expect("stamps");
    let first = stamps[0].as_i64().expect("stamp");
    assert!(
        (0..5_000_000).contains(&first),
        "{first} ns after the IMU's"
    );
    assert!(stamps.iter().all(|s| s.as_i64() == Some(first)));
    // The stereo pair 0.12 m apart; the settings' field of view.
    let gap = out["camera_gap"].as_f64().expect("gap");
    assert!((gap - 0.12).abs() < 1e-6, "{gap}");
    assert_eq!(out["fov"], 90.0);
    // Segmentation colours are AirSim's palette's: sky, ground, blocks.
    let known: Vec<[u8; 3]> = [0, 1].into_iter().chain(10..22).map(palette_of).collect();
    let colours = out["seg_colours"].as_array().expect("colours");
    assert!(colours.len() >= 2);
    for c in colours {
        let c: Vec<u8> = c
            .as_array()
            .expect("rgb")
            .iter()
            .map(|x| x.as_u64().expect("byte") as u8)
            .collect();
        assert!(known.contains(&[c[0], c[1], c[2]]), "{c:?}");
    }
    let objects = out["objects"].as_array().expect("objects");
    assert_eq!(objects.len(), 4, "{objects:?}");
    assert_eq!(out["ball_id"], 10);
    // The LiDAR: points since the start (at most a second's), one id each.
    let n = out["lidar_points"].as_u64().expect("points");
    assert!((1_000..=20_000).contains(&n), "{n}");
    assert_eq!(out["lidar_segmentation"].as_u64(), Some(n));
    let e = out["lidar_error"].as_str().expect("lidar error");
    assert!(
        e.contains("No lidar with name NoSuchLidar exist on vehicle"),
        "{e}"
    );
    let e = out["camera_error"].as_str().expect("camera error");
    assert!(e.contains("'nowhere' is not available"), "{e}");
    stop(s);
    euroc_recording_opens(&record);
}

/// Stops a server as Ctrl-C does, and waits for it to close its recording.
fn stop(server: Server) {
    let child = server.into_child();
    // SAFETY: kill(2) on our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let o = child.wait_with_output().expect("wait");
    assert_eq!(o.status.code(), Some(130));
}

/// The recording of the flight above, opened as a EuRoC-style data set by
/// OpenCV, NumPy and PyYAML (tests/python/euroc_check.py).
fn euroc_recording_opens(dir: &Path) {
    let o = Command::new(python())
        .arg(root().join("tests/python/euroc_check.py"))
        .arg(dir)
        .output()
        .expect("python");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "the data set did not open: {}\n{text}",
        String::from_utf8_lossy(&o.stderr)
    );
    let d: serde_json::Value = serde_json::from_str(text.trim()).expect("json");
    assert!(d["imu_rows"].as_u64().expect("imu") > 100, "{d}");
    assert_eq!(d["imu_identity"], true);
    // The settings' stereo pair (cam0 front_left at 320 × 240, cam1
    // front_right at AirSim's 256 × 144) and front_left's depth, 10 frames
    // a second, each frame at an IMU sample's time.
    let cams = d["cameras"].as_object().expect("cameras");
    let names: Vec<&String> = cams.keys().collect();
    assert_eq!(names, ["cam0", "cam1", "depth0", "depth1"], "{d}");
    for (name, c) in cams {
        assert!(c["frames"].as_u64().expect("frames") >= 10, "{name}: {c}");
        assert_eq!(c["on_imu_clock"], true, "{name}");
        assert_eq!(c["rigid"], true, "{name}");
        assert!(
            (c["rate_hz"].as_f64().expect("rate") - 10.0).abs() < 1e-9,
            "{name}: {c}"
        );
    }
    assert_eq!(cams["cam0"]["shapes"], serde_json::json!([[240, 320, 3]]));
    assert_eq!(cams["cam0"]["dtypes"], serde_json::json!(["uint8"]));
    assert_eq!(cams["cam1"]["shapes"], serde_json::json!([[144, 256, 3]]));
    assert_eq!(cams["depth0"]["shapes"], serde_json::json!([[240, 320]]));
    assert_eq!(cams["depth0"]["dtypes"], serde_json::json!(["uint16"]));
    let intrinsics: Vec<f64> = cams["cam0"]["intrinsics"]
        .as_array()
        .expect("intrinsics")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect();
    assert_eq!(intrinsics, [160.0, 160.0, 159.5, 119.5]);
    // front_left 0.06 m left of the centre, front_right 0.06 m right.
    let y = |c: &str| cams[c]["t"][1].as_f64().expect("t");
    assert!((y("cam0") + 0.06).abs() < 1e-9 && (y("cam1") - 0.06).abs() < 1e-9);
    let k = &d["kalibr"];
    assert_eq!(k["chain"], serde_json::json!(["cam0", "cam1"]));
    assert_eq!(k["T_cam_imu_inverts_T_BS"], serde_json::json!([true, true]));
    let baseline = k["baselines"][0].as_f64().expect("baseline");
    assert!((baseline - 0.12).abs() < 1e-9, "{baseline}");
    assert_eq!(
        k["imu_keys"],
        serde_json::json!([
            "accelerometer_noise_density",
            "accelerometer_random_walk",
            "gyroscope_noise_density",
            "gyroscope_random_walk",
            "rostopic",
            "update_rate"
        ])
    );
    // The LiDAR: AirSim's 10 turns a second, 16 lasers, a PCD per turn.
    let l = &d["lidars"]["lidar0"];
    assert!(l["sweeps"].as_u64().expect("sweeps") >= 10, "{l}");
    assert_eq!(l["counts_match"], true);
    assert_eq!(l["rings"], 16);
    assert!(l["t_max_s"].as_f64().expect("t") < 0.1, "{l}");
    assert_eq!(l["fields"], serde_json::json!(["x y z t ring label"]));
}
