//! `--fault KIND@START[+DURATION][:key=value,...]` arguments.

/// Feeds one input.
pub fn run(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = mavsitl::faults::parse_fault_arg(text);
    }
}
