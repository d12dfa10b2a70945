//! The PX4 bridge against a test peer that behaves as PX4's `simulator_mavlink`
//! does (docs: PX4's simulator interface): it connects with retries, blocks
//! until the first HIL_SENSOR with id 0, sends its HEARTBEAT and
//! SET_MESSAGE_INTERVAL 115, free-wheels through boot (no actuator outputs),
//! then answers every step with HIL_ACTUATOR_CONTROLS at the sensor time with
//! the lockstep flag, computed by a small hover controller on the ground truth
//! and gyro it receives, so the physics closes the loop.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use mavlink::dialects::common::{
    HilActuatorControlsFlags, MavAutopilot, MavCmd, MavMessage, MavModeFlag, MavState, MavType,
    COMMAND_LONG_DATA, HEARTBEAT_DATA, HIL_ACTUATOR_CONTROLS_DATA, HIL_SENSOR_DATA,
};
use mavsitl::bridge::px4::{Px4Bridge, Px4Options, Px4Socket};
use mavsitl::physics::boat::BoatLayout;
use mavsitl::scenario::{Scenario, ScenarioSource};
use mavsitl::sim::Lockstep;
use mavsitl::time::SimTime;
use mavsitl::wire::{self, Encoder, Outgoing};
use nalgebra::UnitQuaternion;

/// What the peer saw.
#[derive(Debug, Default)]
struct PeerReport {
    sensors: u64,
    answered: u64,
    bad_step: u64,
    incomplete_groups: u64,
    mag_msgs: u64,
    baro_msgs: u64,
    rest_accel_z: Vec<f64>,
    pressure_hpa: Vec<f64>,
    mag_gauss: Vec<f64>,
    gps_latency_us: Vec<u64>,
    got_state: u64,
    final_alt_m: f64,
    final_tilt_deg: f64,
    /// RC_CHANNELS received: (time_boot_ms, chan3_raw, chancount).
    rc: Vec<(u32, u16, u8)>,
    /// After boot, the most HIL_SENSOR messages found in one read: 1 in
    /// lockstep (the next step is sent only after the answer).
    max_sensors_per_read: usize,
}

const BOOT_STEPS: u64 = 250; // 1 s of PX4 boot without outputs

/// How the peer answers after its boot.
#[derive(Debug, Clone, Copy)]
struct Answers {
    /// Answer every this many steps (1: a multicopter, whose rate controller
    /// runs on every IMU sample; more: a rover, which publishes outputs at its
    /// own rate).
    every: u64,
    /// Stop answering after this many steps.
    silent_after: Option<u64>,
    /// Report armed.
    armed: bool,
    /// At this step, first send one answer stamped with the end of time.
    bogus_at: Option<u64>,
    /// Once silent, still talk on every step: a heartbeat, a few bytes of
    /// garbage and an answer from the future.
    chatter: bool,
}

/// PX4 flying a multicopter: every step answered, armed.
const EVERY_STEP: Answers = Answers {
    every: 1,
    silent_after: None,
    armed: true,
    bogus_at: None,
    chatter: false,
};

/// PX4 over TCP: connects with retries, as `simulator_mavlink` does.
fn peer(addr: SocketAddr, run_steps: u64, utc0: u64, answers: Answers) -> PeerReport {
    let start = Instant::now();
    let s = loop {
        match TcpStream::connect(addr) {
            Ok(s) => break s,
            Err(_) if start.elapsed() < Duration::from_secs(20) => {
                std::thread::sleep(Duration::from_millis(2))
            }
            Err(e) => panic!("peer cannot connect: {e}"),
        }
    };
    s.set_nodelay(true).unwrap_or_else(|e| panic!("{e}"));
    s.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap_or_else(|e| panic!("{e}"));
    let mut r = s.try_clone().unwrap_or_else(|e| panic!("{e}"));
    let mut w = s;
    peer_on(
        move |buf| match r.read(buf) {
            Ok(0) | Err(_) => None,
            Ok(n) => Some(n),
        },
        move |b| w.write_all(b).is_ok(),
        run_steps,
        utc0,
        answers,
    )
}

/// PX4 over UDP (`simulator_mavlink start -u`): binds, waits for the first
/// datagram, answers the sender.
fn peer_udp(sock: std::net::UdpSocket, run_steps: u64, utc0: u64) -> PeerReport {
    sock.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap_or_else(|e| panic!("{e}"));
    let sender = std::rc::Rc::new(std::cell::Cell::new(None::<SocketAddr>));
    let (rs, ws) = (sender.clone(), sender);
    let r = sock.try_clone().unwrap_or_else(|e| panic!("{e}"));
    peer_on(
        move |buf| match r.recv_from(buf) {
            Ok((n, from)) => {
                rs.set(Some(from));
                Some(n)
            }
            Err(_) => None,
        },
        move |b| ws.get().is_some_and(|to| sock.send_to(b, to).is_ok()),
        run_steps,
        utc0,
        EVERY_STEP,
    )
}

