//! SimpleFlight's MAVLink endpoint: what makes it a vehicle QGroundControl,
//! MAVSDK, MAVProxy and pymavlink fly unchanged.
//!
//! It presents itself as PX4 does (MAV_AUTOPILOT_PX4, component 1, PX4's
//! custom modes and parameter encoding) so every tool shows its modes and
//! offers its actions. Parts:
//!
//! - [`mavsitl_mavlink::wire`] (shared with the firmware bridges): frames in and out of
//!   datagrams, signing, and the messages decoded by hand (commands, SET_MODE,
//!   mission items with values the `mavlink` crate's typed form cannot hold).
//! - [`link`]: the UDP socket: sends to 14550 (QGroundControl) and 14540
//!   (MAVSDK) from the start and to every peer it hears from, all from one
//!   bound port; never blocks.
//! - [`endpoint`]: commands with their ACKs, the mission protocol
//!   ([`mavsitl_mavlink::mission_protocol`], shared with the firmware ground station), the parameter protocol ([`params_protocol`]),
//!   telemetry ([`telemetry`]) and PX4 modes ([`modes`]).
//!
//! Sim time is used for every time field and telemetry rate; protocol
//! retries (mission re-requests, parameter pacing) run on a link clock the
//! caller supplies, because they are about the network.

pub mod endpoint;
pub mod link;
pub mod modes;
pub mod params_protocol;
pub mod telemetry;

pub use endpoint::{event_statustexts, Endpoint, EndpointConfig};
pub use link::{LinkConfig, UdpLink};
