//! Magnetometer: the World Magnetic Model field at the vehicle, in body axes,
//! with white noise, scale factor and hard-iron bias, in gauss.
//!
//! The Earth field comes from the `world_magnetic_model` crate (NOAA WMM2025 and
//! WMM2020 coefficients, chosen by date), evaluated at the vehicle's WGS-84
//! position on the scenario's date, and re-evaluated whenever the vehicle has
//! moved more than 500 m from the last evaluation (the field changes by about
//! 1e-5 relative over that distance). Reading = scale·R_SB·R_BNᵀ·B_NED + bias +
//! σ·w. 1 gauss = 1e-4 T = 1e5 nT.

use nalgebra::{UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};
use world_magnetic_model::time::Date;

use super::mount::Mount;
use super::noise::noisy;
use mavsitl_core::geo::LocalFrame;
pub use mavsitl_core::magnetic::{earth_field_ned_gauss, FieldError};
use mavsitl_core::param::ParamError;
use mavsitl_core::rng::NoiseRng;
pub use mavsitl_core::samples::MagSample;
use mavsitl_core::time::SimTime;

/// Magnetometer parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MagParams {
    /// Whether the vehicle has this sensor.
    pub enabled: bool,
    /// Output rate, Hz (divides the physics rate).
    pub rate_hz: u32,
    /// White noise per axis, gauss.
    #[serde(alias = "NoiseSigma")]
    pub noise_sigma_gauss: f64,
    /// Scale factor on the true field.
    #[serde(alias = "ScaleFactor")]
    pub scale_factor: f64,
    /// Hard-iron bias per sensor axis, gauss.
    pub bias_gauss: [f64; 3],
    /// Mount.
    pub mount: Mount,
}

impl Default for MagParams {
    fn default() -> Self {
        MagParams {
            enabled: true,
            rate_hz: 50,
            noise_sigma_gauss: 0.005,
            scale_factor: 1.0,
            bias_gauss: [0.0; 3],
            mount: Mount::default(),
        }
    }
}

impl MagParams {
    /// Checks values.
    ///
    /// # Errors
    /// [`ParamError`] naming the field.
    pub fn validate(&self) -> Result<(), ParamError> {
        use crate::physics::params::{check_range, check_range3};
        check_range("noise_sigma_gauss", self.noise_sigma_gauss, 0.0, 10.0)?;
        check_range("scale_factor", self.scale_factor, 0.1, 10.0)?;
        check_range3("bias_gauss", &self.bias_gauss, -10.0, 10.0)?;
        self.mount.validate()
    }
}

/// Distance from the last evaluation beyond which the field is re-evaluated, m.
const REEVALUATE_M: f64 = 500.0;

/// A magnetometer with its noise state and cached Earth field.
#[derive(Debug, Clone)]
pub struct Mag {
    params: MagParams,
    rng: NoiseRng,
    date: Date,
    field_ned_gauss: Vector3<f64>,
    field_at_ned_m: Vector3<f64>,
    sensor_from_body: UnitQuaternion<f64>,
}

impl Mag {
    /// A magnetometer for `date`, with the field evaluated at `start_ned_m`.
    ///
    /// # Errors
    /// [`FieldError`] when the model cannot be evaluated there and then.
    pub fn new(
        params: MagParams,
        rng: NoiseRng,
        date: Date,
        frame: &LocalFrame,
        start_ned_m: &Vector3<f64>,
    ) -> Result<Self, FieldError> {
        let field = earth_field_ned_gauss(&frame.to_geodetic(start_ned_m), date)?;
        Ok(Mag {
            sensor_from_body: params.mount.sensor_from_body(),
            params,
            rng,
            date,
            field_ned_gauss: field,
            field_at_ned_m: *start_ned_m,
        })
    }

    /// The parameters.
    pub fn params(&self) -> &MagParams {
        &self.params
    }

    /// The Earth field in use, NED, gauss.
    pub fn earth_field_ned_gauss(&self) -> Vector3<f64> {
        self.field_ned_gauss
    }

