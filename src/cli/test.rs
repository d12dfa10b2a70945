//! `mavsitl test`: regression suites (`suites/*.toml`) run as (case, seed)
//! pairs — in parallel, sharded, filtered — each pair a child flight
//! (`fly`, `px4` or `ardupilot` with `--record`) checked on what it recorded;
//! a summary on stdout, JUnit XML and a JSON summary for CI, and the
//! recording of every failed pair kept.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::Args;
use mavsitl::analysis::{MissionMetrics, Route, Track};
use mavsitl::geo::{GeoPoint, LocalFrame};
use mavsitl::mission::Mission;
use mavsitl::suite::{self, evaluate, Case, Check, Controller, Evidence, Pair, Suite, Vehicle};

use super::flights::{run_children, ChildFlight, ChildOutcome};
use super::CliError;
use mavsitl::suite::report::Verdict;

/// Arguments of `mavsitl test`.
#[derive(Debug, Args)]
pub struct TestArgs {
    /// Suite files (TOML).
    #[arg(required = true)]
    pub suites: Vec<PathBuf>,

    /// Pairs at once (default: the number of cores).
    #[arg(short = 'j', long, value_name = "N")]
    pub jobs: Option<usize>,

    /// Run only shard I of N (1-based): every N-th pair from the I-th; the N
    /// shards together run every pair exactly once.
    #[arg(long, value_name = "I/N", value_parser = suite::parse_shard)]
    pub shard: Option<(usize, usize)>,

    /// Run only the cases whose `suite/case` name contains PATTERN.
    #[arg(long, value_name = "PATTERN")]
    pub filter: Option<String>,

    /// Write a JUnit XML report.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,

    /// Write a JSON summary.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Where runs record (kept for failed pairs).
    #[arg(long, value_name = "DIR", default_value = "test-results")]
    pub out: PathBuf,

    /// Keep the recordings of passed pairs too.
    #[arg(long)]
    pub keep_all: bool,

    /// PX4's build directory (for controller = "px4").
    #[arg(long, value_name = "DIR", env = "PX4_BUILD_DIR")]
    pub px4_build: Option<PathBuf>,

    /// ArduPilot checkout or SITL binary (for controller = "ardupilot").
    #[arg(long, value_name = "PATH", env = "ARDUPILOT_HOME")]
    pub ardupilot: Option<PathBuf>,

    /// Firmware instance of the first parallel slot; slot k uses BASE + k.
    /// Give runs sharing a machine bases -j apart, so their ports differ.
    #[arg(long, value_name = "BASE", default_value_t = 1, value_parser = clap::value_parser!(u8).range(0..=200))]
    pub instance_base: u8,
}

fn pair_dir(out: &Path, s: &Suite, c: &Case, seed: u64) -> PathBuf {
    out.join(&s.name).join(&c.name).join(format!("seed-{seed}"))
}

