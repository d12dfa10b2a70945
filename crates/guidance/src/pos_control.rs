//! `AR_PosControl`: a horizontal position/velocity/acceleration target → desired
//! speed, lateral acceleration and turn rate for a ground or surface vehicle.
//!
//! Ported from ArduPilot's `libraries/APM_Control/AR_PosControl.cpp` (GPLv3);
//! parameters `PSC_*` with ArduPilot's defaults. Positions are local NE metres,
//! velocities m/s, accelerations m/s²; "body" here is (forward, right).

use nalgebra::Vector2;

use super::attitude_control::{ArAttitudeControl, AttitudeInput};
use super::control::{limit_length, safe_sqrt, shape_pos_vel_accel_xy, update_pos_vel_accel_xy};
use super::pid::{AcP2D, AcPid2D, PidGains};

/// `PSC_*` parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PosControlParams {
    /// PSC_POS_P.
    pub pos_p: f64,
    /// PSC_VEL_P.
    pub vel_p: f64,
    /// PSC_VEL_I.
    pub vel_i: f64,
    /// PSC_VEL_D.
    pub vel_d: f64,
    /// PSC_VEL_FF.
    pub vel_ff: f64,
    /// PSC_VEL_IMAX, m/s².
    pub vel_imax: f64,
    /// PSC_VEL_FLTE, Hz.
    pub vel_flte: f64,
    /// PSC_VEL_FLTD, Hz.
    pub vel_fltd: f64,
}

impl Default for PosControlParams {
    fn default() -> Self {
        PosControlParams {
            pos_p: 0.2,
            vel_p: 1.0,
            vel_i: 0.0,
            vel_d: 0.0,
            vel_ff: 0.0,
            vel_imax: 1.0,
            vel_flte: 5.0,
            vel_fltd: 5.0,
        }
    }
}

/// The vehicle as the position controller sees it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct NavState {
    /// Caller's clock, s.
    pub now_s: f64,
    /// Armed (motors may run).
    pub armed: bool,
    /// Position, local NE, m.
    pub pos_ne_m: Vector2<f64>,
    /// Velocity over ground, NE, m/s.
    pub vel_ne_m_s: Vector2<f64>,
    /// Acceleration, NE, m/s².
    pub accel_ne_m_s2: Vector2<f64>,
    /// Heading, rad (0 north, clockwise positive).
    pub yaw_rad: f64,
    /// Yaw rate, rad/s.
    pub yaw_rate_rad_s: f64,
}

impl NavState {
    /// Speed along the heading, m/s.
    pub fn forward_speed_m_s(&self) -> f64 {
        let (s, c) = self.yaw_rad.sin_cos();
        self.vel_ne_m_s.x * c + self.vel_ne_m_s.y * s
    }

    /// The attitude controller's view.
    pub fn attitude_input(&self) -> AttitudeInput {
        AttitudeInput {
            now_s: self.now_s,
            forward_speed_m_s: Some(self.forward_speed_m_s()),
            yaw_rad: self.yaw_rad,
            yaw_rate_rad_s: self.yaw_rate_rad_s,
        }
    }
}

const TIMEOUT_S: f64 = 0.1;

/// `AR_PosControl`.
#[derive(Debug, Clone, PartialEq)]
pub struct ArPosControl {
    /// Parameters.
    pub params: PosControlParams,
    p_pos: AcP2D,
    pid_vel: AcPid2D,
    speed_max: f64,
    accel_max: f64,
    lat_accel_max: f64,
    jerk_max: f64,
    turn_radius: f64,
    pos_target: Vector2<f64>,
    vel_desired: Vector2<f64>,
    accel_desired: Vector2<f64>,
    pos_target_valid: bool,
    vel_desired_valid: bool,
    accel_desired_valid: bool,
    reversed: bool,
    desired_speed: f64,
    desired_lat_accel: f64,
    desired_turn_rate: f64,
    last_update_s: Option<f64>,
    pos_error: Vector2<f64>,
}

