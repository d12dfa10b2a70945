//! `mavsitl px4`: real PX4 SITL flies the simulated vehicle over PX4's
//! simulator interface (TCP 4560 + instance), in lockstep on PX4's clock.

use std::io::Write as _;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;

use mavsitl::bridge::px4::{Px4Bridge, Px4Options, Px4Port, Px4Socket, RcSchedule, RESTARTED};
use mavsitl::geo::ExportFrame;
use mavsitl::record::Recorder;
use mavsitl::sim::{Lockstep, Observer, Simulation};
use mavsitl::time::{PhysicsRate, SimTime};

use super::fly::{FlightInputs, VehicleArg, WorldArgs};
use super::gcs::{epoch_unix_us, parse_speedup, Pacer, Speedup};
use super::CliError;
use super::NextTick;

/// Arguments of `mavsitl px4`.
#[derive(Debug, Args)]
pub struct Px4Args {
    /// Vehicle when no scenario is given.
    #[arg(long, value_enum, default_value_t = VehicleArg::Quad)]
    pub vehicle: VehicleArg,

    /// The simulated world.
    #[command(flatten)]
    pub world: WorldArgs,

    /// PX4 instance (`px4 -i N`): listens on TCP 4560 + N.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub instance: u8,

    /// Address to listen on (0.0.0.0 for PX4 in a container or on another host);
    /// with --udp, PX4's address.
    #[arg(long, value_name = "IP", default_value = "127.0.0.1")]
    pub bind: IpAddr,

    /// PX4 runs `simulator_mavlink start -u 14560` (UDP, PX4 binds): send to
    /// UDP 14560 + instance instead of listening on TCP.
    #[arg(long)]
    pub udp: bool,

    /// Pace at X times real time (default: PX4_SIM_SPEED_FACTOR if set, else as
    /// fast as PX4 answers).
    #[arg(long, value_name = "X|max", value_parser = parse_speedup)]
    pub speedup: Option<Speedup>,

    /// Longest wait for PX4's answer to a step while armed, ms.
    #[arg(long, value_name = "MS", default_value_t = 10)]
    pub armed_wait_ms: u64,

    /// PX4 silent this long (wall time) ends the run, s.
    #[arg(long, value_name = "S", default_value_t = 10.0)]
    pub px4_timeout: f64,

    /// When PX4 stops or disconnects, wait for it to come back instead of exiting.
    #[arg(long)]
    pub wait_reconnect: bool,

    /// When PX4 restarts, keep the vehicle where it is instead of resetting the
    /// simulation to the scenario's start.
    #[arg(long)]
    pub keep_state: bool,

    /// Stop after this much sim time, s.
    #[arg(long, value_name = "S")]
    pub duration: Option<f64>,

    /// Write recordings (ground truth, sensors) plus actuators.csv (PX4's
    /// outputs per step) and lockstep.csv (step counters).
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
}

/// Writes PX4's commands per step.
struct Px4Observer<'a> {
    recorder: Option<&'a mut Recorder>,
    actuators: Option<std::io::BufWriter<std::fs::File>>,
    channels: usize,
}

impl Observer for Px4Observer<'_> {
    fn on_tick(&mut self, sim: &Simulation) -> std::io::Result<()> {
        if let (Some(w), Some(a)) = (self.actuators.as_mut(), sim.actuators(0)) {
            if sim.tick().is_multiple_of(4) {
                write!(w, "{}", sim.time().as_nanos())?;
                for c in a.controls.iter().take(self.channels) {
                    write!(w, ",{c}")?;
                }
                writeln!(w)?;
            }
        }
        match self.recorder.as_deref_mut() {
            Some(r) => r.on_tick(sim),
            None => Ok(()),
        }
    }
}

fn build(inputs: &FlightInputs, port: &Px4Port, opts: &Px4Options) -> Result<Lockstep, CliError> {
    let sim = inputs
        .scenario
        .build_simulation(&inputs.source)
        .map_err(|e| CliError::input(e.to_string(), "see the README's scenario reference"))?;
    let frame = *sim.world().frame();
    let mut ls = Lockstep::new(sim);
    ls.attach(
        0,
        Box::new(Px4Bridge::new(opts.clone(), port.clone(), frame)),
    )
    .map_err(|e| {
        CliError::input(
            e.to_string(),
            "the physics rate must be a multiple of 250 Hz",
        )
    })?;
    Ok(ls)
}

