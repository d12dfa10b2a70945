//! Loading a scenario file: parse, type-check and validate, with errors that say
//! where.
//!
//! Every error is one line: `FILE:LINE:COLUMN: KEY.PATH: what is wrong` for a
//! parse or type error (unknown key, wrong type, bad JSON — NaN is not JSON), or
//! `FILE: KEY.PATH: what is wrong` for a value that parses but is out of range.
//! Airframe overrides are parsed from the borrowed text of the file, so their
//! errors point at the exact line too.

use std::path::{Path, PathBuf};

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::value::RawValue;
use thiserror::Error;

use super::{
    AirframeOverrides, ControllerSpec, EnvironmentSpec, Home, InitialPose, RecordSpec, Scenario,
    VehicleKind, VehicleSpec,
};
use crate::physics::BatteryParams;
use crate::physics::{
    airframes, BoatParams, Integrator, MultirotorParams, ParamError, RoverParams,
};
use crate::sensors::SensorsSpec;
use crate::world::zones::MAX_ZONES;
use crate::world::ZoneShape;
use mavsitl_core::time::show;
use mavsitl_core::time::PhysicsRate;

/// Where a scenario's text came from (for messages and relative paths).
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioSource {
    /// Name shown in messages (the path as given).
    pub name: String,
    /// Directory that relative paths inside the file are resolved against.
    pub base_dir: PathBuf,
}

/// A scenario that could not be loaded.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("{file}: cannot read: {message}")]
    Read {
        /// The file.
        file: String,
        /// The OS's reason.
        message: String,
    },
    /// Not valid JSON, an unknown key, or a value of the wrong type.
    #[error("{file}:{line}:{column}: {key}: {message}")]
    Parse {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// Key path, e.g. `vehicles[0].overrides.mass_kg` (`.` for the top).
        key: String,
        /// What is wrong.
        message: String,
    },
    /// A value parsed but is not acceptable.
    #[error("{file}: {key}: {message}")]
    Invalid {
        /// The file.
        file: String,
        /// Key path.
        key: String,
        /// What is wrong.
        message: String,
    },
}

impl ScenarioError {
    fn invalid(file: &str, key: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError::Invalid {
            file: file.to_string(),
            key: key.into(),
            message: message.into(),
        }
    }

