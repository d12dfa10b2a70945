//! AirSim's image, LiDAR and scene-object calls over mavsitl's geometric
//! scene ([`mavsitl_render`]): `simGetImages`, `simGetImage`,
//! `simGetCameraInfo`, `getLidarData`, `simGetLidarSegmentation`,
//! `simListSceneObjects`, `simGetObjectPose`, `simSetObjectPose`,
//! `simGetSegmentationObjectID` and `simSetSegmentationObjectID`.
//!
//! Images are rendered from the vehicle's true pose at the current tick
//! (every request of one call sees the same instant; a camera asked twice
//! in a tick is rendered once) and stamped with that sim time, on the same
//! clock as the IMU. Their bytes are as AirSim sends them: a compressed
//! image is a PNG (RGB); an uncompressed one is height × width × 3 bytes
//! in Unreal's B, G, R order; a float image is height × width depths, m.
//!
//! | ImageType | uint8 | float |
//! |---|---|---|
//! | 0 Scene | the lit, textured scene | refused |
//! | 1 DepthPlanar, 2 DepthPerspective | grey, 0 m black to 100 m white | the depth, m (nothing hit: +∞) |
//! | 3 DepthVis | grey, 0 m black to 100 m white | the planar depth, m |
//! | 5 Segmentation | AirSim's palette colour of each object's id | refused |
//! | 6 SurfaceNormals | the normal in camera axes, (n + 1) / 2 | refused |
//! | 7 Infrared | grey, the object's id | refused |
//!
//! DisparityNormalized (4) and the optical flows (8, 9) are refused.

use std::collections::HashMap;

use nalgebra::{UnitQuaternion, Vector3};
use rmpv::Value;

use super::types::{self, f64_of, map};
use mavsitl_render::camera::{render, Frame, Texel};
use mavsitl_render::image::{png, Layout};
use mavsitl_render::lidar::Point;
use mavsitl_render::palette::PALETTE;
use mavsitl_sim::sensors::vision::CameraSpec;
use mavsitl_sim::sim::Simulation;

/// Pixels in one `simGetImages` call, at most (one 4096 × 4096 image):
/// a float pixel costs 16 bytes in the answer, so an answer stays under
/// 300 MB.
pub const MAX_PIXELS_PER_CALL: u64 = 4096 * 4096;
/// Requests in one `simGetImages` call, at most.
pub const MAX_REQUESTS: usize = 64;
/// DepthVis's white, m.
const DEPTH_VIS_M: f32 = 100.0;
/// AirSim's numbered camera names: "0" is `front_center`, and so on.
const ALIASES: [&str; 5] = [
    "front_center",
    "front_right",
    "front_left",
    "bottom_center",
    "back_center",
];

/// What a client asked of one camera.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageRequest {
    /// The camera's name as asked.
    pub camera_name: String,
    /// AirSim's `ImageType`.
    pub image_type: i64,
    /// Floats instead of bytes.
    pub pixels_as_float: bool,
    /// PNG instead of raw bytes.
    pub compress: bool,
}

/// The vehicle a call is about: its index in the simulation, its name and
/// the origin of its positions (NED m).
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// Index in the simulation.
    pub index: usize,
    /// Its name in the API.
    pub name: &'a str,
    /// Origin of its positions, NED m.
    pub origin: Vector3<f64>,
}

/// Frames rendered this tick, by (vehicle, camera), kept to render into
/// again.
#[derive(Debug, Default)]
pub struct Renders {
    frames: Frames,
    png: Vec<u8>,
    lidar: Vec<Point>,
}

/// A LiDAR's points as AirSim sends them.
struct LidarRead {
    /// x, y, z of each point, flat.
    xyz: Vec<Value>,
    /// Each point's segmentation id.
    ids: Vec<Value>,
    /// The LiDAR's pose at its last firing.
    pose: Value,
}

/// One `ImageRequest` map from the client.
fn request_of(v: &Value) -> Result<ImageRequest, String> {
    let bad = || format!("simGetImages: {v} is not an ImageRequest");
    let name = match types::field(v, "camera_name") {
        Some(Value::String(s)) => s.as_str().unwrap_or_default().to_string(),
        Some(x) => x.as_i64().map(|i| i.to_string()).ok_or_else(bad)?,
        None => return Err(bad()),
    };
    let image_type = types::field(v, "image_type")
        .and_then(Value::as_i64)
        .ok_or_else(bad)?;
    let flag = |k: &str, default: bool| match types::field(v, k) {
        None => Ok(default),
        Some(Value::Boolean(b)) => Ok(*b),
        Some(x) => x.as_i64().map(|i| i != 0).ok_or_else(bad),
    };
    Ok(ImageRequest {
        camera_name: name,
        image_type,
        pixels_as_float: flag("pixels_as_float", false)?,
        compress: flag("compress", true)?,
    })
}

/// The requests of a `simGetImages` call's first argument.
pub fn requests_of(v: &Value) -> Result<Vec<ImageRequest>, String> {
    let Some(list) = v.as_array() else {
        return Err("simGetImages: the requests are not a list".into());
    };
    if list.len() > MAX_REQUESTS {
        return Err(format!(
            "simGetImages: {} requests; at most {MAX_REQUESTS} in one call",
            list.len()
        ));
    }
    list.iter().map(request_of).collect()
}

/// AirSim's name of camera `name`: "0"–"4" name its five
/// (`front_center` … `back_center`), any other name is its own.
pub fn airsim_camera_name(name: &str) -> &str {
    name.parse::<usize>()
        .ok()
        .and_then(|i| ALIASES.get(i).copied())
        .unwrap_or(name)
}

/// The index of camera `name` ("0"–"4" name AirSim's five) on the vehicle.
pub fn camera_index(cameras: &[CameraSpec], name: &str, vehicle: &str) -> Result<usize, String> {
    let wanted = airsim_camera_name(name);
    cameras
        .iter()
        .position(|c| c.name == name)
        .or_else(|| cameras.iter().position(|c| c.name == wanted))
        .ok_or_else(|| {
            let names: Vec<&str> = cameras.iter().map(|c| c.name.as_str()).collect();
            format!(
                "Camera with name '{name}' is not available on vehicle '{vehicle}' (its cameras: {})",
                if names.is_empty() { "none".to_string() } else { names.join(", ") }
            )
        })
}

