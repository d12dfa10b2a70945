//! SimpleFlight: the autopilot inside mavsitl.
//!
//! It plugs into the lockstep loop through the `FlightController` seam and sees
//! the vehicle only through its sensors (unless a scenario asks for ground
//! truth). Parts: what it is told of the vehicle ([`airframe`]), the state
//! [`estimator`], [`multicopter`] control, the mission runner
//! ([`simpleflight`]) and [`setup`], which wires a scenario, a mission and
//! parameters into a run.

pub mod airframe;
pub mod chain;
pub mod estimator;
pub mod event_log;
pub mod failsafe;
pub mod gcs;
pub mod geofence;
pub mod mission_plan;
pub mod multicopter;
pub mod params;
pub mod request;
pub mod setup;
pub mod simpleflight;

pub use airframe::VehicleConfig;
pub use request::{Lift, Request, RequestQueue, YawTarget};
pub use simpleflight::{
    FlightEvent, FlightMode, FlightStatus, SimpleFlight, SimpleFlightConfig, StatusHandle,
};
