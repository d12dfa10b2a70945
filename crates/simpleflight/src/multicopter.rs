//! Multicopter control: position → velocity → acceleration/thrust → attitude →
//! body rates → torques → motor commands.
//!
//! The structure of PX4's multicopter cascade (`mc_pos_control`,
//! `mc_att_control`, `mc_rate_control`, control allocation), in physical units:
//!
//! - position P (MPC_XY_P, MPC_Z_P) plus the trajectory's velocity feed-forward →
//!   velocity set-point, limited to the horizontal and climb/descent speeds;
//! - velocity PI (MPC_XY_VEL_*_ACC, MPC_Z_VEL_*_ACC) plus acceleration
//!   feed-forward → acceleration set-point; thrust vector m·(a − g), tilt limited
//!   to MPC_TILTMAX_AIR keeping the vertical component;
//! - attitude from the thrust direction and the yaw set-point; attitude P on the
//!   quaternion error (MC_ROLL_P …) → rate set-point;
//! - rate PI in rad/s² (angular-acceleration bandwidth), times the inertia, plus
//!   the gyroscopic term ω × Iω → torque;
//! - allocation: the pseudo-inverse of the effectiveness matrix built from the
//!   rotor geometry (positions, spins, torque/thrust ratio) maps (roll, pitch,
//!   yaw torque, collective thrust) to rotor thrusts. On saturation yaw gives way
//!   first, then the thrusts are clipped; commands are thrust / maximum thrust at
//!   the air density the barometer measures (the motors' thrust is linear in the
//!   command).

use nalgebra::{DMatrix, Matrix3, Rotation3, UnitQuaternion, Vector3, Vector4};

use super::airframe::{MulticopterAirframe, MAX_MOTORS};
use super::estimator::EstimatedState;
use mavsitl_core::atmosphere::{G0_M_S2, RHO0_KG_M3};

/// Gains and limits (PX4 parameter names; rate gains in physical units).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct McParams {
    /// MPC_XY_P, 1/s.
    pub xy_p: f64,
    /// MPC_Z_P, 1/s.
    pub z_p: f64,
    /// MPC_XY_VEL_P_ACC, 1/s.
    pub xy_vel_p: f64,
    /// MPC_XY_VEL_I_ACC, 1/s².
    pub xy_vel_i: f64,
    /// MPC_Z_VEL_P_ACC, 1/s.
    pub z_vel_p: f64,
    /// MPC_Z_VEL_I_ACC, 1/s².
    pub z_vel_i: f64,
    /// MPC_XY_VEL_MAX, m/s.
    pub xy_vel_max: f64,
    /// MPC_Z_VEL_MAX_UP, m/s.
    pub z_vel_max_up: f64,
    /// MPC_Z_VEL_MAX_DN, m/s.
    pub z_vel_max_dn: f64,
    /// MPC_TILTMAX_AIR, deg.
    pub tilt_max_deg: f64,
    /// MC_ROLL_P / MC_PITCH_P, 1/s.
    pub att_rp_p: f64,
    /// MC_YAW_P, 1/s.
    pub att_yaw_p: f64,
    /// MC_ROLLRATE_MAX / MC_PITCHRATE_MAX, deg/s.
    pub rate_rp_max_deg: f64,
    /// MC_YAWRATE_MAX, deg/s.
    pub rate_yaw_max_deg: f64,
    /// Roll/pitch rate loop gain, (rad/s²)/(rad/s).
    pub rate_rp_k: f64,
    /// Roll/pitch rate integral, (rad/s²)/rad.
    pub rate_rp_i: f64,
    /// Yaw rate loop gain, (rad/s²)/(rad/s).
    pub rate_yaw_k: f64,
    /// Yaw rate integral, (rad/s²)/rad.
    pub rate_yaw_i: f64,
}

