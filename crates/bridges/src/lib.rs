//! Firmware in the loop: bridges that let real autopilot firmware fly the
//! simulated vehicle through the [`mavsitl_core::controller::FlightController`] seam.
//! They see only controller types and MAVLink.
//!
//! The bridges meet the simulation only through the seam; naming the simulation from here
//! does not compile (E0433, an undeclared crate):
//!
//! ```compile_fail,E0433
//! let _ = mavsitl_sim::world::World::calm;
//! ```

pub mod ardupilot;
pub mod ground_station;
pub mod param_file;
pub mod px4;
pub mod traffic;
