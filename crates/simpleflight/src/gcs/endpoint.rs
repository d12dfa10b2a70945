//! The vehicle side of a ground-station link, independent of the socket:
//! messages in, messages out, SimpleFlight driven through its request queue
//! and observed through its status.
// Deprecated messages (MISSION_ITEM, MISSION_REQUEST, MISSION_SET_CURRENT, PING,
// PROTOCOL_VERSION) are still sent by ground stations in use; a vehicle answers them.
#![allow(deprecated)]

use mavsitl_core::vehicle::VehicleKind;
use std::time::Duration;

use mavlink::dialects::common::*;
use mavlink::{Message, MessageData};
use num_traits::FromPrimitive;

use super::modes;
use super::params_protocol::{decode_value, value_message, ListStream};
use super::telemetry::{self as tm, Context, STREAMS};
use crate::mission_plan::{compile, Step};
use crate::params::ParamStore;
use crate::{
    EventKind, FlightEvent, FlightMode, FlightStatus, Request, RequestQueue, StatusHandle,
};
use mavsitl_core::geo::{GeoPoint, LocalFrame};
use mavsitl_core::time::SimTime;
use mavsitl_mavlink::mission::{commands as cmd, Mission};
use mavsitl_mavlink::mission_protocol::{
    ItemRequest, ListType, MissionProtocol, Outcome, StoredItem, Stores,
};
use mavsitl_mavlink::wire::{CommandIn, Incoming, MissionItemIn, Outgoing};

/// Highest reposition target above home a multicopter accepts, m.
const MAX_REPOSITION_UP_M: f64 = 10_000.0;

/// How the endpoint presents the vehicle.
#[derive(Debug, Clone)]
pub struct EndpointConfig {
    /// MAVLink system id.
    pub system_id: u8,
    /// MAVLink component id (1, the autopilot).
    pub component_id: u8,
    /// MAV_TYPE (quadrotor, hexarotor, surface boat …).
    pub mav_type: MavType,
    /// MAV_AUTOPILOT: PX4 (modes, parameters and quirks QGroundControl and
    /// MAVSDK expect) or GENERIC.
    pub autopilot: MavAutopilot,
    /// The kind of vehicle.
    pub kind: VehicleKind,
    /// The mission frame; its origin is the scenario's home.
    pub frame: LocalFrame,
    /// Unix time of sim time 0, µs (SYSTEM_TIME, .tlog).
    pub epoch_unix_us: u64,
}

impl EndpointConfig {
    /// A PX4-presented vehicle: MAV_TYPE from the vehicle (quad-, hexa- or
    /// octorotor by `motors`, a surface boat or a ground rover), component 1.
    pub fn px4_vehicle(
        system_id: u8,
        kind: VehicleKind,
        motors: usize,
        frame: LocalFrame,
        epoch_unix_us: u64,
    ) -> Self {
        let mav_type = match (kind, motors) {
            (VehicleKind::Boat, _) => MavType::MAV_TYPE_SURFACE_BOAT,
            (VehicleKind::Rover, _) => MavType::MAV_TYPE_GROUND_ROVER,
            (VehicleKind::Multirotor, 6) => MavType::MAV_TYPE_HEXAROTOR,
            (VehicleKind::Multirotor, 8) => MavType::MAV_TYPE_OCTOROTOR,
            (VehicleKind::Multirotor, _) => MavType::MAV_TYPE_QUADROTOR,
        };
        EndpointConfig {
            system_id,
            component_id: 1,
            mav_type,
            autopilot: MavAutopilot::MAV_AUTOPILOT_PX4,
            kind,
            frame,
            epoch_unix_us,
        }
    }
}

/// The STATUSTEXT a PX4 vehicle sends for SimpleFlight's event `e`, in
/// order (a failsafe: PX4's "Failsafe activated", then its cause and
/// action); none for events PX4 does not announce.
pub fn event_statustexts(e: &FlightEvent) -> Vec<(MavSeverity, String)> {
    use MavSeverity::*;
    let one = |sev, text: String| vec![(sev, text)];
    match e.kind {
        EventKind::Armed => one(MAV_SEVERITY_INFO, "Armed".into()),
        EventKind::Disarmed if e.detail.is_empty() => one(MAV_SEVERITY_INFO, "Disarmed".into()),
        EventKind::Disarmed => one(MAV_SEVERITY_INFO, format!("Disarmed ({})", e.detail)),
        EventKind::Landed => one(MAV_SEVERITY_INFO, "Landing detected".into()),
        EventKind::MissionFinished => one(MAV_SEVERITY_INFO, "Mission finished".into()),
        EventKind::Refused | EventKind::Warning => one(MAV_SEVERITY_WARNING, e.detail.clone()),
        EventKind::Failsafe => vec![
            (MAV_SEVERITY_CRITICAL, "Failsafe activated".into()),
            (MAV_SEVERITY_CRITICAL, e.detail.clone()),
        ],
        EventKind::Emergency => one(MAV_SEVERITY_EMERGENCY, e.detail.clone()),
        EventKind::Notice => one(MAV_SEVERITY_INFO, e.detail.clone()),
        EventKind::ItemSkipped => one(
            MAV_SEVERITY_WARNING,
            format!("Item {} skipped: {}", e.item.unwrap_or(0), e.detail),
        ),
        _ => Vec::new(),
    }
}

/// A command already answered, kept to recognise retransmissions.
#[derive(Debug, Clone, Copy)]
struct Answered {
    peer: (u8, u8),
    cmd: CommandIn,
    result: MavResult,
    at: Duration,
}