fn peer_on(
    mut read: impl FnMut(&mut [u8]) -> Option<usize>,
    mut write: impl FnMut(&[u8]) -> bool,
    run_steps: u64,
    utc0: u64,
    answers: Answers,
) -> PeerReport {
    let mut enc = Encoder::new(1, 1, None);
    let mut out = Vec::new();
    let mut rx = Vec::new();
    let mut buf = [0u8; 4096];
    let mut rep = PeerReport::default();
    let mut last_t: Option<u64> = None;
    let mut state: Option<(UnitQuaternion<f64>, f64, f64)> = None; // att, alt, vz
    let mut gyro;
    let mut greeted = false;
    while rep.sensors < run_steps {
        let Some(n) = read(&mut buf) else {
            break;
        };
        rx.extend_from_slice(&buf[..n]);
        let mut msgs = Vec::new();
        wire::stream_frames(&mut rx, |raw| {
            if let Ok(wire::Incoming::Msg(m)) = wire::decode(raw) {
                msgs.push(m);
            }
        });
        if rep.sensors > BOOT_STEPS + 10 {
            let n = msgs
                .iter()
                .filter(|m| matches!(m, MavMessage::HIL_SENSOR(_)))
                .count();
            rep.max_sensors_per_read = rep.max_sensors_per_read.max(n);
        }
        for m in msgs {
            match m {
                MavMessage::HIL_STATE_QUATERNION(h) => {
                    let q = h.attitude_quaternion;
                    let att = UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(
                        q[0] as f64,
                        q[1] as f64,
                        q[2] as f64,
                        q[3] as f64,
                    ));
                    state = Some((att, h.alt as f64 / 1000.0, h.vz as f64 / 100.0));
                    rep.got_state += 1;
                }
                MavMessage::RC_CHANNELS(r) => {
                    rep.rc.push((r.time_boot_ms, r.chan3_raw, r.chancount))
                }
                MavMessage::HIL_GPS(g) => {
                    if let Some(t) = last_t {
                        // Delivered in the step after the one ending at t.
                        rep.gps_latency_us.push(t + 4000 - (g.time_usec - utc0));
                    }
                }
                MavMessage::HIL_SENSOR(h) => {
                    note_sensor(&mut rep, &h, &mut last_t);
                    gyro = [h.xgyro as f64, h.ygyro as f64, h.zgyro as f64];
                    if !greeted {
                        greeted = true;
                        greet(&mut enc, &mut out);
                    }
                    let silent = answers.silent_after.is_some_and(|k| rep.sensors > k);
                    if silent && answers.chatter {
                        chatter(&mut enc, &mut out);
                    }
                    if answers.bogus_at == Some(rep.sensors) {
                        let bogus = actuator_controls(u64::MAX, [0.0; 16], true);
                        enc.encode(&Outgoing::Msg(bogus), &mut out);
                    }
                    if rep.sensors >= BOOT_STEPS && !silent && rep.sensors % answers.every == 0 {
                        let controls = hover(state, gyro);
                        let answer = actuator_controls(h.time_usec, controls, answers.armed);
                        enc.encode(&Outgoing::Msg(answer), &mut out);
                        rep.answered += 1;
                    }
                    if !out.is_empty() {
                        if !write(&out) {
                            return rep;
                        }
                        out.clear();
                    }
                }
                _ => {}
            }
        }
        if let Some((att, alt, _)) = state {
            rep.final_alt_m = alt;
            let z = att * nalgebra::Vector3::z();
            rep.final_tilt_deg = z.z.clamp(-1.0, 1.0).acos().to_degrees();
        }
    }
    rep
}

/// A HIL_SENSOR's checks: one 4 ms step after the last, each sensor group
/// complete (PX4 requires every bit of a group), the magnetometer's field
/// and the barometer's pressure when they came, the resting specific force.
fn note_sensor(rep: &mut PeerReport, h: &HIL_SENSOR_DATA, last_t: &mut Option<u64>) {
    let f = h.fields_updated.bits();
    if let Some(t) = *last_t {
        if h.time_usec != t + 4000 {
            rep.bad_step += 1;
        }
    }
    *last_t = Some(h.time_usec);
    rep.sensors += 1;
    for g in [0x7u32, 0x38, 0x1C0, 0x1A00] {
        if f & g != 0 && f & g != g {
            rep.incomplete_groups += 1;
        }
    }
    if f & 0x38 != 0x38 || f & 0x7 != 0x7 {
        rep.incomplete_groups += 1;
    }
    if f & 0x1C0 != 0 {
        rep.mag_msgs += 1;
        let m = ((h.xmag * h.xmag + h.ymag * h.ymag + h.zmag * h.zmag) as f64).sqrt();
        rep.mag_gauss.push(m);
    }
    if f & 0x1A00 != 0 {
        rep.baro_msgs += 1;
        rep.pressure_hpa.push(h.abs_pressure as f64);
    }
    if rep.sensors < BOOT_STEPS {
        rep.rest_accel_z.push(h.zacc as f64);
    }
}

