//! `mavsitl fly`: SimpleFlight flies a QGroundControl mission headless.

use std::path::PathBuf;

use clap::Args;

use mavsitl::autopilot::FlightStatus;
use mavsitl::flight::PathStats;
use mavsitl::fly::FlyOptions;
use mavsitl::geo::ExportFrame;
use mavsitl::scenario::Home;
use mavsitl::setup;

use super::inputs::{FlightInputs, VehicleArg, DEFAULT_MISSION};
use super::summary::FlightSummary;
use mavsitl::endpoint::{EndpointLink, EndpointParts};
use mavsitl::inputs::{load_inputs, InputArgs};

use super::vehicle_link::GcsArgs;
use super::{home, CliError};

/// Arguments of `mavsitl fly`.
#[derive(Debug, Args)]
pub struct FlyArgs {
    /// Mission: a QGroundControl .plan or a 'QGC WPL 110' file. Without one, the
    /// built-in missions/quad_square.plan flies.
    pub mission: Option<PathBuf>,

    /// Vehicle (default: a boat for plans made for a boat or rover, else a quad).
    #[arg(long, value_enum)]
    pub vehicle: Option<VehicleArg>,

    /// Scenario (vehicle, environment, sensors); its home overrides the plan's.
    #[arg(long, value_name = "S")]
    pub scenario: Option<PathBuf>,

    /// Noise seed.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Inject a fault (repeatable): KIND@START[+DURATION][:key=value,...], e.g.
    /// gps_loss@40s+30s, motor_failure@30s:motor=0,thrust_scale=0,
    /// battery_capacity_scale@0s:scale=0.25. Keys as in a scenario's "faults".
    #[arg(long = "fault", value_name = "FAULT", value_parser = mavsitl::faults::parse_fault_arg)]
    pub faults: Vec<mavsitl::faults::FaultSpec>,

    /// Home LAT,LON,ALT[,HEADING]; overrides the plan's and the scenario's.
    #[arg(long, value_name = "LAT,LON,ALT[,HEADING]", value_parser = home::parse_home, allow_hyphen_values = true)]
    pub home: Option<Home>,

    /// Parameter file (`NAME VALUE` lines, ArduPilot/PX4 names).
    #[arg(long, value_name = "FILE")]
    pub params: Option<PathBuf>,

    /// Write recordings (ground truth, sensors, mission_events.csv, estimator.csv, params.parm).
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,

    /// Frame of the recordings.
    #[arg(long, default_value = "ned", value_parser = super::export_frame_parser())]
    pub frame: ExportFrame,

    /// Fly on perfect state (AirSim's SimpleFlight behaviour) instead of the
    /// estimator; the same as the parameter SF_GROUND_TRUTH 1.
    #[arg(long)]
    pub ground_truth: bool,

    /// Give up after this much sim time, s.
    #[arg(long, value_name = "S", default_value_t = 1800.0, value_parser = super::inputs::seconds_in(0.001, super::inputs::MAX_RUN_S))]
    pub timeout: f64,

    /// Be a MAVLink vehicle while flying: QGroundControl, MAVSDK or MAVProxy
    /// watch the flight (and may take over) as with `mavsitl serve`; the run is
    /// then paced at --speedup (default real time).
    #[arg(long)]
    pub gcs: bool,

    /// Ground-station link (with --gcs).
    #[command(flatten)]
    pub gcs_args: GcsArgs,

    /// PX4's build directory, for a scenario's vehicles flown by PX4
    /// (`"controller": {"kind": "px4", "instance": N}`).
    #[arg(long, value_name = "DIR", env = "PX4_BUILD_DIR")]
    pub px4_build: Option<PathBuf>,

    /// An ArduPilot checkout or SITL binary, for a scenario's vehicles flown
    /// by ArduPilot (`"controller": {"kind": "ardupilot", "instance": N}`).
    #[arg(long, value_name = "PATH", env = "ARDUPILOT_HOME")]
    pub ardupilot: Option<PathBuf>,
}