/// How long a repeated command counts as a retransmission.
const RETRANSMIT_WINDOW: Duration = Duration::from_secs(3);

/// A MAV_CMD number → our answer.
type Answer = (MavResult, Option<String>);

/// Accepted, nothing to tell the operator.
fn accepted() -> Answer {
    (MavResult::MAV_RESULT_ACCEPTED, None)
}

/// Denied, with the reason for the operator.
fn denied(why: impl Into<String>) -> Answer {
    (MavResult::MAV_RESULT_DENIED, Some(why.into()))
}

/// Not a command this vehicle supports.
fn unsupported() -> Answer {
    (MavResult::MAV_RESULT_UNSUPPORTED, None)
}

/// The vehicle side of the link.
pub struct Endpoint {
    cfg: EndpointConfig,
    status: StatusHandle,
    requests: RequestQueue,
    params: ParamStore,
    stores: Stores,
    missions: MissionProtocol,
    list: ListStream,
    /// (message id, interval µs, next due).
    streams: Vec<(u32, u64, SimTime)>,
    once: Vec<u32>,
    seen_reached: usize,
    seen_events: usize,
    last_reached: Option<(u16, u8)>,
    last_hb: (Option<FlightMode>, bool),
    last_mission_current: Option<(u16, u16, u8, u32)>,
    answered: Vec<Answered>,
    reset_requested: bool,
    throttle: f64,
    /// Messages being assembled, kept between calls so that serving
    /// allocates nothing once warm.
    scratch: Vec<MavMessage>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("system_id", &self.cfg.system_id)
            .finish()
    }
}

fn peer_of(h: (u8, u8)) -> (u8, u8) {
    h
}

/// Converts a mission list to SimpleFlight's steps.
fn compile_list(
    items: &[StoredItem],
    frame: &LocalFrame,
    kind: VehicleKind,
    radius: f64,
) -> Result<Vec<Step>, String> {
    let mission = Mission {
        items: items.iter().map(StoredItem::to_mission_item).collect(),
        ..Mission::default()
    };
    compile(&mission, frame, frame.origin().alt_m, kind, radius)
        .map(|(steps, _)| steps)
        .map_err(|e| e.to_string())
}

impl Endpoint {
    /// An endpoint for the SimpleFlight behind `status`/`requests`, serving
    /// `params`, with `initial` (mission, fence, rally) already stored (the
    /// caller has given SimpleFlight the same mission).
    pub fn new(
        cfg: EndpointConfig,
        status: StatusHandle,
        requests: RequestQueue,
        params: ParamStore,
        initial: Option<&Mission>,
    ) -> Self {
        let mut stores = Stores::default();
        if let Some(m) = initial {
            let conv = |v: &[mavsitl_mavlink::mission::MissionItem]| {
                v.iter()
                    .map(StoredItem::from_mission_item)
                    .collect::<Vec<_>>()
            };
            stores.set(ListType::Mission, conv(&m.items));
            stores.set(ListType::Fence, conv(&m.fence));
            stores.set(ListType::Rally, conv(&m.rally));
        }
        let missions = MissionProtocol::new(cfg.system_id, cfg.component_id);
        Endpoint {
            streams: STREAMS
                .iter()
                .map(|s| (s.id, s.interval_us, SimTime::ZERO))
                .collect(),
            cfg,
            status,
            requests,
            params,
            stores,
            missions,
            list: ListStream::default(),
            once: Vec::new(),
            seen_reached: 0,
            seen_events: 0,
            last_reached: None,
            last_hb: (None, false),
            last_mission_current: None,
            answered: Vec::new(),
            scratch: Vec::new(),
            reset_requested: false,
            throttle: 0.0,
        }
    }

    /// The parameters in force.
    pub fn params(&self) -> &ParamStore {
        &self.params
    }

    /// The stored lists.
    pub fn stores(&self) -> &Stores {
        &self.stores
    }

    /// Whether a ground station asked for a reboot (the caller resets the
    /// simulation and calls [`Endpoint::rebind`]).
    pub fn take_reset(&mut self) -> bool {
        std::mem::take(&mut self.reset_requested)
    }

    /// Attaches to a fresh SimpleFlight after a reset: parameters and stored
    /// mission survive, as on a real autopilot's reboot.
    pub fn rebind(&mut self, status: StatusHandle, requests: RequestQueue) {
        self.status = status;
        self.requests = requests;
        self.seen_reached = 0;
        self.seen_events = 0;
        self.last_reached = None;
        self.last_hb = (None, false);
        self.last_mission_current = None;
        for s in &mut self.streams {
            s.2 = SimTime::ZERO;
        }
        for i in 0..self.params.len() {
            if let Some(name) = self.params.name(i) {
                if let Some(v) = self.params.get(name) {
                    self.push(Request::SetParam(name, v));
                }
            }
        }
        self.apply_mission();
    }

    /// Sets the throttle (0..1) shown in VFR_HUD.
    pub fn set_throttle(&mut self, throttle: f64) {
        self.throttle = throttle;
    }

    fn push(&self, r: Request) {
        self.requests.borrow_mut().push_back(r);
    }

    /// The scratch message buffer (empty), to be given back with
    /// [`Self::flush_scratch`].
    fn take_scratch(&mut self) -> Vec<MavMessage> {
        let mut v = std::mem::take(&mut self.scratch);
        v.clear();
        v
    }

