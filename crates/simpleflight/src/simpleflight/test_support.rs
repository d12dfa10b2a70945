//! SimpleFlight on a bench, for the unit tests of its parts: a generic
//! 1.5 kg X quad or a twin-thruster boat, no sensors unless a test feeds
//! them.

use super::*;
use crate::geofence::Geofence;
use crate::{airframe::MotorConfig, airframe::MulticopterAirframe};

/// A quad (or, with `boat`, a boat) flying `mission`, not auto-arming.
pub(super) fn bench(boat: bool, mission: Vec<Step>) -> (SimpleFlight, StatusHandle) {
    let arm = 0.17;
    let motor = |x: f64, y: f64, yaw_sign: f64| MotorConfig {
        pos_frd_m: Vector2::new(x, y),
        yaw_sign,
    };
    let vehicle = if boat {
        VehicleConfig::Boat(UgvOutputs::Differential {
            left: 0,
            right: 1,
            rudder: None,
        })
    } else {
        VehicleConfig::Multirotor(MulticopterAirframe {
            mass_kg: 1.5,
            inertia_kg_m2: [0.03, 0.03, 0.05],
            motors: vec![
                motor(arm, arm, 1.0),
                motor(-arm, -arm, 1.0),
                motor(arm, -arm, -1.0),
                motor(-arm, arm, -1.0),
            ],
            torque_per_thrust_m: 0.016,
            max_thrust_per_motor_n: 9.0,
        })
    };
    SimpleFlight::new(SimpleFlightConfig {
        vehicle,
        home: GeoPoint::from_deg(47.397_742, 8.545_594, 488.0),
        date: Date::from_calendar_date(2026, world_magnetic_model::time::Month::January, 1)
            .unwrap_or(Date::MIN),
        params: ParamStore::default(),
        initial_down_m: 0.0,
        mission,
        auto_arm: false,
        geofence: Geofence::default(),
        rally: Vec::new(),
    })
}

/// The kinds of the events logged so far.
pub(super) fn kinds(status: &StatusHandle) -> Vec<EventKind> {
    status.borrow().events.iter().map(|e| e.kind).collect()
}

/// A waypoint `n` m north at 10 m.
pub(super) fn waypoint_north(n: f64) -> Step {
    Step::Waypoint {
        pos: Vector3::new(n, 0.0, -10.0),
        hold_s: 0.0,
        radius_m: 2.0,
    }
}

/// On perfect state at `pos` (NED m, level and still) and off the ground:
/// a quad in the air or a boat afloat, not armed.
pub(super) fn on_truth_at(boat: bool, pos: Vector3<f64>) -> (SimpleFlight, StatusHandle) {
    let (mut sf, status) = bench(boat, Vec::new());
    sf.ground_truth = true;
    sf.truth = Some(GroundTruth {
        pos_ned_m: pos,
        vel_ned_m_s: Vector3::zeros(),
        att_ned_frd: UnitQuaternion::identity(),
        rate_frd_rad_s: Vector3::zeros(),
        accel_ned_m_s2: Vector3::zeros(),
        specific_force_frd_m_s2: Vector3::new(0.0, 0.0, -G0_M_S2),
        ang_accel_frd_rad_s2: Vector3::zeros(),
        landed: false,
        wind_ned_m_s: Vector3::zeros(),
    });
    sf.on_ground = false;
    (sf, status)
}
