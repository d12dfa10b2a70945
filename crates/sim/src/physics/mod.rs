//! Vehicle physics: the rigid body and the models that push it.
//!
//! `rigid_body` owns state and integration; `multirotor`, `boat` and `rover` turn
//! actuators and environment into a wrench; `contact` adds the ground's reaction.
//! Nothing here reads sensors, the wall clock or the scenario file.

pub mod airframes;
pub mod battery;
pub mod boat;
pub mod contact;
pub mod multirotor;
pub(crate) mod params;
pub mod rigid_body;
pub mod rover;

pub use battery::{Battery, BatteryParams, BatteryState};
pub use boat::{Boat, BoatLayout, BoatOverrides, BoatParams};
pub use contact::{ContactState, GroundContact, GroundUnder};
pub use multirotor::{FrameLayout, Multirotor, MultirotorOverrides, MultirotorParams};
pub use params::ParamError;
pub use rigid_body::{BodyState, Integrator, MassProperties, RigidBody, StepInputs, Wrench};
pub use rover::{Rover, RoverDrive, RoverOverrides, RoverParams};
