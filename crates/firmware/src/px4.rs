//! PX4 SITL launched and flown: its parameter files (built in), its
//! build directory, how to start it, and the world its simulator bridge
//! flies.

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mavsitl_bridges::px4::{Px4Bridge, Px4Options, Px4Port, Px4Socket, Px4Stats, RcSchedule};
use mavsitl_run::session::{Driver, Step};
use mavsitl_sim::sim::SimError;

use crate::crew::{Member, Slot};
use crate::flight::{FirmwareFlight, Judged, PlanOptions};
use mavsitl_bridges::ground_station::Firmware as Dialect;
use mavsitl_core::failure::Failure;
use mavsitl_core::time::SimTime;
use mavsitl_mavlink::mission::Mission;
use mavsitl_run::launch::LaunchSpec;
use mavsitl_run::pacing::{parse_speedup, Speedup};
use mavsitl_run::setup::FlightInputs;
use mavsitl_run::StartError;
use mavsitl_sim::physics::boat::BoatLayout;
use mavsitl_sim::physics::RoverDrive;
use mavsitl_sim::scenario::load::Airframe;
use mavsitl_sim::sim::Lockstep;

/// The PX4 parameter files (PX4_PARAM_* overrides for airframe 10016, 50000
/// or 4012), built into the binary so it runs from anywhere.
const ENV_FILES: [(&str, &str); 7] = [
    (
        "generic_quad",
        include_str!("../../../firmware_configs/px4/generic_quad.env"),
    ),
    (
        "x500",
        include_str!("../../../firmware_configs/px4/x500.env"),
    ),
    (
        "usv_twin",
        include_str!("../../../firmware_configs/px4/usv_twin.env"),
    ),
    (
        "otter_usv",
        include_str!("../../../firmware_configs/px4/otter_usv.env"),
    ),
    (
        "usv_rudder",
        include_str!("../../../firmware_configs/px4/usv_rudder.env"),
    ),
    (
        "jackal",
        include_str!("../../../firmware_configs/px4/jackal.env"),
    ),
    (
        "f1tenth",
        include_str!("../../../firmware_configs/px4/f1tenth.env"),
    ),
];

/// The parameter file for vehicle `index` (name, text): its airframe's own,
/// else the nearest start for its kind — generic_quad for a multirotor,
/// usv_twin (PX4's differential rover) for a twin-thruster boat, usv_rudder
/// (PX4's Ackermann rover) for a boat with one thruster and a rudder, jackal
/// for a skid-steer rover and f1tenth for an Ackermann one.
pub fn env_file(inputs: &FlightInputs, index: usize) -> (&'static str, &'static str) {
    let by_name = |name: &str| ENV_FILES.iter().find(|(n, _)| *n == name).copied();
    let airframe = inputs
        .scenario
        .vehicles
        .get(index)
        .map_or("", |v| v.airframe.as_str());
    let nearest = match inputs.scenario.resolve_airframe(index, &inputs.source) {
        Ok(Airframe::Boat(p)) if p.layout == BoatLayout::ThrottleRudder => "usv_rudder",
        Ok(Airframe::Boat(_)) => "usv_twin",
        Ok(Airframe::Rover(p)) if p.drive == RoverDrive::Ackermann => "f1tenth",
        Ok(Airframe::Rover(_)) => "jackal",
        _ => "generic_quad",
    };
    by_name(airframe)
        .or_else(|| by_name(nearest))
        .unwrap_or(ENV_FILES[0])
}

/// The `export NAME=VALUE` lines of an env file.
pub fn env_vars(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("export "))
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().trim_matches('"').to_string()))
        .collect()
}

