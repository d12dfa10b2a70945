//! `mavsitl serve`: SimpleFlight as a MAVLink vehicle — or `--count N` of
//! them in one world, ports and system ids as PX4 SITL's multi-vehicle set-up
//! assigns them — waiting for a ground station (QGroundControl, MAVSDK,
//! MAVProxy, pymavlink) to fly it.

use std::io::Write as _;
use std::path::PathBuf;

use clap::Args;

use mavsitl::serve::{ServePlan, Served};

use super::inputs::{VehicleArg, WorldArgs};
use super::vehicle_link::GcsArgs;
use super::CliError;

/// Arguments of `mavsitl serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Vehicle (default: a boat for a plan made for a boat or rover, else a quad).
    #[arg(long, value_enum)]
    pub vehicle: Option<VehicleArg>,

    /// The simulated world.
    #[command(flatten)]
    pub world: WorldArgs,

    /// A mission (.plan or 'QGC WPL 110') stored at start, as if uploaded.
    #[arg(long, value_name = "M")]
    pub mission: Option<PathBuf>,

    /// Parameter file (`NAME VALUE` lines).
    #[arg(long, value_name = "FILE")]
    pub params: Option<PathBuf>,

    /// Write recordings (ground truth, sensors) and telemetry.tlog of the link.
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,

    /// Stop after this much sim time, s (default: run until interrupted).
    #[arg(long, value_name = "S", value_parser = super::inputs::seconds_in(0.001, super::inputs::MAX_RUN_S))]
    pub duration: Option<f64>,

    /// Serve N SimpleFlight vehicles in one world, 5 m apart eastwards:
    /// vehicle k is instance --instance + k (system id 1 + instance + k, its
    /// ports shifted by k as PX4 SITL's are). A scenario gives either one
    /// vehicle (copied) or N.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=200))]
    pub count: u8,

    /// With --count: each vehicle also reports the others as ADS-B traffic
    /// (ADSB_VEHICLE at 2 Hz), for ground stations' traffic maps.
    #[arg(long)]
    pub adsb: bool,

    /// Ground-station link.
    #[command(flatten)]
    pub gcs: GcsArgs,
}

/// Runs `mavsitl serve`.
pub fn run(args: ServeArgs) -> Result<(), CliError> {
    mavsitl::inputs::check_instances(args.gcs.instance, args.count)?;
    let (mission, params) = (args.mission.as_ref(), args.params.as_ref());
    let mut inputs = args
        .world
        .flight(mission, args.vehicle, params, (false, false))?;
    // SimpleFlight's physics rate, as `fly`'s.
    inputs.scenario.fit_physics_rate_to_simpleflight();
    let plan = ServePlan {
        link: args.gcs.choice(),
        count: args.count,
        adsb: args.adsb,
        record: args.record.as_deref(),
        duration_s: args.duration,
        speedup: args.gcs.speedup,
        stop: &super::INTERRUPTED,
    };
    let served = Served::start(inputs, &plan)?;
    print!("{}", served.banner());
    let _ = std::io::stdout().flush();
    let (ended, outcome) = served.run()?;
    print!("{ended}");
    if let Some(dir) = &args.record {
        println!("  recorded to         {}", dir.display());
    }
    outcome
}
