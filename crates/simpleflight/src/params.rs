//! SimpleFlight's parameter store: every tunable, typed, with its default,
//! range, unit and meaning — what a ground station lists and sets over MAVLink,
//! and what a `NAME VALUE` parameter file (ArduPilot/PX4/QGC style) loads.
//!
//! Names are at most 16 characters (MAVLink's `param_id`). Where a parameter has
//! a PX4 or ArduPilot equivalent it carries that name, so values copy over.

use std::fmt::Write as _;

use thiserror::Error;

use mavsitl_guidance::params::GuidanceParams;

/// Integer or float, as MAVLink's PARAM_VALUE types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// 32-bit float.
    Float,
    /// 32-bit signed integer.
    Int,
}

/// A parameter's description.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParamInfo {
    /// Name, ≤ 16 characters, upper case.
    pub name: &'static str,
    /// Type.
    pub kind: ParamKind,
    /// Default value.
    pub default: f64,
    /// Smallest accepted value.
    pub min: f64,
    /// Largest accepted value.
    pub max: f64,
    /// Unit (empty when dimensionless).
    pub units: &'static str,
    /// What it does.
    pub description: &'static str,
}

/// Declares every SimpleFlight parameter once — field, type, name, default,
/// range, unit and meaning — and generates [`TABLE`] (what ground stations
/// list and parameter files set) and [`ParamValues`] (the typed values the
/// code reads, so no parameter is looked up by a string that could be
/// misspelt).
macro_rules! sf_params {
    ($($field:ident / $name:ident: $kind:ident = $default:expr, [$min:expr, $max:expr],
        $units:literal, $doc:literal;)*) => {
        /// Every parameter's name, as a constant the compiler checks.
        pub mod name {
            $(#[doc = $doc]
            pub const $name: &str = stringify!($name);)*
        }

        /// The SimpleFlight parameters besides the guidance port's (see [`GUIDANCE`]).
        pub const TABLE: &[ParamInfo] = &[$(ParamInfo {
            name: stringify!($name),
            kind: ParamKind::$kind,
            default: $default,
            min: $min,
            max: $max,
            units: $units,
            description: $doc,
        }),*];

        /// The value of every parameter of [`TABLE`], by its name in lower
        /// case (integers as whole numbers).
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub struct ParamValues {
            $(#[doc = concat!("`", stringify!($name), "`: ", $doc)]
            pub $field: f64,)*
        }

        impl Default for ParamValues {
            fn default() -> Self {
                ParamValues { $($field: $default,)* }
            }
        }

        /// The fields of [`ParamValues`], in [`TABLE`]'s order.
        #[cfg(test)]
        const FIELDS: &[&str] = &[$(stringify!($field)),*];

        impl ParamValues {
            /// The values in [`TABLE`]'s order.
            fn as_array(&self) -> [f64; TABLE.len()] {
                [$(self.$field),*]
            }

            /// The value at [`TABLE`] index `index`, for writing.
            fn slot(&mut self, index: usize) -> Option<&mut f64> {
                [$(&mut self.$field),*].into_iter().nth(index)
            }
        }
    };
}

