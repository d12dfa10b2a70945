//! A spinning LiDAR as AirSim's `LidarSimple` defines it, scanned over the
//! sim time its points take.
//!
//! `NumberOfChannels` lasers sit at elevations spread evenly from
//! `VerticalFOVUpper` down to `VerticalFOVLower`; the head turns at
//! `RotationsPerSecond` and all channels fire together `PointsPerSecond /
//! channels` times a second. A firing is kept when its azimuth (deg
//! clockwise from the sensor's x axis) lies within `HorizontalFOVStart` …
//! `HorizontalFOVEnd`. Firings are counted from the start in whole
//! numbers, so their times and azimuths carry no rounding drift, and each
//! is cast from the sensor's pose in the physics tick it falls in: a
//! vehicle moving during a sweep bends the sweep as a real spinning LiDAR's
//! is bent (the pose is held within one tick, 1 ms at 1 kHz).
//!
//! Points are kept until read, up to one second of them and at most
//! [`MAX_KEPT`]; older ones give way to newer.

use std::collections::VecDeque;

use nalgebra::{UnitQuaternion, Vector3};

use crate::scene::{vector, Scene};

/// `PointsPerSecond` at most.
pub const MAX_POINTS_PER_SECOND: u32 = 5_000_000;
/// Points kept unread at most.
pub const MAX_KEPT: u32 = 1_000_000;
/// `NumberOfChannels` at most.
pub const MAX_CHANNELS: u32 = 256;
/// `Range`, m, at most.
pub const MAX_RANGE_M: f64 = 2_000.0;
/// `RotationsPerSecond` at most.
pub const MAX_ROTATIONS_PER_SECOND: f64 = 100.0;

/// The frame points are given in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataFrame {
    /// The sensor's own axes at the point's firing (x forward, y right,
    /// z down), m.
    SensorLocal,
    /// NED from the given origin (AirSim: the vehicle's start), m.
    VehicleInertial,
}

/// A LiDAR's scan parameters (AirSim's names in the docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LidarParams {
    /// `NumberOfChannels`.
    pub channels: u32,
    /// `Range`, m.
    pub range_m: f64,
    /// `PointsPerSecond`.
    pub points_per_second: u32,
    /// `RotationsPerSecond`.
    pub rotations_per_second: f64,
    /// `VerticalFOVUpper`, deg (up positive).
    pub vertical_fov_upper_deg: f64,
    /// `VerticalFOVLower`, deg.
    pub vertical_fov_lower_deg: f64,
    /// `HorizontalFOVStart`, deg.
    pub horizontal_fov_start_deg: f64,
    /// `HorizontalFOVEnd`, deg.
    pub horizontal_fov_end_deg: f64,
    /// `DataFrame`.
    pub data_frame: DataFrame,
    /// Range noise, 1σ, m (0: none).
    pub range_noise_m: f64,
}

impl Default for LidarParams {
    /// AirSim's multirotor defaults.
    fn default() -> Self {
        Self {
            channels: 16,
            range_m: 100.0,
            points_per_second: 100_000,
            rotations_per_second: 10.0,
            vertical_fov_upper_deg: -15.0,
            vertical_fov_lower_deg: -45.0,
            horizontal_fov_start_deg: 0.0,
            horizontal_fov_end_deg: 359.0,
            data_frame: DataFrame::SensorLocal,
            range_noise_m: 0.0,
        }
    }
}

/// One return.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Where, in the LiDAR's data frame, m.
    pub xyz: [f32; 3],
    /// When it was fired, µs of sim time.
    pub t_us: u64,
    /// The segmentation id of the surface it met.
    pub segmentation_id: u8,
    /// The laser (0: the top one).
    pub channel: u16,
}

/// The sensor's pose in a tick: its centre (NED m) and axes → NED.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SensorPose {
    /// Centre, NED m.
    pub position_ned_m: Vector3<f64>,
    /// Rotation sensor axes → NED.
    pub attitude: UnitQuaternion<f64>,
}

/// A spinning LiDAR's state.
#[derive(Debug, Clone)]
pub struct Lidar {
    params: LidarParams,
    /// Unit firing directions per channel, before azimuth: (cos el, sin el).
    elevations: Vec<(f64, f64)>,
    /// Firings counted so far (each fires every channel).
    fired: u64,
    points: VecDeque<Point>,
    cap: usize,
    dropped: u64,
    /// Points ever kept, read or not.
    pushed: u64,
}

