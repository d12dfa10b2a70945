//! A world stepped on several threads is the same world: a fleet of
//! SimpleFlight quads flying through a zone of wind under faults, stepped on
//! one, two and three threads, ends in bit-identical states, statuses, zone
//! events and encounters.

use mavsitl_core::time::SimTime;
use mavsitl_mavlink::mission::Mission;
use mavsitl_run::setup::{fleet, PilotPlan};
use mavsitl_sim::scenario::{Scenario, ScenarioSource};

const TAKEOFF_AND_EAST: &str = "QGC WPL 110\n\
0\t1\t0\t16\t0\t0\t0\t0\t47.397742\t8.545594\t488\t1\n\
1\t0\t3\t22\t0\t0\t0\t0\t0\t0\t10\t1\n\
2\t0\t3\t16\t0\t0\t0\t0\t47.397742\t8.546100\t10\t1\n";

/// 20 quads 12 m apart in a line, a zone of wind above some of them from 6 m
/// up and a gust, flown for 24 s on `threads` threads: what each vehicle ended as.
fn flown(threads: usize) -> (Vec<String>, String, usize) {
    let vehicles: Vec<serde_json::Value> = (0..20)
        .map(|i| {
            serde_json::json!({
                "name": format!("q{i}"), "kind": "multirotor",
                "initial": {"north_m": 12.0 * i as f64},
                "controller": {"kind": "simpleflight"}
            })
        })
        .collect();
    let json = serde_json::json!({
        "seed": 11,
        "environment": {"turbulence": {}, "wind": {"speed_m_s": 3, "from_deg": 200},
            "zones": [{"name": "gusty", "shape": {"box": {"min_ned_m": [50, -5, -40], "max_ned_m": [130, 5, -6]}},
                       "wind": {"speed_m_s": 8, "from_deg": 0}}]},
        "faults": [{"kind": "wind_gust", "at_s": 9, "duration_s": 2, "peak_m_s": 4},
                   {"kind": "gps_spoof", "at_s": 10, "vehicle": "q3"}],
        "vehicles": vehicles
    });
    let src = ScenarioSource {
        name: "threads".into(),
        base_dir: ".".into(),
    };
    let scenario = Scenario::from_json(&json.to_string(), &src).expect("scenario");
    let mission = Mission::parse(TAKEOFF_AND_EAST, "east").expect("mission");
    let plan = PilotPlan {
        mission: &mission,
        mission_name: "east",
        param_file: None,
        auto_arm: true,
    };
    let mut f = fleet(&scenario, &src, &plan).expect("fleet");
    f.lockstep.set_threads(threads).expect("threads");
    f.lockstep
        .run_until(SimTime::from_secs(24), &mut ())
        .expect("run");
    let sim = f.lockstep.sim();
    let states = sim
        .vehicles()
        .iter()
        .zip(&f.pilots)
        .map(|(v, p)| {
            let st = p.status.borrow();
            format!(
                "{:?} {:?} {:?} {:?}",
                v.ground_truth(),
                st.estimate,
                st.reached,
                v.battery().state()
            )
        })
        .collect();
    let climbed = sim
        .vehicles()
        .iter()
        .filter(|v| v.ground_truth().pos_ned_m.z < -5.0)
        .count();
    let events = format!(
        "{:?} {:?} {:?}",
        sim.zone_events(),
        sim.fault_events(),
        sim.encounters().map(|e| e.encounters().len())
    );
    (states, events, climbed)
}

#[test]
fn a_fleet_on_one_two_or_three_threads_is_the_same_to_the_bit() {
    let (one, events, climbed) = flown(1);
    // The fleet flew: every quad climbed, and some entered the zone.
    assert_eq!(climbed, 20, "{}", one[0]);
    assert!(events.contains("Enter"), "{events}");
    for threads in [2, 3] {
        let (many, events_many, _) = flown(threads);
        for (i, (a, b)) in one.iter().zip(&many).enumerate() {
            assert_eq!(a, b, "vehicle {i} on {threads} threads");
        }
        assert_eq!(events, events_many, "{threads} threads");
    }
}
