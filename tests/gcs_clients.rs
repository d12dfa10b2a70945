//! `mavsitl serve` against the real MAVLink clients from PyPI: MAVSDK-Python
//! (native 4.x and the gRPC flavour), pymavlink and MAVProxy. Each test starts
//! the binary on free ports and runs one script of `tests/python/` in the
//! virtualenv `tests/python/setup.sh` makes (`.venv/`, or `MAVSITL_PYTHON`).

use std::io::{BufRead, BufReader, Read};
use std::net::{TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use mavlink::dialects::common::{MavAutopilot, MavMessage};
use mavlink::{MavlinkReader, Message};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn python() -> PathBuf {
    if let Ok(p) = std::env::var("MAVSITL_PYTHON") {
        return PathBuf::from(p);
    }
    let p = root().join(".venv/bin/python");
    assert!(
        p.exists(),
        "{} is missing: run tests/python/setup.sh first (it installs MAVSDK, pymavlink and MAVProxy from PyPI)",
        p.display()
    );
    p
}

fn free_udp_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .and_then(|s| s.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("no free UDP port: {e}"))
}

fn free_tcp_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|s| s.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("no free TCP port: {e}"))
}

/// The longest a client script may take (the longest flies 30 s): past
/// it, the client and what it started (mavsdk_server) are killed and the
/// test fails with what they printed, instead of hanging the run.
const CLIENT_LIMIT: Duration = Duration::from_secs(240);

/// Runs `script` with `args` in its own process group, killed as a group
/// after [`CLIENT_LIMIT`].
fn run_client(script: &str, args: &[String]) -> std::process::Output {
    use std::os::unix::process::CommandExt as _;
    let mut child = Command::new(python())
        .current_dir(root().join("tests/python"))
        .arg(script)
        .args(args)
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {script}: {e}"));
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut buf);
            }
            buf
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
    );
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("client status") {
            break status;
        }
        if start.elapsed() > CLIENT_LIMIT {
            // The whole group: the client and the servers it started.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            break child.wait().expect("killed client");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    std::process::Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}

/// A running `mavsitl serve`.
struct Serve {
    child: Child,
    /// The port it sends to (the client listens there).
    gcs_port: u16,
    /// Its own bound port.
    vehicle_port: u16,
    stderr: mpsc::Receiver<String>,
}

impl Serve {
    fn start(extra: &[&str]) -> Serve {
        let gcs_port = free_udp_port();
        let out = format!("127.0.0.1:{gcs_port}");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mavsitl"));
        cmd.current_dir(root())
            .args(["serve", "--gcs-bind", "127.0.0.1:0", "--gcs-out", &out])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start mavsitl: {e}"));
        let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
        let mut lines = BufReader::new(stdout).lines();
        let banner = lines
            .next()
            .and_then(Result::ok)
            .unwrap_or_else(|| panic!("mavsitl serve printed no banner"));
        std::thread::spawn(move || for _ in lines {});
        let stderr_pipe = child.stderr.take().unwrap_or_else(|| panic!("no stderr"));
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = BufReader::new(stderr_pipe).read_to_string(&mut s);
            let _ = tx.send(s);
        });
        let vehicle_port = banner
            .split("udp 127.0.0.1:")
            .nth(1)
            .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no bound port in the banner: {banner}"));
        Serve {
            child,
            gcs_port,
            vehicle_port,
            stderr: rx,
        }
    }

    fn stop(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.stderr
            .recv_timeout(Duration::from_secs(5))
            .unwrap_or_default()
    }
}

/// A test that fails (a client missing, an assertion) still stops its
/// server: a server left running would hold its ports and talk to the
/// next tests' clients.
impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs a script of tests/python; panics with its output unless it exits 0
/// and printed OK. Returns the output.
fn run_py(serve: Serve, script: &str, args: &[String]) -> String {
    let out = run_client(script, args);
    let log = serve.stop();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{text}");
    assert!(
        out.status.success() && text.lines().any(|l| l.starts_with("OK")),
        "{script} {args:?} failed ({}):\n{text}\n--- mavsitl stderr ---\n{log}",
        out.status
    );
    text
}

fn plan(name: &str) -> String {
    root().join("missions").join(name).display().to_string()
}

#[test]
fn mavsdk_native_flies_the_quad_square_and_returns() {
    let s = Serve::start(&["--speedup", "10"]);
    let args = [
        "native".into(),
        s.gcs_port.to_string(),
        plan("quad_square.plan"),
        "quad".into(),
        // Path-following bound of the SimpleFlight flight (0.73 m max on the
        // estimate), with margin for 5 Hz position sampling at corners.
        "1.5".into(),
    ];
    let out = run_py(s, "mavsdk_mission.py", &args);
    assert!(out.contains("progress 6 / 6"), "{out}");
}

