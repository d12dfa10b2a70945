//! `mavsitl test`: regression suites (`suites/*.toml`) run by
//! [`mavsitl::batch::runner`]; a summary on stdout, JUnit XML and a JSON
//! summary for CI, and the recording of every failed pair kept.

use std::path::PathBuf;

use clap::Args;
use mavsitl::batch::runner::{self, Options};
use mavsitl::suite;

use super::CliError;

/// Arguments of `mavsitl test`.
#[derive(Debug, Args)]
pub struct TestArgs {
    /// Suite files (TOML).
    #[arg(required = true)]
    pub suites: Vec<PathBuf>,

    /// Pairs at once (default: the number of cores).
    #[arg(short = 'j', long, value_name = "N")]
    pub jobs: Option<usize>,

    /// Run only shard I of N (1-based): every N-th pair from the I-th; the N
    /// shards together run every pair exactly once.
    #[arg(long, value_name = "I/N", value_parser = suite::parse_shard)]
    pub shard: Option<(usize, usize)>,

    /// Run only the cases whose `suite/case` name contains PATTERN.
    #[arg(long, value_name = "PATTERN")]
    pub filter: Option<String>,

    /// Write a JUnit XML report.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,

    /// Write a JSON summary.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Where runs record (kept for failed pairs).
    #[arg(long, value_name = "DIR", default_value = "test-results")]
    pub out: PathBuf,

    /// Keep the recordings of passed pairs too.
    #[arg(long)]
    pub keep_all: bool,

    /// PX4's build directory (for controller = "px4").
    #[arg(long, value_name = "DIR", env = "PX4_BUILD_DIR")]
    pub px4_build: Option<PathBuf>,

    /// ArduPilot checkout or SITL binary (for controller = "ardupilot").
    #[arg(long, value_name = "PATH", env = "ARDUPILOT_HOME")]
    pub ardupilot: Option<PathBuf>,

    /// Firmware instance of the first parallel slot; slot k uses BASE + k.
    /// Give runs sharing a machine bases -j apart, so their ports differ.
    #[arg(long, value_name = "BASE", default_value_t = 1, value_parser = clap::value_parser!(u8).range(0..=200))]
    pub instance_base: u8,
}

/// The runner's options from the command line.
fn options(args: TestArgs) -> Result<Options, CliError> {
    let exe = std::env::current_exe()
        .map_err(|e| CliError::run(format!("cannot find this program to run flights: {e}")))?;
    Ok(Options {
        parallel: super::parallel(args.jobs),
        shard: args.shard,
        filter: args.filter,
        junit: args.junit,
        json: args.json,
        out: args.out,
        keep_all: args.keep_all,
        px4_build: args.px4_build,
        ardupilot: args.ardupilot,
        instance_base: args.instance_base,
        fly_here: Some(super::fly_here),
        ..Options::new(exe, args.suites)
    })
}

/// Runs `mavsitl test`.
pub fn run(args: TestArgs) -> Result<(), CliError> {
    let opts = options(args)?;
    super::install_interrupt_handler();
    let outcome = runner::run(&opts, &super::INTERRUPTED)?;
    print!(
        "{}",
        suite::report::summary(&outcome.verdicts, outcome.wall_s)
    );
    runner::finish(&opts, &outcome)?;
    if super::interrupted() {
        return Err(CliError {
            message: format!(
                "interrupted: {} of {} pairs run",
                outcome.verdicts.len(),
                outcome.pairs
            ),
            hint: None,
            code: super::INTERRUPTED_CODE,
        });
    }
    match outcome.failed() {
        0 => Ok(()),
        failed => Err(CliError::run(format!(
            "{failed} of {} pairs failed",
            outcome.verdicts.len()
        ))),
    }
}
