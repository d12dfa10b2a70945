//! The GCS endpoint in process, on a simulated flight: health bits follow the
//! simulated sensors, arming is refused with the pre-arm failure as the
//! reason, and a served quad takes off, holds, returns and disarms on its own
//! when driven by commands — the same sequence QGroundControl's Fly view sends.

use std::path::PathBuf;
use std::time::Duration;

use mavlink::dialects::common::{MavMessage, MavResult, MavSysStatusSensor};
use mavsitl_core::time::SimTime;
use mavsitl_mavlink::mission::Mission;
use mavsitl_mavlink::wire::{CommandIn, Incoming, Outgoing};
use mavsitl_run::setup::{self, Flight};
use mavsitl_sim::scenario::{Scenario, ScenarioSource};
use mavsitl_simpleflight::gcs::Endpoint;

fn flight(scenario_json: &str) -> (Flight, Endpoint) {
    let src = ScenarioSource {
        name: "test".into(),
        base_dir: PathBuf::from("."),
    };
    let scenario = Scenario::from_json(scenario_json, &src).unwrap_or_else(|e| panic!("{e}"));
    let mission =
        Mission::parse("QGC WPL 110\n", "empty.waypoints").unwrap_or_else(|e| panic!("{e}"));
    let f = setup::flight(&mission, "empty", &scenario, &src, None, false)
        .unwrap_or_else(|e| panic!("{e}"));
    let ep = f.endpoint(None);
    (f, ep)
}

/// Runs until `t` s, polling the endpoint every 4 ms; returns what it sent.
fn run_to(f: &mut Flight, ep: &mut Endpoint, t: f64) -> Vec<Outgoing> {
    let mut out = Vec::new();
    let end = SimTime::from_secs_f64(t);
    while f.lockstep.sim().time() < end {
        f.lockstep.tick(&mut ()).unwrap_or_else(|e| panic!("{e}"));
        if f.lockstep.sim().tick().is_multiple_of(4) {
            let now = f.lockstep.sim().time();
            ep.poll(now, Duration::from_micros(now.as_micros()), &mut out);
        }
    }
    out
}

fn command(f: &Flight, ep: &mut Endpoint, command: u16, params: [f32; 7]) -> (MavResult, String) {
    command_in(f, ep, command, params, None)
}

/// As [`command`], as a COMMAND_INT in `int_frame` when given (x, y in
/// degE7).
fn command_in(
    f: &Flight,
    ep: &mut Endpoint,
    command: u16,
    params: [f32; 7],
    int_frame: Option<u8>,
) -> (MavResult, String) {
    let mut out = Vec::new();
    let now = f.lockstep.sim().time();
    ep.handle(
        now,
        Duration::from_micros(now.as_micros()),
        (255, 190),
        Incoming::Command(CommandIn {
            command,
            params: [params[0], params[1], params[2], params[3]],
            x: params[4] as f64,
            y: params[5] as f64,
            z: params[6],
            target_system: 1,
            target_component: 1,
            confirmation: 0,
            int_frame,
        }),
        &mut out,
    );
    let mut result = None;
    let mut text = String::new();
    for o in out {
        match o {
            Outgoing::Msg(MavMessage::COMMAND_ACK(a)) => result = Some(a.result),
            Outgoing::Msg(MavMessage::STATUSTEXT(t)) => {
                text = t
                    .text
                    .to_str()
                    .unwrap_or("")
                    .trim_end_matches('\0')
                    .to_string()
            }
            _ => {}
        }
    }
    (
        result.unwrap_or_else(|| panic!("no ACK for {command}")),
        text,
    )
}

