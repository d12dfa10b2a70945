//! ArduPilot's PID building blocks: `AC_PID` (scalar), `AC_PID_2D` (vector) and
//! `AC_P_2D` (square-root position P), from `libraries/AC_PID/` (GPLv3).
//!
//! Filters are first-order low-passes with α = dt/(dt + 1/(2π·f)) (f = 0: no
//! filter). `AC_PID` scales P and D by the slew-rate modifier of `SMAX` (see
//! [`super::slew_limiter`]), computed from the previous step's P + D as ArduPilot
//! does; the output is P + I + D, with FF returned separately as ArduPilot's
//! `get_ff`. The integrator grows by error·I·dt, is held while the output is
//! limited unless the error would shrink it, and is clamped to ±IMAX; sign
//! tests use ArduPilot's single-precision epsilon.

use nalgebra::Vector2;

use super::control::{
    inv_sqrt_controller, is_negative, is_positive, is_zero, limit_length, sqrt_controller_xy,
};
use super::slew_limiter::SlewLimiter;

/// Low-pass coefficient for cut-off `hz` at step `dt`
/// (`calc_lowpass_alpha_dt`): 1 when unfiltered or for a negative argument,
/// 0 for no time.
pub fn lowpass_alpha(hz: f64, dt: f64) -> f64 {
    if is_negative(dt) || is_negative(hz) || is_zero(hz) {
        1.0
    } else if is_zero(dt) {
        0.0
    } else {
        dt / (dt + 1.0 / (std::f64::consts::TAU * hz))
    }
}

/// Gains and filters of a PID (ArduPilot's parameter suffixes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PidGains {
    /// P.
    pub p: f64,
    /// I.
    pub i: f64,
    /// D.
    pub d: f64,
    /// Feed-forward.
    pub ff: f64,
    /// Integrator limit.
    pub imax: f64,
    /// Target filter, Hz (FLTT).
    pub filt_t_hz: f64,
    /// Error filter, Hz (FLTE).
    pub filt_e_hz: f64,
    /// Derivative filter, Hz (FLTD).
    pub filt_d_hz: f64,
    /// Slew-rate limit of P + D, output units/s (SMAX; 0: off).
    pub smax: f64,
}

/// AC_PID's slew-rate decay time constant, s (`AC_PID_SLEW_RATE_TAU`).
pub const SLEW_RATE_TAU_S: f64 = 1.0;

/// `AC_PID`.
#[derive(Debug, Clone, PartialEq)]
pub struct AcPid {
    /// Gains.
    pub gains: PidGains,
    target: f64,
    error: f64,
    derivative: f64,
    integrator: f64,
    reset_filter: bool,
    slew_limiter: SlewLimiter,
    /// P and D of the last step (`_pid_info.P`, `_pid_info.D`).
    p_d_last: (f64, f64),
    d_mod: f64,
}

impl AcPid {
    /// A PID with the filters reset.
    pub fn new(gains: PidGains) -> Self {
        AcPid {
            gains,
            target: 0.0,
            error: 0.0,
            derivative: 0.0,
            integrator: 0.0,
            reset_filter: true,
            slew_limiter: SlewLimiter::new(),
            p_d_last: (0.0, 0.0),
            d_mod: 1.0,
        }
    }

    /// Runs one step (`update_all`); `limit` stops the integrator growing.
    /// Returns P + I + D (add [`AcPid::get_ff`] for the feed-forward).
    pub fn update_all(&mut self, target: f64, measurement: f64, dt: f64, limit: bool) -> f64 {
        let g = self.gains;
        if !(target.is_finite() && measurement.is_finite()) {
            return 0.0;
        }
        if self.reset_filter {
            self.reset_filter = false;
            self.target = target;
            self.error = self.target - measurement;
            self.derivative = 0.0;
        } else {
            let error_last = self.error;
            self.target += lowpass_alpha(g.filt_t_hz, dt) * (target - self.target);
            self.error +=
                lowpass_alpha(g.filt_e_hz, dt) * ((self.target - measurement) - self.error);
            if is_positive(dt) {
                let d = (self.error - error_last) / dt;
                self.derivative += lowpass_alpha(g.filt_d_hz, dt) * (d - self.derivative);
            }
        }
        self.update_i(dt, limit);
        let (p_last, d_last) = self.p_d_last;
        self.d_mod = f64::from(self.slew_limiter.modifier(
            (p_last + d_last) as f32,
            dt as f32,
            g.smax as f32,
            SLEW_RATE_TAU_S as f32,
        ));
        let p_out = self.error * g.p * self.d_mod;
        let d_out = self.derivative * g.d * self.d_mod;
        self.p_d_last = (p_out, d_out);
        p_out + self.integrator + d_out
    }

