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

mod reactions;

use std::cell::RefCell;
use std::rc::Rc;

use nalgebra::{UnitQuaternion, Vector2, Vector3};
use world_magnetic_model::time::Date;

use super::airframe::{BoatOutputs, VehicleConfig, MAX_MOTORS};
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
    ArAttitudeControl, ArPosControl, ArWpNav, DriverOutput, NavState, RoverDriver,
};

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

/// Shared view of the status (single-threaded loop).
pub type StatusHandle = Rc<RefCell<FlightStatus>>;

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

const RATE_HZ: u32 = 250;
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
    // Boat.
    rover: Option<RoverDriver>,
    boat: Option<BoatOutputs>,
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
        let g = |n: &str, d: f64| p.get(n).unwrap_or(d);
        let est_params = EstimatorParams {
            k_gravity: g("SF_EST_K_GRAV", 1.0),
            k_mag: g("SF_EST_K_MAG", 0.5),
            k_bias: g("SF_EST_K_BIAS", 0.02),
            omega_xy: g("SF_EST_W_XY", 1.0),
            omega_z: g("SF_EST_W_Z", 2.0),
            ..EstimatorParams::default()
        };
        let est = Estimator::new(est_params, frame, mag, G0_M_S2, cfg.initial_down_m);
        let (mc, rover, boat) = match &cfg.vehicle {
            VehicleConfig::Multirotor(af) => {
                let mcp = McParams {
                    xy_p: g("MPC_XY_P", 0.95),
                    z_p: g("MPC_Z_P", 1.0),
                    xy_vel_p: g("MPC_XY_VEL_P_ACC", 1.8),
                    xy_vel_i: g("MPC_XY_VEL_I_ACC", 0.4),
                    z_vel_p: g("MPC_Z_VEL_P_ACC", 4.0),
                    z_vel_i: g("MPC_Z_VEL_I_ACC", 2.0),
                    xy_vel_max: g("MPC_XY_VEL_MAX", 12.0),
                    z_vel_max_up: g("MPC_Z_VEL_MAX_UP", 3.0),
                    z_vel_max_dn: g("MPC_Z_VEL_MAX_DN", 1.5),
                    tilt_max_deg: g("MPC_TILTMAX_AIR", 35.0),
                    att_rp_p: g("MC_ROLL_P", 6.5),
                    att_yaw_p: g("MC_YAW_P", 2.8),
                    rate_rp_max_deg: g("MC_ROLLRATE_MAX", 220.0),
                    rate_yaw_max_deg: g("MC_YAWRATE_MAX", 200.0),
                    rate_rp_k: g("SF_RATE_RP_K", 18.0),
                    rate_rp_i: g("SF_RATE_RP_I", 8.0),
                    rate_yaw_k: g("SF_RATE_Y_K", 8.0),
                    rate_yaw_i: g("SF_RATE_Y_I", 2.0),
                };
                (Some(MulticopterControl::new(mcp, af)), None, None)
            }
            VehicleConfig::Boat(bp) => {
                let gp = *cfg.params.guidance();
                let mut rp = gp.rover;
                rp.is_boat = true;
                rp.can_pivot = bp.can_pivot();
                let atc = ArAttitudeControl::new(gp.atc);
                let wpnav = ArWpNav::new(gp.wp, ArPosControl::new(gp.psc));
                (None, Some(RoverDriver::new(rp, atc, wpnav)), Some(*bp))
            }
        };
        let n = cfg.mission.len();
        let status: StatusHandle = Rc::new(RefCell::new(FlightStatus::default()));
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
        let g = |n: &str, d: f64| p.get(n).unwrap_or(d);
        let jerk = g("MPC_JERK_AUTO", 4.0);
        LegLimits {
            speed_xy: self.speed_xy,
            speed_up: g("MPC_Z_V_AUTO_UP", 3.0),
            speed_down: g("MPC_Z_V_AUTO_DN", 1.5),
            accel_xy: g("MPC_ACC_HOR", 3.0),
            accel_z: g("MPC_ACC_UP_MAX", 2.0),
            jerk,
            snap: jerk * std::f64::consts::PI / (2.0 * 0.15),
            wp_radius: g("NAV_ACC_RAD", 2.0),
        }
    }

    fn preflight_failure(&self, now: SimTime) -> Option<String> {
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

    /// Takes the next steps off the mission into the primitive queue.
    fn load_next(&mut self, now: SimTime) {
        let multicopter = self.mc.is_some();
        let mut guard = 0;
        while self.queue.is_empty() && self.next_step < self.cfg.mission.len() && guard < 10_000 {
            guard += 1;
            let i = self.next_step;
            self.next_step += 1;
            let step = self.cfg.mission[i];
            match step {
                Step::Skip { command } => {
                    self.event(
                        now,
                        EventKind::ItemSkipped,
                        Some(i),
                        mavsitl_mavlink::mission::command_name(command),
                    );
                }
                Step::ChangeSpeed { speed_m_s } => {
                    if let Some(s) = speed_m_s {
                        self.speed_xy = s;
                        let l = self.limits();
                        self.chain.set_speed(&l);
                        if let Some(r) = self.rover.as_mut() {
                            r.set_desired_speed(s);
                        }
                    }
                    self.event(
                        now,
                        EventKind::ItemReached,
                        Some(i),
                        format!("speed {speed_m_s:?}"),
                    );
                    self.status.borrow_mut().reached.push((now, i));
                }
                Step::SetHome { pos } => {
                    self.home_ned = pos.unwrap_or(self.state().pos_ned_m);
                    self.status.borrow_mut().home_ned = Some(self.home_ned);
                    self.event(now, EventKind::ItemReached, Some(i), "home set".into());
                    self.status.borrow_mut().reached.push((now, i));
                }
                Step::Jump { target, repeat } => {
                    let left = self.jumps_left[i].get_or_insert(repeat);
                    if *left != 0 {
                        if *left > 0 {
                            *left -= 1;
                        }
                        self.event(
                            now,
                            EventKind::ItemReached,
                            Some(i),
                            format!("jump to {target}"),
                        );
                        self.next_step = target;
                    } else {
                        self.jumps_left[i] = None;
                        self.event(now, EventKind::ItemReached, Some(i), "jump done".into());
                    }
                    self.status.borrow_mut().reached.push((now, i));
                }
                Step::Takeoff { pos_ne, alt_m } => self
                    .queue
                    .push((Prim::Climb { alt_m, xy: pos_ne }, Some(i))),
                Step::Waypoint {
                    pos,
                    hold_s,
                    radius_m,
                } => {
                    let next = if hold_s <= 0.0 {
                        self.peek_next_waypoint()
                    } else {
                        None
                    };
                    let to = if multicopter {
                        pos
                    } else {
                        Vector3::new(pos.x, pos.y, 0.0)
                    };
                    self.queue.push((
                        Prim::Leg {
                            to,
                            next,
                            hold_s,
                            radius_m,
                        },
                        Some(i),
                    ));
                }
                Step::Loiter { pos, time_s } => {
                    self.queue.push((Prim::Hold { at: pos, time_s }, Some(i)))
                }
                Step::Delay { time_s } => {
                    self.queue.push((Prim::Hold { at: None, time_s }, Some(i)))
                }
                Step::ReturnToLaunch => self.push_return(Some(i)),
                Step::Land { pos_ne } => {
                    if multicopter {
                        self.queue.push((Prim::Land { xy: pos_ne }, Some(i)));
                    } else {
                        self.queue.push((
                            Prim::Hold {
                                at: None,
                                time_s: 0.0,
                            },
                            Some(i),
                        ));
                    }
                }
            }
        }
    }

    /// Queues a return to home (climb to RTL_RETURN_ALT, fly home, land; a
    /// boat sails home and holds there). `item` is the mission item, if any.
    fn push_return(&mut self, item: Option<usize>) {
        let here = self.state().pos_ned_m;
        let dest = self.return_point(&here);
        let radius = self.fp.nav_acc_rad_m;
        if self.mc.is_some() {
            let rtl_alt = self.fp.rtl_return_alt_m;
            let alt = rtl_alt.max(-here.z + self.home_ned.z);
            // In reverse: the queue is popped from the end.
            self.queue.push((
                Prim::Land {
                    xy: Some([dest.x, dest.y]),
                },
                item,
            ));
            self.queue.push((
                Prim::Leg {
                    to: Vector3::new(dest.x, dest.y, self.home_ned.z - alt),
                    next: None,
                    hold_s: 0.0,
                    radius_m: radius,
                },
                None,
            ));
            self.queue.push((
                Prim::Climb {
                    alt_m: alt,
                    xy: None,
                },
                None,
            ));
        } else {
            self.queue.push((
                Prim::Hold {
                    at: Some(Vector3::new(dest.x, dest.y, 0.0)),
                    time_s: 0.0,
                },
                item,
            ));
            self.queue.push((
                Prim::Leg {
                    to: Vector3::new(dest.x, dest.y, 0.0),
                    next: None,
                    hold_s: 0.0,
                    radius_m: radius,
                },
                None,
            ));
        }
    }

    fn peek_next_waypoint(&self) -> Option<Vector3<f64>> {
        let mut j = self.next_step;
        let mut guard = 0;
        while j < self.cfg.mission.len() && guard < 64 {
            guard += 1;
            match self.cfg.mission[j] {
                Step::Waypoint { pos, .. } => {
                    return Some(if self.mc.is_some() {
                        pos
                    } else {
                        Vector3::new(pos.x, pos.y, 0.0)
                    })
                }
                Step::Skip { .. } | Step::ChangeSpeed { .. } => j += 1,
                _ => return None,
            }
        }
        None
    }

    fn start_prim(&mut self, now: SimTime, prim: Prim, item: Option<usize>) {
        let s = self.state();
        if let Some(i) = item {
            self.event(now, EventKind::ItemCurrent, Some(i), String::new());
            self.status.borrow_mut().current_item = i;
        }
        let l = self.limits();
        match prim {
            Prim::Climb { alt_m, xy } => {
                self.on_ground = false;
                self.status.borrow_mut().on_ground = false;
                let from = s.pos_ned_m;
                let xy = xy.unwrap_or([from.x, from.y]);
                let mut lim = l;
                lim.speed_up = self
                    .cfg
                    .params
                    .get("MPC_TKO_SPEED")
                    .unwrap_or(1.5)
                    .min(l.speed_up);
                self.chain.restart(Vector3::new(
                    from.x,
                    from.y,
                    from.z.min(self.cfg.initial_down_m),
                ));
                self.chain.set_destination(
                    Vector3::new(xy[0], xy[1], self.home_ned.z - alt_m),
                    None,
                    &lim,
                );
                self.last_target = None;
            }
            Prim::Leg { to, next, .. } => {
                if let Some(r) = self.rover.as_mut() {
                    let ns = nav_state(&s, now, true);
                    r.auto_set_waypoint(to.xy(), next.map(|n| n.xy()), &ns);
                } else {
                    let (o, d) = self.chain.leg();
                    let here_far = (s.pos_ned_m - d).norm() > 5.0 && !self.chain.is_fast();
                    if here_far || (o - d).norm() < 1e-9 {
                        // Start the chain where the vehicle is (after a take-off or a hold).
                        self.chain
                            .restart(self.last_target.map_or(s.pos_ned_m, |t| t.pos));
                    }
                    self.chain.set_destination(to, next, &l);
                }
            }
            Prim::Hold { at, .. } => {
                self.hold_pos = at.unwrap_or(s.pos_ned_m);
                if let Some(r) = self.rover.as_mut() {
                    let ns = nav_state(&s, now, true);
                    match at {
                        Some(p) => {
                            r.auto_set_waypoint(p.xy(), None, &ns);
                        }
                        None => r.start_loiter(&ns),
                    }
                }
            }
            Prim::Land { .. } => {
                self.touchdown_since = None;
            }
        }
        self.phase = Phase::Running {
            prim,
            item,
            started: now,
            arrived: None,
        };
    }

    fn finish_prim(&mut self, now: SimTime, item: Option<usize>) {
        if let Some(i) = item {
            self.event(now, EventKind::ItemReached, Some(i), String::new());
            self.status.borrow_mut().reached.push((now, i));
        }
        self.phase = Phase::Idle;
    }

    fn step_mission(&mut self, now: SimTime) {
        if self.phase != Phase::Idle {
            return;
        }
        if self.from_mission {
            if self.status.borrow().finished || self.status.borrow().landed {
                return;
            }
            self.load_next(now);
        }
        match self.queue.pop() {
            Some((prim, item)) => self.start_prim(now, prim, item),
            // Items left but nothing to fly: a jump loop the plan check
            // did not see. Never report such a mission as completed.
            None if self.from_mission && self.next_step < self.cfg.mission.len() => {
                self.status.borrow_mut().failure = Some(format!(
                    "mission stuck at item {}: jumps that fly nothing",
                    self.next_step
                ));
            }
            None if self.from_mission => self.finish_mission(now),
            None => {
                if let Some(mode) = self.after_program.take() {
                    self.enter_mode(now, mode);
                }
            }
        }
    }

    /// The mission has no more items: hold where it ended.
    fn finish_mission(&mut self, now: SimTime) {
        let mut st = self.status.borrow_mut();
        if st.finished {
            return;
        }
        st.finished = true;
        drop(st);
        self.event(now, EventKind::MissionFinished, None, String::new());
        if self.status.borrow().landed {
            return;
        }
        let here = self.state().pos_ned_m;
        self.hold_pos = self.last_target.map_or(here, |t| t.pos);
        self.set_mode(now, FlightMode::Hold);
        self.from_mission = false;
        if let Some(r) = self.rover.as_mut() {
            let s = self.est.state();
            r.start_loiter(&nav_state(&s, now, true));
        }
    }

    /// Arms (the caller has checked the pre-arm state).
    fn arm(&mut self, now: SimTime) {
        self.armed = true;
        self.armed_at = now;
        self.landed_at = None;
        {
            let mut st = self.status.borrow_mut();
            st.armed = true;
            st.landed = false;
        }
        self.event(now, EventKind::Armed, None, String::new());
        if let Some(mc) = self.mc.as_mut() {
            mc.reset();
        }
        let here = self.state().pos_ned_m;
        self.hold_pos = here;
        let down = if self.on_ground || self.mc.is_none() {
            self.cfg.initial_down_m
        } else {
            here.z
        };
        self.home_ned = Vector3::new(here.x, here.y, down);
        self.status.borrow_mut().home_ned = Some(self.home_ned);
        let (_, _, yaw) = self.state().att_ned_frd.euler_angles();
        self.yaw_sp = yaw;
        self.chain.restart(Vector3::new(here.x, here.y, down));
        self.last_target = None;
    }

    fn disarm(&mut self, now: SimTime, why: &str) {
        self.clear_failsafes();
        self.armed = false;
        self.status.borrow_mut().armed = false;
        self.event(now, EventKind::Disarmed, None, why.to_string());
        self.queue.clear();
        self.phase = Phase::Idle;
        self.after_program = None;
        if self.mc.is_some() && self.from_mission {
            // A mission interrupted by a disarm waits for a new start.
            self.from_mission = false;
        }
    }

    /// Switches mode and sets up what the mode flies (nothing happens while
    /// disarmed; arming starts it).
    fn enter_mode(&mut self, now: SimTime, mode: FlightMode) {
        self.set_mode(now, mode);
        self.offboard = None;
        self.queue.clear();
        self.phase = Phase::Idle;
        self.after_program = None;
        self.from_mission = false;
        if !self.armed {
            return;
        }
        let multicopter = self.mc.is_some();
        match mode {
            FlightMode::Mission => {
                self.from_mission = true;
                self.status.borrow_mut().mission_started = true;
                if self.status.borrow().finished {
                    // PX4 holds at the end of a finished mission until the
                    // current item is set again.
                    self.from_mission = false;
                    self.queue.push((
                        Prim::Hold {
                            at: None,
                            time_s: f64::INFINITY,
                        },
                        None,
                    ));
                } else if multicopter && self.on_ground {
                    let alt = self
                        .cfg
                        .mission
                        .iter()
                        .skip(self.next_step)
                        .find_map(|s| match s {
                            Step::Takeoff { .. } => Some(None),
                            Step::Waypoint { pos, .. } => Some(Some(-pos.z + self.home_ned.z)),
                            _ => None,
                        })
                        .unwrap_or(Some(self.takeoff_alt_m));
                    if let Some(alt) = alt {
                        self.queue.push((
                            Prim::Climb {
                                alt_m: alt.max(self.takeoff_alt_m),
                                xy: None,
                            },
                            None,
                        ));
                    }
                }
            }
            FlightMode::Takeoff => {
                if multicopter {
                    self.queue.push((
                        Prim::Climb {
                            alt_m: self.takeoff_alt_m,
                            xy: None,
                        },
                        None,
                    ));
                    self.after_program = Some(FlightMode::Hold);
                } else {
                    self.set_mode(now, FlightMode::Hold);
                    self.enter_hold();
                }
            }
            FlightMode::Return => {
                self.push_return(None);
                if !multicopter {
                    self.after_program = Some(FlightMode::Hold);
                }
            }
            FlightMode::Land => {
                if multicopter {
                    if !self.on_ground {
                        self.queue.push((Prim::Land { xy: None }, None));
                    }
                } else {
                    self.enter_hold();
                }
            }
            FlightMode::Hold | FlightMode::Manual | FlightMode::Offboard => self.enter_hold(),
        }
    }

    fn enter_hold(&mut self) {
        if self.mc.is_some() && self.on_ground {
            return;
        }
        self.queue.push((
            Prim::Hold {
                at: None,
                time_s: f64::INFINITY,
            },
            None,
        ));
    }

    /// Applies the queued ground-station requests.
    fn apply_requests(&mut self, now: SimTime) {
        loop {
            let Some(req) = self.requests.borrow_mut().pop_front() else {
                break;
            };
            self.apply(now, req);
        }
    }

    fn apply(&mut self, now: SimTime, req: Request) {
        match req {
            Request::Arm { force } => {
                if self.armed {
                    return;
                }
                if let Some(why) = self.preflight_failure(now).filter(|_| !force) {
                    self.event(now, EventKind::Refused, None, format!("arming: {why}"));
                    return;
                }
                self.arm(now);
                let mode = self.mode;
                self.enter_mode(now, mode);
            }
            Request::Disarm { force } => {
                if !self.armed {
                    return;
                }
                if !force && self.mc.is_some() && !self.on_ground {
                    self.event(
                        now,
                        EventKind::Refused,
                        None,
                        "disarming: in the air".into(),
                    );
                    return;
                }
                if force {
                    self.on_ground = self.mc.is_some();
                    self.status.borrow_mut().on_ground = self.on_ground;
                }
                self.disarm(now, if force { "forced" } else { "" });
            }
            Request::SetMode(mode) => {
                // The pilot takes over from a failsafe, as in PX4.
                self.failsafe_action = None;
                self.enter_mode(now, mode);
            }
            Request::Takeoff { alt_m } => {
                self.takeoff_alt_m = alt_m;
                self.enter_mode(now, FlightMode::Takeoff);
            }
            Request::Reposition { ne_m, down_m } => {
                let s = self.state();
                let base = self.last_target.map_or(s.pos_ned_m, |t| t.pos);
                let to = Vector3::new(
                    ne_m.map_or(base.x, |v| v[0]),
                    ne_m.map_or(base.y, |v| v[1]),
                    down_m.unwrap_or(base.z),
                );
                self.enter_mode(now, FlightMode::Hold);
                if !self.armed || (self.mc.is_some() && self.on_ground) {
                    return;
                }
                let radius = self.fp.nav_acc_rad_m;
                let to = if self.mc.is_some() {
                    to
                } else {
                    Vector3::new(to.x, to.y, 0.0)
                };
                self.queue.clear();
                self.queue.push((
                    Prim::Hold {
                        at: Some(to),
                        time_s: f64::INFINITY,
                    },
                    None,
                ));
                self.queue.push((
                    Prim::Leg {
                        to,
                        next: None,
                        hold_s: 0.0,
                        radius_m: radius,
                    },
                    None,
                ));
            }
            Request::ChangeSpeed(speed) => {
                self.speed_xy = speed;
                self.status.borrow_mut().cruise_speed_m_s = speed;
                let l = self.limits();
                self.chain.set_speed(&l);
                if let Some(r) = self.rover.as_mut() {
                    r.set_desired_speed(speed);
                }
            }
            Request::SetCurrent(seq) => {
                let seq = seq.min(self.cfg.mission.len());
                self.next_step = seq;
                self.jumps_left.iter_mut().for_each(|j| *j = None);
                {
                    let mut st = self.status.borrow_mut();
                    st.current_item = seq;
                    st.finished = false;
                }
                if self.mode == FlightMode::Mission {
                    self.enter_mode(now, FlightMode::Mission);
                }
            }
            Request::SetMission(steps) => {
                let n = steps.len();
                self.cfg.mission = steps;
                self.jumps_left = vec![None; n];
                self.next_step = 0;
                {
                    let mut st = self.status.borrow_mut();
                    st.current_item = 0;
                    st.mission_len = n;
                    st.finished = false;
                    st.mission_started = false;
                }
                if self.mode == FlightMode::Mission {
                    self.enter_mode(now, FlightMode::Hold);
                }
            }
            Request::GcsHeard => self.gcs_heard = Some(now),
            Request::SetHome(pos) => {
                self.home_ned = pos;
                self.status.borrow_mut().home_ned = Some(pos);
            }
            Request::Velocity { .. } | Request::Attitude { .. } | Request::Rates { .. } => {
                if let Some(o) = Offboard::of(&req) {
                    self.offboard_request(now, o);
                }
            }
            Request::SetParam(name, value) => {
                if self.cfg.params.set(name, value).is_ok() {
                    self.fp = FlightParams::from_store(&self.cfg.params);
                    match name {
                        "MPC_XY_CRUISE" => self.apply(now, Request::ChangeSpeed(value)),
                        "MIS_TAKEOFF_ALT" => self.takeoff_alt_m = value,
                        "COM_DISARM_LAND" => self.disarm_land_s = value,
                        "COM_DISARM_PRFLT" => self.disarm_preflight_s = value,
                        "SF_GROUND_TRUTH" => self.ground_truth = value != 0.0,
                        _ => self.reload_failsafe_params(),
                    }
                }
            }
        }
    }

    fn fly_multicopter(&mut self, now: SimTime) {
        let s = self.state();
        let l = self.limits();
        let mut sp = McSetpoint::Track {
            pos: self.hold_pos,
            vel: Vector3::zeros(),
            acc: Vector3::zeros(),
            yaw: self.yaw_sp,
        };
        let mut leg = None;
        if let Phase::Running {
            prim,
            item,
            started,
            arrived,
        } = self.phase
        {
            match prim {
                Prim::Climb { .. } | Prim::Leg { .. } => {
                    let kp = self.fp.mpc_xy_p;
                    let t = self.chain.advance(
                        DT,
                        &s.pos_ned_m,
                        &s.vel_ned_m_s,
                        self.last_target.as_ref(),
                        kp,
                        &l,
                    );
                    let hv = t.vel.xy();
                    if hv.norm() > 0.5 {
                        self.yaw_sp = hv.y.atan2(hv.x);
                    }
                    self.last_target = Some(t);
                    sp = McSetpoint::Track {
                        pos: t.pos,
                        vel: t.vel,
                        acc: t.acc,
                        yaw: self.yaw_sp,
                    };
                    if let Prim::Leg {
                        hold_s, radius_m, ..
                    } = prim
                    {
                        leg = Some(self.chain.leg());
                        if t.finished {
                            let (_, d) = self.chain.leg();
                            let close = (s.pos_ned_m - d).norm() <= radius_m.max(0.5);
                            if self.chain.is_fast() {
                                self.hold_pos = t.pos;
                                self.finish_prim(now, item);
                            } else if close {
                                let at = arrived.unwrap_or(now);
                                self.phase = Phase::Running {
                                    prim,
                                    item,
                                    started,
                                    arrived: Some(at),
                                };
                                if now.secs_since(at) >= hold_s {
                                    self.hold_pos = d;
                                    self.finish_prim(now, item);
                                }
                            }
                        }
                    } else if t.finished && (s.pos_ned_m.z - t.pos.z).abs() < 0.5 {
                        self.hold_pos = t.pos;
                        self.finish_prim(now, item);
                    }
                }
                Prim::Hold { time_s, .. } => {
                    if time_s.is_finite() && now.secs_since(started) >= time_s {
                        self.finish_prim(now, item);
                    }
                }
                Prim::Land { xy } => {
                    let p = &self.cfg.params;
                    let xy = xy.map_or(Vector2::new(self.hold_pos.x, self.hold_pos.y), |v| {
                        Vector2::new(v[0], v[1])
                    });
                    let height = self.cfg.initial_down_m - s.pos_ned_m.z;
                    let vz = if height > p.value("MPC_LAND_ALT1") {
                        p.value("MPC_Z_V_AUTO_DN")
                    } else {
                        p.value("MPC_LAND_SPEED")
                    };
                    // Without a position estimate: descend level. Else go
                    // above the landing point first if far from it.
                    if self.blind {
                        sp = McSetpoint::Descend {
                            vz,
                            yaw: self.yaw_sp,
                        };
                    } else if (s.pos_ned_m.xy() - xy).norm() > 3.0 {
                        sp = McSetpoint::Track {
                            pos: Vector3::new(xy.x, xy.y, s.pos_ned_m.z),
                            vel: Vector3::zeros(),
                            acc: Vector3::zeros(),
                            yaw: self.yaw_sp,
                        };
                    } else {
                        sp = McSetpoint::Vertical {
                            pos_xy: xy,
                            vz,
                            yaw: self.yaw_sp,
                        };
                    }
                    let hover = self.mc.as_ref().map_or(0.0, |m| m.last_thrust_n);
                    let mass_g = match &self.cfg.vehicle {
                        VehicleConfig::Multirotor(a) => a.mass_kg * G0_M_S2,
                        VehicleConfig::Boat(_) => 0.0,
                    };
                    let still = s.vel_ned_m_s.z.abs() < 0.2 && height < 1.0 && hover < 0.9 * mass_g;
                    match (still, self.touchdown_since) {
                        (true, None) => self.touchdown_since = Some(now),
                        (true, Some(t0)) if now.secs_since(t0) > 1.0 => {
                            self.event(now, EventKind::Landed, item, String::new());
                            self.on_ground = true;
                            self.landed_at = Some(now);
                            {
                                let mut st = self.status.borrow_mut();
                                st.landed = true;
                                st.on_ground = true;
                            }
                            self.finish_prim(now, item);
                            if self.from_mission
                                && self.queue.is_empty()
                                && self.next_step >= self.cfg.mission.len()
                            {
                                self.finish_mission(now);
                            }
                            self.queue.clear();
                            self.phase = Phase::Idle;
                            sp = McSetpoint::Off;
                        }
                        (false, _) => self.touchdown_since = None,
                        _ => {}
                    }
                }
            }
        }
        if let Some(o) = self.offboard {
            sp = self.offboard_setpoint(&s, o);
        }
        self.status.borrow_mut().leg = leg;
        let climbing = matches!(
            self.phase,
            Phase::Running {
                prim: Prim::Climb { .. },
                ..
            }
        );
        if !self.armed || (self.on_ground && !climbing) {
            sp = McSetpoint::Off;
        }
        let mut motors = [0.0; MAX_MOTORS];
        if let Some(mc) = self.mc.as_mut() {
            mc.update(&sp, &s, DT, &mut motors);
        }
        self.out = Actuators::from_slice(&motors);
    }

    /// Takes an Offboard set-point (multicopters in the air only), entering
    /// Offboard if not in it.
    fn offboard_request(&mut self, now: SimTime, o: Offboard) {
        let airborne = self.armed && self.mc.is_some() && !self.on_ground;
        if !airborne {
            self.event(now, EventKind::Refused, None, "offboard: not flying".into());
            return;
        }
        if self.mode != FlightMode::Offboard || self.offboard.is_none() {
            self.enter_mode(now, FlightMode::Offboard);
            self.hold_pos = self.state().pos_ned_m;
        }
        self.offboard = Some(o);
    }

    /// The multicopter set-point of an Offboard request in force.
    fn offboard_setpoint(&mut self, s: &EstimatedState, o: Offboard) -> McSetpoint {
        match o {
            Offboard::Velocity(vel, yaw) => self.velocity_setpoint(s, vel, yaw),
            Offboard::Attitude {
                roll,
                pitch,
                yaw,
                lift,
            } => {
                self.turn(yaw, Vector3::zeros());
                McSetpoint::Attitude {
                    att: UnitQuaternion::from_euler_angles(roll, pitch, self.yaw_sp),
                    lift,
                }
            }
            Offboard::Rates(rates_frd, lift) => McSetpoint::Rates { rates_frd, lift },
        }
    }

    /// Moves the heading set-point as `yaw` asks (travelling at `vel`).
    fn turn(&mut self, yaw: YawTarget, vel: Vector3<f64>) {
        match yaw {
            YawTarget::Hold => {}
            YawTarget::Angle(a) => self.yaw_sp = a,
            YawTarget::Rate(r) => {
                self.yaw_sp = (self.yaw_sp + r * DT + std::f64::consts::PI)
                    .rem_euclid(std::f64::consts::TAU)
                    - std::f64::consts::PI;
            }
            YawTarget::AlongVelocity => {
                if vel.xy().norm() > 0.3 {
                    self.yaw_sp = vel.y.atan2(vel.x);
                }
            }
        }
    }

    /// Offboard velocity: a carrot moving at `vel` (kept within 2 m of the
    /// vehicle, so that a blocked vehicle does not wind up) with `vel` as
    /// feed-forward.
    fn velocity_setpoint(
        &mut self,
        s: &EstimatedState,
        vel: Vector3<f64>,
        yaw: YawTarget,
    ) -> McSetpoint {
        self.hold_pos += vel * DT;
        let lag = self.hold_pos - s.pos_ned_m;
        let (lag_xy, lag_z) = (lag.xy(), lag.z);
        if lag_xy.norm() > 2.0 {
            let xy = s.pos_ned_m.xy() + lag_xy.normalize() * 2.0;
            self.hold_pos.x = xy.x;
            self.hold_pos.y = xy.y;
        }
        self.hold_pos.z = s.pos_ned_m.z + lag_z.clamp(-2.0, 2.0);
        self.turn(yaw, vel);
        McSetpoint::Track {
            pos: self.hold_pos,
            vel,
            acc: Vector3::zeros(),
            yaw: self.yaw_sp,
        }
    }

    fn fly_boat(&mut self, now: SimTime) {
        let s = self.state();
        let ns = nav_state(&s, now, self.armed);
        let mut leg = None;
        let out: DriverOutput = match self.rover.as_mut() {
            Some(r) => r.update(&ns, DT),
            None => DriverOutput::default(),
        };
        if let Phase::Running {
            prim,
            item,
            started,
            arrived,
        } = self.phase
        {
            let rover_reached = self
                .rover
                .as_ref()
                .is_some_and(|r| r.wpnav.reached_destination());
            // (reached, how long to stay once reached)
            let hold = match prim {
                Prim::Leg { hold_s, .. } => {
                    if let Some(r) = self.rover.as_ref() {
                        let o = r.wpnav.get_origin();
                        let d = r.wpnav.get_destination();
                        leg = Some((Vector3::new(o.x, o.y, 0.0), Vector3::new(d.x, d.y, 0.0)));
                    }
                    Some((out.reached || rover_reached, hold_s))
                }
                Prim::Hold { time_s, at } => Some((at.is_none() || rover_reached, time_s)),
                Prim::Climb { .. } | Prim::Land { .. } => {
                    self.finish_prim(now, item);
                    None
                }
            };
            if let Some((true, hold_s)) = hold {
                let at = arrived.unwrap_or(now);
                self.phase = Phase::Running {
                    prim,
                    item,
                    started,
                    arrived: Some(at),
                };
                if hold_s.is_finite() && now.secs_since(at) >= hold_s {
                    self.finish_prim(now, item);
                }
            }
        }
        self.status.borrow_mut().leg = leg;
        let mut a = Actuators::default();
        if self.armed {
            if let Some(bp) = self.boat {
                bp.mix(out.throttle, out.steering, &mut a.controls);
            }
        }
        self.out = a;
    }
}

/// The rover guidance's view of the estimate.
fn nav_state(s: &EstimatedState, now: SimTime, armed: bool) -> NavState {
    let (_, _, yaw) = s.att_ned_frd.euler_angles();
    let yaw_rate = (s.att_ned_frd * s.rate_frd_rad_s).z;
    NavState {
        now_s: now.as_secs_f64(),
        armed,
        pos_ne_m: s.pos_ned_m.xy(),
        vel_ne_m_s: s.vel_ned_m_s.xy(),
        accel_ne_m_s2: s.accel_ned_m_s2.xy(),
        yaw_rad: yaw,
        yaw_rate_rad_s: yaw_rate,
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
