//! The MAVLink mission protocol for the three lists (mission, geofence, rally
//! points): the vehicle side here ([`MissionProtocol`], SimpleFlight's
//! endpoint) and the ground-station side in [`client`] (mavsitl driving real
//! firmware), sharing the stored-item form and the timing.
//!
//! Uploads are vehicle-driven: after MISSION_COUNT the vehicle requests each
//! item with MISSION_REQUEST_INT, re-requests after 250 ms of silence and
//! gives up after 5 s without progress (PX4's numbers). Items are collected
//! into a new list that replaces the stored one only when the last item has
//! arrived and the list is accepted; a failed, timed-out or cancelled upload
//! leaves the stored list untouched. Downloads are answered item by item, in
//! the int or float form asked for. Each stored list has an opaque id (a hash
//! of its contents) reported in MISSION_ACK, MISSION_COUNT and MISSION_CURRENT.
//!
//! Time here is the link's clock (a monotonic duration the caller supplies),
//! not sim time: retries are about the network.
// Deprecated messages (MISSION_ITEM, MISSION_REQUEST, MISSION_SET_CURRENT, PING,
// PROTOCOL_VERSION) are still sent by ground stations in use; a vehicle answers them.
#![allow(deprecated)]

use std::time::Duration;

use mavlink::dialects::common::{
    MavCmd, MavFrame, MavMessage, MavMissionResult, MavMissionType, MISSION_ACK_DATA,
    MISSION_COUNT_DATA, MISSION_ITEM_DATA, MISSION_ITEM_INT_DATA, MISSION_REQUEST_INT_DATA,
};
use num_traits::FromPrimitive;

use crate::mission::commands;
use crate::wire::MissionItemIn;

pub mod client;

/// Time between item re-requests.
pub const RETRY_INTERVAL: Duration = Duration::from_millis(250);
/// An upload without progress for this long is abandoned.
pub const TIMEOUT: Duration = Duration::from_secs(5);
/// Most items per list.
pub const MAX_ITEMS: [usize; 3] = [5000, 500, 100];

/// Which list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListType {
    /// The mission.
    Mission = 0,
    /// The geofence.
    Fence = 1,
    /// Rally points.
    Rally = 2,
}

impl ListType {
    /// From MAV_MISSION_TYPE (255 = all is handled by the caller).
    pub fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(ListType::Mission),
            1 => Some(ListType::Fence),
            2 => Some(ListType::Rally),
            _ => None,
        }
    }

    /// As MAV_MISSION_TYPE.
    pub fn mav(self) -> MavMissionType {
        match self {
            ListType::Mission => MavMissionType::MAV_MISSION_TYPE_MISSION,
            ListType::Fence => MavMissionType::MAV_MISSION_TYPE_FENCE,
            ListType::Rally => MavMissionType::MAV_MISSION_TYPE_RALLY,
        }
    }

    fn index(self) -> usize {
        self as usize
    }

    /// Name for messages.
    pub fn name(self) -> &'static str {
        match self {
            ListType::Mission => "mission",
            ListType::Fence => "geofence",
            ListType::Rally => "rally points",
        }
    }
}

/// A stored item in the int form (x, y in degE7 for global frames).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StoredItem {
    /// MAV_CMD.
    pub command: u16,
    /// MAV_FRAME.
    pub frame: u8,
    /// param1..param4.
    pub params: [f32; 4],
    /// x (degE7 for global frames).
    pub x: i32,
    /// y.
    pub y: i32,
    /// z.
    pub z: f32,
    /// autocontinue.
    pub autocontinue: u8,
}

pub use crate::mission::is_global_frame;

impl StoredItem {
    fn from_wire(it: &MissionItemIn) -> Self {
        let (x, y) = if it.is_int {
            (it.x as i32, it.y as i32)
        } else if is_global_frame(it.frame) {
            (
                (it.x * 1e7).round().clamp(i32::MIN as f64, i32::MAX as f64) as i32,
                (it.y * 1e7).round().clamp(i32::MIN as f64, i32::MAX as f64) as i32,
            )
        } else {
            (
                it.x.round().clamp(i32::MIN as f64, i32::MAX as f64) as i32,
                it.y.round().clamp(i32::MIN as f64, i32::MAX as f64) as i32,
            )
        };
        StoredItem {
            command: it.command,
            frame: it.frame,
            params: it.params,
            x,
            y,
            z: it.z,
            autocontinue: it.autocontinue,
        }
    }

    /// As the mission model's item (degrees; int-frame variants folded into
    /// their float equivalents).
    pub fn to_mission_item(&self) -> crate::mission::MissionItem {
        let global = is_global_frame(self.frame);
        let scale = if global { 1e-7 } else { 1.0 };
        let frame = match self.frame {
            5 => 0,
            6 => 3,
            11 => 10,
            f => f,
        };
        crate::mission::MissionItem {
            command: self.command,
            frame,
            params: self.params.map(|p| p as f64),
            x: self.x as f64 * scale,
            y: self.y as f64 * scale,
            z: self.z as f64,
            autocontinue: self.autocontinue != 0,
        }
    }

    /// From the mission model's item (a .plan loaded at start).
    pub fn from_mission_item(m: &crate::mission::MissionItem) -> Self {
        let global = m.is_global();
        let conv = |v: f64| {
            let v = if global { v * 1e7 } else { v };
            if v.is_finite() {
                v.round().clamp(i32::MIN as f64, i32::MAX as f64) as i32
            } else {
                0
            }
        };
        StoredItem {
            command: m.command,
            frame: m.frame,
            params: m.params.map(|p| p as f32),
            x: conv(m.x),
            y: conv(m.y),
            z: m.z as f32,
            autocontinue: m.autocontinue as u8,
        }
    }
}

