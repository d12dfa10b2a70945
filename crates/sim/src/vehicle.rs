//! A vehicle: a rigid body, its actuator/force model and its ground contact.
//!
//! The unit a scenario places. One tick reads as four verbs: sample the
//! environment here → compute the wrench (actuators, drag, hydrostatics, ground)
//! → integrate → derive the kinematic outputs (specific force once), then the
//! sensors sample the new state.

use nalgebra::Vector3;
use thiserror::Error;

use crate::physics::{
    Battery, BatteryParams, Boat, ContactState, GroundContact, Multirotor, RigidBody, Rover,
    StepInputs,
};
use crate::replay::KinematicState;
use crate::sensors::vision::{CameraSpec, LidarUnit};
use crate::sensors::{ImuTruth, Sensors, TickSamples};
use crate::world::{Environment, IsaCache, Turbulence, World};
use mavsitl_core::controller::{Actuators, GroundTruth};
use mavsitl_core::faults::FaultEffects;
use mavsitl_core::rng::{noise_rng, NoiseSource};
use mavsitl_core::time::SimTime;

/// The force model of a vehicle.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)] // one per vehicle; a Box would add an indirection to every tick
pub enum VehicleModel {
    /// Rotors, body drag.
    Multirotor(Multirotor),
    /// Thrusters, rudder, hull.
    Boat(Boat),
    /// Wheels, tyres, drive motors.
    Rover(Rover),
}

/// A state that stopped being finite.
#[derive(Debug, Error, Clone, PartialEq)]
#[error("vehicle '{vehicle}': {field} became non-finite at {time}")]
pub struct NonFiniteState {
    /// The vehicle's name.
    pub vehicle: String,
    /// Which state field.
    pub field: &'static str,
    /// The tick's end time.
    pub time: SimTime,
}

/// A body's accelerations over a tick, as the IMU and the ground truth
/// report them.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Accelerations {
    /// Linear acceleration, NED m/s².
    accel_ned_m_s2: Vector3<f64>,
    /// Specific force at the CG (acceleration less gravity), FRD m/s².
    specific_force_frd_m_s2: Vector3<f64>,
    /// Angular acceleration, FRD rad/s².
    ang_accel_frd_rad_s2: Vector3<f64>,
}

impl Accelerations {
    /// A body at attitude `att` accelerating at `accel_ned_m_s2` (NED m/s²)
    /// and `ang_accel_frd_rad_s2` (FRD rad/s²) under gravity (NED m/s²):
    /// its specific force is the acceleration less gravity, in body axes.
    fn of(
        att: &nalgebra::UnitQuaternion<f64>,
        accel_ned_m_s2: Vector3<f64>,
        ang_accel_frd_rad_s2: Vector3<f64>,
        gravity_ned_m_s2: &Vector3<f64>,
    ) -> Self {
        Accelerations {
            accel_ned_m_s2,
            specific_force_frd_m_s2: att.inverse() * (accel_ned_m_s2 - gravity_ned_m_s2),
            ang_accel_frd_rad_s2,
        }
    }
}

/// Where the last tick's [`Accelerations`] come from. Integrated ticks keep
/// what they are worked out from and work them out when read: most ticks
/// are not recorded, and the IMU reads its own means ([`ImuMark`]), the
/// tick's only on its first sample and after a placement or replay.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Motion {
    /// Integrated over `dt_s` (s) from these velocities (NED m/s, FRD
    /// rad/s) to the body's, under this gravity (NED m/s²).
    Stepped {
        vel_before: Vector3<f64>,
        rate_before: Vector3<f64>,
        gravity_ned_m_s2: Vector3<f64>,
        dt_s: f64,
    },
    /// Given as they are (at the start, by a replayed pose, or kept when
    /// the vehicle is placed).
    Given(Accelerations),
}

impl Motion {
    /// The accelerations that bring the body to `state`.
    fn accelerations(&self, state: &crate::physics::BodyState) -> Accelerations {
        match *self {
            Motion::Stepped {
                vel_before,
                rate_before,
                gravity_ned_m_s2,
                dt_s,
            } => Accelerations::of(
                &state.att_ned_frd,
                (state.vel_ned_m_s - vel_before) / dt_s,
                (state.rate_frd_rad_s - rate_before) / dt_s,
                &gravity_ned_m_s2,
            ),
            Motion::Given(a) => a,
        }
    }
}

