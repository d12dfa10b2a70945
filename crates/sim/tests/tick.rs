//! What one tick derives from the state it integrated: the accelerations
//! and the specific force the IMU measures, the turbulence the vehicle
//! flies through, and the power its battery delivers. Each is checked
//! against the states seen before and after the tick, tick by tick.

use mavsitl_core::controller::GroundTruth;
use mavsitl_core::rng::{noise_rng, NoiseSource};
use mavsitl_core::time::SimTime;
use mavsitl_sim::physics::BodyState;
use mavsitl_sim::replay::KinematicState;
use mavsitl_sim::sim::{Lockstep, Observer, Simulation};
use mavsitl_sim::vehicle::VehicleModel;
use mavsitl_sim::world::Turbulence;
use nalgebra::{UnitQuaternion, Vector3};

fn build(text: &str) -> Lockstep {
    crate::scenario(text, &[]).1
}

/// Per tick: the ground truth, the wind the tick used, the air density,
/// the shaft power of the rotors and the energy drawn so far.
#[derive(Default)]
struct Seen(Vec<(GroundTruth, Vector3<f64>, f64, f64, f64)>);

impl Observer for Seen {
    fn on_tick(&mut self, sim: &Simulation) -> std::io::Result<()> {
        let v = &sim.vehicles()[0];
        let env = v.environment().expect("after a tick");
        let shaft = match v.model() {
            VehicleModel::Multirotor(m) => m.shaft_power_w(env.air.density_kg_m3),
            VehicleModel::Boat(_) => 0.0,
            VehicleModel::Rover(r) => r.shaft_power_w(),
        };
        self.0.push((
            v.ground_truth(),
            env.wind_ned_m_s,
            env.air.density_kg_m3,
            shaft,
            v.battery().state().consumed_j,
        ));
        Ok(())
    }
}

/// A quad 30 m up, flying north at 8 m/s on uneven rotors (turning and
/// accelerating), in a 5 m/s wind from the east with Dryden turbulence;
/// its battery without internal resistance or avionics load, at 50 %
/// propulsion efficiency.
const GUSTY: &str = r#"{"seed": 21, "environment": {"wind": {"speed_m_s": 5, "from_deg": 90},
  "turbulence": {"w20_m_s": 7.7}},
  "vehicles": [{"name": "q", "kind": "multirotor",
  "initial": {"height_m": 30, "velocity_ned_m_s": [8, 0, 0], "rotor_commands": [0.6, 0.6, 0.6, 0.6]},
  "battery": {"internal_resistance_ohm": 0, "avionics_current_a": 0, "propulsion_efficiency": 0.5},
  "controller": {"kind": "passive", "controls": [0.6, 0.63, 0.58, 0.61]}}]}"#;

fn fly_gusty(secs: f64) -> (Lockstep, BodyState, Seen) {
    let mut ls = build(GUSTY);
    let start = ls.sim().vehicles()[0].body().state;
    let mut seen = Seen::default();
    ls.run_until(SimTime::from_secs_f64(secs), &mut seen)
        .unwrap();
    (ls, start, seen)
}

#[test]
fn accelerations_and_specific_force_are_the_ticks_differences() {
    let (ls, start, seen) = fly_gusty(2.0);
    let dt = ls.sim().rate().dt_s();
    let g = Vector3::new(
        0.0,
        0.0,
        ls.sim().vehicles()[0]
            .environment()
            .unwrap()
            .gravity_ned_m_s2
            .z,
    );
    assert!((g.z - 9.806_65).abs() < 1e-12);
    let mut before = (start.vel_ned_m_s, start.rate_frd_rad_s);
    for (k, (gt, ..)) in seen.0.iter().enumerate() {
        let accel = (gt.vel_ned_m_s - before.0) / dt;
        let ang = (gt.rate_frd_rad_s - before.1) / dt;
        assert!((gt.accel_ned_m_s2 - accel).norm() < 1e-9, "tick {k}");
        assert!((gt.ang_accel_frd_rad_s2 - ang).norm() < 1e-9, "tick {k}");
        let f = gt.att_ned_frd.inverse() * (accel - g);
        assert!((gt.specific_force_frd_m_s2 - f).norm() < 1e-9, "tick {k}");
        before = (gt.vel_ned_m_s, gt.rate_frd_rad_s);
    }
    // Not a trivial flight: it speeds up, turns and sinks or climbs.
    let last = &seen.0.last().unwrap().0;
    assert!(last.rate_frd_rad_s.norm() > 0.1, "{}", last.rate_frd_rad_s);
    assert!((last.vel_ned_m_s - start.vel_ned_m_s).norm() > 0.5);
}

