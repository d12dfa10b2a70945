//! The rover against mechanics: braking distance on a friction, the
//! bicycle model's understeer, the friction circle, a slide on ice, a
//! parked rover, pivot and kinematic turns, top speed.

use super::*;
use crate::physics::airframes;
use crate::physics::rigid_body::{RigidBody, StepInputs};
use mavsitl_core::controller::MAX_ACTUATORS;
use nalgebra::UnitQuaternion;

const DT: f64 = 0.001;
const G: f64 = 9.80665;

fn jackal() -> RoverParams {
    airframes::rover("jackal").expect("shipped")
}

fn f1tenth() -> RoverParams {
    airframes::rover("f1tenth").expect("shipped")
}

/// A rover on the ground and the body it pushes.
struct Drive {
    rover: Rover,
    body: RigidBody,
    t_s: f64,
}

impl Drive {
    /// At rest, standing level at the origin, heading north.
    fn new(p: RoverParams) -> Self {
        let state = BodyState {
            pos_ned_m: Vector3::new(0.0, 0.0, p.standing_z_m()),
            ..BodyState::default()
        };
        let body = RigidBody::new(p.mass_properties().expect("physical"), state);
        Drive {
            rover: Rover::new(p, DT, G),
            body,
            t_s: 0.0,
        }
    }

    /// Rolling north at `speed` m/s, every wheel turning with the ground.
    fn rolling(p: RoverParams, speed: f64) -> Self {
        let mut d = Drive::new(p);
        d.body.state.vel_ned_m_s.x = speed;
        let r = d.rover.params.wheel_radius_m;
        for w in &mut d.rover.wheels {
            w.spin_rad_s = speed / r;
        }
        d
    }

    fn step(&mut self, controls: &[f64], mu: [f64; 4]) {
        let g = Vector3::new(0.0, 0.0, G);
        let w = self.rover.wrench(controls, mu, &g, &self.body.state, DT);
        let inputs = StepInputs {
            gravity_ned_m_s2: g,
            fluid_vel_ned_m_s: Vector3::zeros(),
            rotor_momentum_frd: Vector3::zeros(),
        };
        self.body.step(&w, &inputs, DT);
        self.rover.project(&mut self.body.state, 0.0);
        self.t_s += DT;
    }

    fn run(&mut self, seconds: f64, controls: &[f64], mu: f64) {
        for _ in 0..(seconds / DT).round() as usize {
            self.step(controls, [mu; 4]);
        }
    }

    fn state(&self) -> &BodyState {
        &self.body.state
    }

    /// Velocity in body axes (forward, right), m/s.
    fn vel_body(&self) -> Vector3<f64> {
        self.body.state.att_ned_frd.inverse() * self.body.state.vel_ned_m_s
    }

    fn yaw(&self) -> f64 {
        self.body.state.att_ned_frd.euler_angles().2
    }
}

/// Ackermann controls: throttle and steering on their channels.
fn ackermann(throttle: f64, steering: f64) -> [f64; 3] {
    [steering, 0.0, throttle]
}

/// Each bad value is refused naming its field: a zero wheelbase, a
/// negative μ, steering beyond 89°, the CG outside the wheelbase, a channel
/// past the last; the shipped airframes pass.
#[test]
fn validate_names_the_bad_field() {
    type Set = fn(&mut RoverParams);
    let cases: [(&str, Set); 8] = [
        ("wheelbase_m", |p| p.wheelbase_m = 0.0),
        ("tyre_friction", |p| p.tyre_friction = -0.1),
        ("tyre_friction", |p| p.tyre_friction = 2.01),
        ("max_steer_deg", |p| p.max_steer_deg = 89.5),
        ("cg_to_front_axle_m", |p| {
            p.cg_to_front_axle_m = p.wheelbase_m + 0.01
        }),
        ("cornering_stiffness_per_rad[1]", |p| {
            p.cornering_stiffness_per_rad[1] = f64::NAN
        }),
        ("track_m", |p| p.track_m = -1.0),
        ("steering_channel", |p| p.steering_channel = MAX_ACTUATORS),
    ];
    for p in [jackal(), f1tenth()] {
        assert_eq!(p.validate(), Ok(()));
        for (field, set) in cases {
            let mut bad = p.clone();
            set(&mut bad);
            assert_eq!(bad.validate().expect_err(field).field, field);
        }
    }
    let mut edge = f1tenth();
    edge.max_steer_deg = 89.0;
    edge.cg_to_front_axle_m = edge.wheelbase_m;
    assert_eq!(edge.validate(), Ok(()));
    assert_eq!(jackal().channel_count(), 2);
    assert_eq!(f1tenth().channel_count(), 5);
}

