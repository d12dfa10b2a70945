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
use super::control::wrap_pi;
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

    /// Holds position at the stopping point (`ModeLoiter::enter`).
    pub fn start_loiter(&mut self, s: &NavState) {
        let v = s.vel_ne_m_s;
        let speed = v.norm();
        self.loiter_destination = if speed > 0.0 {
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
