//! The EuRoC-style data set of a recording with cameras and a LiDAR, read
//! back: the layout, every frame's time on the IMU's clock, a depth image
//! and a LiDAR sweep against the falling quad's true height, and the
//! calibration against the mounts, in NED and ENU.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use mavsitl_core::geo::ExportFrame;
use mavsitl_sim::record::Recorder;
use mavsitl_sim::scenario::Scenario;
use mavsitl_sim::sim::Lockstep;

/// A quad falling from 10 m with its rotors stopped, with a stereo pair,
/// a camera looking down from 0.1 m below its centre of mass, an IMU
/// 0.05 m ahead of it, and a LiDAR at the centre of mass.
const FALLING: &str = r#"{"seed": 5, "scene": {},
  "record": {"ground_truth_rate_hz": 1000, "camera_rate_hz": 20,
             "images": ["scene", "depth", "segmentation"]},
  "vehicles": [{"name": "q", "kind": "multirotor", "initial": {"height_m": 10},
    "controller": {"kind": "passive", "controls": [0, 0, 0, 0]},
    "sensors": {
      "imu": {"rate_hz": 200, "mount": {"x_m": 0.05}},
      "cameras": [
        {"name": "left", "width": 33, "height": 25, "mount": {"x_m": 0.25, "y_m": -0.06}},
        {"name": "right", "width": 33, "height": 25, "mount": {"x_m": 0.25, "y_m": 0.06}},
        {"name": "down", "width": 33, "height": 25, "mount": {"z_m": 0.1, "pitch_deg": -90}}],
      "lidars": [{"name": "spin", "points_per_second": 32000}]}}]}"#;

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A CSV's rows after its header, split at commas.
fn rows(path: &Path) -> Vec<Vec<String>> {
    read(path)
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|f| f.trim().to_string()).collect())
        .collect()
}

/// Records `ticks` physics ticks of `text` into `dir`, exported in `frame`.
fn record(text: &str, dir: &Path, frame: ExportFrame, ticks: usize) -> (Scenario, Lockstep) {
    let (scenario, mut ls) = crate::scenario(text, &[]);
    let rate = ls.sim().rate().divider(1000).expect("rate");
    let mut rec = Recorder::create(dir, &scenario, ls.sim(), frame, rate).expect("recorder");
    for _ in 0..ticks {
        ls.tick(&mut rec).expect("tick");
    }
    rec.finish(ls.sim(), true).expect("finish");
    (scenario, ls)
}

/// A PNG's size, bit depth and samples (16-bit ones big-endian pairs).
fn png(path: &Path) -> (u32, u32, png::ColorType, png::BitDepth, Vec<u8>) {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut d = png::Decoder::new(std::io::BufReader::new(file));
    d.set_transformations(png::Transformations::IDENTITY);
    let mut r = d.read_info().expect("png header");
    let mut buf = vec![0; r.output_buffer_size()];
    let info = r.next_frame(&mut buf).expect("png frame");
    buf.truncate(info.buffer_size());
    (
        info.width,
        info.height,
        info.color_type,
        info.bit_depth,
        buf,
    )
}

/// The quad's true height above the ground (m) at each ground-truth row, by time (ns).
fn heights(dir: &Path) -> BTreeMap<u64, f64> {
    rows(&dir.join("ground_truth.csv"))
        .iter()
        .map(|r| (r[0].parse().unwrap(), -r[3].parse::<f64>().unwrap()))
        .collect()
}

/// A PCD file's points: x, y, z, t, ring, label.
fn pcd(path: &Path) -> Vec<([f32; 4], u16, u8)> {
    let bytes = std::fs::read(path).expect("pcd");
    let end = bytes
        .windows(12)
        .position(|w| w == b"DATA binary\n")
        .expect("a binary PCD")
        + 12;
    let header = std::str::from_utf8(&bytes[..end]).expect("header");
    assert!(header.contains("FIELDS x y z t ring label\nSIZE 4 4 4 4 2 1\nTYPE F F F F U U\n"));
    let n: usize = header
        .lines()
        .find_map(|l| l.strip_prefix("POINTS "))
        .expect("POINTS")
        .parse()
        .expect("count");
    let data = &bytes[end..];
    assert_eq!(data.len(), n * 19, "{}", path.display());
    data.chunks(19)
        .map(|c| {
            let f = |i: usize| f32::from_le_bytes(c[4 * i..4 * i + 4].try_into().unwrap());
            (
                [f(0), f(1), f(2), f(3)],
                u16::from_le_bytes([c[16], c[17]]),
                c[18],
            )
        })
        .collect()
}

