//! The calling thread's CPU time (Linux `/proc/thread-self/schedstat`, ns):
//! what a bridge benchmark charges to the harness, leaving out time blocked
//! waiting for its peer.

use std::time::Duration;

/// CPU time this thread has run, user and system together.
pub fn thread_cpu() -> Duration {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    let ns = text
        .split_whitespace()
        .next()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);
    Duration::from_nanos(ns)
}
