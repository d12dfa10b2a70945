//! Flight metrics on ground truth, the same for every controller, so that a
//! SimpleFlight row, a PX4 row and an ArduPilot row compare: distance flown,
//! top speed, cross-track error against the plan's route, where the flight
//! started and ended, and whether the vehicle flipped.
//!
//! The cross-track error is [`crate::CrossTrack`]: the distance
//! to the nearest leg of the plan's [`Route`] (DO_JUMP followed), sampled at
//! the recording's ground-truth rate over the samples from the first to the
//! last moving one. A flight's summary and `compare` or `plot` of its
//! recording print the same figure; it does not depend on when a controller
//! says it switched legs.

use nalgebra::Vector3;

use crate::{CrossTrack, Route};
use mavsitl_core::time::Rate;
use mavsitl_sim::physics::BodyState;

/// The cosine of the tilt (80°) beyond which the vehicle counts as flipped.
const FLIPPED_COS: f64 = 0.173_648_177_666_930_41;

/// Whether a tilt is beyond 80°, from its cosine (the body's down axis
/// against the vertical), so that no arc cosine is taken every tick. (A
/// tilt of exactly 80° is never measured.)
fn flipped(cos_tilt: f64) -> bool {
    cos_tilt < FLIPPED_COS
}

/// Metrics accumulated tick by tick from ground truth.
#[derive(Debug, Clone)]
pub struct FlightMetrics {
    /// Path length, m.
    pub distance_m: f64,
    /// Highest ground speed, m/s.
    pub max_speed_m_s: f64,
    xtrack: CrossTrack,
    /// The ticks the cross-track error is sampled at.
    xtrack_rate: Rate,
    /// Where the vehicle was when the mission started, NED m.
    pub start_ned_m: Option<Vector3<f64>>,
    /// The latest position, NED m.
    pub last_ned_m: Option<Vector3<f64>>,
    /// Why the vehicle counts as crashed, if it does.
    pub crashed: Option<String>,
}

impl FlightMetrics {
    /// Against `route`, its cross-track error sampled at `rate` (the
    /// recording's ground-truth rate).
    pub fn new(route: Route, rate: Rate) -> Self {
        FlightMetrics {
            distance_m: 0.0,
            max_speed_m_s: 0.0,
            xtrack: CrossTrack::new(route),
            xtrack_rate: rate,
            start_ned_m: None,
            last_ned_m: None,
            crashed: None,
        }
    }

    /// The true state `t` at physics tick `tick`: its position, velocity and
    /// attitude, nothing a tick would have to work out (the ground truth's
    /// accelerations are not). `on_mission`: the controller is flying the
    /// mission (armed, started, not yet finished): the first such sample is
    /// the mission's start.
    pub fn sample(&mut self, tick: u64, t: &BodyState, on_mission: bool) {
        if let Some(p) = self.last_ned_m {
            self.distance_m += (t.pos_ned_m - p).norm();
        }
        self.last_ned_m = Some(t.pos_ned_m);
        self.max_speed_m_s = self.max_speed_m_s.max(t.vel_ned_m_s.norm());
        if on_mission {
            self.start_ned_m.get_or_insert(t.pos_ned_m);
        }
        if self.xtrack_rate.is_due(tick) {
            self.xtrack.add(&t.pos_ned_m, &t.vel_ned_m_s);
        }
        if self.crashed.is_none() {
            let cos_tilt = (t.att_ned_frd * Vector3::z()).z;
            if flipped(cos_tilt) {
                let tilt = cos_tilt.clamp(-1.0, 1.0).acos().to_degrees();
                self.crashed = Some(format!("vehicle flipped ({tilt:.0}° tilt)"));
            }
        }
    }

    /// RMS cross-track error, m (0 without samples).
    pub fn xtrack_rms_m(&self) -> f64 {
        self.xtrack.rms_m()
    }

    /// Largest cross-track error, m.
    pub fn xtrack_max_m(&self) -> f64 {
        self.xtrack.max_m()
    }

    /// The route the cross-track error is measured against.
    pub fn route(&self) -> &Route {
        self.xtrack.route()
    }

    /// Fresh metrics against `route`, sampled at the same rate.
    pub fn with_route(&self, route: Route) -> Self {
        FlightMetrics::new(route, self.xtrack_rate)
    }

