//! Ground-station endpoint cost, in process (no sockets): a 500-item mission
//! upload through the protocol engine (decode, handle, compile, encode every
//! frame both ways), one telemetry poll, and one parameter-list stream.

use std::collections::VecDeque;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use mavlink::dialects::common::{
    MavCmd, MavFrame, MavMessage, MavMissionType, MISSION_COUNT_DATA, MISSION_ITEM_INT_DATA,
    PARAM_REQUEST_LIST_DATA,
};
use mavsitl::autopilot::estimator::EstimatedState;
use mavsitl::autopilot::gcs::{Endpoint, EndpointConfig};
use mavsitl::autopilot::params::ParamStore;
use mavsitl::autopilot::FlightStatus;
use mavsitl::geo::{GeoPoint, LocalFrame};
use mavsitl::shared::Shared;
use mavsitl::time::SimTime;
use mavsitl::wire::{self, Encoder, Outgoing};
use nalgebra::{UnitQuaternion, Vector3};

fn endpoint() -> Endpoint {
    let status = FlightStatus {
        estimate: Some(EstimatedState {
            pos_ned_m: Vector3::new(10.0, -5.0, -20.0),
            vel_ned_m_s: Vector3::new(3.0, 1.0, -0.5),
            att_ned_frd: UnitQuaternion::from_euler_angles(0.05, -0.02, 1.2),
            rate_frd_rad_s: Vector3::new(0.01, 0.02, 0.1),
            accel_ned_m_s2: Vector3::zeros(),
            specific_force_frd_m_s2: Vector3::new(0.0, 0.0, -9.81),
            air_density_kg_m3: 1.2,
        }),
        home_ned: Some(Vector3::zeros()),
        armed: true,
        mode: Some(mavsitl::autopilot::FlightMode::Mission),
        mission_len: 500,
        battery: Some(mavsitl::controller::PowerModuleSample {
            voltage_v: 16.4,
            current_a: 6.0,
            consumed_mah: 120.0,
            consumed_j: 7000.0,
            remaining: 0.97,
        }),
        ..FlightStatus::default()
    };
    Endpoint::new(
        EndpointConfig {
            system_id: 1,
            component_id: 1,
            mav_type: mavlink::dialects::common::MavType::MAV_TYPE_QUADROTOR,
            autopilot: mavlink::dialects::common::MavAutopilot::MAV_AUTOPILOT_PX4,
            kind: mavsitl::scenario::VehicleKind::Multirotor,
            frame: LocalFrame::new(GeoPoint::from_deg(47.397742, 8.545594, 488.0)),
            epoch_unix_us: 0,
        },
        Shared::new(status),
        Shared::new(VecDeque::new()),
        ParamStore::default(),
        None,
    )
}

/// Runs the GCS side of one upload of `n` items; returns frames exchanged.
fn upload(ep: &mut Endpoint, gcs: &mut Encoder, n: u16) -> usize {
    let mut frames = 0;
    let mut buf = Vec::with_capacity(64);
    let mut out = Vec::new();
    let t = SimTime::ZERO;
    let link = Duration::ZERO;
    let mut feed = |ep: &mut Endpoint, msg: MavMessage, out: &mut Vec<Outgoing>| {
        buf.clear();
        gcs.encode(&Outgoing::Msg(msg), &mut buf);
        wire::frames(&buf, None, |raw| {
            if let Ok(m) = wire::decode(raw) {
                ep.handle(t, link, (255, 190), m, out);
            }
        });
    };
    feed(
        ep,
        MavMessage::MISSION_COUNT(MISSION_COUNT_DATA {
            count: n,
            target_system: 1,
            target_component: 1,
            mission_type: MavMissionType::MAV_MISSION_TYPE_MISSION,
            opaque_id: 0,
        }),
        &mut out,
    );
    let mut enc = Encoder::new(1, 1, None);
    let mut reply = Vec::with_capacity(64);
    while let Some(o) = out.pop() {
        reply.clear();
        enc.encode(&o, &mut reply);
        frames += 1;
        let Outgoing::Msg(MavMessage::MISSION_REQUEST_INT(r)) = o else {
            continue;
        };
        let i = r.seq as i32;
        feed(
            ep,
            MavMessage::MISSION_ITEM_INT(MISSION_ITEM_INT_DATA {
                param1: 0.0,
                param2: 2.0,
                param3: 0.0,
                param4: f32::NAN,
                x: 473_977_420 + (i % 50) * 200,
                y: 85_455_940 + (i / 50) * 200,
                z: 20.0,
                seq: r.seq,
                command: MavCmd::MAV_CMD_NAV_WAYPOINT,
                target_system: 1,
                target_component: 1,
                frame: MavFrame::MAV_FRAME_GLOBAL_RELATIVE_ALT,
                current: (i == 0) as u8,
                autocontinue: 1,
                mission_type: MavMissionType::MAV_MISSION_TYPE_MISSION,
            }),
            &mut out,
        );
        frames += 1;
    }
    frames
}

fn bench(c: &mut Criterion) {
    let mut ep = endpoint();
    let mut gcs = Encoder::new(255, 190, None);
    let frames = upload(&mut ep, &mut gcs, 500);
    assert!(frames >= 1000, "upload exchanged {frames} frames");
    assert_eq!(
        ep.stores()
            .list(mavsitl::mission_protocol::ListType::Mission)
            .len(),
        500
    );
    c.bench_function("gcs mission upload 500 items (in process)", |b| {
        b.iter(|| upload(&mut ep, &mut gcs, 500))
    });
    let mut out = Vec::new();
    let mut t = 0u64;
    c.bench_function("gcs telemetry poll (all 13 streams due)", |b| {
        b.iter(|| {
            t += 2_000_000;
            out.clear();
            ep.poll(SimTime::from_micros(t), Duration::ZERO, &mut out);
            out.len()
        })
    });
    c.bench_function("gcs parameter list (all values)", |b| {
        b.iter(|| {
            out.clear();
            ep.handle(
                SimTime::ZERO,
                Duration::ZERO,
                (255, 190),
                wire::Incoming::Msg(MavMessage::PARAM_REQUEST_LIST(PARAM_REQUEST_LIST_DATA {
                    target_system: 1,
                    target_component: 1,
                })),
                &mut out,
            );
            ep.poll(SimTime::ZERO, Duration::from_secs(100), &mut out);
            out.len()
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