/// At rest each axle carries the weight in the inverse ratio of its
/// distance from the CG, split evenly left and right. Braking moves
/// m·a·h/L to the front; turning right moves m·a·h/t to the left wheels,
/// shared as the axles' static loads are; both ways.
#[test]
fn loads_shift_forward_under_braking_and_outward_in_a_turn() {
    let p = f1tenth();
    let (m, h, l, t) = (p.mass_kg, p.cg_height_m, p.wheelbase_m, p.track_m);
    let front = m * G * (l - p.cg_to_front_axle_m) / l;
    let stat = p.static_loads_n(G);
    assert!((stat[0] - front / 2.0).abs() < 1e-12 && stat[0] == stat[1]);
    assert!((stat.iter().sum::<f64>() - m * G).abs() < 1e-12);
    assert!(stat[0] > stat[2], "the CG is ahead of the middle");
    let mut r = Rover::new(p.clone(), DT, G);
    for (ax, ay) in [
        (-3.0, 0.0),
        (2.0, 0.0),
        (0.0, 4.0),
        (0.0, -4.0),
        (-1.0, 2.5),
    ] {
        r.accel_frd_m_s2 = Vector2::new(ax, ay);
        r.set_loads(G, [0.7; 4]);
        let lon = m * ax * h / l;
        let lat = m * ay * h / t;
        for (i, w) in r.wheels.iter().enumerate() {
            let share = 2.0 * stat[i] / (m * G);
            let want = stat[i]
                + if i < 2 { -lon / 2.0 } else { lon / 2.0 }
                + if i % 2 == 1 {
                    -lat * share / 2.0
                } else {
                    lat * share / 2.0
                };
            assert!((w.load_n - want).abs() < 1e-9, "{ax}, {ay}: wheel {i}");
            assert_eq!(w.mu, 0.7);
        }
        let total: f64 = r.wheels.iter().map(|w| w.load_n).sum();
        assert!((total - m * G).abs() < 1e-9);
    }
    // Hard enough that the inside wheels would pull: they lift instead.
    r.accel_frd_m_s2 = Vector2::new(0.0, 30.0);
    r.set_loads(G, [f64::NAN, -1.0, 0.5, 0.5]);
    assert_eq!((r.wheels[1].load_n, r.wheels[3].load_n), (0.0, 0.0));
    assert_eq!((r.wheels[0].mu, r.wheels[1].mu), (p.tyre_friction, 0.0));
}

/// Distance to stop with every wheel locked on friction μ is v²/(2·μ·g),
/// forwards and backwards: the car's brakes lock its wheels on a wet or a
/// loose surface (μ 0.5, 0.3).
#[test]
fn braking_distance_is_v_squared_over_two_mu_g() {
    for (mu, v0) in [(0.5, 5.0), (0.3, 4.0), (0.5, -3.0)] {
        let mut d = Drive::rolling(f1tenth(), v0);
        d.rover.set_brake(1.0, false);
        let mut stopped = None;
        for _ in 0..20_000 {
            d.step(&ackermann(0.0, 0.0), [mu; 4]);
            if d.state().vel_ned_m_s.x * v0.signum() <= 0.0 {
                stopped = Some(d.state().pos_ned_m.x);
                break;
            }
            if d.t_s > 0.2 {
                assert!(d.rover.wheels.iter().all(|w| w.spin_rad_s == 0.0), "locked");
            }
        }
        let x = stopped.expect("stops");
        let want = v0 * v0.abs() / (2.0 * mu * G);
        assert!(
            (x / want - 1.0).abs() < 0.02,
            "μ {mu}, {v0} m/s: {x} m, not {want}"
        );
    }
}

