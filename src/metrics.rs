//! Flight metrics on ground truth, the same for every controller, so that a
//! SimpleFlight row, a PX4 row and an ArduPilot row compare: distance flown,
//! top speed, cross-track error against the plan's legs, where the flight
//! started and ended, and whether the vehicle flipped.
//!
//! The planned path is the plan's polyline in the horizontal plane: home,
//! then every item with a position (take-off, waypoints, loiters, landings),
//! and home again for a return to launch. A sample's cross-track error is its
//! horizontal distance to the nearest leg, so it does not depend on when a
//! controller says it switched legs.

use nalgebra::{Vector2, Vector3};

use crate::controller::GroundTruth;
use crate::geo::{GeoPoint, LocalFrame};
use crate::mission::{commands, Mission};

/// Legs shorter than this (a vertical take-off) are left out, m.
const MIN_LEG_M: f64 = 1.0;
/// Tilt beyond which the vehicle counts as flipped, degrees.
const FLIPPED_DEG: f64 = 80.0;

/// The plan's legs, horizontal NED (m) in the simulation's frame.
#[derive(Debug, Clone, Default)]
pub struct PlannedLegs {
    legs: Vec<(Vector2<f64>, Vector2<f64>)>,
}

impl PlannedLegs {
    /// The legs of `mission` flown from the origin of `frame` (home).
    pub fn new(mission: &Mission, frame: &LocalFrame) -> Self {
        Self::launched_at(mission, frame, Vector2::zeros())
    }

    /// The legs of `mission` flown by a vehicle launched at `home` (NED m,
    /// horizontal; one vehicle of several starts away from the origin): the
    /// take-off and a return to launch are there.
    pub fn launched_at(mission: &Mission, frame: &LocalFrame, home: Vector2<f64>) -> Self {
        let alt_m = frame.origin().alt_m;
        let mut points = vec![home];
        for it in &mission.items {
            let p = match it.command {
                commands::NAV_RETURN_TO_LAUNCH => Some(home),
                16..=99 if it.is_global() && (it.x != 0.0 || it.y != 0.0) => {
                    let ned = frame.to_ned(&GeoPoint::from_deg(it.x, it.y, alt_m));
                    Some(ned.xy())
                }
                _ => None,
            };
            if let Some(p) = p {
                points.push(p);
            }
        }
        let legs = points
            .windows(2)
            .filter_map(|w| match w {
                [a, b] if (b - a).norm() >= MIN_LEG_M => Some((*a, *b)),
                _ => None,
            })
            .collect();
        PlannedLegs { legs }
    }

    /// Horizontal distance from `p` to the nearest leg, m (None: no legs).
    pub fn cross_track(&self, p: &Vector2<f64>) -> Option<f64> {
        self.legs
            .iter()
            .map(|(a, b)| {
                let d = b - a;
                let t = ((p - a).dot(&d) / d.norm_squared()).clamp(0.0, 1.0);
                (p - (a + d * t)).norm()
            })
            .min_by(f64::total_cmp)
    }

    /// Number of legs.
    pub fn len(&self) -> usize {
        self.legs.len()
    }

    /// Whether the plan has no legs.
    pub fn is_empty(&self) -> bool {
        self.legs.is_empty()
    }
}

/// Metrics accumulated tick by tick from ground truth.
#[derive(Debug, Clone, Default)]
pub struct FlightMetrics {
    /// Path length, m.
    pub distance_m: f64,
    /// Highest ground speed, m/s.
    pub max_speed_m_s: f64,
    xtrack_sq: f64,
    xtrack_n: u64,
    /// Largest cross-track error, m.
    pub xtrack_max_m: f64,
    /// Where the vehicle was when the mission started, NED m.
    pub start_ned_m: Option<Vector3<f64>>,
    /// The latest position, NED m.
    pub last_ned_m: Option<Vector3<f64>>,
    /// Why the vehicle counts as crashed, if it does.
    pub crashed: Option<String>,
}

impl FlightMetrics {
    /// One tick of ground truth. `on_mission`: the controller is flying the
    /// mission (armed, started, not yet finished): only then do samples count
    /// towards the cross-track error.
    pub fn sample(&mut self, t: &GroundTruth, on_mission: bool, legs: &PlannedLegs) {
        if let Some(p) = self.last_ned_m {
            self.distance_m += (t.pos_ned_m - p).norm();
        }
        self.last_ned_m = Some(t.pos_ned_m);
        self.max_speed_m_s = self.max_speed_m_s.max(t.vel_ned_m_s.norm());
        if on_mission {
            self.start_ned_m.get_or_insert(t.pos_ned_m);
            if let Some(x) = legs.cross_track(&t.pos_ned_m.xy()) {
                self.xtrack_sq += x * x;
                self.xtrack_n += 1;
                self.xtrack_max_m = self.xtrack_max_m.max(x);
            }
        }
        if self.crashed.is_none() {
            let tilt = (t.att_ned_frd * Vector3::z()).z.clamp(-1.0, 1.0).acos();
            if tilt.to_degrees() > FLIPPED_DEG {
                self.crashed = Some(format!("vehicle flipped ({:.0}° tilt)", tilt.to_degrees()));
            }
        }
    }

