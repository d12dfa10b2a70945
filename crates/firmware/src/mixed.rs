//! A world of SimpleFlight and firmware vehicles flown together (`fly` on a
//! scenario of several vehicles): every SimpleFlight vehicle flies its own
//! mission, every firmware vehicle its own plan through its ground station,
//! one clock, one wind, one noise seed; the others hold their passive
//! commands. A collision ends the flights of both vehicles.

use std::path::Path;

use mavsitl_core::failure::Failure;
use mavsitl_run::fleet::{give_first_to_simpleflight, member, Member as SimpleFlightMember};
use mavsitl_run::session::{Driver, Session, Step};
use mavsitl_run::setup::{FlightInputs, PilotPlan};
use mavsitl_sim::sim::{Lockstep, SimError};

use crate::crew::{Crew, Member};
use crate::flight::PlanOptions;
use crate::launcher::{attach_scenario_firmware, ArduPilotLauncher, Px4Launcher};

/// A world's vehicles, ready to fly.
pub struct MixedFleet {
    /// The loop, a bridge attached to every firmware vehicle.
    pub lockstep: Lockstep,
    /// The SimpleFlight vehicles.
    pub members: Vec<SimpleFlightMember>,
    /// The firmware vehicles.
    pub firmware: Vec<Member>,
}

/// Sets up every vehicle of `inputs`: SimpleFlight on its own, the first
/// if none names a controller; PX4 from `px4_build` and ArduPilot from
/// `ardupilot` on those that name them, each flying its plan as `plan` asks
/// and recorded into `record/<name>`.
///
/// # Errors
/// A mission, scenario or parameter file refused, a firmware not given or
/// that cannot start (exit 2).
pub fn assemble(
    mut inputs: FlightInputs,
    (px4_build, ardupilot): (Option<&Path>, Option<&Path>),
    record: Option<&Path>,
    plan: &PlanOptions,
) -> Result<(FlightInputs, MixedFleet), Failure> {
    give_first_to_simpleflight(&mut inputs);
    let frame_rate = crate::ardupilot::prepare_mixed(&mut inputs);
    let pilots = PilotPlan {
        mission: &inputs.mission,
        mission_name: &inputs.mission_name,
        param_file: inputs.params(),
        auto_arm: true,
    };
    let fleet =
        mavsitl_run::setup::fleet(&inputs.scenario, &inputs.source, &pilots).map_err(|e| {
            Failure::input(
                e.to_string(),
                "check the scenario, its missions and parameter files",
            )
        })?;
    let mut lockstep = fleet.lockstep;
    let px4 = px4_build.map(Px4Launcher::new);
    let ardupilot = ardupilot.map(|p| ArduPilotLauncher::new(p, frame_rate));
    let launchers = (px4.as_ref(), ardupilot.as_ref());
    let firmware = attach_scenario_firmware(&inputs, &mut lockstep, launchers, (record, plan))?;
    let members = fleet
        .pilots
        .into_iter()
        .map(|pilot| member(&inputs, lockstep.sim(), pilot))
        .collect::<Result<Vec<_>, _>>()?;
    let fleet = MixedFleet {
        lockstep,
        members,
        firmware,
    };
    Ok((inputs, fleet))
}

/// Flies every vehicle in `run` until all are done or the run stops; a
/// SimpleFlight flight still going then fails with the reason (the stop,
/// or the time limit `timeout_s`). How the run ended.
pub fn fly(
    run: &mut Session<Lockstep>,
    members: &mut [SimpleFlightMember],
    firmware: &mut [Member],
    timeout_s: f64,
) -> Result<(), String> {
    let outcome = run.run_in_pool(&mut MixedDriver {
        members,
        firmware: Crew::new(firmware, false),
    });
    Crew::new(firmware, false).mark_end();
    for m in members.iter_mut().filter(|m| m.outcome.is_none()) {
        m.outcome = Some(Err(outcome.clone().err().unwrap_or_else(|| {
            format!("timeout: mission not completed after {timeout_s} s of sim time")
        })));
    }
    outcome
}

/// SimpleFlight vehicles, each followed against its mission, and the
/// firmware ones, each judged by its flight.
struct MixedDriver<'a> {
    members: &'a mut [SimpleFlightMember],
    firmware: Crew<'a>,
}

impl Driver<Lockstep> for MixedDriver<'_> {
    fn after_tick(&mut self, ls: &mut Lockstep, tick: Result<(), SimError>) -> Step<Lockstep> {
        if let Err(e) = tick {
            let why = self.firmware.cause();
            return Step::End(Err(
                why.unwrap_or_else(|| format!("simulation stopped: {e}"))
            ));
        }
        for m in self.members.iter_mut() {
            m.follow(ls.sim());
        }
        self.firmware.follow(ls);
        match self.members.iter().any(|m| m.outcome.is_none()) || self.firmware.flying() {
            true => Step::Go,
            false => Step::End(Ok(())),
        }
    }
}