/// Steady cornering in the linear range (to 0.12 g): the steering beyond
/// the kinematic L/R grows with lateral acceleration by the bicycle
/// model's understeer gradient (1/g)·(1/C_Sf − 1/C_Sr), to 5 %. Taken as
/// the slope over three speeds, rear-wheel drive and no rolling
/// resistance, as the bicycle model has them. (Harder, the outer front
/// wheel, which Ackermann's geometry steers less, takes more of the load,
/// and the car understeers more than the bicycle model says: 9 % more at
/// 0.2 g.)
#[test]
fn steady_cornering_follows_the_bicycle_models_understeer_gradient() {
    let mut p = f1tenth();
    p.four_wheel_drive = false;
    p.rolling_resistance = 0.0;
    let (l, delta) = (p.wheelbase_m, 0.04);
    let steering = delta / p.max_steer_deg.to_radians();
    let mut points = Vec::new();
    for throttle in [0.25, 0.35, 0.45] {
        let mut d = Drive::new(p.clone());
        d.run(10.0, &ackermann(throttle, steering), p.tyre_friction);
        assert!((d.rover.steer_rad() - delta).abs() < 1e-12);
        let speed = d.state().vel_ned_m_s.norm();
        let r = d.state().rate_frd_rad_s.z;
        assert!(r > 0.0, "steering right turns right");
        let (radius, ay) = (speed / r, speed * r);
        points.push((ay, delta - l / radius));
    }
    let n = points.len() as f64;
    let (mx, my) = points
        .iter()
        .fold((0.0, 0.0), |(a, b), (x, y)| (a + x / n, b + y / n));
    let (sxy, sxx) = points.iter().fold((0.0, 0.0), |(a, b), (x, y)| {
        (a + (x - mx) * (y - my), b + (x - mx) * (x - mx))
    });
    let k = sxy / sxx;
    let want = p.understeer_gradient_rad_per_m_s2(G);
    assert!(want > 0.0, "the F1TENTH car understeers");
    assert!(
        points[2].0 > points[0].0 + 0.6 && points[2].0 < 1.2,
        "{points:?}"
    );
    assert!((k / want - 1.0).abs() < 0.05, "K {k}, bicycle model {want}");
}

/// Whatever the commands and the surface, no tyre pushes harder than
/// μ·F_z; a sweep through throttle, steering, brakes and friction that
/// reaches the limit often.
#[test]
fn no_tyre_pushes_beyond_its_friction_circle() {
    for p in [jackal(), f1tenth()] {
        let mut d = Drive::new(p.clone());
        let mut at_limit = 0;
        for k in 0..20_000 {
            let t = k as f64 * DT;
            let mu = [1.0, 0.1, 0.5, 0.8][(k / 2500) % 4];
            let a = (1.3 * t).sin();
            let b = (0.7 * t + 1.0).cos();
            d.rover
                .set_brake(if (k / 1700) % 3 == 0 { 1.0 } else { 0.0 }, k % 5000 > 4000);
            let controls = match p.drive {
                RoverDrive::SkidSteer => [a, b, 0.0],
                RoverDrive::Ackermann => ackermann(a, b),
            };
            d.step(&controls, [mu, mu, 0.6 * mu, mu]);
            for w in &d.rover.wheels {
                let limit = w.mu * w.load_n;
                assert!(w.force_n.norm() <= limit * (1.0 + 1e-12) + 1e-12, "{t} s");
                at_limit += usize::from(w.force_n.norm() > 0.999 * limit && limit > 0.0);
            }
        }
        assert!(at_limit > 1000, "{at_limit} wheel-ticks at the limit");
    }
}

