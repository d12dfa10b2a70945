//! The ground station mavsitl runs for the firmware it flies, against two
//! peers: `mavsitl serve` (SimpleFlight's endpoint, a PX4-dialect vehicle) and
//! a stand-in that speaks ArduPilot's dialect as its GCS_MAVLink code does
//! (HEARTBEAT as ARDUPILOTMEGA, "PreArm:" STATUSTEXT and the SYS_STATUS
//! pre-arm bit, MISSION_REQUEST answered with MISSION_ITEM_INT, home as item
//! 0, Copter's mode numbers, arming refused until ready, MISSION_START).

#![allow(deprecated)] // MISSION_REQUEST and REQUEST_DATA_STREAM are what ArduPilot uses

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mavlink::dialects::common::*;
use mavsitl::bridge::ground_station::link::{FirmwareAddr, GroundStationHandle, LinkOptions};
use mavsitl::bridge::ground_station::{Firmware, GroundStationConfig, GsEvent, Phase};
use mavsitl::mission::Mission;
use mavsitl::mission_protocol::StoredItem;
use mavsitl::scenario::VehicleKind;
use mavsitl::time::SimTime;
use mavsitl::wire::{self, Encoder, Incoming, Outgoing};

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

fn free_udp_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .and_then(|s| s.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

fn plan(name: &str) -> (Vec<StoredItem>, (i32, i32, f32)) {
    let m = Mission::load(&repo(name)).expect("plan");
    let h = m.home.expect("home");
    (
        m.items.iter().map(StoredItem::from_mission_item).collect(),
        (
            (h.lat_deg * 1e7).round() as i32,
            (h.lon_deg * 1e7).round() as i32,
            h.alt_m as f32,
        ),
    )
}

/// A ground station for `plan_file` on `firmware`.
fn config(
    firmware: Firmware,
    kind: VehicleKind,
    plan_file: &str,
    ready_timeout_s: f64,
) -> GroundStationConfig {
    let (mission, home) = plan(plan_file);
    GroundStationConfig {
        firmware,
        kind,
        mission,
        home,
        ready_timeout: SimTime::from_secs_f64(ready_timeout_s),
    }
}

/// Runs a ground station until it finishes or fails (or `wall` runs out),
/// publishing sim time as `speedup` × wall time.
fn fly(
    cfg: GroundStationConfig,
    firmware: FirmwareAddr,
    speedup: f64,
    wall: Duration,
) -> (Phase, Vec<(SimTime, GsEvent)>, (usize, usize)) {
    let clock = Arc::new(AtomicU64::new(0));
    let mut gs = GroundStationHandle::spawn(
        cfg,
        LinkOptions {
            firmware,
            forward: None,
            sim_clock: clock.clone(),
            stop_run: None,
        },
    )
    .expect("ground station");
    let start = Instant::now();
    let mut events = Vec::new();
    let phase = loop {
        clock.store(
            (start.elapsed().as_secs_f64() * speedup * 1e6) as u64,
            Ordering::Relaxed,
        );
        events.extend(gs.take_events());
        let p = gs.phase();
        if matches!(p, Phase::Finished | Phase::Failed(_)) || start.elapsed() > wall {
            break p;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    events.extend(gs.take_events());
    let progress = gs.progress();
    gs.stop();
    (phase, events, progress)
}

fn kinds(events: &[(SimTime, GsEvent)]) -> Vec<String> {
    events
        .iter()
        .filter(|(_, e)| !matches!(e, GsEvent::StatusText { .. }))
        .map(|(_, e)| match e {
            GsEvent::Mode(m) => format!("mode {m}"),
            GsEvent::ItemReached(i) => format!("reached {i}"),
            GsEvent::ItemCurrent(i) => format!("current {i}"),
            e => e.kind().to_string(),
        })
        .collect()
}

/// A running `mavsitl serve` and the port it is bound to.
struct Serve(Child, u16);

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(vehicle: &str, gcs_port: u16) -> Serve {
    let bound = free_udp_port();
    let child = Command::new(env!("CARGO_BIN_EXE_mavsitl"))
        .args([
            "serve",
            "--vehicle",
            vehicle,
            "--speedup",
            "20",
            "--gcs-bind",
            &format!("127.0.0.1:{bound}"),
            "--gcs-out",
            &format!("127.0.0.1:{gcs_port}"),
            "--home",
            if vehicle == "boat" {
                "47.3544,8.5497,406"
            } else {
                "47.397742,8.545594,488"
            },
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start mavsitl serve");
    Serve(child, bound)
}

/// QGroundControl's job on a PX4-dialect vehicle: upload quad_square, arm,
/// AUTO.MISSION, every item reached, landed and disarmed.
#[test]
fn flies_the_quad_square_on_a_px4_dialect_vehicle() {
    // Talking first to the vehicle's own port, as mavsitl does to PX4's
    // 14580 + N: the vehicle answers where it hears from.
    let vehicle = serve("quad", free_udp_port());
    let cfg = config(
        Firmware::Px4,
        VehicleKind::Multirotor,
        "missions/quad_square.plan",
        120.0,
    );
    let n = cfg.mission.len();
    let (phase, events, (reached, nav)) = fly(
        cfg,
        FirmwareAddr::UdpTo(SocketAddr::from(([127, 0, 0, 1], vehicle.1))),
        20.0,
        Duration::from_secs(60),
    );
    let k = kinds(&events);
    assert_eq!(phase, Phase::Finished, "{k:?}");
    assert_eq!((reached, nav), (6, 6), "{k:?}");
    let at = |s: &str| k.iter().position(|e| e == s).unwrap_or(usize::MAX);
    assert!(at("connected") < at("mission_uploaded"), "{k:?}");
    assert!(at("mission_uploaded") < at("armed"), "{k:?}");
    // Arming and the mode switch may show in one HEARTBEAT: both before the
    // first item.
    assert!(at("armed") < at("current 0"), "{k:?}");
    assert!(at("mode AUTO.MISSION") < at("current 0"), "{k:?}");
    for i in 0..n {
        assert!(
            at(&format!("reached {i}")) < at("disarmed"),
            "item {i}: {k:?}"
        );
    }
    assert!(at("disarmed") < usize::MAX && at("mission_finished") < usize::MAX);
    // The firmware's identification, asked for on connecting (the served
    // vehicle reports PX4 1.15.0 and mavsitl's version as its build).
    let version: Vec<&String> = events
        .iter()
        .filter_map(|(_, e)| match e {
            GsEvent::Version(v) => Some(v),
            _ => None,
        })
        .collect();
    let want = format!("PX4 1.15.0 official, git {}", env!("CARGO_PKG_VERSION"));
    assert_eq!(version, [&want], "{k:?}");
}

/// A boat's mission is over when its last waypoint is reached (it stays armed).
#[test]
fn flies_the_boat_box_and_ends_at_the_last_waypoint() {
    let port = free_udp_port();
    let _vehicle = serve("boat", port);
    let cfg = config(
        Firmware::Px4,
        VehicleKind::Boat,
        "missions/boat_box.plan",
        120.0,
    );
    let (phase, events, progress) = fly(
        cfg,
        FirmwareAddr::Udp(SocketAddr::from(([127, 0, 0, 1], port))),
        20.0,
        Duration::from_secs(60),
    );
    let k = kinds(&events);
    assert_eq!(phase, Phase::Finished, "{k:?}");
    assert_eq!(progress, (4, 4), "{k:?}");
    assert!(!k.contains(&"disarmed".to_string()), "{k:?}");
}

/// A vehicle of the wrong kind is refused before anything is uploaded.
#[test]
fn a_vehicle_of_the_wrong_kind_is_refused() {
    let port = free_udp_port();
    let _vehicle = serve("boat", port);
    let cfg = config(
        Firmware::Px4,
        VehicleKind::Multirotor,
        "missions/quad_square.plan",
        120.0,
    );
    let (phase, events, _) = fly(
        cfg,
        FirmwareAddr::Udp(SocketAddr::from(([127, 0, 0, 1], port))),
        20.0,
        Duration::from_secs(20),
    );
    match phase {
        Phase::Failed(why) => assert!(
            why.contains("MAV_TYPE_SURFACE_BOAT") && why.contains("wrong firmware binary"),
            "{why}"
        ),
        p => panic!("{p:?} {:?}", kinds(&events)),
    }
    assert!(!kinds(&events).contains(&"mission_uploaded".into()));
}

/// What the ArduPilot stand-in saw.
#[derive(Debug, Default)]
struct Seen {
    items: Vec<(u16, u16, u8, i32, i32, f32)>,
    /// param1..4 of each item accepted.
    params: Vec<[f32; 4]>,
    /// Uploads to answer with MAV_MISSION_ERROR at their count (as PX4
    /// does when its dataman times out).
    refuse_uploads: u32,
    /// MISSION_COUNTs received.
    uploads: u32,
    float_items: usize,
    arm_attempts: Vec<bool>,
    commands: Vec<String>,
    data_stream_requested: bool,
}

/// ArduPilot's MAVLink side as a ground station meets it (GCS_MAVLINK and
/// MissionItemProtocol): 1 Hz-ish HEARTBEAT from system 1 component 1 as
/// ARDUPILOTMEGA, "PreArm:" STATUSTEXT and an unhealthy pre-arm bit until
/// `ready_after`, MISSION_REQUEST (float form, as ArduPilot sends) for each
/// item, the final MISSION_ACK, Copter's mode numbers, ARM refused while not
/// ready, MISSION_START only from GUIDED armed, then the mission flown one
/// item every 100 ms: MISSION_CURRENT and MISSION_ITEM_REACHED (never for
/// the final RTL), landing and disarming.
fn ardupilot_standin(
    listener: TcpListener,
    mavtype: MavType,
    ready_after: Duration,
    seen: Arc<Mutex<Seen>>,
    quit: Arc<AtomicBool>,
) {
    let Ok((mut s, _)) = listener.accept() else {
        return;
    };
    s.set_read_timeout(Some(Duration::from_millis(10)))
        .expect("timeout");
    let start = Instant::now();
    let mut enc = Encoder::new(1, 1, None);
    let mut send = |s: &mut TcpStream, m: MavMessage| {
        let mut b = Vec::new();
        enc.encode(&Outgoing::Msg(m), &mut b);
        let _ = s.write_all(&b);
    };
    let (mut mode, mut armed) = (0u32, false);
    let mut expected: Option<u16> = None;
    let mut count = 0u16;
    let mut flying: Option<(Instant, u16)> = None;
    let mut last_hb = None::<Instant>;
    let mut buf = Vec::new();
    while !quit.load(Ordering::Relaxed) {
        let ready = start.elapsed() >= ready_after;
        if last_hb.is_none_or(|t| t.elapsed() >= Duration::from_millis(100)) {
            last_hb = Some(Instant::now());
            let base = if armed {
                MavModeFlag::MAV_MODE_FLAG_SAFETY_ARMED
                    | MavModeFlag::MAV_MODE_FLAG_CUSTOM_MODE_ENABLED
            } else {
                MavModeFlag::MAV_MODE_FLAG_CUSTOM_MODE_ENABLED
            };
            send(
                &mut s,
                MavMessage::HEARTBEAT(HEARTBEAT_DATA {
                    custom_mode: mode,
                    mavtype,
                    autopilot: MavAutopilot::MAV_AUTOPILOT_ARDUPILOTMEGA,
                    base_mode: base,
                    system_status: MavState::MAV_STATE_STANDBY,
                    mavlink_version: 3,
                }),
            );
            let bit = MavSysStatusSensor::MAV_SYS_STATUS_PREARM_CHECK;
            let st = SYS_STATUS_DATA {
                onboard_control_sensors_present: bit,
                onboard_control_sensors_enabled: bit,
                onboard_control_sensors_health: if ready {
                    bit
                } else {
                    MavSysStatusSensor::empty()
                },
                ..Default::default()
            };
            send(&mut s, MavMessage::SYS_STATUS(st));
            let gps = GPS_RAW_INT_DATA {
                fix_type: GpsFixType::GPS_FIX_TYPE_3D_FIX,
                ..Default::default()
            };
            send(&mut s, MavMessage::GPS_RAW_INT(gps));
            if !ready {
                send(
                    &mut s,
                    MavMessage::STATUSTEXT(STATUSTEXT_DATA {
                        severity: MavSeverity::MAV_SEVERITY_CRITICAL,
                        text: "PreArm: Need Position Estimate".into(),
                        id: 0,
                        chunk_seq: 0,
                    }),
                );
            }
        }
        if let Some((t, seq)) = flying {
            if t.elapsed() >= Duration::from_millis(100) {
                // seq counts ArduPilot's list: home is 0, the plan's items 1..
                send(
                    &mut s,
                    MavMessage::MISSION_CURRENT(MISSION_CURRENT_DATA {
                        seq,
                        total: count,
                        ..Default::default()
                    }),
                );
                if seq + 1 < count {
                    send(
                        &mut s,
                        MavMessage::MISSION_ITEM_REACHED(MISSION_ITEM_REACHED_DATA { seq }),
                    );
                    flying = Some((Instant::now(), seq + 1));
                } else {
                    // The final RTL: land and disarm, no "reached".
                    mode = 6;
                    armed = false;
                    flying = None;
                }
            }
        }
        let mut chunk = [0u8; 2048];
        match s.read(&mut chunk) {
            Ok(0) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(_) => {}
        }
        let mut incoming = Vec::new();
        wire::stream_frames(&mut buf, |raw| {
            if let Ok(m) = wire::decode(raw) {
                incoming.push(m);
            }
        });
        for m in incoming {
            let mut seen = seen.lock().expect("lock");
            let ack = |cmd: u16, ok: bool| {
                MavMessage::COMMAND_ACK(COMMAND_ACK_DATA {
                    command: num_traits::FromPrimitive::from_u16(cmd).expect("known"),
                    result: if ok {
                        MavResult::MAV_RESULT_ACCEPTED
                    } else {
                        MavResult::MAV_RESULT_FAILED
                    },
                    ..Default::default()
                })
            };
            match m {
                Incoming::Msg(MavMessage::MISSION_COUNT(c)) => {
                    seen.uploads += 1;
                    if seen.refuse_uploads > 0 {
                        seen.refuse_uploads -= 1;
                        send(
                            &mut s,
                            MavMessage::MISSION_ACK(MISSION_ACK_DATA {
                                target_system: 255,
                                target_component: 190,
                                mavtype: MavMissionResult::MAV_MISSION_ERROR,
                                mission_type: MavMissionType::MAV_MISSION_TYPE_MISSION,
                                opaque_id: 0,
                            }),
                        );
                        continue;
                    }
                    count = c.count;
                    seen.items.clear();
                    seen.params.clear();
                    expected = Some(0);
                    send(
                        &mut s,
                        MavMessage::MISSION_REQUEST(MISSION_REQUEST_DATA {
                            seq: 0,
                            target_system: 255,
                            target_component: 190,
                            mission_type: MavMissionType::MAV_MISSION_TYPE_MISSION,
                        }),
                    );
                }
                Incoming::Msg(MavMessage::REQUEST_DATA_STREAM(_)) => {
                    seen.data_stream_requested = true
                }
                Incoming::MissionItem(it) if !it.is_int => seen.float_items += 1,
                Incoming::MissionItem(it) if Some(it.seq) == expected => {
                    // AP_Mission::sanity_check_params: NaN only in param 4 of
                    // NAV_WAYPOINT, LOITER_UNLIM, LAND, TAKEOFF, VTOL_TAKEOFF
                    // (and 3-4 of VTOL_LAND); inf nowhere.
                    let nan_ok: &[usize] = match it.command {
                        16 | 17 | 21 | 22 | 84 => &[3],
                        85 => &[2, 3],
                        _ => &[],
                    };
                    let bad =
                        it.params.iter().enumerate().position(|(i, p)| {
                            p.is_infinite() || (p.is_nan() && !nan_ok.contains(&i))
                        });
                    if let Some(i) = bad {
                        let result = [
                            MavMissionResult::MAV_MISSION_INVALID_PARAM1,
                            MavMissionResult::MAV_MISSION_INVALID_PARAM2,
                            MavMissionResult::MAV_MISSION_INVALID_PARAM3,
                            MavMissionResult::MAV_MISSION_INVALID_PARAM4,
                        ][i];
                        expected = None;
                        send(
                            &mut s,
                            MavMessage::MISSION_ACK(MISSION_ACK_DATA {
                                target_system: 255,
                                target_component: 190,
                                mavtype: result,
                                mission_type: MavMissionType::MAV_MISSION_TYPE_MISSION,
                                opaque_id: 0,
                            }),
                        );
                        continue;
                    }
                    seen.params.push(it.params);
                    seen.items
                        .push((it.seq, it.command, it.frame, it.x as i32, it.y as i32, it.z));
                    let next = it.seq + 1;
                    if next < count {
                        expected = Some(next);
                        send(
                            &mut s,
                            MavMessage::MISSION_REQUEST(MISSION_REQUEST_DATA {
                                seq: next,
                                target_system: 255,
                                target_component: 190,
                                mission_type: MavMissionType::MAV_MISSION_TYPE_MISSION,
                            }),
                        );
                    } else {
                        expected = None;
                        send(
                            &mut s,
                            MavMessage::MISSION_ACK(MISSION_ACK_DATA {
                                target_system: 255,
                                target_component: 190,
                                mavtype: MavMissionResult::MAV_MISSION_ACCEPTED,
                                mission_type: MavMissionType::MAV_MISSION_TYPE_MISSION,
                                opaque_id: 0,
                            }),
                        );
                    }
                }
                Incoming::Command(c) => {
                    seen.commands.push(format!("{} {}", c.command, c.params[1]));
                    let reply = match c.command {
                        511 => ack(511, true),
                        176 => {
                            mode = c.params[1] as u32;
                            ack(176, true)
                        }
                        400 => {
                            seen.arm_attempts.push(ready);
                            if !ready {
                                send(
                                    &mut s,
                                    MavMessage::STATUSTEXT(STATUSTEXT_DATA {
                                        severity: MavSeverity::MAV_SEVERITY_CRITICAL,
                                        text: "Arm: Need Position Estimate".into(),
                                        id: 0,
                                        chunk_seq: 0,
                                    }),
                                );
                            }
                            armed = ready;
                            ack(400, ready)
                        }
                        300 => {
                            let ok = armed && mode == 4 && count > 1;
                            if ok {
                                mode = 3;
                                flying = Some((Instant::now(), 1));
                            }
                            ack(300, ok)
                        }
                        other => ack(other, false),
                    };
                    send(&mut s, reply);
                }
                _ => {}
            }
        }
    }
}

fn standin(
    mavtype: MavType,
    ready_after: Duration,
) -> (SocketAddr, Arc<Mutex<Seen>>, Arc<AtomicBool>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let seen = Arc::new(Mutex::new(Seen::default()));
    let quit = Arc::new(AtomicBool::new(false));
    let (s, q) = (seen.clone(), quit.clone());
    std::thread::spawn(move || ardupilot_standin(listener, mavtype, ready_after, s, q));
    (addr, seen, quit)
}

#[test]
fn flies_an_ardupilot_dialect_copter_through_its_handshakes() {
    let (addr, seen, quit) = standin(MavType::MAV_TYPE_QUADROTOR, Duration::from_millis(1500));
    let cfg = config(
        Firmware::ArduCopter,
        VehicleKind::Multirotor,
        "missions/quad_square.plan",
        30.0,
    );
    let mission = cfg.mission.clone();
    let home = cfg.home;
    let (phase, events, progress) = fly(cfg, FirmwareAddr::Tcp(addr), 1.0, Duration::from_secs(30));
    quit.store(true, Ordering::Relaxed);
    let k = kinds(&events);
    assert_eq!(phase, Phase::Finished, "{k:?}");
    assert_eq!(progress, (6, 6), "{k:?}");
    let seen = seen.lock().expect("lock");
    // Home first, then the plan bit for bit, all in the int form.
    assert_eq!(seen.float_items, 0);
    assert_eq!(seen.items.len(), mission.len() + 1);
    assert_eq!(seen.items[0], (0, 16, 0, home.0, home.1, home.2));
    for (got, want) in seen.items[1..].iter().zip(&mission) {
        assert_eq!(
            (got.1, got.2, got.3, got.4, got.5.to_bits()),
            (want.command, want.frame, want.x, want.y, want.z.to_bits())
        );
    }
    assert!(seen.data_stream_requested);
    // No arming attempt while the pre-arm bit said no.
    assert!(
        !seen.arm_attempts.is_empty() && seen.arm_attempts.iter().all(|r| *r),
        "{:?}",
        seen.arm_attempts
    );
    // GUIDED, then ARM, then MISSION_START.
    let cmds: Vec<&str> = seen
        .commands
        .iter()
        .filter(|c| !c.starts_with("511") && !c.starts_with("512"))
        .map(String::as_str)
        .collect();
    assert_eq!(cmds, ["176 4", "400 0", "300 0"], "{cmds:?}");
    // The build is asked for with MAV_CMD_REQUEST_MESSAGE.
    assert!(
        seen.commands.iter().any(|c| c.starts_with("512")),
        "{:?}",
        seen.commands
    );
    let at = |s: &str| k.iter().position(|e| e == s).unwrap_or(usize::MAX);
    assert!(
        at("armed") < at("current 0") && at("mode AUTO") < at("current 0"),
        "{k:?}"
    );
    assert!(
        at("mode RTL") < at("disarmed") && at("disarmed") < at("mission_finished"),
        "{k:?}"
    );
    // The pre-arm messages reached the record.
    assert!(events.iter().any(|(_, e)| matches!(e,
        GsEvent::StatusText { text, .. } if text == "PreArm: Need Position Estimate")));
}

#[test]
fn a_firmware_never_ready_fails_with_its_last_prearm_message() {
    let (addr, seen, quit) = standin(MavType::MAV_TYPE_QUADROTOR, Duration::from_secs(3600));
    let cfg = config(
        Firmware::ArduCopter,
        VehicleKind::Multirotor,
        "missions/quad_square.plan",
        2.0,
    );
    let (phase, _, _) = fly(cfg, FirmwareAddr::Tcp(addr), 1.0, Duration::from_secs(20));
    quit.store(true, Ordering::Relaxed);
    match phase {
        Phase::Failed(why) => assert_eq!(
            why,
            "ArduPilot was not ready to fly within --ready-timeout 2 s: ArduPilot did not arm; \
             its last message: \"PreArm: Need Position Estimate\""
        ),
        p => panic!("{p:?}"),
    }
    assert!(seen.lock().expect("lock").arm_attempts.is_empty());
}

#[test]
fn an_ardupilot_binary_of_the_wrong_vehicle_is_named() {
    let (addr, _seen, quit) = standin(MavType::MAV_TYPE_GROUND_ROVER, Duration::ZERO);
    let cfg = config(
        Firmware::ArduCopter,
        VehicleKind::Multirotor,
        "missions/quad_square.plan",
        10.0,
    );
    let (phase, _, _) = fly(cfg, FirmwareAddr::Tcp(addr), 1.0, Duration::from_secs(10));
    quit.store(true, Ordering::Relaxed);
    assert_eq!(
        phase,
        Phase::Failed(
            "ArduPilot reports a MAV_TYPE_GROUND_ROVER, but the simulated vehicle is a multirotor: \
             wrong firmware binary or airframe"
                .into()
        )
    );
}

/// With a forward address the firmware's frames are relayed there, and what
/// comes back is relayed to the firmware: a ground station behind the relay
/// lists the vehicle's parameters while mavsitl flies it.
#[test]
fn the_relay_carries_both_ways() {
    let port = free_udp_port();
    let _vehicle = serve("quad", port);
    let watcher = UdpSocket::bind("127.0.0.1:0").expect("watcher");
    watcher
        .set_read_timeout(Some(Duration::from_millis(200)))
        .expect("timeout");
    let (mission, home) = plan("missions/quad_square.plan");
    let clock = Arc::new(AtomicU64::new(0));
    let mut gs = GroundStationHandle::spawn(
        GroundStationConfig {
            firmware: Firmware::Px4,
            kind: VehicleKind::Multirotor,
            mission,
            home,
            ready_timeout: SimTime::from_secs_f64(600.0),
        },
        LinkOptions {
            firmware: FirmwareAddr::Udp(SocketAddr::from(([127, 0, 0, 1], port))),
            forward: Some(watcher.local_addr().expect("addr")),
            sim_clock: clock,
            stop_run: None,
        },
    )
    .expect("ground station");
    let mut enc = Encoder::new(246, 190, None);
    let mut heartbeats = 0;
    let mut params = 0;
    let mut relay: Option<SocketAddr> = None;
    let start = Instant::now();
    let mut buf = [0u8; 65536];
    while start.elapsed() < Duration::from_secs(20) && (params < 10 || heartbeats == 0) {
        let Ok((n, from)) = watcher.recv_from(&mut buf) else {
            continue;
        };
        if relay.is_none() {
            relay = Some(from);
            let mut req = Vec::new();
            enc.encode(
                &Outgoing::Msg(MavMessage::PARAM_REQUEST_LIST(PARAM_REQUEST_LIST_DATA {
                    target_system: 1,
                    target_component: 1,
                })),
                &mut req,
            );
            watcher.send_to(&req, from).expect("send");
        }
        wire::frames(&buf[..n], None, |raw| match wire::decode(raw) {
            Ok(Incoming::Msg(MavMessage::HEARTBEAT(h)))
                if h.autopilot == MavAutopilot::MAV_AUTOPILOT_PX4 =>
            {
                heartbeats += 1
            }
            Ok(Incoming::Msg(MavMessage::PARAM_VALUE(_))) => params += 1,
            _ => {}
        });
    }
    gs.stop();
    assert!(heartbeats >= 1, "the vehicle's heartbeats reach the relay");
    assert!(
        params >= 10,
        "{params} PARAM_VALUE answered through the relay"
    );
}

/// QGroundControl writes `null` (NaN) for parameters it leaves alone;
/// ArduPilot refuses NaN wherever `AP_Mission::sanity_check_params` does
/// not allow it (the stand-in answers MAV_MISSION_INVALID_PARAMn, as
/// ArduPilot does). Uploaded in ArduPilot's dialect, those become 0 and the
/// mission flies; NAV_WAYPOINT's param 4 (yaw), where ArduPilot takes NaN,
/// stays NaN.
#[test]
fn a_plan_with_qgroundcontrols_nulls_uploads_to_ardupilot() {
    let tmp = tempfile::tempdir().expect("tmp");
    let mut doc: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo("missions/quad_square.plan")).expect("plan"),
    )
    .expect("json");
    let item = |command: u16, params: serde_json::Value, id: u32| {
        serde_json::json!({"autoContinue": true, "command": command, "doJumpId": id,
            "frame": 3, "params": params, "type": "SimpleItem"})
    };
    let (lat, lon) = (47.3979, 8.5456);
    doc["mission"]["items"] = serde_json::json!([
        item(22, serde_json::json!([0, 0, 0, null, lat, lon, 20]), 1),
        item(16, serde_json::json!([0, 0, 0, null, lat, lon, 20]), 2),
        item(19, serde_json::json!([2, 0, 0, null, lat, lon, 20]), 3),
        item(178, serde_json::json!([1, 3, null, null, 0, 0, 0]), 4),
        item(16, serde_json::json!([0, 0, 0, null, 47.3978, lon, 20]), 5),
        item(20, serde_json::json!([null, null, null, null, 0, 0, 0]), 6),
    ]);
    let path = tmp.path().join("nulls.plan");
    std::fs::write(&path, doc.to_string()).expect("write");
    let (addr, seen, quit) = standin(MavType::MAV_TYPE_QUADROTOR, Duration::from_millis(200));
    let cfg = config(
        Firmware::ArduCopter,
        VehicleKind::Multirotor,
        path.to_str().expect("utf8"),
        30.0,
    );
    let (phase, events, _) = fly(cfg, FirmwareAddr::Tcp(addr), 1.0, Duration::from_secs(30));
    quit.store(true, Ordering::Relaxed);
    assert_eq!(phase, Phase::Finished, "{:?}", kinds(&events));
    let seen = seen.lock().expect("lock");
    // Home, then the six items.
    assert_eq!(seen.params.len(), 7);
    let p = &seen.params;
    assert!(p[2][3].is_nan(), "waypoint yaw stays NaN: {:?}", p[2]);
    assert_eq!(p[3], [2.0, 0.0, 0.0, 0.0], "loiter time");
    assert_eq!(p[4], [1.0, 3.0, 0.0, 0.0], "change speed");
    assert_eq!(p[6], [0.0; 4], "return to launch");
    // PX4 takes the plan as written.
    let (params, changed) = Firmware::Px4.mission_params(19, [2.0, 0.0, 0.0, f32::NAN]);
    assert!(params[3].is_nan() && changed.is_empty());
    let (_, changed) = Firmware::ArduRover.mission_params(20, [f32::NAN; 4]);
    assert_eq!(changed, [0, 1, 2, 3]);
}

/// A firmware that answers an upload with MAV_MISSION_ERROR (PX4 does when
/// its dataman thread misses its deadline on a loaded machine) gets the
/// upload again, up to three times; the record says at which attempt it
/// was accepted. Three refusals fail the flight, saying so.
#[test]
fn an_upload_refused_with_mission_error_is_tried_again() {
    for (refusals, finished) in [(2u32, true), (3, false)] {
        let (addr, seen, quit) = standin(MavType::MAV_TYPE_QUADROTOR, Duration::from_millis(200));
        seen.lock().expect("lock").refuse_uploads = refusals;
        let cfg = config(
            Firmware::ArduCopter,
            VehicleKind::Multirotor,
            "missions/quad_square.plan",
            30.0,
        );
        let (phase, events, _) = fly(cfg, FirmwareAddr::Tcp(addr), 1.0, Duration::from_secs(30));
        quit.store(true, Ordering::Relaxed);
        let uploads = seen.lock().expect("lock").uploads;
        if finished {
            assert_eq!(phase, Phase::Finished, "{:?}", kinds(&events));
            assert_eq!(uploads, 3);
            let detail = events
                .iter()
                .find_map(|(_, e)| matches!(e, GsEvent::Uploaded { .. }).then(|| e.detail()))
                .expect("uploaded");
            assert_eq!(detail, "6 items, at attempt 3 (MAV_MISSION_ERROR before)");
        } else {
            assert_eq!(uploads, 3);
            match phase {
                Phase::Failed(why) => assert!(
                    why.contains("MAV_MISSION_ERROR") && why.contains("after 3 attempts"),
                    "{why}"
                ),
                p => panic!("{p:?}"),
            }
        }
    }
}