/// The `T_BS` of a `sensor.yaml`, row-major.
fn t_bs(yaml: &str) -> [f64; 16] {
    let start = yaml.find("data: [").expect("T_BS data") + 7;
    let end = start + yaml[start..].find(']').expect("]");
    let v: Vec<f64> = yaml[start..end]
        .split(',')
        .map(|x| x.trim().parse().expect("number"))
        .collect();
    v.try_into().expect("16 values")
}

fn close(a: &[f64], b: &[f64]) -> bool {
    a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9)
}

#[test]
fn frames_and_sweeps_are_stamped_on_the_imus_clock_and_match_the_true_height() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    record(FALLING, dir, ExportFrame::Ned, 500);
    let mav0 = dir.join("mav0");

    // The IMU's rows are `imu.csv`'s, under EuRoC's name: the same file.
    assert_eq!(
        read(&mav0.join("imu0/data.csv")),
        read(&dir.join("imu.csv"))
    );
    {
        use std::os::unix::fs::MetadataExt;
        let inode = |p: &Path| std::fs::metadata(p).expect("metadata").ino();
        assert_eq!(
            inode(&mav0.join("imu0/data.csv")),
            inode(&dir.join("imu.csv"))
        );
    }
    // 100 samples 5 ms apart: 200 a second, in both calibrations.
    assert!(read(&dir.join("imu.yaml")).contains("\nupdate_rate: 200\n"));
    let imu0 = read(&mav0.join("imu0/sensor.yaml"));
    assert!(imu0.contains("\nrate_hz: 200\n"));
    // EuRoC's IMU file carries Kalibr's four noise figures, the same.
    let kalibr = read(&dir.join("imu.yaml"));
    for key in [
        "gyroscope_noise_density",
        "gyroscope_random_walk",
        "accelerometer_noise_density",
        "accelerometer_random_walk",
    ] {
        let line = kalibr.lines().find(|l| l.starts_with(key)).expect(key);
        assert!(imu0.lines().any(|l| l == line), "{line} in {imu0}");
    }
    // meta.json lists the data set's files.
    let meta: serde_json::Value =
        serde_json::from_str(&read(&dir.join("meta.json"))).expect("meta");
    let files: Vec<&str> = meta["files"]
        .as_array()
        .expect("files")
        .iter()
        .filter_map(|f| f.as_str())
        .collect();
    for f in [
        "mav0/imu0/data.csv",
        "mav0/imu0/sensor.yaml",
        "camchain-imucam.yaml",
        "imu.yaml",
        "mav0/cam0/data.csv",
        "mav0/seg2/sensor.yaml",
        "mav0/lidar0/data.csv",
        "mav0/lidar0/sensor.yaml",
    ] {
        assert!(files.contains(&f), "{f} in {files:?}");
    }
    let imu: HashSet<u64> = rows(&mav0.join("imu0/data.csv"))
        .iter()
        .map(|r| r[0].parse().unwrap())
        .collect();
    assert_eq!(imu.len(), 100);

    frames_match(dir, &imu);
    sweeps_match(dir);
}

