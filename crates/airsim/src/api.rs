//! AirSim's multirotor API on SimpleFlight vehicles, each addressed by its
//! name (AirSim's `vehicle_name`, the last argument of a call; "" is the
//! first): the state, sensor and ground-truth queries answered from the
//! simulation, the motion commands
//! flown by SimpleFlight through its own controllers (as AirSim's SimpleFlight
//! flies them), and the clock under the client's control (pause, continue for
//! a time or a number of frames).
//!
//! A motion command is a task: it is answered (`true`) when it is done, or
//! `false` when a newer command, `cancelLastTask` or its timeout ends it
//! first, as AirSim's `*Async` calls are. Tasks steer SimpleFlight with
//! velocity set-points (Offboard) and finish with a position hold; take-off
//! and landing use SimpleFlight's own modes.
//!
//! Frames and units are AirSim's: NED metres from each vehicle's start (its
//! `gps_location` places it in the world), radians, quaternions
//! FRD → NED, angles in the motion commands in degrees (as the client sends
//! them), time stamps in nanoseconds of sim time. A frame
//! (`simContinueForFrames`) is one physics tick.

use std::collections::VecDeque;

use nalgebra::{UnitQuaternion, Vector3};
use rmpv::Value;

use super::car::{CarControls, CarLink};
use super::rpc::{Call, ConnId};
use super::types::{self, f64_of, map, vector3r, Kinematics};
use super::vision;
use mavsitl_core::time::SimTime;
use mavsitl_run::setup::Flight;
use mavsitl_sim::replay::KinematicState;
use mavsitl_sim::sensors::imu::ImuSample;
use mavsitl_sim::sensors::TickSamples;
use mavsitl_sim::sim::{Lockstep, Observer, SimError, Simulation};
use mavsitl_simpleflight::estimator::EstimatedState;
use mavsitl_simpleflight::{FlightMode, Lift, Request, RequestQueue, StatusHandle, YawTarget};

/// The vehicle name AirSim's default settings give a multirotor.
pub const VEHICLE_NAME: &str = "SimpleFlight";
/// Server and minimum client version (AirSim 1.8's).
pub const API_VERSION: i64 = 1;
/// Take-off height above home, m (AirSim's SimpleFlight: 3 m).
const TAKEOFF_HEIGHT_M: f64 = 3.0;
/// A position is reached within this distance, m.
const DISTANCE_ACCURACY_M: f64 = 0.5;
/// Braking deceleration used to slow down near a target, m/s².
const BRAKE_M_S2: f64 = 1.0;
/// Time SimpleFlight is given to take a command on, s.
const GRACE_S: f64 = 0.1;
/// IMU samples kept for `getImuSamples` (at 1 kHz: 100 s).
const IMU_BACKLOG: usize = 100_000;
/// A motion command given on the ground lifts off to this height first, m
/// (AirSim's SimpleFlight flies its goals from the ground; the climb is
/// then the command's own).
const LIFT_M: f64 = 1.0;

/// A motion task's goal, its path points (NED m) and its deadline.
type TaskPlan = (Goal, Vec<Vector3<f64>>, Option<SimTime>);

/// An answer for a request, to send now.
pub type Reply = (ConnId, u32, Result<Value, String>);

/// How a motion task ends.
#[derive(Debug, Clone, PartialEq)]
enum Goal {
    /// Climb to the take-off height.
    Takeoff,
    /// Land and stop the motors.
    Land,
    /// Fly through `path` points at `speed` m/s, stopping at the last.
    Path {
        next: usize,
        speed: f64,
        yaw: YawTarget,
    },
    /// Fly at a velocity (NED, or body axes rotated by heading) until `until`.
    Velocity {
        vel: Vector3<f64>,
        body: bool,
        hold_z: Option<f64>,
        yaw: YawTarget,
        until: SimTime,
    },
    /// Turn to a heading within a margin, rad.
    Yaw { heading: f64, margin: f64 },
    /// Fly an attitude or body rates directly until `until`.
    Direct { req: Request, until: SimTime },
}

#[derive(Debug, Clone, PartialEq)]
struct Task {
    conn: ConnId,
    msgid: u32,
    started: SimTime,
    method: String,
    goal: Goal,
    path: Vec<Vector3<f64>>,
    deadline: Option<SimTime>,
}

/// Holding still between commands (`hoverAsync`, the end of a move):
/// SimpleFlight's Offboard brake, which stops the vehicle and keeps the
/// point where it came to rest, with the heading the hold began with. (A
/// zero velocity left SimpleFlight's position set-point behind, and the
/// vehicle swung back to it.)
#[derive(Debug, Clone, Copy, PartialEq)]
struct Hold {
    /// The heading held, rad.
    yaw: f64,
}

/// What the API needs of the pilot's status.
#[derive(Debug, Clone, Default)]
struct PilotState {
    armed: bool,
    on_ground: bool,
    mode: Option<FlightMode>,
    estimate: Option<EstimatedState>,
    home_ned: Option<Vector3<f64>>,
    prearm_failure: Option<String>,
    cruise_speed_m_s: f64,
}

/// Latest samples of each sensor.
#[derive(Debug, Clone, Default)]
struct Latest {
    samples: TickSamples,
}

/// Builds one SimpleFlight flight afresh (for [`AirSimApi::single`]'s
/// `reset`).
pub type FlightRebuild = Box<dyn Fn() -> Result<Flight, mavsitl_run::setup::SetupError>>;

/// Builds the world afresh (for `reset`): the loop and its vehicles, in the
/// order first given.
pub type Rebuild =
    Box<dyn Fn() -> Result<(Lockstep, Vec<ApiVehicle>), mavsitl_run::setup::SetupError>>;

/// A firmware flying the vehicle over its bridge (AirSim's `PX4Multirotor`):
/// the API serves state, sensors and the clock; the firmware takes its
/// commands over its own MAVLink port.
pub struct FirmwarePilot {
    /// Its name in messages ("PX4").
    pub name: &'static str,
    /// Where ground stations and offboard programs reach it (for messages),
    /// e.g. "udp 14540".
    pub mavlink: String,
    /// Whether it reports armed.
    pub armed: Box<dyn Fn() -> bool>,
}

/// Who flies a vehicle.
enum Pilot {
    /// SimpleFlight: the motion commands become its requests.
    SimpleFlight {
        status: StatusHandle,
        requests: RequestQueue,
    },
    /// A firmware over its bridge.
    Firmware(FirmwarePilot),
    /// AirSim's car API: the client's car controls drive an Ackermann rover.
    Car(CarLink),
}

/// A car the API drives (SimMode "Car"), as the API is given it.
pub struct CarVehicle {
    /// Its name in the API (AirSim's `vehicle_name`).
    pub name: String,
    /// Its index in the simulation.
    pub index: usize,
    /// The controls its [`crate::car::CarDriver`] hands the rover.
    pub controls: CarLink,
}

/// A vehicle the API serves, and who drives it.
pub enum ApiVehicle {
    /// A multirotor SimpleFlight flies.
    SimpleFlight(SimpleFlightVehicle),
    /// A car the client's controls drive.
    Car(CarVehicle),
}

impl ApiVehicle {
    fn into_parts(self) -> (String, usize, Pilot) {
        match self {
            ApiVehicle::SimpleFlight(v) => (
                v.name,
                v.index,
                Pilot::SimpleFlight {
                    status: v.status,
                    requests: v.requests,
                },
            ),
            ApiVehicle::Car(c) => (c.name, c.index, Pilot::Car(c.controls)),
        }
    }
}

/// A vehicle SimpleFlight flies, as the API is given it.
pub struct SimpleFlightVehicle {
    /// Its name in the API (AirSim's `vehicle_name`).
    pub name: String,
    /// Its index in the simulation.
    pub index: usize,
    /// SimpleFlight's status.
    pub status: StatusHandle,
    /// Where its requests go.
    pub requests: RequestQueue,
}

