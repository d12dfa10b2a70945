//! Telemetry messages built from SimpleFlight's status (its estimate, its last
//! GPS report, its power module), at PX4's default rates for a GCS link.
//!
//! Rates are in sim time: at `--speedup 10` a 5 Hz stream arrives at 50 Hz of
//! wall time, as PX4 does in lockstep. Every time field is sim time.
// Deprecated messages (MISSION_ITEM, MISSION_REQUEST, MISSION_SET_CURRENT, PING,
// PROTOCOL_VERSION) are still sent by ground stations in use; a vehicle answers them.
#![allow(deprecated)]

use mavlink::dialects::common::*;
use mavsitl_core::vehicle::VehicleKind;
use nalgebra::Vector3;

use super::modes;
use crate::{FlightMode, FlightStatus};
use mavsitl_core::geo::LocalFrame;
use mavsitl_core::time::SimTime;
use mavsitl_mavlink::wire::{deg_e7, GpsScaled};

/// A stream: message id and its default interval (µs of sim time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamDefault {
    /// MAVLink message id.
    pub id: u32,
    /// Default interval, µs (0: off by default).
    pub interval_us: u64,
}

/// The streams and PX4's default rates on a normal GCS link.
pub const STREAMS: &[StreamDefault] = &[
    StreamDefault {
        id: 0,
        interval_us: 1_000_000,
    }, // HEARTBEAT 1 Hz
    StreamDefault {
        id: 1,
        interval_us: 1_000_000,
    }, // SYS_STATUS 1 Hz
    StreamDefault {
        id: 2,
        interval_us: 1_000_000,
    }, // SYSTEM_TIME 1 Hz
    StreamDefault {
        id: 24,
        interval_us: 200_000,
    }, // GPS_RAW_INT 5 Hz
    StreamDefault {
        id: 30,
        interval_us: 66_666,
    }, // ATTITUDE 15 Hz
    StreamDefault {
        id: 230,
        interval_us: 2_000_000,
    }, // ESTIMATOR_STATUS 0.5 Hz
    StreamDefault {
        id: 31,
        interval_us: 100_000,
    }, // ATTITUDE_QUATERNION 10 Hz
    StreamDefault {
        id: 32,
        interval_us: 1_000_000,
    }, // LOCAL_POSITION_NED 1 Hz
    StreamDefault {
        id: 33,
        interval_us: 200_000,
    }, // GLOBAL_POSITION_INT 5 Hz
    StreamDefault {
        id: 42,
        interval_us: 1_000_000,
    }, // MISSION_CURRENT 1 Hz
    StreamDefault {
        id: 74,
        interval_us: 250_000,
    }, // VFR_HUD 4 Hz
    StreamDefault {
        id: 147,
        interval_us: 2_000_000,
    }, // BATTERY_STATUS 0.5 Hz
    StreamDefault {
        id: 242,
        interval_us: 2_000_000,
    }, // HOME_POSITION 0.5 Hz
    StreamDefault {
        id: 245,
        interval_us: 1_000_000,
    }, // EXTENDED_SYS_STATE 1 Hz
];

/// What the builders need besides the status.
#[derive(Debug, Clone, Copy)]
pub struct Context {
    /// Sim time now.
    pub now: SimTime,
    /// The mission frame (origin = the scenario's home).
    pub frame: LocalFrame,
    /// MAV_TYPE.
    pub mav_type: MavType,
    /// MAV_AUTOPILOT.
    pub autopilot: MavAutopilot,
    /// The kind of vehicle.
    pub kind: VehicleKind,
    /// The geofence list is not empty.
    pub fence_stored: bool,
    /// Unix time of sim time 0, µs.
    pub epoch_unix_us: u64,
    /// Battery cells (BAT1_N_CELLS).
    pub cells: u32,
}

fn time_boot_ms(now: SimTime) -> u32 {
    (now.as_micros() / 1000) as u32
}

fn clamp_i16(v: f64) -> i16 {
    v.round().clamp(i16::MIN as f64, i16::MAX as f64) as i16
}

/// Heading, centidegrees 0..35999.
fn heading_cdeg(yaw: f64) -> u16 {
    let d = yaw.to_degrees().rem_euclid(360.0);
    ((d * 100.0).round() as u32 % 36000) as u16
}

