//! AirSim's `settings.json` as a mavsitl scenario: the simulation mode, clock
//! speed, origin, the vehicle with its start pose, its sensors with AirSim's
//! parameter names mapped onto mavsitl's models, and the wind.
//!
//! Every key mavsitl cannot honour (cameras, lidar, recording, view and
//! window settings, sensor details its models do not have) gets one warning
//! naming it; a setting that would change the meaning of a run (another
//! simulation mode, another vehicle type, several vehicles) is an error.
//!
//! A `PX4Multirotor` vehicle is flown by PX4 SITL over PX4's simulator
//! interface: `TcpPort` gives the instance (4560 + N), `Parameters` the PX4
//! parameters to set at start-up; AirSim's MAVLink relay ports are not used,
//! as PX4's own serve ground stations.
//!
//! Mapping (AirSim → scenario): `OriginGeopoint` → `home`; the vehicle's `X`,
//! `Y`, `Z` (NED m from the origin) and `Yaw` (deg) → `initial`; `Wind`
//! (NED m/s) → `environment.wind`; sensors by `SensorType` (1 barometer,
//! 2 IMU, 3 GPS, 4 magnetometer, 5 distance), `DefaultSensors` then the
//! vehicle's `Sensors`:
//!
//! | AirSim | mavsitl |
//! |---|---|
//! | `Enabled` | `enabled` |
//! | `UpdateFrequency` (Hz; also accepted for the IMU) | `rate_hz` |
//! | IMU `AngularRandomWalk`, `GyroBiasStability(Tau)`, `VelocityRandomWalk`, `AccelBiasStability(Tau)` | the same parameters |
//! | GPS `EphInitial`, `EpvInitial`, `EphFinal`, `EpvFinal`, `EphTimeConstant`, `EphMin3d`, `UpdateLatency`, `StartupDelay` | `eph_initial_m`, `epv_initial_m`, `eph_final_m`, `epv_final_m`, `eph_tau_s`, `fix_3d_eph_m`, `latency_s`, `startup_s` |
//! | barometer `UncorrelatedNoiseSigma` | `noise_sigma_pa` |
//! | magnetometer `NoiseSigma`, `ScaleFactor`, `NoiseBias` | `noise_sigma_gauss`, `scale_factor`, `bias_gauss` (each axis) |
//! | distance `MinDistance`, `MaxDistance` | `min_m`, `max_m` |
//! | `X`, `Y`, `Z`, `Roll`, `Pitch`, `Yaw` of a sensor | its `mount` |

use serde_json::{json, Map, Value};

/// The vehicle name AirSim's default settings give a car.
pub const CAR_NAME: &str = "PhysXCar";

/// A settings file turned into a scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// The scenario, as scenario JSON.
    pub scenario: Value,
    /// `ClockSpeed`, if given.
    pub clock_speed: Option<f64>,
    /// `PhysicsEngineName` is `ExternalPhysicsEngine`: the client's poses
    /// move the vehicle.
    pub external_physics: bool,
    /// The vehicle's name.
    pub vehicle_name: String,
    /// Who flies it (`VehicleType`).
    pub vehicle_type: VehicleType,
    /// A SimpleFlight vehicle's `Parameters`: SimpleFlight parameters by
    /// name, over the AirSim mode's own (e.g. `SF_GROUND_TRUTH: 0` to fly on
    /// the estimator).
    pub simpleflight_parameters: Vec<(String, String)>,
    /// One line per setting that is ignored.
    pub warnings: Vec<String>,
}

/// Who flies the vehicle (the vehicle's `VehicleType`).
#[derive(Debug, Clone, PartialEq)]
pub enum VehicleType {
    /// `SimpleFlight`: mavsitl's own autopilot flies the motion commands.
    SimpleFlight,
    /// `PX4Multirotor`: PX4 SITL flies it over PX4's simulator interface, in
    /// lockstep; the API serves state, sensors and the clock.
    Px4(Px4Settings),
    /// `PhysXCar` (SimMode `Car`): the client's car controls drive an
    /// Ackermann rover (the `f1tenth` airframe).
    Car,
}

/// A `PX4Multirotor` vehicle's connection settings.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Px4Settings {
    /// PX4 instance: `TcpPort` − 4560 (PX4's `-i N` connects to 4560 + N).
    pub instance: u8,
    /// `Parameters`: PX4 parameters to set at start-up, (name, value).
    pub parameters: Vec<(String, String)>,
}

/// A `PX4Multirotor`'s keys that name ports and addresses of AirSim's own
/// MAVLink relay; PX4's own MAVLink ports serve ground stations here.
const PX4_RELAY_KEYS: &[&str] = &[
    "ControlIp",
    "ControlPortLocal",
    "ControlPortRemote",
    "LocalHostIp",
    "UdpIp",
    "UdpPort",
    "SitlIp",
    "SitlPort",
    "QgcHostIp",
    "QgcPort",
    "SerialPort",
    "SerialBaudRate",
    "LogViewerHostIp",
    "LogViewerPort",
    "LogViewerSendPort",
    "OffboardCompID",
    "OffboardSysID",
    "SimCompID",
    "SimSysID",
    "VehicleCompID",
    "VehicleSysID",
    "Model",
    "RC",
];

/// Keys of a settings file that only concern rendering or the editor.
const IGNORED_TOP: &[&str] = &[
    "ViewMode",
    "SubWindows",
    "SegmentationSettings",
    "PawnPaths",
    "CameraDirector",
    "LocalHostIp",
    "ApiServerPort",
    "RpcEnabled",
    "EngineSound",
    "LogMessagesVisible",
    "ShowLosDebugLines",
    "EnableCollisionPassthrogh",
    "EnableCollisions",
    "SpeedUnitFactor",
    "SpeedUnitLabel",
    "TimeOfDay",
    "MoveWorldOrigin",
    "InitialInstruction",
    "ExternalCameras",
];