/// One vehicle of the API: who flies it and what the API keeps for it.
struct Drone {
    name: String,
    /// Its index in the simulation.
    index: usize,
    /// Where it started, on the ground (NED m from the world's home): the
    /// origin of its positions in the API, as each AirSim vehicle's
    /// positions are from its own start.
    origin: Vector3<f64>,
    pilot: Pilot,
    task: Option<Task>,
    /// What the vehicle does with no task in force.
    hold: Option<Hold>,
    api_control: bool,
    latest: Latest,
    imu_backlog: VecDeque<ImuSample>,
    collided: Option<(SimTime, Vector3<f64>)>,
}

impl Drone {
    fn new(name: String, index: usize, pilot: Pilot, sim: &Simulation) -> Self {
        let start = sim
            .vehicles()
            .get(index)
            .map_or(Vector3::zeros(), |v| v.body().state.pos_ned_m);
        Drone {
            name,
            index,
            origin: Vector3::new(start.x, start.y, 0.0),
            pilot,
            task: None,
            hold: None,
            api_control: false,
            latest: Latest::default(),
            imu_backlog: VecDeque::new(),
            collided: None,
        }
    }
}

/// The API's state around one world of vehicles.
pub struct AirSimApi {
    lockstep: Lockstep,
    /// The vehicles, the default one (`vehicle_name` "") first.
    drones: Vec<Drone>,
    /// Builds the world anew for `reset` (SimpleFlight vehicles only).
    rebuild: Option<Rebuild>,
    paused: bool,
    /// Run until this time, then answer these (simContinueFor*).
    continue_until: Option<(SimTime, ConnId, u32)>,
    /// Sim time before the last reset, µs: time stamps go on from there.
    stamp_offset_us: u64,
    /// External physics (AirSim's `ExternalPhysicsEngine`): the first
    /// vehicle is where the client's poses put it; this is the kinematic
    /// state replayed.
    external: Option<External>,
    /// Camera frames and LiDAR points being served.
    renders: vision::Renders,
}

/// The pose-driven state of external physics.
#[derive(Debug, Clone, Copy, PartialEq)]
struct External {
    kin: KinematicState,
    /// When the last pose was set.
    at: SimTime,
}

impl AirSimApi {
    /// The API over `lockstep`, whose `vehicles` SimpleFlight flies
    /// (disarmed) or the client's car controls drive; `rebuild` makes the
    /// same world anew for `reset`.
    pub fn new(lockstep: Lockstep, vehicles: Vec<ApiVehicle>, rebuild: Rebuild) -> Self {
        let drones = vehicles
            .into_iter()
            .map(|v| {
                let (name, index, pilot) = v.into_parts();
                Drone::new(name, index, pilot, lockstep.sim())
            })
            .collect();
        Self::with_drones(lockstep, drones, Some(rebuild))
    }

    /// The API over one SimpleFlight `flight` (vehicle 0, named
    /// [`VEHICLE_NAME`]); `rebuild` makes the same flight anew for `reset`.
    pub fn single(flight: Flight, rebuild: FlightRebuild) -> Self {
        let vehicle = |f: Flight| {
            let v = SimpleFlightVehicle {
                name: VEHICLE_NAME.to_string(),
                index: 0,
                status: f.status,
                requests: f.requests,
            };
            (f.lockstep, vec![ApiVehicle::SimpleFlight(v)])
        };
        let (lockstep, vehicles) = vehicle(flight);
        Self::new(lockstep, vehicles, Box::new(move || rebuild().map(vehicle)))
    }

    /// The API over `lockstep`, whose vehicle 0, named `name`, `firmware`
    /// flies through its bridge: state and sensor queries, the clock, wind
    /// and poses are served; motion commands, arming and `reset` are refused
    /// with a message naming the firmware's MAVLink port.
    pub fn with_firmware(lockstep: Lockstep, name: &str, firmware: FirmwarePilot) -> Self {
        let drones = vec![Drone::new(
            name.to_string(),
            0,
            Pilot::Firmware(firmware),
            lockstep.sim(),
        )];
        Self::with_drones(lockstep, drones, None)
    }

    fn with_drones(lockstep: Lockstep, drones: Vec<Drone>, rebuild: Option<Rebuild>) -> Self {
        AirSimApi {
            lockstep,
            drones,
            rebuild,
            paused: false,
            continue_until: None,
            stamp_offset_us: 0,
            external: None,
            renders: vision::Renders::default(),
        }
    }

    /// The vehicles' names, the default one first.
    pub fn vehicle_names(&self) -> Vec<String> {
        self.drones.iter().map(|d| d.name.clone()).collect()
    }

    /// The vehicle a call addresses: its last argument when that is a
    /// string (AirSim's clients send `vehicle_name` last; "" is the first
    /// vehicle), else the first vehicle.
    fn vehicle_of(&self, call: &Call) -> Result<usize, String> {
        if self.drones.is_empty() {
            return Err(format!("{}: the world has no vehicle", call.method));
        }
        let Some(name) = call.params.last().and_then(Value::as_str) else {
            return Ok(0);
        };
        if name.is_empty() {
            return Ok(0);
        }
        self.drones.iter().position(|d| d.name == name).ok_or_else(|| {
            format!(
                "Vehicle API for '{name}' is not available. This could either because this is simulation-only API or this vehicle does not exist"
            )
        })
    }

    /// Switches to external physics (AirSim's `ExternalPhysicsEngine`): no
    /// dynamics; the vehicle holds the last pose `simSetVehiclePose` gave,
    /// moving at the velocity and turning at the rate between the last two
    /// poses, and its sensors sample that motion, as pose replay does.
    /// SimpleFlight does not fly it; the motion commands are refused.
    pub fn set_external_physics(&mut self) {
        let (pos, att) = self
            .truth(0)
            .map_or((Vector3::zeros(), UnitQuaternion::identity()), |t| {
                (t.pos_ned_m, t.att_ned_frd)
            });
        self.external = Some(External {
            kin: KinematicState {
                state: mavsitl_sim::physics::BodyState {
                    pos_ned_m: pos,
                    vel_ned_m_s: Vector3::zeros(),
                    att_ned_frd: att,
                    rate_frd_rad_s: Vector3::zeros(),
                },
                accel_ned_m_s2: Vector3::zeros(),
                ang_accel_frd_rad_s2: Vector3::zeros(),
            },
            at: self.now(),
        });
    }

    /// The simulation (for recorders and the caller's loop).
    pub fn sim(&self) -> &Simulation {
        self.lockstep.sim()
    }

    /// Whether sim time should advance now (not paused, or continuing).
    pub fn running(&self) -> bool {
        !self.paused || self.continue_until.is_some()
    }

    /// Pauses or resumes the clock (`simPause`).
    pub fn set_paused(&mut self, paused: bool) {
        self.paused = paused;
    }

    /// Whether the client paused the clock (a continue runs unpaced).
    pub fn paused(&self) -> bool {
        self.paused
    }

    /// Sim time.
    pub fn now(&self) -> SimTime {
        self.lockstep.sim().time()
    }

    /// One tick of the loop; returns the answers that became due.
    ///
    /// # Errors
    /// [`SimError`] from the simulation.
    pub fn tick(&mut self, observer: &mut dyn Observer) -> Result<Vec<Reply>, SimError> {
        match self.external {
            Some(e) => {
                self.lockstep.sim_mut().step_replay(0, &e.kin);
                observer
                    .on_tick(self.lockstep.sim())
                    .map_err(SimError::Observer)?;
            }
            None => {
                for v in 0..self.drones.len() {
                    self.drive_task(v);
                }
                self.lockstep.tick(observer)?;
            }
        }
        let mut out = Vec::new();
        for v in 0..self.drones.len() {
            self.collect(v);
            self.progress_task(v, &mut out);
        }
        if let Some((end, conn, msgid)) = self.continue_until {
            if self.now() >= end {
                // AirSim's continue runs the clock, then pauses it.
                self.continue_until = None;
                self.paused = true;
                out.push((conn, msgid, Ok(Value::Nil)));
            }
        }
        Ok(out)
    }

