//! `mavsitl compare`: one mission flown by several controllers — SimpleFlight,
//! SimpleFlight with other parameters, PX4, ArduPilot — on the same scenario,
//! home, wind and noise seeds, then measured on ground truth by the same code
//! ([`mavsitl::analysis`]), tabled, plotted and written up in `report.html`.
//!
//! Each flight is this program run again as a child (`fly`, `px4` or
//! `ardupilot` with `--record`), so every flight is exactly what that command
//! gives, flights run in parallel (`-j`), and firmware gets its own instance
//! number per parallel slot.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::Args;
use mavsitl::analysis::plot::Flown;
use mavsitl::analysis::{MissionMetrics, Route, Track};
use mavsitl::geo::{GeoPoint, LocalFrame};
use mavsitl::mission::Mission;

use super::flights::{run_children, ChildFlight};
use super::inputs::VehicleArg;
use super::CliError;

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
fn with_params(with: &[Entry], params: &[(String, PathBuf)]) -> Result<Vec<Entry>, CliError> {
    let mut entries = with.to_vec();
    for (name, file) in params {
        let Some(e) = entries.iter_mut().find(|e| e.label == *name) else {
            let labels: Vec<&str> = with.iter().map(|e| e.label.as_str()).collect();
            return Err(CliError::input(
                format!(
                    "--params {name}={}: --with has no controller '{name}'",
                    file.display()
                ),
                format!("name one of: {}", labels.join(", ")),
            ));
        };
        if e.params.is_some() {
            return Err(CliError::input(
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

/// Arguments of `mavsitl compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Mission: a QGroundControl .plan or a 'QGC WPL 110' file.
    pub mission: PathBuf,

    /// Controllers, comma-separated: simpleflight, simpleflight:PARAMS.parm
    /// (SimpleFlight with that parameter file), px4, ardupilot.
    #[arg(long = "with", value_name = "LIST", value_delimiter = ',', value_parser = parse_entry, default_value = "simpleflight")]
    pub with: Vec<Entry>,

    /// Vehicle (default: from the plan, as `fly` decides).
    #[arg(long, value_enum)]
    pub vehicle: Option<VehicleArg>,

    /// Scenario (vehicle, environment, sensors), the same for every flight.
    #[arg(long, value_name = "S")]
    pub scenario: Option<PathBuf>,

    /// Noise seed of every flight.
    #[arg(long, value_name = "N", conflicts_with = "seeds")]
    pub seed: Option<u64>,

    /// Seeds A..B (both included): each controller flies each; every metric
    /// is then reported as median [5th, 95th percentile].
    #[arg(long, value_name = "A..B", value_parser = parse_seeds)]
    pub seeds: Option<Seeds>,

    /// A parameter file for one controller of --with (repeatable):
    /// NAME=FILE, NAME its label (px4, ardupilot, simpleflight). Firmware
    /// gets them at start-up; SimpleFlight as with `fly --params`.
    #[arg(long = "params", value_name = "NAME=FILE", value_parser = parse_params_arg)]
    pub params: Vec<(String, PathBuf)>,

    /// PX4's build directory (for `px4`).
    #[arg(long, value_name = "DIR", env = "PX4_BUILD_DIR")]
    pub px4_build: Option<PathBuf>,

    /// ArduPilot checkout or SITL binary (for `ardupilot`).
    #[arg(long, value_name = "PATH", env = "ARDUPILOT_HOME")]
    pub ardupilot: Option<PathBuf>,

    /// Output directory: one recording per flight, metrics.csv, metrics.json,
    /// plots/ and report.html.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,

    /// Flights at once (default: the number of cores).
    #[arg(short = 'j', long, value_name = "N")]
    pub jobs: Option<usize>,

    /// Give up on a flight after this much sim time, s.
    #[arg(long, value_name = "S", default_value_t = 1800.0, value_parser = super::inputs::seconds_in(0.001, super::inputs::MAX_RUN_S))]
    pub timeout: f64,
}

/// One flight to run.
#[derive(Debug, Clone)]
struct Job {
    entry: Entry,
    seed: u64,
    dir: PathBuf,
}

/// How a flight ended.
#[derive(Debug, Clone)]
struct Done {
    job: Job,
    exit: Option<i32>,
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

/// The arguments that fly `job` in parallel slot `slot`.
fn command_for(args: &CompareArgs, job: &Job, slot: usize) -> Result<Vec<OsString>, CliError> {
    let mut c: Vec<OsString> = Vec::new();
    let mut push = |a: &dyn AsRef<std::ffi::OsStr>| c.push(a.as_ref().to_os_string());
    match job.entry.kind {
        ControllerKind::SimpleFlight => {
            push(&"fly");
            push(&args.mission);
            push(&"--timeout");
            push(&args.timeout.to_string());
        }
        ControllerKind::Px4 | ControllerKind::ArduPilot => {
            let (sub, flag, path) = if job.entry.kind == ControllerKind::Px4 {
                ("px4", "--px4-build", &args.px4_build)
            } else {
                ("ardupilot", "--ardupilot", &args.ardupilot)
            };
            let Some(path) = path else {
                return Err(CliError::input(
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
            push(&args.timeout.to_string());
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
        push(&match v {
            VehicleArg::Quad => "quad",
            VehicleArg::Boat => "boat",
        });
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

/// Runs `mavsitl compare`.
pub fn run(args: CompareArgs) -> Result<(), CliError> {
    let mission = Mission::load(&args.mission).map_err(|e| {
        CliError::input(
            e.to_string(),
            "a QGroundControl .plan or a 'QGC WPL 110' file",
        )
    })?;
    let entries = with_params(&args.with, &args.params)?;
    let mut labels: Vec<&str> = Vec::new();
    for e in &args.with {
        if labels.contains(&e.label.as_str()) {
            return Err(CliError::input(
                format!("--with names {} twice", e.label),
                "give each controller once (parameter files by different names)",
            ));
        }
        labels.push(&e.label);
    }
    let seeds = match (&args.seeds, args.seed) {
        (Some(s), _) => s.0.clone(),
        (None, Some(s)) => vec![s],
        (None, None) => vec![0],
    };
    let jobs: Vec<Job> = seeds
        .iter()
        .flat_map(|&seed| {
            entries.iter().map(move |entry| Job {
                entry: entry.clone(),
                seed,
                dir: PathBuf::new(),
            })
        })
        .map(|mut j| {
            j.dir = args
                .out
                .join(dir_name(&j.entry.label))
                .join(format!("seed-{}", j.seed));
            j
        })
        .collect();
    for j in &jobs {
        command_for(&args, j, 0)?; // firmware paths given before anything flies
    }
    let boat = match args.vehicle {
        Some(v) => v == VehicleArg::Boat,
        None => matches!(mission.vehicle_type, Some(10 | 11)),
    };
    check_firmware(&args, &entries, boat)?;
    let parallel = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, 64);
    super::install_interrupt_handler();
    let started = std::time::Instant::now();
    let outcomes = run_children(jobs.len(), parallel, |i, slot| {
        let job = jobs.get(i).ok_or_else(|| CliError::run("no such flight"))?;
        Ok(ChildFlight {
            args: command_for(&args, job, slot)?,
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
    let radius_m = mavsitl::analysis::route::default_radius_m(boat);
    let (flown, problems) = measure(&done, &mission, radius_m);
    for p in &problems {
        eprintln!("warning: {p}");
    }
    let route = mavsitl::analysis::report::route_of(&mission, &flown, radius_m);
    let command: Vec<String> = std::env::args().collect();
    let report = mavsitl::analysis::report::write(&args.out, (&seeds, &command), &route, &flown)
        .map_err(CliError::run)?;
    print!("{}", report.table);
    println!(
        "  flights             {} in {flights_s:.1} s ({parallel} at a time)",
        done.len()
    );
    println!("  analysis            {:.2} s", report.analysis_s);
    println!("  report              {}", report.html.display());
    if super::interrupted() {
        return Err(CliError {
            message: format!(
                "interrupted: {} of {} flights flown and reported",
                done.len(),
                jobs.len()
            ),
            hint: None,
            code: super::INTERRUPTED_CODE,
        });
    }
    report_failures(&done, jobs.len())?;
    if flown.len() < jobs.len() {
        return Err(CliError::run(format!(
            "{} of {} flights left no recording to measure",
            jobs.len() - flown.len(),
            jobs.len()
        )));
    }
    Ok(())
}

/// Refuses, before anything flies, a firmware that is not there: a PX4
/// build directory without bin/px4, an ArduPilot path that is neither a
/// checkout with the vehicle's SITL binary nor a file (exit 2, as `px4` and
/// `ardupilot` give).
fn check_firmware(args: &CompareArgs, entries: &[Entry], boat: bool) -> Result<(), CliError> {
    for e in entries {
        match e.kind {
            ControllerKind::Px4 => {
                if let Some(p) = &args.px4_build {
                    super::px4::px4_build_dir(p)?;
                }
            }
            ControllerKind::ArduPilot => {
                let Some(p) = &args.ardupilot else { continue };
                let bin = if boat { "ardurover" } else { "arducopter" };
                let ok = if p.is_dir() {
                    p.join("build/sitl/bin").join(bin).is_file()
                } else {
                    p.is_file()
                };
                if !ok {
                    return Err(CliError::input(
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

/// Lists the flights that failed, each with its cause, under the table; an
/// error (exit 1) when there is one.
fn report_failures(done: &[Done], jobs: usize) -> Result<(), CliError> {
    let failed: Vec<String> = done
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
        .collect();
    for f in &failed {
        println!("  failed              {f}");
    }
    if failed.is_empty() {
        return Ok(());
    }
    Err(CliError::run(format!(
        "{} of {jobs} flights failed (causes above; each flight's run.log has the rest)",
        failed.len()
    )))
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
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: CompareArgs,
    }

    fn cli(extra: &[&str]) -> Result<CompareArgs, clap::Error> {
        let mut argv = vec!["c", "m.plan", "--out", "o", "--px4-build", "B"];
        argv.extend_from_slice(extra);
        Cli::try_parse_from(argv).map(|c| c.args)
    }

    #[test]
    fn params_name_a_controller_and_reach_its_flight() {
        let args =
            cli(&["--with", "simpleflight,px4", "--params", "px4=slow.params"]).expect("parse");
        let entries = with_params(&args.with, &args.params).expect("entries");
        assert_eq!(entries[0].params, None);
        assert_eq!(entries[1].params, Some(PathBuf::from("slow.params")));
        let job = Job {
            entry: entries[1].clone(),
            seed: 0,
            dir: "d".into(),
        };
        let argv = command_for(&args, &job, 0).expect("argv");
        let at = argv.iter().position(|a| a == "--params").expect("--params");
        assert_eq!(argv[at + 1], "slow.params");
        assert_eq!(argv[0], "px4");
    }

    #[test]
    fn params_for_no_controller_or_twice_are_refused() {
        let args = cli(&["--with", "simpleflight", "--params", "px4=p"]).expect("parse");
        let e = with_params(&args.with, &args.params).expect_err("unknown");
        assert!(
            e.message.contains("--with has no controller 'px4'"),
            "{}",
            e.message
        );
        let args =
            cli(&["--with", "sf:a.parm", "--params", "simpleflight:a=b.parm"]).expect("parse");
        let e = with_params(&args.with, &args.params).expect_err("twice");
        assert!(
            e.message.contains("already has a parameter file"),
            "{}",
            e.message
        );
        assert!(cli(&["--params", "px4"]).is_err());
    }
}
