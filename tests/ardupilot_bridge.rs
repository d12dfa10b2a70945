//! The ArduPilot JSON bridge against a peer that behaves as ArduPilot's
//! SIM_JSON does: it sends a servo packet, blocks for the reply (polling every
//! 100 ms, re-sending after 1 s), parses the reply with the same substring
//! rules and fails on what ArduPilot would reject, and drives a quad with a
//! small hover controller so the physics closes the loop.

use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use mavsitl::bridge::ardupilot::{
    ArduPilotBridge, ArduPilotOptions, ChannelMap, MAGIC_16, RESTARTED,
};
use mavsitl::scenario::{Scenario, ScenarioSource};
use mavsitl::sim::Lockstep;
use mavsitl::time::SimTime;
use nalgebra::{Quaternion, UnitQuaternion};

/// ArduPilot's parser: find `"key":` and read one number or `[a,b,…]`.
fn field(reply: &str, key: &str, n: usize) -> Option<Vec<f64>> {
    let at = reply.find(&format!("\"{key}\":"))? + key.len() + 3;
    let rest = reply.get(at..)?;
    if n == 1 {
        let end = rest.find([',', '}'])?;
        return rest.get(..end)?.parse().ok().map(|v| vec![v]);
    }
    let body = rest.strip_prefix('[')?;
    let end = body.find(']')?;
    let v: Vec<f64> = body
        .get(..end)?
        .split(',')
        .filter_map(|x| x.parse().ok())
        .collect();
    (v.len() == n).then_some(v)
}

#[derive(Debug, Default)]
struct Report {
    frames: u64,
    bad_dt: u64,
    rejected: u64,
    resent_answer_same_time: bool,
    final_alt: f64,
    final_tilt_deg: f64,
    rest_accel_z: f64,
}

fn packet(rate: u16, count: u32, pwm: &[u16; 16]) -> Vec<u8> {
    let mut b = Vec::with_capacity(40);
    b.extend_from_slice(&MAGIC_16.to_le_bytes());
    b.extend_from_slice(&rate.to_le_bytes());
    b.extend_from_slice(&count.to_le_bytes());
    for p in pwm {
        b.extend_from_slice(&p.to_le_bytes());
    }
    b
}

/// The peer's SIM_RATE_HZ, as the bridge's frame rate.
const SIM_RATE_HZ: f32 = 400.0;