/// One simulated vehicle.
#[derive(Debug, Clone)]
pub struct Vehicle {
    name: String,
    id: u32,
    body: RigidBody,
    model: VehicleModel,
    contact: Option<GroundContact>,
    contact_state: ContactState,
    turbulence: Option<Turbulence>,
    zone_mask: u64,
    env: Option<Environment>,
    motion: Motion,
    /// The body at the IMU's last sample of an integrated tick (None
    /// before one, and after the body is placed).
    imu_mark: Option<ImuMark>,
    sensors: Sensors,
    samples: TickSamples,
    lidars: Vec<LidarUnit>,
    start_ned_m: Vector3<f64>,
    air: IsaCache,
    battery: Battery,
    faults: FaultEffects,
    collision_radius_m: f64,
}

/// Where the body was at the IMU's last sample of an integrated tick: the
/// accelerations an IMU reads are the means over its interval, the changes
/// of velocity and rate since this mark over the time since it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct ImuMark {
    time: SimTime,
    vel_ned_m_s: Vector3<f64>,
    rate_frd_rad_s: Vector3<f64>,
    att_ned_frd: nalgebra::UnitQuaternion<f64>,
}

impl ImuMark {
    fn of(state: &crate::physics::BodyState, time: SimTime) -> Self {
        ImuMark {
            time,
            vel_ned_m_s: state.vel_ned_m_s,
            rate_frd_rad_s: state.rate_frd_rad_s,
            att_ned_frd: state.att_ned_frd,
        }
    }

    /// What the IMU reads at `now` of a body at `state` since this mark,
    /// under `gravity_ned_m_s2`: the mean specific force (the velocity's
    /// change less gravity's, turned into the body at the interval's middle
    /// attitude) and the mean angular acceleration; the rate as it is now.
    /// An accelerometer integrates over its sample interval (its
    /// anti-aliasing filter, a delta-velocity), so a one-tick impulse, such
    /// as a touchdown, reaches it wherever the tick falls.
    fn mean_since(
        &self,
        state: &crate::physics::BodyState,
        gravity_ned_m_s2: &Vector3<f64>,
        now: SimTime,
    ) -> ImuTruth {
        let t = now.secs_since(self.time);
        let (a, b) = (
            self.att_ned_frd.quaternion(),
            state.att_ned_frd.quaternion(),
        );
        let b = if a.dot(b) < 0.0 { -b } else { *b };
        let middle = nalgebra::UnitQuaternion::new_normalize(a + b);
        let accel = (state.vel_ned_m_s - self.vel_ned_m_s) / t;
        ImuTruth {
            rate_frd_rad_s: state.rate_frd_rad_s,
            ang_accel_frd_rad_s2: (state.rate_frd_rad_s - self.rate_frd_rad_s) / t,
            specific_force_frd_m_s2: middle.inverse() * (accel - gravity_ned_m_s2),
        }
    }
}

/// The truth an IMU sampling at `now` reads, and its mark moved to now: the
/// means since the mark after an integrated tick, else (the first sample,
/// a placed or replayed body) the last tick's accelerations, after which
/// there is no mark until the next integrated tick.
fn imu_truth(
    motion: &Motion,
    state: &crate::physics::BodyState,
    mark: &mut Option<ImuMark>,
    now: SimTime,
) -> ImuTruth {
    let truth = match (motion, *mark) {
        (
            Motion::Stepped {
                gravity_ned_m_s2, ..
            },
            Some(m),
        ) if now > m.time => m.mean_since(state, gravity_ned_m_s2, now),
        _ => {
            let a = motion.accelerations(state);
            ImuTruth {
                rate_frd_rad_s: state.rate_frd_rad_s,
                ang_accel_frd_rad_s2: a.ang_accel_frd_rad_s2,
                specific_force_frd_m_s2: a.specific_force_frd_m_s2,
            }
        }
    };
    *mark = match motion {
        Motion::Stepped { .. } => Some(ImuMark::of(state, now)),
        Motion::Given(_) => None,
    };
    truth
}

