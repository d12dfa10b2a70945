//! Guidance: a native Rust port of ArduPilot's waypoint navigation.
//!
//! A pure library — it depends on nothing but nalgebra, and is tested without a
//! simulator. Ported from ArduPilot (GPLv3; <https://github.com/ArduPilot/ardupilot>):
//!
//! | module | ports |
//! |---|---|
//! | [`control`] | `libraries/AP_Math/control.cpp` (sqrt controller, shaping, kinematic limit) |
//! | [`scurve`] | `libraries/AP_Math/SCurve.cpp`, `SCurve.h` (straight tracks) |
//!
//! Frames and units: NED metres, m/s, m/s², as ArduPilot's SCurve in metres.

pub mod control;
pub mod scurve;

pub use scurve::SCurve;
