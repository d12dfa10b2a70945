//! Cameras and spinning LiDARs on a vehicle, looking at the scene
//! ([`mavsitl_render`]).
//!
//! A camera is rendered when asked (AirSim's `simGetImages`, a recording's
//! frame), from the vehicle's true pose at that tick and its mount. A
//! LiDAR fires every tick after the physics, from the vehicle's pose at
//! the end of the tick, so that a sweep spans the sim time its points
//! take. Both are given in the scenario as AirSim names them (camera
//! `width`, `height`, `fov_deg` for `CaptureSettings`' Width, Height,
//! FOV_Degrees; the LiDAR's keys below), with AirSim's defaults.

use nalgebra::{UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};

use super::mount::Mount;
use mavsitl_core::rng::{lidar_rng, NoiseRng};
use mavsitl_render::camera::{CameraPose, Intrinsics, MAX_FOV_DEG, MAX_SIDE_PX};
use mavsitl_render::lidar::{
    DataFrame, Lidar, LidarParams, Point, SensorPose, MAX_CHANNELS, MAX_POINTS_PER_SECOND,
    MAX_RANGE_M, MAX_ROTATIONS_PER_SECOND,
};
use mavsitl_render::Scene;

/// At most this many cameras, and as many LiDARs, on one vehicle.
pub const MAX_PER_VEHICLE: usize = 16;

/// A camera on the vehicle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CameraSpec {
    /// Its name (AirSim's camera name, e.g. `front_center`).
    pub name: String,
    /// Image width, px, 1–4096 (default: 256, AirSim's).
    #[serde(default = "default_width")]
    pub width: u32,
    /// Image height, px, 1–4096 (default: 144).
    #[serde(default = "default_height")]
    pub height: u32,
    /// Horizontal field of view, deg, (0, 170] (default: 90).
    #[serde(default = "default_fov")]
    pub fov_deg: f64,
    /// Where it sits on the body and how it is turned (its x axis is the
    /// optical axis).
    #[serde(default)]
    pub mount: Mount,
}

fn default_width() -> u32 {
    256
}
fn default_height() -> u32 {
    144
}
fn default_fov() -> f64 {
    90.0
}

impl CameraSpec {
    /// A camera of AirSim's default capture settings at `mount`.
    pub fn new(name: &str, mount: Mount) -> Self {
        Self {
            name: name.into(),
            width: default_width(),
            height: default_height(),
            fov_deg: default_fov(),
            mount,
        }
    }

    /// AirSim's five cameras at mavsitl's mounts: `front_center` 0.25 m
    /// ahead of the centre of mass, `front_right` and `front_left` beside
    /// it 0.06 m either side (a 0.12 m stereo baseline), `bottom_center`
    /// 0.1 m below looking down, `back_center` 0.25 m behind looking back;
    /// each at AirSim's default capture, 256 × 144 px and 90°.
    pub fn airsim_defaults() -> Vec<CameraSpec> {
        let at = |x_m: f64, y_m: f64, z_m: f64, pitch_deg: f64, yaw_deg: f64| Mount {
            x_m,
            y_m,
            z_m,
            pitch_deg,
            yaw_deg,
            ..Mount::default()
        };
        vec![
            CameraSpec::new("front_center", at(0.25, 0.0, 0.0, 0.0, 0.0)),
            CameraSpec::new("front_right", at(0.25, 0.06, 0.0, 0.0, 0.0)),
            CameraSpec::new("front_left", at(0.25, -0.06, 0.0, 0.0, 0.0)),
            CameraSpec::new("bottom_center", at(0.0, 0.0, 0.1, -90.0, 0.0)),
            CameraSpec::new("back_center", at(-0.25, 0.0, 0.0, 0.0, 180.0)),
        ]
    }

    /// Its intrinsics.
    pub fn intrinsics(&self) -> Intrinsics {
        Intrinsics::from_fov(self.width, self.height, self.fov_deg)
    }

    /// Its pose in the world for a body at `pos_ned_m` with attitude
    /// `att_ned_frd`.
    pub fn pose(&self, pos_ned_m: &Vector3<f64>, att_ned_frd: &UnitQuaternion<f64>) -> CameraPose {
        let (p, q) = mounted(&self.mount, pos_ned_m, att_ned_frd);
        CameraPose {
            position_ned_m: p,
            attitude: q,
        }
    }

    /// Checks the values: the problem, naming the key.
    pub fn problem(&self) -> Option<String> {
        let side = |k: &str, v: u32| {
            (!(1..=MAX_SIDE_PX).contains(&v))
                .then(|| format!("{k}: {v} is outside 1..={MAX_SIDE_PX} px"))
        };
        side("width", self.width)
            .or_else(|| side("height", self.height))
            .or_else(|| {
                (!(self.fov_deg > 0.0 && self.fov_deg <= MAX_FOV_DEG)).then(|| {
                    format!(
                        "fov_deg: {} is outside (0, {MAX_FOV_DEG}] deg",
                        self.fov_deg
                    )
                })
            })
            .or_else(|| self.mount.validate().err().map(|e| e.to_string()))
            .or_else(|| name_problem(&self.name))
    }
}

