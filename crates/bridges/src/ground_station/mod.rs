//! mavsitl as the ground station of the firmware it flies: the steps a person
//! takes in QGroundControl, without the person.
//!
//! 1. wait for the autopilot's HEARTBEAT (and check it is the firmware and the
//!    kind of vehicle simulated: a wrong binary is caught here);
//! 2. ask for the telemetry it needs (SET_MESSAGE_INTERVAL; ArduPilot also
//!    REQUEST_DATA_STREAM) and wait for a 3-D GPS fix;
//! 3. upload the mission with the client side of [`mavsitl_mavlink::mission_protocol`]
//!    (ArduPilot's list starts with home at item 0, as QGroundControl sends it);
//! 4. wait until SYS_STATUS reports the pre-arm checks passed (a firmware
//!    that does not report them is simply tried);
//! 5. arm (ArduPilot in GUIDED / HOLD first), refused arming is retried every
//!    2 s of sim time while the firmware says why in STATUSTEXT;
//! 6. start the mission: PX4 DO_SET_MODE AUTO.MISSION (as MAVSDK), ArduPilot
//!    MAV_CMD_MISSION_START (Copter then takes off on the mission's take-off
//!    item without a raised throttle, as with MAVSDK or MAVProxy);
//! 7. follow MISSION_CURRENT, MISSION_ITEM_REACHED, HEARTBEAT and STATUSTEXT
//!    until the mission is finished — and, for a multicopter whose mission
//!    lands, landed and disarmed.
//!
//! The machine is sans-IO: messages in, messages out, the link clock (wall
//! time, for retries) and sim time (for the firmware's own pace) supplied by
//! the caller. [`link`] runs it on a socket in a thread of its own.
// MISSION_REQUEST is deprecated but it is what ArduPilot sends.
#![allow(deprecated)]

pub mod dialect;
pub mod link;

use std::collections::BTreeSet;
use std::time::Duration;

use mavlink::dialects::common::*;

pub use dialect::Firmware;

use mavsitl_core::time::SimTime;
use mavsitl_core::vehicle::VehicleKind;
use mavsitl_mavlink::mission::commands;
use mavsitl_mavlink::mission_protocol::client::{Upload, UploadError, UploadState};
use mavsitl_mavlink::mission_protocol::{ListType, StoredItem};

/// Our system id (a ground station's, as QGroundControl's).
pub const GCS_SYSTEM_ID: u8 = 255;
/// Our component id (MAV_COMP_ID_MISSIONPLANNER).
pub const GCS_COMPONENT_ID: u8 = 190;
/// A command without an ACK for this long (link time) is sent again.
const COMMAND_RESEND: Duration = Duration::from_millis(1000);
/// Uploads tried when the firmware answers MAV_MISSION_ERROR.
const MAX_UPLOAD_ATTEMPTS: u32 = 3;
/// Sim time between arming attempts the firmware refused.
const ARM_RETRY_US: u64 = 2_000_000;
/// A mission that does not end on the ground is over this long (sim time)
/// after its last item, as `mavsitl fly` holds it.
const HOLD_AFTER_FINISH_US: u64 = 2_000_000;
/// Telemetry asked for, with its interval (µs of the firmware's clock). Only
/// what the ground station reads: a firmware running many times faster than
/// real time fills a slow link (ArduPilot's SERIAL0) and drops messages.
const STREAMS: [(u32, f32); 4] = [
    (1, 200_000.0),   // SYS_STATUS
    (24, 200_000.0),  // GPS_RAW_INT
    (42, 200_000.0),  // MISSION_CURRENT
    (245, 200_000.0), // EXTENDED_SYS_STATE
];

/// What the ground station is given.
#[derive(Debug, Clone)]
pub struct GroundStationConfig {
    /// The firmware flying.
    pub firmware: Firmware,
    /// The kind of vehicle simulated.
    pub kind: VehicleKind,
    /// The plan's mission items, in plan order.
    pub mission: Vec<StoredItem>,
    /// Home (lat, lon degE7; alt AMSL m): ArduPilot's item 0.
    pub home: (i32, i32, f32),
    /// The firmware must be ready to arm within this much sim time (and as
    /// much link time, for a firmware whose clock never starts).
    pub ready_timeout: SimTime,
}

/// Where the flight stands.
#[derive(Debug, Clone, PartialEq)]
pub enum Phase {
    /// Waiting for the autopilot's HEARTBEAT.
    Connecting,
    /// Waiting for a 3-D GPS fix before the upload.
    WaitingForGps,
    /// Uploading the mission.
    Uploading,
    /// Waiting for the pre-arm checks (or for the next arming attempt).
    WaitingForPrearm,
    /// Arming.
    Arming,
    /// Starting the mission.
    Starting,
    /// The mission is being flown.
    Flying,
    /// The mission is over as it should be.
    Finished,
    /// The flight cannot go on; why.
    Failed(String),
}