#[test]
fn mavsdk_native_flies_the_boat_box() {
    let s = Serve::start(&["--speedup", "10", "--mission", "missions/boat_box.plan"]);
    let args = [
        "native".into(),
        s.gcs_port.to_string(),
        plan("boat_box.plan"),
        "boat".into(),
        "3.0".into(),
    ];
    let out = run_py(s, "mavsdk_mission.py", &args);
    assert!(out.contains("progress 4 / 4"), "{out}");
}

#[test]
fn mavsdk_grpc_flies_the_quad_square() {
    let s = Serve::start(&["--speedup", "10"]);
    let args = [
        "grpc".into(),
        s.gcs_port.to_string(),
        plan("quad_square.plan"),
        "quad".into(),
        "1.5".into(),
        free_tcp_port().to_string(),
    ];
    run_py(s, "mavsdk_mission.py", &args);
}

#[test]
fn mavsdk_grpc_flies_the_boat_box() {
    let s = Serve::start(&["--speedup", "10", "--mission", "missions/boat_box.plan"]);
    let args = [
        "grpc".into(),
        s.gcs_port.to_string(),
        plan("boat_box.plan"),
        "boat".into(),
        "3.0".into(),
        free_tcp_port().to_string(),
    ];
    run_py(s, "mavsdk_mission.py", &args);
}

fn pymavlink(check: &str, extra: &[&str]) -> String {
    let s = Serve::start(extra);
    let args = [
        check.to_string(),
        s.gcs_port.to_string(),
        s.vehicle_port.to_string(),
    ];
    run_py(s, "pymavlink_checks.py", &args)
}

#[test]
fn pymavlink_parameter_list_is_complete_and_settable() {
    pymavlink("params", &[]);
}

#[test]
fn pymavlink_mission_round_trip_survives_20_percent_loss() {
    pymavlink("mission", &[]);
}

#[test]
fn pymavlink_cancelled_and_stalled_uploads_keep_the_mission() {
    pymavlink("cancel", &[]);
}

#[test]
fn pymavlink_every_command_gets_its_ack() {
    pymavlink("commands", &[]);
}

#[test]
fn pymavlink_garbage_and_truncated_frames_are_skipped() {
    pymavlink("garbage", &[]);
}

#[test]
fn mavproxy_loads_arms_and_flies_a_mission() {
    let s = Serve::start(&["--speedup", "10"]);
    let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let args = [
        s.gcs_port.to_string(),
        plan("quad_square.plan"),
        work.path().display().to_string(),
    ];
    run_py(s, "mavproxy_mission.py", &args);
}

#[test]
fn signing_rejects_unsigned_frames_and_answers_signed_ones() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let key = dir.path().join("key.txt");
    let hex = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    std::fs::write(&key, format!("{hex}\n")).unwrap_or_else(|e| panic!("{e}"));
    let s = Serve::start(&["--signing-key", &key.display().to_string()]);
    let args = [
        "signing".to_string(),
        s.gcs_port.to_string(),
        s.vehicle_port.to_string(),
        hex.to_string(),
    ];
    run_py(s, "pymavlink_checks.py", &args);
}

