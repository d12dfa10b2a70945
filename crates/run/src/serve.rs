//! SimpleFlight served to ground stations (`mavsitl serve`): the run loop's
//! driver for N served vehicles — each one's link serviced with its own
//! link faults and throttle, ADS-B traffic of the others, collisions told on
//! stderr, and a fresh world when a ground station reboots a vehicle.

use mavsitl_core::failure::Failure;
use mavsitl_core::time::SimTime;
use mavsitl_mavlink::traffic::TRAFFIC_PERIOD_US;
use mavsitl_sim::sim::{Lockstep, SimError, Simulation};

use std::fmt;
use std::path::Path;
use std::sync::atomic::AtomicBool;

use crate::endpoint::{EndpointLink, EndpointParts, LinkChoice};
use crate::pacing::Speedup;
use crate::recording::RunPlan;
use crate::session::{Driver, Session, Step};
use crate::setup::FlightInputs;
use crate::setup::PilotPlan;
use crate::setup::{Fleet, Pilot};
use crate::traffic::traffic_for;
use mavsitl_core::geo::ExportFrame;
use mavsitl_sim::scenario::ControllerSpec;

/// The vehicles to serve: with `--count N`, N vehicles (see
/// [`crate::inputs::copies`]), all flown by SimpleFlight; else the scenario's
/// SimpleFlight vehicles, or its first.
///
/// # Errors
/// N copies that do not fit the scenario (exit 2).
pub fn serve_vehicles(inputs: &mut FlightInputs, count: u8) -> Result<(), Failure> {
    if count > 1 {
        crate::inputs::copies(inputs, count)?;
        for v in inputs.scenario.vehicles.iter_mut() {
            v.controller = ControllerSpec::SimpleFlight(Default::default());
        }
        return Ok(());
    }
    crate::fleet::give_first_to_simpleflight(inputs);
    Ok(())
}

/// The served world: SimpleFlight on every served vehicle, waiting for a
/// ground station to arm it.
///
/// # Errors
/// A mission, scenario or parameter file SimpleFlight refuses (exit 2).
pub fn build_fleet(inputs: &FlightInputs) -> Result<Fleet, Failure> {
    let plan = PilotPlan {
        mission: &inputs.mission,
        mission_name: &inputs.mission_name,
        param_file: inputs.params(),
        auto_arm: false,
    };
    crate::setup::fleet(&inputs.scenario, &inputs.source, &plan).map_err(|e| {
        Failure::input(
            e.to_string(),
            "check the mission, scenario and parameter file",
        )
    })
}

/// How `mavsitl serve` serves.
pub struct ServePlan<'a> {
    /// Vehicle 0's link (vehicle k's is [`LinkChoice::for_vehicle`]).
    pub link: LinkChoice,
    /// Vehicles served (`--count`; 1: the scenario's SimpleFlight ones).
    pub count: u8,
    /// Each vehicle also reports the others as ADS-B traffic.
    pub adsb: bool,
    /// The recording directory (with each link's telemetry.tlog).
    pub record: Option<&'a Path>,
    /// Stop after this much sim time, s (`None`: until interrupted).
    pub duration_s: Option<f64>,
    /// Pacing against the wall clock.
    pub speedup: Speedup,
    /// Set by Ctrl-C.
    pub stop: &'static AtomicBool,
}

/// Sim time between network services while running flat out, µs.
const MAX_SPEED_SERVICE_US: u64 = 20_000;
/// Sim time between network services when paced, µs.
const PACED_SERVICE_US: u64 = 4_000;

/// SimpleFlight served to ground stations, set up and ready to run.
pub struct Served {
    run: Session<Lockstep>,
    driver: ServeDriver,
    instance: u8,
    speedup: Speedup,
}

impl Served {
    /// Sets up `plan` over `inputs`: the vehicles chosen, the world built,
    /// one link per vehicle opened, the recording started. Warnings about
    /// the mission go to stderr.
    ///
    /// # Errors
    /// Bad inputs, a directory or link that cannot be opened (exit 2).
    pub fn start(mut inputs: FlightInputs, plan: &ServePlan) -> Result<Served, Failure> {
        crate::inputs::check_instances(plan.link.instance, plan.count)?;
        serve_vehicles(&mut inputs, plan.count)?;
        let fleet = build_fleet(&inputs)?;
        if let Some(p) = fleet.pilots.first() {
            for w in &p.warnings {
                eprintln!("warning: {}: {}", inputs.mission_name, w.message);
            }
        }
        if let Some(dir) = plan.record {
            std::fs::create_dir_all(dir).map_err(|e| {
                Failure::input(format!("{}: cannot create: {e}", dir.display()), "")
            })?;
        }
        let sessions = open_sessions(&plan.link, &fleet, &inputs, plan.record)?;
        let run_plan = RunPlan {
            record: plan.record,
            frame: ExportFrame::Ned,
            mission_file: None,
            builtin: "",
            end_s: plan.duration_s,
            stop: plan.stop,
        };
        let Fleet { lockstep, pilots } = fleet;
        let run = crate::recording::session(lockstep, &inputs.scenario, &run_plan)?;
        Ok(Served {
            run,
            driver: ServeDriver::new(sessions, pilots, inputs, plan.adsb),
            instance: plan.link.instance,
            speedup: plan.speedup,
        })
    }

