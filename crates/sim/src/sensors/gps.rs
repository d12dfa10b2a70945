//! GNSS receiver: position and velocity with real, correlated error, latency,
//! time to first fix, converging accuracy, and denial by zones.
//!
//! Model (per axis, in local NED, sampled every 1/rate):
//!
//! ```text
//! position = truth(antenna) + k(t)·(e_gm + σ_white·w)       e_gm: Gauss–Markov(σ_h or σ_v, τ)
//! velocity = truth + k(t)·σ_vel·w
//! eph(t)   = eph_final + (eph_initial − eph_final)·e^(−(t − t_start)/τ_eph),  k(t) = eph(t)/eph_final
//! ```
//!
//! A correlated error with a stationary σ and correlation time τ is how real
//! single-frequency receivers wander (Rankin, "GPS and differential GPS: an error
//! model for sensor simulation", PLANS 1994); the white part is receiver noise.
//! Before `startup_s` the receiver reports no fix; then the fix is 2-D until
//! eph ≤ `fix_3d_eph_m`, 3-D after. Samples are measured at the sample time and
//! delivered `latency_s` later, in order. Inside a zone with `gps_denied` the
//! receiver reports no fix and no satellites. Ground speed and course come from
//! the noisy velocity. Position is reported as WGS-84 latitude, longitude and
//! height, which is both the ellipsoidal height and the height above mean sea
//! level: mavsitl neglects the geoid separation (see [`mavsitl_core::geo`]).

use std::collections::VecDeque;

use nalgebra::{UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};

use super::mount::Mount;
use super::noise::{gaussian, noisy, plus_draw, GaussMarkov};
use mavsitl_core::faults::GpsFault;
use mavsitl_core::geo::LocalFrame;
use mavsitl_core::param::ParamError;
use mavsitl_core::rng::NoiseRng;
pub use mavsitl_core::samples::{FixType, GpsSample};
use mavsitl_core::time::SimTime;

/// GPS parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GpsParams {
    /// Whether the vehicle has this sensor.
    pub enabled: bool,
    /// Output rate, Hz (divides the physics rate).
    pub rate_hz: u32,
    /// Delay between measurement and delivery, s.
    pub latency_s: f64,
    /// Time from power-on to the first fix, s.
    pub startup_s: f64,
    /// Reported horizontal accuracy at the first fix, m.
    pub eph_initial_m: f64,
    /// Reported vertical accuracy at the first fix, m.
    pub epv_initial_m: f64,
    /// Reported horizontal accuracy once converged, m.
    pub eph_final_m: f64,
    /// Reported vertical accuracy once converged, m.
    pub epv_final_m: f64,
    /// Time constant of the accuracy convergence, s.
    pub eph_tau_s: f64,
    /// eph at or below which the fix is 3-D, m.
    pub fix_3d_eph_m: f64,
    /// Stationary σ of the correlated horizontal error per axis, m.
    pub horizontal_error_sigma_m: f64,
    /// Stationary σ of the correlated vertical error, m.
    pub vertical_error_sigma_m: f64,
    /// Correlation time of the position error, s.
    pub error_tau_s: f64,
    /// White position noise per axis, m.
    pub white_noise_sigma_m: f64,
    /// White velocity noise per axis, m/s.
    pub velocity_sigma_m_s: f64,
    /// Satellites used once converged.
    pub satellites: u8,
    /// Antenna mount.
    pub mount: Mount,
}

impl Default for GpsParams {
    fn default() -> Self {
        GpsParams {
            enabled: true,
            rate_hz: 10,
            latency_s: 0.1,
            startup_s: 2.0,
            eph_initial_m: 20.0,
            epv_initial_m: 30.0,
            eph_final_m: 0.6,
            epv_final_m: 0.9,
            eph_tau_s: 3.0,
            fix_3d_eph_m: 3.0,
            horizontal_error_sigma_m: 0.5,
            vertical_error_sigma_m: 0.8,
            error_tau_s: 60.0,
            white_noise_sigma_m: 0.05,
            velocity_sigma_m_s: 0.05,
            satellites: 12,
            mount: Mount::default(),
        }
    }
}

impl GpsParams {
    /// Checks values.
    ///
    /// # Errors
    /// [`ParamError`] naming the field.
    pub fn validate(&self) -> Result<(), ParamError> {
        use mavsitl_core::param::check_range;
        check_range("latency_s", self.latency_s, 0.0, 2.0)?;
        check_range("startup_s", self.startup_s, 0.0, 3600.0)?;
        check_range("eph_final_m", self.eph_final_m, 0.01, 1000.0)?;
        check_range("epv_final_m", self.epv_final_m, 0.01, 1000.0)?;
        check_range(
            "eph_initial_m",
            self.eph_initial_m,
            self.eph_final_m,
            1000.0,
        )?;
        check_range(
            "epv_initial_m",
            self.epv_initial_m,
            self.epv_final_m,
            1000.0,
        )?;
        check_range("eph_tau_s", self.eph_tau_s, 1e-3, 3600.0)?;
        check_range("fix_3d_eph_m", self.fix_3d_eph_m, 0.0, 1000.0)?;
        check_range(
            "horizontal_error_sigma_m",
            self.horizontal_error_sigma_m,
            0.0,
            1000.0,
        )?;
        check_range(
            "vertical_error_sigma_m",
            self.vertical_error_sigma_m,
            0.0,
            1000.0,
        )?;
        check_range("error_tau_s", self.error_tau_s, 1e-3, 1e6)?;
        check_range("white_noise_sigma_m", self.white_noise_sigma_m, 0.0, 100.0)?;
        check_range("velocity_sigma_m_s", self.velocity_sigma_m_s, 0.0, 100.0)?;
        self.mount.validate()
    }
}

