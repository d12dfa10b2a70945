//! `mavsitl ardupilot`: real ArduPilot SITL flies the simulated vehicle over
//! its JSON external-physics backend (UDP 9002 + 10 × instance).

use std::io::Write as _;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;

use mavsitl::bridge::ardupilot::{ArduPilotBridge, ArduPilotOptions, ChannelMap, RESTARTED};
use mavsitl::geo::ExportFrame;
use mavsitl::sim::Lockstep;
use mavsitl::time::{PhysicsRate, SimTime};

use super::fly::{FlightInputs, VehicleArg, WorldArgs};
use super::gcs::{parse_speedup, Pacer, Speedup};
use super::CliError;
use super::NextTick;

/// Arguments of `mavsitl ardupilot`.
#[derive(Debug, Args)]
pub struct ArduPilotArgs {
    /// Vehicle when no scenario is given.
    #[arg(long, value_enum, default_value_t = VehicleArg::Boat)]
    pub vehicle: VehicleArg,

    /// The simulated world.
    #[command(flatten)]
    pub world: WorldArgs,

    /// ArduPilot instance (`-I N`): UDP 9002 + 10 N.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub instance: u8,

    /// Address to bind.
    #[arg(long, value_name = "IP", default_value = "127.0.0.1")]
    pub bind: IpAddr,

    /// Frames a second of sim time, Hz: set ArduPilot's SIM_RATE_HZ to the same
    /// (the parameter files do; default 1000 for a quad, 200 for a boat).
    /// ArduPilot's IMU samples once a frame, and its pre-arm check wants the
    /// gyro at 1.8 × its main loop (Copter 400 Hz, Rover 50 Hz) or faster.
    #[arg(long, value_name = "HZ")]
    pub frame_rate: Option<u32>,

    /// Pace at X times real time (default: as fast as ArduPilot runs; ArduPilot
    /// paces itself with --speedup).
    #[arg(long, value_name = "X|max", value_parser = parse_speedup)]
    pub speedup: Option<Speedup>,

    /// ArduPilot silent this long ends the run, s.
    #[arg(long, value_name = "S", default_value_t = 10.0)]
    pub timeout: f64,

    /// Keep waiting when ArduPilot stops instead of exiting.
    #[arg(long)]
    pub wait_reconnect: bool,

    /// Stop after this much sim time, s.
    #[arg(long, value_name = "S")]
    pub duration: Option<f64>,

    /// Write recordings (ground truth, sensors).
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
}

fn build(inputs: &FlightInputs, opts: &ArduPilotOptions) -> Result<Lockstep, CliError> {
    let sim = inputs
        .scenario
        .build_simulation(&inputs.source)
        .map_err(|e| CliError::input(e.to_string(), "see the README's scenario reference"))?;
    let bridge = ArduPilotBridge::bind(opts.clone()).map_err(|e| {
        CliError::input(
            format!("cannot bind UDP {}: {e}", opts.bind),
            "another simulator may hold it: use --instance N",
        )
    })?;
    let mut ls = Lockstep::new(sim);
    ls.attach(0, Box::new(bridge)).map_err(|e| {
        CliError::input(
            e.to_string(),
            "the frame rate must divide the scenario's physics rate (e.g. 400 Hz needs physics_rate_hz 1200 or 2000)",
        )
    })?;
    Ok(ls)
}

/// Frames a second by default for a quad. ArduPilot SITL's own default is
/// 1200 Hz, but sim time is kept in whole microseconds; 1000 Hz is the nearest
/// rate that divides a second evenly and still samples the gyro above 1.8 ×
/// Copter's 400 Hz loop.
const QUAD_FRAME_RATE_HZ: u32 = 1000;

/// Frames a second by default for a boat: above 1.8 × Rover's 50 Hz loop, and
/// a fifth of the round trips of 1000 Hz.
const BOAT_FRAME_RATE_HZ: u32 = 200;

/// The physics rate for `frame_rate` frames a second: the smallest whole
/// multiple of the frame rate at least the scenario's rate, so each frame is a
/// whole number of ticks and no coarser than the scenario asks.
fn physics_rate_for(scenario_hz: u32, frame_rate: u32) -> u32 {
    scenario_hz.div_ceil(frame_rate).max(1) * frame_rate
}