    /// After a tick: vehicle `v`'s new samples and a hard ground contact.
    fn collect(&mut self, v: usize) {
        let now = self.now();
        let Some(d) = self.drones.get_mut(v) else {
            return;
        };
        let Some(vehicle) = self.lockstep.sim().vehicles().get(d.index) else {
            return;
        };
        let s = vehicle.samples();
        let l = &mut d.latest.samples;
        if let Some(i) = s.imu {
            l.imu = Some(i);
            if d.imu_backlog.len() == IMU_BACKLOG {
                d.imu_backlog.pop_front();
            }
            d.imu_backlog.push_back(i);
        }
        l.gps = s.gps.or(l.gps);
        l.baro = s.baro.or(l.baro);
        l.mag = s.mag.or(l.mag);
        l.range = s.range.or(l.range);
        let gt = vehicle.ground_truth();
        if d.collided.is_none() && vehicle.contact().normal_force_n > 0.0 && gt.vel_ned_m_s.z > 2.0
        {
            d.collided = Some((now, gt.pos_ned_m));
        }
    }

    /// Answers `call` now, or takes it on as a task (answered by a later
    /// [`AirSimApi::tick`]); `replies` may also get the answer of a task this
    /// call ends.
    pub fn handle(&mut self, call: Call, replies: &mut Vec<Reply>) {
        let (conn, msgid) = (call.conn, call.msgid);
        match self.dispatch(&call, replies) {
            Handled::Now(answer) => replies.push((conn, msgid, answer)),
            Handled::Later => {}
        }
    }

    /// Forgets a closed connection's task and continue.
    pub fn closed(&mut self, conn: ConnId) {
        for v in 0..self.drones.len() {
            if self.drones[v].task.as_ref().is_some_and(|t| t.conn == conn) {
                self.drones[v].task = None;
                self.hover(v);
            }
        }
        if self.continue_until.is_some_and(|(_, c, _)| c == conn) {
            self.continue_until = None;
        }
    }
}

enum Handled {
    Now(Result<Value, String>),
    Later,
}

fn arg(call: &Call, i: usize) -> Result<&Value, String> {
    call.params
        .get(i)
        .ok_or_else(|| format!("{}: argument {} missing", call.method, i + 1))
}

fn num(call: &Call, i: usize) -> Result<f64, String> {
    let v = arg(call, i)?;
    f64_of(v).filter(|x| x.is_finite()).ok_or_else(|| {
        format!(
            "{}: argument {} is not a finite number: {v}",
            call.method,
            i + 1
        )
    })
}

fn flag(call: &Call, i: usize) -> Result<bool, String> {
    let v = arg(call, i)?;
    v.as_bool()
        .ok_or_else(|| format!("{}: argument {} is not a boolean: {v}", call.method, i + 1))
}

/// AirSim's (drivetrain, yaw_mode) pair as a heading behaviour: ForwardOnly
/// faces the travel direction, else the yaw mode holds an angle (degrees)
/// or turns at a rate (degrees/s).
fn yaw_target(call: &Call, drivetrain: usize, yaw_mode: usize) -> Result<YawTarget, String> {
    let forward = call
        .params
        .get(drivetrain)
        .and_then(f64_of)
        .is_some_and(|d| d == 1.0);
    if forward {
        return Ok(YawTarget::AlongVelocity);
    }
    let Some(v) = call.params.get(yaw_mode) else {
        return Ok(YawTarget::Hold);
    };
    let (is_rate, x) = types::yaw_mode_of(v)
        .ok_or_else(|| format!("{}: yaw_mode is not a YawMode: {v}", call.method))?;
    Ok(if is_rate {
        if x == 0.0 {
            YawTarget::Hold
        } else {
            YawTarget::Rate(x.to_radians())
        }
    } else {
        YawTarget::Angle(x.to_radians())
    })
}

/// An angle or rate command as SimpleFlight's request. AirSim's client
/// negates pitch and yaw (or their rates) before sending; they are turned
/// back here, so that the angles are the client's: FRD/NED, roll right wing
/// down, pitch nose up, yaw clockwise positive, radians; `z` NED m;
/// `throttle` 0..1 of full thrust.
fn direct(call: &Call) -> Result<Request, String> {
    let m = call.method.as_str();
    let (a, b, c) = (num(call, 0)?, -num(call, 1)?, -num(call, 2)?);
    let lift = if m.ends_with('Z') {
        Lift::Down(num(call, 3)?)
    } else {
        Lift::Throttle(num(call, 3)?.clamp(0.0, 1.0))
    };
    Ok(if m.starts_with("moveByAngleRates") {
        Request::Rates {
            rates_frd: Vector3::new(a, b, c),
            lift,
        }
    } else {
        Request::Attitude {
            roll_rad: a,
            pitch_rad: b,
            yaw: if m.contains("Yawrate") {
                YawTarget::Rate(c)
            } else {
                YawTarget::Angle(c)
            },
            lift,
        }
    })
}

/// A timeout argument, s (AirSim's default 3e38 means none).
fn deadline(now: SimTime, call: &Call, i: usize) -> Option<SimTime> {
    let t = call.params.get(i).and_then(f64_of)?;
    (t.is_finite() && t > 0.0 && t < 1e9).then(|| later(now, secs(t)))
}

/// `us` microseconds after `t` (the end of time if that overflows).
fn later(t: SimTime, us: u64) -> SimTime {
    SimTime::from_micros(t.as_micros().saturating_add(us))
}

/// Seconds as whole microseconds (negative: 0).
fn secs(s: f64) -> u64 {
    (s.max(0.0) * 1e6).round() as u64
}

impl AirSimApi {
    fn dispatch(&mut self, call: &Call, replies: &mut Vec<Reply>) -> Handled {
        let now = |r: Result<Value, String>| Handled::Now(r);
        let m = call.method.as_str();
        if UNRENDERED.contains(&m) {
            return now(Err(format!(
                "{m}: not supported by mavsitl (its scene is fixed geometry: no spawning, weather, lighting or levels)"
            )));
        }
        if let Some(answer) = self.scene_call(call) {
            return now(answer);
        }
        let v = match self.vehicle_of(call) {
            Ok(v) => v,
            Err(e) => return now(Err(e)),
        };
        if matches!(self.drones[v].pilot, Pilot::Firmware(_))
            && (MOTION.contains(&m) || PILOT_ONLY.contains(&m))
        {
            return now(Err(self.refused(v, m)));
        }
        let car = matches!(self.drones[v].pilot, Pilot::Car(_));
        if car && (MOTION.contains(&m) || MULTIROTOR_ONLY.contains(&m)) {
            return now(Err(self.refused(v, m)));
        }
        if !car && CAR_ONLY.contains(&m) {
            return now(Err(format!(
                "{m}: '{}' is a multirotor; the car API drives cars (SimMode \"Car\")",
                self.drones[v].name
            )));
        }
        match call.method.as_str() {
            "ping" => now(Ok(Value::from(true))),
            "getServerVersion" | "getMinRequiredClientVersion" => now(Ok(Value::from(API_VERSION))),
            "listVehicles" => now(Ok(Value::Array(
                self.drones
                    .iter()
                    .map(|d| Value::from(d.name.as_str()))
                    .collect(),
            ))),
            "enableApiControl" => now(flag(call, 0).map(|on| {
                self.drones[v].api_control = on;
                Value::Nil
            })),
            "isApiControlEnabled" => now(Ok(Value::from(self.drones[v].api_control))),
            "armDisarm" => now(self.arm_disarm(v, call)),
            "simPause" => now(flag(call, 0).map(|p| {
                self.paused = p;
                if p {
                    // A pause ends a continue in progress, from any client.
                    self.end_continue(replies);
                }
                Value::Nil
            })),
            "simIsPaused" | "simIsPause" => now(Ok(Value::from(self.paused))),
            "simContinueForTime" => self.continue_for(call, true),
            "simContinueForFrames" => self.continue_for(call, false),
            "getMultirotorState" => now(Ok(self.multirotor_state(v))),
            "setCarControls" => now(self.set_car_controls(v, call)),
            "getCarControls" => now(Ok(self.car_controls(v).to_value())),
            "getCarState" => now(Ok(self.car_state(v))),
            "getImuData" => now(Ok(self.imu_data(v))),
            "getImuSamples" => now(Ok(self.imu_samples(v))),
            "getGpsData" => now(Ok(self.gps_data(v))),
            "getBarometerData" => now(Ok(self.barometer_data(v))),
            "getMagnetometerData" => now(Ok(self.magnetometer_data(v))),
            "getDistanceSensorData" => now(Ok(self.distance_data(v))),
            "getHomeGeoPoint" => now(Ok(self.home_geo_point())),
            "simGetVehiclePose" => now(Ok(self.vehicle_pose(v))),
            "simGetGroundTruthKinematics" => now(Ok(self.ground_truth_kinematics(v))),
            "simGetGroundTruthEnvironment" => now(Ok(self.ground_truth_environment(v))),
            "simGetCollisionInfo" => now(Ok(self.collision_info(v))),
            "simSetWind" => now(self.set_wind(call)),
            "simGetImages"
            | "simGetImage"
            | "simGetCameraInfo"
            | "getLidarData"
            | "simGetLidarSegmentation" => now(self.vision_call(call)),
            "simSetVehiclePose" => now(self.set_pose(v, call, replies)),
            "reset" => now(self.reset(replies)),
            "cancelLastTask" => {
                self.end_task(v, false, replies);
                self.end_continue(replies);
                self.hover(v);
                now(Ok(Value::Nil))
            }
            "hover" => {
                self.end_task(v, false, replies);
                self.hover(v);
                now(Ok(Value::from(true)))
            }
            m if MOTION.contains(&m) => match self.start_task(v, call, replies) {
                Ok(()) => Handled::Later,
                Err(e) => now(Err(e)),
            },
            m => now(Err(format!("{m}: not supported by mavsitl's AirSim API"))),
        }
    }
}

