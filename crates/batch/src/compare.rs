//! One mission flown by several controllers — SimpleFlight, SimpleFlight
//! with other parameters, PX4, ArduPilot — on the same scenario, home, wind
//! and noise seeds, then measured on ground truth by the same code
//! ([`mavsitl_analysis`]) and written up by [`mavsitl_analysis::report`].
//!
//! Each flight is `mavsitl` run again as a child (`fly`, `px4` or
//! `ardupilot` with `--record`), so every flight is exactly what that
//! command gives, flights run in parallel, and firmware gets its own
//! instance number per parallel slot.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use mavsitl_analysis::plot::Flown;
use mavsitl_analysis::{MissionMetrics, Route, Track};
use mavsitl_core::failure::Failure;
use mavsitl_core::geo::{GeoPoint, LocalFrame};
use mavsitl_core::vehicle::{BuiltinVehicle, VehicleKind};
use mavsitl_mavlink::mission::Mission;

use crate::children::{run_children, ChildFlight};

/// Which controller an entry of `--with` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControllerKind {
    /// The built-in autopilot (`mavsitl fly`).
    SimpleFlight,
    /// PX4 SITL, launched (`mavsitl px4 --px4-build`).
    Px4,
    /// ArduPilot SITL, launched (`mavsitl ardupilot --ardupilot`).
    ArduPilot,
}

/// One entry of `--with`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its label in tables, plots and directory names.
    pub label: String,
    /// The controller.
    pub kind: ControllerKind,
    /// Its parameter file: SimpleFlight's (`simpleflight:FILE`), or the
    /// firmware's, set at its start-up (`--params px4=FILE`).
    pub params: Option<PathBuf>,
}

/// Parses `simpleflight`, `simpleflight:FILE`, `px4` or `ardupilot`.
pub fn parse_entry(s: &str) -> Result<Entry, String> {
    let (name, file) = match s.split_once(':') {
        Some((n, f)) => (n, Some(PathBuf::from(f))),
        None => (s, None),
    };
    let kind = match name.trim().to_ascii_lowercase().as_str() {
        "simpleflight" | "sf" => ControllerKind::SimpleFlight,
        "px4" => ControllerKind::Px4,
        "ardupilot" | "ap" => ControllerKind::ArduPilot,
        other => {
            return Err(format!(
                "'{other}' is not a controller: simpleflight[:PARAMS], px4 or ardupilot"
            ))
        }
    };
    if file.is_some() && kind != ControllerKind::SimpleFlight {
        return Err(format!(
            "'{s}': NAME:FILE is for SimpleFlight tunings; give firmware parameters with --params {name}=FILE"
        ));
    }
    let label = match &file {
        Some(f) => format!(
            "simpleflight:{}",
            f.file_stem()
                .map_or_else(|| "params".into(), |n| n.to_string_lossy())
        ),
        None => match kind {
            ControllerKind::SimpleFlight => "simpleflight".into(),
            ControllerKind::Px4 => "px4".into(),
            ControllerKind::ArduPilot => "ardupilot".into(),
        },
    };
    Ok(Entry {
        label,
        kind,
        params: file,
    })
}

/// Parses `--params NAME=FILE`.
pub fn parse_params_arg(s: &str) -> Result<(String, PathBuf), String> {
    match s.split_once('=') {
        Some((name, file)) if !name.trim().is_empty() && !file.is_empty() => {
            Ok((name.trim().to_string(), PathBuf::from(file)))
        }
        _ => Err(format!(
            "'{s}' is not NAME=FILE (NAME a controller of --with, e.g. px4=slow.params)"
        )),
    }
}

/// The entries of `--with` with the `--params` files given to them.
///
/// # Errors
/// A file for no entry, or a second file for one (exit 2).
pub fn with_params(with: &[Entry], params: &[(String, PathBuf)]) -> Result<Vec<Entry>, Failure> {
    let mut entries = with.to_vec();
    for (name, file) in params {
        let Some(e) = entries.iter_mut().find(|e| e.label == *name) else {
            let labels: Vec<&str> = with.iter().map(|e| e.label.as_str()).collect();
            return Err(Failure::input(
                format!(
                    "--params {name}={}: --with has no controller '{name}'",
                    file.display()
                ),
                format!("name one of: {}", labels.join(", ")),
            ));
        };
        if e.params.is_some() {
            return Err(Failure::input(
                format!("--params {name}=...: '{name}' already has a parameter file"),
                "give each controller one parameter file",
            ));
        }
        e.params = Some(file.clone());
    }
    Ok(entries)
}