    /// Samples at `time` for a vehicle at `pos_ned_m` with attitude `att`.
    pub fn sample(
        &mut self,
        time: SimTime,
        pos_ned_m: &Vector3<f64>,
        att_ned_frd: &UnitQuaternion<f64>,
        frame: &LocalFrame,
    ) -> MagSample {
        if (pos_ned_m - self.field_at_ned_m).norm() > REEVALUATE_M {
            // Outside the model's range the last good field is kept.
            if let Ok(f) = earth_field_ned_gauss(&frame.to_geodetic(pos_ned_m), self.date) {
                self.field_ned_gauss = f;
            }
            self.field_at_ned_m = *pos_ned_m;
        }
        let body = att_ned_frd.inverse() * self.field_ned_gauss;
        let s = self.sensor_from_body * body * self.params.scale_factor;
        let mut out = Vector3::zeros();
        for i in 0..3 {
            out[i] = noisy(
                s[i] + self.params.bias_gauss[i],
                self.params.noise_sigma_gauss,
                &mut self.rng,
            );
        }
        MagSample {
            time,
            field_gauss: out,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mavsitl_core::geo::GeoPoint;
    use mavsitl_core::rng::{noise_rng, NoiseSource};

    fn zurich() -> LocalFrame {
        LocalFrame::new(GeoPoint::from_deg(47.397742, 8.545594, 488.0))
    }

    fn date() -> Date {
        Date::from_calendar_date(2026, world_magnetic_model::time::Month::June, 1).expect("date")
    }

    fn mag(params: MagParams) -> Mag {
        let m = Mag::new(
            params.clone(),
            noise_rng(1, 0, NoiseSource::Mag),
            date(),
            &zurich(),
            &Vector3::zeros(),
        )
        .expect("WMM covers Zurich in 2026");
        assert_eq!(m.params(), &params);
        m
    }

    #[test]
    fn it_reads_the_wmm_field_turned_into_its_axes_scaled_and_biased() {
        let p = MagParams {
            noise_sigma_gauss: 0.0,
            scale_factor: 1.1,
            bias_gauss: [0.02, -0.03, 0.04],
            ..MagParams::default()
        };
        let mut m = mag(p);
        let b = m.earth_field_ned_gauss();
        assert_eq!(
            b,
            earth_field_ned_gauss(&zurich().origin(), date()).unwrap()
        );
        // Zurich: about 0.22 G north, 0.01 G east, 0.42 G down.
        assert!((0.20..0.24).contains(&b.x) && b.y.abs() < 0.03 && (0.40..0.45).contains(&b.z));
        let bias = Vector3::new(0.02, -0.03, 0.04);
        let level = m.sample(
            SimTime::ZERO,
            &Vector3::zeros(),
            &UnitQuaternion::identity(),
            &zurich(),
        );
        assert!((level.field_gauss - (1.1 * b + bias)).norm() < 1e-15);
        // Facing east, body x points east and body y south.
        let east = UnitQuaternion::from_euler_angles(0.0, 0.0, std::f64::consts::FRAC_PI_2);
        let s = m.sample(SimTime::ZERO, &Vector3::zeros(), &east, &zurich());
        let expect = 1.1 * Vector3::new(b.y, -b.x, b.z) + bias;
        assert!((s.field_gauss - expect).norm() < 1e-12, "{}", s.field_gauss);
        // A sensor turned 90° right on a level body reads the same.
        let mut turned = mag(MagParams {
            noise_sigma_gauss: 0.0,
            mount: Mount {
                yaw_deg: 90.0,
                ..Mount::default()
            },
            ..MagParams::default()
        });
        let s = turned.sample(
            SimTime::ZERO,
            &Vector3::zeros(),
            &UnitQuaternion::identity(),
            &zurich(),
        );
        assert!((s.field_gauss - Vector3::new(b.y, -b.x, b.z)).norm() < 1e-12);
    }

    #[test]
    fn the_field_is_evaluated_again_beyond_500_m() {
        let mut m = mag(MagParams {
            noise_sigma_gauss: 0.0,
            ..MagParams::default()
        });
        let start = m.earth_field_ned_gauss();
        let level = UnitQuaternion::identity();
        // 400 m, and exactly 500 m, north: the field at the start is kept.
        let edge = Vector3::new(500.0, 0.0, 0.0);
        let s = m.sample(SimTime::ZERO, &edge, &level, &zurich());
        assert_eq!((s.field_gauss, m.earth_field_ned_gauss()), (start, start));
        let near = Vector3::new(400.0, 0.0, 0.0);
        let s = m.sample(SimTime::ZERO, &near, &level, &zurich());
        assert_eq!((s.field_gauss, m.earth_field_ned_gauss()), (start, start));
        // 20 km east: the field there, and again 400 m from there.
        let far = Vector3::new(0.0, 20_000.0, -300.0);
        let there = earth_field_ned_gauss(&zurich().to_geodetic(&far), date()).unwrap();
        assert!((there - start).norm() > 1e-4, "{there} vs {start}");
        let s = m.sample(SimTime::ZERO, &far, &level, &zurich());
        assert_eq!(s.field_gauss, there);
        m.sample(
            SimTime::ZERO,
            &(far + Vector3::new(0.0, 400.0, 0.0)),
            &level,
            &zurich(),
        );
        assert_eq!(m.earth_field_ned_gauss(), there);
        // Out of the model's range (far above it), the last good field stays.
        let space = Vector3::new(0.0, 20_000.0, -1e8);
        m.sample(SimTime::ZERO, &space, &level, &zurich());
        assert_eq!(m.earth_field_ned_gauss(), there);
    }

    #[test]
    fn its_noise_has_the_configured_sigma_and_its_ranges_are_checked() {
        let mut m = mag(MagParams::default());
        let b = m.earth_field_ned_gauss();
        let n = 20_000;
        let mut sq = Vector3::zeros();
        for _ in 0..n {
            let s = m.sample(
                SimTime::ZERO,
                &Vector3::zeros(),
                &UnitQuaternion::identity(),
                &zurich(),
            );
            sq += (s.field_gauss - b).map(|e| e * e);
        }
        for axis in 0..3 {
            let sigma = (sq[axis] / n as f64).sqrt();
            assert!((sigma / 0.005 - 1.0).abs() < 0.03, "axis {axis}: {sigma}");
        }
        let bad = |p: MagParams| p.validate().unwrap_err().field;
        assert!(MagParams::default().validate().is_ok());
        let d = MagParams::default;
        assert_eq!(
            bad(MagParams {
                noise_sigma_gauss: -0.1,
                ..d()
            }),
            "noise_sigma_gauss"
        );
        assert_eq!(
            bad(MagParams {
                scale_factor: 0.05,
                ..d()
            }),
            "scale_factor"
        );
        assert_eq!(
            bad(MagParams {
                bias_gauss: [0.0, 11.0, 0.0],
                ..d()
            }),
            "bias_gauss[1]"
        );
        assert_eq!(
            bad(MagParams {
                mount: Mount {
                    roll_deg: f64::NAN,
                    ..Mount::default()
                },
                ..d()
            }),
            "mount"
        );
    }
}