/// The motion commands, flown as tasks.
const MOTION: &[&str] = &[
    "takeoff",
    "land",
    "goHome",
    "moveToPosition",
    "moveToZ",
    "moveOnPath",
    "moveByVelocity",
    "moveByVelocityZ",
    "moveByVelocityBodyFrame",
    "moveByVelocityZBodyFrame",
    "rotateToYaw",
    "rotateByYawRate",
    "moveByRollPitchYawZ",
    "moveByRollPitchYawThrottle",
    "moveByRollPitchYawrateZ",
    "moveByRollPitchYawrateThrottle",
    "moveByAngleRatesZ",
    "moveByAngleRatesThrottle",
];

/// Besides the motion commands, what only the pilot can do: refused when a
/// firmware flies the vehicle (its commands come over its MAVLink port).
const PILOT_ONLY: &[&str] = &[
    "armDisarm",
    "hover",
    "cancelLastTask",
    "reset",
    "moveByMotorPWMs",
    "moveByRC",
];

/// A multirotor's own methods besides the motion commands: refused for a
/// car.
const MULTIROTOR_ONLY: &[&str] = &[
    "armDisarm",
    "hover",
    "cancelLastTask",
    "getMultirotorState",
    "moveByMotorPWMs",
    "moveByRC",
];

/// The car API's own methods: refused for a multirotor.
const CAR_ONLY: &[&str] = &["setCarControls", "getCarControls", "getCarState"];

/// Methods that need Unreal's world: a scene that changes its make-up,
/// weather, lighting or level.
const UNRENDERED: &[&str] = &[
    "simSpawnObject",
    "simDestroyObject",
    "simEnableWeather",
    "simSetWeatherParameter",
    "simSetTimeOfDay",
    "simSetCameraPose",
    "simGetDetections",
    "simLoadLevel",
];

// Cameras, LiDARs and the scene's objects.
impl AirSimApi {
    /// The vehicle named by argument `i` (absent or "": the first).
    fn vehicle_at(&self, call: &Call, i: usize) -> Result<usize, String> {
        match call.params.get(i).and_then(Value::as_str) {
            None | Some("") => Ok(0),
            Some(name) => self.drones.iter().position(|d| d.name == name).ok_or_else(|| {
                format!(
                    "Vehicle API for '{name}' is not available. This could either because this is simulation-only API or this vehicle does not exist"
                )
            }),
        }
    }

    /// The scene's own calls, which name no vehicle; None for other calls.
    fn scene_call(&mut self, call: &Call) -> Option<Result<Value, String>> {
        let sim = self.lockstep.sim();
        let text = |i: usize| -> Result<String, String> {
            arg(call, i)?
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("{}: argument {i} is not a string", call.method))
        };
        Some(match call.method.as_str() {
            "simListSceneObjects" => {
                let pattern = call.params.first().and_then(Value::as_str).unwrap_or(".*");
                vision::list_objects(sim, pattern)
            }
            "simGetObjectPose" => text(0).map(|n| vision::object_pose(sim, &n)),
            "simGetSegmentationObjectID" => text(0).map(|n| vision::segmentation_id(sim, &n)),
            "simSetObjectPose" => text(0).and_then(|n| {
                let pose = arg(call, 1)?.clone();
                Ok(Value::from(vision::set_object_pose(
                    self.lockstep.sim_mut(),
                    &n,
                    &pose,
                )))
            }),
            "simSetSegmentationObjectID" => text(0).and_then(|n| {
                let id = arg(call, 1)?
                    .as_i64()
                    .ok_or("simSetSegmentationObjectID: the id is not an integer")?;
                let regex = call.params.get(2).and_then(Value::as_bool).unwrap_or(false);
                vision::set_segmentation_id(self.lockstep.sim_mut(), &n, id, regex).map(Value::from)
            }),
            _ => return None,
        })
    }

    /// Images, camera information and LiDAR points.
    fn vision_call(&mut self, call: &Call) -> Result<Value, String> {
        let m = call.method.as_str();
        // The vehicle's argument, and AirSim's `external` flag after it.
        let at = match m {
            "simGetImage" => 2,
            _ => 1,
        };
        if call.params.get(at + 1).and_then(Value::as_bool) == Some(true) {
            return Err(format!(
                "{m}: external cameras are not fitted in mavsitl; give the vehicle's cameras in settings.json's Cameras"
            ));
        }
        let d = &self.drones[self.vehicle_at(call, at)?];
        let t = vision::Target {
            index: d.index,
            name: &d.name,
            origin: d.origin,
        };
        let offset = self.stamp_offset_us;
        let stamp = move |us: u64| us.saturating_add(offset).saturating_mul(1000);
        let sim = self.lockstep.sim();
        let now_ns = stamp(sim.time().as_micros());
        let name = |i: usize| match call.params.get(i) {
            Some(Value::String(s)) => Ok(s.as_str().unwrap_or_default().to_string()),
            Some(v) => v
                .as_i64()
                .map(|i| i.to_string())
                .ok_or_else(|| format!("{m}: argument {i} is not a name")),
            None => Ok(String::new()),
        };
        match m {
            "simGetImages" => {
                let requests = vision::requests_of(arg(call, 0)?)?;
                self.renders.images(sim, t, &requests, now_ns)
            }
            "simGetImage" => {
                let ty = arg(call, 1)?
                    .as_i64()
                    .ok_or("simGetImage: the image type is not an integer")?;
                self.renders.image(sim, t, &name(0)?, ty)
            }
            "simGetCameraInfo" => vision::camera_info(sim, t, &name(0)?),
            "getLidarData" => {
                let n = name(0)?;
                self.renders
                    .lidar_data(self.lockstep.sim_mut(), t, &n, stamp)
            }
            _ => {
                let n = name(0)?;
                self.renders
                    .lidar_segmentation(self.lockstep.sim_mut(), t, &n)
            }
        }
    }
}

// The car API.
impl AirSimApi {
    /// `setCarControls(controls, vehicle_name)`: the controls the car drives
    /// by from now on, once the client has API control (as AirSim's car).
    fn set_car_controls(&mut self, v: usize, call: &Call) -> Result<Value, String> {
        let Pilot::Car(link) = &self.drones[v].pilot else {
            return Err(self.refused(v, "setCarControls"));
        };
        if !self.drones[v].api_control {
            return Err(
                "setCarControls: Vehicle cannot be controlled because API control is not enabled: call enableApiControl(True) first".into(),
            );
        }
        let controls = CarControls::from_value(call.params.first().unwrap_or(&Value::Nil))?;
        *link.borrow_mut() = controls;
        Ok(Value::Nil)
    }

