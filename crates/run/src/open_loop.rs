//! An open-loop run (`mavsitl sim`, and the scenario `replay` starts from):
//! the scenario's own commands, no autopilot, a progress bar on a terminal.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use mavsitl_core::failure::Failure;
use mavsitl_core::time::SimTime;
use mavsitl_sim::scenario::{Scenario, ScenarioSource};
use mavsitl_sim::sim::{Lockstep, SimError, Simulation};

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
