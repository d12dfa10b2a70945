//! Hostile and clumsy input on the command line and in files: every number
//! that becomes a time or a home is checked against one named range and
//! refused with exit 2 and one line naming the flag, file or key and the
//! range — never a panic (exit 101), never a run of zero seconds.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn mavsitl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mavsitl"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("PX4_HOME_LAT")
        .env_remove("PX4_HOME_LON")
        .env_remove("PX4_HOME_ALT")
        .env_remove("PX4_BUILD_DIR")
        .env_remove("ARDUPILOT_HOME")
        .output()
        .expect("run mavsitl")
}

/// Asserts `args` is refused with exit 2, its first line naming `names` and
/// saying `range`.
fn refused(args: &[&str], names: &str, range: &str) {
    let out = mavsitl(args);
    let err = String::from_utf8_lossy(&out.stderr);
    let first = err.lines().next().unwrap_or("");
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(
        first.contains(names) && first.contains(range) && !err.contains("panicked"),
        "{args:?}: {err}"
    );
}

fn write(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, body).expect("write");
    p
}

#[test]
fn times_and_speed_ups_out_of_range_are_refused_not_panicked_on() {
    let secs = "give seconds from 0.001 to 1e7";
    let wait = "give seconds from 0.1 to 86400";
    let factor = "give a factor from 0.001 to 10000";
    for v in ["inf", "nan", "0", "-5", "1e300"] {
        let flag = format!("--timeout={v}");
        refused(&["fly", &flag], &format!("'{v}'"), secs);
        refused(
            &["compare", "missions/quad_square.plan", "--out", "x", &flag],
            &format!("'{v}'"),
            secs,
        );
        let d = format!("--duration={v}");
        for sub in ["serve", "px4", "ardupilot", "airsim"] {
            refused(&[sub, &d], "--duration", secs);
        }
        refused(
            &["px4", &format!("--px4-timeout={v}")],
            "--px4-timeout",
            wait,
        );
        refused(&["ardupilot", &flag], "--timeout", wait);
        refused(
            &["px4", &format!("--ready-timeout={v}")],
            "--ready-timeout",
            secs,
        );
    }
    for v in ["1e-300", "0", "nan", "inf", "-1", "1e5"] {
        let s = format!("--speedup={v}");
        refused(&["serve", &s], "--speedup", factor);
        refused(&["fly", "--gcs", &s], "--speedup", factor);
        refused(&["px4", &s], "--speedup", factor);
        refused(&["ardupilot", &s], "--speedup", factor);
        refused(
            &["airsim", &format!("--clock-speed={v}")],
            "--clock-speed",
            factor,
        );
    }
    // The edges are accepted: a flight limited to 1 ms ends at once, on time.
    let out = mavsitl(&["fly", "--timeout", "0.001"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let tmp = tempfile::tempdir().expect("tmp");
    for clock in ["1e300", "1e-25", "0"] {
        let s = write(
            tmp.path(),
            "settings.json",
            &format!(
                r#"{{"SettingsVersion": 1.2, "SimMode": "Multirotor", "ClockSpeed": {clock}}}"#
            ),
        );
        refused(
            &["airsim", "--settings", s.to_str().expect("utf8")],
            "settings.json: ClockSpeed",
            factor,
        );
    }
}

/// One range of home altitudes, −500..=9000 m, for a plan's planned home, a
/// WPL file's home line, a scenario's home and `--home`. A 60–100 km home
/// used to reach the rotors' allocation with no air and panic there.
#[test]
fn one_home_altitude_range_everywhere() {
    let tmp = tempfile::tempdir().expect("tmp");
    let range = "outside -500..=9000 m";
    let mut plan: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("missions/quad_square.plan"),
        )
        .expect("plan"),
    )
    .expect("json");
    for alt in [60_000.0, 100_000.0, 9_001.0, -600.0] {
        plan["mission"]["plannedHomePosition"][2] = serde_json::json!(alt);
        let p = write(tmp.path(), "high.plan", &plan.to_string());
        refused(
            &["fly", p.to_str().expect("utf8")],
            "high.plan: planned home: home altitude",
            range,
        );
        let wpl = write(
            tmp.path(),
            "high.waypoints",
            &format!(
                "QGC WPL 110\n0\t1\t0\t16\t0\t0\t0\t0\t47.39\t8.54\t{alt}\t1\n\
                 1\t0\t3\t16\t0\t0\t0\t0\t47.3901\t8.54\t20\t1\n"
            ),
        );
        refused(
            &["fly", wpl.to_str().expect("utf8")],
            "high.waypoints: planned home: home altitude",
            range,
        );
        let sc = write(
            tmp.path(),
            "high.json",
            &format!(
                r#"{{"home":{{"lat_deg":47.39,"lon_deg":8.54,"alt_m":{alt}}},"vehicles":[{{"kind":"multirotor"}}]}}"#
            ),
        );
        refused(
            &["fly", "--scenario", sc.to_str().expect("utf8")],
            "home.alt_m",
            range,
        );
        refused(
            &["fly", &format!("--home=47.39,8.54,{alt}")],
            "--home",
            range,
        );
    }
    // The top of the range is accepted and runs without a panic (the quad's
    // rotors cannot lift it in air of half the density: the mission times
    // out); 2 000 m flies.
    plan["mission"]["plannedHomePosition"][2] = serde_json::json!(9_000.0);
    let p = write(tmp.path(), "top.plan", &plan.to_string());
    let out = mavsitl(&["fly", p.to_str().expect("utf8"), "--timeout", "60"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.code() == Some(1) && text.contains("mission not completed"),
        "{text}"
    );
    plan["mission"]["plannedHomePosition"][2] = serde_json::json!(2_000.0);
    let p = write(tmp.path(), "high_field.plan", &plan.to_string());
    let out = mavsitl(&["fly", p.to_str().expect("utf8")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// Fleet vehicle names become recording folders: one path component, not
/// empty, not one of the run's own files. Instances stop at 254 (system id
/// 255) for the last vehicle of a fleet.
#[test]
fn fleet_names_and_instances_stay_in_their_ranges() {
    let tmp = tempfile::tempdir().expect("tmp");
    let rec = tmp.path().join("rec");
    for (name, says) in [
        ("../../x", "cannot name a recording folder"),
        ("/abs", "cannot name a recording folder"),
        ("", "a vehicle needs a name"),
        ("..", "cannot name a recording folder"),
        ("fault_events.csv", "is a file of the fleet's own recording"),
    ] {
        let sc = write(
            tmp.path(),
            "fleet.json",
            &format!(
                r#"{{"vehicles":[{{"name":"{name}","kind":"multirotor"}},{{"name":"q2","kind":"multirotor"}}]}}"#
            ),
        );
        refused(
            &[
                "fly",
                "--scenario",
                sc.to_str().expect("utf8"),
                "--record",
                rec.to_str().expect("utf8"),
            ],
            "fleet.json: vehicles[0].name",
            says,
        );
    }
    assert!(!tmp.path().join("x").exists() && !rec.exists());
    let ids = "instances go from 0 to 254 (system ids 1 to 255)";
    refused(
        &["serve", "--count", "2", "--instance", "254"],
        "--instance 254 with --count 2",
        ids,
    );
    refused(
        &["serve", "--count", "3", "--instance", "254"],
        "system id 257",
        ids,
    );
    refused(&["serve", "--instance", "255"], "--instance 255", ids);
    refused(
        &["px4", "--count", "3", "--instance", "253"],
        "--instance 253",
        ids,
    );
}

/// QGroundControl writes `null` (NaN) for a parameter it leaves alone; a
/// DO_JUMP's repeat count must be a number, so NaN is refused — it used to
/// be read as 0, the loop skipped and the mission reported complete.
#[test]
fn a_jump_without_a_repeat_count_is_refused() {
    let tmp = tempfile::tempdir().expect("tmp");
    let mut plan: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("missions/quad_square.plan"),
        )
        .expect("plan"),
    )
    .expect("json");
    let jump = serde_json::json!({
        "autoContinue": true, "command": 177, "doJumpId": 9, "frame": 2,
        "params": [2, null, 0, 0, 0, 0, 0], "type": "SimpleItem"
    });
    if let Some(items) = plan["mission"]["items"].as_array_mut() {
        items.insert(4, jump);
    }
    let p = write(tmp.path(), "jump.plan", &plan.to_string());
    refused(
        &["fly", p.to_str().expect("utf8")],
        "jump.plan: mission item 4",
        "jump repeat count NaN is not a whole number from -1 (for ever) to 32767",
    );
}

/// A fault aimed at nothing — a rotor the vehicle lacks, a thruster on a
/// quad, a rotor on a boat, an item past the mission's end — is refused
/// naming what the vehicle or mission has; it used to log as started, do
/// nothing, and let the mission "complete".
#[test]
fn faults_aimed_at_nothing_are_refused() {
    let hint = "--fault KIND@START";
    for (args, says) in [
        (
            vec!["fly", "--fault", "motor_failure@10s:motor=7"],
            "--fault motor_failure: motor: 7 is not a rotor of 'quad': it has 4, motors 0..=3",
        ),
        (
            vec!["fly", "--fault", "thruster_failure@10s:thruster=0"],
            "'quad' is a multirotor: it has rotors (motor_failure), not thrusters",
        ),
        (
            vec![
                "fly",
                "missions/boat_box.plan",
                "--fault",
                "motor_failure@10s:motor=0",
            ],
            "'boat' is a boat: it has thrusters (thruster_failure), not rotors",
        ),
        (
            vec!["fly", "--fault", "gps_loss@item99"],
            "--fault gps_loss: at_item: the mission has no item 99: its items are 0..=5",
        ),
    ] {
        let out = mavsitl(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says) && err.contains(hint), "{args:?}: {err}");
    }
    // What the vehicle has is accepted: rotor 3, the mission's last item.
    for fault in ["motor_failure@200s:motor=3", "gps_loss@item5"] {
        let out = mavsitl(&["fly", "--fault", fault, "--timeout", "1"]);
        assert_ne!(out.status.code(), Some(2), "{fault}: {out:?}");
    }
}

/// `mavsitl test` refuses before anything flies: a report into a missing
/// folder, a case whose mission file is not there (was a FAIL after the
/// run), a --filter matching no case (was exit 0 with nothing run).
#[test]
fn a_suite_run_that_cannot_succeed_is_refused_up_front() {
    let tmp = tempfile::tempdir().expect("tmp");
    let junit = tmp.path().join("missing/report.xml");
    refused(
        &[
            "test",
            "suites/simpleflight.toml",
            "--junit",
            junit.to_str().expect("utf8"),
        ],
        "--junit",
        "missing/report.xml: no folder",
    );
    refused(
        &[
            "test",
            "suites/simpleflight.toml",
            "--filter",
            "no_such_case",
        ],
        "--filter 'no_such_case' matches no case",
        "simpleflight/quad_square, simpleflight/quad_survey",
    );
    let suite = write(
        tmp.path(),
        "broken.toml",
        "[[case]]\nname = \"gone\"\nvehicle = \"quad\"\nmission = \"gone.plan\"\n[case.expect]\nmission_completed = true\n",
    );
    refused(
        &["test", suite.to_str().expect("utf8")],
        "suite broken, case 'gone': mission",
        "gone.plan: no such file",
    );
    assert!(!junit.exists());
}

/// A recording keeps its mission: moved elsewhere, `plot` still finds it
/// (meta.json named an absolute path that the move broke).
#[test]
fn a_moved_recording_still_plots() {
    let tmp = tempfile::tempdir().expect("tmp");
    let plan = tmp.path().join("square.plan");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("missions/quad_square.plan"),
        &plan,
    )
    .expect("copy");
    let rec = tmp.path().join("rec");
    let out = mavsitl(&[
        "fly",
        plan.to_str().expect("utf8"),
        "--record",
        rec.to_str().expect("utf8"),
    ]);
    assert!(out.status.success(), "{out:?}");
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(rec.join("meta.json")).expect("meta"))
            .expect("json");
    assert_eq!(meta["mission"], "mission.plan");
    let moved = tmp.path().join("elsewhere");
    std::fs::rename(&rec, &moved).expect("move");
    std::fs::remove_file(&plan).expect("rm");
    let out = mavsitl(&["plot", moved.to_str().expect("utf8")]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("xtrack_rms"), "{text}");
    let metrics: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(moved.join("metrics.json")).expect("metrics"),
    )
    .expect("json");
    let legs = metrics["flights"][0]["metrics"]["legs"]
        .as_array()
        .map_or(0, Vec::len);
    assert!(legs >= 4, "the route's legs were measured: {legs}");
}

