//! The `FlightController` seam and the types that cross it.
//!
//! Every controller — the built-in autopilot, a PX4 or ArduPilot bridge, or the
//! `passive` test controller here — plugs into the lockstep loop through
//! [`FlightController`]: it hands over [`Actuators`] for the coming interval, the
//! loop advances physics by that interval, and the controller receives the
//! [`SensorFrame`] produced at its end. A bridge's wait for the firmware's packet
//! inside `actuators` *is* the lockstep.
//!
//! Actuator values are normalised commands whose meaning the vehicle's actuator
//! model defines: for a multirotor, 0..1 per motor in PX4's motor order; for a
//! boat, −1..1 on the channels its layout names.

use nalgebra::{UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::samples::{
    BaroSample, GpsSample, ImuSample, MagSample, RangeSample, SampleBuf, TickSamples,
};
use crate::time::SimTime;

/// Number of actuator channels (as MAVLink's HIL_ACTUATOR_CONTROLS).
pub const MAX_ACTUATORS: usize = 16;

/// Normalised actuator commands for one interval.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Actuators {
    /// One value per channel; see the module docs for their meaning.
    pub controls: [f64; MAX_ACTUATORS],
}

impl Actuators {
    /// Commands from the first values of a slice (the rest zero).
    pub fn from_slice(values: &[f64]) -> Self {
        let mut a = Actuators::default();
        for (c, v) in a.controls.iter_mut().zip(values) {
            *c = *v;
        }
        a
    }
}

/// The true state of a vehicle, for controllers that explicitly ask for it and
/// for recorders. An autopilot never gets it by accident.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroundTruth {
    /// Position of the CG, local NED, m.
    pub pos_ned_m: Vector3<f64>,
    /// Velocity over ground, NED, m/s.
    pub vel_ned_m_s: Vector3<f64>,
    /// Attitude, FRD body → NED.
    pub att_ned_frd: UnitQuaternion<f64>,
    /// Body rates, FRD, rad/s.
    pub rate_frd_rad_s: Vector3<f64>,
    /// Mean acceleration over the last tick, NED, m/s².
    pub accel_ned_m_s2: Vector3<f64>,
    /// Specific force (what an ideal accelerometer at the CG reads), FRD, m/s².
    pub specific_force_frd_m_s2: Vector3<f64>,
    /// Mean angular acceleration over the last tick, FRD, rad/s².
    pub ang_accel_frd_rad_s2: Vector3<f64>,
    /// Whether the vehicle rests on the ground (or floats, for boats: false).
    pub landed: bool,
    /// Wind at the vehicle over the last tick (mean and gusts), NED, m/s:
    /// the air moves at this velocity.
    pub wind_ned_m_s: Vector3<f64>,
}

/// What a controller receives at the end of its interval: every sensor sample
/// produced during the interval, oldest first, with its own timestamp.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SensorFrame {
    /// Sim time at the end of the interval.
    pub time: SimTime,
    /// IMU samples.
    pub imu: SampleBuf<ImuSample, 64>,
    /// GPS reports delivered in the interval.
    pub gps: SampleBuf<GpsSample, 8>,
    /// Barometer samples.
    pub baro: SampleBuf<BaroSample, 16>,
    /// Magnetometer samples.
    pub mag: SampleBuf<MagSample, 16>,
    /// Rangefinder samples.
    pub range: SampleBuf<RangeSample, 16>,
    /// The power module's reading at the end of the interval.
    pub battery: Option<PowerModuleSample>,
    /// The true state, only if the controller asked for it.
    pub ground_truth: Option<GroundTruth>,
    /// Link faults in force (RC lost, ground-station link lost).
    pub links: crate::faults::LinkFaults,
    /// The ESCs' rotor-speed telemetry at the end of the interval
    /// (multirotors).
    pub esc: Option<EscSample>,
}

/// What a multirotor's ESCs report: each rotor's speed.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct EscSample {
    /// Rotor speed per motor (motor order), rad/s.
    pub speed_rad_s: [f64; 8],
    /// Number of motors.
    pub count: usize,
}

/// What a battery power module measures: the controller's view of the pack.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PowerModuleSample {
    /// Terminal voltage, V.
    pub voltage_v: f64,
    /// Current drawn, A.
    pub current_a: f64,
    /// Charge used since start, mAh.
    pub consumed_mah: f64,
    /// Energy used since start, J.
    pub consumed_j: f64,
    /// Remaining charge, 0..1.
    pub remaining: f64,
}

impl SensorFrame {
    /// Adds one tick's samples.
    pub fn collect(&mut self, s: &TickSamples) {
        if let Some(x) = s.imu {
            self.imu.push(x);
        }
        if let Some(x) = s.gps {
            self.gps.push(x);
        }
        if let Some(x) = s.baro {
            self.baro.push(x);
        }
        if let Some(x) = s.mag {
            self.mag.push(x);
        }
        if let Some(x) = s.range {
            self.range.push(x);
        }
    }

    /// Empties the frame for the next interval.
    pub fn clear(&mut self) {
        self.imu.clear();
        self.gps.clear();
        self.baro.clear();
        self.mag.clear();
        self.range.clear();
        self.battery = None;
        self.ground_truth = None;
    }
}

/// Why a controller could not go on.
#[derive(Debug, Error)]
pub enum ControllerError {
    /// The peer (firmware, GCS) went away or stopped answering.
    #[error("{0}")]
    Disconnected(String),
    /// The peer restarted (a new connection, or its frame count went back):
    /// the run may start over with it. The text says how it showed.
    #[error("{0}")]
    Restarted(String),
    /// The run was interrupted (Ctrl-C) while the controller waited.
    #[error("interrupted")]
    Interrupted,
    /// The peer sent something the protocol does not allow.
    #[error("{0}")]
    Protocol(String),
    /// An I/O error on the controller's transport.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Anything that flies a vehicle in the lockstep loop. `Send`: the loop may
/// step a world's vehicles and their controllers on several threads.
pub trait FlightController: Send {
    /// A short name for logs and errors.
    fn name(&self) -> &str;

