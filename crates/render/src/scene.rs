//! The geometric world: a ground plane and named primitives (boxes,
//! cylinders, spheres), each with a segmentation id and a procedural
//! texture, in the world's NED frame (metres from home, down positive).
//!
//! [`SceneSpec`] is what a scenario or a scene file says; [`Scene::build`]
//! checks it (every value against its range, a degenerate shape refused)
//! and builds a bounding-volume hierarchy over the primitives with
//! dimforge's parry3d. [`Scene::cast`] finds the first surface a ray meets.
//! Geometry is single precision: at 1 km from home a point is placed to
//! about 0.1 mm.

use nalgebra::{UnitQuaternion, Vector3};
use parry3d::bounding_volume::Aabb;
use parry3d::math::{Pose, Rotation, Vector};
use parry3d::partitioning::{Bvh, BvhBuildStrategy};
use parry3d::query::Ray;

use crate::bundle::{Bundle, Cone, Item};
use crate::primitive::Primitive;
use serde::{Deserialize, Serialize};

use crate::terrain::{HeightmapSpec, Terrain};
use crate::texture::{Texture, TextureSpec};
use crate::SceneError;

/// At most this many primitives in a scene.
pub const MAX_OBJECTS: usize = 100_000;
/// A primitive's dimensions (sizes, radii), m: at least this…
pub const MIN_SIZE_M: f64 = 1e-3;
/// …and at most this.
pub const MAX_SIZE_M: f64 = 10_000.0;
/// A primitive's or the ground's position, m from home on each axis: at most.
pub const MAX_POSITION_M: f64 = 100_000.0;
/// A name's length, bytes.
pub const MAX_NAME_BYTES: usize = 64;
/// The segmentation id of a ray that meets nothing (the sky).
pub const SKY_ID: u8 = 0;
/// The ground's segmentation id unless given.
pub const GROUND_ID: u8 = 1;

impl SceneSpec {
    /// Reads the files the scene names (a heightmap's), relative to `base`.
    ///
    /// # Errors
    /// A file that cannot be read or parsed, by key.
    pub fn read_files(&mut self, base: &std::path::Path) -> Result<(), SceneError> {
        match &mut self.ground.heightmap {
            Some(h) => h.read_file(base, "ground.heightmap"),
            None => Ok(()),
        }
    }
}

/// A scene as written: `{ "ground": {…}, "objects": [ … ] }`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SceneSpec {
    /// The ground plane (default: a plane at home's height, checkered every metre).
    #[serde(default)]
    pub ground: GroundSpec,
    /// The primitives (default: none).
    #[serde(default)]
    pub objects: Vec<ObjectSpec>,
}

/// The ground: a horizontal plane.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroundSpec {
    /// Whether there is a ground to see (default: true).
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Its height as NED down, m (default: 0: home's ground).
    #[serde(default)]
    pub down_m: f64,
    /// Its segmentation id, 0–255 (default: 1).
    #[serde(default = "ground_id")]
    pub segmentation_id: u32,
    /// Its texture (default: grey checker, 1 m).
    #[serde(default = "TextureSpec::ground")]
    pub texture: TextureSpec,
    /// Hills and hollows over a grid ([`crate::terrain`]) (default: none, flat).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heightmap: Option<HeightmapSpec>,
}

fn yes() -> bool {
    true
}

fn ground_id() -> u32 {
    u32::from(GROUND_ID)
}

impl Default for GroundSpec {
    fn default() -> Self {
        Self {
            enabled: true,
            down_m: 0.0,
            segmentation_id: ground_id(),
            texture: TextureSpec::ground(),
            heightmap: None,
        }
    }
}