    /// The slew-rate modifier applied to P and D at the last step (1: none)
    /// (`_pid_info.Dmod`).
    pub fn d_mod(&self) -> f64 {
        self.d_mod
    }

    fn update_i(&mut self, dt: f64, limit: bool) {
        let g = self.gains;
        if !is_zero(g.i) && is_positive(dt) {
            if !limit
                || (is_positive(self.integrator) && is_negative(self.error))
                || (is_negative(self.integrator) && is_positive(self.error))
            {
                self.integrator += self.error * g.i * dt;
                self.integrator = self.integrator.clamp(-g.imax.abs(), g.imax.abs());
            }
        } else {
            self.integrator = 0.0;
        }
    }

    /// Feed-forward term: FF × filtered target (`get_ff`).
    pub fn get_ff(&self) -> f64 {
        self.target * self.gains.ff
    }

    /// Clears the integrator (`reset_I`).
    pub fn reset_i(&mut self) {
        self.integrator = 0.0;
    }

    /// Restarts the filters at the next update (`reset_filter`).
    pub fn reset_filter(&mut self) {
        self.reset_filter = true;
    }

    /// The integrator.
    pub fn integrator(&self) -> f64 {
        self.integrator
    }
}

/// `AC_PID_2D`: the same on a horizontal vector.
#[derive(Debug, Clone, PartialEq)]
pub struct AcPid2D {
    /// Gains (FLTT unused).
    pub gains: PidGains,
    target: Vector2<f64>,
    error: Vector2<f64>,
    derivative: Vector2<f64>,
    integrator: Vector2<f64>,
    reset_filter: bool,
}

impl AcPid2D {
    /// A 2-D PID with the filters reset.
    pub fn new(gains: PidGains) -> Self {
        AcPid2D {
            gains,
            target: Vector2::zeros(),
            error: Vector2::zeros(),
            derivative: Vector2::zeros(),
            integrator: Vector2::zeros(),
            reset_filter: true,
        }
    }

    /// Runs one step (`update_all`); the integrator may not grow along `limit`.
    pub fn update_all(
        &mut self,
        target: &Vector2<f64>,
        measurement: &Vector2<f64>,
        dt: f64,
        limit: &Vector2<f64>,
    ) -> Vector2<f64> {
        let g = self.gains;
        if !(target
            .iter()
            .chain(measurement.iter())
            .all(|x| x.is_finite()))
        {
            return Vector2::zeros();
        }
        self.target = *target;
        if self.reset_filter {
            self.reset_filter = false;
            self.error = target - measurement;
            self.derivative = Vector2::zeros();
        } else {
            let error_last = self.error;
            self.error += ((target - measurement) - self.error) * lowpass_alpha(g.filt_e_hz, dt);
            if is_positive(dt) {
                let d = (self.error - error_last) / dt;
                self.derivative += (d - self.derivative) * lowpass_alpha(g.filt_d_hz, dt);
            }
        }
        self.update_i(dt, limit);
        self.error * g.p + self.integrator + self.derivative * g.d
    }

    /// `update_i`: the integrator grows by error·I·dt, but not in length
    /// while that growth points along `limit` (the direction the output is
    /// saturated in), and never beyond IMAX.
    fn update_i(&mut self, dt: f64, limit: &Vector2<f64>) {
        let g = self.gains;
        let delta = (self.error * g.i) * dt;
        let length = self.integrator.norm();
        self.integrator += delta;
        if is_positive(delta.dot(limit)) {
            limit_length(&mut self.integrator, length);
        }
        limit_length(&mut self.integrator, g.imax);
    }

    /// The integrator (NE).
    pub fn integrator(&self) -> Vector2<f64> {
        self.integrator
    }

    /// Sets the integrator, within IMAX (`set_integrator`).
    pub fn set_integrator(&mut self, i: Vector2<f64>) {
        self.integrator = i;
        limit_length(&mut self.integrator, self.gains.imax);
    }

