//! The simulation's own bookkeeping: collisions taking vehicles out, the
//! proximity range, the fault schedule it was given and the errors a run
//! stops with.

use mavsitl_core::controller::ControllerError;
use mavsitl_core::time::SimTime;
use mavsitl_sim::sim::{Lockstep, SimError};

fn build(text: &str, faults: &[&str]) -> Lockstep {
    crate::scenario(text, faults).1
}

/// Quads at these (north, east) places, 10 m up, rotors at 60 %.
fn quads(at: &[(f64, f64)]) -> String {
    let v: Vec<String> = at
        .iter()
        .enumerate()
        .map(|(i, (n, e))| {
            format!(
                r#"{{"name": "q{i}", "kind": "multirotor", "initial": {{"north_m": {n}, "east_m": {e},
                "height_m": 10, "rotor_commands": [0.6, 0.6, 0.6, 0.6]}},
                "controller": {{"kind": "passive", "controls": [0.6, 0.6, 0.6, 0.6]}}}}"#
            )
        })
        .collect();
    format!(r#"{{"vehicles": [{}]}}"#, v.join(","))
}

#[test]
fn a_collision_takes_both_vehicles_out_and_no_other() {
    // q0 and q1 a hand's breadth apart; q2 50 m off.
    let mut ls = build(&quads(&[(0.0, 0.0), (0.0, 0.1), (50.0, 0.0)]), &[]);
    assert!(!ls.sim().is_wrecked(0));
    ls.run_until(SimTime::from_micros(1000), &mut ()).unwrap();
    let sim = ls.sim();
    assert_eq!(sim.encounters().map(|m| m.collisions().len()), Some(1));
    assert!(sim.is_wrecked(0) && sim.is_wrecked(1));
    assert!(!sim.is_wrecked(2));
    assert!(!sim.is_wrecked(3), "no such vehicle");
}

#[test]
fn the_proximity_range_is_set_for_a_fleet_and_a_lone_vehicle_has_none() {
    let ls = build(&quads(&[(0.0, 0.0), (0.0, 30.0)]), &[]);
    let sim = ls.into_sim().with_proximity_m(45.0);
    assert_eq!(sim.encounters().map(|m| m.proximity_m()), Some(45.0));
    let one = build(&quads(&[(0.0, 0.0)]), &[]).into_sim();
    assert!(one.encounters().is_none());
    assert!(one.with_proximity_m(45.0).encounters().is_none());
}

#[test]
fn the_fault_schedule_is_the_scenarios() {
    let ls = build(
        &quads(&[(0.0, 0.0)]),
        &["gps_loss@1s+2s", "baro_drift_step@3s+1s:rate_m_s=0.5"],
    );
    let kinds: Vec<String> = ls
        .sim()
        .faults()
        .specs()
        .map(|(s, _)| s.describe())
        .collect();
    assert_eq!(kinds.len(), 2, "{kinds:?}");
    assert!(kinds[0].starts_with("gps_loss"), "{kinds:?}");
    assert!(kinds[1].starts_with("baro_drift_step"), "{kinds:?}");
}

#[test]
fn only_a_peer_restarting_lets_a_run_start_over() {
    let controller = |source| SimError::Controller {
        name: "px4".into(),
        time: SimTime::ZERO,
        source,
    };
    assert!(controller(ControllerError::Restarted("frame count went back".into())).is_restart());
    assert!(!controller(ControllerError::Disconnected("gone".into())).is_restart());
    assert!(!controller(ControllerError::Interrupted).is_restart());
    assert!(!SimError::Observer(std::io::Error::other("disk full")).is_restart());
}

/// The sim times (µs) at which the first vehicle's barometer sampled.
#[derive(Default)]
struct BaroTimes(Vec<u64>);

impl mavsitl_sim::sim::Observer for BaroTimes {
    fn on_tick(&mut self, sim: &mavsitl_sim::sim::Simulation) -> std::io::Result<()> {
        if sim.vehicles()[0].samples().baro.is_some() {
            self.0.push(sim.time().as_micros());
        }
        Ok(())
    }
}

/// Sampling times on the sensor's own grid from time zero: each a whole
/// number of periods, the first one period in.
fn on_grid(times: &[u64]) {
    let period = times[1] - times[0];
    assert_eq!(times[0], period, "{:?}", &times[..4]);
    for (k, t) in times.iter().enumerate() {
        assert_eq!(*t, (k as u64 + 1) * period);
    }
}