/// Cornering into ice (μ 0.1) the car slides: its body slips over 10°
/// from its heading; back on the dry it grips again and the slip settles
/// below 3°.
#[test]
fn ice_makes_it_slide_and_the_dry_restores_grip() {
    let p = f1tenth();
    let mut d = Drive::new(p.clone());
    let controls = ackermann(0.5, 0.6);
    let beta = |d: &Drive| {
        let v = d.vel_body();
        v.y.atan2(v.x).to_degrees()
    };
    d.run(5.0, &controls, p.tyre_friction);
    assert!(beta(&d).abs() < 3.0, "gripping: {}°", beta(&d));
    let mut most: f64 = 0.0;
    for _ in 0..600 {
        d.step(&controls, [0.1; 4]);
        most = most.max(beta(&d).abs());
    }
    assert!(most > 10.0, "slides: {most}°");
    d.run(4.0, &controls, p.tyre_friction);
    assert!(beta(&d).abs() < 3.0, "grips again: {}°", beta(&d));
    let w = &d.rover.wheels[0];
    assert!(w.force_n.norm() < 0.9 * w.mu * w.load_n, "not sliding");
}

/// Stopped and left with no command, a rover stays where it stopped: under
/// 1 mm and 0.001° in ten minutes.
#[test]
fn a_parked_rover_stays_put_for_ten_minutes() {
    for p in [jackal(), f1tenth()] {
        let mu = p.tyre_friction;
        let mut d = Drive::new(p.clone());
        let (go, stop) = match p.drive {
            RoverDrive::SkidSteer => ([1.0, 0.8, 0.0], [0.0; 3]),
            RoverDrive::Ackermann => (ackermann(0.5, 0.3), ackermann(0.0, 0.0)),
        };
        d.run(1.0, &go, mu);
        d.rover.set_brake(1.0, false);
        d.run(3.0, &stop, mu);
        d.rover.set_brake(0.0, false);
        d.run(1.0, &stop, mu);
        let (at, yaw) = (d.state().pos_ned_m, d.yaw());
        assert!(at.xy().norm() > 0.2, "it went somewhere");
        d.run(600.0, &stop, mu);
        let moved = (d.state().pos_ned_m - at).norm();
        assert!(moved < 1e-3, "{:?}: {moved} m", p.drive);
        assert!((d.yaw() - yaw).abs().to_degrees() < 1e-3);
        assert_eq!(d.state().pos_ned_m.z, p.standing_z_m());
    }
}

/// The Jackal at full command runs at its specified 2.0 m/s, 3 %; with one
/// side forward and the other back it turns on the spot, left or right
/// by which side leads, its CG (0.012 m ahead of the axles' middle)
/// circling within 3 cm of where it started.
#[test]
fn the_skid_steer_runs_straight_at_its_top_speed_and_pivots_both_ways() {
    let mut d = Drive::new(jackal());
    d.run(5.0, &[1.0, 1.0], 0.8);
    let v = d.vel_body();
    assert!((v.x / 2.0 - 1.0).abs() < 0.03, "{} m/s", v.x);
    assert!(v.y.abs() < 1e-9 && d.state().rate_frd_rad_s.z.abs() < 1e-9);
    for (left, right, sign) in [(1.0, -1.0, 1.0), (-1.0, 1.0, -1.0)] {
        let mut d = Drive::new(jackal());
        d.run(3.0, &[left, right], 0.8);
        let r = d.state().rate_frd_rad_s.z;
        assert!(r * sign > 0.5, "left {left}: {r} rad/s");
        assert!(d.state().pos_ned_m.xy().norm() < 0.03);
    }
}

