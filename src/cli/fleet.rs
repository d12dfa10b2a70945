//! `mavsitl fly` with a scenario of several vehicles: every SimpleFlight
//! vehicle flies its own mission in one world — one clock, one wind, one
//! noise seed — while the others hold their passive commands. Pairs of
//! vehicles that come within the scenario's `proximity_m` are encounters
//! (closest approach recorded in `encounters.csv`); a collision ends the
//! flights of both.

use std::time::Instant;

use mavsitl::fleet::{give_first_to_simpleflight, member, Member};
use mavsitl::recording::RunPlan;
use mavsitl::session::{Driver, Step};
use mavsitl::setup::{self, PilotPlan};
use mavsitl::sim::{Lockstep, SimError, Simulation};

use super::fly::FlyArgs;
use super::inputs::FlightInputs;
use super::summary::FlightSummary;
use super::CliError;
use mavsitl::firmware::crew::Crew;

/// Whether `fly` flies `inputs` as a fleet: a scenario of several vehicles.
pub(super) fn is_fleet(inputs: &FlightInputs) -> bool {
    inputs.scenario.vehicles.len() > 1
}

/// Runs `mavsitl fly` on a scenario of several vehicles.
pub(super) fn run(args: &FlyArgs, mut inputs: FlightInputs) -> Result<(), CliError> {
    if args.gcs {
        return Err(CliError::input(
            "--gcs serves one vehicle; this scenario has several",
            "fly the fleet without --gcs",
        ));
    }
    give_first_to_simpleflight(&mut inputs);
    let frame_rate = mavsitl::firmware::ardupilot::prepare_mixed(&mut inputs);
    let plan = PilotPlan {
        mission: &inputs.mission,
        mission_name: &inputs.mission_name,
        param_file: inputs.params(),
        auto_arm: true,
    };
    let fleet = setup::fleet(&inputs.scenario, &inputs.source, &plan).map_err(|e| {
        CliError::input(
            e.to_string(),
            "check the scenario, its missions and parameter files",
        )
    })?;
    let mut lockstep = fleet.lockstep;
    let mut firmware = super::mixed_fleet::attach_all(args, &inputs, &mut lockstep, frame_rate)?;
    let mut members = fleet
        .pilots
        .into_iter()
        .map(|pilot| member(&inputs, lockstep.sim(), pilot))
        .collect::<Result<Vec<_>, _>>()?;
    let mut run = mavsitl::recording::session(
        lockstep,
        &inputs.scenario,
        &RunPlan {
            record: args.record.as_deref(),
            frame: args.frame,
            mission_file: None,
            builtin: "",
            end_s: Some(args.timeout),
            stop: &super::INTERRUPTED,
        },
    )?;
    let wall = Instant::now();
    let stopped = run
        .run(&mut FleetDriver {
            members: &mut members,
            firmware: Crew::new(&mut firmware, false),
        })
        .err();
    Crew::new(&mut firmware, false).mark_end();
    let sim = run.world().sim();
    for m in &mut members {
        if m.outcome.is_none() {
            m.outcome = Some(Err(stopped.clone().unwrap_or_else(|| {
                format!(
                    "timeout: mission not completed after {} s of sim time",
                    args.timeout
                )
            })));
        }
    }
    let run_outcome = match &stopped {
        Some(why) => Err(why.clone()),
        None => Ok(()),
    };
    let flights = members.len() + firmware.len();
    print_summaries(&members, sim, &inputs, wall.elapsed().as_secs_f64());
    let mut failed: Vec<String> = members
        .iter()
        .filter(|m| !matches!(m.outcome, Some(Ok(()))))
        .map(|m| m.name.clone())
        .collect();
    failed.extend(super::firmware_instances::report(
        firmware,
        sim,
        (&inputs, "fly"),
        args.record.as_deref(),
        &run_outcome,
    ));
    run.finish(failed.is_empty()).map_err(CliError::run)?;
    print_encounters(run.world().sim());
    if let Some(dir) = &args.record {
        println!("  recorded to         {}", dir.display());
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(CliError::run(format!(
            "{} of {} flights failed: {}",
            failed.len(),
            flights,
            failed.join(", ")
        )))
    }
}

/// The fleet: SimpleFlight vehicles, each followed against its mission,
/// and the firmware ones, each judged by its flight.
struct FleetDriver<'a> {
    members: &'a mut [Member],
    firmware: Crew<'a>,
}

impl Driver<Lockstep> for FleetDriver<'_> {
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

/// One summary per SimpleFlight vehicle.
fn print_summaries(members: &[Member], sim: &Simulation, inputs: &FlightInputs, wall_s: f64) {
    for m in members {
        let st = m.pilot.status.borrow();
        let reached: std::collections::BTreeSet<usize> =
            st.reached.iter().map(|(_, i)| *i).collect();
        let outcome = m.outcome.clone().unwrap_or(Ok(()));
        FlightSummary {
            title: format!(
                "mavsitl fly {} — vehicle '{}' ({}, seed {})",
                m.mission_name,
                m.name,
                m.pilot.kind.word(),
                inputs.scenario.seed
            ),
            outcome: &outcome,
            sim_s: sim.time().as_secs_f64(),
            wall_s,
            items: (reached.len(), m.pilot.total_items),
            metrics: &m.metrics,
        }
        .print();
    }
}

/// The world's encounters and collisions.
fn print_encounters(sim: &Simulation) {
    let Some(e) = sim.encounters() else {
        return;
    };
    let closest = e
        .encounters()
        .iter()
        .min_by(|a, b| a.min_separation_m.total_cmp(&b.min_separation_m));
    let name = |i: usize| sim.vehicles().get(i).map_or("?", |v| v.name());
    println!("encounters (pairs within {:.1} m)", e.proximity_m());
    println!("  encounters          {}", e.encounters().len());
    if let Some(c) = closest {
        println!(
            "  closest approach    {:.2} m, '{}' and '{}' at {}",
            c.min_separation_m,
            name(c.a),
            name(c.b),
            c.closest_at
        );
    }
    println!("  collisions          {}", e.collisions().len());
    for c in e.collisions() {
        println!(
            "    {}",
            mavsitl::analysis::encounters::collision_line(sim, c)
        );
    }
}