impl ArPosControl {
    /// A controller with `params`.
    pub fn new(params: PosControlParams) -> Self {
        ArPosControl {
            p_pos: AcP2D::new(params.pos_p),
            pid_vel: AcPid2D::new(PidGains {
                p: params.vel_p,
                i: params.vel_i,
                d: params.vel_d,
                ff: params.vel_ff,
                imax: params.vel_imax,
                filt_t_hz: 0.0,
                filt_e_hz: params.vel_flte,
                filt_d_hz: params.vel_fltd,
                smax: 0.0,
            }),
            params,
            speed_max: 0.0,
            accel_max: 0.0,
            lat_accel_max: 0.0,
            jerk_max: 0.0,
            turn_radius: 0.0,
            pos_target: Vector2::zeros(),
            vel_desired: Vector2::zeros(),
            accel_desired: Vector2::zeros(),
            pos_target_valid: false,
            vel_desired_valid: false,
            accel_desired_valid: false,
            reversed: false,
            desired_speed: 0.0,
            desired_lat_accel: 0.0,
            desired_turn_rate: 0.0,
            last_update_s: None,
            pos_error: Vector2::zeros(),
        }
    }

    /// Sets the speed, acceleration, lateral acceleration and jerk limits (`set_limits`).
    pub fn set_limits(
        &mut self,
        speed_max: f64,
        accel_max: f64,
        lat_accel_max: f64,
        jerk_max: f64,
    ) {
        self.speed_max = speed_max.max(0.0);
        self.accel_max = accel_max.max(0.0);
        self.lat_accel_max = lat_accel_max.max(0.0);
        self.jerk_max = jerk_max.max(0.0);
        self.p_pos.set_limits(
            self.speed_max,
            self.accel_max.min(self.lat_accel_max),
            self.jerk_max,
        );
    }

    /// Turning radius (0 when the vehicle can pivot) (`set_turn_params`).
    pub fn set_turn_params(&mut self, turn_radius: f64, pivot_possible: bool) {
        self.turn_radius = if pivot_possible {
            0.0
        } else {
            turn_radius.max(0.0)
        };
    }

    /// Drive backwards.
    pub fn set_reversed(&mut self, reversed: bool) {
        self.reversed = reversed;
    }

    /// Speed limit, m/s.
    pub fn get_speed_max(&self) -> f64 {
        self.speed_max
    }

    /// Acceleration limit, m/s².
    pub fn get_accel_max(&self) -> f64 {
        self.accel_max
    }

    /// Lateral acceleration limit, m/s².
    pub fn get_lat_accel_max(&self) -> f64 {
        self.lat_accel_max
    }

    /// Jerk limit, m/s³.
    pub fn get_jerk_max(&self) -> f64 {
        self.jerk_max
    }

    /// Whether it ran within the last 100 ms (`is_active`).
    pub fn is_active(&self, now_s: f64) -> bool {
        self.last_update_s.is_some_and(|t| now_s - t <= TIMEOUT_S)
    }

    /// Starts from the vehicle's current position, velocity and acceleration (`init`).
    pub fn init(&mut self, s: &NavState) {
        self.pos_target = s.pos_ne_m;
        self.vel_desired = s.vel_ne_m_s;
        self.accel_desired = s.accel_ne_m_s2;
        self.pos_target_valid = true;
        self.vel_desired_valid = true;
        self.accel_desired_valid = true;
        self.reversed = false;
    }

    /// Sets the three targets as given (the SCurve path) (`set_pos_vel_accel_target`).
    pub fn set_pos_vel_accel_target(
        &mut self,
        pos: Vector2<f64>,
        vel: Vector2<f64>,
        accel: Vector2<f64>,
    ) {
        self.pos_target = pos;
        self.vel_desired = vel;
        self.accel_desired = accel;
        self.pos_target_valid = true;
        self.vel_desired_valid = true;
        self.accel_desired_valid = true;
    }

    /// Moves the targets toward `pos` with jerk-limited shaping (`input_pos_target`).
    pub fn input_pos_target(&mut self, pos: &Vector2<f64>, dt: f64) {
        let zero = Vector2::zeros();
        update_pos_vel_accel_xy(
            &mut self.pos_target,
            &mut self.vel_desired,
            &self.accel_desired,
            dt,
            &zero,
            &zero,
            &zero,
        );
        let (pt, vd) = (self.pos_target, self.vel_desired);
        shape_pos_vel_accel_xy(
            pos,
            &zero,
            &zero,
            &pt,
            &vd,
            &mut self.accel_desired,
            self.speed_max,
            self.accel_max.min(self.lat_accel_max),
            self.jerk_max,
            dt,
            false,
        );
        self.pos_target_valid = true;
        self.vel_desired_valid = true;
        self.accel_desired_valid = true;
    }

