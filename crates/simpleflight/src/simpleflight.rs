//! SimpleFlight as a `FlightController`: estimator → mission executor → modes →
//! multicopter cascade or boat driver → actuators.
//!
//! Modes carry PX4's names (they become MAVLink custom modes for ground
//! stations): Manual, Hold, Takeoff, Mission, Return, Land, Offboard. With
//! `auto_arm` (`mavsitl fly`) it arms itself once the pre-arm checks pass
//! (sensors alive, GPS 3-D fix, estimator aligned) and flies the mission.
//! Otherwise it waits on the ground, disarmed in Hold, for [`Request`]s from a
//! ground station (`mavsitl serve`) and behaves as PX4 does: Takeoff climbs to
//! the requested altitude and holds, Mission flies the stored mission from the
//! current item (taking off first if needed) and holds at its end, Return
//! climbs to `RTL_RETURN_ALT`, flies home and lands, Land lands where it is,
//! and it disarms `COM_DISARM_LAND` s after touching down or
//! `COM_DISARM_PRFLT` s after arming without taking off. The summary and events
//! are shared through [`StatusHandle`].
//!
//! This file holds the types, construction and the `FlightController`
//! impl; the rest is in `simpleflight/`: `executor.rs` (mission steps →
//! primitives), `modes.rs` (arming, modes, one handler per request),
//! `multicopter_flight.rs` (primitives → the cascade's set-points, landing
//! detection), `boat.rs` (primitives → the Rover guidance port) and
//! `reactions.rs` (failsafe actions), with `test_support.rs` for their unit
//! tests.

mod boat;
mod executor;
mod modes;
mod multicopter_flight;
mod reactions;
#[cfg(test)]
mod test_support;

use mavsitl_core::shared::Shared;

use nalgebra::{UnitQuaternion, Vector2, Vector3};
use world_magnetic_model::time::Date;

use super::airframe::{UgvOutputs, VehicleConfig, MAX_MOTORS};
use super::chain::{Chain, LegLimits, PathTarget};
use super::estimator::{EstimatedState, Estimator, EstimatorParams};
use super::event_log::EventLog;
use super::failsafe::{
    Failsafe, FailsafeAction, FailsafeMonitor, FailsafeParams, MotorFailureDetector,
};
use super::geofence::Geofence;
use super::mission_plan::Step;
use super::multicopter::{McParams, McSetpoint, MulticopterControl};
use super::params::{FlightParams, ParamStore};
use super::request::{Request, RequestQueue, YawTarget};
use super::sensor_watch::{Sensor, SensorWatch, SensorsAlive};
use mavsitl_core::atmosphere::G0_M_S2;
use mavsitl_core::controller::{
    Actuators, ControllerError, FlightController, GroundTruth, PowerModuleSample, SensorFrame,
};
use mavsitl_core::geo::{GeoPoint, LocalFrame};
use mavsitl_core::magnetic::earth_field_ned_gauss;
use mavsitl_core::samples::FixType;
use mavsitl_core::time::SimTime;
use mavsitl_guidance::{
    ArAttitudeControl, ArMotorsUgv, ArPosControl, ArWpNav, DriverOutput, NavState, RoverDriver,
};
use multicopter_flight::Descent;

/// Flight modes, named as PX4 names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlightMode {
    /// Direct control (not used headless).
    Manual,
    /// Hold position (Loiter).
    Hold,
    /// Take-off.
    Takeoff,
    /// Flying the mission.
    Mission,
    /// Return to launch.
    Return,
    /// Landing.
    Land,
    /// External set-points (Guided).
    Offboard,
}

impl FlightMode {
    /// The PX4 name.
    pub fn name(self) -> &'static str {
        match self {
            FlightMode::Manual => "Manual",
            FlightMode::Hold => "Hold",
            FlightMode::Takeoff => "Takeoff",
            FlightMode::Mission => "Mission",
            FlightMode::Return => "Return",
            FlightMode::Land => "Land",
            FlightMode::Offboard => "Offboard",
        }
    }
}

