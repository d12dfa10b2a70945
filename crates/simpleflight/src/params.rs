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

const fn f(
    name: &'static str,
    default: f64,
    min: f64,
    max: f64,
    units: &'static str,
    description: &'static str,
) -> ParamInfo {
    ParamInfo {
        name,
        kind: ParamKind::Float,
        default,
        min,
        max,
        units,
        description,
    }
}

const fn i(
    name: &'static str,
    default: f64,
    min: f64,
    max: f64,
    description: &'static str,
) -> ParamInfo {
    ParamInfo {
        name,
        kind: ParamKind::Int,
        default,
        min,
        max,
        units: "",
        description,
    }
}

/// The SimpleFlight parameters besides the guidance port's (see [`GUIDANCE`]).
pub const TABLE: &[ParamInfo] = &[
    // Identity and mission behaviour (PX4 names QGC and MAVSDK read).
    i(
        "SYS_AUTOSTART",
        4001.0,
        0.0,
        9_999_999.0,
        "Airframe id reported to ground stations (PX4 meaning)",
    ),
    i("MAV_SYS_ID", 1.0, 1.0, 250.0, "MAVLink system id"),
    i(
        "MAV_COMP_ID",
        1.0,
        1.0,
        250.0,
        "MAVLink component id of the autopilot",
    ),
    i(
        "SYS_AUTOCONFIG",
        0.0,
        0.0,
        2.0,
        "Reset parameters to the airframe defaults at boot (PX4 meaning; no effect)",
    ),
    // Failsafes (PX4 names, defaults and meanings).
    i(
        "GF_ACTION",
        2.0,
        0.0,
        5.0,
        "Geofence breach: 0 none, 1 warning, 2 hold, 3 return, 4 terminate, 5 land",
    ),
    f(
        "GF_MAX_HOR_DIST",
        0.0,
        0.0,
        10_000.0,
        "m",
        "Horizontal distance from home beyond which the fence is breached (0: off)",
    ),
    f(
        "GF_MAX_VER_DIST",
        0.0,
        0.0,
        10_000.0,
        "m",
        "Height above home beyond which the fence is breached (0: off)",
    ),
    f(
        "BAT_LOW_THR",
        0.15,
        0.12,
        0.5,
        "",
        "Remaining charge below which the battery is low",
    ),
    f(
        "BAT_CRIT_THR",
        0.07,
        0.05,
        0.5,
        "",
        "Remaining charge below which the battery is critical",
    ),
    f(
        "BAT_EMERGEN_THR",
        0.05,
        0.03,
        0.5,
        "",
        "Remaining charge below which the battery is an emergency",
    ),
    i(
        "COM_LOW_BAT_ACT",
        0.0,
        0.0,
        3.0,
        "Battery failsafe: 0 warning, 2 land, 3 return at critical and land at emergency",
    ),
    f(
        "COM_POS_FS_DELAY",
        1.0,
        0.0,
        100.0,
        "s",
        "How long the position estimate must be invalid before the failsafe",
    ),
    f(
        "COM_POS_FS_EPH",
        5.0,
        0.0,
        1000.0,
        "m",
        "Horizontal accuracy beyond which the position estimate is invalid",
    ),
    i(
        "NAV_DLL_ACT",
        0.0,
        0.0,
        6.0,
        "Data-link loss: 0 disabled, 1 hold, 2 return, 3 land, 5 terminate",
    ),
    f(
        "COM_DL_LOSS_T",
        10.0,
        5.0,
        300.0,
        "s",
        "Time without a ground-station heartbeat before the data link is lost",
    ),
    i(
        "COM_ACT_FAIL_ACT",
        0.0,
        0.0,
        4.0,
        "Motor failure: 0 warning, 1 hold, 2 land, 3 return, 4 terminate",
    ),
    f(
        "COM_DISARM_LAND",
        2.0,
        -1.0,
        20.0,
        "s",
        "Disarm this long after landing (-1: never)",
    ),
    f(
        "COM_DISARM_PRFLT",
        10.0,
        -1.0,
        20.0,
        "s",
        "Disarm this long after arming if the vehicle does not take off (-1: never)",
    ),
    i(
        "BAT1_N_CELLS",
        4.0,
        1.0,
        24.0,
        "Cells in series of battery 1",
    ),
    f(
        "BAT1_V_CHARGED",
        4.2,
        3.0,
        5.0,
        "V",
        "Cell voltage of a full battery",
    ),
    f(
        "BAT1_V_EMPTY",
        3.5,
        2.5,
        4.0,
        "V",
        "Cell voltage of an empty battery",
    ),
    f(
        "BAT1_CAPACITY",
        5000.0,
        -1.0,
        100_000.0,
        "mAh",
        "Capacity of battery 1",
    ),
    i(
        "MAV_TYPE",
        2.0,
        0.0,
        50.0,
        "MAVLink vehicle type (2 quad, 11 surface boat)",
    ),
    f(
        "MIS_TAKEOFF_ALT",
        2.5,
        0.0,
        500.0,
        "m",
        "Take-off altitude above home when none is given",
    ),
    f(
        "RTL_RETURN_ALT",
        60.0,
        0.0,
        500.0,
        "m",
        "Return altitude above home (multicopter), lowered near home by RTL_CONE_ANG",
    ),
    f(
        "RTL_DESCEND_ALT",
        30.0,
        0.0,
        500.0,
        "m",
        "Altitude above home descended to before landing (landing follows without delay)",
    ),
    f(
        "RTL_MIN_DIST",
        10.0,
        0.5,
        500.0,
        "m",
        "Within this horizontal distance of home the return altitude follows RTL_CONE_ANG",
    ),
    f(
        "RTL_LAND_DELAY",
        0.0,
        -1.0,
        300.0,
        "s",
        "Hover at RTL_DESCEND_ALT over home this long before landing (-1: never land)",
    ),
    i(
        "RTL_CONE_ANG",
        45.0,
        0.0,
        90.0,
        "Half-angle of the return-altitude cone above home, deg (0: always RTL_RETURN_ALT)",
    ),
    f(
        "NAV_ACC_RAD",
        2.0,
        0.05,
        200.0,
        "m",
        "Waypoint acceptance radius when an item gives none",
    ),
    f(
        "MPC_XY_CRUISE",
        5.0,
        0.5,
        20.0,
        "m/s",
        "Mission horizontal speed (multicopter)",
    ),
    f(
        "MPC_Z_V_AUTO_UP",
        3.0,
        0.5,
        8.0,
        "m/s",
        "Mission climb speed",
    ),
    f(
        "MPC_Z_V_AUTO_DN",
        1.5,
        0.3,
        4.0,
        "m/s",
        "Mission descent speed",
    ),
    f(
        "MPC_ACC_HOR",
        3.0,
        0.5,
        15.0,
        "m/s^2",
        "Mission horizontal acceleration",
    ),
    f(
        "MPC_ACC_UP_MAX",
        2.0,
        0.5,
        15.0,
        "m/s^2",
        "Mission vertical acceleration",
    ),
    f("MPC_JERK_AUTO", 4.0, 0.5, 80.0, "m/s^3", "Mission jerk"),
    f(
        "MPC_LAND_SPEED",
        0.7,
        0.2,
        3.0,
        "m/s",
        "Final landing speed",
    ),
    f(
        "MPC_LAND_ALT1",
        5.0,
        0.0,
        100.0,
        "m",
        "Below this height the landing slows to MPC_LAND_SPEED",
    ),
    f(
        "MPC_TKO_SPEED",
        1.5,
        0.5,
        5.0,
        "m/s",
        "Take-off climb speed",
    ),
    // Multicopter cascade.
    f(
        "MPC_XY_P",
        0.95,
        0.0,
        2.0,
        "1/s",
        "Horizontal position gain",
    ),
    f("MPC_Z_P", 1.0, 0.0, 2.0, "1/s", "Vertical position gain"),
    f(
        "MPC_XY_VEL_P_ACC",
        1.8,
        0.0,
        10.0,
        "1/s",
        "Horizontal velocity P",
    ),
    f(
        "MPC_XY_VEL_I_ACC",
        0.4,
        0.0,
        10.0,
        "1/s^2",
        "Horizontal velocity I",
    ),
    f(
        "MPC_Z_VEL_P_ACC",
        4.0,
        0.0,
        15.0,
        "1/s",
        "Vertical velocity P",
    ),
    f(
        "MPC_Z_VEL_I_ACC",
        2.0,
        0.0,
        10.0,
        "1/s^2",
        "Vertical velocity I",
    ),
    f(
        "MPC_XY_VEL_MAX",
        12.0,
        0.0,
        20.0,
        "m/s",
        "Horizontal speed limit",
    ),
    f(
        "MPC_Z_VEL_MAX_UP",
        3.0,
        0.5,
        8.0,
        "m/s",
        "Climb speed limit",
    ),
    f(
        "MPC_Z_VEL_MAX_DN",
        1.5,
        0.5,
        4.0,
        "m/s",
        "Descent speed limit",
    ),
    f("MPC_TILTMAX_AIR", 35.0, 20.0, 89.0, "deg", "Tilt limit"),
    f("MC_ROLL_P", 6.5, 0.0, 12.0, "1/s", "Roll attitude gain"),
    f("MC_PITCH_P", 6.5, 0.0, 12.0, "1/s", "Pitch attitude gain"),
    f("MC_YAW_P", 2.8, 0.0, 5.0, "1/s", "Yaw attitude gain"),
    f(
        "MC_ROLLRATE_MAX",
        220.0,
        0.0,
        1800.0,
        "deg/s",
        "Roll/pitch rate limit",
    ),
    f(
        "MC_YAWRATE_MAX",
        200.0,
        0.0,
        1800.0,
        "deg/s",
        "Yaw rate limit",
    ),
    f(
        "SF_RATE_RP_K",
        18.0,
        0.0,
        200.0,
        "1/s",
        "Roll/pitch rate loop bandwidth",
    ),
    f(
        "SF_RATE_RP_I",
        8.0,
        0.0,
        200.0,
        "1/s^2",
        "Roll/pitch rate loop integral",
    ),
    f(
        "SF_RATE_Y_K",
        8.0,
        0.0,
        200.0,
        "1/s",
        "Yaw rate loop bandwidth",
    ),
    f(
        "SF_RATE_Y_I",
        2.0,
        0.0,
        200.0,
        "1/s^2",
        "Yaw rate loop integral",
    ),
    // Estimator.
    f(
        "SF_EST_K_GRAV",
        1.0,
        0.0,
        10.0,
        "1/s",
        "Attitude correction gain from gravity",
    ),
    f(
        "SF_EST_K_MAG",
        0.5,
        0.0,
        10.0,
        "1/s",
        "Heading correction gain from the magnetometer",
    ),
    f(
        "SF_EST_K_BIAS",
        0.02,
        0.0,
        1.0,
        "1/s",
        "Gyro bias learning gain",
    ),
    f(
        "SF_EST_W_XY",
        1.0,
        0.05,
        10.0,
        "rad/s",
        "Horizontal GPS fusion bandwidth",
    ),
    f(
        "SF_EST_W_Z",
        2.0,
        0.05,
        10.0,
        "rad/s",
        "Barometric height fusion bandwidth",
    ),
    f(
        "SF_ARM_EPH_MAX",
        1.0,
        0.1,
        100.0,
        "m",
        "Pre-arm: GPS horizontal accuracy (eph) needed",
    ),
    f(
        "SF_ARM_GPS_TIME",
        2.0,
        0.0,
        600.0,
        "s",
        "Pre-arm: how long the GPS must have been that good",
    ),
    i(
        "SF_GROUND_TRUTH",
        0.0,
        0.0,
        1.0,
        "1: fly on perfect state instead of the estimator",
    ),
];

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
        FlightParams {
            nav_acc_rad_m: store.value("NAV_ACC_RAD"),
            rtl_return_alt_m: store.value("RTL_RETURN_ALT"),
            rtl_min_dist_m: store.value("RTL_MIN_DIST"),
            rtl_cone_ang_deg: store.value("RTL_CONE_ANG"),
            rtl_descend_alt_m: store.value("RTL_DESCEND_ALT"),
            rtl_land_delay_s: store.value("RTL_LAND_DELAY"),
            mpc_xy_p: store.value("MPC_XY_P"),
            mpc_xy_cruise_m_s: store.value("MPC_XY_CRUISE"),
            mis_takeoff_alt_m: store.value("MIS_TAKEOFF_ALT"),
            com_disarm_land_s: store.value("COM_DISARM_LAND"),
            com_disarm_prflt_s: store.value("COM_DISARM_PRFLT"),
            sf_arm_eph_max_m: store.value("SF_ARM_EPH_MAX"),
            sf_arm_gps_time_s: store.value("SF_ARM_GPS_TIME"),
            sf_ground_truth: store.value("SF_GROUND_TRUTH") != 0.0,
            mpc_land_alt1_m: store.value("MPC_LAND_ALT1"),
            mpc_z_v_auto_dn_m_s: store.value("MPC_Z_V_AUTO_DN"),
            mpc_land_speed_m_s: store.value("MPC_LAND_SPEED"),
        }
    }
}

/// The store: current values of every parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamStore {
    values: Vec<f64>,
    guidance: GuidanceParams,
}

impl Default for ParamStore {
    fn default() -> Self {
        ParamStore {
            values: TABLE.iter().map(|p| p.default).collect(),
            guidance: GuidanceParams::default(),
        }
    }
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
            Some(i) => self.values.get(i).copied(),
            None => self.guidance.get(name),
        }
    }

    /// Value of `name`, a parameter of the SimpleFlight table (its default
    /// unless set). A name not in the table reads NaN, so a typo fails the
    /// tests rather than flying on a made-up default.
    pub fn value(&self, name: &str) -> f64 {
        self.get(name).unwrap_or(f64::NAN)
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
            self.values[i] = v;
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
        assert!(store.value("NO_SUCH_PARAM").is_nan());
    }
}
