//! `mavsitl airsim`: AirSim's RPC API on TCP 41451 over SimpleFlight quads
//! (or a PX4Multirotor: PX4 SITL flying it over its simulator interface), for
//! AirSim's own Python client and the scripts written for it.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;

use mavsitl::airsim::api::{FirmwarePilot, SimpleFlightVehicle};
use mavsitl::airsim::serve::{ApiDriver, ApiWorld, Watch};
use mavsitl::airsim::settings::{Px4Settings, VehicleType};
use mavsitl::airsim::{settings, AirSimApi, Server};
use mavsitl::bridge::ground_station::Firmware as Dialect;
use mavsitl::bridge::px4::Px4Port;
use mavsitl::geo::ExportFrame;
use mavsitl::mission::Mission;
use mavsitl::record::Recorder;
use mavsitl::scenario::{ControllerSpec, Scenario, ScenarioSource, VehicleKind};
use mavsitl::session::Session;
use mavsitl::setup;
use mavsitl::sim::Simulation;
use mavsitl::time::SimTime;

use mavsitl::firmware::flight::FirmwareFlight;

use super::firmware::FirmwareFlightArgs;
use super::px4::Px4Setup;

use super::inputs::{load_inputs, FlightInputs, InputArgs, VehicleArg};
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

/// SimpleFlight's parameters in the AirSim mode, as AirSim's SimpleFlight
/// behaves: on ground truth (ready to arm at once), no automatic disarming
/// (AirSim's stays armed on the ground), and descents as fast as PX4's
/// limit allows (AirSim's examples ask 5 m/s; MPC_Z_VEL_MAX_DN tops at 4).
pub const AIRSIM_PARAMS: &str =
    "SF_GROUND_TRUTH 1\nCOM_DISARM_PRFLT -1\nCOM_DISARM_LAND -1\nMPC_Z_VEL_MAX_DN 4\n";

/// The AirSim mode's parameter text: [`AIRSIM_PARAMS`], then `--estimator`,
/// then the settings' own `Parameters` (last wins).
fn airsim_param_text(args: &AirSimArgs, from_settings: &[(String, String)]) -> String {
    let mut text = AIRSIM_PARAMS.to_string();
    if args.estimator {
        text.push_str("SF_GROUND_TRUTH 0\n");
    }
    for (name, value) in from_settings {
        text.push_str(&format!("{name} {value}\n"));
    }
    text
}

/// A PX4 flying the vehicle: connected yet, still running.
struct Px4Watch {
    port: Px4Port,
    flight: FirmwareFlight,
    connected: bool,
}

impl Watch for Px4Watch {
    fn ready(&mut self) -> Result<bool, String> {
        if self.connected {
            return Ok(true);
        }
        if let Some(why) = self.flight.exited() {
            return Err(why);
        }
        self.connected = self
            .port
            .borrow_mut()
            .wait_for_connection(Some(Duration::ZERO));
        if self.connected {
            eprintln!("PX4 connected: the clock runs");
        }
        Ok(self.connected)
    }

    fn after_tick(&mut self, sim: &Simulation) -> Option<Result<(), String>> {
        self.flight.after_tick(sim)
    }

    fn explain(&self, error: String) -> String {
        self.flight.explain(error)
    }
}

/// Runs `mavsitl airsim`.
pub fn run(mut args: AirSimArgs) -> Result<(), CliError> {
    let mut external_physics = false;
    let mut vehicle_type = VehicleType::SimpleFlight;
    let mut sf_params = Vec::new();
    let inputs = match &args.settings {
        Some(path) => {
            let (inputs, imported) = from_settings(path, args.seed)?;
            args.clock_speed = args
                .clock_speed
                .or(imported.clock_speed.map(Speedup::Factor));
            external_physics = imported.external_physics;
            vehicle_type = imported.vehicle_type;
            sf_params = imported.simpleflight_parameters;
            inputs
        }
        None => scenario_inputs(&args)?,
    };
    let clock_speed = args.clock_speed.unwrap_or(Speedup::Factor(1.0));
    if let Some(dir) = &args.record {
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::input(format!("{}: cannot create: {e}", dir.display()), ""))?;
    }
    match vehicle_type {
        VehicleType::SimpleFlight => {
            let params = airsim_param_text(&args, &sf_params);
            let names = api_names(&inputs, args.settings.is_some());
            run_simpleflight(
                &args,
                inputs,
                clock_speed,
                external_physics,
                (params, names),
            )
        }
        VehicleType::Px4(px4) => run_px4(&args, inputs, clock_speed, &px4),
    }
}

