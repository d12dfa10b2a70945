//! Each fault kind changes its model as specified while active and reverts at
//! its end. Every test flies the same scenario twice with the same seed, once
//! without and once with the fault: the noise streams are identical, so the
//! difference between the two runs is the fault's effect alone.

use mavsitl_core::controller::{Actuators, ControllerError, FlightController, SensorFrame};
use mavsitl_core::faults::{parse_fault_arg, FaultSpec, LinkFaults};
use mavsitl_core::time::SimTime;
use mavsitl_sim::physics::multirotor::RotorOutput;
use mavsitl_sim::scenario::{Scenario, ScenarioSource};
use mavsitl_sim::sensors::{FixType, TickSamples};
use mavsitl_sim::sim::{Lockstep, Observer, Simulation};
use mavsitl_sim::vehicle::VehicleModel;
use nalgebra::Vector3;

/// A quad standing on the ground with its rotors at 30 %: still, but
/// spinning and drawing current.
const QUAD: &str = r#"{"seed": 7, "vehicles": [{"name": "quad", "kind": "multirotor",
  "controller": {"kind": "passive", "controls": [0.3, 0.3, 0.3, 0.3]}}]}"#;
const BOAT: &str = r#"{"seed": 7, "vehicles": [{"name": "boat", "kind": "boat",
  "controller": {"kind": "passive", "rate_hz": 50, "controls": [0.6, 0.6]}}]}"#;

/// What one tick left behind.
#[derive(Debug, Clone)]
struct Tick {
    time: SimTime,
    samples: TickSamples,
    voltage_v: f64,
    remaining: f64,
    wind_ned_m_s: Vector3<f64>,
    rotors: [RotorOutput; 8],
    thrusters_n: [f64; 2],
}

#[derive(Default)]
struct Trace(Vec<Tick>);

impl Observer for Trace {
    fn on_tick(&mut self, sim: &Simulation) -> std::io::Result<()> {
        let v = &sim.vehicles()[0];
        let mut rotors = [RotorOutput::default(); 8];
        let mut thrusters_n = [0.0; 2];
        match v.model() {
            VehicleModel::Multirotor(m) => m.rotor_outputs(1.225, &mut rotors),
            VehicleModel::Boat(b) => thrusters_n = b.thrust_n(),
            VehicleModel::Rover(_) => {}
        }
        self.0.push(Tick {
            time: sim.time(),
            samples: *v.samples(),
            voltage_v: v.battery().state().voltage_v,
            remaining: v.battery().state().remaining,
            wind_ned_m_s: v.environment().map(|e| e.wind_ned_m_s).unwrap_or_default(),
            rotors,
            thrusters_n,
        });
        Ok(())
    }
}

fn lockstep(text: &str, faults: &[FaultSpec]) -> Lockstep {
    let src = ScenarioSource {
        name: "faults".into(),
        base_dir: ".".into(),
    };
    let mut scenario = Scenario::from_json(text, &src).expect("scenario");
    scenario.faults = faults.to_vec();
    scenario.validate(&src).expect("valid faults");
    scenario.build(&src).expect("build")
}

/// (nominal, faulted) traces of `secs` seconds.
fn fly(text: &str, fault: &str, secs: u64) -> (Vec<Tick>, Vec<Tick>) {
    let run = |faults: &[FaultSpec]| {
        let mut ls = lockstep(text, faults);
        let mut t = Trace::default();
        ls.run_until(SimTime::from_secs(secs), &mut t).expect("run");
        assert_eq!(ls.sim().fault_events().is_empty(), faults.is_empty());
        t.0
    };
    let f = parse_fault_arg(fault).expect("fault");
    (run(&[]), run(&[f]))
}

fn secs(t: SimTime) -> f64 {
    t.as_secs_f64()
}

/// Whether a sample taken at the end of the tick ending at `t` (s) sees a
/// fault active from `start` to `end` (s): faults start and end on tick
/// boundaries, and a tick's samples are taken at its end.
fn active(t: f64, start: f64, end: f64) -> bool {
    t > start + 1e-7 && t < end + 1e-7
}

