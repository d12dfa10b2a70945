//! `mavsitl airsim`: AirSim's RPC API on TCP 41451 over a SimpleFlight quad,
//! for AirSim's own Python client and the scripts written for it.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;

use mavsitl::airsim::{settings, AirSimApi, Incoming, Server};
use mavsitl::autopilot::setup;
use mavsitl::geo::ExportFrame;
use mavsitl::mission::Mission;
use mavsitl::scenario::{Scenario, ScenarioSource};
use mavsitl::sim::Observer;
use mavsitl::time::SimTime;

use super::fly::{load_inputs, FlightInputs, InputArgs, VehicleArg};
use super::gcs::{parse_speedup, Pacer, Speedup};
use super::CliError;

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
    #[arg(long, value_name = "S")]
    pub duration: Option<f64>,
}

/// Runs `mavsitl airsim`.
pub fn run(mut args: AirSimArgs) -> Result<(), CliError> {
    let mut external_physics = false;
    let inputs = match &args.settings {
        Some(path) => {
            let (inputs, clock, external) = from_settings(path, args.seed)?;
            args.clock_speed = args.clock_speed.or(clock.map(Speedup::Factor));
            external_physics = external;
            inputs
        }
        None => scenario_inputs(&args)?,
    };
    let clock_speed = args.clock_speed.unwrap_or(Speedup::Factor(1.0));
    let inputs = std::rc::Rc::new(inputs);
    let build = {
        let inputs = inputs.clone();
        move || {
            setup::flight(
                &inputs.mission,
                &inputs.mission_name,
                &inputs.scenario,
                &inputs.source,
                None,
                false,
            )
        }
    };
    let flight = build().map_err(|e| CliError::input(e, "check the scenario"))?;
    if !flight.multicopter {
        return Err(CliError::input(
            "airsim: the scenario's vehicle is not a multirotor",
            "AirSim's API here is the multirotor one: use a quad scenario",
        ));
    }
    if let Some(dir) = &args.record {
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::input(format!("{}: cannot create: {e}", dir.display()), ""))?;
    }
    let mut recorder = super::open_recorder(
        args.record.as_deref(),
        &inputs.scenario,
        flight.lockstep.sim(),
        ExportFrame::Ned,
    )?;
    let addr = SocketAddr::new(args.bind, args.port);
    let server = Server::bind(addr).map_err(|e| {
        CliError::input(
            format!("cannot listen on TCP {addr}: {e}"),
            "another simulator (AirSim, mavsitl) may hold it: use --port",
        )
    })?;
    println!(
        "mavsitl airsim: AirSim API on tcp {}; vehicle '{}'; {}",
        server.local_addr(),
        mavsitl::airsim::api::VEHICLE_NAME,
        match clock_speed {
            Speedup::Max => "as fast as possible".to_string(),
            Speedup::Factor(k) => format!("clock speed {k}"),
        }
    );
    let _ = std::io::stdout().flush();
    let mut api = AirSimApi::new(flight, Box::new(build));
    api.set_paused(args.paused);
    if external_physics {
        api.set_external_physics();
    }
    let outcome = serve(
        &mut api,
        &server,
        clock_speed,
        args.duration,
        recorder.as_mut(),
    );
    if let Some(r) = recorder.as_mut() {
        let sim = api.flight().lockstep.sim();
        let _ = r.on_tick(sim);
        r.finish(sim, outcome.is_ok())
            .map_err(|e| CliError::run(format!("recording: {e}")))?;
    }
    outcome.map_err(CliError::run)
}

/// The loop: answer calls, tick while running (paced unless continuing
/// after a pause), until Ctrl-C or the duration.
fn serve(
    api: &mut AirSimApi,
    server: &Server,
    clock_speed: Speedup,
    duration: Option<f64>,
    mut recorder: Option<&mut mavsitl::record::Recorder>,
) -> Result<(), String> {
    let end = duration.map(SimTime::from_secs_f64);
    let period = api.flight().lockstep.sim().rate().period_us();
    let mut pacer = Pacer::new(clock_speed, api.now());
    let mut was_paced = true;
    let mut replies = Vec::new();
    loop {
        if super::interrupted() || end.is_some_and(|e| api.now() >= e) {
            return Ok(());
        }
        while let Some(m) = server.try_recv() {
            match m {
                Incoming::Call(call) => api.handle(call, &mut replies),
                Incoming::Closed(conn) => api.closed(conn),
            }
        }
        for (conn, msgid, answer) in replies.drain(..) {
            server.respond(conn, msgid, answer);
        }
        if !api.running() {
            if let Some(m) = server.recv_timeout(Duration::from_millis(20)) {
                match m {
                    Incoming::Call(call) => api.handle(call, &mut replies),
                    Incoming::Closed(conn) => api.closed(conn),
                }
            }
            continue;
        }
        // Paced when running freely; a continue after a pause runs flat out.
        let paced = !api.paused();
        if paced && !was_paced {
            pacer.restart(api.now());
        }
        was_paced = paced;
        if paced {
            let wait = pacer.wait(SimTime::from_micros(api.now().as_micros() + period));
            if !wait.is_zero() {
                if let Some(m) = server.recv_timeout(wait.min(Duration::from_millis(2))) {
                    match m {
                        Incoming::Call(call) => api.handle(call, &mut replies),
                        Incoming::Closed(conn) => api.closed(conn),
                    }
                }
                continue;
            }
        }
        let done = match recorder.as_deref_mut() {
            Some(r) => api.tick(r),
            None => api.tick(&mut ()),
        }
        .map_err(|e| format!("simulation stopped: {e}"))?;
        replies.extend(done);
    }
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

/// The flight's inputs from AirSim's settings.json, its ClockSpeed and
/// whether it asks for external physics.
fn from_settings(
    path: &Path,
    seed: Option<u64>,
) -> Result<(FlightInputs, Option<f64>, bool), CliError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::input(format!("{name}: cannot read: {e}"), ""))?;
    let imported = settings::import(&text, &name)
        .map_err(|e| CliError::input(e, "see the README's AirSim section"))?;
    for w in &imported.warnings {
        eprintln!("warning: {w}");
    }
    let source = ScenarioSource {
        name: name.clone(),
        base_dir: path.parent().map(PathBuf::from).unwrap_or_default(),
    };
    let mut scenario = Scenario::from_json(&imported.scenario.to_string(), &source)
        .map_err(|e| CliError::input(e.to_string(), "see the README's AirSim section"))?;
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
        imported.clock_speed,
        imported.external_physics,
    ))
}
