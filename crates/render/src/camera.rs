//! A pinhole camera, ray cast: one ray through each pixel's centre gives
//! the scene colour, both depths and the segmentation id at once.
//!
//! Camera axes are AirSim's (and the body's): x along the optical axis,
//! y right, z down; image columns run along +y, rows along +z. The focal
//! length comes from the horizontal field of view, square pixels, the
//! principal point at the image centre:
//! `fx = fy = (width / 2) / tan(FOV / 2)`, `cx = width / 2`, `cy = height / 2`.
//!
//! - DepthPlanar: the distance along the optical axis, m.
//! - DepthPerspective: the distance from the camera's centre, m.
//! - A ray that meets nothing within [`FAR_M`] has both depths infinite
//!   and the sky's segmentation id.
//!
//! The image is cast in tiles of 16 × 16 pixels, each tile's rays as one
//! [`crate::bundle`] (the hierarchy walked once for the tile, its rays
//! cast against the primitives it may meet), and bands of tiles in
//! parallel on the calling rayon pool. A frame of the same size is
//! rendered into the same buffer, so a warm render allocates nothing.

use nalgebra::{UnitQuaternion, Vector3};
use parry3d::math::Vector;
use rayon::prelude::*;

use crate::bundle::{Bundle, Cone};
use crate::scene::{rotation, vector, Hit, Scene};

/// Rays end here, m.
pub const FAR_M: f32 = 10_000.0;
/// A tile's side, px: its rays are cast as one [`crate::bundle`].
const TILE_PX: usize = 16;
/// At most this many pixels on a side.
pub const MAX_SIDE_PX: u32 = 4096;
/// The field of view, deg: more than 0, at most this.
pub const MAX_FOV_DEG: f64 = 170.0;

/// Where the light comes from: a unit vector towards the sun, NED
/// (south-east, 50° up).
const TO_SUN: [f32; 3] = [-0.454_519, 0.454_519, -0.766_044];
/// The share of light that reaches a surface in shade.
const AMBIENT: f32 = 0.35;

/// A pinhole camera's intrinsics, pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Intrinsics {
    /// Image width, px.
    pub width: u32,
    /// Image height, px.
    pub height: u32,
    /// Focal lengths, px.
    pub fx: f64,
    /// See `fx`.
    pub fy: f64,
    /// Principal point, px from the top-left corner of the image.
    pub cx: f64,
    /// See `cx`.
    pub cy: f64,
}

impl Intrinsics {
    /// From the image size and the horizontal field of view, deg.
    pub fn from_fov(width: u32, height: u32, fov_deg: f64) -> Self {
        let f = f64::from(width) / 2.0 / (fov_deg.to_radians() / 2.0).tan();
        Self {
            width,
            height,
            fx: f,
            fy: f,
            cx: f64::from(width) / 2.0,
            cy: f64::from(height) / 2.0,
        }
    }

    /// The ray through pixel (`col`, `row`)'s centre in camera axes, scaled
    /// to 1 along the optical axis.
    pub fn ray(&self, col: u32, row: u32) -> Vector3<f64> {
        Vector3::new(
            1.0,
            (f64::from(col) + 0.5 - self.cx) / self.fx,
            (f64::from(row) + 0.5 - self.cy) / self.fy,
        )
    }

    /// The ray through the image point `x` px from the left edge and `y`
    /// px from the top (a pixel's top-left corner at whole numbers), in
    /// camera axes, 1 along the optical axis.
    fn through(&self, x: usize, y: usize) -> Vector3<f64> {
        Vector3::new(
            1.0,
            (x as f64 - self.cx) / self.fx,
            (y as f64 - self.cy) / self.fy,
        )
    }
}

/// What one pixel saw.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Texel {
    /// Distance along the optical axis, m (infinite: nothing).
    pub depth_planar_m: f32,
    /// Distance from the camera's centre, m (infinite: nothing).
    pub depth_perspective_m: f32,
    /// Segmentation id.
    pub segmentation_id: u8,
    /// Colour, 8-bit RGB.
    pub rgb: [u8; 3],
    /// The surface's outward unit normal, NED (zero: nothing).
    pub normal_ned: [f32; 3],
}