/// The camera's pose in the vehicle's frame (from its origin) and its time.
fn camera_pose(
    sim: &Simulation,
    t: Target<'_>,
    cam: &CameraSpec,
) -> Option<mavsitl_render::camera::CameraPose> {
    let s = &sim.vehicles().get(t.index)?.body().state;
    Some(cam.pose(&s.pos_ned_m, &s.att_ned_frd))
}

/// Frames by (vehicle, camera), with the tick and the scene's generation
/// each was rendered at.
type Frames = HashMap<(usize, usize), ((u64, u64), Frame)>;

/// Camera `c` of the target rendered now, unless it was this tick.
fn frame<'a>(
    frames: &'a mut Frames,
    sim: &Simulation,
    t: Target<'_>,
    c: usize,
) -> Result<&'a Frame, String> {
    let scene = sim
        .world()
        .scene()
        .ok_or("simGetImages: the scenario has no scene")?;
    let cam = sim
        .vehicles()
        .get(t.index)
        .and_then(|v| v.cameras().get(c))
        .ok_or("simGetImages: no such camera")?;
    let pose = camera_pose(sim, t, cam).ok_or("simGetImages: no vehicle")?;
    let entry = frames.entry((t.index, c)).or_default();
    let when = (sim.tick(), scene.generation());
    if entry.0 != when || entry.1.texels.is_empty() {
        render(scene, &cam.intrinsics(), &pose, &mut entry.1);
        entry.0 = when;
    }
    Ok(&entry.1)
}

impl Renders {
    /// `simGetImages`: one response per request.
    pub fn images(
        &mut self,
        sim: &Simulation,
        t: Target<'_>,
        requests: &[ImageRequest],
        stamp_ns: u64,
    ) -> Result<Value, String> {
        let cameras = sim
            .vehicles()
            .get(t.index)
            .map(|v| v.cameras().to_vec())
            .unwrap_or_default();
        let mut pixels = 0u64;
        for r in requests {
            let c = camera_index(&cameras, &r.camera_name, t.name)?;
            pixels += u64::from(cameras[c].width) * u64::from(cameras[c].height);
        }
        pixels_allowed(pixels)?;
        let mut out = Vec::with_capacity(requests.len());
        for r in requests {
            let c = camera_index(&cameras, &r.camera_name, t.name)?;
            check_type(r)?;
            let pose = camera_pose(sim, t, &cameras[c]).ok_or("simGetImages: no vehicle")?;
            let frame = frame(&mut self.frames, sim, t, c)?;
            let (bytes, floats) = encode(frame, r, &pose.attitude, &mut self.png)?;
            out.push(map(vec![
                ("image_data_uint8", Value::Binary(bytes)),
                ("image_data_float", Value::Array(floats)),
                ("camera_name", Value::from(r.camera_name.as_str())),
                (
                    "camera_position",
                    types::vector3r(&(pose.position_ned_m - t.origin)),
                ),
                ("camera_orientation", types::quaternionr(&pose.attitude)),
                ("time_stamp", Value::from(stamp_ns)),
                ("message", Value::from("")),
                ("pixels_as_float", Value::from(r.pixels_as_float)),
                ("compress", Value::from(r.compress)),
                ("width", Value::from(frame.width)),
                ("height", Value::from(frame.height)),
                ("image_type", Value::from(r.image_type)),
            ]));
        }
        Ok(Value::Array(out))
    }

    /// `simGetImage`: the PNG of one camera and type.
    pub fn image(
        &mut self,
        sim: &Simulation,
        t: Target<'_>,
        camera: &str,
        image_type: i64,
    ) -> Result<Value, String> {
        let r = ImageRequest {
            camera_name: camera.into(),
            image_type,
            pixels_as_float: false,
            compress: true,
        };
        let cameras = sim
            .vehicles()
            .get(t.index)
            .map(|v| v.cameras().to_vec())
            .unwrap_or_default();
        let c = camera_index(&cameras, camera, t.name)?;
        check_type(&r)?;
        let pose = camera_pose(sim, t, &cameras[c]).ok_or("simGetImage: no vehicle")?;
        let frame = frame(&mut self.frames, sim, t, c)?;
        let (bytes, _) = encode(frame, &r, &pose.attitude, &mut self.png)?;
        Ok(Value::Binary(bytes))
    }

    /// `getLidarData`: the points since the last call, the LiDAR's pose and
    /// time stamp.
    pub fn lidar_data(
        &mut self,
        sim: &mut Simulation,
        t: Target<'_>,
        name: &str,
        stamp_ns: impl Fn(u64) -> u64,
    ) -> Result<Value, String> {
        let read = self.lidar_points(sim, t, name)?;
        let last_us = self.lidar.last().map_or(sim.time().as_micros(), |p| p.t_us);
        Ok(map(vec![
            ("point_cloud", Value::Array(read.xyz)),
            ("time_stamp", Value::from(stamp_ns(last_us))),
            ("pose", read.pose),
            ("segmentation", Value::Array(read.ids)),
        ]))
    }

    /// `simGetLidarSegmentation`: the segmentation ids of the points since
    /// the last read.
    pub fn lidar_segmentation(
        &mut self,
        sim: &mut Simulation,
        t: Target<'_>,
        name: &str,
    ) -> Result<Value, String> {
        Ok(Value::Array(self.lidar_points(sim, t, name)?.ids))
    }

    fn lidar_points(
        &mut self,
        sim: &mut Simulation,
        t: Target<'_>,
        name: &str,
    ) -> Result<LidarRead, String> {
        let missing = || format!("No lidar with name {name} exist on vehicle");
        let v = sim.vehicles().get(t.index).ok_or_else(missing)?;
        let i = v
            .lidars()
            .iter()
            .position(|l| name.is_empty() || l.spec().name == name)
            .ok_or_else(missing)?;
        let unit = sim.lidar_mut(t.index, i).ok_or_else(missing)?;
        unit.take(&mut self.lidar);
        let pose = match unit.pose() {
            Some(p) => types::pose(&(p.position_ned_m - t.origin), &p.attitude),
            None => types::pose(&Vector3::zeros(), &UnitQuaternion::identity()),
        };
        let mut xyz = Vec::with_capacity(3 * self.lidar.len());
        let mut seg = Vec::with_capacity(self.lidar.len());
        for p in &self.lidar {
            xyz.extend(p.xyz.iter().map(|&c| Value::F32(c)));
            seg.push(Value::from(i64::from(p.segmentation_id)));
        }
        Ok(LidarRead {
            xyz,
            ids: seg,
            pose,
        })
    }
}

