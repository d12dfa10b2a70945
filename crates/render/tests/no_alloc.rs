//! A warm frame and a warm LiDAR step allocate nothing: counted by a
//! global allocator wrapped around the system one, on the test's thread
//! and on every thread of the rayon pool the frame is cast on.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use mavsitl_render::camera::{render, CameraPose, Frame, Intrinsics};
use mavsitl_render::lidar::{Lidar, LidarParams, Point, SensorPose};
use mavsitl_render::{Scene, SceneSpec};
use nalgebra::{UnitQuaternion, Vector3};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Whether this thread's allocations are counted: the test's and the
    /// pool's threads, not the harness's.
    static COUNTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn note() {
    if COUNTED.try_with(|c| c.get()).unwrap_or(false) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// A ground with a heightmap and three objects, one of each shape.
fn scene() -> Scene {
    let spec: SceneSpec = serde_json::from_str(
        r#"{"ground": {"heightmap": {"spacing_m": 5, "origin_ne_m": [0, -10],
              "heights_m": [[0, 1, 0, 2], [1, 3, 1, 0], [0, 2, 4, 1], [1, 0, 1, 0]]}},
            "objects": [
              {"name": "b", "shape": {"box": {"size_m": [2, 2, 2]}}, "position_ned_m": [20, 0, -1]},
              {"name": "c", "shape": {"cylinder": {"radius_m": 1, "height_m": 4}}, "position_ned_m": [15, 5, -2],
               "texture": {"noise": {"seed": 3, "scale_m": 0.5, "colors": [[200, 100, 50], [20, 40, 60]]}}},
              {"name": "s", "shape": {"sphere": {"radius_m": 1.5}}, "position_ned_m": [25, -4, -1.5],
               "texture": {"brick": {"width_m": 0.4, "height_m": 0.2, "mortar_m": 0.02,
                                      "colors": [[165, 75, 55], [205, 200, 190]]}}}]}"#,
    )
    .expect("scene");
    Scene::build(&spec).expect("build")
}

/// Allocations counted while `f` runs.
fn counted(f: impl FnOnce()) -> usize {
    COUNTED.with(|c| c.set(true));
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    f();
    let n = ALLOCATIONS.load(Ordering::Relaxed) - before;
    COUNTED.with(|c| c.set(false));
    n
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .start_handler(|_| COUNTED.with(|c| c.set(true)))
        .build()
        .expect("pool")
}

#[test]
fn a_warm_frame_and_a_warm_lidar_step_allocate_nothing() {
    let scene = scene();
    let k = Intrinsics::from_fov(160, 120, 90.0);
    let pose = CameraPose {
        position_ned_m: Vector3::new(0.0, 0.0, -8.0),
        attitude: UnitQuaternion::from_euler_angles(0.0, -0.3, 0.1),
    };
    let mut frame = Frame::default();
    let mut lidar = Lidar::new(LidarParams {
        points_per_second: 32_000,
        range_noise_m: 0.01,
        ..LidarParams::default()
    });
    let lidar_pose = SensorPose {
        position_ned_m: Vector3::new(5.0, 0.0, -3.0),
        attitude: UnitQuaternion::identity(),
    };
    let mut points: Vec<Point> = Vec::new();
    let mut noise = || 0.5;
    // Warm: the frame's buffer sized, the pool's thread started, the
    // LiDAR's buffers at a turn's worth.
    let one = pool(1);
    one.install(|| render(&scene, &k, &pose, &mut frame));
    for t in (1..=100u64).map(|ms| ms * 1000) {
        lidar.step(&scene, t, &lidar_pose, &Vector3::zeros(), &mut noise);
    }
    lidar.take(&mut points);
    let frame_allocs = counted(|| one.install(|| render(&scene, &k, &pose, &mut frame)));
    let lidar_allocs = counted(|| {
        for t in (101..=200u64).map(|ms| ms * 1000) {
            lidar.step(&scene, t, &lidar_pose, &Vector3::zeros(), &mut noise);
        }
        lidar.take(&mut points);
    });
    assert_eq!(frame_allocs, 0, "a warm frame allocated");
    assert_eq!(lidar_allocs, 0, "a warm LiDAR turn allocated");
    // And it did the work: a frame of the ground, objects and sky, a turn
    // of points.
    assert_eq!(frame.texels.len(), 160 * 120);
    assert!(frame.texels.iter().any(|t| t.segmentation_id == 1));
    assert!(frame.texels.iter().any(|t| t.segmentation_id == 0));
    assert_eq!(points.len(), 100 * 2 * 16);
    // On two threads the rows are shared out by work stealing, whose
    // queues now and then give back and regrow a buffer: a few
    // allocations in ten frames, where one a row would be 1 200.
    let two = pool(2);
    two.install(|| render(&scene, &k, &pose, &mut frame));
    let n = counted(|| {
        for _ in 0..10 {
            two.install(|| render(&scene, &k, &pose, &mut frame));
        }
    });
    assert!(n < 10, "{n} allocations in ten warm frames on two threads");
}
