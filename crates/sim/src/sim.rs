//! The simulation and its one lockstep loop.
//!
//! [`Simulation`] is world + vehicles + clock, and [`Simulation::step`] runs one
//! physics tick for every vehicle. [`Lockstep`] is the loop of the design: each
//! controller interval, (1) the controller hands over actuator commands, (2)
//! physics advances tick by tick, (3) sensors sample, (4) the controller receives
//! the sensor frame. Observers (recorders) watch every tick and never change
//! anything. Time is the integer tick count; the wall clock is never read here.
//!
//! Once running, a tick allocates nothing (zone events, rare, go into a buffer
//! reserved up front).

use thiserror::Error;
use tracing::info;

use crate::encounter::{EncounterMonitor, Placed, DEFAULT_PROXIMITY_M};
use crate::replay::KinematicState;
use crate::team::{Balance, Team};
use crate::vehicle::{NonFiniteState, Vehicle};
use crate::world::{World, ZoneEvent, ZoneTransition};
use mavsitl_core::controller::{Actuators, ControllerError, FlightController, SensorFrame};
use mavsitl_core::faults::{FaultEvent, FaultSchedule};
use mavsitl_core::time::{PhysicsRate, Rate, RateError, SimTime};

/// Why a run stopped early.
#[derive(Debug, Error)]
pub enum SimError {
    /// A vehicle's state stopped being finite.
    #[error(transparent)]
    NonFinite(#[from] NonFiniteState),
    /// A controller failed.
    #[error("controller '{name}' at {time}: {source}")]
    Controller {
        /// The controller's name.
        name: String,
        /// When.
        time: SimTime,
        /// What happened.
        #[source]
        source: ControllerError,
    },
    /// A controller's rate does not fit the physics rate.
    #[error("controller '{name}': {source}")]
    ControllerRate {
        /// The controller's name.
        name: String,
        /// What is wrong.
        #[source]
        source: RateError,
    },
    /// A controller was attached to a vehicle that does not exist.
    #[error("controller '{name}' is attached to vehicle {index}, but there are {count} vehicles")]
    NoSuchVehicle {
        /// The controller's name.
        name: String,
        /// The vehicle index asked for.
        index: usize,
        /// How many vehicles exist.
        count: usize,
    },
    /// An observer (recorder) failed to write.
    #[error("recorder: {0}")]
    Observer(#[from] std::io::Error),
}

impl SimError {
    /// Whether a controller's peer restarted ([`ControllerError::Restarted`]):
    /// the run may start over with it.
    pub fn is_restart(&self) -> bool {
        matches!(
            self,
            SimError::Controller {
                source: ControllerError::Restarted(_),
                ..
            }
        )
    }
}

/// World, vehicles and the clock.
#[derive(Debug, Clone)]
pub struct Simulation {
    world: World,
    vehicles: Vec<Vehicle>,
    commands: Vec<Actuators>,
    rate: PhysicsRate,
    dt_s: f64,
    tick: u64,
    time: SimTime,
    zone_events: Vec<ZoneEvent>,
    faults: FaultSchedule,
    /// Highest mission item reached per vehicle (for `at_item` faults).
    reached: Vec<Option<u32>>,
    /// Pairs of vehicles meeting (with two vehicles or more).
    encounters: Option<EncounterMonitor>,
    /// Every vehicle's place after the tick, for the encounter sweep.
    placed: Vec<Placed>,
    /// Vehicles out of the flight after a collision: their motors stop.
    wrecked: Vec<bool>,
    /// The commands of a wrecked vehicle.
    idle: Actuators,
    /// Each vehicle's zones entered and left in the tick (or its error),
    /// written by the parallel step before they are read in order.
    stepped: Vec<Result<(u64, u64), NonFiniteState>>,
}

impl Simulation {
    /// A simulation at time zero.
    pub fn new(world: World, vehicles: Vec<Vehicle>, rate: PhysicsRate) -> Self {
        let commands = vec![Actuators::default(); vehicles.len()];
        let zones = world.zones().specs().len();
        let encounters = (vehicles.len() > 1).then(|| {
            EncounterMonitor::new(
                vehicles.iter().map(Vehicle::collision_radius_m).collect(),
                DEFAULT_PROXIMITY_M,
            )
        });
        let placed = vehicles
            .iter()
            .map(|v| Placed {
                pos_ned_m: v.body().state.pos_ned_m,
                vel_ned_m_s: v.body().state.vel_ned_m_s,
            })
            .collect();
        Simulation {
            encounters,
            placed,
            wrecked: vec![false; vehicles.len()],
            idle: Actuators::default(),
            world,
            commands,
            rate,
            dt_s: rate.dt_s(),
            tick: 0,
            time: SimTime::ZERO,
            zone_events: Vec::with_capacity(64 + 4 * zones * vehicles.len()),
            faults: FaultSchedule::default(),
            reached: vec![None; vehicles.len()],
            stepped: vec![Ok((0, 0)); vehicles.len()],
            vehicles,
        }
    }

    /// The simulation with pairs of vehicles closer than `proximity_m` (m)
    /// reported as encounters (default [`DEFAULT_PROXIMITY_M`]).
    pub fn with_proximity_m(mut self, proximity_m: f64) -> Self {
        if self.vehicles.len() > 1 {
            self.encounters = Some(EncounterMonitor::new(
                self.vehicles
                    .iter()
                    .map(Vehicle::collision_radius_m)
                    .collect(),
                proximity_m,
            ));
        }
        self
    }

    /// Pairs of vehicles meeting: encounters and collisions (None with one
    /// vehicle).
    pub fn encounters(&self) -> Option<&EncounterMonitor> {
        self.encounters.as_ref()
    }

    /// Whether vehicle `index` is out of the flight after a collision (its
    /// motors stopped).
    pub fn is_wrecked(&self, index: usize) -> bool {
        self.wrecked.get(index).copied().unwrap_or(false)
    }

    /// The simulation with `faults` scheduled.
    pub fn with_faults(mut self, faults: FaultSchedule) -> Self {
        self.faults = faults;
        self
    }

    /// The fault schedule.
    pub fn faults(&self) -> &FaultSchedule {
        &self.faults
    }

    /// Fault starts and ends so far.
    pub fn fault_events(&self) -> &[FaultEvent] {
        self.faults.events()
    }

    /// The highest mission item (0-based) vehicle `index` has reached, as
    /// its controller reported (None: none yet, or no such vehicle).
    pub fn item_reached(&self, index: usize) -> Option<u32> {
        self.reached.get(index).copied().flatten()
    }

    /// Notes that vehicle `index` reached mission item `seq` (0-based).
    pub fn note_item_reached(&mut self, index: usize, seq: u32) {
        if let Some(r) = self.reached.get_mut(index) {
            *r = Some(r.map_or(seq, |old| old.max(seq)));
        }
    }

    /// Starts and ends the faults due now and hands each vehicle its effects.
    fn update_faults(&mut self) {
        if self.faults.is_empty() {
            return;
        }
        let (vehicles, reached) = (&self.vehicles, &self.reached);
        self.faults.update(
            self.time,
            |v| vehicles.get(v).map_or(0, Vehicle::zone_mask),
            |v| reached.get(v).copied().flatten(),
        );
        // Ramps (spoofing, drift, gusts) are evaluated at the tick's end, when
        // the sensors sample.
        let end = self.time + self.rate.period_us();
        for (i, v) in self.vehicles.iter_mut().enumerate() {
            v.set_faults(self.faults.effects(i, end));
        }
    }

    /// The world.
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The vehicles, in scenario order.
    pub fn vehicles(&self) -> &[Vehicle] {
        &self.vehicles
    }

    /// The physics rate.
    pub fn rate(&self) -> PhysicsRate {
        self.rate
    }

    /// Ticks run so far.
    pub fn tick(&self) -> u64 {
        self.tick
    }

    /// Current sim time.
    pub fn time(&self) -> SimTime {
        self.time
    }

    /// The commands vehicle `index` is flying with (ignored if out of range).
    pub fn set_actuators(&mut self, index: usize, actuators: Actuators) {
        if let Some(c) = self.commands.get_mut(index) {
            *c = actuators;
        }
    }

    /// Places vehicle `index` at `state` (ignored if out of range).
    pub fn set_vehicle_state(&mut self, index: usize, state: crate::physics::BodyState) {
        if let Some(v) = self.vehicles.get_mut(index) {
            v.set_state(state);
        }
    }

    /// The geometry cameras and LiDARs see, to change (an object moved).
    pub fn scene_mut(&mut self) -> Option<&mut mavsitl_render::Scene> {
        self.world.scene_mut()
    }

    /// The `lidar`th LiDAR of vehicle `index`, to read its points.
    pub fn lidar_mut(
        &mut self,
        index: usize,
        lidar: usize,
    ) -> Option<&mut crate::sensors::vision::LidarUnit> {
        self.vehicles.get_mut(index)?.lidars_mut().get_mut(lidar)
    }

    /// Sets the mean wind outside zones, NED m/s (a scripted change).
    pub fn set_wind_ned_m_s(&mut self, wind: nalgebra::Vector3<f64>) {
        self.world.set_wind_ned_m_s(wind);
    }

    /// The commands in force for vehicle `index`.
    pub fn actuators(&self, index: usize) -> Option<&Actuators> {
        self.commands.get(index)
    }

    /// Zone entries and exits not yet taken.
    pub fn zone_events(&self) -> &[ZoneEvent] {
        &self.zone_events
    }

    /// Removes and returns the pending zone events.
    pub fn take_zone_events(&mut self) -> Vec<ZoneEvent> {
        std::mem::take(&mut self.zone_events)
    }

    /// Runs one physics tick for every vehicle.
    ///
    /// # Errors
    /// [`SimError::NonFinite`] when a state stops being finite (the simulation
    /// should not be stepped further): the first vehicle's, in scenario order.
    pub fn step(&mut self) -> Result<(), SimError> {
        self.step_vehicles(None)
    }

    /// Steps every vehicle, in turn or shared among `team`'s threads, each
    /// into its place in `stepped`; then takes the zones entered and left,
    /// or the first error, in vehicle order, and runs the encounter sweep.
    /// Each vehicle's tick depends only on its own state, commands and
    /// noise streams and on the world, which no vehicle changes, so the
    /// result is the same to the bit whatever the number of threads.
    fn step_vehicles(&mut self, team: Option<(&mut Team, &mut Balance)>) -> Result<(), SimError> {
        self.update_faults();
        let end = self.time + self.rate.period_us();
        let end_tick = self.tick + 1;
        let (world, wrecked, idle, dt) = (&self.world, &self.wrecked, &self.idle, self.dt_s);
        let commands = &self.commands;
        let one = |i: usize, v: &mut Vehicle, out: &mut _| {
            let cmd = match wrecked.get(i) == Some(&true) {
                true => idle,
                false => &commands[i],
            };
            *out = v.step(world, cmd, dt, end_tick, end);
        };
        let (vehicles, stepped) = (&mut self.vehicles, &mut self.stepped);
        match team {
            Some((team, balance)) => team.for_each_pair(balance, vehicles, stepped, one),
            None => (vehicles.iter_mut().zip(stepped.iter_mut()).enumerate())
                .for_each(|(i, (v, out))| one(i, v, out)),
        }
        for (i, (v, out)) in self.vehicles.iter().zip(&mut self.stepped).enumerate() {
            let (entered, left) = std::mem::replace(out, Ok((0, 0)))?;
            Self::note_zones(
                &self.world,
                &mut self.zone_events,
                self.time,
                i,
                v,
                entered,
                left,
            );
        }
        self.tick += 1;
        self.time = end;
        self.meet();
        Ok(())
    }

    /// After a tick: pairs meeting; a collision takes both vehicles out.
    fn meet(&mut self) {
        let Some(m) = self.encounters.as_mut() else {
            return;
        };
        for (p, v) in self.placed.iter_mut().zip(&self.vehicles) {
            let s = &v.body().state;
            p.pos_ned_m = s.pos_ned_m;
            p.vel_ned_m_s = s.vel_ned_m_s;
        }
        let new = m.update(self.time, &self.placed);
        let all = m.collisions();
        for c in all.iter().skip(all.len() - new) {
            info!(time = %c.time, a = c.a, b = c.b, separation_m = c.separation_m, "collision");
            for i in [c.a, c.b] {
                if let Some(w) = self.wrecked.get_mut(i) {
                    *w = true;
                }
            }
        }
    }

    /// Advances one tick with vehicle `index` placed on `kinematic` instead of
    /// integrated (pose replay); the other vehicles keep their state.
    pub fn step_replay(&mut self, index: usize, kinematic: &KinematicState) {
        self.update_faults();
        let end = self.time + self.rate.period_us();
        let end_tick = self.tick + 1;
        if let Some(v) = self.vehicles.get_mut(index) {
            let (entered, left) = v.step_kinematic(&self.world, kinematic, end_tick, end);
            Self::note_zones(
                &self.world,
                &mut self.zone_events,
                self.time,
                index,
                v,
                entered,
                left,
            );
        }
        self.tick += 1;
        self.time = end;
        self.meet();
    }

    /// Records the zone entries and exits of vehicle `i` at `time`.
    #[allow(clippy::too_many_arguments)]
    fn note_zones(
        world: &World,
        events: &mut Vec<ZoneEvent>,
        time: SimTime,
        i: usize,
        v: &Vehicle,
        entered: u64,
        left: u64,
    ) {
        {
            if entered | left != 0 {
                for (z, spec) in world.zones().specs().iter().enumerate() {
                    let bit = 1u64 << z;
                    let transition = if entered & bit != 0 {
                        ZoneTransition::Enter
                    } else if left & bit != 0 {
                        ZoneTransition::Exit
                    } else {
                        continue;
                    };
                    info!(time = %time, vehicle = v.name(), zone = %spec.name, ?transition, "zone");
                    events.push(ZoneEvent {
                        time,
                        vehicle: i,
                        zone: z,
                        transition,
                    });
                }
            }
        }
    }
}

/// Watches the simulation after every tick (recorders, progress). Never changes it.
pub trait Observer {
    /// Called after each tick.
    ///
    /// # Errors
    /// An I/O error ends the run.
    fn on_tick(&mut self, sim: &Simulation) -> std::io::Result<()>;
}

impl Observer for () {
    fn on_tick(&mut self, _sim: &Simulation) -> std::io::Result<()> {
        Ok(())
    }
}

struct Slot {
    controller: Box<dyn FlightController>,
    vehicle: usize,
    rate: Rate,
    frame: SensorFrame,
    /// This tick's commands, handed over before physics.
    commands: Option<Result<Actuators, ControllerError>>,
    /// This tick's delivery of the sensor frame, after physics, and the
    /// mission item the controller then reported reached.
    delivered: Result<(), ControllerError>,
    reached: Option<u32>,
}

impl Slot {
    /// The commands, if the controller's interval starts at `time`
    /// (`tick`).
    fn hand_over(&mut self, tick: u64, time: SimTime) {
        self.commands = self
            .rate
            .is_due(tick)
            .then(|| self.controller.actuators(time));
    }

    /// Collects the tick's samples of `vehicle` and, when the controller's
    /// interval ends at `time` (`tick`), delivers the frame.
    fn deliver(&mut self, vehicle: &Vehicle, tick: u64, time: SimTime) {
        self.frame.collect(vehicle.samples());
        if !self.rate.is_due(tick) {
            return;
        }
        self.frame.time = time;
        let b = vehicle.battery().state();
        self.frame.battery = Some(mavsitl_core::controller::PowerModuleSample {
            voltage_v: b.voltage_v,
            current_a: b.current_a,
            consumed_mah: b.consumed_mah,
            consumed_j: b.consumed_j,
            remaining: b.remaining,
        });
        self.frame.ground_truth = self
            .controller
            .wants_ground_truth()
            .then(|| vehicle.ground_truth());
        self.frame.links = vehicle.faults().links;
        self.frame.esc = vehicle.esc_sample();
        self.delivered = self.controller.receive(&self.frame);
        self.frame.clear();
        self.reached = self.controller.mission_progress();
    }

    fn error(&self, time: SimTime, source: ControllerError) -> SimError {
        SimError::Controller {
            name: self.controller.name().to_string(),
            time,
            source,
        }
    }
}

/// The ticks a loop's controllers exchange on: the distinct rates of its
/// slots, so that a tick without an exchange is known without reading
/// every slot's rate (a slot lives in the cache of the thread that last
/// worked on it), and its commands and deliveries are not taken.
#[derive(Debug, Clone, Default, PartialEq)]
struct Exchanges {
    rates: Vec<Rate>,
    slots: usize,
}

impl Exchanges {
    /// The exchanges of `slots`.
    fn of(slots: &[Slot]) -> Self {
        let mut rates: Vec<Rate> = Vec::new();
        for s in slots {
            if !rates.contains(&s.rate) {
                rates.push(s.rate);
            }
        }
        Exchanges {
            rates,
            slots: slots.len(),
        }
    }

    /// Whether some controller's interval starts at physics tick `tick`:
    /// its commands are handed over then, and the frame of the interval
    /// before is delivered at the end of tick `tick − 1`.
    fn due(&self, tick: u64) -> bool {
        self.rates.iter().any(|r| r.is_due(tick))
    }

    /// Which of the controllers' stages around physics tick `tick` a
    /// team's threads share: the commands handed over at its start, and
    /// the sensor frames of its end (tick + 1). Each goes to the other
    /// threads when some controller exchanges then (one tick in four for a
    /// 250 Hz controller at 1 kHz physics, every tick at 250 Hz). On the
    /// other ticks there are no commands, and collecting the samples is a
    /// copy a slot, cheaper than a hand-over below `PARALLEL_COLLECT_MIN`
    /// slots.
    fn handed_out(&self, tick: u64) -> (bool, bool) {
        (
            self.due(tick),
            self.slots >= PARALLEL_COLLECT_MIN || self.due(tick + 1),
        )
    }
}

/// The lockstep loop: a simulation and the controllers flying its vehicles.
pub struct Lockstep {
    sim: Simulation,
    slots: Vec<Slot>,
    /// The threads the vehicles and their controllers are stepped on
    /// (None: the calling thread alone), with how each stage splits.
    team: Option<(Team, Stages)>,
    /// The ticks `slots` exchange on.
    exchanges: Exchanges,
}

/// How each of a tick's stages splits its items among a team.
#[derive(Debug, Default)]
struct Stages {
    commands: Balance,
    physics: Balance,
    frames: Balance,
}

/// The fewest controllers whose samples are collected on several threads
/// on a tick without an exchange.
const PARALLEL_COLLECT_MIN: usize = 500;

/// The fewest vehicles a world steps on several threads by default: below
/// it, handing a tick's work to other threads costs more than it saves.
pub const PARALLEL_MIN_VEHICLES: usize = 100;

/// The threads a world of `vehicles` is stepped on when nobody says: every
/// core the process may use from [`PARALLEL_MIN_VEHICLES`] vehicles on, else
/// one.
pub fn default_threads(vehicles: usize) -> usize {
    if vehicles < PARALLEL_MIN_VEHICLES {
        return 1;
    }
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// Threads that could not be started.
#[derive(Debug, Error)]
#[error("cannot start {threads} threads: {source}")]
pub struct ThreadsError {
    /// How many were asked for.
    pub threads: usize,
    #[source]
    source: std::io::Error,
}

impl Lockstep {
    /// A loop around `sim` with no controllers yet.
    pub fn new(sim: Simulation) -> Self {
        Lockstep {
            sim,
            slots: Vec::new(),
            team: None,
            exchanges: Exchanges::default(),
        }
    }

    /// Steps the vehicles and their controllers on `threads` threads (1:
    /// the calling thread alone, the default): the thread that ticks and
    /// `threads − 1` workers named `mavsitl-step-1`, … Each stage of a
    /// tick gives every thread a contiguous share of the vehicles and
    /// controllers, the same tick after tick but for the few at the edge
    /// of the ticking thread's share, which adapts (`team::Balance`). The
    /// run is the same to the bit whatever the number.
    ///
    /// # Errors
    /// [`ThreadsError`] when the threads cannot be started.
    pub fn set_threads(&mut self, threads: usize) -> Result<(), ThreadsError> {
        // A team that cannot be started leaves the threads as they were.
        self.team = match threads {
            0 | 1 => None,
            n => Some((
                Team::new(n).map_err(|source| ThreadsError { threads, source })?,
                Stages::default(),
            )),
        };
        Ok(())
    }

    /// The threads the vehicles are stepped on, the ticking one included.
    pub fn threads(&self) -> usize {
        self.team.as_ref().map_or(1, |(team, _)| team.threads())
    }

    /// Attaches `controller` to vehicle `vehicle`.
    ///
    /// # Errors
    /// [`SimError`] when the vehicle does not exist or the controller's rate does
    /// not divide the physics rate.
    pub fn attach(
        &mut self,
        vehicle: usize,
        controller: Box<dyn FlightController>,
    ) -> Result<(), SimError> {
        if vehicle >= self.sim.vehicles.len() {
            return Err(SimError::NoSuchVehicle {
                name: controller.name().to_string(),
                index: vehicle,
                count: self.sim.vehicles.len(),
            });
        }
        let rate = self
            .sim
            .rate
            .divider(controller.rate_hz())
            .map_err(|source| SimError::ControllerRate {
                name: controller.name().to_string(),
                source,
            })?;
        self.slots.push(Slot {
            controller,
            vehicle,
            rate,
            frame: SensorFrame::default(),
            commands: None,
            delivered: Ok(()),
            reached: None,
        });
        self.exchanges = Exchanges::of(&self.slots);
        Ok(())
    }

    /// Detaches every controller of vehicle `vehicle` (e.g. to attach a new
    /// bridge when the firmware restarted but the simulation goes on).
    pub fn detach(&mut self, vehicle: usize) {
        self.slots.retain(|s| s.vehicle != vehicle);
        self.exchanges = Exchanges::of(&self.slots);
    }

    /// The simulation.
    pub fn sim(&self) -> &Simulation {
        &self.sim
    }

    /// Mutable access to the simulation (between runs).
    pub fn sim_mut(&mut self) -> &mut Simulation {
        &mut self.sim
    }

    /// The simulation, its controllers dropped (the run over).
    pub fn into_sim(self) -> Simulation {
        self.sim
    }

    /// Runs until sim time reaches `end` (or the first error).
    ///
    /// # Errors
    /// [`SimError`] from physics, a controller or an observer.
    pub fn run_until(&mut self, end: SimTime, observer: &mut dyn Observer) -> Result<(), SimError> {
        while self.sim.time < end {
            self.tick(observer)?;
        }
        Ok(())
    }

    /// One physics tick with the controller exchanges due around it.
    ///
    /// # Errors
    /// [`SimError`] from physics, a controller or an observer.
    pub fn tick(&mut self, observer: &mut dyn Observer) -> Result<(), SimError> {
        let ex = &self.exchanges;
        Self::exchange(&mut self.sim, &mut self.slots, ex, self.team.as_mut())?;
        observer.on_tick(&self.sim)?;
        Ok(())
    }

    /// The tick's commands, physics and sensor frames, each stage over every
    /// slot or vehicle shared among `team`'s threads or in turn; then what
    /// the stage produced is taken in slot order, so that the first error
    /// and the order of effects do not depend on the threads. On a tick
    /// without an exchange (`exchanges`) there is nothing to hand over or
    /// take, and the samples are only collected.
    fn exchange(
        sim: &mut Simulation,
        slots: &mut [Slot],
        exchanges: &Exchanges,
        mut team: Option<&mut (Team, Stages)>,
    ) -> Result<(), SimError> {
        let (tick, time) = (sim.tick, sim.time);
        let (commands_out, frames_out) = match team {
            Some(_) => exchanges.handed_out(tick),
            None => (false, false),
        };
        if exchanges.due(tick) {
            let hand_over = |_, s: &mut Slot| s.hand_over(tick, time);
            match team.as_deref_mut().filter(|_| commands_out) {
                Some((team, st)) => team.for_each(&mut st.commands, slots, hand_over),
                None => slots.iter_mut().for_each(|s| hand_over(0, s)),
            }
            Self::take_commands(sim, slots, time)?;
        }
        sim.step_vehicles(team.as_deref_mut().map(|(t, st)| (t, &mut st.physics)))?;
        let (vehicles, end) = (&sim.vehicles, sim.time);
        let deliver = |_, s: &mut Slot| s.deliver(&vehicles[s.vehicle], tick + 1, end);
        match team.filter(|_| frames_out) {
            Some((team, st)) => team.for_each(&mut st.frames, slots, deliver),
            None => slots.iter_mut().for_each(|s| deliver(0, s)),
        }
        match exchanges.due(tick + 1) {
            true => Self::take_deliveries(sim, slots, end),
            false => Ok(()),
        }
    }

    /// Puts every slot's commands in force, in slot order; then the first
    /// controller's error, if any.
    fn take_commands(
        sim: &mut Simulation,
        slots: &mut [Slot],
        time: SimTime,
    ) -> Result<(), SimError> {
        let mut first = Ok(());
        for slot in slots.iter_mut() {
            match slot.commands.take() {
                Some(Ok(a)) => sim.set_actuators(slot.vehicle, a),
                Some(Err(e)) if first.is_ok() => first = Err(slot.error(time, e)),
                _ => {}
            }
        }
        first
    }

    /// Notes every mission item the controllers reported reached, in slot
    /// order; then the first delivery's error, if any.
    fn take_deliveries(
        sim: &mut Simulation,
        slots: &mut [Slot],
        end: SimTime,
    ) -> Result<(), SimError> {
        let mut first = Ok(());
        for slot in slots.iter_mut() {
            if let Some(seq) = slot.reached.take() {
                sim.note_item_reached(slot.vehicle, seq);
            }
            if let Err(e) = std::mem::replace(&mut slot.delivered, Ok(())) {
                if first.is_ok() {
                    first = Err(slot.error(end, e));
                }
            }
        }
        first
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mavsitl_core::controller::{Passive, PassiveSpec};

    fn slots(dividers: &[u32]) -> Vec<Slot> {
        let physics = PhysicsRate::DEFAULT;
        dividers
            .iter()
            .map(|&d| Slot {
                controller: Box::new(Passive::new(&PassiveSpec {
                    rate_hz: physics.hz() / d,
                    controls: Vec::new(),
                })),
                vehicle: 0,
                rate: physics.divider(physics.hz() / d).expect("a divider"),
                frame: SensorFrame::default(),
                commands: None,
                delivered: Ok(()),
                reached: None,
            })
            .collect()
    }

    /// At 250 Hz on 1 kHz physics the commands go out on ticks 0, 4, 8, …
    /// and the frames come in at their ends, ticks 3, 7, …; with a 200 Hz
    /// controller beside, on its ticks too; from 500 slots on the frames'
    /// samples are collected on the team every tick.
    #[test]
    fn the_controllers_stages_are_shared_on_exchange_ticks() {
        let ex = |d: &[u32]| Exchanges::of(&slots(d));
        let few = ex(&[4, 4, 4]);
        assert_eq!(few.rates.len(), 1);
        let got: Vec<_> = (0..9).map(|t| few.handed_out(t)).collect();
        let (c, f) = (true, true);
        let want = [
            (c, !f),
            (!c, !f),
            (!c, !f),
            (!c, f),
            (c, !f),
            (!c, !f),
            (!c, !f),
            (!c, f),
            (c, !f),
        ];
        assert_eq!(got, want);
        let mixed = ex(&[4, 5, 4]);
        assert_eq!(mixed.rates.len(), 2);
        let got = [4, 5, 9, 13, 19].map(|t| mixed.handed_out(t));
        assert_eq!(got, [(c, f), (c, !f), (!c, f), (!c, !f), (!c, f)]);
        assert_eq!(
            [4, 5, 6, 8, 10].map(|t| mixed.due(t)),
            [true, true, false, true, true]
        );
        let many = slots(&[4; PARALLEL_COLLECT_MIN]);
        assert_eq!(Exchanges::of(&many).handed_out(1), (!c, f));
        assert_eq!(Exchanges::of(&many[1..]).handed_out(1), (!c, !f));
        assert_eq!(Exchanges::of(&[]), Exchanges::default());
        assert!(!Exchanges::default().due(0));
    }
}