/// The sphere a vehicle of `model` occupies, m: a multirotor's furthest rotor
/// tip; a boat's furthest thruster or rudder from its centre, at least 0.5 m;
/// a rover's furthest wheel's outer edge.
fn default_collision_radius_m(model: &VehicleModel) -> f64 {
    match model {
        VehicleModel::Multirotor(m) => {
            let p = m.params();
            let hub = p
                .rotor_geometry()
                .iter()
                .map(|(pos, _)| pos.xy().norm())
                .fold(0.0, f64::max);
            hub + p.propeller_diameter_m / 2.0
        }
        VehicleModel::Boat(b) => {
            let p = b.params();
            p.thruster_position_m[0]
                .abs()
                .max(p.rudder_x_m.abs())
                .max(0.5)
        }
        VehicleModel::Rover(r) => {
            let p = r.params();
            let furthest = p
                .wheel_positions_frd_m()
                .iter()
                .map(|w| w.xy().norm())
                .fold(0.0, f64::max);
            furthest + p.wheel_radius_m
        }
    }
}

impl Vehicle {
    /// A vehicle named `name` with numeric id `id` (the index in the scenario, used
    /// to derive its noise streams) in `world` with scenario `seed`, carrying
    /// `sensors`.
    pub fn new(
        name: String,
        id: u32,
        body: RigidBody,
        model: VehicleModel,
        sensors: Sensors,
        world: &World,
        seed: u64,
    ) -> Self {
        let contact = match &model {
            VehicleModel::Multirotor(m) => Some(m.params().ground_contact()),
            VehicleModel::Boat(_) | VehicleModel::Rover(_) => None,
        };
        let turbulence = world
            .turbulence_w20_m_s()
            .map(|w20| Turbulence::new(w20, noise_rng(seed, id, NoiseSource::Turbulence)));
        let zone_mask = world.zones().membership(&body.state.pos_ned_m);
        // At rest on the ground or afloat the specific force is −g along body z.
        let g = world
            .environment(&body.state.pos_ned_m, zone_mask, &Vector3::zeros())
            .gravity_ned_m_s2;
        let specific = body.state.att_ned_frd.inverse() * (-g);
        let collision_radius_m = default_collision_radius_m(&model);
        let lidars = sensors
            .spec()
            .lidars
            .iter()
            .enumerate()
            .map(|(i, l)| LidarUnit::new(l.clone(), seed, id, i))
            .collect();
        // On the ground below its start, as AirSim's vehicle frames are.
        let start_ned_m = Vector3::new(body.state.pos_ned_m.x, body.state.pos_ned_m.y, 0.0);
        Vehicle {
            name,
            id,
            body,
            model,
            contact,
            contact_state: ContactState::default(),
            turbulence,
            zone_mask,
            env: None,
            motion: Motion::Given(Accelerations {
                accel_ned_m_s2: Vector3::zeros(),
                specific_force_frd_m_s2: specific,
                ang_accel_frd_rad_s2: Vector3::zeros(),
            }),
            imu_mark: None,
            sensors,
            samples: TickSamples::default(),
            lidars,
            start_ned_m,
            air: IsaCache::default(),
            battery: Battery::new(BatteryParams::default()),
            faults: FaultEffects::default(),
            collision_radius_m,
        }
    }

    /// The radius of the sphere it occupies, for collisions with other
    /// vehicles, m.
    pub fn collision_radius_m(&self) -> f64 {
        self.collision_radius_m
    }

    /// Sets the collision radius, m (a scenario's `collision_radius_m`).
    pub fn set_collision_radius_m(&mut self, r: f64) {
        self.collision_radius_m = r;
    }

