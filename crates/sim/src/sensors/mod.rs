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
pub mod vision;

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
    /// Cameras, rendered on request (none unless given; at most 16).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cameras: Vec<vision::CameraSpec>,
    /// Spinning LiDARs (none unless given; at most 16).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lidars: Vec<vision::LidarSpec>,
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
    /// A camera or LiDAR out of range, or one too many.
    #[error("{key}.{problem}")]
    Vision {
        /// `cameras[i]` or `lidars[i]`.
        key: String,
        /// What is wrong, with its key.
        problem: String,
    },
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
        self.validate_vision()
    }

    fn validate_vision(&self) -> Result<(), SensorError> {
        let problems = [
            (
                "cameras",
                self.cameras.len(),
                self.cameras
                    .iter()
                    .map(|c| (c.name.as_str(), c.problem()))
                    .collect::<Vec<_>>(),
            ),
            (
                "lidars",
                self.lidars.len(),
                self.lidars
                    .iter()
                    .map(|l| (l.name.as_str(), l.problem()))
                    .collect(),
            ),
        ];
        for (kind, n, each) in problems {
            if n > vision::MAX_PER_VEHICLE {
                return Err(SensorError::Vision {
                    key: kind.into(),
                    problem: format!("len: {n} is more than {}", vision::MAX_PER_VEHICLE),
                });
            }
            for (i, (name, problem)) in each.iter().enumerate() {
                let twice = each[..i].iter().any(|(other, _)| other == name);
                let problem = problem
                    .clone()
                    .or_else(|| twice.then(|| format!("name: \"{name}\" is given twice")));
                if let Some(problem) = problem {
                    return Err(SensorError::Vision {
                        key: format!("{kind}[{i}]"),
                        problem,
                    });
                }
            }
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
                cameras: Vec::new(),
                lidars: Vec::new(),
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
    /// faults of `faults` applied, into `out` (every field is set: a sensor
    /// not due this tick leaves `None`).
    #[allow(clippy::too_many_arguments)]
    pub fn step(
        &mut self,
        out: &mut TickSamples,
        tick: u64,
        time: SimTime,
        state: &BodyState,
        truth: impl FnOnce() -> ImuTruth,
        env: &Environment,
        frame: &LocalFrame,
        home_alt_m: f64,
        faults: &FaultEffects,
    ) {
        out.imu = None;
        if let Some(s) = self.imu.as_mut() {
            if s.rate.is_due(tick) {
                // A stuck IMU repeats its last output; its noise streams run on.
                let fresh = s.sensor.sample(time, &truth(), &faults.imu);
                let sample = match (faults.imu.stuck, self.last_imu) {
                    (true, Some(last)) => ImuSample { time, ..last },
                    _ => fresh,
                };
                self.last_imu = Some(sample);
                out.imu = Some(sample);
            }
        }
        out.gps = None;
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
        out.baro = None;
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
        out.mag = None;
        if let Some(s) = self.mag.as_mut() {
            if s.rate.is_due(tick) {
                let mut m = s
                    .sensor
                    .sample(time, &state.pos_ned_m, &state.att_ned_frd, frame);
                m.field_gauss += faults.mag_offset_gauss;
                out.mag = Some(m);
            }
        }
        out.range = None;
        if let Some(s) = self.rangefinder.as_mut() {
            if s.rate.is_due(tick) {
                // The ground under the vehicle, taken as level there, as
                // its contact takes it: the position from its height.
                let over_ground = state.pos_ned_m - Vector3::z() * env.ground_down_m;
                out.range = Some(s.sensor.sample(time, &over_ground, &state.att_ned_frd));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mavsitl_core::geo::GeoPoint;
    use world_magnetic_model::time::Month;

    const NAMES: [&str; 5] = ["imu", "gps", "baro", "mag", "rangefinder"];

    fn build(spec: &SensorsSpec, seed: u64, vehicle: u32) -> Result<Sensors, SensorError> {
        let frame = LocalFrame::new(GeoPoint::from_deg(47.397, 8.546, 488.0));
        let date = Date::from_calendar_date(2026, Month::June, 1).expect("a valid date");
        let start = Vector3::new(10.0, -20.0, -5.0);
        Sensors::new(
            spec,
            PhysicsRate::DEFAULT,
            seed,
            vehicle,
            &frame,
            date,
            &start,
        )
    }

    /// Every sensor, the rangefinder too.
    fn all_fitted() -> SensorsSpec {
        let mut spec = SensorsSpec::default();
        spec.rangefinder.enabled = true;
        spec
    }

    /// Which of the five sensors `sensors` has, in [`NAMES`] order.
    fn fitted(sensors: &Sensors) -> [bool; 5] {
        [
            sensors.imu().is_some(),
            sensors.gps().is_some(),
            sensors.baro().is_some(),
            sensors.mag().is_some(),
            sensors.rangefinder().is_some(),
        ]
    }

    /// `spec` with sensor `name` enabled or not.
    fn set_enabled(spec: &mut SensorsSpec, name: &str, on: bool) {
        match name {
            "imu" => spec.imu.enabled = on,
            "gps" => spec.gps.enabled = on,
            "baro" => spec.baro.enabled = on,
            "mag" => spec.mag.enabled = on,
            _ => spec.rangefinder.enabled = on,
        }
    }

    #[test]
    fn none_has_no_sensor_and_its_spec_says_every_one_is_off() {
        let none = Sensors::none();
        assert_eq!(fitted(&none), [false; 5]);
        let spec = none.spec();
        let enabled = [
            spec.imu.enabled,
            spec.gps.enabled,
            spec.baro.enabled,
            spec.mag.enabled,
            spec.rangefinder.enabled,
        ];
        assert_eq!(enabled, [false; 5]);
        // The defaults it departs from fit all but the rangefinder.
        let default = SensorsSpec::default();
        assert!(default.imu.enabled && default.gps.enabled && default.baro.enabled);
        assert!(default.mag.enabled && !default.rangefinder.enabled);
    }

    #[test]
    fn every_sensor_asked_for_is_fitted_with_its_own_stream_of_the_seed() {
        let mut spec = all_fitted();
        spec.gps.rate_hz = 5;
        let sensors = build(&spec, 42, 3).expect("valid sensors");
        assert_eq!(fitted(&sensors), [true; 5]);
        assert_eq!(sensors.spec(), &spec);
        assert_eq!(sensors.seed(), 42);
        let sources = [
            NoiseSource::Imu,
            NoiseSource::Gps,
            NoiseSource::Baro,
            NoiseSource::Mag,
            NoiseSource::Rangefinder,
        ];
        for ((name, id), (want, source)) in sensors.streams().iter().zip(NAMES.iter().zip(sources))
        {
            assert_eq!(name, want);
            assert_eq!(*id, stream_id(3, source), "{name}");
        }
        // Another vehicle draws from other streams.
        let other = build(&spec, 42, 4).expect("valid sensors");
        for (a, b) in sensors.streams().iter().zip(other.streams()) {
            assert_ne!(a.1, b.1, "{}", a.0);
        }
    }

    #[test]
    fn a_sensor_left_out_is_absent_and_the_others_stay() {
        for (i, name) in NAMES.iter().enumerate() {
            let mut spec = all_fitted();
            set_enabled(&mut spec, name, false);
            let sensors = build(&spec, 7, 0).expect("valid sensors");
            let mut want = [true; 5];
            want[i] = false;
            assert_eq!(fitted(&sensors), want, "{name} left out");
        }
    }

    #[test]
    fn a_bad_rate_or_parameter_names_its_sensor_and_an_absent_one_is_not_checked() {
        for name in NAMES {
            // 333 Hz does not divide 1 kHz.
            let mut spec = all_fitted();
            match name {
                "imu" => spec.imu.rate_hz = 333,
                "gps" => spec.gps.rate_hz = 333,
                "baro" => spec.baro.rate_hz = 333,
                "mag" => spec.mag.rate_hz = 333,
                _ => spec.rangefinder.rate_hz = 333,
            }
            let rate = spec.validate(PhysicsRate::DEFAULT);
            assert!(
                matches!(rate, Err(SensorError::Rate { sensor, .. }) if sensor == name),
                "{name}: {rate:?}"
            );
            set_enabled(&mut spec, name, false);
            assert_eq!(spec.validate(PhysicsRate::DEFAULT), Ok(()), "{name} absent");

            // A negative noise, latency or range.
            let mut spec = all_fitted();
            match name {
                "imu" => spec.imu.angular_random_walk_deg_sqrt_h = -1.0,
                "gps" => spec.gps.latency_s = -1.0,
                "baro" => spec.baro.noise_sigma_pa = -1.0,
                "mag" => spec.mag.noise_sigma_gauss = -1.0,
                _ => spec.rangefinder.min_m = -1.0,
            }
            let param = spec.validate(PhysicsRate::DEFAULT);
            assert!(
                matches!(param, Err(SensorError::Param { sensor, .. }) if sensor == name),
                "{name}: {param:?}"
            );
            assert!(build(&spec, 1, 0).is_err(), "{name}: built anyway");
            set_enabled(&mut spec, name, false);
            assert_eq!(spec.validate(PhysicsRate::DEFAULT), Ok(()), "{name} absent");
        }
    }

    /// IMU and barometer only, noiseless, the barometer 0.5 m below the CG.
    fn imu_and_baro() -> SensorsSpec {
        let mut spec = SensorsSpec::default();
        spec.gps.enabled = false;
        spec.mag.enabled = false;
        spec.baro.noise_sigma_pa = 0.0;
        spec.baro.drift_sigma_pa = 0.0;
        spec.baro.temperature_noise_degc = 0.0;
        spec.baro.mount.z_m = 0.5;
        spec
    }

    #[test]
    fn the_barometer_reads_the_altitude_of_its_mount_plus_the_fault_offset() {
        let frame = LocalFrame::new(GeoPoint::from_deg(47.397, 8.546, 488.0));
        let world = crate::world::World::calm(frame);
        let mut sensors = build(&imu_and_baro(), 3, 0).expect("valid sensors");
        let state = BodyState {
            pos_ned_m: Vector3::new(3.0, 4.0, -10.0),
            ..BodyState::default()
        };
        let env = world.environment(&state.pos_ned_m, 0, &Vector3::zeros());
        let truth = ImuTruth {
            rate_frd_rad_s: Vector3::zeros(),
            ang_accel_frd_rad_s2: Vector3::zeros(),
            specific_force_frd_m_s2: Vector3::new(0.0, 0.0, -9.8),
        };
        let mut faults = FaultEffects::default();
        let mut altitude = |faults: &FaultEffects| {
            let mut out = TickSamples::default();
            sensors.step(
                &mut out,
                0,
                SimTime::ZERO,
                &state,
                || truth,
                &env,
                &frame,
                100.0,
                faults,
            );
            out.baro.expect("a baro sample").pressure_altitude_m
        };
        // 10 m up, the sensor 0.5 m below the CG: 9.5 m above a 100 m home.
        let level = altitude(&faults);
        assert!((level - 109.5).abs() < 1e-6, "{level}");
        faults.baro_offset_m = -2.0;
        let offset = altitude(&faults);
        assert!((offset - 107.5).abs() < 1e-6, "{offset}");
    }

    /// [`Sensors::step`] into fresh samples.
    #[allow(clippy::too_many_arguments)]
    fn step(
        sensors: &mut Sensors,
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
        sensors.step(
            &mut out,
            tick,
            time,
            state,
            || *truth,
            env,
            frame,
            home_alt_m,
            faults,
        );
        out
    }

    /// The samples are written in place: a tick on which nothing is due
    /// leaves no sample of an earlier tick behind.
    #[test]
    fn a_tick_with_nothing_due_clears_the_last_ticks_samples() {
        let frame = LocalFrame::new(GeoPoint::from_deg(47.397, 8.546, 488.0));
        let world = crate::world::World::calm(frame);
        let mut spec = SensorsSpec::default();
        spec.gps.latency_s = 0.0;
        let mut sensors = build(&spec, 3, 0).expect("valid sensors");
        let state = BodyState::default();
        let env = world.environment(&state.pos_ned_m, 0, &Vector3::zeros());
        let truth = ImuTruth {
            rate_frd_rad_s: Vector3::zeros(),
            ang_accel_frd_rad_s2: Vector3::zeros(),
            specific_force_frd_m_s2: Vector3::new(0.0, 0.0, -9.8),
        };
        let faults = FaultEffects::default();
        let mut out = TickSamples::default();
        let mut at = |out: &mut TickSamples, tick: u64| {
            let t = SimTime::from_micros(tick * 1_000);
            sensors.step(out, tick, t, &state, || truth, &env, &frame, 0.0, &faults);
        };
        at(&mut out, 0);
        let every = (out.imu.is_some(), out.gps.is_some(), out.baro.is_some());
        assert_eq!(every, (true, true, true));
        assert!(out.mag.is_some());
        at(&mut out, 1);
        assert_eq!(out, TickSamples::default());
    }

    #[test]
    fn a_stuck_imu_repeats_its_last_output_at_the_new_time() {
        let frame = LocalFrame::new(GeoPoint::from_deg(47.397, 8.546, 488.0));
        let world = crate::world::World::calm(frame);
        let mut sensors = build(&imu_and_baro(), 3, 0).expect("valid sensors");
        let state = BodyState::default();
        let env = world.environment(&state.pos_ned_m, 0, &Vector3::zeros());
        let truth = |z: f64| ImuTruth {
            rate_frd_rad_s: Vector3::new(0.1, 0.0, 0.0),
            ang_accel_frd_rad_s2: Vector3::zeros(),
            specific_force_frd_m_s2: Vector3::new(0.0, 0.0, z),
        };
        let mut faults = FaultEffects::default();
        let t0 = SimTime::ZERO;
        let first = step(
            &mut sensors,
            0,
            t0,
            &state,
            &truth(-9.8),
            &env,
            &frame,
            0.0,
            &faults,
        );
        let first = first.imu.expect("an IMU sample");
        faults.imu.stuck = true;
        // 250 Hz on a 1 kHz physics: due every fourth tick.
        let t1 = SimTime::from_micros(4_000);
        let stuck = step(
            &mut sensors,
            4,
            t1,
            &state,
            &truth(-20.0),
            &env,
            &frame,
            0.0,
            &faults,
        );
        let stuck = stuck.imu.expect("an IMU sample");
        assert_eq!(stuck.time, t1);
        assert_eq!(
            (stuck.gyro_rad_s, stuck.accel_m_s2),
            (first.gyro_rad_s, first.accel_m_s2)
        );
        faults.imu.stuck = false;
        let t2 = SimTime::from_micros(8_000);
        let free = step(
            &mut sensors,
            8,
            t2,
            &state,
            &truth(-20.0),
            &env,
            &frame,
            0.0,
            &faults,
        );
        let free = free.imu.expect("an IMU sample");
        assert_eq!(free.time, t2);
        assert_ne!(free.accel_m_s2, first.accel_m_s2);
    }
}
