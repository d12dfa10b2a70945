//! `mavsitl px4 --count N --px4-build DIR`: N PX4 SITL instances flying N
//! vehicles of one world. Instance k (`--instance` + k) has its own
//! simulator port (TCP 4560 + instance + k), its own ground station (UDP
//! 14580 + instance + k) flying the plan moved to its vehicle's start, and the
//! lockstep loop advances only when every PX4 has answered its step. A PX4
//! that stops answering ends the run after `--px4-timeout`, as for one
//! vehicle; a collision ends the flights of both vehicles.

use std::path::PathBuf;

use mavsitl::bridge::ground_station::Firmware as Dialect;
use mavsitl::bridge::px4::Px4Bridge;
use mavsitl::geo::ExportFrame;
use mavsitl::sim::Lockstep;
use mavsitl::time::{PhysicsRate, SimTime};

use super::firmware::{flight_title, FirmwareFlight, Judged};
use super::fly::FlightInputs;
use super::gcs::Pacer;
use super::px4::{Px4Args, Px4Setup};
use super::{CliError, NextTick};

/// One vehicle's PX4: its simulator port and its flight.
struct Member {
    name: String,
    flight: FirmwareFlight,
    outcome: Option<Result<(), String>>,
}

/// Sets up instance k: bridge attached to vehicle k, PX4 launched, its
/// ground station flying the plan moved to the vehicle's start.
fn member(
    args: &Px4Args,
    inputs: &FlightInputs,
    ls: &mut Lockstep,
    k: usize,
    params: &[(String, String)],
) -> Result<Member, CliError> {
    let build = args.px4_build.as_ref().ok_or_else(|| {
        CliError::input("--count needs --px4-build", "mavsitl starts every instance")
    })?;
    let sim = ls.sim();
    let frame = *sim.world().frame();
    let (name, start) = sim
        .vehicles()
        .get(k)
        .map(|v| (v.name().to_string(), v.body().state.pos_ned_m.xy()))
        .ok_or_else(|| CliError::run("no such vehicle"))?;
    let record: Option<PathBuf> = args.record.as_ref().map(|d| d.join(&name));
    if let Some(d) = &record {
        std::fs::create_dir_all(d)
            .map_err(|e| CliError::input(format!("{}: cannot create: {e}", d.display()), ""))?;
    }
    let instance = args.instance.checked_add(k as u8).ok_or_else(|| {
        CliError::input("--instance + --count passes 255", "use a lower --instance")
    })?;
    let setup = Px4Setup {
        instance,
        record: record.as_deref(),
        params,
        ..Px4Setup::of(args)
    };
    let opts = super::px4::options_for(&setup, args, inputs);
    let port = super::px4::listen(&opts, "use --instance N")?;
    ls.attach(k, Box::new(Px4Bridge::new(opts, port, frame)))
        .map_err(|e| {
            CliError::input(
                e.to_string(),
                "the physics rate must be a multiple of 250 Hz",
            )
        })?;
    let speedup = super::px4::speedup_of(args)?;
    let launch = super::px4::launch_spec(build, &setup, inputs, speedup)?;
    let mission = inputs.mission.translated(&frame, start);
    let own = FlightInputs {
        mission: mission.clone(),
        mission_name: inputs.mission_name.clone(),
        scenario: inputs.scenario.clone(),
        source: inputs.source.clone(),
        param_text: None,
    };
    let flight = FirmwareFlight::start(
        Dialect::Px4,
        instance,
        &own,
        &args.flight,
        Some(launch),
        &frame,
    )?
    .for_vehicle(k, &mission, &frame, start);
    Ok(Member {
        name,
        flight,
        outcome: None,
    })
}