/// Seeds to fly, from `--seeds A..B`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seeds(pub Vec<u64>);

/// Parses `A..B` (both included) or a single seed.
pub fn parse_seeds(s: &str) -> Result<Seeds, String> {
    let bad = || format!("'{s}' is not a seed range: A..B (both included), e.g. 0..9");
    match s.split_once("..") {
        Some((a, b)) => {
            let a: u64 = a.trim().parse().map_err(|_| bad())?;
            let b: u64 = b.trim().parse().map_err(|_| bad())?;
            if b < a || b - a >= 10_000 {
                return Err(format!(
                    "'{s}': the range must run upwards and hold at most 10000 seeds"
                ));
            }
            Ok(Seeds((a..=b).collect()))
        }
        None => s.trim().parse().map(|x| Seeds(vec![x])).map_err(|_| bad()),
    }
}

/// One flight to run.
#[derive(Debug, Clone)]
pub struct Job {
    /// The controller.
    pub entry: Entry,
    /// The noise seed.
    pub seed: u64,
    /// Its recording directory.
    pub dir: PathBuf,
}

/// How a flight ended.
#[derive(Debug, Clone)]
pub struct Done {
    /// The flight.
    pub job: Job,
    /// Its exit code (None: killed).
    pub exit: Option<i32>,
}

fn dir_name(label: &str) -> String {
    label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A comparison to fly: what `mavsitl compare` takes on its command line.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// The `mavsitl` program the flights are flown with.
    pub exe: PathBuf,
    /// The mission: a QGroundControl .plan or a 'QGC WPL 110' file.
    pub mission: PathBuf,
    /// The controllers (`--with`).
    pub entries: Vec<Entry>,
    /// Parameter files given to the controllers by label (`--params
    /// NAME=FILE`; see [`with_params`]).
    pub params: Vec<(String, PathBuf)>,
    /// The vehicle (None: from the plan, as `fly` decides).
    pub vehicle: Option<BuiltinVehicle>,
    /// The scenario, the same for every flight.
    pub scenario: Option<PathBuf>,
    /// The seeds each controller flies.
    pub seeds: Vec<u64>,
    /// PX4's build directory (for `px4`).
    pub px4_build: Option<PathBuf>,
    /// ArduPilot checkout or SITL binary (for `ardupilot`).
    pub ardupilot: Option<PathBuf>,
    /// Output directory: one recording per flight and the report.
    pub out: PathBuf,
    /// Flights at once (at least 1).
    pub parallel: usize,
    /// Sim time after which a flight gives up, s.
    pub timeout_s: f64,
}

impl Comparison {
    /// `mission` flown by SimpleFlight with seed 0 into `out`, one flight
    /// at a time, giving up after 1800 s.
    pub fn new(exe: PathBuf, mission: PathBuf, out: PathBuf) -> Self {
        Comparison {
            exe,
            mission,
            entries: vec![Entry {
                label: "simpleflight".into(),
                kind: ControllerKind::SimpleFlight,
                params: None,
            }],
            params: Vec::new(),
            vehicle: None,
            scenario: None,
            seeds: vec![0],
            px4_build: None,
            ardupilot: None,
            out,
            parallel: 1,
            timeout_s: 1800.0,
        }
    }

    /// Every (controller, seed) flight, seed by seed, each in
    /// `out/LABEL/seed-N`.
    pub fn jobs(&self) -> Vec<Job> {
        self.seeds
            .iter()
            .flat_map(|&seed| {
                self.entries.iter().map(move |entry| Job {
                    entry: entry.clone(),
                    seed,
                    dir: self
                        .out
                        .join(dir_name(&entry.label))
                        .join(format!("seed-{seed}")),
                })
            })
            .collect()
    }
}

/// What a comparison flew and measured.
#[derive(Debug)]
pub struct Compared {
    /// The flights asked for.
    pub jobs: usize,
    /// The flights that ran (fewer when stopped), in order.
    pub done: Vec<Done>,
    /// The flights measured, from their recordings.
    pub flown: Vec<Flown>,
    /// What kept a flight from being measured.
    pub problems: Vec<String>,
    /// The mission's route, as every flight is measured against it.
    pub route: Route,
    /// Wall time of the flights, s.
    pub flights_s: f64,
}

impl Compared {
    /// The flights that failed, each with its cause from its `run.log`.
    pub fn failures(&self) -> Vec<String> {
        self.done
            .iter()
            .filter(|d| d.exit != Some(0))
            .map(|d| {
                format!(
                    "{} seed {}: {}",
                    d.job.entry.label,
                    d.job.seed,
                    failure_cause(&d.job.dir, d.exit)
                )
            })
            .collect()
    }
}

