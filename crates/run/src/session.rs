//! The run loop, written once for every command that runs a world:
//! `fly`, `serve`, `px4`, `ardupilot`, `airsim`, the fleets and `sim`
//! (`replay` plays a recording back, and `compare`/`test` run these).
//!
//! A [`Session`] owns the world, the pacing against the wall clock, the
//! recording and the run's end. Whatever flies and serves the vehicles
//! plugs in as a [`Driver`]: SimpleFlight with or without its ground-station
//! link, a launched PX4 or ArduPilot, an AirSim client, or N of them in one
//! fleet. The driver says after each tick whether the run goes on, ends, or
//! starts over on a fresh world; the session does the rest the same way for
//! all of them.
//!
//! Per iteration, in this order:
//!
//! 1. stop on an interrupt ([`Driver::interrupted`] says how it ends) or at
//!    the run's end (sim time ≥ `end`);
//! 2. [`Driver::ready`]: a paused or not yet connected world idles 20 ms;
//! 3. a tick early for the pacer idles (at most 2 ms, so the network and
//!    Ctrl-C stay served); [`Driver::idle`] serves the links, so the next
//!    [`Driver::serve`] comes `service_every` after it;
//! 4. [`Driver::serve`] when `service_every` of sim time has passed since
//!    the last service;
//! 5. one tick, observed by the driver first and then the recorder;
//! 6. [`Driver::after_tick`] judges it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mavsitl_core::time::SimTime;
use mavsitl_sim::record::Recorder;
use mavsitl_sim::sim::{Lockstep, Observer, SimError, Simulation};

use crate::pacing::{Pacer, Speedup};

/// Longest idle while a tick is early, so links and Ctrl-C stay served.
const MAX_IDLE: Duration = Duration::from_millis(2);

/// Idle while the driver is not ready (paused, no firmware yet).
const NOT_READY_IDLE: Duration = Duration::from_millis(20);

/// A world the loop ticks: a lockstep of controllers and physics, or
/// something that holds one (the AirSim API).
pub trait World {
    /// The simulation, for sim time and the observers.
    fn sim(&self) -> &Simulation;
    /// Advances one physics tick, `observer` seeing the result.
    fn tick(&mut self, observer: &mut dyn Observer) -> Result<(), SimError>;
}

impl World for Lockstep {
    fn sim(&self) -> &Simulation {
        Lockstep::sim(self)
    }

    fn tick(&mut self, observer: &mut dyn Observer) -> Result<(), SimError> {
        Lockstep::tick(self, observer)
    }
}

/// What the loop does next, as a driver says.
pub enum Step<W> {
    /// Go on.
    Go,
    /// The run is over, with this outcome.
    End(Result<(), String>),
    /// Start over on this fresh world (a rebooted vehicle, a restarted
    /// firmware), for the reason given ("ArduPilot restarted"). The
    /// recording closes at the old world's end, saying so in `meta.json`,
    /// and pacing starts again.
    Restart(Box<W>, String),
}

/// Whatever flies and serves the world: the part of a run that differs
/// between commands.
pub trait Driver<W: World> {
    /// Observes each tick, before the recorder.
    fn on_tick(&mut self, _sim: &Simulation) -> std::io::Result<()> {
        Ok(())
    }

    /// Whether the world may tick now; `Ok(false)` idles (a paused world,
    /// a firmware not yet connected), an error ends the run.
    fn ready(&mut self, _world: &mut W) -> Result<bool, String> {
        Ok(true)
    }

    /// Serves links (every `service_every` of sim time).
    fn serve(&mut self, _world: &mut W) -> Step<W> {
        Step::Go
    }

    /// While the world must wait: serve and wait up to `d` of wall time.
    fn idle(&mut self, _world: &mut W, d: Duration) -> Step<W> {
        std::thread::sleep(d);
        Step::Go
    }

    /// After each tick, with its result.
    fn after_tick(&mut self, world: &mut W, tick: Result<(), SimError>) -> Step<W>;

    /// How the run ends when interrupted (Ctrl-C): by default a failure.
    fn interrupted(&mut self) -> Result<(), String> {
        Err("interrupted".into())
    }
}

/// Never set: the interrupt of a session given none.
static NEVER: AtomicBool = AtomicBool::new(false);

/// One run: the world, its pacing, its recording and its end.
pub struct Session<W: World> {
    world: W,
    pacer: Pacer,
    period_us: u64,
    end: Option<SimTime>,
    service_every_us: Option<u64>,
    recorder: Option<Recorder>,
    interrupt: &'static AtomicBool,
}