fn peer(to: SocketAddr, frames: u64, restart_at_end: bool) -> Report {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    s.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap_or_else(|e| panic!("{e}"));
    let mut rep = Report::default();
    let mut pwm = [1000u16; 16];
    let mut last_t: Option<f64> = None;
    let mut buf = [0u8; 2048];
    let mut count = 0u32;
    // SIM_JSON's rate field: 1200 at start, then the replies' own rate nudged
    // 1 Hz a frame towards SIM_RATE_HZ (`adjust_frame_time`), truncated.
    let mut rate_hz: f32 = 1200.0;
    while rep.frames < frames {
        // Now and then, garbage of the wrong size: must be skipped.
        if count % 997 == 5 {
            let _ = s.send_to(&[1, 2, 3], to);
        }
        let pkt = packet(rate_hz as u16, count, &pwm);
        let _ = s.send_to(&pkt, to);
        let mut sent_at = Instant::now();
        let reply = loop {
            match s.recv(&mut buf) {
                Ok(n) => break String::from_utf8_lossy(&buf[..n]).to_string(),
                Err(_) if sent_at.elapsed() >= Duration::from_secs(1) => {
                    // "No JSON sensor message received, resending servos"
                    let _ = s.send_to(&pkt, to);
                    sent_at = Instant::now();
                }
                Err(_) => {}
            }
            if rep.frames == 0 && sent_at.elapsed() > Duration::from_secs(30) {
                return rep;
            }
        };
        let line = reply.trim();
        let t = field(line, "timestamp", 1);
        let gyro = field(line, "gyro", 3);
        let accel = field(line, "accel_body", 3);
        let pos = field(line, "position", 3);
        let vel = field(line, "velocity", 3);
        let q = field(line, "quaternion", 4);
        let (Some(t), Some(_), Some(accel), Some(pos), Some(vel), Some(q)) =
            (t, gyro, accel, pos, vel, q)
        else {
            rep.rejected += 1;
            continue;
        };
        if !(reply.starts_with('\n') && reply.ends_with('\n')) || line.contains(": ") {
            rep.rejected += 1;
        }
        let t = t[0];
        if let Some(l) = last_t {
            if ((t - l) - 1.0 / 400.0).abs() > 2e-6 {
                rep.bad_dt += 1;
            }
            if t - l > 0.0 && t - l < 0.1 {
                rate_hz = (1.0 / (t - l)) as f32;
            }
        }
        rate_hz = SIM_RATE_HZ.clamp(rate_hz - 1.0, rate_hz + 1.0);
        // Re-send the same frame once: the bridge answers without stepping.
        if count == 100 {
            let _ = s.send_to(&pkt, to);
            if let Ok(n) = s.recv(&mut buf) {
                let again = String::from_utf8_lossy(&buf[..n]).to_string();
                rep.resent_answer_same_time =
                    field(again.trim(), "timestamp", 1).is_some_and(|v| v[0] == t);
            }
        }
        if rep.frames == 0 {
            // The first frame, motors off: standing on the ground.
            rep.rest_accel_z = accel[2];
        }
        last_t = Some(t);
        rep.frames += 1;
        count += 1;
        // Hover controller on the reply's state (ArduPilot's quad X order).
        let att = UnitQuaternion::from_quaternion(Quaternion::new(q[0], q[1], q[2], q[3]));
        let (roll, pitch, _) = att.euler_angles();
        rep.final_alt = -pos[2];
        rep.final_tilt_deg = (att * nalgebra::Vector3::z())
            .z
            .clamp(-1.0, 1.0)
            .acos()
            .to_degrees();
        let thrust = (0.59 + 0.08 * (5.0 + pos[2]) + 0.12 * vel[2]).clamp(0.1, 0.9);
        let tx = -0.25 * roll;
        let ty = -0.25 * pitch;
        let motors: [(f64, f64); 4] = [(1.0, 1.0), (-1.0, -1.0), (1.0, -1.0), (-1.0, 1.0)];
        for (i, (x, y)) in motors.iter().enumerate() {
            let u = (thrust + tx * -y + ty * x).clamp(0.0, 1.0);
            pwm[i] = (1000.0 + 1000.0 * u).round() as u16;
        }
    }
    if restart_at_end {
        // ArduPilot restarted: frame count back to 0.
        let _ = s.send_to(&packet(400, 0, &pwm), to);
        std::thread::sleep(Duration::from_millis(200));
    }
    rep
}

