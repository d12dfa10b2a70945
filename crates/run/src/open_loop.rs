//! Open-loop runs, no autopilot: `mavsitl sim` (the scenario's own
//! commands, a progress bar on a terminal) and `mavsitl replay` (a recorded
//! trajectory through a vehicle's sensors), with their summaries.

use std::fmt;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use mavsitl_core::failure::Failure;
use mavsitl_core::faults::FaultSpec;
use mavsitl_core::geo::ExportFrame;
use mavsitl_core::time::{PhysicsRate, SimTime};
use mavsitl_sim::record::Recorder;
use mavsitl_sim::replay::Trajectory;
use mavsitl_sim::scenario::{Home, Scenario, ScenarioSource};
use mavsitl_sim::sim::{Lockstep, Observer, SimError, Simulation};

use crate::recording::RunPlan;
use crate::session::{Driver, Step};

/// The scenario `mavsitl sim` runs when given none.
pub const DEFAULT_SCENARIO: &str = include_str!("../../../scenarios/quad_hover.json");
/// How messages name the built-in scenario.
pub const DEFAULT_NAME: &str = "<built-in scenarios/quad_hover.json>";

/// Progress on stderr, shown only on a terminal and only once a run has taken
/// more than a second of wall time.
struct Progress {
    bar: Option<ProgressBar>,
    start: Instant,
    end: SimTime,
    enabled: bool,
}

impl Progress {
    fn new(end: SimTime) -> Self {
        Progress {
            bar: None,
            start: Instant::now(),
            end,
            enabled: std::io::stderr().is_terminal(),
        }
    }

