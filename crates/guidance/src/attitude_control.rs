//! `AR_AttitudeControl`: desired speed → throttle and desired turn rate →
//! steering, with acceleration, turn-rate and lateral-acceleration limits.
//!
//! Ported from ArduPilot's `libraries/APM_Control/AR_AttitudeControl.cpp`
//! (GPLv3); parameters carry ArduPilot's names (`ATC_*`) and defaults. Times are
//! seconds of the caller's clock (sim time); speeds m/s, rates rad/s (positive
//! clockwise seen from above, i.e. positive yaw in NED); throttle and steering
//! are normalised −1..1.

use super::control::{
    constrain, is_negative, is_positive, is_zero, safe_sqrt, wrap_pi, GRAVITY_MSS,
};
use super::pid::{AcPid, PidGains};

/// `ATC_*` parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AttitudeParams {
    /// ATC_STR_RAT_P.
    pub str_rat_p: f64,
    /// ATC_STR_RAT_I.
    pub str_rat_i: f64,
    /// ATC_STR_RAT_D.
    pub str_rat_d: f64,
    /// ATC_STR_RAT_FF.
    pub str_rat_ff: f64,
    /// ATC_STR_RAT_IMAX.
    pub str_rat_imax: f64,
    /// ATC_STR_RAT_FLTT, Hz.
    pub str_rat_fltt: f64,
    /// ATC_STR_RAT_FLTE, Hz.
    pub str_rat_flte: f64,
    /// ATC_STR_RAT_FLTD, Hz.
    pub str_rat_fltd: f64,
    /// ATC_STR_RAT_SMAX, slew-rate limit of steering P + D, 1/s (0: off).
    pub str_rat_smax: f64,
    /// ATC_STR_ANG_P, (rad/s)/rad.
    pub str_ang_p: f64,
    /// ATC_STR_ACC_MAX, deg/s² (0: none).
    pub str_acc_max: f64,
    /// ATC_STR_DEC_MAX, deg/s² (0: ATC_STR_ACC_MAX limits the slowing
    /// too): the turn rate toward a heading is kept to what this
    /// deceleration can stop at it.
    pub str_dec_max: f64,
    /// ATC_STR_RAT_MAX, deg/s (0: none).
    pub str_rat_max: f64,
    /// ATC_SPEED_P.
    pub speed_p: f64,
    /// ATC_SPEED_I.
    pub speed_i: f64,
    /// ATC_SPEED_D.
    pub speed_d: f64,
    /// ATC_SPEED_FF.
    pub speed_ff: f64,
    /// ATC_SPEED_IMAX.
    pub speed_imax: f64,
    /// ATC_SPEED_FLTE, Hz.
    pub speed_flte: f64,
    /// ATC_SPEED_SMAX, slew-rate limit of throttle P + D, 1/s (0: off).
    pub speed_smax: f64,
    /// ATC_ACCEL_MAX, m/s² (0: none).
    pub accel_max: f64,
    /// ATC_DECEL_MAX, m/s² (0: use ATC_ACCEL_MAX).
    pub decel_max: f64,
    /// ATC_BRAKE (allow negative throttle to brake).
    pub brake: bool,
    /// ATC_STOP_SPEED, m/s.
    pub stop_speed: f64,
    /// ATC_TURN_MAX_G, g.
    pub turn_max_g: f64,
}

impl Default for AttitudeParams {
    fn default() -> Self {
        AttitudeParams {
            str_rat_p: 0.2,
            str_rat_i: 0.2,
            str_rat_d: 0.0,
            str_rat_ff: 0.2,
            str_rat_imax: 1.0,
            str_rat_fltt: 0.0,
            str_rat_flte: 10.0,
            str_rat_fltd: 0.0,
            str_rat_smax: 0.0,
            str_ang_p: 2.0,
            str_acc_max: 120.0,
            str_dec_max: 0.0,
            str_rat_max: 120.0,
            speed_p: 0.2,
            speed_i: 0.2,
            speed_d: 0.0,
            speed_ff: 0.0,
            speed_imax: 1.0,
            speed_flte: 10.0,
            speed_smax: 0.0,
            accel_max: 1.0,
            decel_max: 0.0,
            brake: true,
            stop_speed: 0.1,
            turn_max_g: 0.6,
        }
    }
}

/// What the controllers need to know of the vehicle each call.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct AttitudeInput {
    /// Caller's clock, s.
    pub now_s: f64,
    /// Speed along the heading, m/s (negative backwards); None if unknown.
    pub forward_speed_m_s: Option<f64>,
    /// Heading, rad (0 north, positive clockwise).
    pub yaw_rad: f64,
    /// Yaw rate in the earth frame, rad/s.
    pub yaw_rate_rad_s: f64,
}

/// Controllers' inactivity timeout, s.
const TIMEOUT_S: f64 = 0.2;
/// Minimum speed used to turn a lateral acceleration into a turn rate, m/s.
const STEER_SPEED_MIN: f64 = 1.0;