/// Something that happened, for the record and the console.
#[derive(Debug, Clone, PartialEq)]
pub enum GsEvent {
    /// The autopilot answered.
    Connected {
        /// Its system id.
        system: u8,
        /// Its MAV_TYPE.
        vehicle: MavType,
    },
    /// A STATUSTEXT.
    StatusText {
        /// Severity.
        severity: MavSeverity,
        /// The text.
        text: String,
    },
    /// The mission was stored by the firmware.
    Uploaded {
        /// Items in the plan.
        items: usize,
        /// Uploads it took (more than 1: the firmware answered
        /// MAV_MISSION_ERROR before, and the upload was started again).
        attempts: u32,
    },
    /// Armed.
    Armed,
    /// Disarmed.
    Disarmed,
    /// The flight mode changed.
    Mode(String),
    /// The plan item being flown (plan index).
    ItemCurrent(usize),
    /// A plan item was reached (plan index).
    ItemReached(usize),
    /// The mission's last item is done.
    MissionFinished,
    /// The firmware identified itself (AUTOPILOT_VERSION): version and build.
    Version(String),
}

impl GsEvent {
    /// The event's kind as written in `mission_events.csv`.
    pub fn kind(&self) -> &'static str {
        match self {
            GsEvent::Connected { .. } => "connected",
            GsEvent::StatusText { .. } => "statustext",
            GsEvent::Uploaded { .. } => "mission_uploaded",
            GsEvent::Armed => "armed",
            GsEvent::Disarmed => "disarmed",
            GsEvent::Mode(_) => "mode",
            GsEvent::ItemCurrent(_) => "item_current",
            GsEvent::ItemReached(_) => "item_reached",
            GsEvent::MissionFinished => "mission_finished",
            GsEvent::Version(_) => "autopilot_version",
        }
    }

    /// The plan item the event is about, if any.
    pub fn item(&self) -> Option<usize> {
        match self {
            GsEvent::ItemCurrent(i) | GsEvent::ItemReached(i) => Some(*i),
            _ => None,
        }
    }

    /// Details for the record.
    pub fn detail(&self) -> String {
        match self {
            GsEvent::Connected { system, vehicle } => format!("system {system}, {vehicle:?}"),
            GsEvent::StatusText { severity, text } => format!("{severity:?}: {text}"),
            GsEvent::Uploaded { items, attempts: 1 } => format!("{items} items"),
            GsEvent::Uploaded { items, attempts } => {
                format!("{items} items, at attempt {attempts} (MAV_MISSION_ERROR before)")
            }
            GsEvent::Mode(m) | GsEvent::Version(m) => m.clone(),
            _ => String::new(),
        }
    }
}

/// "PX4 1.15.0 official, git 1a2b3c4d": AUTOPILOT_VERSION's flight software
/// version (major, minor, patch, release type) and custom version (the git
/// hash: ASCII as ArduPilot sends it, else its bytes in hex as PX4 packs
/// them, most significant last).
pub fn version_text(firmware: &str, v: &AUTOPILOT_VERSION_DATA) -> String {
    let sw = v.flight_sw_version;
    let kind = match sw & 0xff {
        0..=63 => "dev",
        64..=127 => "alpha",
        128..=191 => "beta",
        192..=254 => "rc",
        _ => "official",
    };
    let c = v.flight_custom_version;
    let git = if c.iter().all(|b| b.is_ascii_graphic() || *b == 0) && c.iter().any(|b| *b != 0) {
        c.iter()
            .take_while(|b| **b != 0)
            .map(|b| char::from(*b))
            .collect::<String>()
    } else {
        c.iter().rev().map(|b| format!("{b:02x}")).collect()
    };
    format!(
        "{firmware} {}.{}.{} {kind}, git {git}",
        sw >> 24,
        (sw >> 16) & 0xff,
        (sw >> 8) & 0xff
    )
}

#[derive(Debug, Clone)]
struct Pending {
    msg: COMMAND_LONG_DATA,
    sent: Duration,
    attempts: u8,
}

