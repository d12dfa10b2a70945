//! Setting up a SimpleFlight run: a mission, a scenario and parameters in, the
//! lockstep loop with SimpleFlight attached out. Shared by `mavsitl fly` and the
//! benchmarks, so both run exactly the same thing.
//!
//! This is the one place where the autopilot meets the simulator's types: it
//! turns the scenario's airframe into the [`VehicleConfig`] SimpleFlight is
//! tuned with. The rest of `autopilot` never touches `physics`.

use mavsitl_mavlink::mission::Mission;
use mavsitl_mavlink::mission::MissionError;
use mavsitl_sim::physics::boat::{BoatLayout, BoatParams};
use mavsitl_sim::physics::multirotor::MultirotorParams;
use mavsitl_sim::physics::rover::{RoverDrive, RoverParams};
use mavsitl_sim::scenario::load::Airframe;
use mavsitl_sim::scenario::VehicleKind;
use mavsitl_sim::scenario::{ControllerSpec, Scenario, ScenarioError, ScenarioSource};
use mavsitl_sim::sim::{Lockstep, SimError};
use mavsitl_sim::world::atmosphere::RHO0_KG_M3;
use mavsitl_simpleflight::airframe::{MotorConfig, MulticopterAirframe, UgvOutputs};
use mavsitl_simpleflight::gcs::{Endpoint, EndpointConfig};
use mavsitl_simpleflight::geofence::{rally_points, Geofence};
use mavsitl_simpleflight::mission_plan::PlanError;
use mavsitl_simpleflight::mission_plan::{compile, PlanWarning, Step};
use mavsitl_simpleflight::params::{name, ParamError, ParamStore};
use mavsitl_simpleflight::{
    RequestQueue, SimpleFlight, SimpleFlightConfig, StatusHandle, VehicleConfig,
};

