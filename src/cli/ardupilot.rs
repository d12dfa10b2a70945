//! `mavsitl ardupilot`: real ArduPilot SITL flies the simulated vehicle over
//! its JSON external-physics backend (UDP 9002 + 10 × instance).

use std::io::Write as _;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;

use mavsitl::bridge::ardupilot::ArduPilotOptions;
use mavsitl::bridge::ground_station::Firmware as Dialect;
use mavsitl::scenario::VehicleKind;

use mavsitl::firmware::ardupilot::at_frame_rate;
use mavsitl::firmware::ardupilot::{bridge_options, build, ArduPilotDriver, ArduPilotSetup};
use mavsitl::firmware::flight::FirmwareFlight;
use mavsitl::firmware::launcher::{ArduPilotLauncher, FleetRun, Launcher};

use super::firmware::{flight_title, FirmwareFlightArgs};
use super::inputs::{FlightInputs, VehicleArg, WorldArgs};
use super::CliError;
use mavsitl::pacing::{parse_speedup, Speedup};

/// Arguments of `mavsitl ardupilot`.
#[derive(Debug, Args)]
pub struct ArduPilotArgs {
    /// Vehicle when no scenario is given (default: the plan's kind, else a boat).
    #[arg(long, value_enum)]
    pub vehicle: Option<VehicleArg>,

    /// The simulated world.
    #[command(flatten)]
    pub world: WorldArgs,

    /// ArduPilot instance (`-I N`): UDP 9002 + 10 N.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub instance: u8,

    /// Address to bind.
    #[arg(long, value_name = "IP", default_value = "127.0.0.1")]
    pub bind: IpAddr,

    /// Frames a second of sim time, Hz (default 800 for a quad, 100 for a boat
    /// or a rover): ArduPilot's SIM_RATE_HZ, which a launched ArduPilot is
    /// given (set it yourself when starting ArduPilot by hand; the parameter
    /// files say the defaults). ArduPilot's IMU samples once a frame, and its
    /// pre-arm check wants the gyro at 1.8 × its main loop (Copter 400 Hz,
    /// Rover 50 Hz) or faster.
    #[arg(long, value_name = "HZ")]
    pub frame_rate: Option<u32>,

    /// Pace at X times real time (default: as fast as ArduPilot runs; ArduPilot
    /// paces itself with --speedup).
    #[arg(long, value_name = "X|max", value_parser = parse_speedup)]
    pub speedup: Option<Speedup>,

    /// ArduPilot silent this long ends the run, s.
    #[arg(long, value_name = "S", default_value_t = mavsitl::firmware::launcher::GIVE_UP_S, value_parser = super::inputs::seconds_in(0.1, super::inputs::MAX_WAIT_S))]
    pub timeout: f64,

    /// Keep waiting when ArduPilot stops instead of exiting.
    #[arg(long)]
    pub wait_reconnect: bool,

    /// Stop after this much sim time, s.
    #[arg(long, value_name = "S", value_parser = super::inputs::seconds_in(0.001, super::inputs::MAX_RUN_S))]
    pub duration: Option<f64>,

    /// Write recordings (ground truth, sensors); with a launched ArduPilot
    /// also firmware.log, with --mission also mission_events.csv and
    /// statustext.csv.
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,

    /// Start ArduPilot SITL: an ArduPilot checkout with build/sitl/bin/
    /// (`./waf configure --board sitl && ./waf copter rover`), whose
    /// Tools/autotest/default_params give the stock defaults, or a SITL binary
    /// (then the stock defaults come from --defaults).
    #[arg(long, value_name = "PATH", env = "ARDUPILOT_HOME")]
    pub ardupilot: Option<PathBuf>,

    /// ArduPilot's stock parameter files (comma-separated) when --ardupilot
    /// names a binary; mavsitl's own (firmware_configs/ardupilot) follow them.
    #[arg(long, value_name = "FILES")]
    pub defaults: Option<String>,

    /// Fly N vehicles of one world with N ArduPilot instances (--instance +
    /// k), 5 m apart eastwards, each flying the --mission moved to its start;
    /// needs --ardupilot.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=32))]
    pub count: u8,

    /// A flight in one command.
    #[command(flatten)]
    pub flight: FirmwareFlightArgs,
}

/// The frame rate: --frame-rate, else the vehicle's default.
fn frame_rate_of(args: &ArduPilotArgs, kind: VehicleKind) -> Result<u32, CliError> {
    Ok(mavsitl::firmware::ardupilot::frame_rate(
        args.frame_rate,
        kind,
    )?)
}

/// The command line's setup of ArduPilot `instance`, recording into
/// `record`.
fn setup_of<'a>(
    args: &'a ArduPilotArgs,
    (instance, frame_rate): (u8, u32),
    record: Option<&'a Path>,
) -> ArduPilotSetup<'a> {
    ArduPilotSetup {
        instance,
        bind: args.bind,
        record,
        speedup: args.speedup,
        keep_workdir: args.flight.keep_workdir,
        defaults: args.defaults.as_deref(),
        frame_rate,
        vehicle: 0,
    }
}

