//! Ground rovers in a scenario: friction zones under each wheel, standing
//! on the ground, and refused starting poses.

use mavsitl_core::time::SimTime;
use mavsitl_sim::scenario::{Scenario, ScenarioSource};
use mavsitl_sim::vehicle::VehicleModel;

/// A Jackal pulling away north at full command from the origin, with ice
/// (μ 0.05) east of the line `east_from`..`east_to`, m.
fn split_mu_start(east_from: f64, east_to: f64) -> f64 {
    let text = format!(
        r#"{{"environment": {{"zones": [{{"name": "ice", "ground_friction": 0.05,
          "shape": {{"box": {{"min_ned_m": [-10, {east_from}, -5], "max_ned_m": [50, {east_to}, 5]}}}}}}]}},
          "vehicles": [{{"name": "r", "kind": "rover", "airframe": "jackal",
          "controller": {{"kind": "passive", "controls": [1, 1]}}}}]}}"#
    );
    let (_, mut ls) = super::scenario(&text, &[]);
    ls.run_until(SimTime::from_secs(1), &mut ()).expect("runs");
    let v = &ls.sim().vehicles()[0];
    let s = &v.body().state;
    assert!(s.vel_ned_m_s.x > 0.5, "it drives: {:?}", s.vel_ned_m_s);
    // Each wheel (front left, front right, rear left, rear right) on the
    // ice or off it, as its own position says; together they carry the
    // weight.
    let VehicleModel::Rover(r) = v.model() else {
        panic!("a rover")
    };
    let wheels = r.wheels();
    let ice = |y: f64| (east_from..=east_to).contains(&(s.pos_ned_m.y + y));
    for (w, side) in wheels.iter().zip([-1.0, 1.0, -1.0, 1.0]) {
        let want = if ice(side * 0.1878) { 0.05 } else { 0.8 };
        assert_eq!(w.mu, want, "{east_from}..{east_to}");
    }
    let load: f64 = wheels.iter().map(|w| w.load_n).sum();
    assert!((load / (17.0 * 9.8) - 1.0).abs() < 0.01, "{load} N");
    s.att_ned_frd.euler_angles().2
}

/// Ice under one side's wheels only (the Jackal's track is 0.376 m): the
/// other side's grip turns it towards the ice as it pulls away, left
/// (west) for ice on the left, right for ice on the right; no turn on an
/// even surface.
#[test]
fn each_wheel_feels_the_friction_of_the_zone_it_stands_in() {
    let left = split_mu_start(-10.0, 0.0);
    let right = split_mu_start(0.0, 10.0);
    let even = split_mu_start(20.0, 30.0);
    assert!(left < -0.05, "ice on the left turns it left: {left} rad");
    assert!(right > 0.05, "ice on the right turns it right: {right} rad");
    assert!(even.abs() < 1e-9, "{even}");
}

/// A rover stands on its wheels: the CG at its height above the ground,
/// level, as built and after driving.
#[test]
fn a_rover_stands_on_the_ground() {
    let text = r#"{"home": {"lat_deg": 47.4, "lon_deg": 8.5, "alt_m": 488, "heading_deg": 10},
        "vehicles": [{"name": "r", "kind": "rover", "airframe": "f1tenth",
        "initial": {"yaw_deg": 30},
        "controller": {"kind": "passive", "controls": [0.5, 0, 0.4]}}]}"#;
    let (_, mut ls) = super::scenario(text, &[]);
    let h = 0.074;
    let start = ls.sim().vehicles()[0].body().state;
    assert_eq!(start.pos_ned_m.z, -h);
    // Heading the home's 10° and its own 30° from it.
    let yaw = start.att_ned_frd.euler_angles().2.to_degrees();
    assert!((yaw - 40.0).abs() < 1e-9, "{yaw}°");
    ls.run_until(SimTime::from_secs(3), &mut ()).expect("runs");
    let s = ls.sim().vehicles()[0].body().state;
    assert_eq!(s.pos_ned_m.z, -h);
    let (roll, pitch, _) = s.att_ned_frd.euler_angles();
    assert_eq!((roll, pitch, s.vel_ned_m_s.z), (0.0, 0.0, 0.0));
    assert!(s.vel_ned_m_s.xy().norm() > 1.0 && s.rate_frd_rad_s.z > 0.5);
    // At rest the accelerometer reads the ground's support, −g along body z.
    let truth = ls.sim().vehicles()[0].ground_truth();
    assert!(truth.specific_force_frd_m_s2.z < -9.7);
}

