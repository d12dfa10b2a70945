//! Firmware in the loop: bridges that let real autopilot firmware fly the
//! simulated vehicle through the [`crate::controller::FlightController`] seam.
//! They see only controller types and MAVLink.

pub mod ardupilot;
pub mod ground_station;
pub mod param_file;
pub mod px4;
pub mod traffic;
