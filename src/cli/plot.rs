//! `mavsitl plot RECORD_DIR`: the pictures and metrics of `compare` for any
//! recording (from `fly`, `sim`, `px4` or `ardupilot`).

use std::path::PathBuf;

use clap::Args;
use mavsitl::analysis::plot::Flown;
use mavsitl::analysis::{MissionMetrics, Track};
use mavsitl::mission::Mission;

use super::CliError;

/// Arguments of `mavsitl plot`.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// A recording directory (the one holding ground_truth.csv).
    pub record: PathBuf,

    /// The mission flown, drawn as the planned route (default: the one
    /// meta.json names; none for a `sim` run).
    #[arg(long, value_name = "PLAN")]
    pub mission: Option<PathBuf>,

    /// Where the pictures, metrics and report.html go (default: RECORD/plots/..).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Runs `mavsitl plot`.
pub fn run(args: PlotArgs) -> Result<(), CliError> {
    let track = Track::load(&args.record)
        .map_err(|e| CliError::input(e.to_string(), "give a directory written by --record"))?;
    // meta.json names the copy kept in the recording (relative to it); an
    // older recording names an absolute path, which may since have moved:
    // then the copy beside it, if any.
    let named = std::fs::read_to_string(args.record.join("meta.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|m| m.get("mission")?.as_str().map(PathBuf::from))
        .map(|p| args.record.join(p))
        .and_then(|p| {
            if p.is_file() {
                Some(p)
            } else {
                ["mission.plan", "mission.waypoints"]
                    .iter()
                    .map(|n| args.record.join(n))
                    .find(|c| c.is_file())
            }
        });
    let mission = match args.mission.as_ref().or(named.as_ref()) {
        Some(p) => Mission::load(p).map_err(|e| {
            CliError::input(e.to_string(), "give the mission flown with --mission PLAN")
        })?,
        None => Mission::default(),
    };
    let route = mavsitl::analysis::report::route_of(
        &mission,
        std::slice::from_ref(&Flown {
            controller: String::new(),
            seed: 0,
            track: track.clone(),
            metrics: MissionMetrics::default(),
        }),
        2.0,
    );
    let metrics = MissionMetrics::measure(&track, &route);
    let label = args.record.file_name().map_or_else(
        || "flight".to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let flown = [Flown {
        controller: label,
        seed: 0,
        track,
        metrics,
    }];
    let out = args.out.clone().unwrap_or_else(|| args.record.clone());
    let command: Vec<String> = std::env::args().collect();
    let report = mavsitl::analysis::report::write(&out, (&[0], &command), &route, &flown)
        .map_err(CliError::run)?;
    print!("{}", report.table);
    println!("  pictures            {}", out.join("plots").display());
    println!("  report              {}", report.html.display());
    Ok(())
}
