//! SimpleFlight served to ground stations (`mavsitl serve`): the run loop's
//! driver for N served vehicles — each one's link serviced with its own
//! link faults and throttle, ADS-B traffic of the others, collisions told on
//! stderr, and a fresh world when a ground station reboots a vehicle.

use mavsitl_core::failure::Failure;
use mavsitl_core::time::SimTime;
use mavsitl_mavlink::traffic::TRAFFIC_PERIOD_US;
use mavsitl_sim::sim::{Lockstep, SimError, Simulation};

use std::path::Path;

use crate::endpoint::{EndpointLink, EndpointParts, LinkChoice};
use crate::session::{Driver, Step};
use crate::setup::FlightInputs;
use crate::setup::{Fleet, Pilot};
use crate::traffic::traffic_for;
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
pub struct ServeDriver<'a> {
    /// Each vehicle's ground-station link, in vehicle order.
    pub sessions: Vec<EndpointLink>,
    /// Each vehicle's SimpleFlight.
    pilots: Vec<Pilot>,
    /// Builds the world afresh (a reboot).
    rebuild: &'a dyn Fn() -> Result<Fleet, Failure>,
    /// Send each vehicle's ground stations the others as ADS-B traffic.
    adsb: bool,
    /// Sim time the next ADS-B traffic is due.
    next_traffic: SimTime,
    /// Collisions already told on stderr.
    collisions_told: usize,
    /// Reboots so far.
    pub resets: u32,
    /// Why the world could not be built again, as the error to exit with.
    pub failed: Option<Failure>,
}

impl<'a> ServeDriver<'a> {
    /// Serves `sessions` (one per pilot, in order); `rebuild` makes the
    /// world afresh when a ground station reboots a vehicle; with `adsb`,
    /// each vehicle's ground stations get the others as ADS-B traffic.
    pub fn new(
        sessions: Vec<EndpointLink>,
        pilots: Vec<Pilot>,
        rebuild: &'a dyn Fn() -> Result<Fleet, Failure>,
        adsb: bool,
    ) -> Self {
        ServeDriver {
            sessions,
            pilots,
            rebuild,
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
        let fleet = match (self.rebuild)() {
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

impl Driver<Lockstep> for ServeDriver<'_> {
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
