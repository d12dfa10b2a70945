//! The ground-station side of a mission upload: MISSION_COUNT, then each item
//! the vehicle asks for (MISSION_REQUEST_INT, or the deprecated
//! MISSION_REQUEST ArduPilot still sends) answered with MISSION_ITEM_INT, until
//! the vehicle's MISSION_ACK.
//!
//! The vehicle drives the transfer; the client only repeats itself when the
//! vehicle has gone quiet: MISSION_COUNT again while no item has been asked
//! for, the last item again while the final ACK is missing (the vehicle then
//! repeats its ACK). Both sides give up after [`super::TIMEOUT`] without
//! progress. Items always go in the int form, so coordinates cross the link
//! exactly (degE7), whichever form the vehicle asked in.
//!
//! Like the vehicle side, time is the link's clock supplied by the caller.

use std::time::Duration;

use mavlink::dialects::common::{
    MavCmd, MavFrame, MavMessage, MavMissionResult, MISSION_COUNT_DATA, MISSION_ITEM_INT_DATA,
};
use num_traits::FromPrimitive;

use super::{ListType, StoredItem, TIMEOUT};

/// Silence after which the client repeats its last message (MAVSDK and
/// QGroundControl wait about as long).
pub const RESEND_INTERVAL: Duration = Duration::from_millis(1000);

/// Why an upload failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum UploadError {
    /// An item's command or frame has no MAVLink common-dialect value.
    #[error("item {seq}: {what} cannot be sent over MAVLink")]
    Unsendable {
        /// The item.
        seq: usize,
        /// What is wrong.
        what: String,
    },
    /// The vehicle refused the list.
    #[error("the vehicle refused the {list}: {result:?}")]
    Refused {
        /// Which list.
        list: &'static str,
        /// The vehicle's answer.
        result: MavMissionResult,
    },
    /// The vehicle asked for an item the list does not have.
    #[error("the vehicle asked for item {seq} of a {count}-item {list}")]
    BadRequest {
        /// Which list.
        list: &'static str,
        /// The item asked for.
        seq: u16,
        /// Items in the list.
        count: usize,
    },
    /// No progress for [`TIMEOUT`].
    #[error("{list} upload timed out: no answer from the vehicle for {secs:.0} s ({sent} of {count} items sent)")]
    TimedOut {
        /// Which list.
        list: &'static str,
        /// Seconds without progress.
        secs: f64,
        /// Items sent at least once.
        sent: usize,
        /// Items in the list.
        count: usize,
    },
}

/// Where an upload stands after an event.
#[derive(Debug, Clone, PartialEq)]
pub enum UploadState {
    /// Still transferring.
    InProgress,
    /// The vehicle accepted the list.
    Accepted,
    /// The upload failed.
    Failed(UploadError),
}

/// One upload of one list to one vehicle.
#[derive(Debug, Clone)]
pub struct Upload {
    list: ListType,
    items: Vec<MISSION_ITEM_INT_DATA>,
    target: (u8, u8),
    /// Highest item sent so far, +1 (0: none yet).
    sent: usize,
    last_sent: Option<MavMessage>,
    last_send: Duration,
    last_progress: Duration,
    state: UploadState,
}

fn item_message(
    seq: usize,
    it: &StoredItem,
    list: ListType,
    target: (u8, u8),
) -> Result<MISSION_ITEM_INT_DATA, UploadError> {
    let command = MavCmd::from_u16(it.command).ok_or_else(|| UploadError::Unsendable {
        seq,
        what: format!("command {}", it.command),
    })?;
    let frame = MavFrame::from_u8(it.frame).ok_or_else(|| UploadError::Unsendable {
        seq,
        what: format!("frame {}", it.frame),
    })?;
    let seq = u16::try_from(seq).map_err(|_| UploadError::Unsendable {
        seq,
        what: "its number (more than 65535 items)".into(),
    })?;
    let [param1, param2, param3, param4] = it.params;
    Ok(MISSION_ITEM_INT_DATA {
        param1,
        param2,
        param3,
        param4,
        x: it.x,
        y: it.y,
        z: it.z,
        seq,
        command,
        target_system: target.0,
        target_component: target.1,
        frame,
        current: u8::from(seq == 0),
        autocontinue: it.autocontinue,
        mission_type: list.mav(),
    })
}