/// Why a flight could not be set up. Each reads as one line naming the file,
/// vehicle or key and what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The scenario does not build.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// A controller could not be attached.
    #[error(transparent)]
    Sim(#[from] SimError),
    /// A parameter file or a default parameter is refused.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// The mission cannot be flown.
    #[error("{mission}: {source}")]
    Plan {
        /// The mission's name.
        mission: String,
        /// What is wrong with it.
        source: PlanError,
    },
    /// A vehicle's own mission file is unreadable.
    #[error("{file}: vehicles[{index}].controller.mission: {source}")]
    VehicleMission {
        /// The scenario file.
        file: String,
        /// The vehicle's index.
        index: usize,
        /// Why.
        source: MissionError,
    },
    /// A vehicle's own parameter file is unreadable.
    #[error("{file}: vehicles[{index}].controller.params: {path}: {source}")]
    VehicleParams {
        /// The scenario file.
        file: String,
        /// The vehicle's index.
        index: usize,
        /// The parameter file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// Setting up one vehicle of a fleet failed.
    #[error("vehicle '{vehicle}': {source}")]
    Vehicle {
        /// Its name.
        vehicle: String,
        /// Why.
        source: Box<SetupError>,
    },
}

/// A flight ready to run.
pub struct Flight {
    /// The loop, SimpleFlight attached to vehicle 0.
    pub lockstep: Lockstep,
    /// SimpleFlight's status.
    pub status: StatusHandle,
    /// The kind of vehicle.
    pub kind: VehicleKind,
    /// Motors (multicopter) or 0.
    pub motors: usize,
    /// Mission items SimpleFlight will perform (skipped ones excluded).
    pub total_items: usize,
    /// Items that will be skipped, with why.
    pub warnings: Vec<PlanWarning>,
    /// The parameters in force.
    pub params: ParamStore,
    /// Where ground-station requests go.
    pub requests: RequestQueue,
}

impl Flight {
    /// This flight's ground-station endpoint, presented as PX4 vehicle 1
    /// (sim time 0 at the Unix epoch), with `mission` already stored (the
    /// mission the flight was prepared with, if any).
    pub fn endpoint(&self, mission: Option<&Mission>) -> Endpoint {
        let frame = *self.lockstep.sim().world().frame();
        Endpoint::new(
            EndpointConfig::px4_vehicle(1, self.kind, self.motors, frame, 0),
            self.status.clone(),
            self.requests.clone(),
            self.params.clone(),
            mission,
        )
    }
}

/// SimpleFlight's boat identity: a surface boat (MAVLink type 11), PX4's
/// boat airframe number.
pub const BOAT_DEFAULTS: &[(&str, f64)] = &[(name::MAV_TYPE, 11.0), (name::SYS_AUTOSTART, 1070.0)];

/// mavsitl's ArduPilot Rover parameters for the twin-thruster boats (skid
/// steering), `firmware_configs/ardupilot/boat.parm`.
pub const ARDUPILOT_BOAT_PARM: &str = include_str!("../../../firmware_configs/ardupilot/boat.parm");
/// mavsitl's ArduPilot Rover parameters for the rudder boat,
/// `firmware_configs/ardupilot/boat_rudder.parm`.
pub const ARDUPILOT_BOAT_RUDDER_PARM: &str =
    include_str!("../../../firmware_configs/ardupilot/boat_rudder.parm");
/// mavsitl's ArduPilot Rover parameters for the Otter,
/// `firmware_configs/ardupilot/otter.parm`.
pub const ARDUPILOT_OTTER_PARM: &str =
    include_str!("../../../firmware_configs/ardupilot/otter.parm");

/// SimpleFlight's skid-steer rover identity: a ground rover (MAVLink type
/// 10), PX4's differential rover airframe number.
pub const ROVER_SKID_DEFAULTS: &[(&str, f64)] =
    &[(name::MAV_TYPE, 10.0), (name::SYS_AUTOSTART, 50000.0)];
/// SimpleFlight's Ackermann rover identity: a ground rover, PX4's Ackermann
/// rover airframe number.
pub const ROVER_ACKERMANN_DEFAULTS: &[(&str, f64)] =
    &[(name::MAV_TYPE, 10.0), (name::SYS_AUTOSTART, 51000.0)];

/// mavsitl's ArduPilot Rover parameters for the skid-steer rovers,
/// `firmware_configs/ardupilot/rover_skid.parm`.
pub const ARDUPILOT_ROVER_SKID_PARM: &str =
    include_str!("../../../firmware_configs/ardupilot/rover_skid.parm");
/// mavsitl's ArduPilot Rover parameters for the Ackermann rovers,
/// `firmware_configs/ardupilot/rover_ackermann.parm`.
pub const ARDUPILOT_ROVER_ACKERMANN_PARM: &str =
    include_str!("../../../firmware_configs/ardupilot/rover_ackermann.parm");

/// The ArduPilot Rover parameter file for a ground rover that drives as
/// `drive`, as (text, path): what ArduPilot drives it with, and
/// SimpleFlight's rover defaults (Rover's defaults with this file applied).
pub fn ardupilot_rover_parm(drive: RoverDrive) -> (&'static str, &'static str) {
    match drive {
        RoverDrive::SkidSteer => (
            ARDUPILOT_ROVER_SKID_PARM,
            "firmware_configs/ardupilot/rover_skid.parm",
        ),
        RoverDrive::Ackermann => (
            ARDUPILOT_ROVER_ACKERMANN_PARM,
            "firmware_configs/ardupilot/rover_ackermann.parm",
        ),
    }
}

/// The ArduPilot Rover parameter file for a boat of `airframe` (a shipped
/// name, or a file) and `layout`, as (text, path): what ArduPilot flies the
/// boat with, and SimpleFlight's boat defaults (Rover's defaults with this
/// file applied, so both autopilots start from the same tuning). The Otter
/// has its own; other twin-thruster hulls get usv_twin's, rudder boats
/// usv_rudder's.
pub fn ardupilot_boat_parm(airframe: &str, layout: BoatLayout) -> (&'static str, &'static str) {
    match (airframe, layout) {
        ("otter_usv", _) => (
            ARDUPILOT_OTTER_PARM,
            "firmware_configs/ardupilot/otter.parm",
        ),
        (_, BoatLayout::TwinThrusters) => {
            (ARDUPILOT_BOAT_PARM, "firmware_configs/ardupilot/boat.parm")
        }
        (_, BoatLayout::ThrottleRudder) => (
            ARDUPILOT_BOAT_RUDDER_PARM,
            "firmware_configs/ardupilot/boat_rudder.parm",
        ),
    }
}

/// Prepares a flight of `mission` in `scenario` (vehicle 0). `param_file`, if
/// given, is (text, name) of a parameter file applied over the defaults.
/// With `auto_arm` SimpleFlight arms itself and flies the mission; without,
/// it waits for a ground station. Either way a multicopter mission without a
/// take-off item starts with a climb to its first waypoint's altitude, as PX4
/// does.
///
/// # Errors
/// One line saying what is wrong (scenario, parameters or mission).
pub fn flight(
    mission: &Mission,
    mission_name: &str,
    scenario: &Scenario,
    source: &ScenarioSource,
    param_file: Option<(&str, &str)>,
    auto_arm: bool,
) -> Result<Flight, SetupError> {
    let sim = scenario.build_simulation(source)?;
    let plan = PilotPlan {
        mission,
        mission_name,
        param_file,
        auto_arm,
    };
    let (sf, pilot) = simpleflight_for(0, &plan, scenario, source, &sim)?;
    let mut lockstep = Lockstep::new(sim);
    lockstep.attach(0, Box::new(sf))?;
    Ok(Flight {
        lockstep,
        status: pilot.status,
        kind: pilot.kind,
        motors: pilot.motors,
        total_items: pilot.total_items,
        warnings: pilot.warnings,
        params: pilot.params,
        requests: pilot.requests,
    })
}

/// What one SimpleFlight is to fly: a mission, parameters, whether it arms
/// itself.
#[derive(Debug, Clone, Copy)]
pub struct PilotPlan<'a> {
    /// The mission.
    pub mission: &'a Mission,
    /// Its name, for messages.
    pub mission_name: &'a str,
    /// A parameter file over the defaults: (text, name).
    pub param_file: Option<(&'a str, &'a str)>,
    /// Arm and fly the mission without a ground station.
    pub auto_arm: bool,
}

