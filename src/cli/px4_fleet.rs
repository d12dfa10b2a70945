//! `mavsitl px4 --count N --px4-build DIR`: N PX4 SITL instances flying N
//! vehicles of one world. Instance k (`--instance` + k) has its own
//! simulator port (TCP 4560 + instance + k), its own ground station (UDP
//! 14580 + instance + k) flying the plan moved to its vehicle's start, and the
//! lockstep loop advances only when every PX4 has answered its step. A PX4
//! that stops answering ends the run after `--px4-timeout`, as for one
//! vehicle; a collision ends the flights of both vehicles.

use mavsitl::geo::ExportFrame;
use mavsitl::sim::Lockstep;

use mavsitl::firmware::crew::Member;

use super::firmware_instances::{fly, Fleet, Slot};
use super::inputs::FlightInputs;
use super::px4::{Px4Args, Px4Setup};
use super::CliError;

/// Sets up instance k: bridge attached to vehicle k, PX4 launched, its
/// ground station flying the plan moved to the vehicle's start.
fn member(
    args: &Px4Args,
    inputs: &FlightInputs,
    ls: &mut Lockstep,
    k: usize,
    params: &[(String, String)],
) -> Result<Member, CliError> {
    let slot = Slot::of(ls.sim(), k, args.instance, args.record.as_deref())?;
    let mission = inputs
        .mission
        .translated(ls.sim().world().frame(), slot.start);
    attach(
        args,
        (inputs, mission, &inputs.mission_name),
        ls,
        slot,
        params,
    )
}

/// PX4 for one vehicle of a world: its bridge attached to the slot's
/// vehicle, PX4 launched as the slot's instance with `params`, its ground
/// station flying `mission`.
pub(super) fn attach(
    args: &Px4Args,
    (inputs, mission, mission_name): (&FlightInputs, mavsitl::mission::Mission, &str),
    ls: &mut Lockstep,
    slot: Slot,
    params: &[(String, String)],
) -> Result<Member, CliError> {
    let build = args.px4_build.as_ref().ok_or_else(|| {
        CliError::input(
            format!("vehicle '{}' is flown by PX4: give --px4-build", slot.name),
            "mavsitl starts PX4 for it",
        )
    })?;
    let record = slot.record.clone();
    let setup = Px4Setup {
        instance: slot.instance,
        record: record.as_deref(),
        params,
        vehicle: slot.index,
        ..super::px4::setup_of(args)
    };
    let opts = super::px4::options_for(&setup, args, inputs);
    let speedup = mavsitl::firmware::px4::speedup(args.speedup)?;
    mavsitl::firmware::px4::attach(
        (build, &setup, opts, speedup),
        (inputs, mission, mission_name),
        ls,
        slot,
        &args.flight.options(),
    )
}

/// Runs `mavsitl px4 --count N`.
pub(super) fn run(args: &Px4Args, mut inputs: FlightInputs) -> Result<(), CliError> {
    if args.px4_build.is_none() || args.udp {
        return Err(CliError::input(
            "--count needs --px4-build (and TCP): mavsitl starts every instance",
            "add --px4-build PX4-Autopilot/build/px4_sitl_default",
        ));
    }
    mavsitl::inputs::copies(&mut inputs, args.count)?;
    let params = args.flight.firmware_params(true, "--px4-build")?;
    let sim = inputs
        .scenario
        .build_simulation(&inputs.source)
        .map_err(|e| CliError::input(e.to_string(), "see docs/reference/scenario.md"))?;
    let mut ls = Lockstep::new(sim);
    let recorder = mavsitl::recording::open_recorder(
        args.record.as_deref(),
        &inputs.scenario,
        ls.sim(),
        ExportFrame::Ned,
    )?;
    let mut members = Vec::new();
    for k in 0..inputs.scenario.vehicles.len() {
        members.push(member(args, &inputs, &mut ls, k, &params)?);
    }
    println!(
        "mavsitl px4: {} PX4 instances ({}..={}) flying one world",
        members.len(),
        args.instance,
        args.instance as usize + members.len() - 1
    );
    fly(Fleet {
        command: "px4",
        members,
        lockstep: ls,
        inputs: &inputs,
        record: args.record.as_deref(),
        duration: args.duration,
        speedup: mavsitl::firmware::px4::speedup(args.speedup)?,
        recorder,
        adsb: args.flight.adsb,
    })
}
