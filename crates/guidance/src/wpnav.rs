//! `AR_WPNav` and `AR_PivotTurn`: waypoint navigation for rovers and boats —
//! S-curve legs with corner blending, the track time-scaling that keeps the
//! target near the vehicle, reached detection, cross-track error and pivot
//! turns; and the PSC input-shaping path Guided uses when S-curves are off.
//!
//! Ported from ArduPilot's `libraries/AR_WPNav/AR_WPNav.cpp`, `AR_PivotTurn.cpp`
//! (GPLv3). Parameters `WP_*` with ArduPilot's defaults. Positions are local NE
//! metres (the vertical is unused: rovers and boats drive on a surface);
//! bearings are radians from north, clockwise positive.

use nalgebra::{Vector2, Vector3};

use super::attitude_control::ArAttitudeControl;
use super::control::{is_positive, is_zero, is_zero_xy, wrap_pi};
use super::pos_control::{ArPosControl, NavState};
use super::scurve::SCurve;

/// AR_WPNAV_SNAP_MAX, m/s⁴: the snap handed to the S-curves.
pub const SNAP_MAX: f32 = 15.0;
/// AR_WPNAV_ACCEL_MAX, m/s²: used when the attitude controller has no limit.
pub const ACCEL_MAX_DEFAULT: f64 = 20.0;
/// AR_WPNAV_SPEED_MIN, m/s.
pub const SPEED_MIN: f64 = 0.05;
const TIMEOUT_S: f64 = 0.1;
const SPEED_UPDATE_MIN_S: f64 = 0.5;

/// `WP_*` parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WpNavParams {
    /// WP_SPEED, m/s.
    pub speed: f64,
    /// WP_RADIUS, m.
    pub radius: f64,
    /// WP_ACCEL, m/s² (0: from ATC).
    pub accel: f64,
    /// WP_JERK, m/s³ (0: equal to the acceleration).
    pub jerk: f64,
    /// WP_PIVOT_ANGLE, deg (5 or less disables pivoting).
    pub pivot_angle: f64,
    /// WP_PIVOT_RATE, deg/s.
    pub pivot_rate: f64,
    /// WP_PIVOT_DELAY, s.
    pub pivot_delay: f64,
}

impl Default for WpNavParams {
    fn default() -> Self {
        WpNavParams {
            speed: 2.0,
            radius: 2.0,
            accel: 0.0,
            jerk: 0.0,
            pivot_angle: 60.0,
            pivot_rate: 60.0,
            pivot_delay: 0.0,
        }
    }
}

/// `AR_PivotTurn`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ArPivotTurn {
    enabled: bool,
    active: bool,
    delay_start_s: Option<f64>,
}

/// AR_PIVOT_ANGLE_ACCURACY, deg.
const PIVOT_ANGLE_ACCURACY_DEG: f64 = 5.0;

/// Whether a heading error (rad, ≥ 0) is within AR_PIVOT_ANGLE_ACCURACY.
fn aligned(err_rad: f64) -> bool {
    err_rad < PIVOT_ANGLE_ACCURACY_DEG.to_radians()
}

impl ArPivotTurn {
    /// Enables or disables pivoting (skid-steer vehicles can pivot).
    pub fn enable(&mut self, on: bool) {
        self.enabled = on;
        if !on {
            self.active = false;
        }
    }

    /// Whether a pivot is in progress (`active`).
    pub fn active(&self) -> bool {
        self.enabled && self.active
    }

    /// Stops any pivot (`deactivate`; the delay timer is reset when a pivot
    /// starts).
    pub fn deactivate(&mut self) {
        self.active = false;
    }

    /// Whether a heading change would need a pivot (`would_activate`).
    pub fn would_activate(&self, yaw_change_rad: f64, p: &WpNavParams) -> bool {
        self.enabled
            && p.pivot_angle > 5.0
            && wrap_pi(yaw_change_rad).abs() > p.pivot_angle.to_radians()
    }

    /// Starts or ends a pivot for `desired_heading` (`check_activation`).
    pub fn check_activation(
        &mut self,
        desired_heading_rad: f64,
        yaw_rad: f64,
        force: bool,
        now_s: f64,
        p: &WpNavParams,
    ) {
        if !self.enabled || p.pivot_angle <= 5.0 {
            self.active = false;
            return;
        }
        let err = wrap_pi(desired_heading_rad - yaw_rad).abs();
        if err > p.pivot_angle.to_radians() || force {
            self.active = true;
            self.delay_start_s = None;
            return;
        }
        if self.active && aligned(err) && self.delay_start_s.is_none() {
            self.delay_start_s = Some(now_s);
        }
        if let Some(t0) = self.delay_start_s {
            if now_s - t0 >= p.pivot_delay.clamp(0.0, 60.0) {
                self.active = false;
                self.delay_start_s = None;
            }
        }
    }

    /// Turn rate toward `heading` at WP_PIVOT_RATE, updating the activation
    /// (`get_turn_rate_rads`).
    pub fn get_turn_rate_rads(
        &mut self,
        heading_rad: f64,
        atc: &ArAttitudeControl,
        s: &NavState,
        p: &WpNavParams,
    ) -> f64 {
        let rate =
            atc.get_turn_rate_from_heading(heading_rad, p.pivot_rate.to_radians(), s.yaw_rad);
        self.check_activation(heading_rad, s.yaw_rad, false, s.now_s, p);
        rate
    }
}

/// Which path the navigator follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NavType {
    SCurve,
    PscInputShaping,
}

/// `AR_WPNav`.
#[derive(Debug, Clone)]
pub struct ArWpNav {
    /// Parameters.
    pub params: WpNavParams,
    /// The position controller it drives.
    pub pos_control: ArPosControl,
    pivot: ArPivotTurn,
    base_speed_max: f64,
    nudge_speed_max: f64,
    last_speed_update_s: Option<f64>,
    scurve_prev_leg: SCurve,
    scurve_this_leg: SCurve,
    scurve_next_leg: SCurve,
    track_scalar_dt: f64,
    fast_waypoint: bool,
    pivot_at_next_wp: bool,
    reached_destination: bool,
    orig_and_dest_valid: bool,
    origin_ne: Vector2<f64>,
    destination_ne: Vector2<f64>,
    nav_type: NavType,
    turn_radius: f64,
    overspeed_enabled: bool,
    reversed: bool,
    last_update_s: Option<f64>,
    desired_speed_limited: f64,
    desired_turn_rate: f64,
    desired_lat_accel: f64,
    desired_heading: f64,
    cross_track_error: f64,
    distance_to_destination: f64,
    wp_bearing: f64,
}

impl ArWpNav {
    /// A navigator with `params` and position-controller `psc`.
    pub fn new(params: WpNavParams, psc: ArPosControl) -> Self {
        ArWpNav {
            params,
            pos_control: psc,
            pivot: ArPivotTurn::default(),
            base_speed_max: params.speed,
            nudge_speed_max: 0.0,
            last_speed_update_s: None,
            scurve_prev_leg: SCurve::new(),
            scurve_this_leg: SCurve::new(),
            scurve_next_leg: SCurve::new(),
            track_scalar_dt: 1.0,
            fast_waypoint: false,
            pivot_at_next_wp: false,
            reached_destination: false,
            orig_and_dest_valid: false,
            origin_ne: Vector2::zeros(),
            destination_ne: Vector2::zeros(),
            nav_type: NavType::SCurve,
            turn_radius: 0.0,
            overspeed_enabled: false,
            reversed: false,
            last_update_s: None,
            desired_speed_limited: 0.0,
            desired_turn_rate: 0.0,
            desired_lat_accel: 0.0,
            desired_heading: 0.0,
            cross_track_error: 0.0,
            distance_to_destination: 0.0,
            wp_bearing: 0.0,
        }
    }

    /// Turning radius and whether the vehicle can pivot (`set_turn_params`).
    pub fn set_turn_params(&mut self, turn_radius: f64, pivot_possible: bool) {
        self.turn_radius = if pivot_possible { 0.0 } else { turn_radius };
        self.pivot.enable(pivot_possible);
        self.pos_control
            .set_turn_params(turn_radius, pivot_possible);
    }

