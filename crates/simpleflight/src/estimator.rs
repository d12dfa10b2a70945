//! SimpleFlight's state estimator: a GPS-aided complementary filter.
//!
//! It sees only the sensors (IMU, GPS, barometer, magnetometer), never the
//! physics. Two coupled parts:
//!
//! - **Attitude** (Mahony, Hamel & Pflimlin, "Nonlinear complementary filters on
//!   the special orthogonal group", IEEE TAC 2008): gyro integration corrected
//!   towards (a) the gravity direction and (b) the magnetometer, for heading
//!   only (its correction is projected on the vertical axis, so magnetic
//!   disturbances cannot tilt the estimate); a proportional–integral law also
//!   estimates the gyro bias. With GPS, the tilt reference is the change of
//!   GPS velocity over [`TILT_WINDOW_S`] against the change the IMU
//!   integrated over *the same measurement times* (the specific force rotated
//!   by the estimated attitude, plus gravity): their difference is the
//!   horizontal acceleration a tilt error makes, as ArduPilot's DCM compares
//!   GPS and accelerometer velocity changes. Matching the times matters: a
//!   GPS-derived acceleration compared with the instantaneous specific force
//!   lags by the receiver latency, and every acceleration of the vehicle then
//!   tilted the estimate, and drifted the velocity, by up to 1 m/s.
//!   Without GPS, the specific force itself is the gravity reference, trusted
//!   only weakly unless the vehicle is flown level.
//! - **Position and velocity** in local NED: IMU specific force rotated to NED
//!   plus gravity, integrated, and corrected by second-order complementary
//!   gains from GPS position and velocity and barometric height. GPS samples are
//!   late (receiver latency): each is compared with the estimate *at its
//!   measurement time*, kept in a short history, and the correction applied now.
//!
//! The vertical reference is the position at power-up (the vehicle's CG standing
//! on the ground, `initial_down_m` below home), tracked by the barometer, with
//! GPS height pulling weakly so baro drift stays bounded.
//!
//! The corrections arrive in steps (GPS at 10 Hz, barometer at 50 Hz). The
//! state handed to the controllers is not stepped: as PX4's EKF2 output
//! predictor does (EKF2_TAU_POS, EKF2_TAU_VEL), each correction first goes
//! into a residual that decays with [`OUTPUT_TAU_S`], so the output moves
//! smoothly towards the corrected state. Without it every GPS report stepped
//! the position set-point error, and the position and velocity gains turned
//! the step into an acceleration step: jerk of several m/s³ at 10 Hz.

use std::collections::VecDeque;

use nalgebra::{UnitQuaternion, Vector3};

use mavsitl_core::atmosphere;
use mavsitl_core::geo::LocalFrame;
use mavsitl_core::samples::{BaroSample, FixType, GpsSample, ImuSample, MagSample};
use mavsitl_core::time::SimTime;

/// Gains and settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EstimatorParams {
    /// Attitude correction gain from gravity, rad/s per unit error.
    pub k_gravity: f64,
    /// Heading correction gain from the magnetometer.
    pub k_mag: f64,
    /// Gyro-bias integral gain.
    pub k_bias: f64,
    /// Horizontal position-loop natural frequency, rad/s.
    pub omega_xy: f64,
    /// Vertical position-loop natural frequency (baro), rad/s.
    pub omega_z: f64,
    /// Weight of GPS velocity against GPS position corrections.
    pub k_gps_vel: f64,
    /// Weight of GPS height against baro height (0..1).
    pub gps_height_weight: f64,
}

impl Default for EstimatorParams {
    fn default() -> Self {
        EstimatorParams {
            k_gravity: 1.0,
            k_mag: 0.5,
            k_bias: 0.02,
            omega_xy: 1.0,
            omega_z: 2.0,
            k_gps_vel: 1.5,
            gps_height_weight: 0.02,
        }
    }
}

/// What the autopilot knows of its state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EstimatedState {
    /// Position, local NED, m.
    pub pos_ned_m: Vector3<f64>,
    /// Velocity, NED, m/s.
    pub vel_ned_m_s: Vector3<f64>,
    /// Attitude, FRD → NED.
    pub att_ned_frd: UnitQuaternion<f64>,
    /// Body rates (gyro minus estimated bias), FRD, rad/s.
    pub rate_frd_rad_s: Vector3<f64>,
    /// Acceleration, NED, m/s² (from the IMU, low-passed).
    pub accel_ned_m_s2: Vector3<f64>,
    /// Specific force, FRD, m/s² (last IMU sample, bias not removed).
    pub specific_force_frd_m_s2: Vector3<f64>,
    /// Air density estimated from the barometer, kg/m³.
    pub air_density_kg_m3: f64,
}

#[derive(Debug, Clone, Copy)]
struct Past {
    time: SimTime,
    /// Position, NED m (in the history: less the corrections made before).
    pos: Vector3<f64>,
    /// Velocity, NED m/s (likewise).
    vel: Vector3<f64>,
    /// The IMU's own velocity change since power-up (never corrected), m/s.
    imu_dv: Vector3<f64>,
}

/// A GPS velocity with the IMU's velocity change at its measurement time.
#[derive(Debug, Clone, Copy)]
struct GpsDelta {
    time: SimTime,
    vel: Vector3<f64>,
    imu_dv: Vector3<f64>,
}

/// The estimator.
#[derive(Debug, Clone)]
pub struct Estimator {
    /// Gains.
    pub params: EstimatorParams,
    frame: LocalFrame,
    mag_ref_ned: Vector3<f64>,
    g_m_s2: f64,
    q: UnitQuaternion<f64>,
    gyro_bias: Vector3<f64>,
    pos: Vector3<f64>,
    vel: Vector3<f64>,
    accel_ned: Vector3<f64>,
    /// Integral of the specific force in NED plus gravity, m/s.
    imu_dv: Vector3<f64>,
    /// Recent GPS velocities with the IMU's velocity change at the same times.
    gps_deltas: VecDeque<GpsDelta>,
    /// Tilt correction rate from the last GPS comparison, NED rad/s.
    tilt_rate_ned: Vector3<f64>,
    last_gps_vel: Option<(SimTime, Vector3<f64>)>,
    rate: Vector3<f64>,
    specific_force: Vector3<f64>,
    baro_ref_m: Option<f64>,
    baro_samples: u32,
    initial_down_m: f64,
    last_imu: Option<SimTime>,
    last_mag: Option<SimTime>,
    last_baro: Option<SimTime>,
    history: VecDeque<Past>,
    attitude_aligned: bool,
    position_aligned: bool,
    air_density: f64,
    /// Measurement time and eph of the last GPS position fused.
    last_fix: Option<(SimTime, f64)>,
    /// The autopilot holds the attitude level and does not manoeuvre: the
    /// specific force is a gravity reference again, GPS or not.
    unaccelerated: bool,
    /// Corrections not yet passed to the output: position (NED m) and
    /// velocity (NED m/s) to subtract from the state.
    residual_pos: Vector3<f64>,
    residual_vel: Vector3<f64>,
    /// Every correction since power-up, position (m) and velocity (m/s): the
    /// history keeps its states less these, so that a correction reaches the
    /// whole history without touching it.
    corrected_pos: Vector3<f64>,
    corrected_vel: Vector3<f64>,
}