    /// Position target, NE m.
    pub fn get_pos_target(&self) -> Vector2<f64> {
        self.pos_target
    }

    /// Desired (feed-forward) velocity, NE m/s.
    pub fn get_desired_velocity(&self) -> Vector2<f64> {
        self.vel_desired
    }

    /// Position error (target − vehicle), NE m, of the last update.
    pub fn get_pos_error(&self) -> Vector2<f64> {
        self.pos_error
    }

    /// Desired speed, m/s.
    pub fn get_desired_speed(&self) -> f64 {
        self.desired_speed
    }

    /// Desired turn rate, rad/s.
    pub fn get_desired_turn_rate_rads(&self) -> f64 {
        self.desired_turn_rate
    }

    /// Desired lateral acceleration, m/s².
    pub fn get_desired_lat_accel(&self) -> f64 {
        self.desired_lat_accel
    }

    /// Runs one step (`update`).
    pub fn update(&mut self, dt: f64, s: &NavState, atc: &ArAttitudeControl) {
        if !s.armed {
            self.desired_speed = atc.get_desired_speed_accel_limited(0.0, dt, s.now_s);
            self.desired_lat_accel = 0.0;
            self.desired_turn_rate = 0.0;
            return;
        }
        if !self.is_active(s.now_s) {
            self.pid_vel.reset_i();
            self.pid_vel.reset_filter();
        }
        self.last_update_s = Some(s.now_s);
        // The P controller clips only a copy of the target.
        let mut vel_target = if self.pos_target_valid {
            let mut target = self.pos_target;
            self.p_pos.update_all(&mut target, &s.pos_ne_m)
        } else {
            Vector2::zeros()
        };
        self.pos_error = self.pos_target - s.pos_ne_m;
        let mut stopping = false;
        if self.vel_desired_valid {
            vel_target += self.vel_desired;
            stopping = self.vel_desired == Vector2::zeros();
        }
        limit_length(&mut vel_target, self.speed_max);
        // Body axes in the earth frame: forward, right.
        let (sn, cs) = s.yaw_rad.sin_cos();
        let right_ef = Vector2::new(-sn, cs);
        let side = if self.reversed { -1.0 } else { 1.0 };
        let steering_limit = if atc.steering_limit_left() {
            -right_ef * side
        } else if atc.steering_limit_right() {
            right_ef * side
        } else {
            Vector2::zeros()
        };
        let mut accel_target =
            self.pid_vel
                .update_all(&vel_target, &s.vel_ne_m_s, dt, &steering_limit)
                + self.pid_vel.get_ff();
        if self.accel_desired_valid {
            accel_target += self.accel_desired;
        }
        // Only the lateral integrator is kept; along track it is zeroed.
        self.pid_vel
            .set_integrator(right_ef * self.pid_vel.integrator().dot(&right_ef));
        let to_fr = |v: &Vector2<f64>| Vector2::new(v.x * cs + v.y * sn, -v.x * sn + v.y * cs);
        let accel_fr = to_fr(&accel_target);
        let vel_fr = to_fr(&vel_target);
        let turn_speed_min = safe_sqrt(atc.get_turn_lat_accel_max() * 0.5 * self.turn_radius);
        let mut des_speed = vel_fr.x;
        if !stopping {
            let min_abs = vel_target.norm().min(turn_speed_min);
            des_speed = if self.reversed {
                (-min_abs).min(vel_fr.x)
            } else {
                min_abs.max(vel_fr.x)
            };
        }
        self.desired_speed = atc.get_desired_speed_accel_limited(des_speed, dt, s.now_s);
        self.desired_lat_accel = if stopping { 0.0 } else { accel_fr.y };
        self.desired_turn_rate =
            atc.get_turn_rate_from_lat_accel(self.desired_lat_accel, self.desired_speed);
    }
}