impl<W: World> Session<W> {
    /// A session over `world` ticking every `period_us` of sim time, as
    /// fast as it goes, with no end but the driver's, no service and no
    /// recording.
    pub fn new(world: W, period_us: u64) -> Self {
        let now = world.sim().time();
        Session {
            world,
            pacer: Pacer::new(Speedup::Max, now),
            period_us,
            end: None,
            service_every_us: None,
            recorder: None,
            interrupt: &NEVER,
        }
    }

    /// Paced at `speedup` times real time.
    pub fn paced(mut self, speedup: Speedup) -> Self {
        self.pacer = Pacer::new(speedup, self.world.sim().time());
        self
    }

    /// Stops (successfully) once sim time reaches `end`.
    pub fn until(mut self, end: Option<SimTime>) -> Self {
        self.end = end;
        self
    }

    /// Calls [`Driver::serve`] every `us` of sim time (0: every
    /// iteration).
    pub fn serving_every(mut self, us: u64) -> Self {
        self.service_every_us = Some(us);
        self
    }

    /// Records every tick into `recorder`.
    pub fn recording(mut self, recorder: Option<Recorder>) -> Self {
        self.recorder = recorder;
        self
    }

    /// Stops when `flag` is set (by a signal handler).
    pub fn interrupted_by(mut self, flag: &'static AtomicBool) -> Self {
        self.interrupt = flag;
        self
    }

    /// The world.
    pub fn world(&self) -> &W {
        &self.world
    }

    /// The world, the run over (after [`Session::finish`]).
    pub fn into_world(self) -> W {
        self.world
    }

    /// Runs until `driver`, the end, or an interrupt stops it; returns the
    /// run's outcome.
    pub fn run(&mut self, driver: &mut dyn Driver<W>) -> Result<(), String> {
        let mut st = LoopState {
            last_service: None,
            paused: false,
            last_tick: self.world.sim().time(),
        };
        loop {
            if self.interrupt.load(Ordering::Relaxed) {
                return driver.interrupted();
            }
            if self.end.is_some_and(|e| self.world.sim().time() >= e) {
                return Ok(());
            }
            match self.iterate(driver, &mut st) {
                Taken::End(outcome) => return outcome,
                Taken::Restarted => st.last_service = None,
                Taken::Go => {}
            }
        }
    }

    /// One pass of the loop: idle while not ready or early, serve when
    /// due, else tick.
    fn iterate(&mut self, driver: &mut dyn Driver<W>, st: &mut LoopState) -> Taken {
        match driver.ready(&mut self.world) {
            Err(e) => return Taken::End(Err(e)),
            Ok(false) => {
                st.paused = true;
                let step = driver.idle(&mut self.world, NOT_READY_IDLE);
                return self.take(step);
            }
            Ok(true) => {}
        }
        // Read after `ready`, which may have reset the world. The clock
        // starts again after a pause, and after a reset that set the
        // world's time back.
        let now = self.world.sim().time();
        if st.paused || now < st.last_tick {
            self.pacer.restart(now);
            st.paused = false;
            st.last_service = None;
        }
        st.last_tick = now;
        let wait = self
            .pacer
            .wait(SimTime::from_micros(now.as_micros() + self.period_us));
        if !wait.is_zero() {
            st.last_service = Some(now);
            let step = driver.idle(&mut self.world, wait.min(MAX_IDLE));
            return self.take(step);
        }
        if let Some(every) = self.service_every_us {
            if st
                .last_service
                .is_none_or(|t| now.as_micros() >= t.as_micros() + every)
            {
                st.last_service = Some(now);
                let step = driver.serve(&mut self.world);
                let taken = self.take(step);
                if !matches!(taken, Taken::Go) {
                    return taken;
                }
            }
        }
        let tick = self.tick(driver);
        let step = driver.after_tick(&mut self.world, tick);
        self.take(step)
    }

    /// One tick observed by the driver, then the recorder.
    fn tick(&mut self, driver: &mut dyn Driver<W>) -> Result<(), SimError> {
        let mut both = Both {
            driver,
            recorder: self.recorder.as_mut(),
        };
        self.world.tick(&mut both)
    }

    /// Acts on a driver's step.
    fn take(&mut self, step: Step<W>) -> Taken {
        match step {
            Step::Go => Taken::Go,
            Step::End(outcome) => Taken::End(outcome),
            Step::Restart(world, why) => {
                if let Err(e) = self.close_recording(&why) {
                    return Taken::End(Err(e));
                }
                self.world = *world;
                self.pacer.restart(self.world.sim().time());
                Taken::Restarted
            }
        }
    }

