//! The loop on several threads: the same world to the bit as on one, the
//! threads each controller runs on, and the default number of threads.

use mavsitl_core::controller::{Actuators, ControllerError, FlightController, SensorFrame};
use mavsitl_core::time::SimTime;
use mavsitl_sim::sim::{default_threads, Lockstep, SimError, PARALLEL_MIN_VEHICLES};

/// 12 quads on passive commands, climbing or sinking by their index, two of
/// them a hand's breadth apart (they collide, and their motors stop), the
/// others 15 m apart along north through a zone of wind from 5 m up, under
/// a gust.
fn world() -> Lockstep {
    let v: Vec<String> = (0..12)
        .map(|i| {
            let u = 0.64 + 0.01 * i as f64;
            let (n, e) = if i == 11 { (0.0, 0.1) } else { (15.0 * i as f64, 0.0) };
            format!(
                r#"{{"name": "q{i}", "kind": "multirotor", "initial": {{"north_m": {n}, "east_m": {e},
                "height_m": 4}}, "controller": {{"kind": "passive", "controls": [{u}, {u}, {u}, {u}]}}}}"#
            )
        })
        .collect();
    let text = format!(
        r#"{{"environment": {{"turbulence": {{}}, "zones": [{{"name": "z", "shape": {{"box":
        {{"min_ned_m": [40, -10, -60], "max_ned_m": [200, 10, -5]}}}}, "wind": {{"speed_m_s": 8, "from_deg": 90}}}}]}},
        "vehicles": [{}]}}"#,
        v.join(",")
    );
    crate::scenario(&text, &["wind_gust@0.5s+1s:peak_m_s=3"]).1
}

/// Every vehicle's state, battery, last sensor samples and zones, the zone events, the
/// collisions and the wrecks after `secs` on `threads` threads.
fn run(threads: usize, secs: u64) -> String {
    let mut ls = world();
    ls.set_threads(threads).expect("threads");
    assert_eq!(ls.threads(), threads);
    ls.run_until(SimTime::from_secs(secs), &mut ())
        .expect("run");
    let sim = ls.sim();
    let mut out = String::new();
    for (i, v) in sim.vehicles().iter().enumerate() {
        out += &format!(
            "{:?} {:?} {:?} {} {}\n",
            v.ground_truth(),
            v.battery().state(),
            v.samples(),
            v.zone_mask(),
            sim.is_wrecked(i)
        );
    }
    out + &format!(
        "{:?} {:?} {} {}",
        sim.zone_events(),
        sim.encounters().map(|e| e.collisions().len()),
        sim.tick(),
        sim.time().as_micros()
    )
}

#[test]
fn a_world_on_two_or_three_threads_is_the_world_on_one_to_the_bit() {
    let one = run(1, 3);
    // Something happened to compare: zones entered, a collision, wrecks.
    assert!(
        one.contains("Enter") && one.contains("Some(1)") && one.contains("true"),
        "{one}"
    );
    assert!(one.ends_with(" 3000 3000000"), "{one}");
    for threads in [2, 3] {
        assert_eq!(run(threads, 3), one, "{threads} threads");
    }
    // And the comparison can fail: a second longer is another world.
    assert_ne!(run(2, 4), one);
}

#[test]
fn a_world_takes_every_core_from_a_hundred_vehicles_on() {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    assert_eq!(PARALLEL_MIN_VEHICLES, 100);
    for (n, threads) in [(0, 1), (1, 1), (99, 1), (100, cores), (5000, cores)] {
        assert_eq!(default_threads(n), threads, "{n} vehicles");
    }
}

/// A controller that notes the thread it is asked for commands and handed
/// its frames on.
struct OnThread(
    mavsitl_core::shared::Shared<Vec<(usize, Option<String>)>>,
    usize,
);

impl mavsitl_core::controller::FlightController for OnThread {
    fn name(&self) -> &str {
        "on-thread"
    }
    fn rate_hz(&self) -> u32 {
        1000
    }
    fn actuators(
        &mut self,
        _now: SimTime,
    ) -> Result<mavsitl_core::controller::Actuators, mavsitl_core::controller::ControllerError>
    {
        let name = std::thread::current().name().map(str::to_string);
        self.0.borrow_mut().push((self.1, name));
        Ok(Default::default())
    }
    fn receive(
        &mut self,
        _frame: &mavsitl_core::controller::SensorFrame,
    ) -> Result<(), mavsitl_core::controller::ControllerError> {
        let name = std::thread::current().name().map(str::to_string);
        self.0.borrow_mut().push((self.1, name));
        Ok(())
    }
}

