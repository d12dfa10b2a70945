//! IMU: gyroscope and accelerometer with white noise, bias instability, lever
//! arm, range and resolution.
//!
//! Parameters use AirSim's names and units (its keys are accepted as aliases);
//! defaults are AirSim's (an MPU-6000). The model (IEEE Std 952-1997; the Kalibr
//! IMU noise model) for each axis, sampled every dt = 1/rate:
//!
//! ```text
//! gyro  = R_SB ω                                   + N_g/√dt · w + b_g
//! accel = R_SB (f_cg + α × r + ω × (ω × r))         + N_a/√dt · w + b_a
//! b ← Gauss–Markov(σ = bias stability, τ)          (exact discretisation)
//! ```
//!
//! with ω, α the body rates and angular acceleration, f_cg the specific force at
//! the CG from the physics (FRD; (0, 0, −g) at rest), r the mount offset and
//! R_SB the mount rotation. ARW 0.3 deg/√h is N_g = 0.3·(π/180)/60 rad/s/√Hz; VRW
//! 0.24 mg/√Hz is N_a = 0.24e-3·g₀ m/s²/√Hz. The Allan deviation of the result is
//! N/√τ at short τ and, for the bias, peaks at ≈ 0.62·σ_b near τ ≈ 1.9·τ_b (the
//! flicker-floor 0.664·B of IEEE 952 within 7 %). The rate is independent of the
//! physics rate (an integer divider of it).

use nalgebra::{UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};

use super::mount::Mount;
use super::noise::{noisy, quantize, saturate, GaussMarkov};
use mavsitl_core::atmosphere::G0_M_S2;
use mavsitl_core::faults::ImuFault;
use mavsitl_core::param::ParamError;
use mavsitl_core::rng::NoiseRng;
pub use mavsitl_core::samples::ImuSample;
use mavsitl_core::time::SimTime;

/// IMU parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ImuParams {
    /// Whether the vehicle has this sensor.
    pub enabled: bool,
    /// Output rate, Hz (divides the physics rate).
    pub rate_hz: u32,
    /// Gyro angular random walk, deg/√h.
    #[serde(alias = "AngularRandomWalk")]
    pub angular_random_walk_deg_sqrt_h: f64,
    /// Gyro bias stability (Gauss–Markov σ), deg/h.
    #[serde(alias = "GyroBiasStability")]
    pub gyro_bias_stability_deg_h: f64,
    /// Gyro bias correlation time, s.
    #[serde(alias = "GyroBiasStabilityTau")]
    pub gyro_bias_stability_tau_s: f64,
    /// Accelerometer velocity random walk, mg/√Hz.
    #[serde(alias = "VelocityRandomWalk")]
    pub velocity_random_walk_mg_sqrt_hz: f64,
    /// Accelerometer bias stability (Gauss–Markov σ), µg.
    #[serde(alias = "AccelBiasStability")]
    pub accel_bias_stability_ug: f64,
    /// Accelerometer bias correlation time, s.
    #[serde(alias = "AccelBiasStabilityTau")]
    pub accel_bias_stability_tau_s: f64,
    /// Gyro full scale, deg/s (0: unlimited).
    pub gyro_range_deg_s: f64,
    /// Accelerometer full scale, m/s² (0: unlimited).
    pub accel_range_m_s2: f64,
    /// Gyro resolution (LSB), rad/s (0: continuous).
    pub gyro_resolution_rad_s: f64,
    /// Accelerometer resolution (LSB), m/s² (0: continuous).
    pub accel_resolution_m_s2: f64,
    /// Mount.
    pub mount: Mount,
}

impl Default for ImuParams {
    fn default() -> Self {
        ImuParams {
            enabled: true,
            rate_hz: 250,
            angular_random_walk_deg_sqrt_h: 0.3,
            gyro_bias_stability_deg_h: 4.6,
            gyro_bias_stability_tau_s: 500.0,
            velocity_random_walk_mg_sqrt_hz: 0.24,
            accel_bias_stability_ug: 36.0,
            accel_bias_stability_tau_s: 800.0,
            gyro_range_deg_s: 2000.0,
            accel_range_m_s2: 16.0 * G0_M_S2,
            gyro_resolution_rad_s: 0.0,
            accel_resolution_m_s2: 0.0,
            mount: Mount::default(),
        }
    }
}

impl ImuParams {
    /// Gyro white-noise density, rad/s/√Hz.
    pub fn gyro_noise_density(&self) -> f64 {
        self.angular_random_walk_deg_sqrt_h.to_radians() / 60.0
    }

    /// Gyro bias σ, rad/s.
    pub fn gyro_bias_sigma(&self) -> f64 {
        self.gyro_bias_stability_deg_h.to_radians() / 3600.0
    }

    /// Accelerometer white-noise density, m/s²/√Hz.
    pub fn accel_noise_density(&self) -> f64 {
        self.velocity_random_walk_mg_sqrt_hz * 1e-3 * G0_M_S2
    }

    /// Accelerometer bias σ, m/s².
    pub fn accel_bias_sigma(&self) -> f64 {
        self.accel_bias_stability_ug * 1e-6 * G0_M_S2
    }

