//! `SlewLimiter`: the actuator slew-rate limiter behind AC_PID's `SMAX`.
//!
//! Ported from ArduPilot's `libraries/Filter/SlewLimiter.cpp` at commit
//! 90700977 (Paul Riseborough, Andrew Tridgell; GPLv3), single precision as
//! ArduPilot computes it. The P+D output's slew rate is low-pass filtered at 25 Hz; its positive
//! and negative peaks decay after a 300 ms window, and when an oscillation
//! (two exceedances of opposite sign) keeps the rate above `SMAX` the P and D
//! gains are scaled down by the returned modifier (never below about 0.07).
//!
//! ArduPilot reads the board clock (`AP_HAL::millis()`, simulated time in SITL);
//! this port keeps its own millisecond clock advanced by each call's `dt`, so
//! that it stays deterministic.

use super::ap_float::is_positive;

/// Exceedances of each sign remembered (2: one full oscillation cycle).
const N_EVENTS: usize = 2;
/// Half cycle of the slowest oscillation expected, ms.
const WINDOW_MS: u32 = 300;
/// Ratio of gain reduction to slew-rate exceedance.
const MODIFIER_GAIN: f32 = 1.5;
/// Cut-off of the slew-rate filter, Hz.
const DERIVATIVE_CUTOFF_FREQ: f32 = 25.0;

/// Slew-rate limiter state.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SlewLimiter {
    filtered: f32,
    output_slew_rate: f32,
    modifier_slew_rate: f32,
    last_sample: f32,
    max_pos_slew_rate: f32,
    max_neg_slew_rate: f32,
    max_pos_slew_event_ms: u32,
    max_neg_slew_event_ms: u32,
    pos_event_ms: [u32; N_EVENTS],
    neg_event_ms: [u32; N_EVENTS],
    pos_event_index: usize,
    neg_event_index: usize,
    pos_event_stored: bool,
    neg_event_stored: bool,
    clock_s: f64,
}

impl SlewLimiter {
    /// A limiter at rest.
    pub fn new() -> Self {
        Self::default()
    }

    /// The gain modifier (0..1] for output `sample` this step of `dt` s, given
    /// the limit `slew_rate_max` (output units/s; 0 disables) and the decay
    /// time constant `slew_rate_tau` (s) (`modifier`).
    pub fn modifier(
        &mut self,
        sample: f32,
        dt: f32,
        slew_rate_max: f32,
        slew_rate_tau: f32,
    ) -> f32 {
        if !is_positive(dt) || !is_positive(slew_rate_tau) || !sample.is_finite() {
            return 1.0;
        }
        self.clock_s += f64::from(dt);
        let now_ms = (self.clock_s * 1000.0) as u32;

        // LowPassFilterFloat::apply: alpha = dt / (dt + 1/(2π f)).
        let rc = 1.0 / (std::f32::consts::TAU * DERIVATIVE_CUTOFF_FREQ);
        let alpha = dt / (dt + rc);
        self.filtered += ((sample - self.last_sample) / dt - self.filtered) * alpha;
        let slew_rate = self.filtered;
        self.last_sample = sample;

        let decay_alpha = dt.min(slew_rate_tau) / slew_rate_tau;
        let attack_alpha = (2.0 * decay_alpha).min(1.0);
        self.decay_peaks(slew_rate, decay_alpha, now_ms);
        let raw_slew_rate = 0.5 * (self.max_pos_slew_rate + self.max_neg_slew_rate);
        self.output_slew_rate =
            (1.0 - attack_alpha) * self.output_slew_rate + attack_alpha * raw_slew_rate;
        self.output_slew_rate = self.output_slew_rate.min(raw_slew_rate);
        if slew_rate_max <= 0.0 {
            return 1.0;
        }

        // Never below 10 % of the gains: the peaks count up to 10 × SMAX.
        let cap = 10.0 * slew_rate_max;
        let limited_raw = 0.5 * (self.max_pos_slew_rate.min(cap) + self.max_neg_slew_rate.min(cap));
        self.store_events(slew_rate, slew_rate_max, now_ms);
        let oldest_ms = self
            .pos_event_ms
            .iter()
            .chain(&self.neg_event_ms)
            .fold(now_ms, |o, &t| o.min(t));
        let mut modifier_input = limited_raw;
        let window = (N_EVENTS as u32 + 1) * WINDOW_MS;
        if now_ms - oldest_ms > window {
            let from_window = 0.001 * (now_ms - oldest_ms - window) as f32;
            modifier_input *= (-from_window / slew_rate_tau).exp();
        }
        self.modifier_slew_rate =
            (1.0 - attack_alpha) * self.modifier_slew_rate + attack_alpha * modifier_input;
        self.modifier_slew_rate = self.modifier_slew_rate.min(modifier_input);

        if self.modifier_slew_rate > slew_rate_max {
            slew_rate_max
                / (slew_rate_max + MODIFIER_GAIN * (self.modifier_slew_rate - slew_rate_max))
        } else {
            1.0
        }
    }

    /// The last oscillation slew rate, output units/s (`get_slew_rate`).
    pub fn get_slew_rate(&self) -> f32 {
        self.output_slew_rate
    }

