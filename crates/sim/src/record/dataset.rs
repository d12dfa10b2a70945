//! A vehicle's cameras and LiDARs recorded as a EuRoC-style data set (the
//! ASL layout), with Kalibr's camera–IMU calibration beside it.
//!
//! In the vehicle's recording directory:
//!
//! - `mav0/imu0/data.csv`: the IMU's rows in EuRoC's columns (the same file
//!   as `imu.csv`, hard-linked; copied at the end where links are not
//!   possible), and `mav0/imu0/sensor.yaml`;
//! - `mav0/cam{i}/data.csv` (`#timestamp [ns],filename`), the frames in
//!   `mav0/cam{i}/data/<timestamp>.png` (8-bit RGB) and
//!   `mav0/cam{i}/sensor.yaml`, for each camera recorded, in the
//!   scenario's order;
//! - `mav0/depth{i}/…` alike: camera `i`'s planar depth, 16-bit grey PNG in
//!   millimetres (TUM RGB-D's convention: 0 where nothing lies within
//!   65.535 m);
//! - `mav0/seg{i}/…` alike: camera `i`'s segmentation ids, 8-bit grey PNG;
//! - `mav0/lidar{i}/data.csv` (`#timestamp [ns],filename,points`), one
//!   file per sweep in `mav0/lidar{i}/data/<timestamp>.pcd` (binary PCD:
//!   `x y z` m, `t` s since the sweep's start, `ring` the laser, 0 the
//!   top one, `label` the segmentation id), and `mav0/lidar{i}/sensor.yaml`;
//! - `camchain-imucam.yaml` and `imu.yaml`: Kalibr's camera chain and
//!   IMU noise, as its calibration writes them and VIO front ends read them.
//!
//! **Time.** Every timestamp is sim time in integer ns, the IMU's clock: a
//! frame is rendered at a physics tick, from the true pose of that tick, and
//! stamped with it; the camera rate divides the physics rate, so with an
//! IMU rate that is a multiple of it every frame's time is also an IMU
//! row's. A sweep is named by the time its head passed azimuth 0.
//!
//! **Frames.** Each `sensor.yaml` has EuRoC's `T_BS`: the 4 × 4 transform
//! taking a point in the sensor's frame S into B, the IMU's axes as
//! `imu.csv` gives them (FRD-like for an unrotated mount; FLU when
//! exporting ENU or ISO 8855), with the origin at the IMU. A camera's S is
//! its optical frame (x right, y down, z forward), the pinhole of
//! [`Intrinsics`] in OpenCV's convention (pixel centres at whole
//! coordinates, so the principal point is half a pixel less than the
//! image's centre) with no distortion. A LiDAR's S is its own axes
//! (x forward, y right, z down; FLU when exporting ENU or ISO 8855), in
//! which its points are written unless its `data_frame` is
//! `VehicleInertialFrame` (then the world frame from the vehicle's start).
//! Kalibr's `T_cam_imu` is `T_BS`'s inverse.
//!
//! **Rates.** The `rate_hz` of each `sensor.yaml`, and Kalibr's
//! `update_rate`, are what was delivered: frames (sweeps, samples) less
//! one over the time from the first to the last; the scenario's rate until
//! there are two.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use nalgebra::{Isometry3, Matrix3, Matrix4, Rotation3, Translation3, UnitQuaternion, Vector3};

use crate::scenario::{RecordImage, RecordSpec};
use crate::sensors::mount::Mount;
use crate::sensors::vision::{CameraSpec, LidarFrame, LidarUnit};
use crate::sim::Simulation;
use crate::vehicle::Vehicle;
use mavsitl_core::geo::ExportFrame;
use mavsitl_core::time::Rate;
use mavsitl_render::camera::{render, Frame, Intrinsics};
use mavsitl_render::image::{png, Layout};
use mavsitl_render::lidar::Point;

/// Planar depth written as 0 when farther than this, m (65 535 mm).
const DEPTH_MAX_M: f32 = 65.535;

/// How many were delivered, and when the first and last were.
#[derive(Debug, Clone, Copy, Default)]
struct Delivered {
    count: u64,
    first_ns: u64,
    last_ns: u64,
}

impl Delivered {
    fn add(&mut self, t_ns: u64) {
        if self.count == 0 {
            self.first_ns = t_ns;
        }
        self.count += 1;
        self.last_ns = t_ns;
    }

    /// The rate delivered, Hz: `nominal_hz` until there are two.
    fn rate_hz(&self, nominal_hz: f64) -> f64 {
        let span_ns = self.last_ns.saturating_sub(self.first_ns);
        if self.count < 2 || span_ns == 0 {
            return nominal_hz;
        }
        (self.count - 1) as f64 * 1e9 / span_ns as f64
    }
}

/// An index of files: `data.csv` beside a `data/` folder, written a row
/// at a time (rows are few, and a file name must not carry padding).
struct Index {
    dir: PathBuf,
    csv: File,
}