    /// Lets the S-curve clock run up to 5× so that the target keeps up with a
    /// vehicle faster than WP_SPEED (a sailboat in a gust); S-curve
    /// navigation only (`set_overspeed_enabled`).
    pub fn set_overspeed_enabled(&mut self, on: bool) {
        self.overspeed_enabled = on;
    }

    /// Drive backwards.
    pub fn set_reversed(&mut self, reversed: bool) {
        self.reversed = reversed;
    }

    /// Initialises limits and paths at the vehicle's stopping point (`init`).
    pub fn init(&mut self, speed_max: f64, s: &NavState, atc: &ArAttitudeControl) {
        self.base_speed_max = if speed_max > 0.0 {
            speed_max
        } else {
            self.params.speed
        }
        .max(SPEED_MIN);
        let mut atc_accel = atc.params.accel_max.min(atc.get_decel_max());
        if atc_accel <= 0.0 {
            atc_accel = ACCEL_MAX_DEFAULT;
        }
        let accel = if self.params.accel > 0.0 {
            self.params.accel.min(atc_accel)
        } else {
            atc_accel
        };
        let jerk = if self.params.jerk > 0.0 {
            self.params.jerk
        } else {
            accel
        };
        self.pos_control.set_limits(
            self.base_speed_max,
            accel,
            atc.get_turn_lat_accel_max(),
            jerk,
        );
        self.scurve_prev_leg.init();
        self.scurve_this_leg.init();
        self.scurve_next_leg.init();
        self.track_scalar_dt = 1.0;
        self.reached_destination = false;
        self.fast_waypoint = false;
        self.pivot.deactivate();
        self.pivot_at_next_wp = false;
        self.set_origin_and_destination_to_stopping_point(s, atc);
        self.nudge_speed_max = 0.0;
    }

    /// Origin and destination at the vehicle's stopping point
    /// (`set_origin_and_destination_to_stopping_point`).
    fn set_origin_and_destination_to_stopping_point(
        &mut self,
        s: &NavState,
        atc: &ArAttitudeControl,
    ) {
        let stop = self.stopping_point(s, atc);
        self.origin_ne = stop;
        self.destination_ne = stop;
        self.orig_and_dest_valid = true;
    }

    fn stopping_point(&self, s: &NavState, atc: &ArAttitudeControl) -> Vector2<f64> {
        let v = s.vel_ne_m_s;
        let speed = v.norm();
        if !is_positive(speed) {
            return s.pos_ne_m;
        }
        s.pos_ne_m + v / speed * atc.get_stopping_distance(speed)
    }

    /// Whether [`ArWpNav::update`] ran less than 100 ms ago (`is_active`).
    pub fn is_active(&self, now_s: f64) -> bool {
        self.last_update_s.is_some_and(|t| now_s - t < TIMEOUT_S)
    }

    /// Sets the speed limit, m/s; refuses below 0.05 (`set_speed_max`).
    pub fn set_speed_max(&mut self, speed: f64) -> bool {
        if speed.is_nan() || speed < SPEED_MIN {
            return false;
        }
        self.base_speed_max = speed;
        true
    }

    /// Pilot nudge speed, m/s: the speed limit while it is above the
    /// limit set by [`ArWpNav::set_speed_max`] (`set_nudge_speed_max`).
    pub fn set_nudge_speed_max(&mut self, speed: f64) {
        self.nudge_speed_max = speed;
    }

    /// Heads for `destination` (NE m), flying through it towards
    /// `next_destination` if given (`set_desired_location`).
    pub fn set_desired_location(
        &mut self,
        destination: Vector2<f64>,
        next_destination: Option<Vector2<f64>>,
        s: &NavState,
        atc: &ArAttitudeControl,
    ) -> bool {
        if !destination.iter().all(|x| x.is_finite())
            || next_destination.is_some_and(|n| !n.iter().all(|x| x.is_finite()))
        {
            return false;
        }
        // Re-anchored (not re-initialised: limits and speed stay) when
        // inactive, interrupted, or after the other controller.
        if !self.is_active(s.now_s) || !self.reached_destination || self.nav_type != NavType::SCurve
        {
            self.set_origin_and_destination_to_stopping_point(s, atc);
            self.scurve_prev_leg.init();
            self.scurve_this_leg.init();
            self.scurve_next_leg.init();
        }
        self.scurve_prev_leg = self.scurve_this_leg.clone();
        self.origin_ne = self.destination_ne;
        self.destination_ne = destination;
        self.orig_and_dest_valid = true;
        self.reached_destination = false;
        self.update_distance_and_bearing(s);
        if !self.fast_waypoint {
            self.pivot.deactivate();
            let heading = self.heading_to_destination();
            self.pivot.check_activation(
                heading,
                s.yaw_rad,
                self.pivot_at_next_wp,
                s.now_s,
                &self.params,
            );
        }
        let p = &self.pos_control;
        let (speed, accel, jerk) = (
            p.get_speed_max() as f32,
            p.get_accel_max() as f32,
            p.get_jerk_max() as f32,
        );
        let o = Vector3::new(self.origin_ne.x as f32, self.origin_ne.y as f32, 0.0);
        let d = Vector3::new(destination.x as f32, destination.y as f32, 0.0);
        if self.next_leg_running() {
            self.scurve_this_leg = self.scurve_next_leg.clone();
        } else {
            self.scurve_this_leg
                .calculate_track(&o, &d, speed, speed, speed, accel, accel, SNAP_MAX, jerk);
        }
        self.scurve_next_leg.init();
        self.fast_waypoint = false;
        self.pivot_at_next_wp = false;
        if let Some(n) = next_destination {
            let b1 = bearing(&self.origin_ne, &destination);
            let b2 = bearing(&destination, &n);
            let corner = wrap_pi(b2 - b1);
            self.pivot_at_next_wp = self.pivot.would_activate(corner, &self.params);
            if !self.pivot_at_next_wp {
                let nn = Vector3::new(n.x as f32, n.y as f32, 0.0);
                self.scurve_next_leg
                    .calculate_track(&d, &nn, speed, speed, speed, accel, accel, SNAP_MAX, jerk);
                self.fast_waypoint = true;
            }
        }
        self.nav_type = NavType::SCurve;
        self.update_distance_and_bearing(s);
        true
    }

    /// Whether the leg blends into a next leg that is under way.
    fn next_leg_running(&self) -> bool {
        self.fast_waypoint && !self.scurve_next_leg.finished()
    }

    /// Stops at the stopping point (`set_desired_location_to_stopping_location`).
    pub fn set_desired_location_to_stopping_location(
        &mut self,
        s: &NavState,
        atc: &ArAttitudeControl,
    ) -> bool {
        let stop = self.stopping_point(s, atc);
        self.set_desired_location(stop, None, s, atc)
    }

    /// Heads for `destination` by PSC input shaping, for targets that change
    /// often (`set_desired_location_expect_fast_update`).
    pub fn set_desired_location_expect_fast_update(
        &mut self,
        destination: Vector2<f64>,
        s: &NavState,
        atc: &ArAttitudeControl,
    ) -> bool {
        if !destination.iter().all(|x| x.is_finite()) {
            return false;
        }
        if !self.is_active(s.now_s) || self.nav_type != NavType::PscInputShaping {
            self.set_origin_and_destination_to_stopping_point(s, atc);
        }
        self.origin_ne = self.destination_ne;
        self.destination_ne = destination;
        self.orig_and_dest_valid = true;
        self.reached_destination = false;
        self.update_distance_and_bearing(s);
        let heading = self.heading_to_destination();
        self.pivot
            .check_activation(heading, s.yaw_rad, false, s.now_s, &self.params);
        self.nav_type = NavType::PscInputShaping;
        true
    }

    fn update_distance_and_bearing(&mut self, s: &NavState) {
        let d = self.destination_ne - s.pos_ne_m;
        self.distance_to_destination = d.norm();
        self.wp_bearing = bearing(&s.pos_ne_m, &self.destination_ne);
    }