sf_params! {
    // Identity and mission behaviour (PX4 names QGC and MAVSDK read).
    sys_autostart / SYS_AUTOSTART: Int = 4001.0, [0.0, 9_999_999.0], "",
        "Airframe id reported to ground stations (PX4 meaning)";
    mav_sys_id / MAV_SYS_ID: Int = 1.0, [1.0, 250.0], "",
        "MAVLink system id";
    mav_comp_id / MAV_COMP_ID: Int = 1.0, [1.0, 250.0], "",
        "MAVLink component id of the autopilot";
    sys_autoconfig / SYS_AUTOCONFIG: Int = 0.0, [0.0, 2.0], "",
        "Reset parameters to the airframe defaults at boot (PX4 meaning; no effect)";
    // Failsafes (PX4 names, defaults and meanings).
    gf_action / GF_ACTION: Int = 2.0, [0.0, 5.0], "",
        "Geofence breach: 0 none, 1 warning, 2 hold, 3 return, 4 terminate, 5 land";
    gf_max_hor_dist / GF_MAX_HOR_DIST: Float = 0.0, [0.0, 10_000.0], "m",
        "Horizontal distance from home beyond which the fence is breached (0: off)";
    gf_max_ver_dist / GF_MAX_VER_DIST: Float = 0.0, [0.0, 10_000.0], "m",
        "Height above home beyond which the fence is breached (0: off)";
    bat_low_thr / BAT_LOW_THR: Float = 0.15, [0.12, 0.5], "",
        "Remaining charge below which the battery is low";
    bat_crit_thr / BAT_CRIT_THR: Float = 0.07, [0.05, 0.5], "",
        "Remaining charge below which the battery is critical";
    bat_emergen_thr / BAT_EMERGEN_THR: Float = 0.05, [0.03, 0.5], "",
        "Remaining charge below which the battery is an emergency";
    com_low_bat_act / COM_LOW_BAT_ACT: Int = 0.0, [0.0, 3.0], "",
        "Battery failsafe: 0 warning, 2 land, 3 return at critical and land at emergency";
    com_pos_fs_delay / COM_POS_FS_DELAY: Float = 1.0, [0.0, 100.0], "s",
        "How long the position estimate must be invalid before the failsafe";
    com_pos_fs_eph / COM_POS_FS_EPH: Float = 5.0, [0.0, 1000.0], "m",
        "Horizontal accuracy beyond which the position estimate is invalid";
    nav_dll_act / NAV_DLL_ACT: Int = 0.0, [0.0, 6.0], "",
        "Data-link loss: 0 disabled, 1 hold, 2 return, 3 land, 5 terminate";
    com_dl_loss_t / COM_DL_LOSS_T: Float = 10.0, [5.0, 300.0], "s",
        "Time without a ground-station heartbeat before the data link is lost";
    com_act_fail_act / COM_ACT_FAIL_ACT: Int = 0.0, [0.0, 4.0], "",
        "Motor failure: 0 warning, 1 hold, 2 land, 3 return, 4 terminate";
    com_disarm_land / COM_DISARM_LAND: Float = 2.0, [-1.0, 20.0], "s",
        "Disarm this long after landing (-1: never)";
    com_disarm_prflt / COM_DISARM_PRFLT: Float = 10.0, [-1.0, 20.0], "s",
        "Disarm this long after arming if the vehicle does not take off (-1: never)";
    bat1_n_cells / BAT1_N_CELLS: Int = 4.0, [1.0, 24.0], "",
        "Cells in series of battery 1";
    bat1_v_charged / BAT1_V_CHARGED: Float = 4.2, [3.0, 5.0], "V",
        "Cell voltage of a full battery";
    bat1_v_empty / BAT1_V_EMPTY: Float = 3.5, [2.5, 4.0], "V",
        "Cell voltage of an empty battery";
    bat1_capacity / BAT1_CAPACITY: Float = 5000.0, [-1.0, 100_000.0], "mAh",
        "Capacity of battery 1";
    mav_type / MAV_TYPE: Int = 2.0, [0.0, 50.0], "",
        "MAVLink vehicle type (2 quad, 11 surface boat)";
    mis_takeoff_alt / MIS_TAKEOFF_ALT: Float = 2.5, [0.0, 500.0], "m",
        "Take-off altitude above home when none is given";
    rtl_return_alt / RTL_RETURN_ALT: Float = 60.0, [0.0, 500.0], "m",
        "Return altitude above home (multicopter), lowered near home by RTL_CONE_ANG";
    rtl_descend_alt / RTL_DESCEND_ALT: Float = 30.0, [0.0, 500.0], "m",
        "Altitude above home descended to before landing (landing follows without delay)";
    rtl_min_dist / RTL_MIN_DIST: Float = 10.0, [0.5, 500.0], "m",
        "Within this horizontal distance of home the return altitude follows RTL_CONE_ANG";
    rtl_land_delay / RTL_LAND_DELAY: Float = 0.0, [-1.0, 300.0], "s",
        "Hover at RTL_DESCEND_ALT over home this long before landing (-1: never land)";
    rtl_cone_ang / RTL_CONE_ANG: Int = 45.0, [0.0, 90.0], "",
        "Half-angle of the return-altitude cone above home, deg (0: always RTL_RETURN_ALT)";
    nav_acc_rad / NAV_ACC_RAD: Float = 2.0, [0.05, 200.0], "m",
        "Waypoint acceptance radius when an item gives none";
    mpc_xy_cruise / MPC_XY_CRUISE: Float = 5.0, [0.5, 20.0], "m/s",
        "Mission horizontal speed (multicopter)";
    mpc_z_v_auto_up / MPC_Z_V_AUTO_UP: Float = 3.0, [0.5, 8.0], "m/s",
        "Mission climb speed";
    mpc_z_v_auto_dn / MPC_Z_V_AUTO_DN: Float = 1.5, [0.3, 4.0], "m/s",
        "Mission descent speed";
    mpc_acc_hor / MPC_ACC_HOR: Float = 3.0, [0.5, 15.0], "m/s^2",
        "Mission horizontal acceleration";
    mpc_acc_up_max / MPC_ACC_UP_MAX: Float = 2.0, [0.5, 15.0], "m/s^2",
        "Mission vertical acceleration";
    mpc_jerk_auto / MPC_JERK_AUTO: Float = 4.0, [0.5, 80.0], "m/s^3",
        "Mission jerk";
    mpc_land_speed / MPC_LAND_SPEED: Float = 0.7, [0.2, 3.0], "m/s",
        "Final landing speed";
    mpc_land_alt1 / MPC_LAND_ALT1: Float = 5.0, [0.0, 100.0], "m",
        "Below this height the landing slows to MPC_LAND_SPEED";
    mpc_tko_speed / MPC_TKO_SPEED: Float = 1.5, [0.5, 5.0], "m/s",
        "Take-off climb speed";
    // Multicopter cascade.
    mpc_xy_p / MPC_XY_P: Float = 0.95, [0.0, 2.0], "1/s",
        "Horizontal position gain";
    mpc_z_p / MPC_Z_P: Float = 1.0, [0.0, 2.0], "1/s",
        "Vertical position gain";
    mpc_xy_vel_p_acc / MPC_XY_VEL_P_ACC: Float = 1.8, [0.0, 10.0], "1/s",
        "Horizontal velocity P";
    mpc_xy_vel_i_acc / MPC_XY_VEL_I_ACC: Float = 0.4, [0.0, 10.0], "1/s^2",
        "Horizontal velocity I";
    mpc_z_vel_p_acc / MPC_Z_VEL_P_ACC: Float = 4.0, [0.0, 15.0], "1/s",
        "Vertical velocity P";
    mpc_z_vel_i_acc / MPC_Z_VEL_I_ACC: Float = 2.0, [0.0, 10.0], "1/s^2",
        "Vertical velocity I";
    mpc_xy_vel_max / MPC_XY_VEL_MAX: Float = 12.0, [0.0, 20.0], "m/s",
        "Horizontal speed limit";
    mpc_z_vel_max_up / MPC_Z_VEL_MAX_UP: Float = 3.0, [0.5, 8.0], "m/s",
        "Climb speed limit";
    mpc_z_vel_max_dn / MPC_Z_VEL_MAX_DN: Float = 1.5, [0.5, 4.0], "m/s",
        "Descent speed limit";
    mpc_tiltmax_air / MPC_TILTMAX_AIR: Float = 35.0, [20.0, 89.0], "deg",
        "Tilt limit";
    mc_roll_p / MC_ROLL_P: Float = 6.5, [0.0, 12.0], "1/s",
        "Roll attitude gain";
    mc_pitch_p / MC_PITCH_P: Float = 6.5, [0.0, 12.0], "1/s",
        "Pitch attitude gain";
    mc_yaw_p / MC_YAW_P: Float = 2.8, [0.0, 5.0], "1/s",
        "Yaw attitude gain";
    mc_rollrate_max / MC_ROLLRATE_MAX: Float = 220.0, [0.0, 1800.0], "deg/s",
        "Roll/pitch rate limit";
    mc_yawrate_max / MC_YAWRATE_MAX: Float = 200.0, [0.0, 1800.0], "deg/s",
        "Yaw rate limit";
    sf_rate_rp_k / SF_RATE_RP_K: Float = 18.0, [0.0, 200.0], "1/s",
        "Roll/pitch rate loop bandwidth";
    sf_rate_rp_i / SF_RATE_RP_I: Float = 8.0, [0.0, 200.0], "1/s^2",
        "Roll/pitch rate loop integral";
    sf_rate_y_k / SF_RATE_Y_K: Float = 8.0, [0.0, 200.0], "1/s",
        "Yaw rate loop bandwidth";
    sf_rate_y_i / SF_RATE_Y_I: Float = 2.0, [0.0, 200.0], "1/s^2",
        "Yaw rate loop integral";
    // Estimator.
    sf_est_k_grav / SF_EST_K_GRAV: Float = 1.0, [0.0, 10.0], "1/s",
        "Attitude correction gain from gravity";
    sf_est_k_mag / SF_EST_K_MAG: Float = 0.5, [0.0, 10.0], "1/s",
        "Heading correction gain from the magnetometer";
    sf_est_k_bias / SF_EST_K_BIAS: Float = 0.02, [0.0, 1.0], "1/s",
        "Gyro bias learning gain";
    sf_est_w_xy / SF_EST_W_XY: Float = 1.0, [0.05, 10.0], "rad/s",
        "Horizontal GPS fusion bandwidth";
    sf_est_w_z / SF_EST_W_Z: Float = 2.0, [0.05, 10.0], "rad/s",
        "Barometric height fusion bandwidth";
    sf_arm_eph_max / SF_ARM_EPH_MAX: Float = 1.0, [0.1, 100.0], "m",
        "Pre-arm: GPS horizontal accuracy (eph) needed";
    sf_arm_gps_time / SF_ARM_GPS_TIME: Float = 2.0, [0.0, 600.0], "s",
        "Pre-arm: how long the GPS must have been that good";
    sf_ground_truth / SF_GROUND_TRUTH: Int = 0.0, [0.0, 1.0], "",
        "1: fly on perfect state instead of the estimator";
}