/// The three stored lists.
#[derive(Debug, Clone, Default)]
pub struct Stores {
    lists: [Vec<StoredItem>; 3],
    ids: [u32; 3],
}

/// FNV-1a over the items: the list's opaque id (never 0 for a non-empty list).
fn opaque_id(items: &[StoredItem]) -> u32 {
    if items.is_empty() {
        return 0;
    }
    let mut h: u32 = 0x811c_9dc5;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            h ^= *b as u32;
            h = h.wrapping_mul(0x0100_0193);
        }
    };
    for it in items {
        eat(&it.command.to_le_bytes());
        eat(&[it.frame, it.autocontinue]);
        for p in it.params {
            eat(&p.to_bits().to_le_bytes());
        }
        eat(&it.x.to_le_bytes());
        eat(&it.y.to_le_bytes());
        eat(&it.z.to_bits().to_le_bytes());
    }
    h.max(1)
}

impl Stores {
    /// A stored list.
    pub fn list(&self, t: ListType) -> &[StoredItem] {
        &self.lists[t.index()]
    }

    /// A list's opaque id.
    pub fn id(&self, t: ListType) -> u32 {
        self.ids[t.index()]
    }

    /// Replaces a list.
    pub fn set(&mut self, t: ListType, items: Vec<StoredItem>) {
        self.ids[t.index()] = opaque_id(&items);
        self.lists[t.index()] = items;
    }
}

/// Checks one item can be stored in list `t` (known command and frame, the
/// right kind of item for the list).
fn check_item(t: ListType, it: &MissionItemIn) -> Result<(), (MavMissionResult, String)> {
    if MavCmd::from_u16(it.command).is_none() {
        return Err((
            MavMissionResult::MAV_MISSION_UNSUPPORTED,
            format!("item {}: unknown command {}", it.seq, it.command),
        ));
    }
    if MavFrame::from_u8(it.frame).is_none() {
        return Err((
            MavMissionResult::MAV_MISSION_UNSUPPORTED_FRAME,
            format!("item {}: unknown frame {}", it.seq, it.frame),
        ));
    }
    let ok = match t {
        ListType::Mission => true,
        ListType::Fence => matches!(
            it.command,
            commands::NAV_FENCE_RETURN_POINT
                | commands::NAV_FENCE_POLYGON_VERTEX_INCLUSION
                | commands::NAV_FENCE_POLYGON_VERTEX_EXCLUSION
                | commands::NAV_FENCE_CIRCLE_INCLUSION
                | commands::NAV_FENCE_CIRCLE_EXCLUSION
        ),
        ListType::Rally => it.command == commands::NAV_RALLY_POINT,
    };
    if !ok {
        return Err((
            MavMissionResult::MAV_MISSION_UNSUPPORTED,
            format!(
                "item {}: {} does not belong in the {}",
                it.seq,
                commands::command_name(it.command),
                t.name()
            ),
        ));
    }
    if is_global_frame(it.frame) && it.is_int {
        let (lat, lon) = (it.x * 1e-7, it.y * 1e-7);
        if !(-90.0..=90.0).contains(&lat) {
            return Err((
                MavMissionResult::MAV_MISSION_INVALID_PARAM5_X,
                format!("item {}: latitude {lat} out of range", it.seq),
            ));
        }
        if !(-180.0..=180.0).contains(&lon) {
            return Err((
                MavMissionResult::MAV_MISSION_INVALID_PARAM6_Y,
                format!("item {}: longitude {lon} out of range", it.seq),
            ));
        }
    }
    Ok(())
}

#[derive(Debug, Clone)]
struct Upload {
    list: ListType,
    count: u16,
    items: Vec<StoredItem>,
    peer: (u8, u8),
    last_request: Duration,
    last_progress: Duration,
}

/// A MISSION_REQUEST(_INT): which item of which list, in which form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ItemRequest {
    /// Item.
    pub seq: u16,
    /// MAV_MISSION_TYPE.
    pub list_type: u8,
    /// Answer with MISSION_ITEM_INT (else MISSION_ITEM).
    pub int: bool,
}

/// What the caller must do after an event.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Nothing beyond the messages.
    None,
    /// A list was replaced (already stored): apply it.
    Stored(ListType),
    /// A list was refused with this message for the operator.
    Refused(String),
    /// The upload timed out.
    TimedOut(ListType),
}

/// The mission protocol's state.
#[derive(Debug, Clone)]
pub struct MissionProtocol {
    system_id: u8,
    component_id: u8,
    upload: Option<Upload>,
    /// How the last upload ended: (peer, list, result, opaque id), repeated to
    /// a GCS that lost the final ACK and sends its last item again.
    last_result: Option<((u8, u8), ListType, MavMissionResult, u32)>,
}

impl MissionProtocol {
    /// For a vehicle with these ids.
    pub fn new(system_id: u8, component_id: u8) -> Self {
        MissionProtocol {
            system_id,
            component_id,
            upload: None,
            last_result: None,
        }
    }

    /// Whether an upload is in progress.
    pub fn uploading(&self) -> bool {
        self.upload.is_some()
    }

