//! mavsitl-simpleflight: SimpleFlight, the autopilot inside mavsitl.
//!
//! It plugs into the lockstep loop through the
//! [`FlightController`](mavsitl_core::controller::FlightController) seam and sees
//! the vehicle only through its sensors (unless a scenario asks for ground
//! truth); it depends on `mavsitl-core`, `mavsitl-guidance` and
//! `mavsitl-mavlink`, never on the simulation. Parts: what it is told of the
//! vehicle ([`airframe`]), the state [`estimator`], [`multicopter`] control, the
//! mission runner ([`simpleflight`]), its parameters ([`params`]), geofence and
//! failsafes, and the MAVLink ground-station endpoint ([`gcs`]). The `mavsitl`
//! crate's `setup` wires a scenario, a mission and parameters into a run.
//!
//! SimpleFlight meets the simulation only through the seam; naming the simulation from here
//! does not compile (E0433, an undeclared crate):
//!
//! ```compile_fail,E0433
//! let _ = mavsitl_sim::world::World::calm;
//! ```

pub mod airframe;
pub mod chain;
pub mod estimator;
pub mod event_log;
pub mod failsafe;
pub mod gcs;
pub mod geofence;
pub mod mission_plan;
pub mod multicopter;
pub mod params;
pub mod request;
pub mod sensor_watch;
pub mod simpleflight;

pub use airframe::VehicleConfig;
pub use request::{Lift, Request, RequestQueue, YawTarget};
pub use sensor_watch::SensorsAlive;
pub use simpleflight::{
    EventKind, FlightEvent, FlightMode, FlightStatus, SimpleFlight, SimpleFlightConfig,
    StatusHandle,
};