    fn update(&mut self, sim: &Simulation) {
        if !self.enabled || !sim.tick().is_multiple_of(4096) {
            return;
        }
        if self.bar.is_none() && self.start.elapsed() > Duration::from_secs(1) {
            let bar = ProgressBar::with_draw_target(
                Some(self.end.as_micros() / 1000),
                ProgressDrawTarget::stderr(),
            );
            bar.set_style(
                ProgressStyle::with_template(
                    "{elapsed_precise} [{wide_bar}] {msg} sim s, ETA {eta}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            self.bar = Some(bar);
        }
        if let Some(bar) = &self.bar {
            bar.set_position(sim.time().as_micros() / 1000);
            bar.set_message(format!("{:.1}", sim.time().as_secs_f64()));
        }
    }

    fn done(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// An open-loop run: the scenario's own commands, a progress bar.
pub struct SimDriver {
    progress: Progress,
}

impl SimDriver {
    /// A run to `end`, its progress shown on a terminal.
    pub fn new(end: SimTime) -> Self {
        SimDriver {
            progress: Progress::new(end),
        }
    }

    /// Clears the progress bar.
    pub fn done(&self) {
        self.progress.done();
    }
}

impl Driver<Lockstep> for SimDriver {
    fn on_tick(&mut self, sim: &Simulation) -> std::io::Result<()> {
        self.progress.update(sim);
        Ok(())
    }

    fn after_tick(&mut self, ls: &mut Lockstep, tick: Result<(), SimError>) -> Step<Lockstep> {
        match tick {
            Ok(()) => Step::Go,
            Err(e) => Step::End(Err(format!(
                "simulation stopped at {}: {e}",
                ls.sim().time()
            ))),
        }
    }

    /// An interrupted run still prints its summary, then fails.
    fn interrupted(&mut self) -> Result<(), String> {
        Ok(())
    }
}

/// Loads the scenario at `path`, or the built-in one.
///
/// # Errors
/// A scenario that does not load (exit 2).
pub fn load_scenario(path: Option<&PathBuf>) -> Result<(Scenario, ScenarioSource), Failure> {
    let hint = "see scenarios/ for examples and docs/reference/scenario.md";
    Ok(match path {
        Some(path) => (
            Scenario::load(path).map_err(|e| Failure::input(e.to_string(), hint))?,
            ScenarioSource {
                name: path.display().to_string(),
                base_dir: path.parent().map(PathBuf::from).unwrap_or_default(),
            },
        ),
        None => {
            let source = ScenarioSource {
                name: DEFAULT_NAME.into(),
                base_dir: PathBuf::from("."),
            };
            let scenario = Scenario::from_json(DEFAULT_SCENARIO, &source)
                .map_err(|e| Failure::input(e.to_string(), hint))?;
            (scenario, source)
        }
    })
}

/// Loads the scenario at `path` (or the built-in one) and applies the
/// command line's home (else the scenario's, else PX4_HOME_LAT/LON/ALT),
/// seed and faults.
///
/// # Errors
/// A scenario that does not load, a bad home or a bad fault (exit 2).
pub fn load_world(
    path: Option<&PathBuf>,
    home: Option<Home>,
    seed: Option<u64>,
    faults: &[FaultSpec],
) -> Result<(Scenario, ScenarioSource), Failure> {
    let (mut scenario, source) = load_scenario(path)?;
    scenario.home =
        crate::home::resolve(home, scenario.home, |k| std::env::var(k).ok()).map_err(|e| {
            Failure::input(
                format!("home: {e}"),
                "--home LAT,LON,ALT[,HEADING], e.g. --home 47.397742,8.545594,488",
            )
        })?;
    if let Some(seed) = seed {
        scenario.seed = seed;
    }
    crate::inputs::add_faults(&mut scenario, &source, None, faults)?;
    Ok((scenario, source))
}

/// How an open-loop run is recorded and ended.
pub struct OpenLoopPlan<'a> {
    /// Sim time to run, s (`None`: the scenario's `duration_s`).
    pub duration_s: Option<f64>,
    /// The recording directory.
    pub record: Option<&'a Path>,
    /// The frame of the recordings.
    pub frame: ExportFrame,
    /// Set by Ctrl-C: the run stops at the next tick, recordings flushed.
    pub stop: &'static AtomicBool,
    /// The threads the vehicles are stepped on (`None`: as
    /// [`mavsitl_sim::sim::default_threads`] says for the scenario).
    pub threads: Option<usize>,
}

/// An open-loop run that ended.
pub struct Ran {
    /// The world at the end.
    pub sim: Simulation,
    /// Wall time of the run, s.
    pub wall_s: f64,
    /// Stopped by Ctrl-C before its end.
    pub interrupted: bool,
}

/// Runs `scenario` open loop (`mavsitl sim`) for `plan.duration_s`.
///
/// # Errors
/// A duration out of range or a scenario that does not build (exit 2), a
/// recording that fails or a simulation that stops (exit 1).
pub fn run_sim(
    scenario: &Scenario,
    source: &ScenarioSource,
    plan: &OpenLoopPlan,
) -> Result<Ran, Failure> {
    let duration_s = plan.duration_s.unwrap_or(scenario.duration_s);
    if !(duration_s.is_finite() && duration_s > 0.0 && duration_s <= 1e7) {
        return Err(Failure::input(
            format!("--duration {duration_s:e}: give a positive number of seconds up to 1e7 (as a scenario's duration_s)"),
            "e.g. --duration 600",
        ));
    }
    let mut lockstep = scenario.build(source).map_err(|e| {
        Failure::input(
            e.to_string(),
            "check the scenario against docs/reference/scenario.md",
        )
    })?;
    let threads = plan
        .threads
        .unwrap_or_else(|| mavsitl_sim::sim::default_threads(scenario.vehicles.len()));
    lockstep
        .set_threads(threads)
        .map_err(|e| Failure::run(e.to_string()))?;
    let end = SimTime::from_secs_f64(duration_s);
    let run_plan = RunPlan {
        record: plan.record,
        frame: plan.frame,
        mission_file: None,
        builtin: "",
        end_s: Some(duration_s),
        stop: plan.stop,
    };
    let mut run = crate::recording::session(lockstep, scenario, &run_plan)?;
    let mut driver = SimDriver::new(end);
    let wall = Instant::now();
    let result = run.run(&mut driver);
    let interrupted = plan.stop.load(Ordering::Relaxed) && run.world().sim().time() < end;
    let wall_s = wall.elapsed().as_secs_f64();
    driver.done();
    run.finish(result.is_ok() && !interrupted)
        .map_err(Failure::run)?;
    result.map_err(Failure::run)?;
    Ok(Ran {
        sim: run.into_world().into_sim(),
        wall_s,
        interrupted,
    })
}

/// `mavsitl sim`'s summary: the run, then every vehicle where it ended.
pub struct SimSummary<'a> {
    /// The scenario's name as given.
    pub name: &'a str,
    /// The run.
    pub ran: &'a Ran,
    /// The seed flown.
    pub seed: u64,
    /// Where it was recorded.
    pub record: Option<&'a Path>,
}

impl fmt::Display for SimSummary<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (sim, wall_s) = (&self.ran.sim, self.ran.wall_s);
        let sim_s = sim.time().as_secs_f64();
        writeln!(f, "mavsitl sim {} (seed {})", self.name, self.seed)?;
        writeln!(
            f,
            "  sim time          {sim_s:.3} s ({} ticks at {} Hz)",
            sim.tick(),
            sim.rate().hz()
        )?;
        writeln!(f, "  wall time         {wall_s:.3} s")?;
        if wall_s > 0.0 {
            writeln!(f, "  real-time factor  {:.0}x", sim_s / wall_s)?;
        }
        for v in sim.vehicles() {
            let t = v.ground_truth();
            let (roll, pitch, yaw) = t.att_ned_frd.euler_angles();
            writeln!(
                f,
                "  {:<16}  pos N {:.3} E {:.3} D {:.3} m | speed {:.3} m/s | roll {:.1} pitch {:.1} yaw {:.1} deg | {}",
                v.name(),
                t.pos_ned_m.x,
                t.pos_ned_m.y,
                t.pos_ned_m.z,
                t.vel_ned_m_s.norm(),
                roll.to_degrees(),
                pitch.to_degrees(),
                yaw.to_degrees(),
                if t.landed { "on ground" } else { "moving freely" }
            )?;
        }
        let events = sim.zone_events().len();
        if events > 0 {
            writeln!(f, "  zone events       {events}")?;
        }
        if let Some(dir) = self.record {
            writeln!(f, "  recorded to       {}", dir.display())?;
        }
        Ok(())
    }
}

