//! MAVLink on the wire, shared by the GCS endpoint and the firmware bridges:
//! frames in and out of byte buffers, optional signing, and our own decoding of
//! the four messages whose typed form in the `mavlink` crate cannot carry what
//! ground stations send.
//!
//! The crate refuses a whole message when an enum field holds a value its
//! dialect does not know. That would silently drop a COMMAND_LONG/COMMAND_INT
//! with an unknown command (which must be answered UNSUPPORTED) and a
//! MISSION_ITEM(_INT) with an unknown command or frame (which must be answered
//! with a mission error). Those are read here from the raw payload; everything
//! else goes through the crate (SET_MODE's and HIL_ACTUATOR_CONTROLS's flag
//! fields keep every bit there). Message ids and CRC_EXTRA values are the
//! crate's.
//!
//! Frames are found here ([`frames`] for a datagram, [`stream_frames`] for a
//! TCP stream) rather than with the crate's `MavlinkReader`, which is made
//! for one byte stream: over UDP a frame never spans datagrams (a reader
//! kept per socket would carry a truncated frame of one peer into the next
//! peer's datagram), a reader per datagram would allocate its buffer per
//! datagram (the endpoint allocates nothing per datagram, `crates/run/tests/no_alloc.rs`),
//! and its signed read drops a badly signed frame without counting it (the
//! links report how many they refused). Each candidate frame is checked in a
//! stack buffer with the crate's own CRC check.

// MISSION_ITEM is deprecated in the dialect, and still sent by ground stations.
#[allow(deprecated)]
use mavlink::dialects::common::{
    MavMessage, COMMAND_ACK_DATA, COMMAND_INT_DATA, COMMAND_LONG_DATA, MISSION_ITEM_DATA,
    MISSION_ITEM_INT_DATA,
};
use mavlink::{
    MAVLinkMessageRaw, MAVLinkV2MessageRaw, MavHeader, MavlinkVersion, Message, MessageData,
};

pub use mavlink::{SigningConfig, SigningData};

/// A command from COMMAND_LONG or COMMAND_INT, command id kept as a number.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CommandIn {
    /// MAV_CMD.
    pub command: u16,
    /// param1..param4.
    pub params: [f32; 4],
    /// param5 (COMMAND_INT: x as the raw int converted to f64).
    pub x: f64,
    /// param6 (COMMAND_INT: y).
    pub y: f64,
    /// param7 (COMMAND_INT: z).
    pub z: f32,
    /// Target system.
    pub target_system: u8,
    /// Target component.
    pub target_component: u8,
    /// COMMAND_LONG confirmation counter (0 on first send).
    pub confirmation: u8,
    /// COMMAND_INT: the frame and x/y as degE7; None for COMMAND_LONG.
    pub int_frame: Option<u8>,
}

/// A mission item as sent (int form: x/y as integers; float form converted).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MissionItemIn {
    /// Sequence number.
    pub seq: u16,
    /// MAV_CMD.
    pub command: u16,
    /// MAV_FRAME.
    pub frame: u8,
    /// param1..param4.
    pub params: [f32; 4],
    /// x: degE7 for global frames in the int form; the float's value otherwise.
    pub x: f64,
    /// y, as x.
    pub y: f64,
    /// z.
    pub z: f32,
    /// current flag.
    pub current: u8,
    /// autocontinue flag.
    pub autocontinue: u8,
    /// MAV_MISSION_TYPE.
    pub mission_type: u8,
    /// Target system.
    pub target_system: u8,
    /// Target component.
    pub target_component: u8,
    /// Came as MISSION_ITEM_INT.
    pub is_int: bool,
}

/// A decoded incoming message. (Held once per frame and moved, never stored
/// in bulk: boxing the 280-byte message would cost an allocation per frame.)
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A message the crate decodes.
    Msg(MavMessage),
    /// COMMAND_LONG / COMMAND_INT.
    Command(CommandIn),
    /// MISSION_ITEM / MISSION_ITEM_INT.
    MissionItem(MissionItemIn),
}

