//! WGS-84 geodetic ↔ ECEF ↔ local NED.
//!
//! The ellipsoid maths is the `map_3d` crate's (WGS-84, closed-form ECEF →
//! geodetic after Zhu/Bowring with one refinement step); this module wraps it in
//! typed points and a [`LocalFrame`] fixed at the scenario's home. Angles are
//! radians inside, degrees only in constructors and accessors named `_deg`.
//! Altitudes are metres above the WGS-84 ellipsoid, and mavsitl takes them as
//! metres above mean sea level too (see [`crate::geo`]).

use map_3d::Ellipsoid;
use nalgebra::Vector3;
use serde::{Deserialize, Serialize};

/// A point on or near the Earth: WGS-84 latitude and longitude (rad), and
/// height above the ellipsoid (m).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GeoPoint {
    /// Geodetic latitude, rad, positive north.
    pub lat_rad: f64,
    /// Longitude, rad, positive east.
    pub lon_rad: f64,
    /// Height above the WGS-84 ellipsoid, m.
    pub alt_m: f64,
}

impl GeoPoint {
    /// A point from degrees and metres.
    pub fn from_deg(lat_deg: f64, lon_deg: f64, alt_m: f64) -> Self {
        GeoPoint {
            lat_rad: lat_deg.to_radians(),
            lon_rad: lon_deg.to_radians(),
            alt_m,
        }
    }

    /// Latitude in degrees.
    pub fn lat_deg(&self) -> f64 {
        self.lat_rad.to_degrees()
    }

    /// Longitude in degrees.
    pub fn lon_deg(&self) -> f64 {
        self.lon_rad.to_degrees()
    }

    /// Earth-centred, Earth-fixed position, m.
    pub fn to_ecef(&self) -> Vector3<f64> {
        let (x, y, z) =
            map_3d::geodetic2ecef(self.lat_rad, self.lon_rad, self.alt_m, Ellipsoid::WGS84);
        Vector3::new(x, y, z)
    }

    /// The geodetic point of an ECEF position (m).
    pub fn from_ecef(ecef_m: &Vector3<f64>) -> Self {
        let (lat, lon, alt) = map_3d::ecef2geodetic(ecef_m.x, ecef_m.y, ecef_m.z, Ellipsoid::WGS84);
        GeoPoint {
            lat_rad: lat,
            lon_rad: lon,
            alt_m: alt,
        }
    }
}

/// A local tangent-plane frame (north, east, down) fixed at an origin.
///
/// The simulation's world frame: x north, y east, z down, metres from the home
/// point. Conversions go through ECEF, so they are exact on the ellipsoid, not a
/// flat-Earth approximation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LocalFrame {
    origin: GeoPoint,
    origin_ecef_m: Vector3<f64>,
    /// Rows: north, east, down unit vectors expressed in ECEF.
    r_ned_from_ecef: nalgebra::Matrix3<f64>,
}

impl LocalFrame {
    /// A frame at `origin`.
    pub fn new(origin: GeoPoint) -> Self {
        let (sl, cl) = origin.lat_rad.sin_cos();
        let (so, co) = origin.lon_rad.sin_cos();
        #[rustfmt::skip]
        let r = nalgebra::Matrix3::new(
            -sl * co, -sl * so,  cl,
            -so,       co,       0.0,
            -cl * co, -cl * so, -sl,
        );
        LocalFrame {
            origin,
            origin_ecef_m: origin.to_ecef(),
            r_ned_from_ecef: r,
        }
    }

    /// The origin (home).
    pub fn origin(&self) -> GeoPoint {
        self.origin
    }

    /// NED position (m) of a geodetic point.
    pub fn to_ned(&self, p: &GeoPoint) -> Vector3<f64> {
        self.r_ned_from_ecef * (p.to_ecef() - self.origin_ecef_m)
    }

    /// Geodetic point of an NED position (m).
    pub fn to_geodetic(&self, ned_m: &Vector3<f64>) -> GeoPoint {
        let ecef = self.origin_ecef_m + self.r_ned_from_ecef.transpose() * ned_m;
        GeoPoint::from_ecef(&ecef)
    }

