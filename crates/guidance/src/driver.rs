//! A Rover-style navigation driver: what ArduPilot Rover's Guided (WP submode),
//! Auto (`NAV_WAYPOINT`), Loiter and stop do each tick, on top of
//! [`wpnav::ArWpNav`](crate::wpnav::ArWpNav) and
//! [`attitude_control::ArAttitudeControl`](crate::attitude_control::ArAttitudeControl).
//!
//! The vehicle's autopilot calls [`RoverDriver::update`] every tick with the
//! vehicle's state; it gets the desired speed and turn rate and the normalised
//! throttle and steering (−1..1), plus an event when a waypoint is reached. When
//! a destination is reached and nothing new is commanded, a boat loiters there
//! (LOIT_RADIUS / LOIT_TYPE, as `ModeLoiter`) and any other vehicle stops.
//!
//! Ported from ArduPilot's `Rover/mode.cpp` (`navigate_to_waypoint`,
//! `calc_throttle`, `calc_steering_from_turn_rate`, `stop_vehicle`),
//! `Rover/mode_guided.cpp` and `Rover/mode_loiter.cpp` (GPLv3).

use nalgebra::Vector2;

use super::attitude_control::ArAttitudeControl;
use super::control::{is_positive, wrap_pi};
use super::motors::{ArMotorsUgv, MotorOutputs};
use super::pos_control::NavState;
use super::wpnav::ArWpNav;

/// Rover parameters the driver uses (ArduPilot names, defaults).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoverParams {
    /// CRUISE_SPEED, m/s: the speed reached at CRUISE_THROTTLE.
    pub cruise_speed: f64,
    /// CRUISE_THROTTLE, 0–1 (ArduPilot's percent / 100).
    pub cruise_throttle: f64,
    /// TURN_RADIUS, m.
    pub turn_radius: f64,
    /// LOIT_RADIUS, m.
    pub loit_radius: f64,
    /// LOIT_TYPE: 0 forward or reverse, 1 bow to target, 2 stern to target.
    pub loit_type: u8,
    /// LOIT_SPEED_GAIN.
    pub loit_speed_gain: f64,
    /// GUID_OPTIONS bit 6 (64): Guided uses S-curves instead of PSC input shaping.
    pub guid_options: u32,
    /// FRAME_CLASS 2: a boat (loiters instead of stopping).
    pub is_boat: bool,
    /// Skid steering / differential thrust: can pivot on the spot.
    pub can_pivot: bool,
}

impl Default for RoverParams {
    fn default() -> Self {
        RoverParams {
            cruise_speed: 2.0,
            cruise_throttle: 0.5,
            turn_radius: 0.9,
            loit_radius: 2.0,
            loit_type: 0,
            loit_speed_gain: 0.5,
            guid_options: 0,
            is_boat: false,
            can_pivot: false,
        }
    }
}

/// GUID_OPTIONS bit: S-curves for navigation.
pub const GUID_OPTIONS_SCURVES: u32 = 64;

/// What the driver is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DriverMode {
    /// Stopping / stopped.
    Stop,
    /// Guided, heading for a destination.
    Guided,
    /// Auto, flying a mission waypoint.
    Auto,
    /// Holding position (boats).
    Loiter,
}

/// The driver's outputs for one tick.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DriverOutput {
    /// Desired speed, m/s.
    pub desired_speed_m_s: f64,
    /// Desired turn rate, rad/s (positive clockwise).
    pub turn_rate_rad_s: f64,
    /// Throttle, −1..1.
    pub throttle: f64,
    /// Steering, −1..1 (positive turns right).
    pub steering: f64,
    /// The destination was reached on this tick.
    pub reached: bool,
    /// What `AP_MotorsUGV` makes of throttle and steering.
    pub outputs: MotorOutputs,
}

/// Rover navigation: modes over AR_WPNav and AR_AttitudeControl.
#[derive(Debug, Clone)]
pub struct RoverDriver {
    /// Rover parameters.
    pub params: RoverParams,
    /// The attitude (speed/steering) controller.
    pub atc: ArAttitudeControl,
    /// The waypoint navigator.
    pub wpnav: ArWpNav,
    /// The output mixer, whose limit flags the controllers see next tick.
    pub motors: ArMotorsUgv,
    mode: DriverMode,
    loiter_destination: Vector2<f64>,
    loiter_yaw: f64,
    reached_reported: bool,
    /// The navigation mode last entered (Auto or Guided): ArduPilot
    /// initialises AR_WPNav on entering one (`_enter`), not per waypoint, so
    /// a speed set in flight holds from waypoint to waypoint.
    entered: Option<DriverMode>,
}

