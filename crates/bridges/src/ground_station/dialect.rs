//! What differs between PX4 and ArduPilot for a ground station that flies a
//! mission: who they say they are, their mode numbers, how a mission is
//! started, and how the mission list is numbered.

use mavlink::dialects::common::{MavAutopilot, MavType};

/// The firmware on the other end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Firmware {
    /// PX4 (any vehicle).
    Px4,
    /// ArduPilot Copter.
    ArduCopter,
    /// ArduPilot Rover (boats are Rover with FRAME_CLASS 2).
    ArduRover,
}

use mavsitl_core::faults::FaultKind;
use mavsitl_core::vehicle::VehicleKind;

impl Firmware {
    /// The firmware's own simulation parameter that makes its simulated
    /// sensor suffer `kind`, with its value while the fault is `active` and
    /// after. ArduPilot's JSON backend simulates GPS itself (from the
    /// position mavsitl sends), so a GPS fault reaches it through
    /// `SIM_GPS1_*`, as its autotest injects them; PX4 takes its GPS from
    /// mavsitl and needs none.
    pub fn sim_param_for(self, kind: FaultKind, active: bool) -> Option<(&'static str, f32)> {
        if self == Firmware::Px4 {
            return None;
        }
        match kind {
            FaultKind::GpsLoss => Some(("SIM_GPS1_ENABLE", if active { 0.0 } else { 1.0 })),
            FaultKind::GpsJamming => Some(("SIM_GPS1_JAM", if active { 1.0 } else { 0.0 })),
            _ => None,
        }
    }

    /// `params` (param1..4 of an item of command `command`) as this firmware
    /// takes them, and which (0-based) were changed. QGroundControl writes
    /// `null` (NaN) for a parameter it leaves alone; PX4 takes NaN anywhere,
    /// ArduPilot's `AP_Mission::sanity_check_params` refuses it everywhere
    /// but param 4 of NAV_WAYPOINT, NAV_LOITER_UNLIM, NAV_LAND, NAV_TAKEOFF
    /// and NAV_VTOL_TAKEOFF and params 3–4 of NAV_VTOL_LAND — the upload
    /// then fails with MAV_MISSION_INVALID_PARAMn. For ArduPilot those NaNs
    /// become 0, which its commands read as "not set".
    pub fn mission_params(self, command: u16, params: [f32; 4]) -> ([f32; 4], Vec<usize>) {
        if self == Firmware::Px4 {
            return (params, Vec::new());
        }
        let nan_ok: &[usize] = match command {
            16 | 17 | 21 | 22 | 84 => &[3],
            85 => &[2, 3],
            _ => &[],
        };
        let mut out = params;
        let mut changed = Vec::new();
        for (i, p) in out.iter_mut().enumerate() {
            if p.is_nan() && !nan_ok.contains(&i) {
                *p = 0.0;
                changed.push(i);
            }
        }
        (out, changed)
    }

    /// The name for messages.
    pub fn name(self) -> &'static str {
        match self {
            Firmware::Px4 => "PX4",
            Firmware::ArduCopter | Firmware::ArduRover => "ArduPilot",
        }
    }

    /// The autopilot its HEARTBEAT names.
    pub fn autopilot(self) -> MavAutopilot {
        match self {
            Firmware::Px4 => MavAutopilot::MAV_AUTOPILOT_PX4,
            Firmware::ArduCopter | Firmware::ArduRover => MavAutopilot::MAV_AUTOPILOT_ARDUPILOTMEGA,
        }
    }

    /// Whether ArduPilot's mission numbering applies: item 0 is home, the
    /// plan's items follow from 1.
    pub fn home_is_item_zero(self) -> bool {
        !matches!(self, Firmware::Px4)
    }

    /// `params` of a plan item as this firmware stores them:
    /// [`Firmware::mission_params`], and a DO_JUMP's target (param 1, an
    /// index into the plan's items) moved up by one where home is item 0.
    pub fn upload_params(self, command: u16, params: [f32; 4]) -> [f32; 4] {
        let mut p = self.mission_params(command, params).0;
        if command == mavsitl_mavlink::mission::commands::DO_JUMP && self.home_is_item_zero() {
            p[0] += 1.0;
        }
        p
    }

    /// The name of a HEARTBEAT `custom_mode`.
    pub fn mode_name(self, custom_mode: u32) -> String {
        let name = match self {
            Firmware::Px4 => px4_mode_name(custom_mode),
            Firmware::ArduCopter => copter_mode_name(custom_mode),
            Firmware::ArduRover => rover_mode_name(custom_mode),
        };
        name.map_or_else(|| format!("mode {custom_mode}"), str::to_string)
    }

    /// The `custom_mode` of the mission mode (PX4 AUTO.MISSION, ArduPilot AUTO).
    pub fn mission_mode(self) -> u32 {
        match self {
            Firmware::Px4 => px4_custom_mode(4, 4),
            Firmware::ArduCopter => 3,
            Firmware::ArduRover => 10,
        }
    }

    /// The mode to arm in before the mission starts: PX4 arms in the mode it
    /// is in (Hold), as MAVSDK does; Copter arms in GUIDED (MAV_CMD_MISSION_START
    /// then takes off without raising the throttle), Rover in HOLD.
    pub fn arming_mode(self) -> Option<u32> {
        match self {
            Firmware::Px4 => None,
            Firmware::ArduCopter => Some(4),
            Firmware::ArduRover => Some(4),
        }
    }

    /// Whether a HEARTBEAT's `mavtype` is the kind of vehicle simulated.
    pub fn type_matches(self, t: MavType, kind: VehicleKind) -> bool {
        let copter = matches!(
            t,
            MavType::MAV_TYPE_QUADROTOR
                | MavType::MAV_TYPE_HEXAROTOR
                | MavType::MAV_TYPE_OCTOROTOR
                | MavType::MAV_TYPE_TRICOPTER
                | MavType::MAV_TYPE_COAXIAL
                | MavType::MAV_TYPE_HELICOPTER
                | MavType::MAV_TYPE_DODECAROTOR
                | MavType::MAV_TYPE_DECAROTOR
        );
        let surface = matches!(
            t,
            MavType::MAV_TYPE_SURFACE_BOAT | MavType::MAV_TYPE_GROUND_ROVER
        );
        match kind {
            VehicleKind::Multirotor => copter,
            VehicleKind::Boat | VehicleKind::Rover => surface,
        }
    }
}

