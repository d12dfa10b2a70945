//! `AR_AttitudeControl`: desired speed → throttle and desired turn rate →
//! steering, with acceleration, turn-rate and lateral-acceleration limits.
//!
//! Ported from ArduPilot's `libraries/APM_Control/AR_AttitudeControl.cpp`
//! (GPLv3); parameters carry ArduPilot's names (`ATC_*`) and defaults. Times are
//! seconds of the caller's clock (sim time); speeds m/s, rates rad/s (positive
//! clockwise seen from above, i.e. positive yaw in NED); throttle and steering
//! are normalised −1..1.

use super::control::{constrain, is_positive, wrap_pi, GRAVITY_MSS};
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
        let dt = dt.clamp(0.0, 1.0);
        let change_max = if v_des.abs() < self.desired_speed.abs() && self.params.decel_max > 0.0 {
            self.params.decel_max * dt
        } else {
            self.params.accel_max * dt
        };
        v_des.clamp(
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
        let base = if cruise_speed > 0.0 && cruise_throttle > 0.0 {
            self.desired_speed * cruise_throttle / cruise_speed
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
            }
            if self.desired_speed <= 0.0 && out >= 0.0 {
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
        let stopped_recently = self.stop_last_s.is_some_and(|t| now - t <= 0.3);
        let stopped = match input.forward_speed_m_s {
            None => true,
            Some(speed) => {
                stopped_recently || (desired == 0.0 && speed.abs() <= self.params.stop_speed)
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
        if rate_max > 0.0 {
            rate = rate.clamp(-rate_max, rate_max);
        }
        if self.params.str_acc_max > 0.0 {
            let lim = (2.0 * err.abs() * self.params.str_acc_max.to_radians()).sqrt();
            rate = rate.clamp(-lim, lim);
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
            if speed < 0.0 {
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
