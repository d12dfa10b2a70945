//! Soak: `serve`'s SimpleFlight flying a looping mission for 24 h of sim time
//! under a ground station's steady traffic (a heartbeat every second, a
//! parameter read every ten), in process. Run on demand:
//! `cargo test --release -p mavsitl-run --test integration soak -- --ignored --nocapture` (a few
//! minutes). Checks memory stays flat, heartbeats never stop for more than
//! 1.1 s, time only moves forward and the attitude quaternion stays unit.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use mavlink::dialects::common::{
    MavAutopilot, MavMessage, MavModeFlag, MavState, MavType, HEARTBEAT_DATA,
    PARAM_REQUEST_READ_DATA,
};
use mavsitl_core::time::SimTime;
use mavsitl_mavlink::mission::Mission;
use mavsitl_mavlink::wire::{CommandIn, Incoming, Outgoing};
use mavsitl_run::setup;
use mavsitl_sim::scenario::{Scenario, ScenarioSource};

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4)
}

fn gcs(msg: MavMessage) -> Incoming {
    Incoming::Msg(msg)
}

#[test]
#[ignore = "24 h of sim time: run on demand"]
fn a_day_of_serve_flying_a_looping_mission() {
    let src = ScenarioSource {
        name: "soak".into(),
        base_dir: PathBuf::from("."),
    };
    let scenario = Scenario::from_json(r#"{"vehicles":[{"kind":"multirotor"}]}"#, &src)
        .unwrap_or_else(|e| panic!("{e}"));
    // The square, its four corners flown again and again (DO_JUMP back to
    // the first corner, repeat −1: for ever).
    let mut plan: serde_json::Value =
        serde_json::from_str(include_str!("../../../missions/quad_square.plan")).unwrap();
    let items = plan["mission"]["items"].as_array_mut().unwrap();
    items.truncate(5);
    items.push(
        serde_json::json!({"autoContinue": true, "command": 177, "doJumpId": 6,
        "frame": 2, "params": [2, -1, 0, 0, 0, 0, 0], "type": "SimpleItem"}),
    );
    let mission = Mission::parse(&plan.to_string(), "loop.plan").unwrap_or_else(|e| panic!("{e}"));
    let mut f = setup::flight(&mission, "loop", &scenario, &src, None, false)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut ep = f.endpoint(Some(&mission));
    let hb = MavMessage::HEARTBEAT(HEARTBEAT_DATA {
        custom_mode: 0,
        mavtype: MavType::MAV_TYPE_GCS,
        autopilot: MavAutopilot::MAV_AUTOPILOT_INVALID,
        base_mode: MavModeFlag::empty(),
        system_status: MavState::MAV_STATE_ACTIVE,
        mavlink_version: 3,
    });
    let read = MavMessage::PARAM_REQUEST_READ(PARAM_REQUEST_READ_DATA {
        param_index: -1,
        target_system: 1,
        target_component: 1,
        param_id: "MPC_XY_CRUISE".into(),
    });
    let day = SimTime::from_secs(24 * 3600);
    let wall = Instant::now();
    let mut out: Vec<Outgoing> = Vec::new();
    let (mut last_hb, mut max_gap, mut last_t) = (SimTime::ZERO, 0.0f64, SimTime::ZERO);
    let (mut worst_norm, mut rss_1h, mut started) = (0.0f64, 0u64, false);
    while f.lockstep.sim().time() < day {
        f.lockstep.tick(&mut ()).unwrap_or_else(|e| panic!("{e}"));
        let now = f.lockstep.sim().time();
        assert!(now > last_t, "time went back");
        last_t = now;
        let link = Duration::from_micros(now.as_micros());
        let us = now.as_micros();
        if us.is_multiple_of(1_000_000) {
            ep.handle(now, link, (255, 190), gcs(hb.clone()), &mut out);
            let q = f.lockstep.sim().vehicles()[0].body().state.att_ned_frd;
            worst_norm = worst_norm.max((q.quaternion().norm() - 1.0).abs());
        }
        if us.is_multiple_of(10_000_000) {
            ep.handle(now, link, (255, 190), gcs(read.clone()), &mut out);
        }
        if !started && us >= 20_000_000 && f.status.borrow().prearm_failure.is_none() {
            for (command, p1) in [(400u16, 1.0f32), (300, 0.0)] {
                let c = CommandIn {
                    command,
                    params: [p1, 0.0, 0.0, 0.0],
                    x: 0.0,
                    y: 0.0,
                    z: 0.0,
                    target_system: 1,
                    target_component: 1,
                    confirmation: 0,
                    int_frame: None,
                };
                ep.handle(now, link, (255, 190), Incoming::Command(c), &mut out);
            }
            started = true;
        }
        if us.is_multiple_of(4000) {
            ep.poll(now, link, &mut out);
            for o in out.drain(..) {
                if let Outgoing::Msg(MavMessage::HEARTBEAT(_)) = o {
                    max_gap = max_gap.max(now.secs_since(last_hb));
                    last_hb = now;
                }
            }
        }
        if us == 3_600_000_000 {
            rss_1h = rss_kib();
        }
    }
    let rss_end = rss_kib();
    let st = f.status.borrow();
    let laps = st.reached.iter().filter(|(_, i)| *i == 4).count();
    println!(
        "24 h of sim time in {:.0} s wall; RSS {rss_1h} KiB at 1 h, {rss_end} KiB at 24 h; \
         longest heartbeat gap {max_gap:.3} s; worst |q| − 1 {worst_norm:.1e}; armed {}; \
         items reached (last 4096 kept) {}, corner 4 in them {laps} times",
        wall.elapsed().as_secs_f64(),
        st.armed,
        st.reached.len()
    );
    assert!(st.armed && started, "still flying");
    assert!(max_gap <= 1.1, "heartbeat gap {max_gap} s");
    assert!(worst_norm < 1e-9, "quaternion norm off by {worst_norm}");
    assert!(
        rss_end <= rss_1h + 1024,
        "memory grew from {rss_1h} KiB to {rss_end} KiB"
    );
}