    /// Sets what the active faults do to this vehicle from the next tick on.
    pub fn set_faults(&mut self, faults: FaultEffects) {
        let old = std::mem::replace(&mut self.faults, faults);
        if old.rotor_thrust_scale != faults.rotor_thrust_scale
            || old.thruster_thrust_scale != faults.thruster_thrust_scale
        {
            match &mut self.model {
                VehicleModel::Multirotor(m) => m.set_thrust_scale(&faults.rotor_thrust_scale),
                VehicleModel::Boat(b) => b.set_thrust_scale([
                    faults.thruster_thrust_scale[0],
                    faults.thruster_thrust_scale[1],
                ]),
                // A rover's motors fail by faults of their own.
                VehicleModel::Rover(_) => {}
            }
        }
        if old.wheel_motor_torque_scale != faults.wheel_motor_torque_scale {
            if let VehicleModel::Rover(r) = &mut self.model {
                let k = faults.wheel_motor_torque_scale;
                r.set_motor_scale([k[0], k[1]]);
            }
        }
        if old.battery != faults.battery {
            self.battery
                .set_fault(faults.battery.capacity_scale, faults.battery.voltage_drop_v);
        }
    }

    /// The ESC telemetry (rotor speeds) of a multirotor.
    pub fn esc_sample(&self) -> Option<mavsitl_core::controller::EscSample> {
        let VehicleModel::Multirotor(m) = &self.model else {
            return None;
        };
        let mut out = [crate::physics::multirotor::RotorOutput::default(); 8];
        m.rotor_outputs(1.0, &mut out);
        let mut e = mavsitl_core::controller::EscSample {
            count: m.rotor_count().min(8),
            ..Default::default()
        };
        for (s, o) in e.speed_rad_s.iter_mut().zip(&out) {
            *s = o.speed_rad_s;
        }
        Some(e)
    }

    /// What the active faults do to this vehicle.
    pub fn faults(&self) -> &FaultEffects {
        &self.faults
    }

    /// Replaces the battery with one of `params`, fully reset.
    pub fn with_battery(mut self, params: BatteryParams) -> Self {
        self.battery = Battery::new(params);
        self
    }

    /// The battery (its state at the end of the latest tick).
    pub fn battery(&self) -> &Battery {
        &self.battery
    }

    /// The sensors.
    pub fn sensors(&self) -> &Sensors {
        &self.sensors
    }

    /// Places the vehicle at `state` (before a run or a replay) without sampling.
    pub fn set_state(&mut self, state: crate::physics::BodyState) {
        self.motion = Motion::Given(self.accelerations());
        self.imu_mark = None;
        self.body.state = state;
    }

    /// The sensor samples produced by the last tick.
    pub fn samples(&self) -> &TickSamples {
        &self.samples
    }

    /// The vehicle's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The vehicle's numeric id.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The rigid body (state and mass).
    pub fn body(&self) -> &RigidBody {
        &self.body
    }

    /// The force model.
    pub fn model(&self) -> &VehicleModel {
        &self.model
    }

    /// Bit mask of the zones the vehicle is in.
    pub fn zone_mask(&self) -> u64 {
        self.zone_mask
    }

    /// The environment the last tick used (None before the first tick).
    pub fn environment(&self) -> Option<&Environment> {
        self.env.as_ref()
    }

    /// Ground contact of the last tick.
    pub fn contact(&self) -> &ContactState {
        &self.contact_state
    }

    /// The body's accelerations over the last tick (or as last given).
    fn accelerations(&self) -> Accelerations {
        self.motion.accelerations(&self.body.state)
    }

    /// The true state after the last tick.
    pub fn ground_truth(&self) -> GroundTruth {
        let s = &self.body.state;
        let a = self.accelerations();
        GroundTruth {
            pos_ned_m: s.pos_ned_m,
            vel_ned_m_s: s.vel_ned_m_s,
            att_ned_frd: s.att_ned_frd,
            rate_frd_rad_s: s.rate_frd_rad_s,
            accel_ned_m_s2: a.accel_ned_m_s2,
            specific_force_frd_m_s2: a.specific_force_frd_m_s2,
            ang_accel_frd_rad_s2: a.ang_accel_frd_rad_s2,
            landed: self.contact_state.on_ground(),
            wind_ned_m_s: self.env.map(|e| e.wind_ned_m_s).unwrap_or_default(),
        }
    }