/// Runs `mavsitl ardupilot`.
pub fn run(args: ArduPilotArgs) -> Result<(), CliError> {
    let inputs = args.world.load(args.vehicle)?;
    let scenario = &inputs.scenario;
    let multicopter = scenario
        .vehicles
        .first()
        .is_some_and(|v| v.kind == mavsitl::scenario::VehicleKind::Multirotor);
    let frame_rate = args.frame_rate.unwrap_or(if multicopter {
        QUAD_FRAME_RATE_HZ
    } else {
        BOAT_FRAME_RATE_HZ
    });
    if frame_rate == 0 || 1_000_000 % frame_rate != 0 {
        return Err(CliError::input(
            format!(
                "--frame-rate {frame_rate}: a frame must be a whole number of microseconds \
                 (e.g. 200, 250, 400, 500, 1000 or 2000 Hz; ArduPilot's default 1200 is not)"
            ),
            "set SIM_RATE_HZ in ArduPilot to the same rate",
        ));
    }
    let opts = ArduPilotOptions {
        bind: SocketAddr::new(args.bind, 9002 + 10 * args.instance as u16),
        frame_rate_hz: frame_rate,
        map: if multicopter {
            ChannelMap::quad_x()
        } else {
            ChannelMap::rover()
        },
        give_up_after: Duration::from_secs_f64(args.timeout.max(0.1)),
        stop: Some(&super::INTERRUPTED),
    };
    let mut inputs = inputs;
    inputs.scenario.physics_rate_hz = physics_rate_for(inputs.scenario.physics_rate_hz, frame_rate);
    // ArduPilot takes one IMU sample per frame: sample the IMU model at the
    // frame rate, so every reply carries a fresh noisy sample.
    for v in &mut inputs.scenario.vehicles {
        if v.sensors.imu.rate_hz != frame_rate {
            tracing::info!(
                "IMU sampled at {frame_rate} Hz (the frame rate) instead of {} Hz",
                v.sensors.imu.rate_hz
            );
            v.sensors.imu.rate_hz = frame_rate;
        }
    }
    let mut ls = build(&inputs, &opts)?;
    let scenario = &inputs.scenario;
    let rate = PhysicsRate::new(scenario.physics_rate_hz)
        .map_err(|e| CliError::input(e.to_string(), ""))?;
    let mut recorder =
        super::open_recorder(args.record.as_deref(), scenario, ls.sim(), ExportFrame::Ned)?;
    let h = &scenario.home;
    println!(
        "mavsitl ardupilot: {} on UDP {} at {frame_rate} Hz; start ArduPilot in another terminal:",
        if multicopter { "quad" } else { "boat" },
        opts.bind
    );
    println!(
        "  {} -S --model JSON:{} --home {},{},{},{} --defaults <ardupilot>/Tools/autotest/default_params/{}.parm,firmware_configs/ardupilot/{}.parm -I{}",
        if multicopter { "arducopter" } else { "ardurover" },
        args.bind,
        h.lat_deg,
        h.lon_deg,
        h.alt_m,
        h.heading_deg,
        if multicopter { "copter" } else { "rover" },
        if multicopter { "quad" } else { "boat" },
        args.instance
    );
    println!("  then connect MAVProxy or QGroundControl to ArduPilot's TCP {} (it waits for that before it runs)", 5760 + 10 * args.instance as u32);
    let _ = std::io::stdout().flush();
    let end = args.duration.map(SimTime::from_secs_f64);
    let mut pacer = Pacer::new(args.speedup.unwrap_or(Speedup::Max), SimTime::ZERO);
    let wall = Instant::now();
    let mut restarts = 0u32;
    let mut recording = true;
    let mut outcome: Result<(), String> = Ok(());
    loop {
        match super::next_tick(ls.sim().time(), end, &pacer, rate.period_us()) {
            NextTick::Interrupted => {
                outcome = Err("interrupted".into());
                break;
            }
            NextTick::Ended => break,
            NextTick::Wait(d) => {
                std::thread::sleep(d);
                continue;
            }
            NextTick::Due => {}
        }
        let step = match (recorder.as_mut(), recording) {
            (Some(r), true) => ls.tick(r),
            _ => ls.tick(&mut ()),
        };
        if let Err(e) = step {
            let msg = e.to_string();
            if super::interrupted() {
                outcome = Err("interrupted".into());
                break;
            }
            if msg.contains(RESTARTED) || args.wait_reconnect {
                restarts += 1;
                eprintln!("{msg}: the simulation restarts from the scenario's start");
                if recording && recorder.is_some() {
                    eprintln!("note: recordings cover the run up to the restart");
                    recording = false;
                }
                drop(ls);
                ls = build(&inputs, &opts)?;
                pacer.restart(SimTime::ZERO);
                continue;
            }
            outcome = Err(msg);
            break;
        }
    }
    if let Some(r) = recorder.as_mut() {
        r.finish(ls.sim(), outcome.is_ok())
            .map_err(|e| CliError::run(format!("recording: {e}")))?;
    }
    let t = ls.sim().time().as_secs_f64();
    println!("mavsitl ardupilot stopped");
    println!(
        "  sim time            {t:.1} s ({:.1}x real time), {restarts} restart(s)",
        t / wall.elapsed().as_secs_f64().max(1e-9)
    );
    outcome.map_err(CliError::run)
}

#[cfg(test)]
mod tests {
    use super::physics_rate_for;

    #[test]
    fn physics_rate_is_a_whole_multiple_of_the_frame_rate() {
        assert_eq!(physics_rate_for(1000, 1000), 1000);
        assert_eq!(physics_rate_for(2000, 400), 2000);
        assert_eq!(physics_rate_for(1000, 400), 1200);
        assert_eq!(physics_rate_for(1000, 50), 1000);
        assert_eq!(physics_rate_for(2400, 1200), 2400);
        assert_eq!(physics_rate_for(0, 1200), 1200);
    }
}
