//! What the active faults do to one vehicle during one tick.
//!
//! Nominal values are the identity (scales 1, offsets 0, nothing lost), so the
//! models apply the effects unconditionally. Several faults of one kind combine:
//! scales multiply, offsets add, losses are or-ed.

use nalgebra::Vector3;

/// Actuator channels a fault can scale (rotors of a multirotor, thrusters of a
/// boat, wheel motors of a rover).
pub const MAX_FAULT_CHANNELS: usize = 8;

/// GPS receiver faults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GpsFault {
    /// No fix (as in a GPS-denied zone).
    pub lost: bool,
    /// Multiplies the position and velocity noise and the reported eph/epv
    /// (jamming), ≥ 1.
    pub noise_scale: f64,
    /// Added to the reported position (spoofing), NED m; the reported accuracy
    /// does not change.
    pub offset_ned_m: Vector3<f64>,
    /// Added to the reported velocity (the spoofer's ramp), NED m/s.
    pub offset_vel_ned_m_s: Vector3<f64>,
}

/// IMU faults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ImuFault {
    /// Outputs frozen at the last sample before the fault.
    pub stuck: bool,
    /// Multiplies the white noise of gyro and accelerometer.
    pub noise_scale: f64,
    /// Added to the gyro, sensor axes, rad/s.
    pub gyro_bias_rad_s: Vector3<f64>,
    /// Added to the accelerometer, sensor axes, m/s².
    pub accel_bias_m_s2: Vector3<f64>,
}

/// Battery faults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BatteryFault {
    /// The pack holds this fraction of its capacity (and of the charge it had
    /// left when the fault began): it drains 1/scale times faster. (0, 1].
    pub capacity_scale: f64,
    /// Subtracted from the terminal voltage, V.
    pub voltage_drop_v: f64,
}

/// Links between the vehicle and the outside.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LinkFaults {
    /// RC input stops (firmware bridges stop sending RC).
    pub rc_lost: bool,
    /// The ground-station link is silent both ways.
    pub gcs_lost: bool,
}

/// Everything the active faults do to one vehicle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FaultEffects {
    /// GPS.
    pub gps: GpsFault,
    /// IMU.
    pub imu: ImuFault,
    /// Added to the barometric altitude, m (up).
    pub baro_offset_m: f64,
    /// Added to the measured field, sensor axes, gauss.
    pub mag_offset_gauss: Vector3<f64>,
    /// Thrust multiplier of each rotor (multirotor motor order), 0..1.
    pub rotor_thrust_scale: [f64; MAX_FAULT_CHANNELS],
    /// Thrust multiplier of each thruster (boat: left, right; or the single
    /// thruster as 0), 0..1.
    pub thruster_thrust_scale: [f64; MAX_FAULT_CHANNELS],
    /// Torque multiplier of each wheel motor (skid steer: left, right; or an
    /// Ackermann rover's one motor as 0), 0..1.
    pub wheel_motor_torque_scale: [f64; MAX_FAULT_CHANNELS],
    /// Friction multiplier under each wheel (front left, front right, rear
    /// left, rear right).
    pub tyre_grip_scale: [f64; 4],
    /// Battery.
    pub battery: BatteryFault,
    /// Gust added to the wind, NED m/s.
    pub gust_ned_m_s: Vector3<f64>,
    /// Links.
    pub links: LinkFaults,
}

impl Default for FaultEffects {
    fn default() -> Self {
        FaultEffects {
            gps: GpsFault {
                lost: false,
                noise_scale: 1.0,
                offset_ned_m: Vector3::zeros(),
                offset_vel_ned_m_s: Vector3::zeros(),
            },
            imu: ImuFault {
                stuck: false,
                noise_scale: 1.0,
                gyro_bias_rad_s: Vector3::zeros(),
                accel_bias_m_s2: Vector3::zeros(),
            },
            baro_offset_m: 0.0,
            mag_offset_gauss: Vector3::zeros(),
            rotor_thrust_scale: [1.0; MAX_FAULT_CHANNELS],
            thruster_thrust_scale: [1.0; MAX_FAULT_CHANNELS],
            wheel_motor_torque_scale: [1.0; MAX_FAULT_CHANNELS],
            tyre_grip_scale: [1.0; 4],
            battery: BatteryFault {
                capacity_scale: 1.0,
                voltage_drop_v: 0.0,
            },
            gust_ned_m_s: Vector3::zeros(),
            links: LinkFaults::default(),
        }
    }
}

impl FaultEffects {
    /// Nothing is faulty.
    pub fn is_nominal(&self) -> bool {
        *self == FaultEffects::default()
    }
}
