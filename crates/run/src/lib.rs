//! mavsitl-run: the application layer between the product crates and the
//! command line.
//!
//! - [`inputs`] loads and checks what a flight is made of (mission,
//!   scenario, [`home`], seed, faults, parameters);
//! - [`setup`] turns a scenario, a mission and a parameter file into a
//!   world flown by SimpleFlight;
//! - [`session`] is the run loop every command shares: pacing against the
//!   wall clock, the recording, the run's end and restarts, with whatever
//!   flies the vehicles plugged in as a [`session::Driver`];
//! - [`endpoint`] serves SimpleFlight to ground stations on a UDP socket,
//!   and [`serve`] is the run loop's driver for N served vehicles (reboots,
//!   ADS-B [`traffic`], collisions told);
//! - [`flight`] watches SimpleFlight's flight of a mission and judges its
//!   end, served to ground stations on a [`flight::VehicleLink`]; [`fleet`]
//!   does the same for each SimpleFlight vehicle of a fleet, and [`fly`]
//!   is `mavsitl fly`'s one-vehicle flight from start to judged end;
//! - [`open_loop`] runs a scenario on its own commands (`mavsitl sim`);
//! - [`pacing`] holds the loop to a multiple of real time;
//! - [`recording`] opens a run's recording and keeps its mission beside it;
//! - [`launch`] starts a firmware as a child process, watches it and always
//!   stops it.
//!
//! It names no bridge: real firmware is `mavsitl-firmware`'s, above it.
//! Naming a bridge from here does not compile (E0433):
//!
//! ```compile_fail,E0433
//! let _ = mavsitl_bridges::px4::Px4Bridge::new;
//! ```

#![warn(missing_docs)]

/// Why a run could not start (a firmware that cannot be launched, a port
/// that cannot be bound, a file that cannot be written): one line naming
/// the file, port or program, and what to try.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct StartError {
    /// The one-line message, naming the file or program.
    pub message: String,
    /// What to try.
    pub hint: String,
}

impl StartError {
    /// `message`, with `hint` as what to try.
    pub fn new(message: impl Into<String>, hint: impl Into<String>) -> Self {
        StartError {
            message: message.into(),
            hint: hint.into(),
        }
    }
}

impl From<StartError> for mavsitl_core::failure::Failure {
    fn from(e: StartError) -> Self {
        mavsitl_core::failure::Failure::input(e.message, e.hint)
    }
}

pub mod endpoint;
pub mod fleet;
pub mod flight;
pub mod fly;
pub mod home;
pub mod inputs;
pub mod launch;
pub mod open_loop;
pub mod pacing;
pub mod recording;
pub mod serve;
pub mod session;
pub mod setup;
pub mod summary;
pub mod traffic;