/// The recorder of `--record`, NED as AirSim's frames are.
fn open_recorder(
    args: &AirSimArgs,
    inputs: &FlightInputs,
    sim: &Simulation,
) -> Result<Option<Recorder>, CliError> {
    super::open_recorder(
        args.record.as_deref(),
        &inputs.scenario,
        sim,
        ExportFrame::Ned,
    )
}

/// The RPC server on the command line's address.
fn bind_server(args: &AirSimArgs) -> Result<Server, CliError> {
    let addr = SocketAddr::new(args.bind, args.port);
    Server::bind(addr).map_err(|e| {
        CliError::input(
            format!("cannot listen on TCP {addr}: {e}"),
            "another simulator (AirSim, mavsitl) may hold it: use --port",
        )
    })
}

fn clock_text(clock_speed: Speedup) -> String {
    match clock_speed {
        Speedup::Max => "as fast as possible".to_string(),
        Speedup::Factor(k) => format!("clock speed {k}"),
    }
}

/// Serves the API until the end (Ctrl-C or the duration), then closes the
/// recording.
fn serve_and_record(
    api: &mut AirSimApi,
    server: &Server,
    args: &AirSimArgs,
    clock_speed: Speedup,
    recorder: Option<Recorder>,
    watch: &mut dyn Watch,
) -> Result<(), String> {
    let period = api.sim().rate().period_us();
    // Ticks paced at the clock speed, continues included, as AirSim's.
    let mut run = Session::new(ApiWorld::new(api), period)
        .paced(clock_speed)
        .until(args.duration.map(SimTime::from_secs_f64))
        .recording(recorder)
        .interrupted_by(&super::INTERRUPTED);
    let outcome = run.run(&mut ApiDriver::new(server, watch));
    run.finish(outcome.is_ok())?;
    outcome
}

/// A PX4Multirotor: PX4 SITL flies the vehicle over its simulator interface
/// (TCP 4560 + instance, in lockstep); the API serves state, sensors and
/// the clock.
fn run_px4(
    args: &AirSimArgs,
    inputs: FlightInputs,
    clock_speed: Speedup,
    px4: &Px4Settings,
) -> Result<(), CliError> {
    let setup = Px4Setup {
        instance: px4.instance,
        bind: std::net::IpAddr::from([127, 0, 0, 1]),
        keep_workdir: args.keep_workdir,
        record: args.record.as_deref(),
        params: &px4.parameters,
        vehicle: 0,
    };
    let opts = super::px4::bridge_options(&setup, &inputs, args.px4_build.is_some());
    let port = super::px4::listen(&opts, "give the vehicle another TcpPort")?;
    let lockstep = super::px4::build(&inputs, &port, &opts)?;
    let recorder = open_recorder(args, &inputs, lockstep.sim())?;
    let server = bind_server(args)?;
    println!(
        "mavsitl airsim: AirSim API on tcp {}; PX4 flies the vehicle (simulator port tcp {}); {}",
        server.local_addr(),
        opts.listen,
        clock_text(clock_speed)
    );
    let launch = match &args.px4_build {
        Some(dir) => Some(super::px4::launch_spec(dir, &setup, &inputs, clock_speed)?),
        None => {
            print_px4_instructions(px4);
            None
        }
    };
    let _ = std::io::stdout().flush();
    let flight_args = FirmwareFlightArgs {
        mission: None,
        ready_timeout: 120.0,
        // No mission: not used.
        mission_timeout: 1800.0,
        gcs_forward: None,
        keep_workdir: args.keep_workdir,
        params: None,
        adsb: false,
    };
    let flight = FirmwareFlight::start(
        Dialect::Px4,
        px4.instance,
        &flight_args.plan(&inputs, lockstep.sim().world().frame()),
        launch,
        true,
    )?;
    let stats = port.clone();
    let name = api_names(&inputs, args.settings.is_some())
        .into_iter()
        .next()
        .unwrap_or_default();
    let mut api = AirSimApi::with_firmware(
        lockstep,
        &name,
        FirmwarePilot {
            name: "PX4",
            mavlink: format!(
                "MAVSDK on udp://:{}, QGroundControl on udp 14550",
                offboard_port(px4.instance)
            ),
            armed: Box::new(move || stats.borrow().stats().armed),
        },
    );
    api.set_paused(args.paused);
    let mut watch = Px4Watch {
        port,
        flight,
        connected: false,
    };
    let outcome = serve_and_record(&mut api, &server, args, clock_speed, recorder, &mut watch);
    super::firmware::finish(
        watch.flight,
        api.sim(),
        &outcome,
        args.record.as_deref(),
        String::new(),
    );
    outcome.map_err(CliError::run)
}

/// The UDP port PX4 instance `n` sends its offboard (MAVSDK) link to:
/// 14540 + n, and 14549 from n = 10 on (PX4's px4-rc.mavlink).
fn offboard_port(n: u8) -> u16 {
    if n < 10 {
        14540 + n as u16
    } else {
        14549
    }
}