/// Pairs of (nominal, faulted) samples picked by `pick`, with the tick time.
fn pairs<T: Copy>(a: &[Tick], b: &[Tick], pick: impl Fn(&Tick) -> Option<T>) -> Vec<(f64, T, T)> {
    a.iter()
        .zip(b)
        .filter_map(|(x, y)| Some((secs(x.time), pick(x)?, pick(y)?)))
        .collect()
}

#[test]
fn gps_loss_gives_no_fix_for_its_duration_within_one_sample() {
    let (_, faulted) = fly(QUAD, "gps_loss@10s+30s", 50);
    let measured: Vec<(f64, bool)> = faulted
        .iter()
        .filter_map(|t| t.samples.gps)
        .map(|g| (secs(g.measured), g.fix == FixType::NoFix))
        .collect();
    // (After the receiver's start-up.)
    let lost: Vec<f64> = measured
        .iter()
        .filter(|(t, l)| *l && *t > 5.0)
        .map(|(t, _)| *t)
        .collect();
    let span = lost.last().unwrap() - lost.first().unwrap();
    assert!((span - 30.0).abs() <= 0.1 + 1e-9, "no fix for {span} s");
    assert!((lost[0] - 10.0).abs() <= 0.1, "lost at {}", lost[0]);
    let after: Vec<bool> = measured
        .iter()
        .filter(|(t, _)| *t > 40.5)
        .map(|(_, l)| *l)
        .collect();
    assert!(
        !after.is_empty() && after.iter().all(|l| !l),
        "the fix comes back"
    );
}

#[test]
fn gps_jamming_scales_the_noise_and_the_reported_accuracy() {
    let (a, b) = fly(QUAD, "gps_jamming@10s+10s:noise_scale=8", 30);
    let p = pairs(&a, &b, |t| t.samples.gps);
    let truth = |g: &mavsitl_sim::sensors::GpsSample| g.pos_ned_m - Vector3::new(0.0, 0.0, 0.0);
    let mut during = 0;
    for (_, n, f) in &p {
        let jammed = active(secs(n.measured), 10.0, 20.0);
        let k = if jammed { 8.0 } else { 1.0 };
        assert!(
            (f.eph_m - k * n.eph_m).abs() < 1e-9 && (f.epv_m - k * n.epv_m).abs() < 1e-9,
            "eph and epv at {}",
            secs(n.measured)
        );
        // The vehicle stands at the origin: the reported position is the error.
        let (en, ef) = (truth(n).xy(), truth(f).xy());
        if n.fix == FixType::Fix3d && en.norm() > 1e-3 {
            assert!(
                (ef - k * en).norm() < 1e-6 * (1.0 + ef.norm()),
                "error at {}",
                secs(n.measured)
            );
            during += jammed as usize;
        }
    }
    assert!(during > 90, "{during} jammed samples compared");
}

#[test]
fn gps_spoof_moves_the_position_at_its_rate_towards_its_bearing() {
    let (a, b) = fly(QUAD, "gps_spoof@5s+10s:rate_m_s=2,bearing_deg=90", 20);
    for (_, n, f) in pairs(&a, &b, |t| t.samples.gps) {
        let t = secs(n.measured);
        let (expected, drift) = if active(t, 5.0, 15.0) {
            (
                Vector3::new(0.0, 2.0 * (t - 5.0), 0.0),
                Vector3::new(0.0, 2.0, 0.0),
            )
        } else {
            (Vector3::zeros(), Vector3::zeros())
        };
        assert!(
            (f.pos_ned_m - n.pos_ned_m - expected).norm() < 1e-6,
            "at {t}"
        );
        // The reported velocity moves with the spoofed position.
        assert!(
            (f.vel_ned_m_s - n.vel_ned_m_s - drift).norm() < 1e-9,
            "velocity at {t}"
        );
        assert!(
            (f.eph_m - n.eph_m).abs() < 1e-12,
            "spoofing keeps the accuracy"
        );
    }
}

