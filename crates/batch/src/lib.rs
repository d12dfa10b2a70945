//! mavsitl-batch: batches of flights, each run as a child of the `mavsitl`
//! program so that every flight is exactly what its command gives.
//!
//! - [`children`]: children run several at a time, each with its `run.log`,
//!   stopped at a wall-time limit or on a stop flag.
//! - [`runner`]: regression suites ([`mavsitl_suite`]) run as (case, seed)
//!   pairs, each judged on what it recorded.
//! - [`compare`]: one mission flown by several controllers on the same
//!   scenario and seeds, measured by the same code ([`mavsitl_analysis`]).
//!
//! It starts `mavsitl` and reads what the children recorded; it does not
//! simulate in-process (naming the simulator from here does not compile,
//! E0433):
//!
//! ```compile_fail,E0433
//! let _ = mavsitl_sim::sim::Simulation::new;
//! ```

#![warn(missing_docs)]

pub mod children;
pub mod compare;
pub mod runner;
