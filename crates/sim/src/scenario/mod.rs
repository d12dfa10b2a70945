//! Scenario files: what a run simulates.
//!
//! Owns the scenario's schema (JSON, every struct `deny_unknown_fields`), its
//! defaults, loading with errors that name the file, line, column and key path
//! ([`load`]), validation of every value, and building the [`Simulation`] and
//! controllers from it ([`build`]). It binds no sockets and starts nothing.
//!
//! Units are in the key names (`_m`, `_deg`, `_m_s`, `_hz`); positions are local
//! NED around `home`; wind is given by where it blows *from*, current by where it
//! flows *towards*.
//!
//! [`Simulation`]: crate::sim::Simulation

pub mod build;
pub mod load;

use serde::{Deserialize, Serialize};

use crate::physics::{BoatOverrides, Integrator, MultirotorOverrides, RoverOverrides};
use crate::sensors::SensorsSpec;
use crate::world::{CurrentSpec, GravityModel, TurbulenceSpec, WindSpec, ZoneSpec};
use mavsitl_core::controller::PassiveSpec;

pub use load::{ScenarioError, ScenarioSource};

/// PX4's default SITL home (Zurich, Irchel park), also ours.
pub const DEFAULT_HOME: Home = Home {
    lat_deg: 47.397742,
    lon_deg: 8.545594,
    alt_m: 488.0,
    heading_deg: 0.0,
};

/// The physics rate of a world SimpleFlight flies whose file leaves it
/// out, Hz, where every vehicle is a multirotor no firmware flies and every
/// rate the file gives divides it
/// ([`Scenario::fit_physics_rate_to_simpleflight`]); any other file that
/// leaves it out steps at [`PhysicsRate::DEFAULT`]. SimpleFlight's loop
/// rate, so the rate its motor commands change at, and PX4's Gazebo step.
/// On the quad square (docs/performance.md, "The physics rate") its path
/// keeps within 3.1 cm of a 4 kHz run's and its landing within 10 ms.
///
/// [`PhysicsRate::DEFAULT`]: mavsitl_core::time::PhysicsRate::DEFAULT
pub const SIMPLEFLIGHT_PHYSICS_RATE_HZ: u32 = 250;

/// A complete, validated scenario.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scenario {
    /// Seed of every noise stream.
    pub seed: u64,
    /// UTC date of the simulated flight (magnetic model, GPS time), read
    /// from `YYYY-MM-DD` once.
    pub date: ScenarioDate,
    /// Physics rate, Hz (250–4000, dividing 1 s into whole µs).
    pub physics_rate_hz: u32,
    /// Default run length, s (the CLI's `--duration` overrides it).
    pub duration_s: f64,
    /// Rigid-body integrator.
    pub integrator: Integrator,
    /// Home: origin of the local NED frame and the vehicles' reference.
    pub home: Home,
    /// Environment.
    pub environment: EnvironmentSpec,
    /// Vehicles (at least one).
    pub vehicles: Vec<VehicleSpec>,
    /// Recording settings.
    pub record: RecordSpec,
    /// Faults injected during the run.
    pub faults: Vec<mavsitl_core::faults::FaultSpec>,
    /// Pairs of vehicles closer than this are encounters (closest approach
    /// recorded), m.
    pub proximity_m: f64,
    /// The geometry cameras and LiDARs see (none: no scene).
    pub scene: Option<mavsitl_render::SceneSpec>,
    /// The rates the file left to their defaults, which follow the physics
    /// rate ([`Scenario::set_physics_rate_hz`]).
    #[serde(skip)]
    defaulted: DefaultedRates,
}

/// Which of a scenario's rates the file left to their defaults. Those below
/// a physics tick move to the physics rate's nearest divider; the physics
/// rate itself only to SimpleFlight's, and only until a caller sets it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct DefaultedRates {
    /// `physics_rate_hz`, and no caller has set it since.
    pub(crate) physics: bool,
    /// `record.ground_truth_rate_hz`.
    pub(crate) ground_truth: bool,
    /// `record.camera_rate_hz`.
    pub(crate) camera: bool,
    /// Per vehicle: its IMU's, GPS's, barometer's, magnetometer's and
    /// rangefinder's rates, and its passive controller's.
    pub(crate) vehicles: Vec<[bool; 6]>,
}