#[test]
fn imu_bias_step_adds_its_bias_and_reverts() {
    let (a, b) = fly(
        QUAD,
        "imu_bias_step@2s+3s:gyro_rad_s=[0.1,0,-0.05],accel_m_s2=[0,0.5,0]",
        6,
    );
    let mut seen = 0;
    for (t, n, f) in pairs(&a, &b, |t| t.samples.imu) {
        let on = active(t, 2.0, 5.0);
        let (g, acc) = if on {
            (Vector3::new(0.1, 0.0, -0.05), Vector3::new(0.0, 0.5, 0.0))
        } else {
            (Vector3::zeros(), Vector3::zeros())
        };
        // Within the quantisation step of the default IMU.
        assert!(
            (f.gyro_rad_s - n.gyro_rad_s - g).amax() < 2e-3,
            "gyro at {t}"
        );
        assert!(
            (f.accel_m_s2 - n.accel_m_s2 - acc).amax() < 2e-2,
            "accel at {t}"
        );
        seen += on as usize;
    }
    assert!(seen > 500);
}

#[test]
fn a_stuck_imu_repeats_its_last_output_then_recovers() {
    let (a, b) = fly(QUAD, "imu_stuck@2s+1s", 4);
    let p = pairs(&a, &b, |t| t.samples.imu);
    let before = p.iter().rev().find(|(t, _, _)| *t < 2.0 + 1e-7).unwrap().2;
    for (t, n, f) in &p {
        if active(*t, 2.0, 3.0) {
            assert_eq!(
                (f.gyro_rad_s, f.accel_m_s2),
                (before.gyro_rad_s, before.accel_m_s2)
            );
            assert_ne!(n.gyro_rad_s, before.gyro_rad_s, "the nominal IMU is noisy");
        } else {
            assert_eq!(n, f, "at {t}");
        }
    }
}

#[test]
fn imu_noise_scale_multiplies_the_white_noise() {
    let (a, b) = fly(QUAD, "imu_noise_scale@1s+10s:noise_scale=5", 12);
    let ls = lockstep(QUAD, &[]);
    let imu = ls.sim().vehicles()[0]
        .sensors()
        .imu()
        .unwrap()
        .params()
        .clone();
    let dt = 1.0 / imu.rate_hz as f64;
    let white = imu.gyro_noise_density() / dt.sqrt();
    let d: Vec<f64> = pairs(&a, &b, |t| t.samples.imu)
        .into_iter()
        .filter(|(t, _, _)| (1.5..10.5).contains(t))
        .map(|(_, n, f)| f.gyro_rad_s.x - n.gyro_rad_s.x)
        .collect();
    let sd = (d.iter().map(|x| x * x).sum::<f64>() / d.len() as f64).sqrt();
    // The difference is the extra (k − 1) × white noise.
    assert!(
        (sd / (4.0 * white) - 1.0).abs() < 0.05,
        "σ {sd} vs {}",
        4.0 * white
    );
}

#[test]
fn baro_drift_step_offsets_the_altitude_and_drifts() {
    let (a, b) = fly(QUAD, "baro_drift_step@2s+4s:offset_m=10,rate_m_s=0.5", 8);
    for (t, n, f) in pairs(&a, &b, |t| t.samples.baro) {
        let on = active(t, 2.0, 6.0);
        let expected = if on { 10.0 + 0.5 * (t - 2.0) } else { 0.0 };
        let d = f.pressure_altitude_m - n.pressure_altitude_m;
        assert!((d - expected).abs() < 0.02, "at {t}: {d} vs {expected}");
    }
}

#[test]
fn mag_interference_adds_its_field() {
    let (a, b) = fly(QUAD, "mag_interference@1s+2s:offset_gauss=[0.3,-0.1,0]", 4);
    for (t, n, f) in pairs(&a, &b, |t| t.samples.mag) {
        let on = active(t, 1.0, 3.0);
        let expected = if on {
            Vector3::new(0.3, -0.1, 0.0)
        } else {
            Vector3::zeros()
        };
        assert!(
            (f.field_gauss - n.field_gauss - expected).norm() < 1e-12,
            "at {t}"
        );
    }
}