/// One primitive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ObjectSpec {
    /// Its name (AirSim's mesh name), unique, 1–64 bytes.
    pub name: String,
    /// Its shape, about its centre.
    pub shape: ShapeSpec,
    /// Its centre, NED m from home.
    pub position_ned_m: [f64; 3],
    /// Its attitude: roll, pitch, yaw, deg (yaw clockwise from north) (default: 0).
    #[serde(default)]
    pub roll_deg: f64,
    /// See `roll_deg`.
    #[serde(default)]
    pub pitch_deg: f64,
    /// See `roll_deg`.
    #[serde(default)]
    pub yaw_deg: f64,
    /// Its segmentation id, 0–255 (default: 2 + its index, wrapping within 2–255).
    #[serde(default)]
    pub segmentation_id: Option<u32>,
    /// Its texture (default: a grey checker of 0.5 m).
    #[serde(default = "TextureSpec::object")]
    pub texture: TextureSpec,
}

/// A primitive's shape, in its own axes (x forward, y right, z down).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ShapeSpec {
    /// A box of these edge lengths along x, y, z, m.
    Box {
        /// Edge lengths, m.
        size_m: [f64; 3],
    },
    /// An upright cylinder (axis along z).
    Cylinder {
        /// Radius, m.
        radius_m: f64,
        /// Height, m.
        height_m: f64,
    },
    /// A sphere.
    Sphere {
        /// Radius, m.
        radius_m: f64,
    },
}

impl ShapeSpec {
    /// The dimensions, each with its key.
    fn sizes(&self) -> Vec<(&'static str, f64)> {
        match *self {
            ShapeSpec::Box { size_m } => vec![
                ("box.size_m[0]", size_m[0]),
                ("box.size_m[1]", size_m[1]),
                ("box.size_m[2]", size_m[2]),
            ],
            ShapeSpec::Cylinder { radius_m, height_m } => vec![
                ("cylinder.radius_m", radius_m),
                ("cylinder.height_m", height_m),
            ],
            ShapeSpec::Sphere { radius_m } => vec![("sphere.radius_m", radius_m)],
        }
    }

    /// The primitive, single precision.
    fn primitive(&self) -> Primitive {
        match *self {
            ShapeSpec::Box { size_m } => Primitive::Box {
                half: Vector::new(
                    (size_m[0] / 2.0) as f32,
                    (size_m[1] / 2.0) as f32,
                    (size_m[2] / 2.0) as f32,
                ),
            },
            ShapeSpec::Cylinder { radius_m, height_m } => Primitive::Cylinder {
                radius: radius_m as f32,
                half_height: (height_m / 2.0) as f32,
            },
            ShapeSpec::Sphere { radius_m } => Primitive::Sphere {
                radius: radius_m as f32,
            },
        }
    }
}

/// What a ray met.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Surface {
    /// The ground plane.
    Ground,
    /// The primitive of this index in the scene.
    Object(u32),
}

/// The first surface a ray meets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// The ray's parameter: the hit is at `origin + t·dir`.
    pub t: f32,
    /// The surface.
    pub surface: Surface,
    /// The outward unit normal there, NED.
    pub normal_ned: [f32; 3],
}

/// A built primitive: what shading and segmentation need.
#[derive(Debug, Clone)]
pub struct Object {
    /// Its name.
    pub name: String,
    /// Its segmentation id.
    pub segmentation_id: u8,
    /// Its texture.
    pub texture: Texture,
    /// World (NED) → its own axes.
    world_to_local: Pose,
    /// Its own axes → world.
    local_to_world: Pose,
    /// Its shape in its own axes.
    primitive: Primitive,
}

impl Object {
    /// The hit at `t` on the ray `lo + t·ld` in its own axes, for the
    /// primitive of index `i`.
    fn hit(&self, i: u32, lo: Vector, ld: Vector, t: f32) -> Hit {
        let n = self
            .local_to_world
            .transform_vector(self.primitive.normal(lo + ld * t));
        Hit {
            t,
            surface: Surface::Object(i),
            normal_ned: [n.x, n.y, n.z],
        }
    }

