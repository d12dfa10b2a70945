//! The HIL messages of a lockstep step: HIL_SENSOR, HIL_GPS,
//! HIL_STATE_QUATERNION and RC_CHANNELS, from the sensor frame, in PX4's
//! units.

use mavlink::dialects::common::{
    HilSensorUpdatedFlags, MavMessage, HIL_GPS_DATA, HIL_SENSOR_DATA, HIL_STATE_QUATERNION_DATA,
    RC_CHANNELS_DATA,
};
use mavsitl_core::controller::SensorFrame;
use mavsitl_core::time::SimTime;
use mavsitl_mavlink::wire::{deg_e7, GpsScaled};

use super::Px4Bridge;

/// Metres (per second) as centimetres (per second), saturated to i16.
fn cm_i16(v: f64) -> i16 {
    (v * 100.0).round().clamp(i16::MIN as f64, i16::MAX as f64) as i16
}

/// HIL_STATE_QUATERNION's accelerations: the kinematic acceleration
/// `accel_ned_m_s2` in the body frame (FRD) of attitude `att_ned_frd`, mG, as
/// PX4's simulators send them (Gazebo's `RelativeLinearAccel`, SIH).
fn hil_state_accel_mg(
    att_ned_frd: &nalgebra::UnitQuaternion<f64>,
    accel_ned_m_s2: &nalgebra::Vector3<f64>,
) -> [i16; 3] {
    let a = att_ned_frd.inverse() * accel_ned_m_s2;
    a.map(|v| {
        (v / mavsitl_core::atmosphere::G0_M_S2 * 1000.0)
            .round()
            .clamp(i16::MIN as f64, i16::MAX as f64) as i16
    })
    .into()
}

impl Px4Bridge {
    /// One lockstep step's messages: GPS, ground truth and RC when due, and
    /// HIL_SENSOR last (it releases PX4's step).
    pub(super) fn sensors(&mut self, f: &SensorFrame) {
        self.send_gps(f);
        self.send_ground_truth(f);
        self.send_rc(f);
        self.send_hil_sensor(f);
        self.stats.steps += 1;
        self.last_sensor = Some(f.time);
    }

    /// HIL_GPS for the reports delivered in this step (the model applied the
    /// latency); time-stamped in UTC at their measurement.
    fn send_gps(&mut self, f: &SensorFrame) {
        for g in f.gps.iter() {
            let w = GpsScaled::of(g);
            self.send(MavMessage::HIL_GPS(HIL_GPS_DATA {
                time_usec: self.opts.utc_epoch_us + g.measured.as_micros(),
                lat: w.lat,
                lon: w.lon,
                alt: w.alt_mm,
                eph: w.eph_cm,
                epv: w.epv_cm,
                vel: w.vel_cm_s,
                vn: cm_i16(g.vel_ned_m_s.x),
                ve: cm_i16(g.vel_ned_m_s.y),
                vd: cm_i16(g.vel_ned_m_s.z),
                cog: w.cog_cdeg,
                fix_type: w.fix_type,
                satellites_visible: g.satellites,
                id: 0,
                yaw: 0,
            }));
            self.stats.gps_sent += 1;
        }
    }

    /// HIL_STATE_QUATERNION at the interval PX4 asked for (one message at
    /// most per step, keeping the average rate).
    fn send_ground_truth(&mut self, f: &SensorFrame) {
        let t = f.time.as_micros();
        if let (Some(iv), Some(gt)) = (self.state_interval_us, f.ground_truth) {
            if f.time >= self.next_state {
                // Keep the asked average rate (one message at most per step).
                let iv = iv.max(1);
                let due = self.next_state.as_micros();
                let base = if due.saturating_add(iv) < t { t } else { due };
                self.next_state = SimTime::from_micros(base.saturating_add(iv));
                let q = gt.att_ned_frd;
                let p = self.frame.to_geodetic(&gt.pos_ned_m);
                let [xacc, yacc, zacc] = hil_state_accel_mg(&q, &gt.accel_ned_m_s2);
                self.send(MavMessage::HIL_STATE_QUATERNION(
                    HIL_STATE_QUATERNION_DATA {
                        time_usec: t,
                        attitude_quaternion: [q.w as f32, q.i as f32, q.j as f32, q.k as f32],
                        rollspeed: gt.rate_frd_rad_s.x as f32,
                        pitchspeed: gt.rate_frd_rad_s.y as f32,
                        yawspeed: gt.rate_frd_rad_s.z as f32,
                        lat: deg_e7(p.lat_rad),
                        lon: deg_e7(p.lon_rad),
                        alt: (p.alt_m * 1000.0).round() as i32,
                        vx: cm_i16(gt.vel_ned_m_s.x),
                        vy: cm_i16(gt.vel_ned_m_s.y),
                        vz: cm_i16(gt.vel_ned_m_s.z),
                        ind_airspeed: 0,
                        true_airspeed: 0,
                        xacc,
                        yacc,
                        zacc,
                    },
                ));
            }
        }
    }