    /// Closes the recording at a restart: it holds the run before it, and
    /// its `meta.json` says so and ends there.
    fn close_recording(&mut self, why: &str) -> Result<(), String> {
        let Some(mut r) = self.recorder.take() else {
            return Ok(());
        };
        eprintln!("note: recordings cover the run up to the restart ({why})");
        let sim = self.world.sim();
        r.note(
            "ended_by",
            serde_json::json!(format!(
                "{why} at {}; the rest of the run is not recorded",
                sim.time()
            )),
        );
        r.finish(sim, false).map_err(|e| format!("recording: {e}"))
    }

    /// Closes the recording, if still open, at the world's end; `completed`
    /// says whether the run did what it set out to.
    pub fn finish(&mut self, completed: bool) -> Result<(), String> {
        match self.recorder.take() {
            Some(mut r) => r
                .finish(self.world.sim(), completed)
                .map_err(|e| format!("recording: {e}")),
            None => Ok(()),
        }
    }
}

/// Where the loop stands between passes.
struct LoopState {
    /// Sim time of the last service (None: serve at once).
    last_service: Option<SimTime>,
    /// The driver was not ready on the last pass.
    paused: bool,
    /// Sim time of the last pass that went on to pace.
    last_tick: SimTime,
}

/// A driver's step, acted on.
enum Taken {
    Go,
    Restarted,
    End(Result<(), String>),
}

/// The driver's observation, then the recorder's.
struct Both<'a, W: World> {
    driver: &'a mut dyn Driver<W>,
    recorder: Option<&'a mut Recorder>,
}