/// What a [`FlightEvent`] records; its name is what `mission_events.csv` and
/// the log say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// Armed.
    Armed,
    /// A mode change (detail: the mode).
    Mode,
    /// A mission item became current.
    ItemCurrent,
    /// A mission item was reached (detail: what it did).
    ItemReached,
    /// A mission item was skipped (detail: why).
    ItemSkipped,
    /// Landed.
    Landed,
    /// Disarmed (detail: why, if not commanded).
    Disarmed,
    /// The mission was completed.
    MissionFinished,
    /// A request was refused (detail: which and why).
    Refused,
    /// A failsafe condition that only warns.
    Warning,
    /// A failsafe action was taken (detail: cause and action).
    Failsafe,
    /// An emergency (severity 0) without an action.
    Emergency,
    /// A notice.
    Notice,
}

impl EventKind {
    /// The event's name (`item_reached`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Armed => "armed",
            EventKind::Mode => "mode",
            EventKind::ItemCurrent => "item_current",
            EventKind::ItemReached => "item_reached",
            EventKind::ItemSkipped => "item_skipped",
            EventKind::Landed => "landed",
            EventKind::Disarmed => "disarmed",
            EventKind::MissionFinished => "mission_finished",
            EventKind::Refused => "refused",
            EventKind::Warning => "warning",
            EventKind::Failsafe => "failsafe",
            EventKind::Emergency => "emergency",
            EventKind::Notice => "notice",
        }
    }
}

impl std::fmt::Display for EventKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One entry of the mission event log.
#[derive(Debug, Clone, PartialEq)]
pub struct FlightEvent {
    /// When.
    pub time: SimTime,
    /// What.
    pub kind: EventKind,
    /// Mission item concerned, if any.
    pub item: Option<usize>,
    /// Details.
    pub detail: String,
}

/// What SimpleFlight reports about itself.
#[derive(Debug, Clone, Default)]
pub struct FlightStatus {
    /// Current mode.
    pub mode: Option<FlightMode>,
    /// Armed.
    pub armed: bool,
    /// On the ground after a landing.
    pub landed: bool,
    /// The mission has been completed.
    pub finished: bool,
    /// Why the flight could not go on, if it could not.
    pub failure: Option<String>,
    /// Items reached, with the time (the newest 4096).
    pub reached: EventLog<(SimTime, usize)>,
    /// The event log (the newest 4096).
    pub events: EventLog<FlightEvent>,
    /// The straight leg being flown (origin, destination, NED m), for
    /// cross-track statistics; None outside waypoint legs.
    pub leg: Option<(Vector3<f64>, Vector3<f64>)>,
    /// The latest estimate.
    pub estimate: Option<EstimatedState>,
    /// Home as the autopilot set it at arming, NED m.
    pub home_ned: Option<Vector3<f64>>,
    /// Why arming would be refused now (None: ready to arm).
    pub prearm_failure: Option<String>,
    /// Which sensors deliver.
    pub sensors_alive: SensorsAlive,
    /// GPS has a 3-D fix.
    pub gps_fix: bool,
    /// The vehicle stands on the ground (multicopter: not flying; boats are
    /// never on the ground).
    pub on_ground: bool,
    /// The mission item being executed (or to be executed next).
    pub current_item: usize,
    /// Items in the stored mission.
    pub mission_len: usize,
    /// The stored mission has been started since it was loaded or reset.
    pub mission_started: bool,
    /// The power module's latest reading.
    pub battery: Option<PowerModuleSample>,
    /// The latest GPS report.
    pub gps: Option<mavsitl_core::samples::GpsSample>,
    /// Horizontal cruise speed in force, m/s.
    pub cruise_speed_m_s: f64,
    /// The announcement of the failsafe that took over the flight, if one did.
    pub failsafe: Option<String>,
    /// Horizontal accuracy of the position estimate, m.
    pub position_eph_m: f64,
}

/// An Offboard set-point (external control of a multicopter in the air).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Offboard {
    /// Velocity, NED m/s, and the heading behaviour.
    Velocity(Vector3<f64>, YawTarget),
    /// Braking to a stop, then holding there, and the heading behaviour.
    Brake(YawTarget),
    /// Roll and pitch, rad, heading, and lift.
    Attitude {
        roll: f64,
        pitch: f64,
        yaw: YawTarget,
        lift: crate::Lift,
    },
    /// Body rates, FRD rad/s, and lift.
    Rates(Vector3<f64>, crate::Lift),
}

