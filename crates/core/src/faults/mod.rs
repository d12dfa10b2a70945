//! Fault injection: scheduled changes to the sensor, actuator, power, weather
//! and link models of a vehicle.
//!
//! A fault acts on the simulated world, never on a controller's internals, so
//! SimpleFlight, PX4 and ArduPilot all meet the same fault. [`FaultSpec`] is a
//! fault as a scenario (`"faults": [...]`) or the command line
//! (`--fault KIND@START[+DURATION][:key=value,...]`) gives it;
//! [`FaultSchedule`] starts and ends the faults on sim time, mission progress or
//! zone entry and reports each transition as a [`FaultEvent`]; [`FaultEffects`]
//! is what the active faults do to one vehicle during one tick, read by the
//! sensor, physics and link models.
//!
//! Depends only on `time` (and nalgebra): the models that read the effects sit
//! above it.

pub mod effects;
pub mod schedule;
pub mod spec;

pub use effects::{BatteryFault, FaultEffects, GpsFault, ImuFault, LinkFaults, MAX_FAULT_CHANNELS};
pub use schedule::{FaultEvent, FaultSchedule, FaultTransition};
pub use spec::{parse_fault_arg, FaultKind, FaultSpec, FaultSpecError};