    /// RMS cross-track error, m (0 without samples).
    pub fn xtrack_rms_m(&self) -> f64 {
        if self.xtrack_n == 0 {
            0.0
        } else {
            (self.xtrack_sq / self.xtrack_n as f64).sqrt()
        }
    }

    /// Horizontal distance from the mission's start to the last position, m.
    pub fn from_start_m(&self) -> Option<f64> {
        Some((self.last_ned_m? - self.start_ned_m?).xy().norm())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mission::MissionItem;

    fn frame() -> LocalFrame {
        LocalFrame::new(GeoPoint::from_deg(47.0, 8.0, 400.0))
    }

    fn at(frame: &LocalFrame, n: f64, e: f64) -> MissionItem {
        let g = frame.to_geodetic(&Vector3::new(n, e, 0.0));
        MissionItem::waypoint(g.lat_deg(), g.lon_deg(), 10.0)
    }

    #[test]
    fn a_square_plan_gives_its_legs_and_distances_to_them() {
        let f = frame();
        let mut takeoff = MissionItem::waypoint(0.0, 0.0, 10.0);
        takeoff.command = commands::NAV_TAKEOFF;
        let mut rtl = MissionItem::waypoint(0.0, 0.0, 0.0);
        rtl.command = commands::NAV_RETURN_TO_LAUNCH;
        let m = Mission {
            items: vec![
                takeoff,
                at(&f, 50.0, 0.0),
                at(&f, 50.0, 50.0),
                at(&f, 0.0, 50.0),
                rtl,
            ],
            ..Mission::default()
        };
        let legs = PlannedLegs::new(&m, &f);
        // home → N50, → N50E50, → E50, → home (the take-off has no position).
        assert_eq!(legs.len(), 4);
        // (Plan coordinates are degrees: a round trip through them is exact
        // to well under a millimetre.)
        let d = |n, e| legs.cross_track(&Vector2::new(n, e)).expect("legs");
        assert!(d(25.0, 0.0) < 1e-6);
        assert!((d(25.0, 3.0) - 3.0).abs() < 1e-6);
        assert!((d(25.0, 25.0) - 25.0).abs() < 1e-6, "centre of the square");
        // Beyond a corner the distance is to the corner point.
        assert!((d(53.0, -4.0) - 5.0).abs() < 1e-6);
    }

    #[test]
    fn metrics_follow_the_truth() {
        let f = frame();
        let m = Mission {
            items: vec![at(&f, 100.0, 0.0)],
            ..Mission::default()
        };
        let legs = PlannedLegs::new(&m, &f);
        let mut fm = FlightMetrics::default();
        let mut t = GroundTruth {
            pos_ned_m: Vector3::zeros(),
            vel_ned_m_s: Vector3::new(2.0, 0.0, 0.0),
            att_ned_frd: nalgebra::UnitQuaternion::identity(),
            rate_frd_rad_s: Vector3::zeros(),
            accel_ned_m_s2: Vector3::zeros(),
            specific_force_frd_m_s2: Vector3::zeros(),
            ang_accel_frd_rad_s2: Vector3::zeros(),
            landed: false,
            wind_ned_m_s: Vector3::zeros(),
        };
        // Off the leg by 3 m and 4 m, half the samples each: RMS sqrt(12.5).
        for i in 0..100 {
            t.pos_ned_m = Vector3::new(i as f64, if i % 2 == 0 { 3.0 } else { 4.0 }, -5.0);
            fm.sample(&t, true, &legs);
        }
        assert!((fm.xtrack_rms_m() - 12.5f64.sqrt()).abs() < 1e-6);
        assert!((fm.xtrack_max_m - 4.0).abs() < 1e-6);
        assert_eq!(fm.max_speed_m_s, 2.0);
        assert!(fm.distance_m > 99.0);
        assert!((fm.from_start_m().expect("moved") - (99.0f64.powi(2) + 1.0).sqrt()).abs() < 1e-9);
        assert!(fm.crashed.is_none());
        t.att_ned_frd = nalgebra::UnitQuaternion::from_euler_angles(std::f64::consts::PI, 0.0, 0.0);
        fm.sample(&t, true, &legs);
        assert_eq!(fm.crashed.as_deref(), Some("vehicle flipped (180° tilt)"));
    }
}