/// MAV_STATE for the heartbeat.
fn system_status(st: &FlightStatus) -> MavState {
    if st.failure.is_some() {
        MavState::MAV_STATE_CRITICAL
    } else if st.armed {
        MavState::MAV_STATE_ACTIVE
    } else if st.estimate.is_none() {
        MavState::MAV_STATE_BOOT
    } else {
        MavState::MAV_STATE_STANDBY
    }
}

/// HEARTBEAT.
pub fn heartbeat(st: &FlightStatus, c: &Context) -> MavMessage {
    let mode = st.mode.unwrap_or(FlightMode::Hold);
    MavMessage::HEARTBEAT(HEARTBEAT_DATA {
        custom_mode: modes::custom_mode(mode),
        mavtype: c.mav_type,
        autopilot: c.autopilot,
        base_mode: MavModeFlag::from_bits_truncate(modes::base_mode(mode, st.armed)),
        system_status: system_status(st),
        mavlink_version: 3,
    })
}

/// The MAV_SYS_STATUS bits (present, enabled, healthy).
pub fn health_bits(st: &FlightStatus, c: &Context) -> (u32, u32, u32) {
    use MavSysStatusSensor as S;
    let crate::SensorsAlive {
        imu,
        gps,
        baro,
        mag,
    } = st.sensors_alive;
    let mut present = S::MAV_SYS_STATUS_SENSOR_3D_GYRO
        | S::MAV_SYS_STATUS_SENSOR_3D_ACCEL
        | S::MAV_SYS_STATUS_SENSOR_3D_MAG
        | S::MAV_SYS_STATUS_SENSOR_ABSOLUTE_PRESSURE
        | S::MAV_SYS_STATUS_SENSOR_GPS
        | S::MAV_SYS_STATUS_AHRS
        | S::MAV_SYS_STATUS_SENSOR_MOTOR_OUTPUTS
        | S::MAV_SYS_STATUS_SENSOR_BATTERY
        | S::MAV_SYS_STATUS_PREARM_CHECK
        | S::MAV_SYS_STATUS_SENSOR_ANGULAR_RATE_CONTROL
        | S::MAV_SYS_STATUS_SENSOR_ATTITUDE_STABILIZATION
        | S::MAV_SYS_STATUS_SENSOR_YAW_POSITION
        | S::MAV_SYS_STATUS_SENSOR_XY_POSITION_CONTROL;
    if c.kind.is_multirotor() {
        present |= S::MAV_SYS_STATUS_SENSOR_Z_ALTITUDE_CONTROL;
    }
    if c.fence_stored {
        present |= S::MAV_SYS_STATUS_GEOFENCE;
    }
    let enabled = present;
    let mut health = S::MAV_SYS_STATUS_SENSOR_MOTOR_OUTPUTS
        | S::MAV_SYS_STATUS_SENSOR_ANGULAR_RATE_CONTROL
        | S::MAV_SYS_STATUS_SENSOR_ATTITUDE_STABILIZATION
        | S::MAV_SYS_STATUS_SENSOR_YAW_POSITION
        | S::MAV_SYS_STATUS_SENSOR_XY_POSITION_CONTROL
        | S::MAV_SYS_STATUS_SENSOR_Z_ALTITUDE_CONTROL
        // The fence is never breached (it is stored, not enforced).
        | S::MAV_SYS_STATUS_GEOFENCE;
    if imu {
        health |= S::MAV_SYS_STATUS_SENSOR_3D_GYRO | S::MAV_SYS_STATUS_SENSOR_3D_ACCEL;
    }
    if mag {
        health |= S::MAV_SYS_STATUS_SENSOR_3D_MAG;
    }
    if baro {
        health |= S::MAV_SYS_STATUS_SENSOR_ABSOLUTE_PRESSURE;
    }
    if gps && st.gps_fix {
        health |= S::MAV_SYS_STATUS_SENSOR_GPS;
    }
    if st.estimate.is_some() && imu {
        health |= S::MAV_SYS_STATUS_AHRS;
    }
    if st.battery.is_some_and(|b| b.remaining > 0.0) {
        health |= S::MAV_SYS_STATUS_SENSOR_BATTERY;
    }
    if st.armed || st.prearm_failure.is_none() {
        health |= S::MAV_SYS_STATUS_PREARM_CHECK;
    }
    (present.bits(), enabled.bits(), (health & present).bits())
}

