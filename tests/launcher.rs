//! `mavsitl px4 --px4-build` and `mavsitl ardupilot --ardupilot` start the
//! firmware themselves. CI has no firmware, so stand-ins in `tests/standins/`
//! behave as PX4 and ArduPilot do at start-up per their sources (arguments,
//! working directory, console, connecting with retries, waiting on TCP 5760,
//! the lockstep answers) and exit, crash or ignore SIGTERM on cue.

use std::net::{TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

fn mavsitl() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mavsitl"));
    c.env_remove("PX4_BUILD_DIR")
        .env_remove("ARDUPILOT_HOME")
        .env_remove("PX4_SIM_SPEED_FACTOR")
        .env_remove("RUST_LOG")
        .env_remove("STANDIN_CUE");
    c
}

/// `mavsitl px4 --instance N --px4-build <the PX4 stand-in>`.
fn px4(instance: &str) -> Command {
    let mut c = mavsitl();
    c.args(["px4", "--instance", instance])
        .arg("--px4-build")
        .arg(repo("tests/standins/px4_sitl_default"));
    c
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The working directory `mavsitl` says it kept.
fn kept_workdir(stderr: &str) -> PathBuf {
    let line = stderr
        .lines()
        .find_map(|l| l.split_once("working directory kept: "))
        .map(|(_, p)| p.trim().to_string())
        .unwrap_or_else(|| panic!("no kept working directory in:\n{stderr}"));
    PathBuf::from(line)
}

fn report(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("standin.json")).expect("standin.json");
    serde_json::from_str(&text).expect("json")
}

fn alive(pid: i64) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .unwrap_or_default()
            .contains(") Z ")
}

#[test]
fn px4_is_started_with_its_airframe_ports_and_home_and_stopped_with_sigterm() {
    let tmp = tempfile::tempdir().expect("tmp");
    let mark = tmp.path().join("mark");
    let rec = tmp.path().join("rec");
    // A user's parameters, as QGroundControl saves them, over the airframe's.
    let params = tmp.path().join("tuning.params");
    std::fs::write(&params, "# Vehicle-Id\tComponent-Id\tName\tValue\tType\n1\t1\tMPC_THR_HOVER\t0.5\t9\n1\t1\tMPC_XY_VEL_MAX\t3\t9\n")
        .expect("params");
    let out = px4("51")
        .args(["--duration", "4", "--keep-workdir"])
        .args(["--home", "47.1,8.2,450"])
        .arg("--params")
        .arg(&params)
        .arg("--record")
        .arg(&rec)
        .env("STANDIN_MARK", &mark)
        .output()
        .expect("run");
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let dir = kept_workdir(&stderr);
    let r = report(&dir);
    std::fs::remove_dir_all(&dir).ok();
    // As sitl_multiple_run.sh starts it, in a fresh directory.
    let build = repo("tests/standins/px4_sitl_default/etc");
    assert_eq!(
        r["args"],
        serde_json::json!(["-i", "51", "-d", build.to_str().expect("utf8")])
    );
    assert_eq!(r["found_in_cwd"], serde_json::json!([]));
    let env = &r["env"];
    assert_eq!(env["PX4_SYS_AUTOSTART"], "10016");
    // The user's file overrides the airframe's hover thrust (0.59).
    assert_eq!(env["PX4_PARAM_MPC_THR_HOVER"], "0.5");
    assert_eq!(env["PX4_PARAM_MPC_XY_VEL_MAX"], "3");
    assert_eq!(env["PX4_PARAM_CA_ROTOR2_KM"], "-0.0133");
    assert_eq!(env["PX4_HOME_LAT"], "47.1");
    assert_eq!(env["PX4_HOME_ALT"], "450");
    assert!(env.get("PX4_SIM_SPEED_FACTOR").is_none());
    // Lockstep ran on the stand-in's answers, then PX4 was asked to stop.
    assert!(stdout.contains("sim time            4.0 s"), "{stdout}");
    let pid = r["pid"].as_i64().expect("pid");
    let marks = std::fs::read_to_string(&mark).expect("the stand-in got SIGTERM");
    assert_eq!(marks.trim(), format!("SIGTERM {pid}"));
    assert!(!alive(pid));
    // Its console is in the recording.
    let log = std::fs::read_to_string(rec.join("firmware.log")).expect("firmware.log");
    assert!(
        log.contains("Simulator connected on TCP port 4611"),
        "{log}"
    );
}