    fn car_controls(&self, v: usize) -> CarControls {
        match &self.drones[v].pilot {
            Pilot::Car(link) => *link.borrow(),
            _ => CarControls::default(),
        }
    }

    /// AirSim's `CarState`: the forward speed (negative backwards), the
    /// gear, the driven wheels' speed as the engine's rpm and its no-load
    /// most, the handbrake, the kinematics (true, as AirSim's car reports
    /// them) and the time stamp.
    fn car_state(&self, v: usize) -> Value {
        let c = self.car_controls(v);
        let Some(vehicle) = self.vehicle(v) else {
            return Value::Nil;
        };
        let t = vehicle.ground_truth();
        let speed = (t.att_ned_frd.inverse() * t.vel_ned_m_s).x;
        let rpm = |rad_s: f64| rad_s * 60.0 / std::f64::consts::TAU;
        let (wheels, most) = match vehicle.model() {
            mavsitl_sim::vehicle::VehicleModel::Rover(r) => {
                let p = r.params();
                let spin = r.wheels().iter().map(|w| w.spin_rad_s).sum::<f64>() / 4.0;
                (rpm(spin), rpm(p.top_speed_m_s / p.wheel_radius_m))
            }
            _ => (0.0, 0.0),
        };
        let gear = if c.is_manual_gear {
            c.manual_gear
        } else {
            i64::from(c.drive() > 0.0 || speed > 0.05)
        };
        types::map(vec![
            ("speed", Value::from(speed)),
            ("gear", Value::from(gear)),
            ("rpm", Value::from(wheels)),
            ("maxrpm", Value::from(most)),
            ("handbrake", Value::from(c.handbrake)),
            ("kinematics_estimated", self.ground_truth_kinematics(v)),
            (
                "timestamp",
                Value::from(self.stamp_ns(self.lockstep.sim().time())),
            ),
        ])
    }
}

// Queries.
impl AirSimApi {
    /// The pilot's status: SimpleFlight's own; for a firmware, its armed
    /// state and the ground truth's contact (its estimate is on its MAVLink
    /// port).
    fn pilot_state(&self, v: usize) -> PilotState {
        match &self.drones[v].pilot {
            Pilot::SimpleFlight { status, .. } => {
                let s = status.borrow();
                PilotState {
                    armed: s.armed,
                    on_ground: s.on_ground,
                    mode: s.mode,
                    estimate: s.estimate,
                    home_ned: s.home_ned,
                    prearm_failure: s.prearm_failure.clone(),
                    cruise_speed_m_s: s.cruise_speed_m_s,
                }
            }
            Pilot::Car(_) => PilotState {
                on_ground: true,
                ..PilotState::default()
            },
            Pilot::Firmware(f) => PilotState {
                armed: (f.armed)(),
                on_ground: self
                    .lockstep
                    .sim()
                    .vehicles()
                    .first()
                    .is_none_or(|v| v.contact().normal_force_n > 0.0),
                ..PilotState::default()
            },
        }
    }

    /// Why `method` is not served when a firmware flies the vehicle.
    fn refused(&self, v: usize, method: &str) -> String {
        match &self.drones[v].pilot {
            Pilot::Firmware(f) => format!(
                "{method}: {0} flies this vehicle (PX4Multirotor); command {0} over MAVLink ({1}, e.g. with MAVSDK or QGroundControl). The AirSim API serves state, sensors, the clock, wind and poses",
                f.name, f.mavlink
            ),
            Pilot::SimpleFlight { .. } => format!("{method}: not supported"),
            Pilot::Car(_) => format!(
                "{method}: '{}' is a car (SimMode \"Car\"): drive it with setCarControls",
                self.drones[v].name
            ),
        }
    }

    /// A time stamp, ns: sim time, continued across resets.
    fn stamp_ns(&self, t: SimTime) -> u64 {
        t.as_micros()
            .saturating_add(self.stamp_offset_us)
            .saturating_mul(1000)
    }

    /// Vehicle `v`'s simulated body.
    fn vehicle(&self, v: usize) -> Option<&mavsitl_sim::vehicle::Vehicle> {
        let index = self.drones.get(v)?.index;
        self.lockstep.sim().vehicles().get(index)
    }

    fn truth(&self, v: usize) -> Option<mavsitl_core::controller::GroundTruth> {
        self.vehicle(v).map(|vehicle| vehicle.ground_truth())
    }

    fn geo(&self, ned: &Vector3<f64>) -> Value {
        let g = self.lockstep.sim().world().frame().to_geodetic(ned);
        types::geo_point(g.lat_deg(), g.lon_deg(), g.alt_m)
    }

    fn home_geo_point(&self) -> Value {
        self.geo(&Vector3::zeros())
    }

    fn kinematics_of(
        &self,
        pos: &Vector3<f64>,
        att: &UnitQuaternion<f64>,
        vel: &Vector3<f64>,
        rate: &Vector3<f64>,
        accel: &Vector3<f64>,
        ang: &Vector3<f64>,
    ) -> Value {
        types::kinematics(&Kinematics {
            pos,
            att,
            vel,
            rate,
            accel,
            ang_accel: ang,
        })
    }

    fn ground_truth_kinematics(&self, v: usize) -> Value {
        let Some(t) = self.truth(v) else {
            return Value::Nil;
        };
        self.kinematics_of(
            &(t.pos_ned_m - self.drones[v].origin),
            &t.att_ned_frd,
            &t.vel_ned_m_s,
            &t.rate_frd_rad_s,
            &t.accel_ned_m_s2,
            &t.ang_accel_frd_rad_s2,
        )
    }

    fn vehicle_pose(&self, v: usize) -> Value {
        match self.truth(v) {
            Some(t) => types::pose(&(t.pos_ned_m - self.drones[v].origin), &t.att_ned_frd),
            None => Value::Nil,
        }
    }

    fn multirotor_state(&self, v: usize) -> Value {
        let st = self.pilot_state(v);
        let zero = Vector3::zeros();
        let estimate = st.estimate.filter(|_| self.external.is_none());
        let kin = match estimate {
            Some(e) => self.kinematics_of(
                &(e.pos_ned_m - self.drones[v].origin),
                &e.att_ned_frd,
                &e.vel_ned_m_s,
                &e.rate_frd_rad_s,
                &zero,
                &zero,
            ),
            None => self.ground_truth_kinematics(v),
        };
        let pos = match estimate {
            Some(e) => e.pos_ned_m,
            None => self.truth(v).map_or(zero, |t| t.pos_ned_m),
        };
        let landed = if st.on_ground || !st.armed { 0 } else { 1 };
        map(vec![
            ("collision", self.collision_info(v)),
            ("kinematics_estimated", kin),
            ("gps_location", self.geo(&pos)),
            ("timestamp", Value::from(self.stamp_ns(self.now()))),
            ("landed_state", Value::from(landed)),
            (
                "rc_data",
                map(vec![
                    ("timestamp", Value::from(0)),
                    ("is_initialized", Value::from(false)),
                    ("is_valid", Value::from(false)),
                ]),
            ),
            ("ready", Value::from(st.prearm_failure.is_none())),
            (
                "ready_message",
                Value::from(st.prearm_failure.clone().unwrap_or_default()),
            ),
            ("can_arm", Value::from(st.prearm_failure.is_none())),
        ])
    }

    fn imu_value(&self, v: usize, i: &ImuSample) -> Value {
        let att = self
            .truth(v)
            .map_or(UnitQuaternion::identity(), |t| t.att_ned_frd);
        map(vec![
            ("time_stamp", Value::from(self.stamp_ns(i.time))),
            ("orientation", types::quaternionr(&att)),
            ("angular_velocity", vector3r(&i.gyro_rad_s)),
            ("linear_acceleration", vector3r(&i.accel_m_s2)),
        ])
    }

    fn imu_data(&self, v: usize) -> Value {
        match self.drones[v].latest.samples.imu {
            Some(i) => self.imu_value(v, &i),
            None => map(vec![("time_stamp", Value::from(0))]),
        }
    }

