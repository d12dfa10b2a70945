//! Cost of one physics tick (`Simulation::step`) per scene.
//!
//! Scenes: the generic quad hovering in calm air (with its four default sensors,
//! and without any, so the difference is the sensors' cost per tick; and with
//! four faults active, so the difference is the faults' cost), the same
//! quad in wind with turbulence, the x500 resting on the ground (contact active),
//! the twin-thruster USV cruising in wind, turbulence and current, and the
//! two rovers circling on their tyres: the skid-steer Jackal and the
//! F1TENTH car (four wheels, each sub-stepped for its tyre).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use mavsitl::scenario::{Scenario, ScenarioSource};
use mavsitl::sim::Simulation;

fn sim(json: &str) -> Simulation {
    let src = ScenarioSource {
        name: "bench".into(),
        base_dir: ".".into(),
    };
    let scenario = Scenario::from_json(json, &src).expect("bench scenario");
    let mut ls = scenario.build(&src).expect("bench build");
    // Warm up: one controller exchange sets the actuators; a second of ticks.
    ls.run_until(mavsitl::time::SimTime::from_secs(1), &mut ())
        .expect("warm-up");
    ls.sim().clone()
}

const HOVER: &str = r#"{"vehicles":[{"kind":"multirotor","airframe":"generic_quad",
  "initial":{"height_m":10,"rotor_commands":[0.6155,0.6155,0.6155,0.6155]},
  "controller":{"kind":"passive","controls":[0.6155,0.6155,0.6155,0.6155]}}]}"#;

const HOVER_FAULTED: &str = r#"{"vehicles":[{"kind":"multirotor","airframe":"generic_quad",
  "initial":{"height_m":10,"rotor_commands":[0.6155,0.6155,0.6155,0.6155]},
  "controller":{"kind":"passive","controls":[0.6155,0.6155,0.6155,0.6155]}}],
  "faults":[{"kind":"gps_spoof","at_s":0},{"kind":"imu_noise_scale","at_s":0,"noise_scale":3},
    {"kind":"wind_gust","at_s":0,"duration_s":1000000,"peak_m_s":3},
    {"kind":"motor_failure","at_s":0,"motor":1,"thrust_scale":0.9}]}"#;

const HOVER_NO_SENSORS: &str = r#"{"vehicles":[{"kind":"multirotor","airframe":"generic_quad",
  "initial":{"height_m":10,"rotor_commands":[0.6155,0.6155,0.6155,0.6155]},
  "sensors":{"imu":{"enabled":false},"gps":{"enabled":false},"baro":{"enabled":false},"mag":{"enabled":false}},
  "controller":{"kind":"passive","controls":[0.6155,0.6155,0.6155,0.6155]}}]}"#;

const WINDY: &str = r#"{"environment":{"wind":{"speed_m_s":5,"from_deg":270},"turbulence":{}},
  "vehicles":[{"kind":"multirotor","airframe":"generic_quad",
  "initial":{"height_m":1000,"rotor_commands":[0.6155,0.6155,0.6155,0.6155]},
  "controller":{"kind":"passive","controls":[0.6155,0.6155,0.6155,0.6155]}}]}"#;

const GROUND: &str = r#"{"vehicles":[{"kind":"multirotor","airframe":"x500",
  "controller":{"kind":"passive","controls":[0.2,0.2,0.2,0.2]}}]}"#;

const BOAT: &str = r#"{"environment":{"wind":{"speed_m_s":4,"from_deg":270},"turbulence":{},
  "current":{"speed_m_s":0.5,"towards_deg":180}},
  "vehicles":[{"kind":"boat","airframe":"usv_twin",
  "controller":{"kind":"passive","controls":[0.8,0.7]}}]}"#;

const SKID: &str = r#"{"vehicles":[{"kind":"rover","airframe":"jackal",
  "controller":{"kind":"passive","controls":[0.9,0.6]}}]}"#;

const CAR: &str = r#"{"vehicles":[{"kind":"rover","airframe":"f1tenth",
  "controller":{"kind":"passive","controls":[0.3,0,0.4,0,0]}}]}"#;

fn bench(c: &mut Criterion) {
    for (name, json) in [
        ("quad_hover_step", HOVER),
        ("quad_hover_step_no_sensors", HOVER_NO_SENSORS),
        ("quad_hover_step_four_faults", HOVER_FAULTED),
        ("quad_turbulence_step", WINDY),
        ("quad_on_ground_step", GROUND),
        ("boat_cruise_step", BOAT),
        ("rover_skid_turn_step", SKID),
        ("rover_car_cornering_step", CAR),
    ] {
        let mut s = sim(json);
        c.bench_function(name, |b| b.iter(|| black_box(&mut s).step().expect("step")));
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
