//! Building the simulation a scenario describes.

use nalgebra::{UnitQuaternion, Vector3};

use super::load::Airframe;
use super::{ControllerSpec, InitialPose, Scenario, ScenarioError, ScenarioSource};
use crate::physics::{Boat, BodyState, Multirotor, RigidBody, Rover};
use crate::sensors::Sensors;
use crate::sim::{Lockstep, Simulation};
use crate::vehicle::{Vehicle, VehicleModel};
use crate::world::{World, SEA_WATER_DENSITY_KG_M3};
use mavsitl_core::controller::{FlightController, Passive};
use mavsitl_core::faults::FaultSchedule;
use mavsitl_core::geo::{GeoPoint, LocalFrame};
use mavsitl_core::time::PhysicsRate;

impl Scenario {
    /// The home point as a geodetic point.
    pub fn home_point(&self) -> GeoPoint {
        GeoPoint::from_deg(self.home.lat_deg, self.home.lon_deg, self.home.alt_m)
    }

    /// The world this scenario describes.
    pub fn world(&self) -> World {
        let env = &self.environment;
        let mut world = World::new(
            LocalFrame::new(self.home_point()),
            env.gravity,
            env.wind,
            env.current,
            env.turbulence,
            env.zones.clone(),
        );
        if let Some(spec) = &self.scene {
            // Checked at load ([`Scenario::validate`]).
            match mavsitl_render::Scene::build(spec) {
                Ok(scene) => world.set_scene(scene),
                Err(e) => tracing::error!("scene: {e}"),
            }
        }
        world
    }

    /// Builds the simulation with its vehicles at their initial poses, and the
    /// lockstep loop with each vehicle's controller attached.
    ///
    /// # Errors
    /// [`ScenarioError`] when an airframe cannot be resolved or a value is invalid.
    pub fn build(&self, source: &ScenarioSource) -> Result<Lockstep, ScenarioError> {
        let mut lockstep = Lockstep::new(self.build_simulation(source)?);
        for (i, spec) in self.vehicles.iter().enumerate() {
            let controller: Box<dyn FlightController> = match &spec.controller {
                ControllerSpec::Passive(p) => Box::new(Passive::new(p)),
                ControllerSpec::SimpleFlight(_)
                | ControllerSpec::Px4(_)
                | ControllerSpec::ArduPilot(_) => {
                    return Err(ScenarioError::Invalid {
                        file: source.name.clone(),
                        key: format!("vehicles[{i}].controller"),
                        message: "a mission flight: run the scenario with `mavsitl fly`".into(),
                    })
                }
            };
            lockstep
                .attach(i, controller)
                .map_err(|e| ScenarioError::Invalid {
                    file: source.name.clone(),
                    key: format!("vehicles[{i}].controller"),
                    message: e.to_string(),
                })?;
        }
        Ok(lockstep)
    }