/// The guidance port's parameters (ArduPilot names), served from the same store.
pub const GUIDANCE: &[&str] = mavsitl_guidance::params::NAMES;

/// A family of firmware parameters SimpleFlight deliberately does not act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IgnoredFamily {
    /// The names' prefix (`SERVO`, `SIM_`, …).
    pub prefix: &'static str,
    /// Whether a number follows the prefix (`SERVO1_…`, `RC3_…`), so that a
    /// misspelt `SERVO_FUNCTION` is not taken for one.
    pub numbered: bool,
    /// Why SimpleFlight has no use for them.
    pub why: &'static str,
}

impl IgnoredFamily {
    const fn new(prefix: &'static str, numbered: bool, why: &'static str) -> Self {
        IgnoredFamily {
            prefix,
            numbered,
            why,
        }
    }
}

/// Firmware parameters SimpleFlight knows and deliberately does not act on,
/// by family. A file
/// written for ArduPilot or PX4 loads with them; [`ParamStore::load`] lists
/// them so that nobody believes they acted.
pub const IGNORED: &[IgnoredFamily] = &[
    IgnoredFamily::new("FRAME_CLASS", false, "the vehicle comes from the scenario"),
    IgnoredFamily::new("FRAME_TYPE", false, "the vehicle comes from the scenario"),
    IgnoredFamily::new(
        "SERVO",
        true,
        "SimpleFlight drives the airframe's channels itself",
    ),
    IgnoredFamily::new("RC", true, "no RC input"),
    IgnoredFamily::new("RCMAP_", false, "no RC input"),
    IgnoredFamily::new("MODE", true, "no flight-mode switch"),
    IgnoredFamily::new("FLTMODE", true, "no flight-mode switch"),
    IgnoredFamily::new("RELAY", true, "no relays"),
    IgnoredFamily::new("SIM_", false, "the firmware's own simulator"),
    IgnoredFamily::new("INS_", false, "IMU driver and calibration"),
    IgnoredFamily::new("COMPASS_", false, "compass driver and calibration"),
    IgnoredFamily::new("ARSPD_", false, "airspeed sensor driver"),
    IgnoredFamily::new("GPS_", false, "GPS driver"),
    IgnoredFamily::new(
        "BATT_",
        false,
        "ArduPilot's battery monitor (SimpleFlight reads BAT_*)",
    ),
    IgnoredFamily::new(
        "EK2_",
        false,
        "ArduPilot's EKF (SimpleFlight runs its own estimator)",
    ),
    IgnoredFamily::new(
        "EK3_",
        false,
        "ArduPilot's EKF (SimpleFlight runs its own estimator)",
    ),
    IgnoredFamily::new("AHRS_", false, "ArduPilot's AHRS"),
    IgnoredFamily::new(
        "EKF2_",
        false,
        "PX4's EKF (SimpleFlight runs its own estimator)",
    ),
    IgnoredFamily::new("SENS_", false, "PX4's sensor drivers"),
    IgnoredFamily::new("CAL_", false, "sensor calibration"),
    IgnoredFamily::new(
        "CA_",
        false,
        "PX4's control allocation (the airframe gives the geometry)",
    ),
    IgnoredFamily::new("LOG_", false, "logging"),
    IgnoredFamily::new("SR", true, "telemetry stream rates"),
    IgnoredFamily::new("SERIAL", true, "serial ports"),
    IgnoredFamily::new("BRD_", false, "board setup"),
    IgnoredFamily::new("SCHED_", false, "the firmware's scheduler"),
];