/// PX4's build directory from what the user gave: build/px4_sitl_default
/// itself, or the PX4-Autopilot checkout above it.
pub fn px4_build_dir(given: &Path) -> Result<PathBuf, StartError> {
    // Absolute: PX4 runs in its own working directory.
    let given_abs = std::path::absolute(given).unwrap_or_else(|_| given.to_path_buf());
    let candidates = [given_abs.clone(), given_abs.join("build/px4_sitl_default")];
    let dir = candidates
        .into_iter()
        .find(|d| d.join("bin/px4").is_file() && d.join("etc/init.d-posix/rcS").is_file())
        .ok_or_else(|| {
            StartError::new(
                format!(
                    "--px4-build {}: no PX4 SITL build there (bin/px4 and etc/init.d-posix/rcS)",
                    given.display()
                ),
                "give PX4-Autopilot's build/px4_sitl_default, made by `make px4_sitl`",
            )
        })?;
    match mavsitl_run::launch::executable_problem(&dir.join("bin/px4")) {
        Some(why) => Err(StartError::new(
            format!("--px4-build {}: {why}", given.display()),
            "chmod +x it, or rebuild with `make px4_sitl`",
        )),
        None => Ok(dir),
    }
}

/// Where and how PX4 is met, whoever starts it (`px4`, `airsim`).
pub struct Px4Setup<'a> {
    /// PX4 instance: TCP 4560 + N.
    pub instance: u8,
    /// Address to listen on.
    pub bind: IpAddr,
    /// Keep a launched PX4's working directory.
    pub keep_workdir: bool,
    /// The recording directory (a launched PX4's console goes there).
    pub record: Option<&'a Path>,
    /// PX4 parameters to set at start-up besides the airframe's (name,
    /// value): `PX4_PARAM_<NAME>` variables for PX4's rcS.
    pub params: &'a [(String, String)],
    /// The vehicle it flies (its airframe and RC script), by index.
    pub vehicle: usize,
}

/// How to start PX4: `bin/px4 -i N -d <build>/etc` in a fresh working
/// directory (as PX4's sitl_multiple_run.sh does), with the airframe's
/// variables, the home and the speed factor in the environment.
pub fn launch_spec(
    build: &Path,
    setup: &Px4Setup,
    inputs: &FlightInputs,
    speedup: Speedup,
) -> Result<LaunchSpec, StartError> {
    let build = px4_build_dir(build)?;
    let (_, text) = env_file(inputs, setup.vehicle);
    let mut env = env_vars(text);
    let h = &inputs.scenario.home;
    env.push(("PX4_HOME_LAT".into(), h.lat_deg.to_string()));
    env.push(("PX4_HOME_LON".into(), h.lon_deg.to_string()));
    env.push(("PX4_HOME_ALT".into(), h.alt_m.to_string()));
    if let Speedup::Factor(k) = speedup {
        env.push(("PX4_SIM_SPEED_FACTOR".into(), k.to_string()));
    }
    for (name, value) in setup.params {
        env.push((format!("PX4_PARAM_{name}"), value.clone()));
    }
    let workdir = mavsitl_run::launch::scratch_dir("px4", setup.instance);
    let log = match setup.record {
        Some(dir) => dir.join("firmware.log"),
        None => workdir.join("firmware.log"),
    };
    Ok(LaunchSpec {
        name: "PX4",
        program: build.join("bin/px4"),
        args: vec![
            "-i".into(),
            setup.instance.to_string().into(),
            "-d".into(),
            build.join("etc").into_os_string(),
        ],
        env,
        workdir,
        keep_workdir: setup.keep_workdir,
        log,
        files: Vec::new(),
    })
}

/// The simulation of `inputs` with PX4's bridge flying vehicle 0.
pub fn build(
    inputs: &FlightInputs,
    port: &Px4Port,
    opts: &Px4Options,
) -> Result<Lockstep, StartError> {
    let sim = inputs
        .scenario
        .build_simulation(&inputs.source)
        .map_err(|e| StartError::new(e.to_string(), "see docs/reference/scenario.md"))?;
    let mut ls = Lockstep::new(sim);
    attach_bridge(&mut ls, 0, opts.clone(), port.clone())?;
    Ok(ls)
}

