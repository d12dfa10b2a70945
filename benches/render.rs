//! Cameras and LiDAR on a world of 200 primitives: one 640 × 480 frame
//! (every image type at once) on one thread and on two, a LiDAR's 0.1 s
//! at 300 000 points a second, and the collection the SLAM users ask for —
//! a hovering quad with a 640 × 480 stereo pair at 20 Hz, a 16-channel
//! LiDAR at 10 Hz and 300 000 points a second, its IMU at 200 Hz — for 1 s
//! of sim time, whose real-time factor is 1 s over the measured time.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mavsitl::mission::Mission;
use mavsitl::render::camera::{render, CameraPose, Frame, Intrinsics};
use mavsitl::render::lidar::{Lidar, LidarParams, SensorPose};
use mavsitl::render::scene::{ObjectSpec, ShapeSpec};
use mavsitl::render::texture::TextureSpec;
use mavsitl::render::{Scene, SceneSpec};
use mavsitl::scenario::{Scenario, ScenarioSource};
use mavsitl::time::SimTime;
use nalgebra::{UnitQuaternion, Vector3};

/// 200 primitives scattered within 100 m of home (a fixed sequence).
fn world_of_200() -> SceneSpec {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 11) as f64 / (1u64 << 53) as f64
    };
    let objects = (0..200)
        .map(|i| {
            let (n, e) = (200.0 * next() - 100.0, 200.0 * next() - 100.0);
            let size = 1.0 + 5.0 * next();
            let shape = match i % 3 {
                0 => ShapeSpec::Box {
                    size_m: [size, 1.0 + 5.0 * next(), 1.0 + 8.0 * next()],
                },
                1 => ShapeSpec::Cylinder {
                    radius_m: size / 2.0,
                    height_m: 2.0 + 10.0 * next(),
                },
                _ => ShapeSpec::Sphere {
                    radius_m: size / 2.0,
                },
            };
            ObjectSpec {
                name: format!("o{i}"),
                shape,
                position_ned_m: [n, e, -size / 2.0],
                roll_deg: 0.0,
                pitch_deg: 0.0,
                yaw_deg: 360.0 * next(),
                segmentation_id: None,
                texture: TextureSpec::Noise {
                    seed: i,
                    scale_m: 0.5,
                    colors: [[200, 120, 80], [60, 80, 120]],
                },
            }
        })
        .collect();
    SceneSpec {
        objects,
        ..SceneSpec::default()
    }
}

fn camera(c: &mut Criterion) {
    let scene = Scene::build(&world_of_200()).expect("scene");
    let k = Intrinsics::from_fov(640, 480, 90.0);
    let pose = CameraPose {
        position_ned_m: Vector3::new(-60.0, 0.0, -10.0),
        attitude: UnitQuaternion::from_euler_angles(0.0, -0.15, 0.2),
    };
    let mut g = c.benchmark_group("render");
    g.sample_size(10);
    g.throughput(Throughput::Elements(640 * 480));
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool");
        let mut frame = Frame::default();
        g.bench_with_input(
            BenchmarkId::new("camera_640x480", threads),
            &threads,
            |b, _| b.iter(|| pool.install(|| render(&scene, &k, &pose, &mut frame))),
        );
    }
    g.throughput(Throughput::Elements(30_000));
    g.bench_function("lidar_0.1s_300k_pts_s", |b| {
        let pose = SensorPose {
            position_ned_m: Vector3::new(0.0, 0.0, -2.0),
            attitude: UnitQuaternion::identity(),
        };
        b.iter(|| {
            let mut lidar = Lidar::new(LidarParams {
                points_per_second: 300_000,
                vertical_fov_upper_deg: 15.0,
                vertical_fov_lower_deg: -15.0,
                ..LidarParams::default()
            });
            for t in 1..=100u64 {
                lidar.step(&scene, t * 1000, &pose, &Vector3::zeros(), &mut || 0.0);
            }
            lidar
        })
    });
    g.finish();
}

/// The collection: a quad hovering at 10 m by SimpleFlight among the 200
/// primitives, a stereo pair rendered every 50 ms, the LiDAR firing every
/// tick.
fn collection(c: &mut Criterion) {
    let scene = serde_json::to_value(world_of_200()).expect("json");
    let cam = |name: &str, y: f64| {
        serde_json::json!({"name": name, "width": 640, "height": 480, "fov_deg": 90,
                           "mount": {"x_m": 0.25, "y_m": y}})
    };
    let text = serde_json::json!({
        "scene": scene,
        "vehicles": [{"name": "q", "kind": "multirotor", "initial": {"north_m": -60.0},
            "controller": {"kind": "simpleflight"},
            "sensors": {"imu": {"rate_hz": 200},
                        "cameras": [cam("left", -0.06), cam("right", 0.06)],
                        "lidars": [{"name": "L", "points_per_second": 300000,
                                    "vertical_fov_upper_deg": 15, "vertical_fov_lower_deg": -15}]}}]
    })
    .to_string();
    let src = ScenarioSource {
        name: "collection".into(),
        base_dir: ".".into(),
    };
    let scenario = Scenario::from_json(&text, &src).expect("scenario");
    let wpl = "QGC WPL 110\n0\t1\t0\t16\t0\t0\t0\t0\t47.397742\t8.545594\t488\t1\n1\t0\t3\t22\t0\t0\t0\t0\t0\t0\t10\t1\n";
    let mission = Mission::parse(wpl, "takeoff").expect("mission");
    let mut g = c.benchmark_group("collection");
    g.sample_size(10);
    g.bench_function("stereo_640x480_20hz_lidar_300k_1s", |b| {
        let mut ls = mavsitl::setup::flight(&mission, "takeoff", &scenario, &src, None, true)
            .expect("flight")
            .lockstep;
        ls.run_until(SimTime::from_secs(10), &mut ())
            .expect("climb");
        let mut frames = [Frame::default(), Frame::default()];
        let mut points = Vec::new();
        b.iter(|| {
            let end = ls.sim().time().as_micros() + 1_000_000;
            while ls.sim().time().as_micros() < end {
                ls.tick(&mut ()).expect("tick");
                let sim = ls.sim();
                if sim.time().as_micros().is_multiple_of(50_000) {
                    let v = &sim.vehicles()[0];
                    let s = &v.body().state;
                    for (f, cam) in frames.iter_mut().zip(v.cameras()) {
                        let pose = cam.pose(&s.pos_ned_m, &s.att_ned_frd);
                        let scene = sim.world().scene().expect("scene");
                        render(scene, &cam.intrinsics(), &pose, f);
                    }
                }
                if sim.time().as_micros().is_multiple_of(100_000) {
                    if let Some(l) = ls.sim_mut().lidar_mut(0, 0) {
                        l.take(&mut points);
                    }
                }
            }
            points.len()
        })
    });
    g.finish();
}

criterion_group!(benches, camera, collection);
criterion_main!(benches);