/// Copies a (possibly zero-truncated) MAVLink 2 payload into a fixed buffer.
fn padded<const N: usize>(payload: &[u8]) -> [u8; N] {
    let mut b = [0u8; N];
    let n = payload.len().min(N);
    b[..n].copy_from_slice(&payload[..n]);
    b
}

fn f32_at(b: &[u8], i: usize) -> f32 {
    let mut a = [0u8; 4];
    if let Some(s) = b.get(i..i + 4) {
        a.copy_from_slice(s);
    }
    f32::from_le_bytes(a)
}

fn i32_at(b: &[u8], i: usize) -> i32 {
    let mut a = [0u8; 4];
    if let Some(s) = b.get(i..i + 4) {
        a.copy_from_slice(s);
    }
    i32::from_le_bytes(a)
}

fn u16_at(b: &[u8], i: usize) -> u16 {
    let mut a = [0u8; 2];
    if let Some(s) = b.get(i..i + 2) {
        a.copy_from_slice(s);
    }
    u16::from_le_bytes(a)
}

fn u8_at(b: &[u8], i: usize) -> u8 {
    b.get(i).copied().unwrap_or(0)
}

/// Decodes one CRC-checked raw message.
///
/// # Errors
/// The crate's parse error for messages it decodes (unknown id, bad enum).
#[allow(deprecated)] // MISSION_ITEM (see the import)
pub fn decode(raw: &MAVLinkMessageRaw) -> Result<Incoming, mavlink::error::ParserError> {
    let payload = raw.payload();
    match raw.message_id() {
        COMMAND_LONG_DATA::ID => {
            let b: [u8; 33] = padded(payload);
            Ok(Incoming::Command(CommandIn {
                command: u16_at(&b, 28),
                params: [f32_at(&b, 0), f32_at(&b, 4), f32_at(&b, 8), f32_at(&b, 12)],
                x: f32_at(&b, 16) as f64,
                y: f32_at(&b, 20) as f64,
                z: f32_at(&b, 24),
                target_system: u8_at(&b, 30),
                target_component: u8_at(&b, 31),
                confirmation: u8_at(&b, 32),
                int_frame: None,
            }))
        }
        COMMAND_INT_DATA::ID => {
            let b: [u8; 35] = padded(payload);
            Ok(Incoming::Command(CommandIn {
                command: u16_at(&b, 28),
                params: [f32_at(&b, 0), f32_at(&b, 4), f32_at(&b, 8), f32_at(&b, 12)],
                x: i32_at(&b, 16) as f64,
                y: i32_at(&b, 20) as f64,
                z: f32_at(&b, 24),
                target_system: u8_at(&b, 30),
                target_component: u8_at(&b, 31),
                confirmation: 0,
                int_frame: Some(u8_at(&b, 32)),
            }))
        }
        id @ (MISSION_ITEM_DATA::ID | MISSION_ITEM_INT_DATA::ID) => {
            let b: [u8; 38] = padded(payload);
            let is_int = id == MISSION_ITEM_INT_DATA::ID;
            let (x, y) = if is_int {
                (i32_at(&b, 16) as f64, i32_at(&b, 20) as f64)
            } else {
                (f32_at(&b, 16) as f64, f32_at(&b, 20) as f64)
            };
            Ok(Incoming::MissionItem(MissionItemIn {
                params: [f32_at(&b, 0), f32_at(&b, 4), f32_at(&b, 8), f32_at(&b, 12)],
                x,
                y,
                z: f32_at(&b, 24),
                seq: u16_at(&b, 28),
                command: u16_at(&b, 30),
                target_system: u8_at(&b, 32),
                target_component: u8_at(&b, 33),
                frame: u8_at(&b, 34),
                current: u8_at(&b, 35),
                autocontinue: u8_at(&b, 36),
                mission_type: u8_at(&b, 37),
                is_int,
            }))
        }
        id => {
            let version = raw.version();
            MavMessage::parse(version, id, payload).map(Incoming::Msg)
        }
    }
}

/// An outgoing message (see [`Incoming`] on its size).
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Outgoing {
    /// A typed message.
    Msg(MavMessage),
    /// COMMAND_ACK for a command id the dialect does not know.
    UnknownCommandAck {
        /// The command id.
        command: u16,
        /// MAV_RESULT.
        result: u8,
        /// Requester's system.
        target_system: u8,
        /// Requester's component.
        target_component: u8,
    },
}

