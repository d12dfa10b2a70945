//! Cameras and LiDAR against analytic geometry: depths of a face at a
//! known pose, a silhouette's pixel count from the pinhole model, a flat
//! ground's ranges h / sin(elevation), and the scene's checks.

use mavsitl_render::camera::{render, CameraPose, Frame, Intrinsics};
use mavsitl_render::lidar::{DataFrame, Lidar, LidarParams, Point, SensorPose};
use mavsitl_render::palette::PALETTE;
use mavsitl_render::scene::{attitude, ObjectSpec, ShapeSpec, Surface, SKY_ID};
use mavsitl_render::texture::TextureSpec;
use mavsitl_render::{Scene, SceneError, SceneSpec};
use nalgebra::{UnitQuaternion, Vector3};

fn object(name: &str, shape: ShapeSpec, at: [f64; 3]) -> ObjectSpec {
    ObjectSpec {
        name: name.into(),
        shape,
        position_ned_m: at,
        roll_deg: 0.0,
        pitch_deg: 0.0,
        yaw_deg: 0.0,
        segmentation_id: None,
        texture: TextureSpec::object(),
    }
}

/// A camera at (3, −4, −2.5) NED turned 30° right and 10° up, and a
/// 2 m cube turned as the camera is, centred 12 m along its optical axis.
fn facing_box() -> (Scene, CameraPose, f64) {
    let q = attitude(0.0, 10.0, 30.0);
    let eye = Vector3::new(3.0, -4.0, -2.5);
    let centre = eye + q * Vector3::new(12.0, 0.0, 0.0);
    let mut cube = object("cube", ShapeSpec::Box { size_m: [2.0; 3] }, centre.into());
    cube.pitch_deg = 10.0;
    cube.yaw_deg = 30.0;
    cube.segmentation_id = Some(42);
    let spec = SceneSpec {
        objects: vec![cube],
        ..SceneSpec::default()
    };
    let scene = Scene::build(&spec).expect("scene");
    let pose = CameraPose {
        position_ned_m: eye,
        attitude: q,
    };
    (scene, pose, 11.0)
}

#[test]
fn a_face_square_to_the_camera_is_at_its_analytic_depth_in_every_pixel() {
    let (scene, pose, face_m) = facing_box();
    // Odd sizes: the centre pixel's ray is the optical axis.
    let k = Intrinsics::from_fov(201, 151, 60.0);
    let mut frame = Frame::default();
    render(&scene, &k, &pose, &mut frame);
    let centre = frame.texels[75 * 201 + 100];
    assert!((f64::from(centre.depth_planar_m) - face_m).abs() < 1e-3);
    assert!((f64::from(centre.depth_perspective_m) - face_m).abs() < 1e-3);
    assert_eq!(centre.segmentation_id, 42);
    // Off the axis the planar depth stays; the perspective one grows as
    // the ray's length.
    let (col, row) = (110, 68);
    let t = frame.texels[row * 201 + col];
    let ray = k.ray(col as u32, row as u32);
    assert!((f64::from(t.depth_planar_m) - face_m).abs() < 1e-3);
    assert!((f64::from(t.depth_perspective_m) - face_m * ray.norm()).abs() < 1e-3);
    assert!(ray.norm() > 1.001);
}

#[test]
fn the_cube_covers_the_pixels_the_pinhole_model_puts_it_on() {
    let (scene, pose, face_m) = facing_box();
    let k = Intrinsics::from_fov(201, 151, 60.0);
    let mut frame = Frame::default();
    render(&scene, &k, &pose, &mut frame);
    // Half the face (1 m) at 11 m: 174.07 px × 1 / 11 = 15.8 px either
    // side of the axis, so pixel centres −15…15: 31 columns and 31 rows.
    let half_px = k.fx / face_m;
    assert!((half_px - 15.825).abs() < 0.01);
    let on_cube = frame
        .texels
        .iter()
        .filter(|t| t.segmentation_id == 42)
        .count();
    assert_eq!(on_cube, 31 * 31);
    for (i, t) in frame.texels.iter().enumerate() {
        let (col, row) = ((i % 201) as f64 - 100.0, (i / 201) as f64 - 75.0);
        let inside = col.abs() < half_px && row.abs() < half_px;
        assert_eq!(t.segmentation_id == 42, inside, "pixel {col} {row}");
    }
}

