//! mavsitl-sim: the simulated world and the one lockstep loop.
//!
//! The environment ([`world`]), vehicle physics ([`physics`]), noisy sensors
//! ([`sensors`]), vehicles ([`vehicle`]), recorded-trajectory playback
//! ([`replay`]), the loop ([`sim`]), encounters between vehicles
//! ([`encounter`]), scenarios ([`scenario`]) and recordings ([`record`]).
//! Whatever flies a vehicle plugs in through
//! [`mavsitl_core::controller::FlightController`]; this crate knows no
//! autopilot, bridge or MAVLink. It never reads the wall clock.
//!
//! Dependencies inside point down: `scenario` and `record` → `sim` → `vehicle`
//! → `sensors` → `physics` → `world`.
//!
//! The simulation knows no autopilot; naming SimpleFlight from here
//! does not compile (E0433, an undeclared crate):
//!
//! ```compile_fail,E0433
//! let _ = mavsitl_simpleflight::SimpleFlight::new;
//! ```

#![warn(missing_docs)]

pub mod encounter;
pub mod physics;
pub mod record;
pub mod replay;
pub mod scenario;
pub mod sensors;
pub mod sim;
mod team;
pub mod vehicle;
pub mod world;
