//! `mavsitl serve`: SimpleFlight as a MAVLink vehicle — or `--count N` of
//! them in one world, ports and system ids as PX4 SITL's multi-vehicle set-up
//! assigns them — waiting for a ground station (QGroundControl, MAVSDK,
//! MAVProxy, pymavlink) to fly it.

use std::io::Write as _;
use std::path::PathBuf;

use clap::Args;

use mavsitl::recording::RunPlan;
use mavsitl::serve::{self, ServeDriver};
use mavsitl::setup::{self, Fleet, Pilot, PilotPlan};

use mavsitl::geo::ExportFrame;
use mavsitl::scenario::Home;
use mavsitl::sim::Simulation;

use super::inputs::{FlightInputs, VehicleArg};
use mavsitl::endpoint::EndpointLink;
use mavsitl::inputs::{load_inputs, InputArgs};

use super::vehicle_link::GcsArgs;
use super::{home, CliError};
use mavsitl::pacing::Speedup;

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
    #[arg(long, value_name = "S", value_parser = super::inputs::seconds_in(0.001, super::inputs::MAX_RUN_S))]
    pub duration: Option<f64>,

    /// Serve N SimpleFlight vehicles in one world, 5 m apart eastwards:
    /// vehicle k is instance --instance + k (system id 1 + instance + k, its
    /// ports shifted by k as PX4 SITL's are). A scenario gives either one
    /// vehicle (copied) or N.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=200))]
    pub count: u8,

    /// With --count: each vehicle also reports the others as ADS-B traffic
    /// (ADSB_VEHICLE at 2 Hz), for ground stations' traffic maps.
    #[arg(long)]
    pub adsb: bool,

    /// Ground-station link.
    #[command(flatten)]
    pub gcs: GcsArgs,
}

/// Sim time between network services while running flat out.
const MAX_SPEED_SERVICE_US: u64 = 20_000;
/// Sim time between network services when paced.
const PACED_SERVICE_US: u64 = 4_000;
/// The start-up lines: one per vehicle.
fn print_banner(
    args: &ServeArgs,
    sim: &Simulation,
    pilots: &[Pilot],
    sessions: &[EndpointLink],
    inputs: &FlightInputs,
) {
    let speed = match args.gcs.speedup {
        Speedup::Max => "as fast as possible".to_string(),
        Speedup::Factor(k) => format!("{k}x real time"),
    };
    let frame = sim.world().frame();
    for (k, (pilot, session)) in pilots.iter().zip(sessions).enumerate() {
        let local = session
            .link
            .local_addr()
            .map_or_else(|e| e.to_string(), |a| a.to_string());
        let at = sim.vehicles().get(pilot.index).map_or_else(
            || frame.origin(),
            |v| frame.to_geodetic(&v.body().state.pos_ned_m),
        );
        let ground_alt = frame.origin().alt_m;
        println!(
            "mavsitl serve: {} ({}), system id {}, at {:.7},{:.7},{:.1}; MAVLink on udp {local}; {speed}; {} mission items",
            pilot.kind.word(),
            inputs.mission_name,
            1 + args.gcs.instance as u32 + k as u32,
            at.lat_deg(),
            at.lon_deg(),
            ground_alt,
            inputs.mission.items.len(),
        );
    }
    let _ = std::io::stdout().flush();
}

/// Runs `mavsitl serve`.
pub fn run(args: ServeArgs) -> Result<(), CliError> {
    mavsitl::inputs::check_instances(args.gcs.instance, args.count)?;
    let mut inputs = load_inputs(
        &InputArgs {
            mission: args.mission.as_ref(),
            vehicle: args.vehicle.map(VehicleArg::kind),
            scenario: args.scenario.as_ref(),
            seed: args.seed,
            faults: &args.faults,
            home: args.home,
            params: args.params.as_ref(),
            ground_truth: false,
        },
        false,
    )?;
    serve::serve_vehicles(&mut inputs, args.count)?;
    let build = {
        let inputs = &inputs;
        move || {
            let plan = PilotPlan {
                mission: &inputs.mission,
                mission_name: &inputs.mission_name,
                param_file: inputs.params(),
                auto_arm: false,
            };
            setup::fleet(&inputs.scenario, &inputs.source, &plan).map_err(|e| {
                CliError::input(
                    e.to_string(),
                    "check the mission, scenario and parameter file",
                )
            })
        }
    };
    let fleet = build()?;
    if let Some(p) = fleet.pilots.first() {
        for w in &p.warnings {
            eprintln!("warning: {}: {}", inputs.mission_name, w.message);
        }
    }
    if let Some(dir) = &args.record {
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::input(format!("{}: cannot create: {e}", dir.display()), ""))?;
    }
    let sessions =
        serve::open_sessions(&args.gcs.choice(), &fleet, &inputs, args.record.as_deref())?;
    let scenario = &inputs.scenario;
    let service_every = match args.gcs.speedup {
        Speedup::Max => MAX_SPEED_SERVICE_US,
        Speedup::Factor(_) => PACED_SERVICE_US,
    };
    let Fleet { lockstep, pilots } = fleet;
    let plan = RunPlan {
        record: args.record.as_deref(),
        frame: ExportFrame::Ned,
        mission_file: None,
        builtin: "",
        end_s: args.duration,
        stop: &super::INTERRUPTED,
    };
    let run = mavsitl::recording::session(lockstep, scenario, &plan)?;
    print_banner(&args, run.world().sim(), &pilots, &sessions, &inputs);
    let mut run = run.paced(args.gcs.speedup).serving_every(service_every);
    let mut driver = ServeDriver::new(sessions, pilots, &build, args.adsb);
    let outcome = run.run(&mut driver);
    for s in &mut driver.sessions {
        s.finish();
    }
    run.finish(outcome.is_ok()).map_err(CliError::run)?;
    print_end(&args, &driver.sessions, run.world().sim(), driver.resets);
    outcome.map_err(|why| driver.failed.unwrap_or_else(|| CliError::run(why)))
}

/// The closing lines.
fn print_end(args: &ServeArgs, sessions: &[EndpointLink], sim: &Simulation, resets: u32) {
    println!("mavsitl serve stopped");
    println!("  sim time            {:.1} s", sim.time().as_secs_f64());
    println!("  reboots             {resets}");
    for s in sessions {
        let st = s.link.stats();
        println!(
            "  frames              {} in, {} out, {} rejected (signature), {} undecodable",
            st.frames_in, st.frames_out, st.rejected_signature, st.undecodable
        );
    }
    super::summary::print_encounter_row(sim);
    if let Some(dir) = &args.record {
        println!("  recorded to         {}", dir.display());
    }
}
