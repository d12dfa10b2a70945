//! `mavsitl ardupilot`: real ArduPilot SITL flies the simulated vehicle over
//! its JSON external-physics backend (UDP 9002 + 10 × instance).

use std::io::Write as _;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;

use mavsitl::bridge::ardupilot::{ArduPilotBridge, ArduPilotOptions, ChannelMap};
use mavsitl::bridge::ground_station::Firmware as Dialect;
use mavsitl::geo::ExportFrame;
use mavsitl::physics::boat::BoatLayout;
use mavsitl::scenario::load::Airframe;
use mavsitl::scenario::VehicleKind;
use mavsitl::session::{Driver, Session, Step};
use mavsitl::sim::{Lockstep, SimError};
use mavsitl::time::{PhysicsRate, SimTime};

use mavsitl::firmware::flight::{FirmwareFlight, Judged};

use super::firmware::{flight_title, FirmwareFlightArgs};
use super::inputs::{FlightInputs, VehicleArg, WorldArgs};
use super::CliError;
use mavsitl::launch::{executable_problem, LaunchSpec};
use mavsitl::pacing::{parse_speedup, Speedup};

/// Arguments of `mavsitl ardupilot`.
#[derive(Debug, Args)]
pub struct ArduPilotArgs {
    /// Vehicle when no scenario is given (default: the plan's kind, else a boat).
    #[arg(long, value_enum)]
    pub vehicle: Option<VehicleArg>,

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
    /// (the parameter files do; default 800 for a quad, 200 for a boat).
    /// ArduPilot's IMU samples once a frame, and its pre-arm check wants the
    /// gyro at 1.8 × its main loop (Copter 400 Hz, Rover 50 Hz) or faster.
    #[arg(long, value_name = "HZ")]
    pub frame_rate: Option<u32>,

    /// Pace at X times real time (default: as fast as ArduPilot runs; ArduPilot
    /// paces itself with --speedup).
    #[arg(long, value_name = "X|max", value_parser = parse_speedup)]
    pub speedup: Option<Speedup>,

    /// ArduPilot silent this long ends the run, s.
    #[arg(long, value_name = "S", default_value_t = 10.0, value_parser = super::inputs::seconds_in(0.1, super::inputs::MAX_WAIT_S))]
    pub timeout: f64,

    /// Keep waiting when ArduPilot stops instead of exiting.
    #[arg(long)]
    pub wait_reconnect: bool,

    /// Stop after this much sim time, s.
    #[arg(long, value_name = "S", value_parser = super::inputs::seconds_in(0.001, super::inputs::MAX_RUN_S))]
    pub duration: Option<f64>,

    /// Write recordings (ground truth, sensors); with a launched ArduPilot
    /// also firmware.log, with --mission also mission_events.csv and
    /// statustext.csv.
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,

    /// Start ArduPilot SITL: an ArduPilot checkout with build/sitl/bin/
    /// (`./waf configure --board sitl && ./waf copter rover`), whose
    /// Tools/autotest/default_params give the stock defaults, or a SITL binary
    /// (then the stock defaults come from --defaults).
    #[arg(long, value_name = "PATH", env = "ARDUPILOT_HOME")]
    pub ardupilot: Option<PathBuf>,

    /// ArduPilot's stock parameter files (comma-separated) when --ardupilot
    /// names a binary; mavsitl's own (firmware_configs/ardupilot) follow them.
    #[arg(long, value_name = "FILES")]
    pub defaults: Option<String>,

    /// Fly N vehicles of one world with N ArduPilot instances (--instance +
    /// k), 5 m apart eastwards, each flying the --mission moved to its start;
    /// needs --ardupilot.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=32))]
    pub count: u8,

    /// A flight in one command.
    #[command(flatten)]
    pub flight: FirmwareFlightArgs,
}

/// mavsitl's ArduPilot parameter files, built into the binary.
const QUAD_PARM: &str = include_str!("../../firmware_configs/ardupilot/quad.parm");