/// The three cameras' images: 10 frames at 20 Hz in 0.5 s of each, at IMU
/// samples' times, of their size and kind; the down camera's depth the
/// true height less its mount.
fn frames_match(dir: &Path, imu: &HashSet<u64>) {
    let mav0 = dir.join("mav0");
    // Three cameras, three images each: 10 frames at 20 Hz in 0.5 s, every
    // one at the time of an IMU sample, each file its size and kind.
    let h = heights(dir);
    for (n, folder) in ["cam", "depth", "seg"].iter().enumerate() {
        for cam in 0..3 {
            let d = mav0.join(format!("{folder}{cam}"));
            let index = rows(&d.join("data.csv"));
            let stamps: Vec<u64> = index.iter().map(|r| r[0].parse().unwrap()).collect();
            let want: Vec<u64> = (1..=10).map(|k| k * 50_000_000).collect();
            assert_eq!(stamps, want, "{folder}{cam}");
            assert!(stamps.iter().all(|t| imu.contains(t)));
            for r in &index {
                assert_eq!(r[1], format!("{}.png", r[0]));
                let (w, hh, colour, depth, px) = png(&d.join("data").join(&r[1]));
                assert_eq!((w, hh), (33, 25));
                let kind = [
                    (png::ColorType::Rgb, png::BitDepth::Eight),
                    (png::ColorType::Grayscale, png::BitDepth::Sixteen),
                    (png::ColorType::Grayscale, png::BitDepth::Eight),
                ];
                assert_eq!((colour, depth), kind[n]);
                if *folder == "depth" && cam == 2 {
                    // The centre pixel looks straight down from 0.1 m below
                    // the centre of mass: the true height less 0.1 m, in mm.
                    let t: u64 = r[0].parse().unwrap();
                    let centre = 2 * (12 * 33 + 16);
                    let mm = u16::from_be_bytes([px[centre], px[centre + 1]]);
                    let want = (h[&t] - 0.1) * 1000.0;
                    assert!(
                        (f64::from(mm) - want).abs() <= 0.5,
                        "{mm} mm, {want} at {t}"
                    );
                }
                if *folder == "seg" && cam == 2 {
                    // The ground's id under the whole image.
                    assert!(px.iter().all(|&id| id == px[0]));
                }
            }
            let yaml = read(&d.join("sensor.yaml"));
            assert!(yaml.contains("rate_hz: 20\n"), "{yaml}");
            assert!(yaml.contains("resolution: [33, 25]\n"));
            // fx = (33 / 2) / tan 45°; the principal point half a pixel
            // before the centre (OpenCV's pixel centres).
            assert!(
                yaml.contains("intrinsics: [16.5, 16.5, 16, 12] #fu, fv, cu, cv\n"),
                "{yaml}"
            );
        }
    }
    assert!(!mav0.join("cam3").exists());
}

/// The LiDAR's sweeps against the true height.
fn sweeps_match(dir: &Path) {
    let mav0 = dir.join("mav0");
    let h = heights(dir);
    // The LiDAR: one file per 0.1 s turn, named by its start; each point's
    // t since then, its range the height of the firing's tick over
    // sin(elevation) (lasers from −15° down to −45° in 2° steps).
    let index = rows(&mav0.join("lidar0/data.csv"));
    let starts: Vec<u64> = index.iter().map(|r| r[0].parse().unwrap()).collect();
    assert_eq!(
        starts,
        [0, 100_000_000, 200_000_000, 300_000_000, 400_000_000]
    );
    let mut total = 0;
    for r in &index {
        let pts = pcd(&mav0.join("lidar0/data").join(&r[1]));
        assert_eq!(pts.len().to_string(), r[2]);
        total += pts.len();
        let start: u64 = r[0].parse().unwrap();
        for (p, ring, _) in &pts {
            let t = p[3];
            assert!((0.0..0.1).contains(&t), "t {t}");
            // Fired on a whole µs (t is a float of 24 bits: to a few ns);
            // cast at the end of the first tick that ends after it.
            let fired_us = start / 1000 + (f64::from(t) * 1e6).round() as u64;
            let tick_ns = (fired_us / 1000 + 1) * 1_000_000;
            let el = (15.0 + 2.0 * f64::from(*ring)).to_radians();
            let range = p[..3]
                .iter()
                .map(|c| f64::from(*c).powi(2))
                .sum::<f64>()
                .sqrt();
            let want = h[&tick_ns] / el.sin();
            assert!((range - want).abs() < 2e-5 * want, "{range} m, {want} m");
        }
    }
    // 2 000 firings a second of 16 lasers, all on the ground, every one
    // written: the last turn's half when the run ended.
    assert_eq!(total, 500 * 2 * 16);
    let yaml = read(&mav0.join("lidar0/sensor.yaml"));
    assert!(
        yaml.contains("rate_hz: 10\n") && yaml.contains("points_written: 16000\n"),
        "{yaml}"
    );
    assert!(yaml.contains("data_frame: sensor\n"));
}