/// The ground station's state.
#[derive(Debug)]
pub struct GroundStation {
    cfg: GroundStationConfig,
    phase: Phase,
    events: Vec<GsEvent>,
    target: Option<(u8, u8)>,
    upload: Option<Upload>,
    /// Uploads started (a MAV_MISSION_ERROR answer starts it again).
    upload_attempts: u32,
    gps_fix: bool,
    /// The pre-arm checks as SYS_STATUS reports them; None: not reported.
    prearm_ok: Option<bool>,
    last_prearm_text: Option<String>,
    /// A STATUSTEXT being reassembled from its chunks: (id, text so far).
    chunks: Option<(u16, String)>,
    armed: bool,
    /// Seen armed while the mission was being flown.
    flew: bool,
    mode: Option<u32>,
    current: Option<usize>,
    reached: BTreeSet<usize>,
    complete: bool,
    finished_at: Option<SimTime>,
    pending: Option<Pending>,
    /// No arming or mission start before this sim time (after a refusal).
    next_try: SimTime,
    last_heartbeat: Option<Duration>,
}

fn command(cmd: MavCmd, target: (u8, u8), params: [f32; 7]) -> COMMAND_LONG_DATA {
    let [param1, param2, param3, param4, param5, param6, param7] = params;
    COMMAND_LONG_DATA {
        param1,
        param2,
        param3,
        param4,
        param5,
        param6,
        param7,
        command: cmd,
        target_system: target.0,
        target_component: target.1,
        confirmation: 0,
    }
}

fn is_landing(cmd: u16) -> bool {
    matches!(cmd, commands::NAV_RETURN_TO_LAUNCH | commands::NAV_LAND)
}

impl GroundStation {
    /// A ground station for one flight.
    pub fn new(cfg: GroundStationConfig) -> Self {
        GroundStation {
            cfg,
            phase: Phase::Connecting,
            events: Vec::new(),
            target: None,
            upload: None,
            upload_attempts: 0,
            gps_fix: false,
            prearm_ok: None,
            last_prearm_text: None,
            chunks: None,
            armed: false,
            flew: false,
            mode: None,
            current: None,
            reached: BTreeSet::new(),
            complete: false,
            finished_at: None,
            pending: None,
            next_try: SimTime::ZERO,
            last_heartbeat: None,
        }
    }

    /// A PARAM_SET of `name` to `value` for the firmware, once it is known.
    pub fn param_set(&self, name: &str, value: f32) -> Option<MavMessage> {
        let (system, component) = self.target?;
        Some(MavMessage::PARAM_SET(PARAM_SET_DATA {
            param_value: value,
            target_system: system,
            target_component: component,
            param_id: name.into(),
            param_type: MavParamType::MAV_PARAM_TYPE_REAL32,
        }))
    }

    /// Where the flight stands.
    pub fn phase(&self) -> &Phase {
        &self.phase
    }

    /// Takes the events since the last call.
    pub fn take_events(&mut self) -> Vec<GsEvent> {
        std::mem::take(&mut self.events)
    }

    /// Navigation items of the plan (the ones firmware reports reached).
    pub fn nav_items(&self) -> usize {
        self.cfg
            .mission
            .iter()
            .filter(|i| (16..=99).contains(&i.command))
            .count()
    }

    /// Navigation items reached so far.
    pub fn nav_items_reached(&self) -> usize {
        self.reached
            .iter()
            .filter(|&&i| {
                self.cfg
                    .mission
                    .get(i)
                    .is_some_and(|it| (16..=99).contains(&it.command))
            })
            .count()
    }

    /// Whether the firmware reports itself armed.
    pub fn armed(&self) -> bool {
        self.armed
    }

    fn fail(&mut self, why: String) {
        if !matches!(self.phase, Phase::Finished | Phase::Failed(_)) {
            self.phase = Phase::Failed(why);
        }
    }

    /// The plan index of firmware item `seq`, None for ArduPilot's home.
    fn plan_index(&self, seq: u16) -> Option<usize> {
        if self.cfg.firmware.home_is_item_zero() {
            (seq as usize).checked_sub(1)
        } else {
            Some(seq as usize)
        }
    }

    /// The list as the firmware numbers it, its parameters as it takes them
    /// ([`Firmware::upload_params`]: no NaN where ArduPilot refuses one,
    /// jump targets counted from its home item).
    fn upload_list(&self) -> Vec<StoredItem> {
        let mut items = Vec::with_capacity(self.cfg.mission.len() + 1);
        if self.cfg.firmware.home_is_item_zero() {
            let (lat, lon, alt) = self.cfg.home;
            items.push(StoredItem {
                command: commands::NAV_WAYPOINT,
                frame: mavsitl_mavlink::mission::FRAME_GLOBAL,
                params: [0.0; 4],
                x: lat,
                y: lon,
                z: alt,
                autocontinue: 1,
            });
        }
        let firmware = self.cfg.firmware;
        items.extend(self.cfg.mission.iter().map(|s| StoredItem {
            params: firmware.upload_params(s.command, s.params),
            ..*s
        }));
        items
    }