/// SYS_STATUS.
pub fn sys_status(st: &FlightStatus, c: &Context) -> MavMessage {
    let (p, e, h) = health_bits(st, c);
    let (v, i, rem) = match st.battery {
        Some(b) => (
            (b.voltage_v * 1000.0).round().clamp(0.0, 65534.0) as u16,
            clamp_i16(b.current_a * 100.0),
            (b.remaining * 100.0).round().clamp(0.0, 100.0) as i8,
        ),
        None => (u16::MAX, -1, -1),
    };
    MavMessage::SYS_STATUS(SYS_STATUS_DATA {
        onboard_control_sensors_present: MavSysStatusSensor::from_bits_truncate(p),
        onboard_control_sensors_enabled: MavSysStatusSensor::from_bits_truncate(e),
        onboard_control_sensors_health: MavSysStatusSensor::from_bits_truncate(h),
        load: 0,
        voltage_battery: v,
        current_battery: i,
        drop_rate_comm: 0,
        errors_comm: 0,
        errors_count1: 0,
        errors_count2: 0,
        errors_count3: 0,
        errors_count4: 0,
        battery_remaining: rem,
        onboard_control_sensors_present_extended: MavSysStatusSensorExtended::empty(),
        onboard_control_sensors_enabled_extended: MavSysStatusSensorExtended::empty(),
        onboard_control_sensors_health_extended: MavSysStatusSensorExtended::empty(),
    })
}

/// SYSTEM_TIME (Unix time mapped from sim time).
pub fn system_time(c: &Context) -> MavMessage {
    MavMessage::SYSTEM_TIME(SYSTEM_TIME_DATA {
        time_unix_usec: c.epoch_unix_us + c.now.as_micros(),
        time_boot_ms: time_boot_ms(c.now),
    })
}

/// GPS_RAW_INT from the latest GPS report.
pub fn gps_raw_int(st: &FlightStatus, c: &Context) -> Option<MavMessage> {
    let g = st.gps?;
    let w = GpsScaled::of(&g);
    let fix = match w.fix_type {
        3 => GpsFixType::GPS_FIX_TYPE_3D_FIX,
        2 => GpsFixType::GPS_FIX_TYPE_2D_FIX,
        _ => GpsFixType::GPS_FIX_TYPE_NO_FIX,
    };
    Some(MavMessage::GPS_RAW_INT(GPS_RAW_INT_DATA {
        time_usec: g.measured.as_micros(),
        lat: w.lat,
        lon: w.lon,
        alt: w.alt_mm,
        eph: w.eph_cm,
        epv: w.epv_cm,
        vel: w.vel_cm_s,
        cog: w.cog_cdeg,
        fix_type: fix,
        satellites_visible: g.satellites,
        alt_ellipsoid: w.alt_mm,
        h_acc: (g.eph_m * 1000.0).round().clamp(0.0, u32::MAX as f64) as u32,
        v_acc: (g.epv_m * 1000.0).round().clamp(0.0, u32::MAX as f64) as u32,
        vel_acc: 0,
        hdg_acc: 0,
        yaw: 0,
    }))
    .filter(|_| c.now >= g.delivered)
}

fn euler(st: &FlightStatus) -> Option<(f64, f64, f64, Vector3<f64>)> {
    let e = st.estimate?;
    let (r, p, y) = e.att_ned_frd.euler_angles();
    Some((r, p, y, e.rate_frd_rad_s))
}

/// ATTITUDE.
pub fn attitude(st: &FlightStatus, c: &Context) -> Option<MavMessage> {
    let (r, p, y, w) = euler(st)?;
    Some(MavMessage::ATTITUDE(ATTITUDE_DATA {
        time_boot_ms: time_boot_ms(c.now),
        roll: r as f32,
        pitch: p as f32,
        yaw: y as f32,
        rollspeed: w.x as f32,
        pitchspeed: w.y as f32,
        yawspeed: w.z as f32,
    }))
}