/// Reads AirSim settings text (`name` for messages).
///
/// # Errors
/// One line naming the file and the key.
pub fn import(text: &str, name: &str) -> Result<Imported, String> {
    let root: Value = serde_json::from_str(text.trim_start_matches('\u{feff}'))
        .map_err(|e| format!("{name}: not JSON: {e}"))?;
    let Some(top) = root.as_object() else {
        return Err(format!("{name}: the settings are not a JSON object"));
    };
    let mut w = Vec::new();
    // AirSim's own recording unless the settings give theirs: camera "0"'s
    // scene every 0.05 s.
    let mut scenario = json!({"vehicles": [], "record": {
        "camera_rate_hz": 20, "images": ["scene"], "cameras": ["front_center"]}});
    let mut clock_speed = None;
    let mut external_physics = false;
    let mut car_mode = false;
    for (k, v) in top {
        match k.as_str() {
            "SimMode" => car_mode = is_car_mode(v, name)?,
            "ClockSpeed" => clock_speed = Some(clock_speed_of(v, name)?),
            "OriginGeopoint" => scenario["home"] = origin(v, name)?,
            "PhysicsEngineName" => match v.as_str() {
                Some("ExternalPhysicsEngine") => external_physics = true,
                Some("FastPhysicsEngine" | "") => {}
                _ => w.push(format!(
                    "{name}: PhysicsEngineName {v}: mavsitl runs its own physics"
                )),
            },
            "Wind" => scenario["environment"] = json!({ "wind": wind(v, name)? }),
            "Recording" => scenario["record"] = recording(v, name, &mut w)?,
            "SettingsVersion" | "ClockType" | "DefaultSensors" | "Vehicles" | "CameraDefaults" => {}
            k if IGNORED_TOP.contains(&k) => w.push(format!(
                "{name}: {k} is not used by mavsitl (a view, a window or Unreal's)"
            )),
            k => w.push(format!(
                "{name}: {k} is not a setting mavsitl knows; ignored"
            )),
        }
    }
    let defaults = top.get("DefaultSensors");
    let empty = Map::new();
    let all = match top.get("Vehicles") {
        None => &empty,
        Some(v) => v
            .as_object()
            .ok_or_else(|| format!("{name}: Vehicles is not an object"))?,
    };
    let mut list: Vec<(String, Value)> = all.iter().map(|(n, v)| (n.clone(), v.clone())).collect();
    if list.is_empty() {
        list.push(if car_mode {
            (CAR_NAME.to_string(), json!({"VehicleType": "PhysXCar"}))
        } else {
            (super::api::VEHICLE_NAME.to_string(), json!({}))
        });
    }
    let mut simpleflight_parameters: Option<Vec<(String, String)>> = None;
    let mut vehicles = Vec::new();
    let mut vehicle_type = VehicleType::SimpleFlight;
    for (vname, v) in &list {
        let mut own = Vec::new();
        let (vehicle, kind) = vehicle(
            vname,
            v,
            (defaults, top.get("CameraDefaults")),
            name,
            &mut own,
            &mut w,
        )?;
        if car_mode != (kind == VehicleType::Car) {
            return Err(format!(
                "{name}: Vehicles.{vname}: SimMode \"{}\" takes {} vehicles",
                if car_mode { "Car" } else { "Multirotor" },
                if car_mode {
                    "PhysXCar"
                } else {
                    "SimpleFlight and PX4Multirotor"
                }
            ));
        }
        if list.len() > 1 && matches!(kind, VehicleType::Px4(_)) {
            return Err(format!(
                "{name}: Vehicles.{vname}: with several vehicles each must be a SimpleFlight (a PX4Multirotor flies alone)"
            ));
        }
        match &simpleflight_parameters {
            Some(first) if *first != own => {
                return Err(format!(
                    "{name}: Vehicles.{vname}.Parameters differ from the first vehicle's: mavsitl gives every SimpleFlight the same parameters"
                ))
            }
            Some(_) => {}
            None => simpleflight_parameters = Some(own),
        }
        vehicles.push(vehicle);
        vehicle_type = kind;
    }
    let vehicle_name = list.first().map(|(n, _)| n.clone()).unwrap_or_default();
    if external_physics && (vehicle_type != VehicleType::SimpleFlight || vehicles.len() > 1) {
        return Err(format!(
            "{name}: PhysicsEngineName ExternalPhysicsEngine: one SimpleFlight vehicle only (a PX4Multirotor is flown by PX4 on mavsitl's physics)"
        ));
    }
    let simpleflight_parameters = simpleflight_parameters.unwrap_or_default();
    scenario["vehicles"] = Value::Array(vehicles);
    Ok(Imported {
        scenario,
        clock_speed,
        external_physics,
        vehicle_name,
        vehicle_type,
        simpleflight_parameters,
        warnings: w,
    })
}

/// Whether `SimMode` asks for cars: "Car"; "Multirotor" or empty is not.
fn is_car_mode(v: &Value, name: &str) -> Result<bool, String> {
    match v.as_str() {
        Some("Multirotor" | "") => Ok(false),
        Some("Car") => Ok(true),
        Some(m) => Err(format!(
            "{name}: SimMode \"{m}\": mavsitl serves AirSim's multirotor API (SimMode \"Multirotor\") and its car API (\"Car\")"
        )),
        None => Err(format!("{name}: SimMode is not a string")),
    }
}

/// `ClockSpeed`, as `--clock-speed`: a thousandth to ten thousand times
/// real time.
fn clock_speed_of(v: &Value, name: &str) -> Result<f64, String> {
    v.as_f64()
        .filter(|c| (1e-3..=1e4).contains(c))
        .ok_or_else(|| format!("{name}: ClockSpeed {v}: give a factor from 0.001 to 10000"))
}

/// AirSim's `Recording` as the scenario's `record`: `RecordInterval` (s)
/// as the camera rate, the `Cameras` named (AirSim's "0"–"4" as their
/// names) and the images their `ImageType`s ask for, for every camera
/// named (0 the scene; 1–4 the depths, recorded as planar depth; 5 the
/// segmentation). Where and when to record is `--record DIR`'s.
fn recording(v: &Value, name: &str, w: &mut Vec<String>) -> Result<Value, String> {
    let obj = v
        .as_object()
        .ok_or_else(|| format!("{name}: Recording is not an object"))?;
    let interval = num(v, "RecordInterval", name)?.unwrap_or(0.05);
    let hz = 1.0 / interval;
    if !(hz.is_finite() && (1.0..=1000.0).contains(&hz) && is_whole(hz)) {
        return Err(format!(
            "{name}: Recording.RecordInterval {interval}: give 0.001 to 1 s, a whole number of frames a second"
        ));
    }
    let mut cameras: Vec<String> = Vec::new();
    let mut images: Vec<&str> = Vec::new();
    let list = match obj.get("Cameras") {
        None => &vec![json!({"CameraName": "0", "ImageType": 0})],
        Some(l) => l
            .as_array()
            .ok_or_else(|| format!("{name}: Recording.Cameras is not a list"))?,
    };
    for (i, c) in list.iter().enumerate() {
        let at = format!("Recording.Cameras[{i}]");
        let cam = c
            .get("CameraName")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("{name}: {at}.CameraName is not a string"))?;
        let cam = crate::vision::airsim_camera_name(cam).to_string();
        let kind = match c.get("ImageType").map_or(Some(0), Value::as_i64) {
            Some(0) => "scene",
            Some(1..=4) => "depth",
            Some(5) => "segmentation",
            t => {
                w.push(format!("{name}: {at}.ImageType {t:?}: mavsitl records the scene (0), depth (1-4) and segmentation (5); ignored"));
                continue;
            }
        };
        if !cameras.contains(&cam) {
            cameras.push(cam);
        }
        if !images.contains(&kind) {
            images.push(kind);
        }
    }
    for k in obj.keys() {
        if !matches!(k.as_str(), "RecordInterval" | "Cameras") {
            w.push(format!(
                "{name}: Recording.{k}: mavsitl records what --record DIR asks for; ignored"
            ));
        }
    }
    Ok(json!({"camera_rate_hz": hz.round() as u32, "images": images, "cameras": cameras}))
}