impl Scenario {
    /// Sets the physics rate (Hz, checked when the scenario is built) and
    /// moves every rate the file left to its default onto the new rate's
    /// nearest divider, from the default itself: a bridge that raises the
    /// rate to a multiple of its frame rate gets 200 Hz ground truth back
    /// where 200 divides. The rate is then the caller's: a later
    /// [`Scenario::fit_physics_rate_to_simpleflight`] leaves it.
    pub fn set_physics_rate_hz(&mut self, hz: u32) {
        self.defaulted.physics = false;
        self.step_at(hz);
    }

    /// The physics at `hz`, the defaulted rates refitted to it.
    fn step_at(&mut self, hz: u32) {
        self.physics_rate_hz = hz;
        self.fit_default_rates();
    }

    /// `n` copies of the first vehicle in its place, copy k named its name
    /// and k and `spacing_m` × k further east (m), each with the first's
    /// defaulted rates (so a bridge's physics rate refits every copy).
    /// Nothing changes unless the scenario has exactly one vehicle.
    pub fn repeat_first_vehicle(&mut self, n: usize, spacing_m: f64) {
        let [one] = self.vehicles.as_slice() else {
            return;
        };
        let one = one.clone();
        // No flags (a scenario not read from a file): every rate as given.
        let flags = self.defaulted.vehicles.first().copied().unwrap_or_default();
        self.vehicles = (0..n)
            .map(|k| {
                let mut v = one.clone();
                v.name = format!("{}{k}", one.name);
                v.initial.east_m += spacing_m * k as f64;
                v
            })
            .collect();
        self.defaulted.vehicles = vec![flags; n];
    }

    /// For the world SimpleFlight flies (`mavsitl fly`, `serve`, a suite's
    /// pair; firmware, AirSim's API and open-loop runs do not call it): a
    /// physics rate the file left out, and no caller has set, becomes
    /// [`SIMPLEFLIGHT_PHYSICS_RATE_HZ`], with the defaulted rates refitted
    /// to it, where every vehicle is a multirotor no firmware flies and
    /// every rate the scenario has divides it. Otherwise the rate is left
    /// as it is. Whether the physics is now at SimpleFlight's rate by this
    /// fit.
    pub fn fit_physics_rate_to_simpleflight(&mut self) -> bool {
        let multirotors = self.vehicles.iter().all(|v| {
            v.kind == VehicleKind::Multirotor
                && !matches!(
                    v.controller,
                    ControllerSpec::Px4(_) | ControllerSpec::ArduPilot(_)
                )
        });
        if !(self.defaulted.physics && multirotors) {
            return false;
        }
        let before = self.physics_rate_hz;
        self.step_at(SIMPLEFLIGHT_PHYSICS_RATE_HZ);
        let fits = mavsitl_core::time::PhysicsRate::new(self.physics_rate_hz)
            .is_ok_and(|rate| self.rate_problem(rate).is_none());
        if !fits {
            self.step_at(before);
        }
        fits
    }

    /// Every defaulted rate at the physics rate's divider nearest its
    /// default (the default where it divides). A physics rate out of range
    /// leaves them for the check to name it.
    fn fit_default_rates(&mut self) {
        let Ok(physics) = mavsitl_core::time::PhysicsRate::new(self.physics_rate_hz) else {
            return;
        };
        let fit = |hz: &mut u32, defaulted: bool, default: u32| {
            if defaulted {
                *hz = physics.nearest_divider(default);
            }
        };
        let (d, record, none) = (&self.defaulted, &mut self.record, RecordSpec::default());
        fit(
            &mut record.ground_truth_rate_hz,
            d.ground_truth,
            none.ground_truth_rate_hz,
        );
        fit(&mut record.camera_rate_hz, d.camera, none.camera_rate_hz);
        let sensors = SensorsSpec::default();
        for (v, flags) in self.vehicles.iter_mut().zip(&d.vehicles) {
            let [imu, gps, baro, mag, range, passive] = *flags;
            let s = &mut v.sensors;
            fit(&mut s.imu.rate_hz, imu, sensors.imu.rate_hz);
            fit(&mut s.gps.rate_hz, gps, sensors.gps.rate_hz);
            fit(&mut s.baro.rate_hz, baro, sensors.baro.rate_hz);
            fit(&mut s.mag.rate_hz, mag, sensors.mag.rate_hz);
            fit(
                &mut s.rangefinder.rate_hz,
                range,
                sensors.rangefinder.rate_hz,
            );
            if let ControllerSpec::Passive(p) = &mut v.controller {
                fit(&mut p.rate_hz, passive, PassiveSpec::DEFAULT_RATE_HZ);
            }
        }
    }
}

