//! The firmware vehicles of a world `fly` flies (`"controller": {"kind":
//! "px4" | "ardupilot", "instance": N}`): each launched as its own instance,
//! its bridge on its vehicle, its ground station flying its mission, beside
//! the SimpleFlight vehicles in the same lockstep loop.

use std::path::PathBuf;

use clap::Parser;

use mavsitl::mission::Mission;
use mavsitl::scenario::{ControllerSpec, FirmwareSpec, VehicleKind};
use mavsitl::sim::Lockstep;

use super::ardupilot::ArduPilotArgs;
use super::ardupilot_fleet::Common;
use super::firmware::FirmwareFlightArgs;
use mavsitl::firmware::crew::Member;

use super::firmware_instances::Slot;
use super::fly::FlyArgs;
use super::inputs::FlightInputs;
use super::px4::Px4Args;
use super::CliError;

/// Frames a second of ArduPilot vehicles beside PX4 ones: a multiple of
/// PX4's 250 Hz step and fast enough for Copter's 400 Hz loop.
const WITH_PX4_FRAME_RATE_HZ: u32 = 1000;

/// Readies the world for its ArduPilot vehicles: their frame rate (their
/// kind's default, or 1000 Hz beside PX4 vehicles and an ArduPilot
/// multirotor), the physics a whole multiple of it, their IMUs sampled once a
/// frame. The frame rate, 0 without ArduPilot vehicles.
pub(super) fn prepare(inputs: &mut FlightInputs) -> u32 {
    let vehicles = &inputs.scenario.vehicles;
    let is_ap = |c: &ControllerSpec| matches!(c, ControllerSpec::ArduPilot(_));
    let px4 = vehicles
        .iter()
        .any(|v| matches!(v.controller, ControllerSpec::Px4(_)));
    let ap_copter = vehicles
        .iter()
        .any(|v| is_ap(&v.controller) && v.kind == VehicleKind::Multirotor);
    if !vehicles.iter().any(|v| is_ap(&v.controller)) {
        return 0;
    }
    let frame_rate = match (px4, ap_copter) {
        (true, true) => WITH_PX4_FRAME_RATE_HZ,
        (_, true) => super::ardupilot::QUAD_FRAME_RATE_HZ,
        (_, false) => super::ardupilot::BOAT_FRAME_RATE_HZ,
    };
    let s = &mut inputs.scenario;
    s.physics_rate_hz = super::ardupilot::physics_rate_for(s.physics_rate_hz, frame_rate);
    for v in s.vehicles.iter_mut().filter(|v| is_ap(&v.controller)) {
        v.sensors.imu.rate_hz = frame_rate;
    }
    frame_rate
}

/// The flight options of one firmware vehicle of `fly`: its plan flown, the
/// run's time limit.
fn flight_args(args: &FlyArgs, mission: &str) -> FirmwareFlightArgs {
    FirmwareFlightArgs {
        mission: Some(PathBuf::from(mission)),
        ready_timeout: 120.0,
        mission_timeout: args.timeout,
        gcs_forward: None,
        keep_workdir: false,
        params: None,
        adsb: false,
    }
}

#[derive(Parser)]
struct Px4Cli {
    #[command(flatten)]
    args: Px4Args,
}

#[derive(Parser)]
struct ArduPilotCli {
    #[command(flatten)]
    args: ArduPilotArgs,
}

/// What a firmware vehicle flies: its mission, the mission's name, its
/// parameters (name, value).
struct Plan {
    mission: Mission,
    name: String,
    params: Vec<(String, String)>,
}

/// A vehicle's own mission (relative to the scenario), else the command
/// line's; and the parameters of its file.
fn plan_of(inputs: &FlightInputs, f: &FirmwareSpec) -> Result<Plan, CliError> {
    let base = &inputs.source.base_dir;
    let (mission, name) = match &f.mission {
        Some(m) => {
            let path = base.join(m);
            let mission = Mission::load(&path)
                .map_err(|e| CliError::input(e.to_string(), "check the scenario's missions"))?;
            (mission, path.display().to_string())
        }
        None => (inputs.mission.clone(), inputs.mission_name.clone()),
    };
    let params = match &f.params {
        Some(p) => {
            let path = base.join(p);
            let text = std::fs::read_to_string(&path).map_err(|e| {
                CliError::input(format!("{}: cannot read: {e}", path.display()), "")
            })?;
            mavsitl::bridge::param_file::parse(&text, &path.display().to_string())
                .map_err(|e| CliError::input(e, "NAME VALUE lines, one parameter each"))?
        }
        None => Vec::new(),
    };
    Ok(Plan {
        mission,
        name,
        params,
    })
}

/// Launches every firmware vehicle of `inputs` and attaches its bridge.
pub(super) fn attach_all(
    args: &FlyArgs,
    inputs: &FlightInputs,
    ls: &mut Lockstep,
    frame_rate: u32,
) -> Result<Vec<Member>, CliError> {
    let mut members = Vec::new();
    for (i, v) in inputs.scenario.vehicles.iter().enumerate() {
        let (f, px4) = match &v.controller {
            ControllerSpec::Px4(f) => (f, true),
            ControllerSpec::ArduPilot(f) => (f, false),
            _ => continue,
        };
        let Plan {
            mission,
            name,
            params,
        } = plan_of(inputs, f)?;
        let slot = Slot::at(ls.sim(), i, f.instance, args.record.as_deref())?;
        let instance = f.instance.to_string();
        let member = if px4 {
            let mut a = Px4Cli::try_parse_from(["px4", "--instance", &instance])
                .map_err(|e| CliError::run(format!("vehicle '{}': {e}", v.name)))?
                .args;
            a.px4_build = args.px4_build.clone();
            a.record = args.record.clone();
            a.flight = flight_args(args, &name);
            super::px4_fleet::attach(&a, (inputs, mission, &name), ls, slot, &params)?
        } else {
            let mut a = ArduPilotCli::try_parse_from(["ardupilot", "--instance", &instance])
                .map_err(|e| CliError::run(format!("vehicle '{}': {e}", v.name)))?
                .args;
            a.ardupilot = args.ardupilot.clone();
            a.record = args.record.clone();
            a.flight = flight_args(args, &name);
            let c = Common {
                args: &a,
                inputs,
                frame_rate,
            };
            super::ardupilot_fleet::attach(&c, (mission, &name), ls, slot, &params)?
        };
        members.push(member);
    }
    Ok(members)
}
