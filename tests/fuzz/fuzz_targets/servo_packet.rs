//! ArduPilot's JSON-backend servo packets as the bridge decodes them.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = mavsitl::bridge::ardupilot::parse_servo(data);
});