/// Refuses a call asking more than [`MAX_PIXELS_PER_CALL`] pixels.
fn pixels_allowed(pixels: u64) -> Result<(), String> {
    if pixels > MAX_PIXELS_PER_CALL {
        return Err(format!(
            "simGetImages: {pixels} pixels asked in one call; at most {MAX_PIXELS_PER_CALL}: ask fewer images at a time"
        ));
    }
    Ok(())
}

/// Refuses the image types and float requests not rendered.
fn check_type(r: &ImageRequest) -> Result<(), String> {
    let name = match r.image_type {
        0 => "Scene",
        1 => "DepthPlanar",
        2 => "DepthPerspective",
        3 => "DepthVis",
        5 => "Segmentation",
        6 => "SurfaceNormals",
        7 => "Infrared",
        4 | 8 | 9 => {
            return Err(format!(
                "simGetImages: ImageType {} (DisparityNormalized, OpticalFlow, OpticalFlowVis) is not rendered by mavsitl; Scene, DepthPlanar, DepthPerspective, DepthVis, Segmentation, SurfaceNormals and Infrared are",
                r.image_type
            ))
        }
        t => return Err(format!("simGetImages: ImageType {t} is not one of AirSim's 0..=9")),
    };
    if r.pixels_as_float && !(1..=3).contains(&r.image_type) {
        return Err(format!(
            "simGetImages: pixels_as_float is for depth images (DepthPlanar, DepthPerspective, DepthVis), not {name}"
        ));
    }
    Ok(())
}

/// The bytes or floats of one request from a rendered frame.
fn encode(
    frame: &Frame,
    r: &ImageRequest,
    att: &UnitQuaternion<f64>,
    png_buf: &mut Vec<u8>,
) -> Result<(Vec<u8>, Vec<Value>), String> {
    if r.pixels_as_float {
        let depth = |t: &Texel| match r.image_type {
            2 => t.depth_perspective_m,
            _ => t.depth_planar_m,
        };
        let floats = frame.texels.iter().map(|t| Value::F32(depth(t))).collect();
        return Ok((Vec::new(), floats));
    }
    let to_cam = att.inverse();
    let mut rgb = Vec::with_capacity(frame.texels.len() * 3);
    for t in &frame.texels {
        rgb.extend_from_slice(&pixel(t, r.image_type, &to_cam));
    }
    if r.compress {
        png_buf.clear();
        png(frame.width, frame.height, Layout::Rgb8, &rgb, png_buf)
            .map_err(|e| format!("simGetImages: PNG: {e}"))?;
        Ok((png_buf.clone(), Vec::new()))
    } else {
        for p in rgb.chunks_exact_mut(3) {
            p.swap(0, 2);
        }
        Ok((rgb, Vec::new()))
    }
}

/// One pixel of an 8-bit image, RGB.
fn pixel(t: &Texel, image_type: i64, to_cam: &UnitQuaternion<f64>) -> [u8; 3] {
    let grey = |x: f32| {
        let g = (x / DEPTH_VIS_M).clamp(0.0, 1.0) * 255.0;
        let g = if g.is_nan() { 255.0 } else { g.round() };
        [g as u8; 3]
    };
    match image_type {
        1 | 3 => grey(t.depth_planar_m),
        2 => grey(t.depth_perspective_m),
        5 => PALETTE[usize::from(t.segmentation_id)],
        6 => {
            let n = to_cam
                * Vector3::new(
                    f64::from(t.normal_ned[0]),
                    f64::from(t.normal_ned[1]),
                    f64::from(t.normal_ned[2]),
                );
            [n.x, n.y, n.z].map(|c| ((c + 1.0) / 2.0 * 255.0).round().clamp(0.0, 255.0) as u8)
        }
        7 => [t.segmentation_id; 3],
        _ => t.rgb,
    }
}