impl RoverDriver {
    /// A driver; the navigator's turn parameters are set from `params`.
    pub fn new(
        params: RoverParams,
        atc: ArAttitudeControl,
        mut wpnav: ArWpNav,
        motors: ArMotorsUgv,
    ) -> Self {
        wpnav.set_turn_params(params.turn_radius, params.can_pivot);
        RoverDriver {
            params,
            atc,
            wpnav,
            motors,
            mode: DriverMode::Stop,
            loiter_destination: Vector2::zeros(),
            loiter_yaw: 0.0,
            reached_reported: false,
            entered: None,
        }
    }

    /// Where Loiter holds, NE m.
    pub fn loiter_destination(&self) -> Vector2<f64> {
        self.loiter_destination
    }

    /// The current mode.
    pub fn mode(&self) -> DriverMode {
        self.mode
    }

    /// Guided: go to `destination` (NE m) (`ModeGuided::set_desired_location`):
    /// by S-curves when GUID_OPTIONS has bit 6, else by PSC input shaping.
    pub fn guided_set_destination(
        &mut self,
        destination: Vector2<f64>,
        next: Option<Vector2<f64>>,
        s: &NavState,
    ) -> bool {
        self.enter(DriverMode::Guided, s);
        let ok = if self.params.guid_options & GUID_OPTIONS_SCURVES != 0 {
            self.wpnav
                .set_desired_location(destination, next, s, &self.atc)
        } else {
            self.wpnav
                .set_desired_location_expect_fast_update(destination, s, &self.atc)
        };
        if ok {
            self.mode = DriverMode::Guided;
            self.reached_reported = false;
        }
        ok
    }

    /// Auto: fly to mission waypoint `destination`, through it towards `next`
    /// when given (`do_nav_wp`).
    pub fn auto_set_waypoint(
        &mut self,
        destination: Vector2<f64>,
        next: Option<Vector2<f64>>,
        s: &NavState,
    ) -> bool {
        self.enter(DriverMode::Auto, s);
        let ok = self
            .wpnav
            .set_desired_location(destination, next, s, &self.atc);
        if ok {
            self.mode = DriverMode::Auto;
            self.reached_reported = false;
        }
        ok
    }

    /// Initialises the navigator on entering `mode` (`ModeAuto::_enter`,
    /// `ModeGuided::_enter`: `wp_nav.init()`); nothing while in it.
    fn enter(&mut self, mode: DriverMode, s: &NavState) {
        if self.entered != Some(mode) {
            self.wpnav.init(0.0, s, &self.atc);
            self.entered = Some(mode);
        }
    }

    /// Holds position at the stopping point (`ModeLoiter::enter`, through
    /// `AR_WPNav::get_stopping_location`).
    pub fn start_loiter(&mut self, s: &NavState) {
        let v = s.vel_ne_m_s;
        let speed = v.norm();
        self.loiter_destination = if is_positive(speed) {
            s.pos_ne_m + v / speed * self.atc.get_stopping_distance(speed)
        } else {
            s.pos_ne_m
        };
        self.loiter_yaw = s.yaw_rad;
        self.mode = DriverMode::Loiter;
    }

    /// Stops (`stop_vehicle`).
    pub fn stop(&mut self) {
        self.mode = DriverMode::Stop;
    }

    /// Sets the speed limit in WP navigation (`set_desired_speed`); false below
    /// 0.05 m/s.
    pub fn set_desired_speed(&mut self, speed: f64) -> bool {
        self.wpnav.set_speed_max(speed)
    }

    /// One tick.
    pub fn update(&mut self, s: &NavState, dt: f64) -> DriverOutput {
        let mut out = self.update_mode(s, dt);
        out.outputs = self.motors.output(
            s.armed,
            s.forward_speed_m_s(),
            out.steering,
            out.throttle,
            dt,
        );
        out
    }

    /// The mode's throttle and steering, before the mixer.
    fn update_mode(&mut self, s: &NavState, dt: f64) -> DriverOutput {
        match self.mode {
            DriverMode::Guided | DriverMode::Auto => {
                // ModeAuto/ModeGuided WP: navigate until reached (through a
                // fast waypoint), then stop — boats loiter at their stopping
                // point (`start_loiter`).
                if !self.wpnav.reached_destination() || self.wpnav.is_fast_waypoint() {
                    return self.navigate_to_waypoint(s, dt);
                }
                let first = !self.reached_reported;
                self.reached_reported = true;
                let mut out = if self.params.is_boat {
                    self.start_loiter(s);
                    self.loiter_update(s, dt)
                } else {
                    self.stop_vehicle(s, dt)
                };
                out.reached = first;
                out
            }
            DriverMode::Loiter => self.loiter_update(s, dt),
            DriverMode::Stop => self.stop_vehicle(s, dt),
        }
    }

