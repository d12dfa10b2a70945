//! mavsitl-run: the application layer between the product crates and the
//! command line.
//!
//! - [`setup`] turns a scenario, a mission and a parameter file into a
//!   world flown by SimpleFlight;
//! - [`session`] is the run loop every command shares: pacing against the
//!   wall clock, the recording, the run's end and restarts, with whatever
//!   flies the vehicles plugged in as a [`session::Driver`];
//! - [`flight`] watches SimpleFlight's flight of a mission and judges its
//!   end, served to ground stations on a [`flight::VehicleLink`];
//! - [`pacing`] holds the loop to a multiple of real time;
//! - [`launch`] starts a firmware as a child process, watches it and always
//!   stops it.
//!
//! It serves no client itself and names no bridge; naming one from here
//! does not compile (E0433):
//!
//! ```compile_fail,E0433
//! let _ = mavsitl_bridges::px4::Px4Bridge::new;
//! ```

#![warn(missing_docs)]

pub mod flight;
pub mod launch;
pub mod pacing;
pub mod session;
pub mod setup;
