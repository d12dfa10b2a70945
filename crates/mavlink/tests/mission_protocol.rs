//! The vehicle side of the mission protocol against a simulated ground
//! station over a lossy link, in simulated time: whatever is lost, the stored
//! list is always either the old one or exactly the new one, and with loss up
//! to 30 % each way the upload completes.

use std::collections::VecDeque;
use std::time::Duration;

use mavlink::dialects::common::{MavMessage, MavMissionResult};
use mavsitl_mavlink::mission_protocol::{ListType, MissionProtocol, Outcome, StoredItem, Stores};
use mavsitl_mavlink::wire::MissionItemIn;
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const GCS: (u8, u8) = (255, 190);
const STEP: Duration = Duration::from_millis(20);

fn item(seq: u16, salt: u32) -> MissionItemIn {
    MissionItemIn {
        seq,
        command: 16,
        frame: 6,
        params: [0.0, 1.0 + (salt % 7) as f32, 0.0, 0.0],
        x: 473_977_420.0 + (seq as f64) * 100.0 + salt as f64,
        y: 85_455_940.0 - (seq as f64) * 100.0,
        z: 10.0 + seq as f32,
        current: (seq == 0) as u8,
        autocontinue: 1,
        mission_type: 0,
        target_system: 1,
        target_component: 1,
        is_int: true,
    }
}

/// What the GCS sends.
enum Up {
    Count(u16),
    Item(u16),
}

/// Runs one upload of `n` items with loss `p`; returns the GCS's final result
/// (None: it gave up) and the stored list's length, checking atomicity at
/// every step.
fn run(n: u16, p: f64, seed: u64, cancel_after: Option<u16>) -> (Option<MavMissionResult>, usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut proto = MissionProtocol::new(1, 1);
    let mut stores = Stores::default();
    let old: Vec<StoredItem> = Vec::new();
    let salt = (seed % 1000) as u32 + 1;
    let new: Vec<MissionItemIn> = (0..n).map(|s| item(s, salt)).collect();
    let mut up: VecDeque<Up> = VecDeque::from([Up::Count(n)]);
    let mut down: VecDeque<MavMessage> = VecDeque::new();
    let mut now = Duration::ZERO;
    let mut last_heard = now;
    let mut last_item: Option<u16> = None;
    let mut sent_items = 0u16;
    for _ in 0..(180_000 / STEP.as_millis() as u64) {
        now += STEP;
        // Uplink.
        while let Some(m) = up.pop_front() {
            if rng.random::<f64>() < p {
                continue;
            }
            let mut out = Vec::new();
            let o = match m {
                Up::Count(c) => proto.on_count(now, GCS, c, 0, &mut stores, &mut out),
                Up::Item(s) => {
                    let Some(it) = new.get(s as usize) else {
                        continue;
                    };
                    proto.on_item(now, GCS, it, &mut stores, |_, _| Ok(()), &mut out)
                }
            };
            if let Outcome::Stored(l) = o {
                assert_eq!(l, ListType::Mission);
            }
            down.extend(out);
        }
        let mut out = Vec::new();
        proto.poll(now, &mut out);
        down.extend(out);
        // Atomic: the stored list is the old one or exactly the new one.
        let stored = stores.list(ListType::Mission);
        let whole_new = stored.len() == new.len()
            && stored
                .iter()
                .zip(&new)
                .all(|(s, w)| s.x == w.x as i32 && s.z == w.z && s.params == w.params);
        assert!(stored == &old[..] || whole_new, "partial list stored");
        // Downlink and the GCS.
        while let Some(m) = down.pop_front() {
            if rng.random::<f64>() < p {
                continue;
            }
            last_heard = now;
            match m {
                MavMessage::MISSION_REQUEST_INT(r) => {
                    if cancel_after.is_some_and(|c| sent_items >= c) {
                        // The operator cancels: the vehicle must keep the old list.
                        let _ = proto.on_ack(GCS);
                        return (
                            Some(MavMissionResult::MAV_MISSION_OPERATION_CANCELLED),
                            stores.list(ListType::Mission).len(),
                        );
                    }
                    up.push_back(Up::Item(r.seq));
                    last_item = Some(r.seq);
                    sent_items += 1;
                }
                MavMessage::MISSION_ACK(a) => {
                    if last_item.is_none() && a.mavtype == MavMissionResult::MAV_MISSION_ACCEPTED {
                        continue; // stale
                    }
                    if a.mavtype == MavMissionResult::MAV_MISSION_OPERATION_CANCELLED {
                        // The vehicle gave up: start over, as a GCS does.
                        up.push_back(Up::Count(n));
                        last_item = None;
                        continue;
                    }
                    return (Some(a.mavtype), stores.list(ListType::Mission).len());
                }
                _ => {}
            }
        }
        if now.saturating_sub(last_heard) >= Duration::from_millis(500) {
            last_heard = now;
            up.push_back(match last_item {
                None => Up::Count(n),
                Some(s) => Up::Item(s),
            });
        }
    }
    (None, stores.list(ListType::Mission).len())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, rng_seed: proptest::test_runner::RngSeed::Fixed(11), ..ProptestConfig::default() })]

    #[test]
    fn uploads_complete_and_stay_atomic_under_loss(n in 1u16..60, p in 0.0f64..0.3, seed in any::<u64>()) {
        let (r, stored) = run(n, p, seed, None);
        prop_assert_eq!(r, Some(MavMissionResult::MAV_MISSION_ACCEPTED));
        prop_assert_eq!(stored, n as usize);
    }

    #[test]
    fn cancelled_uploads_never_store(n in 2u16..40, p in 0.0f64..0.3, seed in any::<u64>(), at in 0u16..40) {
        let at = at % n;
        let (r, stored) = run(n, p, seed, Some(at));
        prop_assert_eq!(r, Some(MavMissionResult::MAV_MISSION_OPERATION_CANCELLED));
        prop_assert_eq!(stored, 0, "a cancelled upload stored something");
    }
}

#[test]
fn heavy_loss_still_never_stores_a_partial_list() {
    for seed in 0..20 {
        // 60 % loss: may not finish, must never store part of the list.
        let (r, stored) = run(30, 0.6, seed, None);
        assert!(stored == 0 || stored == 30, "{stored} of 30 stored");
        if r == Some(MavMissionResult::MAV_MISSION_ACCEPTED) {
            assert_eq!(stored, 30);
        }
    }
}