impl Offboard {
    /// The set-point an Offboard request asks for; None for another request
    /// or non-finite values.
    fn of(req: &Request) -> Option<Offboard> {
        match *req {
            Request::Velocity { vel_ned_m_s, yaw } => vel_ned_m_s
                .iter()
                .all(|v| v.is_finite())
                .then_some(Offboard::Velocity(vel_ned_m_s, yaw)),
            Request::Brake { yaw } => Some(Offboard::Brake(yaw)),
            Request::Attitude {
                roll_rad,
                pitch_rad,
                yaw,
                lift,
            } => (roll_rad.is_finite() && pitch_rad.is_finite()).then_some(Offboard::Attitude {
                roll: roll_rad,
                pitch: pitch_rad,
                yaw,
                lift,
            }),
            Request::Rates { rates_frd, lift } => rates_frd
                .iter()
                .all(|v| v.is_finite())
                .then_some(Offboard::Rates(rates_frd, lift)),
            _ => None,
        }
    }
}

/// Shared view of the status: the flight's watch and the ground-station
/// endpoint read it, SimpleFlight writes it.
pub type StatusHandle = Shared<FlightStatus>;

/// Everything SimpleFlight is configured with.
#[derive(Debug, Clone)]
pub struct SimpleFlightConfig {
    /// Airframe.
    pub vehicle: VehicleConfig,
    /// Home: origin of the mission's local frame.
    pub home: GeoPoint,
    /// Date, for the magnetic model.
    pub date: Date,
    /// Parameters.
    pub params: ParamStore,
    /// CG height at power-up relative to home, NED down (m).
    pub initial_down_m: f64,
    /// The mission to fly.
    pub mission: Vec<Step>,
    /// Arm and fly the mission as soon as the pre-arm checks pass (headless
    /// runs); otherwise wait for [`Request`]s.
    pub auto_arm: bool,
    /// The plan's geofence (GF_MAX_HOR_DIST / GF_MAX_VER_DIST come from the
    /// parameters).
    pub geofence: Geofence,
    /// The plan's rally points, NED m.
    pub rally: Vec<Vector3<f64>>,
}

/// One primitive the executor runs.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Prim {
    /// Climb (or descend) to `alt_m` above home, over `xy` (None: here).
    Climb {
        alt_m: f64,
        xy: Option<[f64; 2]>,
    },
    Leg {
        to: Vector3<f64>,
        next: Option<Vector3<f64>>,
        hold_s: f64,
        radius_m: f64,
    },
    Hold {
        at: Option<Vector3<f64>>,
        time_s: f64,
    },
    Land {
        xy: Option<[f64; 2]>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    Idle,
    Running {
        prim: Prim,
        item: Option<usize>,
        started: SimTime,
        arrived: Option<SimTime>,
    },
}

/// SimpleFlight's loop rate, Hz: it reads its sensors and commands the
/// motors at this rate, so the physics rate must be a multiple of it.
pub const RATE_HZ: u32 = 250;
const DT: f64 = 1.0 / RATE_HZ as f64;

/// SimpleFlight.
pub struct SimpleFlight {
    cfg: SimpleFlightConfig,
    est: Estimator,
    ground_truth: bool,
    truth: Option<GroundTruth>,
    status: StatusHandle,
    mode: FlightMode,
    armed: bool,
    gps_ok: bool,
    gps_good_since: Option<SimTime>,
    sensors: SensorWatch,
    // Executor.
    next_step: usize,
    jumps_left: Vec<Option<i64>>,
    queue: Vec<(Prim, Option<usize>)>,
    phase: Phase,
    home_ned: Vector3<f64>,
    speed_xy: f64,
    // Multicopter.
    mc: Option<MulticopterControl>,
    chain: Chain,
    last_target: Option<PathTarget>,
    hold_pos: Vector3<f64>,
    yaw_sp: f64,
    /// An Offboard set-point in force.
    offboard: Option<Offboard>,
    touchdown_since: Option<SimTime>,
    /// The landing's vertical speed, shaped (see [`Descent`]).
    descent: Descent,
    // Boat.
    rover: Option<RoverDriver>,
    boat: Option<UgvOutputs>,
    out: Actuators,
    // Ground-station control.
    requests: RequestQueue,
    /// The primitive queue comes from the mission (else from a mode request).
    from_mission: bool,
    /// Mode to switch to when a requested program ends (Takeoff → Hold).
    after_program: Option<FlightMode>,
    takeoff_alt_m: f64,
    on_ground: bool,
    armed_at: SimTime,
    landed_at: Option<SimTime>,
    /// COM_DISARM_LAND and COM_DISARM_PRFLT, s (read once, updated on set).
    disarm_land_s: f64,
    disarm_preflight_s: f64,
    /// The parameters the mission runner reads, refreshed on every set.
    fp: FlightParams,
    // Failsafes.
    failsafe: FailsafeMonitor,
    motor_detector: MotorFailureDetector,
    /// When a ground station's heartbeat was last heard.
    gcs_heard: Option<SimTime>,
    /// The most severe failsafe action in force.
    failsafe_action: Option<FailsafeAction>,
    failsafes: Vec<Failsafe>,
    /// Land without position control (the position estimate is lost).
    blind: bool,
}

