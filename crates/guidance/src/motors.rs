//! `AP_MotorsUGV`: how ArduPilot Rover turns the steering and throttle its
//! controllers ask for into outputs, and the limit flags it feeds back to them.
//!
//! Ported from ArduPilot's `libraries/AR_Motors/AP_MotorsUGV.cpp` (GPLv3):
//! `set_throttle` (MOT_THR_MAX), `slew_limit_throttle` (MOT_SLEWRATE),
//! `output_regular` (steering scaled down above MOT_SPD_SCA_BASE and
//! reversed going astern), `output_skid_steering` (the mixer that keeps
//! steering authority when throttle and steering saturate, MOT_STR_THR_MIX,
//! with the MOT_THST_ASYM correction for weaker reverse thrust) and
//! `get_scaled_throttle` (MOT_THR_MIN, MOT_THST_EXPO). Steering and throttle
//! are normalised, −1..1, where ArduPilot uses ±4500 and ±100.

use crate::control::{is_negative, is_positive};

/// `MOT_*` parameters (ArduPilot names, Rover's defaults).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MotorsParams {
    /// MOT_THR_MIN, % (0–20): the least throttle that moves the vehicle.
    pub thr_min: f64,
    /// MOT_THR_MAX, % (30–100).
    pub thr_max: f64,
    /// MOT_SLEWRATE, %/s (0: no limit): throttle change rate.
    pub slew_rate: f64,
    /// MOT_SPD_SCA_BASE, m/s: regular steering is scaled down above it.
    pub spd_sca_base: f64,
    /// MOT_STR_THR_MIX, 0.2–1: skid steering's priority of steering (1)
    /// over throttle (0) when both saturate.
    pub str_thr_mix: f64,
    /// MOT_THST_ASYM, 1–10: forward thrust / reverse thrust of a skid
    /// steering vehicle's motors.
    pub thst_asym: f64,
    /// MOT_THST_EXPO, −1..1 (0: linear): thrust curve.
    pub thst_expo: f64,
}

impl Default for MotorsParams {
    fn default() -> Self {
        MotorsParams {
            thr_min: 0.0,
            thr_max: 100.0,
            slew_rate: 100.0,
            spd_sca_base: 1.0,
            str_thr_mix: 0.5,
            thst_asym: 1.0,
            thst_expo: 0.0,
        }
    }
}

/// The limit flags (`AP_MotorsUGV::limit`): which way an output saturated
/// on the last cycle, so the controllers stop integrating that way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MotorLimits {
    /// Steering saturated to the left.
    pub steer_left: bool,
    /// Steering saturated to the right.
    pub steer_right: bool,
    /// Throttle saturated low.
    pub throttle_lower: bool,
    /// Throttle saturated high.
    pub throttle_upper: bool,
}

/// The outputs of one cycle, each −1..1.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MotorOutputs {
    /// The steering servo (regular steering): scaled by speed.
    pub steering: f64,
    /// The throttle (regular steering).
    pub throttle: f64,
    /// Left motor (skid steering, ThrottleLeft).
    pub left: f64,
    /// Right motor (skid steering, ThrottleRight).
    pub right: f64,
}

/// `AP_MotorsUGV` for a regular-steering or skid-steering vehicle.
#[derive(Debug, Clone, PartialEq)]
pub struct ArMotorsUgv {
    /// Parameters.
    pub params: MotorsParams,
    /// Skid steering (ThrottleLeft and ThrottleRight assigned).
    pub skid_steering: bool,
    throttle_prev: f64,
    limit: MotorLimits,
}

impl ArMotorsUgv {
    /// Motors with `params`, skid steering or not.
    pub fn new(params: MotorsParams, skid_steering: bool) -> Self {
        ArMotorsUgv {
            params,
            skid_steering,
            throttle_prev: 0.0,
            limit: MotorLimits::default(),
        }
    }

    /// The limit flags of the last [`output`](Self::output).
    pub fn limit(&self) -> MotorLimits {
        self.limit
    }

