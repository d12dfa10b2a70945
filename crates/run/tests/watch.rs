//! The flight's watch on the built-in quad square: the summary's figures
//! (on ground truth) and the autopilot's (on its estimate), each pinned to
//! what the flight measures today within a few per cent. The flights here
//! step the loader's 1 kHz (`fly` moves the square to SimpleFlight's
//! 250 Hz, whose figures agree within a few millimetres).

use std::sync::atomic::AtomicBool;

use mavsitl_core::geo::ExportFrame;
use mavsitl_run::fly::{fly, FlyOptions};
use mavsitl_run::inputs::{load_inputs, InputArgs, DEFAULT_MISSION};

static STOP: AtomicBool = AtomicBool::new(false);

fn within(what: &str, x: f64, lo: f64, hi: f64) {
    assert!((lo..=hi).contains(&x), "{what}: {x}, not within {lo}..{hi}");
}

#[test]
fn the_watch_measures_the_built_in_square() {
    let args = InputArgs {
        mission: None,
        vehicle: None,
        scenario: None,
        seed: None,
        faults: &[],
        home: None,
        params: None,
        ground_truth: false,
    };
    let inputs = load_inputs(&args, true).expect("inputs");
    let flight = mavsitl_run::setup::flight(
        &inputs.mission,
        &inputs.mission_name,
        &inputs.scenario,
        &inputs.source,
        inputs.params(),
        true,
    )
    .expect("flight");
    let opts = FlyOptions {
        timeout_s: 600.0,
        record: None,
        frame: ExportFrame::Ned,
        mission_file: None,
        builtin: DEFAULT_MISSION,
        link: None,
        stop: &STOP,
    };
    let flown = fly(flight, &inputs, opts).expect("flown");
    assert_eq!(flown.outcome, Ok(()));
    within("sim time, s", flown.sim_s, 94.5, 96.0);
    let m = flown.watch.metrics();
    // A 20 m climb, a 50 m square and the return: 237.1 m.
    within("distance, m", m.distance_m, 236.0, 238.0);
    within("top speed, m/s", m.max_speed_m_s, 5.15, 5.35);
    within("cross-track RMS, m", m.xtrack_rms_m(), 0.54, 0.58);
    within("cross-track max, m", m.xtrack_max_m(), 1.25, 1.34);
    within(
        "from the start, m",
        m.from_start_m().expect("started"),
        0.55,
        0.7,
    );
    assert_eq!(m.crashed, None);
    let (rms, max) = flown.watch.path_stats().path_following_m();
    within("path following RMS, m", rms, 0.16, 0.19);
    within("path following max, m", max, 0.95, 1.15);
    within(
        "estimator RMS, m",
        flown.watch.path_stats().estimator_rms_m(),
        0.75,
        0.85,
    );
}

/// Two quads 30 m apart fly the built-in square, each from its own start:
/// each member of the fleet is followed to the end of its own flight and
/// measured against its own route, as the one-vehicle watch measures it.
#[test]
fn each_fleet_member_is_measured_on_its_own_square() {
    use mavsitl_core::time::SimTime;
    use mavsitl_mavlink::mission::Mission;
    use mavsitl_run::setup::{fleet, FlightInputs, PilotPlan};
    use mavsitl_sim::scenario::{Scenario, ScenarioSource};

    let source = ScenarioSource {
        name: "fleet.json".into(),
        base_dir: ".".into(),
    };
    let scenario = Scenario::from_json(
        r#"{"vehicles":[
            {"name":"a","kind":"multirotor","controller":{"kind":"simpleflight"}},
            {"name":"b","kind":"multirotor","initial":{"east_m":30.0},
             "controller":{"kind":"simpleflight"}}]}"#,
        &source,
    )
    .expect("scenario");
    let mission = Mission::parse(DEFAULT_MISSION, "square").expect("mission");
    let plan = PilotPlan {
        mission: &mission,
        mission_name: "square",
        param_file: None,
        auto_arm: true,
    };
    let mut f = fleet(&scenario, &source, &plan).expect("fleet");
    let inputs = FlightInputs {
        mission: mission.clone(),
        mission_name: "square".into(),
        scenario,
        source,
        param_text: None,
    };
    let mut members: Vec<_> = f
        .pilots
        .drain(..)
        .map(|p| mavsitl_run::fleet::member(&inputs, f.lockstep.sim(), p).expect("member"))
        .collect();
    while members.iter().any(|m| m.outcome.is_none()) {
        assert!(
            f.lockstep.sim().time() < SimTime::from_secs(300),
            "still flying"
        );
        f.lockstep.tick(&mut ()).expect("tick");
        for m in &mut members {
            m.follow(f.lockstep.sim());
        }
    }
    for m in &members {
        assert_eq!(m.outcome, Some(Ok(())), "{}", m.name);
        let from_start = m.metrics.from_start_m().expect("started");
        within(&format!("{}: from its start", m.name), from_start, 0.3, 0.8);
        within(
            &format!("{}: top speed", m.name),
            m.metrics.max_speed_m_s,
            5.15,
            5.4,
        );
    }
    // a starts at home: its flight, and its figures, are the one-vehicle
    // flight's (237.1 m, 0.562 m RMS).
    let (a, b) = (&members[0].metrics, &members[1].metrics);
    within("a: distance, m", a.distance_m, 236.0, 238.0);
    within("a: cross-track RMS, m", a.xtrack_rms_m(), 0.54, 0.58);
    // b starts 30 m east, flies over to the square and back, measured
    // against its own route from there: 364.1 m, 0.42 m RMS.
    within("b: distance, m", b.distance_m, 355.0, 372.0);
    within("b: cross-track RMS, m", b.xtrack_rms_m(), 0.35, 0.5);
}
