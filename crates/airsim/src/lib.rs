//! AirSim's RPC API: AirSim's own Python client (`airsim` on PyPI) scripts a
//! mavsitl flight as it scripts an AirSim one — the msgpack-rpc protocol on
//! TCP 41451, AirSim's method names, argument order and structs — headless,
//! deterministic and with the clock under the client's control.
//!
//! - [`rpc`]: the msgpack-rpc transport (threads; not on the lockstep path).
//! - [`types`]: AirSim's structs as msgpack maps.
//! - [`api`]: the methods, on SimpleFlight vehicles addressed by name.
//! - [`car`]: AirSim's car controls and state, on an Ackermann rover.
//! - [`settings`]: AirSim's `settings.json` as a scenario.
//! - [`serve`]: the API's world in the run loop, calls answered between
//!   ticks, paused as asked.
//! - [`start`]: `mavsitl airsim` started: settings imported, SimpleFlight
//!   set up as AirSim's, the server bound and served until the end.
//!
//! The binary's `airsim` subcommand opens the server and starts whoever
//! flies. The server flies SimpleFlight vehicles itself (a PX4 plugs in as
//! a [`serve::Watch`] from above); naming a firmware bridge
//! from here does not compile (E0433):
//!
//! ```compile_fail,E0433
//! let _ = mavsitl_bridges::px4::Px4Bridge::new;
//! ```

#![warn(missing_docs)]

pub mod api;
pub mod car;
pub mod rpc;
pub mod serve;
pub mod settings;
pub mod start;
pub mod types;
pub mod vision;

pub use api::AirSimApi;
pub use rpc::{Call, Incoming, Server};