    /// Moves `msgs` to `out` and keeps the buffer for the next call.
    fn flush_scratch(&mut self, mut msgs: Vec<MavMessage>, out: &mut Vec<Outgoing>) {
        out.extend(msgs.drain(..).map(Outgoing::Msg));
        if msgs.capacity() >= self.scratch.capacity() {
            self.scratch = msgs;
        }
    }

    fn ctx(&self, now: SimTime) -> Context {
        Context {
            now,
            frame: self.cfg.frame,
            mav_type: self.cfg.mav_type,
            autopilot: self.cfg.autopilot,
            kind: self.cfg.kind,
            fence_stored: !self.stores.list(ListType::Fence).is_empty(),
            epoch_unix_us: self.cfg.epoch_unix_us,
            cells: self.params.values().bat1_n_cells as u32,
        }
    }

    fn apply_mission(&mut self) {
        let radius = self.params.values().nav_acc_rad;
        match compile_list(
            self.stores.list(ListType::Mission),
            &self.cfg.frame,
            self.cfg.kind,
            radius,
        ) {
            Ok(steps) => self.push(Request::SetMission(steps)),
            Err(e) => tracing::warn!(%e, "stored mission cannot be flown"),
        }
    }

    fn text(out: &mut Vec<Outgoing>, severity: MavSeverity, text: &str) {
        tracing::info!(text, "statustext");
        out.push(Outgoing::Msg(tm::statustext(severity, text)));
    }

    /// Handles one message from `(system, component)`.
    pub fn handle(
        &mut self,
        now: SimTime,
        link: Duration,
        from: (u8, u8),
        msg: Incoming,
        out: &mut Vec<Outgoing>,
    ) {
        let peer = peer_of(from);
        if let Incoming::Msg(MavMessage::HEARTBEAT(h)) = &msg {
            if h.mavtype == MavType::MAV_TYPE_GCS {
                self.push(Request::GcsHeard);
            }
        }
        match msg {
            Incoming::Command(c) => self.on_command(now, link, peer, c, out),
            Incoming::MissionItem(it) => self.on_mission_item(link, peer, &it, out),
            Incoming::Msg(MavMessage::SET_MODE(m)) => self.on_set_mode(&m),
            Incoming::Msg(m) => {
                if let Some(t) = m.target_system_id() {
                    if t != 0 && t != self.cfg.system_id {
                        return;
                    }
                }
                if let Some(c) = m.target_component_id() {
                    if c != 0 && c != self.cfg.component_id {
                        return;
                    }
                }
                self.on_message(now, link, peer, m, out);
            }
        }
    }

    fn on_set_mode(&mut self, m: &SET_MODE_DATA) {
        if m.target_system != self.cfg.system_id && m.target_system != 0 {
            return;
        }
        if m.base_mode.bits() & modes::CUSTOM_MODE_ENABLED == 0 {
            return;
        }
        match modes::from_custom_mode(m.custom_mode) {
            Some(mode) => self.push(Request::SetMode(mode)),
            None => tracing::debug!(
                m.custom_mode,
                "SET_MODE to a mode SimpleFlight does not fly"
            ),
        }
    }

    fn on_mission_item(
        &mut self,
        link: Duration,
        peer: (u8, u8),
        it: &MissionItemIn,
        out: &mut Vec<Outgoing>,
    ) {
        if it.target_system != self.cfg.system_id && it.target_system != 0 {
            return;
        }
        let mut msgs = self.take_scratch();
        let frame = self.cfg.frame;
        let kind = self.cfg.kind;
        let radius = self.params.values().nav_acc_rad;
        let mut steps = None;
        let outcome = self.missions.on_item(
            link,
            peer,
            it,
            &mut self.stores,
            |list, items| {
                if list != ListType::Mission {
                    return Ok(());
                }
                let s = compile_list(items, &frame, kind, radius)?;
                steps = Some(s);
                Ok(())
            },
            &mut msgs,
        );
        self.flush_scratch(msgs, out);
        if let (Outcome::Stored(ListType::Mission), Some(s)) = (&outcome, steps) {
            self.push(Request::SetMission(s));
        }
        self.report(outcome, out);
    }

    fn report(&mut self, outcome: Outcome, out: &mut Vec<Outgoing>) {
        match outcome {
            Outcome::None => {}
            Outcome::Stored(list) => {
                let n = self.stores.list(list).len();
                Self::text(
                    out,
                    MavSeverity::MAV_SEVERITY_INFO,
                    &format!("{} stored: {n} items", list.name()),
                );
            }
            Outcome::Refused(msg) => Self::text(out, MavSeverity::MAV_SEVERITY_WARNING, &msg),
            Outcome::TimedOut(list) => Self::text(
                out,
                MavSeverity::MAV_SEVERITY_WARNING,
                &format!("{} upload timed out; kept the old one", list.name()),
            ),
        }
    }

