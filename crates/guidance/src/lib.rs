//! Guidance: a native Rust port of ArduPilot's waypoint navigation.
//!
//! A pure library — it depends on nothing but nalgebra, and is tested without a
//! simulator. Ported from ArduPilot (GPLv3; <https://github.com/ArduPilot/ardupilot>):
//!
//! | module | ports |
//! |---|---|
//! | [`control`] | `libraries/AP_Math/control.cpp` (the square-root controller and the horizontal shapers) |
//! | [`ap_float`] | `libraries/AP_Math/AP_Math.h`, `vector3.cpp`, `control.cpp` (float helpers as SITL computes them) |
//! | [`scurve`] | `libraries/AP_Math/SCurve.cpp`, `SCurve.h` (straight tracks, ArduPilot-exact) |
//! | [`pid`] | `libraries/AC_PID/AC_PID.cpp`, `AC_PID_2D.cpp`, `AC_P_2D.cpp` |
//! | [`slew_limiter`] | `libraries/Filter/SlewLimiter.cpp` (AC_PID's SMAX) |
//! | [`attitude_control`] | `libraries/APM_Control/AR_AttitudeControl.cpp` |
//! | [`pos_control`] | `libraries/APM_Control/AR_PosControl.cpp` |
//! | [`wpnav`] | `libraries/AR_WPNav/AR_WPNav.cpp`, `AR_PivotTurn.cpp` |
//! | [`driver`] | `Rover/mode.cpp`, `mode_guided.cpp`, `mode_loiter.cpp` (WP, loiter, stop) |
//!
//! Frames and units: NED (or NE) metres, m/s, m/s²; headings and bearings in
//! radians from north, clockwise positive; times in seconds of the caller's
//! clock. Parameters keep ArduPilot's names and defaults (`WP_*`, `PSC_*`,
//! `ATC_*`, `CRUISE_*`, `LOIT_*`), so values from a Rover parameter file carry
//! over.
//!
//! The guidance port stands alone (nalgebra only); naming even the bottom layer from here
//! does not compile (E0433, an undeclared crate):
//!
//! ```compile_fail,E0433
//! let _ = mavsitl_core::time::SimTime::ZERO;
//! ```

pub mod ap_float;
pub mod attitude_control;
pub mod control;
pub mod driver;
pub mod motors;
pub mod params;
pub mod pid;
pub mod pos_control;
pub mod scurve;
pub mod slew_limiter;
pub mod wpnav;

pub use attitude_control::{ArAttitudeControl, AttitudeParams};
pub use driver::{DriverMode, DriverOutput, RoverDriver, RoverParams};
pub use motors::{ArMotorsUgv, MotorLimits, MotorOutputs, MotorsParams};
pub use params::GuidanceParams;
pub use pos_control::{ArPosControl, NavState, PosControlParams};
pub use scurve::SCurve;
pub use wpnav::{ArWpNav, WpNavParams};