/// One SimpleFlight vehicle, seen from outside.
pub struct Pilot {
    /// The vehicle's index in the scenario.
    pub index: usize,
    /// SimpleFlight's status.
    pub status: StatusHandle,
    /// Where ground-station requests go.
    pub requests: RequestQueue,
    /// The kind of vehicle.
    pub kind: VehicleKind,
    /// Motors (multicopter) or 0.
    pub motors: usize,
    /// Mission items SimpleFlight will perform (skipped ones excluded).
    pub total_items: usize,
    /// Items that will be skipped, with why.
    pub warnings: Vec<PlanWarning>,
    /// The parameters in force.
    pub params: ParamStore,
}

/// SimpleFlight for vehicle `index` of `sim` (built from `scenario`),
/// flying `plan`.
fn simpleflight_for(
    index: usize,
    plan: &PilotPlan,
    scenario: &Scenario,
    source: &ScenarioSource,
    sim: &mavsitl_sim::sim::Simulation,
) -> Result<(SimpleFlight, Pilot), SetupError> {
    let (vehicle, ugv_parm) = match scenario.resolve_airframe(index, source)? {
        Airframe::Multirotor(p) => (VehicleConfig::Multirotor(multicopter_airframe(&p)), None),
        Airframe::Boat(p) => (
            VehicleConfig::Boat(boat_outputs(&p)),
            Some((
                BOAT_DEFAULTS,
                ardupilot_boat_parm(
                    scenario
                        .vehicles
                        .get(index)
                        .map_or("", |v| v.airframe.as_str()),
                    p.layout,
                ),
            )),
        ),
        Airframe::Rover(p) => (
            VehicleConfig::Rover(rover_outputs(&p)),
            Some((
                match p.drive {
                    RoverDrive::SkidSteer => ROVER_SKID_DEFAULTS,
                    RoverDrive::Ackermann => ROVER_ACKERMANN_DEFAULTS,
                },
                ardupilot_rover_parm(p.drive),
            )),
        ),
    };
    let kind = match vehicle {
        VehicleConfig::Multirotor(_) => VehicleKind::Multirotor,
        VehicleConfig::Boat(_) => VehicleKind::Boat,
        VehicleConfig::Rover(_) => VehicleKind::Rover,
    };
    let motors = match &vehicle {
        VehicleConfig::Multirotor(a) => a.motors.len(),
        VehicleConfig::Boat(_) | VehicleConfig::Rover(_) => 0,
    };
    let mut params = ParamStore::default();
    if let Some((identity, (text, name))) = ugv_parm {
        for (n, v) in identity {
            params.set(n, *v)?;
        }
        params.load(text, name)?;
    }
    if let Some(hs) = plan
        .mission
        .hover_speed_m_s
        .filter(|_| kind.is_multirotor())
    {
        let _ = params.set(name::MPC_XY_CRUISE, hs.clamp(0.5, 20.0));
    }
    if let Some((text, name)) = plan.param_file {
        for (line, n, v) in param_lines(text) {
            if let Some(why) = mavsitl_core::vehicle::frame_problem([(n, v)], kind) {
                return Err(ParamError::File {
                    file: name.to_string(),
                    line,
                    message: why,
                }
                .into());
            }
        }
        let loaded = params.load(text, name)?;
        if !loaded.ignored.is_empty() {
            tracing::warn!(
                "{name}: SimpleFlight ignores {} firmware parameter(s) it has no use for: {}",
                loaded.ignored.len(),
                loaded.ignored.join(", ")
            );
        }
    }
    let frame = *sim.world().frame();
    let radius = params.values().nav_acc_rad;
    let (steps, warnings) = compile(plan.mission, &frame, scenario.home.alt_m, kind, radius)
        .map_err(|source| SetupError::Plan {
            mission: plan.mission_name.to_string(),
            source,
        })?;
    let total_items = steps
        .iter()
        .filter(|s| !matches!(s, Step::Skip { .. }))
        .count();
    let date = scenario.date.date();
    let initial_down_m = sim
        .vehicles()
        .get(index)
        .map_or(0.0, |v| v.body().state.pos_ned_m.z);
    let (sf, status) = SimpleFlight::new(SimpleFlightConfig {
        vehicle,
        home: frame.origin(),
        date,
        params: params.clone(),
        initial_down_m,
        mission: steps,
        auto_arm: plan.auto_arm,
        geofence: Geofence::from_items(&plan.mission.fence, &frame),
        rally: rally_points(&plan.mission.rally, &frame),
    });
    let requests = sf.request_queue();
    Ok((
        sf,
        Pilot {
            index,
            status,
            requests,
            kind,
            motors,
            total_items,
            warnings,
            params,
        },
    ))
}