    fn on_message(
        &mut self,
        now: SimTime,
        link: Duration,
        peer: (u8, u8),
        m: MavMessage,
        out: &mut Vec<Outgoing>,
    ) {
        let mut msgs = self.take_scratch();
        match m {
            MavMessage::PARAM_REQUEST_LIST(_) => self.list.start(link),
            MavMessage::PARAM_REQUEST_READ(r) => self.on_param_read(&r, &mut msgs),
            MavMessage::PARAM_SET(p) => self.on_param_set(&p, out),
            MavMessage::MISSION_COUNT(c) => self.on_mission_count(link, peer, &c, &mut msgs, out),
            MavMessage::MISSION_REQUEST_LIST(r) => {
                self.missions
                    .on_request_list(peer, r.mission_type as u8, &self.stores, &mut msgs)
            }
            MavMessage::MISSION_REQUEST_INT(MISSION_REQUEST_INT_DATA {
                seq, mission_type, ..
            }) => self.request_item(peer, seq, mission_type, true, &mut msgs),
            MavMessage::MISSION_REQUEST(MISSION_REQUEST_DATA {
                seq, mission_type, ..
            }) => self.request_item(peer, seq, mission_type, false, &mut msgs),
            MavMessage::MISSION_ACK(_) => {
                let o = self.missions.on_ack(peer);
                self.report(o, out);
            }
            MavMessage::MISSION_CLEAR_ALL(c) => self.on_clear_all(peer, &c, &mut msgs),
            MavMessage::MISSION_SET_CURRENT(c) => self.on_set_current(c.seq, out),
            MavMessage::TIMESYNC(t) if t.tc1 == 0 => {
                msgs.push(MavMessage::TIMESYNC(TIMESYNC_DATA {
                    tc1: i64::try_from(now.as_nanos()).unwrap_or(i64::MAX),
                    ts1: t.ts1,
                    target_system: peer.0,
                    target_component: peer.1,
                }));
            }
            MavMessage::PING(p) if p.target_system == 0 && p.target_component == 0 => {
                msgs.push(MavMessage::PING(PING_DATA {
                    time_usec: p.time_usec,
                    seq: p.seq,
                    target_system: peer.0,
                    target_component: peer.1,
                }));
            }
            MavMessage::LOG_REQUEST_LIST(_) => {
                msgs.push(MavMessage::LOG_ENTRY(LOG_ENTRY_DATA {
                    time_utc: 0,
                    size: 0,
                    id: 0,
                    num_logs: 0,
                    last_log_num: 0,
                }));
            }
            _ => {}
        }
        self.flush_scratch(msgs, out);
    }

    /// PARAM_REQUEST_READ by index, or by name when the index is −1.
    fn on_param_read(&self, r: &PARAM_REQUEST_READ_DATA, msgs: &mut Vec<MavMessage>) {
        let index = if r.param_index >= 0 {
            Some(r.param_index as usize)
        } else {
            let name = r.param_id.to_str().unwrap_or("").trim_end_matches('\0');
            self.params.index(name)
        };
        match index.and_then(|i| value_message(&self.params, i)) {
            Some(v) => msgs.push(v),
            None => {
                tracing::debug!(?r.param_id, r.param_index, "PARAM_REQUEST_READ of an unknown parameter")
            }
        }
    }

    /// MISSION_COUNT starts an upload; an empty mission stored clears the
    /// vehicle's at once.
    fn on_mission_count(
        &mut self,
        link: Duration,
        peer: (u8, u8),
        c: &MISSION_COUNT_DATA,
        msgs: &mut Vec<MavMessage>,
        out: &mut Vec<Outgoing>,
    ) {
        let o = self.missions.on_count(
            link,
            peer,
            c.count,
            c.mission_type as u8,
            &mut self.stores,
            msgs,
        );
        if let Outcome::Stored(ListType::Mission) = o {
            self.push(Request::SetMission(Vec::new()));
        }
        out.extend(msgs.drain(..).map(Outgoing::Msg));
        self.report(o, out);
    }

    /// MISSION_CLEAR_ALL of one list, or of all three (MAV_MISSION_TYPE_ALL).
    fn on_clear_all(
        &mut self,
        peer: (u8, u8),
        c: &MISSION_CLEAR_ALL_DATA,
        msgs: &mut Vec<MavMessage>,
    ) {
        let lists: &[ListType] = match c.mission_type as u8 {
            255 => &[ListType::Mission, ListType::Fence, ListType::Rally],
            0 => &[ListType::Mission],
            1 => &[ListType::Fence],
            2 => &[ListType::Rally],
            _ => &[],
        };
        let result = if lists.is_empty() {
            MavMissionResult::MAV_MISSION_UNSUPPORTED
        } else {
            MavMissionResult::MAV_MISSION_ACCEPTED
        };
        for l in lists {
            self.stores.set(*l, Vec::new());
            if *l == ListType::Mission {
                self.push(Request::SetMission(Vec::new()));
            }
        }
        msgs.push(MavMessage::MISSION_ACK(MISSION_ACK_DATA {
            target_system: peer.0,
            target_component: peer.1,
            mavtype: result,
            mission_type: c.mission_type,
            opaque_id: 0,
        }));
    }

    /// MISSION_SET_CURRENT: the mission goes on from `seq`.
    fn on_set_current(&mut self, seq: u16, out: &mut Vec<Outgoing>) {
        let n = self.stores.list(ListType::Mission).len();
        if (seq as usize) < n {
            self.push(Request::SetCurrent(seq as usize));
            self.last_mission_current = None;
        } else {
            Self::text(
                out,
                MavSeverity::MAV_SEVERITY_WARNING,
                &format!("no mission item {seq}"),
            );
        }
    }

    fn request_item(
        &self,
        peer: (u8, u8),
        seq: u16,
        list: MavMissionType,
        int: bool,
        msgs: &mut Vec<MavMessage>,
    ) {
        let current = self.status.borrow().current_item;
        let req = ItemRequest {
            seq,
            list_type: list as u8,
            int,
        };
        self.missions
            .on_request_item(peer, req, &self.stores, current, msgs);
    }

