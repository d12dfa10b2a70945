//! Command-line interface: one file per subcommand.
//!
//! Owns argument parsing (clap; the doc comments here are the only place help text
//! lives), logging set-up, turning library errors into one line plus a hint and an
//! exit code (0 success, 1 the run failed, 2 bad input), progress display and the
//! summary printed on stdout. It is the only place that prints to stdout;
//! the libraries below tell progress and warnings on stderr. Each
//! subcommand plugs its controllers into the one run loop,
//! `mavsitl::session`, which alone paces the simulation on the wall clock
//! (the bridges and links read it only for socket timeouts).

use mavsitl::home;

mod airsim;
mod airsim_px4;
mod ardupilot;
mod compare;
mod firmware;
mod firmware_instances;
mod fleet;
mod fly;
mod inputs;
mod plot;
mod px4;
mod replay;
mod serve;
mod sim;
mod test;
mod vehicle_link;

use clap::{Parser, Subcommand};
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Software-in-the-loop simulator for MAVLink autopilots.
///
/// Simulates multirotors and boats (rigid-body physics, ground and water
/// contact, wind, turbulence, current) in lockstep with whatever flies them.
/// Frames: world NED around the home point, body FRD; SI units.
#[derive(Debug, Parser)]
#[command(name = "mavsitl", version, about, long_about)]
pub struct Cli {
    /// More log output on stderr (-v info, -vv debug, -vvv trace); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Fly a QGroundControl mission with SimpleFlight, headless, and print what happened.
    Fly(fly::FlyArgs),
    /// Run SimpleFlight as a MAVLink vehicle for QGroundControl, MAVSDK, MAVProxy
    /// or pymavlink to fly (PX4 identity, UDP 14550/14540).
    Serve(serve::ServeArgs),
    /// Let real PX4 SITL fly the simulated vehicle over PX4's simulator interface
    /// (TCP 4560), in lockstep on PX4's clock.
    Px4(px4::Px4Args),
    /// Let real ArduPilot SITL fly the simulated vehicle over its JSON physics
    /// backend (UDP 9002), in lockstep on its frames.
    Ardupilot(ardupilot::ArduPilotArgs),
    /// Run a scenario headless, as fast as the CPU allows, and print a summary.
    Sim(sim::SimArgs),
    /// Replay a recorded trajectory through a vehicle's sensors (no physics).
    Replay(replay::ReplayArgs),
    /// Serve AirSim's RPC API (TCP 41451) over a SimpleFlight quad, for
    /// AirSim's Python client: headless, deterministic, the clock under the
    /// client's control.
    Airsim(airsim::AirSimArgs),
    /// Fly one mission with several controllers (SimpleFlight, SimpleFlight
    /// with other parameters, PX4, ArduPilot) on the same physics and noise,
    /// and compare them: table, metrics.csv/json, plots, report.html.
    Compare(compare::CompareArgs),
    /// Draw the pictures and metrics of `compare` for one recording.
    Plot(plot::PlotArgs),
    /// Run regression suites (TOML): every case and seed flown, checked,
    /// reported as JUnit and JSON; parallel, sharded, filtered.
    Test(test::TestArgs),
}

/// A failed command: its one line, its hint and its exit code.
pub type CliError = mavsitl::failure::Failure;

/// Set by Ctrl-C (SIGINT), SIGTERM or SIGHUP: runs stop at the next tick
/// boundary, flush their recordings, stop a launched firmware and exit with
/// [`INTERRUPTED_CODE`].
pub static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Set when a run must stop at once: by Ctrl-C, by a launched firmware that
/// exited, by a ground station that failed. Bridges watch it in their waits;
/// the CLI then asks each part why.
pub static STOP_RUN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Installs the Ctrl-C handler (once; a second Ctrl-C while stopping is ignored).
pub fn install_interrupt_handler() {
    let _ = ctrlc::set_handler(|| {
        INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
        STOP_RUN.store(true, std::sync::atomic::Ordering::SeqCst);
    });
}

