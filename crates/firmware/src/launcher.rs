//! How the firmware of a fleet's vehicles is started: a PX4 or ArduPilot
//! per vehicle, each its own instance with its bridge on its vehicle and
//! its ground station flying its plan moved to the vehicle's start
//! (`px4 --count`, `ardupilot --count`, and a scenario's firmware vehicles
//! under `fly`); the fleet flown as a [`Crew`] and reported flight by flight.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use mavsitl_core::failure::Failure;
use mavsitl_core::geo::ExportFrame;
use mavsitl_mavlink::mission::Mission;
use mavsitl_run::pacing::Speedup;
use mavsitl_run::setup::FlightInputs;
use mavsitl_run::summary::EncounterRow;
use mavsitl_sim::record::Recorder;
use mavsitl_sim::scenario::ControllerSpec;
use mavsitl_sim::sim::{Lockstep, Simulation};

use crate::crew::{plan_of, Crew, FirmwarePlan, Member, Slot};
use crate::flight::{FlightReport, PlanOptions};
use crate::{ardupilot, px4};

/// Longest wait for PX4's answer to a step while armed, ms.
pub const PX4_ARMED_WAIT_MS: u64 = 10;
/// Firmware silent this long (wall time) ends the run, s.
pub const GIVE_UP_S: f64 = 10.0;
/// A launched firmware must be ready to arm within this long, s.
pub const READY_TIMEOUT_S: f64 = 120.0;

/// How PX4 instances are started and bridged.
#[derive(Debug, Clone)]
pub struct Px4Launcher<'a> {
    /// PX4-Autopilot's build/px4_sitl_default.
    pub build: &'a Path,
    /// Address the simulator ports listen on.
    pub bind: IpAddr,
    /// Keep each PX4's working directory.
    pub keep_workdir: bool,
    /// Longest wait for PX4's answer to a step while armed.
    pub armed_wait: Duration,
    /// PX4 silent this long ends the run.
    pub give_up_after: Duration,
    /// Pacing (`None`: PX4_SIM_SPEED_FACTOR, else as fast as PX4 answers).
    pub speedup: Option<Speedup>,
}

impl<'a> Px4Launcher<'a> {
    /// PX4 from `build` on the loopback, with the default waits.
    pub fn new(build: &'a Path) -> Self {
        Px4Launcher {
            build,
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
            keep_workdir: false,
            armed_wait: Duration::from_millis(PX4_ARMED_WAIT_MS),
            give_up_after: Duration::from_secs_f64(GIVE_UP_S),
            speedup: None,
        }
    }

    /// Launches PX4 for `slot`'s vehicle with `params`, its bridge attached
    /// in `ls`, its ground station flying `mission` as `plan` asks.
    ///
    /// # Errors
    /// A port, build or speed-up that does not do (exit 2).
    pub fn attach(
        &self,
        (inputs, mission, mission_name): (&FlightInputs, Mission, &str),
        ls: &mut Lockstep,
        (slot, params): (Slot, &[(String, String)]),
        plan: &PlanOptions,
    ) -> Result<Member, Failure> {
        let record = slot.record.clone();
        let setup = px4::Px4Setup {
            instance: slot.instance,
            bind: self.bind,
            keep_workdir: self.keep_workdir,
            record: record.as_deref(),
            params,
            vehicle: slot.index,
        };
        let mut opts = px4::bridge_options(&setup, inputs, true, plan.stop_run);
        opts.armed_wait = self.armed_wait;
        opts.give_up_after = self.give_up_after;
        let speedup = px4::speedup(self.speedup)?;
        px4::attach(
            (self.build, &setup, opts, speedup),
            (inputs, mission, mission_name),
            ls,
            slot,
            plan,
        )
    }
}