impl Default for McParams {
    fn default() -> Self {
        McParams {
            xy_p: 0.95,
            z_p: 1.0,
            xy_vel_p: 1.8,
            xy_vel_i: 0.4,
            z_vel_p: 4.0,
            z_vel_i: 2.0,
            xy_vel_max: 12.0,
            z_vel_max_up: 3.0,
            z_vel_max_dn: 1.5,
            tilt_max_deg: 35.0,
            att_rp_p: 6.5,
            att_yaw_p: 2.8,
            rate_rp_max_deg: 220.0,
            rate_yaw_max_deg: 200.0,
            rate_rp_k: 18.0,
            rate_rp_i: 8.0,
            rate_yaw_k: 8.0,
            rate_yaw_i: 2.0,
        }
    }
}

/// What the vehicle should do this step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum McSetpoint {
    /// Motors off (disarmed, or landed and idling down).
    Off,
    /// Follow a trajectory: position (NED m), velocity and acceleration
    /// feed-forward, heading (rad).
    Track {
        /// Position, NED m.
        pos: Vector3<f64>,
        /// Velocity feed-forward, NED m/s.
        vel: Vector3<f64>,
        /// Acceleration feed-forward, NED m/s².
        acc: Vector3<f64>,
        /// Heading, rad.
        yaw: f64,
    },
    /// Descend at `vz` (m/s, + down) with the attitude level: no horizontal
    /// position or velocity control (PX4's Descend, flown when the position
    /// estimate is lost).
    Descend {
        /// Vertical speed, m/s, positive down.
        vz: f64,
        /// Heading, rad.
        yaw: f64,
    },
    /// Fly an attitude (FRD → NED) directly, with `lift` for the vertical
    /// (AirSim's angle commands).
    Attitude {
        /// Attitude set-point.
        att: UnitQuaternion<f64>,
        /// Height or thrust.
        lift: Lift,
    },
    /// Fly body rates directly (FRD, rad/s), with `lift` for the vertical
    /// (AirSim's rate commands).
    Rates {
        /// Body-rate set-point, FRD rad/s.
        rates_frd: Vector3<f64>,
        /// Height or thrust.
        lift: Lift,
    },
    /// Hold the horizontal position and move vertically at `vz` (m/s, + down).
    Vertical {
        /// Horizontal position to hold, NED m.
        pos_xy: nalgebra::Vector2<f64>,
        /// Vertical speed, m/s, positive down.
        vz: f64,
        /// Heading, rad.
        yaw: f64,
    },
}

/// The vertical channel of an attitude or rate set-point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Lift {
    /// Hold this NED down position, m (the altitude loops choose the thrust).
    Down(f64),
    /// This fraction (0..1) of the rotors' full thrust.
    Throttle(f64),
}

/// The multicopter controller.
#[derive(Debug, Clone)]
pub struct MulticopterControl {
    /// Gains.
    pub params: McParams,
    mass_kg: f64,
    inertia: Matrix3<f64>,
    rotors: usize,
    max_thrust_rho0_n: f64,
    effectiveness: DMatrix<f64>,
    alloc: Alloc,
    alloc_no_yaw: Alloc,
    failed: u32,
    /// The heading is given up (a rotor failed and the rest cannot balance
    /// the yaw torque at hover): only the thrust axis is controlled.
    yaw_free: bool,
    vel_int: Vector3<f64>,
    rate_int: Vector3<f64>,
    /// Last collective thrust, N (for landing detection).
    pub last_thrust_n: f64,
    /// Whether the last output saturated.
    pub saturated: bool,
}

impl MulticopterControl {
    /// A controller for an airframe (its geometry, rotor law and mass are the
    /// autopilot's configuration, as PX4's CA_* and VM_* parameters).
    pub fn new(params: McParams, airframe: &MulticopterAirframe) -> Self {
        let n = airframe.motors.len().min(MAX_MOTORS);
        let mut b = DMatrix::zeros(4, n);
        for (i, m) in airframe.motors.iter().take(n).enumerate() {
            b[(0, i)] = -m.pos_frd_m.y;
            b[(1, i)] = m.pos_frd_m.x;
            b[(2, i)] = m.yaw_sign * airframe.torque_per_thrust_m;
            b[(3, i)] = 1.0;
        }
        let (alloc, alloc_no_yaw) = allocation(&b);
        MulticopterControl {
            params,
            mass_kg: airframe.mass_kg,
            inertia: Matrix3::from_diagonal(&Vector3::from(airframe.inertia_kg_m2)),
            rotors: n,
            max_thrust_rho0_n: airframe.max_thrust_per_motor_n,
            effectiveness: b,
            alloc,
            alloc_no_yaw,
            failed: 0,
            yaw_free: false,
            vel_int: Vector3::zeros(),
            rate_int: Vector3::zeros(),
            last_thrust_n: 0.0,
            saturated: false,
        }
    }

