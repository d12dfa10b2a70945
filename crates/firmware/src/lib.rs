//! mavsitl-firmware: real firmware in the loop. A PX4 or ArduPilot,
//! launched by mavsitl ([`mavsitl_run::launch`]) or started by hand, flies
//! through its bridge while mavsitl, as its ground station, uploads a plan,
//! arms, starts the mission and follows it to the end; the flight is judged
//! on the world's ground truth with the same figures as SimpleFlight's
//! ([`flight`]); N of them fly one world as a [`crew::Crew`], the run
//! loop's driver, each sent the others as ADS-B traffic
//! ([`mavsitl_run::traffic`]).
//!
//! It sits above the bridges and the run loop and below the command line:
//! it prints nothing to stdout (the caller prints the [`flight::FlightReport`]).
//! It flies real firmware only; naming SimpleFlight from here does not
//! compile (E0433):
//!
//! ```compile_fail,E0433
//! let _ = mavsitl_simpleflight::params::name::WPNAV_SPEED;
//! ```

#![warn(missing_docs)]

pub mod ardupilot;
pub mod crew;
pub mod flight;
pub mod launcher;
pub mod mixed;
pub mod px4;