/// ATTITUDE_QUATERNION.
pub fn attitude_quaternion(st: &FlightStatus, c: &Context) -> Option<MavMessage> {
    let e = st.estimate?;
    let q = e.att_ned_frd;
    let w = e.rate_frd_rad_s;
    Some(MavMessage::ATTITUDE_QUATERNION(ATTITUDE_QUATERNION_DATA {
        time_boot_ms: time_boot_ms(c.now),
        q1: q.w as f32,
        q2: q.i as f32,
        q3: q.j as f32,
        q4: q.k as f32,
        rollspeed: w.x as f32,
        pitchspeed: w.y as f32,
        yawspeed: w.z as f32,
        repr_offset_q: [0.0; 4],
    }))
}

/// LOCAL_POSITION_NED (origin: the mission frame's origin).
pub fn local_position(st: &FlightStatus, c: &Context) -> Option<MavMessage> {
    let e = st.estimate?;
    Some(MavMessage::LOCAL_POSITION_NED(LOCAL_POSITION_NED_DATA {
        time_boot_ms: time_boot_ms(c.now),
        x: e.pos_ned_m.x as f32,
        y: e.pos_ned_m.y as f32,
        z: e.pos_ned_m.z as f32,
        vx: e.vel_ned_m_s.x as f32,
        vy: e.vel_ned_m_s.y as f32,
        vz: e.vel_ned_m_s.z as f32,
    }))
}

/// ESTIMATOR_STATUS: the position estimate's accuracy (it grows while the
/// estimator dead-reckons without GPS) and the validity flags PX4 sets.
pub fn estimator_status(st: &FlightStatus, c: &Context) -> Option<MavMessage> {
    use mavlink::dialects::common::EstimatorStatusFlags as F;
    st.estimate?;
    let eph = st.position_eph_m;
    let mut flags = F::ESTIMATOR_ATTITUDE
        | F::ESTIMATOR_VELOCITY_VERT
        | F::ESTIMATOR_POS_VERT_ABS
        | F::ESTIMATOR_POS_VERT_AGL;
    if eph <= 5.0 {
        flags |= F::ESTIMATOR_VELOCITY_HORIZ
            | F::ESTIMATOR_POS_HORIZ_REL
            | F::ESTIMATOR_POS_HORIZ_ABS
            | F::ESTIMATOR_PRED_POS_HORIZ_REL
            | F::ESTIMATOR_PRED_POS_HORIZ_ABS;
    } else {
        flags |= F::ESTIMATOR_CONST_POS_MODE;
    }
    Some(MavMessage::ESTIMATOR_STATUS(ESTIMATOR_STATUS_DATA {
        time_usec: c.now.as_micros(),
        vel_ratio: 0.0,
        pos_horiz_ratio: (eph / 5.0) as f32,
        pos_vert_ratio: 0.0,
        mag_ratio: 0.0,
        hagl_ratio: 0.0,
        tas_ratio: 0.0,
        pos_horiz_accuracy: eph as f32,
        pos_vert_accuracy: 0.0,
        flags,
    }))
}

/// Home, NED m: set at arming (or by DO_SET_HOME), else the mission frame's
/// origin.
fn home(st: &FlightStatus) -> Vector3<f64> {
    st.home_ned.unwrap_or_else(Vector3::zeros)
}

/// GLOBAL_POSITION_INT.
pub fn global_position(st: &FlightStatus, c: &Context) -> Option<MavMessage> {
    let e = st.estimate?;
    let g = c.frame.to_geodetic(&e.pos_ned_m);
    let (_, _, yaw) = e.att_ned_frd.euler_angles();
    let rel = home(st).z - e.pos_ned_m.z;
    Some(MavMessage::GLOBAL_POSITION_INT(GLOBAL_POSITION_INT_DATA {
        time_boot_ms: time_boot_ms(c.now),
        lat: deg_e7(g.lat_rad),
        lon: deg_e7(g.lon_rad),
        alt: (g.alt_m * 1000.0).round() as i32,
        relative_alt: (rel * 1000.0).round() as i32,
        vx: clamp_i16(e.vel_ned_m_s.x * 100.0),
        vy: clamp_i16(e.vel_ned_m_s.y * 100.0),
        vz: clamp_i16(e.vel_ned_m_s.z * 100.0),
        hdg: heading_cdeg(yaw),
    }))
}