    /// Every IMU sample since the last call (a mavsitl extension), oldest
    /// first, as a list of `ImuData`.
    fn imu_samples(&mut self, v: usize) -> Value {
        let all: Vec<ImuSample> = self.drones[v].imu_backlog.drain(..).collect();
        Value::Array(all.iter().map(|i| self.imu_value(v, i)).collect())
    }

    fn gps_data(&self, v: usize) -> Value {
        let Some(g) = self.drones[v].latest.samples.gps else {
            return map(vec![("is_valid", Value::from(false))]);
        };
        // AirSim's GnssFixType: 0 none, 2 2-D, 3 3-D.
        let fix = match g.fix {
            mavsitl_sim::sensors::FixType::NoFix => 0,
            mavsitl_sim::sensors::FixType::Fix2d => 2,
            mavsitl_sim::sensors::FixType::Fix3d => 3,
        };
        map(vec![
            ("time_stamp", Value::from(self.stamp_ns(g.delivered))),
            (
                "gnss",
                map(vec![
                    (
                        "geo_point",
                        types::geo_point(
                            g.position.lat_deg(),
                            g.position.lon_deg(),
                            g.position.alt_m,
                        ),
                    ),
                    ("eph", Value::from(g.eph_m)),
                    ("epv", Value::from(g.epv_m)),
                    ("velocity", vector3r(&g.vel_ned_m_s)),
                    ("fix_type", Value::from(fix)),
                    ("time_utc", Value::from(self.stamp_ns(g.measured) / 1000)),
                ]),
            ),
            ("is_valid", Value::from(fix == 3)),
        ])
    }

    fn barometer_data(&self, v: usize) -> Value {
        let Some(b) = self.drones[v].latest.samples.baro else {
            return map(vec![("time_stamp", Value::from(0))]);
        };
        map(vec![
            ("time_stamp", Value::from(self.stamp_ns(b.time))),
            ("altitude", Value::from(b.pressure_altitude_m)),
            ("pressure", Value::from(b.pressure_pa)),
            ("qnh", Value::from(1013.25)),
        ])
    }

    fn magnetometer_data(&self, v: usize) -> Value {
        let Some(m) = self.drones[v].latest.samples.mag else {
            return map(vec![("time_stamp", Value::from(0))]);
        };
        map(vec![
            ("time_stamp", Value::from(self.stamp_ns(m.time))),
            ("magnetic_field_body", vector3r(&m.field_gauss)),
            ("magnetic_field_covariance", Value::Array(Vec::new())),
        ])
    }

    fn distance_data(&self, v: usize) -> Value {
        let (stamp, d) = match self.drones[v].latest.samples.range {
            Some(r) => (
                self.stamp_ns(r.time),
                match r.range {
                    mavsitl_sim::sensors::rangefinder::Range::Distance(d) => d,
                    _ => f64::INFINITY,
                },
            ),
            None => (0, f64::INFINITY),
        };
        map(vec![
            ("time_stamp", Value::from(stamp)),
            ("distance", Value::from(d)),
            ("min_distance", Value::from(0.0)),
            ("max_distance", Value::from(f64::INFINITY)),
            (
                "relative_pose",
                types::pose(&Vector3::zeros(), &UnitQuaternion::identity()),
            ),
        ])
    }

    fn ground_truth_environment(&self, v: usize) -> Value {
        let Some(vehicle) = self.vehicle(v) else {
            return Value::Nil;
        };
        let pos = vehicle.ground_truth().pos_ned_m;
        let Some(env) = vehicle.environment() else {
            return Value::Nil;
        };
        map(vec![
            ("position", vector3r(&pos)),
            ("geo_point", self.geo(&pos)),
            ("gravity", vector3r(&env.gravity_ned_m_s2)),
            ("air_pressure", Value::from(env.air.pressure_pa)),
            ("temperature", Value::from(env.air.temperature_k)),
            ("air_density", Value::from(env.air.density_kg_m3)),
        ])
    }

    fn collision_info(&self, v: usize) -> Value {
        match self.drones[v].collided {
            Some((t, at)) => types::collision(
                true,
                &Vector3::new(0.0, 0.0, -1.0),
                &(at - self.drones[v].origin),
                self.stamp_ns(t),
            ),
            None => types::collision(false, &Vector3::zeros(), &Vector3::zeros(), 0),
        }
    }
}

/// Longest `simContinueForTime`, s (as `--duration`).
const MAX_CONTINUE_S: f64 = 1e7;

/// Farthest from home `simSetVehiclePose` may put the vehicle, m, across
/// and up or down (the local NED frame's flat-earth range).
const MAX_POSE_M: f64 = 100_000.0;

// Control.
impl AirSimApi {
    fn set_wind(&mut self, call: &Call) -> Result<Value, String> {
        let v = arg(call, 0)?;
        let w = types::vector3r_of(v)
            .filter(|w| w.iter().all(|x| x.is_finite()))
            .ok_or_else(|| format!("simSetWind: {v} is not a Vector3r"))?;
        // A scenario's (and settings.json's) range: 100 m/s across, 50 up or down.
        if w.xy().norm() > 100.0 || w.z.abs() > 50.0 {
            return Err(format!(
                "simSetWind: {} m/s across and {} m/s down is outside 100 m/s across and 50 m/s up or down",
                mavsitl_core::time::show(w.xy().norm()),
                mavsitl_core::time::show(w.z)
            ));
        }
        self.lockstep.sim_mut().set_wind_ned_m_s(w);
        Ok(Value::Nil)
    }

