//! Regression suites run: their (case, seed) pairs — in parallel, sharded,
//! filtered — each a flight (`fly`, `px4` or `ardupilot` with `--record`)
//! judged on what it recorded, with the recording of every failed pair
//! kept. A SimpleFlight pair is flown in this process, on its slot's
//! thread, when the program hands over a [`FlyHere`]; firmware pairs, and
//! any pair that needs ports, run as children. The summary, JUnit XML and JSON come from
//! [`mavsitl_suite::report`].

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use mavsitl_analysis::{MissionMetrics, Route, Track};
use mavsitl_core::failure::Failure;
use mavsitl_core::geo::{GeoPoint, LocalFrame};
use mavsitl_core::vehicle::VehicleKind;
use mavsitl_mavlink::mission::Mission;
use mavsitl_suite::report::{ReportFiles, Verdict};
use mavsitl_suite::{evaluate, Case, Check, Controller, Evidence, Pair, Suite, Vehicle};

use crate::children::{run_children, ChildFlight, ChildOutcome, FlyHere};

/// How to run suites: what `mavsitl test` takes on its command line.
#[derive(Debug, Clone)]
pub struct Options {
    /// The `mavsitl` program the pairs are flown with.
    pub exe: PathBuf,
    /// Suite files (TOML).
    pub suites: Vec<PathBuf>,
    /// Pairs at once (at least 1).
    pub parallel: usize,
    /// Only shard I of N (1-based).
    pub shard: Option<(usize, usize)>,
    /// Only the cases whose `suite/case` name contains this.
    pub filter: Option<String>,
    /// A JUnit XML report to write.
    pub junit: Option<PathBuf>,
    /// A JSON summary to write.
    pub json: Option<PathBuf>,
    /// Where pairs record (kept for failed pairs).
    pub out: PathBuf,
    /// Keep the recordings of passed pairs too.
    pub keep_all: bool,
    /// PX4's build directory (for controller = "px4").
    pub px4_build: Option<PathBuf>,
    /// ArduPilot checkout or SITL binary (for controller = "ardupilot").
    pub ardupilot: Option<PathBuf>,
    /// Firmware instance of the first parallel slot; slot k uses BASE + k.
    pub instance_base: u8,
    /// Flies a SimpleFlight pair in this process, on its slot's thread,
    /// instead of in a child (None: every pair in a child).
    pub fly_here: Option<FlyHere>,
}

impl Options {
    /// `suites` flown with `exe`, one pair at a time, recording under
    /// `test-results`, firmware from instance 1.
    pub fn new(exe: PathBuf, suites: Vec<PathBuf>) -> Self {
        Options {
            exe,
            suites,
            parallel: 1,
            shard: None,
            filter: None,
            junit: None,
            json: None,
            out: PathBuf::from("test-results"),
            keep_all: false,
            px4_build: None,
            ardupilot: None,
            instance_base: 1,
            fly_here: None,
        }
    }
}

/// What a suite run did.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// One verdict per pair run, in pair order.
    pub verdicts: Vec<Verdict>,
    /// The pairs selected (more than were run when stopped).
    pub pairs: usize,
    /// Wall time of the flights, s.
    pub wall_s: f64,
}

impl Outcome {
    /// The pairs that failed.
    pub fn failed(&self) -> usize {
        self.verdicts.iter().filter(|v| !v.passed).count()
    }
}

/// The pairs of `suites` the options select: filtered, then sharded.
///
/// # Errors
/// A filter that matches no case (exit 2), with the cases' names.
pub fn select(opts: &Options, suites: &[Suite]) -> Result<Vec<Pair>, Failure> {
    let all = mavsitl_suite::pairs(suites, opts.filter.as_deref());
    if let (true, Some(f)) = (all.is_empty(), &opts.filter) {
        let names: Vec<String> = suites
            .iter()
            .flat_map(|s| {
                s.cases
                    .iter()
                    .map(move |c| format!("{}/{}", s.name, c.name))
            })
            .collect();
        return Err(Failure::input(
            format!(
                "--filter '{f}' matches no case; the cases are: {}",
                names.join(", ")
            ),
            "give part of a suite/case name",
        ));
    }
    Ok(match opts.shard {
        Some((i, n)) => mavsitl_suite::shard(&all, i, n),
        None => all,
    })
}

