//! SimpleFlight's estimator against ground truth, in the simulation with the
//! default (noisy) sensors.

use mavsitl_core::shared::Shared;

use mavsitl_core::controller::{Actuators, ControllerError, FlightController, SensorFrame};
use mavsitl_core::geo::{GeoPoint, LocalFrame};
use mavsitl_core::time::SimTime;
use mavsitl_sim::scenario::{Scenario, ScenarioSource};
use mavsitl_sim::sensors::mag::earth_field_ned_gauss;
use mavsitl_simpleflight::estimator::{Estimator, EstimatorParams};

#[derive(Default, Debug)]
struct Errors {
    att_deg: Vec<f64>,
    yaw_deg: Vec<f64>,
    pos_xy_m: Vec<f64>,
    pos_z_m: Vec<f64>,
    vel_m_s: Vec<f64>,
}

struct Probe {
    est: Estimator,
    controls: Actuators,
    errors: Shared<Errors>,
    settle: SimTime,
}

impl FlightController for Probe {
    fn name(&self) -> &str {
        "estimator-probe"
    }
    fn rate_hz(&self) -> u32 {
        250
    }
    fn actuators(&mut self, _now: SimTime) -> Result<Actuators, ControllerError> {
        Ok(self.controls)
    }
    fn wants_ground_truth(&self) -> bool {
        true
    }
    fn receive(&mut self, f: &SensorFrame) -> Result<(), ControllerError> {
        for s in f.imu.iter() {
            self.est.on_imu(s);
        }
        for m in f.mag.iter() {
            self.est.on_mag(m);
        }
        for b in f.baro.iter() {
            self.est.on_baro(b);
        }
        for g in f.gps.iter() {
            self.est.on_gps(g);
        }
        if f.time < self.settle || !self.est.aligned() {
            return Ok(());
        }
        let Some(t) = f.ground_truth else {
            return Ok(());
        };
        let e = self.est.state();
        let mut errs = self.errors.borrow_mut();
        errs.att_deg
            .push(e.att_ned_frd.angle_to(&t.att_ned_frd).to_degrees());
        let (_, _, ye) = e.att_ned_frd.euler_angles();
        let (_, _, yt) = t.att_ned_frd.euler_angles();
        let dy = (ye - yt + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU)
            - std::f64::consts::PI;
        errs.yaw_deg.push(dy.abs().to_degrees());
        errs.pos_xy_m.push((e.pos_ned_m - t.pos_ned_m).xy().norm());
        errs.pos_z_m.push((e.pos_ned_m.z - t.pos_ned_m.z).abs());
        errs.vel_m_s.push((e.vel_ned_m_s - t.vel_ned_m_s).norm());
        Ok(())
    }
}

fn rms(v: &[f64]) -> f64 {
    (v.iter().map(|x| x * x).sum::<f64>() / v.len() as f64).sqrt()
}

fn max(v: &[f64]) -> f64 {
    v.iter().cloned().fold(0.0, f64::max)
}

fn run(json: &str, controls: &[f64], secs: u64, initial_down: f64) -> Errors {
    let src = ScenarioSource {
        name: "est".into(),
        base_dir: ".".into(),
    };
    let scenario = Scenario::from_json(json, &src).expect("scenario");
    let mut ls = scenario.build(&src).expect("build");
    let home = GeoPoint::from_deg(
        scenario.home.lat_deg,
        scenario.home.lon_deg,
        scenario.home.alt_m,
    );
    let mag = earth_field_ned_gauss(&home, scenario.date.date()).expect("wmm");
    let errors = Shared::new(Errors::default());
    let probe = Probe {
        est: Estimator::new(
            EstimatorParams::default(),
            LocalFrame::new(home),
            mag,
            9.80665,
            initial_down,
        ),
        controls: Actuators::from_slice(controls),
        errors: errors.clone(),
        settle: SimTime::from_secs(20),
    };
    ls.attach(0, Box::new(probe)).expect("attach");
    ls.run_until(SimTime::from_secs(secs), &mut ())
        .expect("run");
    drop(ls);
    let taken = std::mem::take(&mut *errors.borrow_mut());
    taken
}

fn report(name: &str, e: &Errors) {
    println!(
        "{name}: att RMS {:.2}° max {:.2}°, yaw RMS {:.2}°, xy RMS {:.2} m max {:.2} m, z RMS {:.2} m, vel RMS {:.3} m/s",
        rms(&e.att_deg),
        max(&e.att_deg),
        rms(&e.yaw_deg),
        rms(&e.pos_xy_m),
        max(&e.pos_xy_m),
        rms(&e.pos_z_m),
        rms(&e.vel_m_s)
    );
}

#[test]
fn converges_on_the_ground() {
    let e = run(
        r#"{"seed":4,"vehicles":[{"kind":"multirotor","initial":{"yaw_deg":135},"controller":{"kind":"passive"}}]}"#,
        &[0.0; 4],
        120,
        -0.08,
    );
    report("ground", &e);
    assert!(max(&e.att_deg) < 1.0, "attitude");
    assert!(
        max(&e.yaw_deg) < 1.5,
        "heading from the WMM-referenced magnetometer"
    );
    assert!(rms(&e.pos_xy_m) < 1.5, "position within the GPS error");
    assert!(rms(&e.pos_z_m) < 0.5, "baro height");
    assert!(max(&e.vel_m_s) < 0.3);
}

#[test]
fn tracks_a_boat_turning_circles() {
    let e = run(
        r#"{"seed":5,"environment":{"current":{"speed_m_s":0.3,"towards_deg":45}},
            "vehicles":[{"kind":"boat","controller":{"kind":"passive"}}]}"#,
        &[0.9, 0.3],
        180,
        0.0,
    );
    report("boat circles", &e);
    assert!(
        rms(&e.yaw_deg) < 2.0 && max(&e.yaw_deg) < 5.0,
        "heading while turning"
    );
    assert!(rms(&e.vel_m_s) < 0.3, "velocity");
    assert!(rms(&e.pos_xy_m) < 1.5);
}
