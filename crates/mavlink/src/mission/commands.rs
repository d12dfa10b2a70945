//! MAV_CMD numbers SimpleFlight meets in missions, their names, and what it does
//! with each: fly it, skip it with a warning, or refuse the mission. The
//! numbers come from the `mavlink` crate's `MavCmd`.

use mavlink::dialects::common::MavCmd;
use num_traits::FromPrimitive;

/// MAV_CMD_NAV_WAYPOINT.
pub const NAV_WAYPOINT: u16 = MavCmd::MAV_CMD_NAV_WAYPOINT as u16;
/// MAV_CMD_NAV_LOITER_UNLIM.
pub const NAV_LOITER_UNLIM: u16 = MavCmd::MAV_CMD_NAV_LOITER_UNLIM as u16;
/// MAV_CMD_NAV_LOITER_TURNS.
pub const NAV_LOITER_TURNS: u16 = MavCmd::MAV_CMD_NAV_LOITER_TURNS as u16;
/// MAV_CMD_NAV_LOITER_TIME.
pub const NAV_LOITER_TIME: u16 = MavCmd::MAV_CMD_NAV_LOITER_TIME as u16;
/// MAV_CMD_NAV_RETURN_TO_LAUNCH.
pub const NAV_RETURN_TO_LAUNCH: u16 = MavCmd::MAV_CMD_NAV_RETURN_TO_LAUNCH as u16;
/// MAV_CMD_NAV_LAND.
pub const NAV_LAND: u16 = MavCmd::MAV_CMD_NAV_LAND as u16;
/// MAV_CMD_NAV_TAKEOFF.
pub const NAV_TAKEOFF: u16 = MavCmd::MAV_CMD_NAV_TAKEOFF as u16;
/// MAV_CMD_NAV_SPLINE_WAYPOINT.
pub const NAV_SPLINE_WAYPOINT: u16 = MavCmd::MAV_CMD_NAV_SPLINE_WAYPOINT as u16;
/// MAV_CMD_NAV_DELAY.
pub const NAV_DELAY: u16 = MavCmd::MAV_CMD_NAV_DELAY as u16;
/// MAV_CMD_DO_JUMP.
pub const DO_JUMP: u16 = MavCmd::MAV_CMD_DO_JUMP as u16;
/// MAV_CMD_DO_CHANGE_SPEED.
pub const DO_CHANGE_SPEED: u16 = MavCmd::MAV_CMD_DO_CHANGE_SPEED as u16;
/// MAV_CMD_DO_SET_HOME.
pub const DO_SET_HOME: u16 = MavCmd::MAV_CMD_DO_SET_HOME as u16;
/// MAV_CMD_NAV_FENCE_RETURN_POINT.
pub const NAV_FENCE_RETURN_POINT: u16 = MavCmd::MAV_CMD_NAV_FENCE_RETURN_POINT as u16;
/// MAV_CMD_NAV_FENCE_POLYGON_VERTEX_INCLUSION.
pub const NAV_FENCE_POLYGON_VERTEX_INCLUSION: u16 =
    MavCmd::MAV_CMD_NAV_FENCE_POLYGON_VERTEX_INCLUSION as u16;
/// MAV_CMD_NAV_FENCE_POLYGON_VERTEX_EXCLUSION.
pub const NAV_FENCE_POLYGON_VERTEX_EXCLUSION: u16 =
    MavCmd::MAV_CMD_NAV_FENCE_POLYGON_VERTEX_EXCLUSION as u16;
/// MAV_CMD_NAV_FENCE_CIRCLE_INCLUSION.
pub const NAV_FENCE_CIRCLE_INCLUSION: u16 = MavCmd::MAV_CMD_NAV_FENCE_CIRCLE_INCLUSION as u16;
/// MAV_CMD_NAV_FENCE_CIRCLE_EXCLUSION.
pub const NAV_FENCE_CIRCLE_EXCLUSION: u16 = MavCmd::MAV_CMD_NAV_FENCE_CIRCLE_EXCLUSION as u16;
/// MAV_CMD_NAV_RALLY_POINT.
pub const NAV_RALLY_POINT: u16 = MavCmd::MAV_CMD_NAV_RALLY_POINT as u16;