/// Each boat airframe starts PX4 with its own parameter file; a boat from an
/// airframe file takes the shipped file of its layout (a rudder boat the
/// Ackermann rover's, not the twin's or a quad's).
#[test]
fn px4_gets_the_parameter_file_of_the_boat_it_flies() {
    let tmp = tempfile::tempdir().expect("tmp");
    let rudder = std::fs::read_to_string(repo("crates/sim/src/physics/airframes/usv_rudder.json"))
        .expect("usv_rudder.json");
    std::fs::write(tmp.path().join("my_rudder.json"), rudder).expect("airframe");
    for (i, (airframe, autostart, key, value)) in [
        ("usv_twin", "50000", "PX4_PARAM_RD_WHEEL_TRACK", "0.4"),
        ("otter_usv", "50000", "PX4_PARAM_RD_WHEEL_TRACK", "0.79"),
        ("usv_rudder", "51000", "PX4_PARAM_RA_WHEEL_BASE", "0.3"),
        ("my_rudder.json", "51000", "PX4_PARAM_RA_WHEEL_BASE", "0.3"),
    ]
    .into_iter()
    .enumerate()
    {
        let scen = tmp.path().join(format!("boat{i}.json"));
        std::fs::write(
            &scen,
            format!(r#"{{"vehicles":[{{"kind":"boat","airframe":"{airframe}"}}]}}"#),
        )
        .expect("scenario");
        let out = px4(&(70 + i).to_string())
            .args(["--duration", "1", "--keep-workdir", "--scenario"])
            .arg(&scen)
            .output()
            .expect("run");
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{airframe}: {stdout}\n{stderr}");
        let dir = kept_workdir(&stderr);
        let env = report(&dir)["env"].clone();
        std::fs::remove_dir_all(&dir).ok();
        assert_eq!(env["PX4_SYS_AUTOSTART"], autostart, "{airframe}");
        assert_eq!(env[key], value, "{airframe}");
    }
}

#[test]
fn a_crashing_px4_ends_the_run_at_once_quoting_its_console() {
    let tmp = tempfile::tempdir().expect("tmp");
    let rec = tmp.path().join("rec");
    let t = Instant::now();
    let out = px4("52")
        .args(["--duration", "600"])
        .arg("--record")
        .arg(&rec)
        .env("STANDIN_CUE", "crash_after_s=3")
        .output()
        .expect("run");
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    // 3 s of sim time at PX4's pace plus the 2 s allowed to notice; far
    // from the 600 s asked for or a 10 s silence timeout.
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    assert!(
        stderr.contains("PX4 was killed by signal 11")
            && stderr.contains("| ERROR [lockstep_scheduler] invalid time step"),
        "{stderr}"
    );
    // A failed firmware's working directory is kept for the post-mortem.
    std::fs::remove_dir_all(kept_workdir(&stderr)).ok();
    // The recordings are flushed, ending where PX4 died.
    let gt = std::fs::read_to_string(rec.join("ground_truth.csv")).expect("ground truth");
    let last = gt.lines().last().expect("rows");
    let t_ns: u64 = last
        .split(',')
        .next()
        .and_then(|s| s.parse().ok())
        .expect("time");
    assert!((2_900_000_000..=3_100_000_000).contains(&t_ns), "{last}");
}

#[test]
fn a_px4_that_ignores_sigterm_is_killed_after_the_grace_period() {
    let tmp = tempfile::tempdir().expect("tmp");
    let mark = tmp.path().join("mark");
    let out = px4("53")
        .args(["--duration", "1", "--keep-workdir"])
        .env("STANDIN_CUE", "ignore_sigterm")
        .env("STANDIN_MARK", &mark)
        .output()
        .expect("run");
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let dir = kept_workdir(&stderr);
    let pid = report(&dir)["pid"].as_i64().expect("pid");
    std::fs::remove_dir_all(&dir).ok();
    assert!(std::fs::read_to_string(&mark)
        .expect("SIGTERM first")
        .contains("SIGTERM"));
    assert!(!alive(pid), "PX4 {pid} left running");
}

#[test]
fn bad_firmware_paths_are_refused_before_anything_starts() {
    let out = mavsitl()
        .args([
            "px4",
            "--instance",
            "54",
            "--px4-build",
            "/nonexistent/build",
        ])
        .output()
        .expect("run");
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--px4-build /nonexistent/build: no PX4 SITL build there")
            && stderr.contains("make px4_sitl"),
        "{stderr}"
    );
    let rover = repo("tests/standins/ardupilot/build/sitl/bin/ardurover");
    let out = mavsitl()
        .args(["ardupilot", "--instance", "21", "--vehicle", "quad"])
        .arg("--ardupilot")
        .arg(&rover)
        .output()
        .expect("run");
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("a rover binary, but the simulated vehicle is a quad"),
        "{stderr}"
    );
}