/// The arguments of the child that flies `c` with `seed` into `dir`.
fn child_args(
    args: &TestArgs,
    c: &Case,
    seed: u64,
    dir: &Path,
    slot: usize,
) -> Result<Vec<OsString>, CliError> {
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
                return Err(CliError::input(
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
        push(&if vk == Vehicle::Boat { "boat" } else { "quad" });
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
    let encounters = match mavsitl::analysis::encounters::Encounters::load(dir) {
        Ok(e) => e,
        Err(e) => {
            problems.push(format!("encounters: {e}"));
            None
        }
    };
    let per_flight = mavsitl::suite::Expect {
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
        let radius = mavsitl::analysis::route::default_radius_m(c.vehicle == Some(Vehicle::Boat));
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
        checks.push(mavsitl::suite::check::min_separation(
            b,
            encounters.as_ref(),
        ));
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

fn load_suites(paths: &[PathBuf]) -> Result<Vec<Suite>, CliError> {
    let mut suites: Vec<Suite> = Vec::new();
    for p in paths {
        let s = Suite::load(p)
            .map_err(|e| CliError::input(e.to_string(), "see docs/commands/test.md"))?;
        if suites.iter().any(|k| k.name == s.name) {
            return Err(CliError::input(
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
fn check_up_front(args: &TestArgs, suites: &[Suite]) -> Result<(), CliError> {
    for (flag, file) in [("--junit", &args.junit), ("--json", &args.json)] {
        let Some(file) = file else { continue };
        let dir = match file.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        if !dir.is_dir() {
            return Err(CliError::input(
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
                    return Err(CliError::input(
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

/// Runs `mavsitl test`.
pub fn run(args: TestArgs) -> Result<(), CliError> {
    let suites = load_suites(&args.suites)?;
    check_up_front(&args, &suites)?;
    let all = suite::pairs(&suites, args.filter.as_deref());
    if all.is_empty() {
        if let Some(f) = &args.filter {
            let names: Vec<String> = suites
                .iter()
                .flat_map(|s| {
                    s.cases
                        .iter()
                        .map(move |c| format!("{}/{}", s.name, c.name))
                })
                .collect();
            return Err(CliError::input(
                format!(
                    "--filter '{f}' matches no case; the cases are: {}",
                    names.join(", ")
                ),
                "give part of a suite/case name",
            ));
        }
    }
    let pairs: Vec<Pair> = match args.shard {
        Some((i, n)) => suite::shard(&all, i, n),
        None => all,
    };
    let case_of = |p: &Pair| {
        let s = suites.get(p.suite)?;
        Some((s, s.cases.get(p.case)?))
    };
    for p in &pairs {
        if let Some((s, c)) = case_of(p) {
            child_args(&args, c, p.seed, &pair_dir(&args.out, s, c, p.seed), 0)?;
        }
    }
    let parallel = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, 64);
    super::install_interrupt_handler();
    let started = std::time::Instant::now();
    let outcomes = run_children(pairs.len(), parallel, |i, slot| {
        let (s, c) = pairs
            .get(i)
            .and_then(case_of)
            .ok_or_else(|| CliError::run("no such pair"))?;
        let seed = pairs.get(i).map_or(0, |p| p.seed);
        let dir = pair_dir(&args.out, s, c, seed);
        let _ = std::fs::remove_dir_all(&dir);
        Ok(ChildFlight {
            args: child_args(&args, c, seed, &dir, slot)?,
            dir,
            wall_limit: Some(mavsitl::time::saturating_duration(c.timeout_s)),
        })
    })?;
    let verdicts: Vec<Verdict> = outcomes
        .iter()
        .filter_map(|(i, o)| {
            let p = pairs.get(*i)?;
            let (s, c) = case_of(p)?;
            Some(judge(s, c, p.seed, pair_dir(&args.out, s, c, p.seed), o))
        })
        .collect();
    let wall_s = started.elapsed().as_secs_f64();
    let files = mavsitl::suite::report::ReportFiles {
        junit: args.junit.as_deref(),
        json: args.json.as_deref(),
        shard: args.shard,
    };
    print!("{}", mavsitl::suite::report::summary(&verdicts, wall_s));
    mavsitl::suite::report::write(&files, &verdicts, wall_s).map_err(CliError::run)?;
    if !args.keep_all {
        for v in verdicts.iter().filter(|v| v.passed) {
            let _ = std::fs::remove_dir_all(&v.dir);
        }
    }
    let failed = verdicts.iter().filter(|v| !v.passed).count();
    if super::interrupted() {
        return Err(CliError {
            message: format!(
                "interrupted: {} of {} pairs run",
                verdicts.len(),
                pairs.len()
            ),
            hint: None,
            code: super::INTERRUPTED_CODE,
        });
    }
    if failed > 0 {
        return Err(CliError::run(format!(
            "{failed} of {} pairs failed",
            verdicts.len()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: TestArgs,
    }

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
        let cli = Cli::parse_from(["t", "s.toml", "--px4-build", "B", "--ardupilot", "A"]);
        for controller in [
            Controller::SimpleFlight,
            Controller::Px4,
            Controller::ArduPilot,
        ] {
            let argv =
                child_args(&cli.args, &case(controller), 3, Path::new("d"), 0).expect("args");
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