    /// Builds the simulation only (vehicles at their initial poses, no controller).
    ///
    /// # Errors
    /// [`ScenarioError`] when an airframe cannot be resolved or a value is invalid.
    pub fn build_simulation(&self, source: &ScenarioSource) -> Result<Simulation, ScenarioError> {
        let file = source.name.as_str();
        let invalid = |key: String, message: String| ScenarioError::Invalid {
            file: file.to_string(),
            key,
            message,
        };
        let rate = PhysicsRate::new(self.physics_rate_hz)
            .map_err(|e| invalid("physics_rate_hz".into(), e.to_string()))?;
        let dt = rate.dt_s();
        let world = self.world();
        let mut vehicles = Vec::with_capacity(self.vehicles.len());
        for (i, spec) in self.vehicles.iter().enumerate() {
            let key = format!("vehicles[{i}]");
            let init = &spec.initial;
            let att = UnitQuaternion::from_euler_angles(
                init.roll_deg.to_radians(),
                init.pitch_deg.to_radians(),
                (self.home.heading_deg + init.yaw_deg).to_radians(),
            );
            let mut state = BodyState {
                pos_ned_m: Vector3::new(init.north_m, init.east_m, 0.0),
                vel_ned_m_s: Vector3::from(init.velocity_ned_m_s),
                att_ned_frd: att,
                rate_frd_rad_s: Vector3::from(init.rates_frd_deg_s).map(f64::to_radians),
            };
            let (mass, model) = match self.resolve_airframe(i, source)? {
                Airframe::Multirotor(p) => {
                    state.pos_ned_m.z = world.ground_down_m(init.north_m, init.east_m)
                        - p.gear_height_m
                        - init.height_m;
                    let mass = p
                        .mass_properties()
                        .map_err(|e| invalid(format!("{key}.overrides"), e.to_string()))?;
                    let mut m = Multirotor::new(p, dt);
                    if let Some(cmds) = &init.rotor_commands {
                        m.set_rotor_commands_steady(cmds);
                    }
                    (mass, VehicleModel::Multirotor(m))
                }
                Airframe::Boat(p) => {
                    state.pos_ned_m.z = p.floating_z_m(SEA_WATER_DENSITY_KG_M3) - init.height_m;
                    let mass = p
                        .mass_properties()
                        .map_err(|e| invalid(format!("{key}.overrides"), e.to_string()))?;
                    (mass, VehicleModel::Boat(Boat::new(p, dt)))
                }
                Airframe::Rover(p) => {
                    rover_stands(init)
                        .map_err(|(k, m)| invalid(format!("{key}.initial.{k}"), m))?;
                    state.pos_ned_m.z =
                        world.ground_down_m(init.north_m, init.east_m) + p.standing_z_m();
                    let g = world
                        .environment(&state.pos_ned_m, 0, &Vector3::zeros())
                        .gravity_ned_m_s2
                        .z;
                    let mass = p
                        .mass_properties()
                        .map_err(|e| invalid(format!("{key}.overrides"), e.to_string()))?;
                    (mass, VehicleModel::Rover(Rover::new(p, dt, g)))
                }
            };
            let date = self.date.date();
            let sensors = Sensors::new(
                &spec.sensors,
                rate,
                self.seed,
                i as u32,
                world.frame(),
                date,
                &state.pos_ned_m,
            )
            .map_err(|e| invalid(format!("{key}.sensors"), e.to_string()))?;
            let body = RigidBody::new(mass, state).with_integrator(self.integrator);
            let mut vehicle = Vehicle::new(
                spec.name.clone(),
                i as u32,
                body,
                model,
                sensors,
                &world,
                self.seed,
            )
            .with_battery(spec.battery);
            if let Some(r) = spec.collision_radius_m {
                vehicle.set_collision_radius_m(r);
            }
            vehicles.push(vehicle);
        }
        let faults = self
            .faults
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let vehicle = self.fault_vehicle(f).ok_or_else(|| {
                    invalid(format!("faults[{i}].vehicle"), "no such vehicle".into())
                })?;
                let zone = f.zone.as_deref().and_then(|z| self.fault_zone(z));
                Ok((f.clone(), vehicle, zone))
            })
            .collect::<Result<Vec<_>, ScenarioError>>()?;
        Ok(Simulation::new(world, vehicles, rate)
            .with_faults(FaultSchedule::new(faults))
            .with_proximity_m(self.proximity_m))
    }
}

/// A rover starts standing level on the ground: no height, roll or pitch.
fn rover_stands(init: &InitialPose) -> Result<(), (&'static str, String)> {
    for (key, v) in [
        ("height_m", init.height_m),
        ("roll_deg", init.roll_deg),
        ("pitch_deg", init.pitch_deg),
    ] {
        if v != 0.0 {
            return Err((
                key,
                format!("{v} is not 0: a rover starts standing level on the ground"),
            ));
        }
    }
    Ok(())
}