    /// Number of motors.
    pub fn rotors(&self) -> usize {
        self.rotors
    }

    /// Takes rotor `i` out of the allocation (a detected motor failure, as
    /// PX4's control allocator does): the others share its work.
    pub fn set_rotor_failed(&mut self, i: usize) {
        if i >= self.rotors || self.failed & (1 << i) != 0 {
            return;
        }
        self.failed |= 1 << i;
        let mut b = self.effectiveness.clone();
        for k in 0..self.rotors {
            if self.failed & (1 << k) != 0 {
                b.column_mut(k).fill(0.0);
            }
        }
        (self.alloc, self.alloc_no_yaw) = allocation(&b);
        // Can the others still give torque in every direction around hover?
        // (On a hexa the opposite rotor idles at hover: roll one way would
        // need negative thrust.) If not, the heading is given up so that the
        // tilt keeps all the authority left.
        self.yaw_free = !self.fully_controllable();
    }

    /// Whether the healthy rotors can hover and add a torque of 5 % of the
    /// hover thrust × 0.1 m about every axis, both ways, within 0..max thrust.
    pub fn fully_controllable(&self) -> bool {
        let hover = self.mass_kg * G0_M_S2;
        let tau = 0.05 * hover * 0.1;
        let t_max = self.max_thrust_rho0_n;
        (0..6).all(|k| {
            let mut w = Vector4::new(0.0, 0.0, 0.0, hover);
            w[k / 2] = if k % 2 == 0 { tau } else { -tau };
            (self.alloc * w)
                .iter()
                .take(self.rotors)
                .all(|x| *x >= -1e-9 && *x <= t_max)
        })
    }

    /// Whether the heading has been given up after a rotor failure.
    pub fn yaw_free(&self) -> bool {
        self.yaw_free
    }

    /// Clears the integrators (on the ground, before take-off).
    pub fn reset(&mut self) {
        self.vel_int = Vector3::zeros();
        self.rate_int = Vector3::zeros();
    }