    /// Checks values.
    ///
    /// # Errors
    /// [`ParamError`] naming the field.
    pub fn validate(&self) -> Result<(), ParamError> {
        use mavsitl_core::param::check_range;
        check_range(
            "angular_random_walk_deg_sqrt_h",
            self.angular_random_walk_deg_sqrt_h,
            0.0,
            1e3,
        )?;
        check_range(
            "gyro_bias_stability_deg_h",
            self.gyro_bias_stability_deg_h,
            0.0,
            1e5,
        )?;
        check_range(
            "gyro_bias_stability_tau_s",
            self.gyro_bias_stability_tau_s,
            1e-3,
            1e7,
        )?;
        check_range(
            "velocity_random_walk_mg_sqrt_hz",
            self.velocity_random_walk_mg_sqrt_hz,
            0.0,
            1e3,
        )?;
        check_range(
            "accel_bias_stability_ug",
            self.accel_bias_stability_ug,
            0.0,
            1e6,
        )?;
        check_range(
            "accel_bias_stability_tau_s",
            self.accel_bias_stability_tau_s,
            1e-3,
            1e7,
        )?;
        check_range("gyro_range_deg_s", self.gyro_range_deg_s, 0.0, 1e5)?;
        check_range("accel_range_m_s2", self.accel_range_m_s2, 0.0, 1e5)?;
        check_range(
            "gyro_resolution_rad_s",
            self.gyro_resolution_rad_s,
            0.0,
            1.0,
        )?;
        check_range(
            "accel_resolution_m_s2",
            self.accel_resolution_m_s2,
            0.0,
            10.0,
        )?;
        self.mount.validate()
    }
}

/// The true motion an IMU samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ImuTruth {
    /// Body rates, FRD, rad/s.
    pub rate_frd_rad_s: Vector3<f64>,
    /// Angular acceleration, FRD, rad/s².
    pub ang_accel_frd_rad_s2: Vector3<f64>,
    /// Specific force at the CG, FRD, m/s².
    pub specific_force_frd_m_s2: Vector3<f64>,
}

/// An IMU with its noise state.
#[derive(Debug, Clone)]
pub struct Imu {
    params: ImuParams,
    rng: NoiseRng,
    gyro_white: f64,
    accel_white: f64,
    gyro_bias: [GaussMarkov; 3],
    accel_bias: [GaussMarkov; 3],
    sensor_from_body: UnitQuaternion<f64>,
    offset_frd_m: Vector3<f64>,
}

impl Imu {
    /// An IMU sampling every `dt_s`, with its own RNG; biases start from their
    /// stationary distribution (a turn-on bias).
    pub fn new(params: ImuParams, dt_s: f64, mut rng: NoiseRng) -> Self {
        let gb = params.gyro_bias_sigma();
        let ab = params.accel_bias_sigma();
        let gyro_bias = [0; 3].map(|_| {
            GaussMarkov::new(gb, params.gyro_bias_stability_tau_s, dt_s, 0.0)
                .stationary_start(&mut rng)
        });
        let accel_bias = [0; 3].map(|_| {
            GaussMarkov::new(ab, params.accel_bias_stability_tau_s, dt_s, 0.0)
                .stationary_start(&mut rng)
        });
        Imu {
            gyro_white: params.gyro_noise_density() / dt_s.sqrt(),
            accel_white: params.accel_noise_density() / dt_s.sqrt(),
            sensor_from_body: params.mount.sensor_from_body(),
            offset_frd_m: params.mount.offset_frd_m(),
            params,
            rng,
            gyro_bias,
            accel_bias,
        }
    }

    /// The parameters.
    pub fn params(&self) -> &ImuParams {
        &self.params
    }

    /// Current gyro and accelerometer biases (sensor axes).
    pub fn biases(&self) -> (Vector3<f64>, Vector3<f64>) {
        (
            Vector3::new(
                self.gyro_bias[0].value,
                self.gyro_bias[1].value,
                self.gyro_bias[2].value,
            ),
            Vector3::new(
                self.accel_bias[0].value,
                self.accel_bias[1].value,
                self.accel_bias[2].value,
            ),
        )
    }

    /// Takes one sample of `truth` at `time`, with `fault`'s noise scale and
    /// bias steps applied (the noise streams are drawn the same either way).
    pub fn sample(&mut self, time: SimTime, truth: &ImuTruth, fault: &ImuFault) -> ImuSample {
        let w = truth.rate_frd_rad_s;
        let r = self.offset_frd_m;
        let f_mount = truth.specific_force_frd_m_s2
            + truth.ang_accel_frd_rad_s2.cross(&r)
            + w.cross(&w.cross(&r));
        let gyro_true = self.sensor_from_body * w;
        let accel_true = self.sensor_from_body * f_mount;
        let p = &self.params;
        let mut gyro = Vector3::zeros();
        let mut accel = Vector3::zeros();
        for i in 0..3 {
            let bg = self.gyro_bias[i].step(&mut self.rng);
            let ba = self.accel_bias[i].step(&mut self.rng);
            let k = fault.noise_scale;
            let g = noisy(gyro_true[i], k * self.gyro_white, &mut self.rng)
                + bg
                + fault.gyro_bias_rad_s[i];
            let a = noisy(accel_true[i], k * self.accel_white, &mut self.rng)
                + ba
                + fault.accel_bias_m_s2[i];
            gyro[i] = quantize(
                saturate(g, p.gyro_range_deg_s.to_radians()),
                p.gyro_resolution_rad_s,
            );
            accel[i] = quantize(saturate(a, p.accel_range_m_s2), p.accel_resolution_m_s2);
        }
        ImuSample {
            time,
            gyro_rad_s: gyro,
            accel_m_s2: accel,
        }
    }
}