impl SimpleFlight {
    /// SimpleFlight with `cfg`; returns it and a handle on its status.
    pub fn new(cfg: SimpleFlightConfig) -> (Self, StatusHandle) {
        let frame = LocalFrame::new(cfg.home);
        // The magnetometer of any buildable scenario has a WMM field here (the
        // sensor refuses the same home and date otherwise); a made-up reference
        // would show as a heading error, so say so if it is ever used.
        let mag = earth_field_ned_gauss(&cfg.home, cfg.date).unwrap_or_else(|e| {
            tracing::warn!(%e, "no WMM field at home; the heading reference falls back to a generic mid-latitude field");
            Vector3::new(0.2, 0.0, 0.4)
        });
        let p = &cfg.params;
        let v = p.values();
        let est_params = EstimatorParams {
            k_gravity: v.sf_est_k_grav,
            k_mag: v.sf_est_k_mag,
            k_bias: v.sf_est_k_bias,
            omega_xy: v.sf_est_w_xy,
            omega_z: v.sf_est_w_z,
            ..EstimatorParams::default()
        };
        let est = Estimator::new(est_params, frame, mag, G0_M_S2, cfg.initial_down_m);
        let (mc, rover, boat) = match &cfg.vehicle {
            VehicleConfig::Multirotor(af) => {
                let mcp = McParams {
                    xy_p: v.mpc_xy_p,
                    z_p: v.mpc_z_p,
                    xy_vel_p: v.mpc_xy_vel_p_acc,
                    xy_vel_i: v.mpc_xy_vel_i_acc,
                    z_vel_p: v.mpc_z_vel_p_acc,
                    z_vel_i: v.mpc_z_vel_i_acc,
                    xy_vel_max: v.mpc_xy_vel_max,
                    z_vel_max_up: v.mpc_z_vel_max_up,
                    z_vel_max_dn: v.mpc_z_vel_max_dn,
                    tilt_max_deg: v.mpc_tiltmax_air,
                    att_rp_p: v.mc_roll_p,
                    att_yaw_p: v.mc_yaw_p,
                    rate_rp_max_deg: v.mc_rollrate_max,
                    rate_yaw_max_deg: v.mc_yawrate_max,
                    rate_rp_k: v.sf_rate_rp_k,
                    rate_rp_i: v.sf_rate_rp_i,
                    rate_yaw_k: v.sf_rate_y_k,
                    rate_yaw_i: v.sf_rate_y_i,
                };
                (Some(MulticopterControl::new(mcp, af)), None, None)
            }
            VehicleConfig::Boat(bp) | VehicleConfig::Rover(bp) => {
                let gp = *cfg.params.guidance();
                let mut rp = gp.rover;
                rp.is_boat = matches!(cfg.vehicle, VehicleConfig::Boat(_));
                rp.can_pivot = bp.can_pivot();
                let atc = ArAttitudeControl::new(gp.atc);
                let wpnav = ArWpNav::new(gp.wp, ArPosControl::new(gp.psc));
                let motors = ArMotorsUgv::new(gp.mot, bp.can_pivot());
                (
                    None,
                    Some(RoverDriver::new(rp, atc, wpnav, motors)),
                    Some(*bp),
                )
            }
        };
        let n = cfg.mission.len();
        let status: StatusHandle = Shared::new(FlightStatus::default());
        let start = Vector3::new(0.0, 0.0, cfg.initial_down_m);
        let fp = FlightParams::from_store(&cfg.params);
        let speed_xy = fp.mpc_xy_cruise_m_s;
        {
            let mut st = status.borrow_mut();
            st.on_ground = mc.is_some();
            st.mission_len = n;
            st.cruise_speed_m_s = speed_xy;
            st.mode = Some(FlightMode::Hold);
        }
        let takeoff_alt_m = fp.mis_takeoff_alt_m;
        let on_ground = mc.is_some();
        let ground_truth = fp.sf_ground_truth;
        let sf = SimpleFlight {
            est,
            ground_truth,
            truth: None,
            status: status.clone(),
            mode: FlightMode::Hold,
            armed: false,
            gps_ok: false,
            gps_good_since: None,
            sensors: SensorWatch::default(),
            next_step: 0,
            jumps_left: vec![None; n],
            queue: Vec::new(),
            phase: Phase::Idle,
            home_ned: start,
            speed_xy,
            mc,
            chain: Chain::new(start),
            last_target: None,
            hold_pos: start,
            yaw_sp: 0.0,
            offboard: None,
            touchdown_since: None,
            descent: Descent::default(),
            rover,
            boat,
            out: Actuators::default(),
            requests: RequestQueue::default(),
            from_mission: true,
            after_program: None,
            takeoff_alt_m,
            on_ground,
            armed_at: SimTime::ZERO,
            landed_at: None,
            disarm_land_s: fp.com_disarm_land_s,
            disarm_preflight_s: fp.com_disarm_prflt_s,
            fp,
            failsafe: FailsafeMonitor::new(FailsafeParams::from_params(&cfg.params)),
            motor_detector: MotorFailureDetector::default(),
            gcs_heard: None,
            failsafe_action: None,
            failsafes: Vec::with_capacity(8),
            blind: false,
            cfg,
        };
        let mut sf = sf;
        sf.reload_failsafe_params();
        (sf, status)
    }