/// Runs `mavsitl px4 --count N`.
pub(super) fn run(args: &Px4Args, mut inputs: FlightInputs) -> Result<(), CliError> {
    if args.px4_build.is_none() || args.udp {
        return Err(CliError::input(
            "--count needs --px4-build (and TCP): mavsitl starts every instance",
            "add --px4-build PX4-Autopilot/build/px4_sitl_default",
        ));
    }
    super::fleet::copies(&mut inputs, args.count)?;
    let params = args.flight.firmware_params(true, "--px4-build")?;
    let sim = inputs
        .scenario
        .build_simulation(&inputs.source)
        .map_err(|e| CliError::input(e.to_string(), "see the README's scenario reference"))?;
    let mut ls = Lockstep::new(sim);
    let mut recorder = super::open_recorder(
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
    let rate = PhysicsRate::new(inputs.scenario.physics_rate_hz)
        .map_err(|e| CliError::input(e.to_string(), ""))?;
    let end = args.duration.map(SimTime::from_secs_f64);
    let pacer = Pacer::new(super::px4::speedup_of(args)?, SimTime::ZERO);
    let outcome: Result<(), String> = loop {
        match super::next_tick(ls.sim().time(), end, &pacer, rate.period_us()) {
            NextTick::Interrupted => break Err("interrupted".into()),
            NextTick::Ended => break Ok(()),
            NextTick::Wait(d) => {
                std::thread::sleep(d);
                continue;
            }
            NextTick::Due => {}
        }
        let step = match recorder.as_mut() {
            Some(r) => ls.tick(r),
            None => ls.tick(&mut ()),
        };
        if let Err(e) = step {
            // The firmware that exited, if one did, is the cause.
            let why = members
                .iter()
                .find_map(|m| m.flight.exited().map(|w| format!("{}: {w}", m.name)));
            break Err(why.unwrap_or_else(|| e.to_string()));
        }
        follow(&mut members, &mut ls);
        if members.iter().all(|m| m.outcome.is_some()) {
            break Ok(());
        }
    };
    finish(members, &ls, &inputs, args, outcome, recorder.as_mut())
}

/// After a tick: each flight on its own; a collision ends both.
fn follow(members: &mut [Member], ls: &mut Lockstep) {
    for (k, m) in members.iter_mut().enumerate() {
        if m.outcome.is_some() {
            continue;
        }
        if ls.sim().is_wrecked(k) {
            m.outcome = Some(Err(super::fleet::collision_text(ls.sim(), k)));
            continue;
        }
        match m.flight.judge(Ok(()), ls.sim_mut()) {
            Judged::Go => {}
            Judged::End(o) => m.outcome = Some(o),
            Judged::Lost(why) => m.outcome = Some(Err(why)),
        }
    }
}

/// Stops every PX4, writes the records, prints a summary per vehicle.
fn finish(
    members: Vec<Member>,
    ls: &Lockstep,
    inputs: &FlightInputs,
    args: &Px4Args,
    outcome: Result<(), String>,
    recorder: Option<&mut mavsitl::record::Recorder>,
) -> Result<(), CliError> {
    let sim = ls.sim();
    let mut failed = Vec::new();
    let multicopter = inputs
        .scenario
        .vehicles
        .first()
        .is_some_and(|v| v.kind == mavsitl::scenario::VehicleKind::Multirotor);
    let all_ok = outcome.is_ok();
    for m in members {
        let own = match (&m.outcome, &outcome) {
            (Some(o), _) => o.clone(),
            (None, Err(e)) => Err(e.clone()),
            // No plan flown: the run's end (--duration) is its end.
            (None, Ok(())) if !m.flight.flies_mission() => Ok(()),
            (None, Ok(())) => Err("the run ended first".into()),
        };
        if own.is_err() {
            failed.push(m.name.clone());
        }
        let title = format!(
            "{} — vehicle '{}'",
            flight_title("px4", inputs, multicopter),
            m.name
        );
        let dir = args.record.as_ref().map(|d| d.join(&m.name));
        m.flight.finish(sim, &own, dir.as_deref(), title);
    }
    if let Some(r) = recorder {
        r.finish(sim, all_ok && failed.is_empty())
            .map_err(|e| CliError::run(format!("recording: {e}")))?;
    }
    if let Some(e) = sim.encounters() {
        println!(
            "  encounters          {} (within {:.0} m), {} collisions",
            e.encounters().len(),
            e.proximity_m(),
            e.collisions().len()
        );
    }
    outcome.map_err(CliError::run)?;
    match failed.is_empty() {
        true => Ok(()),
        false => Err(CliError::run(format!(
            "flights failed: {}",
            failed.join(", ")
        ))),
    }
}