/// Slowly, with the wheels at their steering lock, the car drives the
/// kinematic circle: the rear axle's radius L / tan δ, the CG's
/// √(R² + l_r²), to 2 %; right for positive steering, left for negative.
/// Each wheel rolls at the speed its contact moves over the ground, the
/// outer front fastest, to 1 %.
#[test]
fn a_slow_ackermann_turn_drives_the_kinematic_circle() {
    let p = f1tenth();
    let delta = p.max_steer_deg.to_radians();
    let lr = p.wheelbase_m - p.cg_to_front_axle_m;
    let rear = p.wheelbase_m / delta.tan();
    let want = (rear * rear + lr * lr).sqrt();
    for steering in [1.0, -1.0] {
        let mut d = Drive::new(p.clone());
        d.run(4.0, &ackermann(0.08, steering), p.tyre_friction);
        let (speed, r) = (d.state().vel_ned_m_s.norm(), d.state().rate_frd_rad_s.z);
        assert!(speed > 0.2 && speed < 1.0, "{speed} m/s");
        assert_eq!(r.signum(), steering, "turns the way it steers");
        let radius = speed / r.abs();
        assert!((radius / want - 1.0).abs() < 0.02, "{radius} m, not {want}");
        let v = d.vel_body();
        let ground: Vec<f64> = p
            .wheel_positions_frd_m()
            .iter()
            .map(|w| Vector2::new(v.x - r * w.y, v.y + r * w.x).norm())
            .collect();
        for (i, (w, g)) in d.rover.wheels.iter().zip(&ground).enumerate() {
            let rim = w.spin_rad_s * p.wheel_radius_m;
            assert!(
                (rim / g - 1.0).abs() < 0.01,
                "wheel {i}: {rim} m/s over {g}"
            );
        }
        let outer_front = if steering > 0.0 { 0 } else { 1 };
        assert!(ground[outer_front] > ground[1 - outer_front] && ground[outer_front] > ground[2]);
    }
}

/// The steering follows its command at its rate limit (3.2 rad/s for the
/// car), then holds the angle asked; a skid-steer rover never steers.
#[test]
fn the_steering_turns_at_its_rate_to_the_angle_asked() {
    let p = f1tenth();
    let rate = p.steer_rate_deg_s.to_radians();
    let mut d = Drive::new(p.clone());
    for k in 1..=50 {
        d.step(&ackermann(0.0, 1.0), [1.0; 4]);
        let want = (rate * DT * f64::from(k)).min(p.max_steer_deg.to_radians());
        assert!((d.rover.steer_rad() - want).abs() < 1e-12, "{k} ms");
    }
    d.run(0.5, &ackermann(0.0, -0.5), 1.0);
    assert!((d.rover.steer_rad() + 0.5 * p.max_steer_deg.to_radians()).abs() < 1e-12);
    let mut d = Drive::new(jackal());
    d.run(0.2, &[1.0, -1.0, 1.0], 0.8);
    assert_eq!(
        (d.rover.steer_rad(), d.rover.wheels[0].steer_rad),
        (0.0, 0.0)
    );
}

/// The wrench at rest: the ground carries the weight (−m·g, NED), and no
/// tyre pushes; put back on the ground, a chassis lifted, tilted and
/// moving up stands level at its height, its heading and its motion in
/// the plane kept.
#[test]
fn the_ground_carries_the_weight_and_holds_the_chassis() {
    let p = f1tenth();
    let mut r = Rover::new(p.clone(), DT, G);
    let g = Vector3::new(0.0, 0.0, G);
    let rest = BodyState {
        pos_ned_m: Vector3::new(0.0, 0.0, p.standing_z_m()),
        ..BodyState::default()
    };
    let w = r.wrench(&[0.0; 5], [1.0; 4], &g, &rest, DT);
    assert_eq!(w.force_ned_n, Vector3::new(0.0, 0.0, -p.mass_kg * G));
    assert_eq!(
        (w.force_frd_n, w.torque_frd_nm),
        (Vector3::zeros(), Vector3::zeros())
    );
    let mut s = BodyState {
        pos_ned_m: Vector3::new(3.0, -2.0, -0.5),
        vel_ned_m_s: Vector3::new(1.0, 0.5, -2.0),
        att_ned_frd: UnitQuaternion::from_euler_angles(0.2, -0.1, 1.3),
        rate_frd_rad_s: Vector3::new(0.3, -0.4, 0.6),
    };
    r.project(&mut s, 0.0);
    let (roll, pitch, yaw) = s.att_ned_frd.euler_angles();
    assert_eq!((roll, pitch), (0.0, 0.0));
    assert!((yaw - 1.3).abs() < 1e-12);
    assert_eq!(s.pos_ned_m, Vector3::new(3.0, -2.0, -0.074));
    assert_eq!(s.vel_ned_m_s, Vector3::new(1.0, 0.5, 0.0));
    assert_eq!(s.rate_frd_rad_s, Vector3::new(0.0, 0.0, 0.6));
}