#[test]
fn sensors_sample_on_their_grid_from_time_zero_at_the_scenarios_rate() {
    let text = quads(&[(0.0, 0.0)]).replacen('{', r#"{"physics_rate_hz": 2000, "#, 1);
    let mut ls = build(&text, &[]);
    assert_eq!(ls.sim().rate().hz(), 2000);
    let mut seen = BaroTimes::default();
    ls.run_until(SimTime::from_secs(1), &mut seen).unwrap();
    assert!(seen.0.len() >= 10, "{:?}", seen.0);
    on_grid(&seen.0);
    assert_eq!(ls.sim().tick(), 2000);
}

#[test]
fn a_replayed_vehicle_is_placed_samples_on_its_grid_and_crosses_zones() {
    use mavsitl_sim::physics::BodyState;
    use mavsitl_sim::replay::KinematicState;
    use mavsitl_sim::world::ZoneTransition;
    use nalgebra::Vector3;
    let text = r#"{"environment": {"zones": [{"name": "box",
      "shape": {"box": {"min_ned_m": [5, -5, -50], "max_ned_m": [15, 5, 0]}}},
      {"name": "aside", "shape": {"box": {"min_ned_m": [0, 10, -50], "max_ned_m": [50, 20, 0]}}},
      {"name": "far", "shape": {"box": {"min_ned_m": [17.055, -5, -50], "max_ned_m": [19.055, 5, 0]}}}]},
      "vehicles": [{"name": "q", "kind": "multirotor",
      "controller": {"kind": "passive", "controls": [0, 0, 0, 0]}}]}"#;
    let mut sim = build(text, &[]).into_sim();
    let mut baro = Vec::new();
    // 10 m/s north, 10 m up, from the origin: in the box from 0.5 s to 1.5 s.
    for k in 1..=2000u64 {
        let t = k as f64 * 1e-3;
        let kin = KinematicState {
            state: BodyState {
                pos_ned_m: Vector3::new(10.0 * t, 0.0, -10.0),
                vel_ned_m_s: Vector3::new(10.0, 0.0, 0.0),
                ..BodyState::default()
            },
            accel_ned_m_s2: Vector3::zeros(),
            ang_accel_frd_rad_s2: Vector3::zeros(),
        };
        sim.step_replay(0, &kin);
        assert_eq!(
            sim.vehicles()[0].body().state.pos_ned_m,
            kin.state.pos_ned_m
        );
        if sim.vehicles()[0].samples().baro.is_some() {
            baro.push(sim.time().as_micros());
        }
    }
    assert_eq!((sim.tick(), sim.time()), (2000, SimTime::from_secs(2)));
    on_grid(&baro);
    let events = sim.take_zone_events();
    assert!(sim.zone_events().is_empty());
    let seen: Vec<(u64, usize, ZoneTransition)> = events
        .iter()
        .map(|e| (e.time.as_micros(), e.zone, e.transition))
        .collect();
    // Each noted at the start of the tick whose end is first inside (at
    // 0.5 s, on the box's face) or outside (at 1.501 s); the zone aside is
    // never entered.
    assert_eq!(
        seen,
        [
            (499_000, 0, ZoneTransition::Enter),
            (1_500_000, 0, ZoneTransition::Exit),
            (1_705_000, 2, ZoneTransition::Enter),
            (1_905_000, 2, ZoneTransition::Exit),
        ]
    );
}

#[test]
fn commands_states_and_wind_set_from_outside_are_the_ones_in_force() {
    use mavsitl_core::controller::Actuators;
    use mavsitl_sim::physics::BodyState;
    use nalgebra::Vector3;
    let mut ls = build(&quads(&[(0.0, 0.0), (0.0, 30.0)]), &[]);
    let sim = ls.sim_mut();
    let mut a = Actuators::default();
    a.controls[2] = 0.25;
    sim.set_actuators(1, a);
    assert_eq!(sim.actuators(1).map(|a| a.controls[2]), Some(0.25));
    assert_eq!(sim.actuators(0).map(|a| a.controls[2]), Some(0.0));
    assert!(sim.actuators(2).is_none());
    let place = BodyState {
        pos_ned_m: Vector3::new(3.0, -4.0, -20.0),
        ..BodyState::default()
    };
    sim.set_vehicle_state(1, place);
    assert_eq!(sim.vehicles()[1].body().state.pos_ned_m, place.pos_ned_m);
    sim.set_wind_ned_m_s(Vector3::new(1.0, 2.0, 0.0));
    sim.step().unwrap();
    let env = sim.vehicles()[0].environment().unwrap();
    assert_eq!(env.wind_ned_m_s, Vector3::new(1.0, 2.0, 0.0));
}

#[test]
fn a_detached_vehicle_keeps_the_commands_it_was_given() {
    use mavsitl_core::controller::Actuators;
    // Both flown by passive controllers holding 60 %.
    let mut ls = build(&quads(&[(0.0, 0.0), (0.0, 30.0)]), &[]);
    ls.detach(0);
    for i in 0..2 {
        ls.sim_mut().set_actuators(i, Actuators::default());
    }
    ls.tick(&mut ()).unwrap();
    let control = |i| ls.sim().actuators(i).map(|a| a.controls[0]);
    assert_eq!((control(0), control(1)), (Some(0.0), Some(0.6)));
}