impl Lidar {
    /// A LiDAR of `params` (checked by the caller against the ranges above).
    pub fn new(params: LidarParams) -> Self {
        let n = params.channels.max(1);
        let step = if n > 1 {
            (params.vertical_fov_upper_deg - params.vertical_fov_lower_deg) / f64::from(n - 1)
        } else {
            0.0
        };
        let elevations = (0..n)
            .map(|i| {
                let el = (params.vertical_fov_upper_deg - step * f64::from(i)).to_radians();
                (el.cos(), el.sin())
            })
            .collect();
        let cap = params.points_per_second.min(MAX_KEPT) as usize;
        Self {
            params,
            elevations,
            fired: 0,
            points: VecDeque::new(),
            cap,
            dropped: 0,
            pushed: 0,
        }
    }

    /// Firings per second.
    fn firing_rate(&self) -> u64 {
        u64::from(self.params.points_per_second / self.params.channels.max(1))
    }

    /// The firings due by `t_us`: every one before it (one at `t_us`
    /// itself is cast in the next step, from that step's pose).
    fn due(&self, t_us: u64) -> u64 {
        let r = self.firing_rate();
        ((u128::from(t_us) * u128::from(r)) / 1_000_000) as u64
    }

    /// The azimuth of firing `k`, deg in [0, 360).
    fn azimuth_deg(&self, k: u64) -> f64 {
        let r = self.firing_rate().max(1);
        // Turns made by firing k: rps · k / r.
        let turns = self.params.rotations_per_second * k as f64 / r as f64;
        turns.fract() * 360.0
    }

    /// Fires every laser due up to `t_us` from `pose`, into the buffer;
    /// `origin_ned` is the data frame's origin for `VehicleInertial`;
    /// `noise` draws a standard normal sample per return when there is
    /// range noise.
    pub fn step(
        &mut self,
        scene: &Scene,
        t_us: u64,
        pose: &SensorPose,
        origin_ned: &Vector3<f64>,
        noise: &mut dyn FnMut() -> f64,
    ) {
        let due = self.due(t_us);
        let rate = self.firing_rate().max(1);
        // More than a second's firings at once (a first step late in a
        // run): only the last second's could be kept, so only those fire.
        self.fired = self.fired.max(due.saturating_sub(rate));
        let o = vector(&pose.position_ned_m);
        let (lo, hi) = (
            self.params.horizontal_fov_start_deg,
            self.params.horizontal_fov_end_deg,
        );
        while self.fired < due {
            let k = self.fired;
            self.fired += 1;
            let az = self.azimuth_deg(k);
            if az < lo || az > hi {
                continue;
            }
            let t_fire = (u128::from(k) * 1_000_000 / u128::from(rate)) as u64;
            let (ca, sa) = (az.to_radians().cos(), az.to_radians().sin());
            for ch in 0..self.elevations.len() {
                let (ce, se) = self.elevations[ch];
                // Up is −z in the sensor's FRD axes.
                let d_s = Vector3::new(ce * ca, ce * sa, -se);
                let d = pose.attitude * d_s;
                let Some(hit) = scene.cast(o, vector(&d), self.params.range_m as f32) else {
                    continue;
                };
                let mut r = f64::from(hit.t);
                if self.params.range_noise_m > 0.0 {
                    r = (r + self.params.range_noise_m * noise()).max(0.0);
                }
                let p = match self.params.data_frame {
                    DataFrame::SensorLocal => d_s * r,
                    DataFrame::VehicleInertial => pose.position_ned_m + d * r - origin_ned,
                };
                self.push(Point {
                    xyz: [p.x as f32, p.y as f32, p.z as f32],
                    t_us: t_fire,
                    segmentation_id: scene.segmentation_id(Some(hit.surface)),
                    channel: ch as u16,
                });
            }
        }
    }

    fn push(&mut self, p: Point) {
        if self.points.len() >= self.cap.max(1) {
            self.points.pop_front();
            self.dropped += 1;
        }
        self.points.push_back(p);
        self.pushed += 1;
    }

    /// The points since the last call, oldest first, into `out` (cleared).
    pub fn take(&mut self, out: &mut Vec<Point>) {
        out.clear();
        out.extend(self.points.drain(..));
    }

    /// Points given way to newer ones because nobody read them in time.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Points kept since the start, read or not: the number the next one
    /// will have.
    pub fn pushed(&self) -> u64 {
        self.pushed
    }

    /// The points still unread whose numbers are `from` or later, oldest
    /// first, without reading them: a recorder's view beside the API's.
    pub fn since(&self, from: u64) -> impl Iterator<Item = &Point> {
        let first = self.pushed - self.points.len() as u64;
        let skip = from.saturating_sub(first).min(self.points.len() as u64);
        self.points.iter().skip(skip as usize)
    }
}