    /// Feed-forward term.
    pub fn get_ff(&self) -> Vector2<f64> {
        self.target * self.gains.ff
    }

    /// Clears the integrator.
    pub fn reset_i(&mut self) {
        self.integrator = Vector2::zeros();
    }

    /// Restarts the filters at the next update.
    pub fn reset_filter(&mut self) {
        self.reset_filter = true;
    }
}

/// `AC_P_2D`: a square-root P controller on a horizontal position error.
#[derive(Debug, Clone, PartialEq)]
pub struct AcP2D {
    /// Gain.
    pub kp: f64,
    error_max: f64,
    d1_max: f64,
}

impl AcP2D {
    /// A controller with gain `kp` and no limits.
    pub fn new(kp: f64) -> Self {
        AcP2D {
            kp,
            error_max: 0.0,
            d1_max: 0.0,
        }
    }

    /// Sets the output limit, its derivative limit and the second derivative
    /// limit (`set_limits`).
    pub fn set_limits(&mut self, output_max: f64, d1_max: f64, d2_max: f64) {
        self.d1_max = 0.0;
        self.error_max = 0.0;
        if is_positive(d1_max) {
            self.d1_max = d1_max;
        }
        if is_positive(d2_max) && is_positive(self.kp) {
            self.d1_max = self.d1_max.min(d2_max / self.kp);
        }
        if is_positive(output_max) && is_positive(self.kp) {
            self.error_max = inv_sqrt_controller(output_max, self.kp, self.d1_max);
        }
    }

