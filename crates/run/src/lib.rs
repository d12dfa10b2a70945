//! mavsitl-run: the application layer between the product crates and the
//! command line. [`setup`] is the one place that turns a scenario, a
//! mission and a parameter file into a world flown by SimpleFlight; the
//! commands and the AirSim server build their runs on it.
//!
//! It wires layers together but serves no client and reads no wall clock;
//! naming a bridge from here does not compile (E0433):
//!
//! ```compile_fail,E0433
//! let _ = mavsitl_bridges::px4::Px4Bridge::new;
//! ```

#![warn(missing_docs)]

pub mod setup;