#[test]
fn a_port_in_use_is_named_and_no_firmware_starts() {
    let tmp = tempfile::tempdir().expect("tmp");
    let mark = tmp.path().join("mark");
    // PX4's simulator port, 4560 + 55.
    let _held = TcpListener::bind("127.0.0.1:4615").expect("hold 4560 + 55");
    let out = px4("55")
        .arg("--mission")
        .arg(repo("missions/quad_square.plan"))
        .env("STANDIN_MARK", &mark)
        .output()
        .expect("run");
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot listen on TCP 127.0.0.1:4615: Address already in use")
            && stderr.contains("use --instance N"),
        "{stderr}"
    );
    assert!(!stderr.contains("starting"), "{stderr}");
    assert!(!mark.exists());
    // ArduPilot's JSON port, 9002 + 10 × 24.
    let _held = UdpSocket::bind("127.0.0.1:9242").expect("hold 9002 + 240");
    let out = mavsitl()
        .args(["ardupilot", "--instance", "24"])
        .arg("--ardupilot")
        .arg(repo("tests/standins/ardupilot"))
        .output()
        .expect("run");
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot bind UDP 127.0.0.1:9242: Address already in use")
            && !stderr.contains("starting"),
        "{stderr}"
    );
}

#[test]
fn a_firmware_that_never_becomes_ready_times_out_with_the_reason() {
    let out = px4("56")
        .args(["--ready-timeout", "3"])
        .arg("--mission")
        .arg(repo("missions/quad_square.plan"))
        .output()
        .expect("run");
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(
            "FAILED: PX4 was not ready to fly within --ready-timeout 3 s: no HEARTBEAT from PX4"
        ),
        "{stdout}\n{stderr}"
    );
    assert!(stdout.contains("items reached       0 / 6"), "{stdout}");
}