/// What PX4 says once connected: its heartbeat, and a request for
/// HIL_STATE_QUATERNION (115) every 5 ms.
fn greet(enc: &mut Encoder, out: &mut Vec<u8>) {
    enc.encode(
        &Outgoing::Msg(MavMessage::HEARTBEAT(HEARTBEAT_DATA {
            custom_mode: 0,
            mavtype: MavType::MAV_TYPE_QUADROTOR,
            autopilot: MavAutopilot::MAV_AUTOPILOT_PX4,
            base_mode: MavModeFlag::MAV_MODE_FLAG_CUSTOM_MODE_ENABLED,
            system_status: MavState::MAV_STATE_STANDBY,
            mavlink_version: 3,
        })),
        out,
    );
    enc.encode(
        &Outgoing::Msg(MavMessage::COMMAND_LONG(COMMAND_LONG_DATA {
            param1: 115.0,
            param2: 5000.0,
            command: MavCmd::MAV_CMD_SET_MESSAGE_INTERVAL,
            ..COMMAND_LONG_DATA::DEFAULT
        })),
        out,
    );
}

/// PX4's answer to the step at `time_usec`, in lockstep.
fn actuator_controls(time_usec: u64, controls: [f32; 16], armed: bool) -> MavMessage {
    let mode = if armed {
        MavModeFlag::MAV_MODE_FLAG_CUSTOM_MODE_ENABLED | MavModeFlag::MAV_MODE_FLAG_SAFETY_ARMED
    } else {
        MavModeFlag::MAV_MODE_FLAG_CUSTOM_MODE_ENABLED
    };
    MavMessage::HIL_ACTUATOR_CONTROLS(HIL_ACTUATOR_CONTROLS_DATA {
        time_usec,
        flags: HilActuatorControlsFlags::HIL_ACTUATOR_CONTROLS_FLAGS_LOCKSTEP,
        controls,
        mode,
    })
}

/// What a PX4 that talks but no longer answers sends on a step: a heartbeat,
/// bytes that are no MAVLink frame, and an answer from the future.
fn chatter(enc: &mut Encoder, out: &mut Vec<u8>) {
    enc.encode(
        &Outgoing::Msg(MavMessage::HEARTBEAT(HEARTBEAT_DATA {
            custom_mode: 0,
            mavtype: MavType::MAV_TYPE_QUADROTOR,
            autopilot: MavAutopilot::MAV_AUTOPILOT_PX4,
            base_mode: MavModeFlag::MAV_MODE_FLAG_SAFETY_ARMED,
            system_status: MavState::MAV_STATE_ACTIVE,
            mavlink_version: 3,
        })),
        out,
    );
    out.extend_from_slice(b"\x00garbage\xff");
    enc.encode(
        &Outgoing::Msg(MavMessage::HIL_ACTUATOR_CONTROLS(
            HIL_ACTUATOR_CONTROLS_DATA {
                time_usec: u64::MAX,
                flags: HilActuatorControlsFlags::HIL_ACTUATOR_CONTROLS_FLAGS_LOCKSTEP,
                controls: [0.0; 16],
                mode: MavModeFlag::MAV_MODE_FLAG_SAFETY_ARMED,
            },
        )),
        out,
    );
}

/// Altitude hold at 5 m above the start plus attitude levelling, mixed in
/// PX4's quad-X order: 0 front-right CCW, 1 rear-left CCW, 2 front-left CW,
/// 3 rear-right CW.
fn hover(state: Option<(UnitQuaternion<f64>, f64, f64)>, gyro: [f64; 3]) -> [f32; 16] {
    let mut c = [0f32; 16];
    let Some((att, alt, vz)) = state else {
        return c;
    };
    let (roll, pitch, _) = att.euler_angles();
    let target = 488.0 + 5.0;
    // vz is NED (down): descending asks for more thrust.
    let thrust = (0.59 + 0.08 * (target - alt) + 0.12 * vz).clamp(0.1, 0.9);
    let tx = -0.25 * roll - 0.04 * gyro[0];
    let ty = -0.25 * pitch - 0.04 * gyro[1];
    let tz = -0.05 * gyro[2];
    // (x sign, y sign, yaw sign: CCW +1)
    let motors: [(f64, f64, f64); 4] = [
        (1.0, 1.0, 1.0),
        (-1.0, -1.0, 1.0),
        (1.0, -1.0, -1.0),
        (-1.0, 1.0, -1.0),
    ];
    for (i, (x, y, yaw)) in motors.iter().enumerate() {
        let u = thrust + tx * (-y) + ty * x + tz * yaw;
        c[i] = u.clamp(0.0, 1.0) as f32;
    }
    c
}