    fn store_events(&mut self, slew_rate: f32, slew_rate_max: f32, now_ms: u32) {
        if !self.pos_event_stored && slew_rate > slew_rate_max {
            if self.pos_event_index >= N_EVENTS {
                self.pos_event_index = 0;
            }
            self.pos_event_ms[self.pos_event_index] = now_ms;
            self.pos_event_index += 1;
            self.pos_event_stored = true;
            self.neg_event_stored = false;
        }
        if !self.neg_event_stored && -slew_rate > slew_rate_max {
            if self.neg_event_index >= N_EVENTS {
                self.neg_event_index = 0;
            }
            self.neg_event_ms[self.neg_event_index] = now_ms;
            self.neg_event_index += 1;
            self.neg_event_stored = true;
            self.pos_event_stored = false;
        }
    }

    fn decay_peaks(&mut self, slew_rate: f32, decay_alpha: f32, now_ms: u32) {
        if slew_rate > self.max_pos_slew_rate {
            self.max_pos_slew_rate = slew_rate;
            self.max_pos_slew_event_ms = now_ms;
        } else if now_ms - self.max_pos_slew_event_ms > WINDOW_MS {
            self.max_pos_slew_rate *= 1.0 - decay_alpha;
        }
        if -slew_rate > self.max_neg_slew_rate {
            self.max_neg_slew_rate = -slew_rate;
            self.max_neg_slew_event_ms = now_ms;
        } else if now_ms - self.max_neg_slew_event_ms > WINDOW_MS {
            self.max_neg_slew_rate *= 1.0 - decay_alpha;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sample that is not a number, or a decay time that is not
    /// positive, gives no modification and leaves the limiter as it was
    /// (ArduPilot's would be poisoned for good).
    #[test]
    fn a_nan_sample_or_no_decay_time_changes_nothing() {
        let mut calm = SlewLimiter::new();
        let mut fed = SlewLimiter::new();
        for k in 0..400 {
            let x = 2.0 * (k as f32 * 0.05).sin();
            if k == 100 {
                assert_eq!(fed.modifier(f32::NAN, 0.0025, 5.0, 1.0), 1.0);
                assert_eq!(fed.modifier(x, 0.0025, 5.0, 0.0), 1.0);
            }
            let (a, b) = (
                calm.modifier(x, 0.0025, 5.0, 1.0),
                fed.modifier(x, 0.0025, 5.0, 1.0),
            );
            assert_eq!(a.to_bits(), b.to_bits(), "step {k}");
        }
        assert!(calm.get_slew_rate() > 0.0);
    }

    /// Runs a sine of amplitude `amp` at `hz` for `secs` at 400 Hz; returns the
    /// smallest modifier seen in the last second.
    fn run(amp: f32, hz: f32, secs: f32, smax: f32) -> f32 {
        let mut s = SlewLimiter::new();
        let dt = 0.0025_f32;
        let n = (secs / dt) as usize;
        let mut min_last = 1.0_f32;
        for i in 0..n {
            let t = i as f32 * dt;
            let m = s.modifier(amp * (std::f32::consts::TAU * hz * t).sin(), dt, smax, 1.0);
            assert!((0.05..=1.0).contains(&m), "modifier {m}");
            if t > secs - 1.0 {
                min_last = min_last.min(m);
            }
        }
        min_last
    }

    #[test]
    fn a_slow_output_is_left_alone() {
        // Peak slew 2π·1·0.5 ≈ 3.1/s, limit 10/s.
        assert_eq!(run(0.5, 1.0, 5.0, 10.0), 1.0);
    }

    #[test]
    fn an_oscillation_above_the_limit_lowers_the_gain_in_proportion() {
        // Peak slew 2π·5·1 ≈ 31/s against a limit of 10/s: about
        // 10 / (10 + 1.5·(31 − 10)) ≈ 0.24 once the peaks are held.
        let m = run(1.0, 5.0, 5.0, 10.0);
        assert!((0.2..0.35).contains(&m), "{m}");
        // Twice the amplitude, twice the exceedance: a smaller modifier.
        assert!(run(2.0, 5.0, 5.0, 10.0) < m);
    }

    #[test]
    fn a_single_step_is_not_an_oscillation() {
        let mut s = SlewLimiter::new();
        let mut last = 0.0;
        for i in 0..2000 {
            let sample = if i < 400 { 0.0 } else { 5.0 };
            last = s.modifier(sample, 0.0025, 10.0, 1.0);
        }
        assert_eq!(last, 1.0);
    }

    #[test]
    fn zero_limit_disables_and_bad_steps_are_ignored() {
        let mut s = SlewLimiter::new();
        assert_eq!(s.modifier(100.0, 0.01, 0.0, 1.0), 1.0);
        // Off, it still measures the slew rate (ArduPilot logs it).
        assert!(s.get_slew_rate() > 0.0);
        assert_eq!(s.modifier(100.0, 0.0, 1.0, 1.0), 1.0);
        assert_eq!(s.modifier(f32::NAN, 0.01, 1.0, 1.0), 1.0);
    }
}
