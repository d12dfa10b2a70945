//! `mavsitl fly` with a scenario of several vehicles: every SimpleFlight
//! vehicle flies its own mission in one world — one clock, one wind, one
//! noise seed — while the others hold their passive commands. Pairs of
//! vehicles that come within the scenario's `proximity_m` are encounters
//! (closest approach recorded in `encounters.csv`); a collision ends the
//! flights of both.

use std::time::Instant;

use mavsitl::fleet::Member;
use mavsitl::recording::RunPlan;
use mavsitl::sim::Simulation;
use mavsitl::summary::{Encounters, FlightSummary};

use super::fly::FlyArgs;
use super::inputs::FlightInputs;
use super::CliError;
use mavsitl::firmware::flight::PlanOptions;
use mavsitl::firmware::launcher::{reports, READY_TIMEOUT_S};
use mavsitl::firmware::mixed::{self, MixedFleet};

/// Whether `fly` flies `inputs` as a fleet: a scenario of several vehicles.
pub(super) fn is_fleet(inputs: &FlightInputs) -> bool {
    inputs.scenario.vehicles.len() > 1
}

/// Runs `mavsitl fly` on a scenario of several vehicles, the summaries
/// written to `out`.
pub(super) fn run(
    args: &FlyArgs,
    inputs: FlightInputs,
    out: &mut dyn std::io::Write,
) -> Result<(), CliError> {
    if args.gcs {
        return Err(CliError::input(
            "--gcs serves one vehicle; this scenario has several",
            "fly the fleet without --gcs",
        ));
    }
    let plan = PlanOptions {
        fly_plan: true,
        ready_timeout_s: READY_TIMEOUT_S,
        mission_timeout_s: args.timeout,
        gcs_forward: None,
        stop_run: &super::STOP_RUN,
        interrupted: &super::INTERRUPTED,
    };
    let firmware = (args.px4_build.as_deref(), args.ardupilot.as_deref());
    let (inputs, fleet) = mixed::assemble(inputs, firmware, args.record.as_deref(), &plan)?;
    let MixedFleet {
        mut lockstep,
        mut members,
        mut firmware,
    } = fleet;
    let threads = args
        .threads
        .unwrap_or_else(|| mavsitl::sim::default_threads(inputs.scenario.vehicles.len()));
    lockstep
        .set_threads(threads)
        .map_err(|e| CliError::run(e.to_string()))?;
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
    let run_outcome = mixed::fly(&mut run, &mut members, &mut firmware, args.timeout);
    let sim = run.world().sim();
    let flights = members.len() + firmware.len();
    print_summaries(out, &members, sim, &inputs, wall.elapsed().as_secs_f64())?;
    let mut failed: Vec<String> = members
        .iter()
        .filter(|m| !matches!(m.outcome, Some(Ok(()))))
        .map(|m| m.name.clone())
        .collect();
    let reports = reports(
        firmware,
        sim,
        (&inputs, "fly"),
        args.record.as_deref(),
        &run_outcome,
    );
    failed.extend(super::firmware_instances::print_reports(&reports));
    run.finish(failed.is_empty()).map_err(CliError::run)?;
    super::emit(out, format_args!("{}", Encounters(run.world().sim())))?;
    if let Some(dir) = &args.record {
        super::emit(
            out,
            format_args!("  recorded to         {}\n", dir.display()),
        )?;
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

/// One summary per SimpleFlight vehicle.
fn print_summaries(
    out: &mut dyn std::io::Write,
    members: &[Member],
    sim: &Simulation,
    inputs: &FlightInputs,
    wall_s: f64,
) -> Result<(), CliError> {
    for m in members {
        let st = m.pilot.status.borrow();
        let reached: std::collections::BTreeSet<usize> =
            st.reached.iter().map(|(_, i)| *i).collect();
        let outcome = m.outcome.clone().unwrap_or(Ok(()));
        let summary = FlightSummary {
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
        };
        super::emit(out, format_args!("{summary}"))?;
    }
    Ok(())
}