impl Upload {
    /// Starts uploading `items` as list `list` to `target` (system,
    /// component): pushes MISSION_COUNT onto `out`.
    ///
    /// # Errors
    /// An item that cannot be expressed in MAVLink's common dialect; nothing
    /// is sent then.
    pub fn start(
        now: Duration,
        target: (u8, u8),
        list: ListType,
        items: &[StoredItem],
        out: &mut Vec<MavMessage>,
    ) -> Result<Self, UploadError> {
        let items = items
            .iter()
            .enumerate()
            .map(|(i, it)| item_message(i, it, list, target))
            .collect::<Result<Vec<_>, _>>()?;
        let count = MavMessage::MISSION_COUNT(MISSION_COUNT_DATA {
            count: u16::try_from(items.len()).unwrap_or(u16::MAX),
            target_system: target.0,
            target_component: target.1,
            mission_type: list.mav(),
            opaque_id: 0,
        });
        out.push(count.clone());
        Ok(Upload {
            list,
            items,
            target,
            sent: 0,
            last_sent: Some(count),
            last_send: now,
            last_progress: now,
            state: UploadState::InProgress,
        })
    }

    /// The state after the last event.
    pub fn state(&self) -> &UploadState {
        &self.state
    }

    /// The vehicle this upload goes to.
    pub fn target(&self) -> (u8, u8) {
        self.target
    }

    fn fail(&mut self, e: UploadError) -> &UploadState {
        self.state = UploadState::Failed(e);
        &self.state
    }

    /// MISSION_REQUEST(_INT) for item `seq` of list `list_type`: answers it.
    pub fn on_request(
        &mut self,
        now: Duration,
        seq: u16,
        list_type: u8,
        out: &mut Vec<MavMessage>,
    ) -> &UploadState {
        if self.state != UploadState::InProgress || list_type != self.list as u8 {
            return &self.state;
        }
        let Some(item) = self.items.get(seq as usize) else {
            return self.fail(UploadError::BadRequest {
                list: self.list.name(),
                seq,
                count: self.items.len(),
            });
        };
        let msg = MavMessage::MISSION_ITEM_INT(item.clone());
        out.push(msg.clone());
        if seq as usize >= self.sent {
            self.sent = seq as usize + 1;
            self.last_progress = now;
        }
        self.last_sent = Some(msg);
        self.last_send = now;
        &self.state
    }

    /// MISSION_ACK for list `list_type`: the vehicle's verdict.
    pub fn on_ack(&mut self, list_type: u8, result: MavMissionResult) -> &UploadState {
        if self.state != UploadState::InProgress || list_type != self.list as u8 {
            return &self.state;
        }
        match result {
            MavMissionResult::MAV_MISSION_ACCEPTED if self.sent >= self.items.len() => {
                self.state = UploadState::Accepted;
                &self.state
            }
            // An ACCEPTED before the list is through answers something else
            // (an earlier transfer's repeated ACK): not this upload's verdict.
            MavMissionResult::MAV_MISSION_ACCEPTED => &self.state,
            result => self.fail(UploadError::Refused {
                list: self.list.name(),
                result,
            }),
        }
    }

