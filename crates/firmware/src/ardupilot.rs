//! ArduPilot SITL launched and flown over its JSON external-physics
//! backend: mavsitl's parameter files (built in), the SITL binary and its
//! defaults, how to start it, the frame rate and the world its bridge
//! flies.

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use mavsitl_bridges::ardupilot::{ArduPilotBridge, ArduPilotOptions, ChannelMap};
use mavsitl_core::vehicle::VehicleKind;
use mavsitl_run::launch::{executable_problem, scratch_dir, LaunchSpec};
use mavsitl_run::pacing::Speedup;
use mavsitl_run::session::{Driver, Step};
use mavsitl_run::setup::FlightInputs;
use mavsitl_run::StartError;
use mavsitl_sim::physics::boat::BoatLayout;
use mavsitl_sim::scenario::load::Airframe;
use mavsitl_sim::scenario::ControllerSpec;
use mavsitl_sim::sim::{Lockstep, SimError};

use crate::crew::{Member, Slot};
use crate::flight::{FirmwareFlight, Judged, PlanOptions};
use mavsitl_bridges::ground_station::Firmware as Dialect;
use mavsitl_core::failure::Failure;
use mavsitl_mavlink::mission::Mission;

/// Where and how ArduPilot is met and started.
#[derive(Debug, Clone, Copy)]
pub struct ArduPilotSetup<'a> {
    /// ArduPilot instance: JSON on UDP 9002 + 10 N, SERIAL0 on TCP 5760 + 10 N.
    pub instance: u8,
    /// Address the JSON port is bound to.
    pub bind: IpAddr,
    /// The recording directory (a launched ArduPilot's console goes there).
    pub record: Option<&'a Path>,
    /// ArduPilot's own pacing (None: as fast as it goes).
    pub speedup: Option<Speedup>,
    /// Keep a launched ArduPilot's working directory.
    pub keep_workdir: bool,
    /// The user's defaults files instead of the stock ones (comma-separated).
    pub defaults: Option<&'a str>,
    /// JSON frames a second of sim time, Hz: ArduPilot's SIM_RATE_HZ.
    pub frame_rate: u32,
    /// The index of the vehicle it flies, in the scenario.
    pub vehicle: usize,
}

/// The frame rate: `given`, else the vehicle's default; refused when a
/// frame is not a whole number of microseconds.
///
/// # Errors
/// The rate and what would do.
pub fn frame_rate(given: Option<u32>, kind: VehicleKind) -> Result<u32, StartError> {
    let frame_rate = given.unwrap_or(if kind.is_multirotor() {
        QUAD_FRAME_RATE_HZ
    } else {
        ROVER_FRAME_RATE_HZ
    });
    if frame_rate == 0 || 1_000_000 % frame_rate != 0 {
        return Err(StartError::new(
            format!(
                "--frame-rate {frame_rate}: a frame must be a whole number of microseconds \
                 (e.g. 200, 250, 400, 500, 1000 or 2000 Hz; ArduPilot's default 1200 is not)"
            ),
            "set SIM_RATE_HZ in ArduPilot to the same rate",
        ));
    }
    Ok(frame_rate)
}

