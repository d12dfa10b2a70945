//! The recorder's files, read back: where each vehicle's files go, what
//! `meta.json` says before and after the run, and what is on disk while
//! the run is still going (rows each simulated second, zone and fault
//! events as they happen).

use std::path::Path;

use mavsitl_core::geo::ExportFrame;
use mavsitl_core::time::SimTime;
use mavsitl_sim::record::{ground_truth_header, Recorder};
use mavsitl_sim::scenario::Scenario;
use mavsitl_sim::sim::Lockstep;

/// Two quads 3 m apart side by side, rotors at 60 %, flying north at 4 m/s
/// into a box zone from 2 m short of it.
const PAIR: &str = r#"{"seed": 11, "environment": {"zones": [{"name": "gusty",
  "shape": {"box": {"min_ned_m": [10, -5, -50], "max_ned_m": [20, 5, 0]}}, "drag_scale": 1.2}]},
  "vehicles": [
  {"name": "a", "kind": "multirotor", "initial": {"north_m": 8, "height_m": 10,
   "velocity_ned_m_s": [4, 0, 0], "rotor_commands": [0.6, 0.6, 0.6, 0.6]},
   "controller": {"kind": "passive", "controls": [0.6, 0.6, 0.6, 0.6]}},
  {"name": "b", "kind": "multirotor", "initial": {"north_m": 8, "east_m": 3, "height_m": 10,
   "velocity_ned_m_s": [4, 0, 0], "rotor_commands": [0.6, 0.6, 0.6, 0.6]},
   "controller": {"kind": "passive", "controls": [0.6, 0.6, 0.6, 0.6]}}]}"#;

const ONE: &str = r#"{"seed": 3, "vehicles": [{"name": "solo", "kind": "multirotor",
  "controller": {"kind": "passive", "controls": [0.0, 0.0, 0.0, 0.0]}}]}"#;

fn recorder(dir: &Path, scenario: &Scenario, ls: &Lockstep, frame: ExportFrame) -> Recorder {
    let rate = ls.sim().rate().divider(100).expect("rate");
    Recorder::create(dir, scenario, ls.sim(), frame, rate).expect("recorder")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn meta(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&read(&dir.join("meta.json"))).expect("meta.json")
}

/// The time stamps (s) of a CSV's rows.
fn stamps(text: &str) -> Vec<f64> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split(',').next().unwrap().parse::<u64>().unwrap() as f64 * 1e-9)
        .collect()
}