    /// Runs one step (`update`): advances the target and computes the desired
    /// speed and turn rate. (ArduPilot also sets the desired speed to the
    /// vehicle's after a pause; every path below sets it again, so the port
    /// leaves that out.)
    pub fn update(&mut self, dt: f64, s: &NavState, atc: &ArAttitudeControl) {
        if !s.armed || !self.orig_and_dest_valid {
            self.desired_speed_limited = atc.get_desired_speed_accel_limited(0.0, dt, s.now_s);
            self.desired_lat_accel = 0.0;
            self.desired_turn_rate = 0.0;
            self.cross_track_error = 0.0;
            return;
        }
        self.last_update_s = Some(s.now_s);
        self.update_distance_and_bearing(s);
        self.update_speed_max(s.now_s);
        if !self.pivot.active() {
            match self.nav_type {
                NavType::SCurve => self.advance_wp_target_along_track(s, dt),
                NavType::PscInputShaping => self.update_psc_input_shaping(s, dt),
            }
        }
        self.update_steering_and_speed(s, dt, atc);
    }

    fn update_speed_max(&mut self, now_s: f64) {
        let speed = self.base_speed_max.max(self.nudge_speed_max);
        if speed == self.pos_control.get_speed_max() {
            return;
        }
        if self
            .last_speed_update_s
            .is_some_and(|t| now_s - t < SPEED_UPDATE_MIN_S)
        {
            return;
        }
        self.last_speed_update_s = Some(now_s);
        let p = &self.pos_control;
        let (accel, lat, jerk) = (p.get_accel_max(), p.get_lat_accel_max(), p.get_jerk_max());
        self.pos_control.set_limits(speed, accel, lat, jerk);
        let v = speed as f32;
        self.scurve_this_leg.set_speed_max(v, v, v);
        self.scurve_next_leg.set_speed_max(v, v, v);
    }

    fn advance_wp_target_along_track(&mut self, s: &NavState, dt: f64) {
        // Time scaling: slow the target when the vehicle falls behind.
        let desired_vel = self.pos_control.get_desired_velocity();
        let raw = if is_positive(desired_vel.norm()) {
            let u = desired_vel.normalize();
            let track_error = self.pos_control.get_pos_error(s).dot(&u);
            let track_velocity = s.vel_ne_m_s.dot(&u);
            let max_ratio = if self.overspeed_enabled { 5.0 } else { 1.0 };
            (0.05
                + (track_velocity - self.pos_control.get_pos_p() * track_error)
                    / desired_vel.norm())
            .clamp(0.0, max_ratio)
        } else {
            1.0
        };
        let (accel, jerk) = (
            self.pos_control.get_accel_max(),
            self.pos_control.get_jerk_max(),
        );
        let tc = if is_positive(jerk) { accel / jerk } else { 1.0 };
        self.track_scalar_dt += (raw - self.track_scalar_dt) * (dt / tc);

        let mut pos = Vector3::new(self.origin_ne.x as f32, self.origin_ne.y as f32, 0.0);
        let mut vel = Vector3::zeros();
        let mut acc = Vector3::zeros();
        let wp_radius = self.params.radius.max(self.turn_radius) as f32;
        let lat = self.pos_control.get_lat_accel_max() as f32;
        let finished = self.scurve_this_leg.advance_target_along_track(
            &mut self.scurve_prev_leg,
            &mut self.scurve_next_leg,
            wp_radius,
            lat,
            self.fast_waypoint,
            (self.track_scalar_dt * dt) as f32,
            &mut pos,
            &mut vel,
            &mut acc,
        );
        // ArduPilot initialises the position controller here after a pause;
        // the three targets set next are all that initialisation sets, and
        // the controller restarts its own filters after a pause.
        self.pos_control.set_pos_vel_accel_target(
            pos.xy().cast(),
            vel.xy().cast(),
            acc.xy().cast(),
        );
        if !self.reached_destination && finished {
            self.reached_destination = self.fast_waypoint
                || self.distance_to_destination <= self.params.radius
                || past_interval_finish_line(&s.pos_ne_m, &self.origin_ne, &self.destination_ne);
        }
    }

    fn update_psc_input_shaping(&mut self, s: &NavState, dt: f64) {
        if !self.pos_control.is_active(s.now_s) {
            self.pos_control.init(s);
        }
        let dest = self.destination_ne;
        self.pos_control.input_pos_target(&dest, dt);
        if !self.reached_destination {
            self.reached_destination = shaped_target_arrived(
                (dest - self.pos_control.get_pos_target()).norm(),
                self.pos_control.get_pos_error(s).norm(),
                self.params.radius,
            );
        }
    }

    /// The heading that points the vehicle at the destination: the bearing,
    /// or its reverse when driving backwards.
    fn heading_to_destination(&self) -> f64 {
        if self.reversed {
            self.wp_bearing + std::f64::consts::PI
        } else {
            self.wp_bearing
        }
    }

    fn update_steering_and_speed(&mut self, s: &NavState, dt: f64, atc: &ArAttitudeControl) {
        self.cross_track_error = self.calc_crosstrack_error(s);
        self.pos_control.set_reversed(self.reversed);
        self.pos_control.update(dt, s, atc);
        if self.pivot.active() {
            self.desired_speed_limited = atc.get_desired_speed_accel_limited(0.0, dt, s.now_s);
            self.desired_heading = self.heading_to_destination();
            self.desired_turn_rate = if is_zero(self.desired_speed_limited) {
                let p = self.params;
                self.pivot
                    .get_turn_rate_rads(self.desired_heading, atc, s, &p)
            } else {
                0.0
            };
            self.desired_lat_accel = 0.0;
        } else {
            self.desired_speed_limited = self.pos_control.get_desired_speed();
            self.desired_turn_rate = self.pos_control.get_desired_turn_rate_rads();
            self.desired_lat_accel = self.pos_control.get_desired_lat_accel();
        }
    }

    /// Cross-track error, m; for a northbound track a vehicle to the east is
    /// negative (`calc_crosstrack_error`).
    fn calc_crosstrack_error(&self, s: &NavState) -> f64 {
        let track = self.destination_ne - self.origin_ne;
        let len = track.norm();
        if len < 1e-6 {
            return (self.destination_ne - s.pos_ne_m).norm();
        }
        let d = track / len;
        let v = s.pos_ne_m - self.origin_ne;
        v.x * d.y - v.y * d.x
    }

    /// Desired speed, m/s (`get_speed`).
    pub fn get_speed(&self) -> f64 {
        self.desired_speed_limited
    }

    /// Desired turn rate, rad/s, positive clockwise (`get_turn_rate_rads`).
    pub fn get_turn_rate_rads(&self) -> f64 {
        self.desired_turn_rate
    }

    /// Desired lateral acceleration, m/s².
    pub fn get_lat_accel(&self) -> f64 {
        self.desired_lat_accel
    }

    /// Bearing to the destination, rad, 0..2π (`wp_bearing_cd` in radians).
    pub fn wp_bearing_rad(&self) -> f64 {
        self.wp_bearing.rem_euclid(std::f64::consts::TAU)
    }

    /// Heading held during a pivot, rad, 0..2π (`nav_bearing_cd` in
    /// radians).
    pub fn nav_bearing_rad(&self) -> f64 {
        self.desired_heading.rem_euclid(std::f64::consts::TAU)
    }

    /// Cross-track error of the last update, m (`crosstrack_error`).
    pub fn crosstrack_error(&self) -> f64 {
        self.cross_track_error
    }

    /// Distance to the destination, m.
    pub fn get_distance_to_destination(&self) -> f64 {
        self.distance_to_destination
    }

    /// Whether the destination has been reached (`reached_destination`).
    pub fn reached_destination(&self) -> bool {
        self.reached_destination
    }

    /// Whether the current leg blends into the next (`is_fast_waypoint`).
    pub fn is_fast_waypoint(&self) -> bool {
        self.fast_waypoint
    }

    /// Whether a pivot turn is in progress.
    pub fn pivot_active(&self) -> bool {
        self.pivot.active()
    }

    /// The destination, NE m.
    pub fn get_destination(&self) -> Vector2<f64> {
        self.destination_ne
    }