/// What to run in another terminal when PX4 is not started here.
fn print_px4_instructions(px4: &Px4Settings) {
    println!(
        "  start PX4 SITL instance {0} in another terminal: source firmware_configs/px4/generic_quad.env && cd PX4-Autopilot/build/px4_sitl_default/rootfs && ../bin/px4 -d -i {0}",
        px4.instance
    );
    if !px4.parameters.is_empty() {
        let names: Vec<&str> = px4.parameters.iter().map(|(n, _)| n.as_str()).collect();
        println!(
            "  (and set the settings' Parameters there: {}; --px4-build sets them for you)",
            names.join(", ")
        );
    }
}

/// The API's names of the scenario's vehicles: AirSim's default
/// "SimpleFlight" for a lone vehicle of a scenario, else the scenario's (or
/// the settings') own.
fn api_names(inputs: &FlightInputs, from_settings: bool) -> Vec<String> {
    let vehicles = &inputs.scenario.vehicles;
    if vehicles.len() == 1 && !from_settings {
        return vec![mavsitl::airsim::api::VEHICLE_NAME.to_string()];
    }
    vehicles.iter().map(|v| v.name.clone()).collect()
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
    for v in &mut inputs.scenario.vehicles {
        v.controller = ControllerSpec::SimpleFlight(Default::default());
    }
    let inputs = std::rc::Rc::new(inputs);
    let build = {
        let inputs = inputs.clone();
        move || {
            let plan = setup::PilotPlan {
                mission: &inputs.mission,
                mission_name: &inputs.mission_name,
                param_file: Some((&params, "the AirSim mode's parameters")),
                auto_arm: false,
            };
            let fleet = setup::fleet(&inputs.scenario, &inputs.source, &plan)?;
            let vehicles: Vec<SimpleFlightVehicle> = fleet
                .pilots
                .into_iter()
                .map(|p| SimpleFlightVehicle {
                    name: names.get(p.index).cloned().unwrap_or_default(),
                    index: p.index,
                    status: p.status,
                    requests: p.requests,
                })
                .collect();
            Ok::<_, setup::SetupError>((fleet.lockstep, vehicles))
        }
    };
    let (lockstep, vehicles) =
        build().map_err(|e| CliError::input(e.to_string(), "check the scenario"))?;
    if inputs
        .scenario
        .vehicles
        .iter()
        .any(|v| v.kind != VehicleKind::Multirotor)
    {
        return Err(CliError::input(
            "airsim: a vehicle of the scenario is not a multirotor",
            "AirSim's API here is the multirotor one: use quads",
        ));
    }
    let recorder = open_recorder(args, &inputs, lockstep.sim())?;
    let server = bind_server(args)?;
    let listed: Vec<String> = vehicles.iter().map(|v| format!("'{}'", v.name)).collect();
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
    let mut api = AirSimApi::new(lockstep, vehicles, Box::new(build));
    api.set_paused(args.paused);
    if external_physics {
        api.set_external_physics();
    }
    serve_and_record(&mut api, &server, args, clock_speed, recorder, &mut ()).map_err(CliError::run)
}

/// The flight's inputs from `--scenario` (or the built-in quad).
fn scenario_inputs(args: &AirSimArgs) -> Result<FlightInputs, CliError> {
    load_inputs(
        &InputArgs {
            mission: None,
            vehicle: Some(VehicleArg::Quad),
            scenario: args.scenario.as_ref(),
            seed: args.seed,
            faults: &[],
            home: None,
            params: None,
            ground_truth: false,
        },
        false,
    )
}

/// The flight's inputs from AirSim's settings.json, and the rest of what
/// the settings say (ClockSpeed, external physics, who flies).
fn from_settings(
    path: &Path,
    seed: Option<u64>,
) -> Result<(FlightInputs, settings::Imported), CliError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::input(format!("{name}: cannot read: {e}"), ""))?;
    let imported = settings::import(&text, &name)
        .map_err(|e| CliError::input(e, "see docs/commands/airsim.md"))?;
    for w in &imported.warnings {
        eprintln!("warning: {w}");
    }
    let source = ScenarioSource {
        name: name.clone(),
        base_dir: path.parent().map(PathBuf::from).unwrap_or_default(),
    };
    let mut scenario = Scenario::from_json(&imported.scenario.to_string(), &source)
        .map_err(|e| CliError::input(e.to_string(), "see docs/commands/airsim.md"))?;
    if let Some(seed) = seed {
        scenario.seed = seed;
    }
    Ok((
        FlightInputs {
            mission: Mission::default(),
            mission_name: "none".into(),
            scenario,
            source,
            param_text: None,
        },
        imported,
    ))
}
