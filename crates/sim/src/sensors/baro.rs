//! Barometer: ISA static pressure at the sensor + white noise + a Gauss–Markov
//! drift that really drifts.
//!
//! pressure = p_ISA(h_sensor) + d + σ_w·w,  d ← Gauss–Markov(σ_d, τ_d) started at
//! 0 (the drift since power-on, when autopilots zero their baro). The drift is
//! discretised exactly, so its spread after time t is σ_d·√(1 − e^(−2t/τ_d)) — the
//! configured value — unlike AirSim's `GaussianMarkov`, whose stationary σ is
//! ≈ σ·√(dt/2τ), about 3e-6 of what it promises. Temperature is the ISA
//! temperature at the sensor plus white noise; pressure altitude is the ISA
//! altitude of the measured pressure.

use serde::{Deserialize, Serialize};

use super::mount::Mount;
use super::noise::{noisy, GaussMarkov};
use mavsitl_core::atmosphere::{self, isa, isa_altitude_from_pressure_m};
use mavsitl_core::param::ParamError;
use mavsitl_core::rng::NoiseRng;
pub use mavsitl_core::samples::BaroSample;
use mavsitl_core::time::SimTime;

/// Barometer parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BaroParams {
    /// Whether the vehicle has this sensor.
    pub enabled: bool,
    /// Output rate, Hz (divides the physics rate).
    pub rate_hz: u32,
    /// White pressure noise, Pa (MS5611: 2.7 Pa).
    #[serde(alias = "UncorrelatedNoiseSigma")]
    pub noise_sigma_pa: f64,
    /// Stationary σ of the pressure drift, Pa (12 Pa ≈ 1 m).
    pub drift_sigma_pa: f64,
    /// Correlation time of the drift, s.
    pub drift_tau_s: f64,
    /// White temperature noise, °C.
    pub temperature_noise_degc: f64,
    /// Mount.
    pub mount: Mount,
}

impl Default for BaroParams {
    fn default() -> Self {
        BaroParams {
            enabled: true,
            rate_hz: 50,
            noise_sigma_pa: 2.7,
            drift_sigma_pa: 12.0,
            drift_tau_s: 3600.0,
            temperature_noise_degc: 0.01,
            mount: Mount::default(),
        }
    }
}

impl BaroParams {
    /// Checks values.
    ///
    /// # Errors
    /// [`ParamError`] naming the field.
    pub fn validate(&self) -> Result<(), ParamError> {
        use mavsitl_core::param::check_range;
        check_range("noise_sigma_pa", self.noise_sigma_pa, 0.0, 1e4)?;
        check_range("drift_sigma_pa", self.drift_sigma_pa, 0.0, 1e4)?;
        check_range("drift_tau_s", self.drift_tau_s, 1e-3, 1e7)?;
        check_range(
            "temperature_noise_degc",
            self.temperature_noise_degc,
            0.0,
            100.0,
        )?;
        self.mount.validate()
    }
}

/// A barometer with its noise state.
#[derive(Debug, Clone)]
pub struct Baro {
    params: BaroParams,
    rng: NoiseRng,
    drift: GaussMarkov,
}

impl Baro {
    /// A barometer sampling every `dt_s` with its own RNG; the drift starts at 0.
    pub fn new(params: BaroParams, dt_s: f64, rng: NoiseRng) -> Self {
        Baro {
            drift: GaussMarkov::new(params.drift_sigma_pa, params.drift_tau_s, dt_s, 0.0),
            params,
            rng,
        }
    }

    /// The parameters.
    pub fn params(&self) -> &BaroParams {
        &self.params
    }

    /// Current drift, Pa.
    pub fn drift_pa(&self) -> f64 {
        self.drift.value
    }

    /// Samples at `time` for a sensor at `alt_amsl_m`.
    pub fn sample(&mut self, time: SimTime, alt_amsl_m: f64) -> BaroSample {
        let air = isa(alt_amsl_m);
        let d = self.drift.step(&mut self.rng);
        let p = noisy(
            air.pressure_pa + d,
            self.params.noise_sigma_pa,
            &mut self.rng,
        );
        let t = noisy(
            air.temperature_k - atmosphere::ZERO_CELSIUS_K,
            self.params.temperature_noise_degc,
            &mut self.rng,
        );
        BaroSample {
            time,
            pressure_pa: p,
            temperature_degc: t,
            pressure_altitude_m: isa_altitude_from_pressure_m(p),
        }
    }
}