/// A vehicle placed from outside keeps its last tick's accelerations until
/// it is stepped again; the next tick's are taken from where it was put.
#[test]
fn a_placed_vehicle_keeps_its_ticks_accelerations_until_the_next() {
    let (mut ls, _, _) = fly_gusty(0.5);
    let dt = ls.sim().rate().dt_s();
    let last = ls.sim().vehicles()[0].ground_truth();
    assert!(last.accel_ned_m_s2.norm() > 0.1, "{}", last.accel_ned_m_s2);
    let placed = BodyState {
        pos_ned_m: Vector3::new(5.0, 5.0, -40.0),
        vel_ned_m_s: Vector3::new(-3.0, 2.0, 1.0),
        rate_frd_rad_s: Vector3::new(0.5, -0.5, 0.2),
        att_ned_frd: UnitQuaternion::from_euler_angles(0.2, -0.1, 1.0),
    };
    let sim = ls.sim_mut();
    sim.set_vehicle_state(0, placed);
    let kept = sim.vehicles()[0].ground_truth();
    assert_eq!(kept.pos_ned_m, placed.pos_ned_m);
    assert_eq!(
        (kept.accel_ned_m_s2, kept.ang_accel_frd_rad_s2),
        (last.accel_ned_m_s2, last.ang_accel_frd_rad_s2)
    );
    assert_eq!(kept.specific_force_frd_m_s2, last.specific_force_frd_m_s2);
    sim.step().unwrap();
    let next = sim.vehicles()[0].ground_truth();
    let accel = (next.vel_ned_m_s - placed.vel_ned_m_s) / dt;
    let ang = (next.rate_frd_rad_s - placed.rate_frd_rad_s) / dt;
    assert_eq!(
        (next.accel_ned_m_s2, next.ang_accel_frd_rad_s2),
        (accel, ang)
    );
    // Pushed towards the ground's weight from the placed state, nowhere near
    // the jump a difference from the unplaced state would show.
    assert!(accel.norm() < 30.0, "{accel}");
}

#[test]
fn the_gust_is_the_dryden_process_at_the_airspeed_and_height_of_the_tick() {
    let (ls, start, seen) = fly_gusty(2.0);
    let dt = ls.sim().rate().dt_s();
    let mean = ls.sim().world().mean_wind_ned_m_s(0);
    assert!((mean - Vector3::new(0.0, -5.0, 0.0)).norm() < 1e-12);
    let mut t = Turbulence::new(7.7, noise_rng(21, 0, NoiseSource::Turbulence));
    let mut before = (start.pos_ned_m, start.vel_ned_m_s);
    let mut largest: f64 = 0.0;
    for (k, (gt, wind, ..)) in seen.0.iter().enumerate() {
        let airspeed = (before.1 - mean).norm();
        let gust = t.step(dt, -before.0.z, airspeed, &mean);
        assert!((wind - (mean + gust)).norm() < 1e-12, "tick {k}");
        largest = largest.max(gust.norm());
        before = (gt.pos_ned_m, gt.vel_ned_m_s);
    }
    assert!(largest > 0.3, "gusts up to {largest} m/s");
}

#[test]
fn the_battery_delivers_the_rotors_shaft_power_over_the_propulsion_efficiency() {
    let (ls, _, seen) = fly_gusty(1.0);
    let dt = ls.sim().rate().dt_s();
    let mut drawn = 0.0;
    for (k, (_, _, _, shaft, consumed)) in seen.0.iter().enumerate() {
        let tick = consumed - drawn;
        assert!(
            (tick - shaft / 0.5 * dt).abs() < 1e-9 * tick.max(1e-9),
            "tick {k}: {tick} J against {} J",
            shaft / 0.5 * dt
        );
        drawn = *consumed;
    }
    assert!(drawn > 100.0, "{drawn} J");
}

#[test]
fn a_replayed_pose_measures_gravity_through_its_attitude() {
    let text = r#"{"vehicles": [{"name": "q", "kind": "multirotor",
      "controller": {"kind": "passive", "controls": [0, 0, 0, 0]}}]}"#;
    let mut sim = build(text).into_sim();
    // Rolled 30° right, accelerating 2 m/s² north.
    let att = UnitQuaternion::from_euler_angles(30f64.to_radians(), 0.0, 0.0);
    let kin = KinematicState {
        state: BodyState {
            pos_ned_m: Vector3::new(0.0, 0.0, -10.0),
            att_ned_frd: att,
            ..BodyState::default()
        },
        accel_ned_m_s2: Vector3::new(2.0, 0.0, 0.0),
        ang_accel_frd_rad_s2: Vector3::zeros(),
    };
    sim.step_replay(0, &kin);
    let f = sim.vehicles()[0].ground_truth().specific_force_frd_m_s2;
    let g = 9.806_65;
    let (s, c) = 30f64.to_radians().sin_cos();
    let want = Vector3::new(2.0, -g * s, -g * c);
    assert!((f - want).norm() < 1e-12, "{f} against {want}");
}
