//! The integration tests of `mavsitl-run`, one test binary: each module is
//! the file of the same name beside this one.

mod bad_input;
mod estimator;
mod failsafes;
mod gcs_endpoint;
mod multicopter_control;
mod no_alloc;
mod rover_twin;
mod soak;
mod threads;
mod watch;