    /// The process exit code for this error (2: bad input).
    pub fn exit_code(&self) -> i32 {
        2
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioFile<'a> {
    #[serde(default)]
    seed: u64,
    #[serde(default)]
    date: super::ScenarioDate,
    #[serde(default)]
    physics_rate_hz: Option<u32>,
    #[serde(default = "default_duration")]
    duration_s: f64,
    #[serde(default)]
    integrator: Integrator,
    #[serde(default)]
    home: Home,
    #[serde(default)]
    environment: EnvironmentSpec,
    #[serde(borrow)]
    vehicles: Vec<VehicleFile<'a>>,
    #[serde(default)]
    record: RecordSpec,
    #[serde(default)]
    faults: Vec<mavsitl_core::faults::FaultSpec>,
    #[serde(default = "default_proximity")]
    proximity_m: f64,
    #[serde(default)]
    scene: Option<mavsitl_render::SceneSpec>,
}

fn default_proximity() -> f64 {
    crate::encounter::DEFAULT_PROXIMITY_M
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VehicleFile<'a> {
    #[serde(default)]
    name: Option<String>,
    kind: VehicleKind,
    airframe: Option<String>,
    #[serde(borrow, default)]
    overrides: Option<&'a RawValue>,
    #[serde(default)]
    initial: InitialPose,
    #[serde(default)]
    controller: ControllerSpec,
    #[serde(default)]
    sensors: SensorsSpec,
    #[serde(default)]
    battery: BatteryParams,
    #[serde(default)]
    rc: Option<super::RcScript>,
    #[serde(default)]
    collision_radius_m: Option<f64>,
}

/// Which of the rates that have defaults a scenario file gave: a rate left
/// out takes its default, moved to the physics rate's nearest divider
/// where the default does not divide it ([`defaulted_rates`]). Read
/// beside [`ScenarioFile`], whose parse has already checked the types.
#[derive(Deserialize, Default)]
#[serde(default)]
struct GivenRates {
    record: GivenRecord,
    vehicles: Vec<GivenVehicle>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct GivenRecord {
    ground_truth_rate_hz: Option<IgnoredAny>,
    camera_rate_hz: Option<IgnoredAny>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct GivenVehicle {
    sensors: GivenSensors,
    controller: GivenRate,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct GivenSensors {
    imu: GivenRate,
    gps: GivenRate,
    baro: GivenRate,
    mag: GivenRate,
    rangefinder: GivenRate,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct GivenRate {
    rate_hz: Option<IgnoredAny>,
}

/// Which rates the file left to their defaults, per [`GivenRates`]: they
/// follow the physics rate, so that a physics rate alone (250 Hz, PX4's
/// and Gazebo's step; 400 or 800 Hz) needs no other key: 200 Hz ground
/// truth becomes 250 Hz at 250 Hz, a 250 Hz IMU 200 Hz at 400 Hz. A rate
/// the file gave is kept, and the check that follows names it if it does
/// not divide.
fn defaulted_rates(vehicles: usize, given: &GivenRates) -> super::DefaultedRates {
    let none = GivenVehicle::default();
    let left = |r: &GivenRate| r.rate_hz.is_none();
    super::DefaultedRates {
        // Read from the typed parse, which has it.
        physics: false,
        ground_truth: given.record.ground_truth_rate_hz.is_none(),
        camera: given.record.camera_rate_hz.is_none(),
        vehicles: (0..vehicles)
            .map(|i| {
                let g = given.vehicles.get(i).unwrap_or(&none);
                let s = &g.sensors;
                [
                    left(&s.imu),
                    left(&s.gps),
                    left(&s.baro),
                    left(&s.mag),
                    left(&s.rangefinder),
                    left(&g.controller),
                ]
            })
            .collect(),
    }
}

fn default_duration() -> f64 {
    60.0
}

/// Line and column (1-based) of byte `offset` in `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// Typed parse of `text` (a sub-slice of `whole` starting at `offset`) with the
/// key path prefixed by `prefix`.
fn parse_at<'de, T: Deserialize<'de>>(
    file: &str,
    whole: &str,
    text: &'de str,
    prefix: &str,
) -> Result<T, ScenarioError> {
    let offset = (text.as_ptr() as usize).saturating_sub(whole.as_ptr() as usize);
    let de = &mut serde_json::Deserializer::from_str(text);
    let value = serde_path_to_error::deserialize(&mut *de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        // serde_json counts lines from 1 within `text`; columns restart per line.
        let (base_line, base_col) = line_col(whole, offset);
        let (line, column) = if inner.line() <= 1 {
            (base_line, base_col + inner.column().saturating_sub(1))
        } else {
            (base_line + inner.line() - 1, inner.column())
        };
        let key = match (prefix.is_empty(), path.as_str()) {
            (true, ".") | (true, "") => ".".to_string(),
            (true, p) => p.to_string(),
            (false, ".") | (false, "") => prefix.to_string(),
            (false, p) => format!("{prefix}.{p}"),
        };
        ScenarioError::Parse {
            file: file.to_string(),
            line,
            column,
            key,
            message: strip_position(&inner.to_string()),
        }
    })?;
    // Nothing but white space may follow the value.
    de.end().map_err(|inner| {
        let (base_line, base_col) = line_col(whole, offset);
        let (line, column) = if inner.line() <= 1 {
            (base_line, base_col + inner.column().saturating_sub(1))
        } else {
            (base_line + inner.line() - 1, inner.column())
        };
        ScenarioError::Parse {
            file: file.to_string(),
            line,
            column,
            key: if prefix.is_empty() {
                ".".into()
            } else {
                prefix.to_string()
            },
            message: "text after the end of the JSON object".into(),
        }
    })?;
    Ok(value)
}

/// serde_json appends " at line L column C"; we print the position ourselves.
fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

impl Scenario {
    /// Reads and validates a scenario file.
    ///
    /// # Errors
    /// [`ScenarioError`] naming the file, line, column and key of the problem.
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError::Read {
            file: name.clone(),
            message: e.to_string(),
        })?;
        let base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Scenario::from_json(&text, &ScenarioSource { name, base_dir })
    }

    /// Parses and validates scenario JSON text.
    ///
    /// # Errors
    /// [`ScenarioError`] naming the source, line, column and key of the problem.
    pub fn from_json(text: &str, source: &ScenarioSource) -> Result<Scenario, ScenarioError> {
        // Editors may start a file with a UTF-8 byte-order mark.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let file = source.name.as_str();
        let raw: ScenarioFile<'_> = parse_at(file, text, text, "")?;
        let mut vehicles = Vec::with_capacity(raw.vehicles.len());
        for (i, v) in raw.vehicles.iter().enumerate() {
            let key = format!("vehicles[{i}]");
            let overrides = match (v.kind, v.overrides) {
                (VehicleKind::Multirotor, Some(o)) => AirframeOverrides::Multirotor(parse_at(
                    file,
                    text,
                    o.get(),
                    &format!("{key}.overrides"),
                )?),
                (VehicleKind::Multirotor, None) => {
                    AirframeOverrides::Multirotor(Default::default())
                }
                (VehicleKind::Boat, Some(o)) => AirframeOverrides::Boat(parse_at(
                    file,
                    text,
                    o.get(),
                    &format!("{key}.overrides"),
                )?),
                (VehicleKind::Boat, None) => AirframeOverrides::Boat(Default::default()),
                (VehicleKind::Rover, Some(o)) => AirframeOverrides::Rover(parse_at(
                    file,
                    text,
                    o.get(),
                    &format!("{key}.overrides"),
                )?),
                (VehicleKind::Rover, None) => AirframeOverrides::Rover(Default::default()),
            };
            let airframe = v.airframe.clone().unwrap_or_else(|| {
                match v.kind {
                    VehicleKind::Multirotor => "generic_quad",
                    VehicleKind::Boat => "usv_twin",
                    VehicleKind::Rover => "jackal",
                }
                .to_string()
            });
            vehicles.push(VehicleSpec {
                name: v.name.clone().unwrap_or_else(|| format!("vehicle{i}")),
                kind: v.kind,
                airframe,
                overrides,
                initial: v.initial.clone(),
                controller: v.controller.clone(),
                sensors: v.sensors.clone(),
                battery: v.battery,
                rc: v.rc.clone(),
                collision_radius_m: v.collision_radius_m,
            });
        }
        let scenario = Scenario {
            seed: raw.seed,
            date: raw.date,
            physics_rate_hz: raw
                .physics_rate_hz
                .unwrap_or_else(|| PhysicsRate::DEFAULT.hz()),
            duration_s: raw.duration_s,
            integrator: raw.integrator,
            home: raw.home,
            environment: raw.environment,
            vehicles,
            record: raw.record,
            faults: raw.faults,
            proximity_m: raw.proximity_m,
            scene: raw.scene,
            defaulted: super::DefaultedRates::default(),
        };
        let mut scenario = scenario;
        // The file parsed above, so its shape is known good; should this
        // second reading fail all the same, every rate stays as parsed.
        if let Ok(given) = serde_json::from_str::<GivenRates>(text) {
            scenario.defaulted = defaulted_rates(scenario.vehicles.len(), &given);
            scenario.fit_default_rates();
        }
        scenario.defaulted.physics = raw.physics_rate_hz.is_none();
        if let Some(scene) = &mut scenario.scene {
            scene
                .read_files(&source.base_dir)
                .map_err(|e| ScenarioError::invalid(&source.name, "scene", e.to_string()))?;
        }
        scenario.validate(source)?;
        Ok(scenario)
    }

    /// Checks every value that parsed for range and consistency, and that every
    /// airframe resolves.
    ///
    /// # Errors
    /// [`ScenarioError::Invalid`] naming the key.
    pub fn validate(&self, source: &ScenarioSource) -> Result<(), ScenarioError> {
        let file = source.name.as_str();
        let bad = |key: &str, msg: String| Err(ScenarioError::invalid(file, key, msg));
        let rate = match PhysicsRate::new(self.physics_rate_hz) {
            Ok(r) => r,
            Err(e) => return bad("physics_rate_hz", e.to_string()),
        };
        if !(self.duration_s.is_finite() && self.duration_s > 0.0 && self.duration_s <= 1e7) {
            return bad(
                "duration_s",
                format!("{} is not within (0, 1e7] s", show(self.duration_s)),
            );
        }
        check_home(&self.home).or_else(|(k, m)| bad(&format!("home.{k}"), m))?;
        if let Some((k, m)) = self.rate_problem(rate) {
            return bad(&k, m);
        }
        self.validate_environment().or_else(|(k, m)| bad(&k, m))?;
        if self.vehicles.is_empty() {
            return bad("vehicles", "at least one vehicle is needed".into());
        }
        if !(self.proximity_m.is_finite() && self.proximity_m > 0.0 && self.proximity_m <= 10_000.0)
        {
            return bad(
                "proximity_m",
                format!("{} is not within (0, 10000] m", show(self.proximity_m)),
            );
        }
        let mut actuators = Vec::with_capacity(self.vehicles.len());
        for (i, v) in self.vehicles.iter().enumerate() {
            let key = format!("vehicles[{i}]");
            if let Some(why) = name_problem(&v.name) {
                return bad(&format!("{key}.name"), why);
            }
            if self.vehicles[..i].iter().any(|o| o.name == v.name) {
                return bad(
                    &format!("{key}.name"),
                    format!("'{}' is used by another vehicle", v.name),
                );
            }
            actuators.push(Actuators::of(&self.resolve_airframe(i, source)?));
            check_initial(&v.initial).or_else(|(k, m)| bad(&format!("{key}.initial.{k}"), m))?;
            if let Err(e) = v.battery.validate() {
                return bad(&format!("{key}.{}", e.field), e.problem);
            }
            if let Some(rc) = &v.rc {
                check_rc(rc).or_else(|(k, m)| bad(&format!("{key}.rc.{k}"), m))?;
            }
            if let Some(r) = v.collision_radius_m {
                if !(r.is_finite() && r > 0.0 && r <= 100.0) {
                    return bad(
                        &format!("{key}.collision_radius_m"),
                        format!("{} is not within (0, 100] m", show(r)),
                    );
                }
            }
            self.check_controller(i)
                .or_else(|(k, m)| bad(&format!("{key}.controller.{k}"), m))?;
        }
        self.validate_faults(&actuators)
            .or_else(|(k, m)| bad(&k, m))?;
        if let Some(scene) = &self.scene {
            if let Err(e) = mavsitl_render::Scene::build(scene) {
                return bad("scene", e.to_string());
            }
        }
        Ok(())
    }

    /// Wind, current, turbulence and zones.
    fn validate_environment(&self) -> Result<(), (String, String)> {
        let env = &self.environment;
        finite_nonneg("environment.wind.speed_m_s", env.wind.speed_m_s, 100.0)
            .and(finite("environment.wind.from_deg", env.wind.from_deg))
            .and(bounded(
                "environment.wind.down_m_s",
                env.wind.down_m_s,
                50.0,
            ))
            .and(finite_nonneg(
                "environment.current.speed_m_s",
                env.current.speed_m_s,
                20.0,
            ))
            .and(finite(
                "environment.current.towards_deg",
                env.current.towards_deg,
            ))?;
        if let Some(w20) = env.turbulence.and_then(|t| t.w20_m_s) {
            finite_nonneg("environment.turbulence.w20_m_s", w20, 100.0)?;
        }
        if env.zones.len() > MAX_ZONES {
            return Err((
                "environment.zones".into(),
                format!("{} zones; at most {MAX_ZONES}", env.zones.len()),
            ));
        }
        for (i, z) in env.zones.iter().enumerate() {
            check_zone(z).map_err(|(k, m)| (format!("environment.zones[{i}].{k}"), m))?;
        }
        Ok(())
    }

    /// The first rate that does not fit physics at `rate`, by its key, and
    /// why: ground truth, the cameras, each vehicle's sensors (their rates
    /// and the rest of their settings) and passive controller.
    pub(crate) fn rate_problem(&self, rate: PhysicsRate) -> Option<(String, String)> {
        if let Err(e) = rate.divider(self.record.ground_truth_rate_hz) {
            return Some(("record.ground_truth_rate_hz".into(), e.to_string()));
        }
        if let Some((k, m)) = self.record.camera_problem(rate) {
            return Some((format!("record.{k}"), m));
        }
        self.vehicles.iter().enumerate().find_map(|(i, v)| {
            if let Err(e) = v.sensors.validate(rate) {
                return Some((format!("vehicles[{i}].sensors"), e.to_string()));
            }
            match &v.controller {
                ControllerSpec::Passive(p) => rate
                    .divider(p.rate_hz)
                    .err()
                    .map(|e| (format!("vehicles[{i}].controller.rate_hz"), e.to_string())),
                _ => None,
            }
        })
    }

    /// Vehicle `i`'s controller (key relative to `controller`): a firmware
    /// instance no other vehicle of its kind uses; a passive controller's
    /// commands (its rate is [`Scenario::rate_problem`]'s).
    fn check_controller(&self, i: usize) -> Result<(), (String, String)> {
        let Some(v) = self.vehicles.get(i) else {
            return Ok(());
        };
        match &v.controller {
            ControllerSpec::SimpleFlight(_) => {}
            ControllerSpec::Px4(f) | ControllerSpec::ArduPilot(f) => {
                let same = |o: &VehicleSpec| match (&o.controller, &v.controller) {
                    (ControllerSpec::Px4(g), ControllerSpec::Px4(_))
                    | (ControllerSpec::ArduPilot(g), ControllerSpec::ArduPilot(_)) => {
                        g.instance == f.instance
                    }
                    _ => false,
                };
                if self.vehicles.iter().take(i).any(same) {
                    return Err((
                        "instance".into(),
                        format!("instance {} is another vehicle's", f.instance),
                    ));
                }
            }
            ControllerSpec::Passive(p) => {
                let max = mavsitl_core::controller::MAX_ACTUATORS;
                if p.controls.len() > max {
                    return Err((
                        "controls".into(),
                        format!("{} values; at most {max}", p.controls.len()),
                    ));
                }
                if let Some((j, c)) = p
                    .controls
                    .iter()
                    .enumerate()
                    .find(|(_, c)| !c.is_finite() || c.abs() > 1.0)
                {
                    return Err((
                        format!("controls[{j}]"),
                        format!("{} is outside -1..=1", show(*c)),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Checks each fault, and that its vehicle and zone exist and that the
    /// rotor or thruster it fails is one the vehicle has (`actuators`, per
    /// vehicle): a fault aimed at nothing would log as started and change
    /// nothing.
    fn validate_faults(&self, actuators: &[Actuators]) -> Result<(), (String, String)> {
        for (i, f) in self.faults.iter().enumerate() {
            let key = |k: &str| format!("faults[{i}].{k}");
            f.validate().map_err(|e| (key(&e.key), e.message))?;
            let v = self
                .fault_vehicle(f)
                .ok_or_else(|| (key("vehicle"), "no vehicle of that name".to_string()))?;
            if let Some(a) = actuators.get(v) {
                a.check(f, &self.vehicles[v].name)
                    .map_err(|(k, m)| (key(k), m))?;
            }
            if let Some(z) = &f.zone {
                if self.fault_zone(z).is_none() {
                    return Err((key("zone"), format!("no zone named '{z}'")));
                }
            }
        }
        Ok(())
    }

    /// Why fault `f` would fail nothing on its vehicle — a rotor or thruster
    /// it does not have, a motor failure on a boat (None when it fails
    /// something, or has no vehicle: [`Self::fault_vehicle`] says that).
    pub fn fault_target_problem(
        &self,
        f: &mavsitl_core::faults::FaultSpec,
        source: &ScenarioSource,
    ) -> Option<(String, String)> {
        let v = self.fault_vehicle(f)?;
        let af = self.resolve_airframe(v, source).ok()?;
        Actuators::of(&af)
            .check(f, &self.vehicles[v].name)
            .err()
            .map(|(k, m)| (k.to_string(), m))
    }

    /// The index of the vehicle a fault applies to (the first by default).
    pub fn fault_vehicle(&self, f: &mavsitl_core::faults::FaultSpec) -> Option<usize> {
        match &f.vehicle {
            Some(name) => self.vehicles.iter().position(|v| &v.name == name),
            None => (!self.vehicles.is_empty()).then_some(0),
        }
    }

    /// The index of the zone named `name`.
    pub fn fault_zone(&self, name: &str) -> Option<usize> {
        self.environment.zones.iter().position(|z| z.name == name)
    }

    /// The airframe of vehicle `index` with its overrides applied and validated.
    ///
    /// # Errors
    /// [`ScenarioError`] for an unknown airframe, an unreadable airframe file, or a
    /// value out of range.
    pub fn resolve_airframe(
        &self,
        index: usize,
        source: &ScenarioSource,
    ) -> Result<Airframe, ScenarioError> {
        let file = source.name.as_str();
        let Some(v) = self.vehicles.get(index) else {
            return Err(ScenarioError::invalid(
                file,
                "vehicles",
                format!("no vehicle {index}"),
            ));
        };
        let key = format!("vehicles[{index}]");
        let from_file = v.airframe.ends_with(".json");
        let text_owned;
        let (af_file, text): (String, &str) = if from_file {
            let path = source.base_dir.join(&v.airframe);
            let name = path.display().to_string();
            text_owned = std::fs::read_to_string(&path).map_err(|e| ScenarioError::Read {
                file: name.clone(),
                message: e.to_string(),
            })?;
            (name, text_owned.as_str())
        } else {
            let names: Vec<&str> = match v.kind {
                VehicleKind::Multirotor => airframes::MULTIROTORS.to_vec(),
                VehicleKind::Boat => airframes::BOATS.to_vec(),
                VehicleKind::Rover => airframes::ROVERS.to_vec(),
            };
            match airframes::source(&v.airframe).filter(|_| names.contains(&v.airframe.as_str())) {
                Some(t) => (format!("airframe '{}'", v.airframe), t),
                None => {
                    return Err(ScenarioError::invalid(
                        file,
                        format!("{key}.airframe"),
                        format!(
                        "unknown {:?} airframe '{}' (shipped: {}; or give a path ending in .json)",
                        v.kind,
                        v.airframe,
                        names.join(", ")
                    ),
                    ))
                }
            }
        };
        let param_err = |e: ParamError| {
            ScenarioError::invalid(
                file,
                format!("{key}.overrides.{}", e.field),
                format!("{} (airframe {})", e.problem, v.airframe),
            )
        };
        match (&v.overrides, v.kind) {
            (AirframeOverrides::Multirotor(o), VehicleKind::Multirotor) => {
                let mut p: MultirotorParams = parse_at(&af_file, text, text, "")?;
                p.apply(o);
                p.validate().map_err(param_err)?;
                Ok(Airframe::Multirotor(p))
            }
            (AirframeOverrides::Boat(o), VehicleKind::Boat) => {
                let mut p: BoatParams = parse_at(&af_file, text, text, "")?;
                p.apply(o);
                p.validate().map_err(param_err)?;
                Ok(Airframe::Boat(p))
            }
            (AirframeOverrides::Rover(o), VehicleKind::Rover) => {
                let mut p: RoverParams = parse_at(&af_file, text, text, "")?;
                p.apply(o);
                p.validate().map_err(param_err)?;
                Ok(Airframe::Rover(p))
            }
            _ => Err(ScenarioError::invalid(
                file,
                format!("{key}.overrides"),
                "overrides do not match the vehicle kind",
            )),
        }
    }
}

/// A resolved airframe.
#[derive(Debug, Clone, PartialEq)]
pub enum Airframe {
    /// A multirotor's params.
    Multirotor(MultirotorParams),
    /// A boat's params.
    Boat(BoatParams),
    /// A ground rover's params.
    Rover(RoverParams),
}

type Check = Result<(), (String, String)>;

/// What a vehicle has that a fault can fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Actuators {
    /// A multirotor with this many rotors.
    Rotors(usize),
    /// A boat with this many thrusters.
    Thrusters(usize),
    /// A ground rover with this many drive motors.
    WheelMotors(usize),
}

impl Actuators {
    fn of(af: &Airframe) -> Self {
        match af {
            Airframe::Multirotor(p) => Actuators::Rotors(
                p.rotor_positions_frd_m
                    .as_ref()
                    .map_or(p.frame.motors().len(), Vec::len),
            ),
            Airframe::Boat(b) => Actuators::Thrusters(match b.layout {
                crate::physics::boat::BoatLayout::TwinThrusters => 2,
                crate::physics::boat::BoatLayout::ThrottleRudder => 1,
            }),
            Airframe::Rover(r) => Actuators::WheelMotors(match r.drive {
                crate::physics::RoverDrive::SkidSteer => 2,
                crate::physics::RoverDrive::Ackermann => 1,
            }),
        }
    }

    /// Whether fault `f` fails something vehicle `name` has: the key at
    /// fault and why not.
    fn check(
        self,
        f: &mavsitl_core::faults::FaultSpec,
        name: &str,
    ) -> Result<(), (&'static str, String)> {
        use mavsitl_core::faults::FaultKind;
        match (f.kind, self) {
            (FaultKind::MotorFailure, Actuators::Rotors(n)) => match f.motor {
                Some(m) if (m as usize) < n => Ok(()),
                m => Err((
                    "motor",
                    format!(
                        "{} is not a rotor of '{name}': it has {n}, motors 0..={}",
                        m.map_or("none".into(), |m| m.to_string()),
                        n.saturating_sub(1)
                    ),
                )),
            },
            (FaultKind::ThrusterFailure, Actuators::Thrusters(n)) => match f.thruster {
                Some(t) if (t as usize) < n => Ok(()),
                t => Err((
                    "thruster",
                    format!(
                        "{} is not a thruster of '{name}': it has {n}, thrusters 0..={}",
                        t.map_or("none".into(), |t| t.to_string()),
                        n.saturating_sub(1)
                    ),
                )),
            },
            (FaultKind::MotorFailure, Actuators::Thrusters(_)) => Err((
                "kind",
                format!("'{name}' is a boat: it has thrusters (thruster_failure), not rotors"),
            )),
            (FaultKind::ThrusterFailure, Actuators::Rotors(_)) => Err((
                "kind",
                format!("'{name}' is a multirotor: it has rotors (motor_failure), not thrusters"),
            )),
            (FaultKind::MotorFailure | FaultKind::ThrusterFailure, Actuators::WheelMotors(_)) => {
                Err((
                    "kind",
                    format!(
                        "'{name}' is a rover: it has wheel motors (wheel_motor_failure), \
                         neither rotors nor thrusters"
                    ),
                ))
            }
            (FaultKind::WheelMotorFailure, Actuators::WheelMotors(n)) => match f.motor {
                Some(m) if (m as usize) >= n => Err((
                    "motor",
                    format!(
                        "{m} is not a wheel motor of '{name}': it has {n}, motors 0..={}",
                        n.saturating_sub(1)
                    ),
                )),
                _ => Ok(()),
            },
            (FaultKind::WheelMotorFailure | FaultKind::TyreGrip, Actuators::Rotors(_)) => Err((
                "kind",
                format!("'{name}' is a multirotor: it has neither wheel motors nor tyres"),
            )),
            (FaultKind::WheelMotorFailure | FaultKind::TyreGrip, Actuators::Thrusters(_)) => Err((
                "kind",
                format!("'{name}' is a boat: it has neither wheel motors nor tyres"),
            )),
            _ => Ok(()),
        }
    }
}

fn finite(key: &str, v: f64) -> Check {
    if v.is_finite() {
        Ok(())
    } else {
        Err((
            key.to_string(),
            format!("{} is not a finite number", show(v)),
        ))
    }
}

/// A finite number within ±`max`.
fn bounded(key: &str, v: f64, max: f64) -> Check {
    if v.is_finite() && v.abs() <= max {
        Ok(())
    } else {
        Err((
            key.to_string(),
            format!("{} is outside -{max}..{max}", show(v)),
        ))
    }
}

/// `v` within 0..=`max` (`max` finite, so NaN and infinities are outside).
fn finite_nonneg(key: &str, v: f64, max: f64) -> Check {
    if (0.0..=max).contains(&v) {
        Ok(())
    } else {
        Err((key.to_string(), format!("{} is outside 0..={max}", show(v))))
    }
}

/// Checks the home point.
pub(crate) fn check_home(h: &Home) -> Check {
    // (NaN and infinities are outside the ranges.)
    if !(-90.0..=90.0).contains(&h.lat_deg) {
        return Err((
            "lat_deg".into(),
            format!("{} is outside -90..=90", show(h.lat_deg)),
        ));
    }
    if !(-180.0..=180.0).contains(&h.lon_deg) {
        return Err((
            "lon_deg".into(),
            format!("{} is outside -180..=180", show(h.lon_deg)),
        ));
    }
    if let Some(why) = mavsitl_core::geo::home_alt_problem(h.alt_m) {
        return Err(("alt_m".into(), why));
    }
    finite("heading_deg", h.heading_deg)
}

/// The files a recording keeps once per run, beside the vehicles' folders.
const RUN_FILES: [&str; 4] = [
    "meta.json",
    "zone_events.csv",
    "fault_events.csv",
    "encounters.csv",
];

/// Why `name` cannot name a vehicle (None when it can). A fleet's
/// recordings go in a folder per vehicle named after it, so a name is one
/// path component: not empty, not `.` or `..`, no `/`, `\\` or control
/// characters, at most 64 bytes.
fn name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("a vehicle needs a name (it names its recording folder)".into());
    }
    if name == "." || name == ".." || name.len() > 64 {
        return Some(format!(
            "'{name}' cannot name a recording folder: give 1 to 64 characters, not . or .."
        ));
    }
    if RUN_FILES.contains(&name) {
        return Some(format!(
            "'{name}' is a file of the fleet's own recording: give another name"
        ));
    }
    if name
        .chars()
        .any(|c| c == '/' || c == '\\' || c.is_control())
    {
        return Some(format!(
            "{name:?} cannot name a recording folder: no '/', '\\' or control characters"
        ));
    }
    None
}

fn check_zone(z: &crate::world::ZoneSpec) -> Check {
    match z.shape {
        ZoneShape::Box {
            min_ned_m,
            max_ned_m,
        } => {
            for i in 0..3 {
                finite(&format!("shape.box.min_ned_m[{i}]"), min_ned_m[i])?;
                finite(&format!("shape.box.max_ned_m[{i}]"), max_ned_m[i])?;
                if min_ned_m[i] > max_ned_m[i] {
                    return Err((
                        format!("shape.box.min_ned_m[{i}]"),
                        format!("{} is above max {}", min_ned_m[i], max_ned_m[i]),
                    ));
                }
            }
        }
        ZoneShape::Cylinder {
            center_ne_m,
            radius_m,
            down_min_m,
            down_max_m,
        } => {
            finite("shape.cylinder.center_ne_m[0]", center_ne_m[0])?;
            finite("shape.cylinder.center_ne_m[1]", center_ne_m[1])?;
            finite_nonneg("shape.cylinder.radius_m", radius_m, 1e7)?;
            finite("shape.cylinder.down_min_m", down_min_m)?;
            finite("shape.cylinder.down_max_m", down_max_m)?;
            if down_min_m > down_max_m {
                return Err((
                    "shape.cylinder.down_min_m".into(),
                    format!("{down_min_m} is below down_max_m {down_max_m}"),
                ));
            }
        }
    }
    if let Some(w) = z.wind {
        finite_nonneg("wind.speed_m_s", w.speed_m_s, 100.0)?;
        finite("wind.from_deg", w.from_deg)?;
        bounded("wind.down_m_s", w.down_m_s, 50.0)?;
    }
    if let Some(c) = z.current {
        finite_nonneg("current.speed_m_s", c.speed_m_s, 20.0)?;
        finite("current.towards_deg", c.towards_deg)?;
    }
    if let Some(mu) = z.ground_friction {
        finite_nonneg("ground_friction", mu, 2.0)?;
    }
    if let Some(s) = z.drag_scale {
        finite_nonneg("drag_scale", s, 100.0)?;
    }
    Ok(())
}

fn check_rc(rc: &super::RcScript) -> Check {
    if rc.rate_hz == 0 || 250 % rc.rate_hz != 0 {
        return Err((
            "rate_hz".into(),
            format!("{} does not divide 250 (e.g. 50, 25, 10)", rc.rate_hz),
        ));
    }
    if rc.script.is_empty() {
        return Err(("script".into(), "needs at least one point".into()));
    }
    let mut last = f64::NEG_INFINITY;
    for (i, p) in rc.script.iter().enumerate() {
        if !(p.t_s.is_finite() && p.t_s >= 0.0 && p.t_s > last) {
            return Err((
                format!("script[{i}].t_s"),
                "times must be finite, ≥ 0 and increasing".into(),
            ));
        }
        last = p.t_s;
        if !(1..=18).contains(&p.channels.len()) {
            return Err((format!("script[{i}].channels"), "1 to 18 channels".into()));
        }
        if let Some(v) = p.channels.iter().find(|v| !(800..=2200).contains(*v)) {
            return Err((
                format!("script[{i}].channels"),
                format!("{v} µs is outside 800–2200"),
            ));
        }
    }
    Ok(())
}

fn check_initial(p: &InitialPose) -> Check {
    // Within 100 km of home, as AirSim's poses are: farther, the flat-earth
    // frame and the magnetic model's inputs stop meaning anything.
    bounded("north_m", p.north_m, 100_000.0)?;
    bounded("east_m", p.east_m, 100_000.0)?;
    for (k, v) in [
        ("roll_deg", p.roll_deg),
        ("pitch_deg", p.pitch_deg),
        ("yaw_deg", p.yaw_deg),
    ] {
        finite(k, v)?;
    }
    finite_nonneg("height_m", p.height_m, 10_000.0)?;
    for i in 0..3 {
        // Faster than any vehicle simulated here, or spinning faster than
        // its rotors: a typo, which would only fail once the physics runs.
        bounded(
            &format!("velocity_ned_m_s[{i}]"),
            p.velocity_ned_m_s[i],
            300.0,
        )?;
        bounded(
            &format!("rates_frd_deg_s[{i}]"),
            p.rates_frd_deg_s[i],
            36_000.0,
        )?;
    }
    if let Some(r) = &p.rotor_commands {
        for (i, u) in r.iter().enumerate() {
            finite_nonneg(&format!("rotor_commands[{i}]"), *u, 1.0)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src() -> ScenarioSource {
        ScenarioSource {
            name: "s.json".into(),
            base_dir: std::path::PathBuf::from("."),
        }
    }

    #[test]
    fn text_after_the_object_is_refused_with_its_position() {
        let e = Scenario::from_json("{\"vehicles\":[{\"kind\":\"boat\"}]}\n} extra", &src())
            .expect_err("trailing text");
        assert_eq!(e.exit_code(), 2, "bad input");
        assert_eq!(
            e.to_string(),
            "s.json:2:1: .: text after the end of the JSON object"
        );
        // On the object's own line: the column of the first character after it.
        let text = "{\"vehicles\":[{\"kind\":\"boat\"}]}  extra";
        let e = Scenario::from_json(text, &src()).expect_err("trailing text");
        let column = text.find("extra").expect("there") + 1;
        assert_eq!(
            e.to_string(),
            format!("s.json:1:{column}: .: text after the end of the JSON object")
        );
        // White space after it is fine.
        Scenario::from_json("{\"vehicles\":[{\"kind\":\"boat\"}]}\n\n  ", &src()).expect("ok");
    }

    /// A physics rate alone is a whole scenario: every rate left to its
    /// default moves to the physics rate's nearest divider when the default
    /// does not divide it, and stays when it does; a rate the file gave is
    /// kept and refused by name.
    #[test]
    fn default_rates_fit_the_physics_rate_and_given_ones_are_kept() {
        let rates = |text: &str| {
            let s = Scenario::from_json(text, &src()).expect("valid");
            let v = &s.vehicles[1];
            let passive = match &v.controller {
                ControllerSpec::Passive(p) => p.rate_hz,
                _ => 0,
            };
            let sensors = &v.sensors;
            [
                s.record.ground_truth_rate_hz,
                s.record.camera_rate_hz,
                sensors.imu.rate_hz,
                sensors.gps.rate_hz,
                sensors.baro.rate_hz,
                sensors.mag.rate_hz,
                sensors.rangefinder.rate_hz,
                passive,
            ]
        };
        let two = |physics: &str, second: &str| {
            format!(
                r#"{{{physics}"vehicles":[{{"kind":"multirotor"}},{{"kind":"multirotor"{second}}}]}}"#
            )
        };
        // At 1 kHz, the defaults as they are.
        assert_eq!(rates(&two("", "")), [200, 20, 250, 10, 50, 50, 50, 250]);
        // At 250 Hz: ground truth 250, the camera 25; the rest divide.
        let at_250 = two(r#""physics_rate_hz":250,"#, "");
        assert_eq!(rates(&at_250), [250, 25, 250, 10, 50, 50, 50, 250]);
        // At 400 Hz: the IMU and the passive controller 200.
        let at_400 = two(r#""physics_rate_hz":400,"#, "");
        assert_eq!(rates(&at_400), [200, 20, 200, 10, 50, 50, 50, 200]);
        // Given rates that divide are kept, even where a default would move.
        let given = two(
            r#""physics_rate_hz":400,"record":{"ground_truth_rate_hz":100,"camera_rate_hz":40},"#,
            r#","sensors":{"imu":{"rate_hz":400},"gps":{"rate_hz":5}},"controller":{"kind":"passive","rate_hz":100}"#,
        );
        assert_eq!(rates(&given), [100, 40, 400, 5, 50, 50, 50, 100]);
        // Given rates that do not divide are refused, by name.
        let refused = |text: String, key: &str| {
            let e = Scenario::from_json(&text, &src())
                .expect_err(key)
                .to_string();
            assert!(e.contains(key), "{key}: {e}");
        };
        refused(
            two(
                r#""physics_rate_hz":250,"record":{"ground_truth_rate_hz":200},"#,
                "",
            ),
            "record.ground_truth_rate_hz: 200 Hz is not an integer divider of the 250 Hz",
        );
        refused(
            two(
                r#""physics_rate_hz":400,"#,
                r#","sensors":{"imu":{"rate_hz":250}}"#,
            ),
            "vehicles[1].sensors: imu.rate_hz: 250 Hz is not an integer divider of the 400 Hz",
        );
        refused(
            two(
                r#""physics_rate_hz":400,"#,
                r#","controller":{"kind":"passive","rate_hz":250}"#,
            ),
            "vehicles[1].controller.rate_hz",
        );
        // A bridge that raises the physics rate refits the defaulted rates
        // from their defaults, and keeps the given ones: at 800 Hz ground
        // truth is 200 Hz again, not the 250 Hz of the file's 250 Hz.
        let mut s = Scenario::from_json(&at_250, &src()).expect("valid");
        s.set_physics_rate_hz(800);
        assert_eq!(s.physics_rate_hz, 800);
        assert_eq!(
            (s.record.ground_truth_rate_hz, s.record.camera_rate_hz),
            (200, 20)
        );
        assert_eq!(s.vehicles[1].sensors.imu.rate_hz, 200);
        let mut s = Scenario::from_json(&given, &src()).expect("valid");
        s.set_physics_rate_hz(2000);
        assert_eq!(
            (s.record.ground_truth_rate_hz, s.record.camera_rate_hz),
            (100, 40)
        );
        assert_eq!(s.vehicles[1].sensors.imu.rate_hz, 400);
        assert_eq!(s.vehicles[1].sensors.baro.rate_hz, 50);
        // The first vehicle's given IMU rate is the first vehicle's alone.
        let first = r#"{"physics_rate_hz":400,"vehicles":[{"kind":"multirotor","sensors":{"imu":{"rate_hz":400}}},{"kind":"multirotor"}]}"#;
        assert_eq!(rates(first)[2], 200);
    }

    /// SimpleFlight's world steps at its 250 Hz where the file leaves the
    /// physics rate out, every vehicle is a multirotor no firmware flies,
    /// and every rate the file gives divides 250 Hz; anything else keeps
    /// the rate the file gave or 1 kHz, with the defaulted rates as they
    /// were.
    #[test]
    fn simpleflight_steps_its_own_rate_only_where_the_world_allows() {
        let fit = |text: &str| {
            let mut s = Scenario::from_json(text, &src()).expect(text);
            let moved = s.fit_physics_rate_to_simpleflight();
            let r = &s.record;
            let imu = s.vehicles[0].sensors.imu.rate_hz;
            (
                moved,
                s.physics_rate_hz,
                r.ground_truth_rate_hz,
                r.camera_rate_hz,
                imu,
            )
        };
        let quads = |extra: &str, second: &str| {
            format!(r#"{{{extra}"vehicles":[{{"kind":"multirotor"}},{{"kind":"{second}"}}]}}"#)
        };
        // Two quads, SimpleFlight's or passive: 250 Hz, the rates refitted.
        let moved = (true, 250, 250, 25, 250);
        assert_eq!(fit(&quads("", "multirotor")), moved);
        let simpleflight =
            r#"{"vehicles":[{"kind":"multirotor","controller":{"kind":"simpleflight"}}]}"#;
        assert_eq!(fit(simpleflight), moved);
        // Each of these keeps what it had.
        let kept = (false, 1000, 200, 20, 250);
        assert_eq!(fit(&quads("", "boat")), kept);
        assert_eq!(fit(&quads("", "rover")), kept);
        assert_eq!(
            fit(&quads(r#""physics_rate_hz":1000,"#, "multirotor")),
            kept
        );
        let given_gt = r#""record":{"ground_truth_rate_hz":200},"#;
        assert_eq!(fit(&quads(given_gt, "multirotor")), kept);
        let given_imu = r#"{"vehicles":[{"kind":"multirotor","sensors":{"imu":{"rate_hz":500}}}]}"#;
        assert_eq!(fit(given_imu), (false, 1000, 200, 20, 500));
        let passive =
            r#"{"vehicles":[{"kind":"multirotor","controller":{"kind":"passive","rate_hz":200}}]}"#;
        assert_eq!(fit(passive), kept);
        for firmware in ["px4", "ardupilot"] {
            let text = format!(
                r#"{{"vehicles":[{{"kind":"multirotor","controller":{{"kind":"{firmware}","instance":0}}}}]}}"#
            );
            assert_eq!(fit(&text), kept, "{firmware}");
        }
        // A rate the file gave at 500 Hz stays 500 Hz.
        let at_500 = quads(r#""physics_rate_hz":500,"#, "multirotor");
        assert_eq!(fit(&at_500), (false, 500, 250, 20, 250));
        // A given rate that divides 250 Hz is kept through the move.
        let gt_50 = quads(r#""record":{"ground_truth_rate_hz":50},"#, "multirotor");
        assert_eq!(fit(&gt_50), (true, 250, 50, 25, 250));
        // The camera's given rate: 20 Hz does not divide 250, none (0) does.
        let camera = |hz: u32| {
            quads(
                &format!(r#""record":{{"camera_rate_hz":{hz}}},"#),
                "multirotor",
            )
        };
        assert_eq!(fit(&camera(20)), kept);
        assert_eq!(fit(&camera(0)), (true, 250, 250, 0, 250));
        // A second vehicle's given rate counts as the first's.
        let second = r#"{"vehicles":[{"kind":"multirotor"},{"kind":"multirotor","sensors":{"imu":{"rate_hz":500}}}]}"#;
        assert_eq!(fit(second), kept);
        // SimpleFlight beside PX4 in one file: the firmware's 1 kHz.
        let mixed = r#"{"vehicles":[{"kind":"multirotor","controller":{"kind":"simpleflight"}},{"kind":"multirotor","controller":{"kind":"px4","instance":0}}]}"#;
        assert_eq!(fit(mixed), kept);
        // A rate a caller set (a bridge's) is the caller's: the fit leaves it.
        let mut set = Scenario::from_json(&quads("", "multirotor"), &src()).expect("valid");
        set.set_physics_rate_hz(2000);
        assert!(!set.fit_physics_rate_to_simpleflight());
        assert_eq!(set.physics_rate_hz, 2000);
    }

    /// The first vehicle repeated: copy k named its name and k, `spacing`
    /// × k m further east of where the first starts, each refitted when the
    /// physics rate moves; a scenario of two vehicles is left as it is.
    #[test]
    fn the_first_vehicle_repeats_with_its_defaulted_rates() {
        let one = r#"{"physics_rate_hz":250,"vehicles":[{"name":"q","kind":"multirotor","initial":{"east_m":2}}]}"#;
        let mut s = Scenario::from_json(one, &src()).expect("valid");
        s.repeat_first_vehicle(3, 7.5);
        let placed: Vec<(&str, f64)> = s
            .vehicles
            .iter()
            .map(|v| (v.name.as_str(), v.initial.east_m))
            .collect();
        assert_eq!(placed, [("q0", 2.0), ("q1", 9.5), ("q2", 17.0)]);
        s.set_physics_rate_hz(320);
        for v in &s.vehicles {
            assert_eq!(v.sensors.baro.rate_hz, 40, "{}", v.name);
        }
        s.validate(&src()).expect("every copy fits 320 Hz");
        let two = r#"{"vehicles":[{"kind":"multirotor"},{"kind":"boat"}]}"#;
        let mut s = Scenario::from_json(two, &src()).expect("valid");
        let before = s.clone();
        s.repeat_first_vehicle(3, 7.5);
        assert_eq!(s, before);
    }

    /// A passive controller drives at most every actuator channel: as many
    /// values as there are is accepted, one more is refused by count.
    #[test]
    fn passive_controls_are_at_most_the_actuator_channels() {
        let max = mavsitl_core::controller::MAX_ACTUATORS;
        let with = |n: usize| {
            let controls = vec!["0"; n].join(",");
            Scenario::from_json(
                &format!(
                    r#"{{"vehicles":[{{"kind":"boat","controller":{{"kind":"passive","controls":[{controls}]}}}}]}}"#
                ),
                &src(),
            )
        };
        with(max).expect("every channel");
        let e = with(max + 1).expect_err("one too many").to_string();
        assert!(
            e.contains(&format!("controls: {} values; at most {max}", max + 1)),
            "{e}"
        );
    }

    /// A command line's fault is checked against the scenario: a motor the
    /// quad has fails something, one it lacks or a boat's motor does not
    /// (naming the key); a zone is found by its name, in order.
    #[test]
    fn faults_are_checked_against_the_vehicle_and_zones_found_by_name() {
        let s = Scenario::from_json(
            r#"{"environment":{"zones":[
                {"name":"a","shape":{"box":{"min_ned_m":[0,0,-1],"max_ned_m":[1,1,0]}}},
                {"name":"b","shape":{"box":{"min_ned_m":[2,2,-1],"max_ned_m":[3,3,0]}}}]},
              "vehicles":[{"name":"q","kind":"multirotor"},{"name":"u","kind":"boat"}]}"#,
            &src(),
        )
        .expect("scenario");
        let fault = |arg: &str| mavsitl_core::faults::parse_fault_arg(arg).expect("fault");
        assert_eq!(
            s.fault_target_problem(&fault("motor_failure@1s:motor=3"), &src()),
            None
        );
        let (key, message) = s
            .fault_target_problem(&fault("motor_failure@1s:motor=4"), &src())
            .expect("a quad has 4 motors");
        assert_eq!(key, "motor");
        assert!(
            message.contains('4') && message.contains("'q'"),
            "{message}"
        );
        let (key, _) = s
            .fault_target_problem(&fault("motor_failure@1s:motor=0,vehicle=u"), &src())
            .expect("a boat has thrusters");
        assert!(!key.is_empty());
        assert_eq!(s.fault_zone("b"), Some(1));
        assert_eq!(s.fault_zone("a"), Some(0));
        assert_eq!(s.fault_zone("c"), None);
    }

    /// A vehicle's name is one path component of at most 64 bytes, not a
    /// file of the fleet's own recording.
    #[test]
    fn a_vehicle_name_is_one_path_component_of_at_most_64_bytes() {
        let long = "x".repeat(64);
        for ok in ["q1", "boat two", long.as_str()] {
            assert_eq!(name_problem(ok), None, "{ok}");
        }
        for (bad, says) in [
            ("", "needs a name"),
            (".", "not . or .."),
            ("..", "not . or .."),
            (&"x".repeat(65), "1 to 64 characters"),
            ("meta.json", "a file of the fleet's own recording"),
            ("encounters.csv", "a file of the fleet's own recording"),
            ("a/b", "no '/'"),
            ("a\\b", "no '/'"),
            ("a\nb", "control characters"),
        ] {
            let why = name_problem(bad).unwrap_or_default();
            assert!(why.contains(says), "{bad:?}: {why}");
        }
    }

    /// A box zone's minimum may meet its maximum on an axis, not pass it;
    /// a home's latitude and longitude are refused outside their ranges,
    /// NaN and infinities included.
    #[test]
    fn a_box_zone_and_a_home_are_checked_axis_by_axis() {
        let zone = |min: [f64; 3], max: [f64; 3]| crate::world::ZoneSpec {
            shape: ZoneShape::Box {
                min_ned_m: min,
                max_ned_m: max,
            },
            ..serde_json::from_str(
                r#"{"name":"z","shape":{"box":{"min_ned_m":[0,0,0],"max_ned_m":[1,1,1]}}}"#,
            )
            .expect("zone")
        };
        assert_eq!(check_zone(&zone([0.0, 2.0, -5.0], [1.0, 2.0, 0.0])), Ok(()));
        let cylinder = |down_min_m: f64, down_max_m: f64| crate::world::ZoneSpec {
            shape: ZoneShape::Cylinder {
                center_ne_m: [3.0, 4.0],
                radius_m: 5.0,
                down_min_m,
                down_max_m,
            },
            ..zone([0.0; 3], [1.0; 3])
        };
        assert_eq!(check_zone(&cylinder(-30.0, -30.0)), Ok(()));
        assert_eq!(check_zone(&cylinder(-30.0, -10.0)), Ok(()));
        let (key, why) = check_zone(&cylinder(-10.0, -30.0)).expect_err("min below max");
        assert_eq!(key, "shape.cylinder.down_min_m");
        assert_eq!(why, "-10 is below down_max_m -30");
        let (key, why) =
            check_zone(&zone([0.0, 2.5, -5.0], [1.0, 2.0, 0.0])).expect_err("min > max");
        assert_eq!(key, "shape.box.min_ned_m[1]");
        assert_eq!(why, "2.5 is above max 2");
        let home = |lat: f64, lon: f64| Home {
            lat_deg: lat,
            lon_deg: lon,
            ..Home::default()
        };
        assert_eq!(check_home(&home(-90.0, 180.0)), Ok(()));
        for (lat, lon, key) in [
            (90.5, 0.0, "lat_deg"),
            (f64::NAN, 0.0, "lat_deg"),
            (0.0, -180.5, "lon_deg"),
            (0.0, f64::INFINITY, "lon_deg"),
        ] {
            assert_eq!(
                check_home(&home(lat, lon)).map_err(|e| e.0),
                Err(key.to_string())
            );
        }
        assert_eq!(finite_nonneg("k", 2.0, 2.0), Ok(()));
        for v in [2.5, -0.5, f64::NAN, f64::INFINITY] {
            assert_eq!(
                finite_nonneg("k", v, 2.0).map_err(|e| e.0),
                Err("k".to_string()),
                "{v}"
            );
        }
    }

    /// An RC script's rate divides 250 Hz, its times are finite, from 0 and
    /// increasing, and each point has 1 to 18 channels of 800–2200 µs.
    #[test]
    fn an_rc_script_is_checked_rate_times_and_channels() {
        let point = |t_s: f64, channels: Vec<u16>| super::super::RcPoint { t_s, channels };
        let rc = |rate_hz: u32, script: Vec<super::super::RcPoint>| super::super::RcScript {
            rate_hz,
            script,
        };
        let key = |r: super::super::RcScript| check_rc(&r).err().map(|e| e.0);
        let fine = || vec![point(0.0, vec![1500; 8]), point(2.5, vec![800, 2200])];
        for rate in [1, 10, 25, 50, 125, 250] {
            assert_eq!(key(rc(rate, fine())), None, "{rate} Hz");
        }
        for rate in [0, 3, 40, 100, 500] {
            assert_eq!(key(rc(rate, fine())), Some("rate_hz".into()), "{rate} Hz");
        }
        assert_eq!(key(rc(50, vec![])), Some("script".into()));
        let t = |times: &[f64]| {
            key(rc(
                50,
                times.iter().map(|&t| point(t, vec![1500])).collect(),
            ))
        };
        assert_eq!(t(&[0.0, 0.5, 7.0]), None);
        assert_eq!(t(&[-0.5]), Some("script[0].t_s".into()));
        assert_eq!(t(&[f64::NAN]), Some("script[0].t_s".into()));
        assert_eq!(t(&[f64::INFINITY]), Some("script[0].t_s".into()));
        assert_eq!(t(&[0.0, 1.0, 1.0]), Some("script[2].t_s".into()));
        assert_eq!(t(&[0.0, 2.0, 1.0]), Some("script[2].t_s".into()));
        let c = |channels: Vec<u16>| check_rc(&rc(50, vec![point(0.0, channels)])).err();
        assert_eq!(c(vec![1500; 18]), None);
        assert_eq!(c(vec![800, 2200]), None);
        for (channels, why) in [
            (vec![], "1 to 18 channels"),
            (vec![1500; 19], "1 to 18 channels"),
            (vec![1500, 799], "799 µs is outside 800–2200"),
            (vec![2201], "2201 µs is outside 800–2200"),
        ] {
            assert_eq!(c(channels), Some(("script[0].channels".into(), why.into())));
        }
    }

    /// A thruster failure is checked the same way: the twin-thruster boat
    /// has thrusters 0 and 1, the rudder boat only 0, a quad none (it has
    /// rotors), each refusal naming its key and the vehicle.
    #[test]
    fn a_thruster_failure_is_checked_against_the_boats_thrusters() {
        let s = Scenario::from_json(
            r#"{"vehicles":[{"name":"q","kind":"multirotor"},{"name":"twin","kind":"boat"},
                {"name":"rudder","kind":"boat","airframe":"usv_rudder"}]}"#,
            &src(),
        )
        .expect("scenario");
        let problem = |arg: &str| {
            let f = mavsitl_core::faults::parse_fault_arg(arg).expect("fault");
            s.fault_target_problem(&f, &src())
        };
        assert_eq!(problem("thruster_failure@1s:thruster=1,vehicle=twin"), None);
        assert_eq!(
            problem("thruster_failure@1s:thruster=0,vehicle=rudder"),
            None
        );
        // (The command line refuses a thruster above 1 already; a spec
        // built otherwise still meets the scenario's check.)
        let mut third = mavsitl_core::faults::parse_fault_arg("thruster_failure@1s:vehicle=twin")
            .expect("fault");
        third.thruster = Some(2);
        let beyond = s.fault_target_problem(&third, &src());
        let rudder = problem("thruster_failure@1s:thruster=1,vehicle=rudder");
        for (found, vehicle, has) in [
            (beyond, "twin", "it has 2, thrusters 0..=1"),
            (rudder, "rudder", "it has 1, thrusters 0..=0"),
        ] {
            let (key, message) = found.expect("no such thruster");
            assert_eq!(key, "thruster");
            assert!(
                message.contains(has) && message.contains(&format!("'{vehicle}'")),
                "{message}"
            );
        }
        let (key, message) = problem("thruster_failure@1s:thruster=0,vehicle=q").expect("a quad");
        assert_eq!(key, "kind");
        assert_eq!(
            message,
            "'q' is a multirotor: it has rotors (motor_failure), not thrusters"
        );
    }

    #[test]
    fn absurd_wind_and_velocities_are_refused_at_load() {
        let e = Scenario::from_json(
            r#"{"environment":{"wind":{"speed_m_s":1,"down_m_s":1e300}},"vehicles":[{"kind":"boat"}]}"#,
            &src(),
        )
        .expect_err("wind");
        assert!(
            e.to_string()
                .contains("environment.wind.down_m_s: 1e300 is outside -50..50"),
            "{e}"
        );
        let e = Scenario::from_json(
            r#"{"vehicles":[{"kind":"multirotor","initial":{"velocity_ned_m_s":[1e200,0,0]}}]}"#,
            &src(),
        )
        .expect_err("velocity");
        assert!(
            e.to_string()
                .contains("initial.velocity_ned_m_s[0]: 1e200 is outside"),
            "{e}"
        );
        let e = Scenario::from_json(
            r#"{"vehicles":[{"kind":"multirotor","initial":{"north_m":1e300}}]}"#,
            &src(),
        )
        .expect_err("1e300 m from home")
        .to_string();
        assert!(
            e.contains("vehicles[0].initial.north_m: 1e300 is outside -100000..100000"),
            "{e}"
        );
    }

    #[test]
    fn a_byte_order_mark_is_accepted() {
        let s = Scenario::from_json("\u{feff}{\"vehicles\":[{\"kind\":\"boat\"}]}", &src())
            .expect("BOM");
        assert_eq!(s.vehicles.len(), 1);
    }

    /// Line and column, both from 1, of a byte offset: columns count
    /// characters, not bytes; an offset past the end is the end.
    #[test]
    fn positions_are_lines_and_character_columns() {
        let text = "ab\ncdé\nf";
        assert_eq!(line_col(text, 0), (1, 1));
        assert_eq!(line_col(text, 4), (2, 2));
        // After "cdé" (4 bytes, 3 characters): the newline at column 4.
        assert_eq!(line_col(text, 7), (2, 4));
        assert_eq!(line_col(text, 8), (3, 1));
        assert_eq!(line_col(text, 99), (3, 2));
        assert_eq!(strip_position("bad at line 3 column 4"), "bad");
        assert_eq!(strip_position("no position"), "no position");
    }

    /// A bad value inside a vehicle's overrides, parsed from its slice of the
    /// file, is placed where it is in the whole file: on a later line, and
    /// on the first line after the slice's own start.
    #[test]
    fn an_error_in_a_nested_part_points_into_the_whole_file() {
        let text =
            "{\"vehicles\": [\n  {\"kind\": \"boat\", \"overrides\": {\"mass_kg\": \"heavy\"}}\n]}";
        let e = Scenario::from_json(text, &src()).expect_err("a string mass");
        let ScenarioError::Parse {
            line,
            column,
            key,
            message,
            ..
        } = &e
        else {
            panic!("{e:?}")
        };
        // "heavy" ends at column 52 of line 2.
        let row = text.lines().nth(1).expect("line 2");
        let at = row.find("\"heavy\"").expect("the value") + "\"heavy\"".len();
        assert_eq!(
            (*line, *column, key.as_str()),
            (2, at, "vehicles[0].overrides.mass_kg")
        );
        assert!(!message.contains(" at line "), "{message}");
        let text = "{\"vehicles\": [{\"kind\": \"boat\", \"overrides\": {\"mass_kg\": true}}]}";
        let e = Scenario::from_json(text, &src()).expect_err("a flag for a mass");
        let ScenarioError::Parse { line, column, .. } = &e else {
            panic!("{e:?}")
        };
        let at = text.find("true").expect("the value") + "true".len();
        assert_eq!((*line, *column), (1, at));
        // Over two lines inside the slice: the slice's own line count, and
        // the column on that line (at the list, columns 13-14).
        let text = "{\"vehicles\": [{\"kind\": \"boat\", \"overrides\": {\n \"mass_kg\": []}}]}";
        let e = Scenario::from_json(text, &src()).expect_err("a list for a mass");
        let ScenarioError::Parse { line, column, .. } = &e else {
            panic!("{e:?}")
        };
        assert!(*line == 2 && (12..=14).contains(column), "{e}");
    }

    /// The run's length, the proximity radius and a collision radius are
    /// refused out of range, each at its ends and not a number, and
    /// accepted at their limits; a run left without a length lasts 60 s.
    #[test]
    fn lengths_and_radii_are_refused_outside_their_ranges() {
        let base = Scenario::from_json(r#"{"vehicles": [{"kind": "boat"}]}"#, &src()).expect("ok");
        assert_eq!(base.duration_s, 60.0);
        type Set = fn(&mut Scenario, f64);
        let cases: [(&str, Set, f64, [f64; 3]); 3] = [
            (
                "duration_s",
                |s, x| s.duration_s = x,
                1e7,
                [0.0, 1e7 + 1.0, f64::NAN],
            ),
            (
                "proximity_m",
                |s, x| s.proximity_m = x,
                10_000.0,
                [0.0, 10_000.5, f64::INFINITY],
            ),
            (
                "vehicles[0].collision_radius_m",
                |s, x| s.vehicles[0].collision_radius_m = Some(x),
                100.0,
                [0.0, 100.5, f64::NAN],
            ),
        ];
        for (key, set, limit, bad) in cases {
            let mut ok = base.clone();
            set(&mut ok, limit);
            assert!(ok.validate(&src()).is_ok(), "{key} {limit}");
            for x in bad {
                let mut s = base.clone();
                set(&mut s, x);
                match s.validate(&src()) {
                    Err(ScenarioError::Invalid { key: k, .. }) => assert_eq!(k, key, "{x}"),
                    other => panic!("{key} {x}: {other:?}"),
                }
            }
        }
    }

    /// As many zones as the membership mask has bits are accepted; one
    /// more is refused by name.
    #[test]
    fn zones_up_to_the_mask_are_accepted_and_one_more_refused() {
        let with = |n: usize| {
            let zones: Vec<String> = (0..n)
                .map(|i| {
                    format!(
                        r#"{{"name": "z{i}", "shape": {{"box": {{"min_ned_m": [{i}, 0, -1], "max_ned_m": [{}, 1, 0]}}}}}}"#,
                        i + 1
                    )
                })
                .collect();
            let text = format!(
                r#"{{"environment": {{"zones": [{}]}}, "vehicles": [{{"kind": "boat"}}]}}"#,
                zones.join(",")
            );
            Scenario::from_json(&text, &src())
        };
        assert!(with(MAX_ZONES).is_ok());
        let e = with(MAX_ZONES + 1).expect_err("too many zones");
        assert!(e.to_string().contains("environment.zones"), "{e}");
    }

    /// Two vehicles of one firmware may not share its instance (its
    /// ports); a PX4 and an ArduPilot may, and so may firmwares on their
    /// own instances. A passive controller's rate must divide the
    /// physics rate and its values lie within −1..1.
    #[test]
    fn controllers_are_checked_per_vehicle() {
        let two = |a: &str, b: &str| {
            let text = format!(
                r#"{{"vehicles": [{{"name": "a", "kind": "boat", "controller": {a}}},
                                 {{"name": "b", "kind": "boat", "initial": {{"east_m": 5}}, "controller": {b}}}]}}"#
            );
            Scenario::from_json(&text, &src()).map(|_| ())
        };
        let px4 = |i: u8| format!(r#"{{"kind": "px4", "instance": {i}}}"#);
        let ap = |i: u8| format!(r#"{{"kind": "ardupilot", "instance": {i}}}"#);
        let e = two(&px4(1), &px4(1)).expect_err("one PX4 instance twice");
        assert!(
            e.to_string().contains("vehicles[1].controller.instance"),
            "{e}"
        );
        assert!(
            e.to_string().contains("instance 1 is another vehicle's"),
            "{e}"
        );
        let e = two(&ap(2), &ap(2)).expect_err("one ArduPilot instance twice");
        assert!(
            e.to_string().contains("vehicles[1].controller.instance"),
            "{e}"
        );
        assert!(two(&px4(1), &ap(1)).is_ok(), "different firmwares");
        assert!(two(&px4(1), &px4(2)).is_ok(), "different instances");
        let passive = |rate: u32, c: &str| {
            format!(r#"{{"kind": "passive", "rate_hz": {rate}, "controls": [{c}]}}"#)
        };
        let e = two(&passive(50, "0.5"), &passive(300, "0.5")).expect_err("300 Hz");
        assert!(
            e.to_string().contains("vehicles[1].controller.rate_hz"),
            "{e}"
        );
        let e = two(&passive(50, "0.5"), &passive(50, "0.5, 1.5")).expect_err("1.5");
        assert!(
            e.to_string().contains("vehicles[1].controller.controls[1]"),
            "{e}"
        );
        assert!(two(&passive(50, "-1, 1"), &passive(250, "0")).is_ok());
    }
}