/// The threads each controller is asked for commands and handed its
/// frames on, over three ticks taken one by one: on one thread the
/// caller's; on `t`, controller `i` of 12 on the same thread tick after
/// tick, the caller's for the first share of `12/t` and a worker's of the
/// team's own (`mavsitl-step-k`) for each further share. (The leader's
/// share adapts by 1/1024 of the items a stage: over three ticks, nine
/// stages, it moves by less than a tenth of one of the 12 and rounds to the
/// same split.)
#[test]
fn each_controller_runs_on_its_own_share_s_thread_tick_after_tick() {
    let caller = std::thread::current().name().map(str::to_string);
    for threads in [1, 2, 3] {
        let seen = mavsitl_core::shared::Shared::new(Vec::new());
        let mut ls = world();
        for v in 0..12 {
            ls.detach(v);
            ls.attach(v, Box::new(OnThread(seen.clone(), v)))
                .expect("attach");
        }
        ls.set_threads(threads).expect("threads");
        for _ in 0..3 {
            ls.tick(&mut ()).expect("tick");
        }
        let names = seen.borrow();
        // Commands and frames for each controller, each tick.
        assert_eq!(names.len(), 3 * 12 * 2);
        let share = 12 / threads;
        for (controller, name) in names.iter() {
            let expected = match controller / share {
                0 => caller.clone(),
                w => Some(format!("mavsitl-step-{w}")),
            };
            assert_eq!(
                name, &expected,
                "{threads} threads, controller {controller}"
            );
        }
        for c in 0..12 {
            assert_eq!(names.iter().filter(|(i, _)| *i == c).count(), 6, "{c}");
        }
    }
}

/// A controller at 1 kHz (or `rate_hz`) that commands `throttle` or
/// fails, takes its frames or fails, and reports item `reached`.
struct Told {
    name: &'static str,
    rate_hz: u32,
    throttle: Result<f64, &'static str>,
    receive: Result<(), &'static str>,
    reached: Option<u32>,
}

impl FlightController for Told {
    fn name(&self) -> &str {
        self.name
    }
    fn rate_hz(&self) -> u32 {
        self.rate_hz
    }
    fn actuators(&mut self, _now: SimTime) -> Result<Actuators, ControllerError> {
        let fail = |e: &str| ControllerError::Protocol(e.to_string());
        let u = self.throttle.map_err(fail)?;
        Ok(Actuators::from_slice(&[u; 4]))
    }
    fn receive(&mut self, _frame: &SensorFrame) -> Result<(), ControllerError> {
        self.receive
            .map_err(|e| ControllerError::Protocol(e.to_string()))
    }
    fn mission_progress(&self) -> Option<u32> {
        self.reached
    }
}

/// Three quads flown by `told`, on `threads` threads.
fn told(told: [Told; 3], threads: usize) -> Lockstep {
    let quad = r#"{"kind": "multirotor", "controller": {"kind": "passive"}}"#;
    let text = format!(r#"{{"vehicles": [{quad}, {quad}, {quad}]}}"#);
    let mut ls = crate::scenario(&text, &[]).1;
    for (v, c) in told.into_iter().enumerate() {
        ls.detach(v);
        ls.attach(v, Box::new(c)).expect("attach");
    }
    ls.set_threads(threads).expect("threads");
    ls
}

/// When controllers fail, every other controller's commands are still
/// put in force and every item reached noted, in slot order; the error
/// is the first slot's, on one thread and on two.
#[test]
fn a_failing_controller_loses_nothing_of_the_others_and_the_first_error_is_told() {
    let c = |name, throttle, receive, reached| Told {
        name,
        rate_hz: 1000,
        throttle,
        receive,
        reached,
    };
    for threads in [1, 2] {
        let mut ls = told(
            [
                c("a", Err("a's commands"), Ok(()), None),
                c("b", Ok(0.4), Ok(()), None),
                c("c", Err("c's commands"), Ok(()), None),
            ],
            threads,
        );
        let e = ls.tick(&mut ()).expect_err("a fails");
        assert!(e.to_string().contains("a's commands"), "{e}");
        assert!(matches!(e, SimError::Controller { ref name, .. } if name == "a"));
        assert_eq!(
            ls.sim().actuators(1),
            Some(&Actuators::from_slice(&[0.4; 4]))
        );
        assert_eq!(ls.sim().tick(), 0, "no physics after a failure");
        let mut ls = told(
            [
                c("a", Ok(0.3), Ok(()), Some(2)),
                c("b", Ok(0.4), Err("b's frame"), Some(3)),
                c("c", Ok(0.5), Err("c's frame"), Some(5)),
            ],
            threads,
        );
        let e = ls.tick(&mut ()).expect_err("b fails");
        assert!(
            matches!(e, SimError::Controller { ref name, .. } if name == "b"),
            "{e}"
        );
        assert!(e.to_string().contains("b's frame"), "{e}");
        assert_eq!(
            (0..3).map(|v| ls.sim().item_reached(v)).collect::<Vec<_>>(),
            [Some(2), Some(3), Some(5)]
        );
        assert_eq!(
            ls.sim().actuators(2),
            Some(&Actuators::from_slice(&[0.5; 4]))
        );
    }
}

/// A 250 Hz controller's frame is delivered at the end of ticks 3, 7,
/// …: its failure to take one is told on the tick that delivered it,
/// at its end (4 ms), on one thread and on two.
#[test]
fn a_failed_delivery_is_told_on_its_own_tick() {
    for threads in [1, 2] {
        let c = |name, receive| Told {
            name,
            rate_hz: 250,
            throttle: Ok(0.3),
            receive,
            reached: None,
        };
        let mut ls = told(
            [c("a", Ok(())), c("b", Err("b's frame")), c("c", Ok(()))],
            threads,
        );
        for tick in 0..3 {
            assert!(ls.tick(&mut ()).is_ok(), "tick {tick}");
        }
        let e = ls.tick(&mut ()).expect_err("the delivery fails");
        let at = SimTime::from_micros(4000);
        assert!(
            matches!(e, SimError::Controller { ref name, time, .. } if name == "b" && time == at),
            "{e}"
        );
    }
}