/// Why SimpleFlight ignores firmware parameter `name` (upper case), if it does.
pub fn ignored_reason(name: &str) -> Option<&'static str> {
    IGNORED.iter().find_map(|f| {
        let rest = name.strip_prefix(f.prefix)?;
        let ok = !f.numbered || rest.starts_with(|c: char| c.is_ascii_digit());
        ok.then_some(f.why)
    })
}

/// What a parameter file did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Loaded {
    /// Lines applied.
    pub applied: usize,
    /// Firmware parameters of [`IGNORED`] the file set, in file order.
    pub ignored: Vec<String>,
}

/// A parameter that could not be set.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ParamError {
    /// No such parameter.
    #[error("unknown parameter {0}")]
    Unknown(String),
    /// Out of range or not a number.
    #[error("{name}: {} is outside {min}..={max}", mavsitl_core::time::show(*.value))]
    Range {
        /// Parameter.
        name: String,
        /// Value given.
        value: f64,
        /// Lower bound.
        min: f64,
        /// Upper bound.
        max: f64,
    },
    /// A malformed line in a parameter file.
    #[error("{file}:{line}: {message}")]
    File {
        /// File.
        file: String,
        /// Line.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// The parameters SimpleFlight's mission runner reads, typed: taken from the
/// store (defaults: [`TABLE`]'s) and taken again whenever one is set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlightParams {
    /// NAV_ACC_RAD: acceptance radius when an item gives none, m.
    pub nav_acc_rad_m: f64,
    /// RTL_RETURN_ALT: return altitude above home, m.
    pub rtl_return_alt_m: f64,
    /// RTL_MIN_DIST: radius around home in which the cone applies, m.
    pub rtl_min_dist_m: f64,
    /// RTL_CONE_ANG: half-angle of the return-altitude cone, deg (0: none).
    pub rtl_cone_ang_deg: f64,
    /// RTL_DESCEND_ALT: height over home to wait at before landing, m.
    pub rtl_descend_alt_m: f64,
    /// RTL_LAND_DELAY: how long to wait there, s (negative: for ever).
    pub rtl_land_delay_s: f64,
    /// MPC_XY_P: horizontal position gain, 1/s.
    pub mpc_xy_p: f64,
    /// MPC_XY_CRUISE: mission speed, m/s.
    pub mpc_xy_cruise_m_s: f64,
    /// MIS_TAKEOFF_ALT: take-off altitude above home when none is given, m.
    pub mis_takeoff_alt_m: f64,
    /// COM_DISARM_LAND: disarm this long after landing, s.
    pub com_disarm_land_s: f64,
    /// COM_DISARM_PRFLT: disarm this long after arming without taking off, s.
    pub com_disarm_prflt_s: f64,
    /// SF_ARM_EPH_MAX: GPS eph needed to arm, m.
    pub sf_arm_eph_max_m: f64,
    /// SF_ARM_GPS_TIME: how long the GPS must have been good to arm, s.
    pub sf_arm_gps_time_s: f64,
    /// SF_GROUND_TRUTH: fly on perfect state instead of the estimate.
    pub sf_ground_truth: bool,

    /// MPC_LAND_ALT1: below this height a landing slows to MPC_LAND_SPEED, m.
    pub mpc_land_alt1_m: f64,
    /// MPC_Z_V_AUTO_DN: descent speed above MPC_LAND_ALT1, m/s.
    pub mpc_z_v_auto_dn_m_s: f64,
    /// MPC_LAND_SPEED: descent speed below MPC_LAND_ALT1, m/s.
    pub mpc_land_speed_m_s: f64,
}

