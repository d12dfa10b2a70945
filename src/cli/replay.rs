//! `mavsitl replay`: drive a vehicle's sensors from a recorded trajectory.

use std::path::PathBuf;

use clap::Args;

use mavsitl::geo::ExportFrame;
use mavsitl::open_loop::{load_world, replay};
use mavsitl::replay::Trajectory;
use mavsitl::scenario::Home;

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
    let (scenario, source) = load_world(args.scenario.as_ref(), args.home, args.seed, &[])?;
    let r = replay(
        (&scenario, &source),
        &trajectory,
        (&args.record, args.frame),
        &super::INTERRUPTED,
    )?;
    println!(
        "mavsitl replay {} ({} poses, {:.3} s)",
        args.poses.display(),
        trajectory.len(),
        trajectory.duration_s()
    );
    println!(
        "  replayed          {} of {} ticks at {} Hz in {:.3} s wall",
        r.sim.tick(),
        r.ticks,
        r.rate_hz,
        r.wall_s
    );
    println!("  recorded to       {}", args.record.display());
    if r.interrupted {
        return Err(super::interrupted_at(r.sim.time()));
    }
    Ok(())
}