    /// Rotates a vector from NED to ECEF axes (no translation).
    pub fn ned_vector_to_ecef(&self, v_ned: &Vector3<f64>) -> Vector3<f64> {
        self.r_ned_from_ecef.transpose() * v_ned
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: f64 = 6_378_137.0;
    const B: f64 = 6_356_752.314_245;

    #[test]
    fn known_ecef_points() {
        let p = GeoPoint::from_deg(0.0, 0.0, 0.0).to_ecef();
        assert!((p - Vector3::new(A, 0.0, 0.0)).norm() < 1e-6);
        let p = GeoPoint::from_deg(0.0, 90.0, 100.0).to_ecef();
        assert!((p - Vector3::new(0.0, A + 100.0, 0.0)).norm() < 1e-6);
        let p = GeoPoint::from_deg(90.0, 0.0, 0.0).to_ecef();
        assert!((p - Vector3::new(0.0, 0.0, B)).norm() < 1e-6);
        // Zurich (PX4's default home), checked against the closed form
        // N = a / sqrt(1 - e² sin²φ), x = (N + h) cosφ cosλ, z = (N(1-e²) + h) sinφ.
        let (lat, lon, h) = (47.397742_f64.to_radians(), 8.545594_f64.to_radians(), 488.0);
        let e2 = 1.0 - (B * B) / (A * A);
        let n = A / (1.0 - e2 * lat.sin().powi(2)).sqrt();
        let expect = Vector3::new(
            (n + h) * lat.cos() * lon.cos(),
            (n + h) * lat.cos() * lon.sin(),
            (n * (1.0 - e2) + h) * lat.sin(),
        );
        let got = GeoPoint::from_deg(47.397742, 8.545594, 488.0).to_ecef();
        assert!((got - expect).norm() < 1e-6, "{got} vs {expect}");
    }

    #[test]
    fn ecef_round_trip_to_mm_worldwide() {
        for lat in (-89..=89).step_by(7) {
            for lon in (-180..180).step_by(23) {
                for alt in [-400.0, 0.0, 488.0, 9000.0] {
                    let p = GeoPoint::from_deg(lat as f64 + 0.123, lon as f64 + 0.456, alt);
                    let q = GeoPoint::from_ecef(&p.to_ecef());
                    let d = (q.to_ecef() - p.to_ecef()).norm();
                    assert!(d < 1e-3, "round trip off by {d} m at {p:?}");
                    assert!((q.alt_m - alt).abs() < 1e-3);
                }
            }
        }
    }

    #[test]
    fn local_ned_axes_and_round_trip() {
        let home = GeoPoint::from_deg(47.397742, 8.545594, 488.0);
        let f = LocalFrame::new(home);
        assert!(f.to_ned(&home).norm() < 1e-6);
        // Going up 100 m is -100 m down.
        let up = GeoPoint {
            alt_m: 588.0,
            ..home
        };
        assert!((f.to_ned(&up) - Vector3::new(0.0, 0.0, -100.0)).norm() < 1e-6);
        // A small step north in latitude is positive north, by the meridian radius.
        let e2: f64 = 1.0 - (B * B) / (A * A);
        let m_radius = A * (1.0 - e2) / (1.0 - e2 * home.lat_rad.sin().powi(2)).powf(1.5);
        let dlat = 1e-5_f64;
        let north = GeoPoint {
            lat_rad: home.lat_rad + dlat,
            ..home
        };
        let n = f.to_ned(&north);
        assert!((n.x - (m_radius + 488.0) * dlat).abs() < 1e-3, "{n}");
        assert!(n.y.abs() < 1e-6);
        // East is positive east.
        let east = GeoPoint {
            lon_rad: home.lon_rad + 1e-5,
            ..home
        };
        assert!(f.to_ned(&east).y > 0.7);
        // Round trips to mm out to 50 km.
        for ned in [
            Vector3::new(10.0, -20.0, 3.0),
            Vector3::new(50_000.0, 0.0, 0.0),
            Vector3::new(-12_345.6, 34_567.8, -2_000.0),
        ] {
            let back = f.to_ned(&f.to_geodetic(&ned));
            assert!((back - ned).norm() < 1e-3, "{ned} -> {back}");
        }
    }
}