    /// Teleports the vehicle (at rest) to a pose; NaN components keep the
    /// current value, as AirSim's do.
    fn set_pose(
        &mut self,
        v: usize,
        call: &Call,
        replies: &mut Vec<Reply>,
    ) -> Result<Value, String> {
        let pose = arg(call, 0)?;
        let bad = || format!("simSetVehiclePose: {pose} is not a Pose");
        let p = types::field(pose, "position").ok_or_else(bad)?;
        let o = types::field(pose, "orientation").ok_or_else(bad)?;
        let num = |m: &Value, k: &str| types::field(m, k).and_then(f64_of).ok_or_else(bad);
        let Some(t) = self.truth(v) else {
            return Err("simSetVehiclePose: no vehicle".into());
        };
        let keep = |x: f64, old: f64| if x.is_nan() { old } else { x };
        // In the vehicle's own frame, from its start, as every position here.
        let origin = self.drones[v].origin;
        let here = t.pos_ned_m - origin;
        let pos = Vector3::new(
            keep(num(p, "x_val")?, here.x),
            keep(num(p, "y_val")?, here.y),
            keep(num(p, "z_val")?, here.z),
        );
        let q = [
            num(o, "w_val")?,
            num(o, "x_val")?,
            num(o, "y_val")?,
            num(o, "z_val")?,
        ];
        let att = if q.iter().any(|x| x.is_nan()) {
            t.att_ned_frd
        } else {
            UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(q[0], q[1], q[2], q[3]))
        };
        if !pos.iter().all(|x| x.is_finite()) {
            return Err(bad());
        }
        if pos.xy().norm() > MAX_POSE_M || pos.z.abs() > MAX_POSE_M {
            return Err(format!(
                "simSetVehiclePose: ({}, {}, {}) m is more than {MAX_POSE_M} m from home",
                mavsitl_core::time::show(pos.x),
                mavsitl_core::time::show(pos.y),
                mavsitl_core::time::show(pos.z)
            ));
        }
        let pos = pos + origin;
        self.end_task(v, false, replies);
        if let Some(e) = self.external.as_mut() {
            // The motion between the last two poses, held until the next.
            let now = self.lockstep.sim().time();
            let dt = now.secs_since(e.at);
            let last = e.kin.state;
            let (vel, rate) = if dt > 0.0 {
                let dq = last.att_ned_frd.inverse() * att;
                ((pos - last.pos_ned_m) / dt, dq.scaled_axis() / dt)
            } else {
                (last.vel_ned_m_s, last.rate_frd_rad_s)
            };
            e.kin.state = mavsitl_sim::physics::BodyState {
                pos_ned_m: pos,
                vel_ned_m_s: vel,
                att_ned_frd: att,
                rate_frd_rad_s: rate,
            };
            e.at = now;
            return Ok(Value::Nil);
        }
        let index = self.drones[v].index;
        self.lockstep.sim_mut().set_vehicle_state(
            index,
            mavsitl_sim::physics::BodyState {
                pos_ned_m: pos,
                vel_ned_m_s: Vector3::zeros(),
                att_ned_frd: att,
                rate_frd_rad_s: Vector3::zeros(),
            },
        );
        Ok(Value::Nil)
    }

    /// Starts the flight again from its beginning: the vehicle at its start
    /// pose, armed if it was (as AirSim's comes back armed), API control
    /// given back; the clock keeps its pause, and time stamps go on from
    /// where they were (the world's own time starts at 0 again).
    fn reset(&mut self, replies: &mut Vec<Reply>) -> Result<Value, String> {
        let Some(rebuild) = &self.rebuild else {
            return Err(self.refused(0, "reset"));
        };
        let (lockstep, vehicles) = rebuild().map_err(|e| e.to_string())?;
        let was_armed: Vec<bool> = (0..self.drones.len())
            .map(|v| self.pilot_state(v).armed)
            .collect();
        for v in 0..self.drones.len() {
            self.end_task(v, false, replies);
        }
        self.end_continue(replies);
        self.stamp_offset_us = self
            .stamp_offset_us
            .saturating_add(self.lockstep.sim().time().as_micros());
        self.lockstep = lockstep;
        for (d, new) in self.drones.iter_mut().zip(vehicles) {
            let name = std::mem::take(&mut d.name);
            let (_, index, pilot) = new.into_parts();
            *d = Drone::new(name, index, pilot, self.lockstep.sim());
        }
        for (v, armed) in was_armed.into_iter().enumerate() {
            if armed {
                self.push(v, Request::Arm { force: false });
            }
        }
        Ok(Value::Nil)
    }

    fn push(&self, v: usize, r: Request) {
        if let Pilot::SimpleFlight { requests, .. } = &self.drones[v].pilot {
            requests.borrow_mut().push_back(r);
        }
    }

    fn arm_disarm(&mut self, v: usize, call: &Call) -> Result<Value, String> {
        let arm = flag(call, 0)?;
        let st = self.pilot_state(v);
        if !self.drones[v].api_control {
            // AirSim's OffboardApi answers False and logs the same.
            tracing::info!(
                "airsim: armDisarm({}) refused: the vehicle cannot be {} via API because API has not been given control (call enableApiControl(True) first)",
                if arm { "True" } else { "False" },
                if arm { "armed" } else { "disarmed" }
            );
            return Ok(Value::from(false));
        }
        if arm {
            if let Some(why) = &st.prearm_failure {
                tracing::info!("airsim: armDisarm(True) refused: {why}");
                return Ok(Value::from(false));
            }
            self.push(v, Request::Arm { force: false });
        } else {
            if !st.on_ground {
                tracing::info!("airsim: armDisarm(False) refused: the vehicle is flying");
                return Ok(Value::from(false));
            }
            self.push(v, Request::Disarm { force: false });
        }
        Ok(Value::from(true))
    }

    /// Ends a `simContinueFor*` in progress, answering it (a pause, a
    /// cancel or a reset from any client stops it).
    fn end_continue(&mut self, replies: &mut Vec<Reply>) {
        if let Some((_, conn, msgid)) = self.continue_until.take() {
            replies.push((conn, msgid, Ok(Value::Nil)));
        }
    }

    fn continue_for(&mut self, call: &Call, time: bool) -> Handled {
        // As `--duration`: at most 1e7 s of sim time, or as many ticks.
        let max = if time {
            MAX_CONTINUE_S
        } else {
            MAX_CONTINUE_S * f64::from(self.lockstep.sim().rate().hz())
        };
        let n = match num(call, 0) {
            Ok(n) if (0.0..=max).contains(&n) => n,
            Ok(n) => {
                return Handled::Now(Err(format!(
                    "{}: {} is outside 0..={}",
                    call.method,
                    mavsitl_core::time::show(n),
                    mavsitl_core::time::show(max)
                )))
            }
            Err(e) => return Handled::Now(Err(e)),
        };
        let period = self.lockstep.sim().rate().period_us();
        let us = if time {
            // Whole ticks: the clock advances in physics steps.
            secs(n).div_ceil(period).saturating_mul(period)
        } else {
            (n.round() as u64).saturating_mul(period)
        };
        self.continue_until = Some((later(self.now(), us), call.conn, call.msgid));
        if us == 0 {
            self.continue_until = None;
            return Handled::Now(Ok(Value::Nil));
        }
        Handled::Later
    }

    fn position(&self, v: usize) -> Vector3<f64> {
        self.pilot_state(v).estimate.map_or_else(
            || self.truth(v).map_or(Vector3::zeros(), |t| t.pos_ned_m),
            |e| e.pos_ned_m,
        )
    }

    fn heading(&self, v: usize) -> f64 {
        let q = self
            .pilot_state(v)
            .estimate
            .map_or(UnitQuaternion::identity(), |e| e.att_ned_frd);
        q.euler_angles().2
    }

    /// Holds where the vehicle comes to a stop, facing as it does now (as
    /// AirSim's `hover` holds the current position). A reposition would fly
    /// a leg there and turn to face along it.
    fn hover(&mut self, v: usize) {
        self.drones[v].hold = Some(Hold {
            yaw: self.heading(v),
        });
    }

    /// Before a tick with no task: the hold's brake, heading held.
    /// Nothing on the ground.
    fn drive_hold(&mut self, v: usize) {
        let Some(hold) = self.drones[v].hold else {
            return;
        };
        let st = self.pilot_state(v);
        if !st.armed || st.on_ground {
            return;
        }
        self.push(
            v,
            Request::Brake {
                yaw: YawTarget::Angle(hold.yaw),
            },
        );
    }

    /// Ends the task in force (answered `done`).
    fn end_task(&mut self, v: usize, done: bool, replies: &mut Vec<Reply>) {
        if let Some(t) = self.drones[v].task.take() {
            replies.push((t.conn, t.msgid, Ok(Value::from(done))));
        }
    }

    fn start_task(
        &mut self,
        v: usize,
        call: &Call,
        replies: &mut Vec<Reply>,
    ) -> Result<(), String> {
        let now = self.now();
        let here = self.position(v);
        if self.external.is_some() {
            return Err(format!(
                "{}: external physics (ExternalPhysicsEngine): the client moves the vehicle with simSetVehiclePose",
                call.method
            ));
        }
        let (goal, path, deadline) = self.plan_task(v, call, now, here)?;
        self.end_task(v, false, replies);
        self.drones[v].hold = None;
        self.drones[v].task = Some(Task {
            conn: call.conn,
            msgid: call.msgid,
            started: now,
            method: call.method.clone(),
            goal,
            path,
            deadline,
        });
        Ok(())
    }

    /// The task a motion command asks for: its goal, path (for position
    /// goals) and deadline; a take-off or landing is asked of SimpleFlight
    /// here.
    fn plan_task(
        &self,
        v: usize,
        call: &Call,
        now: SimTime,
        here: Vector3<f64>,
    ) -> Result<TaskPlan, String> {
        Ok(match call.method.as_str() {
            "takeoff" => {
                self.push(
                    v,
                    Request::Takeoff {
                        alt_m: TAKEOFF_HEIGHT_M,
                    },
                );
                (Goal::Takeoff, Vec::new(), deadline(now, call, 0))
            }
            "land" => {
                self.push(v, Request::SetMode(FlightMode::Land));
                (Goal::Land, Vec::new(), deadline(now, call, 0))
            }
            "goHome" | "moveToPosition" | "moveToZ" | "moveOnPath" => {
                self.path_plan(v, call, now, here)?
            }
            m @ ("moveByVelocity"
            | "moveByVelocityZ"
            | "moveByVelocityBodyFrame"
            | "moveByVelocityZBodyFrame") => {
                let z_hold = m.contains('Z');
                let vel = Vector3::new(
                    num(call, 0)?,
                    num(call, 1)?,
                    if z_hold { 0.0 } else { num(call, 2)? },
                );
                let hold_z = z_hold.then(|| num(call, 2)).transpose()?;
                let until = later(now, secs(num(call, 3)?));
                let yaw = yaw_target(call, 4, 5)?;
                (
                    Goal::Velocity {
                        vel,
                        body: m.ends_with("BodyFrame"),
                        hold_z,
                        yaw,
                        until,
                    },
                    Vec::new(),
                    None,
                )
            }
            "rotateToYaw" => {
                let heading = num(call, 0)?.to_radians();
                let margin = call
                    .params
                    .get(2)
                    .and_then(f64_of)
                    .unwrap_or(5.0)
                    .to_radians();
                (
                    Goal::Yaw { heading, margin },
                    Vec::new(),
                    deadline(now, call, 1),
                )
            }
            "rotateByYawRate" => {
                let rate = num(call, 0)?.to_radians();
                let until = later(now, secs(num(call, 1)?));
                (
                    Goal::Velocity {
                        vel: Vector3::zeros(),
                        body: false,
                        hold_z: None,
                        yaw: YawTarget::Rate(rate),
                        until,
                    },
                    Vec::new(),
                    None,
                )
            }
            m if m.starts_with("moveByRollPitch") || m.starts_with("moveByAngleRates") => {
                let until = later(now, secs(num(call, 4)?));
                (
                    Goal::Direct {
                        req: direct(call)?,
                        until,
                    },
                    Vec::new(),
                    None,
                )
            }
            m => return Err(format!("{m}: not a motion command")),
        })
    }

    /// Position goals: home at the current altitude, a point, a height, a
    /// path (NED m from the arguments).
    fn path_plan(
        &self,
        v: usize,
        call: &Call,
        now: SimTime,
        here: Vector3<f64>,
    ) -> Result<TaskPlan, String> {
        Ok(match call.method.as_str() {
            "goHome" => {
                let o = self.drones[v].origin;
                let to = Vector3::new(o.x, o.y, here.z);
                let speed = self.pilot_state(v).cruise_speed_m_s.max(1.0);
                (
                    Goal::Path {
                        next: 0,
                        speed,
                        yaw: YawTarget::AlongVelocity,
                    },
                    vec![to],
                    deadline(now, call, 0),
                )
            }
            "moveToPosition" => {
                let to = Vector3::new(num(call, 0)?, num(call, 1)?, num(call, 2)?)
                    + self.drones[v].origin;
                let speed = num(call, 3)?;
                let yaw = yaw_target(call, 5, 6)?;
                (
                    Goal::Path {
                        next: 0,
                        speed,
                        yaw,
                    },
                    vec![to],
                    deadline(now, call, 4),
                )
            }
            "moveToZ" => {
                let to = Vector3::new(here.x, here.y, num(call, 0)?);
                let yaw = yaw_target(call, usize::MAX, 3)?;
                (
                    Goal::Path {
                        next: 0,
                        speed: num(call, 1)?,
                        yaw,
                    },
                    vec![to],
                    deadline(now, call, 2),
                )
            }
            "moveOnPath" => {
                let Value::Array(points) = arg(call, 0)? else {
                    return Err("moveOnPath: path is not a list".into());
                };
                let path = points
                    .iter()
                    .map(|p| {
                        types::vector3r_of(p)
                            .map(|q| q + self.drones[v].origin)
                            .ok_or_else(|| format!("moveOnPath: {p} is not a Vector3r"))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                if path.is_empty() {
                    return Err("moveOnPath: the path is empty".into());
                }
                let yaw = yaw_target(call, 3, 4)?;
                (
                    Goal::Path {
                        next: 0,
                        speed: num(call, 1)?,
                        yaw,
                    },
                    path,
                    deadline(now, call, 2),
                )
            }
            m => return Err(format!("{m}: not a position command")),
        })
    }

    /// Before a tick: the task's velocity set-point for it.
    fn drive_task(&mut self, v: usize) {
        let Some(task) = self.drones[v].task.clone() else {
            self.drive_hold(v);
            return;
        };
        let here = self.position(v);
        if !matches!(task.goal, Goal::Takeoff | Goal::Land) {
            // From the ground, armed: lift off first, as AirSim's
            // SimpleFlight flies its goals from the ground.
            let st = self.pilot_state(v);
            if st.armed && st.on_ground {
                if st.mode != Some(FlightMode::Takeoff) {
                    self.push(v, Request::Takeoff { alt_m: LIFT_M });
                }
                return;
            }
        }
        let cmd = match task.goal {
            Goal::Takeoff | Goal::Land => return,
            Goal::Path { next, speed, yaw } => {
                let Some(target) = task.path.get(next) else {
                    return;
                };
                let to = target - here;
                let d = to.norm();
                let last = next + 1 == task.path.len();
                let v = if last {
                    speed.min((2.0 * BRAKE_M_S2 * d).sqrt()).min(d)
                } else {
                    speed
                };
                let vel = if d > 1e-6 {
                    to / d * v
                } else {
                    Vector3::zeros()
                };
                (vel, yaw)
            }
            Goal::Velocity {
                vel,
                body,
                hold_z,
                yaw,
                ..
            } => {
                let mut vw = vel;
                if body {
                    let (s, c) = self.heading(v).sin_cos();
                    vw = Vector3::new(c * vel.x - s * vel.y, s * vel.x + c * vel.y, vel.z);
                }
                if let Some(z) = hold_z {
                    vw.z = (z - here.z).clamp(-2.0, 2.0);
                }
                (vw, yaw)
            }
            Goal::Yaw { heading, .. } => (Vector3::zeros(), YawTarget::Angle(heading)),
            Goal::Direct { req, .. } => {
                self.push(v, req);
                return;
            }
        };
        self.push(
            v,
            Request::Velocity {
                vel_ned_m_s: cmd.0,
                yaw: cmd.1,
            },
        );
    }

    /// After a tick: whether the task is done (or timed out).
    fn progress_task(&mut self, v: usize, out: &mut Vec<Reply>) {
        let Some(mut task) = self.drones[v].task.take() else {
            return;
        };
        let now = self.now();
        let here = self.position(v);
        let st = self.pilot_state(v);
        // SimpleFlight applies requests at its next control cycle: a command
        // it cannot follow shows after that.
        if now.secs_since(task.started) > GRACE_S {
            let why = match task.goal {
                Goal::Land => None,
                _ if !st.armed => Some("not armed (call armDisarm(True) first)"),
                _ => None,
            };
            if let Some(why) = why {
                out.push((
                    task.conn,
                    task.msgid,
                    Err(format!("{}: {why}", task.method)),
                ));
                return;
            }
        }
        let done = match &mut task.goal {
            Goal::Takeoff => {
                let home_z = st.home_ned.map_or(0.0, |h| h.z);
                st.mode == Some(FlightMode::Hold) && home_z - here.z > TAKEOFF_HEIGHT_M - 0.5
            }
            Goal::Land => st.on_ground,
            Goal::Path { next, .. } => {
                let reached = task.path.get(*next).is_some_and(|p| {
                    (p - here).norm()
                        < DISTANCE_ACCURACY_M.max(if *next + 1 < task.path.len() {
                            1.0
                        } else {
                            0.0
                        })
                });
                if reached {
                    *next += 1;
                }
                *next >= task.path.len()
            }
            Goal::Velocity { until, .. } | Goal::Direct { until, .. } => now >= *until,
            Goal::Yaw { heading, margin } => {
                let e = (self.heading(v) - *heading + std::f64::consts::PI)
                    .rem_euclid(std::f64::consts::TAU)
                    - std::f64::consts::PI;
                e.abs() < *margin
            }
        };
        if done {
            if !matches!(task.goal, Goal::Takeoff | Goal::Land) {
                self.hover(v);
            }
            out.push((task.conn, task.msgid, Ok(Value::from(true))));
        } else if task.deadline.is_some_and(|d| now >= d) {
            if !matches!(task.goal, Goal::Takeoff | Goal::Land) {
                self.hover(v);
            }
            out.push((task.conn, task.msgid, Ok(Value::from(false))));
        } else {
            self.drones[v].task = Some(task);
        }
    }
}