/// The bridge's options for a setup and a scenario (`launched`: PX4
/// started by mavsitl); `stop` ends its waits at once.
pub fn bridge_options(
    setup: &Px4Setup,
    inputs: &FlightInputs,
    launched: bool,
    stop: &'static AtomicBool,
) -> Px4Options {
    let scenario = &inputs.scenario;
    let mut opts = Px4Options::new(setup.bind, setup.instance);
    opts.utc_epoch_us = scenario.date.unix_midnight_us();
    opts.stop = Some(stop);
    opts.launched = launched;
    opts.rc = scenario
        .vehicles
        .get(setup.vehicle)
        .and_then(|v| v.rc.as_ref())
        .map(|rc| RcSchedule {
            every_steps: (250 / rc.rate_hz.max(1)) as u64,
            points: rc
                .script
                .iter()
                .map(|p| (SimTime::from_secs_f64(p.t_s), p.channels.clone()))
                .collect(),
        });
    opts
}

/// PX4 flying the vehicle over its simulator port, the run loop's driver;
/// a PX4 started by hand that went away is waited for (`wait_forever`, or
/// its give-up time), and flies the world on (`keep_state`) or a fresh one.
pub struct Px4Driver<'a> {
    /// The flight (its ground station, its launched PX4).
    pub flight: FirmwareFlight,
    /// The world's inputs, to build it afresh.
    pub inputs: &'a FlightInputs,
    /// The simulator port.
    pub port: &'a Px4Port,
    /// The bridge's options.
    pub opts: &'a Px4Options,
    /// Fly the world on where it is when PX4 comes back.
    pub keep_state: bool,
    /// Wait for PX4 to come back for ever.
    pub wait_forever: bool,
    /// Set by the user's interrupt.
    pub interrupted: &'static AtomicBool,
    /// Times PX4 came back.
    pub restarts: u32,
    /// Why the world could not be flown on.
    pub failed: Option<StartError>,
}

impl Driver<Lockstep> for Px4Driver<'_> {
    fn after_tick(&mut self, ls: &mut Lockstep, tick: Result<(), SimError>) -> Step<Lockstep> {
        let (msg, restarted) = match self.flight.judge(tick, ls.sim_mut()) {
            Judged::Go => return Step::Go,
            Judged::End(o) => return Step::End(o),
            Judged::Lost { why, restarted } => (why, restarted),
        };
        let how = (self.wait_forever, self.interrupted);
        if !restarted && !wait_for_return(self.port, self.opts, how, &msg) {
            return Step::End(Err(gone_for_good(&msg, self.opts, self.interrupted)));
        }
        self.restarts += 1;
        let next = if self.keep_state {
            eprintln!("PX4 is back: the vehicle keeps its state");
            reattach(ls, self.port, self.opts).map(|()| None)
        } else {
            eprintln!("PX4 is back: the simulation restarts from the scenario's start");
            build(self.inputs, self.port, self.opts).map(Some)
        };
        match next {
            Ok(None) => Step::Go,
            Ok(Some(fresh)) => Step::Restart(Box::new(fresh), "PX4 restarted".into()),
            Err(e) => {
                let why = e.message.clone();
                self.failed = Some(e);
                Step::End(Err(why))
            }
        }
    }
}

/// A PX4 started by hand went away: wait for it to connect again (within
/// --px4-timeout, or forever with --wait-reconnect). Whether it came back.
fn wait_for_return(
    port: &Px4Port,
    opts: &Px4Options,
    (wait_forever, interrupted): (bool, &AtomicBool),
    msg: &str,
) -> bool {
    eprintln!("{msg}; waiting for PX4 to connect again");
    let start = Instant::now();
    // In slices of a second, so Ctrl-C is heard.
    loop {
        if port
            .borrow_mut()
            .wait_for_connection(Some(Duration::from_secs(1)))
        {
            return true;
        }
        let gave_up = !wait_forever && start.elapsed() >= opts.give_up_after;
        if interrupted.load(Ordering::Relaxed) || gave_up {
            return false;
        }
    }
}

/// Why the run ends when PX4 did not come back after `msg`: it was
/// interrupted while waiting, or the wait ran out.
fn gone_for_good(msg: &str, opts: &Px4Options, interrupted: &AtomicBool) -> String {
    if interrupted.load(Ordering::Relaxed) {
        return format!("{msg}; interrupted while waiting for PX4 to connect again");
    }
    format!(
        "{msg}, and it did not come back within {:.0} s. Check the PX4 console; run with --wait-reconnect to wait for it",
        opts.give_up_after.as_secs_f64()
    )
}