#[test]
fn looking_down_from_a_height_sees_the_ground_at_that_depth() {
    let spec = SceneSpec::default();
    let scene = Scene::build(&spec).expect("scene");
    let pose = CameraPose {
        position_ned_m: Vector3::new(7.0, -2.0, -5.0),
        attitude: attitude(0.0, -90.0, 0.0),
    };
    let k = Intrinsics::from_fov(64, 48, 90.0);
    let mut frame = Frame::default();
    render(&scene, &k, &pose, &mut frame);
    for t in &frame.texels {
        assert!((t.depth_planar_m - 5.0).abs() < 1e-4);
        assert_eq!(t.segmentation_id, 1);
    }
    // Looking level from 5 m up: the upper half is sky, the lower ground.
    let level = CameraPose {
        attitude: UnitQuaternion::identity(),
        ..pose
    };
    render(&scene, &k, &level, &mut frame);
    let top = frame.texels[0];
    assert_eq!(top.segmentation_id, SKY_ID);
    assert!(top.depth_planar_m.is_infinite());
    // The sky deepens from the horizon to the zenith by the ray's
    // elevation: the top-left ray climbs 23.5 px in 32 of focal length,
    // 31.5 px aside.
    let ray = Vector3::new(32.0, -31.5, -23.5).normalize();
    let up = -ray.z;
    let sky = [(0.78, 0.35), (0.85, 0.55), (0.92, 0.85)]
        .map(|(h, z): (f64, f64)| ((h + (z - h) * up) * 255.0).round() as u8);
    assert_eq!(top.rgb, sky);
    assert!((0.4..0.5).contains(&up));
    let bottom = frame.texels[47 * 64 + 32];
    assert_eq!(bottom.segmentation_id, 1);
    // Row 47's ray drops 23.5 px in 32 px of focal length: the ground 5 m
    // below is 5 · 32 / 23.5 m ahead.
    assert!((f64::from(bottom.depth_planar_m) - 5.0 * 32.0 / 23.5).abs() < 1e-3);
}

#[test]
fn the_checker_alternates_along_the_ground_and_shading_follows_the_sun() {
    let scene = Scene::build(&SceneSpec::default()).expect("scene");
    let pose = CameraPose {
        position_ned_m: Vector3::new(0.5, 0.9, -2.0),
        attitude: attitude(0.0, -90.0, 0.0),
    };
    // A 1 m square seen from 2 m with a 90° view 8 px wide: 2 px a metre.
    let k = Intrinsics::from_fov(8, 8, 90.0);
    let mut frame = Frame::default();
    render(&scene, &k, &pose, &mut frame);
    let px = |c: usize, r: usize| frame.texels[r * 8 + c].rgb;
    // Looking down with yaw 0, image right is east and image down south:
    // row 4 sees 0.25 m north; columns 1, 3, 5 see −0.35, 0.65 and 1.65 m
    // east, in squares of odd, even and odd parity.
    let light = 0.35 + 0.65 * 50f64.to_radians().sin();
    let lit = |c: [f64; 3]| c.map(|x| (x * light).round() as u8);
    let (even, odd) = (lit([150.0, 150.0, 140.0]), lit([90.0, 95.0, 85.0]));
    assert_eq!([px(1, 4), px(3, 4), px(5, 4)], [odd, even, odd]);
}

/// The sun stands in the south-east: a face turned to the south is lit by
/// the cosine of its angle to the sun, one turned north has only the
/// ambient light.
#[test]
fn a_south_face_is_lit_and_a_north_face_is_in_shade() {
    let mut cube = object("c", ShapeSpec::Box { size_m: [2.0; 3] }, [0.0, 0.0, -3.0]);
    cube.texture = TextureSpec::Solid {
        color: [200, 200, 200],
    };
    let spec = SceneSpec {
        objects: vec![cube],
        ..SceneSpec::default()
    };
    let scene = Scene::build(&spec).expect("scene");
    let k = Intrinsics::from_fov(5, 5, 30.0);
    let mut frame = Frame::default();
    let mut seen = |north: f64, yaw: f64| {
        let pose = CameraPose {
            position_ned_m: Vector3::new(north, 0.0, -3.0),
            attitude: attitude(0.0, 0.0, yaw),
        };
        render(&scene, &k, &pose, &mut frame);
        frame.texels[12].rgb
    };
    // From the south looking north: the south face, its normal −x.
    let south = seen(-10.0, 0.0);
    let north = seen(10.0, 180.0);
    let to_sun_north = -(50f64.to_radians().cos()) * 45f64.to_radians().cos();
    let lit = 0.35 + 0.65 * (-to_sun_north);
    assert_eq!(south, [(200.0 * lit).round() as u8; 3]);
    assert_eq!(north, [(200.0_f64 * 0.35).round() as u8; 3]);
}