/// `AR_AttitudeControl`.
#[derive(Debug, Clone, PartialEq)]
pub struct ArAttitudeControl {
    /// Parameters.
    pub params: AttitudeParams,
    steer_rate_pid: AcPid,
    throttle_speed_pid: AcPid,
    desired_speed: f64,
    desired_turn_rate: f64,
    speed_last_s: Option<f64>,
    steer_turn_last_s: Option<f64>,
    stop_last_s: Option<f64>,
    throttle_limit_low: bool,
    throttle_limit_high: bool,
    steering_limit_left: bool,
    steering_limit_right: bool,
}

impl ArAttitudeControl {
    /// Controllers with `params`.
    pub fn new(params: AttitudeParams) -> Self {
        let p = params;
        ArAttitudeControl {
            steer_rate_pid: AcPid::new(PidGains {
                p: p.str_rat_p,
                i: p.str_rat_i,
                d: p.str_rat_d,
                ff: p.str_rat_ff,
                imax: p.str_rat_imax,
                filt_t_hz: p.str_rat_fltt,
                filt_e_hz: p.str_rat_flte,
                filt_d_hz: p.str_rat_fltd,
                smax: p.str_rat_smax,
            }),
            throttle_speed_pid: AcPid::new(PidGains {
                p: p.speed_p,
                i: p.speed_i,
                d: p.speed_d,
                ff: p.speed_ff,
                imax: p.speed_imax,
                filt_t_hz: 0.0,
                filt_e_hz: p.speed_flte,
                filt_d_hz: 0.0,
                smax: p.speed_smax,
            }),
            params,
            desired_speed: 0.0,
            desired_turn_rate: 0.0,
            speed_last_s: None,
            steer_turn_last_s: None,
            stop_last_s: None,
            throttle_limit_low: false,
            throttle_limit_high: false,
            steering_limit_left: false,
            steering_limit_right: false,
        }
    }

    /// Maximum lateral acceleration, m/s² (`get_turn_lat_accel_max`).
    pub fn get_turn_lat_accel_max(&self) -> f64 {
        self.params.turn_max_g.max(0.1) * GRAVITY_MSS
    }

    /// Deceleration limit, m/s² (`get_decel_max`).
    pub fn get_decel_max(&self) -> f64 {
        if self.params.decel_max > 0.0 {
            self.params.decel_max
        } else {
            self.params.accel_max
        }
    }

    /// Distance to stop from `speed` at the deceleration limit (`get_stopping_distance`).
    pub fn get_stopping_distance(&self, speed: f64) -> f64 {
        let d = self.get_decel_max();
        if d <= 0.0 {
            0.0
        } else {
            0.5 * speed * speed / d
        }
    }

    /// The last desired (accel-limited) speed, m/s.
    pub fn get_desired_speed(&self) -> f64 {
        self.desired_speed
    }

    /// The last desired turn rate, rad/s.
    pub fn get_desired_turn_rate(&self) -> f64 {
        self.desired_turn_rate
    }

    /// `v_des` limited to ATC_ACCEL_MAX / ATC_DECEL_MAX from the last desired
    /// speed (`get_desired_speed_accel_limited`).
    pub fn get_desired_speed_accel_limited(&self, v_des: f64, dt: f64, now_s: f64) -> f64 {
        let active = self.speed_last_s.is_some_and(|t| now_s - t <= TIMEOUT_S);
        if !active || self.params.accel_max <= 0.0 {
            return v_des;
        }
        let dt = constrain(dt, 0.0, 1.0);
        let change_max = if v_des.abs() < self.desired_speed.abs() && self.params.decel_max > 0.0 {
            self.params.decel_max * dt
        } else {
            self.params.accel_max * dt
        };
        constrain(
            v_des,
            self.desired_speed - change_max,
            self.desired_speed + change_max,
        )
    }