/// Runs the suites: loads and checks them before anything flies, flies
/// every selected pair (stopping when `stop` is raised) and judges each.
/// [`finish`] then writes the reports.
///
/// # Errors
/// Bad input found up front (exit 2); a flight that could not start
/// (exit 1). Failed pairs are verdicts, not errors.
pub fn run(opts: &Options, stop: &AtomicBool) -> Result<Outcome, Failure> {
    let suites = load_suites(&opts.suites)?;
    check_up_front(opts, &suites)?;
    let pairs = select(opts, &suites)?;
    let case_of = |p: &Pair| {
        let s = suites.get(p.suite)?;
        Some((s, s.cases.get(p.case)?))
    };
    for p in &pairs {
        if let Some((s, c)) = case_of(p) {
            child_args(opts, c, p.seed, &pair_dir(&opts.out, s, c, p.seed), 0)?;
        }
    }
    let started = std::time::Instant::now();
    let outcomes = run_children(
        pairs.len(),
        opts.parallel,
        (stop, opts.fly_here),
        |i, slot| {
            let (s, c) = pairs
                .get(i)
                .and_then(case_of)
                .ok_or_else(|| Failure::run("no such pair"))?;
            let seed = pairs.get(i).map_or(0, |p| p.seed);
            let dir = pair_dir(&opts.out, s, c, seed);
            let _ = std::fs::remove_dir_all(&dir);
            Ok(ChildFlight {
                exe: opts.exe.clone(),
                args: child_args(opts, c, seed, &dir, slot)?,
                dir,
                wall_limit: Some(mavsitl_core::time::saturating_duration(c.timeout_s)),
            })
        },
    )?;
    // Judged `parallel` at a time too (each reads its recording back).
    let judged = |(i, o): &(usize, ChildOutcome)| {
        let p = pairs.get(*i)?;
        let (s, c) = case_of(p)?;
        Some(judge(s, c, p.seed, pair_dir(&opts.out, s, c, p.seed), o))
    };
    let per = outcomes.len().div_ceil(opts.parallel.max(1)).max(1);
    let verdicts: Vec<Verdict> = std::thread::scope(|scope| {
        let parts: Vec<_> = outcomes
            .chunks(per)
            .map(|part| scope.spawn(move || part.iter().filter_map(judged).collect::<Vec<_>>()))
            .collect();
        parts
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    Ok(Outcome {
        verdicts,
        pairs: pairs.len(),
        wall_s: started.elapsed().as_secs_f64(),
    })
}

/// Writes the reports asked for and removes the recordings of passed
/// pairs unless kept.
///
/// # Errors
/// A report that could not be written (exit 1).
pub fn finish(opts: &Options, outcome: &Outcome) -> Result<(), Failure> {
    let files = ReportFiles {
        junit: opts.junit.as_deref(),
        json: opts.json.as_deref(),
        shard: opts.shard,
    };
    mavsitl_suite::report::write(&files, &outcome.verdicts, outcome.wall_s)
        .map_err(Failure::run)?;
    if !opts.keep_all {
        for v in outcome.verdicts.iter().filter(|v| v.passed) {
            let _ = std::fs::remove_dir_all(&v.dir);
        }
    }
    Ok(())
}

fn pair_dir(out: &Path, s: &Suite, c: &Case, seed: u64) -> PathBuf {
    out.join(&s.name).join(&c.name).join(format!("seed-{seed}"))
}

/// The arguments of the child that flies `c` with `seed` into `dir`.
fn child_args(
    args: &Options,
    c: &Case,
    seed: u64,
    dir: &Path,
    slot: usize,
) -> Result<Vec<OsString>, Failure> {
    let mut v: Vec<OsString> = Vec::new();
    let mut push = |a: &dyn AsRef<std::ffi::OsStr>| v.push(a.as_ref().to_os_string());
    let timeout = c.timeout_s.to_string();
    match c.controller {
        Controller::SimpleFlight => {
            push(&"fly");
            push(&c.mission);
            push(&"--timeout");
            push(&timeout);
        }
        Controller::Px4 | Controller::ArduPilot => {
            let (sub, flag, path) = match c.controller {
                Controller::Px4 => ("px4", "--px4-build", &args.px4_build),
                _ => ("ardupilot", "--ardupilot", &args.ardupilot),
            };
            let Some(path) = path else {
                return Err(Failure::input(
                    format!("case '{}' needs the firmware: {flag} PATH", c.name),
                    "or set PX4_BUILD_DIR / ARDUPILOT_HOME, or --filter the case out",
                ));
            };
            for a in [sub, flag] {
                push(&a);
            }
            push(path);
            let instance = (usize::from(args.instance_base) + slot).min(255);
            for a in [
                "--mission-timeout",
                &timeout,
                "--instance",
                &instance.to_string(),
            ] {
                push(&a);
            }
            push(&"--mission");
            push(&c.mission);
        }
    }
    // SimpleFlight's parameters, or the launched firmware's.
    if let Some(p) = &c.params {
        push(&"--params");
        push(p);
    }
    push(&"--seed");
    push(&seed.to_string());
    push(&"--record");
    push(&dir);
    if let Some(vk) = c.vehicle {
        push(&"--vehicle");
        push(&vk.word());
    }
    if let Some(s) = &c.scenario {
        push(&"--scenario");
        push(s);
    }
    for f in &c.faults {
        push(&"--fault");
        push(f);
    }
    Ok(v)
}

/// One flight a pair's recording holds: the vehicle's name (None: the one
/// vehicle), its recording directory and its mission file.
type Flight = (Option<String>, PathBuf, PathBuf);

/// The flights of a pair's recording: the directory itself with the case's
/// mission, or for a fleet (a scenario of several vehicles) every
/// SimpleFlight vehicle's directory with its own mission (relative to the
/// scenario file) or the case's.
fn flights_of(c: &Case, dir: &Path) -> Result<Vec<Flight>, String> {
    if dir.join("ground_truth.csv").is_file() || !dir.join("encounters.csv").is_file() {
        return Ok(vec![(None, dir.to_path_buf(), c.mission.clone())]);
    }
    let meta = std::fs::read_to_string(dir.join("meta.json"))
        .map_err(|e| format!("no recording to check: meta.json: {e}"))?;
    let meta: serde_json::Value =
        serde_json::from_str(&meta).map_err(|e| format!("meta.json: {e}"))?;
    let base = c
        .scenario
        .as_deref()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let vehicles = meta
        .pointer("/scenario/vehicles")
        .and_then(|v| v.as_array())
        .ok_or("meta.json: no scenario.vehicles")?;
    Ok(vehicles
        .iter()
        .filter(|v| v.pointer("/controller/kind").and_then(|k| k.as_str()) == Some("simpleflight"))
        .filter_map(|v| {
            let name = v.get("name")?.as_str()?.to_string();
            let mission = match v.pointer("/controller/mission").and_then(|m| m.as_str()) {
                Some(m) => base.join(m),
                None => c.mission.clone(),
            };
            Some((Some(name.clone()), dir.join(&name), mission))
        })
        .collect())
}

/// Every assertion of `c` on every flight (named for a fleet), and the
/// fleet's separation once.
fn check_flights(
    c: &Case,
    dir: &Path,
    flights: &[Flight],
    problems: &mut Vec<String>,
) -> Vec<Check> {
    let encounters = match mavsitl_analysis::encounters::Encounters::load(dir) {
        Ok(e) => e,
        Err(e) => {
            problems.push(format!("encounters: {e}"));
            None
        }
    };
    let per_flight = mavsitl_suite::Expect {
        min_separation_m: None,
        ..c.expect.clone()
    };
    let mut checks = Vec::new();
    for (name, fdir, mission) in flights {
        let (track, mission) = match (Track::load(fdir), Mission::load(mission)) {
            (Ok(t), Ok(m)) => (t, m),
            (Err(e), _) => {
                problems.push(format!("no recording to check: {e}"));
                continue;
            }
            (_, Err(e)) => {
                problems.push(format!("mission: {e}"));
                continue;
            }
        };
        let frame = LocalFrame::new(track.home.unwrap_or(GeoPoint::from_deg(0.0, 0.0, 0.0)));
        let radius = mavsitl_analysis::route::default_radius_m(
            c.vehicle.map_or(VehicleKind::Multirotor, Vehicle::kind),
        );
        // A fleet's vehicle launched where it stood.
        let launch = match (name, track.samples.first()) {
            (Some(_), Some(s)) => s.pos_ned_m.xy(),
            _ => nalgebra::Vector2::zeros(),
        };
        let route = Route::launched_at(&mission, &frame, radius, launch);
        let metrics = MissionMetrics::measure(&track, &route);
        let ev = Evidence {
            track: &track,
            metrics: &metrics,
            mission: &mission,
            frame: &frame,
            encounters: None,
        };
        checks.extend(evaluate(&per_flight, &ev).into_iter().map(|mut k| {
            if let Some(n) = name {
                k.measured = format!("'{n}': {}", k.measured);
            }
            k
        }));
    }
    if let Some(b) = c.expect.min_separation_m {
        checks.push(mavsitl_suite::check::min_separation(b, encounters.as_ref()));
    }
    checks
}

/// Judges one finished pair.
fn judge(s: &Suite, c: &Case, seed: u64, dir: PathBuf, o: &ChildOutcome) -> Verdict {
    let mut problems = Vec::new();
    if o.timed_out {
        problems.push(format!("stopped at its timeout of {} s", c.timeout_s));
    } else if o.exit.is_none() {
        problems.push("the run was killed by a signal".into());
    } else if o.exit == Some(2) {
        problems.push("the run refused its input (exit 2; see run.log)".into());
    }
    let checks = match flights_of(c, &dir) {
        Ok(flights) => check_flights(c, &dir, &flights, &mut problems),
        Err(e) => {
            problems.push(e);
            Vec::new()
        }
    };
    if checks.is_empty() && problems.is_empty() && o.exit != Some(0) {
        problems.push(format!("exit code {:?} and nothing expected", o.exit));
    }
    Verdict {
        suite: s.name.clone(),
        case: c.name.clone(),
        seed,
        passed: problems.is_empty() && checks.iter().all(|k| k.passed),
        wall_s: o.wall_s,
        problems,
        checks,
        dir,
    }
}

/// Loads the suite files, refusing two of the same name.
///
/// # Errors
/// A file that does not load, or a name given twice (exit 2).
pub fn load_suites(paths: &[PathBuf]) -> Result<Vec<Suite>, Failure> {
    let mut suites: Vec<Suite> = Vec::new();
    for p in paths {
        let s = Suite::load(p)
            .map_err(|e| Failure::input(e.to_string(), "see docs/commands/test.md"))?;
        if suites.iter().any(|k| k.name == s.name) {
            return Err(Failure::input(
                format!(
                    "{}: a suite named '{}' is already given",
                    p.display(),
                    s.name
                ),
                "suite names are file stems and must differ",
            ));
        }
        suites.push(s);
    }
    Ok(suites)
}

/// Refuses, before anything flies, a report that could not be written
/// (its folder missing) and a case whose mission or scenario file is not
/// there: found after every case had flown, they cost a whole run.
fn check_up_front(args: &Options, suites: &[Suite]) -> Result<(), Failure> {
    for (flag, file) in [("--junit", &args.junit), ("--json", &args.json)] {
        let Some(file) = file else { continue };
        let dir = match file.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        if !dir.is_dir() {
            return Err(Failure::input(
                format!("{flag} {}: no folder {}", file.display(), dir.display()),
                "create the folder first, or give a path in one that exists",
            ));
        }
    }
    for s in suites {
        for c in &s.cases {
            let files = std::iter::once(("mission", Some(&c.mission)))
                .chain(std::iter::once(("scenario", c.scenario.as_ref())));
            for (key, f) in files {
                if let Some(f) = f.filter(|f| !f.is_file()) {
                    return Err(Failure::input(
                        format!(
                            "suite {}, case '{}': {key} {}: no such file",
                            s.name,
                            c.name,
                            f.display()
                        ),
                        "paths in a suite are relative to the suite file",
                    ));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(controller: Controller) -> Case {
        Case {
            name: "c".into(),
            vehicle: None,
            mission: "m.plan".into(),
            scenario: None,
            params: Some("tuning.params".into()),
            controller,
            seeds: vec![0],
            timeout_s: 60.0,
            faults: Vec::new(),
            expect: Default::default(),
        }
    }

    #[test]
    fn a_cases_parameter_file_goes_to_simpleflight_and_firmware_alike() {
        let opts = Options {
            px4_build: Some("B".into()),
            ardupilot: Some("A".into()),
            ..Options::new("mavsitl".into(), Vec::new())
        };
        for controller in [
            Controller::SimpleFlight,
            Controller::Px4,
            Controller::ArduPilot,
        ] {
            let argv = child_args(&opts, &case(controller), 3, Path::new("d"), 0).expect("args");
            let at = argv.iter().position(|a| a == "--params");
            assert_eq!(
                at.and_then(|i| argv.get(i + 1))
                    .map(|a| a.to_string_lossy().into_owned()),
                Some("tuning.params".to_string()),
                "{controller:?}: {argv:?}"
            );
        }
    }
}