    fn send_command(&mut self, now: Duration, msg: COMMAND_LONG_DATA, out: &mut Vec<MavMessage>) {
        tracing::debug!(command = ?msg.command, phase = ?self.phase, "ground station: sending");
        out.push(MavMessage::COMMAND_LONG(msg.clone()));
        self.pending = Some(Pending {
            msg,
            sent: now,
            attempts: 1,
        });
    }

    /// One message from system `sys`, component `comp`.
    pub fn handle(
        &mut self,
        now: Duration,
        sim: SimTime,
        (sys, comp): (u8, u8),
        msg: &MavMessage,
        out: &mut Vec<MavMessage>,
    ) {
        if let MavMessage::HEARTBEAT(hb) = msg {
            self.on_heartbeat((sys, comp), hb, out);
            return;
        }
        if self.target.map(|t| t.0) != Some(sys) {
            return;
        }
        match msg {
            MavMessage::SYS_STATUS(s) => {
                let bit = MavSysStatusSensor::MAV_SYS_STATUS_PREARM_CHECK;
                self.prearm_ok = s
                    .onboard_control_sensors_enabled
                    .contains(bit)
                    .then(|| s.onboard_control_sensors_health.contains(bit));
            }
            MavMessage::GPS_RAW_INT(g) => {
                self.gps_fix |= g.fix_type as u8 >= GpsFixType::GPS_FIX_TYPE_3D_FIX as u8;
            }
            MavMessage::STATUSTEXT(t) => self.on_statustext(t),
            MavMessage::MISSION_REQUEST_INT(r) => {
                self.on_mission_request(now, r.seq, r.mission_type as u8, out)
            }
            MavMessage::MISSION_REQUEST(r) => {
                self.on_mission_request(now, r.seq, r.mission_type as u8, out)
            }
            MavMessage::MISSION_ACK(a) => {
                if let Some(u) = self.upload.as_mut() {
                    u.on_ack(a.mission_type as u8, a.mavtype);
                }
            }
            MavMessage::MISSION_CURRENT(c) => self.on_mission_current(c),
            MavMessage::MISSION_ITEM_REACHED(r) => self.on_item_reached(r.seq),
            MavMessage::COMMAND_ACK(a) => self.on_command_ack(now, sim, a, out),
            MavMessage::AUTOPILOT_VERSION(v) => {
                let text = version_text(self.cfg.firmware.name(), v);
                let known = self
                    .events
                    .iter()
                    .any(|e| matches!(e, GsEvent::Version(t) if *t == text));
                if !known {
                    self.events.push(GsEvent::Version(text));
                }
            }
            _ => {}
        }
    }

    fn on_heartbeat(&mut self, from: (u8, u8), hb: &HEARTBEAT_DATA, out: &mut Vec<MavMessage>) {
        if hb.autopilot == MavAutopilot::MAV_AUTOPILOT_INVALID
            || hb.mavtype == MavType::MAV_TYPE_GCS
        {
            return;
        }
        match self.target {
            None => {
                let fw = self.cfg.firmware;
                if hb.autopilot != fw.autopilot() {
                    return self.fail(format!(
                        "the autopilot on this port is not {} ({:?})",
                        fw.name(),
                        hb.autopilot
                    ));
                }
                if !fw.type_matches(hb.mavtype, self.cfg.kind) {
                    return self.fail(format!(
                        "{} reports a {:?}, but the simulated vehicle is a {}: wrong firmware binary or airframe",
                        fw.name(),
                        hb.mavtype,
                        self.cfg.kind.name()
                    ));
                }
                self.target = Some(from);
                self.events.push(GsEvent::Connected {
                    system: from.0,
                    vehicle: hb.mavtype,
                });
                self.request_telemetry(from, out);
                if self.phase == Phase::Connecting {
                    self.phase = Phase::WaitingForGps;
                }
            }
            Some(t) if t != from => return,
            Some(_) => {}
        }
        if self.mode != Some(hb.custom_mode) {
            self.mode = Some(hb.custom_mode);
            self.events
                .push(GsEvent::Mode(self.cfg.firmware.mode_name(hb.custom_mode)));
        }
        let armed = hb
            .base_mode
            .contains(MavModeFlag::MAV_MODE_FLAG_SAFETY_ARMED);
        if armed != self.armed {
            self.armed = armed;
            self.events.push(if armed {
                GsEvent::Armed
            } else {
                GsEvent::Disarmed
            });
        }
        // The HEARTBEAT is the truth when an ACK went missing: armed in the
        // mission mode means the mission has started.
        let started = self.armed && hb.custom_mode == self.cfg.firmware.mission_mode();
        if started && matches!(self.phase, Phase::Arming | Phase::Starting) {
            self.pending = None;
            self.phase = Phase::Flying;
        }
    }