/// Runs `mavsitl px4`.
pub fn run(args: Px4Args) -> Result<(), CliError> {
    let inputs = args.world.load(args.vehicle)?;
    let scenario = &inputs.scenario;
    let mut opts = Px4Options::new(args.bind, args.instance);
    opts.armed_wait = Duration::from_millis(args.armed_wait_ms);
    opts.give_up_after = Duration::from_secs_f64(args.px4_timeout.max(0.1));
    opts.utc_epoch_us = epoch_unix_us(scenario);
    opts.stop = Some(&super::INTERRUPTED);
    opts.rc = scenario
        .vehicles
        .first()
        .and_then(|v| v.rc.as_ref())
        .map(|rc| RcSchedule {
            every_steps: (250 / rc.rate_hz.max(1)) as u64,
            points: rc
                .script
                .iter()
                .map(|p| (SimTime::from_secs_f64(p.t_s), p.channels.clone()))
                .collect(),
        });
    let port = if args.udp {
        let px4 = std::net::SocketAddr::new(args.bind, 14560 + args.instance as u16);
        opts.listen = px4;
        Px4Socket::udp(
            "0.0.0.0:0".parse().map_err(|_| CliError::run("address"))?,
            px4,
        )
        .map_err(|e| CliError::input(format!("cannot open UDP towards {px4}: {e}"), ""))?
    } else {
        Px4Socket::listen(opts.listen).map_err(|e| {
            CliError::input(
                format!("cannot listen on TCP {}: {e}", opts.listen),
                "another simulator (Gazebo, jMAVSim, mavsitl) may hold it: use --instance N",
            )
        })?
    };
    let speedup = match args.speedup {
        Some(s) => s,
        None => match std::env::var("PX4_SIM_SPEED_FACTOR") {
            Ok(v) => parse_speedup(&v).map_err(|e| {
                CliError::input(format!("PX4_SIM_SPEED_FACTOR: {e}"), "a number such as 2")
            })?,
            Err(_) => Speedup::Max,
        },
    };
    let mut ls = build(&inputs, &port, &opts)?;
    let rate = PhysicsRate::new(scenario.physics_rate_hz)
        .map_err(|e| CliError::input(e.to_string(), ""))?;
    let mut recorder =
        super::open_recorder(args.record.as_deref(), scenario, ls.sim(), ExportFrame::Ned)?;
    let channels = if matches!(args.vehicle, VehicleArg::Boat) {
        3
    } else {
        8
    };
    let actuators = match &args.record {
        Some(dir) => {
            let f = std::fs::File::create(dir.join("actuators.csv"))
                .map_err(|e| CliError::run(e.to_string()))?;
            let mut w = std::io::BufWriter::new(f);
            let header: Vec<String> = (0..channels).map(|i| format!("u{i} []")).collect();
            let _ = writeln!(w, "#timestamp [ns],{}", header.join(","));
            Some(w)
        }
        None => None,
    };
    let mut obs = Px4Observer {
        recorder: recorder.as_mut(),
        actuators,
        channels,
    };
    println!(
        "mavsitl px4: {} {} {} for PX4 SITL ({}); start PX4 in another terminal:",
        inputs
            .scenario
            .vehicles
            .first()
            .map_or("vehicle", |v| v.airframe.as_str()),
        if args.udp {
            "sending over UDP to"
        } else {
            "listening on TCP"
        },
        opts.listen,
        match speedup {
            Speedup::Max => "as fast as PX4 answers".to_string(),
            Speedup::Factor(k) => format!("{k}x real time"),
        }
    );
    if args.udp {
        println!(
            "  (PX4's start-up must run `simulator_mavlink start -u {}` instead of the default TCP client)",
            opts.listen.port()
        );
    }
    // The PX4 parameter file for the airframe flown, where there is one.
    let airframe = inputs
        .scenario
        .vehicles
        .first()
        .map_or("", |v| v.airframe.as_str());
    let env = match airframe {
        "generic_quad" | "x500" | "usv_twin" => airframe,
        _ => {
            println!("  (no PX4 parameter file for airframe '{airframe}': generic_quad.env is the nearest start)");
            "generic_quad"
        }
    };
    println!(
        "  source firmware_configs/px4/{env}.env && cd PX4-Autopilot/build/px4_sitl_default/rootfs && ../bin/px4 -d{}",
        if args.instance > 0 {
            format!(" -i {}", args.instance)
        } else {
            String::new()
        }
    );
    let _ = std::io::stdout().flush();
    let end = args.duration.map(SimTime::from_secs_f64);
    let mut pacer = Pacer::new(speedup, SimTime::ZERO);
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
        let step = if recording {
            ls.tick(&mut obs)
        } else {
            ls.tick(&mut ())
        };
        match step {
            Ok(()) => {}
            Err(_) if super::interrupted() => {
                outcome = Err("interrupted".into());
                break;
            }
            Err(e) => {
                let msg = e.to_string();
                let restarted = msg.contains(RESTARTED);
                {
                    // PX4 went away (closed, or silent): a restarted PX4
                    // connects again within --px4-timeout (forever with
                    // --wait-reconnect).
                    let back = restarted || {
                        eprintln!("{msg}; waiting for PX4 to connect again");
                        // In slices of a second, so Ctrl-C is heard.
                        let start = Instant::now();
                        loop {
                            if port
                                .borrow_mut()
                                .wait_for_connection(Some(Duration::from_secs(1)))
                            {
                                break true;
                            }
                            if super::interrupted()
                                || (!args.wait_reconnect && start.elapsed() >= opts.give_up_after)
                            {
                                break false;
                            }
                        }
                    };
                    if !back {
                        outcome = Err(format!(
                            "{msg}, and it did not come back within {:.0} s. Check the PX4 console; run with --wait-reconnect to wait for it",
                            opts.give_up_after.as_secs_f64()
                        ));
                        break;
                    }
                    restarts += 1;
                    if args.keep_state {
                        eprintln!("PX4 is back: the vehicle keeps its state");
                        let frame = *ls.sim().world().frame();
                        ls.detach(0);
                        ls.attach(
                            0,
                            Box::new(Px4Bridge::new(opts.clone(), port.clone(), frame)),
                        )
                        .map_err(|e| CliError::run(e.to_string()))?;
                    } else {
                        eprintln!("PX4 is back: the simulation restarts from the scenario's start");
                        if recording {
                            eprintln!("note: recordings cover the run up to the restart");
                            recording = false;
                        }
                        ls = build(&inputs, &port, &opts)?;
                        pacer.restart(SimTime::ZERO);
                    }
                }
            }
        }
    }
    if let Some(w) = obs.actuators.as_mut() {
        let _ = w.flush();
    }
    let st = port.borrow().stats();
    let sim = ls.sim();
    if let Some(dir) = &args.record {
        let _ = std::fs::write(
            dir.join("lockstep.csv"),
            format!(
                "steps,answered,missed,stale,malformed,gps_sent,wait_us,connections,restarts\n{},{},{},{},{},{},{},{},{}\n",
                st.steps, st.answered, st.missed, st.stale, st.malformed, st.gps_sent, st.wait_us, st.connections, restarts
            ),
        );
    }
    if let Some(r) = recorder.as_mut() {
        r.finish(sim, outcome.is_ok())
            .map_err(|e| CliError::run(format!("recording: {e}")))?;
    }
    let wall_s = wall.elapsed().as_secs_f64();
    println!("mavsitl px4 stopped");
    println!(
        "  sim time            {:.1} s ({:.1}x real time)",
        sim.time().as_secs_f64(),
        sim.time().as_secs_f64() / wall_s.max(1e-9)
    );
    println!(
        "  lockstep steps      {} sent, {} answered, {} missed, {} stale",
        st.steps, st.answered, st.missed, st.stale
    );
    println!(
        "  PX4                 {} connection(s), {} restart(s), {} malformed",
        st.connections, restarts, st.malformed
    );
    outcome.map_err(CliError::run)
}
