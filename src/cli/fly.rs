//! `mavsitl fly`: SimpleFlight flies a QGroundControl mission headless.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use mavsitl::fly::FlyOptions;
use mavsitl::geo::ExportFrame;
use mavsitl::setup;
use mavsitl::summary::{AutopilotRows, FlightSummary};

use super::inputs::{FlightInputs, VehicleArg, WorldArgs, DEFAULT_MISSION};
use mavsitl::endpoint::{EndpointLink, EndpointParts};

use super::vehicle_link::GcsArgs;
use super::CliError;

/// Arguments of `mavsitl fly`.
#[derive(Debug, Args)]
pub struct FlyArgs {
    /// Mission: a QGroundControl .plan or a 'QGC WPL 110' file. Without one, the
    /// built-in missions/quad_square.plan flies.
    pub mission: Option<PathBuf>,

    /// Vehicle (default: a boat for plans made for a boat or rover, else a quad).
    #[arg(long, value_enum)]
    pub vehicle: Option<VehicleArg>,

    /// The simulated world.
    #[command(flatten)]
    pub world: WorldArgs,

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

    /// Threads to step a scenario's vehicles on (default: every core for 100
    /// vehicles or more, else 1). The run is the same to the bit whatever the
    /// number.
    #[arg(long, value_name = "N", value_parser = super::inputs::threads)]
    pub threads: Option<usize>,

    /// An ArduPilot checkout or SITL binary, for a scenario's vehicles flown
    /// by ArduPilot (`"controller": {"kind": "ardupilot", "instance": N}`).
    #[arg(long, value_name = "PATH", env = "ARDUPILOT_HOME")]
    pub ardupilot: Option<PathBuf>,
}

/// What `mavsitl fly` flies: the mission, scenario and parameters, the
/// physics at SimpleFlight's rate where the scenario leaves it out and its
/// world allows ([`Scenario::fit_physics_rate_to_simpleflight`]).
///
/// [`Scenario::fit_physics_rate_to_simpleflight`]: mavsitl::scenario::Scenario::fit_physics_rate_to_simpleflight
pub fn load(args: &FlyArgs) -> Result<FlightInputs, CliError> {
    let (mission, params) = (args.mission.as_ref(), args.params.as_ref());
    let mut inputs = args
        .world
        .flight(mission, args.vehicle, params, (args.ground_truth, true))?;
    inputs.scenario.fit_physics_rate_to_simpleflight();
    Ok(inputs)
}

/// Runs `mavsitl fly` for a one-vehicle world (a fleet is the fleet
/// module's), its summary written to `out`.
pub fn run(args: FlyArgs, inputs: FlightInputs, out: &mut dyn Write) -> Result<(), CliError> {
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
    let summary = FlightSummary {
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
    };
    let rows = AutopilotRows {
        stats: flown.watch.path_stats(),
        status: st,
    };
    super::emit(out, format_args!("{summary}{rows}"))?;
    if let Some(dir) = &args.record {
        super::emit(
            out,
            format_args!("  recorded to         {}\n", dir.display()),
        )?;
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