    /// One cycle (`set_steering`, `set_throttle`, `output`): `steering` and
    /// `throttle` −1..1 as the controllers asked, `ground_speed` the forward
    /// speed, m/s, `dt` s. Disarmed: zero outputs, every limit set.
    pub fn output(
        &mut self,
        armed: bool,
        ground_speed: f64,
        steering: f64,
        throttle: f64,
        dt: f64,
    ) -> MotorOutputs {
        let p = self.params;
        let thr_max = p.thr_max.clamp(30.0, 100.0) / 100.0;
        let mut throttle = if armed {
            throttle.clamp(-thr_max, thr_max)
        } else {
            0.0
        };
        self.limit = MotorLimits::default();
        // slew_limit_throttle
        if p.slew_rate > 0.0 {
            let step = p.slew_rate / 100.0 * dt;
            let limited = throttle.clamp(self.throttle_prev - step, self.throttle_prev + step);
            self.limit.throttle_upper |= throttle > limited;
            self.limit.throttle_lower |= throttle < limited;
            throttle = limited;
        }
        self.throttle_prev = throttle;
        if !armed {
            self.limit = MotorLimits {
                steer_left: true,
                steer_right: true,
                throttle_lower: true,
                throttle_upper: true,
            };
            return MotorOutputs::default();
        }
        let mut out = self.output_regular(ground_speed, steering, throttle);
        if self.skid_steering {
            let (left, right) = self.output_skid_steering(steering, throttle);
            out.left = left;
            out.right = right;
        }
        out
    }

    /// `output_regular`: steering scaled by MOT_SPD_SCA_BASE / |speed| above
    /// that speed (a steering rover below it marks both steering limits),
    /// reversed going astern.
    fn output_regular(&mut self, ground_speed: f64, steering: f64, throttle: f64) -> MotorOutputs {
        let base = self.params.spd_sca_base;
        let mut steering = steering;
        if is_positive(base) && ground_speed.abs() > base {
            steering *= base / ground_speed.abs();
        } else if !self.skid_steering {
            self.limit.steer_left = true;
            self.limit.steer_right = true;
        }
        if is_negative(ground_speed) {
            steering = -steering;
        }
        self.set_limits_from_input(steering, throttle);
        MotorOutputs {
            steering: steering.clamp(-1.0, 1.0),
            throttle: self.scaled_throttle(throttle),
            ..MotorOutputs::default()
        }
    }

    /// `set_limits_from_input` (armed).
    fn set_limits_from_input(&mut self, steering: f64, throttle: f64) {
        let thr_max = self.params.thr_max.clamp(30.0, 100.0) / 100.0;
        self.limit.steer_left |= steering <= -1.0;
        self.limit.steer_right |= steering >= 1.0;
        self.limit.throttle_lower |= throttle <= -thr_max;
        self.limit.throttle_upper |= throttle >= thr_max;
    }

    /// `output_skid_steering`: (left, right).
    fn output_skid_steering(&mut self, steering: f64, throttle: f64) -> (f64, f64) {
        self.set_limits_from_input(steering, throttle);
        let mut str_s = steering.clamp(-1.0, 1.0);
        let mut thr_s = throttle;
        let asym = self.params.thst_asym.max(1.0);
        let lower = -1.0 / asym;
        let best = (1.0 + lower) * 0.5;
        let range = if thr_s < best {
            thr_s.max(0.0) - lower
        } else {
            1.0 - best
        };
        if str_s > range {
            self.limit.steer_right = true;
            str_s = range;
        } else if str_s < -range {
            self.limit.steer_left = true;
            str_s = -range;
        }
        if thr_s > 1.0 {
            self.limit.throttle_upper = true;
            thr_s = 1.0;
        } else if thr_s < lower {
            self.limit.throttle_lower = true;
            thr_s = lower;
        }
        let max_output = thr_s + str_s.abs();
        let min_output = thr_s - str_s.abs();
        let saturation = max_output.max(min_output / lower);
        if saturation > 1.0 {
            let (str_orig, thr_orig) = (str_s, thr_s);
            (str_s, thr_s) = self.desaturate(str_s, thr_s, saturation, lower, best);
            if str_s.abs() < str_orig.abs() {
                self.limit.steer_left |= str_orig < 0.0;
                self.limit.steer_right |= str_orig > 0.0;
            }
            if thr_s.abs() < thr_orig.abs() {
                self.limit.throttle_lower |= thr_orig < 0.0;
                self.limit.throttle_upper |= thr_orig > 0.0;
            }
        }
        let asym_fix = |m: f64| if m < 0.0 { m * asym } else { m };
        (
            self.scaled_throttle(asym_fix(thr_s + str_s)),
            self.scaled_throttle(asym_fix(thr_s - str_s)),
        )
    }