    /// The origin of the current leg, NE m.
    pub fn get_origin(&self) -> Vector2<f64> {
        self.origin_ne
    }

    /// The position target, NE m.
    pub fn get_position_target(&self) -> Vector2<f64> {
        self.pos_control.get_pos_target()
    }
}

/// Whether the input-shaped target is within 1 cm of the destination and
/// the vehicle within `radius` (m) of the target.
fn shaped_target_arrived(target_to_destination_m: f64, pos_error_m: f64, radius: f64) -> bool {
    target_to_destination_m < 0.01 && pos_error_m < radius
}

/// Bearing from `a` to `b`, rad from north, clockwise positive; east
/// (π/2) where the two are the same point, as `Location::get_bearing`
/// gives it.
pub fn bearing(a: &Vector2<f64>, b: &Vector2<f64>) -> f64 {
    let d = b - a;
    if is_zero_xy(&d) {
        return std::f64::consts::FRAC_PI_2;
    }
    d.y.atan2(d.x)
}

/// Whether `pos` is past the line through `to` perpendicular to from→to
/// (`Location::past_interval_finish_line`).
pub fn past_interval_finish_line(
    pos: &Vector2<f64>,
    from: &Vector2<f64>,
    to: &Vector2<f64>,
) -> bool {
    let v2 = to - from;
    let l2 = v2.norm_squared();
    // Points within about 3 cm count as passed (ArduPilot's 0.001 m²).
    if l2 < 0.001 {
        return true;
    }
    (pos - from).dot(&v2) / l2 >= 1.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attitude_control::AttitudeParams;
    use crate::pos_control::PosControlParams;

    /// A navigator as a mode entry leaves it (`init`).
    fn nav() -> (ArWpNav, ArAttitudeControl) {
        let mut w = ArWpNav::new(
            WpNavParams::default(),
            ArPosControl::new(PosControlParams::default()),
        );
        let atc = ArAttitudeControl::new(AttitudeParams::default());
        w.init(0.0, &at(Vector2::zeros(), 0.0, 0.0), &atc);
        (w, atc)
    }

    fn at(pos: Vector2<f64>, yaw: f64, t: f64) -> NavState {
        NavState {
            now_s: t,
            armed: true,
            pos_ne_m: pos,
            yaw_rad: yaw,
            ..Default::default()
        }
    }

    #[test]
    fn crosstrack_sign_and_finish_line() {
        let (mut w, atc) = nav();
        // The first leg starts at the vehicle's stopping point: here, at rest at home.
        w.set_desired_location(
            Vector2::new(10.0, 0.0),
            None,
            &at(Vector2::zeros(), 0.0, 0.0),
            &atc,
        );
        assert_eq!(w.get_origin(), Vector2::zeros());
        let s = at(Vector2::new(5.0, 1.0), 0.0, 0.0);
        // Northbound track, vehicle 1 m east: negative.
        assert!((w.calc_crosstrack_error(&s) + 1.0).abs() < 1e-12);
        let west = at(Vector2::new(5.0, -2.0), 0.0, 0.0);
        assert!((w.calc_crosstrack_error(&west) - 2.0).abs() < 1e-12);
        let o = Vector2::zeros();
        let d = Vector2::new(10.0, 0.0);
        assert!(!past_interval_finish_line(&Vector2::new(9.9, 3.0), &o, &d));
        assert!(past_interval_finish_line(&Vector2::new(10.1, -3.0), &o, &d));
    }

    #[test]
    fn pivot_activation_follows_the_angle_and_delay() {
        let p = WpNavParams {
            pivot_delay: 1.0,
            ..WpNavParams::default()
        };
        let mut pv = ArPivotTurn::default();
        pv.enable(true);
        assert!(pv.would_activate(70f64.to_radians(), &p));
        assert!(!pv.would_activate(50f64.to_radians(), &p));
        pv.check_activation(90f64.to_radians(), 0.0, false, 0.0, &p);
        assert!(pv.active());
        // Aligned within 5°: stays active for WP_PIVOT_DELAY, then ends.
        pv.check_activation(90f64.to_radians(), 88f64.to_radians(), false, 1.0, &p);
        assert!(pv.active());
        pv.check_activation(90f64.to_radians(), 88f64.to_radians(), false, 2.1, &p);
        assert!(!pv.active());
        pv.enable(false);
        pv.check_activation(180f64.to_radians(), 0.0, true, 3.0, &p);
        assert!(!pv.active(), "disabled pivots never activate");
    }

    #[test]
    fn a_stuck_vehicle_holds_the_target_back() {
        // Time scaling: if the vehicle does not move, the S-curve clock slows to
        // the 5 % allowance and the target stays close instead of running away.
        let (mut w, atc) = nav();
        let s0 = at(Vector2::zeros(), 0.0, 0.0);
        w.set_desired_location(Vector2::new(100.0, 0.0), None, &s0, &atc);
        let mut t = 0.0;
        while t < 60.0 {
            w.update(0.02, &at(Vector2::zeros(), 0.0, t), &atc);
            t += 0.02;
        }
        let target = w.get_position_target();
        assert!(target.norm() < 15.0, "target ran away to {target}");
        assert!(!w.reached_destination());
        assert!(w.get_speed() > 0.0, "it still asks to move");
    }

    #[test]
    fn speed_limit_reaches_the_legs_within_half_a_second() {
        let (mut w, atc) = nav();
        let s0 = at(Vector2::zeros(), 0.0, 0.0);
        w.set_desired_location(Vector2::new(100.0, 0.0), None, &s0, &atc);
        assert!(!w.set_speed_max(0.01), "below AR_WPNAV_SPEED_MIN");
        assert!(w.set_speed_max(0.7));
        w.update(0.02, &s0, &atc);
        assert_eq!(w.pos_control.get_speed_max(), 0.7);
        assert!((w.scurve_this_leg.get_speed_along_track() - 0.7).abs() < 1e-12);
        // A second change within 500 ms waits.
        assert!(w.set_speed_max(1.5));
        w.update(0.02, &at(Vector2::zeros(), 0.0, 0.2), &atc);
        assert_eq!(w.pos_control.get_speed_max(), 0.7);
        w.update(0.02, &at(Vector2::zeros(), 0.0, 0.6), &atc);
        assert_eq!(w.pos_control.get_speed_max(), 1.5);
    }

    #[test]
    fn disarmed_or_invalid_inputs_do_not_move() {
        let (mut w, atc) = nav();
        let s = NavState {
            armed: false,
            ..at(Vector2::zeros(), 0.0, 0.0)
        };
        assert!(!w.set_desired_location(Vector2::new(f64::NAN, 0.0), None, &s, &atc));
        w.update(0.02, &s, &atc);
        assert_eq!((w.get_speed(), w.get_turn_rate_rads()), (0.0, 0.0));
    }
}

#[cfg(test)]
mod ardupilot_edges {
    use super::*;
    use crate::attitude_control::AttitudeParams;
    use crate::pos_control::PosControlParams;
    use std::f64::consts::{FRAC_PI_2, PI};

    fn nav() -> (ArWpNav, ArAttitudeControl) {
        let w = ArWpNav::new(
            WpNavParams::default(),
            ArPosControl::new(PosControlParams::default()),
        );
        (w, ArAttitudeControl::new(AttitudeParams::default()))
    }

    fn at(n: f64, e: f64, yaw: f64, t: f64) -> NavState {
        NavState {
            now_s: t,
            armed: true,
            pos_ne_m: Vector2::new(n, e),
            yaw_rad: yaw,
            ..Default::default()
        }
    }

    /// `Location::get_bearing` gives east for two identical points.
    #[test]
    fn the_bearing_between_one_point_and_itself_is_east() {
        let p = Vector2::new(3.0, -4.0);
        assert_eq!(bearing(&p, &p), FRAC_PI_2);
        assert_eq!(bearing(&p, &Vector2::new(3.0, -5.0)), -FRAC_PI_2);
        assert_eq!(bearing(&p, &Vector2::new(4.0, -4.0)), 0.0);
    }