/// VFR_HUD.
pub fn vfr_hud(st: &FlightStatus, throttle: f64, c: &Context) -> Option<MavMessage> {
    let e = st.estimate?;
    let g = c.frame.to_geodetic(&e.pos_ned_m);
    let (_, _, yaw) = e.att_ned_frd.euler_angles();
    let gs = e.vel_ned_m_s.xy().norm() as f32;
    Some(MavMessage::VFR_HUD(VFR_HUD_DATA {
        airspeed: gs,
        groundspeed: gs,
        alt: g.alt_m as f32,
        climb: -e.vel_ned_m_s.z as f32,
        heading: (heading_cdeg(yaw) / 100) as i16,
        throttle: (throttle * 100.0).round().clamp(0.0, 100.0) as u16,
    }))
}

/// MAV_LANDED_STATE.
pub fn landed_state(st: &FlightStatus, c: &Context) -> MavLandedState {
    if !c.kind.is_multirotor() {
        return if st.armed {
            MavLandedState::MAV_LANDED_STATE_IN_AIR
        } else {
            MavLandedState::MAV_LANDED_STATE_ON_GROUND
        };
    }
    if st.on_ground || !st.armed {
        return MavLandedState::MAV_LANDED_STATE_ON_GROUND;
    }
    match st.mode {
        Some(FlightMode::Takeoff) => MavLandedState::MAV_LANDED_STATE_TAKEOFF,
        Some(FlightMode::Land) => MavLandedState::MAV_LANDED_STATE_LANDING,
        _ => MavLandedState::MAV_LANDED_STATE_IN_AIR,
    }
}

/// EXTENDED_SYS_STATE.
pub fn extended_sys_state(st: &FlightStatus, c: &Context) -> MavMessage {
    MavMessage::EXTENDED_SYS_STATE(EXTENDED_SYS_STATE_DATA {
        vtol_state: MavVtolState::MAV_VTOL_STATE_UNDEFINED,
        landed_state: landed_state(st, c),
    })
}

/// HOME_POSITION, once home is known.
pub fn home_position(st: &FlightStatus, c: &Context) -> Option<MavMessage> {
    let h = st.home_ned?;
    let g = c.frame.to_geodetic(&h);
    Some(MavMessage::HOME_POSITION(HOME_POSITION_DATA {
        latitude: deg_e7(g.lat_rad),
        longitude: deg_e7(g.lon_rad),
        altitude: (g.alt_m * 1000.0).round() as i32,
        x: h.x as f32,
        y: h.y as f32,
        z: h.z as f32,
        q: [1.0, 0.0, 0.0, 0.0],
        approach_x: 0.0,
        approach_y: 0.0,
        approach_z: 0.0,
        time_usec: c.now.as_micros(),
    }))
}

/// BATTERY_STATUS from the power module.
pub fn battery_status(st: &FlightStatus, c: &Context) -> Option<MavMessage> {
    let b = st.battery?;
    let cells = c.cells.clamp(1, 14) as usize;
    let cell_mv = (b.voltage_v / cells as f64 * 1000.0)
        .round()
        .clamp(0.0, 65534.0) as u16;
    let mut voltages = [u16::MAX; 10];
    let mut voltages_ext = [0u16; 4];
    for i in 0..cells {
        if let Some(v) = voltages.get_mut(i) {
            *v = cell_mv;
        } else if let Some(v) = voltages_ext.get_mut(i - 10) {
            *v = cell_mv;
        }
    }
    Some(MavMessage::BATTERY_STATUS(BATTERY_STATUS_DATA {
        current_consumed: b.consumed_mah.round() as i32,
        energy_consumed: (b.consumed_j / 100.0).round() as i32,
        temperature: i16::MAX,
        voltages,
        current_battery: clamp_i16(b.current_a * 100.0),
        id: 0,
        battery_function: MavBatteryFunction::MAV_BATTERY_FUNCTION_ALL,
        mavtype: MavBatteryType::MAV_BATTERY_TYPE_LIPO,
        battery_remaining: (b.remaining * 100.0).round().clamp(0.0, 100.0) as i8,
        time_remaining: 0,
        charge_state: if b.remaining > 0.15 {
            MavBatteryChargeState::MAV_BATTERY_CHARGE_STATE_OK
        } else if b.remaining > 0.07 {
            MavBatteryChargeState::MAV_BATTERY_CHARGE_STATE_LOW
        } else {
            MavBatteryChargeState::MAV_BATTERY_CHARGE_STATE_CRITICAL
        },
        voltages_ext,
        mode: MavBatteryMode::MAV_BATTERY_MODE_UNKNOWN,
        fault_bitmask: MavBatteryFault::empty(),
    }))
}