    /// The controller's rate, Hz: it must divide the physics rate.
    fn rate_hz(&self) -> u32;

    /// Actuator commands for the interval starting at `now`. A bridge blocks here
    /// until the firmware answers.
    ///
    /// # Errors
    /// [`ControllerError`] when the controller cannot produce commands.
    fn actuators(&mut self, now: SimTime) -> Result<Actuators, ControllerError>;

    /// The sensor frame at the end of the interval.
    ///
    /// # Errors
    /// [`ControllerError`] when the frame cannot be delivered.
    fn receive(&mut self, frame: &SensorFrame) -> Result<(), ControllerError>;

    /// Whether the loop should hand this controller the true state.
    fn wants_ground_truth(&self) -> bool {
        false
    }

    /// The highest mission item (0-based sequence) reached so far, if the
    /// controller knows (faults may start on it).
    fn mission_progress(&self) -> Option<u32> {
        None
    }
}

/// Configuration of the `passive` controller.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PassiveSpec {
    /// Rate at which it hands over its (constant) commands, Hz.
    #[serde(default = "default_passive_rate")]
    pub rate_hz: u32,
    /// The constant actuator values, up to 16 channels.
    #[serde(default)]
    pub controls: Vec<f64>,
}

impl PassiveSpec {
    /// The rate it hands over at unless told, Hz.
    pub const DEFAULT_RATE_HZ: u32 = 250;
}

fn default_passive_rate() -> u32 {
    PassiveSpec::DEFAULT_RATE_HZ
}

/// A controller that always commands the same actuator values: for testing
/// physics without an autopilot.
#[derive(Debug, Clone)]
pub struct Passive {
    actuators: Actuators,
    rate_hz: u32,
}

impl Passive {
    /// A passive controller from its spec.
    pub fn new(spec: &PassiveSpec) -> Self {
        Passive {
            actuators: Actuators::from_slice(&spec.controls),
            rate_hz: spec.rate_hz,
        }
    }
}

impl FlightController for Passive {
    fn name(&self) -> &str {
        "passive"
    }

    fn rate_hz(&self) -> u32 {
        self.rate_hz
    }

    fn actuators(&mut self, _now: SimTime) -> Result<Actuators, ControllerError> {
        Ok(self.actuators)
    }

    fn receive(&mut self, _frame: &SensorFrame) -> Result<(), ControllerError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::samples::{BaroSample, ImuSample, TickSamples};
    use nalgebra::Vector3;

    #[test]
    fn actuators_take_the_first_values_and_zero_the_rest() {
        let a = Actuators::from_slice(&[0.25, -0.5, 1.0]);
        assert_eq!(&a.controls[..4], &[0.25, -0.5, 1.0, 0.0]);
        assert!(a.controls[3..].iter().all(|c| *c == 0.0));
        let long: Vec<f64> = (0..MAX_ACTUATORS + 4).map(|i| i as f64).collect();
        let a = Actuators::from_slice(&long);
        assert_eq!(a.controls[MAX_ACTUATORS - 1], (MAX_ACTUATORS - 1) as f64);
    }

    /// A tick's samples go into the frame; clearing it empties every list
    /// and forgets the battery and the true state.
    #[test]
    fn a_frame_collects_a_ticks_samples_and_clears() {
        let t = SimTime::from_micros(4000);
        let imu = ImuSample {
            time: t,
            gyro_rad_s: Vector3::new(0.1, 0.0, 0.0),
            accel_m_s2: Vector3::new(0.0, 0.0, -9.8),
        };
        let baro = BaroSample {
            time: t,
            pressure_pa: 101_325.0,
            temperature_degc: 15.0,
            pressure_altitude_m: 0.0,
        };
        let mut f = SensorFrame::default();
        f.collect(&TickSamples {
            imu: Some(imu),
            baro: Some(baro),
            ..TickSamples::default()
        });
        f.collect(&TickSamples {
            imu: Some(imu),
            ..TickSamples::default()
        });
        assert_eq!((f.imu.len(), f.baro.len(), f.gps.len()), (2, 1, 0));
        assert_eq!((f.mag.len(), f.range.len()), (0, 0));
        assert_eq!(f.baro.last(), Some(&baro));
        f.battery = Some(PowerModuleSample::default());
        f.clear();
        assert!(f.imu.is_empty() && f.baro.is_empty() && f.battery.is_none());
        assert!(f.ground_truth.is_none());
    }

    /// `passive` hands over its spec's commands at its rate (250 Hz unless
    /// given), asks for no true state and knows no mission.
    #[test]
    fn passive_commands_what_its_spec_says() {
        let spec: PassiveSpec = serde_json::from_str(r#"{"controls": [0.5, 0.25]}"#).expect("spec");
        assert_eq!(spec.rate_hz, 250);
        let mut p = Passive::new(&spec);
        assert_eq!((p.name(), p.rate_hz()), ("passive", 250));
        let a = p.actuators(SimTime::ZERO).expect("commands");
        assert_eq!(&a.controls[..3], &[0.5, 0.25, 0.0]);
        assert!(!p.wants_ground_truth());
        assert_eq!(p.mission_progress(), None);
        let fast = Passive::new(&PassiveSpec {
            rate_hz: 400,
            controls: vec![],
        });
        assert_eq!(fast.rate_hz(), 400);
    }
}
