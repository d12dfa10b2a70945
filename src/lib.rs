//! mavsitl — a software-in-the-loop harness for autopilots that speak MAVLink.
//!
//! One process simulates vehicles (multirotor or boat rigid-body physics) in
//! lockstep with whatever flies them, through the [`controller::FlightController`]
//! seam. The simulation never reads the wall clock: time is [`time::SimTime`], an
//! integer count of microseconds advanced only by the loop in [`sim`].
//!
//! Frames: world local NED around the scenario's home, body FRD. Units: SI, named
//! in identifiers (`_m`, `_m_s`, `_rad_s`, `_n`, `_pa`).
//!
//! The layers are crates, so the compiler keeps dependencies pointing down:
//!
//! | crate | modules (re-exported here under the same names) | depends on |
//! |---|---|---|
//! | `mavsitl-core` | [`time`], [`geo`], [`rng`], [`atmosphere`], [`failure`], [`magnetic`], [`param`], [`faults`], [`samples`], [`controller`] | — |
//! | `mavsitl-guidance` | [`guidance`] (the ArduPilot port) | — |
//! | `mavsitl-mavlink` | [`wire`], [`mission`], [`mission_protocol`], [`tlog`], [`adsb`] (its `traffic`: ADSB_VEHICLE) | core |
//! | `mavsitl-sim` | [`world`], [`physics`], [`sensors`], [`vehicle`], [`replay`], [`sim`], [`encounter`], [`scenario`], [`record`] | core |
//! | `mavsitl-simpleflight` | [`autopilot`] (SimpleFlight and its GCS endpoint) | core, guidance, mavlink |
//! | `mavsitl-bridges` | [`bridge`] (PX4, ArduPilot, the firmware ground station) | core, mavlink |
//! | `mavsitl-analysis` | [`analysis`] (routes, tracks, metrics, manoeuvres, pictures), [`metrics`] (a flight's summary figures) | core, mavlink, sim |
//! | `mavsitl-suite` | [`suite`] (regression suites: cases expanded, sharded and checked) | core, mavlink, simpleflight, analysis |
//! | `mavsitl-run` | [`setup`] (a scenario wired to SimpleFlight), [`session`] (the run loop), [`summary`] (a run's summary rows), [`recording`] (a run set up and recorded), [`flight`] (SimpleFlight's flight watched), [`fly`] (`fly`'s flight), [`fleet`] (a fleet's SimpleFlight vehicles), [`open_loop`] (`sim`, `replay`), [`endpoint`] and [`serve`] (SimpleFlight served to ground stations), [`traffic`] (the other vehicles as ADS-B), [`inputs`] and [`home`] (a flight's files loaded and checked), [`pacing`], [`launch`] (firmware as a child process) | core, mavlink, sim, simpleflight, analysis |
//! | `mavsitl-firmware` | [`firmware`] (real firmware flown through a plan by the built-in ground station) | core, mavlink, sim, bridges, analysis, run |
//! | `mavsitl-batch` | [`batch`] (flights run as child processes: suites and comparisons) | core, mavlink, analysis, suite, firmware |
//! | `mavsitl-airsim` | [`airsim`] (AirSim's msgpack-rpc API) | core, mavlink, sim, simpleflight, run |
//! | `mavsitl` (this crate) | the `mavsitl` binary's CLI | all of them |
//!
//! SimpleFlight and the bridges meet the simulation only through
//! [`controller::FlightController`] and the samples in `mavsitl-core`; only this
//! crate wires them to a world. Nothing below the CLI prints to stdout.

#![warn(missing_docs)]

pub use mavsitl_airsim as airsim;
pub use mavsitl_analysis as analysis;
pub use mavsitl_analysis::flight as metrics;
pub use mavsitl_batch as batch;
pub use mavsitl_bridges as bridge;
/// The kinds of vehicle, the built-in ones, and their firmware frames.
pub use mavsitl_core::vehicle as vehicle_kind;
pub use mavsitl_core::{
    atmosphere, controller, failure, faults, geo, magnetic, param, rng, samples, shared, time,
};
pub use mavsitl_firmware as firmware;
pub use mavsitl_guidance as guidance;
pub use mavsitl_mavlink::traffic as adsb;
pub use mavsitl_mavlink::{mission, mission_protocol, tlog, wire};
pub use mavsitl_render as render;
pub use mavsitl_run::{
    endpoint, fleet, flight, fly, home, inputs, launch, open_loop, pacing, recording, serve,
    session, setup, summary, traffic, StartError,
};
pub use mavsitl_sim::{encounter, physics, record, replay, scenario, sensors, sim, vehicle, world};
pub use mavsitl_simpleflight as autopilot;
pub use mavsitl_suite as suite;