/// The home point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Home {
    /// Latitude, deg (WGS-84), −90..90.
    pub lat_deg: f64,
    /// Longitude, deg, −180..180.
    pub lon_deg: f64,
    /// Altitude of the ground (or water surface) at home above mean sea level, m.
    pub alt_m: f64,
    /// Heading the vehicles face at start, deg clockwise from north.
    #[serde(default)]
    pub heading_deg: f64,
}

impl Default for Home {
    fn default() -> Self {
        DEFAULT_HOME
    }
}

/// The environment section.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvironmentSpec {
    /// `constant` (9.806 65 m/s²) or `wgs84` (normal gravity by latitude, height).
    #[serde(default)]
    pub gravity: GravityModel,
    /// Mean wind.
    #[serde(default)]
    pub wind: WindSpec,
    /// Dryden turbulence (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turbulence: Option<TurbulenceSpec>,
    /// Water current.
    #[serde(default)]
    pub current: CurrentSpec,
    /// Zones (at most 64).
    #[serde(default)]
    pub zones: Vec<ZoneSpec>,
}

pub use mavsitl_core::vehicle::VehicleKind;

/// Airframe overrides, typed by vehicle kind.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
#[allow(clippy::large_enum_variant)] // a few per scenario, never in a hot path
pub enum AirframeOverrides {
    /// Multirotor fields.
    Multirotor(MultirotorOverrides),
    /// Boat fields.
    Boat(BoatOverrides),
    /// Ground rover fields.
    Rover(RoverOverrides),
}

/// One vehicle.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VehicleSpec {
    /// Name (default: `vehicle<N>`).
    pub name: String,
    /// Kind.
    pub kind: VehicleKind,
    /// A shipped airframe name, or a path to an airframe JSON file (relative to
    /// the scenario file).
    pub airframe: String,
    /// Fields replacing the airframe's.
    pub overrides: AirframeOverrides,
    /// Where and how it starts.
    pub initial: InitialPose,
    /// What flies it.
    pub controller: ControllerSpec,
    /// Its sensors.
    pub sensors: SensorsSpec,
    /// Its battery.
    pub battery: crate::physics::BatteryParams,
    /// RC sticks a firmware in the loop receives (PX4: RC_CHANNELS), if any.
    pub rc: Option<RcScript>,
    /// The sphere it occupies for collisions with other vehicles, m (None:
    /// from the airframe).
    pub collision_radius_m: Option<f64>,
}

/// RC channel values over time, for firmware that wants a transmitter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RcScript {
    /// Messages per second; divides 250 (PX4's step rate); default 50.
    #[serde(default = "default_rc_rate")]
    pub rate_hz: u32,
    /// Points in time order; each holds until the next.
    pub script: Vec<RcPoint>,
}

fn default_rc_rate() -> u32 {
    50
}

/// RC channels from a time on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RcPoint {
    /// From this sim time, s.
    pub t_s: f64,
    /// Channel values, µs (1 to 18 channels, 800–2200).
    pub channels: Vec<u16>,
}

/// Initial pose and motion of a vehicle.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InitialPose {
    /// North of home, m.
    #[serde(default)]
    pub north_m: f64,
    /// East of home, m.
    #[serde(default)]
    pub east_m: f64,
    /// Height above the resting position, m: 0 = standing on its gear (multirotor)
    /// or floating at its waterline (boat).
    #[serde(default)]
    pub height_m: f64,
    /// Roll, deg.
    #[serde(default)]
    pub roll_deg: f64,
    /// Pitch, deg.
    #[serde(default)]
    pub pitch_deg: f64,
    /// Yaw relative to the home heading, deg.
    #[serde(default)]
    pub yaw_deg: f64,
    /// Velocity over ground, NED, m/s.
    #[serde(default)]
    pub velocity_ned_m_s: [f64; 3],
    /// Body rates, FRD, deg/s.
    #[serde(default)]
    pub rates_frd_deg_s: [f64; 3],
    /// Start with the rotors already spinning at these commands (multirotor),
    /// e.g. to start in hover.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotor_commands: Option<Vec<f64>>,
}

/// What flies a vehicle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ControllerSpec {
    /// Constant actuator values.
    Passive(PassiveSpec),
    /// SimpleFlight flying a mission (`mavsitl fly`).
    #[serde(rename = "simpleflight")]
    SimpleFlight(SimpleFlightSpec),
    /// PX4 SITL flying a mission (`mavsitl fly --px4-build`).
    #[serde(rename = "px4")]
    Px4(FirmwareSpec),
    /// ArduPilot SITL flying a mission (`mavsitl fly --ardupilot`).
    #[serde(rename = "ardupilot")]
    ArduPilot(FirmwareSpec),
}

