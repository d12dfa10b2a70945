//! A fleet of SimpleFlight vehicles in one world (`mavsitl fly` with a
//! scenario of several): each followed against its own mission from where
//! it starts, its flight judged as the one-vehicle flight's is.

use mavsitl_analysis::flight::FlightMetrics;
use mavsitl_analysis::route::default_radius_m;
use mavsitl_analysis::Route;
use mavsitl_core::failure::Failure;
use mavsitl_core::time::SimTime;
use mavsitl_core::vehicle::VehicleKind;
use mavsitl_mavlink::mission::Mission;
use mavsitl_sim::scenario::ControllerSpec;
use mavsitl_sim::sim::Simulation;

use crate::setup::{FlightInputs, Pilot};

/// One SimpleFlight vehicle's flight.
pub struct Member {
    /// Its SimpleFlight.
    pub pilot: Pilot,
    /// The vehicle's name.
    pub name: String,
    /// Its mission's name (the file, or the built-in's).
    pub mission_name: String,
    /// Its summary's figures, against its own mission's route.
    pub metrics: FlightMetrics,
    /// When it finished its mission.
    finished_at: Option<SimTime>,
    /// How its flight ended (None: still flying).
    pub outcome: Option<Result<(), String>>,
}

impl Member {
    /// After a tick: samples the metrics and decides whether this flight
    /// is over.
    pub fn follow(&mut self, sim: &Simulation) {
        if self.outcome.is_some() {
            return;
        }
        let i = self.pilot.index;
        let Some(v) = sim.vehicles().get(i) else {
            return;
        };
        let st = self.pilot.status.borrow();
        let on_mission = st.armed && !st.finished && !st.landed;
        self.metrics.sample(sim.tick(), &v.body().state, on_mission);
        let now = sim.time();
        if st.finished && self.finished_at.is_none() {
            self.finished_at = Some(now);
        }
        self.outcome = if sim.is_wrecked(i) {
            Some(Err(mavsitl_analysis::encounters::collision_text(sim, i)))
        } else if let Some(f) = &st.failure {
            Some(Err(f.clone()))
        } else if let Some(c) = &self.metrics.crashed {
            Some(Err(format!("crash: {c} at {now}")))
        } else if (st.landed && !st.armed) || self.finished_at.is_some_and(|t| now - t >= 2_000_000)
        {
            Some(match &st.failsafe {
                Some(fs) if !st.finished => Err(format!("mission not completed: {fs}")),
                _ => Ok(()),
            })
        } else {
            None
        };
    }
}

/// With no vehicle given to SimpleFlight, the first flies the command
/// line's mission (as `fly` flies a one-vehicle scenario).
pub fn give_first_to_simpleflight(inputs: &mut FlightInputs) {
    let any = inputs
        .scenario
        .vehicles
        .iter()
        .any(|v| matches!(v.controller, ControllerSpec::SimpleFlight(_)));
    if let (false, Some(v)) = (any, inputs.scenario.vehicles.first_mut()) {
        v.controller = ControllerSpec::SimpleFlight(Default::default());
    }
}

/// The mission a pilot flies, for its legs and its summary's title.
fn mission_of(inputs: &FlightInputs, index: usize) -> Result<(Mission, String), Failure> {
    let own = inputs
        .scenario
        .vehicles
        .get(index)
        .and_then(|v| match &v.controller {
            ControllerSpec::SimpleFlight(sf) => sf.mission.clone(),
            ControllerSpec::Px4(f) | ControllerSpec::ArduPilot(f) => f.mission.clone(),
            ControllerSpec::Passive(_) => None,
        });
    match own {
        Some(m) => {
            let path = inputs.source.base_dir.join(m);
            let mission = Mission::load(&path)
                .map_err(|e| Failure::input(e.to_string(), "check the scenario's missions"))?;
            Ok((mission, path.display().to_string()))
        }
        None => Ok((inputs.mission.clone(), inputs.mission_name.clone())),
    }
}

/// A SimpleFlight vehicle of the fleet, followed against its own mission
/// from where it starts; the pilot's set-up warnings told on stderr.
///
/// # Errors
/// Its own mission cannot be loaded (exit 2).
pub fn member(inputs: &FlightInputs, sim: &Simulation, pilot: Pilot) -> Result<Member, Failure> {
    let (mission, mission_name) = mission_of(inputs, pilot.index)?;
    for w in &pilot.warnings {
        eprintln!("warning: {mission_name}: {}", w.message);
    }
    let vehicle = sim.vehicles().get(pilot.index);
    let name = vehicle.map_or_else(String::new, |v| v.name().to_string());
    let start = vehicle.map_or_else(nalgebra::Vector2::zeros, |v| v.body().state.pos_ned_m.xy());
    let kind = inputs
        .scenario
        .vehicles
        .get(pilot.index)
        .map_or(VehicleKind::Multirotor, |v| v.kind);
    Ok(Member {
        pilot,
        name,
        mission_name,
        metrics: FlightMetrics::new(
            Route::launched_at(&mission, sim.world().frame(), default_radius_m(kind), start),
            crate::recording::summary_rate(&inputs.scenario),
        ),
        finished_at: None,
        outcome: None,
    })
}