/// Flies a comparison and measures every flight that left a recording.
/// Everything is checked before anything flies: the mission, the parameter
/// files' controllers, each label given once, each firmware's path.
///
/// # Errors
/// Bad input (exit 2); a flight that could not start (exit 1). Failed
/// flights are in [`Compared::failures`], not errors.
pub fn fly(args: &Comparison, stop: &AtomicBool) -> Result<Compared, Failure> {
    let mission = Mission::load(&args.mission).map_err(|e| {
        Failure::input(
            e.to_string(),
            "a QGroundControl .plan or a 'QGC WPL 110' file",
        )
    })?;
    let args = &Comparison {
        entries: with_params(&args.entries, &args.params)?,
        params: Vec::new(),
        ..args.clone()
    };
    let mut labels: Vec<&str> = Vec::new();
    for e in &args.entries {
        if labels.contains(&e.label.as_str()) {
            return Err(Failure::input(
                format!("--with names {} twice", e.label),
                "give each controller once (parameter files by different names)",
            ));
        }
        labels.push(&e.label);
    }
    let jobs = args.jobs();
    for j in &jobs {
        command_for(args, j, 0)?; // firmware paths given before anything flies
    }
    let kind = args
        .vehicle
        .unwrap_or_else(|| BuiltinVehicle::of_plan(mission.vehicle_type))
        .kind();
    check_firmware(args, kind)?;
    let started = std::time::Instant::now();
    let outcomes = run_children(jobs.len(), args.parallel, (stop, None), |i, slot| {
        let job = jobs.get(i).ok_or_else(|| Failure::run("no such flight"))?;
        Ok(ChildFlight {
            exe: args.exe.clone(),
            args: command_for(args, job, slot)?,
            dir: job.dir.clone(),
            wall_limit: None,
        })
    })?;
    let done: Vec<Done> = outcomes
        .iter()
        .filter_map(|(i, o)| {
            Some(Done {
                job: jobs.get(*i)?.clone(),
                exit: o.exit,
            })
        })
        .collect();
    let flights_s = started.elapsed().as_secs_f64();
    let radius_m = mavsitl_analysis::route::default_radius_m(kind);
    let (flown, problems) = measure(&done, &mission, radius_m);
    let route = mavsitl_analysis::report::route_of(&mission, &flown, radius_m);
    Ok(Compared {
        jobs: jobs.len(),
        done,
        flown,
        problems,
        route,
        flights_s,
    })
}

/// The arguments that fly `job` in parallel slot `slot`.
fn command_for(args: &Comparison, job: &Job, slot: usize) -> Result<Vec<OsString>, Failure> {
    let mut c: Vec<OsString> = Vec::new();
    let mut push = |a: &dyn AsRef<std::ffi::OsStr>| c.push(a.as_ref().to_os_string());
    match job.entry.kind {
        ControllerKind::SimpleFlight => {
            push(&"fly");
            push(&args.mission);
            push(&"--timeout");
            push(&args.timeout_s.to_string());
        }
        ControllerKind::Px4 | ControllerKind::ArduPilot => {
            let (sub, flag, path) = if job.entry.kind == ControllerKind::Px4 {
                ("px4", "--px4-build", &args.px4_build)
            } else {
                ("ardupilot", "--ardupilot", &args.ardupilot)
            };
            let Some(path) = path else {
                return Err(Failure::input(
                    format!("--with {sub} needs the firmware: {flag} PATH"),
                    "or set PX4_BUILD_DIR / ARDUPILOT_HOME",
                ));
            };
            for a in [sub, flag] {
                push(&a);
            }
            push(path);
            push(&"--mission");
            push(&args.mission);
            push(&"--mission-timeout");
            push(&args.timeout_s.to_string());
            push(&"--instance");
            push(&(slot + 1).to_string());
        }
    }
    if let Some(p) = &job.entry.params {
        push(&"--params");
        push(p);
    }
    push(&"--seed");
    push(&job.seed.to_string());
    push(&"--record");
    push(&job.dir);
    if let Some(v) = args.vehicle {
        push(&"--vehicle");
        push(&v.word());
    }
    if let Some(s) = &args.scenario {
        push(&"--scenario");
        push(s);
    }
    Ok(c)
}