#[test]
fn a_sphere_and_a_cylinder_are_met_at_their_surfaces() {
    let mut ball = object(
        "ball",
        ShapeSpec::Sphere { radius_m: 1.5 },
        [20.0, 0.0, -3.0],
    );
    ball.segmentation_id = Some(7);
    let mut post = object(
        "post",
        ShapeSpec::Cylinder {
            radius_m: 0.5,
            height_m: 6.0,
        },
        [0.0, 10.0, -3.0],
    );
    post.segmentation_id = Some(9);
    let spec = SceneSpec {
        objects: vec![ball, post],
        ..SceneSpec::default()
    };
    let scene = Scene::build(&spec).expect("scene");
    let o = parry3d::math::Vector::new(0.0, 0.0, -3.0);
    let north = scene
        .cast(o, parry3d::math::Vector::new(1.0, 0.0, 0.0), 100.0)
        .expect("ball");
    assert!((north.t - 18.5).abs() < 1e-3);
    assert_eq!(scene.segmentation_id(Some(north.surface)), 7);
    assert!((north.normal_ned[0] + 1.0).abs() < 1e-4);
    let east = scene
        .cast(o, parry3d::math::Vector::new(0.0, 1.0, 0.0), 100.0)
        .expect("post");
    assert!((east.t - 9.5).abs() < 1e-3);
    assert_eq!(scene.segmentation_id(Some(east.surface)), 9);
    // The post stands 6 m tall on the ground: over its top (7 m up) the
    // ray passes.
    let over = scene.cast(
        parry3d::math::Vector::new(0.0, 0.0, -6.5),
        parry3d::math::Vector::new(0.0, 1.0, 0.0),
        100.0,
    );
    assert!(over.is_none());
    // Upward rays never meet the ground.
    assert!(scene
        .cast(o, parry3d::math::Vector::new(0.0, 0.0, -1.0), 100.0)
        .is_none());
}

/// What a LiDAR over flat ground gave: its points, the noise draws it
/// took, the points it let go unread.
struct Sweep {
    points: Vec<Point>,
    draws: u64,
    dropped: u64,
}

/// A LiDAR `h` m over the ground at (4, 5) facing 25°, stepped every 1 ms
/// to `until_us`, its points in frames from `origin`; its noise a fixed
/// sequence −2, +2, −2, … (mean 0, σ 2).
fn flat_ground_lidar_from(
    params: LidarParams,
    h: f64,
    until_us: u64,
    origin: Vector3<f64>,
) -> Sweep {
    let scene = Scene::build(&SceneSpec::default()).expect("scene");
    let mut lidar = Lidar::new(params);
    let pose = SensorPose {
        position_ned_m: Vector3::new(4.0, 5.0, -h),
        attitude: attitude(0.0, 0.0, 25.0),
    };
    let mut n = 0u64;
    let mut noise = || {
        n += 1;
        if n.is_multiple_of(2) {
            2.0
        } else {
            -2.0
        }
    };
    for t in (1_000..=until_us).step_by(1_000) {
        lidar.step(&scene, t, &pose, &origin, &mut noise);
    }
    let mut points = Vec::new();
    lidar.take(&mut points);
    Sweep {
        points,
        draws: n,
        dropped: lidar.dropped(),
    }
}

fn flat_ground_lidar(params: LidarParams, h: f64, until_us: u64) -> Vec<Point> {
    flat_ground_lidar_from(params, h, until_us, Vector3::zeros()).points
}