#[test]
fn the_calibration_gives_each_sensor_from_the_imu_in_the_exported_axes() {
    let tmp = tempfile::tempdir().unwrap();
    let ned = tmp.path().join("ned");
    let enu = tmp.path().join("enu");
    record(FALLING, &ned, ExportFrame::Ned, 2);
    record(FALLING, &enu, ExportFrame::Enu, 2);
    let tbs = |dir: &Path, s: &str| t_bs(&read(&dir.join("mav0").join(s).join("sensor.yaml")));
    // The left camera, 0.25 m ahead and 0.06 m left of the centre of mass,
    // 0.2 m ahead of the IMU; its optical axes x right, y down, z forward.
    #[rustfmt::skip]
    let left_ned = [
        0.0, 0.0, 1.0, 0.2,
        1.0, 0.0, 0.0, -0.06,
        0.0, 1.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 1.0,
    ];
    assert!(
        close(&tbs(&ned, "cam0"), &left_ned),
        "{:?}",
        tbs(&ned, "cam0")
    );
    // In FLU the IMU's y and z turn round: left is +y, down is −z.
    #[rustfmt::skip]
    let left_enu = [
        0.0, 0.0, 1.0, 0.2,
        -1.0, 0.0, 0.0, 0.06,
        0.0, -1.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 1.0,
    ];
    assert!(
        close(&tbs(&enu, "cam0"), &left_enu),
        "{:?}",
        tbs(&enu, "cam0")
    );
    assert_eq!(tbs(&ned, "cam0"), tbs(&ned, "depth0"));
    // The camera looking down: optical z is the body's down, x still right.
    #[rustfmt::skip]
    let down_ned = [
        0.0, -1.0, 0.0, -0.05,
        1.0, 0.0, 0.0, 0.0,
        0.0, 0.0, 1.0, 0.1,
        0.0, 0.0, 0.0, 1.0,
    ];
    assert!(
        close(&tbs(&ned, "cam2"), &down_ned),
        "{:?}",
        tbs(&ned, "cam2")
    );
    // The LiDAR at the centre of mass, unturned, 0.05 m behind the IMU,
    // its axes the IMU's in either export.
    #[rustfmt::skip]
    let lidar = [
        1.0, 0.0, 0.0, -0.05,
        0.0, 1.0, 0.0, 0.0,
        0.0, 0.0, 1.0, 0.0,
        0.0, 0.0, 0.0, 1.0,
    ];
    assert!(close(&tbs(&ned, "lidar0"), &lidar));
    assert!(close(&tbs(&enu, "lidar0"), &lidar));
    // Its points in its own axes, FLU in ENU: y and z turned round.
    let sweep = |dir: &Path| pcd(&dir.join("mav0/lidar0/data/0.pcd"));
    let (a, b) = (sweep(&ned), sweep(&enu));
    assert_eq!(a.len(), 4 * 16);
    for (p, q) in a.iter().zip(&b) {
        assert_eq!([q.0[0], q.0[1], q.0[2]], [p.0[0], -p.0[1], -p.0[2]]);
        assert!(p.0[2] > 0.0, "below the sensor: {:?}", p.0);
    }
    assert!(close(
        &tbs(&ned, "imu0")[..],
        &[1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1.]
    ));

    // Kalibr's chain: T_cam_imu is T_BS's inverse, and the right camera
    // from the left one is the 0.12 m baseline along optical −x.
    let chain = read(&ned.join("camchain-imucam.yaml"));
    assert!(
        chain.starts_with(
            "cam0:\n  T_cam_imu:\n  - [0.000000000, 1.000000000, 0.000000000, 0.060000000]\n"
        ),
        "{chain}"
    );
    let cam1 = &chain[chain.find("cam1:").expect("cam1")..];
    assert!(
        cam1.contains("  T_cn_cnm1:\n  - [1.000000000, 0.000000000, 0.000000000, -0.120000000]\n"),
        "{cam1}"
    );
    assert!(chain.contains(
        "  intrinsics: [16.5, 16.5, 16, 12]\n  resolution: [33, 25]\n  rostopic: /cam2/image_raw\n"
    ));
    // The IMU's noise: AirSim's defaults as densities, the biases'
    // random walks σ·√(2/τ).
    let imu = read(&ned.join("imu.yaml"));
    let value = |k: &str| -> f64 {
        imu.lines()
            .find_map(|l| l.strip_prefix(&format!("{k}: ")))
            .unwrap_or_else(|| panic!("{k} in {imu}"))
            .parse()
            .unwrap()
    };
    assert!((value("gyroscope_noise_density") - 0.3f64.to_radians() / 60.0).abs() < 1e-12);
    assert!((value("accelerometer_noise_density") - 0.24e-3 * 9.806_65).abs() < 1e-12);
    let gyro_walk = 4.6f64.to_radians() / 3600.0 * (2.0f64 / 500.0).sqrt();
    assert!((value("gyroscope_random_walk") - gyro_walk).abs() < 1e-15);
    let accel_walk = 36e-6 * 9.806_65 * (2.0f64 / 800.0).sqrt();
    assert!((value("accelerometer_random_walk") - accel_walk).abs() < 1e-15);
    // Two ticks gave no two IMU samples: the scenario's rate.
    assert_eq!(value("update_rate"), 200.0);
}

