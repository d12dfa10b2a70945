//! Suite files (`mavsitl test`), parsed and checked: every case resolved,
//! every expectation and seed range validated.

use mavsitl::suite::Suite;

/// Feeds one input.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = Suite::parse(text, std::path::Path::new("/nonexistent/fuzz.toml"));
}