/// A rover in the air, or tilted, is refused naming the key; so are
/// overrides out of range (a zero wheelbase, a negative μ, steering over
/// 89°), and a rover airframe that is not one.
#[test]
fn a_rover_off_the_ground_or_out_of_range_is_refused() {
    let src = ScenarioSource {
        name: "s.json".into(),
        base_dir: ".".into(),
    };
    let refused = |vehicle: &str| {
        let text = format!(r#"{{"vehicles": [{{"name": "r", "kind": "rover", {vehicle}}}]}}"#);
        let e = Scenario::from_json(&text, &src)
            .and_then(|s| s.validate(&src).and_then(|()| s.build(&src).map(|_| ())))
            .expect_err(vehicle);
        e.to_string()
    };
    let e = refused(r#""initial": {"height_m": 0.5}"#);
    assert!(
        e.contains("vehicles[0].initial.height_m") && e.contains("ground"),
        "{e}"
    );
    let e = refused(r#""initial": {"pitch_deg": 3}"#);
    assert!(e.contains("vehicles[0].initial.pitch_deg"), "{e}");
    let e = refused(r#""overrides": {"wheelbase_m": 0}"#);
    assert!(
        e.contains("overrides.wheelbase_m") && e.contains("0.01"),
        "{e}"
    );
    let e = refused(r#""overrides": {"tyre_friction": -0.2}"#);
    assert!(
        e.contains("overrides.tyre_friction") && e.contains("0..=2"),
        "{e}"
    );
    let e = refused(r#""airframe": "f1tenth", "overrides": {"max_steer_deg": 90}"#);
    assert!(
        e.contains("overrides.max_steer_deg") && e.contains("89"),
        "{e}"
    );
    let e = refused(r#""airframe": "usv_twin""#);
    assert!(e.contains("jackal, f1tenth"), "{e}");
}

/// A Jackal driving north at full command on dry ground, with `faults`;
/// its yaw (rad) and speed (m/s) after 3 s, and its wheels' friction.
fn jackal_with(faults: &[&str]) -> (f64, f64, [f64; 4]) {
    let text = r#"{"vehicles": [{"name": "r", "kind": "rover", "airframe": "jackal",
        "controller": {"kind": "passive", "controls": [1, 1]}}]}"#;
    let (_, mut ls) = super::scenario(text, faults);
    ls.run_until(SimTime::from_secs(3), &mut ()).expect("runs");
    let v = &ls.sim().vehicles()[0];
    let s = v.body().state;
    let VehicleModel::Rover(r) = v.model() else {
        panic!("a rover")
    };
    let mu = r.wheels().map(|w| w.mu);
    (s.att_ned_frd.euler_angles().2, s.vel_ned_m_s.norm(), mu)
}

/// A wheel motor failing stops that side driving, so the rover veers
/// towards it (left for the left motor, right for the right); a tyre grip
/// fault scales the friction under the wheels it names, all by default.
#[test]
fn wheel_motor_and_tyre_grip_faults_act_on_their_side_and_wheels() {
    let (yaw, speed, mu) = jackal_with(&[]);
    assert!(yaw.abs() < 1e-9 && speed > 1.9, "{yaw} rad, {speed} m/s");
    assert_eq!(mu, [0.8; 4]);
    let (left, _, _) = jackal_with(&["wheel_motor_failure@1s:motor=0"]);
    let (right, _, _) = jackal_with(&["wheel_motor_failure@1s:motor=1,torque_scale=0.2"]);
    assert!(left < -0.1, "the left motor dead turns it left: {left} rad");
    assert!(
        right > 0.1,
        "the right motor weak turns it right: {right} rad"
    );
    let (yaw, slow, mu) = jackal_with(&["tyre_grip@0s:grip_scale=0.05"]);
    // μ 0.04 everywhere: at most 0.04·g of acceleration for 3 s.
    assert_eq!(mu, [0.8 * 0.05; 4]);
    assert!(
        slow < 0.04 * 9.81 * 3.0 && slow > 0.5 && yaw.abs() < 1e-9,
        "{slow} m/s"
    );
    let (_, _, mu) = jackal_with(&["tyre_grip@0s+2s:wheel=3,grip_scale=0.5"]);
    assert_eq!(mu, [0.8; 4], "restored after 2 s");
    let (_, _, mu) = jackal_with(&["tyre_grip@2s:wheel=3,grip_scale=0.5"]);
    assert_eq!(mu, [0.8, 0.8, 0.8, 0.4]);
}

/// Faults a vehicle cannot have are refused naming the fault and why: a
/// second motor of a car with one, tyres on a boat, rotors on a rover.
#[test]
fn faults_a_rover_cannot_have_are_refused() {
    let src = ScenarioSource {
        name: "s.json".into(),
        base_dir: ".".into(),
    };
    let refused = |kind: &str, airframe: &str, fault: &str| {
        let text = format!(
            r#"{{"vehicles": [{{"name": "v", "kind": "{kind}", "airframe": "{airframe}"}}]}}"#
        );
        let mut s = Scenario::from_json(&text, &src).expect("parses");
        s.faults = vec![mavsitl_core::faults::parse_fault_arg(fault).expect("a fault")];
        s.validate(&src).expect_err(fault).to_string()
    };
    let e = refused("rover", "f1tenth", "wheel_motor_failure@1s:motor=1");
    assert!(
        e.contains("1 is not a wheel motor of 'v': it has 1, motors 0..=0"),
        "{e}"
    );
    let e = refused("boat", "usv_twin", "tyre_grip@1s:grip_scale=0.5");
    assert!(
        e.contains("'v' is a boat: it has neither wheel motors nor tyres"),
        "{e}"
    );
    let e = refused("multirotor", "generic_quad", "wheel_motor_failure@1s");
    assert!(e.contains("'v' is a multirotor: it has neither"), "{e}");
    let e = refused("rover", "jackal", "motor_failure@1s:motor=0");
    assert!(
        e.contains("'v' is a rover: it has wheel motors (wheel_motor_failure)"),
        "{e}"
    );
}

/// The F1TENTH car turning right, recorded with ISO 8855's vehicle axes
/// over either world (`iso8855`, `enu`): its CG 0.074 m up and its yaw
/// rate the negative of FRD's (z up).
#[test]
fn a_rover_records_in_iso_8855_vehicle_axes() {
    use mavsitl_core::geo::ExportFrame;
    use mavsitl_sim::record::Recorder;
    let text = r#"{"vehicles": [{"name": "car", "kind": "rover", "airframe": "f1tenth",
        "controller": {"kind": "passive", "controls": [0.5, 0, 0.3]}}]}"#;
    for frame in [ExportFrame::Iso8855, ExportFrame::Enu] {
        let tmp = tempfile::tempdir().expect("tmp");
        let (scenario, mut ls) = super::scenario(text, &[]);
        let rate = ls.sim().rate().divider(100).expect("rate");
        let mut rec =
            Recorder::create(tmp.path(), &scenario, ls.sim(), frame, rate).expect("recorder");
        ls.run_until(SimTime::from_secs(3), &mut rec).expect("runs");
        rec.finish(ls.sim(), true).expect("finished");
        let truth = std::fs::read_to_string(tmp.path().join("ground_truth.csv")).expect("truth");
        let last: Vec<f64> = truth
            .lines()
            .last()
            .expect("rows")
            .split(',')
            .map(|x| x.trim().parse().expect("a number"))
            .collect();
        let r_frd = ls.sim().vehicles()[0].body().state.rate_frd_rad_s.z;
        assert!(r_frd > 0.5, "turning right: {r_frd}");
        assert!((last[3] - 0.074).abs() < 1e-12, "{frame:?}: z {}", last[3]);
        assert!(
            (last[13] + r_frd).abs() < 1e-9,
            "{frame:?}: yaw rate {}",
            last[13]
        );
    }
}