/// SIGTERM while `ardupilot` waits for its firmware's packets: exit 130 and
/// the interrupted summary every time — the signal interrupts the blocking
/// receive (EINTR), which used to end the run with exit 1 and "Interrupted
/// system call (os error 4)" about one time in two.
#[test]
fn sigterm_while_waiting_for_ardupilot_is_an_interruption_every_time() {
    for k in 0..6u8 {
        let instance = (70 + k).to_string();
        let child = Command::new(env!("CARGO_BIN_EXE_mavsitl"))
            .args(["ardupilot", "--instance", &instance])
            .env_remove("ARDUPILOT_HOME")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn");
        std::thread::sleep(std::time::Duration::from_millis(300 + 97 * u64::from(k)));
        let status = Command::new("kill")
            .arg("-TERM")
            .arg(child.id().to_string())
            .status()
            .expect("kill");
        assert!(status.success());
        let out = child.wait_with_output().expect("wait");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(130), "run {k}: {err}");
        assert!(!err.contains("os error 4"), "run {k}: {err}");
    }
}

/// `compare` with a firmware that is not there refuses before flying (exit
/// 2); a flight that fails is named with its cause under the table, and
/// the exit code says so (it was 0, with a table of zeros).
#[test]
fn compare_says_when_a_controller_did_not_fly() {
    let tmp = tempfile::tempdir().expect("tmp");
    let out = tmp.path().join("cmp");
    let o = out.to_str().expect("utf8");
    refused(
        &[
            "compare",
            "missions/quad_square.plan",
            "--with",
            "simpleflight,px4",
            "--px4-build",
            "/nonexistent",
            "--out",
            o,
        ],
        "--px4-build /nonexistent",
        "no PX4 SITL build there",
    );
    refused(
        &[
            "compare",
            "missions/quad_square.plan",
            "--with",
            "ardupilot",
            "--ardupilot",
            "/nonexistent",
            "--out",
            o,
        ],
        "--ardupilot /nonexistent",
        "neither a checkout with build/sitl/bin/arducopter nor a SITL binary",
    );
    let run = mavsitl(&[
        "compare",
        "missions/quad_square.plan",
        "--with",
        "simpleflight,ardupilot",
        "--ardupilot",
        "/bin/true",
        "--out",
        o,
    ]);
    let text = String::from_utf8_lossy(&run.stdout);
    assert_eq!(run.status.code(), Some(1), "{text}");
    assert!(
        text.contains("failed              ardupilot seed 0: exit 1: error: ArduPilot exited"),
        "{text}"
    );
    assert!(!text.contains("failed              simpleflight"), "{text}");
}