#[test]
fn several_vehicles_get_a_folder_each_and_the_run_its_events() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (scenario, mut ls) = crate::scenario(PAIR, &["gps_loss@1s+0.5s:vehicle=a"]);
    let mut rec = recorder(dir, &scenario, &ls, ExportFrame::Ned);

    // Written at once: each vehicle's folder and the run's description.
    let header = read(&dir.join("a/ground_truth.csv"));
    assert_eq!(header.lines().next(), Some(ground_truth_header()));
    assert!(ground_truth_header().starts_with("#timestamp [ns],"));
    assert!(dir.join("b/imu.csv").exists());
    let m = meta(dir);
    assert_eq!(m["seed"], 11);
    assert_eq!(m["completed"], serde_json::Value::Null);
    let files: Vec<&str> = m["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    for f in [
        "a/ground_truth.csv",
        "b/actuators.csv",
        "zone_events.csv",
        "encounters.csv",
    ] {
        assert!(files.contains(&f), "{f} in {files:?}");
    }
    let sensors = m["sensors"].as_array().unwrap();
    assert_eq!(sensors.len(), 2);
    assert_eq!(sensors[1]["vehicle"], "b");
    assert_eq!(sensors[0]["noise_streams"]["imu"]["seed"], 11);

    // 2.5 s in: rows are on disk to the last whole second, and the zone
    // entry (0.5 s) and the GPS loss (1 s) already written.
    ls.run_until(SimTime::from_secs_f64(2.5), &mut rec).unwrap();
    let rows = stamps(&read(&dir.join("a/ground_truth.csv")));
    let last = *rows.last().unwrap();
    assert!((2.0..2.01).contains(&last), "rows on disk to {last} s");
    let zones = read(&dir.join("zone_events.csv"));
    let zone_rows: Vec<&str> = zones.lines().skip(1).collect();
    assert_eq!(zone_rows.len(), 2, "{zones}");
    assert!(zone_rows[0].ends_with(",a,gusty,enter,"), "{zones}");
    assert!(zone_rows[1].ends_with(",b,gusty,enter,"), "{zones}");
    // 2 m at 4 m/s, slowed a little by drag.
    let at = stamps(&zones)[0];
    assert!((0.5..0.55).contains(&at), "entered at {at} s");
    let faults = read(&dir.join("fault_events.csv"));
    let fault_rows: Vec<&str> = faults.lines().skip(1).collect();
    assert_eq!(fault_rows.len(), 2, "{faults}");
    assert!(
        fault_rows[0].starts_with("1000000000,a,0,gps_loss,start,"),
        "{faults}"
    );
    assert!(
        fault_rows[1].starts_with("1500000000,a,0,gps_loss,end,"),
        "{faults}"
    );
    assert!(!dir.join("encounters.csv").exists());

    // The end: everything flushed, how it ended, a note and the pair's
    // encounter (3 m apart all along, in the 20 m default range).
    rec.note("stopped_by", serde_json::json!("test"));
    rec.finish(ls.sim(), true).unwrap();
    let rows = stamps(&read(&dir.join("b/ground_truth.csv")));
    assert_eq!(rows.len(), 251, "100 Hz from 0 to 2.5 s");
    // Each vehicle's own sensors, every sample: the IMU at 250 Hz.
    let (imu_a, imu_b) = (read(&dir.join("a/imu.csv")), read(&dir.join("b/imu.csv")));
    assert_eq!(stamps(&imu_a).len(), 625);
    assert_eq!(stamps(&imu_b).len(), 625);
    assert_ne!(imu_a, imu_b, "two vehicles, two noise streams");
    let gps = read(&dir.join("a/gps.csv"));
    assert!(gps
        .lines()
        .next()
        .unwrap()
        .contains(",v_N [m s^-1],v_E [m s^-1],v_D [m s^-1],"));
    let m = meta(dir);
    assert_eq!(m["completed"], true);
    assert_eq!(m["sim_time_end_s"], 2.5);
    assert_eq!(m["stopped_by"], "test");
    let enc = read(&dir.join("encounters.csv"));
    let mut lines = enc.lines();
    assert_eq!(
        lines.next(),
        Some("# proximity range 20 m; NED m; separation centre to centre")
    );
    let row: Vec<&str> = lines.nth(1).unwrap().split(',').collect();
    assert_eq!(&row[..4], ["a", "b", "1000000", ""]);
    let sep: f64 = row[5].parse().unwrap();
    assert!((sep - 3.0).abs() < 0.01, "{sep} m");
}

#[test]
fn a_single_vehicle_records_into_the_folder_itself() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (scenario, mut ls) = crate::scenario(ONE, &[]);
    let mut rec = recorder(dir, &scenario, &ls, ExportFrame::Iso8855);
    ls.run_until(SimTime::from_secs_f64(0.5), &mut rec).unwrap();
    rec.finish(ls.sim(), false).unwrap();
    assert!(dir.join("ground_truth.csv").exists());
    assert!(!dir.join("solo").exists());
    // ISO 8855's world axes: north, west, up.
    let gps = read(&dir.join("gps.csv"));
    assert!(gps
        .lines()
        .next()
        .unwrap()
        .contains(",v_N [m s^-1],v_W [m s^-1],v_U [m s^-1],"));
    assert!(!dir.join("encounters.csv").exists());
    let m = meta(dir);
    assert_eq!(m["completed"], false);
    assert_eq!(m["sensors"][0]["vehicle"], "solo");
    assert!(m["files"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| f != "encounters.csv"));
}