    /// Motor commands (0..1 per rotor, PX4 order) for `sp` at `dt` s.
    pub fn update(
        &mut self,
        sp: &McSetpoint,
        est: &EstimatedState,
        dt: f64,
        out: &mut [f64; MAX_MOTORS],
    ) {
        out.fill(0.0);
        let p = self.params;
        let level = matches!(sp, McSetpoint::Descend { .. });
        let (pos_sp, vel_ff, acc_ff, yaw_sp, vz_direct) = match *sp {
            McSetpoint::Off => {
                self.reset();
                self.last_thrust_n = 0.0;
                return;
            }
            McSetpoint::Attitude { att, lift } => {
                let thrust = self.lift_thrust(lift, est, dt);
                let rate_sp = self.attitude_to_rates(&att, &(att * Vector3::z()), est);
                self.rates_to_motors(&rate_sp, thrust, est, dt, out);
                return;
            }
            McSetpoint::Rates { rates_frd, lift } => {
                let thrust = self.lift_thrust(lift, est, dt);
                let rp_max = p.rate_rp_max_deg.to_radians();
                let y_max = p.rate_yaw_max_deg.to_radians();
                let rate_sp = Vector3::new(
                    rates_frd.x.clamp(-rp_max, rp_max),
                    rates_frd.y.clamp(-rp_max, rp_max),
                    rates_frd.z.clamp(-y_max, y_max),
                );
                self.rates_to_motors(&rate_sp, thrust, est, dt, out);
                return;
            }
            McSetpoint::Track { pos, vel, acc, yaw } => (pos, vel, acc, yaw, None),
            McSetpoint::Descend { vz, yaw } => (
                est.pos_ned_m,
                Vector3::zeros(),
                Vector3::zeros(),
                yaw,
                Some(vz),
            ),
            McSetpoint::Vertical { pos_xy, vz, yaw } => (
                Vector3::new(pos_xy.x, pos_xy.y, est.pos_ned_m.z),
                Vector3::zeros(),
                Vector3::zeros(),
                yaw,
                Some(vz),
            ),
        };
        // Position → velocity.
        let e = pos_sp - est.pos_ned_m;
        let mut vel_sp = vel_ff + Vector3::new(p.xy_p * e.x, p.xy_p * e.y, p.z_p * e.z);
        if let Some(vz) = vz_direct {
            vel_sp.z = vz;
        }
        let xy = vel_sp.xy();
        if xy.norm() > p.xy_vel_max {
            let s = p.xy_vel_max / xy.norm();
            vel_sp.x *= s;
            vel_sp.y *= s;
        }
        vel_sp.z = vel_sp.z.clamp(-p.z_vel_max_up, p.z_vel_max_dn);
        // Velocity → acceleration.
        let ev = vel_sp - est.vel_ned_m_s;
        let gains_p = Vector3::new(p.xy_vel_p, p.xy_vel_p, p.z_vel_p);
        let gains_i = Vector3::new(p.xy_vel_i, p.xy_vel_i, p.z_vel_i);
        let mut acc_sp = acc_ff + gains_p.component_mul(&ev) + self.vel_int;
        if !self.saturated {
            self.vel_int += gains_i.component_mul(&ev) * dt;
            self.vel_int = self.vel_int.map(|x| x.clamp(-4.0, 4.0));
        }
        if level {
            acc_sp.x = 0.0;
            acc_sp.y = 0.0;
            self.vel_int.x = 0.0;
            self.vel_int.y = 0.0;
        }
        // Thrust vector with tilt limit.
        let g = G0_M_S2;
        let mut f = (acc_sp - Vector3::new(0.0, 0.0, g)) * self.mass_kg;
        if f.z > -0.1 * self.mass_kg * g {
            f.z = -0.1 * self.mass_kg * g; // always some upward thrust
        }
        let tilt_max = p.tilt_max_deg.to_radians();
        let h = f.xy().norm();
        let h_max = -f.z * tilt_max.tan();
        if h > h_max {
            f.x *= h_max / h;
            f.y *= h_max / h;
        }
        acc_sp = f / self.mass_kg + Vector3::new(0.0, 0.0, g);
        let _ = acc_sp;
        // Attitude set-point from the thrust direction and heading.
        let z_b = -f.normalize();
        let x_c = Vector3::new(yaw_sp.cos(), yaw_sp.sin(), 0.0);
        let y_b = z_b.cross(&x_c).normalize();
        let x_b = y_b.cross(&z_b);
        let q_sp = UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(
            Matrix3::from_columns(&[x_b, y_b, z_b]),
        ));
        let rate_sp = self.attitude_to_rates(&q_sp, &z_b, est);
        // Collective thrust along the current body z.
        let z_now = est.att_ned_frd * Vector3::z();
        let thrust = (-f.dot(&z_now)).max(0.0);
        self.rates_to_motors(&rate_sp, thrust, est, dt, out);
    }

    /// Attitude P on the quaternion error → body-rate set-point, rad/s; with
    /// the heading given up, only the thrust axis `z_b` (NED) is steered.
    fn attitude_to_rates(
        &self,
        q_sp: &UnitQuaternion<f64>,
        z_b: &Vector3<f64>,
        est: &EstimatedState,
    ) -> Vector3<f64> {
        let p = self.params;
        let mut q_e = est.att_ned_frd.inverse() * q_sp;
        if q_e.w < 0.0 {
            q_e = UnitQuaternion::new_unchecked(-q_e.into_inner());
        }
        let mut v = q_e.imag() * 2.0;
        if self.yaw_free {
            // Reduced attitude: tilt the thrust axis only, let the heading go.
            let z_des = est.att_ned_frd.inverse() * z_b;
            let axis = Vector3::z().cross(&z_des);
            let angle = Vector3::z().dot(&z_des).clamp(-1.0, 1.0).acos();
            // No heading: only damp the spin, as far as the rotors allow
            // (the allocation lets yaw give way first).
            v = if axis.norm() > 1e-9 {
                axis.normalize() * angle
            } else {
                Vector3::zeros()
            };
        }
        let rp_max = p.rate_rp_max_deg.to_radians();
        let y_max = p.rate_yaw_max_deg.to_radians();
        Vector3::new(
            (p.att_rp_p * v.x).clamp(-rp_max, rp_max),
            (p.att_rp_p * v.y).clamp(-rp_max, rp_max),
            (p.att_yaw_p * v.z).clamp(-y_max, y_max),
        )
    }

    /// Rate PI → torque, then allocation with collective `thrust` (N).
    fn rates_to_motors(
        &mut self,
        rate_sp: &Vector3<f64>,
        thrust: f64,
        est: &EstimatedState,
        dt: f64,
        out: &mut [f64; MAX_MOTORS],
    ) {
        let p = self.params;
        let er = rate_sp - est.rate_frd_rad_s;
        let k = Vector3::new(p.rate_rp_k, p.rate_rp_k, p.rate_yaw_k);
        let ki = Vector3::new(p.rate_rp_i, p.rate_rp_i, p.rate_yaw_i);
        let alpha = k.component_mul(&er) + self.rate_int;
        if !self.saturated {
            self.rate_int += ki.component_mul(&er) * dt;
            self.rate_int = self.rate_int.map(|x| x.clamp(-20.0, 20.0));
        }
        let w = est.rate_frd_rad_s;
        let torque = self.inertia * alpha + w.cross(&(self.inertia * w));
        self.last_thrust_n = thrust;
        let t_max = self.rotor_max_thrust_n(est);
        self.allocate(&torque, thrust, t_max, out);
    }

    /// One rotor's full thrust at the air density the barometer tells, N:
    /// never negative or NaN (a barometer near vacuum, or a faulty one, can
    /// give a density of zero or below).
    fn rotor_max_thrust_n(&self, est: &EstimatedState) -> f64 {
        let t = self.max_thrust_rho0_n * (est.air_density_kg_m3 / RHO0_KG_M3);
        if t.is_finite() {
            t.max(0.0)
        } else {
            0.0
        }
    }

    /// Collective thrust (N) for `lift`: a throttle fraction of the rotors'
    /// full thrust, or the altitude loops (position P, velocity PI) holding a
    /// height, divided by the tilt's cosine.
    fn lift_thrust(&mut self, lift: Lift, est: &EstimatedState, dt: f64) -> f64 {
        let p = self.params;
        let t_max = self.rotor_max_thrust_n(est);
        let full = t_max * (self.rotors as f64 - self.failed.count_ones() as f64).max(0.0);
        match lift {
            Lift::Throttle(t) => t.clamp(0.0, 1.0) * full,
            Lift::Down(z) => {
                let vz_sp = (p.z_p * (z - est.pos_ned_m.z)).clamp(-p.z_vel_max_up, p.z_vel_max_dn);
                let ev = vz_sp - est.vel_ned_m_s.z;
                let acc_z = p.z_vel_p * ev + self.vel_int.z;
                if !self.saturated {
                    self.vel_int.z = (self.vel_int.z + p.z_vel_i * ev * dt).clamp(-4.0, 4.0);
                }
                let cos_tilt = (est.att_ned_frd * Vector3::z()).z.max(0.3);
                (self.mass_kg * (G0_M_S2 - acc_z) / cos_tilt).clamp(0.0, full)
            }
        }
    }

    /// Rotor commands (0..1) for body `torque` (N·m, FRD) and collective
    /// `thrust` (N), each rotor at most `t_max` N: the pseudo-inverse, and on
    /// saturation yaw gives way first, then the collective shifts.
    fn allocate(
        &mut self,
        torque: &Vector3<f64>,
        thrust: f64,
        t_max: f64,
        out: &mut [f64; MAX_MOTORS],
    ) {
        let n = self.rotors;
        let wrench = Vector4::new(torque.x, torque.y, torque.z, thrust);
        let mut t: Thrusts = self.alloc * wrench;
        let fits = |t: &Thrusts| t.iter().take(n).all(|x| *x >= 0.0 && *x <= t_max);
        self.saturated = false;
        if self.yaw_free && !fits(&t) {
            // After a rotor failure, yaw gives way by asking for less yaw
            // torque, down to none: dropping the yaw row instead would leave
            // the imbalance of the failed rotor and spin the vehicle up.
            let t0 = self.alloc * Vector4::new(torque.x, torque.y, 0.0, thrust);
            self.saturated = true;
            if fits(&t0) {
                let dz = t - t0;
                t = t0 + dz * largest_fitting(&t0, &dz, fits);
            } else {
                // Not even the tilt torques fit: clip them, yaw still balanced.
                t = t0.map(|x| x.clamp(0.0, t_max));
            }
        }
        if !fits(&t) {
            self.saturated = true;
            // Yaw gives way first.
            let no_yaw = self.alloc_no_yaw * wrench;
            let yaw_only = t - no_yaw;
            t = no_yaw + yaw_only * largest_fitting(&no_yaw, &yaw_only, fits);
            if !fits(&t) {
                // Then shift the collective to keep the attitude torques, and clip.
                let min = t.iter().take(n).copied().fold(f64::INFINITY, f64::min);
                let max = t.iter().take(n).copied().fold(f64::NEG_INFINITY, f64::max);
                if max - min <= t_max {
                    let shift = if min < 0.0 {
                        -min
                    } else if max > t_max {
                        t_max - max
                    } else {
                        0.0
                    };
                    t.add_scalar_mut(shift);
                }
                t.apply(|x| *x = x.clamp(0.0, t_max));
            }
        }
        for (o, ti) in out.iter_mut().zip(t.iter()).take(n) {
            // No thrust to be had (no air), or no number: the rotor idles.
            let c = ti / t_max;
            *o = if c.is_finite() {
                c.clamp(0.0, 1.0)
            } else {
                0.0
            };
        }
    }
}

