//! `mavsitl px4`: real PX4 SITL flies the simulated vehicle over PX4's
//! simulator interface (TCP 4560 + instance), in lockstep on PX4's clock.

use std::io::Write as _;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;

use mavsitl::bridge::ground_station::Firmware as Dialect;
use mavsitl::bridge::px4::Px4Options;

use mavsitl::firmware::flight::FirmwareFlight;
use mavsitl::firmware::launcher::{FleetRun, Launcher, Px4Launcher};
use mavsitl::firmware::px4;
use mavsitl::firmware::px4::Px4Driver;
pub(super) use mavsitl::firmware::px4::{build, launch_spec, Px4Setup};

use super::firmware::{flight_title, FirmwareFlightArgs};
use super::inputs::{FlightInputs, VehicleArg, WorldArgs};
use super::CliError;
use mavsitl::launch::LaunchSpec;
use mavsitl::pacing::{parse_speedup, Speedup};

/// Arguments of `mavsitl px4`.
#[derive(Debug, Args)]
pub struct Px4Args {
    /// Vehicle when no scenario is given (default: the plan's kind, else a quad).
    #[arg(long, value_enum)]
    pub vehicle: Option<VehicleArg>,

    /// The simulated world.
    #[command(flatten)]
    pub world: WorldArgs,

    /// PX4 instance (`px4 -i N`): listens on TCP 4560 + N.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub instance: u8,

    /// Address to listen on (0.0.0.0 for PX4 in a container or on another host);
    /// with --udp, PX4's address.
    #[arg(long, value_name = "IP", default_value = "127.0.0.1")]
    pub bind: IpAddr,

    /// PX4 runs `simulator_mavlink start -u 14560` (UDP, PX4 binds): send to
    /// UDP 14560 + instance instead of listening on TCP.
    #[arg(long)]
    pub udp: bool,

    /// Pace at X times real time (default: PX4_SIM_SPEED_FACTOR if set, else as
    /// fast as PX4 answers).
    #[arg(long, value_name = "X|max", value_parser = parse_speedup)]
    pub speedup: Option<Speedup>,

    /// Longest wait for PX4's answer to a step while armed, ms.
    #[arg(long, value_name = "MS", default_value_t = mavsitl::firmware::launcher::PX4_ARMED_WAIT_MS)]
    pub armed_wait_ms: u64,

    /// PX4 silent this long (wall time) ends the run, s.
    #[arg(long, value_name = "S", default_value_t = mavsitl::firmware::launcher::GIVE_UP_S, value_parser = super::inputs::seconds_in(0.1, super::inputs::MAX_WAIT_S))]
    pub px4_timeout: f64,

    /// When PX4 stops or disconnects, wait for it to come back instead of exiting.
    #[arg(long)]
    pub wait_reconnect: bool,

    /// When PX4 restarts, keep the vehicle where it is instead of resetting the
    /// simulation to the scenario's start.
    #[arg(long)]
    pub keep_state: bool,

    /// Stop after this much sim time, s.
    #[arg(long, value_name = "S", value_parser = super::inputs::seconds_in(0.001, super::inputs::MAX_RUN_S))]
    pub duration: Option<f64>,

    /// Write recordings (ground truth, actuators, sensors) plus lockstep.csv
    /// (step counters); with a launched
    /// PX4 also firmware.log, with --mission also mission_events.csv and
    /// statustext.csv.
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,

    /// Start PX4 SITL from this build directory (PX4-Autopilot's
    /// build/px4_sitl_default, made by `make px4_sitl`) instead of waiting for
    /// a PX4 started by hand: a fresh working directory, the airframe's
    /// parameters from firmware_configs/px4, the instance's ports and the home.
    #[arg(long, value_name = "DIR", env = "PX4_BUILD_DIR")]
    pub px4_build: Option<PathBuf>,

    /// Fly N vehicles of one world with N PX4 instances (--instance + k),
    /// 5 m apart eastwards, each flying the --mission moved to its start;
    /// needs --px4-build.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=32))]
    pub count: u8,

    /// A flight in one command.
    #[command(flatten)]
    pub flight: FirmwareFlightArgs,
}

/// The command line's setup (instance, bind, workdir, record).
fn setup_of(args: &Px4Args) -> Px4Setup<'_> {
    Px4Setup {
        instance: args.instance,
        bind: args.bind,
        keep_workdir: args.flight.keep_workdir,
        record: args.record.as_deref(),
        params: &[],
        vehicle: 0,
    }
}

/// The bridge's options for `setup` and `inputs` (`launched`: PX4 started
/// here), stopped by Ctrl-C.
pub(super) fn bridge_options(
    setup: &Px4Setup,
    inputs: &FlightInputs,
    launched: bool,
) -> Px4Options {
    mavsitl::firmware::px4::bridge_options(setup, inputs, launched, &super::STOP_RUN)
}

/// The bridge's options for `setup`, with the command line's waits.
fn options_for(setup: &Px4Setup, args: &Px4Args, inputs: &FlightInputs) -> Px4Options {
    let mut opts = bridge_options(setup, inputs, args.px4_build.is_some());
    opts.armed_wait = Duration::from_millis(args.armed_wait_ms);
    opts.give_up_after = mavsitl::time::saturating_duration(args.px4_timeout);
    opts
}