    /// The queue a ground station puts its requests in.
    pub fn request_queue(&self) -> RequestQueue {
        self.requests.clone()
    }

    fn event(&self, time: SimTime, kind: EventKind, item: Option<usize>, detail: String) {
        tracing::info!(%time, kind = kind.as_str(), ?item, %detail, "simpleflight");
        self.status.borrow_mut().events.push(FlightEvent {
            time,
            kind,
            item,
            detail,
        });
    }

    fn set_mode(&mut self, time: SimTime, mode: FlightMode) {
        if self.mode != mode {
            self.mode = mode;
            self.status.borrow_mut().mode = Some(mode);
            self.event(time, EventKind::Mode, None, mode.name().into());
        }
    }

    fn state(&self) -> EstimatedState {
        match (self.ground_truth, self.truth) {
            (true, Some(t)) => EstimatedState {
                pos_ned_m: t.pos_ned_m,
                vel_ned_m_s: t.vel_ned_m_s,
                att_ned_frd: t.att_ned_frd,
                rate_frd_rad_s: t.rate_frd_rad_s,
                accel_ned_m_s2: t.accel_ned_m_s2,
                specific_force_frd_m_s2: t.specific_force_frd_m_s2,
                air_density_kg_m3: self.est.state().air_density_kg_m3,
            },
            _ => self.est.state(),
        }
    }

    fn limits(&self) -> LegLimits {
        let p = &self.cfg.params;
        let v = p.values();
        let jerk = v.mpc_jerk_auto;
        let accel_xy = v.mpc_acc_hor;
        LegLimits {
            speed_xy: self.speed_xy,
            speed_up: v.mpc_z_v_auto_up,
            speed_down: v.mpc_z_v_auto_dn,
            accel_xy,
            accel_corner: 2.0 * accel_xy,
            accel_z: v.mpc_acc_up_max,
            jerk,
            snap: jerk * std::f64::consts::PI / (2.0 * 0.15),
            wp_radius: v.nav_acc_rad,
        }
    }

    fn preflight_failure(&self, now: SimTime) -> Option<String> {
        // On ground truth (SF_GROUND_TRUTH) the estimator and its sensors
        // fly nothing: ready at once, as AirSim's SimpleFlight is.
        if self.ground_truth {
            return None;
        }
        let need = self.fp.sf_arm_gps_time_s;
        if let Some(t0) = self.gps_good_since {
            if ((now - t0) as f64) * 1e-6 < need {
                return Some(format!("GPS good for less than {need} s"));
            }
        }
        if let Some(s) = self.sensors.first_silent() {
            return Some(format!("no {} data", s.name()));
        }
        if !self.gps_ok {
            return Some("no 3-D GPS fix".into());
        }
        if self.gps_good_since.is_none() {
            return Some("GPS accuracy not yet good enough".into());
        }
        if !self.est.aligned() {
            return Some("estimator not aligned".into());
        }
        None
    }
}

