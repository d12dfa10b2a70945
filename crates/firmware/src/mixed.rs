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
    let outcome = run.run(&mut MixedDriver {
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

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use super::*;
    use mavsitl_core::geo::ExportFrame;
    use mavsitl_mavlink::mission::Mission;
    use mavsitl_run::recording::{session, RunPlan};
    use mavsitl_sim::scenario::{Scenario, ScenarioSource};

    static NEVER: AtomicBool = AtomicBool::new(false);

    /// Two SimpleFlight quads 20 m apart taking off to 5 m (on `threads`),
    /// flown for at most `timeout_s`: each member's outcome.
    fn flown(timeout_s: f64, threads: usize) -> Vec<Option<Result<(), String>>> {
        let source = ScenarioSource {
            name: "two.json".into(),
            base_dir: ".".into(),
        };
        let scenario = Scenario::from_json(
            r#"{"vehicles":[{"name":"a","kind":"multirotor","controller":{"kind":"simpleflight"}},
                {"name":"b","kind":"multirotor","initial":{"north_m":20},"controller":{"kind":"simpleflight"}}]}"#,
            &source,
        )
        .expect("scenario");
        let home = &scenario.home;
        let mission = Mission::parse(
            &format!(
                "QGC WPL 110\n0\t1\t0\t16\t0\t0\t0\t0\t{}\t{}\t{}\t1\n1\t0\t3\t22\t0\t0\t0\t0\t0\t0\t5\t1\n",
                home.lat_deg, home.lon_deg, home.alt_m
            ),
            "up",
        )
        .expect("mission");
        let inputs = FlightInputs {
            mission,
            mission_name: "up".into(),
            scenario,
            source,
            param_text: None,
        };
        let plan = PlanOptions {
            fly_plan: true,
            ready_timeout_s: 60.0,
            mission_timeout_s: timeout_s,
            gcs_forward: None,
            stop_run: &NEVER,
            interrupted: &NEVER,
        };
        let (inputs, fleet) = assemble(inputs, (None, None), None, &plan).expect("fleet");
        let MixedFleet {
            mut lockstep,
            mut members,
            mut firmware,
        } = fleet;
        lockstep.set_threads(threads).expect("threads");
        let run_plan = RunPlan {
            record: None,
            frame: ExportFrame::Ned,
            mission_file: None,
            builtin: "",
            end_s: Some(timeout_s),
            stop: &NEVER,
        };
        let mut run = session(lockstep, &inputs.scenario, &run_plan).expect("session");
        let outcome = fly(&mut run, &mut members, &mut firmware, timeout_s);
        assert!(firmware.is_empty());
        let _ = outcome;
        members.into_iter().map(|m| m.outcome).collect()
    }

    /// Every SimpleFlight member is flown to its end, on one thread or two;
    /// one still flying at the time limit fails with it.
    #[test]
    fn every_member_flies_to_its_end_or_fails_at_the_time_limit() {
        for threads in [1, 2] {
            assert_eq!(flown(120.0, threads), vec![Some(Ok(())), Some(Ok(()))]);
        }
        let late = flown(3.0, 1);
        let timeout = "timeout: mission not completed after 3 s of sim time".to_string();
        assert_eq!(late, vec![Some(Err(timeout.clone())), Some(Err(timeout))]);
    }
}