impl Index {
    fn create(dir: &Path, header: &str) -> io::Result<Self> {
        std::fs::create_dir_all(dir.join("data"))?;
        let mut csv = File::create(dir.join("data.csv"))?;
        writeln!(csv, "{header}")?;
        Ok(Index {
            dir: dir.to_path_buf(),
            csv,
        })
    }

    /// Writes `bytes` as `data/<t_ns>.<ext>` and its row (`extra` after
    /// the file name, with its comma).
    fn add(&mut self, t_ns: u64, ext: &str, bytes: &[u8], extra: &str) -> io::Result<()> {
        let name = format!("{t_ns}.{ext}");
        std::fs::write(self.dir.join("data").join(&name), bytes)?;
        self.csv
            .write_all(format!("{t_ns},{name}{extra}\n").as_bytes())
    }
}

/// One image kind of one camera.
struct ImageStream {
    kind: RecordImage,
    index: Index,
}

/// A camera recorded.
struct CameraStream {
    /// Its place among those recorded (`cam{n}`).
    n: usize,
    spec: CameraSpec,
    images: Vec<ImageStream>,
    frame: Frame,
    delivered: Delivered,
}

/// A LiDAR recorded.
struct LidarStream {
    unit: usize,
    index: Index,
    /// The number of the next point to read.
    next: u64,
    /// The sweep being gathered, and its points.
    sweep: Option<u64>,
    points: Vec<Point>,
    rotations_per_second: f64,
    delivered: Delivered,
    written_points: u64,
}

/// Writes one vehicle's camera frames and LiDAR sweeps, and at the end its
/// calibration.
pub struct DatasetWriter {
    vehicle: usize,
    frame: ExportFrame,
    dir: PathBuf,
    rate: Rate,
    rate_hz: u32,
    cameras: Vec<CameraStream>,
    lidars: Vec<LidarStream>,
    imu: Delivered,
    /// `imu.csv` and its EuRoC name, when they could not be linked.
    imu_copy: Option<(PathBuf, PathBuf)>,
    pixels: Vec<u8>,
    encoded: Vec<u8>,
}

impl DatasetWriter {
    /// The data set of vehicle `index` in `dir` (its recording directory),
    /// when it has cameras to record or LiDARs: the folders made and
    /// `mav0/imu0/data.csv` linked to `imu.csv`. `camera_rate` is the
    /// camera rate as a divider of the physics rate.
    ///
    /// # Errors
    /// I/O errors; a camera named in `record.cameras` that no vehicle has
    /// (`InvalidInput`, naming the key).
    pub fn create(
        dir: &Path,
        index: usize,
        vehicle: &Vehicle,
        spec: &RecordSpec,
        camera_rate: Rate,
        frame: ExportFrame,
    ) -> io::Result<Option<Self>> {
        let chosen = chosen_cameras(vehicle.cameras(), spec);
        if chosen.is_empty() && vehicle.lidars().is_empty() {
            return Ok(None);
        }
        let mav0 = dir.join("mav0");
        let mut cameras = Vec::new();
        for (n, &camera) in chosen.iter().enumerate() {
            let mut images = Vec::new();
            for &kind in &spec.images {
                let folder = mav0.join(format!("{}{n}", folder_prefix(kind)));
                images.push(ImageStream {
                    kind,
                    index: Index::create(&folder, "#timestamp [ns],filename")?,
                });
            }
            cameras.push(CameraStream {
                n,
                spec: vehicle.cameras()[camera].clone(),
                images,
                frame: Frame::default(),
                delivered: Delivered::default(),
            });
        }
        let mut lidars = Vec::new();
        for (unit, l) in vehicle.lidars().iter().enumerate() {
            lidars.push(LidarStream {
                unit,
                index: Index::create(
                    &mav0.join(format!("lidar{unit}")),
                    "#timestamp [ns],filename,points",
                )?,
                next: l.pushed(),
                sweep: None,
                points: Vec::new(),
                rotations_per_second: l.spec().rotations_per_second,
                delivered: Delivered::default(),
                written_points: 0,
            });
        }
        let imu_dir = mav0.join("imu0");
        std::fs::create_dir_all(&imu_dir)?;
        let (imu_csv, imu_data) = (dir.join("imu.csv"), imu_dir.join("data.csv"));
        let _ = std::fs::remove_file(&imu_data);
        let imu_copy = if vehicle.sensors().imu().is_some()
            && std::fs::hard_link(&imu_csv, &imu_data).is_err()
        {
            Some((imu_csv, imu_data))
        } else {
            None
        };
        Ok(Some(DatasetWriter {
            vehicle: index,
            frame,
            dir: dir.to_path_buf(),
            rate: camera_rate,
            rate_hz: spec.camera_rate_hz,
            cameras,
            lidars,
            imu: Delivered::default(),
            imu_copy,
            pixels: Vec::new(),
            encoded: Vec::new(),
        }))
    }