#[test]
fn ardupilot_is_started_with_its_defaults_and_ours_and_released_by_the_ground_station() {
    let tmp = tempfile::tempdir().expect("tmp");
    let rec = tmp.path().join("rec");
    // A user's parameters, as an ArduPilot .parm, over ours.
    let user = tmp.path().join("slow.parm");
    std::fs::write(
        &user,
        "MOT_THST_HOVER,0.5\nWPNAV_SPEED,250\nSIM_RATE_HZ,400\n",
    )
    .expect("parm");
    let out = mavsitl()
        .args([
            "ardupilot",
            "--instance",
            "22",
            "--ready-timeout",
            "2",
            "--keep-workdir",
            "--frame-rate",
            "1000",
        ])
        .arg("--mission")
        .arg(repo("missions/quad_square.plan"))
        .arg("--ardupilot")
        .arg(repo("tests/standins/ardupilot"))
        .arg("--params")
        .arg(&user)
        .arg("--record")
        .arg(&rec)
        .output()
        .expect("run");
    let (stdout, stderr) = text(&out);
    let dir = kept_workdir(&stderr);
    let r = report(&dir);
    std::fs::remove_dir_all(&dir).ok();
    // It ran only because the ground station connected to TCP 5760 + 220;
    // it says it is a quad but never gets a GPS fix.
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("ArduPilot was not ready to fly within --ready-timeout 2 s: ArduPilot reports no 3-D GPS fix"),
        "{stdout}\n{stderr}"
    );
    assert_eq!(r["vehicle"], "arducopter");
    let args: Vec<&str> = r["args"]
        .as_array()
        .expect("args")
        .iter()
        .filter_map(|a| a.as_str())
        .collect();
    let stock = repo("tests/standins/ardupilot/Tools/autotest/default_params/copter.parm");
    assert_eq!(
        args,
        [
            "-S",
            "--model",
            "JSON:127.0.0.1",
            "--speedup",
            "1000",
            "--home",
            "47.397742,8.545594,488,0",
            "--defaults",
            &format!("{},mavsitl.parm,user.parm", stock.display()),
            "-I22"
        ]
    );
    // Stock defaults first, mavsitl's quad.parm over them (SIM_RATE_HZ at
    // the frame rate asked, not the file's 800), the user's last, but for
    // their SIM_RATE_HZ, which gives way to the frame rate with a warning.
    assert_eq!(r["params"]["FRAME_CLASS"], 1.0);
    assert_eq!(r["params"]["SIM_RATE_HZ"], 1000.0);
    assert!(
        stderr.contains("--params sets SIM_RATE_HZ 400: ArduPilot gets 1000 from --frame-rate"),
        "{stderr}"
    );
    assert_eq!(r["params"]["MOT_THST_HOVER"], 0.5);
    assert_eq!(r["params"]["WPNAV_SPEED"], 250.0);
    assert_eq!(
        r["found_in_cwd"],
        serde_json::json!(["mavsitl.parm", "user.parm"])
    );
    let events = std::fs::read_to_string(rec.join("mission_events.csv")).expect("events");
    assert!(
        events.contains(",connected,,system 1; MAV_TYPE_QUADROTOR"),
        "{events}"
    );
    assert!(std::fs::read_to_string(rec.join("firmware.log"))
        .expect("log")
        .contains("Connection on serial port 5980"));
}

#[test]
fn an_ardupilot_that_exits_mid_run_ends_it_quoting_its_console() {
    let t = Instant::now();
    let out = mavsitl()
        .args(["ardupilot", "--instance", "29", "--vehicle", "boat"])
        .arg("--mission")
        .arg(repo("missions/boat_box.plan"))
        .arg("--ardupilot")
        .arg(repo("tests/standins/ardupilot"))
        .env("STANDIN_CUE", "exit_after_frames=300")
        .output()
        .expect("run");
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    assert!(
        stdout.contains("FAILED: ArduPilot exited with status 1")
            && stdout.contains("| EXCEPTION: stand-in exits on cue"),
        "{stdout}\n{stderr}"
    );
    std::fs::remove_dir_all(kept_workdir(&stderr)).ok();
}

/// Without --record the console is in the working directory: when the
/// firmware fails, the directory stays, and the message names where, so the
/// log it cites is still there to read.
#[test]
fn a_failed_firmware_keeps_its_working_directory_and_says_where() {
    let tmp = tempfile::tempdir().expect("tmp");
    let out = px4("59")
        .args(["--duration", "600"])
        .env("STANDIN_CUE", "crash_after_s=2")
        .env("TMPDIR", tmp.path())
        .output()
        .expect("run");
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    let dir = kept_workdir(&stderr);
    assert!(dir.starts_with(tmp.path()), "{}", dir.display());
    let log = dir.join("firmware.log");
    assert!(
        stderr.contains(&format!(
            "the last lines of its console ({})",
            log.display()
        )),
        "{stderr}"
    );
    let console = std::fs::read_to_string(&log).expect("the cited log is there");
    assert!(console.contains("invalid time step"), "{console}");
    // A run that ends as asked leaves nothing behind.
    let out = px4("59")
        .args(["--duration", "1"])
        .env("TMPDIR", tmp.path())
        .output()
        .expect("run");
    assert!(out.status.success(), "{:?}", text(&out));
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .expect("tmp")
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(left, vec![dir]);
}

