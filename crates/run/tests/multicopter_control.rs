//! The multicopter cascade flying the simulated quads on the estimator (noisy
//! sensors, no ground truth in the loop).

use mavsitl_core::shared::Shared;

use mavsitl_core::controller::{Actuators, ControllerError, FlightController, SensorFrame};
use mavsitl_core::geo::{GeoPoint, LocalFrame};
use mavsitl_core::time::SimTime;
use mavsitl_run::setup::multicopter_airframe;
use mavsitl_sim::physics::airframes;
use mavsitl_sim::scenario::{Scenario, ScenarioSource};
use mavsitl_sim::sensors::mag::earth_field_ned_gauss;
use mavsitl_simpleflight::airframe::MAX_MOTORS;
use mavsitl_simpleflight::estimator::{Estimator, EstimatorParams};
use mavsitl_simpleflight::multicopter::{McParams, McSetpoint, MulticopterControl};
use nalgebra::Vector3;

#[derive(Default, Debug)]
struct Log {
    /// (t, truth position, set-point position)
    samples: Vec<(f64, Vector3<f64>, Vector3<f64>)>,
}

struct Pilot {
    est: Estimator,
    ctl: MulticopterControl,
    out: [f64; MAX_MOTORS],
    log: Shared<Log>,
}

fn setpoint(t: f64) -> Option<Vector3<f64>> {
    if t < 5.0 {
        None
    } else if t < 25.0 {
        Some(Vector3::new(0.0, 0.0, -10.0))
    } else {
        Some(Vector3::new(20.0, 0.0, -10.0))
    }
}

impl FlightController for Pilot {
    fn name(&self) -> &str {
        "mc-test-pilot"
    }
    fn rate_hz(&self) -> u32 {
        250
    }
    fn actuators(&mut self, _now: SimTime) -> Result<Actuators, ControllerError> {
        Ok(Actuators::from_slice(&self.out))
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
        let t = f.time.as_secs_f64();
        let sp = match setpoint(t) {
            Some(p) if self.est.aligned() => McSetpoint::Track {
                pos: p,
                vel: Vector3::zeros(),
                acc: Vector3::zeros(),
                yaw: 0.3,
            },
            _ => McSetpoint::Off,
        };
        self.ctl
            .update(&sp, &self.est.state(), 0.004, &mut self.out);
        if let (Some(truth), Some(p)) = (f.ground_truth, setpoint(t)) {
            self.log.borrow_mut().samples.push((t, truth.pos_ned_m, p));
        }
        Ok(())
    }
}

fn fly(airframe: &str) -> Log {
    let json = format!(
        r#"{{"seed":9,"vehicles":[{{"kind":"multirotor","airframe":"{airframe}","controller":{{"kind":"passive"}}}}]}}"#
    );
    let src = ScenarioSource {
        name: "mc".into(),
        base_dir: ".".into(),
    };
    let scenario = Scenario::from_json(&json, &src).expect("scenario");
    let mut ls = scenario.build(&src).expect("build");
    let home = GeoPoint::from_deg(
        scenario.home.lat_deg,
        scenario.home.lon_deg,
        scenario.home.alt_m,
    );
    let mag = earth_field_ned_gauss(&home, scenario.date.date()).expect("wmm");
    let af = airframes::multirotor(airframe).expect("airframe");
    let log = Shared::new(Log::default());
    let pilot = Pilot {
        est: Estimator::new(
            EstimatorParams::default(),
            LocalFrame::new(home),
            mag,
            9.80665,
            -af.gear_height_m,
        ),
        ctl: MulticopterControl::new(McParams::default(), &multicopter_airframe(&af)),
        out: [0.0; MAX_MOTORS],
        log: log.clone(),
    };
    ls.attach(0, Box::new(pilot)).expect("attach");
    ls.run_until(SimTime::from_secs(45), &mut ()).expect("run");
    drop(ls);
    let taken = std::mem::take(&mut *log.borrow_mut());
    taken
}

