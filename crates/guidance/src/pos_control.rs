//! `AR_PosControl`: a horizontal position/velocity/acceleration target → desired
//! speed, lateral acceleration and turn rate for a ground or surface vehicle.
//!
//! Ported from ArduPilot's `libraries/APM_Control/AR_PosControl.cpp` (GPLv3);
//! parameters `PSC_*` with ArduPilot's defaults. Positions are local NE metres,
//! velocities m/s, accelerations m/s²; "body" here is (forward, right).

use nalgebra::Vector2;

use super::attitude_control::{ArAttitudeControl, AttitudeInput};
use super::control::{
    is_zero_xy, limit_length, safe_sqrt, shape_pos_vel_accel_xy, update_pos_vel_accel_xy,
};
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

    /// The position P gain in use (`get_pos_p().kP()`).
    pub fn get_pos_p(&self) -> f64 {
        self.p_pos.kp
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

    /// Whether it ran less than 100 ms ago (`is_active`).
    pub fn is_active(&self, now_s: f64) -> bool {
        self.last_update_s.is_some_and(|t| now_s - t < TIMEOUT_S)
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

    /// Desired (feed-forward) velocity, NE m/s; zero when none is set
    /// (`get_desired_velocity`).
    pub fn get_desired_velocity(&self) -> Vector2<f64> {
        if self.vel_desired_valid {
            self.vel_desired
        } else {
            Vector2::zeros()
        }
    }

    /// Position error from the vehicle at `s` to the target, NE m; zero
    /// while the controller is not running (`get_pos_error`, which reads
    /// the position now, not at the last update).
    pub fn get_pos_error(&self, s: &NavState) -> Vector2<f64> {
        if self.is_active(s.now_s) {
            self.pos_target - s.pos_ne_m
        } else {
            Vector2::zeros()
        }
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
        let mut stopping = false;
        if self.vel_desired_valid {
            vel_target += self.vel_desired;
            stopping = is_zero_xy(&self.vel_desired);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attitude_control::AttitudeParams;
    use crate::control::GRAVITY_MSS;

    /// ArduPilot's PSC defaults (POS_P 0.2, VEL_P 1, no I, D or FF) and
    /// Rover's limits: 2 m/s, 1 m/s², 1 m/s² laterally, 1 m/s³.
    fn psc() -> (ArPosControl, ArAttitudeControl) {
        let mut p = ArPosControl::new(PosControlParams::default());
        p.set_limits(2.0, 1.0, 1.0, 1.0);
        (p, ArAttitudeControl::new(AttitudeParams::default()))
    }

    /// Heading north at the origin, at rest, at `now_s`.
    fn north(now_s: f64) -> NavState {
        NavState {
            now_s,
            armed: true,
            ..Default::default()
        }
    }

    /// The limits are kept (never negative), and the controller is active
    /// for less than 100 ms after an update.
    #[test]
    fn limits_and_activity() {
        let (mut p, atc) = psc();
        assert_eq!((p.get_speed_max(), p.get_accel_max()), (2.0, 1.0), "as set");
        assert_eq!((p.get_lat_accel_max(), p.get_jerk_max()), (1.0, 1.0));
        p.set_limits(-1.0, -1.0, -1.0, -1.0);
        assert_eq!(p.get_speed_max() + p.get_accel_max(), 0.0);
        assert_eq!(p.get_lat_accel_max() + p.get_jerk_max(), 0.0);
        let (mut p, _) = psc();
        assert!(!p.is_active(0.0));
        p.update(0.02, &north(1.0), &atc);
        assert!(p.is_active(1.0) && p.is_active(1.099));
        assert!(!p.is_active(1.1));
        // Exactly 100 ms after is no longer active.
        let (mut p, _) = psc();
        p.update(0.02, &north(0.0), &atc);
        assert!(!p.is_active(0.1));
    }

    /// The targets as given; the position error is read from where the
    /// vehicle is now, and is zero while the controller is not running.
    #[test]
    fn targets_and_the_live_position_error() {
        let (mut p, atc) = psc();
        assert_eq!(p.get_desired_velocity(), Vector2::zeros(), "none set");
        let (pos, vel) = (Vector2::new(10.0, 4.0), Vector2::new(1.0, 0.5));
        p.set_pos_vel_accel_target(pos, vel, Vector2::new(0.1, 0.0));
        assert_eq!((p.get_pos_target(), p.get_desired_velocity()), (pos, vel));
        let moved = NavState {
            pos_ne_m: Vector2::new(3.0, 1.0),
            ..north(1.05)
        };
        assert_eq!(p.get_pos_error(&moved), Vector2::zeros(), "not running");
        p.update(0.02, &north(1.0), &atc);
        assert_eq!(p.get_pos_error(&moved), Vector2::new(7.0, 3.0));
        p.init(&moved);
        assert_eq!(p.get_pos_target(), moved.pos_ne_m);
        assert_eq!(p.get_desired_velocity(), Vector2::zeros());
    }

    /// A target ahead: the square-root P velocity (here 0.2 × 10 m,
    /// inside its linear region of 1/0.2² = 25 m) plus the desired one,
    /// limited to 2 m/s, is the desired speed; nothing sideways, no turn.
    #[test]
    fn a_target_ahead_is_a_speed() {
        let (mut p, atc) = psc();
        p.set_pos_vel_accel_target(
            Vector2::new(5.0, 0.0),
            Vector2::new(0.5, 0.0),
            Vector2::zeros(),
        );
        p.update(0.02, &north(1.0), &atc);
        // 0.2 × 5 + 0.5.
        assert!((p.get_desired_speed() - 1.5).abs() < 1e-12);
        assert_eq!(p.get_desired_lat_accel(), 0.0);
        assert_eq!(p.get_desired_turn_rate_rads(), 0.0);
        p.set_pos_vel_accel_target(
            Vector2::new(10.0, 0.0),
            Vector2::new(1.5, 0.0),
            Vector2::zeros(),
        );
        p.update(0.02, &north(1.02), &atc);
        assert!((p.get_desired_speed() - 2.0).abs() < 1e-9, "limited");
    }

    /// A target to the right: the velocity P (1) on the 2 m/s toward it
    /// is a lateral acceleration and a turn; the speed is the least a turn
    /// of TURN_RADIUS at half the turn acceleration allows, forward or,
    /// reversed, astern.
    #[test]
    fn a_target_abeam_is_a_turn_at_the_least_turning_speed() {
        for reversed in [false, true] {
            let (mut p, atc) = psc();
            p.set_turn_params(0.9, false);
            p.set_reversed(reversed);
            p.set_pos_vel_accel_target(
                Vector2::new(0.0, 10.0),
                Vector2::new(0.0, 0.5),
                Vector2::zeros(),
            );
            p.update(0.02, &north(1.0), &atc);
            let speed = (0.6 * GRAVITY_MSS * 0.5 * 0.9).sqrt();
            let want = if reversed { -speed } else { speed };
            assert!((p.get_desired_speed() - want).abs() < 1e-12, "{reversed}");
            assert!((p.get_desired_lat_accel() - 2.0).abs() < 1e-12);
            let rate = 2.0 / want;
            assert!((p.get_desired_turn_rate_rads() - rate).abs() < 1e-12);
        }
        // A vehicle that can pivot has no least turning speed.
        let (mut p, atc) = psc();
        p.set_turn_params(0.9, true);
        p.set_pos_vel_accel_target(
            Vector2::new(0.0, 10.0),
            Vector2::new(0.0, 0.5),
            Vector2::zeros(),
        );
        p.update(0.02, &north(1.0), &atc);
        assert_eq!(p.get_desired_speed(), 0.0);
    }

    /// The desired acceleration is fed forward; the velocity error is
    /// filtered (PSC_VEL_FLTE 5 Hz) from one update to the next, and the
    /// filter starts afresh after a pause.
    #[test]
    fn the_acceleration_is_fed_forward_and_the_error_filtered() {
        let (mut p, atc) = psc();
        let target = |p: &mut ArPosControl| {
            p.set_pos_vel_accel_target(
                Vector2::new(0.0, 10.0),
                Vector2::new(0.0, 0.5),
                Vector2::new(0.0, 0.25),
            )
        };
        target(&mut p);
        p.update(0.02, &north(1.0), &atc);
        // 2 m/s to the right asked, at rest: P 1 × 2, plus 0.25 fed forward.
        assert!((p.get_desired_lat_accel() - 2.25).abs() < 1e-12);
        // Moving right at 1 m/s: the error 1 is filtered from 2.
        let moving = NavState {
            vel_ne_m_s: Vector2::new(0.0, 1.0),
            ..north(1.02)
        };
        target(&mut p);
        p.update(0.02, &moving, &atc);
        let alpha = 0.02 / (0.02 + 1.0 / (std::f64::consts::TAU * 5.0));
        let filtered = 2.0 + alpha * (1.0 - 2.0);
        assert!((p.get_desired_lat_accel() - (filtered + 0.25)).abs() < 1e-12);
        // After a pause of more than 100 ms the filter restarts.
        target(&mut p);
        p.update(
            0.02,
            &NavState {
                now_s: 2.0,
                ..moving
            },
            &atc,
        );
        assert!((p.get_desired_lat_accel() - 1.25).abs() < 1e-12);
    }

    /// Stopping (a zero desired velocity) steers nothing; disarmed,
    /// nothing at all.
    #[test]
    fn stopping_and_disarmed() {
        let (mut p, atc) = psc();
        p.set_pos_vel_accel_target(Vector2::new(3.0, 3.0), Vector2::zeros(), Vector2::zeros());
        p.update(0.02, &north(1.0), &atc);
        assert_eq!(p.get_desired_lat_accel(), 0.0);
        assert!((p.get_desired_speed() - 0.6).abs() < 1e-12, "0.2 × 3 north");
        let disarmed = NavState {
            armed: false,
            ..north(1.02)
        };
        p.update(0.02, &disarmed, &atc);
        assert_eq!(p.get_desired_speed(), 0.0);
        assert_eq!(p.get_desired_turn_rate_rads(), 0.0);
    }

    /// Input shaping moves the target toward the point at no more than the
    /// jerk limit: from rest, one step of 0.02 s gives 0.02 m/s² toward it.
    #[test]
    fn input_shaping_starts_at_the_jerk_limit() {
        let (mut p, _) = psc();
        p.init(&north(0.0));
        p.input_pos_target(&Vector2::new(30.0, 40.0), 0.02);
        p.input_pos_target(&Vector2::new(30.0, 40.0), 0.02);
        // The second step moved the target by ½·a·dt² with a = 0.02 m/s²
        // along (0.6, 0.8); the velocity is a·dt.
        let v = p.get_desired_velocity();
        assert!(
            (v - Vector2::new(0.6, 0.8) * 0.02 * 0.02).norm() < 1e-12,
            "{v}"
        );
        let moved = p.get_pos_target();
        let want = Vector2::new(0.6, 0.8) * 0.5 * 0.02 * 0.02 * 0.02;
        assert!((moved - want).norm() < 1e-12, "{moved}");
    }

    /// With PSC_VEL_I, the integrator grows towards a lateral velocity error
    /// unless the steering is already at its limit on that side: the side
    /// is the body's right or left, swapped when reversing.
    #[test]
    fn the_integrator_stops_growing_into_a_steering_limit() {
        let dt = 0.02;
        // Heading north, wanting 0.5 m/s east (to the right) with no position
        // error: the velocity error, and the integrator's step, point east.
        let grows = |left: bool, right: bool, reversed: bool| {
            let mut p = ArPosControl::new(PosControlParams {
                vel_i: 0.4,
                ..PosControlParams::default()
            });
            p.set_limits(2.0, 1.0, 1.0, 1.0);
            let mut atc = ArAttitudeControl::new(AttitudeParams::default());
            let s = north(0.0);
            atc.get_steering_out_rate(0.0, left, right, dt, &s.attitude_input());
            assert_eq!(
                (atc.steering_limit_left(), atc.steering_limit_right()),
                (left, right)
            );
            p.set_pos_vel_accel_target(Vector2::zeros(), Vector2::new(0.0, 0.5), Vector2::zeros());
            p.set_reversed(reversed);
            p.update(dt, &s, &atc);
            let i = p.pid_vel.integrator();
            assert_eq!(i.x, 0.0, "only the lateral part is kept");
            i.y
        };
        let step = 0.5 * 0.4 * dt;
        for reversed in [false, true] {
            assert!((grows(false, false, reversed) - step).abs() < 1e-15);
        }
        // Forward, the right is the body's right: held there, free on the left.
        assert_eq!(grows(false, true, false), 0.0);
        assert!((grows(true, false, false) - step).abs() < 1e-15);
        // Reversing, the sides swap.
        assert_eq!(grows(true, false, true), 0.0);
        assert!((grows(false, true, true) - step).abs() < 1e-15);
    }
}