/// What `mavsitl fly` flies: the mission, scenario and parameters.
pub fn load(args: &FlyArgs) -> Result<FlightInputs, CliError> {
    Ok(load_inputs(
        &InputArgs {
            mission: args.mission.as_ref(),
            vehicle: args.vehicle.map(VehicleArg::kind),
            scenario: args.scenario.as_ref(),
            seed: args.seed,
            faults: &args.faults,
            home: args.home,
            params: args.params.as_ref(),
            ground_truth: args.ground_truth,
        },
        true,
    )?)
}

/// Runs `mavsitl fly` for a one-vehicle world (a fleet is the fleet
/// module's).
pub fn run(args: FlyArgs, inputs: FlightInputs) -> Result<(), CliError> {
    let flight = setup::flight(
        &inputs.mission,
        &inputs.mission_name,
        &inputs.scenario,
        &inputs.source,
        inputs.params(),
        true,
    )
    .map_err(|e| {
        CliError::input(
            e.to_string(),
            "check the mission, scenario and parameter file",
        )
    })?;
    for w in &flight.warnings {
        eprintln!("warning: {}: {}", inputs.mission_name, w.message);
    }
    let link = gcs_session(&args, &flight, &inputs)?;
    let opts = FlyOptions {
        timeout_s: args.timeout,
        record: args.record.as_deref(),
        frame: args.frame,
        mission_file: args.mission.as_deref(),
        builtin: DEFAULT_MISSION,
        link: link.map(|l| (l, args.gcs_args.speedup)),
        stop: &super::INTERRUPTED,
    };
    let flown = mavsitl::fly::fly(flight, &inputs, opts)?;
    let st = &flown.status;
    let reached: std::collections::BTreeSet<usize> = st.reached.iter().map(|(_, i)| *i).collect();
    FlightSummary {
        title: format!(
            "mavsitl fly {} ({}, seed {})",
            inputs.mission_name,
            flown.kind.word(),
            inputs.scenario.seed
        ),
        outcome: &flown.outcome,
        sim_s: flown.sim_s,
        wall_s: flown.wall_s,
        items: (reached.len(), flown.total_items),
        metrics: flown.watch.metrics(),
    }
    .print();
    print_autopilot_rows(flown.watch.path_stats(), st);
    if let Some(dir) = &args.record {
        println!("  recorded to         {}", dir.display());
    }
    flown.outcome.map_err(CliError::run)
}

/// With `--gcs`, the ground-station endpoint on its UDP socket.
fn gcs_session(
    args: &FlyArgs,
    flight: &setup::Flight,
    inputs: &super::inputs::FlightInputs,
) -> Result<Option<EndpointLink>, CliError> {
    if !args.gcs {
        return Ok(None);
    }
    let tlog = args.record.as_ref().map(|d| d.join("telemetry.tlog"));
    let parts = EndpointParts::of_flight(flight, Some(&inputs.mission), &inputs.scenario, tlog);
    let s = args.gcs_args.choice().open(parts)?;
    if let Ok(a) = s.link.local_addr() {
        eprintln!("MAVLink on udp {a}");
    }
    Ok(Some(s))
}

/// The summary rows only SimpleFlight has: path following on its own
/// estimate, where it ended against its home, and its estimator's error.
fn print_autopilot_rows(stats: &PathStats, st: &FlightStatus) {
    let (rms, max) = stats.path_following_m();
    println!(
        "  path following      RMS {rms:.3} m, max {max:.3} m (on the autopilot's estimate against the leg it flies)"
    );
    if let (Some(e), Some(h)) = (st.estimate, st.home_ned) {
        println!(
            "  final vs home       {:.2} m (autopilot's estimate vs its home)",
            (e.pos_ned_m - h).xy().norm()
        );
    }
    println!(
        "  estimator error     RMS {:.3} m (position vs truth)",
        stats.estimator_rms_m()
    );
}