    /// The files it writes, relative to the vehicle's directory, for
    /// `meta.json`.
    pub fn files(&self) -> Vec<String> {
        let mut files = vec![
            "mav0/imu0/data.csv".to_string(),
            "mav0/imu0/sensor.yaml".into(),
            "camchain-imucam.yaml".into(),
            "imu.yaml".into(),
        ];
        for c in &self.cameras {
            for s in &c.images {
                let f = format!("mav0/{}{}", folder_prefix(s.kind), c.n);
                files.push(format!("{f}/data.csv"));
                files.push(format!("{f}/sensor.yaml"));
            }
        }
        for l in &self.lidars {
            files.push(format!("mav0/lidar{}/data.csv", l.unit));
            files.push(format!("mav0/lidar{}/sensor.yaml", l.unit));
        }
        files
    }

    /// Records what this tick delivered: the IMU's sample, a frame of every
    /// camera when the camera rate is due, the LiDARs' new points (a sweep
    /// written when the next begins).
    ///
    /// # Errors
    /// I/O errors.
    pub fn on_tick(&mut self, sim: &Simulation) -> io::Result<()> {
        let Some(v) = sim.vehicles().get(self.vehicle) else {
            return Ok(());
        };
        if let Some(x) = v.samples().imu {
            self.imu.add(ns(x.time));
        }
        if self.rate_hz != 0 && self.rate.is_due(sim.tick()) {
            self.write_frames(sim, v)?;
        }
        for l in &mut self.lidars {
            if let Some(unit) = v.lidars().get(l.unit) {
                l.gather(unit, self.frame)?;
            }
        }
        Ok(())
    }

    fn write_frames(&mut self, sim: &Simulation, v: &Vehicle) -> io::Result<()> {
        let Some(scene) = sim.world().scene() else {
            return Ok(());
        };
        let t_ns = ns(sim.time());
        let s = &v.body().state;
        for c in &mut self.cameras {
            let pose = c.spec.pose(&s.pos_ned_m, &s.att_ned_frd);
            render(scene, &c.spec.intrinsics(), &pose, &mut c.frame);
            for img in &mut c.images {
                self.encoded.clear();
                encode(img.kind, &c.frame, &mut self.pixels, &mut self.encoded)?;
                img.index.add(t_ns, "png", &self.encoded, "")?;
            }
            c.delivered.add(t_ns);
        }
        Ok(())
    }

    /// Writes the sweeps begun, the calibration files with the rates
    /// delivered, and the IMU's rows where they could not be linked.
    ///
    /// # Errors
    /// I/O errors.
    pub fn finish(&mut self, sim: &Simulation) -> io::Result<()> {
        for l in &mut self.lidars {
            l.write_sweep()?;
        }
        if let Some((from, to)) = &self.imu_copy {
            std::fs::copy(from, to)?;
        }
        let Some(v) = sim.vehicles().get(self.vehicle) else {
            return Ok(());
        };
        let b = imu_pose(v);
        let imu = imu_yaml(v, self.imu.rate_hz(imu_nominal_hz(v)));
        std::fs::write(
            self.dir.join("mav0/imu0/sensor.yaml"),
            imu_sensor_yaml(v, &imu, self.frame),
        )?;
        std::fs::write(self.dir.join("imu.yaml"), &imu)?;
        let mut chain = String::new();
        let mut previous: Option<Matrix4<f64>> = None;
        for c in &self.cameras {
            let t_bs = camera_extrinsic(&b, &c.spec.mount, self.frame);
            let rate = c.delivered.rate_hz(f64::from(self.rate_hz));
            for img in &c.images {
                let yaml = camera_yaml(&c.spec, img.kind, &t_bs, rate);
                std::fs::write(img.index.dir.join("sensor.yaml"), yaml)?;
            }
            kalibr_camera(&mut chain, c, &t_bs, previous.as_ref());
            previous = Some(t_bs);
        }
        std::fs::write(self.dir.join("camchain-imucam.yaml"), chain)?;
        for l in &self.lidars {
            if let Some(unit) = v.lidars().get(l.unit) {
                let t_bs = lidar_extrinsic(&b, &unit.spec().mount, self.frame);
                std::fs::write(l.index.dir.join("sensor.yaml"), lidar_yaml(unit, l, &t_bs))?;
            }
        }
        Ok(())
    }
}

/// Sim time in whole ns as EuRoC writes them ([`SimTime::as_nanos`], in
/// the u64 it fits for 584 years).
///
/// [`SimTime::as_nanos`]: mavsitl_core::time::SimTime::as_nanos
fn ns(t: mavsitl_core::time::SimTime) -> u64 {
    u64::try_from(t.as_nanos()).unwrap_or(u64::MAX)
}

