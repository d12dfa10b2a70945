//! The guidance port closed around a simple vehicle, without the simulator: a
//! unicycle whose speed follows throttle and whose yaw rate follows steering
//! with first-order lags (a skid-steer rover or twin-thruster boat).

use mavsitl_guidance::{
    ArAttitudeControl, ArMotorsUgv, ArPosControl, ArWpNav, AttitudeParams, DriverMode,
    MotorsParams, NavState, PosControlParams, RoverDriver, RoverParams, WpNavParams,
};
use nalgebra::Vector2;

/// Full-throttle speed and full-steering yaw rate, with lags.
struct Unicycle {
    pos: Vector2<f64>,
    yaw: f64,
    speed: f64,
    rate: f64,
    accel: Vector2<f64>,
    /// Water current (boats), NE m/s.
    drift: Vector2<f64>,
}

const V_FULL: f64 = 4.0; // CRUISE_SPEED 2 at CRUISE_THROTTLE 0.5
const R_FULL: f64 = 1.0 / 0.75; // full steering at 1/ATC_STR_RAT_FF
const TAU_V: f64 = 0.5;
const TAU_R: f64 = 0.1;

impl Unicycle {
    fn step(&mut self, throttle: f64, steering: f64, dt: f64) {
        let old_v = self.vel();
        self.speed += (throttle * V_FULL - self.speed) * (dt / TAU_V);
        self.rate += (steering * R_FULL - self.rate) * (dt / TAU_R);
        self.yaw += self.rate * dt;
        self.pos += self.vel() * dt;
        self.accel = (self.vel() - old_v) / dt;
    }

    fn vel(&self) -> Vector2<f64> {
        Vector2::new(self.yaw.cos(), self.yaw.sin()) * self.speed + self.drift
    }

    fn state(&self, now_s: f64) -> NavState {
        NavState {
            now_s,
            armed: true,
            pos_ne_m: self.pos,
            vel_ne_m_s: self.vel(),
            accel_ne_m_s2: self.accel,
            yaw_rad: self.yaw,
            yaw_rate_rad_s: self.rate,
        }
    }
}

fn driver(params: RoverParams, wp: WpNavParams) -> RoverDriver {
    let atc = ArAttitudeControl::new(AttitudeParams {
        str_rat_ff: 0.75,
        ..AttitudeParams::default()
    });
    let wpnav = ArWpNav::new(wp, ArPosControl::new(PosControlParams::default()));
    let motors = ArMotorsUgv::new(MotorsParams::default(), params.can_pivot);
    RoverDriver::new(params, atc, wpnav, motors)
}

struct Run {
    max_xtrack: f64,
    sum_sq_xtrack: f64,
    samples: usize,
    reached: Vec<(usize, f64, Vector2<f64>)>,
    end: Vector2<f64>,
    vehicle: Unicycle,
    driver: RoverDriver,
    t: f64,
}

/// Flies the box in Auto, handing the next waypoint over as each is reached.
fn fly_box(params: RoverParams, wp: WpNavParams, drift: Vector2<f64>) -> Run {
    let box_wps = [
        Vector2::new(30.0, 0.0),
        Vector2::new(30.0, 30.0),
        Vector2::new(0.0, 30.0),
        Vector2::new(0.0, 0.0),
    ];
    let mut v = Unicycle {
        pos: Vector2::zeros(),
        yaw: 0.0,
        speed: 0.0,
        rate: 0.0,
        accel: Vector2::zeros(),
        drift,
    };
    let mut d = driver(params, wp);
    let dt = 0.02;
    let mut t = 0.0;
    let mut idx = 0;
    d.auto_set_waypoint(box_wps[0], box_wps.get(1).copied(), &v.state(t));
    let mut run = Run {
        max_xtrack: 0.0,
        sum_sq_xtrack: 0.0,
        samples: 0,
        reached: Vec::new(),
        end: Vector2::zeros(),
        vehicle: Unicycle { ..v },
        driver: d.clone(),
        t: 0.0,
    };
    while t < 300.0 {
        let s = v.state(t);
        let out = d.update(&s, dt);
        assert!(out.throttle.is_finite() && out.steering.is_finite());
        // Cross-track error on the legs (the pivots happen at the waypoints).
        if !d.wpnav.pivot_active() && d.mode() == DriverMode::Auto {
            let x = d.wpnav.crosstrack_error().abs();
            run.max_xtrack = run.max_xtrack.max(x);
            run.sum_sq_xtrack += x * x;
            run.samples += 1;
        }
        if out.reached {
            run.reached.push((idx, t, v.pos));
            idx += 1;
            if idx < box_wps.len() {
                let s = v.state(t);
                d.auto_set_waypoint(box_wps[idx], box_wps.get(idx + 1).copied(), &s);
            } else {
                break;
            }
        }
        v.step(out.throttle, out.steering, dt);
        t += dt;
    }
    run.end = v.pos;
    run.vehicle = v;
    run.driver = d;
    run.t = t;
    run
}

