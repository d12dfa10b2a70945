//! Pacing against the wall clock: how many times real time a run goes
//! (`--speedup X|max`) and the pacer that holds the lockstep loop to it.
//! The simulation itself never reads the clock; only this does.

use std::time::{Duration, Instant};

use mavsitl_core::time::SimTime;

/// How fast a run goes against the wall clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Speedup {
    /// This many times real time.
    Factor(f64),
    /// As fast as the CPU allows (lockstep, no pacing).
    Max,
}

/// Slowest pacing, times real time (a thousand times slower).
pub const SPEEDUP_MIN: f64 = 1e-3;

/// Fastest paced speed-up, times real time.
pub const SPEEDUP_MAX: f64 = 1e4;

/// Parses `--speedup X|max`.
pub fn parse_speedup(s: &str) -> Result<Speedup, String> {
    if s.eq_ignore_ascii_case("max") {
        return Ok(Speedup::Max);
    }
    match s.parse::<f64>() {
        Ok(x) if (SPEEDUP_MIN..=SPEEDUP_MAX).contains(&x) => Ok(Speedup::Factor(x)),
        _ => Err(format!(
            "'{s}' is not a speed-up: give a factor from 0.001 to 10000, or 'max'"
        )),
    }
}

/// Paces sim time against the wall clock.
#[derive(Debug, Clone, Copy)]
pub struct Pacer {
    speedup: Speedup,
    started: Instant,
    sim_at_start: SimTime,
}

impl Pacer {
    /// Starts pacing at sim time `sim_now`.
    pub fn new(speedup: Speedup, sim_now: SimTime) -> Self {
        Pacer {
            speedup,
            started: Instant::now(),
            sim_at_start: sim_now,
        }
    }

    /// How long to wait before sim time `next` may run (zero: run now).
    pub fn wait(&self, next: SimTime) -> Duration {
        match self.speedup {
            Speedup::Max => Duration::ZERO,
            Speedup::Factor(k) => {
                let sim = next
                    .as_micros()
                    .saturating_sub(self.sim_at_start.as_micros());
                let due = mavsitl_core::time::saturating_duration(sim as f64 * 1e-6 / k);
                due.saturating_sub(self.started.elapsed())
            }
        }
    }

    /// Restarts pacing at `sim_now` (after a reset).
    pub fn restart(&mut self, sim_now: SimTime) {
        *self = Pacer::new(self.speedup, sim_now);
    }
}
