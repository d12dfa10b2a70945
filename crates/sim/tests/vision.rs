//! Cameras and LiDARs on vehicles: read and checked from a scenario, placed
//! by their mounts, and a LiDAR fired by the loop, the same on one thread
//! and two.

use mavsitl_sim::scenario::{Scenario, ScenarioSource};
use mavsitl_sim::sensors::vision::{CameraSpec, LidarFrame, LidarSpec};
use mavsitl_sim::sensors::Mount;
use nalgebra::{UnitQuaternion, Vector3};

fn load(text: &str) -> Result<Scenario, String> {
    let src = ScenarioSource {
        name: "v.json".into(),
        base_dir: ".".into(),
    };
    Scenario::from_json(text, &src).map_err(|e| e.to_string())
}

/// A quad with `sensors`, over the default ground.
fn with_sensors(sensors: &str) -> Result<Scenario, String> {
    load(&format!(
        r#"{{"scene": {{}}, "vehicles": [{{"kind": "multirotor", "initial": {{"north_m": 3, "east_m": -2}},
             "sensors": {sensors}}}]}}"#
    ))
}

#[test]
fn cameras_and_lidars_out_of_range_are_refused_by_key() {
    let cases = [
        (
            r#"{"cameras": [{"name": "c", "width": 100000}]}"#,
            "vehicles[0].sensors: cameras[0].width: 100000 is outside 1..=4096 px",
        ),
        (
            r#"{"cameras": [{"name": "c", "height": 0}]}"#,
            "cameras[0].height: 0 is outside 1..=4096 px",
        ),
        (
            r#"{"cameras": [{"name": "c", "fov_deg": 0}]}"#,
            "cameras[0].fov_deg: 0 is outside (0, 170] deg",
        ),
        (
            r#"{"cameras": [{"name": "c", "fov_deg": 170.5}]}"#,
            "cameras[0].fov_deg: 170.5 is outside",
        ),
        (
            r#"{"cameras": [{"name": "c"}, {"name": "c"}]}"#,
            "cameras[1].name: \"c\" is given twice",
        ),
        (
            r#"{"cameras": [{"name": ""}]}"#,
            "cameras[0].name: \"\" must be 1 to 64 bytes",
        ),
        (
            r#"{"lidars": [{"name": "l", "points_per_second": 1000000000}]}"#,
            "lidars[0].points_per_second: 1000000000 is outside 16..=5000000",
        ),
        (
            r#"{"lidars": [{"name": "l", "channels": 0}]}"#,
            "lidars[0].channels: 0 is outside 1..=256",
        ),
        (
            r#"{"lidars": [{"name": "l", "channels": 4, "points_per_second": 3}]}"#,
            "lidars[0].points_per_second: 3 is outside 4..=5000000",
        ),
        (
            r#"{"lidars": [{"name": "l", "range_m": 2001}]}"#,
            "lidars[0].range_m: 2001 is outside (0, 2000] m",
        ),
        (
            r#"{"lidars": [{"name": "l", "range_m": 0}]}"#,
            "lidars[0].range_m: 0 is outside",
        ),
        (
            r#"{"lidars": [{"name": "l", "rotations_per_second": 0}]}"#,
            "lidars[0].rotations_per_second: 0 is outside (0, 100]",
        ),
        (
            r#"{"lidars": [{"name": "l", "rotations_per_second": 101}]}"#,
            "rotations_per_second: 101 is outside",
        ),
        (
            r#"{"lidars": [{"name": "l", "vertical_fov_upper_deg": 91}]}"#,
            "lidars[0].vertical_fov_upper_deg: 91 is outside -90..=90 deg",
        ),
        (
            r#"{"lidars": [{"name": "l", "vertical_fov_upper_deg": -50}]}"#,
            "lidars[0].vertical_fov_lower_deg: -45 is outside -90..=-50 deg (the upper edge)",
        ),
        (
            r#"{"lidars": [{"name": "l", "horizontal_fov_start_deg": -1}]}"#,
            "lidars[0].horizontal_fov_start_deg: -1 is outside 0..=360 deg",
        ),
        (
            r#"{"lidars": [{"name": "l", "horizontal_fov_start_deg": 90, "horizontal_fov_end_deg": 45}]}"#,
            "lidars[0].horizontal_fov_end_deg: 45 is outside 90..=360 deg (from the start)",
        ),
        (
            r#"{"lidars": [{"name": "l", "range_noise_m": 11}]}"#,
            "lidars[0].range_noise_m: 11 is outside 0..=10 m",
        ),
        (
            r#"{"lidars": [{"name": "l"}, {"name": "l"}]}"#,
            "lidars[1].name: \"l\" is given twice",
        ),
    ];
    for (sensors, want) in cases {
        let e = with_sensors(sensors).expect_err(sensors);
        assert!(e.contains(want), "{sensors}: {e}");
    }
    let seventeen: Vec<String> = (0..17).map(|i| format!(r#"{{"name": "c{i}"}}"#)).collect();
    let e = with_sensors(&format!(r#"{{"cameras": [{}]}}"#, seventeen.join(",")))
        .expect_err("seventeen");
    assert!(e.contains("cameras.len: 17 is more than 16"), "{e}");
    // At the edges: accepted.
    with_sensors(
        r#"{"cameras": [{"name": "c", "width": 4096, "height": 1, "fov_deg": 170}],
            "lidars": [{"name": "l", "channels": 256, "points_per_second": 256, "range_m": 2000,
                        "rotations_per_second": 100, "vertical_fov_upper_deg": 90, "vertical_fov_lower_deg": -90,
                        "horizontal_fov_start_deg": 0, "horizontal_fov_end_deg": 360, "range_noise_m": 10}]}"#,
    )
    .expect("edges");
    let long = |n: usize| format!(r#"{{"cameras": [{{"name": "{}"}}]}}"#, "n".repeat(n));
    with_sensors(&long(64)).expect("64 bytes");
    let e = with_sensors(&long(65)).expect_err("65 bytes");
    assert!(e.contains("must be 1 to 64 bytes"), "{e}");
    let sixteen: Vec<String> = (0..16).map(|i| format!(r#"{{"name": "c{i}"}}"#)).collect();
    with_sensors(&format!(r#"{{"cameras": [{}]}}"#, sixteen.join(","))).expect("sixteen");
}

#[test]
fn a_degenerate_scene_is_refused_at_load_by_key() {
    let e = load(
        r#"{"vehicles": [{"kind": "multirotor"}],
            "scene": {"objects": [{"name": "a", "shape": {"cylinder": {"radius_m": 1, "height_m": 0}},
                                   "position_ned_m": [0, 0, 0]}]}}"#,
    )
    .expect_err("flat cylinder");
    assert!(
        e.contains("scene: objects[0].shape.cylinder.height_m: 0 is outside 0.001..=10000 m"),
        "{e}"
    );
}

#[test]
fn a_mounted_camera_sits_and_looks_where_its_mount_puts_it() {
    let cam = CameraSpec::new(
        "c",
        Mount {
            x_m: 0.3,
            y_m: -0.1,
            z_m: 0.05,
            pitch_deg: -30.0,
            ..Mount::default()
        },
    );
    // A body 10 m up facing east.
    let q = UnitQuaternion::from_euler_angles(0.0, 0.0, std::f64::consts::FRAC_PI_2);
    let pose = cam.pose(&Vector3::new(1.0, 2.0, -10.0), &q);
    // Forward is east, right is south.
    assert!((pose.position_ned_m - Vector3::new(1.1, 2.3, -9.95)).norm() < 1e-12);
    // The optical axis: east, 30° down.
    let axis = pose.attitude * Vector3::x();
    let want = Vector3::new(0.0, 30f64.to_radians().cos(), 30f64.to_radians().sin());
    assert!((axis - want).norm() < 1e-12, "{axis}");
    let k = cam.intrinsics();
    assert_eq!((k.width, k.height), (256, 144));
    assert!((k.fx - 128.0).abs() < 1e-9);
    // AirSim's five, with a 0.12 m stereo baseline and a downward camera.
    let five = CameraSpec::airsim_defaults();
    let names: Vec<&str> = five.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "front_center",
            "front_right",
            "front_left",
            "bottom_center",
            "back_center"
        ]
    );
    assert!((five[1].mount.y_m - five[2].mount.y_m - 0.12).abs() < 1e-12);
    let xz: Vec<(f64, f64)> = five.iter().map(|c| (c.mount.x_m, c.mount.z_m)).collect();
    assert_eq!(
        xz,
        [
            (0.25, 0.0),
            (0.25, 0.0),
            (0.25, 0.0),
            (0.0, 0.1),
            (-0.25, 0.0)
        ]
    );
    assert_eq!(five[3].mount.pitch_deg, -90.0);
    assert_eq!(five[4].mount.yaw_deg, 180.0);
    assert!(five.iter().all(|c| c.problem().is_none()));
}

#[test]
fn the_loop_fires_the_lidar_each_tick_from_the_vehicles_pose_the_same_on_two_threads() {
    let run = |threads: usize| {
        let s = with_sensors(
            r#"{"lidars": [{"name": "l", "points_per_second": 16000, "range_noise_m": 0.01,
                            "data_frame": "VehicleInertialFrame", "mount": {"z_m": -0.1}}]}"#,
        )
        .expect("scenario");
        let src = ScenarioSource {
            name: "v.json".into(),
            base_dir: ".".into(),
        };
        let mut ls = s.build(&src).expect("build");
        ls.set_threads(threads).expect("threads");
        for _ in 0..50 {
            ls.tick(&mut ()).expect("tick");
        }
        let mut points = Vec::new();
        ls.sim_mut()
            .lidar_mut(0, 0)
            .expect("lidar")
            .take(&mut points);
        assert!(ls.sim_mut().lidar_mut(0, 1).is_none());
        assert!(ls.sim_mut().lidar_mut(1, 0).is_none());
        let v = &ls.sim().vehicles()[0];
        let body = v.body().state.pos_ned_m;
        // The LiDAR's pose at its last firing: 0.1 m above the centre of
        // mass; the vehicle's start on the ground below where it began.
        let pose = v.lidars()[0].pose().expect("fired");
        assert!((pose.position_ned_m - body - Vector3::new(0.0, 0.0, -0.1)).norm() < 1e-12);
        assert_eq!(v.start_ned_m(), Vector3::new(3.0, -2.0, 0.0));
        assert_eq!(v.lidars()[0].spec().name, "l");
        assert!(v.cameras().is_empty());
        (points, body.z)
    };
    let (points, body_z) = run(1);
    // 50 ms: 50 firings of 16 lasers, all on the ground under the quad.
    assert_eq!(points.len(), 50 * 16);
    let h = 0.1 - body_z;
    let mut err2 = 0.0;
    for p in &points {
        // NED from the vehicle's start (3, −2) on the ground: the ground is
        // at down 0, within the noise.
        assert!(f64::from(p.xyz[2]).abs() < 0.06, "{:?}", p.xyz);
        let el = (-15.0 - 2.0 * f64::from(p.channel)).to_radians();
        let r_true = h / el.sin().abs();
        let r = (f64::from(p.xyz[0]).powi(2)
            + f64::from(p.xyz[1]).powi(2)
            + (f64::from(p.xyz[2]) + h).powi(2))
        .sqrt();
        err2 += (r - r_true).powi(2);
    }
    let sigma = (err2 / points.len() as f64).sqrt();
    assert!((sigma - 0.01).abs() < 0.002, "σ {sigma}");
    assert_eq!(run(2).0, points);
    // A spec's AirSim defaults.
    let l = LidarSpec::new("x");
    assert_eq!(
        (l.channels, l.points_per_second, l.range_m),
        (16, 100_000, 100.0)
    );
    assert_eq!(l.data_frame, LidarFrame::SensorLocalFrame);
    assert_eq!(
        (
            l.rotations_per_second,
            l.vertical_fov_upper_deg,
            l.vertical_fov_lower_deg,
            l.horizontal_fov_start_deg,
            l.horizontal_fov_end_deg
        ),
        (10.0, -15.0, -45.0, 0.0, 359.0)
    );
    // The same defaults when read from a scenario with the name alone.
    let read = with_sensors(r#"{"lidars": [{"name": "x"}]}"#).expect("lidar");
    assert_eq!(read.vehicles[0].sensors.lidars[0], l);
    let cam = with_sensors(r#"{"cameras": [{"name": "c"}]}"#).expect("camera");
    assert_eq!(
        cam.vehicles[0].sensors.cameras[0],
        CameraSpec::new("c", Mount::default())
    );
    assert!(l.problem().is_none());
}

#[test]
fn the_worlds_scene_is_built_from_the_scenario_and_can_be_changed() {
    let s = load(
        r#"{"vehicles": [{"kind": "multirotor", "sensors": {"cameras": [{"name": "c", "width": 8, "height": 6}]}}],
            "scene": {"objects": [{"name": "box", "shape": {"box": {"size_m": [1, 1, 1]}},
                                   "position_ned_m": [5, 0, -0.5]}]}}"#,
    )
    .expect("scenario");
    let src = ScenarioSource {
        name: "v.json".into(),
        base_dir: ".".into(),
    };
    let mut sim = s.build_simulation(&src).expect("sim");
    assert_eq!(sim.vehicles()[0].cameras()[0].width, 8);
    let scene = sim.world().scene().expect("scene");
    assert_eq!(scene.object_named("box"), Some(0));
    assert_eq!(scene.generation(), 0);
    let q = UnitQuaternion::identity();
    assert!(sim
        .scene_mut()
        .expect("scene")
        .set_pose(0, &Vector3::new(9.0, 1.0, -0.5), &q));
    let (at, _) = sim.world().scene().expect("scene").pose(0).expect("pose");
    assert!((at - Vector3::new(9.0, 1.0, -0.5)).norm() < 1e-6);
    // A scenario without a scene has none.
    let bare = load(r#"{"vehicles": [{"kind": "multirotor"}]}"#).expect("bare");
    let mut sim = bare.build_simulation(&src).expect("sim");
    assert!(sim.world().scene().is_none());
    assert!(sim.scene_mut().is_none());
}