    /// Repeats the last message after [`RESEND_INTERVAL`] of silence; gives
    /// up after [`TIMEOUT`] without progress.
    pub fn poll(&mut self, now: Duration, out: &mut Vec<MavMessage>) -> &UploadState {
        if self.state != UploadState::InProgress {
            return &self.state;
        }
        if now.saturating_sub(self.last_progress) >= TIMEOUT {
            let secs = now.saturating_sub(self.last_progress).as_secs_f64();
            return self.fail(UploadError::TimedOut {
                list: self.list.name(),
                secs,
                sent: self.sent,
                count: self.items.len(),
            });
        }
        if now.saturating_sub(self.last_send) >= RESEND_INTERVAL {
            if let Some(m) = &self.last_sent {
                out.push(m.clone());
            }
            self.last_send = now;
        }
        &self.state
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ItemRequest, MissionProtocol, Stores};
    use super::*;
    use crate::wire::{Incoming, MissionItemIn};

    const GCS: (u8, u8) = (255, 190);
    const VEHICLE: (u8, u8) = (1, 1);

    fn items(n: usize) -> Vec<StoredItem> {
        (0..n)
            .map(|i| StoredItem {
                command: 16,
                frame: 3,
                params: [0.0, 2.0, 0.0, f32::NAN],
                x: 473_977_420 + i as i32 * 1000,
                y: 85_455_940 - i as i32 * 500,
                z: 20.0 + i as f32,
                autocontinue: 1,
            })
            .collect()
    }

    fn start(n: usize, out: &mut Vec<MavMessage>) -> Upload {
        Upload::start(Duration::ZERO, VEHICLE, ListType::Mission, &items(n), out).expect("sendable")
    }

    /// What the vehicle side decodes from the client's item.
    fn as_received(m: &MISSION_ITEM_INT_DATA) -> MissionItemIn {
        let mut buf = Vec::new();
        let mut enc = crate::wire::Encoder::new(GCS.0, GCS.1, None);
        enc.encode(
            &crate::wire::Outgoing::Msg(MavMessage::MISSION_ITEM_INT(m.clone())),
            &mut buf,
        );
        let mut got = None;
        crate::wire::frames(&buf, None, |raw| {
            if let Ok(Incoming::MissionItem(it)) = crate::wire::decode(raw) {
                got = Some(it);
            }
        });
        got.expect("one mission item")
    }

    /// The client against the vehicle side of this crate: every item arrives
    /// bit for bit, in order, and both sides agree the list is stored.
    #[test]
    fn uploads_to_the_vehicle_side_exactly() {
        let list = items(7);
        let mut to_vehicle = Vec::new();
        let mut to_gcs = Vec::new();
        let mut up = Upload::start(
            Duration::ZERO,
            VEHICLE,
            ListType::Mission,
            &list,
            &mut to_vehicle,
        )
        .expect("sendable");
        let mut vehicle = MissionProtocol::new(VEHICLE.0, VEHICLE.1);
        let mut stores = Stores::default();
        for _ in 0..100 {
            for m in to_vehicle.drain(..) {
                match m {
                    MavMessage::MISSION_COUNT(c) => {
                        vehicle.on_count(
                            Duration::ZERO,
                            GCS,
                            c.count,
                            c.mission_type as u8,
                            &mut stores,
                            &mut to_gcs,
                        );
                    }
                    MavMessage::MISSION_ITEM_INT(it) => {
                        vehicle.on_item(
                            Duration::ZERO,
                            GCS,
                            &as_received(&it),
                            &mut stores,
                            |_, _| Ok(()),
                            &mut to_gcs,
                        );
                    }
                    other => panic!("unexpected {other:?}"),
                }
            }
            for m in to_gcs.drain(..) {
                match m {
                    MavMessage::MISSION_REQUEST_INT(r) => {
                        up.on_request(Duration::ZERO, r.seq, r.mission_type as u8, &mut to_vehicle);
                    }
                    MavMessage::MISSION_ACK(a) => {
                        up.on_ack(a.mission_type as u8, a.mavtype);
                    }
                    other => panic!("unexpected {other:?}"),
                }
            }
        }
        assert_eq!(up.state(), &UploadState::Accepted);
        let stored = stores.list(ListType::Mission);
        assert_eq!(stored.len(), list.len());
        for (a, b) in stored.iter().zip(&list) {
            assert_eq!(
                (a.command, a.frame, a.x, a.y),
                (b.command, b.frame, b.x, b.y)
            );
            assert_eq!(a.z.to_bits(), b.z.to_bits());
            assert_eq!(a.params[1].to_bits(), b.params[1].to_bits());
            assert!(a.params[3].is_nan(), "NaN yaw stays NaN");
        }
        // A download of the stored list gives back the same item.
        let mut out = Vec::new();
        vehicle.on_request_item(
            GCS,
            ItemRequest {
                seq: 3,
                list_type: 0,
                int: true,
            },
            &stores,
            0,
            &mut out,
        );
        assert!(matches!(&out[0], MavMessage::MISSION_ITEM_INT(m) if m.x == list[3].x));
    }