    fn on_param_set(&mut self, p: &PARAM_SET_DATA, out: &mut Vec<Outgoing>) {
        let name = p.param_id.to_str().unwrap_or("").trim_end_matches('\0');
        let Some(index) = self.params.index(name) else {
            Self::text(
                out,
                MavSeverity::MAV_SEVERITY_WARNING,
                &format!("unknown parameter {name}"),
            );
            return;
        };
        let Some(static_name) = self.params.name(index) else {
            return;
        };
        let value = decode_value(&self.params, static_name, p.param_value, p.param_type);
        match self.params.set(static_name, value) {
            Ok(()) => {
                if let Some(v) = self.params.get(static_name) {
                    self.push(Request::SetParam(static_name, v));
                }
            }
            Err(e) => Self::text(out, MavSeverity::MAV_SEVERITY_WARNING, &e.to_string()),
        }
        if let Some(v) = value_message(&self.params, index) {
            out.push(Outgoing::Msg(v));
        }
    }

    fn on_command(
        &mut self,
        now: SimTime,
        link: Duration,
        peer: (u8, u8),
        c: CommandIn,
        out: &mut Vec<Outgoing>,
    ) {
        if (c.target_system != 0 && c.target_system != self.cfg.system_id)
            || (c.target_component != 0 && c.target_component != self.cfg.component_id)
        {
            return;
        }
        self.answered
            .retain(|a| link.saturating_sub(a.at) < RETRANSMIT_WINDOW);
        let repeat = self.answered.iter().find(|a| {
            a.peer == peer
                && a.cmd.command == c.command
                && a.cmd.params == c.params
                && a.cmd.x == c.x
                && a.cmd.y == c.y
                && a.cmd.z.to_bits() == c.z.to_bits()
                && (c.int_frame.is_some() || c.confirmation > a.cmd.confirmation)
        });
        let (result, text, extra) = match repeat {
            Some(a) => (a.result, None, self.take_scratch()),
            None => {
                let mut extra = self.take_scratch();
                let (r, t) = self.execute(now, &c, &mut extra);
                self.answered.push(Answered {
                    peer,
                    cmd: c,
                    result: r,
                    at: link,
                });
                if self.answered.len() > 64 {
                    self.answered.remove(0);
                }
                (r, t, extra)
            }
        };
        let ack = match MavCmd::from_u16(c.command) {
            Some(cmd) => Outgoing::Msg(MavMessage::COMMAND_ACK(COMMAND_ACK_DATA {
                command: cmd,
                result,
                progress: 0,
                result_param2: 0,
                target_system: peer.0,
                target_component: peer.1,
            })),
            None => Outgoing::UnknownCommandAck {
                command: c.command,
                result: result as u8,
                target_system: peer.0,
                target_component: peer.1,
            },
        };
        out.push(ack);
        if let Some(t) = text {
            let sev = if result == MavResult::MAV_RESULT_ACCEPTED {
                MavSeverity::MAV_SEVERITY_INFO
            } else {
                MavSeverity::MAV_SEVERITY_WARNING
            };
            Self::text(out, sev, &t);
        }
        self.flush_scratch(extra, out);
    }

    /// Home AMSL, m (set home, else the mission frame's origin).
    fn home_amsl(&self, st: &FlightStatus) -> f64 {
        let z = st.home_ned.map_or(0.0, |h| h.z);
        self.cfg.frame.origin().alt_m - z
    }

    /// Executes a command (one handler each); returns the result, an
    /// operator message, and messages to send after the ACK.
    fn execute(&mut self, now: SimTime, c: &CommandIn, extra: &mut Vec<MavMessage>) -> Answer {
        let status = self.status.clone();
        let st = status.borrow();
        match c.command {
            cmd::COMPONENT_ARM_DISARM => self.arm_disarm(c, &st),
            cmd::NAV_TAKEOFF => self.takeoff(c, &st),
            cmd::NAV_LAND => self.request(Request::SetMode(FlightMode::Land)),
            cmd::NAV_RETURN_TO_LAUNCH => self.request(Request::SetMode(FlightMode::Return)),
            cmd::MISSION_START => self.mission_start(c, &st),
            cmd::DO_SET_MODE => self.set_mode(c),
            cmd::DO_REPOSITION => self.reposition(c, &st),
            cmd::DO_CHANGE_SPEED => self.change_speed(c),
            cmd::DO_SET_MISSION_CURRENT => self.set_mission_current(c),
            cmd::REQUEST_MESSAGE => self.request_message(c),
            cmd::REQUEST_AUTOPILOT_CAPABILITIES => {
                extra.push(tm::autopilot_version(self.cfg.system_id));
                accepted()
            }
            cmd::REQUEST_PROTOCOL_VERSION => {
                extra.push(tm::protocol_version());
                accepted()
            }
            cmd::GET_HOME_POSITION => {
                self.once.push(HOME_POSITION_DATA::ID);
                accepted()
            }
            cmd::SET_MESSAGE_INTERVAL => self.set_message_interval(now, c),
            cmd::DO_SET_HOME => self.set_home(c, &st),
            cmd::PREFLIGHT_REBOOT_SHUTDOWN => self.reboot(c, &st),
            _ => unsupported(),
        }
    }

    /// Queues `r` for SimpleFlight and accepts.
    fn request(&mut self, r: Request) -> Answer {
        self.push(r);
        accepted()
    }