/// The folder name of an image kind, before the camera's number.
fn folder_prefix(kind: RecordImage) -> &'static str {
    match kind {
        RecordImage::Scene => "cam",
        RecordImage::Depth => "depth",
        RecordImage::Segmentation => "seg",
    }
}

/// The vehicle's cameras to record: those `record.cameras` names, in its
/// order (a stereo pair's left first, as Kalibr numbers them), or all of
/// them in the vehicle's order when it names none; none when the camera
/// rate is 0 or no image is asked for.
fn chosen_cameras(cameras: &[CameraSpec], spec: &RecordSpec) -> Vec<usize> {
    if spec.camera_rate_hz == 0 || spec.images.is_empty() {
        return Vec::new();
    }
    match &spec.cameras {
        None => (0..cameras.len()).collect(),
        Some(names) => names
            .iter()
            .filter_map(|n| cameras.iter().position(|c| &c.name == n))
            .collect(),
    }
}

/// A camera's names that `record.cameras` gives but no vehicle has: the
/// error naming the first.
///
/// # Errors
/// `InvalidInput`, naming the key and the cameras there are.
pub fn check_cameras(spec: &RecordSpec, vehicles: &[Vehicle]) -> io::Result<()> {
    let Some(names) = &spec.cameras else {
        return Ok(());
    };
    for (i, name) in names.iter().enumerate() {
        let known = vehicles
            .iter()
            .any(|v| v.cameras().iter().any(|c| &c.name == name));
        if !known {
            let all: Vec<&str> = vehicles
                .iter()
                .flat_map(|v| v.cameras().iter().map(|c| c.name.as_str()))
                .collect();
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "record.cameras[{i}]: no camera \"{name}\" on any vehicle (the cameras: {})",
                    if all.is_empty() {
                        "none".into()
                    } else {
                        all.join(", ")
                    }
                ),
            ));
        }
    }
    Ok(())
}

/// A rendered frame as one image kind's PNG, into `encoded`.
fn encode(
    kind: RecordImage,
    frame: &Frame,
    pixels: &mut Vec<u8>,
    encoded: &mut Vec<u8>,
) -> io::Result<()> {
    pixels.clear();
    let layout = match kind {
        RecordImage::Scene => {
            pixels.extend(frame.texels.iter().flat_map(|t| t.rgb));
            Layout::Rgb8
        }
        RecordImage::Depth => {
            pixels.extend(
                frame
                    .texels
                    .iter()
                    .flat_map(|t| depth_mm(t.depth_planar_m).to_be_bytes()),
            );
            Layout::Gray16
        }
        RecordImage::Segmentation => {
            pixels.extend(frame.texels.iter().map(|t| t.segmentation_id));
            Layout::Gray8
        }
    };
    png(frame.width, frame.height, layout, pixels, encoded).map_err(io::Error::other)
}

/// A planar depth in whole millimetres, to the nearest; 0 when nothing
/// lies within 65.535 m.
fn depth_mm(depth_m: f32) -> u16 {
    if depth_m.is_finite() && depth_m <= DEPTH_MAX_M {
        (depth_m * 1000.0).round() as u16
    } else {
        0
    }
}

impl LidarStream {
    /// Reads the unit's new points into the sweep they belong to, writing a
    /// sweep out when a later one begins.
    fn gather(&mut self, unit: &LidarUnit, frame: ExportFrame) -> io::Result<()> {
        let inertial = unit.spec().data_frame == LidarFrame::VehicleInertialFrame;
        let from = std::mem::replace(&mut self.next, unit.pushed());
        for &p in unit.since(from) {
            let mut p = p;
            let sweep = sweep_of(p.t_us, self.rotations_per_second);
            if self.sweep.is_some_and(|s| s != sweep) {
                self.write_sweep()?;
            }
            self.sweep = Some(sweep);
            let xyz = Vector3::new(
                f64::from(p.xyz[0]),
                f64::from(p.xyz[1]),
                f64::from(p.xyz[2]),
            );
            let e = if inertial {
                frame.world_vector(&xyz)
            } else {
                frame.body_vector(&xyz)
            };
            p.xyz = [e.x as f32, e.y as f32, e.z as f32];
            self.points.push(p);
        }
        Ok(())
    }

    /// Writes the sweep gathered, if any, as a PCD file.
    fn write_sweep(&mut self) -> io::Result<()> {
        let Some(sweep) = self.sweep.take() else {
            return Ok(());
        };
        let start_ns = sweep_start_ns(sweep, self.rotations_per_second);
        let bytes = pcd(&self.points, start_ns);
        let n = self.points.len();
        self.index.add(start_ns, "pcd", &bytes, &format!(",{n}"))?;
        self.delivered.add(start_ns);
        self.written_points += n as u64;
        self.points.clear();
        Ok(())
    }
}

