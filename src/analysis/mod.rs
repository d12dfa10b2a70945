//! Flight analysis: what a recording says about a flight, measured the same
//! way whichever controller flew it, so that SimpleFlight, PX4 and ArduPilot
//! — or two tunings of one — compare on ground truth.
//!
//! - [`route`]: the mission's planned route in the simulation's NED frame;
//! - [`track`]: a recording read back (ground truth, battery energy);
//! - [`encounters`]: a fleet's `encounters.csv` read back;
//! - [`metrics`]: the measures, per flight and as distributions over seeds.

pub mod encounters;
pub mod manoeuvre;
pub mod metrics;
pub mod plot;
pub mod route;
pub mod track;

pub use metrics::{distribution, CrossTrack, MissionMetrics, Scalar};
pub use route::Route;
pub use track::{Track, TrackError};