    fn navigate_to_waypoint(&mut self, s: &NavState, dt: f64) -> DriverOutput {
        let lim = self.motors.limit();
        self.wpnav.update(dt, s, &self.atc);
        let speed = self.wpnav.get_speed();
        let throttle = self.calc_throttle(speed, s, dt);
        let rate = self.wpnav.get_turn_rate_rads();
        let steering = self
            .atc
            .get_steering_out_rate(
                rate,
                lim.steer_left,
                lim.steer_right,
                dt,
                &s.attitude_input(),
            )
            .clamp(-1.0, 1.0);
        let reached = self.wpnav.reached_destination() && !self.reached_reported;
        if reached {
            self.reached_reported = true;
        }
        DriverOutput {
            desired_speed_m_s: speed,
            turn_rate_rad_s: rate,
            throttle,
            steering,
            reached,
            outputs: MotorOutputs::default(),
        }
    }

    /// Throttle for a desired speed (`calc_throttle`).
    fn calc_throttle(&mut self, speed: f64, s: &NavState, dt: f64) -> f64 {
        let input = s.attitude_input();
        let (low, high) = self.throttle_limits();
        let v = self.atc.get_desired_speed_accel_limited(speed, dt, s.now_s);
        let (cs, ct) = (self.params.cruise_speed, self.params.cruise_throttle);
        let t = if v == 0.0 {
            self.atc
                .get_throttle_out_stop(low, high, cs, ct, dt, &input)
                .0
        } else {
            self.atc
                .get_throttle_out_speed(v, low, high, cs, ct, dt, &input)
        };
        t.clamp(-1.0, 1.0)
    }

    /// The mixer's throttle limit flags of the last tick: (lower, upper).
    fn throttle_limits(&self) -> (bool, bool) {
        let l = self.motors.limit();
        (l.throttle_lower, l.throttle_upper)
    }

    fn stop_vehicle(&mut self, s: &NavState, dt: f64) -> DriverOutput {
        let input = s.attitude_input();
        let lim = self.motors.limit();
        let (cs, ct) = (self.params.cruise_speed, self.params.cruise_throttle);
        let (throttle, stopped) = self.atc.get_throttle_out_stop(
            lim.throttle_lower,
            lim.throttle_upper,
            cs,
            ct,
            dt,
            &input,
        );
        // Until stopped, hold a zero turn rate rather than let go.
        let steering = if stopped {
            0.0
        } else {
            self.atc
                .get_steering_out_rate(0.0, lim.steer_left, lim.steer_right, dt, &input)
                .clamp(-1.0, 1.0)
        };
        DriverOutput {
            throttle: throttle.clamp(-1.0, 1.0),
            steering,
            ..Default::default()
        }
    }