/// Whether `x` is a whole number but for rounding (1 / 0.05 is
/// 19.999999999999996).
fn is_whole(x: f64) -> bool {
    (x - x.round()).abs() < 1e-6
}

fn num(v: &Value, key: &str, name: &str) -> Result<Option<f64>, String> {
    match v.get(key) {
        None => Ok(None),
        Some(x) => x
            .as_f64()
            .filter(|x| x.is_finite())
            .map(Some)
            .ok_or_else(|| format!("{name}: {key} is not a number: {x}")),
    }
}

fn origin(v: &Value, name: &str) -> Result<Value, String> {
    let n = |k: &str| num(v, k, name)?.ok_or_else(|| format!("{name}: OriginGeopoint.{k} missing"));
    Ok(json!({"lat_deg": n("Latitude")?, "lon_deg": n("Longitude")?, "alt_m": n("Altitude")?}))
}

fn wind(v: &Value, name: &str) -> Result<Value, String> {
    let x = num(v, "X", name)?.unwrap_or(0.0);
    let y = num(v, "Y", name)?.unwrap_or(0.0);
    let z = num(v, "Z", name)?.unwrap_or(0.0);
    // The air's velocity over ground, NED; the scenario gives where it
    // blows from.
    let from = (y.atan2(x).to_degrees() + 180.0).rem_euclid(360.0);
    Ok(json!({"speed_m_s": x.hypot(y), "from_deg": from, "down_m_s": z}))
}

/// One vehicle of `Vehicles`, `vname`: as scenario JSON, and who flies it.
fn vehicle(
    vname: &str,
    v: &Value,
    (defaults, camera_defaults): (Option<&Value>, Option<&Value>),
    name: &str,
    sf_params: &mut Vec<(String, String)>,
    w: &mut Vec<String>,
) -> Result<(Value, VehicleType), String> {
    let kind = v
        .get("VehicleType")
        .and_then(Value::as_str)
        .unwrap_or("SimpleFlight");
    let mut vehicle_type = match kind {
        "SimpleFlight" => VehicleType::SimpleFlight,
        "PX4Multirotor" => VehicleType::Px4(Px4Settings::default()),
        "PhysXCar" => VehicleType::Car,
        _ => {
            return Err(format!(
                "{name}: Vehicles.{vname}.VehicleType \"{kind}\": mavsitl's AirSim API flies SimpleFlight and PX4Multirotor, and drives PhysXCar"
            ))
        }
    };
    let mut initial = Map::new();
    for (k, x) in v.as_object().into_iter().flatten() {
        let at = format!("Vehicles.{vname}.{k}");
        if let VehicleType::Px4(px4) = &mut vehicle_type {
            if px4_key(px4, k, x, &format!("{name}: {at}"), w)? {
                continue;
            }
        }
        match k.as_str() {
            "VehicleType" | "Sensors" | "AutoCreate" | "Cameras" => {}
            "Parameters" => sf_params.extend(parameters(x, &format!("{name}: {at}"))?),
            "X" | "Y" | "Z" | "Yaw" | "Pitch" | "Roll" => {
                let n = x
                    .as_f64()
                    .ok_or_else(|| format!("{name}: {at} is not a number"))?;
                let key = match k.as_str() {
                    "X" => "north_m",
                    "Y" => "east_m",
                    // AirSim's Z is NED (negative up).
                    "Z" => "height_m",
                    "Yaw" => "yaw_deg",
                    "Pitch" => "pitch_deg",
                    _ => "roll_deg",
                };
                initial.insert(key.into(), json!(if k == "Z" { -n } else { n }));
            }
            _ => w.push(format!("{name}: {at} is not used by mavsitl")),
        }
    }
    let mut sensors = Map::new();
    let mut lidars: Vec<Value> = Vec::new();
    for (source, set) in [("DefaultSensors", defaults), ("Sensors", v.get("Sensors"))] {
        let Some(set) = set else { continue };
        let set = set
            .as_object()
            .ok_or_else(|| format!("{name}: {source} is not an object"))?;
        // A vehicle's LiDARs replace the default ones, as any sensor kind.
        let own_lidars = set
            .values()
            .any(|s| s.get("SensorType").and_then(Value::as_u64) == Some(6));
        if own_lidars {
            lidars.clear();
        }
        for (sname, s) in set {
            let Some((key, mut params)) = sensor(s, &format!("{source}.{sname}"), name, w)? else {
                continue;
            };
            if key == "lidars" {
                params["name"] = json!(sname);
                lidars.push(params);
            } else {
                sensors.insert(key.into(), params);
            }
        }
    }
    let is_car = vehicle_type == VehicleType::Car;
    for l in &mut lidars {
        // AirSim's car LiDAR looks ±10° about the level.
        if is_car {
            for (k, d) in [
                ("vertical_fov_upper_deg", 10.0),
                ("vertical_fov_lower_deg", -10.0),
            ] {
                if l.get(k).is_none() {
                    l[k] = json!(d);
                }
            }
        }
    }
    if !lidars.is_empty() {
        sensors.insert("lidars".into(), Value::Array(lidars));
    }
    sensors.insert(
        "cameras".into(),
        cameras(
            v.get("Cameras"),
            camera_defaults,
            &format!("Vehicles.{vname}.Cameras"),
            name,
            w,
        )?,
    );
    let mut out = json!({
        "name": vname,
        "kind": "multirotor",
        "initial": initial,
        "sensors": sensors,
    });
    if vehicle_type == VehicleType::Car {
        out["kind"] = json!("rover");
        out["airframe"] = json!("f1tenth");
    }
    Ok((out, vehicle_type))
}

