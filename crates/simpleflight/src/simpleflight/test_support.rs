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
        VehicleConfig::Boat(BoatOutputs::Differential {
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
