//! SimpleFlight: the autopilot inside mavsitl.
//!
//! It plugs into the lockstep loop through the `FlightController` seam and sees
//! the vehicle only through its sensors (unless a scenario asks for ground
//! truth). Parts: the state [`estimator`], [`multicopter`] control.

pub mod chain;
pub mod estimator;
pub mod mission_plan;
pub mod multicopter;
pub mod params;
pub mod setup;
pub mod simpleflight;

pub use simpleflight::{
    FlightMode, FlightStatus, SimpleFlight, SimpleFlightConfig, StatusHandle, VehicleConfig,
};