    /// `ModeLoiter::update`.
    fn loiter_update(&mut self, s: &NavState, dt: f64) -> DriverOutput {
        let to = self.loiter_destination - s.pos_ne_m;
        let d = to.norm();
        let r = self.params.loit_radius;
        let mut speed;
        if d <= r {
            speed = self.atc.get_desired_speed_accel_limited(0.0, dt, s.now_s);
        } else {
            speed = ((d - r) * self.params.loit_speed_gain).min(self.wpnav.params.speed);
            self.loiter_yaw = to.y.atan2(to.x);
            let mut yaw_err = wrap_pi(self.loiter_yaw - s.yaw_rad);
            if (self.params.loit_type == 0 && yaw_err.abs() > std::f64::consts::FRAC_PI_2)
                || self.params.loit_type == 2
            {
                self.loiter_yaw = wrap_pi(self.loiter_yaw + std::f64::consts::PI);
                speed = -speed;
                yaw_err = wrap_pi(self.loiter_yaw - s.yaw_rad);
            }
            speed *= 1.0 - 0.5 * (yaw_err.abs() / std::f64::consts::FRAC_PI_2).clamp(0.0, 1.0);
        }
        let input = s.attitude_input();
        let lim = self.motors.limit();
        let rate = self
            .atc
            .get_turn_rate_from_heading(self.loiter_yaw, 0.0, s.yaw_rad);
        let steering = self
            .atc
            .get_steering_out_rate(rate, lim.steer_left, lim.steer_right, dt, &input)
            .clamp(-1.0, 1.0);
        let throttle = self.calc_throttle(speed, s, dt);
        DriverOutput {
            desired_speed_m_s: speed,
            turn_rate_rad_s: rate,
            throttle,
            steering,
            reached: false,
            outputs: MotorOutputs::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attitude_control::AttitudeParams;
    use crate::motors::MotorsParams;
    use crate::pos_control::{ArPosControl, PosControlParams};
    use crate::wpnav::WpNavParams;
    use std::f64::consts::{FRAC_PI_2, FRAC_PI_4, PI};

    /// A driver with ArduPilot's defaults (WP_SPEED 2 m/s, LOIT_RADIUS 2 m,
    /// LOIT_SPEED_GAIN 0.5, ATC_ACCEL_MAX 1 m/s²).
    fn driver(params: RoverParams) -> RoverDriver {
        RoverDriver::new(
            params,
            ArAttitudeControl::new(AttitudeParams::default()),
            ArWpNav::new(
                WpNavParams::default(),
                ArPosControl::new(PosControlParams::default()),
            ),
            ArMotorsUgv::new(MotorsParams::default(), false),
        )
    }

    fn at(n: f64, e: f64, yaw: f64) -> NavState {
        NavState {
            now_s: 1.0,
            armed: true,
            pos_ne_m: Vector2::new(n, e),
            yaw_rad: yaw,
            ..Default::default()
        }
    }

    /// Loiter holds at the stopping point: ahead along the velocity by
    /// v²/(2·ATC_ACCEL_MAX) (ATC_DECEL_MAX 0), or where it is at rest.
    #[test]
    fn loiter_starts_at_the_stopping_point() {
        let mut d = driver(RoverParams::default());
        let moving = NavState {
            vel_ne_m_s: Vector2::new(3.0, -4.0),
            ..at(10.0, 20.0, 0.3)
        };
        d.start_loiter(&moving);
        // 5 m/s: 12.5 m along (0.6, −0.8).
        let want = Vector2::new(10.0 + 7.5, 20.0 - 10.0);
        assert!((d.loiter_destination() - want).norm() < 1e-12);
        assert_eq!(d.mode(), DriverMode::Loiter);
        d.start_loiter(&at(-3.0, 4.0, 0.0));
        assert_eq!(d.loiter_destination(), Vector2::new(-3.0, 4.0));
        d.stop();
        assert_eq!(d.mode(), DriverMode::Stop);
    }

    /// `ModeLoiter::update`: outside LOIT_RADIUS the speed is (d − r)·gain,
    /// at most WP_SPEED, reversed toward a target behind (LOIT_TYPE 0) or
    /// always (2), and scaled by 1 − ½·|yaw error|/90° (at most halved).
    #[test]
    fn loiter_speed_follows_the_distance_and_the_heading_error() {
        let speed = |loit_type: u8, target_e: f64, yaw: f64| {
            let mut d = driver(RoverParams {
                loit_type,
                ..RoverParams::default()
            });
            d.loiter_destination = Vector2::new(0.0, target_e);
            d.mode = DriverMode::Loiter;
            let out = d.update(&at(0.0, 0.0, yaw), 0.02);
            // The steering follows the turn.
            assert_eq!(
                out.steering.signum(),
                out.turn_rate_rad_s.signum(),
                "{out:?}"
            );
            (out.desired_speed_m_s, out.turn_rate_rad_s)
        };
        let east = FRAC_PI_2;
        // 3 m east, facing it: (3 − 2)·0.5.
        assert!((speed(0, 3.0, east).0 - 0.5).abs() < 1e-12);
        // 10 m: 4 m/s, limited to WP_SPEED.
        assert!((speed(0, 10.0, east).0 - 2.0).abs() < 1e-12);
        // 45° off: three quarters, turning toward it.
        let (v, rate) = speed(0, 3.0, east - FRAC_PI_4);
        assert!((v - 0.375).abs() < 1e-12 && rate > 0.0, "{v} {rate}");
        let (v, rate) = speed(0, 3.0, east + FRAC_PI_4);
        assert!((v - 0.375).abs() < 1e-12 && rate < 0.0, "{v} {rate}");
        // Behind (facing west): LOIT_TYPE 0 reverses, stern first, no
        // heading error; LOIT_TYPE 1 turns bow first, halved.
        assert!((speed(0, 3.0, east + PI).0 + 0.5).abs() < 1e-12);
        assert!((speed(1, 3.0, east + PI).0 - 0.25).abs() < 1e-12);
        // LOIT_TYPE 2 always backs in: facing the target, halved and astern.
        assert!((speed(2, 3.0, east).0 + 0.25).abs() < 1e-12);
        assert!((speed(2, 3.0, east + PI).0 + 0.5).abs() < 1e-12);
        // Inside the radius the speed eases to zero at ATC_ACCEL_MAX.
        let mut d = driver(RoverParams::default());
        d.loiter_destination = Vector2::new(0.0, 1.5);
        d.mode = DriverMode::Loiter;
        let cruising = NavState {
            vel_ne_m_s: Vector2::new(0.0, 1.0),
            ..at(0.0, 0.0, east)
        };
        let before = NavState {
            now_s: 0.98,
            ..cruising
        };
        d.atc
            .get_throttle_out_speed(1.0, false, false, 2.0, 0.5, 0.02, &before.attitude_input());
        let out = d.update(&cruising, 0.02);
        assert!((out.desired_speed_m_s - 0.98).abs() < 1e-12, "{out:?}");
    }

    /// Stopping (`stop_vehicle`) slows the desired speed at ATC_ACCEL_MAX
    /// and steers for a zero turn rate, itself eased from the present one
    /// at ATC_STR_ACC_MAX, until stopped. ArduPilot's defaults: speed P 0.2,
    /// I 0.2, cruise 50 % at 2 m/s; steering rate P 0.2, I 0.2, FF 0.2.
    #[test]
    fn stopping_eases_the_speed_and_the_turn_rate_down() {
        let mut d = driver(RoverParams::default());
        let moving = NavState {
            vel_ne_m_s: Vector2::new(2.0, 0.0),
            yaw_rate_rad_s: 0.5,
            ..at(0.0, 0.0, 0.0)
        };
        let out = d.update(&moving, 0.02);
        // 2 m/s eased to 1.98: FF 0.5·1.98/2, P and I on −0.02 m/s.
        let throttle = 0.5 * 1.98 / 2.0 + 0.2 * -0.02 + 0.2 * -0.02 * 0.02;
        assert!((out.throttle - throttle).abs() < 1e-12, "{out:?}");
        // 0.5 rad/s eased by 120°/s² for 0.02 s: FF, P and I.
        let rate = 0.5 - 120f64.to_radians() * 0.02;
        let steering = 0.2 * rate + 0.2 * (rate - 0.5) + 0.2 * (rate - 0.5) * 0.02;
        assert!((out.steering - steering).abs() < 1e-12, "{out:?}");
        assert_eq!(out.desired_speed_m_s, 0.0);
    }

    /// The speed limit is refused below AR_WPNav's 0.05 m/s.
    #[test]
    fn the_speed_limit_is_refused_below_5_cm_s() {
        let mut d = driver(RoverParams::default());
        assert!(!d.set_desired_speed(0.04));
        assert!(d.set_desired_speed(1.5));
    }

    /// Guided goes by S-curves, through a next point, only with
    /// GUID_OPTIONS bit 6; else by PSC input shaping, to the point alone.
    #[test]
    fn guided_uses_s_curves_only_with_guid_options_bit_6() {
        for (options, scurves) in [(0, false), (GUID_OPTIONS_SCURVES, true), (63, false)] {
            let mut d = driver(RoverParams {
                guid_options: options,
                ..RoverParams::default()
            });
            let s = at(0.0, 0.0, 0.0);
            let next = Some(Vector2::new(20.0, 10.0));
            assert!(d.guided_set_destination(Vector2::new(20.0, 0.0), next, &s));
            assert_eq!(
                d.wpnav.is_fast_waypoint(),
                scurves,
                "GUID_OPTIONS {options}"
            );
            assert_eq!(d.mode(), DriverMode::Guided);
        }
    }

    /// The throttle controller sees the mixer's saturation of the last
    /// tick.
    #[test]
    fn the_throttle_limits_are_the_mixers() {
        let mut d = driver(RoverParams::default());
        assert_eq!(d.throttle_limits(), (false, false));
        d.motors.output(true, 0.0, 0.0, 1.5, 0.02);
        assert_eq!(d.throttle_limits(), (false, true));
        d.motors.output(true, 0.0, 0.0, -1.5, 0.02);
        assert_eq!(d.throttle_limits(), (true, false));
    }
}
