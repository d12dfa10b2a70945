//! ArduPilot's JSON-backend servo packets as the bridge decodes them.

/// Feeds one input.
pub fn run(data: &[u8]) {
    let _ = mavsitl::bridge::ardupilot::parse_servo(data);
}