fn scenario() -> (Scenario, ScenarioSource) {
    let src = ScenarioSource {
        name: "px4 test".into(),
        base_dir: PathBuf::from("."),
    };
    let s = Scenario::from_json(
        r#"{"date":"2026-06-01","vehicles":[{"kind":"multirotor","airframe":"generic_quad"}]}"#,
        &src,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    (s, src)
}

/// Runs the simulation with the bridge for `sim_s` against a peer thread.
fn fly(
    sim_s: f64,
    answers: Answers,
    give_up: Duration,
) -> (
    Result<(), String>,
    mavsitl::bridge::px4::Px4Stats,
    PeerReport,
) {
    let (scenario, src) = scenario();
    let sim = scenario
        .build_simulation(&src)
        .unwrap_or_else(|e| panic!("{e}"));
    let frame = *sim.world().frame();
    let port = Px4Socket::listen("127.0.0.1:0".parse().unwrap_or_else(|e| panic!("{e}")))
        .unwrap_or_else(|e| panic!("{e}"));
    let addr = port.borrow().local_addr().unwrap_or_else(|e| panic!("{e}"));
    let utc0 = 1_780_272_000_000_000; // 2026-06-01T00:00Z
    let mut opts = Px4Options::new(addr.ip(), 0);
    opts.give_up_after = give_up;
    opts.connect_timeout = Some(Duration::from_secs(20));
    opts.utc_epoch_us = utc0;
    let bridge = Px4Bridge::new(opts, port.clone(), frame);
    let steps = (sim_s * 250.0) as u64;
    let peer_thread = std::thread::spawn(move || peer(addr, steps, utc0, answers));
    let mut ls = Lockstep::new(sim);
    ls.attach(0, Box::new(bridge))
        .unwrap_or_else(|e| panic!("{e}"));
    let end = SimTime::from_secs_f64(sim_s);
    let mut result = Ok(());
    while ls.sim().time() < end {
        if let Err(e) = ls.tick(&mut ()) {
            result = Err(e.to_string());
            break;
        }
    }
    let stats = port.borrow().stats();
    drop(ls);
    let rep = peer_thread
        .join()
        .unwrap_or_else(|_| panic!("peer panicked"));
    (result, stats, rep)
}

#[test]
fn lockstep_holds_for_60_s_with_exact_times_and_px4_units() {
    let (result, stats, rep) = fly(60.0, EVERY_STEP, Duration::from_secs(10));
    assert!(result.is_ok(), "{result:?}");
    println!(
        "{stats:?}\n{:?}",
        (
            rep.sensors,
            rep.answered,
            rep.final_alt_m,
            rep.final_tilt_deg
        )
    );
    // Lockstep: every step after boot answered, none missed, times exact.
    assert_eq!(stats.missed, 0, "missed steps");
    assert_eq!(
        rep.bad_step, 0,
        "HIL_SENSOR time must advance by exactly 4000 µs"
    );
    assert_eq!(stats.steps, 15_000);
    // The peer's first answers land while the bridge still free-wheels (a
    // few more on a loaded machine, before the first answer arrives) and its
    // last after the run ended; every other one answered the step it was for.
    let unmatched = rep.answered - stats.answered;
    assert!(
        (2..=8).contains(&unmatched),
        "{unmatched} answers matched no step"
    );
    assert_eq!(stats.stale, 0);
    assert!(stats.lockstep && stats.armed);
    // fields_updated groups complete; mag at 50 Hz and baro at 50 Hz defaults.
    assert_eq!(rep.incomplete_groups, 0);
    assert!(
        rep.mag_msgs > 2900 && rep.baro_msgs > 2900,
        "{} mag, {} baro",
        rep.mag_msgs,
        rep.baro_msgs
    );
    // Units: specific force at rest ≈ −9.81 m/s², pressure in hPa at 488 m, mag in gauss.
    let az = rep.rest_accel_z.iter().sum::<f64>() / rep.rest_accel_z.len() as f64;
    assert!((az + 9.81).abs() < 0.1, "rest accel z {az}");
    let p = rep.pressure_hpa.first().copied().unwrap_or(0.0);
    assert!((950.0..960.0).contains(&p), "pressure {p} hPa at 488 m");
    let m = rep.mag_gauss.iter().sum::<f64>() / rep.mag_gauss.len().max(1) as f64;
    assert!(
        (0.4..0.55).contains(&m),
        "|B| {m} gauss (WMM at Zürich ≈ 0.48)"
    );
    // GPS: delivered exactly its latency (0.1 s) after it was measured.
    assert!(!rep.gps_latency_us.is_empty());
    assert!(
        rep.gps_latency_us.iter().all(|l| *l == 100_000),
        "{:?}",
        &rep.gps_latency_us[..5.min(rep.gps_latency_us.len())]
    );
    // Ground truth at the asked 200 Hz; the loop closed: hovering level at 5 m.
    assert!(
        rep.got_state > 11_000,
        "{} HIL_STATE_QUATERNION",
        rep.got_state
    );
    assert!(
        (rep.final_alt_m - 493.0).abs() < 0.5,
        "altitude {}",
        rep.final_alt_m
    );
    assert!(rep.final_tilt_deg < 3.0, "tilt {}", rep.final_tilt_deg);
}

#[test]
fn a_silent_px4_ends_the_run_with_a_clear_error() {
    let (result, stats, _) = fly(
        30.0,
        Answers {
            silent_after: Some(400),
            ..EVERY_STEP
        },
        Duration::from_millis(1500),
    );
    let e = result.expect_err("the run must stop");
    assert!(e.contains("PX4 stopped answering"), "{e}");
    assert!(stats.missed > 0);
}

/// A PX4 that stops answering but keeps talking (heartbeats, garbage,
/// answers from the future on every step) is as silent as one that says
/// nothing: the run ends within the timeout, not 30 s of misses later.
#[test]
fn a_px4_that_talks_but_never_answers_ends_the_run() {
    let start = Instant::now();
    let (result, stats, _) = fly(
        60.0,
        Answers {
            silent_after: Some(400),
            chatter: true,
            ..EVERY_STEP
        },
        Duration::from_millis(1500),
    );
    let e = result.expect_err("the run must stop");
    assert!(e.contains("PX4 stopped answering"), "{e}");
    assert!(stats.missed > 0);
    // Chatter on every step is counted, not taken for an answer.
    assert!(stats.malformed > 0, "{stats:?}");
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
}

/// `mavsitl px4` as a user runs it, with the peer as PX4: it hovers, PX4
/// restarts (a new connection), the run resumes from the scenario's start.
#[test]
fn cli_resumes_after_a_px4_restart() {
    // Instance 41 → TCP 4601, away from a real PX4 on 4560.
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_mavsitl"))
        .args(["px4", "--instance", "41", "--duration", "12"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let addr: SocketAddr = "127.0.0.1:4601".parse().unwrap_or_else(|e| panic!("{e}"));
    let utc0 = 1_767_225_600_000_000; // the default scenario date, 2026-01-01
                                      // First PX4: 3 s, then it "crashes" (drops the connection).
    let first = peer(addr, 750, utc0, EVERY_STEP);
    assert_eq!(first.bad_step, 0);
    // Second PX4 connects: the harness resets and streams from t = 0 again.
    let second = peer(addr, 3000, utc0, EVERY_STEP);
    let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}\n{stderr}");
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 restart(s)"), "{stdout}");
    assert_eq!(second.bad_step, 0);
    assert!(
        (second.final_alt_m - 493.0).abs() < 1.0,
        "second flight hovers: {}",
        second.final_alt_m
    );
}

/// The UDP variant: the same lockstep with PX4 binding and mavsitl sending.
#[test]
fn udp_variant_holds_lockstep() {
    let (scenario, src) = scenario();
    let sim = scenario
        .build_simulation(&src)
        .unwrap_or_else(|e| panic!("{e}"));
    let frame = *sim.world().frame();
    let px4 = std::net::UdpSocket::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let px4_addr = px4.local_addr().unwrap_or_else(|e| panic!("{e}"));
    let port = Px4Socket::udp(
        "127.0.0.1:0".parse().unwrap_or_else(|e| panic!("{e}")),
        px4_addr,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let utc0 = 1_780_272_000_000_000;
    let mut opts = Px4Options::new(px4_addr.ip(), 0);
    opts.utc_epoch_us = utc0;
    let bridge = Px4Bridge::new(opts, port.clone(), frame);
    let peer_thread = std::thread::spawn(move || peer_udp(px4, 5000, utc0));
    let mut ls = Lockstep::new(sim);
    ls.attach(0, Box::new(bridge))
        .unwrap_or_else(|e| panic!("{e}"));
    while ls.sim().time() < SimTime::from_secs(20) {
        ls.tick(&mut ()).unwrap_or_else(|e| panic!("{e}"));
    }
    let stats = port.borrow().stats();
    drop(ls);
    let rep = peer_thread
        .join()
        .unwrap_or_else(|_| panic!("peer panicked"));
    assert_eq!(stats.missed, 0);
    assert_eq!(rep.bad_step, 0);
    assert!(stats.lockstep && stats.answered > 4000, "{stats:?}");
    assert!(
        (rep.final_alt_m - 493.0).abs() < 1.0,
        "hovers at 5 m: {}",
        rep.final_alt_m
    );
}

/// The PX4 parameter files match the airframes they are for: rotor positions,
/// spin directions and yaw moment ratio from the airframe, hover thrust from
/// its rotor law. A change to an airframe that is not carried into the file
/// fails here.
#[test]
fn firmware_config_matches_the_airframe() {
    use mavsitl::physics::airframes;
    use mavsitl::world::atmosphere::{G0_M_S2, RHO0_KG_M3};
    for name in ["generic_quad", "x500"] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("firmware_configs/px4/{name}.env"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
        let get = |key: &str| -> f64 {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("export PX4_PARAM_{key}=")))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or_else(|| panic!("{name}: {key} missing"))
        };
        let p = airframes::multirotor(name).unwrap_or_else(|| panic!("no {name}"));
        let rotors = p.rotor_geometry();
        assert_eq!(get("CA_ROTOR_COUNT") as usize, rotors.len());
        let km = p.power_coefficient / std::f64::consts::TAU * p.propeller_diameter_m
            / p.thrust_coefficient;
        for (i, (pos, spin)) in rotors.iter().enumerate() {
            assert!(
                (get(&format!("CA_ROTOR{i}_PX")) - pos.x).abs() < 1e-3,
                "{name} rotor {i} x"
            );
            assert!(
                (get(&format!("CA_ROTOR{i}_PY")) - pos.y).abs() < 1e-3,
                "{name} rotor {i} y"
            );
            // PX4: KM > 0 for a CCW rotor; our yaw sign is +1 for CCW.
            let want = km * spin.yaw_sign();
            assert!(
                (get(&format!("CA_ROTOR{i}_KM")) - want).abs() < 5e-4,
                "{name} rotor {i} KM {want}"
            );
        }
        let hover = p.mass_kg * G0_M_S2 / (rotors.len() as f64 * p.max_thrust_n(RHO0_KG_M3));
        assert!(
            (get("MPC_THR_HOVER") - hover).abs() < 0.01,
            "{name} hover {hover}"
        );
    }
}

/// The boats' files drive each hull's actuators as a PX4 rover's: the
/// twin-thruster hulls as the differential rover (output 1 = HIL control 0
/// left = Motor 2 (102), output 2 right = Motor 1 (101), the wheel track the
/// thrusters' spacing); the rudder boat as the Ackermann rover (its rudder
/// channel Servo 1 (201), its thruster Motor 1 (101), the steering limit the
/// rudder's).
/// A shipped `firmware_configs/px4/<name>.env`, read as PX4's start-up
/// reads its exports.
struct EnvFile {
    name: &'static str,
    text: String,
}

impl EnvFile {
    fn read(name: &'static str) -> Self {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("firmware_configs/px4/{name}.env"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
        EnvFile { name, text }
    }

    fn get(&self, key: &str) -> String {
        self.text
            .lines()
            .find_map(|l| l.strip_prefix(&format!("export {key}=")))
            .map(|v| v.trim().to_string())
            .unwrap_or_else(|| panic!("{}: {key} missing", self.name))
    }

    fn num(&self, key: &str) -> f64 {
        self.get(key)
            .parse()
            .unwrap_or_else(|e| panic!("{} {key}: {e}", self.name))
    }

    /// The function of PWM_MAIN_FUNCn, which drives HIL_ACTUATOR_CONTROLS
    /// control n − 1.
    fn func(&self, channel: usize) -> f64 {
        self.num(&format!("PX4_PARAM_PWM_MAIN_FUNC{}", channel + 1))
    }

    /// Runs `simulator_mavlink`, not Gazebo's bridge.
    fn assert_simulator_mavlink(&self) {
        assert_ne!(self.get("PX4_SIMULATOR"), "gz", "{}", self.name);
        assert_eq!(self.num("PX4_PARAM_SIM_GZ_EN"), 0.0, "{}", self.name);
    }
}

#[test]
fn boat_firmware_configs_match_the_hulls() {
    for name in ["usv_twin", "otter_usv", "usv_rudder"] {
        let env = EnvFile::read(name);
        let b = mavsitl::physics::airframes::boat(name).unwrap_or_else(|| panic!("no {name}"));
        env.assert_simulator_mavlink();
        match b.layout {
            BoatLayout::TwinThrusters => {
                assert_eq!(env.get("PX4_SYS_AUTOSTART"), "50000", "{name}");
                assert_eq!(
                    env.func(b.left_channel),
                    102.0,
                    "{name}: left thruster = Motor 2"
                );
                assert_eq!(
                    env.func(b.right_channel),
                    101.0,
                    "{name}: right thruster = Motor 1"
                );
                let track = 2.0 * b.thruster_position_m[1];
                assert!(
                    (env.num("PX4_PARAM_RD_WHEEL_TRACK") - track).abs() < 1e-9,
                    "{name}"
                );
            }
            BoatLayout::ThrottleRudder => {
                assert_eq!(env.get("PX4_SYS_AUTOSTART"), "51000", "{name}");
                assert_eq!(
                    env.func(b.steering_channel),
                    201.0,
                    "{name}: rudder = Servo 1"
                );
                assert_eq!(
                    env.func(b.throttle_channel),
                    101.0,
                    "{name}: thruster = Motor 1"
                );
                let max = env.num("PX4_PARAM_RA_MAX_STR_ANG").to_degrees();
                assert!((max - b.rudder_max_deg).abs() < 0.1, "{name}: {max}°");
            }
        }
    }
}

/// The rovers' files drive each rover's wheels as PX4's rover modules do:
/// the skid-steer Jackal as the differential rover 50000 (its left side
/// Motor 2 (102), its right side Motor 1 (101), RD_WHEEL_TRACK its track),
/// the F1TENTH car as the Ackermann rover 51000 (its steering Servo 1 (201),
/// its motor Motor 1 (101), RA_WHEEL_BASE its wheelbase, RA_MAX_STR_ANG its
/// steering lock).
#[test]
fn rover_firmware_configs_match_the_rovers() {
    let p = mavsitl::physics::airframes::rover("jackal").expect("jackal");
    let env = EnvFile::read("jackal");
    env.assert_simulator_mavlink();
    assert_eq!(env.get("PX4_SYS_AUTOSTART"), "50000");
    assert_eq!(env.func(p.left_channel), 102.0, "left side = Motor 2");
    assert_eq!(env.func(p.right_channel), 101.0, "right side = Motor 1");
    let track = env.num("PX4_PARAM_RD_WHEEL_TRACK");
    assert!((track - p.track_m).abs() < 5e-4, "{track} vs {}", p.track_m);

    let p = mavsitl::physics::airframes::rover("f1tenth").expect("f1tenth");
    let env = EnvFile::read("f1tenth");
    env.assert_simulator_mavlink();
    assert_eq!(env.get("PX4_SYS_AUTOSTART"), "51000");
    assert_eq!(env.func(p.steering_channel), 201.0, "steering = Servo 1");
    assert_eq!(env.func(p.throttle_channel), 101.0, "motor = Motor 1");
    let base = env.num("PX4_PARAM_RA_WHEEL_BASE");
    assert!(
        (base - p.wheelbase_m).abs() < 5e-4,
        "{base} vs {}",
        p.wheelbase_m
    );
    let lock = env.num("PX4_PARAM_RA_MAX_STR_ANG").to_degrees();
    assert!(
        (lock - p.max_steer_deg).abs() < 0.1,
        "{lock}° vs {}°",
        p.max_steer_deg
    );
    let rate = env.num("PX4_PARAM_RA_STR_RATE_LIM");
    assert!(
        (rate - p.steer_rate_deg_s).abs() < 1.0,
        "{rate}°/s vs {}°/s",
        p.steer_rate_deg_s
    );
}

/// A scenario's stick script reaches PX4 as RC_CHANNELS at its rate, each
/// point from its time on; a bad script is refused with the key path.
#[test]
fn rc_stick_script_is_sent_as_rc_channels() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let scen = dir.path().join("rc.json");
    std::fs::write(
        &scen,
        r#"{"vehicles":[{"kind":"multirotor","rc":{"rate_hz":50,"script":[
            {"t_s":0,"channels":[1500,1500,1000,1500]},
            {"t_s":2,"channels":[1500,1500,1600,1500]}]}}]}"#,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_mavsitl"))
        .args(["px4", "--instance", "42", "--duration", "4", "--scenario"])
        .arg(&scen)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let addr: SocketAddr = "127.0.0.1:4602".parse().unwrap_or_else(|e| panic!("{e}"));
    let rep = peer(addr, 1000, 1_767_225_600_000_000, EVERY_STEP);
    let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // 50 Hz for 4 s.
    assert!(
        (195..=201).contains(&rep.rc.len()),
        "{} RC_CHANNELS",
        rep.rc.len()
    );
    assert!(rep.rc.iter().all(|r| r.2 == 4));
    for (t, ch3, _) in &rep.rc {
        let want = if *t < 2000 { 1000 } else { 1600 };
        assert_eq!(*ch3, want, "channel 3 at {t} ms");
    }
    // A script out of order is refused, naming the key.
    std::fs::write(
        &scen,
        r#"{"vehicles":[{"kind":"multirotor","rc":{"script":[
            {"t_s":2,"channels":[1500]},{"t_s":1,"channels":[1500]}]}}]}"#,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_mavsitl"))
        .args(["px4", "--instance", "43", "--duration", "1", "--scenario"])
        .arg(&scen)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(2), "{err}");
    assert!(err.contains("vehicles[0].rc.script[1].t_s"), "{err}");
}

