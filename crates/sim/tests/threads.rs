//! The loop on several threads: the same world to the bit as on one, the
//! loop run inside the pool, and the default number of threads.

use mavsitl_core::time::SimTime;
use mavsitl_sim::sim::{default_threads, Lockstep, Observer, Simulation, PARALLEL_MIN_VEHICLES};

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
    assert_eq!(ls.pool().is_some(), threads > 1);
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

/// The thread each tick was observed on.
#[derive(Default)]
struct Threads(Vec<Option<String>>);

impl Observer for Threads {
    fn on_tick(&mut self, _sim: &Simulation) -> std::io::Result<()> {
        if self.0.len() < 3 {
            self.0
                .push(std::thread::current().name().map(str::to_string));
        }
        Ok(())
    }
}

/// On several threads the loop itself runs inside the pool (so that a tick
/// is handed out without allocating); on one, on the caller's thread.
#[test]
fn on_several_threads_the_loop_runs_inside_the_pool() {
    for (threads, inside) in [(1, false), (2, true)] {
        let mut ls = world();
        ls.set_threads(threads).expect("threads");
        let mut seen = Threads::default();
        ls.run_until(SimTime::from_micros(3_000), &mut seen)
            .expect("run");
        assert_eq!(seen.0.len(), 3);
        for name in &seen.0 {
            let pooled = name
                .as_deref()
                .is_some_and(|n| n.starts_with("mavsitl-step-"));
            assert_eq!(pooled, inside, "{threads} threads: {name:?}");
        }
        // Going back to one thread leaves the pool.
        ls.set_threads(1).expect("one");
        assert!(ls.pool().is_none());
        assert_eq!(ls.threads(), 1);
    }
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
struct OnThread(mavsitl_core::shared::Shared<Vec<Option<String>>>);

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
        self.0.borrow_mut().push(name);
        Ok(Default::default())
    }
    fn receive(
        &mut self,
        _frame: &mavsitl_core::controller::SensorFrame,
    ) -> Result<(), mavsitl_core::controller::ControllerError> {
        let name = std::thread::current().name().map(str::to_string);
        self.0.borrow_mut().push(name);
        Ok(())
    }
}

/// A tick taken from outside the pool (not through `run_until`) hands its
/// controllers and vehicles to the world's own threads, not to rayon's
/// global ones; on one thread they run on the caller's.
#[test]
fn a_tick_from_outside_runs_its_controllers_on_the_worlds_threads() {
    for (threads, pooled) in [(2, true), (1, false)] {
        let seen = mavsitl_core::shared::Shared::new(Vec::new());
        let mut ls = world();
        for v in 0..12 {
            ls.detach(v);
            ls.attach(v, Box::new(OnThread(seen.clone())))
                .expect("attach");
        }
        ls.set_threads(threads).expect("threads");
        for _ in 0..3 {
            ls.tick(&mut ()).expect("tick");
        }
        let names = seen.borrow();
        assert_eq!(names.len(), 3 * 12 * 2);
        let ours =
            |n: &Option<String>| n.as_deref().is_some_and(|n| n.starts_with("mavsitl-step-"));
        assert!(
            names.iter().all(|n| ours(n) == pooled),
            "{threads}: {names:?}"
        );
    }
}