    /// Its bounding box in the world.
    fn aabb(&self) -> Aabb {
        let h = self.primitive.half_extents();
        let r = self.local_to_world.rotation;
        let half = (r * Vector::new(h.x, 0.0, 0.0)).abs()
            + (r * Vector::new(0.0, h.y, 0.0)).abs()
            + (r * Vector::new(0.0, 0.0, h.z)).abs();
        let c = self.local_to_world.translation;
        Aabb::new(c - half, c + half)
    }
}

/// The ground, built.
#[derive(Debug, Clone)]
struct Ground {
    down_m: f32,
    segmentation_id: u8,
    texture: Texture,
    terrain: Option<Terrain>,
}

impl Ground {
    /// The first point of the ground the ray meets within `max_t`: the
    /// heightmap's surface, or the plane off its grid.
    fn cast(&self, origin: Vector, dir: Vector, max_t: f32) -> Option<Hit> {
        let ground = |(t, normal_ned)| Hit {
            t,
            surface: Surface::Ground,
            normal_ned,
        };
        let raised = self
            .terrain
            .as_ref()
            .and_then(|h| h.cast(origin, dir, max_t));
        // Off the heightmap, the plane, if it is nearer.
        let reach = raised.map_or(max_t, |(t, _)| t);
        match self.cast_plane(origin, dir, reach) {
            Some(t) => Some(ground((t, [0.0, 0.0, -1.0]))),
            None => raised.map(ground),
        }
    }

    /// Where the ray meets the plane within `max_t`, where no heightmap
    /// lies over it. The plane z = down faces up (−z): met going down,
    /// from above it.
    fn cast_plane(&self, origin: Vector, dir: Vector, max_t: f32) -> Option<f32> {
        if dir.z <= 0.0 {
            return None;
        }
        let t = (self.down_m - origin.z) / dir.z;
        let p = origin + dir * t;
        let off_grid = self.terrain.as_ref().is_none_or(|h| !h.covers(p.x, p.y));
        (t > 0.0 && t <= max_t && off_grid).then_some(t)
    }

    /// The ground's height as NED down at (north, east), m.
    fn down_at(&self, north_m: f32, east_m: f32) -> f32 {
        self.terrain
            .as_ref()
            .and_then(|h| h.down_at(north_m, east_m))
            .unwrap_or(self.down_m)
    }
}

/// A scene ready for ray casts. Shared read-only by every camera and LiDAR.
#[derive(Clone)]
pub struct Scene {
    /// The primitives' bounding boxes (none without primitives).
    bvh: Option<Bvh>,
    objects: Vec<Object>,
    ground: Option<Ground>,
    /// Counts changes (a pose, an id), so that a picture of an older
    /// scene is known to be stale.
    generation: u64,
}

impl std::fmt::Debug for Scene {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scene")
            .field("objects", &self.objects.len())
            .field("ground", &self.ground.is_some())
            .finish()
    }
}

/// The bounding-volume hierarchy over the objects' boxes.
fn bvh_of(objects: &[Object]) -> Option<Bvh> {
    (!objects.is_empty()).then(|| {
        Bvh::from_iter(
            BvhBuildStrategy::Binned,
            objects.iter().enumerate().map(|(i, o)| (i, o.aabb())),
        )
    })
}

/// A value out of its range: `key` and the range allowed.
fn out_of_range(key: String, value: f64, range: &str) -> SceneError {
    SceneError::Range {
        key,
        value: value.to_string(),
        range: range.to_string(),
    }
}

fn check(key: String, value: f64, lo: f64, hi: f64, range: &str) -> Result<(), SceneError> {
    if (lo..=hi).contains(&value) {
        Ok(())
    } else {
        Err(out_of_range(key, value, range))
    }
}

fn segmentation_id(key: String, id: u32) -> Result<u8, SceneError> {
    u8::try_from(id).map_err(|_| out_of_range(key, f64::from(id), "0..=255"))
}