    fn ack(
        &self,
        peer: (u8, u8),
        list: MavMissionType,
        result: MavMissionResult,
        id: u32,
    ) -> MavMessage {
        MavMessage::MISSION_ACK(MISSION_ACK_DATA {
            target_system: peer.0,
            target_component: peer.1,
            mavtype: result,
            mission_type: list,
            opaque_id: id,
        })
    }

    fn request(u: &Upload) -> MavMessage {
        MavMessage::MISSION_REQUEST_INT(MISSION_REQUEST_INT_DATA {
            seq: u.items.len() as u16,
            target_system: u.peer.0,
            target_component: u.peer.1,
            mission_type: u.list.mav(),
        })
    }

    /// MISSION_COUNT from `peer`: starts (or restarts) an upload.
    pub fn on_count(
        &mut self,
        now: Duration,
        peer: (u8, u8),
        count: u16,
        list_type: u8,
        stores: &mut Stores,
        out: &mut Vec<MavMessage>,
    ) -> Outcome {
        let Some(list) = ListType::from_u8(list_type) else {
            out.push(self.ack(
                peer,
                MavMissionType::MAV_MISSION_TYPE_MISSION,
                MavMissionResult::MAV_MISSION_UNSUPPORTED,
                0,
            ));
            return Outcome::Refused(format!("mission type {list_type} is not supported"));
        };
        self.upload = None;
        self.last_result = None;
        if count == 0 {
            stores.set(list, Vec::new());
            out.push(self.ack(peer, list.mav(), MavMissionResult::MAV_MISSION_ACCEPTED, 0));
            return Outcome::Stored(list);
        }
        if count as usize > MAX_ITEMS[list.index()] {
            out.push(self.ack(peer, list.mav(), MavMissionResult::MAV_MISSION_NO_SPACE, 0));
            return Outcome::Refused(format!(
                "{} of {count} items: at most {} fit",
                list.name(),
                MAX_ITEMS[list.index()]
            ));
        }
        let u = Upload {
            list,
            count,
            items: Vec::with_capacity(count as usize),
            peer,
            last_request: now,
            last_progress: now,
        };
        out.push(Self::request(&u));
        self.upload = Some(u);
        Outcome::None
    }

    /// MISSION_ITEM(_INT). `accept` checks a complete mission list (the
    /// autopilot can fly it) and returns the operator message on refusal.
    pub fn on_item(
        &mut self,
        now: Duration,
        peer: (u8, u8),
        it: &MissionItemIn,
        stores: &mut Stores,
        accept: impl FnOnce(ListType, &[StoredItem]) -> Result<(), String>,
        out: &mut Vec<MavMessage>,
    ) -> Outcome {
        let Some(u) = self.upload.as_mut() else {
            // Not uploading: a late duplicate of the last item after the final
            // ACK was lost. Repeat that ACK, whatever it said.
            if let Some((p, list, result, id)) = self.last_result {
                if p == peer && it.mission_type == list as u8 {
                    out.push(self.ack(peer, list.mav(), result, id));
                }
            }
            return Outcome::None;
        };
        if peer != u.peer || it.mission_type != u.list as u8 {
            return Outcome::None;
        }
        let expected = u.items.len() as u16;
        if it.seq != expected {
            // Duplicate or out of order: ask again for the one we need.
            let req = Self::request(u);
            if let Some(u) = self.upload.as_mut() {
                u.last_request = now;
            }
            out.push(req);
            return Outcome::None;
        }
        let list = u.list;
        if let Err((code, msg)) = check_item(list, it) {
            self.upload = None;
            self.last_result = Some((peer, list, code, 0));
            out.push(self.ack(peer, list.mav(), code, 0));
            return Outcome::Refused(format!("{} upload refused: {msg}", list.name()));
        }
        u.items.push(StoredItem::from_wire(it));
        u.last_progress = now;
        u.last_request = now;
        if u.items.len() < u.count as usize {
            let req = Self::request(u);
            out.push(req);
            return Outcome::None;
        }
        let Some(done) = self.upload.take() else {
            return Outcome::None;
        };
        match accept(list, &done.items) {
            Ok(()) => {
                stores.set(list, done.items);
                self.last_result = Some((
                    peer,
                    list,
                    MavMissionResult::MAV_MISSION_ACCEPTED,
                    stores.id(list),
                ));
                out.push(self.ack(
                    peer,
                    list.mav(),
                    MavMissionResult::MAV_MISSION_ACCEPTED,
                    stores.id(list),
                ));
                Outcome::Stored(list)
            }
            Err(msg) => {
                self.last_result = Some((peer, list, MavMissionResult::MAV_MISSION_INVALID, 0));
                out.push(self.ack(peer, list.mav(), MavMissionResult::MAV_MISSION_INVALID, 0));
                Outcome::Refused(format!("{} upload refused: {msg}", list.name()))
            }
        }
    }

    /// MISSION_ACK from the GCS: during an upload it cancels it.
    pub fn on_ack(&mut self, peer: (u8, u8)) -> Outcome {
        match &self.upload {
            Some(u) if u.peer == peer => {
                let list = u.list;
                self.upload = None;
                Outcome::Refused(format!("{} upload cancelled", list.name()))
            }
            _ => Outcome::None,
        }
    }