    fn request_telemetry(&self, target: (u8, u8), out: &mut Vec<MavMessage>) {
        for (id, interval_us) in STREAMS {
            out.push(MavMessage::COMMAND_LONG(command(
                MavCmd::MAV_CMD_SET_MESSAGE_INTERVAL,
                target,
                [id as f32, interval_us, 0.0, 0.0, 0.0, 0.0, 0.0],
            )));
        }
        // Its identification, for the record (a report names the build).
        out.push(MavMessage::COMMAND_LONG(command(
            MavCmd::MAV_CMD_REQUEST_MESSAGE,
            target,
            [148.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        )));
        if self.cfg.firmware != Firmware::Px4 {
            out.push(MavMessage::REQUEST_DATA_STREAM(REQUEST_DATA_STREAM_DATA {
                req_message_rate: 5,
                target_system: target.0,
                target_component: target.1,
                req_stream_id: MavDataStream::MAV_DATA_STREAM_EXTENDED_STATUS,
                start_stop: 1,
            }));
        }
    }

    fn on_statustext(&mut self, t: &STATUSTEXT_DATA) {
        let chunk = t.text.to_str().unwrap_or("").trim_end_matches('\0');
        // A text longer than 50 bytes comes in chunks with one id; the last
        // chunk is the one shorter than 50 bytes.
        let last_chunk = chunk.len() < 50 || t.id == 0;
        let text = match self.chunks.take() {
            Some((id, mut acc)) if id == t.id && t.id != 0 => {
                acc.push_str(chunk);
                acc
            }
            _ => chunk.to_string(),
        };
        if !last_chunk {
            self.chunks = Some((t.id, text));
            return;
        }
        let preflight = !matches!(self.phase, Phase::Flying | Phase::Finished);
        if preflight && (t.severity as u8) <= MavSeverity::MAV_SEVERITY_WARNING as u8 {
            self.last_prearm_text = Some(text.clone());
        }
        self.events.push(GsEvent::StatusText {
            severity: t.severity,
            text,
        });
    }

    fn on_mission_request(&mut self, now: Duration, seq: u16, list: u8, out: &mut Vec<MavMessage>) {
        if let Some(u) = self.upload.as_mut() {
            u.on_request(now, seq, list, out);
        }
    }

    fn on_mission_current(&mut self, c: &MISSION_CURRENT_DATA) {
        if self.phase != Phase::Flying {
            return;
        }
        if let Some(i) = self.plan_index(c.seq) {
            if self.current != Some(i) && i < self.cfg.mission.len() {
                // Moving on past an item means it was done, whether or not
                // its MISSION_ITEM_REACHED made it through the link.
                if let Some(prev) = self.current.filter(|&p| p < i) {
                    for done in prev..i {
                        self.mark_reached(done);
                    }
                }
                self.current = Some(i);
                self.events.push(GsEvent::ItemCurrent(i));
            }
        }
        if c.mission_state == MissionState::MISSION_STATE_COMPLETE {
            self.complete = true;
        }
    }

    fn on_item_reached(&mut self, seq: u16) {
        if let Some(i) = self.plan_index(seq) {
            self.mark_reached(i);
        }
    }

    fn mark_reached(&mut self, i: usize) {
        if i >= self.cfg.mission.len() || !self.reached.insert(i) {
            return;
        }
        self.events.push(GsEvent::ItemReached(i));
        if i + 1 == self.cfg.mission.len() {
            self.complete = true;
        }
    }

    fn on_command_ack(
        &mut self,
        now: Duration,
        sim: SimTime,
        a: &COMMAND_ACK_DATA,
        out: &mut Vec<MavMessage>,
    ) {
        let Some(p) = &self.pending else {
            return;
        };
        tracing::debug!(command = ?a.command, result = ?a.result, phase = ?self.phase, pending = ?p.msg.command, "ground station: COMMAND_ACK");
        if p.msg.command != a.command {
            return;
        }
        self.pending = None;
        let ok = a.result == MavResult::MAV_RESULT_ACCEPTED;
        let why = || {
            let last = self.last_prearm_text.clone().unwrap_or_default();
            format!(
                "{:?}{}{last}",
                a.result,
                if last.is_empty() { "" } else { ": " }
            )
        };
        match (a.command, &self.phase) {
            (MavCmd::MAV_CMD_DO_SET_MODE, Phase::Arming) => {
                if ok {
                    self.arm(now, out);
                } else {
                    let w = why();
                    self.fail(format!(
                        "{} refused the arming mode ({w})",
                        self.cfg.firmware.name()
                    ));
                }
            }
            (MavCmd::MAV_CMD_COMPONENT_ARM_DISARM, Phase::Arming) => {
                if ok {
                    self.phase = Phase::Starting;
                    self.next_try = sim;
                } else {
                    // Not ready after all: try again later.
                    self.phase = Phase::WaitingForPrearm;
                    self.next_try = sim + ARM_RETRY_US;
                }
            }
            (MavCmd::MAV_CMD_MISSION_START | MavCmd::MAV_CMD_DO_SET_MODE, Phase::Starting) => {
                if ok {
                    self.phase = Phase::Flying;
                } else {
                    // ArduPilot refuses AUTO until its position estimate is
                    // good ("Flight mode change failed"): again in a while,
                    // within the ready timeout (which quotes the reason).
                    self.next_try = sim + ARM_RETRY_US;
                }
            }
            _ => {}
        }
    }

    fn arm(&mut self, now: Duration, out: &mut Vec<MavMessage>) {
        if let Some(t) = self.target {
            let msg = command(
                MavCmd::MAV_CMD_COMPONENT_ARM_DISARM,
                t,
                [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            );
            self.send_command(now, msg, out);
        }
    }

    fn start(&mut self, now: Duration, out: &mut Vec<MavMessage>) {
        let Some(t) = self.target else {
            return;
        };
        let msg = match self.cfg.firmware {
            Firmware::Px4 => command(
                MavCmd::MAV_CMD_DO_SET_MODE,
                t,
                [1.0, 4.0, 4.0, 0.0, 0.0, 0.0, 0.0],
            ),
            Firmware::ArduCopter | Firmware::ArduRover => {
                command(MavCmd::MAV_CMD_MISSION_START, t, [0.0; 7])
            }
        };
        self.send_command(now, msg, out);
    }

    /// Time passing: retries, phase changes, the end of the flight. `now` is
    /// the link clock (from the ground station's start), `sim` the firmware's.
    pub fn poll(&mut self, now: Duration, sim: SimTime, out: &mut Vec<MavMessage>) {
        if self
            .last_heartbeat
            .is_none_or(|t| now.saturating_sub(t) >= Duration::from_secs(1))
        {
            self.last_heartbeat = Some(now);
            out.push(MavMessage::HEARTBEAT(HEARTBEAT_DATA {
                custom_mode: 0,
                mavtype: MavType::MAV_TYPE_GCS,
                autopilot: MavAutopilot::MAV_AUTOPILOT_INVALID,
                base_mode: MavModeFlag::empty(),
                system_status: MavState::MAV_STATE_ACTIVE,
                mavlink_version: 3,
            }));
        }
        self.resend_pending(now, out);
        self.check_ready_timeout(now, sim);
        match self.phase {
            Phase::WaitingForGps if self.gps_fix => self.start_upload(now, out),
            Phase::Uploading => self.poll_upload(now, out),
            Phase::WaitingForPrearm if sim >= self.next_try && self.prearm_ok != Some(false) => {
                self.begin_arming(now, out)
            }
            Phase::Starting if self.pending.is_none() && sim >= self.next_try => {
                self.start(now, out)
            }
            Phase::Flying => self.check_end(sim),
            _ => {}
        }
    }

    fn resend_pending(&mut self, now: Duration, out: &mut Vec<MavMessage>) {
        let Some(p) = self.pending.as_mut() else {
            return;
        };
        if now.saturating_sub(p.sent) < COMMAND_RESEND {
            return;
        }
        // Again until answered; the ready timeout bounds the wait.
        p.msg.confirmation = p.attempts;
        p.attempts = p.attempts.saturating_add(1);
        p.sent = now;
        out.push(MavMessage::COMMAND_LONG(p.msg.clone()));
    }

    fn check_ready_timeout(&mut self, now: Duration, sim: SimTime) {
        let preflight = matches!(
            self.phase,
            Phase::Connecting
                | Phase::WaitingForGps
                | Phase::Uploading
                | Phase::WaitingForPrearm
                | Phase::Arming
                | Phase::Starting
        );
        let limit = self.cfg.ready_timeout;
        if !preflight || (sim < limit && now < Duration::from_micros(limit.as_micros())) {
            return;
        }
        let fw = self.cfg.firmware.name();
        let stage = match self.phase {
            Phase::Connecting => format!("no HEARTBEAT from {fw}"),
            Phase::WaitingForGps => format!("{fw} reports no 3-D GPS fix"),
            Phase::Uploading => "the mission upload did not finish".into(),
            Phase::Starting => format!("{fw} armed but would not start the mission"),
            _ => format!("{fw} did not arm"),
        };
        let last = self
            .last_prearm_text
            .as_ref()
            .map_or(String::new(), |t| format!("; its last message: \"{t}\""));
        self.fail(format!(
            "{fw} was not ready to fly within --ready-timeout {:.0} s: {stage}{last}",
            limit.as_secs_f64()
        ));
    }

    fn start_upload(&mut self, now: Duration, out: &mut Vec<MavMessage>) {
        let Some(target) = self.target else {
            return;
        };
        self.upload_attempts += 1;
        match Upload::start(now, target, ListType::Mission, &self.upload_list(), out) {
            Ok(u) => {
                self.upload = Some(u);
                self.phase = Phase::Uploading;
            }
            Err(e) => self.fail(format!("mission upload: {e}")),
        }
    }

    fn poll_upload(&mut self, now: Duration, out: &mut Vec<MavMessage>) {
        let Some(u) = self.upload.as_mut() else {
            return;
        };
        match u.poll(now, out).clone() {
            UploadState::InProgress => {}
            UploadState::Accepted => {
                self.upload = None;
                self.events.push(GsEvent::Uploaded {
                    items: self.cfg.mission.len(),
                    attempts: self.upload_attempts,
                });
                self.phase = Phase::WaitingForPrearm;
            }
            // MAV_MISSION_ERROR is the firmware's own trouble, not the
            // list's: PX4 answers it when its dataman thread, starved on a
            // loaded machine, misses its deadline on the accelerated clock.
            UploadState::Failed(UploadError::Refused {
                result: MavMissionResult::MAV_MISSION_ERROR,
                ..
            }) if self.upload_attempts < MAX_UPLOAD_ATTEMPTS => {
                self.upload = None;
                tracing::warn!(
                    "mission upload refused with MAV_MISSION_ERROR; starting it again ({} of {MAX_UPLOAD_ATTEMPTS})",
                    self.upload_attempts + 1
                );
                self.start_upload(now, out);
            }
            UploadState::Failed(e) => {
                self.upload = None;
                let tries = if self.upload_attempts > 1 {
                    format!(" (after {} attempts)", self.upload_attempts)
                } else {
                    String::new()
                };
                self.fail(format!("mission upload: {e}{tries}"));
            }
        }
    }

    fn begin_arming(&mut self, now: Duration, out: &mut Vec<MavMessage>) {
        let Some(t) = self.target else {
            return;
        };
        self.phase = Phase::Arming;
        match self.cfg.firmware.arming_mode() {
            Some(m) if self.mode != Some(m) => {
                let msg = command(
                    MavCmd::MAV_CMD_DO_SET_MODE,
                    t,
                    [1.0, m as f32, 0.0, 0.0, 0.0, 0.0, 0.0],
                );
                self.send_command(now, msg, out);
            }
            _ => self.arm(now, out),
        }
    }

    fn check_end(&mut self, sim: SimTime) {
        self.flew |= self.armed;
        if !self.flew {
            return; // the ARM was acknowledged; the HEARTBEAT saying so is on its way
        }
        let last = self.cfg.mission.len().saturating_sub(1);
        let lands =
            self.cfg.kind.is_multirotor() && self.cfg.mission.iter().any(|i| is_landing(i.command));
        if lands && !self.armed {
            // Landed and disarmed: the mission is over if its landing item
            // was the one being flown (PX4 and ArduPilot report no "reached"
            // for the RTL or LAND they end on).
            let on_landing_item = self
                .current
                .and_then(|i| self.cfg.mission.get(i))
                .is_some_and(|it| is_landing(it.command));
            if self.complete || on_landing_item {
                if let Some(i) = self.current.filter(|_| on_landing_item) {
                    if self.reached.insert(i) {
                        self.events.push(GsEvent::ItemReached(i));
                    }
                }
                self.events.push(GsEvent::MissionFinished);
                self.phase = Phase::Finished;
            } else {
                self.fail(format!(
                    "{} disarmed at item {} of {}, before the mission was finished",
                    self.cfg.firmware.name(),
                    self.current.map_or(0, |i| i + 1),
                    last + 1
                ));
            }
            return;
        }
        if !lands && !self.armed && !self.complete {
            return self.fail(format!(
                "{} disarmed before the mission was finished",
                self.cfg.firmware.name()
            ));
        }
        if self.complete && !lands {
            match self.finished_at {
                None => {
                    self.finished_at = Some(sim);
                    self.events.push(GsEvent::MissionFinished);
                }
                Some(t) if sim.as_micros() >= t.as_micros() + HOLD_AFTER_FINISH_US => {
                    self.phase = Phase::Finished;
                }
                Some(_) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn autopilot_versions_read_as_their_firmware_writes_them() {
        let mut v = AUTOPILOT_VERSION_DATA {
            flight_sw_version: (4 << 24) | (7 << 16),
            flight_custom_version: *b"3f0c7a1e",
            ..Default::default()
        };
        assert_eq!(
            version_text("ArduPilot", &v),
            "ArduPilot 4.7.0 dev, git 3f0c7a1e"
        );
        // PX4: the hash's first eight bytes, least significant first.
        v.flight_sw_version = (1 << 24) | (18 << 16) | 192;
        v.flight_custom_version = [0x1e, 0x7a, 0x0c, 0x3f, 0xaa, 0xbb, 0xcc, 0xdd];
        assert_eq!(
            version_text("PX4", &v),
            "PX4 1.18.0 rc, git ddccbbaa3f0c7a1e"
        );
    }

    #[test]
    fn a_do_jump_targets_the_same_item_in_the_firmware_s_numbering() {
        let item = |command: u16, p1: f32| StoredItem {
            command,
            frame: mavsitl_mavlink::mission::FRAME_GLOBAL,
            params: [p1, 1.0, 0.0, 0.0],
            x: 473_544_000,
            y: 85_497_000,
            z: 0.0,
            autocontinue: 1,
        };
        // Plan: 0 waypoint, 1 waypoint, 2 jump to item 1 once.
        let mission = vec![
            item(commands::NAV_WAYPOINT, 0.0),
            item(commands::NAV_WAYPOINT, 0.0),
            item(commands::DO_JUMP, 1.0),
        ];
        let list = |firmware| {
            GroundStation::new(GroundStationConfig {
                firmware,
                kind: VehicleKind::Boat,
                mission: mission.clone(),
                home: (473_544_000, 85_497_000, 406.0),
                ready_timeout: SimTime::from_secs_f64(1.0),
            })
            .upload_list()
        };
        // PX4 numbers the plan's items from 0; ArduPilot puts home at 0.
        let px4 = list(Firmware::Px4);
        assert_eq!((px4.len(), px4[2].params[0]), (3, 1.0));
        let ap = list(Firmware::ArduRover);
        assert_eq!(
            (ap.len(), ap[3].command, ap[3].params[0]),
            (4, commands::DO_JUMP, 2.0)
        );
        assert_eq!(ap[3].params[1], 1.0, "the repeat count stays");
        assert_eq!(ap[1].params[0], 0.0, "other items keep their param 1");
    }

    fn text(id: u16, chunk_seq: u8, t: &str) -> MavMessage {
        MavMessage::STATUSTEXT(STATUSTEXT_DATA {
            severity: MavSeverity::MAV_SEVERITY_CRITICAL,
            text: t.into(),
            id,
            chunk_seq,
        })
    }

    #[test]
    fn chunked_statustext_is_reassembled() {
        let mut gs = GroundStation::new(GroundStationConfig {
            firmware: Firmware::Px4,
            kind: VehicleKind::Multirotor,
            mission: Vec::new(),
            home: (0, 0, 0.0),
            ready_timeout: SimTime::from_secs_f64(1.0),
        });
        let mut out = Vec::new();
        let hb = MavMessage::HEARTBEAT(HEARTBEAT_DATA {
            custom_mode: 0,
            mavtype: MavType::MAV_TYPE_QUADROTOR,
            autopilot: MavAutopilot::MAV_AUTOPILOT_PX4,
            base_mode: MavModeFlag::empty(),
            system_status: MavState::MAV_STATE_STANDBY,
            mavlink_version: 3,
        });
        let (t, s) = (Duration::ZERO, SimTime::ZERO);
        gs.handle(t, s, (1, 1), &hb, &mut out);
        // PX4's 53-character arming refusal, as it sends it.
        let first = "Arming denied: Resolve system health failures firs";
        assert_eq!(first.len(), 50);
        gs.handle(t, s, (1, 1), &text(7, 0, first), &mut out);
        gs.handle(t, s, (1, 1), &text(7, 1, "t"), &mut out);
        gs.handle(t, s, (1, 1), &text(0, 0, "short"), &mut out);
        let texts: Vec<String> = gs
            .take_events()
            .into_iter()
            .filter_map(|e| match e {
                GsEvent::StatusText { text, .. } => Some(text),
                _ => None,
            })
            .collect();
        assert_eq!(
            texts,
            [
                "Arming denied: Resolve system health failures first",
                "short"
            ]
        );
    }
}