/// A fleet ready to run: every vehicle of the scenario flown by its
/// controller — SimpleFlight with its own mission and parameters, or the
/// passive one — in one lockstep loop.
pub struct Fleet {
    /// The loop.
    pub lockstep: Lockstep,
    /// The SimpleFlight vehicles, in scenario order.
    pub pilots: Vec<Pilot>,
}

/// Prepares every vehicle of `scenario`: those whose controller is
/// `simpleflight` fly their own mission with their own parameter file (paths
/// relative to the scenario file), else `default`'s (the command line's);
/// the passive ones hold their commands; firmware vehicles get nothing
/// attached (the caller attaches their bridges). `default.auto_arm`
/// applies to all.
///
/// # Errors
/// One line naming the vehicle and what is wrong.
pub fn fleet(
    scenario: &Scenario,
    source: &ScenarioSource,
    default: &PilotPlan,
) -> Result<Fleet, SetupError> {
    let sim = scenario.build_simulation(source)?;
    let mut controllers: Vec<(usize, Box<dyn mavsitl_core::controller::FlightController>)> =
        Vec::new();
    let mut pilots = Vec::new();
    for (i, spec) in scenario.vehicles.iter().enumerate() {
        match &spec.controller {
            ControllerSpec::Passive(p) => {
                controllers.push((i, Box::new(mavsitl_core::controller::Passive::new(p))))
            }
            // Firmware: its bridge is attached by whoever starts it.
            ControllerSpec::Px4(_) | ControllerSpec::ArduPilot(_) => {}
            ControllerSpec::SimpleFlight(sf) => {
                let own = match &sf.mission {
                    Some(m) => {
                        let path = source.base_dir.join(m);
                        let mission =
                            Mission::load(&path).map_err(|e| SetupError::VehicleMission {
                                file: source.name.clone(),
                                index: i,
                                source: e,
                            })?;
                        Some((mission, path.display().to_string()))
                    }
                    None => None,
                };
                let (mission, name) = match &own {
                    Some((m, n)) => (m, n.as_str()),
                    None => (default.mission, default.mission_name),
                };
                let text = match &sf.params {
                    Some(p) => {
                        let path = source.base_dir.join(p);
                        let text = std::fs::read_to_string(&path).map_err(|e| {
                            SetupError::VehicleParams {
                                file: source.name.clone(),
                                index: i,
                                path: path.display().to_string(),
                                source: e,
                            }
                        })?;
                        Some((text, path.display().to_string()))
                    }
                    None => None,
                };
                let plan = PilotPlan {
                    mission,
                    mission_name: name,
                    param_file: match &text {
                        Some((t, n)) => Some((t.as_str(), n.as_str())),
                        None => default.param_file,
                    },
                    auto_arm: default.auto_arm,
                };
                let (sf, pilot) =
                    simpleflight_for(i, &plan, scenario, source, &sim).map_err(|e| {
                        SetupError::Vehicle {
                            vehicle: spec.name.clone(),
                            source: Box::new(e),
                        }
                    })?;
                controllers.push((i, Box::new(sf)));
                pilots.push(pilot);
            }
        }
    }
    let mut lockstep = Lockstep::new(sim);
    for (i, c) in controllers {
        lockstep.attach(i, c)?;
    }
    Ok(Fleet { lockstep, pilots })
}

