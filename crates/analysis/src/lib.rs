//! Flight analysis: what a recording says about a flight, measured the same
//! way whichever controller flew it, so that SimpleFlight, PX4 and ArduPilot
//! — or two tunings of one — compare on ground truth.
//!
//! - [`route`]: the mission's planned route in the simulation's NED frame;
//! - [`track`]: a recording read back (ground truth, battery energy);
//! - [`encounters`]: a fleet's `encounters.csv` read back;
//! - [`metrics`]: the measures, per flight and as distributions over seeds;
//! - [`flight`]: a flight's summary figures, taken tick by tick as it flies;
//! - [`manoeuvre`]: the standard manoeuvring tests of a boat airframe;
//! - [`plot`]: the pictures;
//! - [`report`]: what `compare` and `plot` write (table, CSV, JSON,
//!   pictures, one HTML page).
//!
//! It reads recordings and the plan; it knows no autopilot and no bridge
//! (naming SimpleFlight from here does not compile, E0433):
//!
//! ```compile_fail,E0433
//! let _ = mavsitl_simpleflight::SimpleFlight::new;
//! ```

#![warn(missing_docs)]

pub mod encounters;
pub mod flight;
pub mod manoeuvre;
pub mod metrics;
pub mod plot;
pub mod report;
pub mod route;
pub mod track;

pub use metrics::{distribution, CrossTrack, MissionMetrics, Scalar};
pub use route::Route;
pub use track::{Track, TrackError};