    /// Scales steering and throttle back together by MOT_STR_THR_MIX.
    fn desaturate(
        &self,
        str_s: f64,
        thr_s: f64,
        saturation: f64,
        lower: f64,
        best: f64,
    ) -> (f64, f64) {
        let mix = self.params.str_thr_mix.clamp(0.0, 1.0);
        let fair = 1.0 / saturation;
        if mix >= 0.5 {
            // Steering first.
            let s = str_s * lerp(fair, 1.0, mix, 0.5, 1.0);
            let t = if thr_s >= best {
                1.0 - s.abs()
            } else {
                s.abs() + lower
            };
            (s, t)
        } else {
            // Throttle first.
            let t = thr_s * lerp(fair, 1.0, 0.5 - mix, 0.0, 0.5);
            // What is left, with the steering's sign.
            let left = if t >= best { 1.0 - t } else { t - lower };
            let s = if is_positive(str_s) { left } else { -left };
            (s, t)
        }
    }

    /// `get_scaled_throttle`: MOT_THR_MIN, then the MOT_THST_EXPO curve.
    fn scaled_throttle(&self, throttle: f64) -> f64 {
        if throttle == 0.0 {
            return 0.0;
        }
        let p = self.params;
        let mut t = throttle * 100.0;
        if p.thr_min > 0.0 {
            let k = (100.0 - p.thr_min) * 0.01;
            t = if t < 0.0 {
                -p.thr_min + t * k
            } else {
                p.thr_min + t * k
            };
        }
        let e = p.thst_expo;
        if e == 0.0 || !(-1.0..=1.0).contains(&e) {
            return (t / 100.0).clamp(-1.0, 1.0);
        }
        let sign = if t < 0.0 { -1.0 } else { 1.0 };
        let pct = (t / 100.0).clamp(-1.0, 1.0).abs();
        let root = ((1.0 - e) * (1.0 - e) + 4.0 * e * pct).max(0.0).sqrt();
        (sign * ((e - 1.0) + root) / (2.0 * e)).clamp(-1.0, 1.0)
    }
}