impl FlightParams {
    /// The height above the return point (m) at which a multicopter flies
    /// home from `dist_m` (horizontal, m) away while `height_m` above it: as
    /// PX4's `RTL::computeReturnAltitude` for rotary wings. RTL_RETURN_ALT,
    /// but within RTL_MIN_DIST only as high as the cone of half-angle
    /// RTL_CONE_ANG (never under twice NAV_ACC_RAD), within NAV_ACC_RAD
    /// twice the distance; never lower than the vehicle already is, and with
    /// the cone never higher than RTL_RETURN_ALT.
    pub fn return_height_m(&self, dist_m: f64, height_m: f64) -> f64 {
        let max_return = self.rtl_return_alt_m;
        if self.rtl_cone_ang_deg <= 0.0 {
            return height_m.max(max_return);
        }
        let acc_rad = self.nav_acc_rad_m;
        let mut h = max_return;
        if dist_m <= acc_rad {
            h = 2.0 * dist_m;
        } else {
            if dist_m <= self.rtl_min_dist_m {
                let half_angle = self.rtl_cone_ang_deg.clamp(1.0, 89.0).to_radians();
                h = h.min(dist_m / half_angle.tan());
            }
            h = h.max(2.0 * acc_rad);
        }
        h.max(height_m).min(max_return.max(height_m))
    }