    /// Advances one physics tick of `dt_s` under `actuators`, then samples the
    /// sensors due at the end of the tick. Returns the zones entered and left (bit
    /// masks). `end_tick` and `end_time` are the tick count and time at the end of
    /// the tick.
    ///
    /// # Errors
    /// [`NonFiniteState`] when the state stops being finite.
    pub fn step(
        &mut self,
        world: &World,
        actuators: &Actuators,
        dt_s: f64,
        end_tick: u64,
        end_time: SimTime,
    ) -> Result<(u64, u64), NonFiniteState> {
        let before = self.body.state;
        // 1. Environment here.
        let mask = world.zones().membership(&before.pos_ned_m);
        let changed = mask ^ self.zone_mask;
        self.zone_mask = mask;
        let gust = match self.turbulence.as_mut() {
            Some(t) => {
                let mean = world.mean_wind_ned_m_s(mask);
                let airspeed = (before.vel_ned_m_s - mean).norm();
                t.step(dt_s, (-before.pos_ned_m.z).max(0.0), airspeed, &mean)
            }
            None => Vector3::zeros(),
        } + self.faults.gust_ned_m_s;
        let env = world.environment_cached(&before.pos_ned_m, mask, &gust, &mut self.air);
        // 2. Wrench.
        let (mut wrench, inputs) = match &mut self.model {
            VehicleModel::Multirotor(m) => {
                let w = m.wrench(&actuators.controls, &env, &before, dt_s);
                let inputs = StepInputs {
                    gravity_ned_m_s2: env.gravity_ned_m_s2,
                    fluid_vel_ned_m_s: env.wind_ned_m_s,
                    rotor_momentum_frd: m.rotor_momentum_frd(),
                };
                (w, inputs)
            }
            VehicleModel::Boat(b) => {
                let w = b.wrench(&actuators.controls, &env, &before, dt_s);
                let inputs = StepInputs {
                    gravity_ned_m_s2: env.gravity_ned_m_s2,
                    fluid_vel_ned_m_s: env.current_ned_m_s,
                    rotor_momentum_frd: Vector3::zeros(),
                };
                (w, inputs)
            }
            VehicleModel::Rover(r) => {
                let mut mu = wheel_friction(world, r, &before);
                for (m, k) in mu.iter_mut().zip(self.faults.tyre_grip_scale) {
                    *m *= k;
                }
                let w = r.wrench(
                    &actuators.controls,
                    mu,
                    &env.gravity_ned_m_s2,
                    &before,
                    dt_s,
                );
                let inputs = StepInputs {
                    gravity_ned_m_s2: env.gravity_ned_m_s2,
                    fluid_vel_ned_m_s: Vector3::zeros(),
                    rotor_momentum_frd: Vector3::zeros(),
                };
                (w, inputs)
            }
        };
        self.contact_state = match &self.contact {
            Some(c) => c.apply(
                &before,
                self.body.mass(),
                &env.gravity_ned_m_s2,
                crate::physics::GroundUnder {
                    down_m: env.ground_down_m,
                    friction: env.ground_friction,
                },
                &mut wrench,
                dt_s,
            ),
            None => ContactState::default(),
        };
        let power_w = match &self.model {
            VehicleModel::Multirotor(m) => {
                m.shaft_power_w(env.air.density_kg_m3) / self.battery.params().propulsion_efficiency
            }
            VehicleModel::Boat(b) => b.electrical_power_w(),
            VehicleModel::Rover(r) => {
                r.shaft_power_w() / self.battery.params().propulsion_efficiency
            }
        };
        self.battery.step(power_w, dt_s);
        // 3. Integrate.
        self.body.step(&wrench, &inputs, dt_s);
        if let Some(c) = &self.contact {
            c.project(&self.contact_state, &mut self.body.state, env.ground_down_m);
        }
        if let VehicleModel::Rover(r) = &self.model {
            r.project(&mut self.body.state, env.ground_down_m);
        }
        // 4. Outputs.
        let s = &self.body.state;
        if let Some(field) = s.non_finite_field() {
            // The ground truth keeps the last finite tick's accelerations.
            self.motion = Motion::Given(self.motion.accelerations(&before));
            return Err(NonFiniteState {
                vehicle: self.name.clone(),
                field,
                time: end_time,
            });
        }
        self.motion = Motion::Stepped {
            vel_before: before.vel_ned_m_s,
            rate_before: before.rate_frd_rad_s,
            gravity_ned_m_s2: env.gravity_ned_m_s2,
            dt_s,
        };
        // 5. Sensors read the new state.
        self.sample_sensors(world, env, end_tick, end_time);
        Ok((changed & mask, changed & !mask))
    }

