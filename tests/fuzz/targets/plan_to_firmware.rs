//! A QGroundControl plan translated for each firmware's mission upload: the
//! stored (int) form and the parameters ArduPilot and PX4 take. ArduPilot's
//! never carry a NaN where its AP_Mission::sanity_check_params refuses one.

use mavsitl::bridge::ground_station::Firmware;
use mavsitl::mission::Mission;
use mavsitl::mission_protocol::StoredItem;

/// Feeds one input.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(m) = Mission::parse(text, "fuzz.plan") else {
        return;
    };
    for it in &m.items {
        let s = StoredItem::from_mission_item(it);
        for fw in [Firmware::Px4, Firmware::ArduCopter, Firmware::ArduRover] {
            let (params, changed) = fw.mission_params(s.command, s.params);
            if fw != Firmware::Px4 {
                let nan_ok: &[usize] = match s.command {
                    16 | 17 | 21 | 22 | 84 => &[3],
                    85 => &[2, 3],
                    _ => &[],
                };
                for (i, p) in params.iter().enumerate() {
                    assert!(!p.is_nan() || nan_ok.contains(&i), "{i} {params:?}");
                }
            } else {
                assert!(changed.is_empty());
            }
        }
    }
}