#[test]
fn skid_steer_box_at_wp_speed_2_stays_on_track() {
    let params = RoverParams {
        can_pivot: true,
        ..RoverParams::default()
    };
    let run = fly_box(params, WpNavParams::default(), Vector2::zeros());
    assert_eq!(
        run.reached.len(),
        4,
        "every waypoint reached: {:?}",
        run.reached
    );
    let rms = (run.sum_sq_xtrack / run.samples as f64).sqrt();
    println!(
        "pivoting box: cross-track max {:.3} m, RMS {:.3} m, {:.1} s",
        run.max_xtrack, rms, run.t
    );
    assert!(
        run.max_xtrack <= 0.5,
        "cross-track error {} m",
        run.max_xtrack
    );
    // Each reach is within WP_RADIUS of its waypoint or past its finish line.
    assert!(run.end.norm() < 2.5, "ends near home: {}", run.end);
}

#[test]
fn ackermann_box_blends_corners() {
    // No pivots: the corners are flown as S-curve blends within WP_RADIUS.
    let params = RoverParams {
        can_pivot: false,
        ..RoverParams::default()
    };
    let run = fly_box(params, WpNavParams::default(), Vector2::zeros());
    assert_eq!(run.reached.len(), 4);
    let rms = (run.sum_sq_xtrack / run.samples as f64).sqrt();
    println!(
        "blended box: cross-track max {:.3} m, RMS {:.3} m, {:.1} s",
        run.max_xtrack, rms, run.t
    );
    // Corner cutting is bounded by the waypoint radius.
    assert!(
        run.max_xtrack <= WpNavParams::default().radius + 0.5,
        "cross-track {}",
        run.max_xtrack
    );
    assert!(rms < 1.0);
}

#[test]
fn boat_loiters_at_the_destination_against_a_current() {
    let params = RoverParams {
        can_pivot: true,
        is_boat: true,
        ..RoverParams::default()
    };
    let wp = WpNavParams::default();
    let mut v = Unicycle {
        pos: Vector2::zeros(),
        yaw: 0.0,
        speed: 0.0,
        rate: 0.0,
        accel: Vector2::zeros(),
        drift: Vector2::new(0.0, 0.2),
    };
    let mut d = driver(params, wp);
    let dt = 0.02;
    let dest = Vector2::new(40.0, 10.0);
    // GUID_OPTIONS 0: Guided goes by PSC input shaping.
    d.guided_set_destination(dest, None, &v.state(0.0));
    let mut t = 0.0;
    let mut reached_at = None;
    let mut worst_after: f64 = 0.0;
    while t < 200.0 {
        let out = d.update(&v.state(t), dt);
        if out.reached {
            assert!(reached_at.is_none(), "reached is reported once");
            reached_at = Some(t);
        }
        if let Some(t0) = reached_at {
            // From the tick after: ArduPilot's mode loiters on its next update,
            // at the stopping point (`start_loiter`).
            if t > t0 {
                assert_eq!(d.mode(), DriverMode::Loiter);
                let hold = d.loiter_destination();
                assert!(
                    (hold - dest).norm() < 5.0,
                    "loiters at {hold}, not near {dest}"
                );
            }
            if t - t0 > 20.0 {
                worst_after = worst_after.max((v.pos - d.loiter_destination()).norm());
            }
        }
        v.step(out.throttle, out.steering, dt);
        t += dt;
    }
    let t0 = reached_at.expect("destination reached");
    println!("boat reached at {t0:.1} s; holds within {worst_after:.2} m in a 0.2 m/s current");
    assert!(
        worst_after <= params.loit_radius + 1.5,
        "drifted {worst_after} m from the loiter point"
    );
}

#[test]
fn stop_brings_the_vehicle_to_rest() {
    let mut v = Unicycle {
        pos: Vector2::zeros(),
        yaw: 0.3,
        speed: 3.0,
        rate: 0.0,
        accel: Vector2::zeros(),
        drift: Vector2::zeros(),
    };
    let mut d = driver(RoverParams::default(), WpNavParams::default());
    d.stop();
    let dt = 0.02;
    let mut t = 0.0;
    while t < 20.0 {
        let out = d.update(&v.state(t), dt);
        v.step(out.throttle, out.steering, dt);
        t += dt;
    }
    assert!(v.speed.abs() < 0.1, "still moving at {}", v.speed);
}