    /// MAV_CMD_COMPONENT_ARM_DISARM (param 2 = 21196 forces it).
    fn arm_disarm(&mut self, c: &CommandIn, st: &FlightStatus) -> Answer {
        let p = c.params;
        let force = (p[1] - 21196.0).abs() < 0.5;
        if p[0] > 0.5 {
            if st.armed {
                return accepted();
            }
            if let (Some(why), false) = (&st.prearm_failure, force) {
                return denied(format!("Arming denied: {why}"));
            }
            self.request(Request::Arm { force })
        } else {
            if !st.armed {
                return accepted();
            }
            if !force && self.cfg.kind.is_multirotor() && !st.on_ground {
                return denied("Disarming denied: not landed");
            }
            self.request(Request::Disarm { force })
        }
    }

    /// MAV_CMD_NAV_TAKEOFF: to param 7 above home if at least 1 m, else to
    /// MIS_TAKEOFF_ALT.
    fn takeoff(&mut self, c: &CommandIn, st: &FlightStatus) -> Answer {
        if !self.cfg.kind.is_multirotor() {
            return denied("Takeoff denied: not a multicopter");
        }
        let default = self.params.values().mis_takeoff_alt;
        let rel = self.amsl(c, st) - self.home_amsl(st);
        let alt = if c.z.is_finite() && rel >= 1.0 {
            rel
        } else {
            default
        };
        self.push(Request::Takeoff { alt_m: alt });
        (
            MavResult::MAV_RESULT_ACCEPTED,
            Some(format!("Takeoff to {alt:.1} m")),
        )
    }

    /// MAV_CMD_MISSION_START from item param 1 (0: the first).
    fn mission_start(&mut self, c: &CommandIn, st: &FlightStatus) -> Answer {
        let n = self.stores.list(ListType::Mission).len();
        if n == 0 {
            return denied("Mission start denied: no mission");
        }
        let p0 = c.params[0];
        let first = if p0.is_finite() && p0 >= 0.0 {
            p0 as usize
        } else {
            0
        };
        if first >= n {
            return denied(format!("Mission start denied: no item {first}"));
        }
        if first > 0 || st.finished {
            self.push(Request::SetCurrent(first));
        }
        self.request(Request::SetMode(FlightMode::Mission))
    }

    /// MAV_CMD_DO_SET_MODE with PX4's custom main and sub modes.
    fn set_mode(&mut self, c: &CommandIn) -> Answer {
        let p = c.params;
        if (p[0] as u32) & modes::CUSTOM_MODE_ENABLED as u32 == 0 {
            return denied("Mode change denied: only custom (PX4) modes");
        }
        match modes::from_px4(p[1] as u8, p[2] as u8) {
            Some(mode) => self.request(Request::SetMode(mode)),
            None => denied(format!(
                "Mode {}/{} is not available in SimpleFlight",
                p[1], p[2]
            )),
        }
    }

    /// MAV_CMD_DO_CHANGE_SPEED: param 2 m/s (−1: MPC_XY_CRUISE), at most
    /// MPC_XY_VEL_MAX.
    fn change_speed(&mut self, c: &CommandIn) -> Answer {
        let s = c.params[1] as f64;
        let speed = if s > 0.0 {
            s
        } else if s == -1.0 {
            self.params.values().mpc_xy_cruise
        } else {
            return denied("Speed change denied: speed must be positive");
        };
        let speed = speed.min(self.params.values().mpc_xy_vel_max);
        self.push(Request::ChangeSpeed(speed));
        (
            MavResult::MAV_RESULT_ACCEPTED,
            Some(format!("Speed {speed:.1} m/s")),
        )
    }

    /// MAV_CMD_DO_SET_MISSION_CURRENT: param 1 the item.
    fn set_mission_current(&mut self, c: &CommandIn) -> Answer {
        let n = self.stores.list(ListType::Mission).len();
        let seq = c.params[0];
        if !(seq.is_finite() && seq >= 0.0 && (seq as usize) < n) {
            return denied("No such mission item");
        }
        self.last_mission_current = None;
        self.request(Request::SetCurrent(seq as usize))
    }

    /// MAV_CMD_REQUEST_MESSAGE: param 1 the message id, sent once.
    fn request_message(&mut self, c: &CommandIn) -> Answer {
        let id = c.params[0] as u32;
        if !self.can_send(id) {
            return unsupported();
        }
        self.once.push(id);
        accepted()
    }

    /// MAV_CMD_SET_MESSAGE_INTERVAL: param 1 the message id, param 2 the
    /// interval (µs; −1 stops the stream, 0 restores its default).
    fn set_message_interval(&mut self, now: SimTime, c: &CommandIn) -> Answer {
        let id = c.params[0] as u32;
        let interval = c.params[1];
        if !(interval.is_finite() && interval >= -1.0) {
            return denied(format!("Message interval {interval} is not an interval"));
        }
        let Some(s) = self.streams.iter_mut().find(|s| s.0 == id) else {
            return unsupported();
        };
        s.1 = if interval < -0.5 {
            0
        } else if interval < 0.5 {
            STREAMS
                .iter()
                .find(|d| d.id == id)
                .map_or(0, |d| d.interval_us)
        } else {
            // At most one hour between messages.
            (interval as u64).min(3_600_000_000)
        };
        s.2 = now;
        accepted()
    }

