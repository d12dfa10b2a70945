//! `mavsitl sim`: run a scenario headless and print a summary.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;

use mavsitl::geo::ExportFrame;
use mavsitl::open_loop::{load_scenario, SimDriver, DEFAULT_NAME};
use mavsitl::recording::RunPlan;
use mavsitl::scenario::{Home, Scenario};
use mavsitl::sim::Simulation;
use mavsitl::time::SimTime;

use super::{home, CliError};

/// Arguments of `mavsitl sim`.
#[derive(Debug, Args)]
pub struct SimArgs {
    /// Scenario file (JSON), e.g. scenarios/boat_cruise.json. Without one, the
    /// built-in default runs: scenarios/quad_hover.json (a generic quad released
    /// at 10 m with its rotors at the hover command).
    pub scenario: Option<PathBuf>,

    /// Sim time to run, seconds (default: the scenario's duration_s).
    #[arg(long, value_name = "S")]
    pub duration: Option<f64>,

    /// Noise seed (default: the scenario's seed).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Inject a fault (repeatable): KIND@START[+DURATION][:key=value,...], e.g.
    /// gps_loss@40s+30s, motor_failure@30s:motor=0,thrust_scale=0,
    /// battery_capacity_scale@0s:scale=0.25. Keys as in a scenario's "faults".
    #[arg(long = "fault", value_name = "FAULT", value_parser = mavsitl::faults::parse_fault_arg)]
    pub faults: Vec<mavsitl::faults::FaultSpec>,

    /// Home LAT,LON,ALT[,HEADING] (deg, deg, m AMSL, deg). Overrides the scenario
    /// and PX4_HOME_LAT / PX4_HOME_LON / PX4_HOME_ALT.
    #[arg(long, value_name = "LAT,LON,ALT[,HEADING]", value_parser = home::parse_home, allow_hyphen_values = true)]
    pub home: Option<Home>,

    /// Write recordings (ground_truth.csv, zone_events.csv, meta.json) into DIR.
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,

    /// Frame of recorded positions, velocities and attitudes.
    #[arg(long, default_value = "ned", value_parser = super::export_frame_parser())]
    pub frame: ExportFrame,
}

/// Runs `mavsitl sim`.
pub fn run(args: SimArgs) -> Result<(), CliError> {
    let (mut scenario, source) = load_scenario(args.scenario.as_ref())?;
    scenario.home =
        home::resolve(args.home, scenario.home, |k| std::env::var(k).ok()).map_err(|e| {
            CliError::input(
                format!("home: {e}"),
                "--home LAT,LON,ALT[,HEADING], e.g. --home 47.397742,8.545594,488",
            )
        })?;
    if let Some(seed) = args.seed {
        scenario.seed = seed;
    }
    mavsitl::inputs::add_faults(&mut scenario, &source, None, &args.faults)?;
    let duration_s = args.duration.unwrap_or(scenario.duration_s);
    if !(duration_s.is_finite() && duration_s > 0.0 && duration_s <= 1e7) {
        return Err(CliError::input(
            format!("--duration {duration_s:e}: give a positive number of seconds up to 1e7 (as a scenario's duration_s)"),
            "e.g. --duration 600",
        ));
    }
    let lockstep = scenario.build(&source).map_err(|e| {
        CliError::input(
            e.to_string(),
            "check the scenario against docs/reference/scenario.md",
        )
    })?;
    let end = SimTime::from_secs_f64(duration_s);
    let plan = RunPlan {
        record: args.record.as_deref(),
        frame: args.frame,
        mission_file: None,
        builtin: "",
        end_s: Some(duration_s),
        stop: &super::INTERRUPTED,
    };
    let mut run = mavsitl::recording::session(lockstep, &scenario, &plan)?;
    let mut driver = SimDriver::new(end);
    let wall = Instant::now();
    let result = run.run(&mut driver);
    let lockstep = run.world();
    let interrupted = super::interrupted() && lockstep.sim().time() < end;
    let wall_s = wall.elapsed().as_secs_f64();
    driver.done();
    run.finish(result.is_ok() && !interrupted)
        .map_err(CliError::run)?;
    result.map_err(CliError::run)?;
    let lockstep = run.world();
    print_summary(&args, &scenario, lockstep.sim(), wall_s);
    if interrupted {
        return Err(CliError {
            message: format!(
                "interrupted at {}; recordings flushed",
                lockstep.sim().time()
            ),
            hint: None,
            code: super::INTERRUPTED_CODE,
        });
    }
    Ok(())
}

fn print_summary(args: &SimArgs, scenario: &Scenario, sim: &Simulation, wall_s: f64) {
    let sim_s = sim.time().as_secs_f64();
    let name = args
        .scenario
        .as_ref()
        .map_or_else(|| DEFAULT_NAME.to_string(), |p| p.display().to_string());
    println!("mavsitl sim {name} (seed {})", scenario.seed);
    println!(
        "  sim time          {sim_s:.3} s ({} ticks at {} Hz)",
        sim.tick(),
        sim.rate().hz()
    );
    println!("  wall time         {wall_s:.3} s");
    if wall_s > 0.0 {
        println!("  real-time factor  {:.0}x", sim_s / wall_s);
    }
    for v in sim.vehicles() {
        let t = v.ground_truth();
        let (roll, pitch, yaw) = t.att_ned_frd.euler_angles();
        println!(
            "  {:<16}  pos N {:.3} E {:.3} D {:.3} m | speed {:.3} m/s | roll {:.1} pitch {:.1} yaw {:.1} deg | {}",
            v.name(),
            t.pos_ned_m.x,
            t.pos_ned_m.y,
            t.pos_ned_m.z,
            t.vel_ned_m_s.norm(),
            roll.to_degrees(),
            pitch.to_degrees(),
            yaw.to_degrees(),
            if t.landed { "on ground" } else { "moving freely" }
        );
    }
    let events = sim.zone_events().len();
    if events > 0 {
        println!("  zone events       {events}");
    }
    if let Some(dir) = &args.record {
        println!("  recorded to       {}", dir.display());
    }
}