/// A `PX4Multirotor`'s own key (`at`: "file: Vehicles.name.key"): read into
/// `px4`, or warned about. Whether `k` was one.
fn px4_key(
    px4: &mut Px4Settings,
    k: &str,
    x: &Value,
    at: &str,
    w: &mut Vec<String>,
) -> Result<bool, String> {
    match k {
        "UseSerial" if x.as_bool() == Some(true) => Err(format!(
            "{at} true: mavsitl connects PX4 over TCP (UseSerial false, UseTcp true)"
        )),
        "UseTcp" if x.as_bool() == Some(false) => Err(format!(
            "{at} false: mavsitl connects PX4 over TCP (UseTcp true)"
        )),
        "UseSerial" | "UseTcp" => x
            .as_bool()
            .map(|_| true)
            .ok_or_else(|| format!("{at} is not a boolean: {x}")),
        "TcpPort" => {
            let instance = x
                .as_u64()
                .and_then(|p| p.checked_sub(4560))
                .and_then(|n| u8::try_from(n).ok())
                .ok_or_else(|| {
                    format!("{at} {x}: PX4 connects to 4560 + instance (4560..=4815)")
                })?;
            px4.instance = instance;
            Ok(true)
        }
        "LockStep" => {
            if x.as_bool() == Some(false) {
                w.push(format!("{at} false: mavsitl always runs PX4 in lockstep"));
            }
            Ok(true)
        }
        "Parameters" => {
            px4.parameters.extend(parameters(x, at)?);
            Ok(true)
        }
        k if PX4_RELAY_KEYS.contains(&k) => {
            w.push(format!(
                "{at} is not used: ground stations and offboard programs talk to PX4's own MAVLink ports"
            ));
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// A vehicle's `Parameters` object as (name, value) pairs (`at`: "file:
/// Vehicles.name.Parameters").
fn parameters(x: &Value, at: &str) -> Result<Vec<(String, String)>, String> {
    let params = x
        .as_object()
        .ok_or_else(|| format!("{at} is not an object"))?;
    params
        .iter()
        .map(|(p, v)| match v {
            Value::Number(n) => Ok((p.clone(), n.to_string())),
            Value::Bool(b) => Ok((p.clone(), u8::from(*b).to_string())),
            _ => Err(format!("{at}.{p} is not a number: {v}")),
        })
        .collect()
}

/// One AirSim sensor as (scenario key, parameters), None for a kind mavsitl
/// does not have.
fn sensor(
    s: &Value,
    at: &str,
    name: &str,
    w: &mut Vec<String>,
) -> Result<Option<(&'static str, Value)>, String> {
    let kind = s
        .get("SensorType")
        .and_then(Value::as_u64)
        .ok_or_else(|| format!("{name}: {at}.SensorType missing or not a number"))?;
    let (key, map): (&str, &[(&str, &str)]) = match kind {
        1 => ("baro", &[("UncorrelatedNoiseSigma", "noise_sigma_pa")]),
        2 => (
            "imu",
            &[
                ("AngularRandomWalk", "angular_random_walk_deg_sqrt_h"),
                ("GyroBiasStability", "gyro_bias_stability_deg_h"),
                ("GyroBiasStabilityTau", "gyro_bias_stability_tau_s"),
                ("VelocityRandomWalk", "velocity_random_walk_mg_sqrt_hz"),
                ("AccelBiasStability", "accel_bias_stability_ug"),
                ("AccelBiasStabilityTau", "accel_bias_stability_tau_s"),
            ],
        ),
        3 => (
            "gps",
            &[
                ("EphInitial", "eph_initial_m"),
                ("EpvInitial", "epv_initial_m"),
                ("EphFinal", "eph_final_m"),
                ("EpvFinal", "epv_final_m"),
                ("EphTimeConstant", "eph_tau_s"),
                ("EphMin3d", "fix_3d_eph_m"),
                ("UpdateLatency", "latency_s"),
                ("StartupDelay", "startup_s"),
            ],
        ),
        4 => (
            "mag",
            &[
                ("NoiseSigma", "noise_sigma_gauss"),
                ("ScaleFactor", "scale_factor"),
            ],
        ),
        5 => (
            "rangefinder",
            &[("MinDistance", "min_m"), ("MaxDistance", "max_m")],
        ),
        6 => return lidar(s, at, name, w),
        k => {
            w.push(format!(
                "{name}: {at}: SensorType {k} is not one mavsitl fits (1 barometer, 2 IMU, 3 GPS, 4 magnetometer, 5 distance, 6 LiDAR)"
            ));
            return Ok(None);
        }
    };
    let mut out = Map::new();
    let mut mount = Map::new();
    for (k, x) in s.as_object().into_iter().flatten() {
        let bad = || format!("{name}: {at}.{k} is not a number: {x}");
        match k.as_str() {
            "SensorType" => {}
            "Enabled" => {
                let e = x
                    .as_bool()
                    .ok_or_else(|| format!("{name}: {at}.Enabled is not a boolean"))?;
                out.insert("enabled".into(), json!(e));
            }
            "UpdateFrequency" => {
                let hz = x.as_f64().ok_or_else(bad)?;
                if !(1.0..=4000.0).contains(&hz) {
                    return Err(format!(
                        "{name}: {at}.UpdateFrequency {x} is outside 1..=4000 Hz"
                    ));
                }
                out.insert("rate_hz".into(), json!(hz.round() as u32));
            }
            "NoiseBias" if kind == 4 => {
                let b = x.as_f64().ok_or_else(bad)?;
                out.insert("bias_gauss".into(), json!([b, b, b]));
            }
            "X" | "Y" | "Z" | "Roll" | "Pitch" | "Yaw" => {
                let n = x.as_f64().ok_or_else(bad)?;
                let m = match k.as_str() {
                    "X" => "x_m",
                    "Y" => "y_m",
                    "Z" => "z_m",
                    "Roll" => "roll_deg",
                    "Pitch" => "pitch_deg",
                    _ => "yaw_deg",
                };
                mount.insert(m.into(), json!(n));
            }
            k => match map.iter().find(|(a, _)| *a == k) {
                Some((_, ours)) => {
                    out.insert((*ours).into(), json!(x.as_f64().ok_or_else(bad)?));
                }
                None => w.push(format!(
                    "{name}: {at}.{k} has no counterpart in mavsitl's {key} model; ignored"
                )),
            },
        }
    }
    if kind == 5 && !out.contains_key("enabled") {
        out.insert("enabled".into(), json!(true));
    }
    if !mount.is_empty() {
        out.insert("mount".into(), Value::Object(mount));
    }
    Ok(Some((key, Value::Object(out))))
}

/// AirSim's LiDAR keys and mavsitl's.
const LIDAR_KEYS: &[(&str, &str)] = &[
    ("NumberOfChannels", "channels"),
    ("Range", "range_m"),
    ("PointsPerSecond", "points_per_second"),
    ("RotationsPerSecond", "rotations_per_second"),
    ("VerticalFOVUpper", "vertical_fov_upper_deg"),
    ("VerticalFOVLower", "vertical_fov_lower_deg"),
    ("HorizontalFOVStart", "horizontal_fov_start_deg"),
    ("HorizontalFOVEnd", "horizontal_fov_end_deg"),
];

/// A LiDAR (SensorType 6) as scenario JSON, None when not `Enabled` (a
/// listed sensor without `Enabled` is off, as in AirSim).
fn lidar(
    s: &Value,
    at: &str,
    name: &str,
    w: &mut Vec<String>,
) -> Result<Option<(&'static str, Value)>, String> {
    let mut out = Map::new();
    let mut mount = Map::new();
    let mut enabled = false;
    for (k, x) in s.as_object().into_iter().flatten() {
        let bad = || format!("{name}: {at}.{k} is not a number: {x}");
        match k.as_str() {
            "SensorType" => {}
            "Enabled" => {
                enabled = x
                    .as_bool()
                    .ok_or_else(|| format!("{name}: {at}.Enabled is not a boolean"))?;
            }
            "DataFrame" => {
                let f = x
                    .as_str()
                    .filter(|f| matches!(*f, "SensorLocalFrame" | "VehicleInertialFrame"));
                let f = f.ok_or_else(|| {
                    format!("{name}: {at}.DataFrame {x}: give \"SensorLocalFrame\" or \"VehicleInertialFrame\"")
                })?;
                out.insert("data_frame".into(), json!(f));
            }
            "X" | "Y" | "Z" | "Roll" | "Pitch" | "Yaw" => {
                mount.insert(mount_key(k).into(), json!(x.as_f64().ok_or_else(bad)?));
            }
            "NumberOfChannels" | "PointsPerSecond" => {
                let n = x
                    .as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| {
                        format!("{name}: {at}.{k} {x} is not a whole number up to 4294967295")
                    })?;
                let ours = LIDAR_KEYS
                    .iter()
                    .find(|(a, _)| a == k)
                    .map_or(k.as_str(), |(_, o)| o);
                out.insert(ours.into(), json!(n));
            }
            k => match LIDAR_KEYS.iter().find(|(a, _)| *a == k) {
                Some((_, ours)) => {
                    out.insert((*ours).into(), json!(x.as_f64().ok_or_else(bad)?));
                }
                None => w.push(format!(
                    "{name}: {at}.{k} is not used by mavsitl's LiDAR; ignored"
                )),
            },
        }
    }
    if !mount.is_empty() {
        out.insert("mount".into(), Value::Object(mount));
    }
    if !enabled {
        w.push(format!(
            "{name}: {at}: a LiDAR without \"Enabled\": true is off, as AirSim reads it"
        ));
    }
    Ok(enabled.then_some(("lidars", Value::Object(out))))
}

/// A sensor's or camera's pose key as the scenario's mount key.
fn mount_key(k: &str) -> &'static str {
    match k {
        "X" => "x_m",
        "Y" => "y_m",
        "Z" => "z_m",
        "Roll" => "roll_deg",
        "Pitch" => "pitch_deg",
        _ => "yaw_deg",
    }
}

/// The capture keys mavsitl renders by; the rest of a CaptureSettings entry
/// is warned about.
const CAPTURE_KEYS: &[(&str, &str)] = &[
    ("Width", "width"),
    ("Height", "height"),
    ("FOV_Degrees", "fov_deg"),
];

/// One camera's size and field of view from its `CaptureSettings` list
/// (`at` names it), over `into`: ImageType 0's entry, else the first.
fn capture(
    list: &Value,
    at: &str,
    name: &str,
    into: &mut Map<String, Value>,
    w: &mut Vec<String>,
) -> Result<(), String> {
    let entries = list
        .as_array()
        .ok_or_else(|| format!("{name}: {at}.CaptureSettings is not a list"))?;
    let scene = entries
        .iter()
        .find(|e| e.get("ImageType").and_then(Value::as_i64) == Some(0))
        .or_else(|| entries.first());
    let Some(entry) = scene else { return Ok(()) };
    for e in entries {
        let differs = CAPTURE_KEYS
            .iter()
            .any(|(k, _)| e.get(*k).is_some() && e.get(*k) != entry.get(*k));
        if differs {
            w.push(format!(
                "{name}: {at}.CaptureSettings: mavsitl renders every image type of a camera at one size and field of view, ImageType 0's (or the first entry's)"
            ));
            break;
        }
    }
    for (k, x) in entry.as_object().into_iter().flatten() {
        match CAPTURE_KEYS.iter().find(|(a, _)| a == k) {
            Some((_, "fov_deg")) => {
                let f = x.as_f64().ok_or_else(|| {
                    format!("{name}: {at}.CaptureSettings.{k} is not a number: {x}")
                })?;
                into.insert("fov_deg".into(), json!(f));
            }
            Some((_, ours)) => {
                let n = x
                    .as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| {
                        format!(
                            "{name}: {at}.CaptureSettings.{k} {x} is not a whole number of pixels"
                        )
                    })?;
                into.insert((*ours).into(), json!(n));
            }
            None if k == "ImageType" => {}
            None => w.push(format!(
                "{name}: {at}.CaptureSettings.{k} is not used by mavsitl's renderer; ignored"
            )),
        }
    }
    Ok(())
}