#[test]
fn a_sweep_over_flat_ground_returns_h_over_the_sine_of_each_elevation() {
    let h = 10.0;
    let params = LidarParams {
        points_per_second: 16_000,
        ..LidarParams::default()
    };
    let points = flat_ground_lidar(params, h, 100_000);
    // 1 000 firings a second for 0.1 s, 16 lasers, all on the ground
    // (the azimuth skips 359°…360°: none of the first 100).
    assert_eq!(points.len(), 100 * 16);
    for p in &points {
        let el = -15.0 - 2.0 * f64::from(p.channel);
        let r = f64::from(p.xyz[0])
            .hypot(f64::from(p.xyz[1]))
            .hypot(f64::from(p.xyz[2]));
        let want = h / el.to_radians().sin().abs();
        assert!((r - want).abs() < 1e-3, "channel {} {r} {want}", p.channel);
        // Sensor axes: the ground is h below, whatever the heading.
        assert!((f64::from(p.xyz[2]) - h).abs() < 1e-3);
    }
    // Firing k at k ms turns 3.6° each.
    let p = points.iter().find(|p| p.t_us == 25_000).expect("firing 25");
    let az = f64::from(p.xyz[1]).atan2(f64::from(p.xyz[0])).to_degrees();
    assert!((az - 90.0).abs() < 1e-3, "{az}");
}

#[test]
fn range_noise_moves_each_return_along_its_ray_by_sigma_times_the_draw() {
    let h = 10.0;
    let sigma = 0.05;
    let params = LidarParams {
        points_per_second: 16_000,
        range_noise_m: sigma,
        ..LidarParams::default()
    };
    let sweep = flat_ground_lidar_from(params, h, 20_000, Vector3::zeros());
    assert_eq!(sweep.points.len(), 20 * 16);
    assert_eq!(sweep.draws, 20 * 16);
    for (i, p) in sweep.points.iter().enumerate() {
        let el = -15.0 - 2.0 * f64::from(p.channel);
        let r = f64::from(p.xyz[0])
            .hypot(f64::from(p.xyz[1]))
            .hypot(f64::from(p.xyz[2]));
        let e = r - h / el.to_radians().sin().abs();
        // Draws −2, +2, … in firing order: 2σ short, then 2σ long.
        let want = if i % 2 == 0 {
            -2.0 * sigma
        } else {
            2.0 * sigma
        };
        assert!((e - want).abs() < 1e-3, "{i}: {e}");
    }
    // Without noise the stream is never drawn from.
    let quiet = LidarParams {
        points_per_second: 16_000,
        ..LidarParams::default()
    };
    assert_eq!(
        flat_ground_lidar_from(quiet, h, 20_000, Vector3::zeros()).draws,
        0
    );
}

#[test]
fn the_horizontal_field_keeps_only_its_azimuths_and_the_inertial_frame_is_ned() {
    let h = 8.0;
    let params = LidarParams {
        points_per_second: 16_000,
        horizontal_fov_start_deg: 0.0,
        horizontal_fov_end_deg: 90.0,
        data_frame: DataFrame::VehicleInertial,
        ..LidarParams::default()
    };
    // The frame's origin 1 m north, 2 m east and 0.5 m up of home.
    let origin = Vector3::new(1.0, 2.0, -0.5);
    let points = flat_ground_lidar_from(params, h, 100_000, origin).points;
    // Azimuths 0°, 3.6° … 90°: firings 0 to 25, and 100 ms is one turn.
    assert_eq!(points.len(), 26 * 16);
    for p in &points {
        // NED from the origin: every return on the ground (0.5 m below
        // the origin), north-east of the sensor at (3, 3) from it, within
        // 25°…115° of north (the sensor faces 25°).
        assert!((f64::from(p.xyz[2]) - 0.5).abs() < 1e-3, "{:?}", p.xyz);
        let bearing = f64::from(p.xyz[1] - 3.0)
            .atan2(f64::from(p.xyz[0] - 3.0))
            .to_degrees();
        assert!((25.0 - 1e-3..=115.0 + 1e-3).contains(&bearing), "{bearing}");
    }
}

