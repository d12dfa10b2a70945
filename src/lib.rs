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
//! Dependencies point down: `cli` → `scenario` → `sim` → `vehicle` → `physics` →
//! `world` → `geo` / `time`; the sensor and physics models read
//! [`faults::FaultEffects`], and `faults` depends only on `time`. [`airsim`] (AirSim's
//! API) sits just under `cli`: it drives a SimpleFlight flight (`autopilot`) and the
//! loop (`sim`). Nothing below `cli` prints to stdout.

#![warn(missing_docs)]

pub mod airsim;
pub mod analysis;
pub mod autopilot;
pub mod bridge;
pub mod controller;
pub mod encounter;
pub mod faults;
pub mod geo;
pub mod guidance;
pub mod metrics;
pub mod mission;
pub mod mission_protocol;
pub mod physics;
pub mod record;
pub mod replay;
pub mod rng;
pub mod scenario;
pub mod sensors;
pub mod sim;
pub mod suite;
pub mod time;
pub mod vehicle;
pub mod wire;
pub mod world;