    /// Throttle (−1..1) to reach `v_des` (`get_throttle_out_speed`); `cruise_*`
    /// give the feed-forward base throttle·speed/cruise_speed.
    #[allow(clippy::too_many_arguments)]
    pub fn get_throttle_out_speed(
        &mut self,
        v_des: f64,
        motor_limit_low: bool,
        motor_limit_high: bool,
        cruise_speed: f64,
        cruise_throttle: f64,
        dt: f64,
        input: &AttitudeInput,
    ) -> f64 {
        let dt = dt.clamp(0.0, 1.0);
        let Some(speed) = input.forward_speed_m_s else {
            return 0.0;
        };
        let active = self
            .speed_last_s
            .is_some_and(|t| input.now_s - t <= TIMEOUT_S);
        if !active {
            self.throttle_speed_pid.reset_filter();
            self.throttle_speed_pid.reset_i();
            self.desired_speed = speed;
        }
        self.speed_last_s = Some(input.now_s);
        self.desired_speed = self.get_desired_speed_accel_limited(v_des, dt, input.now_s);
        // ArduPilot's base needs a positive cruise speed and throttle; a
        // throttle of 0 or less (or NaN) gives 0, as max(0) does.
        let base = if cruise_speed > 0.0 {
            self.desired_speed * cruise_throttle.max(0.0) / cruise_speed
        } else {
            0.0
        };
        let limit = motor_limit_low
            || motor_limit_high
            || self.throttle_limit_low
            || self.throttle_limit_high;
        let mut out = self
            .throttle_speed_pid
            .update_all(self.desired_speed, speed, dt, limit)
            + self.throttle_speed_pid.get_ff()
            + base;
        self.throttle_limit_low = false;
        self.throttle_limit_high = false;
        if !self.params.brake {
            if self.desired_speed >= 0.0 && out <= 0.0 {
                out = 0.0;
                self.throttle_limit_low = true;
            } else if self.desired_speed <= 0.0 && out >= 0.0 {
                out = 0.0;
                self.throttle_limit_high = true;
            }
        }
        out
    }

    /// Throttle to bring the vehicle to a stop; returns (throttle, stopped)
    /// (`get_throttle_out_stop`).
    pub fn get_throttle_out_stop(
        &mut self,
        motor_limit_low: bool,
        motor_limit_high: bool,
        cruise_speed: f64,
        cruise_throttle: f64,
        dt: f64,
        input: &AttitudeInput,
    ) -> (f64, bool) {
        let now = input.now_s;
        let desired = self.get_desired_speed_accel_limited(0.0, dt, now);
        let stopped_recently = self.stop_last_s.is_some_and(|t| now - t < 0.3);
        let stopped = match input.forward_speed_m_s {
            None => true,
            Some(speed) => {
                stopped_recently
                    || (is_zero(desired) && speed.abs() <= self.params.stop_speed.abs())
            }
        };
        if stopped {
            self.stop_last_s = Some(now);
            self.throttle_speed_pid.reset_i();
            self.throttle_speed_pid.reset_filter();
            self.desired_speed = 0.0;
            self.speed_last_s = Some(now);
            return (0.0, true);
        }
        self.stop_last_s = None;
        let t = self.get_throttle_out_speed(
            0.0,
            motor_limit_low,
            motor_limit_high,
            cruise_speed,
            cruise_throttle,
            dt,
            input,
        );
        (t, false)
    }

    /// Turn rate toward heading `heading_rad` at most `rate_max` rad/s (0: no
    /// limit) (`get_turn_rate_from_heading`).
    pub fn get_turn_rate_from_heading(&self, heading_rad: f64, rate_max: f64, yaw_rad: f64) -> f64 {
        let err = wrap_pi(heading_rad - yaw_rad);
        let mut rate = self.params.str_ang_p * err;
        if is_positive(rate_max) {
            rate = constrain(rate, -rate_max, rate_max);
        }
        // Slowed in time to stop at the heading: by ATC_STR_DEC_MAX, or
        // without one by ATC_STR_ACC_MAX.
        let decel = if is_positive(self.params.str_dec_max) {
            self.params.str_dec_max
        } else {
            self.params.str_acc_max
        };
        if is_positive(decel) {
            let lim = safe_sqrt(2.0 * err.abs() * decel.to_radians());
            rate = constrain(rate, -lim, lim);
        }
        rate
    }

    /// Whether the last steering output was limited turning left
    /// (anticlockwise) by the motors, the turn-rate ramp, ATC_STR_RAT_MAX or the
    /// lateral-g limit (`steering_limit_left`).
    pub fn steering_limit_left(&self) -> bool {
        self.steering_limit_left
    }

    /// Whether the last steering output was limited turning right (clockwise)
    /// by the motors, the turn-rate ramp, ATC_STR_RAT_MAX or the lateral-g
    /// limit (`steering_limit_right`).
    pub fn steering_limit_right(&self) -> bool {
        self.steering_limit_right
    }

    /// Turn rate for a lateral acceleration at a speed, rad/s (1 m/s floor)
    /// (`get_turn_rate_from_lat_accel`).
    pub fn get_turn_rate_from_lat_accel(&self, lat_accel: f64, speed: f64) -> f64 {
        let s = if speed.abs() < STEER_SPEED_MIN {
            if is_negative(speed) {
                -STEER_SPEED_MIN
            } else {
                STEER_SPEED_MIN
            }
        } else {
            speed
        };
        lat_accel / s
    }