/// How ArduPilot instances are started and bridged.
#[derive(Debug, Clone)]
pub struct ArduPilotLauncher<'a> {
    /// An ArduPilot checkout or SITL binary.
    pub path: &'a Path,
    /// Address the JSON ports bind.
    pub bind: IpAddr,
    /// Keep each ArduPilot's working directory.
    pub keep_workdir: bool,
    /// The stock parameter files when `path` names a binary.
    pub defaults: Option<&'a str>,
    /// ArduPilot's own `--speedup` (`None`: as fast as it runs).
    pub speedup: Option<Speedup>,
    /// ArduPilot silent this long ends the run.
    pub give_up_after: Duration,
    /// JSON frames a second of sim time, Hz.
    pub frame_rate: u32,
}

impl<'a> ArduPilotLauncher<'a> {
    /// ArduPilot from `path` on the loopback at `frame_rate`, with the
    /// default wait.
    pub fn new(path: &'a Path, frame_rate: u32) -> Self {
        ArduPilotLauncher {
            path,
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
            keep_workdir: false,
            defaults: None,
            speedup: None,
            give_up_after: Duration::from_secs_f64(GIVE_UP_S),
            frame_rate,
        }
    }

    /// Launches ArduPilot (Copter or Rover by the vehicle's kind) for
    /// `slot`'s vehicle with `params`, its bridge attached in `ls`, its
    /// ground station flying `mission` as `plan` asks.
    ///
    /// # Errors
    /// A port or checkout that does not do (exit 2).
    pub fn attach(
        &self,
        (inputs, mission, mission_name): (&FlightInputs, Mission, &str),
        ls: &mut Lockstep,
        (slot, params): (Slot, &[(String, String)]),
        plan: &PlanOptions,
    ) -> Result<Member, Failure> {
        let kind = inputs.kind(slot.index);
        let opts = ardupilot::bridge_options(
            (self.bind, slot.instance),
            kind,
            self.frame_rate,
            self.give_up_after,
            (plan.stop_run, true),
        );
        let record = slot.record.clone();
        let setup = ardupilot::ArduPilotSetup {
            instance: slot.instance,
            bind: self.bind,
            record: record.as_deref(),
            speedup: self.speedup,
            keep_workdir: self.keep_workdir,
            defaults: self.defaults,
            frame_rate: self.frame_rate,
            vehicle: slot.index,
        };
        ardupilot::attach(
            (self.path, &setup, opts),
            (inputs, mission, mission_name),
            ls,
            slot,
            (params, plan),
        )
    }
}

/// Either firmware.
#[derive(Debug, Clone)]
pub enum Launcher<'a> {
    /// PX4.
    Px4(Px4Launcher<'a>),
    /// ArduPilot.
    ArduPilot(ArduPilotLauncher<'a>),
}

impl Launcher<'_> {
    /// See [`Px4Launcher::attach`] and [`ArduPilotLauncher::attach`].
    ///
    /// # Errors
    /// As theirs.
    pub fn attach(
        &self,
        flight: (&FlightInputs, Mission, &str),
        ls: &mut Lockstep,
        vehicle: (Slot, &[(String, String)]),
        plan: &PlanOptions,
    ) -> Result<Member, Failure> {
        match self {
            Launcher::Px4(l) => l.attach(flight, ls, vehicle, plan),
            Launcher::ArduPilot(l) => l.attach(flight, ls, vehicle, plan),
        }
    }
}