    /// The values in `store`.
    pub fn from_store(store: &ParamStore) -> Self {
        let v = store.values();
        FlightParams {
            nav_acc_rad_m: v.nav_acc_rad,
            rtl_return_alt_m: v.rtl_return_alt,
            rtl_min_dist_m: v.rtl_min_dist,
            rtl_cone_ang_deg: v.rtl_cone_ang,
            rtl_descend_alt_m: v.rtl_descend_alt,
            rtl_land_delay_s: v.rtl_land_delay,
            mpc_xy_p: v.mpc_xy_p,
            mpc_xy_cruise_m_s: v.mpc_xy_cruise,
            mis_takeoff_alt_m: v.mis_takeoff_alt,
            com_disarm_land_s: v.com_disarm_land,
            com_disarm_prflt_s: v.com_disarm_prflt,
            sf_arm_eph_max_m: v.sf_arm_eph_max,
            sf_arm_gps_time_s: v.sf_arm_gps_time,
            sf_ground_truth: v.sf_ground_truth != 0.0,
            mpc_land_alt1_m: v.mpc_land_alt1,
            mpc_z_v_auto_dn_m_s: v.mpc_z_v_auto_dn,
            mpc_land_speed_m_s: v.mpc_land_speed,
        }
    }
}

/// The store: current values of every parameter.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParamStore {
    values: ParamValues,
    guidance: GuidanceParams,
}

impl ParamStore {
    /// Number of parameters.
    pub fn len(&self) -> usize {
        TABLE.len() + GUIDANCE.len()
    }