/// The bridge's options for `instance` (UDP 9002 + 10 × instance) on
/// `bind`: `frame_rate` frames a second, giving up after `give_up_after`
/// of silence, `stop` ending its waits at once; `launched`: ArduPilot
/// started by mavsitl.
pub fn bridge_options(
    (bind, instance): (IpAddr, u8),
    kind: VehicleKind,
    frame_rate: u32,
    give_up_after: std::time::Duration,
    (stop, launched): (&'static AtomicBool, bool),
) -> ArduPilotOptions {
    ArduPilotOptions {
        bind: std::net::SocketAddr::new(bind, 9002 + 10 * instance as u16),
        frame_rate_hz: frame_rate,
        map: if kind.is_multirotor() {
            ChannelMap::quad_x()
        } else {
            ChannelMap::boat()
        },
        give_up_after,
        stop: Some(stop),
        launched,
    }
}

/// mavsitl's ArduPilot parameter files, built into the binary.
const QUAD_PARM: &str = include_str!("../../../firmware_configs/ardupilot/quad.parm");

/// mavsitl's parameter file for vehicle `index` of `inputs`, and its path
/// in the repository: the quad's, the twin-thruster boat's (skid
/// steering), the rudder boat's, the Otter's, or the skid-steer or
/// Ackermann rover's.
pub fn our_parm(inputs: &FlightInputs, index: usize) -> (&'static str, &'static str) {
    if inputs.kind(index).is_multirotor() {
        return (QUAD_PARM, "firmware_configs/ardupilot/quad.parm");
    }
    let layout = match inputs.scenario.resolve_airframe(index, &inputs.source) {
        Ok(Airframe::Boat(b)) => b.layout,
        Ok(Airframe::Rover(r)) => return mavsitl_run::setup::ardupilot_rover_parm(r.drive),
        _ => BoatLayout::TwinThrusters,
    };
    let airframe = inputs
        .scenario
        .vehicles
        .get(index)
        .map_or("", |v| v.airframe.as_str());
    mavsitl_run::setup::ardupilot_boat_parm(airframe, layout)
}

/// The user's `--params` for ArduPilot at `frame_rate` frames a second:
/// all but a SIM_RATE_HZ, which gives way to the frame rate, with a
/// warning when it asks for another.
fn user_params(
    params: &[(String, String)],
    frame_rate: u32,
) -> (Vec<&(String, String)>, Option<String>) {
    let mut warning = None;
    let kept = params
        .iter()
        .filter(|(n, v)| {
            let rate = n.as_str() == "SIM_RATE_HZ";
            if rate && v.parse::<f64>().ok() != Some(f64::from(frame_rate)) {
                warning = Some(format!(
                    "--params sets SIM_RATE_HZ {v}: ArduPilot gets {frame_rate} from --frame-rate (give --frame-rate {v} for that rate)"
                ));
            }
            !rate
        })
        .collect();
    (kept, warning)
}

/// A parameter file's text with SIM_RATE_HZ set to `frame_rate`: ArduPilot
/// simulates at the rate mavsitl steps it at (a SIM_RATE_HZ among the
/// user's `--params` is dropped with a warning).
pub fn at_sim_rate(parm: &str, frame_rate: u32) -> String {
    let mut text: String = parm
        .lines()
        .filter(|l| param_name(l) != "SIM_RATE_HZ")
        .flat_map(|l| [l, "\n"])
        .collect();
    text.push_str(&format!("SIM_RATE_HZ {frame_rate}\n"));
    text
}

/// The first word of a parameter file's line, split as ArduPilot splits
/// (on spaces, tabs, commas and `=`): the parameter it sets (a comment's
/// starts with `#`, a blank line's is empty, neither a parameter's name).
fn param_name(line: &str) -> &str {
    line.trim_start()
        .split([' ', '\t', ',', '='])
        .next()
        .unwrap_or_default()
}

/// The SIM_RATE_HZ a parameter file's line sets, if it sets it.
fn sim_rate_hz(line: &str) -> Option<u32> {
    if param_name(line) != "SIM_RATE_HZ" {
        return None;
    }
    let rest = line.trim_start().strip_prefix("SIM_RATE_HZ")?;
    rest.trim_start_matches([' ', '\t', ',', '='])
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// `--defaults`' files, each checked to be a readable file, made absolute
/// (ArduPilot runs in its own working directory) and joined with commas.
pub fn defaults_files(given: &str) -> Result<String, StartError> {
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
            return Err(StartError::new(
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

/// The SITL binary at `path` (a checkout or the binary) and the stock
/// defaults for the vehicle, or the user's `defaults` instead.
pub fn ardupilot_files(
    defaults: Option<&str>,
    path: &Path,
    kind: VehicleKind,
) -> Result<(PathBuf, Option<String>), StartError> {
    // Absolute paths: ArduPilot runs in its own working directory.
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let user_defaults = match defaults {
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
            return Err(StartError::new(
                format!("--ardupilot {}: {why}", path.display()),
                "chmod +x it, or rebuild it with ./waf",
            ));
        }
        if !bin.is_file() {
            return Err(StartError::new(
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
        return Err(StartError::new(
            format!("--ardupilot {}: no such file or directory", path.display()),
            "an ArduPilot checkout with build/sitl/bin, or a SITL binary",
        ));
    }
    if let Some(why) = executable_problem(path) {
        return Err(StartError::new(
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
        return Err(StartError::new(
            format!(
                "--ardupilot {}: a {other} binary, but the simulated vehicle is a {}",
                path.display(),
                kind.word()
            ),
            format!(
                "use {binary}, or --vehicle {}",
                match kind {
                    VehicleKind::Multirotor => VehicleKind::Boat,
                    VehicleKind::Boat | VehicleKind::Rover => VehicleKind::Multirotor,
                }
                .word()
            ),
        ));
    }
    Ok((path.to_path_buf(), user_defaults))
}

/// How to start ArduPilot: the SITL binary with the JSON backend, its own
/// pacing at --speedup, the home, the stock defaults plus ours, instance N,
/// in a fresh working directory (no eeprom.bin from an earlier run).
pub fn launch_spec(
    path: &Path,
    setup: &ArduPilotSetup,
    inputs: &FlightInputs,
    kind: VehicleKind,
    params: &[(String, String)],
) -> Result<LaunchSpec, StartError> {
    let (program, stock) = ardupilot_files(setup.defaults, path, kind)?;
    let (instance, record) = (setup.instance, setup.record);
    let ours = "mavsitl.parm";
    let mut defaults = match stock {
        Some(s) => format!("{s},{ours}"),
        None => ours.to_string(),
    };
    let ours_text = at_sim_rate(our_parm(inputs, setup.vehicle).0, setup.frame_rate);
    let mut files = vec![(ours.to_string(), ours_text)];
    // The user's --params last: ArduPilot applies the files in order.
    let (params, warning) = user_params(params, setup.frame_rate);
    if let Some(w) = warning {
        tracing::warn!("{w}");
    }
    if !params.is_empty() {
        let user = "user.parm";
        defaults = format!("{defaults},{user}");
        let text: String = params.iter().map(|(n, v)| format!("{n} {v}\n")).collect();
        files.push((user.to_string(), text));
    }
    let h = &inputs.scenario.home;
    let speed = match setup.speedup {
        Some(Speedup::Factor(k)) => k,
        // As fast as it goes: ArduPilot paces itself at --speedup, mavsitl
        // answers each frame at once.
        _ => 1000.0,
    };
    let workdir = scratch_dir("ardupilot", instance);
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
            format!("JSON:{}", setup.bind),
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
        keep_workdir: setup.keep_workdir,
        log,
        files,
    })
}

/// The simulation of `inputs` with ArduPilot's bridge, bound to its JSON
/// port, flying vehicle 0.
pub fn build(inputs: &FlightInputs, opts: &ArduPilotOptions) -> Result<Lockstep, StartError> {
    let sim = inputs
        .scenario
        .build_simulation(&inputs.source)
        .map_err(|e| StartError::new(e.to_string(), "see docs/reference/scenario.md"))?;
    let bridge = ArduPilotBridge::bind(opts.clone()).map_err(|e| {
        StartError::new(
            format!("cannot bind UDP {}: {e}", opts.bind),
            "another simulator may hold it: use --instance N",
        )
    })?;
    let mut ls = Lockstep::new(sim);
    ls.attach(0, Box::new(bridge)).map_err(|e| {
        StartError::new(
            e.to_string(),
            "the frame rate must divide the scenario's physics rate (e.g. 400 Hz needs physics_rate_hz 1600 or 2000)",
        )
    })?;
    Ok(ls)
}

/// Frames a second by default for a quad. ArduPilot SITL's own default is
/// 1200 Hz, but sim time is kept in whole microseconds; 800 Hz (1250 µs) is
/// the lowest such rate that still samples the gyro above 1.8 × Copter's
/// 400 Hz loop, and every frame is a UDP round trip (it flies the quad square
/// about 14 % faster than 1000 Hz did).
pub const QUAD_FRAME_RATE_HZ: u32 = 800;

/// Frames a second by default for ArduRover's vehicles, boats and ground
/// rovers: the lowest rate measured (50, 100, 200) that samples the gyro
/// above 1.8 × Rover's 50 Hz loop; its tracking is 200's within 3 %, 6–8 %
/// faster (docs/commands/ardupilot.md's frame-rate table).
pub const ROVER_FRAME_RATE_HZ: u32 = 100;

/// The physics rate for `frame_rate` frames a second: the smallest whole
/// multiple of the frame rate at least the scenario's rate whose tick is a
/// whole number of microseconds, so each frame is a whole number of ticks,
/// no coarser than the scenario asks, on sim time's microsecond clock (at
/// 400 frames/s and a 1 kHz scenario: 1 600 Hz, as 1 200 Hz is not whole).
/// A frame rate that is not whole itself keeps the first multiple, which
/// the scenario's check then refuses.
pub fn physics_rate_for(scenario_hz: u32, frame_rate: u32) -> u32 {
    const SECOND_US: u32 = 1_000_000;
    let frame_rate = frame_rate.max(1);
    let least = scenario_hz.div_ceil(frame_rate).max(1);
    let ticks_a_frame = (least..=SECOND_US / frame_rate)
        .find(|k| SECOND_US.is_multiple_of(k * frame_rate))
        .unwrap_or(least);
    ticks_a_frame * frame_rate
}

/// The physics rate a whole multiple of the frame rate, and the IMU sampled
/// once a frame: ArduPilot takes one IMU sample per frame, so every reply
/// carries a fresh noisy sample.
pub fn at_frame_rate(inputs: &mut FlightInputs, frame_rate: u32) {
    let hz = physics_rate_for(inputs.scenario.physics_rate_hz, frame_rate);
    inputs.scenario.set_physics_rate_hz(hz);
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

/// ArduPilot flying the vehicle over its JSON port, the run loop's
/// driver; a restarted ArduPilot (or one started by hand that came back,
/// with `wait_reconnect`) flies a fresh world, at most [`RESTART_LIMIT`]
/// times within [`RESTART_WINDOW`].
pub struct ArduPilotDriver<'a> {
    /// The flight (its ground station, its launched ArduPilot).
    pub flight: FirmwareFlight,
    /// The world's inputs, to build it afresh.
    pub inputs: &'a FlightInputs,
    /// The bridge's options.
    pub opts: &'a ArduPilotOptions,
    /// Wait for an ArduPilot started by hand to come back.
    pub wait_reconnect: bool,
    /// Times ArduPilot came back.
    pub restarts: u32,
    /// When the recent restarts happened (wall clock), to give up on too many.
    recent: Vec<Instant>,
    /// Why the world could not be built again.
    pub failed: Option<StartError>,
}

impl<'a> ArduPilotDriver<'a> {
    /// `flight` over the world of `inputs` and its bridge's `opts`.
    pub fn new(
        flight: FirmwareFlight,
        inputs: &'a FlightInputs,
        opts: &'a ArduPilotOptions,
        wait_reconnect: bool,
    ) -> Self {
        ArduPilotDriver {
            flight,
            inputs,
            opts,
            wait_reconnect,
            restarts: 0,
            recent: Vec::new(),
            failed: None,
        }
    }
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
pub const RESTART_LIMIT: usize = 5;

/// The window [`RESTART_LIMIT`] counts restarts in.
pub const RESTART_WINDOW: std::time::Duration = std::time::Duration::from_secs(60);

/// An ArduPilot to be started by hand, in another terminal.
#[derive(Debug, Clone, Copy)]
pub struct ByHand {
    /// The address ArduPilot's JSON backend sends to.
    pub bind: IpAddr,
    /// ArduPilot's instance (`-I`).
    pub instance: u8,
    /// mavsitl flies a plan as its ground station (else the user connects one).
    pub fly_plan: bool,
}

impl ByHand {
    /// What to tell the user: the bridge's port and rate, and the command
    /// that starts ArduPilot with mavsitl's parameters, one line each.
    pub fn instructions(&self, inputs: &FlightInputs, opts: &ArduPilotOptions) -> Vec<String> {
        let kind = inputs.kind(0);
        let h = &inputs.scenario.home;
        let (ours_text, ours) = our_parm(inputs, 0);
        let (binary, defaults) = match kind.is_multirotor() {
            true => ("arducopter", "copter"),
            false => ("ardurover", "rover"),
        };
        let mut lines = vec![
            format!(
                "mavsitl ardupilot: {} on UDP {} at {} Hz; start ArduPilot in another terminal:",
                kind.word(),
                opts.bind,
                opts.frame_rate_hz
            ),
            format!(
                "  {binary} -S --model JSON:{} --home {},{},{},{} --defaults <ardupilot>/Tools/autotest/default_params/{defaults}.parm,{ours} -I{}",
                self.bind, h.lat_deg, h.lon_deg, h.alt_m, h.heading_deg, self.instance
            ),
        ];
        let file_rate = ours_text.lines().find_map(sim_rate_hz).unwrap_or_default();
        if file_rate != opts.frame_rate_hz {
            lines.push(format!(
                "  and set SIM_RATE_HZ {} in ArduPilot ({ours} says {file_rate})",
                opts.frame_rate_hz
            ));
        }
        if !self.fly_plan {
            lines.push(format!(
                "  then connect MAVProxy or QGroundControl to ArduPilot's TCP {} (it waits for that before it runs)",
                5760 + 10 * self.instance as u32
            ));
        }
        lines.push("  (or let mavsitl start it: --ardupilot <ArduPilot checkout>)".into());
        lines
    }
}

/// ArduPilot for one vehicle of a world: its bridge (`opts`) attached to
/// the slot's vehicle, ArduPilot (Copter or Rover by the vehicle's kind)
/// launched from `path` as `setup` says with `params` (and SIM_RATE_HZ at
/// `setup`'s frame rate, the bridge's), its ground station flying `mission`
/// as `plan` asks.
///
/// # Errors
/// A port that cannot be bound, a frame rate that does not divide the
/// physics rate, or an ArduPilot that cannot start (exit 2).
pub fn attach(
    (path, setup, opts): (&Path, &ArduPilotSetup, ArduPilotOptions),
    (inputs, mission, mission_name): (&FlightInputs, Mission, &str),
    ls: &mut Lockstep,
    slot: Slot,
    (params, plan): (&[(String, String)], &PlanOptions),
) -> Result<Member, Failure> {
    let kind = inputs.kind(slot.index);
    let frame = *ls.sim().world().frame();
    let bridge = ArduPilotBridge::bind(opts.clone()).map_err(|e| {
        Failure::input(
            format!("cannot bind UDP {}: {e}", opts.bind),
            "another simulator may hold it: give it another instance",
        )
    })?;
    ls.attach(slot.index, Box::new(bridge)).map_err(|e| {
        Failure::input(e.to_string(), "the frame rate must divide the physics rate")
    })?;
    let launch = launch_spec(path, setup, inputs, kind, params)?;
    let dialect = match kind.is_multirotor() {
        true => Dialect::ArduCopter,
        false => Dialect::ArduRover,
    };
    slot.start(
        dialect,
        (inputs, mission, mission_name),
        plan,
        launch,
        &frame,
    )
}

/// Frames a second of ArduPilot vehicles beside PX4 ones: a multiple of
/// PX4's 250 Hz step and fast enough for Copter's 400 Hz loop.
const WITH_PX4_FRAME_RATE_HZ: u32 = 1000;

/// Readies the world for its ArduPilot vehicles: their frame rate (their
/// kind's default, or 1000 Hz beside PX4 vehicles and an ArduPilot
/// multirotor), the physics a whole multiple of it, their IMUs sampled once a
/// frame. The frame rate, 0 without ArduPilot vehicles.
pub fn prepare_mixed(inputs: &mut FlightInputs) -> u32 {
    let vehicles = &inputs.scenario.vehicles;
    let is_ap = |c: &ControllerSpec| matches!(c, ControllerSpec::ArduPilot(_));
    let px4 = vehicles
        .iter()
        .any(|v| matches!(v.controller, ControllerSpec::Px4(_)));
    let ap_copter = vehicles
        .iter()
        .any(|v| is_ap(&v.controller) && v.kind == VehicleKind::Multirotor);
    if !vehicles.iter().any(|v| is_ap(&v.controller)) {
        return 0;
    }
    let frame_rate = match (px4, ap_copter) {
        (true, true) => WITH_PX4_FRAME_RATE_HZ,
        (_, true) => QUAD_FRAME_RATE_HZ,
        (_, false) => ROVER_FRAME_RATE_HZ,
    };
    let s = &mut inputs.scenario;
    s.set_physics_rate_hz(physics_rate_for(s.physics_rate_hz, frame_rate));
    for v in s.vehicles.iter_mut().filter(|v| is_ap(&v.controller)) {
        v.sensors.imu.rate_hz = frame_rate;
    }
    frame_rate
}

#[cfg(test)]
mod tests {
    use super::{
        at_frame_rate, at_sim_rate, frame_rate, physics_rate_for, prepare_mixed, sim_rate_hz,
        user_params, QUAD_PARM,
    };
    use mavsitl_core::vehicle::VehicleKind;

    /// A flight of scenario `text` (read as `s.json`) with no mission.
    fn inputs_of(text: &str) -> mavsitl_run::setup::FlightInputs {
        let source = mavsitl_sim::scenario::ScenarioSource {
            name: "s.json".into(),
            base_dir: ".".into(),
        };
        let scenario = mavsitl_sim::scenario::Scenario::from_json(text, &source).expect("scenario");
        mavsitl_run::setup::FlightInputs {
            mission: Default::default(),
            mission_name: "m".into(),
            scenario,
            source,
            param_text: None,
        }
    }

    #[test]
    fn the_frame_rate_is_the_one_given_or_the_kinds_and_whole_microseconds() {
        assert_eq!(frame_rate(None, VehicleKind::Multirotor).ok(), Some(800));
        assert_eq!(frame_rate(None, VehicleKind::Boat).ok(), Some(100));
        assert_eq!(frame_rate(None, VehicleKind::Rover).ok(), Some(100));
        assert_eq!(frame_rate(Some(1250), VehicleKind::Boat).ok(), Some(1250));
        for bad in [0, 1200, 3] {
            let e = frame_rate(Some(bad), VehicleKind::Multirotor).err();
            let text = e.map(|e| e.to_string()).unwrap_or_default();
            assert!(text.contains(&format!("--frame-rate {bad}")), "{text}");
        }
    }

    #[test]
    fn a_users_sim_rate_hz_gives_way_to_the_frame_rate() {
        let p = |n: &str, v: &str| (n.to_string(), v.to_string());
        let given = [
            p("WPNAV_SPEED", "250"),
            p("SIM_RATE_HZ", "400"),
            p("X", "1"),
        ];
        let (kept, warning) = user_params(&given, 1000);
        assert_eq!(kept, [&given[0], &given[2]]);
        assert_eq!(
            warning.as_deref(),
            Some("--params sets SIM_RATE_HZ 400: ArduPilot gets 1000 from --frame-rate (give --frame-rate 400 for that rate)")
        );
        // The same rate: dropped, nothing to say; none: nothing dropped.
        let same = [p("SIM_RATE_HZ", "1000.0")];
        assert_eq!(user_params(&same, 1000), (vec![], None));
        assert_eq!(user_params(&given[..1], 1000), (vec![&given[0]], None));
    }

    /// Started by hand: the command names mavsitl's file for the vehicle,
    /// and says to set SIM_RATE_HZ when the frame rate is not the file's.
    #[test]
    fn by_hand_the_command_names_the_vehicles_file_and_its_rate() {
        use std::sync::atomic::AtomicBool;
        static STOP: AtomicBool = AtomicBool::new(false);
        let lines = |vehicle: &str, kind, rate, fly_plan| {
            let text = format!(r#"{{"vehicles":[{vehicle}]}}"#);
            let inputs = inputs_of(&text);
            let local = std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);
            let opts = super::bridge_options(
                (local, 2),
                kind,
                rate,
                std::time::Duration::from_secs(1),
                (&STOP, false),
            );
            let by_hand = super::ByHand {
                bind: local,
                instance: 2,
                fly_plan,
            };
            by_hand.instructions(&inputs, &opts)
        };
        let quad = lines(
            r#"{"name":"q","kind":"multirotor"}"#,
            VehicleKind::Multirotor,
            800,
            true,
        );
        assert_eq!(quad.len(), 3, "{quad:?}");
        assert!(
            quad[0].contains("quad on UDP 127.0.0.1:9022 at 800 Hz"),
            "{quad:?}"
        );
        assert!(
            quad[1].starts_with("  arducopter -S --model JSON:127.0.0.1 --home "),
            "{quad:?}"
        );
        assert!(
            quad[1].ends_with("copter.parm,firmware_configs/ardupilot/quad.parm -I2"),
            "{quad:?}"
        );
        let rover = lines(
            r#"{"name":"r","kind":"rover","airframe":"jackal"}"#,
            VehicleKind::Rover,
            200,
            false,
        );
        assert!(
            rover[1].ends_with("rover.parm,firmware_configs/ardupilot/rover_skid.parm -I2"),
            "{rover:?}"
        );
        assert_eq!(
            rover[2],
            "  and set SIM_RATE_HZ 200 in ArduPilot (firmware_configs/ardupilot/rover_skid.parm says 100)"
        );
        assert!(rover[3].contains("TCP 5780"), "{rover:?}");
        assert_eq!(rover.len(), 5, "{rover:?}");
    }

    /// Each vehicle of a world gets its own airframe's parameter file.
    #[test]
    fn each_vehicle_takes_its_own_parameter_file() {
        let text = r#"{"vehicles":[
            {"name":"q","kind":"multirotor"},
            {"name":"s","kind":"rover","airframe":"jackal"},
            {"name":"c","kind":"rover","airframe":"f1tenth"},
            {"name":"b","kind":"boat","airframe":"usv_twin"},
            {"name":"r","kind":"boat","airframe":"usv_rudder"},
            {"name":"o","kind":"boat","airframe":"otter_usv"}]}"#;
        let inputs = inputs_of(text);
        let files: Vec<_> = (0..6).map(|i| super::our_parm(&inputs, i).1).collect();
        let want = [
            "quad",
            "rover_skid",
            "rover_ackermann",
            "boat",
            "boat_rudder",
            "otter",
        ]
        .map(|f| format!("firmware_configs/ardupilot/{f}.parm"));
        assert_eq!(files, want);
    }

    /// The frame rate of a world's ArduPilot vehicles: the quad's or the
    /// rover's default, 1 000 beside PX4; the physics on it and their IMUs
    /// once a frame; none without ArduPilot.
    #[test]
    fn a_worlds_ardupilot_vehicles_take_their_frame_rate() {
        let ap = r#""controller":{"kind":"ardupilot","instance":2}"#;
        let px4 = r#""controller":{"kind":"px4","instance":1}"#;
        let cases = [
            (
                format!(r#"{{"name":"a","kind":"multirotor",{ap}}}"#),
                800,
                1600,
            ),
            (format!(r#"{{"name":"a","kind":"boat",{ap}}}"#), 100, 1000),
            (
                format!(
                    r#"{{"name":"a","kind":"multirotor",{ap}}},{{"name":"p","kind":"multirotor",{px4}}}"#
                ),
                1000,
                1000,
            ),
            (
                format!(
                    r#"{{"name":"a","kind":"boat",{ap}}},{{"name":"p","kind":"multirotor",{px4}}}"#
                ),
                100,
                1000,
            ),
            (r#"{"name":"q","kind":"multirotor"}"#.to_string(), 0, 1000),
        ];
        for (vehicles, rate, physics) in cases {
            let text = format!(r#"{{"vehicles":[{vehicles}]}}"#);
            let mut inputs = inputs_of(&text);
            let imu_before = inputs.scenario.vehicles[0].sensors.imu.rate_hz;
            assert_eq!(prepare_mixed(&mut inputs), rate, "{vehicles}");
            assert_eq!(inputs.scenario.physics_rate_hz, physics, "{vehicles}");
            let imu = inputs.scenario.vehicles[0].sensors.imu.rate_hz;
            assert_eq!(imu, if rate == 0 { imu_before } else { rate }, "{vehicles}");
        }
    }

    /// One ArduPilot vehicle steps a whole number of ticks a frame, its IMU
    /// sampled once a frame, and the rates the file left to their defaults
    /// follow the physics rate from their defaults: a scenario of 250 Hz
    /// physics alone records 250 Hz ground truth until 800 frames/s make it
    /// 800 Hz physics, where ground truth is 200 Hz again and cameras 20.
    #[test]
    fn at_the_frame_rate_the_defaulted_rates_follow_the_physics() {
        let cases = [
            (r#""physics_rate_hz":250,"#, 800, 800, (200, 20)),
            ("", 400, 1600, (200, 20)),
            (
                r#""physics_rate_hz":250,"record":{"ground_truth_rate_hz":50},"#,
                500,
                500,
                (50, 20),
            ),
        ];
        for (head, frame_rate, physics, record) in cases {
            let text = format!(r#"{{{head}"vehicles":[{{"kind":"multirotor"}}]}}"#);
            let mut inputs = inputs_of(&text);
            at_frame_rate(&mut inputs, frame_rate);
            let s = &inputs.scenario;
            assert_eq!(s.physics_rate_hz, physics, "{text}");
            assert_eq!(s.vehicles[0].sensors.imu.rate_hz, frame_rate, "{text}");
            let r = (s.record.ground_truth_rate_hz, s.record.camera_rate_hz);
            assert_eq!(r, record, "{text}");
        }
    }

    #[test]
    fn our_parameters_take_the_frame_rate_as_sim_rate_hz() {
        let parm = "FRAME_CLASS 1\nSIM_RATE_HZ 800\n# SIM_RATE_HZ in a comment\nSIM_RATE_HZ_X 3\n";
        assert_eq!(
            at_sim_rate(parm, 1250),
            "FRAME_CLASS 1\n# SIM_RATE_HZ in a comment\nSIM_RATE_HZ_X 3\nSIM_RATE_HZ 1250\n"
        );
        // ArduPilot's other separators: a comma, an equals sign, a tab.
        assert_eq!(
            at_sim_rate(
                "SIM_RATE_HZ,200\nSIM_RATE_HZ=300\n\tSIM_RATE_HZ\t400\nX,1\n",
                100
            ),
            "X,1\nSIM_RATE_HZ 100\n"
        );
        for (line, rate) in [
            ("SIM_RATE_HZ 800", Some(800)),
            ("SIM_RATE_HZ,200", Some(200)),
            (" SIM_RATE_HZ=50 # a comment", Some(50)),
            ("SIM_RATE_HZ_X 3", None),
            ("# SIM_RATE_HZ 100", None),
            ("", None),
        ] {
            assert_eq!(sim_rate_hz(line), rate, "{line}");
        }
        // The shipped files each carry it once, at the rate given.
        for parm in [QUAD_PARM, "SIM_RATE_HZ\t200"] {
            let text = at_sim_rate(parm, 400);
            let rates: Vec<_> = text
                .lines()
                .filter(|l| l.starts_with("SIM_RATE_HZ"))
                .collect();
            assert_eq!(rates, ["SIM_RATE_HZ 400"], "{text}");
        }
    }

    #[test]
    fn physics_rate_is_a_whole_multiple_of_the_frame_rate_in_whole_microseconds() {
        assert_eq!(physics_rate_for(1000, 1000), 1000);
        assert_eq!(physics_rate_for(2000, 400), 2000);
        // 1 200 Hz is 833.3 µs: four ticks a frame, 625 µs each.
        assert_eq!(physics_rate_for(1000, 400), 1600);
        assert_eq!(physics_rate_for(1000, 800), 1600);
        assert_eq!(physics_rate_for(1000, 1250), 1250);
        assert_eq!(physics_rate_for(1000, 50), 1000);
        assert_eq!(physics_rate_for(1000, 200), 1000);
        // 3 000 Hz is not whole either: four ticks of 250 µs.
        assert_eq!(physics_rate_for(2500, 1000), 4000);
        assert_eq!(physics_rate_for(0, 500), 500);
        // At most one tick a microsecond.
        assert_eq!(physics_rate_for(1_000_000, 400), 1_000_000);
        // A frame rate that is not whole keeps its first multiple, refused later.
        assert_eq!(physics_rate_for(2400, 1200), 2400);
        assert_eq!(physics_rate_for(0, 1200), 1200);
        for f in [50, 100, 200, 250, 400, 500, 800, 1000, 1250, 2000] {
            for s in [0, 1, 333, 1000, 1999, 4000] {
                let p = physics_rate_for(s, f);
                assert!(
                    p >= s.max(f) && p.is_multiple_of(f) && 1_000_000_u32.is_multiple_of(p),
                    "{s} {f}: {p}"
                );
            }
        }
    }
}