    /// MAV_CMD_DO_SET_HOME: param 1 = 1 here, else at params 5–7.
    fn set_home(&mut self, c: &CommandIn, st: &FlightStatus) -> Answer {
        let ned = if c.params[0] > 0.5 {
            match st.estimate {
                Some(e) => e.pos_ned_m,
                None => return denied("Home not set: no position yet"),
            }
        } else {
            let (lat, lon) = match c.int_frame {
                Some(_) => (c.x * 1e-7, c.y * 1e-7),
                None => (c.x, c.y),
            };
            if !(lat.is_finite()
                && lon.is_finite()
                && (-90.0..=90.0).contains(&lat)
                && (-180.0..=180.0).contains(&lon)
                && c.z.is_finite())
            {
                return denied("Home not set: invalid position");
            }
            self.cfg
                .frame
                .to_ned(&GeoPoint::from_deg(lat, lon, self.amsl(c, st)))
        };
        self.push(Request::SetHome(ned));
        self.once.push(HOME_POSITION_DATA::ID);
        (
            MavResult::MAV_RESULT_ACCEPTED,
            Some("Home position set".into()),
        )
    }

    /// MAV_CMD_PREFLIGHT_REBOOT_SHUTDOWN: param 1 = 1 reboots (the
    /// simulation resets); nothing else is supported.
    fn reboot(&mut self, c: &CommandIn, st: &FlightStatus) -> Answer {
        if c.params[0].round() as i32 != 1 {
            return unsupported();
        }
        if st.armed {
            return denied("Reboot denied: armed");
        }
        self.reset_requested = true;
        (
            MavResult::MAV_RESULT_ACCEPTED,
            Some("Rebooting: simulation reset".into()),
        )
    }

    /// A command's altitude (param 7) AMSL, m: COMMAND_INT gives its frame
    /// (relative to home for GLOBAL_RELATIVE_ALT and its _INT form, and for
    /// the terrain frames, which have no terrain here); COMMAND_LONG's is AMSL.
    fn amsl(&self, c: &CommandIn, st: &FlightStatus) -> f64 {
        let z = c.z as f64;
        match c.int_frame {
            Some(3 | 6 | 10 | 11) => z + self.home_amsl(st),
            _ => z,
        }
    }

    fn reposition(&mut self, c: &CommandIn, st: &FlightStatus) -> Answer {
        if !st.armed {
            return denied("Reposition denied: not armed");
        }
        if self.cfg.kind.is_multirotor() && st.on_ground {
            return denied("Reposition denied: landed");
        }
        let (lat, lon) = match c.int_frame {
            Some(_) if c.x != 0.0 || c.y != 0.0 => (c.x * 1e-7, c.y * 1e-7),
            Some(_) => (f64::NAN, f64::NAN),
            None => (c.x, c.y),
        };
        let amsl = self.amsl(c, st);
        if !lat.is_nan() && !(-90.0..=90.0).contains(&lat)
            || !lon.is_nan() && !(-180.0..=180.0).contains(&lon)
        {
            return denied("Reposition denied: not a latitude/longitude");
        }
        // Below home or far above it: no multicopter goes there.
        let above_home = amsl - self.home_amsl(st);
        if self.cfg.kind.is_multirotor()
            && amsl.is_finite()
            && !(0.0..=MAX_REPOSITION_UP_M).contains(&above_home)
        {
            return denied(format!(
                "Reposition denied: altitude {above_home:.0} m above home"
            ));
        }
        let ne = (lat.is_finite() && lon.is_finite()).then(|| {
            let n = self.cfg.frame.to_ned(&GeoPoint::from_deg(lat, lon, 0.0));
            [n.x, n.y]
        });
        let down = (amsl.is_finite() && self.cfg.kind.is_multirotor())
            .then(|| self.cfg.frame.origin().alt_m - amsl);
        self.push(Request::Reposition {
            ne_m: ne,
            down_m: down,
        });
        accepted()
    }

    fn can_send(&self, id: u32) -> bool {
        matches!(id, AUTOPILOT_VERSION_DATA::ID | PROTOCOL_VERSION_DATA::ID)
            || self.streams.iter().any(|s| s.0 == id)
    }

    fn build(&self, id: u32, st: &FlightStatus, c: &Context) -> Option<MavMessage> {
        match id {
            HEARTBEAT_DATA::ID => Some(tm::heartbeat(st, c)),
            SYS_STATUS_DATA::ID => Some(tm::sys_status(st, c)),
            SYSTEM_TIME_DATA::ID => Some(tm::system_time(c)),
            GPS_RAW_INT_DATA::ID => tm::gps_raw_int(st, c),
            ATTITUDE_DATA::ID => tm::attitude(st, c),
            ATTITUDE_QUATERNION_DATA::ID => tm::attitude_quaternion(st, c),
            LOCAL_POSITION_NED_DATA::ID => tm::local_position(st, c),
            GLOBAL_POSITION_INT_DATA::ID => tm::global_position(st, c),
            MISSION_CURRENT_DATA::ID => Some(tm::mission_current(st, self.list_ids())),
            VFR_HUD_DATA::ID => tm::vfr_hud(st, self.throttle, c),
            BATTERY_STATUS_DATA::ID => tm::battery_status(st, c),
            AUTOPILOT_VERSION_DATA::ID => Some(tm::autopilot_version(self.cfg.system_id)),
            HOME_POSITION_DATA::ID => tm::home_position(st, c),
            ESTIMATOR_STATUS_DATA::ID => tm::estimator_status(st, c),
            EXTENDED_SYS_STATE_DATA::ID => Some(tm::extended_sys_state(st, c)),
            PROTOCOL_VERSION_DATA::ID => Some(tm::protocol_version()),
            _ => None,
        }
    }