    /// RC_CHANNELS, if the scenario scripts the sticks and RC is not lost.
    fn send_rc(&mut self, f: &SensorFrame) {
        let t = f.time.as_micros();
        if let Some(rc) = self.opts.rc.as_ref().filter(|_| !f.links.rc_lost) {
            if self.stats.steps.is_multiple_of(rc.every_steps.max(1)) {
                if let Some(ch) = rc.at(f.time) {
                    let v = |i: usize| ch.get(i).copied().unwrap_or(u16::MAX);
                    let msg = MavMessage::RC_CHANNELS(RC_CHANNELS_DATA {
                        time_boot_ms: (t / 1000) as u32,
                        chan1_raw: v(0),
                        chan2_raw: v(1),
                        chan3_raw: v(2),
                        chan4_raw: v(3),
                        chan5_raw: v(4),
                        chan6_raw: v(5),
                        chan7_raw: v(6),
                        chan8_raw: v(7),
                        chan9_raw: v(8),
                        chan10_raw: v(9),
                        chan11_raw: v(10),
                        chan12_raw: v(11),
                        chan13_raw: v(12),
                        chan14_raw: v(13),
                        chan15_raw: v(14),
                        chan16_raw: v(15),
                        chan17_raw: v(16),
                        chan18_raw: v(17),
                        chancount: ch.len() as u8,
                        rssi: 255,
                    });
                    self.send(msg);
                }
            }
        }
    }

    /// HIL_SENSOR id 0 with the step's newest IMU, magnetometer and
    /// barometer samples, flagged as updated.
    fn send_hil_sensor(&mut self, f: &SensorFrame) {
        let t = f.time.as_micros();
        use HilSensorUpdatedFlags as F;
        let mut flags = F::empty();
        let mut m = HIL_SENSOR_DATA {
            time_usec: t,
            ..HIL_SENSOR_DATA::DEFAULT
        };
        m.fields_updated = F::empty();
        if let Some(s) = f.imu.iter().last() {
            m.xacc = s.accel_m_s2.x as f32;
            m.yacc = s.accel_m_s2.y as f32;
            m.zacc = s.accel_m_s2.z as f32;
            m.xgyro = s.gyro_rad_s.x as f32;
            m.ygyro = s.gyro_rad_s.y as f32;
            m.zgyro = s.gyro_rad_s.z as f32;
            flags |= F::HIL_SENSOR_UPDATED_XACC
                | F::HIL_SENSOR_UPDATED_YACC
                | F::HIL_SENSOR_UPDATED_ZACC
                | F::HIL_SENSOR_UPDATED_XGYRO
                | F::HIL_SENSOR_UPDATED_YGYRO
                | F::HIL_SENSOR_UPDATED_ZGYRO;
        }
        if let Some(s) = f.mag.iter().last() {
            m.xmag = s.field_gauss.x as f32;
            m.ymag = s.field_gauss.y as f32;
            m.zmag = s.field_gauss.z as f32;
            flags |= F::HIL_SENSOR_UPDATED_XMAG
                | F::HIL_SENSOR_UPDATED_YMAG
                | F::HIL_SENSOR_UPDATED_ZMAG;
        }
        if let Some(s) = f.baro.iter().last() {
            m.abs_pressure = (s.pressure_pa / 100.0) as f32;
            m.pressure_alt = s.pressure_altitude_m as f32;
            m.temperature = s.temperature_degc as f32;
            flags |= F::HIL_SENSOR_UPDATED_ABS_PRESSURE
                | F::HIL_SENSOR_UPDATED_PRESSURE_ALT
                | F::HIL_SENSOR_UPDATED_TEMPERATURE;
        }
        m.fields_updated = flags;
        m.id = 0;
        self.send(MavMessage::HIL_SENSOR(m));
    }
}

#[cfg(test)]
mod tests {
    use nalgebra::{UnitQuaternion, Vector3};

    #[test]
    fn ground_truth_accelerations_are_in_the_body_frame() {
        // Facing east, accelerating north at 1 g: the body's left, −y.
        let east = UnitQuaternion::from_euler_angles(0.0, 0.0, std::f64::consts::FRAC_PI_2);
        let north = Vector3::new(mavsitl_core::atmosphere::G0_M_S2, 0.0, 0.0);
        assert_eq!(super::hil_state_accel_mg(&east, &north), [0, -1000, 0]);
    }
}