/// Errors name the file and key and say the allowed range in words, not as
/// a Debug struct or serde's internals.
#[test]
fn range_errors_say_the_range_in_words() {
    let tmp = tempfile::tempdir().expect("tmp");
    let date = write(
        tmp.path(),
        "old.json",
        r#"{"date":"1900-01-01","vehicles":[{"kind":"multirotor"}]}"#,
    );
    refused(
        &["fly", "--scenario", date.to_str().expect("utf8")],
        "old.json",
        "date outside of model validity range (2020-01-01 to 2029-12-31); asked for 1900-01-01 at 488 m",
    );
    let suite = write(
        tmp.path(),
        "seeds.toml",
        "[defaults]\nseeds = [-1]\n[[case]]\nname = \"a\"\nvehicle = \"quad\"\nmission = \"a.plan\"\n",
    );
    refused(
        &["test", suite.to_str().expect("utf8")],
        "seeds.toml:2",
        "seeds = [-1]: give a whole number from 0, a list of them, or \"A..B\"",
    );
    let settings = write(
        tmp.path(),
        "settings.json",
        r#"{"SettingsVersion":1.2,"SimMode":"Multirotor","Vehicles":{"D":{"VehicleType":"SimpleFlight","Sensors":{"Imu":{"SensorType":2,"Enabled":true,"UpdateFrequency":0}}}}}"#,
    );
    refused(
        &["airsim", "--settings", settings.to_str().expect("utf8")],
        "settings.json: Sensors.Imu.UpdateFrequency 0",
        "is outside 1..=4000 Hz",
    );
}