/// What to run in another terminal, when ArduPilot is not launched here.
fn print_instructions(args: &ArduPilotArgs, inputs: &FlightInputs, opts: &ArduPilotOptions) {
    let by_hand = mavsitl::firmware::ardupilot::ByHand {
        bind: args.bind,
        instance: args.instance,
        fly_plan: args.flight.mission.is_some(),
    };
    for line in by_hand.instructions(inputs, opts) {
        println!("{line}");
    }
    let _ = std::io::stdout().flush();
}

/// The bridge's options for `instance` (UDP 9002 + 10 × instance).
fn options(
    args: &ArduPilotArgs,
    instance: u8,
    kind: VehicleKind,
    frame_rate: u32,
) -> ArduPilotOptions {
    bridge_options(
        (args.bind, instance),
        kind,
        frame_rate,
        mavsitl::time::saturating_duration(args.timeout),
        (&super::STOP_RUN, args.ardupilot.is_some()),
    )
}

/// What `mavsitl ardupilot` flies: the mission, scenario and parameters.
pub fn load(args: &ArduPilotArgs) -> Result<FlightInputs, CliError> {
    args.world
        .load(args.vehicle, args.flight.mission.as_ref(), VehicleArg::Boat)
}

/// Runs `mavsitl ardupilot --count N`: N ArduPilot instances
/// (`--instance` + k) flying N vehicles of one world, each its own JSON
/// port (UDP 9002 + 10 × instance) and ground station flying the plan moved
/// to its start, with the same home: the JSON backend's positions are NED
/// from it.
pub(super) fn run_count(args: &ArduPilotArgs, mut inputs: FlightInputs) -> Result<(), CliError> {
    let Some(path) = args.ardupilot.as_deref() else {
        return Err(CliError::input(
            "--count needs --ardupilot: mavsitl starts every instance",
            "add --ardupilot <ArduPilot checkout>",
        ));
    };
    mavsitl::inputs::copies(&mut inputs, args.count)?;
    let frame_rate = frame_rate_of(args, inputs.kind(0))?;
    let params = args
        .flight
        .firmware_params(true, "--ardupilot", inputs.kind(0))?;
    at_frame_rate(&mut inputs, frame_rate);
    let launcher = Launcher::ArduPilot(ArduPilotLauncher {
        bind: args.bind,
        keep_workdir: args.flight.keep_workdir,
        defaults: args.defaults.as_deref(),
        speedup: args.speedup,
        give_up_after: mavsitl::time::saturating_duration(args.timeout),
        ..ArduPilotLauncher::new(path, frame_rate)
    });
    let fleet = FleetRun {
        command: "ardupilot",
        record: args.record.as_deref(),
        duration: args.duration,
        speedup: args.speedup.unwrap_or(Speedup::Max),
        adsb: args.flight.adsb,
        stop: &super::INTERRUPTED,
    };
    let first = (&launcher, args.instance, params.as_slice());
    super::firmware_instances::run(&inputs, first, &fleet, &args.flight.options())
}

/// Runs `mavsitl ardupilot` for one vehicle.
pub fn run(args: ArduPilotArgs, mut inputs: FlightInputs) -> Result<(), CliError> {
    let kind = inputs.kind(0);
    let frame_rate = frame_rate_of(&args, kind)?;
    let params = args
        .flight
        .firmware_params(args.ardupilot.is_some(), "--ardupilot", kind)?;
    let opts = options(&args, args.instance, kind, frame_rate);
    at_frame_rate(&mut inputs, frame_rate);
    let ls = build(&inputs, &opts)?;
    let run = super::firmware::session(
        ls,
        &inputs,
        (args.record.as_deref(), args.duration),
        &args.flight,
    )?;
    let launch = match &args.ardupilot {
        Some(path) => Some(mavsitl::firmware::ardupilot::launch_spec(
            path,
            &setup_of(&args, (args.instance, frame_rate), args.record.as_deref()),
            &inputs,
            kind,
            &params,
        )?),
        None => {
            print_instructions(&args, &inputs, &opts);
            None
        }
    };
    let flight = FirmwareFlight::start(
        if kind.is_multirotor() {
            Dialect::ArduCopter
        } else {
            Dialect::ArduRover
        },
        args.instance,
        &args.flight.plan(&inputs, run.world().sim().world().frame()),
        launch,
        true,
    )?;
    let mut run = run.paced(args.speedup.unwrap_or(Speedup::Max));
    let wall = Instant::now();
    let mut driver = ArduPilotDriver::new(flight, &inputs, &opts, args.wait_reconnect);
    let outcome = run.run(&mut driver);
    run.finish(outcome.is_ok()).map_err(CliError::run)?;
    let ArduPilotDriver {
        flight,
        restarts,
        failed,
        ..
    } = driver;
    let ls = run.world();
    let t = ls.sim().time().as_secs_f64();
    let title = flight_title("ardupilot", &inputs, kind);
    let summary = flight.flies_mission();
    super::firmware::finish(flight, ls.sim(), &outcome, args.record.as_deref(), title);
    if !summary {
        println!("mavsitl ardupilot stopped");
    }
    println!(
        "  sim time            {t:.1} s ({:.1}x real time), {restarts} restart(s)",
        t / wall.elapsed().as_secs_f64().max(1e-9)
    );
    outcome.map_err(|why| failed.map_or_else(|| CliError::run(why), CliError::from))
}