    #[test]
    fn repeats_itself_when_the_vehicle_is_quiet_and_gives_up_after_the_timeout() {
        let mut out = Vec::new();
        let mut up = start(2, &mut out);
        out.clear();
        let mut t = Duration::ZERO;
        while up.poll(t, &mut out) == &UploadState::InProgress {
            t += Duration::from_millis(10);
        }
        // MISSION_COUNT once at start, then once a second until 5 s.
        assert_eq!(out.len(), 4, "{out:?}");
        assert!(out
            .iter()
            .all(|m| matches!(m, MavMessage::MISSION_COUNT(c) if c.count == 2)));
        assert!(matches!(
            up.state(),
            UploadState::Failed(UploadError::TimedOut {
                sent: 0,
                count: 2,
                ..
            })
        ));
        assert_eq!(t, TIMEOUT);
    }

    #[test]
    fn the_last_item_is_repeated_until_the_ack_arrives() {
        let mut out = Vec::new();
        let mut up = start(2, &mut out);
        up.on_request(Duration::ZERO, 0, 0, &mut out);
        up.on_request(Duration::ZERO, 1, 0, &mut out);
        out.clear();
        // An ACCEPTED from an earlier transfer while items are missing does not count…
        let mut early = start(2, &mut Vec::new());
        assert_eq!(
            early.on_ack(0, MavMissionResult::MAV_MISSION_ACCEPTED),
            &UploadState::InProgress
        );
        // …and the final ACK lost: item 1 goes again.
        up.poll(Duration::from_millis(1000), &mut out);
        assert!(matches!(&out[..], [MavMessage::MISSION_ITEM_INT(m)] if m.seq == 1));
        assert_eq!(
            up.on_ack(0, MavMissionResult::MAV_MISSION_ACCEPTED),
            &UploadState::Accepted
        );
    }

    #[test]
    fn refusals_and_bad_requests_fail_with_the_reason() {
        let mut out = Vec::new();
        let mut up = start(2, &mut out);
        assert!(matches!(
            up.on_request(Duration::ZERO, 5, 0, &mut out),
            UploadState::Failed(UploadError::BadRequest {
                seq: 5,
                count: 2,
                ..
            })
        ));
        let mut up = start(2, &mut out);
        // A request for another list is not ours.
        up.on_request(Duration::ZERO, 0, 1, &mut out);
        assert_eq!(up.state(), &UploadState::InProgress);
        let e = match up.on_ack(0, MavMissionResult::MAV_MISSION_INVALID_SEQUENCE) {
            UploadState::Failed(e) => e.to_string(),
            s => panic!("{s:?}"),
        };
        assert!(
            e.contains("refused the mission") && e.contains("INVALID_SEQUENCE"),
            "{e}"
        );
        let mut bad = items(1);
        bad[0].command = 54321;
        let e = Upload::start(Duration::ZERO, VEHICLE, ListType::Mission, &bad, &mut out)
            .expect_err("unsendable");
        assert_eq!(
            e.to_string(),
            "item 0: command 54321 cannot be sent over MAVLink"
        );
    }
}