/// A mount's pose in the world: the sensor's centre and its axes → NED.
fn mounted(
    mount: &Mount,
    pos_ned_m: &Vector3<f64>,
    att_ned_frd: &UnitQuaternion<f64>,
) -> (Vector3<f64>, UnitQuaternion<f64>) {
    (
        pos_ned_m + att_ned_frd * mount.offset_frd_m(),
        att_ned_frd * mount.sensor_from_body().inverse(),
    )
}

fn name_problem(name: &str) -> Option<String> {
    (name.is_empty() || name.len() > 64).then(|| format!("name: \"{name}\" must be 1 to 64 bytes"))
}

/// The frame a LiDAR's points are given in (AirSim's `DataFrame`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum LidarFrame {
    /// The sensor's own axes (AirSim's `SensorLocalFrame`).
    #[default]
    SensorLocalFrame,
    /// NED from the vehicle's start (AirSim's `VehicleInertialFrame`).
    VehicleInertialFrame,
}

/// A spinning LiDAR on the vehicle, with AirSim's keys and multirotor
/// defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LidarSpec {
    /// Its name (AirSim's sensor name).
    pub name: String,
    /// Lasers, 1–256 (default: 16).
    #[serde(default = "d_channels")]
    pub channels: u32,
    /// Range, m, (0, 2000] (default: 100).
    #[serde(default = "d_range")]
    pub range_m: f64,
    /// Points a second, all lasers, at least one firing of every laser a
    /// second and at most 5 000 000 (default: 100 000).
    #[serde(default = "d_pps")]
    pub points_per_second: u32,
    /// Head rotations a second, (0, 100] (default: 10).
    #[serde(default = "d_rps")]
    pub rotations_per_second: f64,
    /// Top laser's elevation, deg (up positive), −90..=90 (default: −15).
    #[serde(default = "d_upper")]
    pub vertical_fov_upper_deg: f64,
    /// Bottom laser's elevation, deg, −90..=upper (default: −45).
    #[serde(default = "d_lower")]
    pub vertical_fov_lower_deg: f64,
    /// Azimuths kept from, deg clockwise from the sensor's x axis, 0..=360 (default: 0).
    #[serde(default)]
    pub horizontal_fov_start_deg: f64,
    /// …to, deg, start..=360 (default: 359).
    #[serde(default = "d_hend")]
    pub horizontal_fov_end_deg: f64,
    /// The points' frame (default: `SensorLocalFrame`).
    #[serde(default)]
    pub data_frame: LidarFrame,
    /// Range noise, 1σ, m, 0..=10 (default: 0).
    #[serde(default)]
    pub range_noise_m: f64,
    /// Where it sits and how it is turned.
    #[serde(default)]
    pub mount: Mount,
}

fn d_channels() -> u32 {
    16
}
fn d_range() -> f64 {
    100.0
}
fn d_pps() -> u32 {
    100_000
}
fn d_rps() -> f64 {
    10.0
}
fn d_upper() -> f64 {
    -15.0
}
fn d_lower() -> f64 {
    -45.0
}
fn d_hend() -> f64 {
    359.0
}

impl LidarSpec {
    /// A LiDAR of AirSim's multirotor defaults.
    pub fn new(name: &str) -> Self {
        Self {
            name: name.into(),
            channels: d_channels(),
            range_m: d_range(),
            points_per_second: d_pps(),
            rotations_per_second: d_rps(),
            vertical_fov_upper_deg: d_upper(),
            vertical_fov_lower_deg: d_lower(),
            horizontal_fov_start_deg: 0.0,
            horizontal_fov_end_deg: d_hend(),
            data_frame: LidarFrame::SensorLocalFrame,
            range_noise_m: 0.0,
            mount: Mount::default(),
        }
    }