impl Default for Texel {
    fn default() -> Self {
        Self {
            depth_planar_m: f32::INFINITY,
            depth_perspective_m: f32::INFINITY,
            segmentation_id: 0,
            rgb: [0; 3],
            normal_ned: [0.0; 3],
        }
    }
}

/// A rendered frame, row-major from the top-left pixel.
#[derive(Debug, Clone, Default)]
pub struct Frame {
    /// Width, px.
    pub width: u32,
    /// Height, px.
    pub height: u32,
    /// The pixels.
    pub texels: Vec<Texel>,
}

/// A camera's pose in the world: its centre (NED m) and its axes → NED.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CameraPose {
    /// Centre, NED m.
    pub position_ned_m: Vector3<f64>,
    /// Rotation camera axes → NED.
    pub attitude: UnitQuaternion<f64>,
}

/// Renders `scene` as the camera of `intrinsics` at `pose` sees it, into
/// `frame` (resized only when the size changes).
pub fn render(scene: &Scene, intrinsics: &Intrinsics, pose: &CameraPose, frame: &mut Frame) {
    let (w, h) = (intrinsics.width, intrinsics.height);
    let n = w as usize * h as usize;
    if frame.texels.len() != n {
        frame.texels.resize(n, Texel::default());
    }
    frame.width = w;
    frame.height = h;
    if n == 0 {
        return;
    }
    let origin = vector(&pose.position_ned_m);
    let r = rotation(&pose.attitude);
    let sun = Vector::from_array(TO_SUN);
    let w = w as usize;
    frame
        .texels
        .par_chunks_mut(w * TILE_PX)
        .enumerate()
        .for_each(|(band, texels)| {
            let mut bundle = Bundle::default();
            let rows = band * TILE_PX..band * TILE_PX + texels.len() / w;
            for cols in tiles(w) {
                let cone = tile_cone(intrinsics, pose, cols.clone(), rows.clone());
                scene.gather(&cone, &mut bundle);
                for row in rows.clone() {
                    let line = &mut texels[(row - rows.start) * w..][..w];
                    for col in cols.clone() {
                        let d_cam = intrinsics.ray(col as u32, row as u32);
                        let dir = r * vector(&d_cam);
                        let hit = scene.cast_bundled(&bundle, dir, FAR_M);
                        line[col] = shade(scene, hit, origin, dir, d_cam.norm() as f32, sun);
                    }
                }
            }
        });
}

/// The cone of the rays through the pixels `cols` × `rows` (column and row
/// indices) of a camera at `pose`: from its centre through their outer
/// edges, so that every pixel's ray lies half a pixel inside it.
pub fn tile_cone(
    intrinsics: &Intrinsics,
    pose: &CameraPose,
    cols: std::ops::Range<usize>,
    rows: std::ops::Range<usize>,
) -> Cone {
    // The rotation the pixels' rays are turned by, in double precision.
    let r = rotation(&pose.attitude);
    let r = UnitQuaternion::new_normalize(nalgebra::Quaternion::new(
        f64::from(r.w),
        f64::from(r.x),
        f64::from(r.y),
        f64::from(r.z),
    ));
    let corner = |x: usize, y: usize| r * intrinsics.through(x, y);
    Cone::new(
        vector(&pose.position_ned_m),
        [
            corner(cols.start, rows.start),
            corner(cols.end, rows.start),
            corner(cols.end, rows.end),
            corner(cols.start, rows.end),
        ],
    )
}

/// The tiles along a side of `len` pixels: `TILE_PX` at a time, the last
/// one shorter when `len` is not a multiple.
pub fn tiles(len: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    (0..len)
        .step_by(TILE_PX)
        .map(move |c| c..(c + TILE_PX).min(len))
}