/// MISSION_STATE for MISSION_CURRENT.
pub fn mission_state(st: &FlightStatus) -> MissionState {
    if st.mission_len == 0 {
        MissionState::MISSION_STATE_NO_MISSION
    } else if st.finished {
        MissionState::MISSION_STATE_COMPLETE
    } else if !st.mission_started {
        MissionState::MISSION_STATE_NOT_STARTED
    } else if st.mode == Some(FlightMode::Mission) && st.armed {
        MissionState::MISSION_STATE_ACTIVE
    } else {
        MissionState::MISSION_STATE_PAUSED
    }
}

/// MISSION_CURRENT with its extension fields.
pub fn mission_current(st: &FlightStatus, ids: [u32; 3]) -> MavMessage {
    let seq = if st.finished {
        st.mission_len.saturating_sub(1)
    } else {
        st.current_item.min(st.mission_len.saturating_sub(1))
    };
    MavMessage::MISSION_CURRENT(MISSION_CURRENT_DATA {
        seq: seq as u16,
        total: st.mission_len as u16,
        mission_state: mission_state(st),
        mission_mode: (st.mode == Some(FlightMode::Mission)) as u8,
        mission_id: ids[0],
        fence_id: ids[1],
        rally_points_id: ids[2],
    })
}

/// AUTOPILOT_VERSION: PX4-compatible version 1.15.0, the capabilities we implement.
pub fn autopilot_version(system_id: u8) -> MavMessage {
    use MavProtocolCapability as C;
    let caps = C::MAV_PROTOCOL_CAPABILITY_MISSION_FLOAT
        | C::MAV_PROTOCOL_CAPABILITY_PARAM_FLOAT
        | C::MAV_PROTOCOL_CAPABILITY_MISSION_INT
        | C::MAV_PROTOCOL_CAPABILITY_COMMAND_INT
        | C::MAV_PROTOCOL_CAPABILITY_PARAM_ENCODE_BYTEWISE
        | C::MAV_PROTOCOL_CAPABILITY_MAVLINK2
        | C::MAV_PROTOCOL_CAPABILITY_MISSION_FENCE
        | C::MAV_PROTOCOL_CAPABILITY_MISSION_RALLY;
    let v = |maj: u32, min: u32, patch: u32| maj << 24 | min << 16 | patch << 8 | 255;
    let mut custom = [0u8; 8];
    let ver = env!("CARGO_PKG_VERSION").as_bytes();
    let n = ver.len().min(8);
    custom[..n].copy_from_slice(&ver[..n]);
    MavMessage::AUTOPILOT_VERSION(AUTOPILOT_VERSION_DATA {
        capabilities: caps,
        uid: 0x6d61_7673_6974_6c00 | system_id as u64,
        flight_sw_version: v(1, 15, 0),
        middleware_sw_version: 0,
        os_sw_version: 0,
        board_version: 0,
        vendor_id: 0,
        product_id: 0,
        flight_custom_version: custom,
        middleware_custom_version: [0; 8],
        os_custom_version: [0; 8],
        uid2: [0; 18],
    })
}

/// PROTOCOL_VERSION (MAVLink 2).
pub fn protocol_version() -> MavMessage {
    MavMessage::PROTOCOL_VERSION(PROTOCOL_VERSION_DATA {
        version: 200,
        min_version: 100,
        max_version: 200,
        spec_version_hash: [0; 8],
        library_version_hash: [0; 8],
    })
}

/// STATUSTEXT (text cut at 50 bytes on a character boundary).
pub fn statustext(severity: MavSeverity, text: &str) -> MavMessage {
    let mut end = text.len().min(50);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    MavMessage::STATUSTEXT(STATUSTEXT_DATA {
        severity,
        text: text.get(..end).unwrap_or("").into(),
        id: 0,
        chunk_seq: 0,
    })
}