#[test]
fn a_failed_motor_loses_its_thrust_and_recovers() {
    let (a, b) = fly(QUAD, "motor_failure@1s+2s:motor=2,thrust_scale=0.25", 5);
    let at = |trace: &[Tick], t: f64| trace.iter().find(|x| secs(x.time) >= t).unwrap().rotors;
    // Two seconds in, the motor has settled at a quarter of its thrust.
    let (n, f) = (at(&a, 2.9), at(&b, 2.9));
    assert!(
        (f[2].thrust_n / n[2].thrust_n - 0.25).abs() < 1e-3,
        "{} vs {}",
        f[2].thrust_n,
        n[2].thrust_n
    );
    for i in [0, 1, 3] {
        assert_eq!(f[i], n[i], "rotor {i} is untouched");
    }
    let (n, f) = (at(&a, 0.99), at(&b, 0.99));
    assert_eq!(f[2], n[2], "before the fault");
    // From the tick that starts at the fault's time.
    let first = first_difference(&a, &b, |t| t.rotors[2].speed_rad_s);
    assert_eq!(first, SimTime::from_micros(1_001_000));
    let (n, f) = (at(&a, 4.9), at(&b, 4.9));
    assert!(
        (f[2].thrust_n / n[2].thrust_n - 1.0).abs() < 1e-3,
        "after the fault"
    );
}

#[test]
fn a_failed_thruster_stops_pushing() {
    let (a, b) = fly(BOAT, "thruster_failure@1s:thruster=1", 4);
    let last = |t: &[Tick]| t.last().unwrap().thrusters_n;
    let (n, f) = (last(&a), last(&b));
    assert!(n[1] > 1.0, "the nominal thruster pushes {} N", n[1]);
    assert!(
        f[1].abs() < 1e-3 * n[1],
        "the failed thruster pushes {} N",
        f[1]
    );
    assert!(f[0] > 0.5 * n[0], "the other keeps pushing");
    let first = first_difference(&a, &b, |t| t.thrusters_n[1]);
    assert_eq!(first, SimTime::from_micros(1_001_000));
}

/// The end of the first tick at which the two traces differ in `pick`.
fn first_difference(a: &[Tick], b: &[Tick], pick: impl Fn(&Tick) -> f64) -> SimTime {
    a.iter()
        .zip(b)
        .find(|(x, y)| pick(x) != pick(y))
        .map(|(x, _)| x.time)
        .expect("the traces differ")
}

#[test]
fn battery_capacity_scale_drains_the_pack_faster() {
    let (a, b) = fly(QUAD, "battery_capacity_scale@0s+20s:scale=0.25", 30);
    let at = |trace: &[Tick], t: f64| trace.iter().find(|x| secs(x.time) >= t).unwrap().remaining;
    let used = |trace: &[Tick], t0: f64, t1: f64| at(trace, t0) - at(trace, t1);
    let ratio = used(&b, 1.0, 19.0) / used(&a, 1.0, 19.0);
    assert!((ratio - 4.0).abs() < 0.02, "drains {ratio}× faster");
    let ratio = used(&b, 21.0, 29.0) / used(&a, 21.0, 29.0);
    assert!(
        (ratio - 1.0).abs() < 0.02,
        "then at the nominal rate ({ratio})"
    );
}

#[test]
fn battery_voltage_drop_lowers_the_terminal_voltage() {
    let (a, b) = fly(QUAD, "battery_voltage_drop@1s+1s:drop_v=1.5", 3);
    for (x, y) in a.iter().zip(&b) {
        let t = secs(x.time);
        let expected = if active(t, 1.0, 2.0) { 1.5 } else { 0.0 };
        assert!(
            (x.voltage_v - y.voltage_v - expected).abs() < 1e-9,
            "at {t}"
        );
    }
}