#[test]
fn unread_points_give_way_after_a_second() {
    let params = LidarParams {
        points_per_second: 16_000,
        ..LidarParams::default()
    };
    let sweep = flat_ground_lidar_from(params, 10.0, 2_000_000, Vector3::zeros());
    assert_eq!(sweep.points.len(), 16_000);
    assert_eq!(sweep.points[0].t_us, 1_000_000);
    assert_eq!(sweep.dropped, 16_000);
}

#[test]
fn a_reader_beside_the_api_sees_the_points_by_number_without_taking_them() {
    let scene = Scene::build(&SceneSpec::default()).expect("scene");
    let mut lidar = Lidar::new(LidarParams {
        points_per_second: 16_000,
        ..LidarParams::default()
    });
    let pose = SensorPose {
        position_ned_m: Vector3::new(0.0, 0.0, -10.0),
        attitude: attitude(0.0, 0.0, 0.0),
    };
    let mut quiet = || 0.0;
    // 3 ms: firings 0, 1 and 2 of 16 lasers each.
    for t in [1_000, 2_000, 3_000] {
        lidar.step(&scene, t, &pose, &Vector3::zeros(), &mut quiet);
    }
    assert_eq!(lidar.pushed(), 48);
    let from_16: Vec<u64> = lidar.since(16).map(|p| p.t_us).collect();
    assert_eq!(from_16.len(), 32);
    assert_eq!((from_16[0], from_16[31]), (1_000, 2_000));
    assert_eq!(lidar.since(0).count(), 48);
    assert_eq!(lidar.since(48).count(), 0);
    assert_eq!(lidar.since(100).count(), 0);
    // Taken by the API: the numbers go on, what was taken is gone.
    let mut out = Vec::new();
    lidar.take(&mut out);
    assert_eq!(out.len(), 48);
    lidar.step(&scene, 4_000, &pose, &Vector3::zeros(), &mut quiet);
    assert_eq!(lidar.pushed(), 64);
    assert_eq!(lidar.since(0).count(), 16);
    assert_eq!(lidar.since(50).count(), 14);
    assert!(lidar.since(48).all(|p| p.t_us == 3_000));
    // Given way to newer ones (a second's worth is kept): the oldest
    // numbers are gone for good.
    for t in (5_000..=1_504_000).step_by(1_000) {
        lidar.step(&scene, t, &pose, &Vector3::zeros(), &mut quiet);
    }
    assert_eq!(lidar.pushed(), 64 + 1_500 * 16);
    assert_eq!(lidar.dropped(), 16 + 1_500 * 16 - 16_000);
    assert_eq!(lidar.since(0).count(), 16_000);
    assert_eq!(lidar.since(8_064).count(), 16_000);
    assert_eq!(lidar.since(8_065).count(), 15_999);
    assert_eq!(lidar.since(8_065).next().map(|p| p.t_us), Some(504_000));
}

#[test]
fn a_degenerate_or_out_of_range_scene_is_refused_by_key() {
    let build = |o: ObjectSpec| {
        Scene::build(&SceneSpec {
            objects: vec![o],
            ..SceneSpec::default()
        })
        .map(|_| ())
        .map_err(|e| e.to_string())
    };
    let flat = object(
        "slab",
        ShapeSpec::Box {
            size_m: [1.0, 0.0, 1.0],
        },
        [0.0; 3],
    );
    assert_eq!(
        build(flat),
        Err("objects[0].shape.box.size_m[1]: 0 is outside 0.001..=10000 m".into())
    );
    let nan = object("n", ShapeSpec::Sphere { radius_m: f64::NAN }, [0.0; 3]);
    assert_eq!(
        build(nan),
        Err("objects[0].shape.sphere.radius_m: NaN is outside 0.001..=10000 m".into())
    );
    let mut id = object("i", ShapeSpec::Sphere { radius_m: 1.0 }, [0.0; 3]);
    id.segmentation_id = Some(256);
    assert_eq!(
        build(id),
        Err("objects[0].segmentation_id: 256 is outside 0..=255".into())
    );
    let mut bricks = object("b", ShapeSpec::Sphere { radius_m: 1.0 }, [0.0; 3]);
    bricks.texture = TextureSpec::Brick {
        width_m: 0.4,
        height_m: 0.2,
        mortar_m: 0.1,
        colors: [[1, 2, 3], [4, 5, 6]],
    };
    assert_eq!(
        build(bricks),
        Err("objects[0].texture.brick.mortar_m: 0.1 is outside less than half the brick's width and height".into())
    );
    let far = object("f", ShapeSpec::Sphere { radius_m: 1.0 }, [0.0, 1e6, 0.0]);
    assert_eq!(
        build(far),
        Err("objects[0].position_ned_m[1]: 1000000 is outside ±100000 m".into())
    );
    let two = SceneSpec {
        objects: vec![
            object("a", ShapeSpec::Sphere { radius_m: 1.0 }, [0.0; 3]),
            object("a", ShapeSpec::Sphere { radius_m: 1.0 }, [5.0; 3]),
        ],
        ..SceneSpec::default()
    };
    assert!(matches!(
        Scene::build(&two),
        Err(SceneError::Duplicate { key, .. }) if key == "objects[1].name"
    ));
}