/// A `bin/px4` without its execute bit is refused before anything starts,
/// and no scratch directory is left behind.
#[test]
fn a_non_executable_firmware_is_refused_leaving_nothing_behind() {
    use std::os::unix::fs::PermissionsExt as _;
    let tmp = tempfile::tempdir().expect("tmp");
    let build = tmp.path().join("build");
    std::fs::create_dir_all(build.join("bin")).expect("bin");
    std::fs::create_dir_all(build.join("etc/init.d-posix")).expect("etc");
    std::fs::write(build.join("etc/init.d-posix/rcS"), "").expect("rcS");
    let px4 = build.join("bin/px4");
    std::fs::copy(repo("tests/standins/px4_sitl_default/bin/px4"), &px4).expect("px4");
    std::fs::set_permissions(&px4, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let scratch = tmp.path().join("scratch");
    std::fs::create_dir_all(&scratch).expect("scratch");
    let out = mavsitl()
        .args(["px4", "--instance", "60", "--px4-build"])
        .arg(&build)
        .env("TMPDIR", &scratch)
        .output()
        .expect("run");
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("{}: not executable", px4.display()))
            && stderr.contains("chmod +x"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_dir(&scratch).expect("scratch").count(), 0);
}

/// `ardupilot --defaults` files are checked before ArduPilot starts, each
/// named when it is missing.
#[test]
fn ardupilot_defaults_files_are_checked_before_launch() {
    let tmp = tempfile::tempdir().expect("tmp");
    let good = tmp.path().join("good.parm");
    std::fs::write(&good, "WP_SPEED 3\n").expect("parm");
    let missing = tmp.path().join("missing.parm");
    for (given, says) in [
        (
            format!("{},{}", good.display(), missing.display()),
            format!("{}: No such file or directory", missing.display()),
        ),
        (
            format!("{},", good.display()),
            "an empty file name".to_string(),
        ),
        (
            tmp.path().display().to_string(),
            format!("{}: not a file", tmp.path().display()),
        ),
    ] {
        let out = mavsitl()
            .args(["ardupilot", "--instance", "28", "--vehicle", "boat"])
            .arg("--ardupilot")
            .arg(repo("tests/standins/ardupilot"))
            .args(["--defaults", &given])
            .output()
            .expect("run");
        let (_, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(2), "{given}: {stderr}");
        assert!(
            stderr.contains(&format!("--defaults {given}: {says}")) && !stderr.contains("starting"),
            "{stderr}"
        );
    }
}

/// A firmware writing 40 MiB to its console keeps at most two files of
/// 16 MiB on disk, the newest ending with its newest line.
#[test]
fn a_chatty_firmware_log_is_rotated_keeping_its_tail() {
    let tmp = tempfile::tempdir().expect("tmp");
    let rec = tmp.path().join("rec");
    let out = px4("61")
        .args(["--duration", "1"])
        .arg("--record")
        .arg(&rec)
        .env("STANDIN_CUE", "chatty_mb=40")
        .output()
        .expect("run");
    assert!(out.status.success(), "{:?}", text(&out));
    let cap = 16 << 20;
    let newest = std::fs::read_to_string(rec.join("firmware.log")).expect("firmware.log");
    let older = std::fs::metadata(rec.join("firmware.log.1")).expect("firmware.log.1");
    assert!(newest.len() <= cap, "{}", newest.len());
    assert!(
        older.len() as usize <= cap && older.len() as usize > cap - 100,
        "{}",
        older.len()
    );
    // 40 MiB of 64-byte lines: 655 360 of them; the newest file holds the
    // last 8 MiB of them, then PX4's start.
    assert!(
        newest.contains("chatter done after 655360 lines"),
        "{}",
        &newest[newest.len().saturating_sub(500)..]
    );
    assert!(newest.contains("console line 000655360"));
    assert!(newest.contains("Simulator connected on TCP port 4621"));
    assert!(!newest.contains("console line 000000001 "));
    assert!(!rec.join("firmware.log.2").exists());
}