/// mavsitl's parameter file for vehicle 0 of `inputs`: the quad's, the
/// twin-thruster boat's (skid steering) or the rudder boat's.
fn our_parm(inputs: &FlightInputs, kind: VehicleKind) -> &'static str {
    if kind.is_multirotor() {
        return QUAD_PARM;
    }
    let layout = match inputs.scenario.resolve_airframe(0, &inputs.source) {
        Ok(Airframe::Boat(b)) => b.layout,
        _ => BoatLayout::TwinThrusters,
    };
    let airframe = inputs
        .scenario
        .vehicles
        .first()
        .map_or("", |v| v.airframe.as_str());
    mavsitl::setup::ardupilot_boat_parm(airframe, layout).0
}

/// `--defaults`' files, each checked to be a readable file, made absolute
/// (ArduPilot runs in its own working directory) and joined with commas.
fn defaults_files(given: &str) -> Result<String, CliError> {
    let mut files = Vec::new();
    for f in given.split(',') {
        let problem = if f.trim().is_empty() {
            Some("an empty file name".to_string())
        } else {
            match std::fs::File::open(f).and_then(|h| h.metadata()) {
                Ok(m) if m.is_file() => None,
                Ok(_) => Some(format!("{f}: not a file")),
                Err(e) => Some(format!("{f}: {e}")),
            }
        };
        if let Some(why) = problem {
            return Err(CliError::input(
                format!("--defaults {given}: {why}"),
                "comma-separated ArduPilot parameter files (NAME VALUE per line)",
            ));
        }
        let p = Path::new(f);
        files.push(
            std::path::absolute(p)
                .unwrap_or_else(|_| p.to_path_buf())
                .display()
                .to_string(),
        );
    }
    Ok(files.join(","))
}