    /// Checks the values: the problem, naming the key and its range.
    pub fn problem(&self) -> Option<String> {
        let within = |k: &str, v: f64, lo: f64, hi: f64, range: String| {
            (!(lo..=hi).contains(&v)).then(|| format!("{k}: {v} is outside {range}"))
        };
        let channels = (!(1..=MAX_CHANNELS).contains(&self.channels))
            .then(|| format!("channels: {} is outside 1..={MAX_CHANNELS}", self.channels));
        let pps = (!(self.channels..=MAX_POINTS_PER_SECOND).contains(&self.points_per_second))
            .then(|| {
                format!(
                    "points_per_second: {} is outside {}..={MAX_POINTS_PER_SECOND} (one firing of every laser a second at least)",
                    self.points_per_second, self.channels
                )
            });
        channels
            .or(pps)
            .or_else(|| {
                (!(self.range_m > 0.0 && self.range_m <= MAX_RANGE_M))
                    .then(|| format!("range_m: {} is outside (0, {MAX_RANGE_M}] m", self.range_m))
            })
            .or_else(|| {
                (!(self.rotations_per_second > 0.0
                    && self.rotations_per_second <= MAX_ROTATIONS_PER_SECOND))
                    .then(|| {
                        format!(
                            "rotations_per_second: {} is outside (0, {MAX_ROTATIONS_PER_SECOND}]",
                            self.rotations_per_second
                        )
                    })
            })
            .or_else(|| {
                within(
                    "vertical_fov_upper_deg",
                    self.vertical_fov_upper_deg,
                    -90.0,
                    90.0,
                    "-90..=90 deg".into(),
                )
            })
            .or_else(|| {
                within(
                    "vertical_fov_lower_deg",
                    self.vertical_fov_lower_deg,
                    -90.0,
                    self.vertical_fov_upper_deg,
                    format!("-90..={} deg (the upper edge)", self.vertical_fov_upper_deg),
                )
            })
            .or_else(|| {
                within(
                    "horizontal_fov_start_deg",
                    self.horizontal_fov_start_deg,
                    0.0,
                    360.0,
                    "0..=360 deg".into(),
                )
            })
            .or_else(|| {
                within(
                    "horizontal_fov_end_deg",
                    self.horizontal_fov_end_deg,
                    self.horizontal_fov_start_deg,
                    360.0,
                    format!(
                        "{}..=360 deg (from the start)",
                        self.horizontal_fov_start_deg
                    ),
                )
            })
            .or_else(|| {
                within(
                    "range_noise_m",
                    self.range_noise_m,
                    0.0,
                    10.0,
                    "0..=10 m".into(),
                )
            })
            .or_else(|| self.mount.validate().err().map(|e| e.to_string()))
            .or_else(|| name_problem(&self.name))
    }

    fn params(&self) -> LidarParams {
        LidarParams {
            channels: self.channels,
            range_m: self.range_m,
            points_per_second: self.points_per_second,
            rotations_per_second: self.rotations_per_second,
            vertical_fov_upper_deg: self.vertical_fov_upper_deg,
            vertical_fov_lower_deg: self.vertical_fov_lower_deg,
            horizontal_fov_start_deg: self.horizontal_fov_start_deg,
            horizontal_fov_end_deg: self.horizontal_fov_end_deg,
            data_frame: match self.data_frame {
                LidarFrame::SensorLocalFrame => DataFrame::SensorLocal,
                LidarFrame::VehicleInertialFrame => DataFrame::VehicleInertial,
            },
            range_noise_m: self.range_noise_m,
        }
    }
}

/// A fitted LiDAR: its spec, its scanner and its noise stream.
#[derive(Debug, Clone)]
pub struct LidarUnit {
    spec: LidarSpec,
    lidar: Lidar,
    rng: NoiseRng,
    /// The sensor's pose at its last firing.
    pose: Option<SensorPose>,
}

impl LidarUnit {
    /// The `index`th LiDAR of vehicle `vehicle_id`, its noise from `seed`.
    pub fn new(spec: LidarSpec, seed: u64, vehicle_id: u32, index: usize) -> Self {
        let rng = lidar_rng(seed, vehicle_id, u8::try_from(index).unwrap_or(u8::MAX));
        Self {
            lidar: Lidar::new(spec.params()),
            spec,
            rng,
            pose: None,
        }
    }

    /// Its spec.
    pub fn spec(&self) -> &LidarSpec {
        &self.spec
    }

    /// Fires what is due by `t_us` for a body at `pos_ned_m`, `att_ned_frd`;
    /// `origin_ned` is where the vehicle started (the inertial frame's origin).
    pub fn step(
        &mut self,
        scene: &Scene,
        t_us: u64,
        pos_ned_m: &Vector3<f64>,
        att_ned_frd: &UnitQuaternion<f64>,
        origin_ned: &Vector3<f64>,
    ) {
        let (p, q) = mounted(&self.spec.mount, pos_ned_m, att_ned_frd);
        let pose = SensorPose {
            position_ned_m: p,
            attitude: q,
        };
        let rng = &mut self.rng;
        let mut noise = || super::noise::gaussian(rng);
        self.lidar.step(scene, t_us, &pose, origin_ned, &mut noise);
        self.pose = Some(pose);
    }

    /// The points since the last call, into `out`.
    pub fn take(&mut self, out: &mut Vec<Point>) {
        self.lidar.take(out);
    }

    /// Points fired and kept since the start (see [`Lidar::pushed`]).
    pub fn pushed(&self) -> u64 {
        self.lidar.pushed()
    }

    /// The unread points numbered `from` or later (see [`Lidar::since`]).
    pub fn since(&self, from: u64) -> impl Iterator<Item = &Point> {
        self.lidar.since(from)
    }

    /// The sensor's pose at its last firing.
    pub fn pose(&self) -> Option<SensorPose> {
        self.pose
    }
}