/// A vehicle a firmware flies, launched by mavsitl with mavsitl as its
/// ground station.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FirmwareSpec {
    /// The firmware's instance (its ports), distinct per firmware.
    pub instance: u8,
    /// Its mission (.plan or WPL), relative to the scenario file; None: the
    /// command line's mission.
    #[serde(default)]
    pub mission: Option<std::path::PathBuf>,
    /// Its parameter file (`NAME VALUE` lines), relative to the scenario
    /// file, set at its start-up.
    #[serde(default)]
    pub params: Option<std::path::PathBuf>,
}

/// A vehicle SimpleFlight flies.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimpleFlightSpec {
    /// Its mission (.plan or WPL), relative to the scenario file; None: the
    /// command line's mission.
    #[serde(default)]
    pub mission: Option<std::path::PathBuf>,
    /// Its parameter file, relative to the scenario file.
    #[serde(default)]
    pub params: Option<std::path::PathBuf>,
}

impl Default for ControllerSpec {
    fn default() -> Self {
        ControllerSpec::Passive(PassiveSpec {
            rate_hz: PassiveSpec::DEFAULT_RATE_HZ,
            controls: Vec::new(),
        })
    }
}

/// Recording settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordSpec {
    /// Ground-truth rows per second (divides the physics rate).
    #[serde(default = "default_record_rate")]
    pub ground_truth_rate_hz: u32,
    /// Frames recorded per second of each camera (divides the physics
    /// rate; 0: no images) (default: 20).
    #[serde(default = "default_camera_rate")]
    pub camera_rate_hz: u32,
    /// The images recorded of each frame (default: `scene` and `depth`).
    #[serde(default = "default_images")]
    pub images: Vec<RecordImage>,
    /// The cameras recorded, by name (default: every camera).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cameras: Option<Vec<String>>,
}

/// An image a recording keeps of each camera frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordImage {
    /// The lit scene: 8-bit RGB PNG.
    Scene,
    /// Planar depth: 16-bit grey PNG in millimetres.
    Depth,
    /// The segmentation id: 8-bit grey PNG.
    Segmentation,
}

fn default_record_rate() -> u32 {
    200
}

fn default_camera_rate() -> u32 {
    20
}

fn default_images() -> Vec<RecordImage> {
    vec![RecordImage::Scene, RecordImage::Depth]
}

impl RecordSpec {
    /// The cameras' settings checked against the physics rate: the key
    /// (under `record.`) and what is wrong.
    pub fn camera_problem(
        &self,
        rate: mavsitl_core::time::PhysicsRate,
    ) -> Option<(String, String)> {
        if self.camera_rate_hz != 0 {
            if let Err(e) = rate.divider(self.camera_rate_hz) {
                return Some(("camera_rate_hz".into(), e.to_string()));
            }
        }
        for (i, kind) in self.images.iter().enumerate() {
            if self.images[..i].contains(kind) {
                return Some((format!("images[{i}]"), "is named twice".into()));
            }
        }
        let names = self.cameras.as_deref().unwrap_or_default();
        for (i, name) in names.iter().enumerate() {
            if name.is_empty() || name.len() > 64 {
                return Some((
                    format!("cameras[{i}]"),
                    format!("\"{name}\" must be 1 to 64 bytes"),
                ));
            }
            if names[..i].contains(name) {
                return Some((
                    format!("cameras[{i}]"),
                    format!("\"{name}\" is named twice"),
                ));
            }
        }
        None
    }
}

impl Default for RecordSpec {
    fn default() -> Self {
        RecordSpec {
            ground_truth_rate_hz: default_record_rate(),
            camera_rate_hz: default_camera_rate(),
            images: default_images(),
            cameras: None,
        }
    }
}

/// The default flight date (fixed, so runs never depend on the day they run).
pub const DEFAULT_DATE: &str = "2026-01-01";

/// A UTC calendar date, parsed once when the scenario is read; written back
/// as `YYYY-MM-DD`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScenarioDate(world_magnetic_model::time::Date);

impl ScenarioDate {
    /// The date.
    pub fn date(self) -> world_magnetic_model::time::Date {
        self.0
    }

    /// Unix time of 00:00 UTC that day, µs (0 before 1970).
    pub fn unix_midnight_us(self) -> u64 {
        // Julian day 2 440 588 is 1970-01-01.
        let days = i64::from(self.0.to_julian_day()) - 2_440_588;
        (days.max(0) as u64) * 86_400_000_000
    }
}