    /// Re-requests and time-outs.
    pub fn poll(&mut self, now: Duration, out: &mut Vec<MavMessage>) -> Outcome {
        let Some(u) = self.upload.as_ref() else {
            return Outcome::None;
        };
        if now.saturating_sub(u.last_progress) >= TIMEOUT {
            let list = u.list;
            let peer = u.peer;
            self.upload = None;
            out.push(self.ack(
                peer,
                list.mav(),
                MavMissionResult::MAV_MISSION_OPERATION_CANCELLED,
                0,
            ));
            return Outcome::TimedOut(list);
        }
        if now.saturating_sub(u.last_request) >= RETRY_INTERVAL {
            let req = Self::request(u);
            out.push(req);
            if let Some(u) = self.upload.as_mut() {
                u.last_request = now;
            }
        }
        Outcome::None
    }

    /// MISSION_REQUEST_LIST: the count of a stored list.
    pub fn on_request_list(
        &self,
        peer: (u8, u8),
        list_type: u8,
        stores: &Stores,
        out: &mut Vec<MavMessage>,
    ) {
        match ListType::from_u8(list_type) {
            Some(list) => out.push(MavMessage::MISSION_COUNT(MISSION_COUNT_DATA {
                count: stores.list(list).len() as u16,
                target_system: peer.0,
                target_component: peer.1,
                mission_type: list.mav(),
                opaque_id: stores.id(list),
            })),
            None => out.push(self.ack(
                peer,
                MavMissionType::MAV_MISSION_TYPE_MISSION,
                MavMissionResult::MAV_MISSION_UNSUPPORTED,
                0,
            )),
        }
    }

    /// MISSION_REQUEST(_INT): one stored item, int or float form.
    pub fn on_request_item(
        &self,
        peer: (u8, u8),
        req: ItemRequest,
        stores: &Stores,
        current: usize,
        out: &mut Vec<MavMessage>,
    ) {
        let ItemRequest {
            seq,
            list_type,
            int,
        } = req;
        let Some(list) = ListType::from_u8(list_type) else {
            return;
        };
        let Some(it) = stores.list(list).get(seq as usize) else {
            out.push(self.ack(
                peer,
                list.mav(),
                MavMissionResult::MAV_MISSION_INVALID_SEQUENCE,
                0,
            ));
            return;
        };
        let command = MavCmd::from_u16(it.command).unwrap_or(MavCmd::DEFAULT);
        let frame = MavFrame::from_u8(it.frame).unwrap_or(MavFrame::DEFAULT);
        let is_current = (list == ListType::Mission && seq as usize == current) as u8;
        let [p1, p2, p3, p4] = it.params;
        if int {
            out.push(MavMessage::MISSION_ITEM_INT(MISSION_ITEM_INT_DATA {
                param1: p1,
                param2: p2,
                param3: p3,
                param4: p4,
                x: it.x,
                y: it.y,
                z: it.z,
                seq,
                command,
                target_system: peer.0,
                target_component: peer.1,
                frame,
                current: is_current,
                autocontinue: it.autocontinue,
                mission_type: list.mav(),
            }));
        } else {
            let scale = if is_global_frame(it.frame) { 1e-7 } else { 1.0 };
            out.push(MavMessage::MISSION_ITEM(MISSION_ITEM_DATA {
                param1: p1,
                param2: p2,
                param3: p3,
                param4: p4,
                x: (it.x as f64 * scale) as f32,
                y: (it.y as f64 * scale) as f32,
                z: it.z,
                seq,
                command,
                target_system: peer.0,
                target_component: peer.1,
                frame,
                current: is_current,
                autocontinue: it.autocontinue,
                mission_type: list.mav(),
            }));
        }
    }