#[test]
fn a_scene_reads_from_json_with_defaults_and_unknown_keys_refused() {
    let s: SceneSpec = serde_json::from_str(
        r#"{"objects": [{"name": "tower", "shape": {"cylinder": {"radius_m": 2, "height_m": 30}},
            "position_ned_m": [40, 0, -15], "texture": {"brick": {"width_m": 0.4, "height_m": 0.2,
            "mortar_m": 0.02, "colors": [[170, 80, 60], [200, 200, 190]]}}}]}"#,
    )
    .expect("scene");
    let scene = Scene::build(&s).expect("build");
    assert_eq!(scene.objects()[0].segmentation_id, 2);
    assert_eq!(scene.object_named("tower"), Some(0));
    assert!(serde_json::from_str::<SceneSpec>(r#"{"ground": {"colour": 1}}"#).is_err());
    assert_eq!(PALETTE[2], [112, 105, 191]);
}

#[test]
fn a_lidar_first_stepped_late_fires_only_the_last_second() {
    let scene = Scene::build(&SceneSpec::default()).expect("scene");
    let mut lidar = Lidar::new(LidarParams {
        points_per_second: 16_000,
        ..LidarParams::default()
    });
    let pose = SensorPose {
        position_ned_m: Vector3::new(0.0, 0.0, -10.0),
        attitude: UnitQuaternion::identity(),
    };
    // An hour in: the firings of its last second, 1 000 of 16 lasers.
    lidar.step(&scene, 3_600_000_000, &pose, &Vector3::zeros(), &mut || 0.0);
    let mut out = Vec::new();
    lidar.take(&mut out);
    assert_eq!(out.len(), 16_000);
    assert_eq!(out[0].t_us, 3_599_000_000);
    assert_eq!(out[out.len() - 1].t_us, 3_599_999_000);
    // Read, the buffer is empty until the next firing.
    lidar.take(&mut out);
    assert!(out.is_empty());
}

/// A face's texture runs along the face's own two axes, in the object's
/// axes however it is turned: a 4 m cube of 1 m checks turned 90° (its x
/// to the east).
#[test]
fn textures_run_along_each_faces_own_axes_in_the_objects_frame() {
    let mut cube = object("c", ShapeSpec::Box { size_m: [4.0; 3] }, [10.0, 0.0, -2.0]);
    cube.yaw_deg = 90.0;
    cube.texture = TextureSpec::Checker {
        size_m: 1.0,
        colors: [[255, 0, 0], [0, 0, 255]],
    };
    let scene = Scene::build(&SceneSpec {
        objects: vec![cube],
        ..SceneSpec::default()
    })
    .expect("scene");
    let red = [1.0, 0.0, 0.0];
    let blue = [0.0, 0.0, 1.0];
    let v = parry3d::math::Vector::new;
    let albedo = |p: [f32; 3], n: [f32; 3]| {
        scene.albedo(Surface::Object(0), v(p[0], p[1], p[2]), v(n[0], n[1], n[2]))
    };
    // The cube's +x face faces east; local (2, y, z) is world
    // (10 − y, 2, −2 + z): checks along y and z.
    assert_eq!(albedo([9.5, 2.0, -1.5], [0.0, 1.0, 0.0]), red);
    assert_eq!(albedo([8.5, 2.0, -1.5], [0.0, 1.0, 0.0]), blue);
    assert_eq!(albedo([9.5, 2.0, -0.5], [0.0, 1.0, 0.0]), blue);
    // Its top (local z = −2): checks along x and y.
    assert_eq!(albedo([9.5, 0.5, -4.0], [0.0, 0.0, -1.0]), red);
    assert_eq!(albedo([9.5, 1.5, -4.0], [0.0, 0.0, -1.0]), blue);
    // Its +y face faces south: local (x, 2, z) is world (8, x, −2 + z).
    assert_eq!(albedo([8.0, 1.5, -1.5], [-1.0, 0.0, 0.0]), blue);
    assert_eq!(albedo([8.0, 0.5, -1.5], [-1.0, 0.0, 0.0]), red);
}

#[test]
fn objects_move_and_are_relabelled_and_the_ground_can_go() {
    let spec = SceneSpec {
        objects: vec![
            object("a", ShapeSpec::Sphere { radius_m: 1.0 }, [10.0, 0.0, -5.0]),
            object("b", ShapeSpec::Sphere { radius_m: 1.0 }, [0.0, 10.0, -5.0]),
        ],
        ..SceneSpec::default()
    };
    let mut scene = Scene::build(&spec).expect("scene");
    let o = parry3d::math::Vector::new(0.0, 0.0, -5.0);
    let north = parry3d::math::Vector::new(1.0, 0.0, 0.0);
    assert!((scene.cast(o, north, 100.0).expect("a").t - 9.0).abs() < 1e-5);
    let q = UnitQuaternion::identity();
    assert!(scene.set_pose(0, &Vector3::new(20.0, 0.0, -5.0), &q));
    assert!(!scene.set_pose(2, &Vector3::new(20.0, 0.0, -5.0), &q));
    assert_eq!(scene.generation(), 1);
    assert!((scene.cast(o, north, 100.0).expect("a").t - 19.0).abs() < 1e-5);
    let (at, _) = scene.pose(0).expect("pose");
    assert!((at - Vector3::new(20.0, 0.0, -5.0)).norm() < 1e-6);
    assert!(scene.pose(2).is_none());
    // Moving b leaves a where it was.
    assert!(scene.set_pose(1, &Vector3::new(0.0, 30.0, -5.0), &q));
    assert!((scene.cast(o, north, 100.0).expect("a").t - 19.0).abs() < 1e-5);
    assert_eq!(scene.set_segmentation_id(|n| n == "b", 99), 1);
    assert_eq!(scene.set_segmentation_id(|_| false, 98), 0);
    assert_eq!(scene.generation(), 4);
    assert_eq!(scene.segmentation_id(Some(Surface::Object(1))), 99);
    assert_eq!(scene.segmentation_id(Some(Surface::Object(7))), SKY_ID);
    assert_eq!(scene.segmentation_id(Some(Surface::Ground)), 1);
    assert_eq!(scene.segmentation_id(None), SKY_ID);
    assert_eq!(scene.object_named("b"), Some(1));
    assert_eq!(scene.object_named("z"), None);
    // A ground 2 m down with id 5, and none at all.
    let mut spec = SceneSpec::default();
    spec.ground.down_m = 2.0;
    spec.ground.segmentation_id = 5;
    let scene = Scene::build(&spec).expect("scene");
    let down = parry3d::math::Vector::new(0.0, 0.0, 1.0);
    let hit = scene.cast(o, down, 100.0).expect("ground");
    assert!((hit.t - 7.0).abs() < 1e-6);
    assert_eq!(scene.segmentation_id(Some(hit.surface)), 5);
    // From below the ground, looking down: nothing.
    let under = parry3d::math::Vector::new(0.0, 0.0, 3.0);
    assert!(scene.cast(under, down, 100.0).is_none());
    assert!(scene.cast(o, down, 6.9).is_none());
    spec.ground.enabled = false;
    let scene = Scene::build(&spec).expect("scene");
    assert!(scene.cast(o, down, 100.0).is_none());
    assert_eq!(scene.segmentation_id(Some(Surface::Ground)), SKY_ID);
    assert_eq!(scene.albedo(Surface::Ground, o, down), [0.0; 3]);
    let e = Scene::build(&SceneSpec {
        ground: mavsitl_render::scene::GroundSpec {
            segmentation_id: 300,
            ..Default::default()
        },
        ..SceneSpec::default()
    })
    .map(|_| ())
    .map_err(|e| e.to_string());
    assert_eq!(
        e,
        Err("ground.segmentation_id: 300 is outside 0..=255".into())
    );
}

#[test]
fn names_ids_and_counts_are_checked_at_their_edges() {
    let named = |name: String| object(&name, ShapeSpec::Sphere { radius_m: 1.0 }, [0.0; 3]);
    let one = |o: ObjectSpec| {
        Scene::build(&SceneSpec {
            objects: vec![o],
            ..SceneSpec::default()
        })
        .map(|_| ())
    };
    assert!(one(named("n".repeat(64))).is_ok());
    assert!(matches!(
        one(named("n".repeat(65))),
        Err(SceneError::Name { .. })
    ));
    assert!(matches!(
        one(named(String::new())),
        Err(SceneError::Name { .. })
    ));
    // Default ids run 2, 3, … 255 and wrap to 2 at the 255th object.
    let many: Vec<ObjectSpec> = (0..256)
        .map(|i| {
            object(
                &format!("o{i}"),
                ShapeSpec::Sphere { radius_m: 0.1 },
                [i as f64, 0.0, -1.0],
            )
        })
        .collect();
    let scene = Scene::build(&SceneSpec {
        objects: many,
        ..SceneSpec::default()
    })
    .expect("256");
    let id = |i: usize| scene.objects()[i].segmentation_id;
    assert_eq!([id(0), id(1), id(253), id(254), id(255)], [2, 3, 255, 2, 3]);
    // At most 100 000 objects.
    let crowd = |n: usize| SceneSpec {
        objects: (0..n)
            .map(|i| {
                object(
                    &format!("o{i}"),
                    ShapeSpec::Sphere { radius_m: 0.1 },
                    [0.0; 3],
                )
            })
            .collect(),
        ..SceneSpec::default()
    };
    assert!(Scene::build(&crowd(100_000)).is_ok());
    let e = Scene::build(&crowd(100_001))
        .map(|_| ())
        .map_err(|e| e.to_string());
    assert_eq!(
        e,
        Err("objects: 100001 is outside at most 100000 primitives".into())
    );
    // The ground's defaults as read.
    let g: SceneSpec = serde_json::from_str(r#"{"ground": {}}"#).expect("scene");
    assert!(g.ground.enabled);
    assert_eq!(g.ground.segmentation_id, 1);
}

#[test]
fn a_normal_is_the_surface_s_where_an_off_centre_ray_meets_it_and_the_ground_is_met_from_above() {
    let scene = Scene::build(&SceneSpec {
        objects: vec![object(
            "ball",
            ShapeSpec::Sphere { radius_m: 2.0 },
            [10.0, 1.0, -5.0],
        )],
        ..SceneSpec::default()
    })
    .expect("scene");
    let v = parry3d::math::Vector::new;
    // Along north 1 m east of the centre's line: it meets the sphere at
    // (10 − √3, 0, −5), its normal (−√3, −1, 0) / 2.
    let hit = scene
        .cast(v(0.0, 0.0, -5.0), v(1.0, 0.0, 0.0), 100.0)
        .expect("ball");
    let r3 = 3f32.sqrt();
    assert!((hit.t - (10.0 - r3)).abs() < 1e-4);
    let n = hit.normal_ned;
    assert!(
        (n[0] + r3 / 2.0).abs() < 1e-4 && (n[1] + 0.5).abs() < 1e-4 && n[2].abs() < 1e-4,
        "{n:?}"
    );
    // A ray from the ground plane itself, or going up, never meets it.
    assert!(scene
        .cast(v(0.0, 0.0, 0.0), v(0.0, 0.0, 1.0), 100.0)
        .is_none());
    assert!(scene
        .cast(v(0.0, 0.0, 1.0), v(0.0, 0.0, -1.0), 100.0)
        .is_none());
    let hit = scene
        .cast(v(0.0, 0.0, -1.0), v(0.0, 0.0, 1.0), 100.0)
        .expect("ground");
    assert_eq!(hit.t, 1.0);
}