/// Flights at once: `-j N`, or one per core; 1 to 64.
fn parallel(jobs: Option<usize>) -> usize {
    jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, 64)
}

/// Whether the user asked to stop.
pub fn interrupted() -> bool {
    INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Sets up `tracing` on stderr.
pub fn init_logging(verbose: u8) {
    let default = match verbose {
        // The AirSim API's refusals (an arming without API control, …) are
        // what a script's user needs to see when nothing moved.
        0 => "warn,mavsitl_airsim=info",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    // RUST_LOG as `target=level` directives, comma-separated (a bare level
    // is the default); one that does not parse leaves the default.
    let filter = std::env::var("RUST_LOG")
        .ok()
        .and_then(|directives| directives.parse::<Targets>().ok())
        .or_else(|| default.parse::<Targets>().ok())
        .unwrap_or_else(|| Targets::new().with_default(LevelFilter::WARN));
    let _ = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_target(false),
        )
        .with(filter)
        .try_init();
}

/// Runs the parsed command.
///
/// # Errors
/// A [`CliError`] to print.
pub fn run(cli: Cli) -> Result<(), CliError> {
    install_interrupt_handler();
    let result = match cli.command {
        Command::Fly(args) => fly_command(args),
        Command::Sim(args) => sim::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Px4(args) => px4_command(args),
        Command::Ardupilot(args) => ardupilot_command(args),
        Command::Replay(args) => replay::run(args),
        Command::Airsim(args) => airsim_command(args),
        Command::Compare(args) => compare::run(args),
        Command::Plot(args) => plot::run(args),
        Command::Test(args) => test::run(args),
    };
    as_interrupted(result, interrupted())
}

/// `mavsitl fly`: one vehicle, or a fleet when the scenario has several.
fn fly_command(args: fly::FlyArgs) -> Result<(), CliError> {
    let inputs = fly::load(&args)?;
    fly_to(args, inputs, &mut std::io::stdout())
}

/// `mavsitl fly` on loaded inputs, its summaries written to `out`.
fn fly_to(
    args: fly::FlyArgs,
    inputs: inputs::FlightInputs,
    out: &mut dyn std::io::Write,
) -> Result<(), CliError> {
    if fleet::is_fleet(&inputs) {
        fleet::run(&args, inputs, out)
    } else {
        fly::run(args, inputs, out)
    }
}

/// Writes a summary's text to `out` (stdout, or a suite pair's `run.log`).
fn emit(out: &mut dyn std::io::Write, text: std::fmt::Arguments<'_>) -> Result<(), CliError> {
    out.write_fmt(text)
        .map_err(|e| CliError::run(format!("cannot write the summary: {e}")))
}

/// A suite's SimpleFlight pair flown in this process (`mavsitl test`): the
/// child's `fly` arguments parsed as the program would, the summary and
/// any error in the pair's `run.log`, the exit code as the program's.
/// `None` (a child then flies it) for arguments that are not a `fly`, that
/// do not load, or a world with firmware vehicles, which need processes
/// and ports of their own.
pub fn fly_here(
    c: &mavsitl::batch::children::ChildFlight,
    _stop: &std::sync::atomic::AtomicBool,
) -> Option<mavsitl::batch::children::ChildOutcome> {
    let started = std::time::Instant::now();
    let argv = std::iter::once(std::ffi::OsString::from("mavsitl")).chain(c.args.iter().cloned());
    let Command::Fly(args) = Cli::try_parse_from(argv).ok()?.command else {
        return None;
    };
    let inputs = fly::load(&args).ok()?;
    let firmware = |c: &mavsitl::scenario::ControllerSpec| {
        matches!(
            c,
            mavsitl::scenario::ControllerSpec::Px4(_)
                | mavsitl::scenario::ControllerSpec::ArduPilot(_)
        )
    };
    if inputs
        .scenario
        .vehicles
        .iter()
        .any(|v| firmware(&v.controller))
    {
        return None;
    }
    std::fs::create_dir_all(&c.dir).ok()?;
    let mut log = std::fs::File::create(c.dir.join("run.log")).ok()?;
    // A flight that panics fails its pair (exit 101, as a panicking child's),
    // not the whole suite.
    let flown = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        fly_to(args, inputs, &mut log)
    }));
    use std::io::Write;
    let code = match flown {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => {
            let _ = writeln!(log, "error: {}", e.message);
            if let Some(hint) = &e.hint {
                let _ = writeln!(log, "hint: {hint}");
            }
            i32::from(e.code)
        }
        Err(_) => {
            let _ = writeln!(log, "error: the flight panicked (the message is on stderr)");
            101
        }
    };
    Some(mavsitl::batch::children::ChildOutcome {
        exit: Some(code),
        timed_out: false,
        wall_s: started.elapsed().as_secs_f64(),
    })
}