/// A hostile 1e300 is echoed as written, on one short line, wherever it is
/// refused (it printed as 300 digits), and a start 1e300 m from home is
/// refused naming its key (it reached the magnetic model as NaN).
#[test]
fn huge_values_are_echoed_short() {
    let tmp = tempfile::tempdir().expect("tmp");
    let cases = [
        (
            r#""duration_s":1e300"#,
            "",
            "duration_s: 1e300 is not within (0, 1e7] s",
        ),
        (
            r#""proximity_m":1e300"#,
            "",
            "proximity_m: 1e300 is not within (0, 10000] m",
        ),
        (
            r#""home":{"lat_deg":1e300,"lon_deg":0,"alt_m":0}"#,
            "",
            "home.lat_deg: 1e300 is outside -90..=90",
        ),
        (
            "",
            r#","collision_radius_m":1e300"#,
            "vehicles[0].collision_radius_m: 1e300 is not within (0, 100] m",
        ),
        (
            "",
            r#","initial":{"east_m":-1e300}"#,
            "vehicles[0].initial.east_m: -1e300 is outside -100000..100000",
        ),
    ];
    for (i, (top, vehicle, says)) in cases.into_iter().enumerate() {
        let sep = if top.is_empty() { "" } else { "," };
        let body = format!(
            r#"{{"date":"2026-01-01"{sep}{top},"vehicles":[{{"kind":"multirotor","airframe":"generic_quad"{vehicle}}}]}}"#
        );
        let p = write(tmp.path(), &format!("s{i}.json"), &body);
        let out = mavsitl(&["sim", p.to_str().expect("utf8"), "--duration", "1"]);
        let err = String::from_utf8_lossy(&out.stderr);
        let first = err.lines().next().unwrap_or("");
        assert_eq!(out.status.code(), Some(2), "{body}: {err}");
        assert!(first.contains(says) && first.len() < 200, "{body}: {first}");
    }
    refused(
        &["fly", "--home", "1e300,8,100"],
        "--home",
        "latitude 1e300 is outside -90..=90",
    );
}