/// Runs `mavsitl px4 --count N`: N PX4 instances (`--instance` + k) flying
/// N vehicles of one world, 5 m apart, each its own simulator port and
/// ground station flying the plan moved to its start; the loop advances
/// when every PX4 has answered its step.
pub(super) fn run_count(args: &Px4Args, mut inputs: FlightInputs) -> Result<(), CliError> {
    let Some(build) = args.px4_build.as_deref().filter(|_| !args.udp) else {
        return Err(CliError::input(
            "--count needs --px4-build (and TCP): mavsitl starts every instance",
            "add --px4-build PX4-Autopilot/build/px4_sitl_default",
        ));
    };
    mavsitl::inputs::copies(&mut inputs, args.count)?;
    let params = args
        .flight
        .firmware_params(true, "--px4-build", inputs.kind(0))?;
    let launcher = Launcher::Px4(Px4Launcher {
        bind: args.bind,
        keep_workdir: args.flight.keep_workdir,
        armed_wait: Duration::from_millis(args.armed_wait_ms),
        give_up_after: mavsitl::time::saturating_duration(args.px4_timeout),
        speedup: args.speedup,
        ..Px4Launcher::new(build)
    });
    let fleet = FleetRun {
        command: "px4",
        record: args.record.as_deref(),
        duration: args.duration,
        speedup: px4::speedup(args.speedup)?,
        adsb: args.flight.adsb,
        stop: &super::INTERRUPTED,
    };
    let first = (&launcher, args.instance, params.as_slice());
    super::firmware_instances::run(&inputs, first, &fleet, &args.flight.options())
}

/// What to run in another terminal, when PX4 is not launched here.
fn print_instructions(args: &Px4Args, inputs: &FlightInputs, opts: &Px4Options, speedup: Speedup) {
    let by_hand = px4::ByHand {
        udp: args.udp,
        listen: opts.listen,
        instance: args.instance,
        speedup,
    };
    for line in by_hand.instructions(inputs) {
        println!("{line}");
    }
    let _ = std::io::stdout().flush();
}

/// What `mavsitl px4` flies: the mission, scenario and parameters, once
/// `--instance` and `--count` are known to fit.
pub fn load(args: &Px4Args) -> Result<FlightInputs, CliError> {
    mavsitl::inputs::check_instances(args.instance, args.count)?;
    args.world
        .load(args.vehicle, args.flight.mission.as_ref(), VehicleArg::Quad)
}

/// Runs `mavsitl px4` for one vehicle.
pub fn run(args: Px4Args, inputs: FlightInputs) -> Result<(), CliError> {
    if args.udp && args.px4_build.is_some() {
        return Err(CliError::input(
            "--udp cannot be used with --px4-build: PX4's stock start-up connects over TCP",
            "leave out --udp",
        ));
    }
    let params =
        args.flight
            .firmware_params(args.px4_build.is_some(), "--px4-build", inputs.kind(0))?;
    let mut opts = options_for(&setup_of(&args), &args, &inputs);
    let port = px4::open_port(args.udp, args.bind, args.instance, &mut opts)?;
    let speedup = px4::speedup(args.speedup)?;
    let ls = build(&inputs, &port, &opts)?;
    let run = super::firmware::session(
        ls,
        &inputs,
        (args.record.as_deref(), args.duration),
        &args.flight,
    )?;
    let launch = launch_or_instruct(&args, &params, &inputs, &opts, speedup)?;
    let flight = FirmwareFlight::start(
        Dialect::Px4,
        args.instance,
        &args.flight.plan(&inputs, run.world().sim().world().frame()),
        launch,
        true,
    )?;
    let mut run = run.paced(speedup);
    let wall = Instant::now();
    let mut driver = Px4Driver {
        flight,
        inputs: &inputs,
        port: &port,
        opts: &opts,
        keep_state: args.keep_state,
        wait_forever: args.wait_reconnect,
        interrupted: &super::INTERRUPTED,
        restarts: 0,
        failed: None,
    };
    let outcome = run.run(&mut driver);
    let Px4Driver {
        flight,
        restarts,
        failed,
        ..
    } = driver;
    let st = port.borrow().stats();
    if let Some(dir) = &args.record {
        px4::write_lockstep_csv(dir, &st, restarts);
    }
    run.finish(outcome.is_ok()).map_err(CliError::run)?;
    let sim = run.world().sim();
    let wall_s = wall.elapsed().as_secs_f64();
    let title = flight_title("px4", &inputs, inputs.kind(0));
    let summary = flight.flies_mission();
    super::firmware::finish(flight, sim, &outcome, args.record.as_deref(), title);
    if !summary {
        println!("mavsitl px4 stopped");
        println!(
            "  sim time            {:.1} s ({:.1}x real time)",
            sim.time().as_secs_f64(),
            sim.time().as_secs_f64() / wall_s.max(1e-9)
        );
    }
    print!("{}", px4::LockstepRows(&st, restarts));
    outcome.map_err(|why| failed.map_or_else(|| CliError::run(why), CliError::from))
}

/// With `--px4-build`, what to start PX4 with; without, the instructions to
/// start it by hand (printed) and None.
fn launch_or_instruct(
    args: &Px4Args,
    params: &[(String, String)],
    inputs: &FlightInputs,
    opts: &Px4Options,
    speedup: Speedup,
) -> Result<Option<LaunchSpec>, CliError> {
    match &args.px4_build {
        Some(dir) => {
            let setup = Px4Setup {
                params,
                ..setup_of(args)
            };
            Ok(Some(launch_spec(dir, &setup, inputs, speedup)?))
        }
        None => {
            print_instructions(args, inputs, opts, speedup);
            Ok(None)
        }
    }
}