fn check(airframe: &str) {
    let log = fly(airframe);
    // Settled hover before the step: within 0.3 m of 10 m and of the spot.
    let hover: Vec<_> = log
        .samples
        .iter()
        .filter(|(t, _, _)| (15.0..25.0).contains(t))
        .collect();
    let worst_hover = hover
        .iter()
        .map(|(_, p, sp)| (p - sp).norm())
        .fold(0.0, f64::max);
    // After the 20 m step: arrives and holds.
    let after: Vec<_> = log
        .samples
        .iter()
        .filter(|(t, _, _)| (38.0..45.0).contains(t))
        .collect();
    let worst_after = after
        .iter()
        .map(|(_, p, sp)| (p - sp).norm())
        .fold(0.0, f64::max);
    let min_alt = log
        .samples
        .iter()
        .filter(|(t, _, _)| *t > 15.0)
        .map(|(_, p, _)| -p.z)
        .fold(f64::INFINITY, f64::min);
    println!("{airframe}: hover error max {worst_hover:.2} m, after the step {worst_after:.2} m, lowest {min_alt:.1} m");
    assert!(worst_hover < 1.0, "{airframe}: hover error {worst_hover}");
    assert!(
        worst_after < 1.0,
        "{airframe}: position error after the step {worst_after}"
    );
    assert!(
        min_alt > 8.0,
        "{airframe}: sagged to {min_alt} m during the step"
    );
}

#[test]
fn generic_quad_takes_off_holds_and_moves() {
    check("generic_quad");
}

#[test]
fn x500_takes_off_holds_and_moves() {
    check("x500");
}

/// With no air to push (a barometer near vacuum tells a density of zero,
/// a noisy one below zero, a broken one NaN) the rotors can give no
/// thrust: every set-point still gives commands in 0..1, and no panic.
#[test]
fn no_air_gives_idle_rotors_not_a_panic() {
    use mavsitl_simpleflight::estimator::EstimatedState;
    use mavsitl_simpleflight::multicopter::Lift;
    use nalgebra::UnitQuaternion;
    let af = airframes::multirotor("generic_quad").expect("airframe");
    let mut ctl = MulticopterControl::new(McParams::default(), &multicopter_airframe(&af));
    for rho in [1.225, 0.0, -1e-4, f64::NAN, f64::INFINITY] {
        let est = EstimatedState {
            pos_ned_m: Vector3::new(0.0, 0.0, -80_000.0),
            vel_ned_m_s: Vector3::zeros(),
            att_ned_frd: UnitQuaternion::identity(),
            rate_frd_rad_s: Vector3::zeros(),
            accel_ned_m_s2: Vector3::zeros(),
            specific_force_frd_m_s2: Vector3::new(0.0, 0.0, -9.8),
            air_density_kg_m3: rho,
        };
        for sp in [
            McSetpoint::Track {
                pos: Vector3::new(5.0, 0.0, -80_010.0),
                vel: Vector3::zeros(),
                acc: Vector3::zeros(),
                yaw: 0.0,
            },
            McSetpoint::Attitude {
                att: UnitQuaternion::identity(),
                lift: Lift::Throttle(0.5),
            },
            McSetpoint::Rates {
                rates_frd: Vector3::new(1.0, 0.0, 0.0),
                lift: Lift::Down(-80_000.0),
            },
        ] {
            let mut out = [0.0; MAX_MOTORS];
            ctl.update(&sp, &est, 0.004, &mut out);
            assert!(
                out.iter().all(|c| (0.0..=1.0).contains(c)),
                "density {rho}: {out:?}"
            );
            if rho == 1.225 {
                assert!(out.iter().take(4).any(|c| *c > 0.0), "{out:?}");
            } else if rho.is_nan() || rho <= 0.0 {
                assert!(out.iter().all(|c| *c == 0.0), "density {rho}: {out:?}");
            }
        }
    }
}