/// A trajectory replayed through the first vehicle's sensors.
pub struct Replayed {
    /// The world at the end.
    pub sim: Simulation,
    /// Ticks the trajectory spans.
    pub ticks: u64,
    /// The physics rate, Hz.
    pub rate_hz: u32,
    /// Wall time, s.
    pub wall_s: f64,
    /// Stopped by Ctrl-C before its end.
    pub interrupted: bool,
}

/// Replays `trajectory` (`mavsitl replay`): the first vehicle of `scenario`
/// moved along it tick by tick, its sensors sampling, everything recorded
/// into `record` in `frame`; stopped early by `stop`.
///
/// # Errors
/// A scenario that does not build or a directory that cannot be written
/// (exit 2), a recording that fails (exit 1).
pub fn replay(
    (scenario, source): (&Scenario, &ScenarioSource),
    trajectory: &Trajectory,
    (record, frame): (&Path, ExportFrame),
    stop: &AtomicBool,
) -> Result<Replayed, Failure> {
    let hint = "check the scenario against docs/reference/scenario.md";
    let mut lockstep = scenario
        .build(source)
        .map_err(|e| Failure::input(e.to_string(), hint))?;
    let rate = PhysicsRate::new(scenario.physics_rate_hz)
        .map_err(|e| Failure::input(e.to_string(), hint))?;
    let gt_rate = rate
        .divider(scenario.record.ground_truth_rate_hz)
        .map_err(|e| Failure::input(e.to_string(), hint))?;
    let sim = lockstep.sim_mut();
    sim.set_vehicle_state(0, trajectory.at(0.0).state);
    let mut recorder = Recorder::create(record, scenario, sim, frame, gt_rate).map_err(|e| {
        Failure::input(
            format!("{}: cannot record: {e}", record.display()),
            "choose a writable directory",
        )
    })?;
    let dt = rate.dt_s();
    let ticks = (trajectory.duration_s() / dt + 1e-9).floor() as u64;
    let wall = Instant::now();
    let mut result = Ok(());
    for k in 1..=ticks {
        sim.step_replay(0, &trajectory.at(k as f64 * dt));
        if let Err(e) = recorder.on_tick(sim) {
            result = Err(e);
            break;
        }
        if stop.load(Ordering::Relaxed) {
            break;
        }
    }
    let interrupted = stop.load(Ordering::Relaxed) && sim.tick() < ticks;
    recorder
        .finish(sim, result.is_ok() && !interrupted)
        .and(result)
        .map_err(|e| Failure::run(format!("recording: {e}")))?;
    Ok(Replayed {
        wall_s: wall.elapsed().as_secs_f64(),
        sim: lockstep.into_sim(),
        ticks,
        rate_hz: rate.hz(),
        interrupted,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use super::*;

    static NEVER: AtomicBool = AtomicBool::new(false);
    static STOPPED: AtomicBool = AtomicBool::new(true);

    fn plan(duration_s: Option<f64>, stop: &'static AtomicBool) -> OpenLoopPlan<'static> {
        OpenLoopPlan {
            duration_s,
            record: None,
            frame: ExportFrame::Ned,
            threads: None,
            stop,
        }
    }

    #[test]
    fn a_duration_out_of_range_is_refused_as_bad_input() {
        let (scenario, source) = load_scenario(None).expect("built-in");
        for d in [0.0, -1.0, f64::NAN, f64::INFINITY, 1.000_001e7] {
            let e = run_sim(&scenario, &source, &plan(Some(d), &NEVER))
                .err()
                .unwrap_or_else(|| panic!("{d} accepted"));
            assert_eq!(e.code, 2, "{d}");
            assert!(e.message.starts_with("--duration"), "{}", e.message);
        }
    }

    #[test]
    fn a_run_ends_at_its_duration_and_its_summary_says_so() {
        let (scenario, source) = load_scenario(None).expect("built-in");
        let ran = run_sim(&scenario, &source, &plan(Some(0.25), &NEVER)).expect("run");
        assert!(!ran.interrupted);
        assert_eq!(ran.sim.time(), SimTime::from_secs_f64(0.25));
        let text = SimSummary {
            name: "hover",
            ran: &ran,
            seed: 9,
            record: Some(Path::new("/tmp/r")),
        }
        .to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "mavsitl sim hover (seed 9)");
        assert_eq!(
            lines[1],
            "  sim time          0.250 s (250 ticks at 1000 Hz)"
        );
        assert_eq!(text.contains("real-time factor"), ran.wall_s > 0.0);
        assert!(!text.contains("zone events"), "{text}");
        assert_eq!(lines.last(), Some(&"  recorded to       /tmp/r"));
        let vehicles = lines.iter().filter(|l| l.contains("pos N")).count();
        assert_eq!(vehicles, ran.sim.vehicles().len());
    }

    #[test]
    fn a_stopped_run_ends_at_once_and_says_it_was_interrupted() {
        let (scenario, source) = load_scenario(None).expect("built-in");
        let ran = run_sim(&scenario, &source, &plan(Some(5.0), &STOPPED)).expect("run");
        assert!(ran.interrupted);
        assert!(ran.sim.time() < SimTime::from_secs_f64(5.0));
    }

    /// Half a second of poses at 1 kHz is 500 ticks, the vehicle where the
    /// trajectory ends, every tick recorded.
    #[test]
    fn a_replay_runs_every_tick_of_the_trajectory_to_its_end() {
        let text = "#timestamp [ns],p_x,p_y,p_z,q_w,q_x,q_y,q_z\n\
                    1000000000,0,0,-2,1,0,0,0\n\
                    1500000000,2,1,-2,1,0,0,0\n";
        let trajectory = Trajectory::parse(text, "t.csv").expect("poses");
        let (scenario, source) = load_scenario(None).expect("built-in");
        let dir = std::env::temp_dir().join(format!("mavsitl-replay-{}", std::process::id()));
        let r = replay(
            (&scenario, &source),
            &trajectory,
            (&dir, ExportFrame::Ned),
            &NEVER,
        )
        .expect("replay");
        let rows = std::fs::read_to_string(dir.join("ground_truth.csv")).expect("recorded");
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!((r.ticks, r.rate_hz, r.sim.tick()), (500, 1000, 500));
        assert!(!r.interrupted);
        let end = r.sim.vehicles()[0].ground_truth().pos_ned_m;
        assert!(
            (end - nalgebra::Vector3::new(2.0, 1.0, -2.0)).norm() < 1e-9,
            "{end}"
        );
        assert!(rows.lines().count() > 10, "{rows}");
    }
}