    /// Output for `target` and `measurement` (`update_all`); when the error
    /// exceeds its limit the target is moved to within it, as ArduPilot does.
    pub fn update_all(
        &mut self,
        target: &mut Vector2<f64>,
        measurement: &Vector2<f64>,
    ) -> Vector2<f64> {
        let mut error = *target - measurement;
        if is_positive(self.error_max) && limit_length(&mut error, self.error_max) {
            *target = measurement + error;
        }
        // No dt, as ArduPilot: the output is not limited to what one step
        // can absorb.
        sqrt_controller_xy(&error, self.kp, self.d1_max, 0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `calc_lowpass_alpha_dt`: 1 (no filter) for a negative step or
    /// cut-off or none, 0 for no time, else dt/(dt + 1/(2π·f)).
    #[test]
    fn the_lowpass_coefficient_at_its_edges() {
        assert_eq!(lowpass_alpha(5.0, -0.01), 1.0);
        assert_eq!(lowpass_alpha(-5.0, 0.01), 1.0);
        assert_eq!(lowpass_alpha(0.0, 0.01), 1.0);
        assert_eq!(lowpass_alpha(5.0, 0.0), 0.0);
        let rc = 1.0 / (std::f64::consts::TAU * 5.0);
        assert!((lowpass_alpha(5.0, 0.01) - 0.01 / (0.01 + rc)).abs() < 1e-15);
    }

    /// A target or measurement that is not a number gives no output and
    /// leaves the state as it was, either way round.
    #[test]
    fn a_nan_input_gives_nothing_and_changes_nothing() {
        let mut pid = AcPid::new(gains(1.0, 1.0));
        pid.update_all(1.0, 0.0, 0.02, false);
        let before = pid.clone();
        assert_eq!(pid.update_all(1.0, f64::NAN, 0.02, false), 0.0);
        assert_eq!(pid.update_all(f64::NAN, 0.0, 0.02, false), 0.0);
        assert_eq!(pid, before);
        let mut pid = AcPid2D::new(gains(1.0, 1.0));
        let one = Vector2::new(1.0, 0.0);
        pid.update_all(&one, &Vector2::zeros(), 0.02, &Vector2::zeros());
        let before = pid.clone();
        let nan = Vector2::new(f64::NAN, 0.0);
        let out = pid.update_all(&one, &nan, 0.02, &Vector2::zeros());
        assert_eq!(out, Vector2::zeros());
        let out = pid.update_all(&nan, &one, 0.02, &Vector2::zeros());
        assert_eq!(out, Vector2::zeros());
        assert_eq!(pid, before);
    }

    fn gains(p: f64, i: f64) -> PidGains {
        PidGains {
            p,
            i,
            d: 0.0,
            ff: 0.5,
            imax: 1.0,
            filt_t_hz: 0.0,
            filt_e_hz: 0.0,
            filt_d_hz: 0.0,
            smax: 0.0,
        }
    }

    #[test]
    fn pid_integrates_with_anti_windup_and_imax() {
        let mut pid = AcPid::new(gains(2.0, 1.0));
        let out = pid.update_all(1.0, 0.0, 0.1, false);
        assert!((out - (2.0 + 0.1)).abs() < 1e-12);
        assert_eq!(pid.get_ff(), 0.5);
        for _ in 0..100 {
            pid.update_all(1.0, 0.0, 0.1, false);
        }
        assert_eq!(pid.integrator(), 1.0, "IMAX");
        pid.reset_i();
        pid.update_all(1.0, 0.0, 0.1, true);
        assert_eq!(pid.integrator(), 0.0, "limited: may not grow");
    }

    #[test]
    fn p2d_moves_a_far_target() {
        let mut p = AcP2D::new(0.2);
        p.set_limits(2.0, 1.0, 1.0);
        let mut target = Vector2::new(1000.0, 0.0);
        let out = p.update_all(&mut target, &Vector2::zeros());
        assert!(target.x < 1000.0, "target pulled in to the error limit");
        assert!(
            (out.norm() - 2.0).abs() < 1e-9,
            "output at its limit: {}",
            out.norm()
        );
    }

    #[test]
    fn smax_tames_an_oscillating_loop_and_leaves_a_calm_one() {
        // A rate loop whose measurement oscillates at 5 Hz: P alone would slew
        // the output at 2π·5·(2·0.5) ≈ 31/s.
        let mut g = gains(2.0, 0.0);
        g.smax = 5.0;
        let mut pid = AcPid::new(g);
        let mut calm = AcPid::new(g);
        let dt = 0.0025;
        for i in 0..2000 {
            let t = f64::from(i) * dt;
            pid.update_all(
                0.0,
                0.5 * (std::f64::consts::TAU * 5.0 * t).sin(),
                dt,
                false,
            );
            calm.update_all(
                0.0,
                0.5 * (std::f64::consts::TAU * 0.2 * t).sin(),
                dt,
                false,
            );
        }
        assert!(pid.d_mod() < 0.5, "{}", pid.d_mod());
        assert_eq!(calm.d_mod(), 1.0);
        // SMAX 0 is off.
        let mut off = AcPid::new(gains(2.0, 0.0));
        for i in 0..2000 {
            let t = f64::from(i) * dt;
            off.update_all(
                0.0,
                0.5 * (std::f64::consts::TAU * 5.0 * t).sin(),
                dt,
                false,
            );
        }
        assert_eq!(off.d_mod(), 1.0);
    }

    #[test]
    fn pid_2d_integrator_holds_its_length_while_pushing_into_the_limit() {
        let mut g = gains(0.0, 1.0);
        g.imax = 10.0;
        let mut pid = AcPid2D::new(g);
        let dt = 0.1;
        let free = Vector2::zeros();
        // Builds up along +x.
        for _ in 0..10 {
            pid.update_all(&Vector2::new(1.0, 0.0), &Vector2::zeros(), dt, &free);
        }
        let built = pid.integrator();
        assert!((built.x - 1.0).abs() < 1e-9, "{built}");
        // Saturated along +x: an error along +x and +y may turn the
        // integrator but not lengthen it.
        let limit = Vector2::new(1.0, 0.0);
        for _ in 0..10 {
            pid.update_all(&Vector2::new(1.0, 1.0), &Vector2::zeros(), dt, &limit);
            assert!((pid.integrator().norm() - built.norm()).abs() < 1e-9);
        }
        assert!(pid.integrator().y > 0.1, "{}", pid.integrator());
        // An error against the limit shrinks it.
        pid.update_all(&Vector2::new(-1.0, 0.0), &Vector2::zeros(), dt, &limit);
        assert!(pid.integrator().norm() < built.norm());
        // IMAX bounds it; NaN inputs give nothing and change nothing.
        let before = pid.integrator();
        let out = pid.update_all(&Vector2::new(f64::NAN, 0.0), &Vector2::zeros(), dt, &free);
        assert_eq!((out, pid.integrator()), (Vector2::zeros(), before));
        for _ in 0..1000 {
            pid.update_all(&Vector2::new(5.0, 5.0), &Vector2::zeros(), dt, &free);
        }
        assert!((pid.integrator().norm() - 10.0).abs() < 1e-9);
    }
}