/// The rotation of roll, pitch, yaw (deg; z-y-x: yaw first), body → NED.
pub fn attitude(roll_deg: f64, pitch_deg: f64, yaw_deg: f64) -> UnitQuaternion<f64> {
    UnitQuaternion::from_euler_angles(
        roll_deg.to_radians(),
        pitch_deg.to_radians(),
        yaw_deg.to_radians(),
    )
}

/// nalgebra's rotation as parry's.
pub fn rotation(q: &UnitQuaternion<f64>) -> Rotation {
    Rotation::from_xyzw(q.i as f32, q.j as f32, q.k as f32, q.w as f32).normalize()
}

/// nalgebra's vector as parry's.
pub fn vector(v: &Vector3<f64>) -> Vector {
    Vector::new(v.x as f32, v.y as f32, v.z as f32)
}

impl Scene {
    /// Checks `spec` and builds it. Errors name the key (`objects[3].shape.box.size_m[1]`)
    /// and the range allowed.
    pub fn build(spec: &SceneSpec) -> Result<Scene, SceneError> {
        let ground = Self::ground(&spec.ground)?;
        if spec.objects.len() > MAX_OBJECTS {
            return Err(out_of_range(
                "objects".into(),
                spec.objects.len() as f64,
                &format!("at most {MAX_OBJECTS} primitives"),
            ));
        }
        let mut objects = Vec::with_capacity(spec.objects.len());
        let mut names = std::collections::BTreeSet::new();
        for (i, o) in spec.objects.iter().enumerate() {
            let at = format!("objects[{i}]");
            if o.name.is_empty() || o.name.len() > MAX_NAME_BYTES {
                return Err(SceneError::Name {
                    key: format!("{at}.name"),
                    name: o.name.clone(),
                });
            }
            if !names.insert(o.name.as_str()) {
                return Err(SceneError::Duplicate {
                    key: format!("{at}.name"),
                    name: o.name.clone(),
                });
            }
            for (k, s) in o.shape.sizes() {
                check(
                    format!("{at}.shape.{k}"),
                    s,
                    MIN_SIZE_M,
                    MAX_SIZE_M,
                    "0.001..=10000 m",
                )?;
            }
            for (j, p) in o.position_ned_m.iter().enumerate() {
                let key = format!("{at}.position_ned_m[{j}]");
                check(key, *p, -MAX_POSITION_M, MAX_POSITION_M, "±100000 m")?;
            }
            for (k, a) in [
                ("roll_deg", o.roll_deg),
                ("pitch_deg", o.pitch_deg),
                ("yaw_deg", o.yaw_deg),
            ] {
                check(format!("{at}.{k}"), a, -360.0, 360.0, "-360..=360 deg")?;
            }
            let default_id = (2 + i % 254) as u32;
            let id = segmentation_id(
                format!("{at}.segmentation_id"),
                o.segmentation_id.unwrap_or(default_id),
            )?;
            let texture = o.texture.build(&format!("{at}.texture"))?;
            let q = attitude(o.roll_deg, o.pitch_deg, o.yaw_deg);
            let centre = Vector3::from(o.position_ned_m);
            let local_to_world = Pose::from_parts(vector(&centre), rotation(&q));
            objects.push(Object {
                name: o.name.clone(),
                segmentation_id: id,
                texture,
                world_to_local: local_to_world.inverse(),
                local_to_world,
                primitive: o.shape.primitive(),
            });
        }
        let bvh = bvh_of(&objects);
        Ok(Scene {
            bvh,
            objects,
            ground,
            generation: 0,
        })
    }