/// A world every vehicle of which is flown by firmware started by
/// `launcher` (`--count`): vehicle k by instance `first + k`, flying the
/// plan moved to its start, each with `params`, recorded into
/// `record/<name>`.
///
/// # Errors
/// A world that does not build, a recording or firmware that cannot start
/// (exit 2).
pub fn assemble(
    inputs: &FlightInputs,
    (launcher, first, params): (&Launcher, u8, &[(String, String)]),
    record: Option<&Path>,
    plan: &PlanOptions,
) -> Result<(Lockstep, Option<Recorder>, Vec<Member>), Failure> {
    let sim = inputs
        .scenario
        .build_simulation(&inputs.source)
        .map_err(|e| Failure::input(e.to_string(), "see docs/reference/scenario.md"))?;
    let mut ls = Lockstep::new(sim);
    let recorder = mavsitl_run::recording::open_recorder(
        record,
        &inputs.scenario,
        ls.sim(),
        ExportFrame::Ned,
    )?;
    let mut members = Vec::new();
    for k in 0..inputs.scenario.vehicles.len() {
        let slot = Slot::of(ls.sim(), k, first, record)?;
        let frame = *ls.sim().world().frame();
        let mission = inputs.mission.translated(&frame, slot.start);
        let flight = (inputs, mission, inputs.mission_name.as_str());
        members.push(launcher.attach(flight, &mut ls, (slot, params), plan)?);
    }
    Ok((ls, recorder, members))
}

/// The firmware vehicles of a scenario `fly` flies (`"controller":
/// {"kind": "px4" | "ardupilot", "instance": N}`), each launched as its
/// own instance flying its own plan (its mission, else the command
/// line's) with its own parameters, beside the SimpleFlight vehicles.
///
/// # Errors
/// A firmware vehicle with no launcher given, or one that cannot start
/// (exit 2).
pub fn attach_scenario_firmware(
    inputs: &FlightInputs,
    ls: &mut Lockstep,
    (px4, ardupilot): (Option<&Px4Launcher>, Option<&ArduPilotLauncher>),
    (record, plan): (Option<&Path>, &PlanOptions),
) -> Result<Vec<Member>, Failure> {
    let mut members = Vec::new();
    for (i, v) in inputs.scenario.vehicles.iter().enumerate() {
        let (spec, launcher) = match &v.controller {
            ControllerSpec::Px4(f) => (f, px4.cloned().map(Launcher::Px4)),
            ControllerSpec::ArduPilot(f) => (f, ardupilot.cloned().map(Launcher::ArduPilot)),
            _ => continue,
        };
        let launcher = launcher.ok_or_else(|| missing(&v.name, &v.controller))?;
        let FirmwarePlan {
            mission,
            name,
            params,
        } = plan_of(inputs, spec)?;
        let slot = Slot::at(ls.sim(), i, spec.instance, record)?;
        let flight = (inputs, mission, name.as_str());
        members.push(launcher.attach(flight, ls, (slot, &params), plan)?);
    }
    Ok(members)
}

/// The error of a firmware vehicle whose firmware was not given.
fn missing(vehicle: &str, controller: &ControllerSpec) -> Failure {
    let (who, flag) = match controller {
        ControllerSpec::Px4(_) => ("PX4", "--px4-build"),
        _ => ("ArduPilot", "--ardupilot"),
    };
    Failure::input(
        format!("vehicle '{vehicle}' is flown by {who}: give {flag}"),
        format!("mavsitl starts {who} for it"),
    )
}

/// One firmware flight of a fleet, ended: its summary and whether it
/// failed.
pub struct MemberReport {
    /// The summary's heading.
    pub title: String,
    /// The vehicle's name.
    pub name: String,
    /// How its flight ended.
    pub outcome: Result<(), String>,
    /// What it did (none without a plan flown).
    pub report: Option<FlightReport>,
}

impl fmt::Display for MemberReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.report {
            Some(r) => write!(f, "{}", r.summary(self.title.clone(), &self.outcome)),
            None => Ok(()),
        }
    }
}

/// Stops every member's firmware and writes its records into
/// `record/<name>`; each flight's report titled for `command`. `run` is
/// how the loop ended.
pub fn reports(
    members: Vec<Member>,
    sim: &Simulation,
    (inputs, command): (&FlightInputs, &str),
    record: Option<&Path>,
    run: &Result<(), String>,
) -> Vec<MemberReport> {
    members
        .into_iter()
        .map(|m| {
            let outcome = m.outcome_after(run);
            let title = format!(
                "mavsitl {command} {} ({}, seed {}) — vehicle '{}'",
                m.mission_name,
                inputs.kind(m.index).word(),
                inputs.scenario.seed,
                m.name
            );
            let dir = record.map(|d| d.join(&m.name));
            MemberReport {
                report: m.flight.finish(sim, dir.as_deref()),
                title,
                name: m.name,
                outcome,
            }
        })
        .collect()
}

