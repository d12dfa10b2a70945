//! The firmware vehicles of a world `fly` flies (`"controller": {"kind":
//! "px4" | "ardupilot", "instance": N}`): each launched as its own instance,
//! its bridge on its vehicle, its ground station flying its mission, beside
//! the SimpleFlight vehicles in the same lockstep loop.

use std::path::PathBuf;

use clap::Parser;

use mavsitl::scenario::ControllerSpec;
use mavsitl::sim::Lockstep;

use super::ardupilot::ArduPilotArgs;
use super::ardupilot_fleet::Common;
use super::firmware::FirmwareFlightArgs;
use mavsitl::firmware::crew::{plan_of, FirmwarePlan, Member};

use super::firmware_instances::Slot;
use super::fly::FlyArgs;
use super::inputs::FlightInputs;
use super::px4::Px4Args;
use super::CliError;

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
        let FirmwarePlan {
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
