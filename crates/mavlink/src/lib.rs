//! mavsitl-mavlink: MAVLink as mavsitl speaks it, on both sides of a link.
//!
//! The wire layer over the `mavlink` crate ([`wire`]), missions and their file
//! formats ([`mission`]), the mission protocol for vehicle and ground station
//! ([`mission_protocol`]), telemetry logs ([`tlog`]), other vehicles as
//! ADSB_VEHICLE ([`traffic`]) and the sockets a link runs over
//! ([`transport`]). Depends on
//! `mavsitl-core` only.
//!
//! The MAVLink layer sees only `mavsitl-core`; naming the simulation from here
//! does not compile (E0433, an undeclared crate):
//!
//! ```compile_fail,E0433
//! let _ = mavsitl_sim::world::World::calm;
//! ```

#![warn(missing_docs)]

pub mod mission;
pub mod mission_protocol;
pub mod tlog;
pub mod traffic;
pub mod transport;
pub mod wire;