/// `mavsitl airsim`: SimpleFlight flies, or the settings' PX4, or the
/// client drives cars.
fn airsim_command(args: airsim::AirSimArgs) -> Result<(), CliError> {
    let loaded = airsim::load(&args)?;
    match &loaded.vehicle_type {
        mavsitl::airsim::settings::VehicleType::Px4(px4) => {
            let px4 = px4.clone();
            airsim_px4::run(&args, loaded.inputs, loaded.clock_speed, &px4)
        }
        mavsitl::airsim::settings::VehicleType::SimpleFlight => airsim::run(&args, loaded),
        mavsitl::airsim::settings::VehicleType::Car => airsim::run_cars(&args, loaded),
    }
}

/// `mavsitl px4`: one vehicle, or `--count` of them.
fn px4_command(args: px4::Px4Args) -> Result<(), CliError> {
    let inputs = px4::load(&args)?;
    if args.count > 1 {
        px4::run_count(&args, inputs)
    } else {
        px4::run(args, inputs)
    }
}

/// `mavsitl ardupilot`: one vehicle, or `--count` of them.
fn ardupilot_command(args: ardupilot::ArduPilotArgs) -> Result<(), CliError> {
    let inputs = ardupilot::load(&args)?;
    if args.count > 1 {
        ardupilot::run_count(&args, inputs)
    } else {
        ardupilot::run(args, inputs)
    }
}

/// Exit code of a run stopped by Ctrl-C, SIGTERM or SIGHUP, in every
/// subcommand (the shell's 128 + SIGINT).
pub const INTERRUPTED_CODE: u8 = 130;

/// A run the user stopped ends with [`INTERRUPTED_CODE`], whatever the
/// subcommand made of the stop (bad input found before it still says so).
fn as_interrupted(result: Result<(), CliError>, interrupted: bool) -> Result<(), CliError> {
    match result {
        _ if !interrupted => result,
        Err(e) if e.code == 2 => Err(e),
        Err(e) => Err(CliError {
            code: INTERRUPTED_CODE,
            ..e
        }),
        Ok(()) => Err(CliError {
            message: "interrupted; recordings flushed".into(),
            hint: None,
            code: INTERRUPTED_CODE,
        }),
    }
}

/// An open-loop run stopped by Ctrl-C at sim time `t`.
fn interrupted_at(t: mavsitl::time::SimTime) -> CliError {
    CliError {
        message: format!("interrupted at {t}; recordings flushed"),
        hint: None,
        code: INTERRUPTED_CODE,
    }
}

/// `--frame`: the frames a recording may be written in.
pub(crate) fn export_frame_parser(
) -> impl clap::builder::TypedValueParser<Value = mavsitl::geo::ExportFrame> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    use mavsitl::geo::ExportFrame;
    PossibleValuesParser::new([
        PossibleValue::new("ned")
            .help("World north-east-down, body forward-right-down (the simulation's own)"),
        PossibleValue::new("enu").help("World east-north-up, body forward-left-up (ROS REP-103)"),
        PossibleValue::new("iso8855")
            .help("World north-west-up, body forward-left-up (ISO 8855 vehicle axes)"),
    ])
    .map(|s| match s.as_str() {
        "enu" => ExportFrame::Enu,
        "iso8855" => ExportFrame::Iso8855,
        _ => ExportFrame::Ned,
    })
}
