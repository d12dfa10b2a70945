//! mavsitl-bridges: firmware in the loop. Bridges that let real autopilot
//! firmware fly the simulated vehicle through the
//! [`mavsitl_core::controller::FlightController`] seam; they see only the
//! seam's types and MAVLink (`mavsitl-core`, `mavsitl-mavlink`).
//!
//! | module | what |
//! |---|---|
//! | [`px4`] | PX4's simulator interface: HIL_SENSOR / HIL_GPS out, HIL_ACTUATOR_CONTROLS in, lockstep on PX4's clock (TCP 4560 + N, or UDP) |
//! | [`ardupilot`] | ArduPilot's JSON physics backend: servo packets in, JSON state out, lockstep on its frames (UDP 9002 + 10 N) |
//! | [`ground_station`] | the ground station that flies a plan through real firmware: the [`ground_station::dialect`] of PX4 or ArduPilot, its socket [`ground_station::link`] |
//! | [`param_file`] | firmware parameter files (`NAME VALUE`, `NAME,VALUE`, QGroundControl `.params`) |
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