    /// Sets the state from outside instead of integrating (pose replay), then
    /// samples the sensors due at the end of the tick, exactly as [`Vehicle::step`]
    /// does after physics. Returns the zones entered and left.
    pub fn step_kinematic(
        &mut self,
        world: &World,
        kinematic: &KinematicState,
        end_tick: u64,
        end_time: SimTime,
    ) -> (u64, u64) {
        let s = kinematic.state;
        let mask = world.zones().membership(&s.pos_ned_m);
        let changed = mask ^ self.zone_mask;
        self.zone_mask = mask;
        let env = world.environment(&s.pos_ned_m, mask, &Vector3::zeros());
        self.body.state = s;
        self.imu_mark = None;
        self.contact_state = ContactState::default();
        self.motion = Motion::Given(Accelerations::of(
            &s.att_ned_frd,
            kinematic.accel_ned_m_s2,
            kinematic.ang_accel_frd_rad_s2,
            &env.gravity_ned_m_s2,
        ));
        self.sample_sensors(world, env, end_tick, end_time);
        (changed & mask, changed & !mask)
    }

    /// Samples the sensors due at `end_time` from the body state (the IMU
    /// its means since its mark, or the motion just stored), and keeps
    /// `env` as the tick's environment.
    fn sample_sensors(
        &mut self,
        world: &World,
        env: Environment,
        end_tick: u64,
        end_time: SimTime,
    ) {
        let (motion, state, mark) = (&self.motion, &self.body.state, &mut self.imu_mark);
        // Called when the IMU samples: over its interval on integrated ticks,
        // and the mark moves to now.
        let truth = || imu_truth(motion, state, mark, end_time);
        let frame = world.frame();
        self.sensors.step(
            &mut self.samples,
            end_tick,
            end_time,
            &self.body.state,
            truth,
            &env,
            frame,
            frame.origin().alt_m,
            &self.faults,
        );
        self.env = Some(env);
        if let Some(scene) = world.scene() {
            let s = &self.body.state;
            for l in &mut self.lidars {
                l.step(
                    scene,
                    end_time.as_micros(),
                    &s.pos_ned_m,
                    &s.att_ned_frd,
                    &self.start_ned_m,
                );
            }
        }
    }

    /// Its LiDARs, in the order the scenario gives them.
    pub fn lidars_mut(&mut self) -> &mut [LidarUnit] {
        &mut self.lidars
    }

    /// Its LiDARs.
    pub fn lidars(&self) -> &[LidarUnit] {
        &self.lidars
    }

    /// Its cameras, in the order the scenario gives them.
    pub fn cameras(&self) -> &[CameraSpec] {
        &self.sensors.spec().cameras
    }

    /// Where it started, on home's ground plane: north and east of its
    /// start, down 0 (AirSim's vehicle frame origin, that of a LiDAR's
    /// `VehicleInertialFrame`), NED m.
    pub fn start_ned_m(&self) -> Vector3<f64> {
        self.start_ned_m
    }
}

