//! Frames and geodesy.
//!
//! Owns every conversion between coordinate frames: WGS-84 geodetic ↔ ECEF ↔ local
//! NED around the home point ([`geodetic`]), and the export-only conversions from
//! our NED world / FRD body frames to ENU/FLU (ROS REP-103) and ISO 8855
//! ([`frames`]). Nothing else in the crate converts frames; it calls these.
//!
//! **Heights.** mavsitl has one height: metres above the WGS-84 ellipsoid,
//! which it also takes as metres above mean sea level — the geoid separation
//! (−106 m to +85 m worldwide, about +48 m at PX4's Zurich home) is neglected
//! everywhere. So a scenario's `home.alt_m`, a plan's AMSL altitudes, the
//! atmosphere's altitude, and the MAVLink fields named MSL (GPS_RAW_INT.alt,
//! GLOBAL_POSITION_INT.alt, HIL_GPS.alt) and ellipsoid
//! (GPS_RAW_INT.alt_ellipsoid) all carry the same number. Within one
//! simulation this is consistent: firmware and ground station see the home
//! altitude they were given. A map that compares with real terrain heights
//! would show the local separation as an offset.

pub mod frames;
pub mod geodetic;

pub use frames::ExportFrame;
pub use geodetic::{GeoPoint, LocalFrame};

/// Lowest home altitude a vehicle may start from, m AMSL (the Dead Sea shore
/// is at −430 m).
pub const HOME_ALT_MIN_M: f64 = -500.0;
/// Highest home altitude a vehicle may start from, m AMSL (above every
/// mountain; the atmosphere, the rotors and the sensors are modelled well
/// beyond it). One range for a scenario's home, `--home` and a plan's or
/// WPL file's planned home.
pub const HOME_ALT_MAX_M: f64 = 9_000.0;

/// Why `alt_m` is not a home altitude (None when it is).
pub fn home_alt_problem(alt_m: f64) -> Option<String> {
    if alt_m.is_finite() && (HOME_ALT_MIN_M..=HOME_ALT_MAX_M).contains(&alt_m) {
        None
    } else {
        Some(format!(
            "home altitude {} m is outside {HOME_ALT_MIN_M}..={HOME_ALT_MAX_M} m",
            crate::time::show(alt_m)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_home_altitude_is_between_the_dead_sea_and_above_the_mountains() {
        for ok in [HOME_ALT_MIN_M, -430.0, 0.0, 488.0, HOME_ALT_MAX_M] {
            assert_eq!(home_alt_problem(ok), None, "{ok}");
        }
        assert_eq!(
            home_alt_problem(-501.0).as_deref(),
            Some("home altitude -501 m is outside -500..=9000 m")
        );
        assert!(home_alt_problem(9001.0).is_some());
        assert!(home_alt_problem(f64::NAN).is_some());
        assert!(home_alt_problem(f64::INFINITY).is_some());
    }
}