    /// The start-up lines: one per vehicle, where it stands and where its
    /// link listens.
    pub fn banner(&self) -> Banner<'_> {
        Banner(self)
    }

    /// Serves until the end, an interrupt or a failure; the closing lines
    /// and how the serving ended.
    ///
    /// # Errors
    /// A recording that could not be finished (exit 1).
    #[allow(clippy::type_complexity)]
    pub fn run(self) -> Result<(Ended, Result<(), Failure>), Failure> {
        let Served {
            run,
            mut driver,
            speedup,
            ..
        } = self;
        let every = match speedup {
            Speedup::Max => MAX_SPEED_SERVICE_US,
            Speedup::Factor(_) => PACED_SERVICE_US,
        };
        let mut run = run.paced(speedup).serving_every(every);
        let outcome = run.run(&mut driver);
        for s in &mut driver.sessions {
            s.finish();
        }
        run.finish(outcome.is_ok()).map_err(Failure::run)?;
        let ended = Ended {
            sim: run.into_world().into_sim(),
            sessions: driver.sessions,
            resets: driver.resets,
        };
        let failed = driver.failed;
        Ok((
            ended,
            outcome.map_err(|why| failed.unwrap_or_else(|| Failure::run(why))),
        ))
    }
}

/// [`Served::banner`].
pub struct Banner<'a>(&'a Served);

impl fmt::Display for Banner<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let served = self.0;
        let (sim, d) = (served.run.world().sim(), &served.driver);
        let speed = match served.speedup {
            Speedup::Max => "as fast as possible".to_string(),
            Speedup::Factor(k) => format!("{k}x real time"),
        };
        let frame = sim.world().frame();
        for (k, (pilot, session)) in d.pilots.iter().zip(&d.sessions).enumerate() {
            let local = session
                .link
                .local_addr()
                .map_or_else(|e| e.to_string(), |a| a.to_string());
            let at = sim.vehicles().get(pilot.index).map_or_else(
                || frame.origin(),
                |v| frame.to_geodetic(&v.body().state.pos_ned_m),
            );
            writeln!(
                f,
                "mavsitl serve: {} ({}), system id {}, at {:.7},{:.7},{:.1}; MAVLink on udp {local}; {speed}; {} mission items",
                pilot.kind.word(),
                d.inputs.mission_name,
                1 + served.instance as u32 + k as u32,
                at.lat_deg(),
                at.lon_deg(),
                frame.origin().alt_m,
                d.inputs.mission.items.len(),
            )?;
        }
        Ok(())
    }
}

/// A serve run that ended: the closing lines.
pub struct Ended {
    sim: Simulation,
    sessions: Vec<EndpointLink>,
    resets: u32,
}

impl fmt::Display for Ended {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "mavsitl serve stopped")?;
        writeln!(
            f,
            "  sim time            {:.1} s",
            self.sim.time().as_secs_f64()
        )?;
        writeln!(f, "  reboots             {}", self.resets)?;
        for s in &self.sessions {
            let st = s.link.stats();
            writeln!(
                f,
                "  frames              {} in, {} out, {} rejected (signature), {} undecodable",
                st.frames_in, st.frames_out, st.rejected_signature, st.undecodable
            )?;
        }
        write!(f, "{}", crate::summary::EncounterRow(&self.sim))
    }
}

/// One session per SimpleFlight vehicle of `fleet`.
/// `link` is vehicle 0's; vehicle k's is [`LinkChoice::for_vehicle`]. With
/// `record`, each link's traffic goes to its `telemetry.tlog` (in the
/// vehicle's own directory when there are several).
///
/// # Errors
/// A link that cannot be opened (exit 2).
pub fn open_sessions(
    link: &LinkChoice,
    fleet: &Fleet,
    inputs: &FlightInputs,
    record: Option<&Path>,
) -> Result<Vec<EndpointLink>, Failure> {
    let frame = *fleet.lockstep.sim().world().frame();
    let several = fleet.pilots.len() > 1;
    fleet
        .pilots
        .iter()
        .enumerate()
        .map(|(k, pilot)| {
            let tlog = record.map(|d| {
                let name = fleet
                    .lockstep
                    .sim()
                    .vehicles()
                    .get(pilot.index)
                    .map_or("vehicle", |v| v.name());
                match several {
                    true => d.join(name).join("telemetry.tlog"),
                    false => d.join("telemetry.tlog"),
                }
            });
            if let Some(parent) = tlog.as_ref().and_then(|t| t.parent()) {
                let _ = std::fs::create_dir_all(parent);
            }
            link.for_vehicle(k as u8).open(EndpointParts::of_pilot(
                pilot,
                Some(&inputs.mission),
                &inputs.scenario,
                frame,
                tlog,
            ))
        })
        .collect()
}