    fn list_ids(&self) -> [u32; 3] {
        [
            self.stores.id(ListType::Mission),
            self.stores.id(ListType::Fence),
            self.stores.id(ListType::Rally),
        ]
    }

    /// Sends what is due at sim time `now` / link time `link`: streams,
    /// replies to REQUEST_MESSAGE, the paced parameter list, mission retries,
    /// events as STATUSTEXT, MISSION_ITEM_REACHED and MISSION_CURRENT on change,
    /// and a heartbeat at once on arming or a mode change.
    pub fn poll(&mut self, now: SimTime, link: Duration, out: &mut Vec<Outgoing>) {
        let status = self.status.clone();
        let st = status.borrow();
        let mut msgs = self.take_scratch();
        // Mission protocol timers and the parameter list.
        let o = self.missions.poll(link, &mut msgs);
        self.list.poll(link, &self.params, &mut msgs);
        out.extend(msgs.drain(..).map(Outgoing::Msg));
        self.report(o, out);
        let c = self.ctx(now);
        // Heartbeat at once on arm / mode change.
        let hb = (st.mode, st.armed);
        if hb != self.last_hb {
            self.last_hb = hb;
            msgs.push(tm::heartbeat(&st, &c));
        }
        // Events.
        for e in st.events.since(self.seen_events) {
            for (sev, t) in event_statustexts(e) {
                msgs.push(tm::statustext(sev, &t));
            }
        }
        self.seen_events = st.events.end();
        // Items reached, then MISSION_CURRENT on change.
        for (_, i) in st.reached.since(self.seen_reached) {
            msgs.push(MavMessage::MISSION_ITEM_REACHED(
                MISSION_ITEM_REACHED_DATA { seq: *i as u16 },
            ));
            self.last_reached = Some((*i as u16, 10));
        }
        self.seen_reached = st.reached.end();
        if let MavMessage::MISSION_CURRENT(mc) = tm::mission_current(&st, self.list_ids()) {
            let key = (mc.seq, mc.total, mc.mission_state as u8, mc.mission_id);
            if self.last_mission_current != Some(key) {
                self.last_mission_current = Some(key);
                msgs.push(MavMessage::MISSION_CURRENT(mc));
            }
        }
        // Requested once.
        let mut once = std::mem::take(&mut self.once);
        for id in once.drain(..) {
            if let Some(m) = self.build(id, &st, &c) {
                msgs.push(m);
            }
        }
        self.once = once;
        // Streams.
        for i in 0..self.streams.len() {
            let Some(&(id, interval, due)) = self.streams.get(i) else {
                continue;
            };
            if interval == 0 || now < due {
                continue;
            }
            let next = SimTime::from_micros(
                due.as_micros()
                    .saturating_add(interval)
                    .max(now.as_micros().saturating_sub(interval).saturating_add(1)),
            );
            if let Some(s) = self.streams.get_mut(i) {
                s.2 = next;
            }
            if let Some(m) = self.build(id, &st, &c) {
                msgs.push(m);
            }
            if id == 42 {
                if let Some((seq, left)) = self.last_reached.filter(|(_, n)| *n > 0) {
                    msgs.push(MavMessage::MISSION_ITEM_REACHED(
                        MISSION_ITEM_REACHED_DATA { seq },
                    ));
                    self.last_reached = Some((seq, left - 1));
                }
            }
        }
        drop(st);
        self.flush_scratch(msgs, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mavsitl_core::shared::Shared;

    /// A TIMESYNC request (tc1 0) is answered with the sim time in ns as
    /// tc1 and its own ts1 echoed, to its sender (MAVLink's TIMESYNC).
    #[test]
    fn a_timesync_request_is_answered_with_sim_time_in_nanoseconds() {
        let cfg = EndpointConfig {
            system_id: 1,
            component_id: 1,
            mav_type: MavType::MAV_TYPE_QUADROTOR,
            autopilot: MavAutopilot::MAV_AUTOPILOT_PX4,
            kind: VehicleKind::Multirotor,
            frame: LocalFrame::new(GeoPoint::from_deg(47.397742, 8.545594, 488.0)),
            epoch_unix_us: 0,
        };
        let mut ep = Endpoint::new(
            cfg,
            Shared::new(Default::default()),
            Shared::new(Default::default()),
            ParamStore::default(),
            None,
        );
        let ask = |tc1| {
            Incoming::Msg(MavMessage::TIMESYNC(TIMESYNC_DATA {
                tc1,
                ts1: 123_456_789,
                target_system: 0,
                target_component: 0,
            }))
        };
        let now = SimTime::from_micros(2_500_001);
        let mut out = Vec::new();
        ep.handle(now, Duration::ZERO, (255, 190), ask(0), &mut out);
        let replies: Vec<_> = out
            .iter()
            .filter_map(|o| match o {
                Outgoing::Msg(MavMessage::TIMESYNC(t)) => Some(t.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(replies.len(), 1, "{out:?}");
        assert_eq!(
            (replies[0].tc1, replies[0].ts1, replies[0].target_system),
            (2_500_001_000, 123_456_789, 255)
        );
        // A reply to one of ours (tc1 set) is not answered.
        out.clear();
        ep.handle(now, Duration::ZERO, (255, 190), ask(7), &mut out);
        assert!(
            !out.iter()
                .any(|o| matches!(o, Outgoing::Msg(MavMessage::TIMESYNC(_)))),
            "{out:?}"
        );
    }
}
