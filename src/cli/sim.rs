//! `mavsitl sim`: run a scenario headless and print a summary.

use std::path::PathBuf;

use clap::Args;

use mavsitl::geo::ExportFrame;
use mavsitl::open_loop::{load_world, run_sim, OpenLoopPlan, SimSummary, DEFAULT_NAME};
use mavsitl::scenario::Home;

use super::{home, CliError};

/// Arguments of `mavsitl sim`.
#[derive(Debug, Args)]
pub struct SimArgs {
    /// Scenario file (JSON), e.g. scenarios/boat_cruise.json. Without one, the
    /// built-in default runs: scenarios/quad_hover.json (a generic quad released
    /// at 10 m with its rotors at the hover command).
    pub scenario: Option<PathBuf>,

    /// Sim time to run, seconds (default: the scenario's duration_s).
    #[arg(long, value_name = "S")]
    pub duration: Option<f64>,

    /// Noise seed (default: the scenario's seed).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Inject a fault (repeatable): KIND@START[+DURATION][:key=value,...], e.g.
    /// gps_loss@40s+30s, motor_failure@30s:motor=0,thrust_scale=0,
    /// battery_capacity_scale@0s:scale=0.25. Keys as in a scenario's "faults".
    #[arg(long = "fault", value_name = "FAULT", value_parser = mavsitl::faults::parse_fault_arg)]
    pub faults: Vec<mavsitl::faults::FaultSpec>,

    /// Home LAT,LON,ALT[,HEADING] (deg, deg, m AMSL, deg). Overrides the scenario
    /// and PX4_HOME_LAT / PX4_HOME_LON / PX4_HOME_ALT.
    #[arg(long, value_name = "LAT,LON,ALT[,HEADING]", value_parser = home::parse_home, allow_hyphen_values = true)]
    pub home: Option<Home>,

    /// Write recordings (ground_truth.csv, zone_events.csv, meta.json) into DIR.
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,

    /// Frame of recorded positions, velocities and attitudes.
    #[arg(long, default_value = "ned", value_parser = super::export_frame_parser())]
    pub frame: ExportFrame,

    /// Threads to step the vehicles on (default: every core for 100 vehicles
    /// or more, else 1). The run is the same to the bit whatever the number.
    #[arg(long, value_name = "N", value_parser = super::inputs::threads)]
    pub threads: Option<usize>,
}

/// Runs `mavsitl sim`.
pub fn run(args: SimArgs) -> Result<(), CliError> {
    let (scenario, source) =
        load_world(args.scenario.as_ref(), args.home, args.seed, &args.faults)?;
    let plan = OpenLoopPlan {
        duration_s: args.duration,
        record: args.record.as_deref(),
        frame: args.frame,
        stop: &super::INTERRUPTED,
        threads: args.threads,
    };
    let ran = run_sim(&scenario, &source, &plan)?;
    let name = args
        .scenario
        .as_ref()
        .map_or_else(|| DEFAULT_NAME.to_string(), |p| p.display().to_string());
    print!(
        "{}",
        SimSummary {
            name: &name,
            ran: &ran,
            seed: scenario.seed,
            record: args.record.as_deref(),
        }
    );
    if ran.interrupted {
        return Err(super::interrupted_at(ran.sim.time()));
    }
    Ok(())
}