#[test]
fn a_vehicle_occupies_its_rotor_tips_or_its_furthest_fitting() {
    use mavsitl_sim::physics::multirotor::RotorOutput;
    use mavsitl_sim::vehicle::VehicleModel;
    let text = r#"{"environment": {"zones": [{"name": "pad",
      "shape": {"box": {"min_ned_m": [-5, -5, -50], "max_ned_m": [5, 5, 5]}}}]},
      "vehicles": [
      {"name": "quad", "kind": "multirotor",
       "controller": {"kind": "passive", "controls": [0.3, 0.3, 0.3, 0.3]}},
      {"name": "boat", "kind": "boat", "airframe": "usv_twin", "initial": {"north_m": 50},
       "controller": {"kind": "passive", "controls": [0, 0]}},
      {"name": "big", "kind": "multirotor", "collision_radius_m": 2.5, "initial": {"north_m": -50},
       "controller": {"kind": "passive", "controls": [0, 0, 0, 0]}}]}"#;
    let mut ls = build(text, &[]);
    ls.run_until(SimTime::from_secs(1), &mut ()).unwrap();
    let v = ls.sim().vehicles();
    // The generic quad's 0.2275 m arms and 9-inch props; the twin
    // hull's rudder 0.75 m aft; a scenario's own radius.
    assert!((v[0].collision_radius_m() - (0.2275 + 0.2286 / 2.0)).abs() < 1e-12);
    assert_eq!(v[1].collision_radius_m(), 0.75);
    assert_eq!(v[2].collision_radius_m(), 2.5);
    assert_eq!(v.iter().map(|v| v.id()).collect::<Vec<_>>(), [0, 1, 2]);
    assert_eq!(
        v.iter().map(|v| v.zone_mask()).collect::<Vec<_>>(),
        [1, 0, 0]
    );
    // Standing on its gear at 30 %; the boat has no ground.
    assert!(v[0].contact().on_ground());
    assert!(!v[1].contact().on_ground());
    // The ESCs report the rotors' speeds.
    let esc = v[0].esc_sample().expect("a multirotor's ESCs");
    let VehicleModel::Multirotor(m) = v[0].model() else {
        panic!("a multirotor")
    };
    let mut rotors = [RotorOutput::default(); 8];
    m.rotor_outputs(1.0, &mut rotors);
    assert_eq!(esc.count, 4);
    assert!(rotors[0].speed_rad_s > 100.0);
    for (e, r) in esc.speed_rad_s.iter().zip(&rotors).take(4) {
        assert_eq!(*e, r.speed_rad_s);
    }
    assert!(v[1].esc_sample().is_none());
}

/// A controller at 250 Hz that notes when it is asked for commands and
/// when its frames arrive, and with how many IMU samples.
struct Clocked(mavsitl_core::shared::Shared<Vec<(char, u64, usize)>>);

impl mavsitl_core::controller::FlightController for Clocked {
    fn name(&self) -> &str {
        "clocked"
    }
    fn rate_hz(&self) -> u32 {
        250
    }
    fn actuators(
        &mut self,
        now: SimTime,
    ) -> Result<mavsitl_core::controller::Actuators, ControllerError> {
        self.0.borrow_mut().push(('a', now.as_micros(), 0));
        Ok(Default::default())
    }
    fn receive(
        &mut self,
        frame: &mavsitl_core::controller::SensorFrame,
    ) -> Result<(), ControllerError> {
        self.0
            .borrow_mut()
            .push(('f', frame.time.as_micros(), frame.imu.len()));
        Ok(())
    }
}

#[test]
fn a_controller_is_asked_at_the_start_of_its_interval_and_answered_at_its_end() {
    let log = mavsitl_core::shared::Shared::new(Vec::new());
    let mut ls = build(&quads(&[(0.0, 0.0)]), &[]);
    ls.detach(0);
    ls.attach(0, Box::new(Clocked(log.clone()))).unwrap();
    ls.run_until(SimTime::from_micros(12_000), &mut ()).unwrap();
    // 1 kHz physics, 250 Hz IMU: one sample per 4 ms interval.
    assert_eq!(
        *log.borrow(),
        [
            ('a', 0, 0),
            ('f', 4000, 1),
            ('a', 4000, 0),
            ('f', 8000, 1),
            ('a', 8000, 0),
            ('f', 12_000, 1)
        ]
    );
    let e = ls.attach(3, Box::new(Clocked(log.clone()))).unwrap_err();
    assert_eq!(
        e.to_string(),
        "controller 'clocked' is attached to vehicle 3, but there are 1 vehicles"
    );
}