/// The served vehicles: their links, ADS-B traffic, collisions told, and
/// a fresh world when a ground station reboots one.
struct ServeDriver {
    /// Each vehicle's ground-station link, in vehicle order.
    sessions: Vec<EndpointLink>,
    /// Each vehicle's SimpleFlight.
    pilots: Vec<Pilot>,
    /// What the world is built from, afresh on a reboot.
    inputs: FlightInputs,
    /// Send each vehicle's ground stations the others as ADS-B traffic.
    adsb: bool,
    /// Sim time the next ADS-B traffic is due.
    next_traffic: SimTime,
    /// Collisions already told on stderr.
    collisions_told: usize,
    /// Reboots so far.
    resets: u32,
    /// Why the world could not be built again, as the error to exit with.
    failed: Option<Failure>,
}

impl ServeDriver {
    /// Serves `sessions` (one per pilot, in order); `inputs` make the
    /// world afresh when a ground station reboots a vehicle; with `adsb`,
    /// each vehicle's ground stations get the others as ADS-B traffic.
    fn new(
        sessions: Vec<EndpointLink>,
        pilots: Vec<Pilot>,
        inputs: FlightInputs,
        adsb: bool,
    ) -> Self {
        ServeDriver {
            sessions,
            pilots,
            inputs,
            adsb,
            next_traffic: SimTime::ZERO,
            collisions_told: 0,
            resets: 0,
            failed: None,
        }
    }

    /// A ground station rebooted a vehicle: the world starts over.
    fn reset(&mut self) -> Step<Lockstep> {
        if !self.sessions.iter_mut().any(|s| s.endpoint.take_reset()) {
            return Step::Go;
        }
        let fleet = match build_fleet(&self.inputs) {
            Ok(f) => f,
            Err(e) => {
                let why = e.message.clone();
                self.failed = Some(e);
                return Step::End(Err(why));
            }
        };
        for (s, p) in self.sessions.iter_mut().zip(&fleet.pilots) {
            s.endpoint.rebind(p.status.clone(), p.requests.clone());
        }
        self.pilots = fleet.pilots;
        self.resets += 1;
        self.collisions_told = 0;
        self.next_traffic = SimTime::ZERO;
        Step::Restart(
            Box::new(fleet.lockstep),
            "a ground station rebooted the vehicle".into(),
        )
    }
}

impl Driver<Lockstep> for ServeDriver {
    fn serve(&mut self, ls: &mut Lockstep) -> Step<Lockstep> {
        service_all(&mut self.sessions, &self.pilots, ls.sim());
        self.reset()
    }

    fn idle(&mut self, ls: &mut Lockstep, d: std::time::Duration) -> Step<Lockstep> {
        wait_serving(&mut self.sessions, ls.sim().time(), d);
        self.reset()
    }

    fn after_tick(&mut self, ls: &mut Lockstep, tick: Result<(), SimError>) -> Step<Lockstep> {
        if let Err(e) = tick {
            return Step::End(Err(format!("simulation stopped: {e}")));
        }
        let sim = ls.sim();
        self.collisions_told = tell_collisions(sim, self.collisions_told);
        if self.adsb && sim.time() >= self.next_traffic {
            self.next_traffic = sim.time() + TRAFFIC_PERIOD_US;
            queue_traffic(&mut self.sessions, &self.pilots, sim);
        }
        Step::Go
    }

    fn interrupted(&mut self) -> Result<(), String> {
        Ok(())
    }
}

/// While the simulation waits for the wall clock: every link served, then
/// a wait of up to `d` for the next datagram.
fn wait_serving(sessions: &mut [EndpointLink], now: SimTime, d: std::time::Duration) {
    for s in sessions.iter_mut() {
        s.service(now);
    }
    if let Some(s) = sessions.first() {
        s.wait(d);
    }
}

/// Each vehicle's ground stations get the others as ADS-B traffic.
fn queue_traffic(sessions: &mut [EndpointLink], pilots: &[Pilot], sim: &Simulation) {
    for (s, p) in sessions.iter_mut().zip(pilots) {
        s.queue(traffic_for(p.index, sim));
    }
}

/// Services every vehicle's link: each sees its own cut link fault and
/// throttle.
fn service_all(sessions: &mut [EndpointLink], pilots: &[Pilot], sim: &Simulation) {
    let now = sim.time();
    for (s, p) in sessions.iter_mut().zip(pilots) {
        let v = sim.vehicles().get(p.index);
        s.set_silent(v.is_some_and(|v| v.faults().links.gcs_lost));
        let throttle = sim.actuators(p.index).map_or(0.0, |a| {
            let n = p.motors.max(2);
            a.controls.iter().take(n).map(|u| u.abs()).sum::<f64>() / n as f64
        });
        s.endpoint.set_throttle(throttle);
        s.service(now);
    }
}

/// Says on stderr which vehicles collided since `told`; returns the count.
fn tell_collisions(sim: &Simulation, told: usize) -> usize {
    let Some(m) = sim.encounters() else {
        return told;
    };
    for c in m.collisions().iter().skip(told) {
        eprintln!(
            "collision: {}; both motors stopped",
            mavsitl_analysis::encounters::collision_line(sim, c)
        );
    }
    m.collisions().len()
}