#[test]
fn a_recorded_camera_no_vehicle_has_is_refused_by_key() {
    let tmp = tempfile::tempdir().unwrap();
    let text = FALLING.replace(
        r#""camera_rate_hz": 20,"#,
        r#""camera_rate_hz": 20, "cameras": ["left", "middle"],"#,
    );
    let (scenario, ls) = crate::scenario(&text, &[]);
    let rate = ls.sim().rate().divider(1000).expect("rate");
    let Err(e) = Recorder::create(tmp.path(), &scenario, ls.sim(), ExportFrame::Ned, rate) else {
        panic!("a camera no vehicle has was accepted");
    };
    assert_eq!(
        e.to_string(),
        "record.cameras[1]: no camera \"middle\" on any vehicle (the cameras: left, right, down)"
    );
    // Named ones only, in the order named; with no camera rate, none.
    let only = FALLING.replace(
        r#""camera_rate_hz": 20,"#,
        r#""camera_rate_hz": 20, "cameras": ["down", "left"],"#,
    );
    record(&only, &tmp.path().join("one"), ExportFrame::Ned, 50);
    let mav0 = tmp.path().join("one/mav0");
    assert_eq!(rows(&mav0.join("cam0/data.csv")).len(), 1);
    let comment = |c: &str| {
        read(&mav0.join(c).join("sensor.yaml"))
            .lines()
            .nth(1)
            .map(String::from)
    };
    assert_eq!(
        comment("cam0").as_deref(),
        Some("comment: \"mavsitl camera down, 8-bit RGB\"")
    );
    assert_eq!(
        comment("cam1").as_deref(),
        Some("comment: \"mavsitl camera left, 8-bit RGB\"")
    );
    assert!(!mav0.join("cam2").exists());
    let none = FALLING.replace(r#""camera_rate_hz": 20,"#, r#""camera_rate_hz": 0,"#);
    record(&none, &tmp.path().join("none"), ExportFrame::Ned, 50);
    assert!(!tmp.path().join("none/mav0/cam0").exists());
    assert!(tmp.path().join("none/mav0/lidar0/data.csv").exists());
    // The scenario's own checks: a rate that does not divide the physics
    // rate, an image named twice, a camera name too long.
    let bad = |from: &str, to: &str| {
        let src = mavsitl_sim::scenario::ScenarioSource {
            name: "s.json".into(),
            base_dir: ".".into(),
        };
        Scenario::from_json(&FALLING.replace(from, to), &src)
            .and_then(|s| s.validate(&src))
            .expect_err("invalid")
            .to_string()
    };
    let e = bad(r#""camera_rate_hz": 20"#, r#""camera_rate_hz": 7"#);
    assert!(e.contains("record.camera_rate_hz"), "{e}");
    let e = bad(r#""depth", "segmentation""#, r#""depth", "depth""#);
    assert!(e.contains("record.images[2]: is named twice"), "{e}");
    let long = "x".repeat(65);
    let e = bad(
        r#""camera_rate_hz": 20,"#,
        &format!(r#""camera_rate_hz": 20, "cameras": ["{long}"],"#),
    );
    assert!(e.contains("record.cameras[0]"), "{e}");
}