/// Full throttle on the straight: the motor's torque, T_stall·(u − ω/ω₀)
/// less the rolling resistance, accelerates the car and its wheels' spin,
/// a = (T − C_rr·m·g·r) / (r·(m + 4·I_w/r²)), to 2 % while the tyres
/// grip; it settles where the torque meets the rolling resistance,
/// v₀·(1 − C_rr·m·g·r / T_stall), to 0.5 %.
#[test]
fn the_car_accelerates_on_its_motors_torque_to_its_top_speed() {
    let p = f1tenth();
    let (m, r, iw) = (p.mass_kg, p.wheel_radius_m, p.wheel_inertia_kg_m2);
    let rr = p.rolling_resistance * m * G * r;
    let mut d = Drive::new(p.clone());
    let mut checked = 0;
    let mut last = 0.0;
    for k in 0..1500 {
        let cmd = d.rover.motor_cmd[0];
        let spin = d.rover.wheels.iter().map(|w| w.spin_rad_s).sum::<f64>() / 4.0;
        d.step(&ackermann(1.0, 0.0), [p.tyre_friction; 4]);
        let v = d.vel_body().x;
        if k >= 100 && k % 100 == 0 {
            // The command and spin at the start of the tick, the command
            // one lag step on.
            let u = cmd + (1.0 - cmd) * d.rover.alpha_motor;
            let torque = p.motor_stall_torque_nm * (u - spin * r / p.top_speed_m_s);
            let want = (torque - rr) / (r * (m + 4.0 * iw / (r * r)));
            let got = (v - last) / DT;
            assert!(
                (got / want - 1.0).abs() < 0.02,
                "{k}: {got} m/s², not {want}"
            );
            checked += 1;
        }
        last = v;
    }
    assert_eq!(checked, 14);
    d.run(10.0, &ackermann(1.0, 0.0), p.tyre_friction);
    let want = p.top_speed_m_s * (1.0 - rr / p.motor_stall_torque_nm);
    let v = d.vel_body().x;
    assert!((v / want - 1.0).abs() < 0.005, "{v} m/s, not {want}");
    let shaft = p.motor_stall_torque_nm * (1.0 - v / p.top_speed_m_s) * v / r;
    assert!((d.rover.shaft_power_w() / shaft - 1.0).abs() < 0.01);
}

/// A failed motor delivers nothing: the Jackal with one side's motor dead
/// veers towards that side under equal commands; the car's dead motor
/// leaves it still.
#[test]
fn a_failed_motor_delivers_nothing() {
    for (scale, sign) in [([0.0, 1.0], -1.0), ([1.0, 0.0], 1.0)] {
        let mut d = Drive::new(jackal());
        d.rover.set_motor_scale(scale);
        d.run(2.0, &[1.0, 1.0], 0.8);
        assert!(d.state().rate_frd_rad_s.z * sign > 0.05, "{scale:?}");
    }
    let mut d = Drive::new(f1tenth());
    d.rover.set_motor_scale([0.0, f64::NAN]);
    d.run(1.0, &ackermann(1.0, 0.0), 1.0);
    assert_eq!(d.state().vel_ned_m_s, Vector3::zeros());
}