/// Encodes MAVLink 2 frames from one system/component, numbering them, and
/// signing them when a key is set.
pub struct Encoder {
    system_id: u8,
    component_id: u8,
    sequence: u8,
    signing: Option<SigningData>,
}

impl std::fmt::Debug for Encoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Encoder")
            .field("system_id", &self.system_id)
            .field("component_id", &self.component_id)
            .field("signing", &self.signing.is_some())
            .finish()
    }
}

impl Encoder {
    /// Frames from `system_id`/`component_id`, signed with `signing` if given.
    pub fn new(system_id: u8, component_id: u8, signing: Option<SigningConfig>) -> Self {
        Encoder {
            system_id,
            component_id,
            sequence: 0,
            signing: signing.map(SigningData::from_config),
        }
    }

    /// The signing state (also used to check incoming signatures).
    pub fn signing(&self) -> Option<&SigningData> {
        self.signing.as_ref()
    }

    fn header(&mut self) -> MavHeader {
        let h = MavHeader {
            system_id: self.system_id as u32,
            component_id: self.component_id,
            sequence: self.sequence,
        };
        self.sequence = self.sequence.wrapping_add(1);
        h
    }

    /// Appends the frame of `out` to `buf`.
    pub fn encode(&mut self, out: &Outgoing, buf: &mut Vec<u8>) {
        let header = self.header();
        let mut raw = MAVLinkV2MessageRaw::new();
        match out {
            Outgoing::Msg(m) => {
                if self.signing.is_some() {
                    raw.serialize_message_for_signing(header, m);
                } else {
                    raw.serialize_message(header, m);
                }
            }
            Outgoing::UnknownCommandAck {
                command,
                result,
                target_system,
                target_component,
            } => {
                let mut payload = [0u8; 10];
                payload[0..2].copy_from_slice(&command.to_le_bytes());
                payload[2] = *result;
                payload[8] = *target_system;
                payload[9] = *target_component;
                let mut len = payload.len();
                while len > 1 && payload[len - 1] == 0 {
                    len -= 1;
                }
                let signed = self.signing.is_some();
                let bytes = raw.as_mut_slice();
                bytes[0] = mavlink::MAV_STX_V2;
                bytes[1] = len as u8;
                bytes[2] = if signed { 0x01 } else { 0 };
                bytes[3] = 0;
                bytes[4] = header.sequence;
                bytes[5] = self.system_id;
                bytes[6] = self.component_id;
                bytes[7..10].copy_from_slice(&COMMAND_ACK_DATA::ID.to_le_bytes()[..3]);
                bytes[10..10 + len].copy_from_slice(&payload[..len]);
                let crc = mavlink::calculate_crc(&bytes[1..10 + len], COMMAND_ACK_DATA::EXTRA_CRC);
                bytes[10 + len..12 + len].copy_from_slice(&crc.to_le_bytes());
            }
        }
        if let Some(s) = &self.signing {
            s.sign_message(&mut raw);
        }
        buf.extend_from_slice(raw.raw_bytes());
    }
}

/// Splits a datagram into CRC-valid frames (v1 or v2), checking signatures when
/// `signing` is set. Garbage, truncated frames and frames with a bad CRC are
/// skipped, resynchronising at the byte after the false start so a real frame
/// hidden behind one is not lost. Returns how many frames were dropped for a
/// bad or missing signature.
pub fn frames(
    datagram: &[u8],
    signing: Option<&SigningData>,
    mut each: impl FnMut(&MAVLinkMessageRaw),
) -> usize {
    let mut rejected = 0;
    let mut i = 0;
    while let Some(rest) = datagram.get(i..).filter(|r| !r.is_empty()) {
        let len = match rest {
            [mavlink::MAV_STX, n, ..] => 8 + *n as usize,
            [mavlink::MAV_STX_V2, n, flags, ..] => {
                12 + *n as usize + if flags & 0x01 != 0 { 13 } else { 0 }
            }
            _ => {
                i += 1;
                continue;
            }
        };
        let Some(candidate) = rest.get(..len) else {
            i += 1;
            continue;
        };
        match checked_frame(candidate) {
            Some(raw) => {
                let ok = match (signing, &raw) {
                    (None, _) => true,
                    (Some(s), MAVLinkMessageRaw::V2(v2)) => s.verify_signature(v2),
                    (Some(_), MAVLinkMessageRaw::V1(_)) => false,
                };
                if ok {
                    each(&raw);
                } else {
                    rejected += 1;
                }
                i += len;
            }
            None => i += 1,
        }
    }
    rejected
}

