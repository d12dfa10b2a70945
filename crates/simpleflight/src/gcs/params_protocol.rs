//! The MAVLink parameter protocol over SimpleFlight's [`ParamStore`]: the full
//! list streamed at a paced rate, reads by index or name, writes with range
//! checks answered by PARAM_VALUE. Integers travel PX4-style, bytewise: the
//! int32's bit pattern inside the float field, type MAV_PARAM_TYPE_INT32.

use std::time::Duration;

use mavlink::dialects::common::{MavMessage, MavParamType, PARAM_VALUE_DATA};

use crate::params::{ParamKind, ParamStore};

/// Parameters sent per second while streaming the list.
pub const LIST_RATE_HZ: u64 = 400;

/// Whether `name` is an integer parameter.
fn is_int(store: &ParamStore, name: &str) -> bool {
    store.info(name).is_some_and(|i| i.kind == ParamKind::Int)
}

/// The PARAM_VALUE of parameter `index`, if it exists.
pub fn value_message(store: &ParamStore, index: usize) -> Option<MavMessage> {
    let name = store.name(index)?;
    let v = store.get(name)?;
    let (value, kind) = if is_int(store, name) {
        (
            f32::from_bits((v.round() as i32) as u32),
            MavParamType::MAV_PARAM_TYPE_INT32,
        )
    } else {
        (v as f32, MavParamType::MAV_PARAM_TYPE_REAL32)
    };
    Some(MavMessage::PARAM_VALUE(PARAM_VALUE_DATA {
        param_value: value,
        param_count: store.len() as u16,
        param_index: index as u16,
        param_id: name.into(),
        param_type: kind,
    }))
}

/// Decodes a PARAM_SET value for parameter `name` sent as `kind`.
pub fn decode_value(store: &ParamStore, name: &str, value: f32, kind: MavParamType) -> f64 {
    match kind {
        MavParamType::MAV_PARAM_TYPE_INT32 => value.to_bits() as i32 as f64,
        MavParamType::MAV_PARAM_TYPE_UINT32 => value.to_bits() as f64,
        MavParamType::MAV_PARAM_TYPE_INT16 => (value.to_bits() as u16) as i16 as f64,
        MavParamType::MAV_PARAM_TYPE_UINT16 => (value.to_bits() as u16) as f64,
        MavParamType::MAV_PARAM_TYPE_INT8 => (value.to_bits() as u8) as i8 as f64,
        MavParamType::MAV_PARAM_TYPE_UINT8 => (value.to_bits() as u8) as f64,
        // A float for an int parameter: C-cast senders (ArduPilot-style).
        _ if is_int(store, name) && value.fract() == 0.0 => value as f64,
        _ => value as f64,
    }
}

/// A paced PARAM_VALUE stream of the whole list.
#[derive(Debug, Clone, Default)]
pub struct ListStream {
    next: usize,
    started: Option<Duration>,
    sent_at_start: usize,
}

impl ListStream {
    /// Starts (or restarts) the list at link time `now`.
    pub fn start(&mut self, now: Duration) {
        self.next = 0;
        self.started = Some(now);
        self.sent_at_start = 0;
    }

    /// Whether a list is being sent.
    pub fn active(&self) -> bool {
        self.started.is_some()
    }

    /// Sends the parameters due by `now`.
    pub fn poll(&mut self, now: Duration, store: &ParamStore, out: &mut Vec<MavMessage>) {
        let Some(t0) = self.started else {
            return;
        };
        let due =
            ((now.saturating_sub(t0).as_micros() as u64 * LIST_RATE_HZ) / 1_000_000) as usize + 1;
        while self.next < store.len() && self.next < due {
            if let Some(m) = value_message(store, self.next) {
                out.push(m);
            }
            self.next += 1;
        }
        if self.next >= store.len() {
            self.started = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ints_are_bytewise_and_floats_plain() {
        let store = ParamStore::default();
        let i = store.index("SYS_AUTOSTART").unwrap_or(usize::MAX);
        let Some(MavMessage::PARAM_VALUE(v)) = value_message(&store, i) else {
            panic!("no PARAM_VALUE for SYS_AUTOSTART");
        };
        assert_eq!(v.param_type, MavParamType::MAV_PARAM_TYPE_INT32);
        assert_eq!(v.param_value.to_bits() as i32, 4001);
        assert_eq!(
            decode_value(&store, "SYS_AUTOSTART", v.param_value, v.param_type),
            4001.0
        );
        let j = store.index("MIS_TAKEOFF_ALT").unwrap_or(usize::MAX);
        let Some(MavMessage::PARAM_VALUE(f)) = value_message(&store, j) else {
            panic!("no PARAM_VALUE for MIS_TAKEOFF_ALT");
        };
        assert_eq!(f.param_type, MavParamType::MAV_PARAM_TYPE_REAL32);
        assert_eq!(f.param_value, 2.5);
        assert_eq!(f.param_count as usize, store.len());
    }

    #[test]
    fn list_is_paced_and_complete() {
        let store = ParamStore::default();
        let mut s = ListStream::default();
        let mut out = Vec::new();
        s.start(Duration::ZERO);
        s.poll(Duration::ZERO, &store, &mut out);
        assert_eq!(out.len(), 1);
        s.poll(Duration::from_millis(10), &store, &mut out);
        assert_eq!(out.len(), 5);
        s.poll(Duration::from_secs(10), &store, &mut out);
        assert_eq!(out.len(), store.len());
        assert!(!s.active());
        let mut idx: Vec<u16> = out
            .iter()
            .filter_map(|m| match m {
                MavMessage::PARAM_VALUE(v) => Some(v.param_index),
                _ => None,
            })
            .collect();
        idx.dedup();
        assert_eq!(idx.len(), store.len());
    }
}