/// A PX4 that came back flies the vehicle where it is: a new bridge on the
/// same simulation.
fn reattach(ls: &mut Lockstep, port: &Px4Port, opts: &Px4Options) -> Result<(), StartError> {
    ls.detach(0);
    attach_bridge(ls, 0, opts.clone(), port.clone())
}

/// PX4's bridge (`opts`, on `port`) attached to vehicle `index`.
///
/// # Errors
/// A physics rate PX4's 250 Hz steps do not divide (exit 2).
fn attach_bridge(
    ls: &mut Lockstep,
    index: usize,
    opts: Px4Options,
    port: Px4Port,
) -> Result<(), StartError> {
    let frame = *ls.sim().world().frame();
    ls.attach(index, Box::new(Px4Bridge::new(opts, port, frame)))
        .map_err(|e| {
            StartError::new(
                e.to_string(),
                "the physics rate must be a multiple of 250 Hz",
            )
        })
}

/// The simulator port PX4 connects to: TCP 4560 + N (`other`: how to
/// choose another instance).
///
/// # Errors
/// The port is held (by Gazebo, jMAVSim or another mavsitl).
pub fn listen(opts: &Px4Options, other: &str) -> Result<Px4Port, StartError> {
    Px4Socket::listen(opts.listen).map_err(|e| {
        StartError::new(
            format!("cannot listen on TCP {}: {e}", opts.listen),
            format!("another simulator (Gazebo, jMAVSim, mavsitl) may hold it: {other}"),
        )
    })
}

/// The simulator port of instance `instance`: listening on TCP 4560 + N,
/// or with `udp` sending to PX4's UDP 14560 + N on `bind` (and `opts`
/// then names that address).
///
/// # Errors
/// A port that cannot be opened.
pub fn open_port(
    udp: bool,
    bind: IpAddr,
    instance: u8,
    opts: &mut Px4Options,
) -> Result<Px4Port, StartError> {
    if !udp {
        return listen(opts, "use --instance N");
    }
    let px4 = std::net::SocketAddr::new(bind, 14560 + instance as u16);
    opts.listen = px4;
    let any = std::net::SocketAddr::from(([0, 0, 0, 0], 0));
    Px4Socket::udp(any, px4)
        .map_err(|e| StartError::new(format!("cannot open UDP towards {px4}: {e}"), ""))
}

/// The speed-up asked (`given`), else PX4_SIM_SPEED_FACTOR's, else as fast
/// as PX4 answers.
///
/// # Errors
/// A PX4_SIM_SPEED_FACTOR that is not a speed-up.
pub fn speedup(given: Option<Speedup>) -> Result<Speedup, StartError> {
    if let Some(s) = given {
        return Ok(s);
    }
    match std::env::var("PX4_SIM_SPEED_FACTOR") {
        Ok(v) => parse_speedup(&v).map_err(|e| {
            StartError::new(format!("PX4_SIM_SPEED_FACTOR: {e}"), "a number such as 2")
        }),
        Err(_) => Ok(Speedup::Max),
    }
}

/// `lockstep.csv` in `dir`: the bridge's counters at the end of the run.
pub fn write_lockstep_csv(dir: &Path, st: &Px4Stats, restarts: u32) {
    let _ = std::fs::write(
        dir.join("lockstep.csv"),
        format!(
            "steps,answered,missed,stale,malformed,gps_sent,wait_us,connections,restarts\n{},{},{},{},{},{},{},{},{}\n",
            st.steps, st.answered, st.missed, st.stale, st.malformed, st.gps_sent, st.wait_us, st.connections, restarts
        ),
    );
}

/// The summary's rows of the PX4 lockstep: steps sent, answered, missed
/// and stale; connections, restarts and malformed messages.
pub struct LockstepRows<'a>(pub &'a Px4Stats, pub u32);

