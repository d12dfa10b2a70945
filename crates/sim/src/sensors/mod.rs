//! Sensors: noisy IMU, GPS, barometer, magnetometer and rangefinder.
//!
//! Owns the sensor models and their noise state. Each sensor is a step function
//! of (true state, world, its own seeded RNG, its own state) → sample, run at its
//! own rate (an integer divider of the physics rate) from a mount pose in the body
//! frame. Sensors read the physics (the specific force is computed once there);
//! they never differentiate state themselves and never change it.
//!
//! Noise streams: every sensor of every vehicle owns its own RNG derived from
//! (scenario seed, vehicle index, sensor), see [`mavsitl_core::rng`].

pub mod baro;
pub mod gps;
pub mod imu;
pub mod mag;
pub mod mount;
pub mod noise;
pub mod rangefinder;

use nalgebra::Vector3;
use serde::{Deserialize, Serialize};
use world_magnetic_model::time::Date;

pub use baro::{Baro, BaroParams};
pub use gps::{Gps, GpsParams};
pub use imu::{Imu, ImuParams, ImuTruth};
pub use mag::{Mag, MagParams};
pub use mavsitl_core::magnetic::FieldError;
pub use mavsitl_core::samples::{
    BaroSample, FixType, GpsSample, ImuSample, MagSample, Range, RangeSample, SampleBuf,
    TickSamples,
};
pub use mount::Mount;
pub use rangefinder::{Rangefinder, RangefinderParams};

use crate::physics::BodyState;
use crate::world::Environment;
use mavsitl_core::faults::FaultEffects;
use mavsitl_core::geo::LocalFrame;
use mavsitl_core::rng::{noise_rng, stream_id, NoiseSource};
use mavsitl_core::time::{PhysicsRate, Rate, RateError, SimTime};

/// The sensors of one vehicle as a scenario gives them (every sensor present with
/// its defaults unless `"enabled": false`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SensorsSpec {
    /// The IMU.
    pub imu: ImuParams,
    /// The GPS receiver.
    pub gps: GpsParams,
    /// The barometer.
    pub baro: BaroParams,
    /// The magnetometer.
    pub mag: MagParams,
    /// The rangefinder (none unless enabled).
    pub rangefinder: RangefinderParams,
}

/// Why a vehicle's sensors could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SensorError {
    /// A rate that does not divide the physics rate.
    #[error("{sensor}.rate_hz: {source}")]
    Rate {
        /// Which sensor.
        sensor: &'static str,
        /// What is wrong.
        #[source]
        source: RateError,
    },
    /// A parameter out of range.
    #[error("{sensor}.{source}")]
    Param {
        /// Which sensor.
        sensor: &'static str,
        /// What is wrong.
        #[source]
        source: mavsitl_core::param::ParamError,
    },
    /// The magnetic model cannot be evaluated.
    #[error("mag: {0}")]
    Field(#[from] FieldError),
}

