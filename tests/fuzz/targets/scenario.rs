//! Scenario files, loaded, validated and built into a simulation.

use mavsitl::scenario::{Scenario, ScenarioSource};

/// Feeds one input.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let src = ScenarioSource {
        name: "fuzz.json".into(),
        base_dir: std::path::PathBuf::from("/nonexistent"),
    };
    if let Ok(s) = Scenario::from_json(text, &src) {
        if let Ok(mut ls) = s.build(&src) {
            let _ = ls.run_until(mavsitl::time::SimTime::from_micros(20_000), &mut ());
        }
    }
}