impl<W: World> Observer for Both<'_, W> {
    fn on_tick(&mut self, sim: &Simulation) -> std::io::Result<()> {
        self.driver.on_tick(sim)?;
        match self.recorder.as_deref_mut() {
            Some(r) => r.on_tick(sim),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mavsitl_sim::scenario::{Scenario, ScenarioSource};

    fn source() -> ScenarioSource {
        ScenarioSource {
            name: "test".into(),
            base_dir: ".".into(),
        }
    }

    fn scenario() -> Scenario {
        Scenario::from_json(
            r#"{"physics_rate_hz": 1000, "vehicles": [{"kind": "multirotor"}]}"#,
            &source(),
        )
        .expect("scenario")
    }

    /// A one-quad world at 1 kHz.
    fn world() -> Lockstep {
        scenario().build(&source()).expect("world")
    }

    /// What the loop asked of it, in order.
    #[derive(Default)]
    struct Log {
        ticks: Vec<u64>,
        served_at_us: Vec<u64>,
        idles: u32,
        not_ready: u32,
        end_after: Option<(u64, Result<(), String>)>,
        restart_after: Option<u64>,
        raise: Option<(u64, &'static AtomicBool)>,
    }

    impl Driver<Lockstep> for Log {
        fn ready(&mut self, _w: &mut Lockstep) -> Result<bool, String> {
            if self.not_ready > 0 {
                self.not_ready -= 1;
                return Ok(false);
            }
            Ok(true)
        }

        fn serve(&mut self, w: &mut Lockstep) -> Step<Lockstep> {
            self.served_at_us.push(w.sim().time().as_micros());
            Step::Go
        }

        fn idle(&mut self, _w: &mut Lockstep, _d: Duration) -> Step<Lockstep> {
            self.idles += 1;
            Step::Go
        }

        fn after_tick(&mut self, w: &mut Lockstep, tick: Result<(), SimError>) -> Step<Lockstep> {
            tick.expect("tick");
            let n = w.sim().tick();
            self.ticks.push(n);
            if let Some((at, flag)) = self.raise {
                if n == at {
                    flag.store(true, Ordering::Relaxed);
                }
            }
            if self.restart_after == Some(n) {
                self.restart_after = None;
                return Step::Restart(Box::new(world()), "the test restarted".into());
            }
            match &self.end_after {
                Some((at, outcome)) if *at == n => Step::End(outcome.clone()),
                _ => Step::Go,
            }
        }
    }

    #[test]
    fn a_run_stops_at_its_end_on_the_tick() {
        let mut run = Session::new(world(), 1_000).until(Some(SimTime::from_micros(37_000)));
        let mut log = Log::default();
        assert_eq!(run.run(&mut log), Ok(()));
        assert_eq!(run.world().sim().time(), SimTime::from_micros(37_000));
        assert_eq!(log.ticks, (1..=37).collect::<Vec<u64>>());
        assert_eq!(log.idles, 0, "an unpaced run never waits");
    }

    #[test]
    fn the_driver_ends_the_run_with_its_outcome_before_the_end() {
        for outcome in [Ok(()), Err("crash".to_string())] {
            let mut run = Session::new(world(), 1_000).until(Some(SimTime::from_micros(50_000)));
            let mut log = Log {
                end_after: Some((7, outcome.clone())),
                ..Log::default()
            };
            assert_eq!(run.run(&mut log), outcome);
            assert_eq!(run.world().sim().time(), SimTime::from_micros(7_000));
        }
    }

    #[test]
    fn links_are_served_every_given_sim_time_before_the_tick() {
        let mut run = Session::new(world(), 1_000)
            .until(Some(SimTime::from_micros(13_000)))
            .serving_every(4_000);
        let mut log = Log::default();
        run.run(&mut log).expect("run");
        assert_eq!(log.served_at_us, vec![0, 4_000, 8_000, 12_000]);
        let mut run = Session::new(world(), 1_000)
            .until(Some(SimTime::from_micros(3_000)))
            .serving_every(0);
        let mut log = Log::default();
        run.run(&mut log).expect("run");
        assert_eq!(log.served_at_us, vec![0, 1_000, 2_000]);
    }

    #[test]
    fn a_fresh_world_is_served_from_its_start() {
        let mut run = Session::new(world(), 1_000)
            .until(Some(SimTime::from_micros(9_000)))
            .serving_every(4_000);
        let mut log = Log {
            restart_after: Some(5),
            ..Log::default()
        };
        run.run(&mut log).expect("run");
        assert_eq!(log.served_at_us, vec![0, 4_000, 0, 4_000, 8_000]);
        assert_eq!(log.ticks.len(), 5 + 9);
    }

    #[test]
    fn an_unready_world_idles_without_ticking() {
        let mut run = Session::new(world(), 1_000).until(Some(SimTime::from_micros(2_000)));
        let mut log = Log {
            not_ready: 5,
            ..Log::default()
        };
        run.run(&mut log).expect("run");
        assert_eq!(log.idles, 5);
        assert_eq!(log.ticks, vec![1, 2]);
    }

    #[test]
    fn an_interrupt_stops_at_the_next_tick_as_the_driver_says() {
        static FLAG: AtomicBool = AtomicBool::new(false);
        let mut run = Session::new(world(), 1_000)
            .until(Some(SimTime::from_micros(50_000)))
            .interrupted_by(&FLAG);
        let mut log = Log {
            raise: Some((3, &FLAG)),
            ..Log::default()
        };
        assert_eq!(run.run(&mut log), Err("interrupted".into()));
        assert_eq!(log.ticks, vec![1, 2, 3]);
    }

    #[test]
    fn a_paced_run_waits_for_the_clock() {
        let mut paced = Session::new(world(), 1_000)
            .paced(Speedup::Factor(1.0))
            .until(Some(SimTime::from_micros(3_000)));
        let mut log = Log::default();
        paced.run(&mut log).expect("run");
        assert!(log.idles > 0, "a tick 1 ms ahead of the clock waits");
        assert_eq!(log.ticks, vec![1, 2, 3]);
    }

    #[test]
    fn a_restart_closes_the_recording_there_and_flies_the_fresh_world() {
        let dir = std::env::temp_dir().join(format!("mavsitl-session-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let w = world();
        let recorder = Recorder::create(
            &dir,
            &scenario(),
            w.sim(),
            mavsitl_core::geo::ExportFrame::Ned,
            mavsitl_core::time::Rate::EVERY_TICK,
        )
        .expect("recorder");
        let mut run = Session::new(w, 1_000)
            .until(Some(SimTime::from_micros(10_000)))
            .recording(Some(recorder));
        let mut log = Log {
            restart_after: Some(4),
            ..Log::default()
        };
        run.run(&mut log).expect("run");
        run.finish(true).expect("finish");
        // Four ticks, then the fresh world's ten.
        assert_eq!(log.ticks.len(), 14);
        assert_eq!(run.world().sim().time(), SimTime::from_micros(10_000));
        let meta = std::fs::read_to_string(dir.join("meta.json")).expect("meta");
        let meta: serde_json::Value = serde_json::from_str(&meta).expect("json");
        assert_eq!(
            meta["ended_by"],
            "the test restarted at 0.004000 s; the rest of the run is not recorded"
        );
        let truth = std::fs::read_to_string(dir.join("ground_truth.csv")).expect("truth");
        let last = truth.lines().last().expect("rows");
        assert!(last.starts_with("4000000,"), "{last}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
