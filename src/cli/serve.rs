//! `mavsitl serve`: SimpleFlight as a MAVLink vehicle, waiting for a ground
//! station (QGroundControl, MAVSDK, MAVProxy, pymavlink) to fly it.

use std::io::Write as _;
use std::path::PathBuf;

use clap::Args;

use mavsitl::autopilot::setup;
use mavsitl::geo::ExportFrame;
use mavsitl::scenario::Home;
use mavsitl::sim::Observer;
use mavsitl::time::{PhysicsRate, SimTime};

use super::fly::{load_inputs, InputArgs, VehicleArg};
use super::gcs::{GcsArgs, GcsSession, Pacer, Speedup};
use super::NextTick;
use super::{home, CliError};

/// Arguments of `mavsitl serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Vehicle (default: a boat for a plan made for a boat or rover, else a quad).
    #[arg(long, value_enum)]
    pub vehicle: Option<VehicleArg>,

    /// Scenario (vehicle, environment, sensors); its home overrides the plan's.
    #[arg(long, value_name = "S")]
    pub scenario: Option<PathBuf>,

    /// Home LAT,LON,ALT[,HEADING]; without it the vehicle stands at the
    /// mission's planned home (or the scenario's).
    #[arg(long, value_name = "LAT,LON,ALT[,HEADING]", value_parser = home::parse_home, allow_hyphen_values = true)]
    pub home: Option<Home>,

    /// A mission (.plan or 'QGC WPL 110') stored at start, as if uploaded.
    #[arg(long, value_name = "M")]
    pub mission: Option<PathBuf>,

    /// Parameter file (`NAME VALUE` lines).
    #[arg(long, value_name = "FILE")]
    pub params: Option<PathBuf>,

    /// Noise seed.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Inject a fault (repeatable): KIND@START[+DURATION][:key=value,...], e.g.
    /// gps_loss@40s+30s, motor_failure@30s:motor=0,thrust_scale=0,
    /// battery_capacity_scale@0s:scale=0.25. Keys as in a scenario's "faults".
    #[arg(long = "fault", value_name = "FAULT", value_parser = mavsitl::faults::parse_fault_arg)]
    pub faults: Vec<mavsitl::faults::FaultSpec>,

    /// Write recordings (ground truth, sensors) and telemetry.tlog of the link.
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,

    /// Stop after this much sim time, s (default: run until interrupted).
    #[arg(long, value_name = "S")]
    pub duration: Option<f64>,

    /// Ground-station link.
    #[command(flatten)]
    pub gcs: GcsArgs,
}

/// Sim time between network services while running flat out.
const MAX_SPEED_SERVICE_US: u64 = 20_000;
/// Sim time between network services when paced.
const PACED_SERVICE_US: u64 = 4_000;

