//! What `px4 --count` and `ardupilot --count` share: the fleet assembled
//! and flown by `mavsitl::firmware::launcher`, a summary per flight.

use mavsitl::firmware::flight::PlanOptions;
use mavsitl::firmware::launcher::{assemble, fly_fleet, FleetRun, Launcher, MemberReport};

use super::inputs::FlightInputs;
use super::CliError;

/// Flies a `--count` fleet: vehicle k by `launcher`'s instance `first + k`
/// with `params`, every flight as `plan` asks; prints each flight's summary.
pub(super) fn run(
    inputs: &FlightInputs,
    (launcher, first, params): (&Launcher, u8, &[(String, String)]),
    fleet: &FleetRun,
    plan: &PlanOptions,
) -> Result<(), CliError> {
    let parts = assemble(inputs, (launcher, first, params), fleet.record, plan)?;
    let who = match launcher {
        Launcher::Px4(_) => "PX4",
        Launcher::ArduPilot(_) => "ArduPilot",
    };
    println!(
        "mavsitl {}: {} {who} instances ({first}..={}) flying one world",
        fleet.command,
        parts.2.len(),
        first as usize + parts.2.len() - 1
    );
    let end = fly_fleet(parts, inputs, fleet)?;
    let failed = print_reports(&end.reports);
    end.finished.map_err(CliError::run)?;
    print!("{}", end.encounters);
    end.outcome.map_err(CliError::run)?;
    match failed.is_empty() {
        true => Ok(()),
        false => Err(CliError::run(format!(
            "flights failed: {}",
            failed.join(", ")
        ))),
    }
}

/// Prints each flight's summary; the names of those that failed.
pub(super) fn print_reports(reports: &[MemberReport]) -> Vec<String> {
    for r in reports {
        print!("{r}");
    }
    reports
        .iter()
        .filter(|r| r.outcome.is_err())
        .map(|r| r.name.clone())
        .collect()
}