/// `simGetCameraInfo`: the camera's pose (from the vehicle's origin), its
/// horizontal field of view (deg) and its projection: `[u·w, v·w, w, 1] =
/// P · [x, y, z, 1]` for a point in camera axes (x forward, y right,
/// z down), pixels from the image's top-left corner.
pub fn camera_info(sim: &Simulation, t: Target<'_>, camera: &str) -> Result<Value, String> {
    let cameras = sim
        .vehicles()
        .get(t.index)
        .map(|v| v.cameras().to_vec())
        .unwrap_or_default();
    let c = &cameras[camera_index(&cameras, camera, t.name)?];
    let pose = camera_pose(sim, t, c).ok_or("simGetCameraInfo: no vehicle")?;
    let k = c.intrinsics();
    let rows = [
        [k.cx, k.fx, 0.0, 0.0],
        [k.cy, 0.0, k.fy, 0.0],
        [1.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ];
    let matrix = Value::Array(
        rows.iter()
            .map(|r| Value::Array(r.iter().map(|&x| Value::from(x)).collect()))
            .collect(),
    );
    Ok(map(vec![
        (
            "pose",
            types::pose(&(pose.position_ned_m - t.origin), &pose.attitude),
        ),
        ("fov", Value::from(c.fov_deg)),
        ("proj_mat", map(vec![("matrix", matrix)])),
    ]))
}

/// `simListSceneObjects(name_regex)`: the scene's object names matching
/// the whole of `pattern` (AirSim's default ".*": all).
pub fn list_objects(sim: &Simulation, pattern: &str) -> Result<Value, String> {
    let re = regex::Regex::new(&format!("^(?:{pattern})$"))
        .map_err(|e| format!("simListSceneObjects: {pattern}: {e}"))?;
    let names = sim
        .world()
        .scene()
        .map(|s| {
            s.objects()
                .iter()
                .filter(|o| re.is_match(&o.name))
                .map(|o| Value::from(o.name.as_str()))
                .collect()
        })
        .unwrap_or_default();
    Ok(Value::Array(names))
}

/// `simGetObjectPose(name)`: NED from home; NaN when there is no such
/// object, as AirSim answers.
pub fn object_pose(sim: &Simulation, name: &str) -> Value {
    match sim
        .world()
        .scene()
        .and_then(|s| s.object_named(name).and_then(|i| s.pose(i)))
    {
        Some((p, q)) => types::pose(&p, &q),
        None => {
            let nan = Vector3::repeat(f64::NAN);
            let q = nalgebra::Quaternion::new(f64::NAN, f64::NAN, f64::NAN, f64::NAN);
            types::pose(&nan, &UnitQuaternion::new_unchecked(q))
        }
    }
}

/// `simSetObjectPose(name, pose, teleport)`: moves the object; false when
/// there is none of that name or the pose is not finite.
pub fn set_object_pose(sim: &mut Simulation, name: &str, pose: &Value) -> bool {
    let num = |m: Option<&Value>, k: &str| m.and_then(|m| types::field(m, k)).and_then(f64_of);
    let p = types::field(pose, "position");
    let o = types::field(pose, "orientation");
    let (Some(x), Some(y), Some(z)) = (num(p, "x_val"), num(p, "y_val"), num(p, "z_val")) else {
        return false;
    };
    let (Some(w), Some(i), Some(j), Some(k)) = (
        num(o, "w_val"),
        num(o, "x_val"),
        num(o, "y_val"),
        num(o, "z_val"),
    ) else {
        return false;
    };
    // Within the scene's ±100 km (NaN is not), turned by a quaternion of
    // some length.
    let within = |c: f64| c.abs() <= mavsitl_render::scene::MAX_POSITION_M;
    if !(within(x) && within(y) && within(z)) || [w, i, j, k].iter().any(|c| !c.is_finite()) {
        return false;
    }
    let Some(q) = UnitQuaternion::try_new(nalgebra::Quaternion::new(w, i, j, k), 1e-6) else {
        return false;
    };
    let Some(scene) = sim.scene_mut() else {
        return false;
    };
    match scene.object_named(name) {
        Some(idx) => scene.set_pose(idx, &Vector3::new(x, y, z), &q),
        None => false,
    }
}

/// `simGetSegmentationObjectID(name)`: the object's id, −1 for none.
pub fn segmentation_id(sim: &Simulation, name: &str) -> Value {
    let id = sim
        .world()
        .scene()
        .and_then(|s| s.object_named(name).map(|i| s.objects()[i].segmentation_id));
    Value::from(id.map_or(-1, i64::from))
}

/// `simSetSegmentationObjectID(name, id, is_regex)`: sets the id of the
/// object (or, with `is_regex`, every object matching); false for none or
/// an id outside 0–255.
pub fn set_segmentation_id(
    sim: &mut Simulation,
    name: &str,
    id: i64,
    is_regex: bool,
) -> Result<bool, String> {
    let Ok(id) = u8::try_from(id) else {
        return Ok(false);
    };
    let re = if is_regex {
        Some(
            regex::Regex::new(&format!("^(?:{name})$"))
                .map_err(|e| format!("simSetSegmentationObjectID: {name}: {e}"))?,
        )
    } else {
        None
    };
    let Some(scene) = sim.scene_mut() else {
        return Ok(false);
    };
    Ok(scene.set_segmentation_id(
        |n| match &re {
            Some(re) => re.is_match(n),
            None => n == name,
        },
        id,
    ) > 0)
}

/// One object of the blocks: name, shape, centre (NED m), yaw (deg), id,
/// texture.
type Block = (
    &'static str,
    mavsitl_render::scene::ShapeSpec,
    [f64; 3],
    f64,
    u32,
    mavsitl_render::texture::TextureSpec,
);

/// The scene `mavsitl airsim` serves when none is given, after AirSim's
/// Blocks environment: a checkered ground and a dozen textured blocks,
/// pillars and balls within 60 m of home, each with its own segmentation
/// id.
pub fn blocks() -> mavsitl_render::SceneSpec {
    use mavsitl_render::scene::{ObjectSpec, ShapeSpec};
    use mavsitl_render::texture::TextureSpec;
    let brick = TextureSpec::Brick {
        width_m: 0.4,
        height_m: 0.2,
        mortar_m: 0.02,
        colors: [[165, 75, 55], [205, 200, 190]],
    };
    let noise = |seed: u64, a: [u8; 3], b: [u8; 3]| TextureSpec::Noise {
        seed,
        scale_m: 1.0,
        colors: [a, b],
    };
    let solid = |c: [u8; 3]| TextureSpec::Solid { color: c };
    let cube = |x: f64, y: f64, z: f64| ShapeSpec::Box { size_m: [x, y, z] };
    let post = |r: f64, h: f64| ShapeSpec::Cylinder {
        radius_m: r,
        height_m: h,
    };
    let ball = |r: f64| ShapeSpec::Sphere { radius_m: r };
    // Name, shape, centre (NED m; standing on the ground), yaw, id, texture.
    let list: [Block; 12] = [
        (
            "OrangeBall",
            ball(1.5),
            [15.0, 0.0, -1.5],
            0.0,
            10,
            solid([230, 120, 30]),
        ),
        (
            "Cube_North",
            cube(4.0, 4.0, 4.0),
            [25.0, -6.0, -2.0],
            0.0,
            11,
            brick,
        ),
        (
            "Cube_NorthEast",
            cube(3.0, 3.0, 6.0),
            [20.0, 10.0, -3.0],
            20.0,
            12,
            noise(1, [60, 90, 160], [200, 210, 230]),
        ),
        ("Tower", post(1.5, 12.0), [35.0, 5.0, -6.0], 0.0, 13, brick),
        (
            "Wall_West",
            cube(30.0, 2.0, 5.0),
            [0.0, -20.0, -2.5],
            0.0,
            14,
            noise(2, [110, 110, 100], [180, 175, 160]),
        ),
        (
            "Cube_South",
            cube(5.0, 5.0, 3.0),
            [-20.0, 0.0, -1.5],
            45.0,
            15,
            TextureSpec::object(),
        ),
        (
            "Pillar_East",
            post(1.0, 8.0),
            [0.0, 20.0, -4.0],
            0.0,
            16,
            noise(3, [40, 120, 60], [170, 210, 150]),
        ),
        (
            "Ball_SouthEast",
            ball(2.0),
            [-12.0, 14.0, -2.0],
            0.0,
            17,
            noise(4, [200, 40, 40], [250, 200, 90]),
        ),
        (
            "Block_Far",
            cube(8.0, 8.0, 10.0),
            [60.0, -15.0, -5.0],
            10.0,
            18,
            brick,
        ),
        (
            "Slab",
            cube(6.0, 4.0, 0.5),
            [10.0, -12.0, -0.25],
            0.0,
            19,
            TextureSpec::object(),
        ),
        (
            "Cube_NorthWest",
            cube(2.0, 2.0, 2.0),
            [30.0, -20.0, -1.0],
            30.0,
            20,
            solid([240, 220, 60]),
        ),
        (
            "Pillar_South",
            post(0.5, 5.0),
            [-8.0, -6.0, -2.5],
            0.0,
            21,
            solid([250, 250, 250]),
        ),
    ];
    mavsitl_render::SceneSpec {
        objects: list
            .into_iter()
            .map(|(name, shape, at, yaw, id, texture)| ObjectSpec {
                name: name.into(),
                shape,
                position_ned_m: at,
                roll_deg: 0.0,
                pitch_deg: 0.0,
                yaw_deg: yaw,
                segmentation_id: Some(id),
                texture,
            })
            .collect(),
        ..mavsitl_render::SceneSpec::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mavsitl_sim::scenario::{Scenario, ScenarioSource};

    /// A quad at rest at home, a 65 × 49 px front camera (60°) and a LiDAR,
    /// facing a wall whose near face is 10 m north.
    fn world() -> Simulation {
        let text = r#"{"vehicles": [{"name": "q", "kind": "multirotor", "sensors": {
              "cameras": [{"name": "front_center", "width": 65, "height": 49, "fov_deg": 60,
                           "mount": {"x_m": 0.25}},
                          {"name": "down", "width": 9, "height": 9, "mount": {"pitch_deg": -90}}],
              "lidars": [{"name": "Lidar1", "points_per_second": 16000}]}}],
            "scene": {"objects": [
              {"name": "Wall", "shape": {"box": {"size_m": [2, 10, 10]}},
               "position_ned_m": [11, 0, -5], "segmentation_id": 42},
              {"name": "CubeA", "shape": {"box": {"size_m": [1, 1, 1]}}, "position_ned_m": [0, 30, -0.5]},
              {"name": "CubeB", "shape": {"sphere": {"radius_m": 1}}, "position_ned_m": [0, -30, -1]}]}}"#;
        let source = ScenarioSource {
            name: "t.json".into(),
            base_dir: std::path::PathBuf::new(),
        };
        Scenario::from_json(text, &source)
            .expect("scenario")
            .build_simulation(&source)
            .expect("sim")
    }

    fn target() -> Target<'static> {
        Target {
            index: 0,
            name: "q",
            origin: Vector3::zeros(),
        }
    }

    fn ask(camera: &str, image_type: i64, float: bool, compress: bool) -> ImageRequest {
        ImageRequest {
            camera_name: camera.into(),
            image_type,
            pixels_as_float: float,
            compress,
        }
    }

    fn field<'a>(v: &'a Value, k: &str) -> &'a Value {
        types::field(v, k).unwrap_or_else(|| panic!("no {k} in {v}"))
    }

    fn floats(v: &Value) -> Vec<f32> {
        field(v, "image_data_float")
            .as_array()
            .expect("floats")
            .iter()
            .map(|x| x.as_f64().expect("float") as f32)
            .collect()
    }

    fn bytes(v: &Value) -> Vec<u8> {
        match field(v, "image_data_uint8") {
            Value::Binary(b) => b.clone(),
            x => panic!("{x}"),
        }
    }

    #[test]
    fn the_wall_is_at_its_depth_in_the_centre_pixel_and_carries_its_id() {
        let sim = world();
        let mut r = Renders::default();
        let reqs = [
            ask("0", 1, true, false),
            ask("front_center", 2, true, false),
            ask("front_center", 5, false, false),
            ask("front_center", 3, false, false),
            ask("front_center", 2, false, false),
        ];
        let out = r.images(&sim, target(), &reqs, 1234).expect("images");
        let out = out.as_array().expect("list");
        assert_eq!(out.len(), 5);
        let centre = 24 * 65 + 32;
        // 10 m north, the camera 0.25 m ahead of the centre of mass.
        let planar = floats(&out[0]);
        assert_eq!(planar.len(), 65 * 49);
        assert!((planar[centre] - 9.75).abs() < 1e-3, "{}", planar[centre]);
        let persp = floats(&out[1]);
        assert!((persp[centre] - 9.75).abs() < 1e-3);
        // A corner pixel's ray is longer than its planar depth.
        let corner = 20 * 65 + 12;
        assert!(persp[corner] > planar[corner] * 1.01);
        assert!((planar[corner] - 9.75).abs() < 1e-3);
        // Uncompressed: B, G, R of the palette's colour of 42.
        let seg = bytes(&out[2]);
        assert_eq!(seg.len(), 65 * 49 * 3);
        let [r_, g, b] = PALETTE[42];
        assert_eq!(seg[3 * centre..3 * centre + 3], [b, g, r_]);
        // DepthVis: 9.75 m of 100 m white.
        let vis = bytes(&out[3]);
        assert_eq!(vis[3 * centre], (9.75f32 / 100.0 * 255.0).round() as u8);
        // DepthPerspective as bytes: the ray's length, greyed the same way.
        let grey = |d: f32| (d / 100.0 * 255.0).round() as u8;
        let persp_bytes = bytes(&out[4]);
        assert_eq!(persp_bytes[3 * corner], grey(persp[corner]));
        assert_ne!(persp_bytes[3 * corner], vis[3 * corner]);
        // The pose and stamp of the render.
        assert_eq!(field(&out[0], "time_stamp").as_u64(), Some(1234));
        assert_eq!(field(&out[0], "width").as_u64(), Some(65));
        assert_eq!(field(&out[0], "height").as_u64(), Some(49));
        assert_eq!(field(&out[0], "camera_name").as_str(), Some("0"));
        let p = types::vector3r_of(field(&out[0], "camera_position")).expect("position");
        let body = sim.vehicles()[0].body().state.pos_ned_m;
        assert!((p - body - Vector3::new(0.25, 0.0, 0.0)).norm() < 1e-12);
    }

    /// Two quads facing the wall, one 4 m behind the other, asked for the
    /// same camera at the same tick: each picture is taken from its own
    /// vehicle, the wall 9.75 m and 13.75 m ahead of their cameras.
    #[test]
    fn each_vehicle_sees_from_where_it_stands() {
        let text = r#"{"vehicles": [
              {"name": "q", "kind": "multirotor", "sensors": {"cameras": [
                  {"name": "front_center", "width": 65, "height": 49, "mount": {"x_m": 0.25}}]}},
              {"name": "p", "kind": "multirotor", "initial": {"north_m": -4, "east_m": 1},
               "sensors": {"cameras": [
                  {"name": "front_center", "width": 65, "height": 49, "mount": {"x_m": 0.25}}]}}],
            "scene": {"objects": [{"name": "Wall", "shape": {"box": {"size_m": [2, 10, 10]}},
               "position_ned_m": [11, 0, -5]}]}}"#;
        let source = ScenarioSource {
            name: "t.json".into(),
            base_dir: std::path::PathBuf::new(),
        };
        let sim = Scenario::from_json(text, &source)
            .expect("scenario")
            .build_simulation(&source)
            .expect("sim");
        let mut r = Renders::default();
        let p = Target {
            index: 1,
            name: "p",
            origin: Vector3::new(-4.0, 1.0, 0.0),
        };
        let reqs = [ask("front_center", 1, true, false)];
        let centre = 24 * 65 + 32;
        for (t, want) in [(target(), 9.75), (p, 13.75), (target(), 9.75)] {
            let out = r.images(&sim, t, &reqs, 0).expect("images");
            let depth = floats(&out.as_array().expect("list")[0])[centre];
            assert!((depth - want).abs() < 1e-3, "{}: {depth} m", t.name);
        }
    }

    #[test]
    fn a_png_is_the_uncompressed_picture_in_rgb_order() {
        let sim = world();
        let mut r = Renders::default();
        let reqs = [
            ask("front_center", 0, false, true),
            ask("front_center", 0, false, false),
        ];
        let out = r.images(&sim, target(), &reqs, 0).expect("images");
        let out = out.as_array().expect("list");
        let png_bytes = bytes(&out[0]);
        let mut decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
        decoder.set_transformations(png::Transformations::IDENTITY);
        let mut reader = decoder.read_info().expect("png");
        let mut rgb = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut rgb).expect("frame");
        assert_eq!((info.width, info.height), (65, 49));
        let mut bgr = bytes(&out[1]);
        for p in bgr.chunks_exact_mut(3) {
            p.swap(0, 2);
        }
        assert_eq!(rgb, bgr);
        // simGetImage: the same PNG.
        let one = r.image(&sim, target(), "front_center", 0).expect("image");
        assert_eq!(one, Value::Binary(bytes(&out[0])));
    }

    #[test]
    fn surface_normals_and_infrared_read_the_wall() {
        let sim = world();
        let mut r = Renders::default();
        let reqs = [
            ask("front_center", 6, false, false),
            ask("front_center", 7, false, false),
        ];
        let out = r.images(&sim, target(), &reqs, 0).expect("images");
        let out = out.as_array().expect("list");
        let centre = 3 * (24 * 65 + 32);
        // The wall faces the camera: −x in camera axes, (0, ½, ½) · 255 in
        // B, G, R order.
        let n = bytes(&out[0]);
        assert_eq!(n[centre..centre + 3], [128, 128, 0]);
        let ir = bytes(&out[1]);
        assert_eq!(ir[centre..centre + 3], [42, 42, 42]);
        // Looking down from the camera "down": the ground's id (1) and a
        // normal of −z: (½, ½, 0) in camera axes (x down the optical axis).
        let reqs = [ask("down", 7, false, false), ask("down", 6, false, false)];
        let out = r.images(&sim, target(), &reqs, 0).expect("images");
        let out = out.as_array().expect("list");
        assert_eq!(bytes(&out[0])[3 * 40], 1);
        let n = &bytes(&out[1])[3 * 40..3 * 40 + 3];
        // 127.5 either way, as the rotation's rounding falls.
        assert!(
            n[0].abs_diff(128) <= 1 && n[1].abs_diff(128) <= 1 && n[2] == 0,
            "{n:?}"
        );
    }

    #[test]
    fn what_cannot_be_answered_is_refused_by_name() {
        let sim = world();
        let mut r = Renders::default();
        let e = r
            .images(&sim, target(), &[ask("nowhere", 0, false, true)], 0)
            .expect_err("no camera");
        assert_eq!(
            e,
            "Camera with name 'nowhere' is not available on vehicle 'q' (its cameras: front_center, down)"
        );
        for (t, float, want) in [
            (4, false, "ImageType 4 (DisparityNormalized"),
            (8, false, "ImageType 8"),
            (10, false, "ImageType 10 is not one of AirSim's 0..=9"),
            (-1, false, "ImageType -1 is not"),
            (0, true, "pixels_as_float is for depth images"),
            (5, true, "not Segmentation"),
        ] {
            let e = r
                .images(&sim, target(), &[ask("0", t, float, true)], 0)
                .expect_err("refused");
            assert!(e.contains(want), "{t}: {e}");
        }
        // 64 requests of a 65 × 49 camera fit; the pixels of one call are
        // capped (a world of 4096-pixel cameras would ask 1 G floats).
        let sixty_four = vec![ask("0", 0, false, true); 64];
        assert_eq!(
            r.images(&sim, target(), &sixty_four, 0)
                .map(|v| v.as_array().map(Vec::len)),
            Ok(Some(64))
        );
        let source = ScenarioSource {
            name: "big.json".into(),
            base_dir: std::path::PathBuf::new(),
        };
        let big = Scenario::from_json(
            r#"{"vehicles": [{"kind": "multirotor", "sensors": {"cameras": [
                 {"name": "wide", "width": 4096, "height": 4096}]}}], "scene": {}}"#,
            &source,
        )
        .expect("scenario")
        .build_simulation(&source)
        .expect("sim");
        let e = r
            .images(
                &big,
                target(),
                &[ask("wide", 1, true, false), ask("wide", 2, true, false)],
                0,
            )
            .expect_err("two 16 Mpx images");
        assert_eq!(
            e,
            "simGetImages: 33554432 pixels asked in one call; at most 16777216: ask fewer images at a time"
        );
        // Exactly one 4096 × 4096 image's pixels are allowed.
        assert_eq!(pixels_allowed(MAX_PIXELS_PER_CALL), Ok(()));
        assert!(pixels_allowed(MAX_PIXELS_PER_CALL + 1).is_err());
        let many = Value::Array(vec![Value::Nil; MAX_REQUESTS + 1]);
        assert!(requests_of(&many)
            .expect_err("too many")
            .contains("at most 64"));
        let ok = Value::Array(vec![map(vec![
            ("camera_name", Value::from(3)),
            ("image_type", Value::from(1)),
            ("pixels_as_float", Value::from(true)),
        ])]);
        assert_eq!(
            requests_of(&ok).expect("one"),
            vec![ask("3", 1, true, true)]
        );
        // Flags as integers, as some clients send them.
        let ints = Value::Array(vec![map(vec![
            ("camera_name", Value::from("0")),
            ("image_type", Value::from(2)),
            ("pixels_as_float", Value::from(1)),
            ("compress", Value::from(0)),
        ])]);
        assert_eq!(
            requests_of(&ints).expect("one"),
            vec![ask("0", 2, true, false)]
        );
        let at_most = Value::Array(vec![
            ints.as_array().expect("list")[0].clone();
            MAX_REQUESTS
        ]);
        assert_eq!(requests_of(&at_most).map(|r| r.len()), Ok(MAX_REQUESTS));
        assert!(requests_of(&Value::from(1)).is_err());
        assert!(requests_of(&Value::Array(vec![Value::from("x")])).is_err());
    }

    #[test]
    fn the_lidar_gives_the_points_since_the_last_read() {
        let mut sim = world();
        for _ in 0..100 {
            sim.step().expect("step");
        }
        let mut r = Renders::default();
        let from = Target {
            origin: Vector3::new(1.0, 2.0, 0.0),
            ..target()
        };
        let out = r
            .lidar_data(&mut sim, from, "", |us| us * 1000)
            .expect("lidar");
        // Its pose from the vehicle's origin.
        let p = types::vector3r_of(field(field(&out, "pose"), "position")).expect("pose");
        let body = sim.vehicles()[0].body().state.pos_ned_m;
        assert!(
            (p - (body - Vector3::new(1.0, 2.0, 0.0))).norm() < 1e-9,
            "{p}"
        );
        let cloud = field(&out, "point_cloud").as_array().expect("cloud").len();
        let seg = field(&out, "segmentation").as_array().expect("ids").len();
        // 1 000 firings a second of 16 lasers for 0.1 s, all on the ground
        // or the wall.
        assert_eq!(cloud, 3 * 16 * 100);
        assert_eq!(seg, 16 * 100);
        // The last firing, at 99 ms.
        assert_eq!(field(&out, "time_stamp").as_u64(), Some(99_000_000));
        sim.step().expect("step");
        let again = r
            .lidar_segmentation(&mut sim, target(), "Lidar1")
            .expect("ids");
        assert_eq!(again.as_array().expect("ids").len(), 16);
        let e = r
            .lidar_data(&mut sim, target(), "Lidar2", |us| us)
            .expect_err("none");
        assert_eq!(e, "No lidar with name Lidar2 exist on vehicle");
    }

    #[test]
    fn scene_objects_are_listed_moved_and_relabelled() {
        let mut sim = world();
        let names = list_objects(&sim, "Cube.*").expect("list");
        assert_eq!(
            names,
            Value::Array(vec![Value::from("CubeA"), Value::from("CubeB")])
        );
        assert_eq!(
            list_objects(&sim, "Wall")
                .expect("list")
                .as_array()
                .map(Vec::len),
            Some(1)
        );
        assert_eq!(
            list_objects(&sim, "all")
                .expect("list")
                .as_array()
                .map(Vec::len),
            Some(0)
        );
        assert!(list_objects(&sim, "(").is_err());
        let p = object_pose(&sim, "Wall");
        let at = types::vector3r_of(field(&p, "position")).expect("position");
        assert!((at - Vector3::new(11.0, 0.0, -5.0)).norm() < 1e-5);
        let none = object_pose(&sim, "Nothing");
        assert!(types::vector3r_of(field(&none, "position"))
            .expect("nan")
            .x
            .is_nan());
        // Moved 10 m further north in the same tick, the wall is seen there.
        let mut r = Renders::default();
        let before = r
            .images(&sim, target(), &[ask("0", 1, true, false)], 0)
            .expect("images");
        let pose = types::pose(&Vector3::new(21.0, 0.0, -5.0), &UnitQuaternion::identity());
        assert!(set_object_pose(&mut sim, "Wall", &pose));
        assert!(!set_object_pose(&mut sim, "Nothing", &pose));
        let far = types::pose(&Vector3::new(1e6, 0.0, 0.0), &UnitQuaternion::identity());
        assert!(!set_object_pose(&mut sim, "Wall", &far));
        // At the scene's edge, and a step beyond it on each axis.
        let turned = |p: [f64; 3], q: [f64; 4]| {
            map(vec![
                ("position", types::vector3r(&Vector3::from(p))),
                (
                    "orientation",
                    map(vec![
                        ("w_val", Value::from(q[0])),
                        ("x_val", Value::from(q[1])),
                        ("y_val", Value::from(q[2])),
                        ("z_val", Value::from(q[3])),
                    ]),
                ),
            ])
        };
        let level = [1.0, 0.0, 0.0, 0.0];
        assert!(set_object_pose(
            &mut sim,
            "CubeA",
            &turned([1e5, -1e5, 1e5], level)
        ));
        for p in [
            [1e5 + 1.0, 0.0, 0.0],
            [0.0, -1e5 - 1.0, 0.0],
            [0.0, 0.0, 1e5 + 1.0],
            [f64::NAN, 0.0, 0.0],
        ] {
            assert!(
                !set_object_pose(&mut sim, "CubeA", &turned(p, level)),
                "{p:?}"
            );
        }
        // A quaternion of any length is normalised; one of none, or NaN, is refused.
        assert!(set_object_pose(
            &mut sim,
            "CubeA",
            &turned([0.0, 30.0, -0.5], [2.0, 0.0, 0.0, 0.0])
        ));
        let (_, q) = sim.world().scene().expect("scene").pose(1).expect("pose");
        assert!((q.w - 1.0).abs() < 1e-6);
        for q in [
            [0.0, 0.0, 0.0, 1e-7],
            [f64::NAN, 0.0, 0.0, 1.0],
            [1.0, 0.0, f64::INFINITY, 0.0],
        ] {
            assert!(
                !set_object_pose(&mut sim, "CubeA", &turned([0.0, 30.0, -0.5], q)),
                "{q:?}"
            );
        }
        let after = r
            .images(&sim, target(), &[ask("0", 1, true, false)], 0)
            .expect("images");
        let centre = 24 * 65 + 32;
        let d = |v: &Value| floats(&v.as_array().expect("list")[0])[centre];
        assert!((d(&before) - 9.75).abs() < 1e-3);
        assert!((d(&after) - 19.75).abs() < 1e-3, "{}", d(&after));
        // Ids: the given one, the default (2 + index), and relabelled.
        assert_eq!(segmentation_id(&sim, "Wall"), Value::from(42));
        assert_eq!(segmentation_id(&sim, "CubeB"), Value::from(4));
        assert_eq!(segmentation_id(&sim, "Nothing"), Value::from(-1));
        assert_eq!(set_segmentation_id(&mut sim, "Cube.*", 77, true), Ok(true));
        assert_eq!(segmentation_id(&sim, "CubeA"), Value::from(77));
        assert_eq!(
            set_segmentation_id(&mut sim, "Cube.*", 78, false),
            Ok(false)
        );
        assert_eq!(set_segmentation_id(&mut sim, "Wall", 256, false), Ok(false));
        assert_eq!(set_segmentation_id(&mut sim, "Wall", 7, false), Ok(true));
        assert_eq!(segmentation_id(&sim, "Wall"), Value::from(7));
    }

    #[test]
    fn the_blocks_are_twelve_objects_with_ids_ten_to_twenty_one() {
        let spec = blocks();
        assert_eq!(spec.objects.len(), 12);
        let ids: Vec<u32> = spec
            .objects
            .iter()
            .filter_map(|o| o.segmentation_id)
            .collect();
        assert_eq!(ids, (10..22).collect::<Vec<u32>>());
        assert_eq!(spec.objects[0].name, "OrangeBall");
        let scene = mavsitl_render::Scene::build(&spec).expect("blocks");
        assert_eq!(scene.object_named("Tower"), Some(3));
        // Where docs/reference/scene.md's table puts them, NED m.
        let table = [
            [15.0, 0.0, -1.5],
            [25.0, -6.0, -2.0],
            [20.0, 10.0, -3.0],
            [35.0, 5.0, -6.0],
            [0.0, -20.0, -2.5],
            [-20.0, 0.0, -1.5],
            [0.0, 20.0, -4.0],
            [-12.0, 14.0, -2.0],
            [60.0, -15.0, -5.0],
            [10.0, -12.0, -0.25],
            [30.0, -20.0, -1.0],
            [-8.0, -6.0, -2.5],
        ];
        let at: Vec<[f64; 3]> = spec.objects.iter().map(|o| o.position_ned_m).collect();
        assert_eq!(at, table);
        // Every block stands on the ground: its lowest point at down 0.
        for o in &spec.objects {
            let half = match o.shape {
                mavsitl_render::scene::ShapeSpec::Box { size_m } => size_m[2] / 2.0,
                mavsitl_render::scene::ShapeSpec::Cylinder { height_m, .. } => height_m / 2.0,
                mavsitl_render::scene::ShapeSpec::Sphere { radius_m } => radius_m,
            };
            assert!((o.position_ned_m[2] + half).abs() < 1e-9, "{}", o.name);
        }
    }

    #[test]
    fn camera_info_gives_the_pose_the_view_and_the_projection() {
        let sim = world();
        let info = camera_info(&sim, target(), "front_center").expect("info");
        assert_eq!(field(&info, "fov").as_f64(), Some(60.0));
        let m = field(field(&info, "proj_mat"), "matrix")
            .as_array()
            .expect("rows");
        let row = |i: usize| -> Vec<f64> {
            m[i].as_array()
                .expect("row")
                .iter()
                .map(|x| x.as_f64().expect("number"))
                .collect()
        };
        let f = 32.5 / 30f64.to_radians().tan();
        assert_eq!(row(0), vec![32.5, f, 0.0, 0.0]);
        assert_eq!(row(1), vec![24.5, 0.0, f, 0.0]);
        // A point 10 m ahead, 1 m right and 2 m down projects to the pixel
        // the ray through it leaves.
        let p = [10.0, 1.0, 2.0, 1.0];
        let dot = |r: Vec<f64>| r.iter().zip(p).map(|(a, b)| a * b).sum::<f64>();
        let w = dot(row(2));
        let (u, v) = (dot(row(0)) / w, dot(row(1)) / w);
        assert!((u - (32.5 + f * 0.1)).abs() < 1e-12 && (v - (24.5 + f * 0.2)).abs() < 1e-12);
        assert!(camera_info(&sim, target(), "9").is_err());
    }
}