/// A vehicle's cameras as scenario JSON: AirSim's five (`front_center`,
/// `front_right`, `front_left`, `bottom_center`, `back_center`) with
/// `CameraDefaults`' capture settings, then the vehicle's `Cameras`, each
/// replacing the one of its name or added.
fn cameras(
    own: Option<&Value>,
    defaults: Option<&Value>,
    at: &str,
    name: &str,
    w: &mut Vec<String>,
) -> Result<Value, String> {
    let mut default_capture = Map::new();
    if let Some(list) = defaults.and_then(|d| d.get("CaptureSettings")) {
        capture(list, "CameraDefaults", name, &mut default_capture, w)?;
    }
    let mut list: Vec<Map<String, Value>> =
        mavsitl_sim::sensors::vision::CameraSpec::airsim_defaults()
            .iter()
            .map(|c| {
                let mut m = match serde_json::to_value(c) {
                    Ok(Value::Object(m)) => m,
                    _ => Map::new(),
                };
                m.extend(default_capture.clone());
                m
            })
            .collect();
    let Some(own) = own else {
        return Ok(Value::Array(list.into_iter().map(Value::Object).collect()));
    };
    let own = own
        .as_object()
        .ok_or_else(|| format!("{name}: {at} is not an object"))?;
    for (cname, c) in own {
        let here = format!("{at}.{cname}");
        let mut cam = list
            .iter()
            .position(|m| m.get("name").and_then(Value::as_str) == Some(cname.as_str()))
            .map(|i| list.remove(i))
            .unwrap_or_else(|| {
                let mut m = default_capture.clone();
                m.insert("name".into(), json!(cname));
                m
            });
        let mut mount = cam
            .remove("mount")
            .and_then(|m| m.as_object().cloned())
            .unwrap_or_default();
        for (k, x) in c
            .as_object()
            .ok_or_else(|| format!("{name}: {here} is not an object"))?
        {
            match k.as_str() {
                "CaptureSettings" => capture(x, &here, name, &mut cam, w)?,
                "X" | "Y" | "Z" | "Roll" | "Pitch" | "Yaw" => {
                    let n = x
                        .as_f64()
                        .ok_or_else(|| format!("{name}: {here}.{k} is not a number: {x}"))?;
                    mount.insert(mount_key(k).into(), json!(n));
                }
                k => w.push(format!(
                    "{name}: {here}.{k} is not used by mavsitl's renderer; ignored"
                )),
            }
        }
        cam.insert("mount".into(), Value::Object(mount));
        list.push(cam);
    }
    Ok(Value::Array(list.into_iter().map(Value::Object).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cameras_and_lidars_map_onto_the_vehicles_sensors() {
        let text = r#"{
          "SimMode": "Multirotor",
          "CameraDefaults": {"CaptureSettings": [{"ImageType": 0, "Width": 640, "Height": 480, "TargetGamma": 1.5}]},
          "Vehicles": {"Drone1": {"VehicleType": "SimpleFlight",
             "Cameras": {"front_left": {"CaptureSettings": [{"ImageType": 0, "Width": 320, "Height": 240, "FOV_Degrees": 70},
                                                            {"ImageType": 1, "Width": 160}], "Y": -0.1, "Pitch": -10},
                         "rear_low": {"X": -0.3, "Z": 0.1, "Yaw": 180}},
             "Sensors": {"Lidar1": {"SensorType": 6, "Enabled": true, "NumberOfChannels": 32, "PointsPerSecond": 300000,
                                    "DataFrame": "VehicleInertialFrame", "Z": -0.2, "DrawDebugPoints": true},
                         "Lidar2": {"SensorType": 6}}}}
        }"#;
        let i = import(text, "s.json").expect("import");
        let sensors = &i.scenario["vehicles"][0]["sensors"];
        let cams = sensors["cameras"].as_array().expect("cameras");
        let names: Vec<&str> = cams
            .iter()
            .map(|c| c["name"].as_str().expect("name"))
            .collect();
        assert_eq!(
            names,
            [
                "front_center",
                "front_right",
                "bottom_center",
                "back_center",
                "front_left",
                "rear_low"
            ]
        );
        // CameraDefaults give every camera its size; a camera's own wins.
        assert_eq!(
            (cams[0]["width"].as_u64(), cams[0]["height"].as_u64()),
            (Some(640), Some(480))
        );
        let left = &cams[4];
        assert_eq!(
            (left["width"].as_u64(), left["height"].as_u64()),
            (Some(320), Some(240))
        );
        assert_eq!(left["fov_deg"], 70.0);
        assert_eq!(left["mount"]["y_m"], -0.1);
        assert_eq!(left["mount"]["pitch_deg"], -10.0);
        // Its default mount's other values stay.
        assert_eq!(left["mount"]["x_m"], 0.25);
        assert_eq!(cams[5]["mount"]["yaw_deg"], 180.0);
        assert_eq!(cams[5]["mount"]["x_m"], -0.3);
        assert_eq!(cams[5]["mount"]["z_m"], 0.1);
        assert_eq!(cams[5]["width"], 640);
        let lidars = sensors["lidars"].as_array().expect("lidars");
        // Lidar2 lists no Enabled: off, as AirSim parses it.
        assert_eq!(lidars.len(), 1);
        assert_eq!(lidars[0]["name"], "Lidar1");
        assert_eq!(lidars[0]["channels"], 32);
        assert_eq!(lidars[0]["points_per_second"], 300000);
        assert_eq!(lidars[0]["data_frame"], "VehicleInertialFrame");
        assert_eq!(lidars[0]["mount"]["z_m"], -0.2);
        for said in ["TargetGamma", "one size", "DrawDebugPoints"] {
            assert!(
                i.warnings.iter().any(|w| w.contains(said)),
                "{said}: {:?}",
                i.warnings
            );
        }
        assert!(
            !i.warnings
                .iter()
                .any(|w| w.contains("CaptureSettings.ImageType")),
            "{:?}",
            i.warnings
        );
        // Entries of one size for several types: no warning; a LiDAR's
        // Roll and X read as its mount's.
        let same = r#"{"Vehicles": {"D": {"VehicleType": "SimpleFlight",
            "Cameras": {"c": {"Roll": 5, "CaptureSettings": [{"ImageType": 0, "Width": 64, "Height": 48},
                                            {"ImageType": 5, "Width": 64, "Height": 48}]}},
            "Sensors": {"L": {"SensorType": 6, "Enabled": true, "Roll": 3, "X": 0.2}}}}}"#;
        let one = import(same, "s.json").expect("import");
        assert!(one.warnings.is_empty(), "{:?}", one.warnings);
        let s1 = &one.scenario["vehicles"][0]["sensors"];
        assert_eq!(s1["lidars"][0]["mount"]["roll_deg"], 3.0);
        assert_eq!(s1["lidars"][0]["mount"]["x_m"], 0.2);
        assert_eq!(s1["cameras"][5]["mount"]["roll_deg"], 5.0);
        assert_eq!(s1["cameras"][5]["width"], 64);
        // The scenario checks what the settings ask.
        let src = mavsitl_sim::scenario::ScenarioSource {
            name: "s.json".into(),
            base_dir: std::path::PathBuf::new(),
        };
        assert!(mavsitl_sim::scenario::Scenario::from_json(&i.scenario.to_string(), &src).is_ok());
        let huge = text.replace("\"Width\": 320", "\"Width\": 100000");
        let i = import(&huge, "s.json").expect("import");
        let e = mavsitl_sim::scenario::Scenario::from_json(&i.scenario.to_string(), &src)
            .expect_err("too wide")
            .to_string();
        assert!(
            e.contains("cameras[4].width: 100000 is outside 1..=4096 px"),
            "{e}"
        );
        let fast = text.replace("300000", "1000000000");
        let i = import(&fast, "s.json").expect("import");
        let e = mavsitl_sim::scenario::Scenario::from_json(&i.scenario.to_string(), &src)
            .expect_err("too many points")
            .to_string();
        assert!(
            e.contains("points_per_second: 1000000000 is outside 32..=5000000"),
            "{e}"
        );
        let bad = text.replace("VehicleInertialFrame", "World");
        assert!(import(&bad, "s.json")
            .expect_err("frame")
            .contains("DataFrame \"World\""));
    }

    #[test]
    fn a_cars_lidar_looks_level_and_a_vehicle_without_cameras_gets_airsims_five() {
        let text = r#"{"SimMode": "Car", "Vehicles": {"Car1": {"VehicleType": "PhysXCar",
            "Sensors": {"L": {"SensorType": 6, "Enabled": true, "VerticalFOVLower": -20},
                        "M": {"SensorType": 6, "Enabled": true}}}}}"#;
        let i = import(text, "s.json").expect("import");
        let s = &i.scenario["vehicles"][0]["sensors"];
        assert_eq!(s["lidars"][0]["vertical_fov_upper_deg"], 10.0);
        assert_eq!(s["lidars"][0]["vertical_fov_lower_deg"], -20.0);
        assert_eq!(s["lidars"][1]["vertical_fov_lower_deg"], -10.0);
        // The keys read are not warned about; a view setting and an
        // unknown key are, differently.
        assert!(!i
            .warnings
            .iter()
            .any(|w| w.contains("Car1.Sensors") || w.contains("VehicleType")));
        let text = r#"{"ViewMode": "NoDisplay", "Colour": 1,
            "DefaultSensors": {"L": {"SensorType": 6, "Enabled": true}},
            "Vehicles": {"D": {"VehicleType": "SimpleFlight", "AutoCreate": true,
               "Cameras": {"c": {}}, "Sensors": {"Imu": {"SensorType": 2, "Enabled": true}}}}}"#;
        let i = import(text, "s.json").expect("import");
        let said = |s: &str| i.warnings.iter().any(|w| w.contains(s));
        assert!(said(
            "ViewMode is not used by mavsitl (a view, a window or Unreal's)"
        ));
        assert!(said("Colour is not a setting mavsitl knows"));
        assert!(
            !said("Cameras is not used") && !said("AutoCreate"),
            "{:?}",
            i.warnings
        );
        // The vehicle's IMU replaces the default IMU only: the default
        // LiDAR stays.
        let own = &i.scenario["vehicles"][0]["sensors"];
        assert_eq!(own["lidars"].as_array().map(Vec::len), Some(1));
        assert_eq!(own["cameras"].as_array().map(Vec::len), Some(6));
        assert_eq!(s["cameras"].as_array().map(Vec::len), Some(5));
        assert_eq!(s["cameras"][3]["mount"]["pitch_deg"], -90.0);
    }

    #[test]
    fn a_typical_settings_file_maps_onto_a_scenario() {
        let text = r#"{
          "SettingsVersion": 1.2, "SimMode": "Multirotor", "ClockSpeed": 5,
          "OriginGeopoint": {"Latitude": 47.641468, "Longitude": -122.140165, "Altitude": 122},
          "Wind": {"X": 0, "Y": 3, "Z": 0},
          "CameraDefaults": {},
          "DefaultSensors": {"Imu": {"SensorType": 2, "Enabled": true, "AngularRandomWalk": 0.6}},
          "Vehicles": {"Drone1": {"VehicleType": "SimpleFlight", "X": 2, "Y": 0, "Z": -1, "Yaw": 90,
             "Sensors": {"Imu": {"SensorType": 2, "UpdateFrequency": 500, "VelocityRandomWalk": 0.5},
                         "Lidar1": {"SensorType": 6}}}}
        }"#;
        let i = import(text, "settings.json").expect("import");
        assert_eq!(i.clock_speed, Some(5.0));
        assert_eq!(i.vehicle_name, "Drone1");
        let s = &i.scenario;
        assert_eq!(s["home"]["lat_deg"], 47.641468);
        // Wind towards east blows from the west.
        assert!((s["environment"]["wind"]["from_deg"].as_f64().unwrap() - 270.0).abs() < 1e-9);
        let v = &s["vehicles"][0];
        assert_eq!(v["initial"]["height_m"], 1.0);
        assert_eq!(v["initial"]["yaw_deg"], 90.0);
        // The vehicle's sensor replaces the default one of the same kind.
        assert_eq!(v["sensors"]["imu"]["rate_hz"], 500);
        assert_eq!(v["sensors"]["imu"]["velocity_random_walk_mg_sqrt_hz"], 0.5);
        // CameraDefaults is read now; a LiDAR listed without Enabled is off.
        assert!(!i.warnings.iter().any(|w| w.contains("CameraDefaults")));
        assert!(i
            .warnings
            .iter()
            .any(|w| w.contains("Lidar1") && w.contains("off")));
        // And the scenario loads.
        let src = mavsitl_sim::scenario::ScenarioSource {
            name: "settings.json".into(),
            base_dir: ".".into(),
        };
        mavsitl_sim::scenario::Scenario::from_json(&s.to_string(), &src).expect("scenario");
    }

    #[test]
    fn airsims_recording_settings_become_the_recordings_cameras() {
        // AirSim's own physics engine named: nothing to warn of.
        let i = import(r#"{"PhysicsEngineName": "FastPhysicsEngine"}"#, "s.json").expect("import");
        assert!(i.warnings.is_empty(), "{:?}", i.warnings);
        let i = import(r#"{"PhysicsEngineName": "PhysX"}"#, "s.json").expect("import");
        assert!(
            i.warnings[0].contains("mavsitl runs its own physics"),
            "{:?}",
            i.warnings
        );
        // None given: AirSim's own, camera "0"'s scene every 0.05 s.
        let i = import("{}", "s.json").expect("import");
        assert_eq!(
            i.scenario["record"],
            json!({"camera_rate_hz": 20, "images": ["scene"], "cameras": ["front_center"]})
        );
        let text = r#"{"Recording": {"RecordOnMove": false, "RecordInterval": 0.1, "Folder": "",
            "Cameras": [
              {"CameraName": "2", "ImageType": 0, "PixelsAsFloat": false, "Compress": true},
              {"CameraName": "front_right", "ImageType": 0},
              {"CameraName": "front_left", "ImageType": 1},
              {"CameraName": "front_left", "ImageType": 2},
              {"CameraName": "1", "ImageType": 5},
              {"CameraName": "0", "ImageType": 7}]}}"#;
        let i = import(text, "s.json").expect("import");
        assert_eq!(
            i.scenario["record"],
            json!({"camera_rate_hz": 10, "images": ["scene", "depth", "segmentation"],
                   "cameras": ["front_left", "front_right"]})
        );
        let says = |k: &str| i.warnings.iter().any(|w| w.contains(k));
        assert!(
            says("Recording.Cameras[5].ImageType Some(7)"),
            "{:?}",
            i.warnings
        );
        assert!(says("Recording.RecordOnMove") && says("Recording.Folder"));
        assert!(!says("Recording.RecordInterval") && !says("Recording.Cameras: "));
        // Image type and interval defaults; a rate that is no whole number,
        // or too slow or fast, refused by key.
        let i = import(
            r#"{"Recording": {"Cameras": [{"CameraName": "3"}]}}"#,
            "s.json",
        )
        .expect("import");
        assert_eq!(
            i.scenario["record"],
            json!({"camera_rate_hz": 20, "images": ["scene"], "cameras": ["bottom_center"]})
        );
        for bad in ["0.3", "2", "0.0001", "0", "-0.05"] {
            let e = import(
                &format!(r#"{{"Recording": {{"RecordInterval": {bad}}}}}"#),
                "s.json",
            )
            .expect_err(bad);
            assert!(e.starts_with("s.json: Recording.RecordInterval "), "{e}");
        }
        assert!(import(r#"{"Recording": {"RecordInterval": 1}}"#, "s.json").is_ok());
        assert!(import(r#"{"Recording": {"RecordInterval": 0.001}}"#, "s.json").is_ok());
        let e = import(
            r#"{"Recording": {"Cameras": [{"ImageType": 0}]}}"#,
            "s.json",
        )
        .expect_err("no name");
        assert_eq!(e, "s.json: Recording.Cameras[0].CameraName is not a string");
        assert!(import(r#"{"Recording": []}"#, "s.json").is_err());
        assert!(import(r#"{"Recording": {"Cameras": {}}}"#, "s.json").is_err());
    }

    #[test]
    fn a_px4_multirotor_gives_its_instance_and_parameters() {
        // As AirSim's PX4 SITL documentation writes it.
        let text = r#"{
          "SettingsVersion": 1.2, "SimMode": "Multirotor", "ClockType": "SteppableClock",
          "Vehicles": {"PX4": {"VehicleType": "PX4Multirotor", "UseSerial": false,
            "LockStep": true, "UseTcp": true, "TcpPort": 4562, "ControlPortLocal": 14540,
            "ControlPortRemote": 14580, "Sensors": {"Barometer": {"SensorType": 1,
            "Enabled": true, "PressureFactorSigma": 0.0001825}},
            "Parameters": {"NAV_RCL_ACT": 0, "NAV_DLL_ACT": 0, "COM_OBL_ACT": 1,
            "LPE_LAT": 47.641468, "LPE_LON": -122.140165}}}
        }"#;
        let i = import(text, "settings.json").expect("import");
        let VehicleType::Px4(px4) = &i.vehicle_type else {
            panic!("{:?}", i.vehicle_type)
        };
        assert_eq!(px4.instance, 2);
        assert_eq!(px4.parameters.len(), 5);
        assert!(px4
            .parameters
            .contains(&("LPE_LAT".to_string(), "47.641468".to_string())));
        assert!(px4
            .parameters
            .contains(&("COM_OBL_ACT".to_string(), "1".to_string())));
        // The relay's ports are named once each, and ignored.
        for k in [
            "ControlPortLocal",
            "ControlPortRemote",
            "PressureFactorSigma",
        ] {
            assert_eq!(
                i.warnings.iter().filter(|w| w.contains(k)).count(),
                1,
                "{k}: {:?}",
                i.warnings
            );
        }
        assert!(!i.warnings.iter().any(|w| w.contains("TcpPort")));
    }

    #[test]
    fn what_would_change_the_run_is_refused_by_name() {
        for (text, needle) in [
            (r#"{"SimMode": "ComputerVision"}"#, "SimMode \"ComputerVision\""),
            (
                r#"{"SimMode": "Car", "Vehicles": {"a": {"VehicleType": "SimpleFlight"}}}"#,
                "Vehicles.a: SimMode \"Car\" takes PhysXCar vehicles",
            ),
            (
                r#"{"Vehicles": {"car": {"VehicleType": "PhysXCar"}}}"#,
                "Vehicles.car: SimMode \"Multirotor\" takes SimpleFlight and PX4Multirotor vehicles",
            ),
            (
                r#"{"Vehicles": {"a": {}, "b": {"VehicleType": "PX4Multirotor"}}}"#,
                "Vehicles.b: with several vehicles each must be a SimpleFlight",
            ),
            (
                r#"{"Vehicles": {"a": {"Parameters": {"MPC_XY_VEL_MAX": 5}}, "b": {}}}"#,
                "Vehicles.b.Parameters differ",
            ),
            (
                r#"{"PhysicsEngineName": "ExternalPhysicsEngine", "Vehicles": {"a": {}, "b": {}}}"#,
                "one SimpleFlight vehicle only",
            ),
            (
                r#"{"Vehicles": {"a": {"VehicleType": "ArduCopter"}}}"#,
                "VehicleType \"ArduCopter\"",
            ),
            (
                r#"{"Vehicles": {"a": {"VehicleType": "PX4Multirotor", "UseSerial": true}}}"#,
                "Vehicles.a.UseSerial true",
            ),
            (
                r#"{"Vehicles": {"a": {"VehicleType": "PX4Multirotor", "TcpPort": 14560}}}"#,
                "Vehicles.a.TcpPort 14560",
            ),
            (
                r#"{"Vehicles": {"a": {"VehicleType": "PX4Multirotor", "Parameters": {"X": "y"}}}}"#,
                "Vehicles.a.Parameters.X",
            ),
            (
                r#"{"PhysicsEngineName": "ExternalPhysicsEngine", "Vehicles": {"a": {"VehicleType": "PX4Multirotor"}}}"#,
                "ExternalPhysicsEngine",
            ),
            (r#"{"ClockSpeed": -1}"#, "ClockSpeed"),
            (
                r#"{"DefaultSensors": {"Imu": {"SensorType": 2, "AngularRandomWalk": "x"}}}"#,
                "AngularRandomWalk",
            ),
            ("[1]", "not a JSON object"),
        ] {
            let e = import(text, "s.json").expect_err(text);
            assert!(e.starts_with("s.json: ") && e.contains(needle), "{e}");
        }
    }

    /// SimMode "Car" serves AirSim's default car, PhysXCar, or the cars
    /// the settings name, each as the F1TENTH rover where the settings put
    /// it.
    #[test]
    fn a_car_settings_file_drives_rovers() {
        let i = import(r#"{"SettingsVersion": 1.2, "SimMode": "Car"}"#, "s.json").expect("a car");
        assert_eq!(
            (i.vehicle_type, i.vehicle_name.as_str()),
            (VehicleType::Car, CAR_NAME)
        );
        assert_eq!(i.scenario["vehicles"][0]["kind"], "rover");
        assert_eq!(i.scenario["vehicles"][0]["airframe"], "f1tenth");
        let i = import(
            r#"{"SimMode": "Car", "Vehicles": {"Car1": {"VehicleType": "PhysXCar", "X": 4, "Yaw": 90},
                                              "Car2": {"VehicleType": "PhysXCar", "Y": -3}}}"#,
            "s.json",
        )
        .expect("two cars");
        let v = i.scenario["vehicles"].as_array().expect("vehicles");
        assert_eq!(
            (v[0]["name"].as_str(), v[1]["name"].as_str()),
            (Some("Car1"), Some("Car2"))
        );
        assert_eq!(v[0]["initial"]["north_m"], 4.0);
        assert_eq!(v[0]["initial"]["yaw_deg"], 90.0);
        assert_eq!(v[1]["initial"]["east_m"], -3.0);
    }

    #[test]
    fn several_simpleflight_vehicles_become_one_world() {
        let i = import(
            r#"{"Vehicles": {"Drone1": {"VehicleType": "SimpleFlight", "X": 4, "Z": -2},
                            "Drone2": {"VehicleType": "SimpleFlight", "X": 8, "Y": -3}}}"#,
            "s.json",
        )
        .expect("two drones");
        let v = i.scenario["vehicles"].as_array().expect("vehicles");
        assert_eq!(v.len(), 2);
        assert_eq!(v[0]["name"], "Drone1");
        assert_eq!(v[1]["name"], "Drone2");
        assert_eq!(v[0]["initial"]["north_m"], 4.0);
        assert_eq!(v[0]["initial"]["height_m"], 2.0);
        assert_eq!(v[1]["initial"]["north_m"], 8.0);
        assert_eq!(v[1]["initial"]["east_m"], -3.0);
        assert_eq!(i.vehicle_type, VehicleType::SimpleFlight);
    }
}