    fn ground(g: &GroundSpec) -> Result<Option<Ground>, SceneError> {
        check(
            "ground.down_m".into(),
            g.down_m,
            -MAX_POSITION_M,
            MAX_POSITION_M,
            "±100000 m",
        )?;
        let segmentation_id = segmentation_id("ground.segmentation_id".into(), g.segmentation_id)?;
        let texture = g.texture.build("ground.texture")?;
        let terrain = match &g.heightmap {
            Some(h) => Some(Terrain::build(h, g.down_m, "ground.heightmap")?),
            None => None,
        };
        Ok(g.enabled.then_some(Ground {
            down_m: g.down_m as f32,
            segmentation_id,
            texture,
            terrain,
        }))
    }

    /// How many times the scene has changed since it was built.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The primitives, in the order given.
    pub fn objects(&self) -> &[Object] {
        &self.objects
    }

    /// The index of the primitive named `name`.
    pub fn object_named(&self, name: &str) -> Option<usize> {
        self.objects.iter().position(|o| o.name == name)
    }

    /// The first surface the ray from `origin` (NED m) along `dir` meets
    /// with `0 < t ≤ max_t`; `dir` need not be a unit vector (`t` is in its
    /// lengths).
    pub fn cast(&self, origin: Vector, dir: Vector, max_t: f32) -> Option<Hit> {
        let ray = Ray::new(origin, dir);
        let ground = self.cast_ground(origin, dir, max_t);
        let Some(bvh) = &self.bvh else {
            return ground;
        };
        let limit = ground.map_or(max_t, |b| b.t);
        let local = |i: u32| {
            let o = &self.objects[i as usize];
            (
                o,
                o.world_to_local.transform_point(origin),
                o.world_to_local.transform_vector(dir),
            )
        };
        let found = bvh.cast_ray(&ray, limit, |i, so_far| {
            let (o, lo, ld) = local(i);
            o.primitive.cast(lo, ld, so_far)
        });
        match found {
            Some((i, t)) => {
                let (o, lo, ld) = local(i);
                Some(o.hit(i, lo, ld, t))
            }
            None => ground,
        }
    }

    /// The ground's first point on the ray within `max_t`.
    fn cast_ground(&self, origin: Vector, dir: Vector, max_t: f32) -> Option<Hit> {
        self.ground
            .as_ref()
            .and_then(|g| g.cast(origin, dir, max_t))
    }

    /// Fills `bundle` with the primitives whose boxes `cone` may meet
    /// ([`crate::bundle`]), or marks it overflowed when they are more than
    /// it holds.
    pub fn gather(&self, cone: &Cone, bundle: &mut Bundle) {
        bundle.apex = cone.apex;
        bundle.len = 0;
        bundle.overflow = false;
        let Some(bvh) = &self.bvh else {
            return;
        };
        for i in bvh.leaves(|node| cone.may_meet(&node.aabb())) {
            let Some(slot) = bundle.items.get_mut(bundle.len) else {
                bundle.overflow = true;
                bundle.len = 0;
                return;
            };
            let o = &self.objects[i as usize];
            *slot = Item::new(
                i,
                o.world_to_local.transform_point(cone.apex),
                o.local_to_world.translation - cone.apex,
                cone.apex,
                o.primitive.bounding_radius(),
            );
            bundle.len += 1;
        }
    }

    /// [`Scene::cast`] for a ray from the bundle's apex whose direction
    /// lies within the cone it was gathered for, on this scene: the same
    /// hit, found against the bundle's primitives alone.
    pub(crate) fn cast_bundled(&self, bundle: &Bundle, dir: Vector, max_t: f32) -> Option<Hit> {
        if bundle.overflow {
            return self.cast(bundle.apex, dir, max_t);
        }
        let ground = self.cast_ground(bundle.apex, dir, max_t);
        let mut limit = ground.map_or(max_t, |b| b.t);
        let mut found = None;
        let dir_sq = dir.length_squared();
        for item in &bundle.items[..bundle.len] {
            // A line that misses the sphere about it misses it.
            if item.missed_by(dir, dir_sq) {
                continue;
            }
            let (i, lo) = (item.index, item.apex_local);
            let o = &self.objects[i as usize];
            let ld = o.world_to_local.transform_vector(dir);
            // Only a nearer hit: a tie goes to the ground, or to the
            // primitive the hierarchy gives first, as in `cast`.
            if let Some(t) = o.primitive.cast(lo, ld, limit).filter(|&t| t < limit) {
                limit = t;
                found = Some((o, i, lo, ld));
            }
        }
        match found {
            Some((o, i, lo, ld)) => Some(o.hit(i, lo, ld, limit)),
            None => ground,
        }
    }

