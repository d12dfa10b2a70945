//! mavsitl-core: what every layer of mavsitl shares.
//!
//! Sim time ([`time::SimTime`], integer microseconds), geodesy and the local NED
//! frame ([`geo`]), seeded noise streams ([`rng`]), the ISA atmosphere and its
//! constants ([`atmosphere`]), the World Magnetic Model field ([`magnetic`]),
//! parameter validation ([`param`]), a command's failure as the user reads it
//! ([`failure`]), faults and their effects ([`faults`]), the
//! sensor samples ([`samples`]) and the [`controller::FlightController`] seam
//! with the types that cross it. It depends on no other mavsitl crate.
//!
//! Frames: world local NED around the home point, body FRD. Units: SI, named in
//! identifiers (`_m`, `_m_s`, `_rad_s`, `_pa`).
//!
//! The bottom layer sees nothing above it; naming the simulation from here
//! does not compile (E0433, an undeclared crate):
//!
//! ```compile_fail,E0433
//! let _ = mavsitl_sim::world::World::calm;
//! ```

#![warn(missing_docs)]

pub mod atmosphere;
pub mod controller;
pub mod failure;
pub mod faults;
pub mod geo;
pub mod magnetic;
pub mod param;
pub mod rng;
pub mod samples;
pub mod shared;
pub mod time;
pub mod vehicle;