/// One whole frame (v1 or v2, exactly its length) with a valid CRC, checked
/// in a buffer on the stack: a datagram of garbage costs no allocation per
/// false start.
fn checked_frame(candidate: &[u8]) -> Option<MAVLinkMessageRaw> {
    match *candidate.first()? {
        mavlink::MAV_STX_V2 => {
            let mut raw = MAVLinkV2MessageRaw::new();
            raw.as_mut_slice()
                .get_mut(..candidate.len())?
                .copy_from_slice(candidate);
            raw.has_valid_crc::<MavMessage>()
                .then_some(MAVLinkMessageRaw::V2(raw))
        }
        mavlink::MAV_STX => {
            let mut raw = mavlink::MAVLinkV1MessageRaw::new();
            raw.as_mut_slice()
                .get_mut(..candidate.len())?
                .copy_from_slice(candidate);
            raw.has_valid_crc::<MavMessage>()
                .then_some(MAVLinkMessageRaw::V1(raw))
        }
        _ => None,
    }
}

/// Takes every complete CRC-valid frame off the front of a stream buffer (a
/// TCP byte stream), keeping an incomplete last frame for the next read.
/// Garbage and frames with a bad CRC are skipped byte by byte. Returns how
/// many bytes were skipped as garbage.
pub fn stream_frames(buf: &mut Vec<u8>, mut each: impl FnMut(&MAVLinkMessageRaw)) -> usize {
    let mut i = 0;
    let mut skipped = 0;
    while i < buf.len() {
        let rest = buf.get(i..).unwrap_or(&[]);
        let len = match rest {
            [mavlink::MAV_STX, n, ..] => 8 + *n as usize,
            [mavlink::MAV_STX_V2, n, flags, ..] => {
                12 + *n as usize + if flags & 0x01 != 0 { 13 } else { 0 }
            }
            [mavlink::MAV_STX] | [mavlink::MAV_STX_V2] | [mavlink::MAV_STX_V2, _] => break,
            _ => {
                i += 1;
                skipped += 1;
                continue;
            }
        };
        let Some(candidate) = rest.get(..len) else {
            break; // incomplete: wait for more bytes
        };
        match checked_frame(candidate) {
            Some(raw) => {
                each(&raw);
                i += len;
            }
            None => {
                i += 1;
                skipped += 1;
            }
        }
    }
    buf.drain(..i.min(buf.len()));
    skipped
}

/// A GPS report in MAVLink's scaled integers (GPS_RAW_INT, HIL_GPS).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpsScaled {
    /// Latitude, degE7.
    pub lat: i32,
    /// Longitude, degE7.
    pub lon: i32,
    /// Altitude, mm.
    pub alt_mm: i32,
    /// Horizontal accuracy, cm (what PX4 reads from eph).
    pub eph_cm: u16,
    /// Vertical accuracy, cm.
    pub epv_cm: u16,
    /// Ground speed, cm/s.
    pub vel_cm_s: u16,
    /// Course over ground, cdeg 0..35999 (65535: unknown, below 0.2 m/s).
    pub cog_cdeg: u16,
    /// GPS_FIX_TYPE.
    pub fix_type: u8,
}

/// Degrees ×1e7 of an angle in radians.
pub fn deg_e7(rad: f64) -> i32 {
    (rad.to_degrees() * 1e7)
        .round()
        .clamp(i32::MIN as f64, i32::MAX as f64) as i32
}

