//! `mavsitl compare`: one mission flown by several controllers on the same
//! scenario and seeds ([`mavsitl::batch::compare`]), then tabled, plotted
//! and written up in `report.html`.

use std::path::PathBuf;

use clap::Args;
use mavsitl::batch::compare::parse_seeds;
use mavsitl::batch::compare::{self, parse_entry, parse_params_arg, Comparison, Entry, Seeds};

use super::inputs::VehicleArg;
use super::CliError;

/// Arguments of `mavsitl compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Mission: a QGroundControl .plan or a 'QGC WPL 110' file.
    pub mission: PathBuf,

    /// Controllers, comma-separated: simpleflight, simpleflight:PARAMS.parm
    /// (SimpleFlight with that parameter file), px4, ardupilot.
    #[arg(long = "with", value_name = "LIST", value_delimiter = ',', value_parser = parse_entry, default_value = "simpleflight")]
    pub with: Vec<Entry>,

    /// Vehicle (default: from the plan, as `fly` decides).
    #[arg(long, value_enum)]
    pub vehicle: Option<VehicleArg>,

    /// Scenario (vehicle, environment, sensors), the same for every flight.
    #[arg(long, value_name = "S")]
    pub scenario: Option<PathBuf>,

    /// Noise seed of every flight.
    #[arg(long, value_name = "N", conflicts_with = "seeds")]
    pub seed: Option<u64>,

    /// Seeds A..B (both included): each controller flies each; every metric
    /// is then reported as median [5th, 95th percentile].
    #[arg(long, value_name = "A..B", value_parser = parse_seeds)]
    pub seeds: Option<Seeds>,

    /// A parameter file for one controller of --with (repeatable):
    /// NAME=FILE, NAME its label (px4, ardupilot, simpleflight). Firmware
    /// gets them at start-up; SimpleFlight as with `fly --params`.
    #[arg(long = "params", value_name = "NAME=FILE", value_parser = parse_params_arg)]
    pub params: Vec<(String, PathBuf)>,

    /// PX4's build directory (for `px4`).
    #[arg(long, value_name = "DIR", env = "PX4_BUILD_DIR")]
    pub px4_build: Option<PathBuf>,

    /// ArduPilot checkout or SITL binary (for `ardupilot`).
    #[arg(long, value_name = "PATH", env = "ARDUPILOT_HOME")]
    pub ardupilot: Option<PathBuf>,

    /// Output directory: one recording per flight, metrics.csv, metrics.json,
    /// plots/ and report.html.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,

    /// Flights at once (default: the number of cores).
    #[arg(short = 'j', long, value_name = "N")]
    pub jobs: Option<usize>,

    /// Give up on a flight after this much sim time, s.
    #[arg(long, value_name = "S", default_value_t = 1800.0, value_parser = super::inputs::seconds_in(0.001, super::inputs::MAX_RUN_S))]
    pub timeout: f64,
}

/// The comparison the command line asks for.
fn comparison(args: &CompareArgs) -> Result<Comparison, CliError> {
    let exe = std::env::current_exe()
        .map_err(|e| CliError::run(format!("cannot find this program to run flights: {e}")))?;
    let seeds = match (&args.seeds, args.seed) {
        (Some(s), _) => s.0.clone(),
        (None, Some(s)) => vec![s],
        (None, None) => vec![0],
    };
    Ok(Comparison {
        entries: args.with.clone(),
        params: args.params.clone(),
        vehicle: args.vehicle.map(VehicleArg::builtin),
        scenario: args.scenario.clone(),
        seeds,
        px4_build: args.px4_build.clone(),
        ardupilot: args.ardupilot.clone(),
        parallel: super::parallel(args.jobs),
        timeout_s: args.timeout,
        ..Comparison::new(exe, args.mission.clone(), args.out.clone())
    })
}

/// Runs `mavsitl compare`.
pub fn run(args: CompareArgs) -> Result<(), CliError> {
    let c = comparison(&args)?;
    super::install_interrupt_handler();
    let flew = compare::fly(&c, &super::INTERRUPTED)?;
    for p in &flew.problems {
        eprintln!("warning: {p}");
    }
    let command: Vec<String> = std::env::args().collect();
    let report =
        mavsitl::analysis::report::write(&args.out, (&c.seeds, &command), &flew.route, &flew.flown)
            .map_err(CliError::run)?;
    print!("{}", report.table);
    println!(
        "  flights             {} in {:.1} s ({} at a time)",
        flew.done.len(),
        flew.flights_s,
        c.parallel
    );
    println!("  analysis            {:.2} s", report.analysis_s);
    println!("  report              {}", report.html.display());
    if super::interrupted() {
        return Err(CliError {
            message: format!(
                "interrupted: {} of {} flights flown and reported",
                flew.done.len(),
                flew.jobs
            ),
            hint: None,
            code: super::INTERRUPTED_CODE,
        });
    }
    let failed = flew.failures();
    for f in &failed {
        println!("  failed              {f}");
    }
    if !failed.is_empty() {
        return Err(CliError::run(format!(
            "{} of {} flights failed (causes above; each flight's run.log has the rest)",
            failed.len(),
            flew.jobs
        )));
    }
    if flew.flown.len() < flew.jobs {
        return Err(CliError::run(format!(
            "{} of {} flights left no recording to measure",
            flew.jobs - flew.flown.len(),
            flew.jobs
        )));
    }
    Ok(())
}