    /// Origin and destination within about 3 cm (0.001 m²) count as
    /// passed; 4 cm apart they do not.
    #[test]
    fn a_leg_of_under_3_cm_is_passed() {
        let o = Vector2::zeros();
        assert!(past_interval_finish_line(&o, &o, &Vector2::new(0.03, 0.0)));
        assert!(!past_interval_finish_line(&o, &o, &Vector2::new(0.04, 0.0)));
    }

    /// Reversing toward a point behind needs no pivot, by either way of
    /// heading there; forward, it does.
    #[test]
    fn a_reversing_vehicle_does_not_pivot_toward_a_point_behind() {
        for (reversed, pivots) in [(false, true), (true, false)] {
            for fast_update in [false, true] {
                let (mut w, atc) = nav();
                w.set_turn_params(0.9, true);
                let s = at(0.0, 0.0, 0.0, 1.0);
                w.init(0.0, &s, &atc);
                w.set_reversed(reversed);
                let behind = Vector2::new(-10.0, 0.0);
                let ok = if fast_update {
                    w.set_desired_location_expect_fast_update(behind, &s, &atc)
                } else {
                    w.set_desired_location(behind, None, &s, &atc)
                };
                assert!(ok);
                assert_eq!(
                    w.pivot_active(),
                    pivots,
                    "reversed {reversed}, fast {fast_update}"
                );
                assert!((w.wp_bearing_rad() - PI).abs() < 1e-12);
            }
        }
    }

    /// AR_PivotTurn: a pivot needs a turn of more than WP_PIVOT_ANGLE, and
    /// pivoting is off for an angle of 5° (AR_PIVOT_ANGLE_ACCURACY) or less.
    #[test]
    fn a_pivot_needs_more_than_its_angle_and_an_angle_above_5_degrees() {
        let mut pv = ArPivotTurn::default();
        pv.enable(true);
        // 45°, whose radians wrap_pi gives back exactly.
        let p = WpNavParams {
            pivot_angle: 45.0,
            ..WpNavParams::default()
        };
        let angle = p.pivot_angle.to_radians();
        assert_eq!(crate::control::wrap_pi(angle), angle);
        assert!(!pv.would_activate(angle, &p), "exactly the angle");
        assert!(pv.would_activate(angle + 1e-9, &p));
        assert!(pv.would_activate(-angle - 1e-9, &p), "either way");
        pv.check_activation(angle, 0.0, false, 0.0, &p);
        assert!(!pv.active(), "exactly the angle");
        pv.check_activation(angle + 1e-9, 0.0, false, 0.0, &p);
        assert!(pv.active());
        for (pivot_angle, pivots) in [(5.0, false), (5.001, true)] {
            let p = WpNavParams {
                pivot_angle,
                ..WpNavParams::default()
            };
            let mut pv = ArPivotTurn::default();
            pv.enable(true);
            assert_eq!(
                pv.would_activate(PI, &p),
                pivots,
                "WP_PIVOT_ANGLE {pivot_angle}"
            );
            pv.check_activation(PI, 0.0, false, 0.0, &p);
            assert_eq!(pv.active(), pivots, "WP_PIVOT_ANGLE {pivot_angle}");
        }
    }

    /// Disabling a pivot ends it for good: enabling again does not resume
    /// it; and `deactivate` ends one.
    #[test]
    fn a_disabled_or_deactivated_pivot_stays_ended() {
        let p = WpNavParams::default();
        let mut pv = ArPivotTurn::default();
        pv.enable(true);
        pv.check_activation(PI, 0.0, false, 0.0, &p);
        assert!(pv.active());
        // Rover enables pivoting every loop (set_turn_params): that keeps a
        // pivot going.
        pv.enable(true);
        assert!(pv.active(), "enabled again");
        pv.enable(false);
        pv.enable(true);
        assert!(!pv.active(), "re-enabled");
        pv.check_activation(PI, 0.0, false, 0.0, &p);
        assert!(pv.active());
        pv.deactivate();
        assert!(!pv.active(), "deactivated");
        // Within 5° of the heading, with no delay, a pivot ends at once;
        // a forced one starts whatever the error.
        pv.check_activation(0.0, 0.0, true, 1.0, &p);
        assert!(pv.active(), "forced");
        pv.check_activation(0.0, 4f64.to_radians(), false, 1.0, &p);
        assert!(!pv.active(), "aligned within 5°, WP_PIVOT_DELAY 0");
        pv.check_activation(0.0, 0.0, true, 2.0, &p);
        pv.check_activation(0.0, 6f64.to_radians(), false, 2.0, &p);
        assert!(pv.active(), "6° off: still pivoting");
    }

    /// Entering a mode (init) does not restart the half-second between
    /// speed changes.
    #[test]
    fn init_keeps_the_half_second_between_speed_changes() {
        let (mut w, atc) = nav();
        let s = |t: f64| at(0.0, 0.0, 0.0, t);
        w.init(0.0, &s(0.0), &atc);
        w.set_desired_location(Vector2::new(100.0, 0.0), None, &s(0.0), &atc);
        assert!(w.set_speed_max(1.0));
        w.update(0.02, &s(10.0), &atc);
        assert_eq!(w.pos_control.get_speed_max(), 1.0);
        w.init(0.0, &s(10.1), &atc);
        w.set_desired_location(Vector2::new(100.0, 0.0), None, &s(10.1), &atc);
        assert!(w.set_speed_max(1.5));
        // init set WP_SPEED; the new limit waits for half a second after
        // the last change.
        w.update(0.02, &s(10.2), &atc);
        assert_eq!(w.pos_control.get_speed_max(), 2.0, "0.2 s after the last");
        w.update(0.02, &s(10.6), &atc);
        assert_eq!(w.pos_control.get_speed_max(), 1.5);
    }
}

/// AR_WPNav's own behaviour, by hand: the limits `init` takes, where a leg
/// starts, the time scaling of the S-curve clock, when a destination
/// counts as reached and what the getters report.
#[cfg(test)]
mod behaviour {
    use super::*;
    use crate::attitude_control::AttitudeParams;
    use crate::pos_control::PosControlParams;
    use std::f64::consts::{FRAC_PI_2, PI};

    const DT: f64 = 0.02;

    fn atc() -> ArAttitudeControl {
        ArAttitudeControl::new(AttitudeParams {
            accel_max: 1.5,
            decel_max: 3.0,
            ..AttitudeParams::default()
        })
    }

    fn nav(params: WpNavParams) -> ArWpNav {
        ArWpNav::new(params, ArPosControl::new(PosControlParams::default()))
    }

    fn at(pos: Vector2<f64>, vel: Vector2<f64>, t: f64) -> NavState {
        NavState {
            now_s: t,
            armed: true,
            pos_ne_m: pos,
            vel_ne_m_s: vel,
            yaw_rad: if vel.norm() > 0.0 {
                vel.y.atan2(vel.x)
            } else {
                0.0
            },
            ..Default::default()
        }
    }

    /// Flies `w` for `secs` from `t0` with the vehicle exactly on its target
    /// (position and velocity), as a perfect autopilot would; returns the
    /// state of the last tick.
    fn track(w: &mut ArWpNav, atc: &ArAttitudeControl, t0: f64, secs: f64) -> NavState {
        let mut s = at(w.get_position_target(), Vector2::zeros(), t0);
        for k in 0..(secs / DT).round() as usize {
            s = at(
                w.get_position_target(),
                w.pos_control.get_desired_velocity(),
                t0 + k as f64 * DT,
            );
            w.update(DT, &s, atc);
        }
        s
    }