    /// Whether the store is empty (never).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Name of parameter `index`.
    pub fn name(&self, index: usize) -> Option<&'static str> {
        TABLE
            .get(index)
            .map(|p| p.name)
            .or_else(|| GUIDANCE.get(index.checked_sub(TABLE.len())?).copied())
    }

    /// Index of `name` (case-insensitive).
    pub fn index(&self, name: &str) -> Option<usize> {
        TABLE
            .iter()
            .position(|p| p.name.eq_ignore_ascii_case(name))
            .or_else(|| {
                GUIDANCE
                    .iter()
                    .position(|n| n.eq_ignore_ascii_case(name))
                    .map(|i| i + TABLE.len())
            })
    }

    /// Metadata of `name`, for the SimpleFlight table (guidance parameters
    /// report float with a wide range).
    pub fn info(&self, name: &str) -> Option<ParamInfo> {
        TABLE
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(name))
            .copied()
    }

    /// Value of `name`.
    pub fn get(&self, name: &str) -> Option<f64> {
        // (Compared without upper-casing a copy: SimpleFlight reads its
        // parameters every control cycle.)
        match TABLE.iter().position(|p| p.name.eq_ignore_ascii_case(name)) {
            Some(i) => self.values.as_array().get(i).copied(),
            None => self.guidance.get(name),
        }
    }

    /// The SimpleFlight table's values, typed.
    pub fn values(&self) -> &ParamValues {
        &self.values
    }

    /// The guidance port's parameters.
    pub fn guidance(&self) -> &GuidanceParams {
        &self.guidance
    }

    /// Sets `name` to `value` after checking its range (integers are rounded).
    ///
    /// # Errors
    /// [`ParamError`] for an unknown name or a value out of range.
    pub fn set(&mut self, name: &str, value: f64) -> Result<(), ParamError> {
        let upper = name.to_ascii_uppercase();
        if let Some(i) = TABLE.iter().position(|p| p.name == upper) {
            let p = TABLE[i];
            let v = if p.kind == ParamKind::Int {
                value.round()
            } else {
                value
            };
            if !(v.is_finite() && v >= p.min && v <= p.max) {
                return Err(ParamError::Range {
                    name: p.name.into(),
                    value,
                    min: p.min,
                    max: p.max,
                });
            }
            if let Some(slot) = self.values.slot(i) {
                *slot = v;
            }
            return Ok(());
        }
        self.guidance.set(&upper, value).map_err(|e| match e {
            mavsitl_guidance::params::ParamSetError::Unknown(n) => ParamError::Unknown(n),
            mavsitl_guidance::params::ParamSetError::NotFinite { name, value } => {
                ParamError::Range {
                    name,
                    value,
                    min: f64::MIN,
                    max: f64::MAX,
                }
            }
        })
    }

    /// Loads `NAME VALUE` lines (also `NAME,VALUE` and QGC's tab-separated
    /// `vehicle component NAME VALUE type`); `#` starts a comment. Applies every
    /// good line; returns the first bad one as an error after applying the rest.
    /// A firmware parameter SimpleFlight deliberately ignores ([`IGNORED`]) is
    /// listed in [`Loaded::ignored`], not applied; any other unknown name is an
    /// error.
    ///
    /// # Errors
    /// [`ParamError::File`] naming the first bad line.
    pub fn load(&mut self, text: &str, file: &str) -> Result<Loaded, ParamError> {
        let mut applied = 0;
        let mut ignored = Vec::new();
        let mut first_error = None;
        for (n, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let fields: Vec<&str> = line
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|s| !s.is_empty())
                .collect();
            let (name, value) = match fields.as_slice() {
                [name, value] => (*name, *value),
                [_, _, name, value, _] => (*name, *value),
                _ => {
                    first_error.get_or_insert(ParamError::File {
                        file: file.into(),
                        line: n + 1,
                        message: format!("expected 'NAME VALUE', found '{line}'"),
                    });
                    continue;
                }
            };
            let upper = name.to_ascii_uppercase();
            if self.get(&upper).is_none() && ignored_reason(&upper).is_some() {
                ignored.push(upper);
                continue;
            }
            let result = value
                .parse::<f64>()
                .map_err(|_| format!("{name}: '{value}' is not a number"))
                .and_then(|v| self.set(name, v).map_err(|e| e.to_string()));
            match result {
                Ok(()) => applied += 1,
                Err(message) => {
                    first_error.get_or_insert(ParamError::File {
                        file: file.into(),
                        line: n + 1,
                        message,
                    });
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(Loaded { applied, ignored }),
        }
    }

    /// Every parameter as `NAME VALUE` lines (loadable by [`ParamStore::load`]).
    pub fn to_file(&self) -> String {
        let mut s = String::from("# mavsitl SimpleFlight parameters\n");
        for i in 0..self.len() {
            if let Some(name) = self.name(i) {
                let _ = writeln!(s, "{name} {}", self.get(name).unwrap_or(f64::NAN));
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_return_height_follows_px4s_cone() {
        // PX4's defaults: RTL_RETURN_ALT 60, RTL_MIN_DIST 10, RTL_CONE_ANG 45,
        // NAV_ACC_RAD 2 (as PX4's rtl_params.c and RTL::computeReturnAltitude).
        let mut p = FlightParams::from_store(&ParamStore::default());
        assert_eq!(
            (p.rtl_return_alt_m, p.rtl_min_dist_m, p.rtl_cone_ang_deg),
            (60.0, 10.0, 45.0)
        );
        p.nav_acc_rad_m = 2.0;
        let h = |p: &FlightParams, d: f64, z: f64| p.return_height_m(d, z);
        // Within the acceptance radius: twice the distance, never a descent.
        assert!((h(&p, 1.0, 20.0) - 20.0).abs() < 1e-12);
        assert!((h(&p, 1.5, 0.5) - 3.0).abs() < 1e-12);
        // In the cone: the distance over tan(45°), at least 2 × NAV_ACC_RAD.
        assert!((h(&p, 6.0, 3.0) - 6.0).abs() < 1e-9);
        assert!((h(&p, 2.5, 1.0) - 4.0).abs() < 1e-12);
        assert!((h(&p, 6.0, 8.0) - 8.0).abs() < 1e-12);
        // A 30° cone is higher at the same distance: 6 / tan 30° = 10.39.
        p.rtl_cone_ang_deg = 30.0;
        assert!((h(&p, 6.0, 3.0) - 6.0 / 30f64.to_radians().tan()).abs() < 1e-9);
        p.rtl_cone_ang_deg = 45.0;
        // Beyond RTL_MIN_DIST: RTL_RETURN_ALT, or higher if already higher.
        assert!((h(&p, 10.5, 20.0) - 60.0).abs() < 1e-12);
        assert!((h(&p, 300.0, 80.0) - 80.0).abs() < 1e-12);
        // No cone: RTL_RETURN_ALT from anywhere.
        p.rtl_cone_ang_deg = 0.0;
        assert!((h(&p, 1.0, 20.0) - 60.0).abs() < 1e-12);
    }

    #[test]
    fn names_fit_mavlink_and_defaults_are_in_range() {
        let s = ParamStore::default();
        for i in 0..s.len() {
            let n = s.name(i).unwrap();
            assert!(n.len() <= 16, "{n}");
            assert_eq!(s.index(n), Some(i));
        }
        for p in TABLE {
            assert!(p.min <= p.default && p.default <= p.max, "{}", p.name);
        }
    }

    #[test]
    fn set_checks_range_and_file_loads() {
        let mut s = ParamStore::default();
        assert!(s.set("MPC_XY_CRUISE", 7.5).is_ok());
        assert_eq!(s.get("mpc_xy_cruise"), Some(7.5));
        assert!(matches!(
            s.set("MPC_XY_CRUISE", 99.0),
            Err(ParamError::Range { .. })
        ));
        assert!(matches!(s.set("NOPE", 1.0), Err(ParamError::Unknown(_))));
        s.set("SF_GROUND_TRUTH", 0.6).unwrap();
        assert_eq!(s.get("SF_GROUND_TRUTH"), Some(1.0), "integers round");
        let e = s.load("# tuning\nWP_SPEED 3\nMIS_TAKEOFF_ALT,12\n1\t1\tRTL_RETURN_ALT\t40\t9\nBOGUS 1\nMPC_Z_P x\n", "p.parm").unwrap_err();
        assert_eq!(e.to_string(), "p.parm:5: unknown parameter BOGUS");
        assert_eq!(
            (
                s.get("WP_SPEED"),
                s.get("MIS_TAKEOFF_ALT"),
                s.get("RTL_RETURN_ALT")
            ),
            (Some(3.0), Some(12.0), Some(40.0))
        );
        let again = {
            let mut t = ParamStore::default();
            t.load(&s.to_file(), "saved").unwrap();
            t
        };
        assert_eq!(again, s, "saved file loads back identically");
    }

    #[test]
    fn firmware_parameters_without_effect_are_listed_not_refused() {
        let mut s = ParamStore::default();
        let text =
            "FRAME_CLASS 2\nSERVO1_FUNCTION 73\nwp_speed 1.5\nSIM_RATE_HZ 200\nRC3_MIN 1000\n";
        let l = s.load(text, "boat.parm").unwrap();
        assert_eq!(l.applied, 1);
        assert_eq!(
            l.ignored,
            ["FRAME_CLASS", "SERVO1_FUNCTION", "SIM_RATE_HZ", "RC3_MIN"]
        );
        assert_eq!(s.get("WP_SPEED"), Some(1.5));
        // A family that needs digits does not swallow a misspelt name, and a
        // misspelt tuning parameter is refused with its file and line.
        for (line, name) in [
            ("SERVO_FUNCTION 1", "SERVO_FUNCTION"),
            ("RCX 1", "RCX"),
            ("ATC_STR_RAT_PP 1", "ATC_STR_RAT_PP"),
        ] {
            let e = s
                .load(&format!("WP_SPEED 2\n{line}\n"), "b.parm")
                .unwrap_err();
            assert_eq!(e.to_string(), format!("b.parm:2: unknown parameter {name}"));
        }
        assert_eq!(ignored_reason("MPC_XY_P"), None);
        assert!(ignored_reason("SERVO12_MAX").is_some());
    }

    #[test]
    fn the_flight_snapshot_reads_the_table_and_follows_a_set() {
        let mut store = ParamStore::default();
        let p = FlightParams::from_store(&store);
        let all = [
            p.nav_acc_rad_m,
            p.rtl_return_alt_m,
            p.mpc_xy_p,
            p.mpc_xy_cruise_m_s,
            p.mis_takeoff_alt_m,
            p.com_disarm_land_s,
            p.com_disarm_prflt_s,
            p.sf_arm_eph_max_m,
            p.sf_arm_gps_time_s,
            p.mpc_land_alt1_m,
            p.mpc_z_v_auto_dn_m_s,
            p.mpc_land_speed_m_s,
        ];
        assert!(
            all.iter().all(|v| v.is_finite()),
            "a name not in the table: {p:?}"
        );
        assert_eq!(
            (p.nav_acc_rad_m, p.sf_arm_eph_max_m, p.sf_ground_truth),
            (2.0, 1.0, false)
        );
        store.set("SF_ARM_GPS_TIME", 5.0).unwrap();
        assert_eq!(FlightParams::from_store(&store).sf_arm_gps_time_s, 5.0);
        assert_eq!(store.values().sf_arm_gps_time, 5.0);
        assert_eq!(store.get("NO_SUCH_PARAM"), None);
    }

    /// Each name of the table sets its own typed field, and only that one.
    #[test]
    fn every_parameter_is_one_typed_field() {
        for (i, info) in TABLE.iter().enumerate() {
            let mut store = ParamStore::default();
            let before = store.values().as_array();
            let mut v = info.min + 0.37 * (info.max - info.min).min(1e6);
            if info.kind == ParamKind::Int {
                v = v.round();
            }
            if v == info.default {
                v = match info.kind {
                    ParamKind::Int if v < info.max => v + 1.0,
                    ParamKind::Int => v - 1.0,
                    ParamKind::Float => (v + info.max) / 2.0,
                };
            }
            store.set(info.name, v).unwrap_or_else(|e| panic!("{e}"));
            let after = store.values().as_array();
            assert_eq!(after[i], v, "{}", info.name);
            assert_eq!(store.get(info.name), Some(v), "{}", info.name);
            for (j, (a, b)) in before.iter().zip(&after).enumerate() {
                assert!(j == i || a == b, "{} changed {}", info.name, TABLE[j].name);
            }
        }
        for (field, info) in FIELDS.iter().zip(TABLE) {
            assert_eq!(
                *field,
                info.name.to_lowercase(),
                "a row names another field"
            );
        }
        let defaults: Vec<f64> = TABLE.iter().map(|p| p.default).collect();
        assert_eq!(ParamValues::default().as_array().to_vec(), defaults);
    }
}