/// A rover publishes its outputs at its own rate (here every third 4 ms step,
/// 83 Hz): the simulation keeps within one of those periods of PX4 instead of
/// waiting out every unanswered step.
#[test]
fn a_px4_answering_every_few_steps_keeps_lockstep_without_misses() {
    let (result, stats, rep) = fly(
        30.0,
        Answers {
            every: 3,
            ..EVERY_STEP
        },
        Duration::from_secs(10),
    );
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(stats.steps, 7_500);
    // Two misses while the bridge learns the gap (waiting for an answer to
    // every step would miss two steps in three), then none.
    assert!(stats.missed <= 2, "missed {}", stats.missed);
    assert!(stats.answered >= 6_400, "answered {}", stats.answered);
    assert_eq!(rep.bad_step, 0);
}

/// A disarmed rover sends nothing at all: the run goes on (at real-time
/// pace) instead of ending with "PX4 stopped answering".
#[test]
fn a_disarmed_silent_px4_does_not_end_the_run() {
    let (result, stats, _) = fly(
        6.0,
        Answers {
            silent_after: Some(BOOT_STEPS + 50),
            armed: false,
            every: 1,
            bogus_at: None,
            chatter: false,
        },
        Duration::from_millis(1500),
    );
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(stats.steps, 1_500);
    assert_eq!(stats.missed, 0);
    assert!(!stats.armed);
}