    /// The ground's height under (north, east) as NED down, m: the
    /// heightmap's surface, or the plane; none when the scene has no ground.
    pub fn ground_down_at(&self, north_m: f64, east_m: f64) -> Option<f64> {
        self.ground
            .as_ref()
            .map(|g| f64::from(g.down_at(north_m as f32, east_m as f32)))
    }

    /// The segmentation id of a surface (the sky's for none).
    pub fn segmentation_id(&self, s: Option<Surface>) -> u8 {
        match s {
            None => SKY_ID,
            Some(Surface::Ground) => self.ground.as_ref().map_or(SKY_ID, |g| g.segmentation_id),
            Some(Surface::Object(i)) => self
                .objects
                .get(i as usize)
                .map_or(SKY_ID, |o| o.segmentation_id),
        }
    }

    /// The surface's colour at the world point `p` with normal `n` (NED),
    /// before lighting.
    pub fn albedo(&self, s: Surface, p: Vector, n: Vector) -> [f32; 3] {
        match s {
            Surface::Ground => match &self.ground {
                // North and east on the ground.
                Some(g) => g.texture.at(p.x, p.y),
                None => [0.0; 3],
            },
            Surface::Object(i) => match self.objects.get(i as usize) {
                Some(o) => {
                    let pl = o.world_to_local.transform_point(p);
                    let nl = o.world_to_local.transform_vector(n).abs();
                    // The face's own two axes: drop the one the normal is
                    // most along.
                    let (u, v) = if nl.x >= nl.y && nl.x >= nl.z {
                        (pl.y, pl.z)
                    } else if nl.y >= nl.z {
                        (pl.x, pl.z)
                    } else {
                        (pl.x, pl.y)
                    };
                    o.texture.at(u, v)
                }
                None => [0.0; 3],
            },
        }
    }

    /// Moves the primitive `i` to a new pose (AirSim's `simSetObjectPose`):
    /// its centre, NED m, and attitude (its axes → NED).
    pub fn set_pose(&mut self, i: usize, pos_ned: &Vector3<f64>, q: &UnitQuaternion<f64>) -> bool {
        let Some(o) = self.objects.get_mut(i) else {
            return false;
        };
        o.local_to_world = Pose::from_parts(vector(pos_ned), rotation(q));
        o.world_to_local = o.local_to_world.inverse();
        self.bvh = bvh_of(&self.objects);
        self.generation += 1;
        true
    }

    /// Sets the segmentation id of every primitive whose name `pick`s;
    /// returns how many.
    pub fn set_segmentation_id(&mut self, pick: impl Fn(&str) -> bool, id: u8) -> usize {
        let mut n = 0;
        for o in self.objects.iter_mut().filter(|o| pick(&o.name)) {
            o.segmentation_id = id;
            n += 1;
        }
        self.generation += 1;
        n
    }

    /// The primitive `i`'s pose: centre (NED m) and attitude (its axes → NED).
    pub fn pose(&self, i: usize) -> Option<(Vector3<f64>, UnitQuaternion<f64>)> {
        let o = self.objects.get(i)?;
        let t = o.local_to_world.translation;
        let r = o.local_to_world.rotation;
        Some((
            Vector3::new(f64::from(t.x), f64::from(t.y), f64::from(t.z)),
            UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(
                f64::from(r.w),
                f64::from(r.x),
                f64::from(r.y),
                f64::from(r.z),
            )),
        ))
    }
}
