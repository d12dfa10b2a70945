//! The calling thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`, ns resolution):
//! what a bridge benchmark charges to the harness, leaving out time blocked
//! waiting for its peer. (`/proc/thread-self/schedstat` is only brought up to
//! date at context switches, so a thread that never blocks reads zero.)

use std::time::Duration;

/// CPU time this thread has run, user and system together.
pub fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}
