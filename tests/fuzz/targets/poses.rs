//! Pose files for `mavsitl replay` (EuRoC and AirSim), parsed and sampled.

use mavsitl::replay::Trajectory;

/// Feeds one input.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(t) = Trajectory::parse(text, "fuzz.csv") {
        let d = t.duration_s();
        for k in 0..=8 {
            let _ = t.at(d * k as f64 / 8.0);
        }
    }
}