/// The brake channel brakes as `set_brake` does (every wheel locked, the
/// same distance on μ 0.5); the handbrake channel locks the rear wheels
/// only; channels a rover does not have are not read.
#[test]
fn the_brake_channels_brake_every_wheel_or_the_rear() {
    let stop = |controls: [f64; 5], set: bool| {
        let mut d = Drive::rolling(f1tenth(), 4.0);
        d.rover.set_brake(if set { 1.0 } else { 0.0 }, false);
        for _ in 0..300 {
            d.step(&controls, [0.5; 4]);
        }
        (
            d.state().vel_ned_m_s.x,
            d.rover.wheels.map(|w| w.spin_rad_s),
        )
    };
    let (by_channel, spins) = stop([0.0, 0.0, 0.0, 1.0, 0.0], false);
    let (by_call, _) = stop([0.0; 5], true);
    assert_eq!(spins, [0.0; 4]);
    assert_eq!(by_channel, by_call);
    assert!(
        by_channel < 4.0 - 0.5 * G * 0.2,
        "{by_channel} m/s after 0.3 s"
    );
    let (_, spins) = stop([0.0, 0.0, 0.0, 0.0, 1.0], false);
    assert!(
        spins[0] > 10.0 && spins[1] > 10.0,
        "the front rolls: {spins:?}"
    );
    assert_eq!(spins[2..], [0.0, 0.0], "the rear is locked");
    // The handbrake is on above half its channel, not at it.
    let (_, spins) = stop([0.0, 0.0, 0.0, 0.0, 0.5], false);
    assert!(
        spins[2] > 10.0 && spins[3] > 10.0,
        "at 0.5 the rear rolls: {spins:?}"
    );
    // A negative brake command does not drive the wheels.
    let (coast, _) = stop([0.0, 0.0, 0.0, -1.0, 0.4], false);
    let (free, _) = stop([0.0; 5], false);
    assert_eq!(coast, free);
    let mut p = f1tenth();
    assert_eq!(p.channel_count(), 5);
    (p.brake_channel, p.handbrake_channel) = (None, None);
    assert_eq!(p.channel_count(), 3);
    p.brake_channel = Some(MAX_ACTUATORS);
    assert_eq!(
        p.validate().expect_err("past the last").field,
        "brake_channel"
    );
}

/// A wheel state rolling with no load history: the given load and μ.
fn fresh_wheel(load_n: f64, mu: f64) -> WheelState {
    WheelState {
        load_n,
        mu,
        ..WheelState::default()
    }
}

/// The contact patch relaxes as the first-order lag it is: under a steady
/// slip V_s at a rolling speed V_x the deflection after h is
/// −V_s·(σ/|V_x|)·(1 − e^(−|V_x|·h/σ)), the force k·u with k = C·F_z/σ
/// (fast enough that no low-speed damping acts); standing still (V_x = 0)
/// it grows as −V_s·h, now with the low-speed damping 2ζ√(k·m/4) fading
/// linearly to 1 m/s.
#[test]
fn a_tyres_patch_relaxes_over_its_length_and_is_damped_when_slow() {
    let p = f1tenth();
    let (sigma, r) = (p.relaxation_length_m, p.wheel_radius_m);
    let c_alpha = 3.0 * p.slip_stiffness;
    let load = 20.0;
    let h = 0.004;
    // 3 m/s forward, the rim at 2.9 m/s, sliding 0.05 m/s right.
    let mut w = fresh_wheel(load, 1.0);
    w.spin_rad_s = 2.9 / r;
    let v = Vector2::new(3.0, 0.05);
    tyre_step(&mut w, &p, c_alpha, v, h);
    let a = 3.0 / sigma;
    let gain = (1.0 - (-a * h).exp()) / a;
    let want = Vector2::new(-(3.0 - 2.9) * gain, -0.05 * gain);
    assert!(
        (w.deflection_m - want).norm() < 1e-15,
        "{:?}",
        w.deflection_m
    );
    let k = Vector2::new(p.slip_stiffness, c_alpha) * (load / sigma);
    let f = k.component_mul(&want);
    assert!((w.patch_n - f).norm() < 1e-9 * f.norm(), "{:?}", w.patch_n);
    assert!(f.x < 0.0 && f.y < 0.0);
    // The patch's angle from the wheel's heading, its slip ratio.
    assert!((w.slip_angle_rad - 0.05f64.atan2(3.0)).abs() < 1e-15);
    assert!((w.slip_ratio - (2.9 - 3.0) / 3.0).abs() < 1e-15);
    // Within a micrometre a second of rest: neither.
    for v in [Vector2::new(0.0, 1e-6), Vector2::new(1e-6, 0.0)] {
        let mut w = fresh_wheel(load, 1.0);
        tyre_step(&mut w, &p, c_alpha, v, h);
        assert_eq!((w.slip_angle_rad, w.slip_ratio), (0.0, 0.0));
    }
    // Standing, the rim still: 0.3 m/s of slide to the right, on a grip
    // that holds it.
    let mut w = fresh_wheel(load, 1e3);
    let v = Vector2::new(0.0, 0.3);
    tyre_step(&mut w, &p, c_alpha, v, h);
    let u = Vector2::new(0.0, -0.3 * h);
    assert!((w.deflection_m - u).norm() < 1e-15);
    let quarter = 0.25 * p.mass_kg;
    let damping_y = 2.0 * 0.5 * (k.y * quarter).sqrt() * (1.0 - 0.3);
    let fy = k.y * u.y - damping_y * 0.3;
    assert!(
        (w.patch_n.y - fy).abs() < 1e-9 * fy.abs(),
        "{} {fy}",
        w.patch_n.y
    );
    assert!(w.patch_n.x.abs() < 1e-12);
}

