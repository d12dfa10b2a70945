//! Frames and geodesy.
//!
//! Owns every conversion between coordinate frames: WGS-84 geodetic ↔ ECEF ↔ local
//! NED around the home point ([`geodetic`]), and the export-only conversions from
//! our NED world / FRD body frames to ENU/FLU (ROS REP-103) and ISO 8855
//! ([`frames`]). Nothing else in the crate converts frames; it calls these.

pub mod frames;
pub mod geodetic;

pub use frames::ExportFrame;
pub use geodetic::{GeoPoint, LocalFrame};