/// A CI job stopped with SIGTERM stops the firmware it started, in order,
/// and exits 130 as on Ctrl-C.
#[test]
fn sigterm_to_mavsitl_stops_the_firmware_and_exits_130() {
    let tmp = tempfile::tempdir().expect("tmp");
    let mark = tmp.path().join("mark");
    let child = px4("57")
        .args(["--speedup", "1", "--keep-workdir"])
        .env("STANDIN_MARK", &mark)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    std::thread::sleep(Duration::from_millis(1500));
    let status = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status()
        .expect("kill");
    assert!(status.success());
    let out = child.wait_with_output().expect("wait");
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(130), "{stdout}\n{stderr}");
    let dir = kept_workdir(&stderr);
    let pid = report(&dir)["pid"].as_i64().expect("pid");
    std::fs::remove_dir_all(&dir).ok();
    let marks = std::fs::read_to_string(&mark).expect("the stand-in got SIGTERM");
    assert_eq!(marks.trim(), format!("SIGTERM {pid}"));
    assert!(!alive(pid));
}

#[test]
fn params_need_a_firmware_mavsitl_starts() {
    let out = mavsitl()
        .args(["px4", "--instance", "58", "--params", "x.params"])
        .output()
        .expect("run");
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--params sets the parameters of a firmware mavsitl starts")
            && stderr.contains("add --px4-build"),
        "{stderr}"
    );
}

#[test]
fn count_starts_one_px4_per_vehicle_of_one_world_and_stops_them_all() {
    let tmp = tempfile::tempdir().expect("tmp");
    let mark = tmp.path().join("mark");
    let rec = tmp.path().join("rec");
    let out = px4("63")
        .args(["--count", "2", "--duration", "3"])
        .arg("--record")
        .arg(&rec)
        .env("STANDIN_MARK", &mark)
        .output()
        .expect("run");
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("2 PX4 instances (63..=64) flying one world"),
        "{stdout}"
    );
    // Each instance on its own simulator port, its console in its
    // vehicle's recording; the world's encounters beside them.
    for (name, port) in [("quad0", 4623), ("quad1", 4624)] {
        let log = std::fs::read_to_string(rec.join(name).join("firmware.log")).expect("log");
        assert!(
            log.contains(&format!("Simulator connected on TCP port {port}")),
            "{name}: {log}"
        );
        let gt = std::fs::read_to_string(rec.join(name).join("ground_truth.csv")).expect("gt");
        assert!(
            gt.lines().count() > 500,
            "{name}: {} rows",
            gt.lines().count()
        );
    }
    let enc = std::fs::read_to_string(rec.join("encounters.csv")).expect("encounters");
    assert!(enc.contains("quad0,quad1,"), "{enc}");
    // Both were asked to stop.
    let marks = std::fs::read_to_string(&mark).expect("marks");
    assert_eq!(
        marks.lines().filter(|l| l.starts_with("SIGTERM")).count(),
        2,
        "{marks}"
    );
    // Again: the two PX4s' answers arrive in another order, the world's
    // recordings are the same to the byte.
    let again = tmp.path().join("again");
    let out = px4("63")
        .args(["--count", "2", "--duration", "3"])
        .arg("--record")
        .arg(&again)
        .output()
        .expect("run");
    assert!(out.status.success(), "{:?}", text(&out));
    for f in [
        "quad0/imu.csv",
        "quad1/ground_truth.csv",
        "quad1/gps.csv",
        "encounters.csv",
    ] {
        let (a, b) = (
            std::fs::read(rec.join(f)).expect(f),
            std::fs::read(again.join(f)).expect(f),
        );
        assert!(!a.is_empty() && a == b, "{f} differs between runs");
    }
}

#[test]
fn count_needs_a_launched_px4() {
    let out = mavsitl()
        .args(["px4", "--count", "2"])
        .output()
        .expect("run");
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--count needs --px4-build"), "{stderr}");
}