fn last_sys_status(out: &[Outgoing]) -> (u32, u32) {
    out.iter()
        .rev()
        .find_map(|o| match o {
            Outgoing::Msg(MavMessage::SYS_STATUS(s)) => Some((
                s.onboard_control_sensors_present.bits(),
                s.onboard_control_sensors_health.bits(),
            )),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no SYS_STATUS"))
}

const GPS: u32 = MavSysStatusSensor::MAV_SYS_STATUS_SENSOR_GPS.bits();
const PREARM: u32 = MavSysStatusSensor::MAV_SYS_STATUS_PREARM_CHECK.bits();
const GYRO: u32 = MavSysStatusSensor::MAV_SYS_STATUS_SENSOR_3D_GYRO.bits();

#[test]
fn without_gps_the_health_bit_is_clear_and_arming_is_refused_with_the_reason() {
    let (mut f, mut ep) =
        flight(r#"{"vehicles":[{"kind":"multirotor","sensors":{"gps":{"enabled":false}}}]}"#);
    let out = run_to(&mut f, &mut ep, 15.0);
    let (present, health) = last_sys_status(&out);
    assert!(
        present & GPS != 0 && health & GPS == 0,
        "GPS present but unhealthy"
    );
    assert!(health & GYRO != 0, "the IMU is healthy");
    assert!(health & PREARM == 0, "pre-arm must fail without GPS");
    let (r, text) = command(&f, &mut ep, 400, [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    assert_eq!(r, MavResult::MAV_RESULT_DENIED);
    assert!(text.contains("GPS"), "refusal says why: {text}");
    // Forced arming is accepted (PX4's 21196).
    let (r, _) = command(&f, &mut ep, 400, [1.0, 21196.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    assert_eq!(r, MavResult::MAV_RESULT_ACCEPTED);
    run_to(&mut f, &mut ep, 15.1);
    assert!(f.status.borrow().armed);
}

#[test]
fn takeoff_then_arm_climbs_holds_returns_and_disarms() {
    let (mut f, mut ep) = flight(r#"{"vehicles":[{"kind":"multirotor"}]}"#);
    let out = run_to(&mut f, &mut ep, 30.0);
    let (_, health) = last_sys_status(&out);
    assert!(
        health & PREARM != 0 && health & GPS != 0,
        "ready after 30 s: {:?} {health:#x}",
        f.status.borrow().prearm_failure
    );
    // QGroundControl: takeoff with an AMSL altitude, then arm.
    let home_amsl = 488.0;
    let (r, _) = command(
        &f,
        &mut ep,
        22,
        [
            0.0,
            0.0,
            0.0,
            f32::NAN,
            f32::NAN,
            f32::NAN,
            home_amsl + 12.0,
        ],
    );
    assert_eq!(r, MavResult::MAV_RESULT_ACCEPTED);
    let (r, _) = command(&f, &mut ep, 400, [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    assert_eq!(r, MavResult::MAV_RESULT_ACCEPTED);
    run_to(&mut f, &mut ep, 55.0);
    let truth = f.lockstep.sim().vehicles()[0].ground_truth();
    let st = f.status.borrow().clone();
    assert_eq!(
        st.mode,
        Some(mavsitl_simpleflight::FlightMode::Hold),
        "Takeoff ends in Hold"
    );
    assert!(
        (-truth.pos_ned_m.z - 12.0).abs() < 1.0,
        "holds 12 m: {}",
        -truth.pos_ned_m.z
    );
    // Disarming in the air is refused.
    let (r, _) = command(&f, &mut ep, 400, [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    assert_eq!(r, MavResult::MAV_RESULT_DENIED);
    // Return: climbs to RTL_RETURN_ALT, comes back, lands, disarms.
    let (r, _) = command(&f, &mut ep, 20, [0.0; 7]);
    assert_eq!(r, MavResult::MAV_RESULT_ACCEPTED);
    let out = run_to(&mut f, &mut ep, 140.0);
    let st = f.status.borrow().clone();
    assert!(st.landed && !st.armed, "landed and disarmed after RTL");
    let landed = out.iter().any(|o| {
        matches!(o, Outgoing::Msg(MavMessage::STATUSTEXT(t)) if t.text.to_str().unwrap_or("").starts_with("Landing detected"))
    });
    assert!(landed, "a STATUSTEXT announces the landing");
    let truth = f.lockstep.sim().vehicles()[0].ground_truth();
    assert!(
        truth.pos_ned_m.xy().norm() < 2.0,
        "lands home: {:?}",
        truth.pos_ned_m
    );
}

/// A mission upload with a DO_JUMP loop around nothing is refused with
/// MISSION_ACK INVALID and the reason, and the stored mission is kept.
#[test]
fn an_uploaded_jump_loop_around_nothing_is_refused() {
    use mavlink::dialects::common::{MavMissionResult, MISSION_COUNT_DATA};
    use mavsitl_mavlink::wire::MissionItemIn;
    let (f, mut ep) =
        flight(r#"{"vehicles":[{"name":"q","kind":"multirotor","airframe":"generic_quad"}]}"#);
    let now = f.lockstep.sim().time();
    let link = Duration::ZERO;
    let mut out = Vec::new();
    let item = |seq: u16, command: u16, params: [f32; 4], x: f64| MissionItemIn {
        seq,
        command,
        frame: if command == 177 { 2 } else { 3 },
        params,
        x,
        y: 85_455_940.0,
        z: 10.0,
        current: 0,
        autocontinue: 1,
        mission_type: 0,
        target_system: 1,
        target_component: 1,
        is_int: true,
    };
    ep.handle(
        now,
        link,
        (255, 190),
        Incoming::Msg(MavMessage::MISSION_COUNT(MISSION_COUNT_DATA {
            count: 3,
            target_system: 1,
            target_component: 1,
            ..Default::default()
        })),
        &mut out,
    );
    for it in [
        item(0, 16, [0.0; 4], 473_977_420.0),
        item(1, 177, [1.0, -1.0, 0.0, 0.0], 0.0),
        item(2, 16, [0.0; 4], 473_987_420.0),
    ] {
        ep.handle(now, link, (255, 190), Incoming::MissionItem(it), &mut out);
    }
    let acks: Vec<MavMissionResult> = out
        .iter()
        .filter_map(|o| match o {
            Outgoing::Msg(MavMessage::MISSION_ACK(a)) => Some(a.mavtype),
            _ => None,
        })
        .collect();
    assert_eq!(acks, [MavMissionResult::MAV_MISSION_INVALID]);
    let texts: Vec<String> = out
        .iter()
        .filter_map(|o| match o {
            Outgoing::Msg(MavMessage::STATUSTEXT(t)) => {
                Some(t.text.to_str().unwrap_or("").to_string())
            }
            _ => None,
        })
        .collect();
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("mission upload refused: mission item 1")),
        "{texts:?}"
    );
    assert!(ep
        .stores()
        .list(mavsitl_mavlink::mission_protocol::ListType::Mission)
        .is_empty());
}

/// Out-of-range requests are denied, never flown: DO_REPOSITION to latitude
/// 91, longitude ±214, 1e9 m up or 1e6 m below home, and SET_MESSAGE_INTERVAL
/// with NaN or an interval below -1 (which used to stop the stream silently).
#[test]
fn out_of_range_requests_are_denied() {
    let (mut f, mut ep) = flight(r#"{"vehicles":[{"kind":"multirotor"}]}"#);
    run_to(&mut f, &mut ep, 30.0);
    let home_amsl = 488.0;
    let nan = f32::NAN;
    let (r, _) = command(
        &f,
        &mut ep,
        22,
        [0.0, 0.0, 0.0, nan, nan, nan, home_amsl + 12.0],
    );
    assert_eq!(r, MavResult::MAV_RESULT_ACCEPTED);
    let (r, _) = command(&f, &mut ep, 400, [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    assert_eq!(r, MavResult::MAV_RESULT_ACCEPTED);
    run_to(&mut f, &mut ep, 45.0);
    for (lat, lon, alt) in [
        (91.0, 8.5456, home_amsl + 10.0),
        (47.3977, 214.0, home_amsl + 10.0),
        (47.3977, -214.0, home_amsl + 10.0),
        (47.3977, 8.5456, 1e9),
        (47.3977, 8.5456, -1e6),
    ] {
        let (r, text) = command(&f, &mut ep, 192, [-1.0, 1.0, 0.0, nan, lat, lon, alt]);
        assert_eq!(r, MavResult::MAV_RESULT_DENIED, "{lat} {lon} {alt}: {text}");
        assert!(text.starts_with("Reposition denied"), "{text}");
    }
    // A reasonable one is still accepted.
    let (r, _) = command(
        &f,
        &mut ep,
        192,
        [-1.0, 1.0, 0.0, nan, 47.3978, 8.5457, home_amsl + 15.0],
    );
    assert_eq!(r, MavResult::MAV_RESULT_ACCEPTED);
    for interval in [nan, -2.0, -5e9] {
        let (r, _) = command(&f, &mut ep, 511, [33.0, interval, 0.0, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(r, MavResult::MAV_RESULT_DENIED, "interval {interval}");
    }
    let (r, _) = command(&f, &mut ep, 511, [33.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    assert_eq!(r, MavResult::MAV_RESULT_ACCEPTED, "-1 stops the stream");
}

/// COMMAND_INT gives its altitude frame: a take-off to 15 m relative to home
/// (GLOBAL_RELATIVE_ALT_INT) is 15 m, not 15 m AMSL replaced by the default;
/// a home set at 10 m relative is 10 m above the old home.
#[test]
fn command_int_altitudes_follow_their_frame() {
    let (mut f, mut ep) = flight(r#"{"vehicles":[{"kind":"multirotor"}]}"#);
    run_to(&mut f, &mut ep, 30.0);
    let nan = f32::NAN;
    let (r, text) = command_in(
        &f,
        &mut ep,
        22,
        [0.0, 0.0, 0.0, nan, 0.0, 0.0, 15.0],
        Some(6),
    );
    assert_eq!(
        (r, text.as_str()),
        (MavResult::MAV_RESULT_ACCEPTED, "Takeoff to 15.0 m")
    );
    let (_, text) = command_in(
        &f,
        &mut ep,
        22,
        [0.0, 0.0, 0.0, nan, 0.0, 0.0, 500.08],
        None,
    );
    assert_eq!(text, "Takeoff to 12.0 m", "COMMAND_LONG: AMSL");
    let home_before = f.status.borrow().home_ned.expect("home");
    let (lat, lon) = (473_977_420.0, 85_455_940.0);
    let (r, _) = command_in(
        &f,
        &mut ep,
        179,
        [0.0, 0.0, 0.0, 0.0, lat, lon, 10.0],
        Some(6),
    );
    assert_eq!(r, MavResult::MAV_RESULT_ACCEPTED);
    run_to(&mut f, &mut ep, 30.1);
    let home = f.status.borrow().home_ned.expect("home");
    assert!(
        (home.z - (home_before.z - 10.0)).abs() < 0.01,
        "home {:.2} m down, was {:.2}",
        home.z,
        home_before.z
    );
}