    /// Horizontal distance from the mission's start to the last position, m.
    pub fn from_start_m(&self) -> Option<f64> {
        Some((self.last_ned_m? - self.start_ned_m?).xy().norm())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mavsitl_core::geo::{GeoPoint, LocalFrame};
    use mavsitl_core::time::PhysicsRate;
    use mavsitl_mavlink::mission::{commands, Mission, MissionItem};

    fn frame() -> LocalFrame {
        LocalFrame::new(GeoPoint::from_deg(47.0, 8.0, 400.0))
    }

    fn at(frame: &LocalFrame, n: f64, e: f64) -> MissionItem {
        let g = frame.to_geodetic(&Vector3::new(n, e, 0.0));
        MissionItem::waypoint(g.lat_deg(), g.lon_deg(), 10.0)
    }

    fn truth(n: f64, e: f64, speed: f64) -> BodyState {
        BodyState {
            pos_ned_m: Vector3::new(n, e, -5.0),
            vel_ned_m_s: Vector3::new(speed, 0.0, 0.0),
            att_ned_frd: nalgebra::UnitQuaternion::identity(),
            rate_frd_rad_s: Vector3::zeros(),
        }
    }

    #[test]
    fn metrics_follow_the_truth() {
        let f = frame();
        let m = Mission {
            items: vec![at(&f, 100.0, 0.0)],
            ..Mission::default()
        };
        let mut fm = FlightMetrics::new(Route::new(&m, &f, 2.0), Rate::EVERY_TICK);
        // Off the leg by 3 m and 4 m, half the samples each: RMS sqrt(12.5).
        for i in 0..100u64 {
            let off = if i % 2 == 0 { 3.0 } else { 4.0 };
            fm.sample(i, &truth(i as f64, off, 2.0), true);
        }
        assert!((fm.xtrack_rms_m() - 12.5f64.sqrt()).abs() < 1e-6);
        assert!((fm.xtrack_max_m() - 4.0).abs() < 1e-6);
        assert_eq!(fm.max_speed_m_s, 2.0);
        assert!(fm.distance_m > 99.0);
        assert!((fm.from_start_m().expect("moved") - (99.0f64.powi(2) + 1.0).sqrt()).abs() < 1e-9);
        assert!(fm.crashed.is_none());
        let mut t = truth(99.0, 4.0, 2.0);
        t.att_ned_frd = nalgebra::UnitQuaternion::from_euler_angles(std::f64::consts::PI, 0.0, 0.0);
        fm.sample(100, &t, true);
        assert_eq!(fm.crashed.as_deref(), Some("vehicle flipped (180° tilt)"));
    }

    /// Cross-track is sampled at the given rate, from the first to the last
    /// moving sample: what sits still before, between (counted) and after
    /// (not) is where compare's window puts it.
    #[test]
    fn cross_track_is_sampled_at_the_rate_over_the_moving_window() {
        let f = frame();
        let m = Mission {
            items: vec![at(&f, 100.0, 0.0)],
            ..Mission::default()
        };
        let rate = PhysicsRate::new(1000)
            .and_then(|r| r.divider(200))
            .expect("rate");
        let mut fm = FlightMetrics::new(Route::new(&m, &f, 2.0), rate);
        // Still 10 m off the leg before moving: not counted.
        fm.sample(0, &truth(0.0, 10.0, 0.0), false);
        // Moving, 1 m off on the due ticks (multiples of 5), 9 m off between.
        for tick in 1..=20u64 {
            let off = if tick % 5 == 0 { 1.0 } else { 9.0 };
            fm.sample(tick, &truth(tick as f64, off, 1.0), true);
        }
        assert!(
            (fm.xtrack_rms_m() - 1.0).abs() < 1e-6,
            "{}",
            fm.xtrack_rms_m()
        );
        // A stop 2 m off, then moving again 1 m off: the stop is counted.
        fm.sample(25, &truth(25.0, 2.0, 0.0), true);
        fm.sample(30, &truth(30.0, 1.0, 1.0), true);
        let want = ((4.0 * 1.0 + 4.0 + 1.0) / 6.0f64).sqrt();
        assert!(
            (fm.xtrack_rms_m() - want).abs() < 1e-6,
            "{}",
            fm.xtrack_rms_m()
        );
        assert!((fm.xtrack_max_m() - 2.0).abs() < 1e-6);
        // Drifting off at rest after the end: not counted.
        fm.sample(35, &truth(30.0, 7.0, 0.1), false);
        assert!((fm.xtrack_rms_m() - want).abs() < 1e-6);
        assert!((fm.xtrack_max_m() - 2.0).abs() < 1e-6);
    }

    /// A DO_JUMP loop flies back to its target: the leg back (here the
    /// diagonal from N40 to E40) is part of the route, so a vehicle on it
    /// is on the plan, 20 m from every leg flown forwards.
    #[test]
    fn a_jump_back_leg_is_on_the_route() {
        let f = frame();
        let mut jump = MissionItem::waypoint(0.0, 0.0, 0.0);
        jump.command = commands::DO_JUMP;
        jump.frame = 2;
        jump.params[0] = 0.0;
        jump.params[1] = 1.0;
        let m = Mission {
            items: vec![
                at(&f, 0.0, 40.0),
                at(&f, 40.0, 40.0),
                at(&f, 40.0, 0.0),
                jump,
            ],
            ..Mission::default()
        };
        let mut fm = FlightMetrics::new(Route::new(&m, &f, 2.0), Rate::EVERY_TICK);
        fm.sample(0, &truth(20.0, 20.0, 1.0), true);
        assert!(fm.xtrack_max_m() < 1e-6, "{}", fm.xtrack_max_m());
        fm.sample(1, &truth(21.0, 21.0, 1.0), true);
        assert!(
            (fm.xtrack_max_m() - 2f64.sqrt()).abs() < 1e-6,
            "{}",
            fm.xtrack_max_m()
        );
    }

    /// Flipped means tilted more than 80°, said once with the first such
    /// tilt; the distance sums every step, 3-D; the start is the first
    /// sample on the mission; fresh metrics keep the rate.
    #[test]
    fn a_tilt_beyond_80_degrees_is_a_flip_and_the_path_sums_in_3d() {
        let f = frame();
        let route = Route::new(
            &Mission {
                items: vec![at(&f, 100.0, 0.0)],
                ..Mission::default()
            },
            &f,
            2.0,
        );
        let mut fm = FlightMetrics::new(route.clone(), Rate::EVERY_TICK);
        assert_eq!(fm.from_start_m(), None);
        let tilted = |deg: f64, n: f64, z: f64| BodyState {
            att_ned_frd: nalgebra::UnitQuaternion::from_euler_angles(deg.to_radians(), 0.0, 0.0),
            pos_ned_m: Vector3::new(n, 0.0, z),
            ..truth(0.0, 0.0, 1.0)
        };
        fm.sample(0, &tilted(0.0, 0.0, 0.0), false);
        fm.sample(1, &tilted(79.0, 3.0, -4.0), true);
        fm.sample(2, &tilted(0.0, 6.0, 0.0), true);
        assert_eq!(fm.crashed, None);
        assert_eq!(fm.distance_m, 10.0);
        assert_eq!(fm.start_ned_m, Some(Vector3::new(3.0, 0.0, -4.0)));
        assert_eq!(fm.from_start_m(), Some(3.0));
        fm.sample(3, &tilted(81.0, 6.0, 0.0), true);
        fm.sample(4, &tilted(120.0, 6.0, 0.0), true);
        assert_eq!(fm.crashed.as_deref(), Some("vehicle flipped (81° tilt)"));
        // Fresh metrics against another route, at the same rate.
        let rate = PhysicsRate::new(1000)
            .and_then(|r| r.divider(200))
            .expect("rate");
        let other = Route::new(
            &Mission {
                items: vec![at(&f, 0.0, 50.0)],
                ..Mission::default()
            },
            &f,
            2.0,
        );
        let fresh = FlightMetrics::new(route, rate).with_route(other.clone());
        assert_eq!(fresh.route(), &other);
        assert_eq!((fresh.distance_m, fresh.last_ned_m), (0.0, None));
        let mut fresh = fresh;
        for tick in 1..=5u64 {
            let off = if tick == 5 { 1.0 } else { 9.0 };
            fresh.sample(tick, &truth(off, tick as f64, 1.0), true);
        }
        // Sampled once in five ticks: only tick 5's, 1 m off the leg east.
        assert!(
            (fresh.xtrack_rms_m() - 1.0).abs() < 1e-6,
            "{}",
            fresh.xtrack_rms_m()
        );
        assert!(
            (fresh.xtrack_max_m() - 1.0).abs() < 1e-6,
            "{}",
            fresh.xtrack_max_m()
        );
    }
}