#[test]
fn tlog_replays_in_pymavlink() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let rec = dir.path().join("rec");
    let status = Command::new(env!("CARGO_BIN_EXE_mavsitl"))
        .current_dir(root())
        .args(["serve", "--gcs-bind", "127.0.0.1:0", "--speedup", "max"])
        .args(["--gcs-out", &format!("127.0.0.1:{}", free_udp_port())])
        .args(["--duration", "30", "--record"])
        .arg(&rec)
        .stdout(Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(status.success());
    let tlog = rec.join("telemetry.tlog");
    let out = Command::new(python())
        .current_dir(root().join("tests/python"))
        .args(["pymavlink_checks.py", "tlog", "0", "0"])
        .arg(&tlog)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let text = String::from_utf8_lossy(&out.stdout);
    println!("{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && text.contains("OK"), "{text}");
}

/// Instance N: system id 1 + N and PX4's GCS port 18570 + N, seen on the wire
/// by a plain mavlink-crate listener.
#[test]
fn instance_shifts_system_id_and_port() {
    let listener = UdpSocket::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    listener
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap_or_else(|e| panic!("{e}"));
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    let mut child = Command::new(env!("CARGO_BIN_EXE_mavsitl"))
        .args(["serve", "--instance", "7", "--gcs-bind", "127.0.0.1"])
        .args(["--gcs-out", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut buf = [0u8; 2048];
    let mut seen = None;
    for _ in 0..200 {
        let Ok((n, from)) = listener.recv_from(&mut buf) else {
            break;
        };
        let mut r = MavlinkReader::new(&buf[..n]);
        while let Ok((h, m)) = r.read_any_message::<MavMessage>() {
            if let MavMessage::HEARTBEAT(hb) = &m {
                seen = Some((h.system_id, h.component_id, hb.autopilot, from.port()));
            }
            let _ = m.message_id();
        }
        if seen.is_some() {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(
        seen,
        Some((8, 1, MavAutopilot::MAV_AUTOPILOT_PX4, 18577)),
        "heartbeat from system 8, component 1, PX4, port 18577"
    );
}

/// A QGroundControl plan: take off to `alt` m where the vehicle stands
/// (`start`, NED m from the default home), fly a square of `side` m towards
/// `east_sign` · east, return to launch.
fn square_plan(
    dir: &std::path::Path,
    name: &str,
    start: (f64, f64),
    side: f64,
    east_sign: f64,
    alt: f64,
) -> String {
    let h = mavsitl::scenario::DEFAULT_HOME;
    let frame = mavsitl::geo::LocalFrame::new(mavsitl::geo::GeoPoint::from_deg(
        h.lat_deg, h.lon_deg, h.alt_m,
    ));
    let ll = |n: f64, e: f64| {
        let g = frame.to_geodetic(&nalgebra::Vector3::new(n, e, 0.0));
        (g.lat_deg(), g.lon_deg())
    };
    let (n0, e0) = start;
    let e1 = e0 + east_sign * side;
    let mut items = Vec::new();
    let corners = [
        (n0, e0),
        (n0 + side, e0),
        (n0 + side, e1),
        (n0, e1),
        (n0, e0),
    ];
    for (i, (n, e)) in corners.iter().enumerate() {
        let (lat, lon) = ll(*n, *e);
        items.push(serde_json::json!({
            "type": "SimpleItem", "autoContinue": true, "doJumpId": i + 1, "frame": 3,
            "command": if i == 0 { 22 } else { 16 },
            "params": [0, 0, 0, null, lat, lon, alt]
        }));
    }
    items.push(serde_json::json!({
        "type": "SimpleItem", "autoContinue": true, "doJumpId": 6, "frame": 2,
        "command": 20, "params": [0, 0, 0, 0, 0, 0, 0]
    }));
    let (hlat, hlon) = ll(n0, e0);
    let plan = serde_json::json!({
        "fileType": "Plan", "version": 1, "groundStation": "QGroundControl",
        "geoFence": {"circles": [], "polygons": [], "version": 2},
        "rallyPoints": {"points": [], "version": 2},
        "mission": {"version": 2, "firmwareType": 12, "vehicleType": 2, "cruiseSpeed": 15,
                    "hoverSpeed": 5, "plannedHomePosition": [hlat, hlon, h.alt_m], "items": items}
    });
    let path = dir.join(name);
    std::fs::write(&path, plan.to_string()).unwrap_or_else(|e| panic!("{e}"));
    path.display().to_string()
}

/// `serve --count 3`: MAVSDK connects to all three vehicles (system ids
/// 41–43, each on its own port as PX4 SITL's instances 40–42 are) and flies
/// two of them at once, each its own square at its own height.
#[test]
fn mavsdk_flies_two_of_three_vehicles_at_once() {
    // The clients' interpreter first: without it the test stops before it
    // starts a server.
    let python = python();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let rec = dir.path().join("rec");
    let mut child = Command::new(env!("CARGO_BIN_EXE_mavsitl"))
        .current_dir(root())
        .args([
            "serve",
            "--count",
            "3",
            "--instance",
            "40",
            "--speedup",
            "10",
        ])
        .arg("--record")
        .arg(&rec)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
    let mut lines = BufReader::new(stdout).lines();
    for k in 0..3 {
        let l = lines
            .next()
            .and_then(Result::ok)
            .unwrap_or_else(|| panic!("no banner line {k}"));
        assert!(
            l.contains(&format!("system id {}", 41 + k))
                && l.contains(&format!("udp 127.0.0.1:{}", 18610 + k)),
            "{l}"
        );
    }
    std::thread::spawn(move || for _ in lines {});
    let plans = [
        "-".to_string(),
        square_plan(dir.path(), "v1.plan", (0.0, 5.0), 25.0, -1.0, 20.0),
        square_plan(dir.path(), "v2.plan", (0.0, 10.0), 25.0, 1.0, 30.0),
    ];
    let clients: Vec<_> = plans
        .iter()
        .enumerate()
        .map(|(k, plan)| {
            Command::new(&python)
                .current_dir(root().join("tests/python"))
                .arg("mavsdk_mission.py")
                .args(["native", &(14580 + k).to_string(), plan, "quad", "1.5"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap_or_else(|e| panic!("{e}"))
        })
        .collect();
    let outs: Vec<String> = clients
        .into_iter()
        .map(|c| {
            let o = c.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
            format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            )
        })
        .collect();
    // SAFETY: kill(2) on our own child: Ctrl-C, so the recording closes.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let o = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    let err = String::from_utf8_lossy(&o.stderr);
    for (k, out) in outs.iter().enumerate() {
        println!("--- vehicle {k} ---\n{out}");
        assert!(
            out.lines().any(|l| l.starts_with("OK")),
            "vehicle {k}:\n{out}\n{err}"
        );
    }
    assert!(outs[0].contains("ready at"), "{}", outs[0]);
    assert!(outs[1].contains("progress 6 / 6") && outs[2].contains("progress 6 / 6"));
    // Flying at once: both were more than 5 m up at the same sim time; and
    // they never touched.
    let airborne = |name: &str| -> Vec<u64> {
        let gt = std::fs::read_to_string(rec.join(name).join("ground_truth.csv"))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        gt.lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let f: Vec<f64> = l.split(',').filter_map(|x| x.trim().parse().ok()).collect();
                (*f.get(3)? < -5.0).then_some(*f.first()? as u64)
            })
            .collect()
    };
    let (a, b) = (airborne("quad1"), airborne("quad2"));
    assert!(!a.is_empty() && !b.is_empty());
    let overlap = a.iter().filter(|t| b.binary_search(t).is_ok()).count();
    println!(
        "{} of {} samples of quad1 in the air overlap quad2's",
        overlap,
        a.len()
    );
    assert!(overlap * 2 > a.len(), "{overlap} of {}", a.len());
    assert!(!err.contains("collision"), "{err}");
    let enc = std::fs::read_to_string(rec.join("encounters.csv")).unwrap_or_default();
    let rows: Vec<&str> = enc
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("vehicle_a"))
        .collect();
    assert!(!rows.is_empty(), "{enc}");
    assert!(
        rows.iter()
            .all(|r| r.split(',').nth(12).is_some_and(str::is_empty)),
        "{enc}"
    );
}

/// `serve --count 2 --adsb`: vehicle 0's link reports vehicle 1 as ADS-B
/// traffic, where it stands (5 m east of vehicle 0), seen by a plain
/// mavlink-crate listener.
#[test]
fn a_fleet_reports_the_other_vehicles_as_adsb_traffic() {
    let listener = UdpSocket::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    listener
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap_or_else(|e| panic!("{e}"));
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    let mut child = Command::new(env!("CARGO_BIN_EXE_mavsitl"))
        .args(["serve", "--count", "2", "--adsb", "--instance", "50"])
        .args(["--gcs-bind", "127.0.0.1:0", "--speedup", "5"])
        .args(["--gcs-out", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut buf = [0u8; 4096];
    let mut seen = None;
    for _ in 0..500 {
        let Ok((n, _)) = listener.recv_from(&mut buf) else {
            break;
        };
        let mut r = MavlinkReader::new(&buf[..n]);
        while let Ok((h, m)) = r.read_any_message::<MavMessage>() {
            if let MavMessage::ADSB_VEHICLE(a) = &m {
                seen = Some((h.system_id, a.clone()));
            }
        }
        if seen.is_some() {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let (from, a) = seen.unwrap_or_else(|| panic!("no ADSB_VEHICLE"));
    // Sent by vehicle 0 (system id 51), about vehicle 1.
    assert_eq!(from, 51);
    assert_eq!(a.ICAO_address & 0xFFF, 1);
    assert_eq!(&a.callsign[..6], b"QUAD1\0");
    let h = mavsitl::scenario::DEFAULT_HOME;
    let frame = mavsitl::geo::LocalFrame::new(mavsitl::geo::GeoPoint::from_deg(
        h.lat_deg, h.lon_deg, h.alt_m,
    ));
    let at = frame.to_ned(&mavsitl::geo::GeoPoint::from_deg(
        a.lat as f64 * 1e-7,
        a.lon as f64 * 1e-7,
        h.alt_m,
    ));
    assert!((at.x.abs(), (at.y - 5.0).abs()) < (0.1, 0.1), "{at:?}");
    assert!(a
        .flags
        .contains(mavlink::dialects::common::AdsbFlags::ADSB_FLAGS_SIMULATED));
}