/// ArduPilot's `linear_interpolate(low_output, high_output, var_value,
/// var_low, var_high)`.
fn lerp(out_low: f64, out_high: f64, v: f64, v_low: f64, v_high: f64) -> f64 {
    if v <= v_low {
        return out_low;
    }
    if v >= v_high {
        return out_high;
    }
    out_low + (v - v_low) / (v_high - v_low) * (out_high - out_low)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settled(m: &mut ArMotorsUgv, speed: f64, steering: f64, throttle: f64) -> MotorOutputs {
        let mut o = MotorOutputs::default();
        for _ in 0..200 {
            o = m.output(true, speed, steering, throttle, 0.02);
        }
        o
    }

    #[test]
    fn the_throttle_slews_at_mot_slewrate() {
        let mut m = ArMotorsUgv::new(MotorsParams::default(), false);
        // 100 %/s over 0.02 s: 2 % a cycle, and the upper limit flagged.
        let o = m.output(true, 0.0, 0.0, 0.6, 0.02);
        assert!((o.throttle - 0.02).abs() < 1e-12);
        assert!(m.limit().throttle_upper && !m.limit().throttle_lower);
        let o = m.output(true, 0.0, 0.0, -0.6, 0.02);
        assert!(o.throttle.abs() < 1e-12);
        assert!(m.limit().throttle_lower && !m.limit().throttle_upper);
    }

    #[test]
    fn regular_steering_scales_with_speed_and_reverses_astern() {
        let mut m = ArMotorsUgv::new(MotorsParams::default(), false);
        // 2.5 m/s over a 1 m/s base: 0.4 × 0.5.
        let o = settled(&mut m, 2.5, 0.5, 0.3);
        assert!((o.steering - 0.2).abs() < 1e-12);
        assert!((o.throttle - 0.3).abs() < 1e-12);
        assert!(!m.limit().steer_left && !m.limit().steer_right);
        let o = settled(&mut m, -2.5, 0.5, 0.3);
        assert!((o.steering + 0.2).abs() < 1e-12);
        // Slow: unscaled, and a steering rover marks both limits.
        let o = settled(&mut m, 0.5, -0.5, 0.3);
        assert!((o.steering + 0.5).abs() < 1e-12);
        assert!(m.limit().steer_left && m.limit().steer_right);
    }

    #[test]
    fn skid_steering_mixes_and_keeps_steering_when_saturated() {
        let mut m = ArMotorsUgv::new(MotorsParams::default(), true);
        // In range: throttle ± steering.
        let o = settled(&mut m, 1.0, 0.25, 0.5);
        assert!((o.left - 0.75).abs() < 1e-12 && (o.right - 0.25).abs() < 1e-12);
        assert_eq!(m.limit(), MotorLimits::default());
        // 0.8 + 0.6 saturates at 1.4: MOT_STR_THR_MIX 0.5 scales steering by
        // 1/1.4 and gives throttle what is left: left 1, right 1 − 2·0.4286.
        let o = settled(&mut m, 1.0, -0.6, 0.8);
        let s = 0.6 / 1.4;
        assert!((o.left - (1.0 - 2.0 * s)).abs() < 1e-9, "{o:?}");
        assert!((o.right - 1.0).abs() < 1e-9, "{o:?}");
        assert!(m.limit().steer_left && m.limit().throttle_upper);
        assert!(!m.limit().steer_right);
        // The same to the right flags the right.
        settled(&mut m, 1.0, 0.6, 0.8);
        assert!(m.limit().steer_right && !m.limit().steer_left);
        // Steering first (MOT_STR_THR_MIX 1): all the steering, less throttle;
        // the steering, not cut, is not flagged.
        m.params.str_thr_mix = 1.0;
        let o = settled(&mut m, 1.0, 0.6, 0.8);
        assert!(
            (o.left - 1.0).abs() < 1e-9 && (o.right + 0.2).abs() < 1e-9,
            "{o:?}"
        );
        assert!(!m.limit().steer_right && m.limit().throttle_upper);
    }

    #[test]
    fn skid_steering_corrects_weaker_reverse_thrust() {
        // MOT_THST_ASYM 1.25: reverse commands × 1.25, and the pivot range
        // is that of the weaker direction: (1 − 0.8) / 2 = 0.1 best throttle.
        let p = MotorsParams {
            thst_asym: 1.25,
            ..MotorsParams::default()
        };
        let mut m = ArMotorsUgv::new(p, true);
        let o = settled(&mut m, 0.0, 0.4, 0.0);
        assert!((o.left - 0.4).abs() < 1e-12, "{o:?}");
        assert!((o.right + 0.5).abs() < 1e-12, "{o:?}");
        // Full steering at rest: steering range 0 − (−0.8) = 0.8.
        let o = settled(&mut m, 0.0, -1.0, 0.0);
        assert!(
            (o.left + 1.0).abs() < 1e-12 && (o.right - 0.8).abs() < 1e-12,
            "{o:?}"
        );
        assert!(m.limit().steer_left);
    }

    /// MOT_THR_MAX caps the throttle (never below 30 %) and flags the
    /// limit it reaches.
    #[test]
    fn mot_thr_max_caps_the_throttle() {
        for (thr_max, cap) in [(60.0, 0.6), (20.0, 0.3), (100.0, 0.9)] {
            let p = MotorsParams {
                thr_max,
                slew_rate: 0.0,
                ..MotorsParams::default()
            };
            let mut m = ArMotorsUgv::new(p, false);
            let o = m.output(true, 2.0, 0.0, 0.9, 0.02);
            assert!((o.throttle - cap).abs() < 1e-12, "{thr_max}: {o:?}");
            assert_eq!(m.limit().throttle_upper, cap < 0.9, "{thr_max}");
            m.output(true, 2.0, 0.0, -0.9, 0.02);
            assert_eq!(m.limit().throttle_lower, cap < 0.9, "{thr_max}");
        }
    }

    /// Regular steering is scaled only above a positive MOT_SPD_SCA_BASE
    /// (at it, or with none, it is not, and a steering rover flags both
    /// limits), reversed only going astern, and flags the side it reaches.
    #[test]
    fn regular_steering_at_the_edges_of_its_scaling() {
        let mut m = ArMotorsUgv::new(MotorsParams::default(), false);
        let o = settled(&mut m, 1.0, 0.5, 0.3);
        assert!((o.steering - 0.5).abs() < 1e-12);
        assert!(m.limit().steer_left && m.limit().steer_right);
        let o = settled(&mut m, 0.0, 0.5, 0.3);
        assert!((o.steering - 0.5).abs() < 1e-12, "not reversed at rest");
        // Past full: 2.5 at 2 m/s is 1.25, the right limit.
        let o = settled(&mut m, 2.0, 2.5, 0.3);
        assert!((o.steering - 1.0).abs() < 1e-12);
        assert!(m.limit().steer_right && !m.limit().steer_left);
        settled(&mut m, 2.0, -2.5, 0.3);
        assert!(m.limit().steer_left && !m.limit().steer_right);
        m.params.spd_sca_base = 0.0;
        let o = settled(&mut m, 2.5, 0.5, 0.3);
        assert!((o.steering - 0.5).abs() < 1e-12, "no scaling: {o:?}");
        assert!(m.limit().steer_left && m.limit().steer_right);
    }

    /// The skid-steering mixer with MOT_THST_ASYM 1.25 (reverse limit −0.8,
    /// best steering throttle 0.1): the steering range below and above the
    /// best throttle, the throttle clamps, and each saturation priority.
    #[test]
    fn skid_steering_ranges_clamps_and_priorities() {
        let asym = |mix: f64| MotorsParams {
            thst_asym: 1.25,
            str_thr_mix: mix,
            slew_rate: 0.0,
            ..MotorsParams::default()
        };
        let mix = |p: MotorsParams, steering: f64, throttle: f64| {
            let mut m = ArMotorsUgv::new(p, true);
            let o = m.output(true, 0.0, steering, throttle, 0.02);
            (o.left, o.right, m.limit())
        };
        let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
        // Below the best throttle the range is throttle + 0.8: 0.9 is cut
        // to 0.85; the reverse side is scaled up by 1.25.
        let (l, r, lim) = mix(asym(0.5), 0.9, 0.05);
        assert!(near(l, 0.9) && near(r, -1.0), "{l} {r}");
        assert!(lim.steer_right && !lim.steer_left);
        let (l, r, lim) = mix(asym(0.5), -0.9, 0.05);
        assert!(near(l, -1.0) && near(r, 0.9), "{l} {r}");
        assert!(lim.steer_left && !lim.steer_right);
        // Reversing, the range is 0.8 whatever the throttle.
        let (l, r, _) = mix(asym(0.5), -0.5, -0.3);
        assert!(near(l, -1.0) && near(r, 0.2), "{l} {r}");
        // Above it the range is 1 − 0.1; 1.4 saturates: steering first
        // at MOT_STR_THR_MIX 0.5, scaled by 1/1.4, throttle what is left.
        let (l, r, lim) = mix(asym(0.5), 0.95, 0.5);
        let s = 0.9 / 1.4;
        assert!(near(l, 1.0) && near(r, (1.0 - 2.0 * s) * 1.25), "{l} {r}");
        assert!(lim.steer_right && lim.throttle_upper);
        // Throttle clamps: below −0.8 and above 1.
        let (l, r, lim) = mix(asym(0.5), 0.0, -0.9);
        assert!(near(l, -1.0) && near(r, -1.0) && lim.throttle_lower);
        let (l, r, lim) = mix(asym(0.5), 0.0, 1.3);
        assert!(near(l, 1.0) && near(r, 1.0) && lim.throttle_upper);
        // Throttle first (0.2), reversing: saturation 1.2/0.8 = 1.5, the
        // throttle scaled by 1/1.5 + 0.6·(1 − 1/1.5), steering what is left
        // above −0.8, with its sign.
        let t = -0.7 * (1.0 / 1.5 + 0.6 * (1.0 - 1.0 / 1.5));
        let (l, r, _) = mix(asym(0.2), 0.5, -0.7);
        assert!(near(l, (2.0 * t + 0.8) * 1.25) && near(r, -1.0), "{l} {r}");
        let (l, r, _) = mix(asym(0.2), -0.5, -0.7);
        assert!(near(l, -1.0) && near(r, (2.0 * t + 0.8) * 1.25), "{l} {r}");
        // Throttle first going forward: steering what is left below 1.
        let sym = MotorsParams {
            str_thr_mix: 0.2,
            slew_rate: 0.0,
            ..MotorsParams::default()
        };
        let t = 0.8 * (1.0 / 1.4 + 0.6 * (1.0 - 1.0 / 1.4));
        let (l, r, _) = mix(sym, -0.6, 0.8);
        assert!(near(l, 2.0 * t - 1.0) && near(r, 1.0), "{l} {r}");
        // Steering first, reversing: the steering fair-scaled, the throttle
        // what is left above −0.8.
        let s = 0.5 / 1.5;
        let (l, r, lim) = mix(asym(0.5), 0.5, -0.7);
        assert!(near(l, (2.0 * s - 0.8) * 1.25) && near(r, -1.0), "{l} {r}");
        assert!(lim.steer_right && lim.throttle_lower, "both cut: {lim:?}");
        // Throttle first, reversing: only the throttle is cut and flagged.
        let (_, _, lim) = mix(asym(0.2), 0.5, -0.7);
        assert!(lim.throttle_lower && !lim.throttle_upper, "{lim:?}");
        // Throttle first above full throttle: the throttle is clamped to 1
        // before the mix (and flagged), then shared with the steering.
        let t = 1.0 / 1.3 + 0.6 * (1.0 - 1.0 / 1.3);
        let (l, r, lim) = mix(sym, 0.3, 1.3);
        assert!(near(l, 1.0) && near(r, 2.0 * t - 1.0), "{l} {r}");
        assert!(
            lim.throttle_upper && lim.steer_right && !lim.steer_left,
            "{lim:?}"
        );
        // ... and below full reverse.
        let t = -(1.0 / 1.3 + 0.6 * (1.0 - 1.0 / 1.3));
        let (l, r, lim) = mix(sym, 0.3, -1.3);
        assert!(near(l, 2.0 * t + 1.0) && near(r, -1.0), "{l} {r}");
        assert!(lim.throttle_lower && !lim.throttle_upper, "{lim:?}");
        // Steering first but not all of it (0.75): halfway from the fair
        // 1/1.4 to all, throttle what is left below 1.
        let s = 0.6 * (1.0 / 1.4 + 0.5 * (1.0 - 1.0 / 1.4));
        let (l, r, _) = mix(
            MotorsParams {
                str_thr_mix: 0.75,
                ..sym
            },
            0.6,
            0.8,
        );
        assert!(near(l, 1.0) && near(r, 1.0 - 2.0 * s), "{l} {r}");
    }

    #[test]
    fn thr_min_and_the_thrust_curve_scale_the_throttle() {
        let p = MotorsParams {
            thr_min: 10.0,
            slew_rate: 0.0,
            ..MotorsParams::default()
        };
        let mut m = ArMotorsUgv::new(p, false);
        let o = m.output(true, 0.0, 0.0, 0.5, 0.02);
        assert!((o.throttle - 0.55).abs() < 1e-12);
        let o = m.output(true, 0.0, 0.0, -0.5, 0.02);
        assert!((o.throttle + 0.55).abs() < 1e-12);
        // Expo 0.5 at 25 %: (−0.5 + √(0.25 + 0.5)) / 1 = 0.366.
        m.params = MotorsParams {
            thst_expo: 0.5,
            slew_rate: 0.0,
            ..MotorsParams::default()
        };
        let o = m.output(true, 0.0, 0.0, 0.25, 0.02);
        assert!((o.throttle - (0.75f64.sqrt() - 0.5)).abs() < 1e-12);
        let o = m.output(true, 0.0, 0.0, -0.25, 0.02);
        assert!(
            (o.throttle + (0.75f64.sqrt() - 0.5)).abs() < 1e-12,
            "astern"
        );
        assert_eq!(
            m.output(false, 0.0, 0.3, 0.3, 0.02),
            MotorOutputs::default()
        );
    }
}