/// A quad scenario's simulation with the bridge attached at `frame_rate_hz`.
fn lockstep(scenario_json: &str, frame_rate_hz: u32) -> (Lockstep, SocketAddr) {
    let src = ScenarioSource {
        name: "ap test".into(),
        base_dir: PathBuf::from("."),
    };
    let scenario = Scenario::from_json(scenario_json, &src).unwrap_or_else(|e| panic!("{e}"));
    let sim = scenario
        .build_simulation(&src)
        .unwrap_or_else(|e| panic!("{e}"));
    let bridge = ArduPilotBridge::bind(ArduPilotOptions {
        bind: "127.0.0.1:0".parse().unwrap_or_else(|e| panic!("{e}")),
        frame_rate_hz,
        map: ChannelMap::quad_x(),
        give_up_after: Duration::from_secs(5),
        stop: None,
        launched: false,
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let addr = bridge.local_addr().unwrap_or_else(|e| panic!("{e}"));
    let mut ls = Lockstep::new(sim);
    ls.attach(0, Box::new(bridge))
        .unwrap_or_else(|e| panic!("{e}"));
    (ls, addr)
}

fn run(seconds: f64, restart: bool) -> (Result<(), mavsitl::sim::SimError>, Report, SimTime) {
    let (mut ls, addr) = lockstep(
        r#"{"physics_rate_hz":2000,"vehicles":[{"kind":"multirotor","airframe":"generic_quad"}]}"#,
        400,
    );
    let frames = (seconds * 400.0) as u64;
    let peer_thread = std::thread::spawn(move || peer(addr, frames, restart));
    let end = SimTime::from_secs_f64(seconds + 1.0);
    let mut result = Ok(());
    while ls.sim().time() < end {
        if let Err(e) = ls.tick(&mut ()) {
            result = Err(e);
            break;
        }
    }
    let t = ls.sim().time();
    let rep = peer_thread
        .join()
        .unwrap_or_else(|_| panic!("peer panicked"));
    (result, rep, t)
}

#[test]
fn sixty_seconds_of_lockstep_frames_close_the_loop() {
    let (result, rep, _) = run(60.0, true);
    // The run ends when the peer "restarts" ArduPilot.
    let e = result.expect_err("the restart must end the run");
    assert!(e.is_restart(), "{e}");
    assert!(e.to_string().contains(RESTARTED), "{e}");
    assert_eq!(rep.frames, 24_000);
    assert_eq!(rep.rejected, 0, "replies ArduPilot's parser would reject");
    assert_eq!(rep.bad_dt, 0, "timestamps must advance by exactly 1/400 s");
    assert!(
        rep.resent_answer_same_time,
        "a re-sent frame is answered without stepping"
    );
    assert!(
        (rep.rest_accel_z + 9.81).abs() < 0.3,
        "specific force at rest {}",
        rep.rest_accel_z
    );
    assert!(
        (rep.final_alt - 5.0).abs() < 0.5,
        "hovers at 5 m: {}",
        rep.final_alt
    );
    assert!(rep.final_tilt_deg < 3.0, "level: {}", rep.final_tilt_deg);
}

/// The ArduPilot parameter files match the vehicles: the quad's hover thrust
/// from its rotor law, the boat's cruise throttle giving its cruise speed.
#[test]
fn firmware_config_matches_the_vehicles() {
    use mavsitl::physics::airframes;
    use mavsitl::world::atmosphere::{G0_M_S2, RHO0_KG_M3};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let param = |file: &str, key: &str| -> f64 {
        let text = std::fs::read_to_string(root.join("firmware_configs/ardupilot").join(file))
            .unwrap_or_else(|e| panic!("{e}"));
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .find_map(|l| {
                let mut it = l.split_whitespace();
                (it.next() == Some(key)).then(|| it.next()?.parse().ok())?
            })
            .unwrap_or_else(|| panic!("{file}: {key} missing"))
    };
    let p = airframes::multirotor("generic_quad").unwrap_or_else(|| panic!("no quad"));
    let hover = p.mass_kg * G0_M_S2 / (4.0 * p.max_thrust_n(RHO0_KG_M3));
    assert!((param("quad.parm", "MOT_THST_HOVER") - hover).abs() < 0.01);
    // The frame rates mavsitl steps by default, fast enough for ArduPilot's
    // gyro-rate pre-arm check (1.8 × Copter's 400 Hz loop, Rover's 50 Hz).
    assert_eq!(param("quad.parm", "SIM_RATE_HZ"), 800.0);
    for rover in [
        "boat.parm",
        "boat_rudder.parm",
        "otter.parm",
        "rover_skid.parm",
        "rover_ackermann.parm",
    ] {
        assert_eq!(param(rover, "SIM_RATE_HZ"), 100.0, "{rover}");
    }
    // The boat at CRUISE_THROTTLE on both thrusters reaches CRUISE_SPEED.
    let thr = param("boat.parm", "CRUISE_THROTTLE") / 100.0;
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let scen = dir.path().join("cruise.json");
    std::fs::write(
        &scen,
        format!(
            r#"{{"duration_s":90,"vehicles":[{{"kind":"boat","airframe":"usv_twin","controller":{{"kind":"passive","rate_hz":50,"controls":[{thr},{thr}]}}}}]}}"#
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mavsitl"))
        .arg("sim")
        .arg(&scen)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let text = String::from_utf8_lossy(&out.stdout);
    let speed: f64 = text
        .split("speed ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no speed in {text}"));
    let cruise = param("boat.parm", "CRUISE_SPEED");
    assert!(
        (speed - cruise).abs() / cruise < 0.05,
        "{speed} m/s at {thr} vs CRUISE_SPEED {cruise}"
    );
}

/// A quad resting on the ground in a 4 m/s wind from the west: the reply's
/// airspeed is the wind's, the wind vane (as ArduPilot's SITL vane reads it,
/// from the bow, positive to starboard) has it on the port beam, and the
/// downward rangefinder reads the height of the sensor (at the CG).
#[test]
fn reply_carries_airspeed_apparent_wind_and_range() {
    let (mut ls, addr) = lockstep(
        r#"{"physics_rate_hz":1000,"environment":{"wind":{"speed_m_s":4,"from_deg":270}},
            "vehicles":[{"kind":"multirotor","airframe":"generic_quad",
              "sensors":{"rangefinder":{"enabled":true,"min_m":0.0,"noise_sigma_m":0.01}}}]}"#,
        1000,
    );
    let peer = std::thread::spawn(move || {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
        s.set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap_or_else(|e| panic!("{e}"));
        let mut buf = [0u8; 2048];
        let mut last = String::new();
        for count in 0..200 {
            let _ = s.send_to(&packet(1000, count, &[1000; 16]), addr);
            let n = s.recv(&mut buf).unwrap_or_else(|e| panic!("{e}"));
            last = String::from_utf8_lossy(&buf[..n]).trim().to_string();
        }
        last
    });
    while !peer.is_finished() {
        if ls.tick(&mut ()).is_err() {
            break;
        }
    }
    let reply = peer.join().unwrap_or_else(|_| panic!("peer panicked"));
    // ArduPilot's parser: the section first, then the key after it.
    let vane = reply
        .find("\"windvane\":")
        .and_then(|at| reply.get(at..))
        .unwrap_or_else(|| panic!("no windvane in {reply}"));
    let airspeed = field(&reply, "airspeed", 1).unwrap_or_else(|| panic!("{reply}"))[0];
    let direction = field(vane, "direction", 1).unwrap_or_else(|| panic!("{reply}"))[0];
    let speed = field(vane, "speed", 1).unwrap_or_else(|| panic!("{reply}"))[0];
    assert!((airspeed - 4.0).abs() < 0.01, "airspeed {airspeed}");
    assert!((speed - 4.0).abs() < 0.01, "vane speed {speed}");
    // Standing still facing north, the wind from the west is on the port beam.
    assert!(
        (direction + std::f64::consts::FRAC_PI_2).abs() < 0.01,
        "vane direction {direction}"
    );
    // Between IMU samples (250 Hz here, 1000 Hz frames) the last noisy sample
    // is held: never the noise-free truth.
    let accel = field(&reply, "accel_body", 3).unwrap_or_else(|| panic!("{reply}"));
    assert!(
        accel[2] != -9.80665 && (accel[2] + 9.80665).abs() < 0.5,
        "accel {accel:?}"
    );
    let height = -field(&reply, "position", 3).unwrap_or_else(|| panic!("{reply}"))[2];
    let range = field(&reply, "rng_1", 1).unwrap_or_else(|| panic!("no rng_1 in {reply}"))[0];
    assert!(height > 0.05, "the CG stands above the ground: {height}");
    assert!(
        (range - height).abs() < 0.05,
        "range {range} at height {height}"
    );
}

/// ArduPilot's default 1200 Hz is not a whole number of microseconds: refused
/// with a one-line reason and the fix, before anything binds.
#[test]
fn a_frame_rate_that_is_not_whole_microseconds_is_refused() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mavsitl"))
        .args(["ardupilot", "--frame-rate", "1200", "--instance", "37"])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--frame-rate 1200"), "{err}");
    assert!(err.contains("SIM_RATE_HZ"), "{err}");
}

/// Another local sender cannot restart (or step) the simulation while
/// ArduPilot is talking: its packet with a lower frame count is ignored and
/// gets no reply.
#[test]
fn a_stranger_cannot_restart_the_session() {
    let (mut ls, addr) = lockstep(
        r#"{"physics_rate_hz":2000,"vehicles":[{"kind":"multirotor","airframe":"generic_quad"}]}"#,
        400,
    );
    let peer_thread = std::thread::spawn(move || peer(addr, 1600, false));
    let stranger = std::net::UdpSocket::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    stranger
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap_or_else(|e| panic!("{e}"));
    let mut packet = Vec::new();
    packet.extend_from_slice(&18458u16.to_le_bytes());
    packet.extend_from_slice(&400u16.to_le_bytes());
    packet.extend_from_slice(&0u32.to_le_bytes());
    packet.extend_from_slice(&[0xE8, 0x03].repeat(16)); // 1000 µs
    let end = SimTime::from_secs(4); // the peer's 1600 frames at 400 Hz
    let mut sent = false;
    while ls.sim().time() < end {
        if !sent && ls.sim().time() >= SimTime::from_secs(1) {
            stranger
                .send_to(&packet, addr)
                .unwrap_or_else(|e| panic!("{e}"));
            sent = true;
        }
        ls.tick(&mut ()).unwrap_or_else(|e| panic!("{e}"));
    }
    let mut buf = [0u8; 2048];
    assert!(
        stranger.recv_from(&mut buf).is_err(),
        "the stranger got a reply"
    );
    drop(ls);
    let _ = peer_thread.join();
}

/// An ArduPilot that keeps restarting (its frame counter going back) is
/// given up after five restarts within a minute, with one line each, and the
/// recording — closed at the first restart — says so in `meta.json`, whose
/// end time is that of the rows it holds (and whose physics rate is the
/// firmware's, not SimpleFlight's).
#[test]
fn restarts_are_rate_limited_and_the_recording_stays_true() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("rec");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_mavsitl"))
        .args([
            "ardupilot",
            "--vehicle",
            "quad",
            "--instance",
            "23",
            "--record",
        ])
        .arg(&dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let to: SocketAddr = "127.0.0.1:9232".parse().unwrap();
    let s = UdpSocket::bind("127.0.0.1:0").expect("bind");
    s.set_read_timeout(Some(Duration::from_millis(50)))
        .expect("timeout");
    let pwm = [1000u16; 16];
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + Duration::from_secs(60);
    'runs: for _run in 0..10 {
        for count in 0..200u32 {
            // Each frame until it is answered (the first of a session may not be).
            loop {
                let _ = s.send_to(&packet(800, count, &pwm), to);
                if s.recv(&mut buf).is_ok() {
                    break;
                }
                if Instant::now() > deadline || child.try_wait().ok().flatten().is_some() {
                    break 'runs;
                }
            }
        }
    }
    let out = child.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("restarted 6 times within 60 s: giving up"),
        "{err}"
    );
    assert_eq!(err.matches("the simulation restarts").count(), 5, "{err}");
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).expect("meta"))
            .expect("json");
    assert_eq!(meta["completed"], false);
    // The built-in quad's physics from the 1 kHz default, not SimpleFlight's
    // 250 Hz: two ticks of each of Copter's 800 frames a second.
    assert_eq!(meta["physics_rate_hz"], 1600);
    assert!(meta["ended_by"]
        .as_str()
        .is_some_and(|s| s.contains("restarted")));
    let gt = std::fs::read_to_string(dir.join("ground_truth.csv")).expect("gt");
    let last_ns: f64 = gt
        .lines()
        .last()
        .and_then(|l| l.split(',').next())
        .and_then(|t| t.parse().ok())
        .expect("rows");
    let end = meta["sim_time_end_s"].as_f64().expect("end");
    assert!(
        (end - last_ns * 1e-9).abs() < 0.01,
        "meta.json ends at {end} s, the rows at {} s",
        last_ns * 1e-9
    );
}