/// Time constant with which corrections reach the output state, s (PX4's
/// EKF2_TAU_POS and EKF2_TAU_VEL default to 0.25 s).
pub const OUTPUT_TAU_S: f64 = 0.25;

/// Span of GPS velocity over which the tilt reference compares velocity
/// changes, s: long enough that the GPS velocity noise (σ 0.05 m/s by
/// default) differenced over it is a small acceleration.
pub const TILT_WINDOW_S: f64 = 0.3;

/// Acceleration error assumed while dead-reckoning (about 2° of tilt error),
/// m/s²: with it the accuracy passes PX4's 5 m COM_POS_FS_EPH about 5 s after
/// the last fix, as PX4's EKF gives up dead-reckoning after EKF2_NOAID_TOUT.
pub const DEAD_RECKONING_ACCEL_M_S2: f64 = 0.35;

/// Age beyond which the last GPS velocity no longer tells the kinematic
/// acceleration, s (receiver latency plus two missed reports at 10 Hz).
const GPS_STALE_S: f64 = 0.5;

/// History kept for delayed GPS, s.
const HISTORY_S: f64 = 1.0;

impl Estimator {
    /// An estimator for a vehicle powered up at rest, `initial_down_m` below the
    /// home point (its CG height on the ground, negative), with the expected
    /// Earth field `mag_ref_ned` (the autopilot's magnetic model at home) and
    /// gravity magnitude `g_m_s2`.
    pub fn new(
        params: EstimatorParams,
        frame: LocalFrame,
        mag_ref_ned: Vector3<f64>,
        g_m_s2: f64,
        initial_down_m: f64,
    ) -> Self {
        Estimator {
            params,
            frame,
            mag_ref_ned,
            g_m_s2,
            q: UnitQuaternion::identity(),
            gyro_bias: Vector3::zeros(),
            pos: Vector3::new(0.0, 0.0, initial_down_m),
            vel: Vector3::zeros(),
            accel_ned: Vector3::zeros(),
            imu_dv: Vector3::zeros(),
            gps_deltas: VecDeque::with_capacity(16),
            tilt_rate_ned: Vector3::zeros(),
            last_gps_vel: None,
            rate: Vector3::zeros(),
            specific_force: Vector3::new(0.0, 0.0, -g_m_s2),
            baro_ref_m: None,
            baro_samples: 0,
            initial_down_m,
            last_imu: None,
            last_mag: None,
            last_baro: None,
            history: VecDeque::with_capacity(1200),
            attitude_aligned: false,
            position_aligned: false,
            last_fix: None,
            unaccelerated: false,
            air_density: 1.225,
            residual_pos: Vector3::zeros(),
            residual_vel: Vector3::zeros(),
            corrected_pos: Vector3::zeros(),
            corrected_vel: Vector3::zeros(),
        }
    }

    /// Whether attitude and position have been initialised from the sensors.
    pub fn aligned(&self) -> bool {
        self.attitude_aligned && self.position_aligned
    }

    /// The current estimate, with the corrections eased in (see the module
    /// docs).
    pub fn state(&self) -> EstimatedState {
        EstimatedState {
            pos_ned_m: self.pos - self.residual_pos,
            vel_ned_m_s: self.vel - self.residual_vel,
            att_ned_frd: self.q,
            rate_frd_rad_s: self.rate,
            accel_ned_m_s2: self.accel_ned,
            specific_force_frd_m_s2: self.specific_force,
            air_density_kg_m3: self.air_density,
        }
    }

    /// Estimated gyro bias, rad/s.
    pub fn gyro_bias(&self) -> Vector3<f64> {
        self.gyro_bias
    }

    fn align_attitude(&mut self, f_body: &Vector3<f64>, m_body: Option<&Vector3<f64>>) {
        // Roll and pitch from gravity, yaw from the magnetometer if available.
        let down = -f_body.normalize();
        let roll = down.y.atan2(down.z);
        let pitch = (-down.x).atan2((down.y * down.y + down.z * down.z).sqrt());
        let tilt = UnitQuaternion::from_euler_angles(roll, pitch, 0.0);
        let yaw = match m_body {
            Some(m) => {
                let m_level = tilt * m;
                let decl = self.mag_ref_ned.y.atan2(self.mag_ref_ned.x);
                decl - m_level.y.atan2(m_level.x)
            }
            None => 0.0,
        };
        self.q = UnitQuaternion::from_euler_angles(roll, pitch, yaw);
        self.attitude_aligned = m_body.is_some();
    }

    /// Prediction with an IMU sample.
    pub fn on_imu(&mut self, s: &ImuSample) {
        // Microseconds since the last sample (0 for the first, or one not
        // later); a gap of more than 0.1 s is not integrated.
        let gap_us = self.last_imu.map_or(0, |t| s.time - t);
        self.last_imu = Some(s.time);
        self.specific_force = s.accel_m_s2;
        if !self.attitude_aligned {
            self.align_attitude(&s.accel_m_s2, None);
        }
        if gap_us == 0 || gap_us > 100_000 {
            return;
        }
        let dt = gap_us as f64 * 1e-6;
        // Without GPS velocities (lost) the kinematic acceleration is unknown,
        // so the measured specific force is no gravity reference: a vehicle
        // accelerating would be taken for a tilted one, and the autopilot would
        // tilt further. Trust the gyros (their bias is learnt): gravity only
        // trims slowly, and the bias is not learnt from it.
        let stale = self.position_aligned
            && self
                .last_gps_vel
                .is_none_or(|(t, _)| s.time.secs_since(t) > GPS_STALE_S);
        let f = s.accel_m_s2;
        let g_ned = Vector3::new(0.0, 0.0, self.g_m_s2);
        let (omega_c, k_bias) = if self.position_aligned && !stale {
            // GPS-aided: the delay-matched comparison (see the module docs).
            (self.q.inverse() * self.tilt_rate_ned, self.params.k_bias)
        } else {
            self.tilt_rate_ned = Vector3::zeros();
            self.gps_deltas.clear();
            let k_gravity = if stale && !self.unaccelerated {
                self.params.k_gravity * 0.02
            } else {
                self.params.k_gravity
            };
            let k_bias = if stale && !self.unaccelerated {
                0.0
            } else {
                self.params.k_bias
            };
            let expected_body = self.q.inverse() * -g_ned;
            // (A specific force of 1 mm/s² or less, free fall, has no
            // direction to trust.)
            let omega = f.try_normalize(1e-3).map_or(Vector3::zeros(), |f| {
                f.cross(&expected_body.normalize()) * k_gravity
            });
            (omega, k_bias)
        };
        self.gyro_bias -= omega_c * (k_bias * dt);
        let w = s.gyro_rad_s - self.gyro_bias;
        self.rate = w;
        self.q *= UnitQuaternion::from_scaled_axis((w + omega_c) * dt);
        self.q = UnitQuaternion::new_normalize(*self.q.quaternion());
        // Translation.
        let a = self.q * f + g_ned;
        self.accel_ned += (a - self.accel_ned) * (dt / (dt + 0.05));
        self.pos += self.vel * dt + a * (0.5 * dt * dt);
        self.vel += a * dt;
        self.imu_dv += a * dt;
        let keep = (-dt / OUTPUT_TAU_S).exp();
        self.residual_pos *= keep;
        self.residual_vel *= keep;
        if self.history.len() == self.history.capacity() {
            self.history.pop_front();
        }
        self.history.push_back(Past {
            time: s.time,
            pos: self.pos - self.corrected_pos,
            vel: self.vel - self.corrected_vel,
            imu_dv: self.imu_dv,
        });
        while self
            .history
            .front()
            .is_some_and(|p| s.time.secs_since(p.time) > HISTORY_S)
        {
            self.history.pop_front();
        }
    }

