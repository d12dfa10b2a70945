//! `mavsitl ardupilot --count N --ardupilot PATH`: N ArduPilot SITL instances
//! flying N vehicles of one world. Instance k (`--instance` + k) has its own
//! JSON port (UDP 9002 + 10 × (instance + k)), its own ground station (TCP
//! 5760 + 10 × (instance + k)) flying the plan moved to its vehicle's start,
//! and the same home: the JSON backend's positions are NED from it, so each
//! sees where its vehicle really is.

use mavsitl::geo::ExportFrame;
use mavsitl::sim::Lockstep;

use super::ardupilot::ArduPilotArgs;
use mavsitl::firmware::crew::Member;

use super::firmware_instances::{fly, Fleet, Slot};
use super::inputs::FlightInputs;
use super::CliError;
use mavsitl::pacing::Speedup;

/// What every instance shares.
pub(super) struct Common<'a> {
    /// The command line (or a vehicle's equivalent of it).
    pub args: &'a ArduPilotArgs,
    /// The world.
    pub inputs: &'a FlightInputs,
    /// Frames a second.
    pub frame_rate: u32,
}

/// Sets up instance k: bridge attached to vehicle k, ArduPilot launched,
/// its ground station flying the plan moved to the vehicle's start.
fn member(
    c: &Common,
    ls: &mut Lockstep,
    k: usize,
    params: &[(String, String)],
) -> Result<Member, CliError> {
    let slot = Slot::of(ls.sim(), k, c.args.instance, c.args.record.as_deref())?;
    let mission = c
        .inputs
        .mission
        .translated(ls.sim().world().frame(), slot.start);
    attach(c, (mission, &c.inputs.mission_name), ls, slot, params)
}

/// ArduPilot for one vehicle of a world: its bridge attached to the slot's
/// vehicle, ArduPilot (Copter or Rover by the vehicle's kind) launched as
/// the slot's instance with `params`, its ground station flying `mission`.
pub(super) fn attach(
    c: &Common,
    (mission, mission_name): (mavsitl::mission::Mission, &str),
    ls: &mut Lockstep,
    slot: Slot,
    params: &[(String, String)],
) -> Result<Member, CliError> {
    let (args, inputs) = (c.args, c.inputs);
    let path = args.ardupilot.as_ref().ok_or_else(|| {
        CliError::input(
            format!(
                "vehicle '{}' is flown by ArduPilot: give --ardupilot",
                slot.name
            ),
            "mavsitl starts ArduPilot for it",
        )
    })?;
    let kind = inputs.kind(slot.index);
    let opts = super::ardupilot::options(args, slot.instance, kind, c.frame_rate);
    let record = slot.record.clone();
    let setup = super::ardupilot::setup_of(args, slot.instance, record.as_deref());
    mavsitl::firmware::ardupilot::attach(
        (path, &setup, opts),
        (inputs, mission, mission_name),
        ls,
        slot,
        (params, &args.flight.options()),
    )
}

/// Runs `mavsitl ardupilot --count N`.
pub(super) fn run(args: &ArduPilotArgs, mut inputs: FlightInputs) -> Result<(), CliError> {
    if args.ardupilot.is_none() {
        return Err(CliError::input(
            "--count needs --ardupilot: mavsitl starts every instance",
            "add --ardupilot <ArduPilot checkout>",
        ));
    }
    mavsitl::inputs::copies(&mut inputs, args.count)?;
    let kind = inputs.kind(0);
    let frame_rate = super::ardupilot::frame_rate_of(args, kind)?;
    let params = args.flight.firmware_params(true, "--ardupilot")?;
    super::ardupilot::at_frame_rate(&mut inputs, frame_rate);
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
    let common = Common {
        args,
        inputs: &inputs,
        frame_rate,
    };
    let mut members = Vec::new();
    for k in 0..inputs.scenario.vehicles.len() {
        members.push(member(&common, &mut ls, k, &params)?);
    }
    println!(
        "mavsitl ardupilot: {} ArduPilot instances ({}..={}) flying one world",
        members.len(),
        args.instance,
        args.instance as usize + members.len() - 1
    );
    fly(Fleet {
        command: "ardupilot",
        members,
        lockstep: ls,
        inputs: &inputs,
        record: args.record.as_deref(),
        duration: args.duration,
        speedup: args.speedup.unwrap_or(Speedup::Max),
        recorder,
        adsb: args.flight.adsb,
    })
}