/// A GPS receiver with its noise state and delay line.
#[derive(Debug, Clone)]
pub struct Gps {
    params: GpsParams,
    rng: NoiseRng,
    error: [GaussMarkov; 3],
    latency_us: u64,
    queue: VecDeque<GpsSample>,
    last_fix_pos_ned_m: Vector3<f64>,
}

impl Gps {
    /// A receiver sampling every `dt_s` with its own RNG.
    pub fn new(params: GpsParams, dt_s: f64, mut rng: NoiseRng) -> Self {
        let h = params.horizontal_error_sigma_m;
        let v = params.vertical_error_sigma_m;
        let tau = params.error_tau_s;
        let error =
            [h, h, v].map(|s| GaussMarkov::new(s, tau, dt_s, 0.0).stationary_start(&mut rng));
        let capacity = (params.latency_s / dt_s).ceil() as usize + 4;
        Gps {
            latency_us: SimTime::from_secs_f64(params.latency_s).as_micros(),
            params,
            rng,
            error,
            queue: VecDeque::with_capacity(capacity),
            last_fix_pos_ned_m: Vector3::zeros(),
        }
    }

    /// The parameters.
    pub fn params(&self) -> &GpsParams {
        &self.params
    }

    /// Current correlated position error (NED, m, before accuracy scaling).
    pub fn correlated_error_ned_m(&self) -> Vector3<f64> {
        Vector3::new(
            self.error[0].value,
            self.error[1].value,
            self.error[2].value,
        )
    }

    /// Measures at `time` (the sample goes into the delay line).
    #[allow(clippy::too_many_arguments)]
    pub fn measure(
        &mut self,
        time: SimTime,
        pos_ned_m: &Vector3<f64>,
        vel_ned_m_s: &Vector3<f64>,
        att_ned_frd: &UnitQuaternion<f64>,
        rate_frd_rad_s: &Vector3<f64>,
        denied: bool,
        frame: &LocalFrame,
        fault: &GpsFault,
    ) {
        let p = &self.params;
        let denied = denied || fault.lost;
        let t = time.as_secs_f64();
        let r = p.mount.offset_frd_m();
        let antenna = pos_ned_m + att_ned_frd * r;
        let antenna_vel = vel_ned_m_s + att_ned_frd * rate_frd_rad_s.cross(&r);
        // The error processes run whether or not there is a fix.
        let mut err = Vector3::zeros();
        for i in 0..3 {
            err[i] = noisy(
                self.error[i].step(&mut self.rng),
                p.white_noise_sigma_m,
                &mut self.rng,
            );
        }
        let vel_noise = Vector3::new(
            gaussian(&mut self.rng),
            gaussian(&mut self.rng),
            gaussian(&mut self.rng),
        );
        let since = t - p.startup_s;
        let (eph, epv) = if since >= 0.0 {
            let decay = (-since / p.eph_tau_s).exp();
            (
                p.eph_final_m + (p.eph_initial_m - p.eph_final_m) * decay,
                p.epv_final_m + (p.epv_initial_m - p.epv_final_m) * decay,
            )
        } else {
            (99.99, 99.99)
        };
        // Jamming scales the noise and the accuracy the receiver reports.
        let (eph, epv) = (eph * fault.noise_scale, epv * fault.noise_scale);
        let k = eph / p.eph_final_m;
        let kv = epv / p.epv_final_m;
        let (fix, satellites) = if denied || since < 0.0 {
            (FixType::NoFix, 0)
        } else if eph <= p.fix_3d_eph_m {
            (FixType::Fix3d, p.satellites)
        } else {
            (FixType::Fix2d, p.satellites.min(5))
        };
        let (pos, vel) = if fix == FixType::NoFix {
            (self.last_fix_pos_ned_m, Vector3::zeros())
        } else {
            let e = Vector3::new(k * err.x, k * err.y, kv * err.z);
            (
                antenna + e + fault.offset_ned_m,
                antenna_vel.zip_map(&vel_noise, |v, w| plus_draw(v, k * p.velocity_sigma_m_s, w))
                    + fault.offset_vel_ned_m_s,
            )
        };
        if fix != FixType::NoFix {
            self.last_fix_pos_ned_m = pos;
        }
        let sample = GpsSample {
            measured: time,
            delivered: time + self.latency_us,
            fix,
            satellites,
            position: frame.to_geodetic(&pos),
            pos_ned_m: pos,
            vel_ned_m_s: vel,
            eph_m: if fix == FixType::NoFix { 99.99 } else { eph },
            epv_m: if fix == FixType::NoFix { 99.99 } else { epv },
        };
        if self.queue.len() == self.queue.capacity() {
            self.queue.pop_front();
        }
        self.queue.push_back(sample);
    }

    /// The oldest sample due for delivery at `now`, if any.
    pub fn deliver(&mut self, now: SimTime) -> Option<GpsSample> {
        match self.queue.front() {
            Some(s) if s.delivered <= now => self.queue.pop_front(),
            _ => None,
        }
    }
}