    #[test]
    fn init_takes_its_limits_from_wp_and_atc_parameters() {
        let atc = atc();
        let s = at(Vector2::zeros(), Vector2::zeros(), 0.0);
        // WP_ACCEL and WP_JERK 0: ATC's acceleration (the smaller of accel and
        // decel), and a jerk equal to it; a speed of 0 takes WP_SPEED.
        let mut w = nav(WpNavParams::default());
        w.init(0.0, &s, &atc);
        let p = &w.pos_control;
        assert_eq!(
            (p.get_speed_max(), p.get_accel_max(), p.get_jerk_max()),
            (2.0, 1.5, 1.5)
        );
        assert_eq!(p.get_lat_accel_max(), atc.get_turn_lat_accel_max());
        // A speed given wins; WP_ACCEL below ATC's wins; WP_JERK is taken as is.
        let mut w = nav(WpNavParams {
            accel: 0.8,
            jerk: 4.0,
            ..WpNavParams::default()
        });
        w.init(3.5, &s, &atc);
        let p = &w.pos_control;
        assert_eq!(
            (p.get_speed_max(), p.get_accel_max(), p.get_jerk_max()),
            (3.5, 0.8, 4.0)
        );
        // WP_ACCEL above ATC's is capped by it; a speed below the floor is raised.
        let mut w = nav(WpNavParams {
            accel: 5.0,
            ..WpNavParams::default()
        });
        w.init(0.01, &s, &atc);
        assert_eq!(w.pos_control.get_accel_max(), 1.5);
        assert_eq!(w.pos_control.get_speed_max(), SPEED_MIN);
        // No ATC limit at all: AR_WPNAV_ACCEL_MAX.
        let free = ArAttitudeControl::new(AttitudeParams {
            accel_max: 0.0,
            ..AttitudeParams::default()
        });
        let mut w = nav(WpNavParams::default());
        w.init(0.0, &s, &free);
        assert_eq!(w.pos_control.get_accel_max(), ACCEL_MAX_DEFAULT);
    }

    #[test]
    fn init_starts_at_the_stopping_point() {
        let atc = atc();
        // 2 m/s north-east at 3 m/s² of deceleration: 4/6 m ahead.
        let v = Vector2::new(3.0_f64.sqrt(), 1.0);
        let s = at(Vector2::new(10.0, -4.0), v, 0.0);
        let mut w = nav(WpNavParams::default());
        w.init(0.0, &s, &atc);
        let stop = Vector2::new(10.0, -4.0) + v / 2.0 * (4.0 / 6.0);
        assert!((w.get_origin() - stop).norm() < 1e-12, "{}", w.get_origin());
        assert_eq!(w.get_destination(), w.get_origin());
        // Stopping where it is, it heads for that point.
        assert!(w.set_desired_location_to_stopping_location(&s, &atc));
        assert!((w.get_destination() - stop).norm() < 1e-12);
        // A position that is not a number gives no stopping point to go to.
        let lost = at(Vector2::new(f64::NAN, 0.0), Vector2::zeros(), 0.0);
        assert!(!w.set_desired_location_to_stopping_location(&lost, &atc));
        // At rest the stopping point is the position.
        let rest = at(Vector2::new(1.0, 2.0), Vector2::zeros(), 0.0);
        w.init(0.0, &rest, &atc);
        assert_eq!(w.get_origin(), Vector2::new(1.0, 2.0));
    }

    #[test]
    fn it_is_active_for_100_ms_after_an_update() {
        let atc = atc();
        let mut w = nav(WpNavParams::default());
        let s = at(Vector2::zeros(), Vector2::zeros(), 0.0);
        assert!(!w.is_active(0.0), "never updated");
        w.init(0.0, &s, &atc);
        w.set_desired_location(Vector2::new(10.0, 0.0), None, &s, &atc);
        w.update(DT, &s, &atc);
        assert!(w.is_active(0.0) && w.is_active(0.099));
        assert!(!w.is_active(0.1) && !w.is_active(0.5));
    }

    #[test]
    fn the_speed_limit_takes_the_floor_the_nudge_and_half_a_second() {
        let atc = atc();
        let mut w = nav(WpNavParams::default());
        let s = |t| at(Vector2::zeros(), Vector2::zeros(), t);
        w.init(0.0, &s(0.0), &atc);
        w.set_desired_location(Vector2::new(50.0, 0.0), None, &s(0.0), &atc);
        assert!(w.set_speed_max(SPEED_MIN), "the floor itself is allowed");
        assert!(!w.set_speed_max(f64::NAN));
        w.update(DT, &s(10.0), &atc);
        assert_eq!(w.pos_control.get_speed_max(), SPEED_MIN);
        // A pilot's nudge above the limit raises it, exactly 0.5 s later.
        w.set_nudge_speed_max(3.0);
        w.update(DT, &s(10.4), &atc);
        assert_eq!(w.pos_control.get_speed_max(), SPEED_MIN, "0.4 s after");
        w.update(DT, &s(10.5), &atc);
        assert_eq!(w.pos_control.get_speed_max(), 3.0, "0.5 s after");
        // A nudge below the limit does nothing.
        assert!(w.set_speed_max(2.5));
        w.set_nudge_speed_max(1.0);
        w.update(DT, &s(11.0), &atc);
        assert_eq!(w.pos_control.get_speed_max(), 2.5);
    }

    /// A new leg starts at the last destination only when the last one was
    /// reached by the S-curve path moments ago; otherwise at the stopping
    /// point.
    #[test]
    fn a_leg_starts_at_the_last_destination_only_after_reaching_it_just_now() {
        let atc = atc();
        let a = Vector2::new(6.0, 0.0);
        let fresh = || {
            let mut w = nav(WpNavParams::default());
            let s = at(Vector2::zeros(), Vector2::zeros(), 0.0);
            w.init(0.0, &s, &atc);
            w.set_desired_location(a, None, &s, &atc);
            w
        };
        // Reached: the vehicle stopped 0.3 m short, within WP_RADIUS.
        let mut w = fresh();
        let end = track(&mut w, &atc, 0.0, 20.0);
        assert!(w.reached_destination());
        let short = at(Vector2::new(5.7, 0.1), Vector2::zeros(), end.now_s + DT);
        let b = Vector2::new(6.0, 8.0);
        assert!(w.set_desired_location(b, None, &short, &atc));
        assert_eq!(w.get_origin(), a, "reached just now");
        assert!((w.get_distance_to_destination() - (0.3f64.hypot(7.9))).abs() < 1e-12);
        // The same after a pause of 0.2 s: from where it stands.
        let mut w = fresh();
        let end = track(&mut w, &atc, 0.0, 20.0);
        let later = at(Vector2::new(5.7, 0.1), Vector2::zeros(), end.now_s + 0.2);
        w.set_desired_location(b, None, &later, &atc);
        assert_eq!(w.get_origin(), Vector2::new(5.7, 0.1), "after a pause");
        // Not reached yet (half way): from its stopping point.
        let mut w = fresh();
        let mid = track(&mut w, &atc, 0.0, 3.0);
        assert!(!w.reached_destination());
        w.set_desired_location(b, None, &mid, &atc);
        let stop = mid.pos_ne_m
            + mid.vel_ne_m_s.normalize() * atc.get_stopping_distance(mid.vel_ne_m_s.norm());
        assert!((w.get_origin() - stop).norm() < 1e-12, "not reached");
        // After the input-shaping path, even at its destination: from where it stands.
        let mut w = fresh();
        let s = at(Vector2::zeros(), Vector2::zeros(), 0.0);
        w.set_desired_location_expect_fast_update(Vector2::new(0.5, 0.0), &s, &atc);
        let mut t = 0.0;
        while !w.reached_destination() && t < 30.0 {
            let p = w.get_position_target();
            w.update(DT, &at(p, Vector2::zeros(), t), &atc);
            t += DT;
        }
        assert!(w.reached_destination());
        let here = at(Vector2::new(0.45, 0.02), Vector2::zeros(), t);
        w.set_desired_location(b, None, &here, &atc);
        assert_eq!(
            w.get_origin(),
            Vector2::new(0.45, 0.02),
            "after input shaping"
        );
        // A non-finite next destination is refused.
        assert!(!w.set_desired_location(b, Some(Vector2::new(0.0, f64::INFINITY)), &here, &atc));
    }