impl FlightController for SimpleFlight {
    fn name(&self) -> &str {
        "simpleflight"
    }

    fn rate_hz(&self) -> u32 {
        RATE_HZ
    }

    fn wants_ground_truth(&self) -> bool {
        self.ground_truth
    }

    fn mission_progress(&self) -> Option<u32> {
        self.status.borrow().reached.last().map(|(_, i)| *i as u32)
    }

    fn actuators(&mut self, _now: SimTime) -> Result<Actuators, ControllerError> {
        Ok(self.out)
    }

    fn receive(&mut self, f: &SensorFrame) -> Result<(), ControllerError> {
        let now = f.time;
        self.truth = f.ground_truth;
        for s in f.imu.iter() {
            self.sensors.heard(Sensor::Imu, now);
            self.est.on_imu(s);
        }
        let eph_max = self.fp.sf_arm_eph_max_m;
        for g in f.gps.iter() {
            self.sensors.heard(Sensor::Gps, now);
            self.gps_ok = g.fix == FixType::Fix3d;
            if self.gps_ok && g.eph_m <= eph_max {
                self.gps_good_since.get_or_insert(g.delivered);
            } else {
                self.gps_good_since = None;
            }
            self.est.on_gps(g);
        }
        for b in f.baro.iter() {
            self.sensors.heard(Sensor::Baro, now);
            self.est.on_baro(b);
        }
        for m in f.mag.iter() {
            self.sensors.heard(Sensor::Mag, now);
            self.est.on_mag(m);
        }
        {
            let mut st = self.status.borrow_mut();
            st.estimate = Some(self.state());
            st.sensors_alive = self.sensors.alive(now);
            st.gps_fix = self.gps_ok;
            if let Some(g) = f.gps.iter().last() {
                st.gps = Some(*g);
            }
            if f.battery.is_some() {
                st.battery = f.battery;
            }
        }
        let failed = self.status.borrow().failure.is_some();
        if failed {
            self.out = Actuators::default();
            return Ok(());
        }
        // (Armed, the pre-arm state no longer matters: PX4 reports it healthy.)
        let prearm = if self.armed {
            None
        } else {
            self.preflight_failure(now)
        };
        if self.status.borrow().prearm_failure != prearm {
            self.status.borrow_mut().prearm_failure = prearm.clone();
        }
        if prearm.is_none() && !self.armed && self.status.borrow().home_ned.is_none() {
            // Home is known once the position is good, as PX4 sets it.
            let here = self.state().pos_ned_m;
            let down = if self.mc.is_some() {
                self.cfg.initial_down_m
            } else {
                here.z
            };
            self.home_ned = Vector3::new(here.x, here.y, down);
            self.status.borrow_mut().home_ned = Some(self.home_ned);
        }
        self.apply_requests(now);
        if self.cfg.auto_arm && !self.armed && !self.status.borrow().landed {
            match prearm {
                None => {
                    self.arm(now);
                    self.enter_mode(now, FlightMode::Mission);
                }
                Some(reason) if now > SimTime::from_secs(60) => {
                    self.status.borrow_mut().failure = Some(format!("arming refused: {reason}"));
                    self.event(now, EventKind::Refused, None, reason);
                }
                Some(_) => {}
            }
        }
        // Disarm COM_DISARM_LAND after the landing was detected (< 0: never).
        let after_land = self.disarm_land_s;
        if let (true, Some(t)) = (self.armed, self.landed_at) {
            if after_land >= 0.0 && now.secs_since(t) >= after_land {
                self.disarm(now, "landed");
            }
        }
        let prflt = self.disarm_preflight_s;
        if !self.cfg.auto_arm
            && self.armed
            && self.on_ground
            && self.mc.is_some()
            && prflt > 0.0
            && self.landed_at.is_none()
            && now.secs_since(self.armed_at) > prflt
        {
            self.disarm(now, "no take-off after arming (COM_DISARM_PRFLT)");
        }
        if self.armed {
            self.check_failsafes(now, f);
        }
        if self.armed {
            self.step_mission(now);
        }
        if self.mc.is_some() {
            self.fly_multicopter(now);
        } else {
            self.fly_boat(now);
        }
        Ok(())
    }
}

impl std::fmt::Debug for SimpleFlight {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimpleFlight")
            .field("mode", &self.mode)
            .field("armed", &self.armed)
            .finish()
    }
}