    /// Our ids (for the messages' source).
    pub fn ids(&self) -> (u8, u8) {
        (self.system_id, self.component_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GCS: (u8, u8) = (255, 190);

    fn item(seq: u16, lat: f64) -> MissionItemIn {
        MissionItemIn {
            seq,
            command: 16,
            frame: 6,
            params: [0.0; 4],
            x: (lat * 1e7).round(),
            y: 85_000_000.0,
            z: 10.0,
            current: (seq == 0) as u8,
            autocontinue: 1,
            mission_type: 0,
            target_system: 1,
            target_component: 1,
            is_int: true,
        }
    }

    fn requested(out: &[MavMessage]) -> Vec<u16> {
        out.iter()
            .filter_map(|m| match m {
                MavMessage::MISSION_REQUEST_INT(r) => Some(r.seq),
                _ => None,
            })
            .collect()
    }

    fn acks(out: &[MavMessage]) -> Vec<MavMissionResult> {
        out.iter()
            .filter_map(|m| match m {
                MavMessage::MISSION_ACK(a) => Some(a.mavtype),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn upload_requests_each_item_and_swaps_on_success() {
        let mut p = MissionProtocol::new(1, 1);
        let mut s = Stores::default();
        let mut out = Vec::new();
        let t = Duration::ZERO;
        p.on_count(t, GCS, 3, 0, &mut s, &mut out);
        for i in 0..3 {
            let o = p.on_item(t, GCS, &item(i, 47.0), &mut s, |_, _| Ok(()), &mut out);
            assert_eq!(o == Outcome::Stored(ListType::Mission), i == 2);
        }
        assert_eq!(requested(&out), vec![0, 1, 2]);
        assert_eq!(acks(&out), vec![MavMissionResult::MAV_MISSION_ACCEPTED]);
        assert_eq!(s.list(ListType::Mission).len(), 3);
        assert_ne!(s.id(ListType::Mission), 0);
    }

    /// An item out of sequence — one ahead, or an old one again — is not
    /// stored: the vehicle asks again for the one it needs, and the list
    /// ends up exactly as sent, each item where its seq says.
    #[test]
    fn an_out_of_order_item_is_asked_for_again_not_stored() {
        let mut p = MissionProtocol::new(1, 1);
        let mut s = Stores::default();
        let mut out = Vec::new();
        let t = Duration::ZERO;
        let ok = |_: ListType, _: &[StoredItem]| Ok(());
        p.on_count(t, GCS, 3, 0, &mut s, &mut out);
        assert_eq!(
            p.on_item(t, GCS, &item(0, 47.0), &mut s, ok, &mut out),
            Outcome::None
        );
        out.clear();
        // Item 2 before item 1: refused by a request for 1.
        assert_eq!(
            p.on_item(t, GCS, &item(2, 47.2), &mut s, ok, &mut out),
            Outcome::None
        );
        assert_eq!(requested(&out), vec![1]);
        assert!(acks(&out).is_empty());
        // Item 0 again: the same.
        out.clear();
        assert_eq!(
            p.on_item(t, GCS, &item(0, 47.9), &mut s, ok, &mut out),
            Outcome::None
        );
        assert_eq!(requested(&out), vec![1]);
        assert!(p.uploading());
        for (i, lat) in [(1, 47.1), (2, 47.2)] {
            p.on_item(t, GCS, &item(i, lat), &mut s, ok, &mut out);
        }
        let lats: Vec<i32> = s.list(ListType::Mission).iter().map(|i| i.x).collect();
        assert_eq!(lats, vec![470_000_000, 471_000_000, 472_000_000]);
    }

    #[test]
    fn timeout_and_cancel_leave_the_stored_list_intact() {
        let mut p = MissionProtocol::new(1, 1);
        let mut s = Stores::default();
        s.set(
            ListType::Mission,
            vec![StoredItem::from_wire(&item(0, 1.0))],
        );
        let before = s.list(ListType::Mission).to_vec();
        let mut out = Vec::new();
        p.on_count(Duration::ZERO, GCS, 2, 0, &mut s, &mut out);
        p.on_item(
            Duration::ZERO,
            GCS,
            &item(0, 47.0),
            &mut s,
            |_, _| Ok(()),
            &mut out,
        );
        // Re-requests every 250 ms, then gives up at 5 s.
        out.clear();
        let mut outcome = Outcome::None;
        for ms in (0..=5000).step_by(10) {
            outcome = p.poll(Duration::from_millis(ms), &mut out);
            if outcome != Outcome::None {
                break;
            }
        }
        assert_eq!(outcome, Outcome::TimedOut(ListType::Mission));
        let n = requested(&out).len();
        assert!((19..=20).contains(&n), "{n} re-requests");
        assert_eq!(
            acks(&out),
            vec![MavMissionResult::MAV_MISSION_OPERATION_CANCELLED]
        );
        assert_eq!(s.list(ListType::Mission), &before[..]);
        // Cancel by ACK.
        p.on_count(Duration::ZERO, GCS, 2, 0, &mut s, &mut out);
        p.on_item(
            Duration::ZERO,
            GCS,
            &item(0, 47.0),
            &mut s,
            |_, _| Ok(()),
            &mut out,
        );
        assert!(matches!(p.on_ack(GCS), Outcome::Refused(_)));
        assert!(!p.uploading());
        assert_eq!(s.list(ListType::Mission), &before[..]);
    }

    #[test]
    fn refused_list_and_bad_items_get_error_acks() {
        let mut p = MissionProtocol::new(1, 1);
        let mut s = Stores::default();
        let mut out = Vec::new();
        p.on_count(Duration::ZERO, GCS, 1, 0, &mut s, &mut out);
        let mut bad = item(0, 47.0);
        bad.command = 54321;
        p.on_item(Duration::ZERO, GCS, &bad, &mut s, |_, _| Ok(()), &mut out);
        p.on_count(Duration::ZERO, GCS, 1, 0, &mut s, &mut out);
        let mut bad = item(0, 47.0);
        bad.x = 95.0e7;
        p.on_item(Duration::ZERO, GCS, &bad, &mut s, |_, _| Ok(()), &mut out);
        p.on_count(Duration::ZERO, GCS, 1, 0, &mut s, &mut out);
        p.on_item(
            Duration::ZERO,
            GCS,
            &item(0, 47.0),
            &mut s,
            |_, _| Err("no".into()),
            &mut out,
        );
        p.on_count(Duration::ZERO, GCS, 1, 2, &mut s, &mut out);
        let mut wp_as_rally = item(0, 47.0);
        wp_as_rally.mission_type = 2;
        p.on_item(
            Duration::ZERO,
            GCS,
            &wp_as_rally,
            &mut s,
            |_, _| Ok(()),
            &mut out,
        );
        p.on_count(Duration::ZERO, GCS, 60000, 0, &mut s, &mut out);
        assert_eq!(
            acks(&out),
            vec![
                MavMissionResult::MAV_MISSION_UNSUPPORTED,
                MavMissionResult::MAV_MISSION_INVALID_PARAM5_X,
                MavMissionResult::MAV_MISSION_INVALID,
                MavMissionResult::MAV_MISSION_UNSUPPORTED,
                MavMissionResult::MAV_MISSION_NO_SPACE,
            ]
        );
        assert!(s.list(ListType::Mission).is_empty());
    }

    #[test]
    fn a_late_duplicate_item_gets_the_final_ack_again() {
        let mut p = MissionProtocol::new(1, 1);
        let mut s = Stores::default();
        let mut out = Vec::new();
        p.on_count(Duration::ZERO, GCS, 1, 2, &mut s, &mut out);
        let mut wp = item(0, 47.0);
        wp.mission_type = 2;
        p.on_item(Duration::ZERO, GCS, &wp, &mut s, |_, _| Ok(()), &mut out);
        // The refusal was lost; the GCS sends the item again.
        p.on_item(Duration::ZERO, GCS, &wp, &mut s, |_, _| Ok(()), &mut out);
        assert_eq!(
            acks(&out),
            vec![
                MavMissionResult::MAV_MISSION_UNSUPPORTED,
                MavMissionResult::MAV_MISSION_UNSUPPORTED
            ]
        );
        // After a success the repeat says accepted.
        out.clear();
        p.on_count(Duration::ZERO, GCS, 1, 0, &mut s, &mut out);
        p.on_item(
            Duration::ZERO,
            GCS,
            &item(0, 47.0),
            &mut s,
            |_, _| Ok(()),
            &mut out,
        );
        p.on_item(
            Duration::ZERO,
            GCS,
            &item(0, 47.0),
            &mut s,
            |_, _| Ok(()),
            &mut out,
        );
        assert_eq!(
            acks(&out),
            vec![
                MavMissionResult::MAV_MISSION_ACCEPTED,
                MavMissionResult::MAV_MISSION_ACCEPTED
            ]
        );
    }

    #[test]
    fn float_items_are_stored_as_int_and_served_both_ways() {
        let mut p = MissionProtocol::new(1, 1);
        let mut s = Stores::default();
        let mut out = Vec::new();
        p.on_count(Duration::ZERO, GCS, 1, 0, &mut s, &mut out);
        let mut f = item(0, 0.0);
        f.is_int = false;
        f.x = 47.397_742_f32 as f64;
        f.y = 8.545_594_f32 as f64;
        f.frame = 3;
        p.on_item(Duration::ZERO, GCS, &f, &mut s, |_, _| Ok(()), &mut out);
        let st = s.list(ListType::Mission)[0];
        assert_eq!(st.x, (47.397_742_f32 as f64 * 1e7).round() as i32);
        out.clear();
        p.on_request_item(
            GCS,
            ItemRequest {
                seq: 0,
                list_type: 0,
                int: false,
            },
            &s,
            0,
            &mut out,
        );
        match &out[0] {
            MavMessage::MISSION_ITEM(m) => {
                assert!((m.x - 47.397_742).abs() < 1e-5);
                assert_eq!(m.current, 1);
            }
            other => panic!("{other:?}"),
        }
        p.on_request_item(
            GCS,
            ItemRequest {
                seq: 5,
                list_type: 0,
                int: true,
            },
            &s,
            0,
            &mut out,
        );
        assert_eq!(
            acks(&out),
            vec![MavMissionResult::MAV_MISSION_INVALID_SEQUENCE]
        );
    }

    #[test]
    fn list_types_are_mav_mission_types() {
        let all = [ListType::Mission, ListType::Fence, ListType::Rally];
        assert_eq!(all.map(Some), [0, 1, 2].map(ListType::from_u8));
        assert_eq!(ListType::from_u8(3), None);
        assert_eq!(
            all.map(ListType::mav),
            [
                MavMissionType::MAV_MISSION_TYPE_MISSION,
                MavMissionType::MAV_MISSION_TYPE_FENCE,
                MavMissionType::MAV_MISSION_TYPE_RALLY
            ]
        );
        assert_eq!(
            all.map(ListType::name),
            ["mission", "geofence", "rally points"]
        );
    }

    /// Each list is stored and identified on its own.
    #[test]
    fn each_list_keeps_its_own_items_and_id() {
        let mut s = Stores::default();
        let fence = vec![StoredItem::from_wire(&item(0, 47.0))];
        let rally = vec![StoredItem::from_wire(&item(0, 46.0)); 2];
        s.set(ListType::Fence, fence.clone());
        s.set(ListType::Rally, rally.clone());
        assert_eq!(s.list(ListType::Mission), &[]);
        assert_eq!(s.list(ListType::Fence), &fence[..]);
        assert_eq!(s.list(ListType::Rally), &rally[..]);
        assert_eq!(s.id(ListType::Mission), 0);
        assert_eq!(s.id(ListType::Fence), opaque_id(&fence));
        assert_eq!(s.id(ListType::Rally), opaque_id(&rally));
        assert_ne!(s.id(ListType::Fence), s.id(ListType::Rally));
    }

    /// FNV-1a, 32 bits, as published (offset basis 0x811c9dc5, prime
    /// 0x01000193).
    fn fnv1a(bytes: &[u8]) -> u32 {
        bytes.iter().fold(0x811c_9dc5, |h: u32, b| {
            (h ^ u32::from(*b)).wrapping_mul(0x0100_0193)
        })
    }

    /// The list's id is FNV-1a over each item's command, frame,
    /// autocontinue, params, x, y and z, little-endian; checked against
    /// FNV-1a's published test vectors first.
    #[test]
    fn a_lists_id_is_fnv1a_over_its_items() {
        assert_eq!(fnv1a(b""), 0x811c_9dc5);
        assert_eq!(fnv1a(b"a"), 0xe40c_292c);
        assert_eq!(fnv1a(b"foobar"), 0xbf9c_f968);
        let items = [item(0, 47.3977), item(1, 47.3986)].map(|i| StoredItem {
            params: [1.5, 0.0, -2.0, 0.25],
            ..StoredItem::from_wire(&i)
        });
        let mut bytes = Vec::new();
        for it in &items {
            bytes.extend(it.command.to_le_bytes());
            bytes.extend([it.frame, it.autocontinue]);
            for p in it.params {
                bytes.extend(p.to_bits().to_le_bytes());
            }
            bytes.extend(it.x.to_le_bytes());
            bytes.extend(it.y.to_le_bytes());
            bytes.extend(it.z.to_bits().to_le_bytes());
        }
        assert_eq!(opaque_id(&items), fnv1a(&bytes));
        assert_eq!(opaque_id(&[]), 0);
    }

    /// Float items in a global frame are stored in degE7, others rounded
    /// as they are; back as the model's item, the _INT frames fold into
    /// their float forms and degE7 into degrees.
    #[test]
    fn items_convert_between_the_wire_the_store_and_the_model() {
        let float = |frame: u8, x: f64, y: f64| MissionItemIn {
            frame,
            x,
            y,
            is_int: false,
            autocontinue: 0,
            ..item(0, 0.0)
        };
        let g = StoredItem::from_wire(&float(3, 47.397_742_1, -8.545_594_9));
        assert_eq!((g.x, g.y, g.autocontinue), (473_977_421, -85_455_949, 0));
        let l = StoredItem::from_wire(&float(1, 12.6, -3.4));
        assert_eq!((l.x, l.y), (13, -3));
        let m = StoredItem::from_wire(&item(0, 47.3977)).to_mission_item();
        assert_eq!((m.frame, m.autocontinue), (3, true));
        assert!(
            (m.x - 47.3977).abs() < 1e-12 && (m.y - 8.5).abs() < 1e-12,
            "{m:?}"
        );
        let m = g.to_mission_item();
        assert_eq!((m.frame, m.autocontinue), (3, false));
        assert_eq!(StoredItem { frame: 5, ..g }.to_mission_item().frame, 0);
        assert_eq!(StoredItem { frame: 11, ..g }.to_mission_item().frame, 10);
        let local = l.to_mission_item();
        assert_eq!((local.x, local.y, local.frame), (13.0, -3.0, 1));
        let back = StoredItem::from_mission_item(&crate::mission::MissionItem::waypoint(
            47.397_742_1,
            -8.545_594_9,
            10.0,
        ));
        assert_eq!(
            (back.x, back.y, back.z, back.autocontinue),
            (473_977_421, -85_455_949, 10.0, 1)
        );
        let here = StoredItem::from_mission_item(&crate::mission::MissionItem {
            frame: 2,
            ..crate::mission::MissionItem::waypoint(f64::NAN, 12.6, 0.0)
        });
        assert_eq!((here.x, here.y), (0, 13));
    }

    /// The largest list that fits is taken (its first item asked for); one
    /// more is refused for want of space.
    #[test]
    fn a_list_of_the_largest_size_fits_and_one_more_does_not() {
        for (t, n) in [(ListType::Mission, 5000u16), (ListType::Rally, 100)] {
            let mut p = MissionProtocol::new(1, 1);
            let (mut s, mut out) = (Stores::default(), Vec::new());
            let o = p.on_count(Duration::ZERO, GCS, n, t as u8, &mut s, &mut out);
            assert_eq!((o, requested(&out)), (Outcome::None, vec![0]));
            out.clear();
            let o = p.on_count(Duration::ZERO, GCS, n + 1, t as u8, &mut s, &mut out);
            assert!(matches!(o, Outcome::Refused(_)), "{o:?}");
            assert_eq!(acks(&out), [MavMissionResult::MAV_MISSION_NO_SPACE]);
        }
    }

    /// Latitude and longitude are checked on items in a global frame in
    /// degE7; other items' x and y are not positions.
    #[test]
    fn only_global_int_items_are_range_checked() {
        let upload = |it: MissionItemIn| {
            let mut p = MissionProtocol::new(1, 1);
            let (mut s, mut out) = (Stores::default(), Vec::new());
            p.on_count(Duration::ZERO, GCS, 1, 0, &mut s, &mut out);
            out.clear();
            p.on_item(Duration::ZERO, GCS, &it, &mut s, |_, _| Ok(()), &mut out);
            acks(&out)
        };
        let accepted = vec![MavMissionResult::MAV_MISSION_ACCEPTED];
        assert_eq!(upload(item(0, 89.9)), accepted);
        assert_eq!(
            upload(item(0, 90.1)),
            [MavMissionResult::MAV_MISSION_INVALID_PARAM5_X]
        );
        let east = |y: f64| MissionItemIn { y, ..item(0, 47.0) };
        assert_eq!(upload(east(1_800_000_000.0)), accepted);
        assert_eq!(
            upload(east(1_800_000_001.0)),
            [MavMissionResult::MAV_MISSION_INVALID_PARAM6_Y]
        );
        // A mission-frame item (DO_CHANGE_SPEED) and a float global one:
        // their x of 95e7 is no latitude of 95°.
        let speed = MissionItemIn {
            command: 178,
            frame: 2,
            x: 95e7,
            ..item(0, 0.0)
        };
        assert_eq!(upload(speed), accepted);
        let float = MissionItemIn {
            frame: 3,
            is_int: false,
            x: 47.0,
            y: 8.0,
            ..item(0, 0.0)
        };
        assert_eq!(upload(float), accepted);
    }

    /// During an upload, items and an ACK from another ground station, or
    /// for another list, are ignored: the upload goes on with its own
    /// peer. After it, a duplicate last item from another peer is not
    /// answered with the final ACK.
    #[test]
    fn another_peer_neither_feeds_nor_cancels_an_upload() {
        let other = (254, 190);
        let mut p = MissionProtocol::new(1, 1);
        let (mut s, mut out) = (Stores::default(), Vec::new());
        let t = Duration::ZERO;
        p.on_count(t, GCS, 2, 0, &mut s, &mut out);
        out.clear();
        assert_eq!(
            p.on_item(t, other, &item(0, 47.0), &mut s, |_, _| Ok(()), &mut out),
            Outcome::None
        );
        let fence = MissionItemIn {
            mission_type: 1,
            ..item(0, 47.0)
        };
        assert_eq!(
            p.on_item(t, GCS, &fence, &mut s, |_, _| Ok(()), &mut out),
            Outcome::None
        );
        assert!(out.is_empty(), "{out:?}");
        assert_eq!(p.on_ack(other), Outcome::None);
        p.on_item(t, GCS, &item(0, 47.0), &mut s, |_, _| Ok(()), &mut out);
        let o = p.on_item(t, GCS, &item(1, 47.1), &mut s, |_, _| Ok(()), &mut out);
        assert_eq!(o, Outcome::Stored(ListType::Mission));
        assert_eq!(s.list(ListType::Mission)[1].x, 471_000_000);
        out.clear();
        p.on_item(t, other, &item(1, 47.1), &mut s, |_, _| Ok(()), &mut out);
        p.on_item(t, GCS, &fence, &mut s, |_, _| Ok(()), &mut out);
        assert!(out.is_empty(), "{out:?}");
        p.on_item(t, GCS, &item(1, 47.1), &mut s, |_, _| Ok(()), &mut out);
        assert_eq!(acks(&out), [MavMissionResult::MAV_MISSION_ACCEPTED]);
        // The upload's own peer cancels it.
        p.on_count(t, GCS, 2, 0, &mut s, &mut out);
        assert!(matches!(p.on_ack(GCS), Outcome::Refused(_)));
    }

    /// A download: the count and id of the list asked for, then each item
    /// in the form asked for — degE7 as MISSION_ITEM_INT, degrees as
    /// MISSION_ITEM (local x, y as they are) — the current one marked in
    /// the mission only; past the end, an invalid sequence.
    #[test]
    fn a_download_gives_the_count_then_each_item_in_the_form_asked() {
        let p = MissionProtocol::new(7, 3);
        assert_eq!(p.ids(), (7, 3));
        let mut s = Stores::default();
        let local = MissionItemIn {
            frame: 1,
            x: 12.0,
            y: -3.0,
            ..item(1, 0.0)
        };
        let items = vec![
            StoredItem::from_wire(&item(0, 47.25)),
            StoredItem::from_wire(&local),
        ];
        s.set(ListType::Mission, items.clone());
        s.set(ListType::Rally, vec![items[0]; 2]);
        let mut out = Vec::new();
        p.on_request_list(GCS, 0, &s, &mut out);
        p.on_request_list(GCS, 2, &s, &mut out);
        p.on_request_list(GCS, 9, &s, &mut out);
        let counts: Vec<(u16, u32, (u8, u8))> = out
            .iter()
            .filter_map(|m| match m {
                MavMessage::MISSION_COUNT(c) => {
                    Some((c.count, c.opaque_id, (c.target_system, c.target_component)))
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            counts,
            [
                (2, opaque_id(&items), GCS),
                (2, opaque_id(&[items[0]; 2]), GCS)
            ]
        );
        assert_eq!(acks(&out), [MavMissionResult::MAV_MISSION_UNSUPPORTED]);

        let ask = |seq: u16, list_type: u8, int: bool| {
            let mut out = Vec::new();
            let req = ItemRequest {
                seq,
                list_type,
                int,
            };
            p.on_request_item(GCS, req, &s, 1, &mut out);
            out
        };
        let [MavMessage::MISSION_ITEM_INT(i)] = &ask(0, 0, true)[..] else {
            panic!("an int item");
        };
        assert_eq!(
            (i.x, i.y, i.seq, i.current),
            (472_500_000, 85_000_000, 0, 0)
        );
        let [MavMessage::MISSION_ITEM(f)] = &ask(0, 0, false)[..] else {
            panic!("a float item");
        };
        assert_eq!((f.x, f.y, f.current), (47.25, 8.5, 0));
        let [MavMessage::MISSION_ITEM(f)] = &ask(1, 0, false)[..] else {
            panic!("a float item");
        };
        assert_eq!((f.x, f.y, f.current), (12.0, -3.0, 1));
        // The rally list has no current item; nor an item 2.
        let [MavMessage::MISSION_ITEM_INT(r)] = &ask(1, 2, true)[..] else {
            panic!("rally item 1");
        };
        assert_eq!((r.x, r.current), (472_500_000, 0));
        let mut out = Vec::new();
        let req = ItemRequest {
            seq: 0,
            list_type: 0,
            int: true,
        };
        p.on_request_item(GCS, req, &s, 0, &mut out);
        let [MavMessage::MISSION_ITEM_INT(m)] = &out[..] else {
            panic!("mission item 0");
        };
        assert_eq!(m.current, 1);
        assert_eq!(
            acks(&ask(2, 2, true)),
            [MavMissionResult::MAV_MISSION_INVALID_SEQUENCE]
        );
        assert!(ask(0, 9, true).is_empty());
    }
}