impl std::fmt::Display for LockstepRows<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (st, restarts) = (self.0, self.1);
        writeln!(
            f,
            "  lockstep steps      {} sent, {} answered, {} missed, {} stale",
            st.steps, st.answered, st.missed, st.stale
        )?;
        writeln!(
            f,
            "  PX4                 {} connection(s), {restarts} restart(s), {} malformed",
            st.connections, st.malformed
        )
    }
}

/// A PX4 to be started by hand, in another terminal.
#[derive(Debug, Clone, Copy)]
pub struct ByHand {
    /// mavsitl sends over UDP (`--udp`) rather than listening on TCP.
    pub udp: bool,
    /// The simulator port: where mavsitl listens, or sends to.
    pub listen: std::net::SocketAddr,
    /// PX4's instance.
    pub instance: u8,
    /// The pacing.
    pub speedup: Speedup,
}

impl ByHand {
    /// What to tell the user: the simulator port, the parameter file to
    /// source and the command that starts PX4, one line each.
    pub fn instructions(&self, inputs: &FlightInputs) -> Vec<String> {
        let airframe = inputs
            .scenario
            .vehicles
            .first()
            .map_or("", |v| v.airframe.as_str());
        let speed = match self.speedup {
            Speedup::Max => "as fast as PX4 answers".to_string(),
            Speedup::Factor(k) => format!("{k}x real time"),
        };
        let how = match self.udp {
            true => "sending over UDP to",
            false => "listening on TCP",
        };
        let mut lines = vec![format!(
            "mavsitl px4: {airframe} {how} {} for PX4 SITL ({speed}); start PX4 in another terminal:",
            self.listen
        )];
        if self.udp {
            lines.push(format!(
                "  (PX4's start-up must run `simulator_mavlink start -u {}` instead of the default TCP client)",
                self.listen.port()
            ));
        }
        let (env, _) = env_file(inputs, 0);
        if env != airframe {
            lines.push(format!(
                "  (no PX4 parameter file for airframe '{airframe}': {env}.env is the nearest start)"
            ));
        }
        let instance = match self.instance {
            0 => String::new(),
            n => format!(" -i {n}"),
        };
        lines.push(format!(
            "  source firmware_configs/px4/{env}.env && cd PX4-Autopilot/build/px4_sitl_default/rootfs && ../bin/px4 -d{instance}"
        ));
        lines.push(
            "  (or let mavsitl start it: --px4-build PX4-Autopilot/build/px4_sitl_default)".into(),
        );
        lines
    }
}

/// PX4 for one vehicle of a world: its bridge (`opts`) attached to the
/// slot's vehicle, PX4 launched from `build` as `setup` says at `speedup`,
/// its ground station flying `mission` as `plan` asks.
///
/// # Errors
/// A port that cannot be bound, a physics rate PX4's steps do not fit, or
/// a PX4 that cannot start (exit 2).
pub fn attach(
    (build, setup, opts, speedup): (&Path, &Px4Setup, Px4Options, Speedup),
    (inputs, mission, mission_name): (&FlightInputs, Mission, &str),
    ls: &mut Lockstep,
    slot: Slot,
    plan: &PlanOptions,
) -> Result<Member, Failure> {
    let frame = *ls.sim().world().frame();
    let port = listen(&opts, "give it another instance")?;
    attach_bridge(ls, slot.index, opts, port)?;
    let launch = launch_spec(build, setup, inputs, speedup)?;
    slot.start(
        Dialect::Px4,
        (inputs, mission, mission_name),
        plan,
        launch,
        &frame,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lockstep_rows_give_every_counter() {
        let st = Px4Stats {
            connections: 2,
            steps: 1000,
            answered: 990,
            missed: 7,
            stale: 3,
            malformed: 5,
            ..Px4Stats::default()
        };
        assert_eq!(
            LockstepRows(&st, 1).to_string(),
            "  lockstep steps      1000 sent, 990 answered, 7 missed, 3 stale\n  PX4                 2 connection(s), 1 restart(s), 5 malformed\n"
        );
    }
}