/// Measures every flight that left a recording.
fn measure(done: &[Done], mission: &Mission, radius_m: f64) -> (Vec<Flown>, Vec<String>) {
    let mut flown = Vec::new();
    let mut problems = Vec::new();
    for d in done {
        match Track::load(&d.job.dir) {
            Ok(Track { home: None, .. }) => problems.push(format!(
                "{} seed {}: meta.json names no origin",
                d.job.entry.label, d.job.seed
            )),
            Ok(track) => {
                let frame =
                    LocalFrame::new(track.home.unwrap_or(GeoPoint::from_deg(0.0, 0.0, 0.0)));
                let route = Route::new(mission, &frame, radius_m);
                let mut metrics = MissionMetrics::measure(&track, &route);
                if metrics.completed.is_none() {
                    metrics.completed = Some(d.exit == Some(0));
                }
                flown.push(Flown {
                    controller: d.job.entry.label.clone(),
                    seed: d.job.seed,
                    track,
                    metrics,
                });
            }
            Err(e) => problems.push(format!(
                "{} seed {}: no recording to measure ({e}); see {}",
                d.job.entry.label,
                d.job.seed,
                d.job.dir.join("run.log").display()
            )),
        }
    }
    (flown, problems)
}

/// Refuses, before anything flies, a firmware that is not there: a PX4
/// build directory without bin/px4, an ArduPilot path that is neither a
/// checkout with the vehicle's SITL binary nor a file (exit 2, as `px4` and
/// `ardupilot` give).
fn check_firmware(args: &Comparison, kind: VehicleKind) -> Result<(), Failure> {
    for e in &args.entries {
        match e.kind {
            ControllerKind::Px4 => {
                if let Some(p) = &args.px4_build {
                    mavsitl_firmware::px4::px4_build_dir(p)?;
                }
            }
            ControllerKind::ArduPilot => {
                let Some(p) = &args.ardupilot else { continue };
                let bin = if kind.is_multirotor() {
                    "arducopter"
                } else {
                    "ardurover"
                };
                let ok = if p.is_dir() {
                    p.join("build/sitl/bin").join(bin).is_file()
                } else {
                    p.is_file()
                };
                if !ok {
                    return Err(Failure::input(
                        format!(
                            "--ardupilot {}: neither a checkout with build/sitl/bin/{bin} nor a SITL binary",
                            p.display()
                        ),
                        "an ArduPilot checkout built with ./waf configure --board sitl, or its binary",
                    ));
                }
            }
            ControllerKind::SimpleFlight => {}
        }
    }
    Ok(())
}

/// Why a flight failed, from its exit code and the last error its run.log
/// holds.
fn failure_cause(dir: &Path, exit: Option<i32>) -> String {
    let log = std::fs::read_to_string(dir.join("run.log")).unwrap_or_default();
    let line = log
        .lines()
        .rev()
        .find(|l| l.starts_with("error:") || l.contains("FAILED"))
        .or_else(|| log.lines().rev().find(|l| !l.trim().is_empty()))
        .map_or("no output", str::trim);
    let code = exit.map_or_else(|| "killed".to_string(), |c| format!("exit {c}"));
    format!("{code}: {line}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(s: &str) -> Entry {
        parse_entry(s).expect("entry")
    }

    fn params(s: &str) -> (String, PathBuf) {
        parse_params_arg(s).expect("NAME=FILE")
    }

    #[test]
    fn params_name_a_controller_and_reach_its_flight() {
        let with = [entry("simpleflight"), entry("px4")];
        let entries = with_params(&with, &[params("px4=slow.params")]).expect("entries");
        assert_eq!(entries[0].params, None);
        assert_eq!(entries[1].params, Some(PathBuf::from("slow.params")));
        let job = Job {
            entry: entries[1].clone(),
            seed: 0,
            dir: "d".into(),
        };
        let args = Comparison {
            px4_build: Some("B".into()),
            ..Comparison::new("mavsitl".into(), "m.plan".into(), "o".into())
        };
        let argv = command_for(&args, &job, 0).expect("argv");
        let at = argv.iter().position(|a| a == "--params").expect("--params");
        assert_eq!(argv[at + 1], "slow.params");
        assert_eq!(argv[0], "px4");
    }

    #[test]
    fn params_for_no_controller_or_twice_are_refused() {
        let e = with_params(&[entry("simpleflight")], &[params("px4=p")]).expect_err("unknown");
        assert!(
            e.message.contains("--with has no controller 'px4'"),
            "{}",
            e.message
        );
        let e = with_params(&[entry("sf:a.parm")], &[params("simpleflight:a=b.parm")])
            .expect_err("twice");
        assert!(
            e.message.contains("already has a parameter file"),
            "{}",
            e.message
        );
        assert!(parse_params_arg("px4").is_err());
    }
}
