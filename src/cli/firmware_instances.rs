//! What `px4 --count` and `ardupilot --count` share: each vehicle's slot
//! (instance, start, recording directory), the fleet flown as a
//! [`Crew`], and a summary per flight.

use std::path::Path;

use mavsitl::record::Recorder;
use mavsitl::sim::Lockstep;

pub(super) use mavsitl::firmware::crew::Slot;
use mavsitl::firmware::crew::{Crew, Member};

use super::inputs::FlightInputs;
use super::CliError;
use mavsitl::pacing::Speedup;

/// A fleet ready to fly.
pub(super) struct Fleet<'a> {
    /// The subcommand, for titles ("px4").
    pub command: &'static str,
    /// One per vehicle, in vehicle order.
    pub members: Vec<Member>,
    /// The loop, a bridge attached to every vehicle.
    pub lockstep: Lockstep,
    /// The world's inputs.
    pub inputs: &'a FlightInputs,
    /// The recording directory (each vehicle in `<name>/`).
    pub record: Option<&'a Path>,
    /// Stop after this much sim time, s.
    pub duration: Option<f64>,
    /// Pacing.
    pub speedup: Speedup,
    /// The recorder.
    pub recorder: Option<Recorder>,
    /// Send each firmware the others as ADS-B traffic.
    pub adsb: bool,
}

/// Flies the fleet to its end and reports it.
pub(super) fn fly(f: Fleet) -> Result<(), CliError> {
    let Fleet {
        command,
        mut members,
        lockstep,
        inputs,
        record,
        duration,
        speedup,
        recorder,
        adsb,
    } = f;
    let mut run = mavsitl::recording::session_with(
        lockstep,
        &inputs.scenario,
        recorder,
        duration,
        &super::INTERRUPTED,
    )?
    .paced(speedup);
    let mut crew = Crew::new(&mut members, adsb);
    let outcome = run.run(&mut crew);
    crew.mark_end();
    let sim = run.world().sim();
    let failed = report(members, sim, (inputs, command), record, &outcome);
    run.finish(outcome.is_ok() && failed.is_empty())
        .map_err(CliError::run)?;
    super::summary::print_encounter_row(run.world().sim());
    outcome.map_err(CliError::run)?;
    match failed.is_empty() {
        true => Ok(()),
        false => Err(CliError::run(format!(
            "flights failed: {}",
            failed.join(", ")
        ))),
    }
}

/// Stops every member's firmware, writes its records into `record/<name>`
/// and prints its summary (titled for `command`); returns the names of the
/// flights that failed. `run` is how the loop ended.
pub(super) fn report(
    members: Vec<Member>,
    sim: &mavsitl::sim::Simulation,
    (inputs, command): (&FlightInputs, &str),
    record: Option<&Path>,
    run: &Result<(), String>,
) -> Vec<String> {
    let mut failed = Vec::new();
    for m in members {
        let own = m.outcome_after(run);
        if own.is_err() {
            failed.push(m.name.clone());
        }
        let kind = inputs.kind(m.index);
        let title = format!(
            "mavsitl {command} {} ({}, seed {}) — vehicle '{}'",
            m.mission_name,
            kind.word(),
            inputs.scenario.seed,
            m.name
        );
        let dir = record.map(|d| d.join(&m.name));
        super::firmware::finish(m.flight, sim, &own, dir.as_deref(), title);
    }
    failed
}
