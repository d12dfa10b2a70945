//! SimpleFlight: the autopilot inside mavsitl.
//!
//! It plugs into the lockstep loop through the `FlightController` seam and sees
//! the vehicle only through its sensors (unless a scenario asks for ground
//! truth). Parts: the state [`estimator`], [`multicopter`] control.

pub mod estimator;
pub mod multicopter;