#[test]
fn ardupilot_count_starts_one_instance_per_vehicle_each_with_its_ground_station() {
    let tmp = tempfile::tempdir().expect("tmp");
    let mark = tmp.path().join("mark");
    let rec = tmp.path().join("rec");
    let out = mavsitl()
        .args([
            "ardupilot",
            "--vehicle",
            "quad",
            "--count",
            "2",
            "--instance",
            "25",
        ])
        .args(["--ready-timeout", "2"])
        .arg("--mission")
        .arg(repo("missions/quad_square.plan"))
        .arg("--ardupilot")
        .arg(repo("tests/standins/ardupilot"))
        .arg("--record")
        .arg(&rec)
        .env("STANDIN_MARK", &mark)
        .output()
        .expect("run");
    let (stdout, stderr) = text(&out);
    // Each ran only because its own ground station connected (TCP 5760 +
    // 10 N); neither gets a GPS fix from the stand-in, so both flights fail
    // on readiness, each with its own summary.
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("2 ArduPilot instances (25..=26) flying one world"),
        "{stdout}"
    );
    assert_eq!(
        stdout
            .matches("ArduPilot was not ready to fly within --ready-timeout 2 s")
            .count(),
        2,
        "{stdout}\n{stderr}"
    );
    for (name, port) in [("quad0", 6010), ("quad1", 6020)] {
        let log = std::fs::read_to_string(rec.join(name).join("firmware.log")).expect("log");
        assert!(
            log.contains(&format!("Connection on serial port {port}")),
            "{name}: {log}"
        );
        assert!(rec.join(name).join("mission_events.csv").is_file());
    }
    let marks = std::fs::read_to_string(&mark).expect("marks");
    assert_eq!(
        marks.lines().filter(|l| l.starts_with("SIGTERM")).count(),
        2,
        "{marks}"
    );
}

#[test]
fn fly_mixes_simpleflight_and_a_launched_px4_in_one_world() {
    let tmp = tempfile::tempdir().expect("tmp");
    let mark = tmp.path().join("mark");
    let rec = tmp.path().join("rec");
    let scenario = tmp.path().join("mixed.json");
    std::fs::copy(
        repo("missions/quad_square.plan"),
        tmp.path().join("square.plan"),
    )
    .expect("plan");
    std::fs::write(
        &scenario,
        r#"{"vehicles": [
          {"name": "sf", "kind": "multirotor",
           "controller": {"kind": "simpleflight", "mission": "square.plan"}},
          {"name": "px", "kind": "multirotor", "initial": {"north_m": -30},
           "controller": {"kind": "px4", "instance": 65, "mission": "square.plan"}}]}"#,
    )
    .expect("scenario");
    let out = mavsitl()
        .args(["fly", "--scenario"])
        .arg(&scenario)
        .arg("--px4-build")
        .arg(repo("tests/standins/px4_sitl_default"))
        .arg("--record")
        .arg(&rec)
        .env("STANDIN_MARK", &mark)
        .output()
        .expect("run");
    let (stdout, stderr) = text(&out);
    // SimpleFlight flies its square; the PX4 stand-in, which speaks no
    // MAVLink to a ground station, is never ready: its flight fails alone.
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stderr.contains("1 of 2 flights failed: px"), "{stderr}");
    assert!(
        stdout.contains("vehicle 'sf' (quad, seed 0)\n  result              mission completed"),
        "{stdout}"
    );
    assert!(
        stdout.contains("FAILED: PX4 was not ready to fly within --ready-timeout 120 s"),
        "{stdout}"
    );
    // PX4 was instance 65, on its own simulator port, its console in its
    // vehicle's recording, and stopped at the end.
    let log = std::fs::read_to_string(rec.join("px/firmware.log")).expect("log");
    assert!(
        log.contains("Simulator connected on TCP port 4625"),
        "{log}"
    );
    assert!(rec.join("sf/ground_truth.csv").is_file());
    let marks = std::fs::read_to_string(&mark).expect("marks");
    assert_eq!(marks.lines().count(), 1, "{marks}");
}
