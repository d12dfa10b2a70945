//! `mavsitl airsim`: AirSim's RPC API on TCP 41451 over SimpleFlight quads
//! (or a PX4Multirotor: PX4 SITL flying it over its simulator interface; or,
//! with SimMode "Car", the F1TENTH rover driven by the client's car
//! controls), for AirSim's own Python client and the scripts written for it.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;

use mavsitl::airsim::start;
pub(super) use mavsitl::airsim::start::Loaded;
use mavsitl::geo::ExportFrame;
use mavsitl::record::Recorder;
use mavsitl::sim::Simulation;

use super::inputs::FlightInputs;
use super::CliError;
use mavsitl::pacing::{parse_speedup, Speedup};

/// Arguments of `mavsitl airsim`.
#[derive(Debug, Args)]
pub struct AirSimArgs {
    /// Scenario (vehicle, environment, sensors); a quad by default.
    #[arg(long, value_name = "S", conflicts_with = "settings")]
    pub scenario: Option<PathBuf>,

    /// AirSim's settings.json (SimMode, ClockSpeed, OriginGeopoint, the
    /// vehicle, its sensors, Wind) instead of a scenario.
    #[arg(long, value_name = "FILE")]
    pub settings: Option<PathBuf>,

    /// The geometry the cameras and LiDARs see (a scene JSON file; see
    /// docs/reference/scene.md) [default: the scenario's, else a small
    /// world of blocks].
    #[arg(long, value_name = "FILE")]
    pub scene: Option<PathBuf>,

    /// TCP port of the RPC server (AirSim's is 41451).
    #[arg(long, default_value_t = 41451)]
    pub port: u16,

    /// Address to listen on (loopback unless asked).
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: std::net::IpAddr,

    /// Noise seed.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Sim time per real second while not paused (AirSim's ClockSpeed), or
    /// 'max'.
    /// [default: the settings' ClockSpeed, else 1]
    #[arg(long, value_name = "X|max", value_parser = parse_speedup)]
    pub clock_speed: Option<Speedup>,

    /// Write recordings (ground truth, every sensor sample) to this directory.
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,

    /// Start with the clock paused (as after `simPause(True)`), so that a
    /// client's data collection starts at sim time 0, the same every run.
    #[arg(long)]
    pub paused: bool,

    /// Stop after this much sim time, s (default: run until interrupted).
    #[arg(long, value_name = "S", value_parser = super::inputs::seconds_in(0.001, super::inputs::MAX_RUN_S))]
    pub duration: Option<f64>,

    /// For a PX4Multirotor vehicle: start PX4 SITL from this build directory
    /// (PX4-Autopilot's build/px4_sitl_default), with the settings'
    /// Parameters, instead of waiting for a PX4 started by hand.
    #[arg(long, value_name = "DIR", env = "PX4_BUILD_DIR")]
    pub px4_build: Option<PathBuf>,

    /// Keep a launched PX4's scratch working directory.
    #[arg(long)]
    pub keep_workdir: bool,

    /// Fly SimpleFlight on its estimator (the simulated sensors), which must
    /// converge before arming (~16 s), instead of on ground truth as AirSim's
    /// SimpleFlight does; the same as the settings' `"Parameters":
    /// {"SF_GROUND_TRUTH": 0}`.
    #[arg(long)]
    pub estimator: bool,
}

/// Loads `mavsitl airsim`'s world: from settings.json or a scenario, the
/// recording directory made.
pub(super) fn load(args: &AirSimArgs) -> Result<Loaded, CliError> {
    let files = (
        args.settings.as_deref(),
        args.scenario.as_ref(),
        args.scene.as_deref(),
    );
    let record = args.record.as_deref();
    start::load(files, args.seed, args.clock_speed, record)
}

/// Runs `mavsitl airsim` with SimpleFlight flying every vehicle.
pub(super) fn run(args: &AirSimArgs, loaded: Loaded) -> Result<(), CliError> {
    let params = start::param_text(args.estimator, &loaded.sf_params);
    let names = start::api_names(&loaded.inputs, args.settings.is_some());
    let mut inputs = loaded.inputs;
    start::as_simpleflight(&mut inputs);
    let (mut api, served) = start::simpleflight_api(inputs.clone(), params, names)?;
    let recorder = open_recorder(args, &inputs, api.sim())?;
    let server = start::bind_server(SocketAddr::new(args.bind, args.port))?;
    println!("{}", start::banner(&server, &served, loaded.clock_speed));
    let _ = std::io::stdout().flush();
    api.set_paused(args.paused);
    if loaded.external_physics {
        api.set_external_physics();
    }
    let pace = pace(args, loaded.clock_speed);
    start::serve_and_record(&mut api, &server, pace, recorder, &mut ()).map_err(CliError::run)
}

/// Runs `mavsitl airsim` with SimMode "Car": the client's car controls
/// drive every vehicle.
pub(super) fn run_cars(args: &AirSimArgs, loaded: Loaded) -> Result<(), CliError> {
    let names = start::api_names(&loaded.inputs, args.settings.is_some());
    let inputs = loaded.inputs;
    let (mut api, served) = start::car_api(inputs.clone(), names)?;
    let recorder = open_recorder(args, &inputs, api.sim())?;
    let server = start::bind_server(SocketAddr::new(args.bind, args.port))?;
    println!("{}", start::banner(&server, &served, loaded.clock_speed));
    let _ = std::io::stdout().flush();
    api.set_paused(args.paused);
    let pace = pace(args, loaded.clock_speed);
    start::serve_and_record(&mut api, &server, pace, recorder, &mut ()).map_err(CliError::run)
}

/// The recorder of `--record`, NED as AirSim's frames are.
pub(super) fn open_recorder(
    args: &AirSimArgs,
    inputs: &FlightInputs,
    sim: &Simulation,
) -> Result<Option<Recorder>, CliError> {
    mavsitl::recording::open_recorder(
        args.record.as_deref(),
        &inputs.scenario,
        sim,
        ExportFrame::Ned,
    )
}

/// The served clock: the clock speed, `--duration`, stopped by Ctrl-C.
pub(super) fn pace(args: &AirSimArgs, clock_speed: Speedup) -> start::Pace {
    start::Pace {
        clock_speed,
        duration_s: args.duration,
        stop: &super::INTERRUPTED,
    }
}
