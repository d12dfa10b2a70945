//! `mavsitl airsim`: AirSim's RPC API on TCP 41451 over SimpleFlight quads
//! (or a PX4Multirotor: PX4 SITL flying it over its simulator interface), for
//! AirSim's own Python client and the scripts written for it.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;

use mavsitl::airsim::settings::VehicleType;
use mavsitl::airsim::start;
use mavsitl::geo::ExportFrame;
use mavsitl::record::Recorder;
use mavsitl::sim::Simulation;

use super::inputs::{FlightInputs, VehicleArg};
use super::CliError;
use mavsitl::inputs::{load_inputs, InputArgs};
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

/// What the command line and the settings ask to serve.
pub(super) struct Loaded {
    /// The world and its vehicles.
    pub inputs: FlightInputs,
    /// The clock speed: `--clock-speed`, else the settings', else 1.
    pub clock_speed: Speedup,
    /// The settings' external physics (poses set by the client).
    external_physics: bool,
    /// Who flies: SimpleFlight, or a PX4.
    pub vehicle_type: VehicleType,
    /// The settings' SimpleFlight `Parameters`.
    sf_params: Vec<(String, String)>,
}

/// Loads `mavsitl airsim`'s world: from settings.json or a scenario, the
/// recording directory made.
pub(super) fn load(args: &AirSimArgs) -> Result<Loaded, CliError> {
    let (inputs, imported) = match &args.settings {
        Some(path) => {
            let (inputs, imported) = start::from_settings(path, args.seed)?;
            (inputs, Some(imported))
        }
        None => (scenario_inputs(args)?, None),
    };
    let clock_speed = args
        .clock_speed
        .or(imported
            .as_ref()
            .and_then(|i| i.clock_speed.map(Speedup::Factor)))
        .unwrap_or(Speedup::Factor(1.0));
    if let Some(dir) = &args.record {
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::input(format!("{}: cannot create: {e}", dir.display()), ""))?;
    }
    let (external_physics, vehicle_type, sf_params) = match imported {
        Some(i) => (
            i.external_physics,
            i.vehicle_type,
            i.simpleflight_parameters,
        ),
        None => (false, VehicleType::SimpleFlight, Vec::new()),
    };
    Ok(Loaded {
        inputs,
        clock_speed,
        external_physics,
        vehicle_type,
        sf_params,
    })
}

/// Runs `mavsitl airsim` with SimpleFlight flying every vehicle.
pub(super) fn run(args: &AirSimArgs, loaded: Loaded) -> Result<(), CliError> {
    let params = start::param_text(args.estimator, &loaded.sf_params);
    let names = start::api_names(&loaded.inputs, args.settings.is_some());
    run_simpleflight(
        args,
        loaded.inputs,
        loaded.clock_speed,
        loaded.external_physics,
        (params, names),
    )
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

pub(super) fn clock_text(clock_speed: Speedup) -> String {
    match clock_speed {
        Speedup::Max => "as fast as possible".to_string(),
        Speedup::Factor(k) => format!("clock speed {k}"),
    }
}

/// SimpleFlight flies the motion commands of every vehicle.
fn run_simpleflight(
    args: &AirSimArgs,
    inputs: FlightInputs,
    clock_speed: Speedup,
    external_physics: bool,
    (params, names): (String, Vec<String>),
) -> Result<(), CliError> {
    let mut inputs = inputs;
    start::as_simpleflight(&mut inputs);
    let (mut api, served) = start::simpleflight_api(inputs.clone(), params, names)?;
    let recorder = open_recorder(args, &inputs, api.sim())?;
    let server = start::bind_server(SocketAddr::new(args.bind, args.port))?;
    let listed: Vec<String> = served.iter().map(|n| format!("'{n}'")).collect();
    println!(
        "mavsitl airsim: AirSim API on tcp {}; {} {}; {}",
        server.local_addr(),
        if listed.len() == 1 {
            "vehicle"
        } else {
            "vehicles"
        },
        listed.join(", "),
        clock_text(clock_speed)
    );
    let _ = std::io::stdout().flush();
    api.set_paused(args.paused);
    if external_physics {
        api.set_external_physics();
    }
    start::serve_and_record(
        &mut api,
        &server,
        pace(args, clock_speed),
        recorder,
        &mut (),
    )
    .map_err(CliError::run)
}

/// The served clock: the clock speed, `--duration`, stopped by Ctrl-C.
pub(super) fn pace(args: &AirSimArgs, clock_speed: Speedup) -> start::Pace {
    start::Pace {
        clock_speed,
        duration_s: args.duration,
        stop: &super::INTERRUPTED,
    }
}

/// The flight's inputs from `--scenario` (or the built-in quad).
fn scenario_inputs(args: &AirSimArgs) -> Result<FlightInputs, CliError> {
    Ok(load_inputs(
        &InputArgs {
            mission: None,
            vehicle: Some(VehicleArg::Quad.kind()),
            scenario: args.scenario.as_ref(),
            seed: args.seed,
            faults: &[],
            home: None,
            params: None,
            ground_truth: false,
        },
        false,
    )?)
}