impl Default for ScenarioDate {
    fn default() -> Self {
        // DEFAULT_DATE is a valid date (tested).
        parse_date(DEFAULT_DATE).map_or(
            ScenarioDate(world_magnetic_model::time::Date::MIN),
            ScenarioDate,
        )
    }
}

impl std::str::FromStr for ScenarioDate {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        parse_date(text).map(ScenarioDate)
    }
}

impl std::fmt::Display for ScenarioDate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let d = self.0;
        write!(
            f,
            "{:04}-{:02}-{:02}",
            d.year(),
            u8::from(d.month()),
            d.day()
        )
    }
}

impl Serialize for ScenarioDate {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ScenarioDate {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Parses a `YYYY-MM-DD` date.
///
/// # Errors
/// A message saying what is wrong.
pub fn parse_date(text: &str) -> Result<world_magnetic_model::time::Date, String> {
    use world_magnetic_model::time::{Date, Month};
    let parts: Vec<&str> = text.split('-').collect();
    let bad = || format!("'{text}' is not a date as YYYY-MM-DD");
    let [y, m, d] = parts.as_slice() else {
        return Err(bad());
    };
    let year: i32 = y.parse().map_err(|_| bad())?;
    let month: u8 = m.parse().map_err(|_| bad())?;
    let day: u8 = d.parse().map_err(|_| bad())?;
    let month = Month::try_from(month).map_err(|_| bad())?;
    Date::from_calendar_date(year, month, day).map_err(|e| format!("'{text}': {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_date_is_read_once_and_written_back_as_it_was() {
        let d: ScenarioDate = serde_json::from_str("\"2027-07-02\"").unwrap();
        assert_eq!(d.to_string(), "2027-07-02");
        assert_eq!(serde_json::to_string(&d).unwrap(), "\"2027-07-02\"");
        assert_eq!(ScenarioDate::default().to_string(), DEFAULT_DATE);
        let midnight = |d: &str| d.parse::<ScenarioDate>().unwrap().unix_midnight_us();
        assert_eq!(midnight("1970-01-02"), 86_400_000_000);
        // 2027-07-02T00:00:00Z is 1 814 486 400 s after the epoch; a day
        // before it, 0.
        assert_eq!(midnight("2027-07-02"), 1_814_486_400_000_000);
        assert_eq!(midnight("1969-12-31"), 0);
        let e = serde_json::from_str::<ScenarioDate>("\"2027-02-30\"").unwrap_err();
        assert!(e.to_string().contains("2027-02-30"), "{e}");
        assert!("2027-7".parse::<ScenarioDate>().is_err());
    }

    /// An RC script without a rate sends 50 messages a second; a record
    /// block without a rate writes 200 ground-truth rows a second; a given
    /// rate is kept.
    #[test]
    fn rates_left_out_take_their_defaults() {
        let rc: RcScript =
            serde_json::from_str(r#"{"script": [{"t_s": 0, "channels": [1500]}]}"#).unwrap();
        assert_eq!(rc.rate_hz, 50);
        let rc: RcScript = serde_json::from_str(r#"{"rate_hz": 25, "script": []}"#).unwrap();
        assert_eq!(rc.rate_hz, 25);
        let r: RecordSpec = serde_json::from_str("{}").unwrap();
        assert_eq!(r.ground_truth_rate_hz, 200);
        assert_eq!(RecordSpec::default().ground_truth_rate_hz, 200);
        // The cameras: 20 frames a second of the scene and the depth, of
        // every camera.
        assert_eq!(r.camera_rate_hz, 20);
        assert_eq!(r.images, [RecordImage::Scene, RecordImage::Depth]);
        assert_eq!(r.cameras, None);
        assert_eq!(RecordSpec::default(), r);
        let rate = mavsitl_core::time::PhysicsRate::new(1000).unwrap();
        let named = |n: &str| RecordSpec {
            cameras: Some(vec![n.to_string()]),
            ..RecordSpec::default()
        };
        assert_eq!(named(&"x".repeat(64)).camera_problem(rate), None);
        assert_eq!(
            named(&"x".repeat(65)).camera_problem(rate).map(|(k, _)| k),
            Some("cameras[0]".to_string())
        );
        assert_eq!(
            named("").camera_problem(rate).map(|(_, m)| m),
            Some("\"\" must be 1 to 64 bytes".to_string())
        );
        let r: RecordSpec = serde_json::from_str(r#"{"ground_truth_rate_hz": 100}"#).unwrap();
        assert_eq!(r.ground_truth_rate_hz, 100);
    }
}