/// The SITL binary and the stock defaults for the vehicle.
fn ardupilot_files(
    args: &ArduPilotArgs,
    path: &Path,
    kind: VehicleKind,
) -> Result<(PathBuf, Option<String>), CliError> {
    // Absolute paths: ArduPilot runs in its own working directory.
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let user_defaults = match args.defaults.as_deref() {
        Some(d) => Some(defaults_files(d)?),
        None => None,
    };
    let path = &abs(path);
    let (binary, stock) = if kind.is_multirotor() {
        ("arducopter", "copter.parm")
    } else {
        ("ardurover", "rover.parm")
    };
    if path.is_dir() {
        let bin = path.join("build/sitl/bin").join(binary);
        if let Some(why) = bin.is_file().then(|| executable_problem(&bin)).flatten() {
            return Err(CliError::input(
                format!("--ardupilot {}: {why}", path.display()),
                "chmod +x it, or rebuild it with ./waf",
            ));
        }
        if !bin.is_file() {
            return Err(CliError::input(
                format!(
                    "--ardupilot {}: no build/sitl/bin/{binary} there",
                    path.display()
                ),
                format!(
                    "build it in the checkout: ./waf configure --board sitl && ./waf {}",
                    &binary[4..]
                ),
            ));
        }
        let defaults = path.join("Tools/autotest/default_params").join(stock);
        let stock = match user_defaults {
            Some(d) => Some(d),
            None if defaults.is_file() => Some(defaults.display().to_string()),
            None => None,
        };
        return Ok((bin, stock));
    }
    if !path.is_file() {
        return Err(CliError::input(
            format!("--ardupilot {}: no such file or directory", path.display()),
            "an ArduPilot checkout with build/sitl/bin, or a SITL binary",
        ));
    }
    if let Some(why) = executable_problem(path) {
        return Err(CliError::input(
            format!("--ardupilot {why}"),
            "chmod +x it, or give an ArduPilot checkout with build/sitl/bin",
        ));
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let other = if kind.is_multirotor() {
        "rover"
    } else {
        "copter"
    };
    if name.contains(other) {
        return Err(CliError::input(
            format!(
                "--ardupilot {}: a {other} binary, but the simulated vehicle is a {}",
                path.display(),
                super::inputs::vehicle_word(kind)
            ),
            format!(
                "use {binary}, or --vehicle {}",
                super::inputs::vehicle_word(match kind {
                    VehicleKind::Multirotor => VehicleKind::Boat,
                    VehicleKind::Boat => VehicleKind::Multirotor,
                })
            ),
        ));
    }
    Ok((path.to_path_buf(), user_defaults))
}

/// How to start ArduPilot: the SITL binary with the JSON backend, its own
/// pacing at --speedup, the home, the stock defaults plus ours, instance N,
/// in a fresh working directory (no eeprom.bin from an earlier run).
pub(super) fn launch_spec(
    path: &Path,
    args: &ArduPilotArgs,
    (instance, record): (u8, Option<&Path>),
    inputs: &FlightInputs,
    kind: VehicleKind,
    params: &[(String, String)],
) -> Result<LaunchSpec, CliError> {
    let (program, stock) = ardupilot_files(args, path, kind)?;
    let ours = "mavsitl.parm";
    let mut defaults = match stock {
        Some(s) => format!("{s},{ours}"),
        None => ours.to_string(),
    };
    let mut files = vec![(ours.to_string(), our_parm(inputs, kind).to_string())];
    // The user's --params last: ArduPilot applies the files in order.
    if !params.is_empty() {
        let user = "user.parm";
        defaults = format!("{defaults},{user}");
        let text: String = params.iter().map(|(n, v)| format!("{n} {v}\n")).collect();
        files.push((user.to_string(), text));
    }
    let h = &inputs.scenario.home;
    let speed = match args.speedup {
        Some(Speedup::Factor(k)) => k,
        // As fast as it goes: ArduPilot paces itself at --speedup, mavsitl
        // answers each frame at once.
        _ => 1000.0,
    };
    let workdir = mavsitl::launch::scratch_dir("ardupilot", instance);
    let log = match record {
        Some(dir) => dir.join("firmware.log"),
        None => workdir.join("firmware.log"),
    };
    Ok(LaunchSpec {
        name: "ArduPilot",
        program,
        args: [
            "-S".to_string(),
            "--model".into(),
            format!("JSON:{}", args.bind),
            "--speedup".into(),
            speed.to_string(),
            "--home".into(),
            format!("{},{},{},{}", h.lat_deg, h.lon_deg, h.alt_m, h.heading_deg),
            "--defaults".into(),
            defaults,
            format!("-I{instance}"),
        ]
        .into_iter()
        .map(Into::into)
        .collect(),
        env: Vec::new(),
        workdir,
        keep_workdir: args.flight.keep_workdir,
        log,
        files,
    })
}

fn build(inputs: &FlightInputs, opts: &ArduPilotOptions) -> Result<Lockstep, CliError> {
    let sim = inputs
        .scenario
        .build_simulation(&inputs.source)
        .map_err(|e| CliError::input(e.to_string(), "see docs/reference/scenario.md"))?;
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
/// 1200 Hz, but sim time is kept in whole microseconds; 800 Hz (1250 µs) is
/// the lowest such rate that still samples the gyro above 1.8 × Copter's
/// 400 Hz loop, and every frame is a UDP round trip (it flies the quad square
/// about 14 % faster than 1000 Hz did).
pub(super) const QUAD_FRAME_RATE_HZ: u32 = 800;

/// Frames a second by default for a boat: above 1.8 × Rover's 50 Hz loop, and
/// a fifth of the round trips of 1000 Hz.
pub(super) const BOAT_FRAME_RATE_HZ: u32 = 200;

/// The physics rate for `frame_rate` frames a second: the smallest whole
/// multiple of the frame rate at least the scenario's rate, so each frame is a
/// whole number of ticks and no coarser than the scenario asks.
pub(super) fn physics_rate_for(scenario_hz: u32, frame_rate: u32) -> u32 {
    scenario_hz.div_ceil(frame_rate).max(1) * frame_rate
}

/// The frame rate: --frame-rate, else the vehicle's default; refused when a
/// frame is not a whole number of microseconds.
pub(super) fn frame_rate_of(args: &ArduPilotArgs, kind: VehicleKind) -> Result<u32, CliError> {
    let frame_rate = args.frame_rate.unwrap_or(if kind.is_multirotor() {
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
    Ok(frame_rate)
}

/// What to run in another terminal, when ArduPilot is not launched here.
fn print_instructions(
    args: &ArduPilotArgs,
    inputs: &FlightInputs,
    opts: &ArduPilotOptions,
    kind: VehicleKind,
) {
    let h = &inputs.scenario.home;
    println!(
        "mavsitl ardupilot: {} on UDP {} at {} Hz; start ArduPilot in another terminal:",
        super::inputs::vehicle_word(kind),
        opts.bind,
        opts.frame_rate_hz
    );
    println!(
        "  {} -S --model JSON:{} --home {},{},{},{} --defaults <ardupilot>/Tools/autotest/default_params/{}.parm,firmware_configs/ardupilot/{}.parm -I{}",
        if kind.is_multirotor() { "arducopter" } else { "ardurover" },
        args.bind,
        h.lat_deg,
        h.lon_deg,
        h.alt_m,
        h.heading_deg,
        if kind.is_multirotor() { "copter" } else { "rover" },
        super::inputs::vehicle_word(kind),
        args.instance
    );
    if args.flight.mission.is_none() {
        println!("  then connect MAVProxy or QGroundControl to ArduPilot's TCP {} (it waits for that before it runs)", 5760 + 10 * args.instance as u32);
    }
    println!("  (or let mavsitl start it: --ardupilot <ArduPilot checkout>)");
    let _ = std::io::stdout().flush();
}

/// The bridge's options for `instance` (UDP 9002 + 10 × instance).
pub(super) fn options(
    args: &ArduPilotArgs,
    instance: u8,
    kind: VehicleKind,
    frame_rate: u32,
) -> ArduPilotOptions {
    ArduPilotOptions {
        bind: SocketAddr::new(args.bind, 9002 + 10 * instance as u16),
        frame_rate_hz: frame_rate,
        map: if kind.is_multirotor() {
            ChannelMap::quad_x()
        } else {
            ChannelMap::boat()
        },
        give_up_after: mavsitl::time::saturating_duration(args.timeout),
        stop: Some(&super::STOP_RUN),
        launched: args.ardupilot.is_some(),
    }
}

/// The physics rate a whole multiple of the frame rate, and the IMU sampled
/// once a frame: ArduPilot takes one IMU sample per frame, so every reply
/// carries a fresh noisy sample.
pub(super) fn at_frame_rate(inputs: &mut FlightInputs, frame_rate: u32) {
    inputs.scenario.physics_rate_hz = physics_rate_for(inputs.scenario.physics_rate_hz, frame_rate);
    for v in &mut inputs.scenario.vehicles {
        if v.sensors.imu.rate_hz != frame_rate {
            tracing::info!(
                "IMU sampled at {frame_rate} Hz (the frame rate) instead of {} Hz",
                v.sensors.imu.rate_hz
            );
            v.sensors.imu.rate_hz = frame_rate;
        }
    }
}

/// What `mavsitl ardupilot` flies: the mission, scenario and parameters.
pub fn load(args: &ArduPilotArgs) -> Result<FlightInputs, CliError> {
    args.world
        .load(args.vehicle, args.flight.mission.as_ref(), VehicleArg::Boat)
}

/// Runs `mavsitl ardupilot` for one vehicle (several are the
/// ardupilot_fleet module's).
pub fn run(args: ArduPilotArgs, mut inputs: FlightInputs) -> Result<(), CliError> {
    let kind = inputs.kind(0);
    let frame_rate = frame_rate_of(&args, kind)?;
    let params = args
        .flight
        .firmware_params(args.ardupilot.is_some(), "--ardupilot")?;
    let opts = options(&args, args.instance, kind, frame_rate);
    at_frame_rate(&mut inputs, frame_rate);
    let ls = build(&inputs, &opts)?;
    let scenario = &inputs.scenario;
    let rate = PhysicsRate::new(scenario.physics_rate_hz)
        .map_err(|e| CliError::input(e.to_string(), ""))?;
    let mut recorder =
        super::open_recorder(args.record.as_deref(), scenario, ls.sim(), ExportFrame::Ned)?;
    super::note_mission(
        recorder.as_mut(),
        args.record.as_deref(),
        args.flight.mission.as_deref(),
        "",
    );
    let launch = match &args.ardupilot {
        Some(path) => Some(launch_spec(
            path,
            &args,
            (args.instance, args.record.as_deref()),
            &inputs,
            kind,
            &params,
        )?),
        None => {
            print_instructions(&args, &inputs, &opts, kind);
            None
        }
    };
    let flight = FirmwareFlight::start(
        if kind.is_multirotor() {
            Dialect::ArduCopter
        } else {
            Dialect::ArduRover
        },
        args.instance,
        &args.flight.plan(&inputs, ls.sim().world().frame()),
        launch,
        true,
    )?;
    let mut run = Session::new(ls, rate.period_us())
        .paced(args.speedup.unwrap_or(Speedup::Max))
        .until(args.duration.map(SimTime::from_secs_f64))
        .recording(recorder)
        .interrupted_by(&super::INTERRUPTED);
    let wall = Instant::now();
    let mut driver = ArduPilotDriver {
        flight,
        inputs: &inputs,
        opts: &opts,
        wait_reconnect: args.wait_reconnect,
        restarts: 0,
        recent: Vec::new(),
        failed: None,
    };
    let outcome = run.run(&mut driver);
    run.finish(outcome.is_ok()).map_err(CliError::run)?;
    let ArduPilotDriver {
        flight,
        restarts,
        failed,
        ..
    } = driver;
    let ls = run.world();
    let t = ls.sim().time().as_secs_f64();
    let title = flight_title("ardupilot", &inputs, kind);
    let summary = flight.flies_mission();
    super::firmware::finish(flight, ls.sim(), &outcome, args.record.as_deref(), title);
    if !summary {
        println!("mavsitl ardupilot stopped");
    }
    println!(
        "  sim time            {t:.1} s ({:.1}x real time), {restarts} restart(s)",
        t / wall.elapsed().as_secs_f64().max(1e-9)
    );
    outcome.map_err(|why| failed.unwrap_or_else(|| CliError::run(why)))
}

/// Counts a restart now among the recent ones; too many is an error.
fn count_restart(recent: &mut Vec<Instant>) -> Result<(), String> {
    recent.retain(|t| t.elapsed() < RESTART_WINDOW);
    recent.push(Instant::now());
    if recent.len() > RESTART_LIMIT {
        return Err(format!(
            "ArduPilot restarted {} times within {:.0} s: giving up",
            recent.len(),
            RESTART_WINDOW.as_secs_f64()
        ));
    }
    Ok(())
}

/// ArduPilot flying the vehicle over its JSON port; a restarted ArduPilot
/// (or one back with `--wait-reconnect`) flies a fresh world.
struct ArduPilotDriver<'a> {
    /// The flight (its ground station, its launched ArduPilot).
    flight: FirmwareFlight,
    inputs: &'a FlightInputs,
    opts: &'a ArduPilotOptions,
    /// Wait for an ArduPilot started by hand to come back.
    wait_reconnect: bool,
    /// Times ArduPilot came back.
    restarts: u32,
    /// When the recent restarts happened (wall clock), to give up on too many.
    recent: Vec<Instant>,
    /// Why the world could not be built again, as the error to exit with.
    failed: Option<CliError>,
}

impl Driver<Lockstep> for ArduPilotDriver<'_> {
    fn after_tick(&mut self, ls: &mut Lockstep, tick: Result<(), SimError>) -> Step<Lockstep> {
        let (msg, restarted) = match self.flight.judge(tick, ls.sim_mut()) {
            Judged::Go => return Step::Go,
            Judged::End(o) => return Step::End(o),
            Judged::Lost { why, restarted } => (why, restarted),
        };
        if !(restarted || self.wait_reconnect) {
            return Step::End(Err(msg));
        }
        self.restarts += 1;
        if let Err(e) = count_restart(&mut self.recent) {
            return Step::End(Err(e));
        }
        eprintln!("{msg}: the simulation restarts from the scenario's start");
        // The old bridge lets go of the JSON port the fresh world binds.
        ls.detach(0);
        match build(self.inputs, self.opts) {
            Ok(fresh) => Step::Restart(Box::new(fresh), "ArduPilot restarted".into()),
            Err(e) => {
                let why = e.message.clone();
                self.failed = Some(e);
                Step::End(Err(why))
            }
        }
    }
}

/// Restarts of ArduPilot tolerated within [`RESTART_WINDOW`] before the run
/// gives up (each starts the simulation over).
const RESTART_LIMIT: usize = 5;

/// The window [`RESTART_LIMIT`] counts restarts in.
const RESTART_WINDOW: std::time::Duration = std::time::Duration::from_secs(60);

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
