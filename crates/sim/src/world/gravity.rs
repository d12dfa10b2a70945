//! Gravity: constant standard gravity, or WGS-84 normal gravity.
//!
//! WGS-84 normal gravity uses Somigliana's closed formula on the ellipsoid and the
//! second-order free-air correction of NIMA TR8350.2 (eq. 4-1 and 4-3):
//! g(φ, h) = γ(φ) [1 − 2/a (1 + f + m − 2 f sin²φ) h + 3 h²/a²].
//! Gravity points down (+z in NED); the deflection of the vertical is neglected.

use serde::{Deserialize, Serialize};

use super::atmosphere::G0_M_S2;

/// How the magnitude of gravity is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GravityModel {
    /// 9.806 65 m/s² everywhere.
    #[default]
    Constant,
    /// WGS-84 normal gravity by latitude and ellipsoidal height.
    Wgs84,
}

const A_M: f64 = 6_378_137.0;
const F: f64 = 1.0 / 298.257_223_563;
const M_RATIO: f64 = 0.003_449_786_506_84;
const GAMMA_E: f64 = 9.780_325_335_9;
const K_SOMIGLIANA: f64 = 0.001_931_852_652_41;
const E2: f64 = 0.006_694_379_990_14;

impl GravityModel {
    /// Magnitude of gravity, m/s², at geodetic latitude `lat_rad` and height `alt_m`.
    pub fn magnitude_m_s2(self, lat_rad: f64, alt_m: f64) -> f64 {
        match self {
            GravityModel::Constant => G0_M_S2,
            GravityModel::Wgs84 => {
                let s2 = lat_rad.sin().powi(2);
                let gamma = GAMMA_E * (1.0 + K_SOMIGLIANA * s2) / (1.0 - E2 * s2).sqrt();
                gamma
                    * (1.0 - 2.0 / A_M * (1.0 + F + M_RATIO - 2.0 * F * s2) * alt_m
                        + 3.0 * alt_m * alt_m / (A_M * A_M))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wgs84_normal_gravity_reference_values() {
        // TR8350.2 table values: equator 9.780 325 3359, pole 9.832 184 9379.
        let g = GravityModel::Wgs84;
        assert!((g.magnitude_m_s2(0.0, 0.0) - 9.780_325_335_9).abs() < 1e-9);
        assert!(
            (g.magnitude_m_s2(std::f64::consts::FRAC_PI_2, 0.0) - 9.832_184_937_9).abs() < 1e-8
        );
        // Free-air gradient ≈ −3.086e-6 s⁻² near 45°.
        let lat = 45f64.to_radians();
        let grad = (g.magnitude_m_s2(lat, 100.0) - g.magnitude_m_s2(lat, 0.0)) / 100.0;
        assert!((grad + 3.086e-6).abs() < 0.01e-6, "{grad}");
        assert_eq!(GravityModel::Constant.magnitude_m_s2(1.0, 1000.0), 9.806_65);
    }

    /// TR8350.2 eq. 4-3's height terms, by differences: the first,
    /// −2γ/a·(1 + f + m − 2f·sin²φ)·h, differs between the equator and the
    /// pole; the second, 3γh²/a², is the same above and below.
    #[test]
    fn the_height_terms_of_normal_gravity() {
        let g = GravityModel::Wgs84;
        let (a, f, m) = (6_378_137.0, 1.0 / 298.257_223_563, 0.003_449_786_506_84);
        let h = 10_000.0;
        for (lat, s2) in [
            (0.0, 0.0),
            (std::f64::consts::FRAC_PI_2, 1.0),
            (0.6, 0.6f64.sin().powi(2)),
        ] {
            let gamma = g.magnitude_m_s2(lat, 0.0);
            let (up, down) = (g.magnitude_m_s2(lat, h), g.magnitude_m_s2(lat, -h));
            let gradient = (up - down) / (2.0 * h);
            let want = -2.0 * gamma / a * (1.0 + f + m - 2.0 * f * s2);
            assert!(
                (gradient - want).abs() < 1e-13,
                "{lat}: {gradient} against {want}"
            );
            let curvature = up + down - 2.0 * gamma;
            let want = 2.0 * 3.0 * gamma * h * h / (a * a);
            assert!(
                (curvature - want).abs() < 1e-11,
                "{lat}: {curvature} against {want}"
            );
        }
    }
}