/// The friction under each of a rover's wheels: the zone it stands in, or
/// the airframe's own where no zone sets one.
fn wheel_friction(world: &World, r: &Rover, state: &crate::physics::BodyState) -> [f64; 4] {
    let wheels = r.params().wheel_positions_frd_m();
    let mut mu = [r.params().tyre_friction; 4];
    for (m, w) in mu.iter_mut().zip(&wheels) {
        let at = state.pos_ned_m + state.att_ned_frd * w;
        if let Some(z) = world.ground_friction_at(&at) {
            *m = z;
        }
    }
    mu
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::BodyState;
    use nalgebra::{Quaternion, UnitQuaternion};

    fn yawed(deg: f64) -> UnitQuaternion<f64> {
        UnitQuaternion::from_euler_angles(0.0, 0.0, deg.to_radians())
    }

    /// Over 4 ms the body sped up north by 0.4 m/s while turning 90° (or
    /// −90°) in yaw: the mean specific force is 100 m/s² north less gravity,
    /// in the axes of the interval's middle, ±45°; the angular acceleration
    /// the rate's change (1 → 3 rad/s) over the time.
    #[test]
    fn the_mean_since_a_mark_is_turned_at_the_intervals_middle() {
        let at_mark = BodyState {
            rate_frd_rad_s: Vector3::new(0.0, 0.0, 1.0),
            ..BodyState::default()
        };
        let mark = ImuMark::of(&at_mark, SimTime::from_micros(1_000));
        let g = Vector3::new(0.0, 0.0, 9.8);
        let now = SimTime::from_micros(5_000);
        let s = std::f64::consts::FRAC_1_SQRT_2;
        for (deg, side) in [(90.0, -1.0), (-90.0, 1.0)] {
            let state = BodyState {
                vel_ned_m_s: Vector3::new(0.4, 0.0, 0.0),
                rate_frd_rad_s: Vector3::new(0.0, 0.0, 3.0),
                att_ned_frd: yawed(deg),
                ..BodyState::default()
            };
            let t = mark.mean_since(&state, &g, now);
            let want = Vector3::new(100.0 * s, side * 100.0 * s, -9.8);
            assert!(
                (t.specific_force_frd_m_s2 - want).norm() < 1e-9,
                "{deg}°: {}",
                t.specific_force_frd_m_s2
            );
            assert!((t.ang_accel_frd_rad_s2 - Vector3::new(0.0, 0.0, 500.0)).norm() < 1e-9);
            assert_eq!(t.rate_frd_rad_s, state.rate_frd_rad_s);
        }
        // The same attitude by the other sign of its quaternion: the middle
        // is that attitude, not the sum's zero.
        let minus = UnitQuaternion::new_unchecked(-Quaternion::identity());
        let state = BodyState {
            att_ned_frd: minus,
            ..BodyState::default()
        };
        let t = mark.mean_since(&state, &g, now);
        assert!((t.specific_force_frd_m_s2 - Vector3::new(0.0, 0.0, -9.8)).norm() < 1e-12);
    }

    /// The first sample, and any after the body was placed or replayed,
    /// reads the last tick; an integrated tick's sample leaves a mark that
    /// the next sample measures from; a replayed one leaves none.
    #[test]
    fn the_mark_is_left_by_integrated_ticks_only() {
        let g = Vector3::new(0.0, 0.0, 9.8);
        let state = BodyState {
            vel_ned_m_s: Vector3::new(0.0, 0.0, 0.02),
            ..BodyState::default()
        };
        let stepped = Motion::Stepped {
            vel_before: Vector3::zeros(),
            rate_before: Vector3::zeros(),
            gravity_ned_m_s2: g,
            dt_s: 0.001,
        };
        let mut mark = None;
        // The tick's own: 0.02 m/s in 1 ms, 20 m/s² down, less gravity.
        let first = imu_truth(&stepped, &state, &mut mark, SimTime::from_micros(1_000));
        assert!((first.specific_force_frd_m_s2.z - (20.0 - 9.8)).abs() < 1e-9);
        assert_eq!(mark, Some(ImuMark::of(&state, SimTime::from_micros(1_000))));
        // 4 ms on, 0.06 m/s faster: 15 m/s² over the interval.
        let later = BodyState {
            vel_ned_m_s: Vector3::new(0.0, 0.0, 0.08),
            ..state
        };
        let next = imu_truth(&stepped, &later, &mut mark, SimTime::from_micros(5_000));
        assert!((next.specific_force_frd_m_s2.z - (15.0 - 9.8)).abs() < 1e-9);
        // A replayed tick reads what it was given and leaves no mark.
        let given = Motion::Given(Accelerations::of(
            &UnitQuaternion::identity(),
            Vector3::new(0.0, 0.0, 3.0),
            Vector3::zeros(),
            &g,
        ));
        let replayed = imu_truth(&given, &later, &mut mark, SimTime::from_micros(9_000));
        assert!((replayed.specific_force_frd_m_s2.z - (3.0 - 9.8)).abs() < 1e-12);
        assert_eq!(mark, None);
    }
}