    /// Heading correction from a magnetometer sample.
    pub fn on_mag(&mut self, m: &MagSample) {
        let dt = correction_interval_s(&mut self.last_mag, m.time);
        // (A field, or a horizontal part, of 1e-6 G or less points nowhere.)
        let Some(field) = m.field_gauss.try_normalize(1e-6) else {
            return;
        };
        if !self.attitude_aligned {
            self.align_attitude(&self.specific_force.clone(), Some(&field));
            return;
        }
        // Heading error from the horizontal components only.
        let measured_ned = self.q * field;
        let (Some(h_meas), Some(h_ref)) = (
            measured_ned.xy().try_normalize(1e-6),
            self.mag_ref_ned.xy().try_normalize(1e-6),
        ) else {
            return;
        };
        let err = h_meas.perp(&h_ref).atan2(h_meas.dot(&h_ref));
        // Rotate about the NED down axis, expressed in the body frame.
        let down_body = self.q.inverse() * Vector3::z();
        let omega = down_body * (err * self.params.k_mag);
        self.q *= UnitQuaternion::from_scaled_axis(omega * dt);
    }

    /// Height correction from a barometer sample.
    pub fn on_baro(&mut self, b: &BaroSample) {
        let dt = correction_interval_s(&mut self.last_baro, b.time);
        self.air_density = atmosphere::density_kg_m3(
            b.pressure_pa,
            b.temperature_degc + atmosphere::ZERO_CELSIUS_K,
        );
        let reference = match self.baro_ref_m {
            Some(r) => r,
            None => {
                self.baro_ref_m = Some(b.pressure_altitude_m);
                self.baro_samples = 1;
                return;
            }
        };
        // Average the first second of samples into the reference (vehicle at rest).
        if self.baro_samples < 50 && !self.position_aligned {
            self.baro_samples += 1;
            let n = f64::from(self.baro_samples);
            self.baro_ref_m = Some(reference + (b.pressure_altitude_m - reference) / n);
            return;
        }
        let down_meas = self.initial_down_m - (b.pressure_altitude_m - reference);
        let e = down_meas - self.pos.z;
        let w = self.params.omega_z;
        self.correct(
            &Vector3::new(0.0, 0.0, 2.0 * w * e * dt),
            &Vector3::new(0.0, 0.0, w * w * e * dt),
        );
    }

    /// The tilt correction from GPS and IMU velocity changes over the same
    /// measurement times: the horizontal acceleration the IMU missed, turned
    /// into the small rotation (NED) that brings the specific force onto it.
    fn update_tilt_reference(&mut self, now: GpsDelta) {
        if self.gps_deltas.len() == self.gps_deltas.capacity() {
            self.gps_deltas.pop_front();
        }
        // Fixes not older than this one are dropped. Old ones leave by the
        // capacity (16 fixes, 1.6 s at 10 Hz), or all at once when a gap
        // makes the GPS velocity stale (`on_imu` clears them).
        while self.gps_deltas.front().is_some_and(|d| d.time >= now.time) {
            self.gps_deltas.pop_front();
        }
        self.gps_deltas.push_back(now);
        let Some(then) = self
            .gps_deltas
            .iter()
            .rev()
            .find(|d| now.time.secs_since(d.time) >= TILT_WINDOW_S - 1e-6)
            .copied()
        else {
            return;
        };
        let span = now.time.secs_since(then.time);
        let imu_dv = now.imu_dv - then.imu_dv;
        let missed = ((now.vel - then.vel) - imu_dv) / span;
        let f_ned = imu_dv / span - Vector3::new(0.0, 0.0, self.g_m_s2);
        let f2 = f_ned.norm_squared();
        if f2 > 1e-6 && missed.iter().all(|x| x.is_finite()) {
            self.tilt_rate_ned = f_ned.cross(&missed) / f2 * self.params.k_gravity;
        }
    }

    /// Applies a correction to the state (and the history, so that the next
    /// late GPS report is compared with the corrected past), keeping the
    /// output where it was: the residual eases it in.
    fn correct(&mut self, d_pos: &Vector3<f64>, d_vel: &Vector3<f64>) {
        self.pos += d_pos;
        self.vel += d_vel;
        self.residual_pos += d_pos;
        self.residual_vel += d_vel;
        self.corrected_pos += d_pos;
        self.corrected_vel += d_vel;
    }

    /// Tells the estimator whether the vehicle is flown level without
    /// manoeuvring (a descent without position control): then, without GPS,
    /// the accelerometer is trusted as the gravity reference again.
    pub fn set_unaccelerated(&mut self, unaccelerated: bool) {
        self.unaccelerated = unaccelerated;
    }

    /// Horizontal accuracy (1σ) of the position estimate at `now`, m: the
    /// last fused GPS report's eph, growing while the estimate dead-reckons
    /// on the IMU alone (an uncorrected acceleration error of
    /// [`DEAD_RECKONING_ACCEL_M_S2`] integrated twice). 99.99 before any fix.
    pub fn horizontal_accuracy_m(&self, now: SimTime) -> f64 {
        match self.last_fix {
            Some((t, eph)) => {
                let dt = now.secs_since(t);
                (eph + 0.5 * DEAD_RECKONING_ACCEL_M_S2 * dt * dt).min(99.99)
            }
            None => 99.99,
        }
    }