/// PX4's custom mode from its main and sub mode (px4_custom_mode.h: main in
/// byte 2, sub in byte 3).
pub fn px4_custom_mode(main: u8, sub: u8) -> u32 {
    ((main as u32) << 16) | ((sub as u32) << 24)
}

fn px4_mode_name(custom_mode: u32) -> Option<&'static str> {
    let main = (custom_mode >> 16) & 0xff;
    let sub = (custom_mode >> 24) & 0xff;
    Some(match (main, sub) {
        (1, _) => "MANUAL",
        (2, _) => "ALTCTL",
        (3, _) => "POSCTL",
        (4, 1) => "AUTO.READY",
        (4, 2) => "AUTO.TAKEOFF",
        (4, 3) => "AUTO.LOITER",
        (4, 4) => "AUTO.MISSION",
        (4, 5) => "AUTO.RTL",
        (4, 6) => "AUTO.LAND",
        (4, 8) => "AUTO.FOLLOW_TARGET",
        (4, 9) => "AUTO.PRECLAND",
        (5, _) => "ACRO",
        (6, _) => "OFFBOARD",
        (7, _) => "STABILIZED",
        _ => return None,
    })
}

fn copter_mode_name(m: u32) -> Option<&'static str> {
    Some(match m {
        0 => "STABILIZE",
        1 => "ACRO",
        2 => "ALT_HOLD",
        3 => "AUTO",
        4 => "GUIDED",
        5 => "LOITER",
        6 => "RTL",
        7 => "CIRCLE",
        9 => "LAND",
        16 => "POSHOLD",
        17 => "BRAKE",
        21 => "SMART_RTL",
        27 => "AUTO_RTL",
        _ => return None,
    })
}

fn rover_mode_name(m: u32) -> Option<&'static str> {
    Some(match m {
        0 => "MANUAL",
        1 => "ACRO",
        3 => "STEERING",
        4 => "HOLD",
        5 => "LOITER",
        6 => "FOLLOW",
        7 => "SIMPLE",
        8 => "DOCK",
        9 => "CIRCLE",
        10 => "AUTO",
        11 => "RTL",
        12 => "SMART_RTL",
        15 => "GUIDED",
        16 => "INITIALISING",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_numbers_are_the_firmwares() {
        // PX4 AUTO.MISSION as PX4 SITL reports it in HEARTBEAT.custom_mode.
        assert_eq!(Firmware::Px4.mission_mode(), 0x0404_0000);
        assert_eq!(Firmware::Px4.mode_name(0x0404_0000), "AUTO.MISSION");
        assert_eq!(Firmware::Px4.mode_name(0x0003_0000), "POSCTL");
        assert_eq!(Firmware::Px4.mode_name(0x0304_0000), "AUTO.LOITER");
        assert_eq!(Firmware::ArduCopter.mode_name(3), "AUTO");
        assert_eq!(Firmware::ArduRover.mode_name(10), "AUTO");
        assert_eq!(Firmware::ArduRover.mode_name(42), "mode 42");
        assert!(Firmware::ArduRover.home_is_item_zero() && !Firmware::Px4.home_is_item_zero());
    }

    #[test]
    fn gps_faults_reach_ardupilot_through_its_own_gps_simulation() {
        // SIM_GPS1_ENABLE and SIM_GPS1_JAM as libraries/SITL/SIM_GPS.cpp
        // names them; PX4 takes mavsitl's GPS and needs nothing.
        let ap = Firmware::ArduCopter;
        assert_eq!(
            ap.sim_param_for(FaultKind::GpsLoss, true),
            Some(("SIM_GPS1_ENABLE", 0.0))
        );
        assert_eq!(
            ap.sim_param_for(FaultKind::GpsLoss, false),
            Some(("SIM_GPS1_ENABLE", 1.0))
        );
        assert_eq!(
            ap.sim_param_for(FaultKind::GpsJamming, true),
            Some(("SIM_GPS1_JAM", 1.0))
        );
        assert_eq!(Firmware::Px4.sim_param_for(FaultKind::GpsLoss, true), None);
        assert_eq!(ap.sim_param_for(FaultKind::MotorFailure, true), None);
    }

    #[test]
    fn vehicle_types() {
        assert!(
            Firmware::ArduCopter.type_matches(MavType::MAV_TYPE_QUADROTOR, VehicleKind::Multirotor)
        );
        assert!(!Firmware::ArduRover.type_matches(MavType::MAV_TYPE_QUADROTOR, VehicleKind::Boat));
        assert!(Firmware::Px4.type_matches(MavType::MAV_TYPE_GROUND_ROVER, VehicleKind::Boat));
        assert!(!Firmware::ArduCopter
            .type_matches(MavType::MAV_TYPE_SURFACE_BOAT, VehicleKind::Multirotor));
    }
}