impl GpsScaled {
    /// The scaled fields of `g`.
    pub fn of(g: &mavsitl_core::samples::GpsSample) -> Self {
        let cm = |m: f64| (m * 100.0).round().clamp(0.0, 65534.0) as u16;
        let vel = g.ground_speed_m_s();
        GpsScaled {
            lat: deg_e7(g.position.lat_rad),
            lon: deg_e7(g.position.lon_rad),
            alt_mm: (g.position.alt_m * 1000.0)
                .round()
                .clamp(i32::MIN as f64, i32::MAX as f64) as i32,
            eph_cm: cm(g.eph_m),
            epv_cm: cm(g.epv_m),
            vel_cm_s: cm(vel),
            cog_cdeg: if vel > 0.2 {
                ((g.course_deg().rem_euclid(360.0) * 100.0).round() as u32 % 36000) as u16
            } else {
                u16::MAX
            },
            fix_type: match g.fix {
                mavsitl_core::samples::FixType::Fix3d => 3,
                mavsitl_core::samples::FixType::Fix2d => 2,
                mavsitl_core::samples::FixType::NoFix => 1,
            },
        }
    }
}

/// The MAVLink version of a raw message.
pub fn version(raw: &MAVLinkMessageRaw) -> MavlinkVersion {
    raw.version()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mavlink::dialects::common::{MavCmd, MavResult, COMMAND_ACK_DATA, COMMAND_LONG_DATA};
    use mavsitl_core::geo::GeoPoint;
    use mavsitl_core::samples::{FixType, GpsSample};
    use mavsitl_core::time::SimTime;

    fn roundtrip(out: &Outgoing, signing: Option<SigningConfig>) -> Vec<Incoming> {
        let mut enc = Encoder::new(1, 1, signing.clone());
        let mut buf = Vec::new();
        enc.encode(out, &mut buf);
        let check = signing.map(SigningData::from_config);
        let mut got = Vec::new();
        frames(&buf, check.as_ref(), |raw| {
            if let Ok(m) = decode(raw) {
                got.push(m);
            }
        });
        got
    }

    #[test]
    fn unknown_command_ack_matches_the_crates_encoding() {
        // For a known command, the hand-built frame must equal the crate's.
        let typed = Outgoing::Msg(MavMessage::COMMAND_ACK(COMMAND_ACK_DATA {
            command: MavCmd::MAV_CMD_NAV_TAKEOFF,
            result: MavResult::MAV_RESULT_UNSUPPORTED,
            progress: 0,
            result_param2: 0,
            target_system: 255,
            target_component: 190,
        }));
        let hand = Outgoing::UnknownCommandAck {
            command: 22,
            result: 3,
            target_system: 255,
            target_component: 190,
        };
        let (mut a, mut b) = (Vec::new(), Vec::new());
        Encoder::new(1, 1, None).encode(&typed, &mut a);
        Encoder::new(1, 1, None).encode(&hand, &mut b);
        assert_eq!(a, b);
        // And it decodes with the command id intact even when unknown.
        let unknown = Outgoing::UnknownCommandAck {
            command: 54321,
            result: 3,
            target_system: 255,
            target_component: 0,
        };
        let mut c = Vec::new();
        Encoder::new(1, 1, None).encode(&unknown, &mut c);
        assert_eq!(u16::from_le_bytes([c[10], c[11]]), 54321);
        let mut n = 0;
        frames(&c, None, |_| n += 1);
        assert_eq!(n, 1, "CRC of the hand-built frame must check");
    }

    #[test]
    fn command_long_with_unknown_id_is_decoded() {
        let m = MavMessage::COMMAND_LONG(COMMAND_LONG_DATA {
            param1: 1.0,
            param2: 21196.0,
            param3: 0.0,
            param4: 0.0,
            param5: 0.0,
            param6: 0.0,
            param7: 0.0,
            command: MavCmd::MAV_CMD_COMPONENT_ARM_DISARM,
            target_system: 1,
            target_component: 1,
            confirmation: 2,
        });
        let got = roundtrip(&Outgoing::Msg(m), None);
        assert_eq!(got.len(), 1);
        match &got[0] {
            Incoming::Command(c) => {
                assert_eq!(c.command, 400);
                assert_eq!(c.params[1], 21196.0);
                assert_eq!(c.confirmation, 2);
            }
            other => panic!("{other:?}"),
        }
        // Patch the command id to one the dialect does not know.
        let mut buf = Vec::new();
        Encoder::new(255, 190, None).encode(
            &Outgoing::Msg(MavMessage::COMMAND_LONG(COMMAND_LONG_DATA {
                command: MavCmd::MAV_CMD_NAV_TAKEOFF,
                target_system: 1,
                target_component: 1,
                confirmation: 1,
                ..COMMAND_LONG_DATA::DEFAULT
            })),
            &mut buf,
        );
        let len = buf[1] as usize;
        buf[10 + 28..10 + 30].copy_from_slice(&54321u16.to_le_bytes());
        let crc = mavlink::calculate_crc(
            &buf[1..10 + len],
            <MavMessage as Message>::extra_crc(COMMAND_LONG_DATA::ID),
        );
        buf[10 + len..12 + len].copy_from_slice(&crc.to_le_bytes());
        let mut cmds = Vec::new();
        frames(&buf, None, |raw| {
            if let Ok(Incoming::Command(c)) = decode(raw) {
                cmds.push(c.command);
            }
        });
        assert_eq!(cmds, vec![54321]);
    }

    #[test]
    fn signed_frames_verify_and_unsigned_are_rejected() {
        let key = [7u8; 32];
        let hb = Outgoing::Msg(MavMessage::HEARTBEAT(
            mavlink::dialects::common::HEARTBEAT_DATA::DEFAULT,
        ));
        let got = roundtrip(&hb, Some(SigningConfig::new(key, 0, true, false)));
        assert_eq!(got.len(), 1);
        // Unsigned frame to a signing receiver: rejected.
        let mut buf = Vec::new();
        Encoder::new(1, 1, None).encode(&hb, &mut buf);
        let check = SigningData::from_config(SigningConfig::new(key, 0, true, false));
        let mut n = 0;
        let rejected = frames(&buf, Some(&check), |_| n += 1);
        assert_eq!((n, rejected), (0, 1));
        // Wrong key: rejected.
        let mut buf = Vec::new();
        Encoder::new(1, 1, Some(SigningConfig::new([8u8; 32], 0, true, false)))
            .encode(&hb, &mut buf);
        let rejected = frames(&buf, Some(&check), |_| n += 1);
        assert_eq!((n, rejected), (0, 1));
        // The encoder's own signing state checks what it signs.
        let mut enc = Encoder::new(1, 1, Some(SigningConfig::new(key, 0, true, false)));
        assert!(Encoder::new(1, 1, None).signing().is_none());
        let mut buf = Vec::new();
        enc.encode(&hb, &mut buf);
        let mut n = 0;
        frames(&buf, enc.signing(), |_| n += 1);
        assert_eq!(n, 1);
    }

    /// A datagram with a false start, a MAVLink 1 frame and a MAVLink 2
    /// frame gives both frames; a MAVLink 1 frame cannot be signed, so a
    /// signing receiver drops it.
    #[test]
    fn a_datagram_gives_its_v1_and_v2_frames_behind_garbage() {
        let hb = MavMessage::HEARTBEAT(mavlink::dialects::common::HEARTBEAT_DATA::DEFAULT);
        let header = MavHeader {
            system_id: 7,
            component_id: 1,
            sequence: 3,
        };
        let mut datagram = vec![0x01, mavlink::MAV_STX, 0x40, 0x00];
        mavlink::write_v1_msg(&mut datagram, header, &hb).expect("v1");
        Encoder::new(1, 1, None).encode(&Outgoing::Msg(hb.clone()), &mut datagram);
        let mut got = Vec::new();
        let rejected = frames(&datagram, None, |raw| {
            let heartbeat = matches!(decode(raw), Ok(Incoming::Msg(MavMessage::HEARTBEAT(_))));
            got.push((version(raw), heartbeat));
        });
        assert_eq!(rejected, 0);
        assert_eq!(
            got,
            [(MavlinkVersion::V1, true), (MavlinkVersion::V2, true)]
        );
        let check = SigningData::from_config(SigningConfig::new([7; 32], 0, true, false));
        let mut n = 0;
        assert_eq!(frames(&datagram, Some(&check), |_| n += 1), 2);
        assert_eq!(n, 0);
        assert_eq!(frames(&[], None, |_| n += 1), 0);
    }

    /// MAVLink 2 drops a payload's trailing zeros, down to one byte: the
    /// hand-built COMMAND_ACK as the crate builds it, and a zero ACK one
    /// byte long.
    #[test]
    fn unknown_command_ack_payloads_lose_their_trailing_zeros() {
        let typed = Outgoing::Msg(MavMessage::COMMAND_ACK(COMMAND_ACK_DATA {
            command: MavCmd::MAV_CMD_NAV_TAKEOFF,
            result: MavResult::MAV_RESULT_UNSUPPORTED,
            progress: 0,
            result_param2: 0,
            target_system: 0,
            target_component: 0,
        }));
        let hand = |command: u16, result: u8| Outgoing::UnknownCommandAck {
            command,
            result,
            target_system: 0,
            target_component: 0,
        };
        let (mut a, mut b) = (Vec::new(), Vec::new());
        Encoder::new(1, 1, None).encode(&typed, &mut a);
        Encoder::new(1, 1, None).encode(&hand(22, 3), &mut b);
        assert_eq!(a, b);
        assert_eq!(b[1], 3);
        let mut z = Vec::new();
        Encoder::new(1, 1, None).encode(&hand(0, 0), &mut z);
        assert_eq!((z[1], z.len()), (1, 10 + 1 + 2));
        let mut n = 0;
        frames(&z, None, |_| n += 1);
        assert_eq!(n, 1, "CRC of the one-byte frame must check");
    }

    #[test]
    fn stream_keeps_a_split_frame_for_the_next_read() {
        let hb = Outgoing::Msg(MavMessage::HEARTBEAT(
            mavlink::dialects::common::HEARTBEAT_DATA::DEFAULT,
        ));
        let mut enc = Encoder::new(1, 1, None);
        let mut bytes = vec![0x00, 0x13];
        enc.encode(&hb, &mut bytes);
        enc.encode(&hb, &mut bytes);
        // Feed it in 5-byte pieces: both frames come out, nothing twice.
        let mut buf = Vec::new();
        let mut n = 0;
        for chunk in bytes.chunks(5) {
            buf.extend_from_slice(chunk);
            stream_frames(&mut buf, |_| n += 1);
        }
        assert_eq!(n, 2);
        assert!(buf.is_empty());
    }

    /// A stream of MAVLink 1, plain MAVLink 2 and signed MAVLink 2 frames
    /// after three bytes of garbage: every frame comes out, in order, with
    /// exactly those three bytes counted as skipped; whole frames leave
    /// nothing behind and count nothing.
    #[test]
    fn a_stream_of_every_frame_kind_skips_only_its_garbage() {
        let hb = mavlink::dialects::common::HEARTBEAT_DATA::DEFAULT;
        let header = mavlink::MavHeader {
            system_id: 1,
            component_id: 1,
            sequence: 0,
        };
        let mut v1 = Vec::new();
        mavlink::write_v1_msg(&mut v1, header, &MavMessage::HEARTBEAT(hb.clone())).expect("v1");
        let msg = Outgoing::Msg(MavMessage::HEARTBEAT(hb));
        let mut v2 = Vec::new();
        Encoder::new(1, 1, None).encode(&msg, &mut v2);
        let mut signed = Vec::new();
        Encoder::new(1, 1, Some(SigningConfig::new([9; 32], 0, true, false)))
            .encode(&msg, &mut signed);
        assert_eq!(v1.len(), 8 + 9);
        assert_eq!(signed.len(), v2.len() + 13);
        let mut buf = vec![0x00, 0x13, 0x55];
        for frame in [&v1, &v2, &signed, &v1] {
            buf.extend_from_slice(frame);
        }
        let mut got = Vec::new();
        let skipped = stream_frames(&mut buf, |raw| got.push(version(raw)));
        assert_eq!(skipped, 3);
        assert_eq!(
            got,
            [
                MavlinkVersion::V1,
                MavlinkVersion::V2,
                MavlinkVersion::V2,
                MavlinkVersion::V1
            ]
        );
        assert!(buf.is_empty());
        let mut whole = v2.clone();
        assert_eq!(stream_frames(&mut whole, |_| ()), 0);
        assert!(whole.is_empty());
        // A MAVLink 2 frame with a broken CRC is skipped byte by byte (none of
        // its 21 bytes starts another frame), and the frame behind it read.
        let mut bad = v2.clone();
        let n = bad.len();
        bad[n - 2..].copy_from_slice(&[0x00, 0x00]);
        assert_ne!(&bad[n - 2..], &v2[n - 2..]);
        assert!(bad.iter().all(|b| *b != mavlink::MAV_STX) && bad[1..].iter().all(|b| *b != 0xFD));
        bad.extend_from_slice(&v1);
        let mut got = 0;
        assert_eq!(stream_frames(&mut bad, |_| got += 1), 21);
        assert_eq!(got, 1);
        // A MAVLink 1 frame cut one byte short waits for the rest.
        let mut cut = v1[..v1.len() - 1].to_vec();
        assert_eq!(stream_frames(&mut cut, |_| panic!("incomplete")), 0);
        assert_eq!(cut.len(), v1.len() - 1);
    }

    fn gps(fix: FixType, vel: nalgebra::Vector3<f64>, eph: f64) -> GpsSample {
        GpsSample {
            measured: SimTime::ZERO,
            delivered: SimTime::ZERO,
            fix,
            satellites: 9,
            position: GeoPoint::from_deg(47.397_742_1, -8.545_594_46, 488.123_6),
            pos_ned_m: nalgebra::Vector3::zeros(),
            vel_ned_m_s: vel,
            eph_m: eph,
            epv_m: 1.234_6,
        }
    }

    /// GPS_RAW_INT's and HIL_GPS's integers: degrees × 1e7, millimetres,
    /// centimetres (capped at 65534, UINT16_MAX meaning unknown), centidegrees
    /// of course (UINT16_MAX below 0.2 m/s) and MAVLink's fix types.
    #[test]
    fn a_gps_fix_is_scaled_to_mavlinks_integers() {
        let g = gps(
            FixType::Fix3d,
            nalgebra::Vector3::new(3.0, -4.0, 1.0),
            0.876,
        );
        let s = GpsScaled::of(&g);
        assert_eq!((s.lat, s.lon), (473_977_421, -85_455_945));
        assert_eq!(s.alt_mm, 488_124);
        assert_eq!((s.eph_cm, s.epv_cm, s.vel_cm_s), (88, 123, 500));
        // Course: atan2(−4, 3) = 306.87°.
        assert_eq!(s.cog_cdeg, 30_687);
        assert_eq!(s.fix_type, 3);
        // A course just under 360° rounds to 36000, which is 0.
        let north = gps(FixType::Fix2d, nalgebra::Vector3::new(1.0, -1e-6, 0.0), 1e3);
        let s = GpsScaled::of(&north);
        assert_eq!((s.cog_cdeg, s.fix_type, s.eph_cm), (0, 2, 65_534));
        // At 0.2 m/s and below there is no course.
        for (v, cog) in [(0.2, u16::MAX), (0.21, 9_000)] {
            let east = gps(FixType::NoFix, nalgebra::Vector3::new(0.0, v, 0.0), -1.0);
            let s = GpsScaled::of(&east);
            assert_eq!((s.cog_cdeg, s.fix_type, s.eph_cm), (cog, 1, 0), "{v} m/s");
        }
    }

    #[test]
    fn garbage_between_frames_is_skipped() {
        let hb = Outgoing::Msg(MavMessage::HEARTBEAT(
            mavlink::dialects::common::HEARTBEAT_DATA::DEFAULT,
        ));
        let mut enc = Encoder::new(1, 1, None);
        let mut one = Vec::new();
        enc.encode(&hb, &mut one);
        let mut buf = vec![0xFD, 0x09, 0xFE, 0x00, 0x55];
        buf.extend_from_slice(&one);
        buf.extend_from_slice(&one[..one.len() - 4]); // truncated
        buf.extend_from_slice(&[0xFE, 0xFD, 0xFD]);
        buf.extend_from_slice(&one);
        let mut n = 0;
        frames(&buf, None, |_| n += 1);
        assert_eq!(n, 2);
    }
}
