//! A frame cast in tiles, each tile's rays as one bundle, is the frame
//! cast ray by ray through the hierarchy: the same surface, depth and
//! normal in every pixel, for cameras inside and outside a crowd of
//! primitives, at odd image sizes, and where a tile's cone meets more
//! primitives than a bundle holds.

use mavsitl_render::bundle::{Bundle, Cone, BUNDLE_CAPACITY};
use mavsitl_render::camera::{render, tile_cone, tiles, CameraPose, Frame, Intrinsics, FAR_M};
use mavsitl_render::scene::{attitude, rotation, vector, ObjectSpec, ShapeSpec};
use mavsitl_render::texture::TextureSpec;
use mavsitl_render::{Scene, SceneSpec};
use nalgebra::Vector3;
use parry3d::bounding_volume::Aabb;
use parry3d::math::Vector;

/// A fixed sequence in [0, 1).
fn sequence(mut x: u64) -> impl FnMut() -> f64 {
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn object(i: usize, shape: ShapeSpec, at: [f64; 3], ypr: [f64; 3]) -> ObjectSpec {
    ObjectSpec {
        name: format!("o{i}"),
        shape,
        position_ned_m: at,
        roll_deg: ypr[2],
        pitch_deg: ypr[1],
        yaw_deg: ypr[0],
        segmentation_id: None,
        texture: TextureSpec::object(),
    }
}

/// `n` boxes, cylinders and spheres turned every way within `spread` m
/// of (0, 0, −5).
fn crowd(n: usize, spread: f64, seed: u64) -> Scene {
    let mut r = sequence(seed);
    let objects = (0..n)
        .map(|i| {
            let at = [0.0, 0.0, -5.0].map(|c| c + spread * (2.0 * r() - 1.0));
            let size = 0.2 + 3.0 * r();
            let shape = match i % 3 {
                0 => ShapeSpec::Box {
                    size_m: [size, 0.2 + 3.0 * r(), 0.2 + 3.0 * r()],
                },
                1 => ShapeSpec::Cylinder {
                    radius_m: size / 2.0,
                    height_m: 0.2 + 4.0 * r(),
                },
                _ => ShapeSpec::Sphere {
                    radius_m: size / 2.0,
                },
            };
            let ypr = [360.0 * r() - 180.0, 180.0 * r() - 90.0, 360.0 * r() - 180.0];
            object(i, shape, at, ypr)
        })
        .collect();
    Scene::build(&SceneSpec {
        objects,
        ..SceneSpec::default()
    })
    .expect("scene")
}

/// Renders and checks every pixel against `Scene::cast` of its own ray;
/// returns how many pixels met a primitive.
fn same_as_ray_by_ray(scene: &Scene, k: &Intrinsics, pose: &CameraPose) -> usize {
    let mut frame = Frame::default();
    render(scene, k, pose, &mut frame);
    let origin = vector(&pose.position_ned_m);
    let r = rotation(&pose.attitude);
    let mut on_objects = 0;
    for row in 0..k.height {
        for col in 0..k.width {
            let dir = r * vector(&k.ray(col, row));
            let texel = frame.texels[(row * k.width + col) as usize];
            let hit = scene.cast(origin, dir, FAR_M);
            let id = scene.segmentation_id(hit.map(|h| h.surface));
            let depth = hit.map_or(f32::INFINITY, |h| h.t);
            let normal = hit.map_or([0.0; 3], |h| h.normal_ned);
            assert_eq!(
                (
                    texel.segmentation_id,
                    texel.depth_planar_m,
                    texel.normal_ned
                ),
                (id, depth, normal),
                "pixel ({col}, {row})"
            );
            on_objects += usize::from(id > 1);
        }
    }
    on_objects
}

#[test]
fn a_tiled_frame_is_the_frame_cast_ray_by_ray() {
    let scene = crowd(300, 25.0, 7);
    let mut r = sequence(99);
    // Sizes that are and are not multiples of a tile, fields narrow and wide.
    let cameras = [
        Intrinsics::from_fov(64, 48, 90.0),
        Intrinsics::from_fov(203, 77, 120.0),
        Intrinsics::from_fov(37, 41, 20.0),
        Intrinsics::from_fov(160, 120, 170.0),
    ];
    let mut on_objects = 0;
    for i in 0..24 {
        // Outside the crowd looking in, and inside it (some in a primitive).
        let reach = if i % 2 == 0 { 45.0 } else { 20.0 };
        let at = [0.0, 0.0, -5.0].map(|c| c + reach * (2.0 * r() - 1.0));
        let look = attitude(60.0 * r() - 30.0, 120.0 * r() - 60.0, 360.0 * r() - 180.0);
        let pose = CameraPose {
            position_ned_m: Vector3::from(at),
            attitude: look,
        };
        on_objects += same_as_ray_by_ray(&scene, &cameras[i % cameras.len()], &pose);
    }
    // The frames are of the crowd, not of the sky and the ground.
    assert!(on_objects > 40_000, "{on_objects}");
}

/// Narrow fields of view, where a tile's corner directions are nearly
/// parallel and its side planes' normals come from small differences:
/// still every pixel the ray's own.
#[test]
fn a_narrow_field_of_view_is_cast_ray_by_ray_too() {
    let scene = crowd(300, 25.0, 11);
    let mut r = sequence(5);
    let mut on_objects = 0;
    for (i, k) in [
        Intrinsics::from_fov(640, 480, 1.0),
        Intrinsics::from_fov(1920, 1080, 3.0),
        Intrinsics::from_fov(640, 480, 0.2),
    ]
    .iter()
    .enumerate()
    {
        for _ in 0..2 {
            // From 60 m off, looking at one of the crowd's primitives.
            let at = Vector3::new(-60.0, 10.0 * (2.0 * r() - 1.0), -5.0);
            let (target, _) = scene.pose(i * 37 % 300).expect("pose");
            let d = target - at;
            let yaw = d.y.atan2(d.x).to_degrees();
            let pitch = (-d.z).atan2(d.xy().norm()).to_degrees();
            let pose = CameraPose {
                position_ned_m: at,
                attitude: attitude(0.0, pitch, yaw),
            };
            on_objects += same_as_ray_by_ray(&scene, k, &pose);
        }
    }
    assert!(on_objects > 100_000, "{on_objects}");
}

/// Every pixel's ray lies within its tile's cone: a speck of a box on the
/// ray, 1 m to 5 km out, is met, at fields of view from 170° down to 0.2°
/// (where a tile's corner directions are nearly parallel and its sides'
/// normals come from small differences), turned every way.
#[test]
fn every_pixels_ray_lies_within_its_tiles_cone() {
    let mut r = sequence(3);
    for fov in [170.0, 90.0, 10.0, 3.0, 1.0, 0.2] {
        let k = Intrinsics::from_fov(1920, 1080, fov);
        for _ in 0..3 {
            let pose = CameraPose {
                position_ned_m: Vector3::new(100.0 * r(), -50.0 * r(), -30.0 * r()),
                attitude: attitude(360.0 * r() - 180.0, 180.0 * r() - 90.0, 360.0 * r() - 180.0),
            };
            let origin = vector(&pose.position_ned_m);
            let turn = rotation(&pose.attitude);
            let mut missed = 0;
            for rows in tiles(1080).step_by(7) {
                for cols in tiles(1920).step_by(5) {
                    let cone = tile_cone(&k, &pose, cols.clone(), rows.clone());
                    // The tile's edge pixels and its middle one.
                    let (c0, c1, r0, r1) = (cols.start, cols.end - 1, rows.start, rows.end - 1);
                    let mid = ((c0 + c1) / 2, (r0 + r1) / 2);
                    for (col, row) in [(c0, r0), (c1, r0), (c1, r1), (c0, r1), mid] {
                        let dir = turn * vector(&k.ray(col as u32, row as u32));
                        for t in [1.0, 50.0, 5000.0] {
                            let p = origin + dir * t;
                            let speck = Aabb::new(p - Vector::splat(1e-6), p + Vector::splat(1e-6));
                            missed += usize::from(!cone.may_meet(&speck));
                        }
                    }
                }
            }
            assert_eq!(missed, 0, "{fov}° at {pose:?}");
        }
    }
}

/// Ties, as `Scene::cast` breaks them: a box buried with its top flush
/// with the ground, and one box given twice at one pose, seen from above
/// and from the side: every pixel the ray's own.
#[test]
fn ties_go_as_a_single_ray_breaks_them() {
    let shape = ShapeSpec::Box {
        size_m: [2.0, 3.0, 1.0],
    };
    let objects = vec![
        object(0, shape, [6.0, 0.0, 0.5], [0.0; 3]),
        object(1, shape, [0.0, 6.0, -0.5], [30.0, 0.0, 0.0]),
        object(2, shape, [0.0, 6.0, -0.5], [30.0, 0.0, 0.0]),
    ];
    let scene = Scene::build(&SceneSpec {
        objects,
        ..SceneSpec::default()
    })
    .expect("scene");
    let k = Intrinsics::from_fov(96, 64, 90.0);
    let above = CameraPose {
        position_ned_m: Vector3::new(3.0, 3.0, -12.0),
        attitude: attitude(0.0, -90.0, 0.0),
    };
    let side = CameraPose {
        position_ned_m: Vector3::new(0.0, -4.0, -0.5),
        attitude: attitude(0.0, 0.0, 90.0),
    };
    let mut frame = Frame::default();
    for pose in [above, side] {
        same_as_ray_by_ray(&scene, &k, &pose);
        render(&scene, &k, &pose, &mut frame);
        let ids: std::collections::BTreeSet<u8> =
            frame.texels.iter().map(|t| t.segmentation_id).collect();
        // Of the twins (ids 3 and 4), one shows, whichever the hierarchy
        // gives first.
        assert!(ids.contains(&3) != ids.contains(&4), "{ids:?}");
    }
}

/// A row of spheres along north: a cone along the row meets them all.
fn row_of(n: usize) -> Scene {
    let objects = (0..n)
        .map(|i| {
            let shape = ShapeSpec::Sphere { radius_m: 0.4 };
            object(i, shape, [5.0 + 2.0 * i as f64, 0.0, -5.0], [0.0; 3])
        })
        .collect();
    Scene::build(&SceneSpec {
        objects,
        ..SceneSpec::default()
    })
    .expect("scene")
}

/// The cone from (0, 0, −5) within ±`half` (a tangent) of north.
fn cone_north(half: f64) -> Cone {
    let d = |e: f64, dn: f64| Vector3::new(1.0, e, dn);
    Cone::new(
        Vector::new(0.0, 0.0, -5.0),
        [
            d(-half, -half),
            d(half, -half),
            d(half, half),
            d(-half, half),
        ],
    )
}

#[test]
fn a_bundle_holds_what_its_cone_may_meet_and_overflows_past_its_capacity() {
    let mut bundle = Bundle::default();
    let full = row_of(BUNDLE_CAPACITY);
    full.gather(&cone_north(0.01), &mut bundle);
    assert!(!bundle.overflowed());
    let mut got: Vec<u32> = bundle.indices().collect();
    got.sort_unstable();
    assert_eq!(got, (0..BUNDLE_CAPACITY as u32).collect::<Vec<_>>());
    // Turned 90° to the east, the cone meets none of them.
    let d = |n: f64, dn: f64| Vector3::new(n, 1.0, dn);
    let east = Cone::new(
        Vector::new(0.0, 0.0, -5.0),
        [
            d(-0.01, -0.01),
            d(0.01, -0.01),
            d(0.01, 0.01),
            d(-0.01, 0.01),
        ],
    );
    full.gather(&east, &mut bundle);
    assert_eq!((bundle.indices().count(), bundle.overflowed()), (0, false));
    // One more sphere than a bundle holds: the bundle gives way to the
    // hierarchy, and the frame along the row is still the ray-by-ray one.
    let over = row_of(BUNDLE_CAPACITY + 1);
    over.gather(&cone_north(0.01), &mut bundle);
    assert!(bundle.overflowed());
    assert_eq!(bundle.indices().count(), 0);
    let pose = CameraPose {
        position_ned_m: Vector3::new(0.0, 0.0, -5.0),
        attitude: attitude(0.0, 0.0, 0.0),
    };
    let k = Intrinsics::from_fov(48, 48, 10.0);
    let on = same_as_ray_by_ray(&over, &k, &pose);
    assert!(on > 48 * 48 / 2, "{on}");
    // The first sphere is in front of every other.
    let mut frame = Frame::default();
    render(&over, &k, &pose, &mut frame);
    assert_eq!(frame.texels[24 * 48 + 24].segmentation_id, 2);
    assert!((frame.texels[24 * 48 + 24].depth_planar_m - 4.6).abs() < 1e-3);
}
