//! The integration tests of the `mavsitl` program and library, one test
//! binary: each module is the file of the same name beside this one.

/// What several modules share.
mod common {
    pub mod airsim_server;
}

mod airsim;
mod airsim_examples;
mod airsim_soak;
mod ardupilot_bridge;
mod cli;
mod compare;
mod deploy;
mod encounters;
mod fly;
mod fuzz_corpus;
mod gcs_clients;
mod ground_station;
mod hardening;
mod launcher;
mod layers;
mod px4_bridge;
mod quad_flight;
mod replay;
mod suite;