/// A `--count` fleet's run: its recording, its end, how it is paced.
pub struct FleetRun<'a> {
    /// The subcommand, for titles ("px4").
    pub command: &'static str,
    /// The recording directory (each vehicle in `<name>/`).
    pub record: Option<&'a Path>,
    /// Stop after this much sim time, s.
    pub duration: Option<f64>,
    /// Pacing.
    pub speedup: Speedup,
    /// Send each firmware the others as ADS-B traffic.
    pub adsb: bool,
    /// Set by Ctrl-C.
    pub stop: &'static AtomicBool,
}

/// A fleet flown to its end.
pub struct FleetEnd {
    /// Each flight, in vehicle order.
    pub reports: Vec<MemberReport>,
    /// The encounter row of the world.
    pub encounters: String,
    /// How the run ended.
    pub outcome: Result<(), String>,
    /// Whether the recording was closed.
    pub finished: Result<(), String>,
}

/// Flies `members`, their bridges attached in `lockstep`, to the end.
///
/// # Errors
/// A recording that cannot be started.
pub fn fly_fleet(
    (lockstep, recorder, mut members): (Lockstep, Option<Recorder>, Vec<Member>),
    inputs: &FlightInputs,
    f: &FleetRun,
) -> Result<FleetEnd, Failure> {
    let mut run = mavsitl_run::recording::session_with(
        lockstep,
        &inputs.scenario,
        recorder,
        f.duration,
        f.stop,
    )?
    .paced(f.speedup);
    let mut crew = Crew::new(&mut members, f.adsb);
    let outcome = run.run(&mut crew);
    crew.mark_end();
    let sim = run.world().sim();
    let reports = reports(members, sim, (inputs, f.command), f.record, &outcome);
    let all_well = reports.iter().all(|r| r.outcome.is_ok());
    let finished = run.finish(outcome.is_ok() && all_well);
    Ok(FleetEnd {
        reports,
        encounters: EncounterRow(run.world().sim()).to_string(),
        outcome,
        finished,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use mavsitl_sim::scenario::{Scenario, ScenarioSource};

    use super::*;

    static NEVER: AtomicBool = AtomicBool::new(false);

    fn inputs(vehicles: &str) -> FlightInputs {
        let source = ScenarioSource {
            name: "s.json".into(),
            base_dir: std::path::PathBuf::from("."),
        };
        let scenario = Scenario::from_json(&format!(r#"{{"vehicles":[{vehicles}]}}"#), &source)
            .expect("scenario");
        FlightInputs {
            mission: Mission::default(),
            mission_name: "m".into(),
            scenario,
            source,
            param_text: None,
        }
    }

    /// A one-quad world and its simulation.
    fn one_quad() -> (FlightInputs, Simulation) {
        let inputs = inputs(r#"{"name":"q","kind":"multirotor"}"#);
        let sim = inputs
            .scenario
            .build_simulation(&inputs.source)
            .expect("sim");
        (inputs, sim)
    }

    fn plan() -> PlanOptions {
        PlanOptions {
            fly_plan: false,
            ready_timeout_s: READY_TIMEOUT_S,
            mission_timeout_s: 10.0,
            gcs_forward: None,
            stop_run: &NEVER,
            interrupted: &NEVER,
        }
    }

    /// A firmware vehicle with no firmware given is refused, naming the
    /// vehicle and the option; SimpleFlight and passive vehicles need none.
    #[test]
    fn a_firmware_vehicle_without_its_firmware_is_refused_by_name() {
        let cases = [
            (
                r#"{"name":"p","kind":"multirotor","controller":{"kind":"px4","instance":1}}"#,
                "vehicle 'p' is flown by PX4: give --px4-build",
            ),
            (
                r#"{"name":"a","kind":"boat","controller":{"kind":"ardupilot","instance":2}}"#,
                "vehicle 'a' is flown by ArduPilot: give --ardupilot",
            ),
        ];
        for (vehicle, want) in cases {
            let inputs = inputs(&format!(r#"{{"name":"sf","kind":"multirotor"}},{vehicle}"#));
            let mut ls = Lockstep::new(
                inputs
                    .scenario
                    .build_simulation(&inputs.source)
                    .expect("sim"),
            );
            let e = attach_scenario_firmware(&inputs, &mut ls, (None, None), (None, &plan()))
                .err()
                .expect("refused");
            assert_eq!((e.message.as_str(), e.code), (want, 2));
        }
        let none = inputs(r#"{"name":"sf","kind":"multirotor"}"#);
        let mut ls = Lockstep::new(none.scenario.build_simulation(&none.source).expect("sim"));
        let members = attach_scenario_firmware(&none, &mut ls, (None, None), (None, &plan()));
        assert!(members.expect("nothing to attach").is_empty());
    }

    /// Each member's report: its own end, else the run's; titled for the
    /// command with the vehicle's name; a report's text is its summary.
    #[test]
    fn every_member_is_reported_with_its_own_end_and_title() {
        use crate::crew::tests::member;
        let (inputs, sim) = one_quad();
        let members = vec![member(Some(Err("crash".into()))), member(None)];
        let out = reports(
            members,
            &sim,
            (&inputs, "px4"),
            None,
            &Err("stopped".into()),
        );
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].outcome, Err("crash".into()));
        assert_eq!(out[1].outcome, Err("stopped".into()));
        assert_eq!(
            out[0].title,
            "mavsitl px4 square (quad, seed 0) — vehicle 'c'"
        );
        assert!(out.iter().all(|r| r.name == "c" && r.report.is_none()));
        assert_eq!(out[0].to_string(), "", "no plan flown, no summary");
        let with = MemberReport {
            report: Some(FlightReport {
                sim_s: 2.0,
                wall_s: 1.0,
                items: (1, 2),
                metrics: mavsitl_analysis::flight::FlightMetrics::new(
                    mavsitl_analysis::Route::default(),
                    mavsitl_core::time::Rate::EVERY_TICK,
                ),
                upload_attempts: vec![1],
            }),
            ..out.into_iter().next().expect("first")
        };
        let text = with.to_string();
        assert!(text.starts_with("mavsitl px4 square (quad, seed 0) — vehicle 'c'\n  result              FAILED: crash\n"), "{text}");
    }

    /// A fleet whose run went well but one of whose flights failed is
    /// recorded as not completed.
    #[test]
    fn a_fleet_with_a_failed_flight_is_not_recorded_as_completed() {
        use crate::crew::tests::member;
        let (inputs, sim) = one_quad();
        let dir = std::env::temp_dir().join(format!("mavsitl-fleet-{}", std::process::id()));
        let ls = Lockstep::new(sim);
        let recorder = mavsitl_run::recording::open_recorder(
            Some(&dir),
            &inputs.scenario,
            ls.sim(),
            ExportFrame::Ned,
        )
        .expect("recorder");
        let fleet = FleetRun {
            command: "px4",
            record: Some(&dir),
            duration: Some(0.01),
            speedup: Speedup::Max,
            adsb: false,
            stop: &NEVER,
        };
        let members = vec![member(Some(Err("crash".into())))];
        let end = fly_fleet((ls, recorder, members), &inputs, &fleet).expect("flown");
        let meta = std::fs::read_to_string(dir.join("meta.json")).expect("meta.json");
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(end.outcome, Ok(()));
        assert_eq!(end.finished, Ok(()));
        assert!(meta.contains("\"completed\": false,"), "{meta}");
    }
}