    /// The input-shaping path starts again from the vehicle when it was not
    /// running or was paused; while running, each new target follows on.
    #[test]
    fn input_shaping_restarts_from_the_vehicle_only_when_not_running() {
        let atc = atc();
        let mut w = nav(WpNavParams::default());
        let s0 = at(Vector2::new(1.0, 1.0), Vector2::zeros(), 0.0);
        w.init(0.0, &s0, &atc);
        assert!(w.set_desired_location_expect_fast_update(Vector2::new(5.0, 1.0), &s0, &atc));
        assert_eq!(w.get_origin(), Vector2::new(1.0, 1.0));
        w.update(DT, &s0, &atc);
        let s1 = at(Vector2::new(1.1, 1.0), Vector2::zeros(), DT);
        w.set_desired_location_expect_fast_update(Vector2::new(6.0, 1.0), &s1, &atc);
        assert_eq!(
            w.get_origin(),
            Vector2::new(5.0, 1.0),
            "running: follows on"
        );
        let s2 = at(Vector2::new(1.2, 1.0), Vector2::zeros(), 0.5);
        w.set_desired_location_expect_fast_update(Vector2::new(7.0, 1.0), &s2, &atc);
        assert_eq!(w.get_origin(), Vector2::new(1.2, 1.0), "paused: restarts");
        assert!(!w.set_desired_location_expect_fast_update(Vector2::new(f64::NAN, 0.0), &s2, &atc));
        // After the S-curve path, even while running: restarts.
        let mut w = nav(WpNavParams::default());
        w.init(0.0, &s0, &atc);
        w.set_desired_location(Vector2::new(5.0, 1.0), None, &s0, &atc);
        w.update(DT, &s0, &atc);
        w.set_desired_location_expect_fast_update(Vector2::new(6.0, 1.0), &s1, &atc);
        assert_eq!(w.get_origin(), Vector2::new(1.1, 1.0), "after the S-curve");
    }

    /// With a next waypoint, a slight corner is blended (a fast waypoint)
    /// and a sharp one, for a vehicle that can pivot, stops there.
    #[test]
    fn a_slight_corner_is_blended_and_a_sharp_one_pivoted() {
        let atc = atc();
        // East, then 10° or 90° to the right of east.
        let b = Vector2::new(0.0, 20.0);
        for (turn_deg, fast) in [
            (10.0_f64, true),
            (90.0, false),
            (-10.0, true),
            (-90.0, false),
        ] {
            let mut w = nav(WpNavParams::default());
            w.set_turn_params(0.5, true);
            let s = at(Vector2::zeros(), Vector2::zeros(), 0.0);
            w.init(0.0, &s, &atc);
            let heading = FRAC_PI_2 + turn_deg.to_radians();
            let c = b + 20.0 * Vector2::new(heading.cos(), heading.sin());
            w.set_desired_location(b, Some(c), &s, &atc);
            assert_eq!(w.is_fast_waypoint(), fast, "turn {turn_deg}°");
        }
        // Without pivoting every corner is blended.
        let mut w = nav(WpNavParams::default());
        w.set_turn_params(0.5, false);
        let s = at(Vector2::zeros(), Vector2::zeros(), 0.0);
        w.init(0.0, &s, &atc);
        w.set_desired_location(b, Some(Vector2::new(-20.0, 20.0)), &s, &atc);
        assert!(w.is_fast_waypoint());
    }

    /// Through a blended corner the target moves on without a jump: the next
    /// leg, already running, becomes this leg.
    #[test]
    fn a_blended_corner_hands_over_the_running_next_leg() {
        let atc = atc();
        let mut w = nav(WpNavParams::default());
        let s = at(Vector2::zeros(), Vector2::zeros(), 0.0);
        w.init(0.0, &s, &atc);
        let (b, c, d) = (
            Vector2::new(0.0, 20.0),
            Vector2::new(15.0, 25.0),
            Vector2::new(30.0, 25.0),
        );
        w.set_desired_location(b, Some(c), &s, &atc);
        let mut t = 0.0;
        let mut last = w.get_position_target();
        while !w.reached_destination() {
            let s = at(
                w.get_position_target(),
                w.pos_control.get_desired_velocity(),
                t,
            );
            w.update(DT, &s, &atc);
            last = w.get_position_target();
            t += DT;
            assert!(t < 60.0, "never reached b");
        }
        let s = at(last, w.pos_control.get_desired_velocity(), t);
        assert!(w.set_desired_location(c, Some(d), &s, &atc));
        assert_eq!(w.get_origin(), b);
        w.update(
            DT,
            &at(last, w.pos_control.get_desired_velocity(), t + DT),
            &atc,
        );
        let step = (w.get_position_target() - last).norm();
        assert!(step < 2.0 * 2.0 * DT, "the target jumped {step} m");
        assert!(
            (last - b).norm() > 0.2,
            "the target was in the corner: {last}"
        );
    }

    /// Time scaling (`advance_wp_target_along_track`): the S-curve clock runs
    /// at 0.05 + (v_track − PSC_POS_P·e_track)/|v_target| of real time,
    /// between 0 and 1 (5 with overspeed), reached with the time constant
    /// accel/jerk.
    #[test]
    fn the_s_curve_clock_follows_the_vehicle_along_the_track() {
        let atc = atc();
        let mut w = nav(WpNavParams {
            jerk: 3.0,
            ..WpNavParams::default()
        });
        let s = at(Vector2::zeros(), Vector2::zeros(), 0.0);
        w.init(0.0, &s, &atc);
        w.set_desired_location(Vector2::new(0.0, 60.0), None, &s, &atc);
        let end = track(&mut w, &atc, 0.0, 6.0);
        // On target at cruise, the clock wants 1.05 and is held at 1.
        assert_eq!(w.track_scalar_dt, 1.0);
        // Now 1.5 m behind the target, at 1.2 m/s: e_track = 1.5 along the track.
        let target = w.get_position_target();
        let v_target = w.pos_control.get_desired_velocity();
        let u = v_target.normalize();
        let s = at(target - 1.5 * u, 1.2 * u, end.now_s + DT);
        let raw = 0.05 + (1.2 - w.pos_control.get_pos_p() * 1.5) / v_target.norm();
        let expect = 1.0 + (raw.clamp(0.0, 1.0) - 1.0) * (DT / (1.5 / 3.0));
        w.update(DT, &s, &atc);
        assert!(
            (w.track_scalar_dt - expect).abs() < 1e-12,
            "{} vs {expect}",
            w.track_scalar_dt
        );
        assert!(expect < 0.99, "the clock slows: {expect}");
        // Overspeed: ahead of the target and faster, the clock runs fast.
        let mut w2 = nav(WpNavParams::default());
        w2.set_overspeed_enabled(true);
        let s = at(Vector2::zeros(), Vector2::zeros(), 0.0);
        w2.init(0.0, &s, &atc);
        w2.set_desired_location(Vector2::new(0.0, 60.0), None, &s, &atc);
        let end = track(&mut w2, &atc, 0.0, 6.0);
        assert!(w2.track_scalar_dt > 1.0 && w2.track_scalar_dt <= 1.05 + 1e-12);
        let target = w2.get_position_target();
        let v_target = w2.pos_control.get_desired_velocity();
        let u = v_target.normalize();
        let before = w2.track_scalar_dt;
        let s = at(target + 0.5 * u, 3.0 * u, end.now_s + DT);
        let raw = 0.05 + (3.0 - w2.pos_control.get_pos_p() * -0.5) / v_target.norm();
        let expect = before + (raw.clamp(0.0, 5.0) - before) * (DT / 1.0);
        w2.update(DT, &s, &atc);
        assert!(
            (w2.track_scalar_dt - expect).abs() < 1e-12,
            "{} vs {expect}",
            w2.track_scalar_dt
        );
        assert!(raw > 1.05);
    }