/// A world of thousands of vehicles takes milliseconds a tick: SIGTERM is
/// looked at after every tick, so it ends the run within a moment, not
/// after the next thousand ticks (at N = 10 000 that was minutes).
#[test]
fn sigterm_stops_a_crowded_world_at_once() {
    use std::time::{Duration, Instant};
    let tmp = tempfile::tempdir().expect("tmp");
    let vehicles: Vec<String> = (0..5000)
        .map(|i| {
            format!(
                r#"{{"kind":"multirotor","airframe":"generic_quad","name":"q{i}","initial":{{"east_m":{}}}}}"#,
                5 * i
            )
        })
        .collect();
    let body = format!(
        r#"{{"date":"2026-01-01","vehicles":[{}]}}"#,
        vehicles.join(",")
    );
    let p = write(tmp.path(), "crowd.json", &body);
    let mut child = Command::new(env!("CARGO_BIN_EXE_mavsitl"))
        .args(["sim", p.to_str().expect("utf8"), "--duration", "600"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    std::thread::sleep(Duration::from_secs(3));
    let status = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status()
        .expect("kill");
    assert!(status.success());
    let asked = Instant::now();
    let code = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s.code();
        }
        if asked.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("still running 30 s after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = asked.elapsed();
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        std::io::Read::read_to_string(&mut e, &mut err).expect("stderr");
    }
    assert_eq!(code, Some(130), "{err}");
    assert!(err.contains("interrupted at"), "{err}");
    // One tick of 5000 quads is ~10 ms here; 1024 of them were ~10 s.
    assert!(took < Duration::from_secs(3), "{took:?}: {err}");
}