/// The texel of one ray and what it met: `dir` is 1 along the optical
/// axis, `len` its length.
fn shade(
    scene: &Scene,
    hit: Option<Hit>,
    origin: Vector,
    dir: Vector,
    len: f32,
    sun: Vector,
) -> Texel {
    match hit {
        Some(hit) => {
            let n = Vector::from_array(hit.normal_ned);
            let p = origin + dir * hit.t;
            let albedo = scene.albedo(hit.surface, p, n);
            let light = AMBIENT + (1.0 - AMBIENT) * n.dot(sun).max(0.0);
            Texel {
                depth_planar_m: hit.t,
                depth_perspective_m: hit.t * len,
                segmentation_id: scene.segmentation_id(Some(hit.surface)),
                rgb: albedo.map(|c| to_u8(c * light)),
                normal_ned: hit.normal_ned,
            }
        }
        None => Texel {
            rgb: sky(dir.z / (dir.length())),
            ..Texel::default()
        },
    }
}

/// The sky's colour for a ray of this down component (unit): paler at the
/// horizon, deeper overhead.
fn sky(down: f32) -> [u8; 3] {
    let up = (-down).clamp(0.0, 1.0);
    let horizon = [0.78_f32, 0.85, 0.92];
    let zenith = [0.35_f32, 0.55, 0.85];
    [0, 1, 2].map(|i| to_u8(horizon[i] + (zenith[i] - horizon[i]) * up))
}

/// A fraction 0–1 as 0–255, to the nearest (half up: the value is never
/// negative here).
fn to_u8(c: f32) -> u8 {
    (c.clamp(0.0, 1.0) * 255.0 + 0.5) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_focal_length_follows_the_field_of_view() {
        let k = Intrinsics::from_fov(640, 480, 90.0);
        assert!((k.fx - 320.0).abs() < 1e-9);
        assert_eq!((k.cx, k.cy), (320.0, 240.0));
        let k = Intrinsics::from_fov(640, 480, 60.0);
        assert!((k.fx - 320.0 / (30f64).to_radians().tan()).abs() < 1e-9);
        // The last column's centre is half a pixel inside the edge.
        let r = Intrinsics::from_fov(4, 2, 90.0).ray(3, 1);
        assert!((r - Vector3::new(1.0, 0.75, 0.25)).norm() < 1e-12);
        let r = Intrinsics::from_fov(4, 2, 90.0).ray(0, 0);
        assert!((r - Vector3::new(1.0, -0.75, -0.25)).norm() < 1e-12);
    }

    #[test]
    fn a_side_is_cut_into_whole_tiles_and_a_last_short_one() {
        let t: Vec<_> = tiles(37).collect();
        assert_eq!(t, [0..16, 16..32, 32..37]);
        assert_eq!(tiles(32).collect::<Vec<_>>(), [0..16, 16..32]);
        assert_eq!(tiles(0).count(), 0);
    }

    #[test]
    fn a_pixel_takes_the_texture_where_its_ray_meets_the_ground() {
        // The default ground is a 1 m checker: looking straight down from
        // 3 m, the centre pixel sees the square under the camera.
        let scene = Scene::build(&crate::SceneSpec::default()).expect("scene");
        let k = Intrinsics::from_fov(3, 3, 10.0);
        let centre = |n: f64, e: f64| {
            let pose = CameraPose {
                position_ned_m: Vector3::new(n, e, -3.0),
                attitude: crate::scene::attitude(0.0, -90.0, 0.0),
            };
            let mut frame = Frame::default();
            render(&scene, &k, &pose, &mut frame);
            frame.texels[4].rgb
        };
        // Squares (5, 2) and (7, 2) alike, (6, 2) and (5, 3) the other colour.
        assert_eq!(centre(5.5, 2.5), centre(7.5, 2.5));
        assert_ne!(centre(5.5, 2.5), centre(6.5, 2.5));
        assert_ne!(centre(5.5, 2.5), centre(5.5, 3.5));
        assert_eq!(centre(6.5, 2.5), centre(5.5, 3.5));
    }

    #[test]
    fn the_sky_deepens_overhead() {
        assert_eq!(sky(0.0), [199, 217, 235]);
        assert_eq!(sky(-1.0), [89, 140, 217]);
        assert_eq!(sky(0.5), sky(0.0));
    }
}