    /// A regular waypoint is reached when the path has finished and the
    /// vehicle is within WP_RADIUS or past the finish line.
    #[test]
    fn a_waypoint_is_reached_within_its_radius_or_past_its_line() {
        let atc = atc();
        let dest = Vector2::new(8.0, 0.0);
        for (pos, reached) in [
            (Vector2::new(4.0, 0.0), false),
            (Vector2::new(6.5, 1.0), true),
            (Vector2::new(8.2, 5.0), true),
            (Vector2::new(7.9, 5.0), false),
        ] {
            let mut w = nav(WpNavParams::default());
            let s = at(Vector2::zeros(), Vector2::zeros(), 0.0);
            w.init(0.0, &s, &atc);
            w.set_desired_location(dest, None, &s, &atc);
            // On target until a tenth of a second before the path ends, then
            // at this spot until it has ended.
            let mut t = 0.0;
            while w.scurve_this_leg.get_time_remaining() > 0.1 {
                let s = at(
                    w.get_position_target(),
                    w.pos_control.get_desired_velocity(),
                    t,
                );
                w.update(DT, &s, &atc);
                t += DT;
            }
            assert!(!w.reached_destination());
            while !w.scurve_this_leg.finished() {
                w.update(DT, &at(pos, Vector2::zeros(), t), &atc);
                t += DT;
                assert!(t < 60.0);
            }
            assert_eq!(w.reached_destination(), reached, "at {pos}");
            assert!((w.get_distance_to_destination() - (dest - pos).norm()).abs() < 1e-12);
        }
    }

    #[test]
    fn disarmed_it_asks_for_nothing_even_with_a_destination() {
        let atc = atc();
        let mut w = nav(WpNavParams::default());
        let s = at(Vector2::zeros(), Vector2::zeros(), 0.0);
        w.init(0.0, &s, &atc);
        w.set_desired_location(Vector2::new(10.0, 3.0), None, &s, &atc);
        track(&mut w, &atc, 0.0, 2.0);
        assert!(w.get_speed() > 0.0 && w.crosstrack_error().abs() < 1e-9);
        let disarmed = NavState {
            armed: false,
            ..at(Vector2::new(3.0, 2.0), Vector2::zeros(), 2.0)
        };
        w.update(DT, &disarmed, &atc);
        assert_eq!(
            (
                w.get_speed(),
                w.get_turn_rate_rads(),
                w.get_lat_accel(),
                w.crosstrack_error()
            ),
            (0.0, 0.0, 0.0, 0.0)
        );
    }

    #[test]
    fn the_getters_report_the_last_update() {
        let atc = atc();
        let mut w = nav(WpNavParams::default());
        w.set_turn_params(0.5, false);
        let s = at(Vector2::zeros(), Vector2::zeros(), 0.0);
        w.init(0.0, &s, &atc);
        w.set_desired_location(
            Vector2::new(0.0, 30.0),
            Some(Vector2::new(20.0, 30.0)),
            &s,
            &atc,
        );
        // Through the blended corner the position controller asks for a
        // turn, and the navigator passes on what it asks.
        let mut peak: f64 = 0.0;
        for k in 0..1500 {
            let s = at(
                w.get_position_target(),
                w.pos_control.get_desired_velocity(),
                k as f64 * DT,
            );
            w.update(DT, &s, &atc);
            assert_eq!(w.get_lat_accel(), w.pos_control.get_desired_lat_accel());
            assert_eq!(
                w.get_turn_rate_rads(),
                w.pos_control.get_desired_turn_rate_rads()
            );
            peak = peak.min(w.get_lat_accel());
        }
        // East, then north: a left turn.
        assert!(peak < -0.1, "a left turn: {peak} m/s²");
        // 2 m north of an eastbound track, on its left: positive, as
        // calc_crosstrack_error says.
        let mut w = nav(WpNavParams::default());
        let s = at(Vector2::new(1.0, 1.0), Vector2::zeros(), 0.0);
        w.init(0.0, &s, &atc);
        w.set_desired_location(Vector2::new(1.0, 11.0), None, &s, &atc);
        let beside = at(Vector2::new(3.0, 5.0), Vector2::zeros(), DT);
        w.update(DT, &beside, &atc);
        assert!(
            (w.crosstrack_error() - 2.0).abs() < 1e-12,
            "{}",
            w.crosstrack_error()
        );
        assert!((w.get_distance_to_destination() - 2f64.hypot(6.0)).abs() < 1e-12);
        // Bearing east-south-east, from (3, 5) to (1, 11), reported 0..2π.
        let b = (6.0f64).atan2(-2.0);
        assert!((w.wp_bearing_rad() - b).abs() < 1e-12);
    }

    /// A pivoting vehicle holds the heading to the destination, reported
    /// 0..2π, and turns only once stopped.
    #[test]
    fn a_pivot_holds_the_heading_to_the_destination() {
        let atc = atc();
        let mut w = nav(WpNavParams::default());
        w.set_turn_params(0.5, true);
        let s = at(Vector2::new(5.0, 5.0), Vector2::zeros(), 0.0);
        w.init(0.0, &s, &atc);
        // Facing north, a destination to the south-west.
        w.set_desired_location(Vector2::new(0.0, 0.0), None, &s, &atc);
        assert!(w.pivot_active());
        w.update(DT, &s, &atc);
        assert!(
            (w.nav_bearing_rad() - 1.25 * PI).abs() < 1e-12,
            "{}",
            w.nav_bearing_rad()
        );
        assert_eq!(w.get_speed(), 0.0);
        assert!(w.get_turn_rate_rads() < 0.0, "left, the short way round");
        assert_eq!(w.get_lat_accel(), 0.0);
        // Reversing, it points its stern there: north-east.
        w.set_reversed(true);
        w.update(DT, &at(Vector2::new(5.0, 5.0), Vector2::zeros(), DT), &atc);
        assert!(
            (w.nav_bearing_rad() - 0.25 * PI).abs() < 1e-12,
            "{}",
            w.nav_bearing_rad()
        );
    }

    /// Cross-track error on a track of exactly 1 µm is still a cross-track
    /// error; below that, the distance to the destination.
    #[test]
    fn a_track_shorter_than_a_micrometre_gives_the_distance() {
        let atc = atc();
        let mut w = nav(WpNavParams::default());
        let s = at(Vector2::zeros(), Vector2::zeros(), 0.0);
        w.init(0.0, &s, &atc);
        w.set_desired_location(Vector2::new(1e-6, 0.0), None, &s, &atc);
        let beside = at(Vector2::new(0.0, 2.0), Vector2::zeros(), 0.0);
        assert_eq!(w.calc_crosstrack_error(&beside), -2.0);
        // Half a micrometre of track ending at (1, 1), the vehicle at (4, 5).
        w.destination_ne = Vector2::new(1.0, 1.0);
        w.origin_ne = Vector2::new(1.0 + 0.5e-6, 1.0);
        let off = at(Vector2::new(4.0, 5.0), Vector2::zeros(), 0.0);
        assert!((w.calc_crosstrack_error(&off) - 5.0).abs() < 1e-12);
        w.origin_ne = w.destination_ne;
        assert_eq!(w.calc_crosstrack_error(&off), 5.0);
    }

    /// `Location::past_interval_finish_line` on a leg away from the origin,
    /// and at exactly 0.001 m² of leg.
    #[test]
    fn the_finish_line_is_measured_from_the_legs_own_start() {
        let from = Vector2::new(100.0, 50.0);
        let to = Vector2::new(110.0, 50.0);
        assert!(!past_interval_finish_line(
            &Vector2::new(109.0, 40.0),
            &from,
            &to
        ));
        assert!(past_interval_finish_line(
            &Vector2::new(110.0, 60.0),
            &from,
            &to
        ));
        // (2e-5, 0.0316227702771…) has a squared length of exactly 0.001:
        // not under it, so the line is tested, and a point at the start is
        // not past it.
        let leg = Vector2::new(2e-5, 0.031_622_770_277_127_84);
        assert_eq!(leg.norm_squared(), 0.001);
        assert!(!past_interval_finish_line(
            &Vector2::zeros(),
            &Vector2::zeros(),
            &leg
        ));
    }

    #[test]
    fn input_shaping_arrives_within_a_centimetre_and_the_radius() {
        assert!(shaped_target_arrived(0.009, 1.9, 2.0));
        assert!(!shaped_target_arrived(0.011, 0.0, 2.0));
        assert!(!shaped_target_arrived(0.0, 2.1, 2.0));
    }

    #[test]
    fn aligned_means_within_5_degrees() {
        assert!(aligned(4.9f64.to_radians()));
        assert!(!aligned(5.1f64.to_radians()));
    }
}