/// What a multicopter's autopilot is told of a simulated airframe: rotor
/// positions and spins, mass, inertia, the rotor's torque-to-thrust ratio and
/// its full thrust in sea-level standard air.
pub fn multicopter_airframe(p: &MultirotorParams) -> MulticopterAirframe {
    MulticopterAirframe {
        mass_kg: p.mass_kg,
        inertia_kg_m2: p.inertia_kg_m2,
        motors: p
            .rotor_geometry()
            .iter()
            .map(|(pos, spin)| MotorConfig {
                pos_frd_m: pos.xy(),
                yaw_sign: spin.yaw_sign(),
            })
            .collect(),
        torque_per_thrust_m: p.power_coefficient * p.propeller_diameter_m
            / (std::f64::consts::TAU * p.thrust_coefficient),
        max_thrust_per_motor_n: p.max_thrust_n(RHO0_KG_M3),
    }
}

/// The output channels of a simulated boat.
pub fn boat_outputs(p: &BoatParams) -> UgvOutputs {
    match p.layout {
        BoatLayout::TwinThrusters => UgvOutputs::Differential {
            left: p.left_channel,
            right: p.right_channel,
            rudder: (p.rudder_area_m2 > 0.0).then_some(p.rudder_channel),
        },
        BoatLayout::ThrottleRudder => UgvOutputs::ThrottleRudder {
            throttle: p.throttle_channel,
            steering: p.steering_channel,
        },
    }
}

/// The (line from 1, name, value) of a parameter file's lines: `NAME
/// VALUE` or QGroundControl's five columns; comments and other lines left
/// out.
fn param_lines(text: &str) -> impl Iterator<Item = (usize, &str, &str)> {
    text.lines().enumerate().filter_map(|(i, raw)| {
        let line = raw.split('#').next().unwrap_or("");
        let fields: Vec<&str> = line
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|s| !s.is_empty())
            .collect();
        match fields.as_slice() {
            [name, value] | [_, _, name, value, _] => Some((i + 1, *name, *value)),
            _ => None,
        }
    })
}

/// The output channels of a simulated ground rover.
pub fn rover_outputs(p: &RoverParams) -> UgvOutputs {
    match p.drive {
        RoverDrive::SkidSteer => UgvOutputs::Differential {
            left: p.left_channel,
            right: p.right_channel,
            rudder: None,
        },
        RoverDrive::Ackermann => UgvOutputs::ThrottleRudder {
            throttle: p.throttle_channel,
            steering: p.steering_channel,
        },
    }
}

/// What a flight is made of: the mission, the scenario it flies in and the
/// parameter file, resolved and checked.
#[derive(Debug, Clone)]
pub struct FlightInputs {
    /// The mission.
    pub mission: Mission,
    /// Its name for messages and titles (the file, or the built-in's).
    pub mission_name: String,
    /// The scenario.
    pub scenario: Scenario,
    /// Where the scenario came from (its paths are relative to it).
    pub source: ScenarioSource,
    /// The parameter file, if any: (text, name).
    pub param_text: Option<(String, String)>,
}

impl FlightInputs {
    /// The kind of vehicle `index` (a multirotor for a vehicle not there).
    pub fn kind(&self, index: usize) -> VehicleKind {
        self.scenario
            .vehicles
            .get(index)
            .map_or(VehicleKind::Multirotor, |v| v.kind)
    }

    /// The parameter file as (text, name).
    pub fn params(&self) -> Option<(&str, &str)> {
        self.param_text
            .as_ref()
            .map(|(t, n)| (t.as_str(), n.as_str()))
    }
}