/// Runs `mavsitl serve`.
pub fn run(args: ServeArgs) -> Result<(), CliError> {
    let inputs = load_inputs(
        &InputArgs {
            mission: args.mission.as_ref(),
            vehicle: args.vehicle,
            scenario: args.scenario.as_ref(),
            seed: args.seed,
            faults: &args.faults,
            home: args.home,
            params: args.params.as_ref(),
            ground_truth: false,
        },
        false,
    )?;
    let build = || {
        setup::flight(
            &inputs.mission,
            &inputs.mission_name,
            &inputs.scenario,
            &inputs.source,
            inputs.params(),
            false,
        )
        .map_err(|e| CliError::input(e, "check the mission, scenario and parameter file"))
    };
    let mut flight = build()?;
    for w in &flight.warnings {
        eprintln!("warning: {}: {}", inputs.mission_name, w.message);
    }
    let scenario = &inputs.scenario;
    let frame = *flight.lockstep.sim().world().frame();
    if let Some(dir) = &args.record {
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::input(format!("{}: cannot create: {e}", dir.display()), ""))?;
    }
    let mut session = GcsSession::for_flight(&args.gcs, &flight, &inputs, args.record.as_deref())?;
    let rate = PhysicsRate::new(scenario.physics_rate_hz)
        .map_err(|e| CliError::input(e.to_string(), ""))?;
    let mut recorder = super::open_recorder(
        args.record.as_deref(),
        scenario,
        flight.lockstep.sim(),
        ExportFrame::Ned,
    )?;
    let local = session
        .link
        .local_addr()
        .map_err(|e| CliError::run(e.to_string()))?;
    let origin = frame.origin();
    println!(
        "mavsitl serve: {} ({}), system id {}, at {:.7},{:.7},{:.1}; MAVLink on udp {local}; {}; {} mission items",
        if flight.multicopter { "quad" } else { "boat" },
        inputs.mission_name,
        1 + args.gcs.instance as u32,
        origin.lat_deg(),
        origin.lon_deg(),
        origin.alt_m,
        match args.gcs.speedup {
            Speedup::Max => "as fast as possible".to_string(),
            Speedup::Factor(k) => format!("{k}x real time"),
        },
        inputs.mission.items.len(),
    );
    let _ = std::io::stdout().flush();
    let period = rate.period_us();
    let service_every = match args.gcs.speedup {
        Speedup::Max => MAX_SPEED_SERVICE_US,
        Speedup::Factor(_) => PACED_SERVICE_US,
    };
    let end = args.duration.map(SimTime::from_secs_f64);
    let mut pacer = Pacer::new(args.gcs.speedup, SimTime::ZERO);
    let mut last_service: Option<SimTime> = None;
    let mut resets = 0u32;
    let mut outcome: Result<(), String> = Ok(());
    let mut recording = true;
    loop {
        let now = flight.lockstep.sim().time();
        match super::next_tick(now, end, &pacer, period) {
            NextTick::Interrupted | NextTick::Ended => break,
            NextTick::Wait(d) => {
                session.service(now);
                last_service = Some(now);
                session.wait(d);
                continue;
            }
            NextTick::Due => {}
        }
        let step = match (recorder.as_mut(), recording) {
            (Some(r), true) => flight.lockstep.tick(r),
            _ => flight.lockstep.tick(&mut ()),
        };
        if let Err(e) = step {
            outcome = Err(format!("simulation stopped: {e}"));
            break;
        }
        let now = flight.lockstep.sim().time();
        session.set_silent(super::link_cut(flight.lockstep.sim()));
        if last_service.is_none_or(|t| now.as_micros() >= t.as_micros() + service_every) {
            let sim = flight.lockstep.sim();
            let throttle = sim.actuators(0).map_or(0.0, |a| {
                let n = flight.motors.max(2);
                a.controls.iter().take(n).map(|u| u.abs()).sum::<f64>() / n as f64
            });
            session.endpoint.set_throttle(throttle);
            session.service(now);
            last_service = Some(now);
        }
        if session.endpoint.take_reset() {
            flight = build()?;
            session
                .endpoint
                .rebind(flight.status.clone(), flight.requests.clone());
            pacer.restart(SimTime::ZERO);
            last_service = None;
            resets += 1;
            if recording && recorder.is_some() {
                eprintln!("note: recordings cover the run up to the reboot");
                recording = false;
            }
        }
    }
    session.finish();
    let sim_time = flight.lockstep.sim().time();
    if let Some(r) = recorder.as_mut() {
        let _ = r.on_tick(flight.lockstep.sim());
        r.finish(flight.lockstep.sim(), outcome.is_ok())
            .map_err(|e| CliError::run(format!("recording: {e}")))?;
    }
    let s = session.link.stats();
    println!("mavsitl serve stopped");
    println!("  sim time            {:.1} s", sim_time.as_secs_f64());
    println!("  reboots             {resets}");
    println!(
        "  frames              {} in, {} out, {} rejected (signature), {} undecodable",
        s.frames_in, s.frames_out, s.rejected_signature, s.undecodable
    );
    if let Some(dir) = &args.record {
        println!("  recorded to         {}", dir.display());
    }
    outcome.map_err(CliError::run)
}