/// The skid-steer's shaft power is both sides' |τ·ω|, each side's torque
/// from its own DC motor law τ = T_stall·(u − ω/ω₀): in a pivot the two
/// sides turn opposite ways and both do work.
#[test]
fn a_pivoting_skid_steer_draws_power_on_both_sides() {
    let p = jackal();
    let omega0 = p.top_speed_m_s / p.wheel_radius_m;
    let mut d = Drive::new(p.clone());
    d.run(2.0, &[1.0, -1.0], 0.8);
    let side = |i: usize| {
        let omega = d.rover.wheels[i].spin_rad_s;
        let u = d.rover.motor_cmd[i % 2];
        let tau = p.motor_stall_torque_nm * (u - omega / omega0).clamp(-1.0, 1.0);
        (tau * omega).abs()
    };
    let (left, right) = (side(0), side(1));
    assert!(d.rover.wheels[0].spin_rad_s > 1.0 && d.rover.wheels[1].spin_rad_s < -1.0);
    assert!(left > 1.0 && right > 1.0, "{left} W, {right} W");
    // The power is of the step just taken: compare with the spin before it.
    let before = (side(0), side(1));
    d.step(&[1.0, -1.0], [0.8; 4]);
    let got = d.rover.shaft_power_w();
    assert!((got / (before.0 + before.1) - 1.0).abs() < 0.01, "{got} W");
}

/// A tick is cut into the fewest sub-steps that keep the stiffest wheel's
/// spin-against-tyre oscillation, ω_n = r·√(k/I) with k = C_κ·2F_z,max/σ,
/// within SUBSTEP_PHASE_RAD a sub-step: more for a longer tick, and at most
/// MAX_SUBSTEPS.
#[test]
fn a_tick_is_cut_into_the_fewest_stable_substeps() {
    let mut seen_many = false;
    for p in [jackal(), f1tenth()] {
        let load = p.static_loads_n(G).iter().fold(0.0, |a: f64, b| a.max(*b));
        let k = p.slip_stiffness * 2.0 * load / p.relaxation_length_m;
        let inertia = match p.drive {
            RoverDrive::SkidSteer => 2.0 * p.wheel_inertia_kg_m2,
            RoverDrive::Ackermann => p.wheel_inertia_kg_m2,
        };
        let omega_n = p.wheel_radius_m * (k / inertia).sqrt();
        let mut last = 0;
        for dt in [0.00025, 0.001, 0.004] {
            let n = Rover::new(p.clone(), dt, G).substeps;
            let phase = |n: usize| omega_n * dt / n as f64;
            assert!(phase(n) <= SUBSTEP_PHASE_RAD, "{dt}: {n}");
            assert!(n == 1 || phase(n - 1) > SUBSTEP_PHASE_RAD, "{dt}: {n}");
            assert!(n >= last);
            last = n;
            seen_many |= n > 1;
        }
        assert_eq!(Rover::new(p.clone(), 1e3, G).substeps, MAX_SUBSTEPS);
        assert_eq!(Rover::new(p, f64::INFINITY, G).substeps, MAX_SUBSTEPS);
    }
    assert!(seen_many);
}
