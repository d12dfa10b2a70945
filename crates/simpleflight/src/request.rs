//! Requests a ground station makes of SimpleFlight (arm, change mode, load a
//! mission …), queued by the GCS endpoint and applied at the start of
//! SimpleFlight's next control cycle, in order.
//!
//! The endpoint validates what it can answer at once (pre-arm state, ranges)
//! against [`super::FlightStatus`] and acknowledges; SimpleFlight re-checks
//! when it applies a request and logs a `refused` event if the situation
//! changed in between (one control cycle, 4 ms of sim time).

use mavsitl_core::shared::Shared;
use std::collections::VecDeque;

use nalgebra::Vector3;

use super::mission_plan::Step;
pub use super::multicopter::Lift;
use super::FlightMode;

/// One request.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// Arm the motors (refused unless the pre-arm checks pass or `force`).
    Arm {
        /// Skip the pre-arm checks (PX4's force-arm, magic 21196).
        force: bool,
    },
    /// Disarm; without `force` only on the ground.
    Disarm {
        /// Disarm even in the air (MAVSDK `kill`).
        force: bool,
    },
    /// Switch to a mode (Hold, Mission, Return, Land, Takeoff).
    SetMode(FlightMode),
    /// Take off to `alt_m` above home, then hold.
    Takeoff {
        /// Altitude above home, m.
        alt_m: f64,
    },
    /// Fly to a point and hold there (Hold mode). Components left `None` keep
    /// the current target's.
    Reposition {
        /// North, east (NED m), if given.
        ne_m: Option<[f64; 2]>,
        /// Down (NED m), if given.
        down_m: Option<f64>,
    },
    /// Change the horizontal cruise speed, m/s.
    ChangeSpeed(f64),
    /// Continue the mission at item `seq`.
    SetCurrent(usize),
    /// Replace the mission (one step per mission item).
    SetMission(Vec<Step>),
    /// Move home to this NED point, m.
    SetHome(Vector3<f64>),
    /// A ground station's heartbeat arrived (for the data-link failsafe).
    GcsHeard,
    /// Set a parameter (already range-checked by the caller).
    SetParam(&'static str, f64),
    /// Fly at this velocity (Offboard), multicopters in the air only; any
    /// other mode or request ends it.
    Velocity {
        /// Velocity, NED m/s.
        vel_ned_m_s: Vector3<f64>,
        /// What the heading does meanwhile.
        yaw: YawTarget,
    },
    /// Brake to a stop and hold where the vehicle comes to rest (Offboard),
    /// as PX4 does when the sticks are released; multicopters in the air
    /// only.
    Brake {
        /// What the heading does meanwhile.
        yaw: YawTarget,
    },
    /// Fly this roll and pitch (rad) and heading (Offboard), with a height or
    /// a throttle; multicopters in the air only.
    Attitude {
        /// Roll, rad (right wing down positive).
        roll_rad: f64,
        /// Pitch, rad (nose up positive).
        pitch_rad: f64,
        /// Heading: an angle, a rate, or held.
        yaw: YawTarget,
        /// Height or thrust.
        lift: Lift,
    },
    /// Fly these body rates (FRD, rad/s) (Offboard), with a height or a
    /// throttle; multicopters in the air only.
    Rates {
        /// Body rates, FRD rad/s.
        rates_frd: Vector3<f64>,
        /// Height or thrust.
        lift: Lift,
    },
}

/// The heading while flying a velocity set-point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum YawTarget {
    /// Keep the heading.
    Hold,
    /// Turn to this heading, rad from north, clockwise.
    Angle(f64),
    /// Turn at this rate, rad/s, clockwise.
    Rate(f64),
    /// Face the direction of horizontal travel.
    AlongVelocity,
}

/// The queue shared by the ground-station endpoint, which pushes, and
/// SimpleFlight, which takes.
pub type RequestQueue = Shared<VecDeque<Request>>;