#[test]
fn a_wind_gust_is_a_one_minus_cosine_pulse() {
    let (a, b) = fly(QUAD, "wind_gust@2s+4s:peak_m_s=8,from_deg=0", 8);
    let mut peak: f64 = 0.0;
    for (x, y) in a.iter().zip(&b) {
        let t = secs(x.time);
        let gust = y.wind_ned_m_s - x.wind_ned_m_s;
        let s = if active(t, 2.0, 6.0) {
            4.0 * (1.0 - (std::f64::consts::TAU * (t - 2.0) / 4.0).cos())
        } else {
            0.0
        };
        // From the north: blowing south.
        assert!(
            (gust - Vector3::new(-s, 0.0, 0.0)).norm() < 0.02,
            "at {t}: {gust:?}"
        );
        peak = peak.max(gust.norm());
    }
    assert!((peak - 8.0).abs() < 0.01);
}

/// Records what links the loop reports, and claims mission item 3 reached
/// from 5 s on.
struct LinkWatcher {
    seen: mavsitl_core::shared::Shared<Vec<(SimTime, LinkFaults)>>,
    now: SimTime,
}

impl FlightController for LinkWatcher {
    fn name(&self) -> &str {
        "link-watcher"
    }
    fn rate_hz(&self) -> u32 {
        50
    }
    fn actuators(&mut self, _now: SimTime) -> Result<Actuators, ControllerError> {
        Ok(Actuators::default())
    }
    fn receive(&mut self, frame: &SensorFrame) -> Result<(), ControllerError> {
        self.now = frame.time;
        self.seen.borrow_mut().push((frame.time, frame.links));
        Ok(())
    }
    fn mission_progress(&self) -> Option<u32> {
        (self.now >= SimTime::from_secs(5)).then_some(3)
    }
}

#[test]
fn link_faults_reach_the_controller_and_item_triggers_follow_its_progress() {
    let faults = [
        parse_fault_arg("rc_loss@1s+2s").unwrap(),
        parse_fault_arg("gcs_link_loss@item3+1s").unwrap(),
    ];
    let mut ls = lockstep(QUAD, &faults);
    ls.detach(0);
    let seen = mavsitl_core::shared::Shared::default();
    let watcher = LinkWatcher {
        seen: seen.clone(),
        now: SimTime::ZERO,
    };
    ls.attach(0, Box::new(watcher)).unwrap();
    ls.run_until(SimTime::from_secs(8), &mut ()).unwrap();
    for (t, links) in seen.borrow().iter() {
        let t = secs(*t);
        assert_eq!(links.rc_lost, active(t, 1.0, 3.0), "rc at {t}");
        // Item 3 is reported at 5 s; the fault starts on the next tick.
        assert_eq!(links.gcs_lost, active(t, 5.001, 6.001), "gcs at {t}");
    }
}

#[test]
fn a_scenario_names_the_bad_fault_key_and_line() {
    let src = ScenarioSource {
        name: "s.json".into(),
        base_dir: ".".into(),
    };
    let text = "{\"vehicles\": [{\"kind\": \"multirotor\"}],\n \"faults\": [{\"kind\": \"gps_loss\", \"at_s\": 1,\n \"sclae\": 2}]}";
    let e = Scenario::from_json(text, &src).unwrap_err().to_string();
    assert!(e.starts_with("s.json:3:") && e.contains("sclae"), "{e}");
    let text = r#"{"vehicles": [{"kind": "multirotor"}], "faults": [{"kind": "motor_failure", "at_s": 1, "motor": 0, "vehicle": "nobody"}]}"#;
    let e = Scenario::from_json(text, &src).unwrap_err().to_string();
    assert_eq!(e, "s.json: faults[0].vehicle: no vehicle of that name");
    let text = r#"{"vehicles": [{"kind": "multirotor"}], "faults": [{"kind": "gps_loss", "zone": "nowhere"}]}"#;
    let e = Scenario::from_json(text, &src).unwrap_err().to_string();
    assert_eq!(e, "s.json: faults[0].zone: no zone named 'nowhere'");
}
