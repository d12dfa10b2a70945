//! MAV_CMD numbers SimpleFlight meets in missions, their names, and what it does
//! with each: fly it, skip it with a warning, or refuse the mission.

/// MAV_CMD_NAV_WAYPOINT.
pub const NAV_WAYPOINT: u16 = 16;
/// MAV_CMD_NAV_LOITER_UNLIM.
pub const NAV_LOITER_UNLIM: u16 = 17;
/// MAV_CMD_NAV_LOITER_TURNS.
pub const NAV_LOITER_TURNS: u16 = 18;
/// MAV_CMD_NAV_LOITER_TIME.
pub const NAV_LOITER_TIME: u16 = 19;
/// MAV_CMD_NAV_RETURN_TO_LAUNCH.
pub const NAV_RETURN_TO_LAUNCH: u16 = 20;
/// MAV_CMD_NAV_LAND.
pub const NAV_LAND: u16 = 21;
/// MAV_CMD_NAV_TAKEOFF.
pub const NAV_TAKEOFF: u16 = 22;
/// MAV_CMD_NAV_SPLINE_WAYPOINT.
pub const NAV_SPLINE_WAYPOINT: u16 = 82;
/// MAV_CMD_NAV_DELAY.
pub const NAV_DELAY: u16 = 93;
/// MAV_CMD_DO_JUMP.
pub const DO_JUMP: u16 = 177;
/// MAV_CMD_DO_CHANGE_SPEED.
pub const DO_CHANGE_SPEED: u16 = 178;
/// MAV_CMD_DO_SET_HOME.
pub const DO_SET_HOME: u16 = 179;
/// MAV_CMD_NAV_FENCE_RETURN_POINT.
pub const NAV_FENCE_RETURN_POINT: u16 = 5000;
/// MAV_CMD_NAV_FENCE_POLYGON_VERTEX_INCLUSION.
pub const NAV_FENCE_POLYGON_VERTEX_INCLUSION: u16 = 5001;
/// MAV_CMD_NAV_FENCE_POLYGON_VERTEX_EXCLUSION.
pub const NAV_FENCE_POLYGON_VERTEX_EXCLUSION: u16 = 5002;
/// MAV_CMD_NAV_FENCE_CIRCLE_INCLUSION.
pub const NAV_FENCE_CIRCLE_INCLUSION: u16 = 5003;
/// MAV_CMD_NAV_FENCE_CIRCLE_EXCLUSION.
pub const NAV_FENCE_CIRCLE_EXCLUSION: u16 = 5004;
/// MAV_CMD_NAV_RALLY_POINT.
pub const NAV_RALLY_POINT: u16 = 5100;

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
        3000 | 189 | 191 | 211 | 30001 => Support::Refused,
        _ => Support::Skipped,
    }
}

/// The MAV_CMD name of `command` (or `MAV_CMD_<number>`).
pub fn command_name(command: u16) -> String {
    let name = match command {
        NAV_WAYPOINT => "NAV_WAYPOINT",
        NAV_LOITER_UNLIM => "NAV_LOITER_UNLIM",
        NAV_LOITER_TURNS => "NAV_LOITER_TURNS",
        NAV_LOITER_TIME => "NAV_LOITER_TIME",
        NAV_RETURN_TO_LAUNCH => "NAV_RETURN_TO_LAUNCH",
        NAV_LAND => "NAV_LAND",
        NAV_TAKEOFF => "NAV_TAKEOFF",
        30 => "NAV_CONTINUE_AND_CHANGE_ALT",
        31 => "NAV_LOITER_TO_ALT",
        80 => "NAV_ROI",
        81 => "NAV_PATHPLANNING",
        NAV_SPLINE_WAYPOINT => "NAV_SPLINE_WAYPOINT",
        84 => "NAV_VTOL_TAKEOFF",
        85 => "NAV_VTOL_LAND",
        92 => "NAV_GUIDED_ENABLE",
        NAV_DELAY => "NAV_DELAY",
        112 => "CONDITION_DELAY",
        113 => "CONDITION_CHANGE_ALT",
        114 => "CONDITION_DISTANCE",
        115 => "CONDITION_YAW",
        176 => "DO_SET_MODE",
        DO_JUMP => "DO_JUMP",
        DO_CHANGE_SPEED => "DO_CHANGE_SPEED",
        DO_SET_HOME => "DO_SET_HOME",
        181 => "DO_SET_RELAY",
        183 => "DO_SET_SERVO",
        189 => "DO_LAND_START",
        191 => "DO_GO_AROUND",
        195 => "DO_SET_ROI_LOCATION",
        196 => "DO_SET_ROI_WPNEXT_OFFSET",
        197 => "DO_SET_ROI_NONE",
        201 => "DO_SET_ROI",
        203 => "DO_DIGICAM_CONTROL",
        205 => "DO_MOUNT_CONTROL",
        206 => "DO_SET_CAM_TRIGG_DIST",
        211 => "DO_GRIPPER",
        214 => "DO_SET_CAM_TRIGG_INTERVAL",
        1000 => "DO_GIMBAL_MANAGER_PITCHYAW",
        2000 => "IMAGE_START_CAPTURE",
        2001 => "IMAGE_STOP_CAPTURE",
        2500 => "VIDEO_START_CAPTURE",
        2501 => "VIDEO_STOP_CAPTURE",
        3000 => "DO_VTOL_TRANSITION",
        NAV_FENCE_RETURN_POINT => "NAV_FENCE_RETURN_POINT",
        NAV_FENCE_POLYGON_VERTEX_INCLUSION => "NAV_FENCE_POLYGON_VERTEX_INCLUSION",
        NAV_FENCE_POLYGON_VERTEX_EXCLUSION => "NAV_FENCE_POLYGON_VERTEX_EXCLUSION",
        NAV_FENCE_CIRCLE_INCLUSION => "NAV_FENCE_CIRCLE_INCLUSION",
        NAV_FENCE_CIRCLE_EXCLUSION => "NAV_FENCE_CIRCLE_EXCLUSION",
        NAV_RALLY_POINT => "NAV_RALLY_POINT",
        30001 => "DO_WINCH",
        _ => return format!("MAV_CMD_{command}"),
    };
    format!("MAV_CMD_{name}")
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