/// One answer stamped with the end of time (2^64 - 1 µs) must not end the
/// lockstep: it is refused, and every later step still waits for its answer.
#[test]
fn an_answer_from_the_future_does_not_break_lockstep() {
    let (result, stats, rep) = fly(
        20.0,
        Answers {
            bogus_at: Some(BOOT_STEPS + 500),
            ..EVERY_STEP
        },
        Duration::from_secs(10),
    );
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(stats.steps, 5_000);
    assert_eq!(stats.missed, 0);
    // Had the bridge stopped waiting, steps would pile up unanswered in the
    // peer's socket.
    assert_eq!(rep.max_sensors_per_read, 1);
    assert!(stats.malformed >= 1, "the bogus answer is counted");
    assert!(
        rep.final_alt_m > 4.0,
        "the peer still hovers: {}",
        rep.final_alt_m
    );
}

/// A PX4 that connects and then never reads: the send buffer fills, the
/// bridge waits for it (back-pressure, not a lost connection) for
/// `--px4-timeout`, then ends the run saying so — within seconds, not the
/// minutes it took to give up before, waiting on afterwards for a
/// reconnection nobody made.
#[test]
fn a_px4_that_stops_reading_ends_the_run_within_its_timeout() {
    let (scenario, src) = scenario();
    let sim = scenario
        .build_simulation(&src)
        .unwrap_or_else(|e| panic!("{e}"));
    let frame = *sim.world().frame();
    let port = Px4Socket::listen("127.0.0.1:0".parse().unwrap_or_else(|e| panic!("{e}")))
        .unwrap_or_else(|e| panic!("{e}"));
    let addr = port.borrow().local_addr().unwrap_or_else(|e| panic!("{e}"));
    let mut opts = Px4Options::new(addr.ip(), 0);
    opts.give_up_after = Duration::from_secs(2);
    opts.connect_timeout = Some(Duration::from_secs(60));
    let bridge = Px4Bridge::new(opts, port.clone(), frame);
    let (quit_tx, quit_rx) = std::sync::mpsc::channel::<()>();
    let peer = std::thread::spawn(move || {
        let s = std::net::TcpStream::connect(addr).expect("connect");
        // A small receive window, so that the bridge's buffer fills in
        // seconds at 250 steps/s rather than minutes.
        let size: libc::c_int = 2048;
        // SAFETY: setsockopt on a valid socket with a c_int option value.
        unsafe {
            libc::setsockopt(
                std::os::fd::AsRawFd::as_raw_fd(&s),
                libc::SOL_SOCKET,
                libc::SO_RCVBUF,
                std::ptr::addr_of!(size).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
        let _ = quit_rx.recv_timeout(Duration::from_secs(120));
        drop(s);
    });
    let mut ls = Lockstep::new(sim);
    ls.attach(0, Box::new(bridge))
        .unwrap_or_else(|e| panic!("{e}"));
    let start = std::time::Instant::now();
    let mut result = Ok(());
    while ls.sim().time() < SimTime::from_secs(100_000) {
        if let Err(e) = ls.tick(&mut ()) {
            result = Err(e.to_string());
            break;
        }
    }
    let took = start.elapsed();
    let _ = quit_tx.send(());
    let _ = peer.join();
    let e = result.expect_err("the run must stop");
    assert!(e.contains("PX4 stopped reading"), "{e}");
    assert!(took < Duration::from_secs(60), "took {took:?}");
    assert!(port.borrow().stats().backpressure > 0);
}
