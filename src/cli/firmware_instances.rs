//! What `px4 --count` and `ardupilot --count` share: each vehicle's slot
//! (instance, start, recording directory), the fleet flown as a
//! [`Crew`], and a summary per flight.

use std::path::{Path, PathBuf};

use mavsitl::bridge::ground_station::Firmware as Dialect;
use mavsitl::geo::LocalFrame;

use mavsitl::record::Recorder;
use mavsitl::session::Session;
use mavsitl::sim::Lockstep;
use mavsitl::time::{PhysicsRate, SimTime};

use mavsitl::firmware::crew::{Crew, Member};
use mavsitl::firmware::flight::{FirmwareFlight, FlightPlan};

use super::firmware::FirmwareFlightArgs;
use super::inputs::FlightInputs;
use super::CliError;
use mavsitl::launch::LaunchSpec;
use mavsitl::pacing::Speedup;

/// Vehicle k of a fleet as its firmware needs it.
pub(super) struct Slot {
    /// Its index.
    pub index: usize,
    /// Its name.
    pub name: String,
    /// Where it stands at the start, NED m (horizontal).
    pub start: nalgebra::Vector2<f64>,
    /// Its recording directory (made), when recording.
    pub record: Option<PathBuf>,
    /// Its firmware's instance: the first instance + k.
    pub instance: u8,
}

impl Slot {
    /// Vehicle `k` of `sim`, its firmware instance `first + k`, recording
    /// into `record/<name>`.
    pub fn of(
        sim: &mavsitl::sim::Simulation,
        k: usize,
        first: u8,
        record: Option<&Path>,
    ) -> Result<Slot, CliError> {
        let instance = u8::try_from(k)
            .ok()
            .and_then(|k| first.checked_add(k))
            .ok_or_else(|| {
                CliError::input("--instance + --count passes 255", "use a lower --instance")
            })?;
        Self::at(sim, k, instance, record)
    }

    /// Vehicle `k` of `sim` flown by firmware instance `instance`.
    pub fn at(
        sim: &mavsitl::sim::Simulation,
        k: usize,
        instance: u8,
        record: Option<&Path>,
    ) -> Result<Slot, CliError> {
        let (name, start) = sim
            .vehicles()
            .get(k)
            .map(|v| (v.name().to_string(), v.body().state.pos_ned_m.xy()))
            .ok_or_else(|| CliError::run("no such vehicle"))?;
        let record = record.map(|d| d.join(&name));
        if let Some(d) = &record {
            std::fs::create_dir_all(d)
                .map_err(|e| CliError::input(format!("{}: cannot create: {e}", d.display()), ""))?;
        }
        Ok(Slot {
            index: k,
            name,
            start,
            record,
            instance,
        })
    }

    /// Starts this vehicle's flight: its firmware launched as `launch`, its
    /// ground station flying `mission` (named `mission_name`).
    pub fn start(
        self,
        dialect: Dialect,
        (inputs, mission, mission_name): (&FlightInputs, mavsitl::mission::Mission, &str),
        args: &FirmwareFlightArgs,
        launch: LaunchSpec,
        frame: &LocalFrame,
    ) -> Result<Member, CliError> {
        let own = FlightInputs {
            mission: mission.clone(),
            mission_name: mission_name.to_string(),
            scenario: inputs.scenario.clone(),
            source: inputs.source.clone(),
            param_text: None,
        };
        let flight = FirmwareFlight::start(
            dialect,
            self.instance,
            &FlightPlan {
                kind: own.kind(self.index),
                ..args.plan(&own, frame)
            },
            Some(launch),
            false,
        )?
        .for_vehicle(self.index, &mission, frame, self.start);
        Ok(Member::new(
            self.index,
            self.name,
            mission_name.to_string(),
            flight,
        ))
    }
}

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
    let rate = PhysicsRate::new(f.inputs.scenario.physics_rate_hz)
        .map_err(|e| CliError::input(e.to_string(), ""))?;
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
    let mut run = Session::new(lockstep, rate.period_us())
        .paced(speedup)
        .until(duration.map(SimTime::from_secs_f64))
        .recording(recorder)
        .interrupted_by(&super::INTERRUPTED);
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
            super::inputs::vehicle_word(kind),
            inputs.scenario.seed,
            m.name
        );
        let dir = record.map(|d| d.join(&m.name));
        super::firmware::finish(m.flight, sim, &own, dir.as_deref(), title);
    }
    failed
}