/// The sweep a firing at `t_us` belongs to: the whole turns made by then
/// (multiplied before dividing, so that a whole turn is exact).
fn sweep_of(t_us: u64, rotations_per_second: f64) -> u64 {
    (t_us as f64 * rotations_per_second / 1e6).floor() as u64
}

/// When sweep `sweep` began, ns.
fn sweep_start_ns(sweep: u64, rotations_per_second: f64) -> u64 {
    (sweep as f64 * 1e9 / rotations_per_second).round() as u64
}

/// The points as a binary PCD (v0.7) file; `t` in seconds from `start_ns`.
fn pcd(points: &[Point], start_ns: u64) -> Vec<u8> {
    let n = points.len();
    let mut out = format!(
        "# .PCD v0.7 - Point Cloud Data file format\nVERSION 0.7\nFIELDS x y z t ring label\nSIZE 4 4 4 4 2 1\nTYPE F F F F U U\nCOUNT 1 1 1 1 1 1\nWIDTH {n}\nHEIGHT 1\nVIEWPOINT 0 0 0 1 0 0 0\nPOINTS {n}\nDATA binary\n"
    )
    .into_bytes();
    for p in points {
        for c in p.xyz {
            out.extend(c.to_le_bytes());
        }
        let t_s = (p.t_us * 1000).saturating_sub(start_ns) as f64 * 1e-9;
        out.extend((t_s as f32).to_le_bytes());
        out.extend(p.channel.to_le_bytes());
        out.push(p.segmentation_id);
    }
    out
}

/// The IMU's pose on the body: its axes → body (FRD), and its offset.
fn imu_pose(v: &Vehicle) -> Isometry3<f64> {
    mount_pose(&v.sensors().spec().imu.mount)
}

/// A mount as a pose in the body: sensor axes → FRD, offset FRD m.
fn mount_pose(m: &Mount) -> Isometry3<f64> {
    Isometry3::from_parts(
        Translation3::from(m.offset_frd_m()),
        m.sensor_from_body().inverse(),
    )
}

/// The export frame's body axes as a matrix: FRD → exported.
fn export_axes(frame: ExportFrame) -> Matrix3<f64> {
    Matrix3::from_columns(&[
        frame.body_vector(&Vector3::x()),
        frame.body_vector(&Vector3::y()),
        frame.body_vector(&Vector3::z()),
    ])
}

/// `T_BS` of a sensor at `mount` whose frame S is `s_axes` (S's vectors →
/// the mount's FRD-like axes), B the IMU's axes exported in `frame`.
fn extrinsic(
    imu: &Isometry3<f64>,
    mount: &Mount,
    s_axes: &Matrix3<f64>,
    frame: ExportFrame,
) -> Matrix4<f64> {
    let imu_from_sensor = imu.inverse() * mount_pose(mount);
    let f = export_axes(frame);
    let r = f * imu_from_sensor.rotation.to_rotation_matrix().matrix() * s_axes;
    let t = f * imu_from_sensor.translation.vector;
    let mut m = Matrix4::identity();
    m.fixed_view_mut::<3, 3>(0, 0).copy_from(&r);
    m.fixed_view_mut::<3, 1>(0, 3).copy_from(&t);
    m
}

/// A camera's `T_BS`: S its optical frame (x right, y down, z forward).
fn camera_extrinsic(imu: &Isometry3<f64>, mount: &Mount, frame: ExportFrame) -> Matrix4<f64> {
    // Optical x, y, z are the camera's y (right), z (down) and x (forward).
    let optical = Matrix3::new(0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0);
    extrinsic(imu, mount, &optical, frame)
}

/// A LiDAR's `T_BS`: S its own axes, exported as the IMU's are.
fn lidar_extrinsic(imu: &Isometry3<f64>, mount: &Mount, frame: ExportFrame) -> Matrix4<f64> {
    extrinsic(imu, mount, &export_axes(frame).transpose(), frame)
}

/// The inverse of a rigid transform.
fn rigid_inverse(m: &Matrix4<f64>) -> Matrix4<f64> {
    let r = Rotation3::from_matrix_unchecked(m.fixed_view::<3, 3>(0, 0).into_owned());
    let iso = Isometry3::from_parts(
        Translation3::from(m.fixed_view::<3, 1>(0, 3).into_owned()),
        UnitQuaternion::from_rotation_matrix(&r),
    );
    let inv = iso.inverse();
    let mut out = Matrix4::identity();
    out.fixed_view_mut::<3, 3>(0, 0)
        .copy_from(inv.rotation.to_rotation_matrix().matrix());
    out.fixed_view_mut::<3, 1>(0, 3)
        .copy_from(&inv.translation.vector);
    out
}