    /// Correction from a (late) GPS report.
    pub fn on_gps(&mut self, g: &GpsSample) {
        if g.fix != FixType::Fix3d {
            return;
        }
        let p_meas = self.frame.to_ned(&g.position);
        self.last_fix = Some((g.measured, g.eph_m));
        if !self.position_aligned {
            self.pos.x = p_meas.x;
            self.pos.y = p_meas.y;
            self.vel = g.vel_ned_m_s;
            self.position_aligned = true;
            self.history.clear();
            return;
        }
        self.last_gps_vel = Some((g.measured, g.vel_ned_m_s));
        let past = self
            .history
            .iter()
            .rev()
            .find(|p| p.time <= g.measured)
            .map(|p| Past {
                pos: p.pos + self.corrected_pos,
                vel: p.vel + self.corrected_vel,
                ..*p
            })
            .unwrap_or(Past {
                time: g.measured,
                pos: self.pos,
                vel: self.vel,
                imu_dv: self.imu_dv,
            });
        self.update_tilt_reference(GpsDelta {
            time: g.measured,
            vel: g.vel_ned_m_s,
            imu_dv: past.imu_dv,
        });
        let dt = 0.1;
        let w = self.params.omega_xy;
        let e_pos = p_meas - past.pos;
        let e_vel = g.vel_ned_m_s - past.vel;
        let kz = self.params.gps_height_weight;
        let mut d_pos = Vector3::zeros();
        let mut d_vel = Vector3::zeros();
        for i in 0..3 {
            let k = if i == 2 { kz } else { 1.0 };
            d_pos[i] = k * 2.0 * w * e_pos[i] * dt;
            d_vel[i] = k * (w * w * e_pos[i] + self.params.k_gps_vel * e_vel[i]) * dt;
        }
        self.correct(&d_pos, &d_vel);
    }
}
/// Seconds since the previous sample of the same sensor (0 for the first),
/// capped at 0.1 s so that a gap never turns a correction into a jump.
fn correction_interval_s(last: &mut Option<SimTime>, now: SimTime) -> f64 {
    let dt = last.map_or(0.0, |t| now.secs_since(t));
    *last = Some(now);
    dt.min(0.1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mavsitl_core::geo::GeoPoint;

    const G: f64 = atmosphere::G0_M_S2;
    /// The Earth field the estimators below expect, gauss: declination
    /// atan2(0.05, 0.2) east.
    const MAG_REF: [f64; 3] = [0.2, 0.05, 0.4];

    fn frame() -> LocalFrame {
        LocalFrame::new(GeoPoint::from_deg(47.0, 8.0, 100.0))
    }

    fn estimator(params: EstimatorParams) -> Estimator {
        Estimator::new(params, frame(), Vector3::from(MAG_REF), G, -0.1)
    }

    fn at_us(us: u64) -> SimTime {
        SimTime::from_micros(us)
    }

    /// An IMU at rest at attitude `q`: no rotation, gravity's reaction.
    fn imu_at_rest(us: u64, q: &UnitQuaternion<f64>) -> ImuSample {
        ImuSample {
            time: at_us(us),
            gyro_rad_s: Vector3::zeros(),
            accel_m_s2: q.inverse() * Vector3::new(0.0, 0.0, -G),
        }
    }

    fn mag_at(us: u64, q: &UnitQuaternion<f64>) -> MagSample {
        MagSample {
            time: at_us(us),
            field_gauss: q.inverse() * Vector3::from(MAG_REF),
        }
    }

    /// A 3D fix at `ned` (m from home, at home's altitude less `ned.z`)
    /// with velocity `vel`, measured at `us`.
    fn gps(us: u64, ned: Vector3<f64>, vel: Vector3<f64>, eph_m: f64) -> GpsSample {
        GpsSample {
            measured: at_us(us),
            delivered: at_us(us),
            fix: FixType::Fix3d,
            satellites: 12,
            position: frame().to_geodetic(&ned),
            pos_ned_m: ned,
            vel_ned_m_s: vel,
            eph_m,
            epv_m: 2.0 * eph_m,
        }
    }

    /// Roll and pitch come from gravity, the heading from the field
    /// against its declination; only with a 3D fix is the position, and so
    /// the whole estimate, aligned.
    #[test]
    fn alignment_takes_the_tilt_from_gravity_and_the_heading_from_the_field() {
        for (roll, pitch, yaw) in [(0.1, -0.2, 1.0), (-0.3, 0.25, -2.5)] {
            let q = UnitQuaternion::from_euler_angles(roll, pitch, yaw);
            let mut est = estimator(EstimatorParams::default());
            est.on_imu(&imu_at_rest(0, &q));
            let (r, p, y) = est.state().att_ned_frd.euler_angles();
            assert!(
                (r - roll).abs() < 1e-9 && (p - pitch).abs() < 1e-9,
                "{r} {p}"
            );
            assert_eq!(y, 0.0, "no heading without the field");
            assert!(!est.aligned());
            est.on_mag(&mag_at(0, &q));
            assert!(est.state().att_ned_frd.angle_to(&q) < 1e-9);
            assert!(!est.aligned(), "no position yet");
            let mut fix = gps(0, Vector3::new(3.0, -4.0, 0.0), Vector3::zeros(), 1.0);
            fix.fix = FixType::Fix2d;
            est.on_gps(&fix);
            assert!(!est.aligned(), "a 2D fix aligns nothing");
            fix.fix = FixType::Fix3d;
            est.on_gps(&fix);
            assert!(est.aligned());
            let pos = est.state().pos_ned_m;
            assert!((pos - Vector3::new(3.0, -4.0, -0.1)).norm() < 1e-6, "{pos}");
        }
        // A position without an attitude is not aligned either.
        let mut est = estimator(EstimatorParams::default());
        est.on_gps(&gps(0, Vector3::zeros(), Vector3::zeros(), 1.0));
        assert!(!est.aligned());
    }

    /// With the attitude corrections off, the IMU alone integrates: a
    /// specific force of 1 m/s² forward and gravity's reaction, level and
    /// facing east, give x = ½·a·t² east and v = a·t; a turn at a
    /// constant rate integrates to its angle.
    #[test]
    fn dead_reckoning_integrates_the_imu_exactly() {
        let params = EstimatorParams {
            k_gravity: 0.0,
            k_bias: 0.0,
            ..EstimatorParams::default()
        };
        let east = UnitQuaternion::from_euler_angles(0.0, 0.0, std::f64::consts::FRAC_PI_2);
        let mut est = estimator(params);
        est.on_imu(&imu_at_rest(0, &east));
        est.on_mag(&mag_at(0, &east));
        for i in 1..=400u64 {
            est.on_imu(&ImuSample {
                accel_m_s2: Vector3::new(1.0, 0.0, -G),
                ..imu_at_rest(i * 5_000, &east)
            });
        }
        let s = est.state();
        assert!(
            (s.pos_ned_m - Vector3::new(0.0, 2.0, -0.1)).norm() < 1e-9,
            "{}",
            s.pos_ned_m
        );
        assert!((s.vel_ned_m_s - Vector3::new(0.0, 2.0, 0.0)).norm() < 1e-9);
        assert!((s.accel_ned_m_s2 - Vector3::new(0.0, 1.0, 0.0)).norm() < 1e-9);
        assert_eq!(s.specific_force_frd_m_s2, Vector3::new(1.0, 0.0, -G));
        // A sample after a gap of more than 0.1 s, or not later, is not
        // integrated; one exactly 0.1 s later (a 10 Hz IMU) is.
        for us in [2_000_000, 2_200_001, 2_200_001] {
            est.on_imu(&ImuSample {
                accel_m_s2: Vector3::new(1.0, 0.0, -G),
                ..imu_at_rest(us, &east)
            });
            assert_eq!(est.state().vel_ned_m_s, s.vel_ned_m_s, "at {us} µs");
        }
        est.on_imu(&ImuSample {
            accel_m_s2: Vector3::new(1.0, 0.0, -G),
            ..imu_at_rest(2_300_001, &east)
        });
        let v = est.state().vel_ned_m_s.y;
        assert!((v - 2.1).abs() < 1e-9, "{v}");
        // Yawing at 0.5 rad/s for 1 s, level.
        let mut est = estimator(params);
        est.on_imu(&imu_at_rest(0, &UnitQuaternion::identity()));
        est.on_mag(&mag_at(0, &UnitQuaternion::identity()));
        for i in 1..=200u64 {
            est.on_imu(&ImuSample {
                gyro_rad_s: Vector3::new(0.0, 0.0, 0.5),
                ..imu_at_rest(i * 5_000, &UnitQuaternion::identity())
            });
        }
        let (_, _, yaw) = est.state().att_ned_frd.euler_angles();
        assert!((yaw - 0.5).abs() < 1e-9, "{yaw}");
        assert_eq!(est.state().rate_frd_rad_s, Vector3::new(0.0, 0.0, 0.5));
    }

    /// At rest and level without GPS, gravity is the reference: a gyro
    /// bias on roll and pitch, either sign, is learnt (the PI loop's time
    /// constant is k_gravity / k_bias = 50 s) and the rates handed on are
    /// the gyro's less it, while the attitude stays level.
    #[test]
    fn a_gyro_bias_is_learnt_from_gravity_either_way() {
        for sign in [1.0, -1.0] {
            let bias = Vector3::new(0.01, -0.02, 0.0) * sign;
            let level = UnitQuaternion::identity();
            let mut est = estimator(EstimatorParams::default());
            est.on_imu(&imu_at_rest(0, &level));
            est.on_mag(&mag_at(0, &level));
            for i in 1..=100_000u64 {
                est.on_imu(&ImuSample {
                    gyro_rad_s: bias,
                    ..imu_at_rest(i * 5_000, &level)
                });
            }
            let learnt = est.gyro_bias();
            assert!((learnt - bias).xy().norm() < 1e-4 * bias.norm(), "{learnt}");
            assert!(est.state().rate_frd_rad_s.xy().norm() < 1e-4 * bias.norm());
            let (roll, pitch, _) = est.state().att_ned_frd.euler_angles();
            assert!(roll.abs() < 1e-4 && pitch.abs() < 1e-4, "{roll} {pitch}");
        }
    }

    /// The field turns the heading towards it at k_mag: an error of ±0.1
    /// rad shrinks by (1 − 0.5·0.02) each 50 Hz sample, level; a field of
    /// no strength is ignored.
    #[test]
    fn the_field_pulls_the_heading_at_k_mag_either_way() {
        let level = UnitQuaternion::identity();
        for err in [0.1, -0.1] {
            let mut est = estimator(EstimatorParams::default());
            est.on_imu(&imu_at_rest(0, &level));
            est.on_mag(&mag_at(0, &level));
            let turned = UnitQuaternion::from_euler_angles(0.0, 0.0, err);
            est.on_mag(&MagSample {
                field_gauss: Vector3::zeros(),
                ..mag_at(10_000, &turned)
            });
            for i in 1..=50u64 {
                est.on_mag(&mag_at(10_000 + i * 20_000, &turned));
            }
            let (_, _, yaw) = est.state().att_ned_frd.euler_angles();
            let expected = err * (1.0 - (1.0 - 0.5 * 0.02f64).powi(50));
            assert!((yaw - expected).abs() < 1e-6, "{yaw} against {expected}");
        }
    }

    /// The accuracy is the last fix's eph, growing by ½·0.35 m/s²·t² while
    /// the estimate dead-reckons, to at most 99.99 m, which it is before
    /// any fix.
    #[test]
    fn the_accuracy_grows_from_the_last_fix() {
        let mut est = estimator(EstimatorParams::default());
        assert_eq!(est.horizontal_accuracy_m(SimTime::from_secs(5)), 99.99);
        est.on_gps(&gps(10_000_000, Vector3::zeros(), Vector3::zeros(), 1.5));
        assert_eq!(est.horizontal_accuracy_m(SimTime::from_secs(10)), 1.5);
        let at_12 = est.horizontal_accuracy_m(SimTime::from_secs(12));
        assert!((at_12 - 2.2).abs() < 1e-12, "{at_12}");
        assert_eq!(est.horizontal_accuracy_m(SimTime::from_secs(100)), 99.99);
    }

    /// The barometer's air density from its pressure and temperature:
    /// ISA sea level, 101 325 Pa at 15 °C, is 1.225 kg/m³.
    #[test]
    fn the_air_density_is_the_barometers() {
        let mut est = estimator(EstimatorParams::default());
        est.on_baro(&BaroSample {
            time: SimTime::ZERO,
            pressure_pa: 101_325.0,
            temperature_degc: 15.0,
            pressure_altitude_m: 0.0,
        });
        assert!((est.state().air_density_kg_m3 - 1.225).abs() < 1e-3);
        est.on_baro(&BaroSample {
            time: SimTime::from_micros(20_000),
            pressure_pa: 50_000.0,
            temperature_degc: -20.0,
            pressure_altitude_m: 5_500.0,
        });
        let rho = 50_000.0 / (287.05 * 253.15);
        assert!((est.state().air_density_kg_m3 - rho).abs() < 1e-3);
    }

    /// Aligned and moving north at 2 m/s: a fix 1 m north of where the
    /// estimate was when the fix was measured (0.2 s ago) moves the state
    /// by 2·ω·e·0.1 s and its velocity by ω²·e·0.1 s (ω = 2 rad/s), in the state at
    /// once and into the output over OUTPUT_TAU_S; a fix exactly where the
    /// estimate was then corrects nothing.
    #[test]
    fn a_late_fix_is_compared_with_the_past_and_eased_into_the_output() {
        let params = EstimatorParams {
            k_gravity: 0.0,
            k_bias: 0.0,
            omega_xy: 2.0,
            ..EstimatorParams::default()
        };
        let level = UnitQuaternion::identity();
        let north = Vector3::new(2.0, 0.0, 0.0);
        let run = |offset_m: f64| {
            let mut est = estimator(params);
            est.on_imu(&imu_at_rest(0, &level));
            est.on_mag(&mag_at(0, &level));
            est.on_gps(&gps(0, Vector3::zeros(), north, 1.0));
            for i in 1..=200u64 {
                est.on_imu(&imu_at_rest(i * 5_000, &level));
            }
            let before = est.state();
            // Measured at 0.8 s, where the estimate was 1.6 m north.
            let then = Vector3::new(1.6 + offset_m, 0.0, -0.1);
            est.on_gps(&gps(800_000, then, north, 1.0));
            (before, est)
        };
        let (before, est) = run(0.0);
        assert!((before.pos_ned_m.x - 2.0).abs() < 1e-9);
        // (The fix's latitude and longitude round-trip to 1e-10 m.)
        assert!((est.state().pos_ned_m - before.pos_ned_m).norm() < 1e-9);
        assert!(
            (est.pos - before.pos_ned_m).norm() < 1e-9,
            "nothing to correct"
        );
        let (before, mut est) = run(1.0);
        let eased = (est.state().pos_ned_m - before.pos_ned_m).norm();
        assert!(eased < 1e-9, "eased, not stepped");
        assert!((est.pos.x - before.pos_ned_m.x - 0.4).abs() < 1e-9);
        assert!((est.vel.x - 2.0 - 0.4).abs() < 1e-9);
        assert!((est.state().vel_ned_m_s.x - 2.0).abs() < 1e-9, "eased too");
        // The same fix again meets the corrected past: 0.6 m and −0.4 m/s
        // off now.
        let mut again = est.clone();
        again.on_gps(&gps(800_000, Vector3::new(2.6, 0.0, -0.1), north, 1.0));
        assert!((again.pos.x - est.pos.x - 2.0 * 2.0 * 0.6 * 0.1).abs() < 1e-9);
        let d_vel = (4.0 * 0.6 - 1.5 * 0.4) * 0.1;
        assert!(
            (again.vel.x - est.vel.x - d_vel).abs() < 1e-9,
            "{}",
            again.vel.x
        );
        // One IMU tick of 5 ms later, the output has taken 1 − e^(−0.02) of it.
        est.on_imu(&imu_at_rest(1_005_000, &level));
        let expected = 2.0 + 2.4 * 0.005 + 0.4 * (1.0 - (-0.02f64).exp());
        let x = est.state().pos_ned_m.x;
        assert!((x - expected).abs() < 1e-9, "{x} against {expected}");
    }

    fn baro(us: u64, alt_m: f64) -> BaroSample {
        BaroSample {
            time: at_us(us),
            pressure_pa: 101_325.0,
            temperature_degc: 15.0,
            pressure_altitude_m: alt_m,
        }
    }

    /// The first 50 samples at rest make the height reference (their
    /// mean) and correct nothing; the next corrects by 2·ω·e·dt and ω²·e·dt
    /// with ω = 2 rad/s. A position fix ends the averaging at once.
    #[test]
    fn the_baro_reference_is_the_first_second_then_it_corrects() {
        let mut est = estimator(EstimatorParams::default());
        for i in 0..50u64 {
            est.on_baro(&baro(i * 20_000, if i % 2 == 0 { 100.0 } else { 102.0 }));
            assert_eq!(est.pos.z, -0.1, "sample {i}");
        }
        // 103 m is 2 m above the mean, 101 m.
        est.on_baro(&baro(1_000_000, 103.0));
        let (e, w, dt) = (-2.0, 2.0, 0.02);
        assert!(
            (est.pos.z - (-0.1 + 2.0 * w * e * dt)).abs() < 1e-12,
            "{}",
            est.pos.z
        );
        assert!((est.vel.z - w * w * e * dt).abs() < 1e-12);

        let mut est = estimator(EstimatorParams::default());
        for i in 0..10u64 {
            est.on_baro(&baro(i * 20_000, 100.0));
        }
        est.on_imu(&imu_at_rest(190_000, &UnitQuaternion::identity()));
        est.on_mag(&mag_at(190_000, &UnitQuaternion::identity()));
        est.on_gps(&gps(190_000, Vector3::zeros(), Vector3::zeros(), 1.0));
        est.on_baro(&baro(200_000, 101.0));
        assert!((est.pos.z - (-0.1 - 0.08)).abs() < 1e-12, "{}", est.pos.z);
    }

    /// The roll of an estimate started `err` rad off level, after 1 s and
    /// after 10 s of 200 Hz IMU and 10 Hz GPS, the vehicle level and
    /// cruising north at `speed` m/s.
    fn roll_levelled(err: f64, k_gravity: f64, speed: f64) -> (f64, f64) {
        let level = UnitQuaternion::identity();
        let params = EstimatorParams {
            k_gravity,
            ..EstimatorParams::default()
        };
        let mut est = estimator(params);
        let tilted = UnitQuaternion::from_euler_angles(err, 0.0, 0.0);
        let vel = Vector3::new(speed, 0.0, 0.0);
        est.on_imu(&imu_at_rest(0, &tilted));
        est.on_mag(&mag_at(0, &tilted));
        est.on_gps(&gps(0, Vector3::zeros(), vel, 1.0));
        let roll = |est: &Estimator| est.state().att_ned_frd.euler_angles().0;
        assert!((roll(&est) - err).abs() < 1e-9);
        let mut after_1_s = f64::NAN;
        for i in 1..=2000u64 {
            est.on_imu(&imu_at_rest(i * 5_000, &level));
            if i % 20 == 0 {
                let t = i as f64 * 0.005;
                est.on_gps(&gps(
                    i * 5_000,
                    Vector3::new(speed * t, 0.0, -0.1),
                    vel,
                    1.0,
                ));
            }
            if i == 200 {
                after_1_s = roll(&est);
            }
        }
        assert!((est.state().vel_ned_m_s - vel).norm() < 0.01);
        (after_1_s, roll(&est))
    }

    /// Aided by GPS velocities, a tilt error of either sign is found from
    /// the horizontal acceleration it makes the IMU integrate that the GPS
    /// does not see, and taken out within seconds (the loop's constant is
    /// 1/k_gravity); cruising changes nothing of it; without the fixes the
    /// roll would stay where it is.
    #[test]
    fn gps_velocities_level_a_tilted_estimate_either_way() {
        for err in [0.05, -0.05] {
            let (at_1_s, at_10_s) = roll_levelled(err, 1.0, 0.0);
            assert!(at_1_s.abs() < 0.6 * err.abs(), "{at_1_s} after 1 s");
            // What is left is the bias the PI loop took up meanwhile (a
            // fiftieth of the error), which its 50 s constant unwinds.
            assert!(at_10_s.abs() < 0.02 * err.abs(), "{at_10_s} after 10 s");
            let cruising = roll_levelled(err, 1.0, 3.0);
            assert!((cruising.0 - at_1_s).abs() < 1e-6, "{cruising:?}");
            // Twice the gain: under a third of the error left after 1 s.
            let (fast, _) = roll_levelled(err, 2.0, 0.0);
            assert!(fast.abs() < 0.3 * at_1_s.abs(), "{fast} against {at_1_s}");
        }
    }

    /// The tilt rate from two GPS velocities 0.3 s apart and the IMU's
    /// velocity change between them, by hand: the acceleration the IMU
    /// missed, `m`, and the specific force, `f`, give k·(f × m)/|f|².
    #[test]
    fn the_tilt_rate_turns_the_specific_force_onto_what_the_imu_missed() {
        let params = EstimatorParams {
            k_gravity: 1.5,
            ..EstimatorParams::default()
        };
        let delta = |s: f64, vel: [f64; 3], imu_dv: [f64; 3]| GpsDelta {
            time: SimTime::from_secs_f64(s),
            vel: Vector3::from(vel),
            imu_dv: Vector3::from(imu_dv),
        };
        // At rest, the GPS sees 1 m/s² east that the IMU did not: a roll
        // rate of k/g about north.
        let mut est = estimator(params);
        est.update_tilt_reference(delta(10.0, [0.0; 3], [0.0; 3]));
        est.update_tilt_reference(delta(10.2, [0.0, 0.2, 0.0], [0.0; 3]));
        assert_eq!(
            est.tilt_rate_ned,
            Vector3::zeros(),
            "0.2 s is too short a span"
        );
        est.update_tilt_reference(delta(10.3, [0.0, 0.3, 0.0], [0.0; 3]));
        let rate = est.tilt_rate_ned;
        assert!(
            (rate - Vector3::new(1.5 / G, 0.0, 0.0)).norm() < 1e-12,
            "{rate}"
        );
        // Cruising at 2 m/s and speeding up north at 2 m/s², which the IMU
        // saw: f = (2, 0, −g), m = (0, 1, 0), f × m = (g, 0, 2).
        let mut est = estimator(params);
        est.update_tilt_reference(delta(10.0, [2.0, 0.0, 0.0], [1.0, 1.0, 0.0]));
        est.update_tilt_reference(delta(10.3, [2.6, 0.3, 0.0], [1.6, 1.0, 0.0]));
        let rate = est.tilt_rate_ned;
        let expected = Vector3::new(G, 0.0, 2.0) * (1.5 / (4.0 + G * G));
        assert!(
            (rate - expected).norm() < 1e-12,
            "{rate} against {expected}"
        );
        // In free fall the specific force is nil and points nowhere: the
        // rate is kept, not divided by zero.
        est.update_tilt_reference(delta(10.6, [2.6, 0.3, 2.94], [1.6, 1.0, 0.3 * G]));
        assert_eq!(est.tilt_rate_ned, rate);
    }

    /// Without GPS velocities for more than 0.5 s, an accelerating vehicle
    /// must not be taken for a tilted one: gravity trims the attitude at
    /// 2 % of its gain and the bias is not learnt. Flown level and
    /// unaccelerated, the accelerometer is trusted again.
    #[test]
    fn without_gps_gravity_is_trusted_only_when_flown_level() {
        let level = UnitQuaternion::identity();
        let tilt_after = |unaccelerated: bool| {
            let mut est = estimator(EstimatorParams::default());
            est.on_imu(&imu_at_rest(0, &level));
            est.on_mag(&mag_at(0, &level));
            est.on_gps(&gps(0, Vector3::zeros(), Vector3::zeros(), 1.0));
            est.on_gps(&gps(5_000, Vector3::zeros(), Vector3::zeros(), 1.0));
            est.set_unaccelerated(unaccelerated);
            // 1 m/s² forward, level, for 2 s, 0.6 s after the last fix.
            for i in 120..=520u64 {
                est.on_imu(&ImuSample {
                    accel_m_s2: Vector3::new(1.0, 0.0, -G),
                    ..imu_at_rest(i * 5_000, &level)
                });
            }
            let (_, pitch, _) = est.state().att_ned_frd.euler_angles();
            (pitch, est.gyro_bias())
        };
        // The specific force leans atan(1/g) = 0.1017 rad forward: full
        // trust pitches up towards it by (1 − e^(−2 s · 1/s)) of it, 2 %
        // trust by (1 − e^(−0.04)).
        let lean = (1.0 / G).atan();
        let (weak, bias) = tilt_after(false);
        assert!(
            (weak - lean * (1.0 - (-0.04f64).exp())).abs() < 2e-4,
            "{weak}"
        );
        assert_eq!(bias, Vector3::zeros());
        let (full, bias) = tilt_after(true);
        assert!(
            (full - lean * (1.0 - (-2.0f64).exp())).abs() < 5e-3,
            "{full}"
        );
        assert!(bias.y < 0.0, "{bias}");
    }

    /// The history keeps a second of states, less the corrections made
    /// since: a fix measured after a correction meets the corrected past;
    /// one exactly 1 s old still meets its own; one older than the kept
    /// second is compared with the estimate now.
    #[test]
    fn late_fixes_meet_the_kept_second_of_corrected_history() {
        let params = EstimatorParams {
            k_gravity: 0.0,
            k_bias: 0.0,
            ..EstimatorParams::default()
        };
        let level = UnitQuaternion::identity();
        let north = Vector3::new(2.0, 0.0, 0.0);
        let moving = || {
            let mut est = estimator(params);
            est.on_imu(&imu_at_rest(0, &level));
            est.on_mag(&mag_at(0, &level));
            est.on_gps(&gps(0, Vector3::zeros(), north, 1.0));
            for i in 1..=300u64 {
                est.on_imu(&imu_at_rest(i * 5_000, &level));
            }
            est
        };
        let at = |x: f64| Vector3::new(x, 0.0, -0.1);
        // At 1.5 s, 3 m north; 1 s ago 1 m north.
        let mut est = moving();
        let before = est.pos;
        est.on_gps(&gps(500_000, at(1.0), north, 1.0));
        assert!((est.pos - before).norm() < 1e-9, "{}", est.pos - before);
        // 1.2 s ago the estimate was 0.6 m north, but that is no longer
        // kept: the fix is compared with 3 m, 2.4 m off.
        est.on_gps(&gps(300_000, at(0.6), north, 1.0));
        assert!(
            (est.pos.x - before.x + 2.0 * 2.4 * 0.1).abs() < 1e-9,
            "{}",
            est.pos.x
        );
        // A fix 1 m ahead corrects 0.2 m; a tick later, a fix where the
        // corrected estimate then is corrects nothing more.
        let mut est = moving();
        est.on_gps(&gps(1_500_000, at(4.0), north, 1.0));
        est.on_imu(&imu_at_rest(1_505_000, &level));
        let (pos, vel) = (est.pos, est.vel);
        est.on_gps(&gps(1_505_000, pos, vel, 1.0));
        assert!((est.pos - pos).norm() < 1e-9 && (est.vel - vel).norm() < 1e-9);
    }

    /// The last GPS velocity tells the kinematic acceleration until it is
    /// more than 0.5 s old: exactly 0.5 s after it, an accelerating IMU
    /// does not tilt the estimate; 5 ms later, gravity starts to trim it.
    #[test]
    fn a_gps_velocity_is_stale_only_beyond_half_a_second() {
        let level = UnitQuaternion::identity();
        let mut est = estimator(EstimatorParams::default());
        est.on_imu(&imu_at_rest(0, &level));
        est.on_mag(&mag_at(0, &level));
        est.on_gps(&gps(0, Vector3::zeros(), Vector3::zeros(), 1.0));
        est.on_gps(&gps(5_000, Vector3::zeros(), Vector3::zeros(), 1.0));
        for i in 1..=100u64 {
            est.on_imu(&imu_at_rest(i * 5_000, &level));
        }
        let pitch = |est: &Estimator| est.state().att_ned_frd.euler_angles().1;
        let accelerating = |us: u64| ImuSample {
            accel_m_s2: Vector3::new(1.0, 0.0, -G),
            ..imu_at_rest(us, &level)
        };
        est.on_imu(&accelerating(505_000));
        assert_eq!(pitch(&est), 0.0);
        est.on_imu(&accelerating(510_000));
        assert!(pitch(&est) > 0.0, "{}", pitch(&est));
    }

    /// A field with no horizontal part to speak of (measured, or expected
    /// at a magnetic pole: 1e-8 G off vertical) tells no heading: it is
    /// ignored, rather than read as a heading error of up to 180°.
    #[test]
    fn a_field_without_a_horizontal_part_is_ignored() {
        let level = UnitQuaternion::identity();
        let mut est = estimator(EstimatorParams::default());
        est.on_imu(&imu_at_rest(0, &level));
        est.on_mag(&mag_at(0, &level));
        let q = est.state().att_ned_frd;
        for i in 1..=10u64 {
            est.on_mag(&MagSample {
                time: at_us(i * 20_000),
                field_gauss: Vector3::new(0.0, 1e-8, 0.5),
            });
        }
        assert_eq!(est.state().att_ned_frd, q);
        let mut pole = Estimator::new(
            EstimatorParams::default(),
            frame(),
            Vector3::new(1e-8, 0.0, 0.6),
            G,
            -0.1,
        );
        pole.on_imu(&imu_at_rest(0, &level));
        pole.on_mag(&mag_at(0, &level));
        let q = pole.state().att_ned_frd;
        let turned = UnitQuaternion::from_euler_angles(0.0, 0.0, 0.3);
        for i in 1..=10u64 {
            pole.on_mag(&MagSample {
                time: at_us(i * 20_000),
                field_gauss: turned.inverse() * Vector3::new(0.1, 0.0, 0.6),
            });
        }
        assert_eq!(pole.state().att_ned_frd, q);
    }

    /// Height after a 2 m baro step, fed at `rate_hz` for 2 s.
    fn height_after_baro_step(rate_hz: u64) -> f64 {
        let mut est = Estimator::new(
            EstimatorParams::default(),
            LocalFrame::new(GeoPoint::from_deg(47.0, 8.0, 100.0)),
            Vector3::new(0.2, 0.0, 0.4),
            atmosphere::G0_M_S2,
            0.0,
        );
        let period_us = 1_000_000 / rate_hz;
        let sample = |i: u64, alt: f64| BaroSample {
            time: SimTime::from_micros(i * period_us),
            pressure_pa: 101_325.0,
            temperature_degc: 15.0,
            pressure_altitude_m: alt,
        };
        // A level IMU at rest at 200 Hz between the baro samples, as in
        // flight: the output eases the corrections in as IMU time passes.
        let mut imu_us = 0;
        let mut feed_imu = |est: &mut Estimator, until_us: u64| {
            while imu_us <= until_us {
                est.on_imu(&ImuSample {
                    time: SimTime::from_micros(imu_us),
                    gyro_rad_s: Vector3::zeros(),
                    accel_m_s2: Vector3::new(0.0, 0.0, -atmosphere::G0_M_S2),
                });
                imu_us += 5_000;
            }
        };
        // The reference averages the first 50 samples at rest.
        for i in 0..60 {
            feed_imu(&mut est, i * period_us);
            est.on_baro(&sample(i, 100.0));
        }
        for i in 60..60 + 2 * rate_hz {
            feed_imu(&mut est, i * period_us);
            est.on_baro(&sample(i, 102.0));
        }
        // A second more of IMU: the eased output has caught up.
        feed_imu(&mut est, (62 + 2 * rate_hz) * period_us);
        -est.state().pos_ned_m.z
    }

    #[test]
    fn baro_correction_follows_the_sample_interval_not_a_fixed_rate() {
        // A 2 m baro step, with the IMU integrating the corrected velocity:
        // the second-order loop (ω = 2 rad/s, critically damped, with the
        // zero of its position gain) settles near 2 m with an overshoot of
        // about a tenth, the same at any sample rate. A correction sized for
        // a fixed rate would leave a 10 Hz barometer far from the others.
        let heights: Vec<f64> = [10, 50, 200]
            .iter()
            .map(|r| height_after_baro_step(*r))
            .collect();
        for (rate, h) in [10, 50, 200].iter().zip(&heights) {
            assert!((h - 2.0).abs() < 0.3, "{rate} Hz: height {h:.3} m");
            assert!(
                (h - heights[2]).abs() < 0.08,
                "{rate} Hz: {h:.3} m against {:.3} m at 200 Hz",
                heights[2]
            );
        }
    }
}
