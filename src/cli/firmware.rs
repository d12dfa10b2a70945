//! What `px4` and `ardupilot` share for a flight in one command: the
//! options of a firmware's flight, and its summary printed. The flight
//! itself is `mavsitl::firmware::flight`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use clap::Args;

use mavsitl::firmware::flight::{FirmwareFlight, FlightPlan, PlanOptions};
use mavsitl::geo::LocalFrame;
use mavsitl::scenario::VehicleKind;
use mavsitl::sim::Simulation;

use super::inputs::FlightInputs;
use super::CliError;

/// Options of a one-command firmware flight (`px4`, `ardupilot`).
#[derive(Debug, Args, Clone)]
pub struct FirmwareFlightArgs {
    /// Fly this plan (QGroundControl .plan or WPL): mavsitl is the firmware's
    /// ground station — it waits for the pre-arm checks, uploads, arms, starts
    /// the mission, follows it to the end and prints the flight summary.
    #[arg(long, value_name = "PLAN")]
    pub mission: Option<PathBuf>,

    /// The firmware must be ready to arm within this long (sim time, and as
    /// much wall time for a firmware that never starts), s.
    #[arg(long, value_name = "S", default_value_t = mavsitl::firmware::launcher::READY_TIMEOUT_S, value_parser = super::inputs::seconds_in(0.001, super::inputs::MAX_RUN_S))]
    pub ready_timeout: f64,

    /// Give the mission up after this much sim time, s.
    #[arg(long, value_name = "S", default_value_t = 1800.0, value_parser = super::inputs::seconds_in(0.001, super::inputs::MAX_RUN_S))]
    pub mission_timeout: f64,

    /// Relay the firmware's MAVLink to HOST:PORT and back (with --mission),
    /// e.g. 127.0.0.1:14550 for QGroundControl to watch the flight.
    #[arg(long, value_name = "HOST:PORT")]
    pub gcs_forward: Option<SocketAddr>,

    /// Keep the launched firmware's scratch working directory (its
    /// parameters, logs and mission store) instead of removing it.
    #[arg(long)]
    pub keep_workdir: bool,

    /// With --count: send each firmware the other vehicles as ADS-B traffic
    /// (ADSB_VEHICLE at 2 Hz over its ground-station link), for its own
    /// traffic avoidance.
    #[arg(long)]
    pub adsb: bool,

    /// Firmware parameters set at start-up, over the airframe's (a launched
    /// firmware): `NAME VALUE` or `NAME,VALUE` lines, or QGroundControl's
    /// .params. PX4 gets them as PX4_PARAM_<NAME> variables, ArduPilot as a
    /// defaults file after the stock ones and mavsitl's.
    #[arg(long, value_name = "FILE")]
    pub params: Option<PathBuf>,
}

impl FirmwareFlightArgs {
    /// How these options fly a plan.
    pub(super) fn options(&self) -> PlanOptions {
        PlanOptions {
            fly_plan: self.mission.is_some(),
            ready_timeout_s: self.ready_timeout,
            mission_timeout_s: self.mission_timeout,
            gcs_forward: self.gcs_forward,
            stop_run: &super::STOP_RUN,
            interrupted: &super::INTERRUPTED,
        }
    }

    /// The flight these options ask for, of `inputs`' plan in `frame`.
    pub(super) fn plan<'a>(
        &self,
        inputs: &'a FlightInputs,
        frame: &'a LocalFrame,
    ) -> FlightPlan<'a> {
        FlightPlan::of(inputs, frame, &self.options())
    }

    /// The `--params` file's parameters (none without one); `launched`:
    /// whether mavsitl starts the firmware (`flag` names how to ask it to).
    pub fn firmware_params(
        &self,
        launched: bool,
        flag: &str,
        kind: VehicleKind,
    ) -> Result<Vec<(String, String)>, CliError> {
        let Some(path) = &self.params else {
            return Ok(Vec::new());
        };
        if !launched {
            return Err(CliError::input(
                "--params sets the parameters of a firmware mavsitl starts",
                format!("add {flag}, or set them in the firmware's console (param set NAME VALUE)"),
            ));
        }
        let params = mavsitl::firmware::crew::read_param_file(path)?;
        let pairs = params.iter().map(|(n, v)| (n.as_str(), v.as_str()));
        if let Some(why) = mavsitl::vehicle_kind::frame_problem(pairs, kind) {
            return Err(CliError::input(
                format!("{}: {why}", path.display()),
                format!("give the parameter file of a {}", kind.word()),
            ));
        }
        Ok(params)
    }
}

/// A one-vehicle firmware run of `ls`: recorded into `record` in NED with
/// the plan flown kept beside it, ending at `duration` s or on Ctrl-C;
/// unpaced until the caller paces it.
pub(super) fn session(
    ls: mavsitl::sim::Lockstep,
    inputs: &FlightInputs,
    (record, duration): (Option<&Path>, Option<f64>),
    flight: &FirmwareFlightArgs,
) -> Result<mavsitl::session::Session<mavsitl::sim::Lockstep>, CliError> {
    let plan = mavsitl::recording::RunPlan {
        record,
        frame: mavsitl::geo::ExportFrame::Ned,
        mission_file: flight.mission.as_deref(),
        builtin: "",
        end_s: duration,
        stop: &super::INTERRUPTED,
    };
    mavsitl::recording::session(ls, &inputs.scenario, &plan)
}

/// The summary's heading: "mavsitl px4 <plan> (quad, seed 0)".
pub(super) fn flight_title(command: &str, inputs: &FlightInputs, kind: VehicleKind) -> String {
    format!(
        "mavsitl {command} {} ({}, seed {})",
        inputs.mission_name,
        kind.word(),
        inputs.scenario.seed
    )
}

/// Stops `flight`, writes its records into `record` and prints its summary
/// under `title` (when a plan was flown).
pub(super) fn finish(
    flight: FirmwareFlight,
    sim: &Simulation,
    outcome: &Result<(), String>,
    record: Option<&Path>,
    title: String,
) {
    if let Some(report) = flight.finish(sim, record) {
        print!("{}", report.summary(title, outcome));
    }
}
