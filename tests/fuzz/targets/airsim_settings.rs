//! AirSim settings.json, imported as `mavsitl airsim --settings` does, and
//! the scenario it makes loaded and validated.

use mavsitl::airsim::settings;
use mavsitl::scenario::{Scenario, ScenarioSource};

/// Feeds one input.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(imported) = settings::import(text, "fuzz.json") {
        let src = ScenarioSource {
            name: "fuzz.json".into(),
            base_dir: std::path::PathBuf::from("/nonexistent"),
        };
        let _ = Scenario::from_json(&imported.scenario.to_string(), &src);
    }
}
