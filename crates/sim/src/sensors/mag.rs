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