impl SensorsSpec {
    /// Checks every enabled sensor's values and rate.
    ///
    /// # Errors
    /// [`SensorError`] naming the sensor and field.
    pub fn validate(&self, physics: PhysicsRate) -> Result<(), SensorError> {
        let rate = |sensor, hz| {
            physics
                .divider(hz)
                .map(|_| ())
                .map_err(|source| SensorError::Rate { sensor, source })
        };
        let param = |sensor| move |source| SensorError::Param { sensor, source };
        if self.imu.enabled {
            rate("imu", self.imu.rate_hz)?;
            self.imu.validate().map_err(param("imu"))?;
        }
        if self.gps.enabled {
            rate("gps", self.gps.rate_hz)?;
            self.gps.validate().map_err(param("gps"))?;
        }
        if self.baro.enabled {
            rate("baro", self.baro.rate_hz)?;
            self.baro.validate().map_err(param("baro"))?;
        }
        if self.mag.enabled {
            rate("mag", self.mag.rate_hz)?;
            self.mag.validate().map_err(param("mag"))?;
        }
        if self.rangefinder.enabled {
            rate("rangefinder", self.rangefinder.rate_hz)?;
            self.rangefinder.validate().map_err(param("rangefinder"))?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone)]
struct Slot<T> {
    sensor: T,
    rate: Rate,
}

/// Every sensor of one vehicle.
#[derive(Debug, Clone)]
pub struct Sensors {
    imu: Option<Slot<Imu>>,
    gps: Option<Slot<Gps>>,
    baro: Option<Slot<Baro>>,
    mag: Option<Slot<Mag>>,
    rangefinder: Option<Slot<Rangefinder>>,
    spec: SensorsSpec,
    streams: [(&'static str, u64); 5],
    seed: u64,
    /// The last IMU sample before an `imu_stuck` fault (repeated while stuck).
    last_imu: Option<ImuSample>,
}

impl Sensors {
    /// No sensors at all.
    pub fn none() -> Self {
        Sensors {
            imu: None,
            gps: None,
            baro: None,
            mag: None,
            rangefinder: None,
            spec: SensorsSpec {
                imu: ImuParams {
                    enabled: false,
                    ..Default::default()
                },
                gps: GpsParams {
                    enabled: false,
                    ..Default::default()
                },
                baro: BaroParams {
                    enabled: false,
                    ..Default::default()
                },
                mag: MagParams {
                    enabled: false,
                    ..Default::default()
                },
                rangefinder: RangefinderParams::default(),
            },
            streams: [
                ("imu", 0),
                ("gps", 0),
                ("baro", 0),
                ("mag", 0),
                ("rangefinder", 0),
            ],
            seed: 0,
            last_imu: None,
        }
    }

    /// The sensors of vehicle `vehicle_id` from `spec`, each with its own RNG
    /// stream derived from `seed`.
    ///
    /// # Errors
    /// [`SensorError`] for a bad rate or parameter, or a magnetic model that
    /// cannot be evaluated at the start point and date.
    pub fn new(
        spec: &SensorsSpec,
        physics: PhysicsRate,
        seed: u64,
        vehicle_id: u32,
        frame: &LocalFrame,
        date: Date,
        start_ned_m: &Vector3<f64>,
    ) -> Result<Self, SensorError> {
        spec.validate(physics)?;
        let div = |sensor, hz| {
            physics
                .divider(hz)
                .map_err(|source| SensorError::Rate { sensor, source })
        };
        let dt = |r: Rate| r.period_us(physics) as f64 * 1e-6;
        let imu = if spec.imu.enabled {
            let rate = div("imu", spec.imu.rate_hz)?;
            let rng = noise_rng(seed, vehicle_id, NoiseSource::Imu);
            Some(Slot {
                sensor: Imu::new(spec.imu.clone(), dt(rate), rng),
                rate,
            })
        } else {
            None
        };
        let gps = if spec.gps.enabled {
            let rate = div("gps", spec.gps.rate_hz)?;
            let rng = noise_rng(seed, vehicle_id, NoiseSource::Gps);
            Some(Slot {
                sensor: Gps::new(spec.gps.clone(), dt(rate), rng),
                rate,
            })
        } else {
            None
        };
        let baro = if spec.baro.enabled {
            let rate = div("baro", spec.baro.rate_hz)?;
            let rng = noise_rng(seed, vehicle_id, NoiseSource::Baro);
            Some(Slot {
                sensor: Baro::new(spec.baro.clone(), dt(rate), rng),
                rate,
            })
        } else {
            None
        };
        let mag = if spec.mag.enabled {
            let rate = div("mag", spec.mag.rate_hz)?;
            let rng = noise_rng(seed, vehicle_id, NoiseSource::Mag);
            Some(Slot {
                sensor: Mag::new(spec.mag.clone(), rng, date, frame, start_ned_m)?,
                rate,
            })
        } else {
            None
        };
        let rangefinder = if spec.rangefinder.enabled {
            let rate = div("rangefinder", spec.rangefinder.rate_hz)?;
            let rng = noise_rng(seed, vehicle_id, NoiseSource::Rangefinder);
            Some(Slot {
                sensor: Rangefinder::new(spec.rangefinder.clone(), rng),
                rate,
            })
        } else {
            None
        };
        Ok(Sensors {
            imu,
            gps,
            baro,
            mag,
            rangefinder,
            spec: spec.clone(),
            streams: [
                ("imu", stream_id(vehicle_id, NoiseSource::Imu)),
                ("gps", stream_id(vehicle_id, NoiseSource::Gps)),
                ("baro", stream_id(vehicle_id, NoiseSource::Baro)),
                ("mag", stream_id(vehicle_id, NoiseSource::Mag)),
                (
                    "rangefinder",
                    stream_id(vehicle_id, NoiseSource::Rangefinder),
                ),
            ],
            seed,
            last_imu: None,
        })
    }

    /// The configuration.
    pub fn spec(&self) -> &SensorsSpec {
        &self.spec
    }

    /// (sensor name, RNG stream id) of each sensor; the key is the scenario seed.
    pub fn streams(&self) -> &[(&'static str, u64); 5] {
        &self.streams
    }

    /// The scenario seed the streams are keyed with.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The IMU, if fitted.
    pub fn imu(&self) -> Option<&Imu> {
        self.imu.as_ref().map(|s| &s.sensor)
    }

    /// The GPS, if fitted.
    pub fn gps(&self) -> Option<&Gps> {
        self.gps.as_ref().map(|s| &s.sensor)
    }

    /// The barometer, if fitted.
    pub fn baro(&self) -> Option<&Baro> {
        self.baro.as_ref().map(|s| &s.sensor)
    }

    /// The magnetometer, if fitted.
    pub fn mag(&self) -> Option<&Mag> {
        self.mag.as_ref().map(|s| &s.sensor)
    }

    /// The rangefinder, if fitted.
    pub fn rangefinder(&self) -> Option<&Rangefinder> {
        self.rangefinder.as_ref().map(|s| &s.sensor)
    }

    /// Samples whatever is due at physics tick `tick` (counted from 0, so time
    /// `time` = tick × period), from the state at that time, with the sensor
    /// faults of `faults` applied.
    #[allow(clippy::too_many_arguments)]
    pub fn step(
        &mut self,
        tick: u64,
        time: SimTime,
        state: &BodyState,
        truth: &ImuTruth,
        env: &Environment,
        frame: &LocalFrame,
        home_alt_m: f64,
        faults: &FaultEffects,
    ) -> TickSamples {
        let mut out = TickSamples::default();
        if let Some(s) = self.imu.as_mut() {
            if s.rate.is_due(tick) {
                // A stuck IMU repeats its last output; its noise streams run on.
                let fresh = s.sensor.sample(time, truth, &faults.imu);
                let sample = match (faults.imu.stuck, self.last_imu) {
                    (true, Some(last)) => ImuSample { time, ..last },
                    _ => fresh,
                };
                self.last_imu = Some(sample);
                out.imu = Some(sample);
            }
        }
        if let Some(s) = self.gps.as_mut() {
            if s.rate.is_due(tick) {
                s.sensor.measure(
                    time,
                    &state.pos_ned_m,
                    &state.vel_ned_m_s,
                    &state.att_ned_frd,
                    &state.rate_frd_rad_s,
                    env.gps_denied,
                    frame,
                    &faults.gps,
                );
            }
            out.gps = s.sensor.deliver(time);
        }
        if let Some(s) = self.baro.as_mut() {
            if s.rate.is_due(tick) {
                let at =
                    state.pos_ned_m + state.att_ned_frd * s.sensor.params().mount.offset_frd_m();
                out.baro = Some(
                    s.sensor
                        .sample(time, home_alt_m - at.z + faults.baro_offset_m),
                );
            }
        }
        if let Some(s) = self.mag.as_mut() {
            if s.rate.is_due(tick) {
                let mut m = s
                    .sensor
                    .sample(time, &state.pos_ned_m, &state.att_ned_frd, frame);
                m.field_gauss += faults.mag_offset_gauss;
                out.mag = Some(m);
            }
        }
        if let Some(s) = self.rangefinder.as_mut() {
            if s.rate.is_due(tick) {
                out.range = Some(s.sensor.sample(time, &state.pos_ned_m, &state.att_ned_frd));
            }
        }
        out
    }
}