/// The largest λ in 0..1 (to 1/4096) for which `base + λ·dir` fits, by
/// bisection (0 when none does; `base` is taken to fit).
fn largest_fitting(base: &Thrusts, dir: &Thrusts, fits: impl Fn(&Thrusts) -> bool) -> f64 {
    let (mut lo, mut hi) = (0.0, 1.0);
    for _ in 0..12 {
        let mid = 0.5 * (lo + hi);
        if fits(&(base + dir * mid)) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Thrust per rotor, N (rotors past the airframe's count stay 0).
type Thrusts = nalgebra::SVector<f64, MAX_MOTORS>;

/// An allocation matrix, MAX_MOTORS × 4 (rows past the airframe's rotors are
/// 0): fixed-size, so a control cycle allocates nothing.
type Alloc = nalgebra::SMatrix<f64, MAX_MOTORS, 4>;

/// The allocation matrices (pseudo-inverses of the effectiveness `b`, 4 × n:
/// roll, pitch, yaw torque and thrust per unit rotor thrust), with and
/// without yaw.
fn allocation(b: &DMatrix<f64>) -> (Alloc, Alloc) {
    let n = b.ncols();
    let pad = |m: DMatrix<f64>| {
        let mut a = Alloc::zeros();
        for i in 0..n.min(MAX_MOTORS) {
            for j in 0..4 {
                a[(i, j)] = m.get((i, j)).copied().unwrap_or(0.0);
            }
        }
        a
    };
    let alloc = b
        .clone()
        .pseudo_inverse(1e-9)
        .unwrap_or_else(|_| DMatrix::zeros(n, 4));
    let mut b3 = b.clone();
    b3.row_mut(2).fill(0.0);
    let alloc_no_yaw = b3
        .pseudo_inverse(1e-9)
        .unwrap_or_else(|_| DMatrix::zeros(n, 4));
    (pad(alloc), pad(alloc_no_yaw))
}