    /// Steering (nominally −1..1) to reach turn rate `rate_des` rad/s
    /// (`get_steering_out_rate`).
    pub fn get_steering_out_rate(
        &mut self,
        rate_des: f64,
        motor_limit_left: bool,
        motor_limit_right: bool,
        dt: f64,
        input: &AttitudeInput,
    ) -> f64 {
        let dt = dt.clamp(0.0, 1.0);
        let active = self
            .steer_turn_last_s
            .is_some_and(|t| input.now_s - t <= TIMEOUT_S);
        if !active {
            self.steer_rate_pid.reset_filter();
            self.steer_rate_pid.reset_i();
            self.desired_turn_rate = input.yaw_rate_rad_s;
        }
        self.steer_turn_last_s = Some(input.now_s);
        // The limit flags the position controller reads; the PID's own
        // anti-windup sees only the motors' limits, as in ArduPilot.
        self.steering_limit_left = motor_limit_left;
        self.steering_limit_right = motor_limit_right;
        let mut rate = rate_des;
        if is_positive(self.params.str_acc_max) {
            let change_max = self.params.str_acc_max.to_radians() * dt;
            if rate <= self.desired_turn_rate - change_max {
                self.steering_limit_left = true;
            }
            if rate >= self.desired_turn_rate + change_max {
                self.steering_limit_right = true;
            }
            rate = constrain(
                rate,
                self.desired_turn_rate - change_max,
                self.desired_turn_rate + change_max,
            );
        }
        if is_positive(self.params.str_rat_max) {
            let m = self.params.str_rat_max.to_radians();
            if rate <= -m {
                self.steering_limit_left = true;
            }
            if rate >= m {
                self.steering_limit_right = true;
            }
            rate = constrain(rate, -m, m);
        }
        if let Some(speed) = input.forward_speed_m_s {
            let lat_lim = self
                .get_turn_rate_from_lat_accel(self.get_turn_lat_accel_max(), speed.abs())
                .max(1f64.to_radians());
            if rate <= -lat_lim {
                self.steering_limit_left = true;
            }
            if rate >= lat_lim {
                self.steering_limit_right = true;
            }
            rate = constrain(rate, -lat_lim, lat_lim);
        }
        self.desired_turn_rate = rate;
        self.steer_rate_pid.update_all(
            rate,
            input.yaw_rate_rad_s,
            dt,
            motor_limit_left || motor_limit_right,
        ) + self.steer_rate_pid.get_ff()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Proportional-only, unfiltered controllers: each output is arithmetic
    /// a reader can redo from ArduPilot's formulas.
    fn p_only() -> AttitudeParams {
        AttitudeParams {
            str_rat_p: 0.5,
            str_rat_i: 0.0,
            str_rat_ff: 0.0,
            str_rat_flte: 0.0,
            speed_p: 0.4,
            speed_i: 0.0,
            speed_flte: 0.0,
            accel_max: 2.0,
            decel_max: 4.0,
            ..AttitudeParams::default()
        }
    }

    fn at(now_s: f64, speed: f64, yaw_rate: f64) -> AttitudeInput {
        AttitudeInput {
            now_s,
            forward_speed_m_s: Some(speed),
            yaw_rad: 0.0,
            yaw_rate_rad_s: yaw_rate,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn lateral_g_deceleration_and_stopping_distance() {
        let mut c = ArAttitudeControl::new(p_only());
        assert!(close(c.get_turn_lat_accel_max(), 0.6 * GRAVITY_MSS));
        c.params.turn_max_g = 0.05; // floored at 0.1 g
        assert!(close(c.get_turn_lat_accel_max(), 0.1 * GRAVITY_MSS));
        assert_eq!(c.get_decel_max(), 4.0);
        // 0.5 v² / d: 3 m/s at 1.5 m/s² stops in 3 m.
        c.params.decel_max = 1.5;
        assert!(close(c.get_stopping_distance(3.0), 3.0));
        assert!(close(c.get_stopping_distance(-3.0), 3.0));
        // ATC_DECEL_MAX 0 falls back on ATC_ACCEL_MAX.
        c.params.decel_max = 0.0;
        assert_eq!(c.get_decel_max(), 2.0);
        assert!(close(c.get_stopping_distance(4.0), 4.0));
        c.params.accel_max = 0.0;
        assert_eq!(c.get_stopping_distance(4.0), 0.0);
    }

    #[test]
    fn the_desired_speed_ramps_at_the_accel_and_decel_limits_while_active() {
        let mut c = ArAttitudeControl::new(p_only());
        // Never run: the request passes unchanged.
        assert_eq!(c.get_desired_speed_accel_limited(10.0, 0.1, 0.0), 10.0);
        // The first run starts from the measured 1 m/s: +2 m/s² × 0.1 s.
        c.get_throttle_out_speed(10.0, false, false, 0.0, 0.0, 0.1, &at(0.0, 1.0, 0.0));
        assert!(close(c.get_desired_speed(), 1.2));
        // Slowing at 4 m/s², speeding up at 2, within the ramp as asked.
        assert!(close(
            c.get_desired_speed_accel_limited(0.0, 0.1, 0.05),
            0.8
        ));
        assert!(close(
            c.get_desired_speed_accel_limited(5.0, 0.1, 0.05),
            1.4
        ));
        assert!(close(
            c.get_desired_speed_accel_limited(1.25, 0.1, 0.05),
            1.25
        ));
        // The same speed the other way is not slower: the accel limit.
        assert!(close(
            c.get_desired_speed_accel_limited(-1.2, 0.1, 0.05),
            1.0
        ));
        // Active up to 0.2 s after the last run, not after.
        assert!(close(c.get_desired_speed_accel_limited(0.0, 0.1, 0.2), 0.8));
        assert_eq!(c.get_desired_speed_accel_limited(0.0, 0.1, 0.21), 0.0);
        // The same later on the clock: the timeout counts from the last run.
        let mut later = ArAttitudeControl::new(p_only());
        later.get_throttle_out_speed(10.0, false, false, 0.0, 0.0, 0.1, &at(10.0, 1.0, 0.0));
        assert!(close(
            later.get_desired_speed_accel_limited(0.0, 0.1, 10.05),
            0.8
        ));
        assert_eq!(later.get_desired_speed_accel_limited(0.0, 0.1, 10.25), 0.0);
        // Without a decel limit, slowing down goes at the accel limit.
        c.params.decel_max = 0.0;
        assert!(close(
            c.get_desired_speed_accel_limited(0.0, 0.1, 0.05),
            1.0
        ));
        // Without an accel limit, nothing is ramped.
        c.params.accel_max = 0.0;
        assert_eq!(c.get_desired_speed_accel_limited(7.0, 0.1, 0.05), 7.0);
    }

    #[test]
    fn reversing_ramps_the_same_way_mirrored() {
        let mut c = ArAttitudeControl::new(p_only());
        c.get_throttle_out_speed(-10.0, false, false, 0.0, 0.0, 0.1, &at(0.0, -1.0, 0.0));
        assert!(close(c.get_desired_speed(), -1.2));
        assert!(close(
            c.get_desired_speed_accel_limited(0.0, 0.1, 0.05),
            -0.8
        ));
        assert!(close(
            c.get_desired_speed_accel_limited(-5.0, 0.1, 0.05),
            -1.4
        ));
    }

    #[test]
    fn throttle_is_p_on_the_ramped_speed_plus_the_cruise_feed_forward() {
        let mut c = ArAttitudeControl::new(p_only());
        let input = at(0.0, 1.0, 0.0);
        assert_eq!(
            c.get_throttle_out_speed(
                2.0,
                false,
                false,
                5.0,
                0.5,
                0.1,
                &AttitudeInput {
                    forward_speed_m_s: None,
                    ..input
                }
            ),
            0.0
        );
        // 0.4 × (1.2 − 1.0) + 1.2 × 0.5 / 5.
        let t = c.get_throttle_out_speed(2.0, false, false, 5.0, 0.5, 0.1, &input);
        assert!(close(t, 0.08 + 0.12), "{t}");
        // ATC_SPEED_FF on the ramped speed.
        let mut c = ArAttitudeControl::new(AttitudeParams {
            speed_ff: 0.5,
            ..p_only()
        });
        let t = c.get_throttle_out_speed(2.0, false, false, 5.0, 0.5, 0.1, &input);
        assert!(close(t, 0.08 + 0.5 * 1.2 + 0.12), "{t}");
        // No feed-forward without a cruise speed or a cruise throttle.
        for (speed, throttle) in [(0.0, 0.5), (5.0, 0.0), (5.0, -0.5), (5.0, f64::NAN)] {
            let mut c = ArAttitudeControl::new(p_only());
            let t = c.get_throttle_out_speed(2.0, false, false, speed, throttle, 0.1, &input);
            assert!(close(t, 0.08), "{speed} {throttle}: {t}");
        }
    }

    #[test]
    fn without_atc_brake_the_throttle_never_opposes_the_direction_of_travel() {
        // Going forward too fast: braking throttle, or none.
        for (brake, want) in [(true, 0.4 * (2.6 - 3.0)), (false, 0.0)] {
            let mut c = ArAttitudeControl::new(AttitudeParams { brake, ..p_only() });
            let t = c.get_throttle_out_speed(0.0, false, false, 0.0, 0.0, 0.1, &at(0.0, 3.0, 0.0));
            assert!(close(t, want), "brake {brake}: {t}");
        }
        // Going backward too fast.
        for (brake, want) in [(true, 0.4 * (-2.6 + 3.0)), (false, 0.0)] {
            let mut c = ArAttitudeControl::new(AttitudeParams { brake, ..p_only() });
            let t =
                c.get_throttle_out_speed(-1.0, false, false, 0.0, 0.0, 0.1, &at(0.0, -3.0, 0.0));
            assert!(close(t, want), "brake {brake}: {t}");
        }
        // Forward and pushing forward: untouched.
        let mut c = ArAttitudeControl::new(AttitudeParams {
            brake: false,
            ..p_only()
        });
        let t = c.get_throttle_out_speed(2.0, false, false, 0.0, 0.0, 0.1, &at(0.0, 1.0, 0.0));
        assert!(close(t, 0.08), "{t}");
    }

    #[test]
    fn a_motor_limit_freezes_the_speed_integrator() {
        let i_only = AttitudeParams {
            speed_p: 0.0,
            speed_i: 1.0,
            ..p_only()
        };
        for (low, high, want) in [
            (false, false, 0.2 * 0.1),
            (true, false, 0.0),
            (false, true, 0.0),
        ] {
            let mut c = ArAttitudeControl::new(i_only);
            let t = c.get_throttle_out_speed(2.0, low, high, 0.0, 0.0, 0.1, &at(0.0, 1.0, 0.0));
            assert!(close(t, want), "limits {low} {high}: {t}");
        }
    }

    #[test]
    fn a_throttle_held_at_zero_without_atc_brake_stops_the_integrator_winding_on() {
        let i_only = AttitudeParams {
            speed_p: 0.0,
            speed_i: 1.0,
            brake: false,
            ..p_only()
        };
        // Too fast, faster, then stopped dead: the integrator takes the
        // first error (-0.04), is held while the throttle sits at zero,
        // then unwinds by 1.8 m/s × 0.1 s. Mirrored for reversing.
        for sign in [1.0, -1.0] {
            let mut c = ArAttitudeControl::new(i_only);
            let mut throttle = |now, speed| {
                let input = at(now, sign * speed, 0.0);
                c.get_throttle_out_speed(0.0, false, false, 0.0, 0.0, 0.1, &input)
            };
            assert_eq!(throttle(0.0, 3.0), 0.0);
            assert_eq!(throttle(0.1, 3.5), 0.0);
            let t = throttle(0.2, 0.0);
            assert!(close(t, sign * 0.14), "{sign}: {t}");
        }
    }

    /// The turn rate toward a heading (ATC_STR_ANG_P 2 on 0.5 rad: 1 rad/s)
    /// is kept to what ATC_STR_DEC_MAX can stop at the heading,
    /// √(2·0.5·10°/s²), or without one what ATC_STR_ACC_MAX can.
    #[test]
    fn the_turn_rate_to_a_heading_can_stop_there() {
        let mut c = ArAttitudeControl::new(AttitudeParams::default());
        assert!((c.get_turn_rate_from_heading(0.5, 0.0, 0.0) - 1.0).abs() < 1e-12);
        c.params.str_acc_max = 10.0;
        let lim = (2.0 * 0.5 * 10f64.to_radians()).sqrt();
        assert!((c.get_turn_rate_from_heading(0.5, 0.0, 0.0) - lim).abs() < 1e-12);
        c.params.str_acc_max = 120.0;
        c.params.str_dec_max = 10.0;
        assert!((c.get_turn_rate_from_heading(0.5, 0.0, 0.0) - lim).abs() < 1e-12);
        assert!((c.get_turn_rate_from_heading(-0.5, 0.0, 0.0) + lim).abs() < 1e-12);
        // A NaN heading gives no turn, not a panic.
        assert_eq!(c.get_turn_rate_from_heading(f64::NAN, 0.0, 0.0), 0.0);
        // Below the 1 m/s floor a speed within FLT_EPSILON of zero counts
        // as forward.
        assert_eq!(c.get_turn_rate_from_lat_accel(2.0, -1e-9), 2.0);
        assert_eq!(c.get_turn_rate_from_lat_accel(2.0, -0.5), -2.0);
    }

    #[test]
    fn stopping_is_declared_below_atc_stop_speed_and_held_for_0_3_s() {
        let mut c = ArAttitudeControl::new(p_only());
        let unknown = AttitudeInput {
            forward_speed_m_s: None,
            ..at(0.0, 0.0, 0.0)
        };
        assert_eq!(
            c.get_throttle_out_stop(false, false, 0.0, 0.0, 0.1, &unknown),
            (0.0, true)
        );
        // Moving: brake toward 0 at 4 m/s² from 2 m/s.
        let mut c = ArAttitudeControl::new(p_only());
        let (t, stopped) = c.get_throttle_out_stop(false, false, 0.0, 0.0, 0.1, &at(0.0, 2.0, 0.0));
        assert!(!stopped && close(t, 0.4 * (1.6 - 2.0)), "{t}");
        // Still ramping down (desired 1.2 m/s): not stopped, slow as it is.
        let (_, stopped) = c.get_throttle_out_stop(false, false, 0.0, 0.0, 0.1, &at(0.1, 0.1, 0.0));
        assert!(!stopped);
        // At exactly ATC_STOP_SPEED with nothing asked: stopped.
        let mut c = ArAttitudeControl::new(p_only());
        assert_eq!(
            c.get_throttle_out_stop(false, false, 0.0, 0.0, 0.1, &at(0.0, 0.1, 0.0)),
            (0.0, true)
        );
        assert_eq!(c.get_desired_speed(), 0.0);
        // Held for less than 0.3 s whatever the speed, then measured again.
        assert_eq!(
            c.get_throttle_out_stop(false, false, 0.0, 0.0, 0.1, &at(0.25, 2.0, 0.0)),
            (0.0, true)
        );
        let mut c2 = c.clone();
        let (_, stopped) =
            c2.get_throttle_out_stop(false, false, 0.0, 0.0, 0.1, &at(0.55, 2.0, 0.0));
        assert!(!stopped, "0.3 s after the last stop");
        let (_, stopped) = c.get_throttle_out_stop(false, false, 0.0, 0.0, 0.1, &at(0.5, 2.0, 0.0));
        assert!(stopped, "0.25 s after the last stop");
        // A negative ATC_STOP_SPEED counts by its size, as ArduPilot's.
        let mut c = ArAttitudeControl::new(AttitudeParams {
            stop_speed: -0.1,
            ..p_only()
        });
        let (_, stopped) = c.get_throttle_out_stop(false, false, 0.0, 0.0, 0.1, &at(0.0, 0.1, 0.0));
        assert!(stopped);
    }

    #[test]
    fn the_turn_rate_toward_a_heading_is_p_limited_by_rate_and_by_the_angular_acceleration() {
        let mut c = ArAttitudeControl::new(AttitudeParams {
            str_acc_max: 0.0,
            ..p_only()
        });
        // ATC_STR_ANG_P 2 on the wrapped error, both ways.
        assert!(close(c.get_turn_rate_from_heading(0.3, 0.0, 0.1), 0.4));
        assert!(close(c.get_turn_rate_from_heading(-0.3, 0.0, 0.1), -0.8));
        assert!(close(
            c.get_turn_rate_from_heading(3.0, 0.0, -3.0),
            2.0 * (6.0 - std::f64::consts::TAU)
        ));
        assert!(close(c.get_turn_rate_from_heading(0.3, 0.5, 0.1), 0.4));
        assert!(close(c.get_turn_rate_from_heading(-0.3, 0.5, 0.1), -0.5));
        assert!(close(c.get_turn_rate_from_heading(0.9, 0.5, 0.1), 0.5));
        // Stopping at 120 °/s² within the error: √(2 · |err| · 120°).
        c.params.str_acc_max = 120.0;
        c.params.str_ang_p = 5.0;
        let lim = (2.0 * 1.0 * 120f64.to_radians()).sqrt();
        assert!(close(c.get_turn_rate_from_heading(1.0, 0.0, 0.0), lim));
        assert!(close(c.get_turn_rate_from_heading(-1.0, 0.0, 0.0), -lim));
        assert!(close(c.get_turn_rate_from_heading(0.1, 0.0, 0.0), 0.5));
        let lim = (2.0 * 0.5 * 120f64.to_radians()).sqrt();
        assert!(close(c.get_turn_rate_from_heading(0.5, 0.0, 0.0), lim));
    }

    #[test]
    fn a_lateral_acceleration_turns_at_a_over_v_with_a_one_metre_per_second_floor() {
        let c = ArAttitudeControl::new(p_only());
        assert_eq!(c.get_turn_rate_from_lat_accel(2.0, 4.0), 0.5);
        assert_eq!(c.get_turn_rate_from_lat_accel(2.0, -4.0), -0.5);
        assert_eq!(c.get_turn_rate_from_lat_accel(2.0, 0.5), 2.0);
        assert_eq!(c.get_turn_rate_from_lat_accel(2.0, -0.5), -2.0);
        assert_eq!(c.get_turn_rate_from_lat_accel(2.0, 0.0), 2.0);
        assert_eq!(c.get_turn_rate_from_lat_accel(-2.0, 0.0), -2.0);
    }

    /// One steering run from rest (yaw rate 0 at 5 m/s) asking `rate_des`:
    /// (steering, left limit, right limit, desired turn rate).
    fn steer_once(params: AttitudeParams, rate_des: f64, speed: f64) -> (f64, bool, bool, f64) {
        let mut c = ArAttitudeControl::new(params);
        let s = c.get_steering_out_rate(rate_des, false, false, 0.1, &at(0.0, speed, 0.0));
        (
            s,
            c.steering_limit_left(),
            c.steering_limit_right(),
            c.get_desired_turn_rate(),
        )
    }

    #[test]
    fn steering_ramps_the_turn_rate_and_says_which_side_is_limited() {
        // ATC_STR_ACC_MAX 120 °/s² over 0.1 s from rest.
        let ramp = 120f64.to_radians() * 0.1;
        let (s, left, right, rate) = steer_once(p_only(), 1.0, 5.0);
        assert!(close(rate, ramp) && close(s, 0.5 * ramp), "{s} {rate}");
        assert_eq!((left, right), (false, true));
        let (s, left, right, rate) = steer_once(p_only(), -1.0, 5.0);
        assert!(close(rate, -ramp) && close(s, -0.5 * ramp), "{s} {rate}");
        assert_eq!((left, right), (true, false));
        // Within the ramp: neither, and P on the yaw rate's error.
        let mut c = ArAttitudeControl::new(p_only());
        c.get_steering_out_rate(1.0, false, false, 0.1, &at(0.0, 5.0, 0.0));
        let s = c.get_steering_out_rate(0.3, false, false, 0.1, &at(0.1, 5.0, 0.1));
        assert!(close(s, 0.5 * (0.3 - 0.1)), "{s}");
        assert!(!c.steering_limit_left() && !c.steering_limit_right());
        // A motor's limit is passed on.
        let s = c.get_steering_out_rate(0.3, true, false, 0.1, &at(0.2, 5.0, 0.1));
        assert!(close(s, 0.1) && c.steering_limit_left() && !c.steering_limit_right());
        let s = c.get_steering_out_rate(0.3, false, true, 0.1, &at(0.3, 5.0, 0.1));
        assert!(close(s, 0.1) && !c.steering_limit_left() && c.steering_limit_right());
    }

    #[test]
    fn runs_within_0_2_s_of_each_other_continue_the_ramps_and_later_ones_restart_them() {
        let ramp = 120f64.to_radians() * 0.1;
        let mut c = ArAttitudeControl::new(p_only());
        for (now, speed, turn) in [
            (10.0, 1.2, ramp),
            (10.1, 1.4, 2.0 * ramp),
            (10.4, 1.2, ramp),
        ] {
            c.get_throttle_out_speed(10.0, false, false, 0.0, 0.0, 0.1, &at(now, 1.0, 0.0));
            c.get_steering_out_rate(1.0, false, false, 0.1, &at(now, 1.0, 0.0));
            assert!(
                close(c.get_desired_speed(), speed),
                "{now}: {}",
                c.get_desired_speed()
            );
            let rate = c.get_desired_turn_rate();
            assert!(close(rate, turn), "{now}: {rate}");
        }
    }

    #[test]
    fn a_steering_motor_limit_either_way_freezes_the_rate_integrator() {
        let i_only = AttitudeParams {
            str_rat_p: 0.0,
            str_rat_i: 1.0,
            str_acc_max: 0.0,
            str_rat_max: 0.0,
            ..p_only()
        };
        for (left, right, want) in [
            (false, false, 0.5 * 0.1),
            (true, false, 0.0),
            (false, true, 0.0),
        ] {
            let mut c = ArAttitudeControl::new(i_only);
            let s = c.get_steering_out_rate(0.5, left, right, 0.1, &at(0.0, 5.0, 0.0));
            assert!(close(s, want), "limits {left} {right}: {s}");
        }
    }

    #[test]
    fn steering_is_limited_by_atc_str_rat_max_and_by_the_lateral_g() {
        let no_ramp = AttitudeParams {
            str_acc_max: 0.0,
            str_rat_max: 30.0,
            ..p_only()
        };
        let m = 30f64.to_radians();
        let (_, left, right, rate) = steer_once(no_ramp, 1.0, 5.0);
        assert!(close(rate, m) && (left, right) == (false, true));
        let (_, left, right, rate) = steer_once(no_ramp, -1.0, 5.0);
        assert!(close(rate, -m) && (left, right) == (true, false));
        let (_, left, right, rate) = steer_once(no_ramp, 0.2, 5.0);
        assert!(close(rate, 0.2) && (left, right) == (false, false));
        // 0.6 g at 10 m/s.
        let lateral = AttitudeParams {
            str_rat_max: 0.0,
            ..no_ramp
        };
        let g = 0.6 * GRAVITY_MSS / 10.0;
        let (_, left, right, rate) = steer_once(lateral, 1.0, 10.0);
        assert!(close(rate, g) && (left, right) == (false, true));
        let (_, left, right, rate) = steer_once(lateral, -1.0, -10.0);
        assert!(close(rate, -g) && (left, right) == (true, false));
        // Below 1 m/s the floor: 0.6 g per 1 m/s does not bind 1 rad/s.
        let (_, left, right, rate) = steer_once(lateral, 1.0, 0.5);
        assert!(close(rate, 1.0) && (left, right) == (false, false));
        // Fast, never below 1 °/s.
        let (_, _, right, rate) = steer_once(lateral, 1.0, 1000.0);
        assert!(close(rate, 1f64.to_radians()) && right);
        // Speed unknown: no lateral limit.
        let mut c = ArAttitudeControl::new(lateral);
        let input = AttitudeInput {
            forward_speed_m_s: None,
            ..at(0.0, 0.0, 0.0)
        };
        c.get_steering_out_rate(3.0, false, false, 0.1, &input);
        assert_eq!(c.get_desired_turn_rate(), 3.0);
    }
}
