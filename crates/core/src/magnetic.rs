//! The Earth's magnetic field from the World Magnetic Model: what the
//! simulated magnetometer measures and what an autopilot expects to measure.

use nalgebra::Vector3;
use world_magnetic_model::time::Date;
use world_magnetic_model::uom::si::angle::degree;
use world_magnetic_model::uom::si::f32::{Angle, Length};
use world_magnetic_model::uom::si::length::meter;
use world_magnetic_model::uom::si::magnetic_flux_density::nanotesla;
use world_magnetic_model::GeomagneticField;

use crate::geo::GeoPoint;

/// Why the field model could not be evaluated.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("world magnetic model: {0}")]
pub struct FieldError(pub String);

/// The WMM field (NED, gauss) at a point and date.
///
/// # Errors
/// [`FieldError`] outside the model's validity (dates 2020–2030, heights −1 to
/// 850 km).
pub fn earth_field_ned_gauss(p: &GeoPoint, date: Date) -> Result<Vector3<f64>, FieldError> {
    let lon = ((p.lon_deg() + 180.0).rem_euclid(360.0)) - 180.0;
    let f = GeomagneticField::new(
        Length::new::<meter>(p.alt_m as f32),
        Angle::new::<degree>(p.lat_deg().clamp(-90.0, 90.0) as f32),
        Angle::new::<degree>(lon as f32),
        date,
    )
    .map_err(|e| FieldError(format!("{e}; asked for {date} at {:.0} m", p.alt_m)))?;
    let g = |b: world_magnetic_model::uom::si::f32::MagneticFluxDensity| {
        f64::from(b.get::<nanotesla>()) * 1e-5
    };
    Ok(Vector3::new(g(f.x()), g(f.y()), g(f.z())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use world_magnetic_model::time::Month;

    #[test]
    fn matches_wmm2025_report_values() {
        // WMM2025 technical report, Table 3b: 2027.5, 100 km, 80° S, 240° E.
        let date = Date::from_calendar_date(2027, Month::July, 2).unwrap();
        let b = earth_field_ned_gauss(&GeoPoint::from_deg(-80.0, 240.0, 100_000.0), date).unwrap()
            * 1e5;
        for (got, want) in [(b.x, 5_983.976), (b.y, 14_760.136), (b.z, -49_317.671)] {
            assert!((got / want - 1.0).abs() < 0.01, "{got} nT vs {want} nT");
        }
        assert!((b.norm() / 51_825.691 - 1.0).abs() < 0.001);
        // Table 6 declinations (2025.0, sea level), to 0.05°.
        let date = Date::from_calendar_date(2025, Month::January, 1).unwrap();
        for (lat, lon, d_deg) in [
            (80.0, 0.0, 1.28),
            (0.0, 120.0, -0.16),
            (-80.0, 240.0, 68.78),
        ] {
            let b = earth_field_ned_gauss(&GeoPoint::from_deg(lat, lon, 0.0), date).unwrap();
            let d = b.y.atan2(b.x).to_degrees();
            assert!(
                (d - d_deg).abs() < 0.05,
                "D at ({lat},{lon}) {d} vs {d_deg}"
            );
        }
    }
}