// Commands (not mission items) a vehicle answers, and mission items it refuses.
/// MAV_CMD_COMPONENT_ARM_DISARM.
#[allow(deprecated)]
pub const COMPONENT_ARM_DISARM: u16 = MavCmd::MAV_CMD_COMPONENT_ARM_DISARM as u16;
/// MAV_CMD_MISSION_START.
#[allow(deprecated)]
pub const MISSION_START: u16 = MavCmd::MAV_CMD_MISSION_START as u16;
/// MAV_CMD_DO_SET_MODE.
#[allow(deprecated)]
pub const DO_SET_MODE: u16 = MavCmd::MAV_CMD_DO_SET_MODE as u16;
/// MAV_CMD_DO_REPOSITION.
#[allow(deprecated)]
pub const DO_REPOSITION: u16 = MavCmd::MAV_CMD_DO_REPOSITION as u16;
/// MAV_CMD_DO_SET_MISSION_CURRENT.
#[allow(deprecated)]
pub const DO_SET_MISSION_CURRENT: u16 = MavCmd::MAV_CMD_DO_SET_MISSION_CURRENT as u16;
/// MAV_CMD_REQUEST_MESSAGE.
#[allow(deprecated)]
pub const REQUEST_MESSAGE: u16 = MavCmd::MAV_CMD_REQUEST_MESSAGE as u16;
/// MAV_CMD_REQUEST_AUTOPILOT_CAPABILITIES.
#[allow(deprecated)]
pub const REQUEST_AUTOPILOT_CAPABILITIES: u16 =
    MavCmd::MAV_CMD_REQUEST_AUTOPILOT_CAPABILITIES as u16;
/// MAV_CMD_REQUEST_PROTOCOL_VERSION.
#[allow(deprecated)]
pub const REQUEST_PROTOCOL_VERSION: u16 = MavCmd::MAV_CMD_REQUEST_PROTOCOL_VERSION as u16;
/// MAV_CMD_GET_HOME_POSITION.
#[allow(deprecated)]
pub const GET_HOME_POSITION: u16 = MavCmd::MAV_CMD_GET_HOME_POSITION as u16;
/// MAV_CMD_SET_MESSAGE_INTERVAL.
#[allow(deprecated)]
pub const SET_MESSAGE_INTERVAL: u16 = MavCmd::MAV_CMD_SET_MESSAGE_INTERVAL as u16;
/// MAV_CMD_PREFLIGHT_REBOOT_SHUTDOWN.
#[allow(deprecated)]
pub const PREFLIGHT_REBOOT_SHUTDOWN: u16 = MavCmd::MAV_CMD_PREFLIGHT_REBOOT_SHUTDOWN as u16;
/// MAV_CMD_DO_LAND_START.
#[allow(deprecated)]
pub const DO_LAND_START: u16 = MavCmd::MAV_CMD_DO_LAND_START as u16;
/// MAV_CMD_DO_GO_AROUND.
#[allow(deprecated)]
pub const DO_GO_AROUND: u16 = MavCmd::MAV_CMD_DO_GO_AROUND as u16;
/// MAV_CMD_DO_GRIPPER.
#[allow(deprecated)]
pub const DO_GRIPPER: u16 = MavCmd::MAV_CMD_DO_GRIPPER as u16;
/// MAV_CMD_DO_VTOL_TRANSITION.
#[allow(deprecated)]
pub const DO_VTOL_TRANSITION: u16 = MavCmd::MAV_CMD_DO_VTOL_TRANSITION as u16;
/// MAV_CMD_DO_WINCH.
#[allow(deprecated)]
pub const DO_WINCH: u16 = MavCmd::MAV_CMD_DO_WINCH as u16;

/// What SimpleFlight does with a command in a mission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    /// Flown as specified.
    Flown,
    /// Not supported; harmless to skip (cameras, gimbals, servos, …): skipped
    /// with a warning.
    Skipped,
    /// Not supported and it moves the vehicle or changes its course: skipping it
    /// would fly a different route, so the mission is refused.
    Refused,
}

/// How SimpleFlight treats `command`.
pub fn classify(command: u16) -> Support {
    match command {
        NAV_WAYPOINT | NAV_LOITER_UNLIM | NAV_LOITER_TIME | NAV_RETURN_TO_LAUNCH | NAV_LAND
        | NAV_TAKEOFF | NAV_DELAY | DO_JUMP | DO_CHANGE_SPEED | DO_SET_HOME => Support::Flown,
        // Navigation commands (MAV_CMD 16–99) move the vehicle.
        16..=99 => Support::Refused,
        // VTOL transitions, landing sequences, payload placement, and the like.
        DO_VTOL_TRANSITION | DO_LAND_START | DO_GO_AROUND | DO_GRIPPER | DO_WINCH => {
            Support::Refused
        }
        _ => Support::Skipped,
    }
}

/// The MAV_CMD name of `command` (the `mavlink` crate's), or
/// `MAV_CMD_<number>` for one the common dialect does not define.
pub fn command_name(command: u16) -> String {
    match MavCmd::from_u32(u32::from(command)) {
        Some(c) => format!("{c:?}"),
        None => format!("MAV_CMD_{command}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification() {
        assert_eq!(classify(NAV_WAYPOINT), Support::Flown);
        assert_eq!(classify(DO_JUMP), Support::Flown);
        assert_eq!(classify(206), Support::Skipped, "camera trigger distance");
        assert_eq!(classify(2000), Support::Skipped);
        assert_eq!(classify(NAV_LOITER_TURNS), Support::Refused);
        assert_eq!(classify(85), Support::Refused);
        assert_eq!(classify(3000), Support::Refused);
        assert_eq!(command_name(16), "MAV_CMD_NAV_WAYPOINT");
        assert_eq!(command_name(4242), "MAV_CMD_4242");
    }
}
