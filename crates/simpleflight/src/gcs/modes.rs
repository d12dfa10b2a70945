//! PX4's mode encoding: `custom_mode` = main mode << 16 | sub mode << 24, and
//! the `base_mode` flags PX4 sets for each (PX4 `px4_custom_mode.h`,
//! `HEARTBEAT.hpp`), so QGroundControl, MAVSDK, MAVProxy and pymavlink show
//! SimpleFlight's modes by their PX4 names.

use crate::FlightMode;

/// PX4 main modes.
pub mod main {
    /// MANUAL.
    pub const MANUAL: u8 = 1;
    /// ALTCTL.
    pub const ALTCTL: u8 = 2;
    /// POSCTL.
    pub const POSCTL: u8 = 3;
    /// AUTO.
    pub const AUTO: u8 = 4;
    /// OFFBOARD.
    pub const OFFBOARD: u8 = 6;
    /// STABILIZED.
    pub const STABILIZED: u8 = 7;
}

/// PX4 AUTO sub-modes.
pub mod auto {
    /// READY.
    pub const READY: u8 = 1;
    /// TAKEOFF.
    pub const TAKEOFF: u8 = 2;
    /// LOITER (Hold).
    pub const LOITER: u8 = 3;
    /// MISSION.
    pub const MISSION: u8 = 4;
    /// RTL.
    pub const RTL: u8 = 5;
    /// LAND.
    pub const LAND: u8 = 6;
}

/// base_mode: a custom mode is in use.
pub const CUSTOM_MODE_ENABLED: u8 = 1;
/// base_mode: auto.
pub const AUTO_ENABLED: u8 = 4;
/// base_mode: guided.
pub const GUIDED_ENABLED: u8 = 8;
/// base_mode: stabilised.
pub const STABILIZE_ENABLED: u8 = 16;
/// base_mode: manual input.
pub const MANUAL_INPUT_ENABLED: u8 = 64;
/// base_mode: armed.
pub const SAFETY_ARMED: u8 = 128;

/// PX4 (main, sub) of a SimpleFlight mode.
pub fn px4_mode(mode: FlightMode) -> (u8, u8) {
    match mode {
        FlightMode::Manual => (main::MANUAL, 0),
        FlightMode::Hold => (main::AUTO, auto::LOITER),
        FlightMode::Takeoff => (main::AUTO, auto::TAKEOFF),
        FlightMode::Mission => (main::AUTO, auto::MISSION),
        FlightMode::Return => (main::AUTO, auto::RTL),
        FlightMode::Land => (main::AUTO, auto::LAND),
        FlightMode::Offboard => (main::OFFBOARD, 0),
    }
}

/// PX4 custom_mode of a SimpleFlight mode.
pub fn custom_mode(mode: FlightMode) -> u32 {
    let (m, s) = px4_mode(mode);
    (m as u32) << 16 | (s as u32) << 24
}

/// PX4 base_mode flags for `mode`, armed or not.
pub fn base_mode(mode: FlightMode, armed: bool) -> u8 {
    let (m, _) = px4_mode(mode);
    let mut b = CUSTOM_MODE_ENABLED;
    b |= match m {
        main::MANUAL => MANUAL_INPUT_ENABLED,
        main::AUTO => AUTO_ENABLED | STABILIZE_ENABLED | GUIDED_ENABLED,
        main::OFFBOARD => STABILIZE_ENABLED | GUIDED_ENABLED,
        _ => STABILIZE_ENABLED,
    };
    if armed {
        b |= SAFETY_ARMED;
    }
    b
}

/// The SimpleFlight mode a PX4 (main, sub) pair asks for, if it flies one.
/// Position and Altitude (what QGroundControl offers for "stop here") map to
/// Hold, as SimpleFlight flies no manual modes headless.
pub fn from_px4(main_mode: u8, sub_mode: u8) -> Option<FlightMode> {
    match (main_mode, sub_mode) {
        (main::AUTO, auto::LOITER) | (main::AUTO, auto::READY) => Some(FlightMode::Hold),
        (main::AUTO, auto::TAKEOFF) => Some(FlightMode::Takeoff),
        (main::AUTO, auto::MISSION) => Some(FlightMode::Mission),
        (main::AUTO, auto::RTL) => Some(FlightMode::Return),
        (main::AUTO, auto::LAND) => Some(FlightMode::Land),
        (main::POSCTL, _) | (main::ALTCTL, _) => Some(FlightMode::Hold),
        _ => None,
    }
}

/// The SimpleFlight mode a custom_mode value asks for.
pub fn from_custom_mode(custom_mode: u32) -> Option<FlightMode> {
    from_px4((custom_mode >> 16) as u8, (custom_mode >> 24) as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_px4_custom_mode_table() {
        // The values QGroundControl and pymavlink decode (PX4 px4_custom_mode.h).
        assert_eq!(custom_mode(FlightMode::Takeoff), 33_816_576);
        assert_eq!(custom_mode(FlightMode::Hold), 50_593_792);
        assert_eq!(custom_mode(FlightMode::Mission), 67_371_008);
        assert_eq!(custom_mode(FlightMode::Return), 84_148_224);
        assert_eq!(custom_mode(FlightMode::Land), 100_925_440);
        assert_eq!(custom_mode(FlightMode::Offboard), 393_216);
        assert_eq!(custom_mode(FlightMode::Manual), 65_536);
        // Armed in Mission is 157 in PX4's heartbeat.
        assert_eq!(base_mode(FlightMode::Mission, true), 157);
        assert_eq!(base_mode(FlightMode::Mission, false), 29);
    }

    #[test]
    fn round_trips_every_auto_mode() {
        for m in [
            FlightMode::Hold,
            FlightMode::Takeoff,
            FlightMode::Mission,
            FlightMode::Return,
            FlightMode::Land,
        ] {
            assert_eq!(from_custom_mode(custom_mode(m)), Some(m));
        }
        assert_eq!(from_px4(3, 0), Some(FlightMode::Hold));
        assert_eq!(from_px4(5, 0), None); // ACRO: not flown
    }
}
