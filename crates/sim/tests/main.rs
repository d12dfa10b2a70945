//! The integration tests of `mavsitl-sim`, one test binary: each module is
//! the file of the same name beside this one.

mod battery;
mod dataset;
mod faults;
mod lockstep;
mod physics;
mod record;
mod rover;
mod sensors;
mod terrain;
mod threads;
mod tick;
mod vision;

use mavsitl_sim::scenario::{Scenario, ScenarioSource};
use mavsitl_sim::sim::Lockstep;

/// A scenario from JSON `text` with `faults` (command-line form), checked
/// as the program checks it, and its lockstep built.
fn scenario(text: &str, faults: &[&str]) -> (Scenario, Lockstep) {
    let src = ScenarioSource {
        name: "test".into(),
        base_dir: ".".into(),
    };
    let mut scenario = Scenario::from_json(text, &src).expect("scenario");
    scenario.faults = faults
        .iter()
        .map(|f| mavsitl_core::faults::parse_fault_arg(f).expect("fault"))
        .collect();
    scenario.validate(&src).expect("valid");
    let ls = scenario.build(&src).expect("build");
    (scenario, ls)
}
