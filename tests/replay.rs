//! Pose replay against an analytic trajectory: a level circle flown nose-first.
//!
//! r = 10 m, ω = 0.5 rad/s: an IMU on the body must read specific force
//! (0, ω²r, −g) = (0, 2.5, −9.80665) m/s² in FRD (centripetal towards the right
//! wing, gravity up) and body rates (0, 0, ω), whatever its sample rate.

use std::path::Path;
use std::process::Command;

const R: f64 = 10.0;
const W: f64 = 0.5;
const G: f64 = 9.80665;

fn write_circle(path: &Path, rate_hz: u64, secs: u64, airsim: bool) {
    let mut s = if airsim {
        String::from("timestamp,x,y,z,qx,qy,qz,qw\n")
    } else {
        String::from("#timestamp [ns],p_RS_R_x [m],p_RS_R_y [m],p_RS_R_z [m],q_RS_w [],q_RS_x [],q_RS_y [],q_RS_z []\n")
    };
    let t0: u64 = 1_700_000_000_000_000_000;
    for k in 0..=(rate_hz * secs) {
        let t_ns = k * 1_000_000_000 / rate_hz;
        let t = t_ns as f64 * 1e-9;
        let th = W * t;
        let yaw = th + std::f64::consts::FRAC_PI_2;
        let (qw, qz) = ((yaw / 2.0).cos(), (yaw / 2.0).sin());
        let (x, y) = (R * th.cos(), R * th.sin());
        if airsim {
            s.push_str(&format!("{},{x},{y},-10,0,0,{qz},{qw}\n", t0 + t_ns));
        } else {
            s.push_str(&format!("{},{x},{y},-10,{qw},0,0,{qz}\n", t0 + t_ns));
        }
    }
    std::fs::write(path, s).expect("write poses");
}

const QUIET: &str = r#"{"physics_rate_hz":1000,"vehicles":[{"kind":"multirotor","sensors":{
  "imu":{"rate_hz":200,"angular_random_walk_deg_sqrt_h":0,"gyro_bias_stability_deg_h":0,
         "velocity_random_walk_mg_sqrt_hz":0,"accel_bias_stability_ug":0,"gyro_range_deg_s":0,"accel_range_m_s2":0}}}]}"#;

fn replay(dir: &Path, poses: &Path, extra: &[&str]) -> std::process::Output {
    let scenario = dir.join("quiet.json");
    std::fs::write(&scenario, QUIET).expect("scenario");
    Command::new(env!("CARGO_BIN_EXE_mavsitl"))
        .arg("replay")
        .arg(poses)
        .arg("--scenario")
        .arg(&scenario)
        .args(extra)
        .output()
        .expect("run")
}

fn imu_rows(path: &Path) -> Vec<Vec<f64>> {
    std::fs::read_to_string(path)
        .expect("imu.csv")
        .lines()
        .skip(1)
        .map(|l| {
            l.split(',')
                .map(|x| x.trim().parse().expect("num"))
                .collect()
        })
        .collect()
}

fn check(dir: &Path, airsim: bool) {
    let poses = dir.join(if airsim { "airsim.csv" } else { "euroc.csv" });
    write_circle(&poses, 1000, 30, airsim);
    let out_dir = dir.join(if airsim { "rec_airsim" } else { "rec_euroc" });
    let out = replay(dir, &poses, &["--record", out_dir.to_str().expect("utf8")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows = imu_rows(&out_dir.join("imu.csv"));
    assert_eq!(rows.len(), 30 * 200, "200 Hz for 30 s");
    let mut checked = 0;
    for r in &rows {
        let t = r[0] * 1e-9;
        if !(2.0..=28.0).contains(&t) {
            continue; // the natural spline's free ends
        }
        let expect = [0.0, 0.0, W, 0.0, W * W * R, -G];
        for (i, e) in expect.iter().enumerate() {
            assert!(
                (r[i + 1] - e).abs() < 1e-6,
                "t {t}: column {} = {} vs {e}",
                i + 1,
                r[i + 1]
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 26 * 200 + 1);
    // The ground truth written next to it is the interpolated circle.
    let gt = std::fs::read_to_string(out_dir.join("ground_truth.csv")).expect("gt");
    let row: Vec<f64> = gt
        .lines()
        .nth(1 + 200 * 10)
        .expect("row at 10 s")
        .split(',')
        .map(|x| x.trim().parse().expect("num"))
        .collect();
    assert_eq!(row[0], 10e9);
    assert!(
        (row[1] - R * (W * 10.0).cos()).abs() < 1e-9
            && (row[2] - R * (W * 10.0).sin()).abs() < 1e-9
    );
    let speed = (row[8] * row[8] + row[9] * row[9]).sqrt();
    assert!((speed - W * R).abs() < 1e-6, "speed {speed}");
}

#[test]
fn circle_replayed_in_both_formats_gives_analytic_imu() {
    let tmp = tempfile::tempdir().expect("tmp");
    check(tmp.path(), false);
    check(tmp.path(), true);
}

#[test]
fn bad_trajectory_names_the_line() {
    let tmp = tempfile::tempdir().expect("tmp");
    let poses = tmp.path().join("bad.csv");
    std::fs::write(
        &poses,
        "#timestamp [ns],x,y,z,qw,qx,qy,qz\n0,0,0,0,1,0,0,0\n100,0,0,0,1,0,0,0\n50,0,0,0,1,0,0,0\n",
    )
    .expect("w");
    let out = replay(
        tmp.path(),
        &poses,
        &["--record", tmp.path().join("r").to_str().expect("utf8")],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with(&format!(
            "error: {}:4: timestamp 50 does not increase (previous 100)",
            poses.display()
        )),
        "{err}"
    );
}
