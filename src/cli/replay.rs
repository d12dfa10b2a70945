//! `mavsitl replay`: drive a vehicle's sensors from a recorded trajectory.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;

use mavsitl::geo::ExportFrame;
use mavsitl::record::Recorder;
use mavsitl::replay::Trajectory;
use mavsitl::scenario::{Home, Scenario, ScenarioSource};
use mavsitl::sim::Observer;
use mavsitl::time::PhysicsRate;

use super::{home, CliError};

/// Arguments of `mavsitl replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// Trajectory: EuRoC ground truth (`#timestamp [ns],p_x,p_y,p_z,q_w,q_x,q_y,q_z,…`)
    /// or AirSim's `timestamp,x,y,z,qx,qy,qz,qw` (ns; NED m; body FRD → NED).
    pub poses: PathBuf,

    /// Write the interpolated ground truth and every sensor's samples into DIR.
    #[arg(long, value_name = "DIR")]
    pub record: PathBuf,

    /// Scenario whose first vehicle's sensors (rates, noise, mounts), home and
    /// physics rate are used (default: the built-in scenarios/quad_hover.json).
    #[arg(long, value_name = "S")]
    pub scenario: Option<PathBuf>,

    /// Noise seed (default: the scenario's seed).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Home LAT,LON,ALT[,HEADING]: the origin of the trajectory's NED frame.
    #[arg(long, value_name = "LAT,LON,ALT[,HEADING]", value_parser = home::parse_home, allow_hyphen_values = true)]
    pub home: Option<Home>,

    /// Frame of the recordings.
    #[arg(long, default_value = "ned", value_parser = super::export_frame_parser())]
    pub frame: ExportFrame,
}

/// Runs `mavsitl replay`.
pub fn run(args: ReplayArgs) -> Result<(), CliError> {
    let trajectory = Trajectory::load(&args.poses).map_err(|e| {
        CliError::input(
            e.to_string(),
            "see docs/reference/replay.md for the accepted formats",
        )
    })?;
    let (mut scenario, source) = mavsitl::open_loop::load_scenario(args.scenario.as_ref())?;
    scenario.home = home::resolve(args.home, scenario.home, |k| std::env::var(k).ok())
        .map_err(|e| CliError::input(format!("home: {e}"), "--home LAT,LON,ALT[,HEADING]"))?;
    if let Some(seed) = args.seed {
        scenario.seed = seed;
    }
    run_with(&args, &scenario, &source, &trajectory)
}

fn run_with(
    args: &ReplayArgs,
    scenario: &Scenario,
    source: &ScenarioSource,
    trajectory: &Trajectory,
) -> Result<(), CliError> {
    let hint = "check the scenario against docs/reference/scenario.md";
    let mut lockstep = scenario
        .build(source)
        .map_err(|e| CliError::input(e.to_string(), hint))?;
    let rate = PhysicsRate::new(scenario.physics_rate_hz)
        .map_err(|e| CliError::input(e.to_string(), hint))?;
    let gt_rate = rate
        .divider(scenario.record.ground_truth_rate_hz)
        .map_err(|e| CliError::input(e.to_string(), hint))?;
    let sim = lockstep.sim_mut();
    sim.set_vehicle_state(0, trajectory.at(0.0).state);
    let mut recorder =
        Recorder::create(&args.record, scenario, sim, args.frame, gt_rate).map_err(|e| {
            CliError::input(
                format!("{}: cannot record: {e}", args.record.display()),
                "choose a writable directory",
            )
        })?;
    let dt = rate.dt_s();
    let ticks = (trajectory.duration_s() / dt + 1e-9).floor() as u64;
    let wall = Instant::now();
    let mut result = Ok(());
    for k in 1..=ticks {
        sim.step_replay(0, &trajectory.at(k as f64 * dt));
        if let Err(e) = recorder.on_tick(sim) {
            result = Err(e);
            break;
        }
        if super::interrupted() {
            break;
        }
    }
    let interrupted = super::interrupted() && sim.tick() < ticks;
    recorder
        .finish(sim, result.is_ok() && !interrupted)
        .and(result)
        .map_err(|e| CliError::run(format!("recording: {e}")))?;
    println!(
        "mavsitl replay {} ({} poses, {:.3} s)",
        args.poses.display(),
        trajectory.len(),
        trajectory.duration_s()
    );
    println!(
        "  replayed          {} of {} ticks at {} Hz in {:.3} s wall",
        sim.tick(),
        ticks,
        rate.hz(),
        wall.elapsed().as_secs_f64()
    );
    println!("  recorded to       {}", args.record.display());
    if interrupted {
        return Err(CliError {
            message: format!("interrupted at {}; recordings flushed", sim.time()),
            hint: None,
            code: super::INTERRUPTED_CODE,
        });
    }
    Ok(())
}