/// A 4 × 4 matrix as EuRoC writes it: `cols`, `rows`, `data` row-major.
fn euroc_matrix(m: &Matrix4<f64>) -> String {
    let rows: Vec<String> = (0..4)
        .map(|r| {
            (0..4)
                .map(|c| format!("{:.9}", m[(r, c)]))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect();
    format!(
        "T_BS:\n  cols: 4\n  rows: 4\n  data: [{}]\n",
        rows.join(",\n         ")
    )
}

/// A 4 × 4 matrix as Kalibr writes it: a list of rows, indented.
fn kalibr_matrix(name: &str, m: &Matrix4<f64>) -> String {
    let mut s = format!("  {name}:\n");
    for r in 0..4 {
        let row: Vec<String> = (0..4).map(|c| format!("{:.9}", m[(r, c)])).collect();
        let _ = writeln!(s, "  - [{}]", row.join(", "));
    }
    s
}

/// The pinhole's `[fu, fv, cu, cv]` in OpenCV's convention.
fn opencv_intrinsics(k: &Intrinsics) -> [f64; 4] {
    [k.fx, k.fy, k.cx - 0.5, k.cy - 0.5]
}

/// Values as a YAML list, each to the nearest 10⁻⁹ (a focal length of
/// 16.5 px, not 16.500000000000004).
fn list(values: &[f64]) -> String {
    let v: Vec<String> = values
        .iter()
        .map(|x| format!("{}", (x * 1e9).round() / 1e9))
        .collect();
    format!("[{}]", v.join(", "))
}

/// `text` as a YAML scalar in double quotes (JSON's escapes are YAML's).
fn quoted(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

/// A camera image kind's EuRoC `sensor.yaml`.
fn camera_yaml(spec: &CameraSpec, kind: RecordImage, t_bs: &Matrix4<f64>, rate_hz: f64) -> String {
    let k = spec.intrinsics();
    let what = match kind {
        RecordImage::Scene => "8-bit RGB",
        RecordImage::Depth => "planar depth, 16-bit, mm (0: none within 65.535 m)",
        RecordImage::Segmentation => "segmentation id, 8-bit",
    };
    format!(
        "sensor_type: camera\ncomment: {comment}\n{tbs}rate_hz: {rate_hz}\nresolution: [{w}, {h}]\ncamera_model: pinhole\nintrinsics: {intr} #fu, fv, cu, cv\ndistortion_model: radial-tangential\ndistortion_coefficients: [0.0, 0.0, 0.0, 0.0]\n",
        comment = quoted(&format!("mavsitl camera {}, {what}", spec.name)),
        tbs = euroc_matrix(t_bs),
        w = k.width,
        h = k.height,
        intr = list(&opencv_intrinsics(&k)),
    )
}

/// One camera's entry in Kalibr's `camchain-imucam.yaml`; `previous` the
/// `T_BS` of the camera before it in the chain.
fn kalibr_camera(
    out: &mut String,
    c: &CameraStream,
    t_bs: &Matrix4<f64>,
    previous: Option<&Matrix4<f64>>,
) {
    let k = c.spec.intrinsics();
    let _ = writeln!(out, "cam{}:", c.n);
    out.push_str(&kalibr_matrix("T_cam_imu", &rigid_inverse(t_bs)));
    if let Some(p) = previous {
        // This camera from the one before: T_cn_imu · T_imu_cnm1.
        out.push_str(&kalibr_matrix("T_cn_cnm1", &(rigid_inverse(t_bs) * p)));
    }
    let _ = write!(
        out,
        "  camera_model: pinhole\n  distortion_coeffs: [0.0, 0.0, 0.0, 0.0]\n  distortion_model: radtan\n  intrinsics: {}\n  resolution: [{}, {}]\n  rostopic: /cam{}/image_raw\n  timeshift_cam_imu: 0.0\n",
        list(&opencv_intrinsics(&k)),
        k.width,
        k.height,
        c.n
    );
}

/// The IMU's rate as the scenario gives it, Hz.
fn imu_nominal_hz(v: &Vehicle) -> f64 {
    f64::from(v.sensors().spec().imu.rate_hz)
}

/// Kalibr's `imu.yaml`: the noise densities of the white noise, and the
/// random walks equivalent to the Gauss–Markov biases (σ·√(2/τ), the
/// driving noise of a bias that wanders for times short beside τ).
fn imu_yaml(v: &Vehicle, rate_hz: f64) -> String {
    let p = &v.sensors().spec().imu;
    let walk = |sigma: f64, tau_s: f64| sigma * (2.0 / tau_s).sqrt();
    format!(
        "rostopic: /imu0\nupdate_rate: {rate_hz}\naccelerometer_noise_density: {:e}\naccelerometer_random_walk: {:e}\ngyroscope_noise_density: {:e}\ngyroscope_random_walk: {:e}\n",
        p.accel_noise_density(),
        walk(p.accel_bias_sigma(), p.accel_bias_stability_tau_s),
        p.gyro_noise_density(),
        walk(p.gyro_bias_sigma(), p.gyro_bias_stability_tau_s),
    )
}

/// EuRoC's `imu0/sensor.yaml`: B is the IMU, so `T_BS` is the identity.
fn imu_sensor_yaml(v: &Vehicle, kalibr: &str, frame: ExportFrame) -> String {
    let rate = kalibr
        .lines()
        .find_map(|l| l.strip_prefix("update_rate: "))
        .unwrap_or("0");
    let noise: String = kalibr
        .lines()
        .filter(|l| l.contains("_noise_density") || l.contains("_random_walk"))
        .map(|l| format!("{l}\n"))
        .collect();
    format!(
        "sensor_type: imu\ncomment: {}\n{}rate_hz: {rate}\n{noise}",
        quoted(&format!(
            "mavsitl IMU of {}, axes {}",
            v.name(),
            frame.body_axes()
        )),
        euroc_matrix(&Matrix4::identity())
    )
}

/// A LiDAR's `sensor.yaml`: EuRoC's keys, with the scan's own.
fn lidar_yaml(unit: &LidarUnit, l: &LidarStream, t_bs: &Matrix4<f64>) -> String {
    let s = unit.spec();
    let rate = l.delivered.rate_hz(s.rotations_per_second);
    let frame = match s.data_frame {
        LidarFrame::SensorLocalFrame => "sensor",
        LidarFrame::VehicleInertialFrame => "vehicle_inertial",
    };
    format!(
        "sensor_type: lidar\ncomment: {}\n{}rate_hz: {rate}\npoints_written: {}\nchannels: {}\nrange_m: {}\npoints_per_second: {}\nvertical_fov_deg: [{}, {}]\nhorizontal_fov_deg: [{}, {}]\ndata_frame: {frame}\nfields: [x, y, z, t, ring, label]\n",
        quoted(&format!("mavsitl LiDAR {}", s.name)),
        euroc_matrix(t_bs),
        l.written_points,
        s.channels,
        s.range_m,
        s.points_per_second,
        s.vertical_fov_lower_deg,
        s.vertical_fov_upper_deg,
        s.horizontal_fov_start_deg,
        s.horizontal_fov_end_deg,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_delivered_is_the_intervals_over_the_span_and_the_nominal_until_two() {
        let mut d = Delivered::default();
        assert_eq!(d.rate_hz(20.0), 20.0);
        d.add(50_000_000);
        assert_eq!(d.rate_hz(20.0), 20.0);
        d.add(50_000_000);
        assert_eq!(d.rate_hz(20.0), 20.0);
        let mut two = Delivered::default();
        two.add(50_000_000);
        two.add(150_000_000);
        // Two frames 0.1 s apart: 10 a second.
        assert!((two.rate_hz(20.0) - 10.0).abs() < 1e-12);
        d.add(350_000_000);
        // Three frames, 0.3 s from the first to the last: 2 / 0.3 s.
        assert!((d.rate_hz(20.0) - 2.0 / 0.3).abs() < 1e-12);
        assert_eq!(
            (d.count, d.first_ns, d.last_ns),
            (3, 50_000_000, 350_000_000)
        );
    }

    #[test]
    fn depth_is_whole_millimetres_to_the_nearest_and_zero_beyond_the_sixteen_bits() {
        assert_eq!(depth_mm(1.2344), 1234);
        assert_eq!(depth_mm(1.2346), 1235);
        assert_eq!(depth_mm(65.535), 65_535);
        assert_eq!(depth_mm(65.536), 0);
        assert_eq!(depth_mm(f32::INFINITY), 0);
        assert_eq!(depth_mm(f32::NAN), 0);
        assert_eq!(depth_mm(0.0), 0);
    }

    #[test]
    fn a_sweep_is_a_whole_turn_from_its_start() {
        assert_eq!(sweep_of(99_999, 10.0), 0);
        assert_eq!(sweep_of(100_000, 10.0), 1);
        assert_eq!(sweep_of(250_000, 10.0), 2);
        // 7.5 turns a second: a turn is 133 333.3 µs.
        assert_eq!(sweep_of(133_333, 7.5), 0);
        assert_eq!(sweep_of(133_334, 7.5), 1);
        assert_eq!(sweep_start_ns(1, 7.5), 133_333_333);
        assert_eq!(sweep_start_ns(3, 10.0), 300_000_000);
    }

    #[test]
    fn a_pcd_has_its_header_then_nineteen_bytes_a_point() {
        let p = |xyz: [f32; 3], t_us: u64, channel: u16, id: u8| Point {
            xyz,
            t_us,
            segmentation_id: id,
            channel,
        };
        let bytes = pcd(
            &[
                p([1.0, -2.0, 3.5], 100_250, 7, 42),
                p([0.5, 0.0, -1.0], 150_000, 300, 1),
            ],
            100_000_000,
        );
        let text = String::from_utf8_lossy(&bytes);
        let end = text.find("DATA binary\n").expect("data") + 12;
        assert!(text.starts_with("# .PCD v0.7"));
        assert!(text[..end].contains("\nWIDTH 2\nHEIGHT 1\nVIEWPOINT 0 0 0 1 0 0 0\nPOINTS 2\n"));
        let data = &bytes[end..];
        assert_eq!(data.len(), 38);
        let f = |at: usize| f32::from_le_bytes(data[at..at + 4].try_into().unwrap());
        assert_eq!([f(0), f(4), f(8)], [1.0, -2.0, 3.5]);
        // Fired 250 µs after the turn began.
        assert!((f(12) - 250e-6).abs() < 1e-9);
        assert_eq!(
            (u16::from_le_bytes([data[16], data[17]]), data[18]),
            (7, 42)
        );
        assert!((f(19 + 12) - 0.05).abs() < 1e-9);
        assert_eq!(
            (u16::from_le_bytes([data[35], data[36]]), data[37]),
            (300, 1)
        );
    }

    #[test]
    fn a_turned_imu_turns_every_extrinsic_and_the_inverse_undoes_it() {
        // An IMU turned 90° right (yaw), 0.1 m ahead; a camera 0.3 m ahead.
        let imu = mount_pose(&Mount {
            x_m: 0.1,
            yaw_deg: 90.0,
            ..Mount::default()
        });
        let cam = Mount {
            x_m: 0.3,
            ..Mount::default()
        };
        let t = camera_extrinsic(&imu, &cam, ExportFrame::Ned);
        // The camera is 0.2 m along the body's x, which is the IMU's −y;
        // its optical z (forward) is the IMU's −y, its x (right) the IMU's +x.
        let want = Matrix4::new(
            1.0, 0.0, 0.0, 0.0, //
            0.0, 0.0, -1.0, -0.2, //
            0.0, 1.0, 0.0, 0.0, //
            0.0, 0.0, 0.0, 1.0,
        );
        assert!((t - want).norm() < 1e-12, "{t}");
        assert!((rigid_inverse(&t) * t - Matrix4::identity()).norm() < 1e-12);
        assert!((t * rigid_inverse(&t) - Matrix4::identity()).norm() < 1e-12);
        let l = lidar_extrinsic(&imu, &cam, ExportFrame::Enu);
        // In FLU: the body's forward is the IMU's left (+y).
        assert!(
            (l.fixed_view::<3, 1>(0, 3) - Vector3::new(0.0, 0.2, 0.0)).norm() < 1e-12,
            "{l}"
        );
    }

    #[test]
    fn the_yaml_text_is_quoted_rounded_and_laid_out_as_the_tools_read_it() {
        assert_eq!(quoted("a \"b\": c"), "\"a \\\"b\\\": c\"");
        assert_eq!(
            list(&[16.500_000_000_000_004, -0.25, 3.0]),
            "[16.5, -0.25, 3]"
        );
        let k = Intrinsics {
            width: 640,
            height: 480,
            fx: 300.0,
            fy: 301.0,
            cx: 320.0,
            cy: 240.0,
        };
        assert_eq!(opencv_intrinsics(&k), [300.0, 301.0, 319.5, 239.5]);
        let m = Matrix4::new(
            1.0, 2.0, 3.0, 4.0, //
            5.0, 6.0, 7.0, 8.0, //
            9.0, 10.0, 11.0, 12.0, //
            0.0, 0.0, 0.0, 1.0,
        );
        let e = euroc_matrix(&m);
        assert!(e.starts_with("T_BS:\n  cols: 4\n  rows: 4\n  data: [1.000000000, 2.000000000, 3.000000000, 4.000000000,\n"), "{e}");
        assert!(
            e.ends_with("0.000000000, 0.000000000, 0.000000000, 1.000000000]\n"),
            "{e}"
        );
        let k = kalibr_matrix("T_cam_imu", &m);
        assert_eq!(k.lines().count(), 5);
        assert_eq!(
            k.lines().nth(2),
            Some("  - [5.000000000, 6.000000000, 7.000000000, 8.000000000]")
        );
    }

    #[test]
    fn the_cameras_recorded_are_those_named_in_their_order_or_all() {
        let cams: Vec<CameraSpec> = ["a", "b", "c"]
            .iter()
            .map(|n| CameraSpec::new(n, Mount::default()))
            .collect();
        let mut spec = RecordSpec::default();
        assert_eq!(chosen_cameras(&cams, &spec), [0, 1, 2]);
        spec.cameras = Some(vec!["c".into(), "a".into(), "z".into()]);
        assert_eq!(chosen_cameras(&cams, &spec), [2, 0]);
        spec.images.clear();
        assert!(chosen_cameras(&cams, &spec).is_empty());
        spec.images = vec![RecordImage::Depth];
        spec.camera_rate_hz = 0;
        assert!(chosen_cameras(&cams, &spec).is_empty());
    }
}
