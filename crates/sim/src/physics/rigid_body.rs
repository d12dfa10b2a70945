//! 6-DOF rigid body: state, mass properties and the integrator.
//!
//! Owns the body state and advances it by one physics tick under a given wrench.
//! It knows nothing of rotors, hulls or the ground: `multirotor`, `boat` and
//! `contact` turn actuators and environment into a [`Wrench`] and hand it here.
//!
//! Frames and units: position and velocity in local NED (m, m/s); attitude as the
//! unit quaternion rotating FRD body vectors into NED; body rates, torques and
//! inertia in FRD (rad/s, N·m, kg·m²). Forces can be given in either frame.
//!
//! Equations (Fossen, *Handbook of Marine Craft Hydrodynamics and Motion Control*,
//! 2011, §3 and §6, Kirchhoff's equations with added mass M_A, I_A):
//!
//! ```text
//! (m + M_A) v̇_b = F_b + m·Rᵀg − ω × (m v_b) − ω × (M_A v_r)
//! (I + I_A) ω̇   = τ − ω × (I ω + h_rotors) − ω × (I_A ω) − v_r × (M_A v_r)
//! ṗ = R v_b,  q̇ = ½ q ⊗ (0, ω)
//! ```
//!
//! where v_r is the velocity relative to the surrounding fluid (used only by the
//! added-mass terms, so it matters only for boats) and h_rotors the angular
//! momentum of spinning rotors (gyroscopic term). With no added mass this reduces
//! exactly to m·a = R·F_b + F_ned + m·g and Euler's equation.
//!
//! **Integrator.** Classical RK4 on (p, v, q, ω) with the wrench held constant
//! over the tick (actuators are zero-order-held anyway), then the quaternion is
//! renormalised. The test `rk4_conserves_where_semi_implicit_euler_drifts`
//! justifies the choice: over 1000 s of torque-free tumbling RK4 keeps energy and
//! angular momentum to ~1e-9 while semi-implicit Euler with an exponential-map
//! attitude update drifts by orders of magnitude more. A body without added
//! mass and with a diagonal inertia (every multirotor and rover) takes the
//! same scheme in a form of its own (`step_rk4_decoupled`), about a fifth
//! cheaper: there each stage's translational derivative is only the body
//! force turned by the stage's attitude, and the rotation needs no square
//! root. The semi-implicit scheme is kept as an option for comparisons.

use nalgebra::{Matrix3, Quaternion, UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};

/// Which integrator advances the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Integrator {
    /// Classical 4th-order Runge–Kutta with quaternion renormalisation.
    #[default]
    Rk4,
    /// Semi-implicit (symplectic) Euler with an exponential-map attitude update.
    SemiImplicitEuler,
}

/// Mass and inertia, with optional added mass for bodies in water.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MassProperties {
    mass_kg: f64,
    inertia_frd_kg_m2: Matrix3<f64>,
    added_mass_frd_kg: Vector3<f64>,
    added_inertia_frd_kg_m2: Vector3<f64>,
    // Derived once.
    inv_total_mass_frd: Vector3<f64>,
    total_inertia: Matrix3<f64>,
    inv_total_inertia: Matrix3<f64>,
    has_added_mass: bool,
    /// Whether the added masses' Munk moment acts in yaw (the z part of
    /// −v_r × M_A·v_r).
    yaw_munk: bool,
    /// (I, (I + I_A)⁻¹) diagonals when the inertia is diagonal (the common case):
    /// lets the derivative use element-wise products instead of matrix products.
    diagonal: Option<(Vector3<f64>, Vector3<f64>)>,
}

/// Why mass properties were rejected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MassError {
    /// Mass not finite and positive.
    #[error("mass must be finite and > 0 kg, got {0}")]
    Mass(f64),
    /// Inertia not symmetric positive definite.
    #[error("inertia must be a symmetric positive-definite matrix")]
    Inertia,
    /// Added mass or inertia negative or non-finite.
    #[error("added mass and added inertia must be finite and >= 0")]
    Added,
}

/// What stays constant over a tick of [`RigidBody::step_rk4_decoupled`].
struct Decoupled {
    /// Body force per unit mass, FRD, m/s².
    f_b: Vector3<f64>,
    /// World force per unit mass plus gravity, NED, m/s².
    a0: Vector3<f64>,
    /// Torque, FRD, N·m.
    torque: Vector3<f64>,
    /// Rotor angular momentum, FRD, kg·m²/s.
    h: Vector3<f64>,
    /// Principal inertia and its inverse, FRD.
    inertia: Vector3<f64>,
    inv_inertia: Vector3<f64>,
}

/// The derivatives at one stage of [`RigidBody::step_rk4_decoupled`].
#[derive(Clone, Copy)]
struct Stage {
    /// Linear acceleration, NED, m/s².
    acc: Vector3<f64>,
    /// Angular acceleration, FRD, rad/s².
    alpha: Vector3<f64>,
    /// q̇.
    qdot: Quaternion<f64>,
}

impl Decoupled {
    /// The derivatives at attitude `q` and rate `w`.
    #[inline(always)]
    fn stage(&self, q: &Quaternion<f64>, w: &Vector3<f64>) -> Stage {
        let momentum = self.inertia.component_mul(w) + self.h;
        Stage {
            acc: rotate(q, &self.f_b) + self.a0,
            alpha: self
                .inv_inertia
                .component_mul(&(self.torque - w.cross(&momentum))),
            qdot: q * Quaternion::from_imag(*w) * 0.5,
        }
    }
}

/// `v` turned by the rotation of `q`, which need not be of unit length:
/// R(q/|q|)·v = v + (w·t + u × t)/|q|² with t = 2 u × v, where w and u are
/// q's scalar and vector parts.
#[inline(always)]
fn rotate(q: &Quaternion<f64>, v: &Vector3<f64>) -> Vector3<f64> {
    let u = q.imag();
    let t = 2.0 * u.cross(v);
    v + (q.w * t + u.cross(&t)) / q.norm_squared()
}

/// Whether `m` is symmetric to 1e-12 of its norm (Frobenius).
fn is_symmetric(m: &Matrix3<f64>) -> bool {
    (m - m.transpose()).norm() <= 1e-12 * m.norm()
}

impl MassProperties {
    /// Mass (kg) and inertia tensor about the centre of mass in FRD (kg·m²).
    ///
    /// # Errors
    /// [`MassError`] when the mass is not positive or the inertia not SPD.
    pub fn new(mass_kg: f64, inertia_frd_kg_m2: Matrix3<f64>) -> Result<Self, MassError> {
        Self::with_added_mass(
            mass_kg,
            inertia_frd_kg_m2,
            Vector3::zeros(),
            Vector3::zeros(),
        )
    }

    /// As [`MassProperties::new`], plus diagonal added mass (surge, sway, heave; kg)
    /// and added inertia (roll, pitch, yaw; kg·m²) in FRD.
    ///
    /// # Errors
    /// [`MassError`] as for `new`, or when added terms are negative.
    pub fn with_added_mass(
        mass_kg: f64,
        inertia_frd_kg_m2: Matrix3<f64>,
        added_mass_frd_kg: Vector3<f64>,
        added_inertia_frd_kg_m2: Vector3<f64>,
    ) -> Result<Self, MassError> {
        if !(mass_kg.is_finite() && mass_kg > 0.0) {
            return Err(MassError::Mass(mass_kg));
        }
        if !inertia_frd_kg_m2.iter().all(|x| x.is_finite())
            || !is_symmetric(&inertia_frd_kg_m2)
            || inertia_frd_kg_m2.cholesky().is_none()
        {
            return Err(MassError::Inertia);
        }
        let ok = |v: &Vector3<f64>| v.iter().all(|x| x.is_finite() && *x >= 0.0);
        if !ok(&added_mass_frd_kg) || !ok(&added_inertia_frd_kg_m2) {
            return Err(MassError::Added);
        }
        let total_inertia = inertia_frd_kg_m2 + Matrix3::from_diagonal(&added_inertia_frd_kg_m2);
        let inv_total_inertia = total_inertia.try_inverse().ok_or(MassError::Inertia)?;
        let is_diagonal =
            (0..3).all(|r| (0..3).all(|c| r == c || inertia_frd_kg_m2[(r, c)] == 0.0));
        let diagonal = is_diagonal.then(|| {
            (
                inertia_frd_kg_m2.diagonal(),
                total_inertia.diagonal().map(|x| 1.0 / x),
            )
        });
        Ok(MassProperties {
            mass_kg,
            inertia_frd_kg_m2,
            added_mass_frd_kg,
            added_inertia_frd_kg_m2,
            inv_total_mass_frd: added_mass_frd_kg.map(|a| 1.0 / (mass_kg + a)),
            total_inertia,
            inv_total_inertia,
            has_added_mass: added_mass_frd_kg != Vector3::zeros()
                || added_inertia_frd_kg_m2 != Vector3::zeros(),
            yaw_munk: true,
            diagonal,
        })
    }

    /// The same without the added masses' Munk moment in yaw,
    /// (m_A,sway − m_A,surge)·u_r·v_r, as models that leave it out (Fossen's
    /// Otter) do; roll and pitch keep theirs.
    pub fn without_yaw_munk_moment(mut self) -> Self {
        self.yaw_munk = false;
        self
    }

    /// Rigid-body mass, kg.
    pub fn mass_kg(&self) -> f64 {
        self.mass_kg
    }

    /// Rigid-body inertia about the CG, FRD, kg·m².
    pub fn inertia_frd_kg_m2(&self) -> &Matrix3<f64> {
        &self.inertia_frd_kg_m2
    }

    /// Rigid-body plus added inertia, FRD, kg·m².
    pub fn total_inertia_frd_kg_m2(&self) -> &Matrix3<f64> {
        &self.total_inertia
    }
}

/// The kinematic state of a rigid body.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BodyState {
    /// Centre-of-mass position, local NED, m.
    pub pos_ned_m: Vector3<f64>,
    /// Centre-of-mass velocity over ground, NED, m/s.
    pub vel_ned_m_s: Vector3<f64>,
    /// Attitude: rotates FRD body vectors into NED.
    pub att_ned_frd: UnitQuaternion<f64>,
    /// Angular velocity of the body relative to NED, in FRD, rad/s.
    pub rate_frd_rad_s: Vector3<f64>,
}

impl Default for BodyState {
    fn default() -> Self {
        BodyState {
            pos_ned_m: Vector3::zeros(),
            vel_ned_m_s: Vector3::zeros(),
            att_ned_frd: UnitQuaternion::identity(),
            rate_frd_rad_s: Vector3::zeros(),
        }
    }
}

impl BodyState {
    /// The first field that is not finite, if any (for the non-finite check).
    pub fn non_finite_field(&self) -> Option<&'static str> {
        let fin = |v: &Vector3<f64>| v.iter().all(|x| x.is_finite());
        if !fin(&self.pos_ned_m) {
            Some("position")
        } else if !fin(&self.vel_ned_m_s) {
            Some("velocity")
        } else if !self.att_ned_frd.coords.iter().all(|x| x.is_finite()) {
            Some("attitude")
        } else if !fin(&self.rate_frd_rad_s) {
            Some("body rates")
        } else {
            None
        }
    }
}

/// Forces and torques acting on the body for one tick, gravity excluded.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Wrench {
    /// Force in body axes (FRD), N.
    pub force_frd_n: Vector3<f64>,
    /// Force in world axes (NED), N.
    pub force_ned_n: Vector3<f64>,
    /// Torque about the CG in body axes (FRD), N·m.
    pub torque_frd_nm: Vector3<f64>,
}

/// Environment inputs the integrator needs besides the wrench.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StepInputs {
    /// Gravity, NED, m/s².
    pub gravity_ned_m_s2: Vector3<f64>,
    /// Velocity of the surrounding fluid over ground, NED, m/s (added-mass terms).
    pub fluid_vel_ned_m_s: Vector3<f64>,
    /// Total angular momentum of spinning rotors, FRD, kg·m²/s.
    pub rotor_momentum_frd: Vector3<f64>,
}

/// A rigid body: mass properties and state.
#[derive(Debug, Clone)]
pub struct RigidBody {
    mass: MassProperties,
    /// Current state.
    pub state: BodyState,
    integrator: Integrator,
}

#[derive(Clone, Copy)]
struct Deriv {
    vel: Vector3<f64>,
    acc: Vector3<f64>,
    qdot: Quaternion<f64>,
    alpha: Vector3<f64>,
}

impl RigidBody {
    /// A body at `state` with the default (RK4) integrator.
    pub fn new(mass: MassProperties, state: BodyState) -> Self {
        RigidBody {
            mass,
            state,
            integrator: Integrator::Rk4,
        }
    }

    /// Chooses the integrator.
    pub fn with_integrator(mut self, integrator: Integrator) -> Self {
        self.integrator = integrator;
        self
    }

    /// Mass properties.
    pub fn mass(&self) -> &MassProperties {
        &self.mass
    }

    /// Linear and angular acceleration (NED m/s², FRD rad/s²) at a state.
    fn accelerations(
        &self,
        att: &UnitQuaternion<f64>,
        vel_ned: &Vector3<f64>,
        w: &Vector3<f64>,
        wrench: &Wrench,
        inp: &StepInputs,
    ) -> (Vector3<f64>, Vector3<f64>) {
        let m = &self.mass;
        let i_w = match &m.diagonal {
            Some((i, _)) => i.component_mul(w),
            None => m.inertia_frd_kg_m2 * w,
        };
        let mut torque = wrench.torque_frd_nm - w.cross(&(i_w + inp.rotor_momentum_frd));
        let acc_ned = if !m.has_added_mass {
            (att * wrench.force_frd_n + wrench.force_ned_n) / m.mass_kg + inp.gravity_ned_m_s2
        } else {
            let rt = att.inverse();
            let v_b = rt * vel_ned;
            let v_r = rt * (vel_ned - inp.fluid_vel_ned_m_s);
            let ma_vr = m.added_mass_frd_kg.component_mul(&v_r);
            let f_b = wrench.force_frd_n
                + rt * (wrench.force_ned_n + m.mass_kg * inp.gravity_ned_m_s2)
                - w.cross(&(m.mass_kg * v_b))
                - w.cross(&ma_vr);
            let mut munk = v_r.cross(&ma_vr);
            if !m.yaw_munk {
                munk.z = 0.0;
            }
            torque -= w.cross(&m.added_inertia_frd_kg_m2.component_mul(w)) + munk;
            let vdot_b = m.inv_total_mass_frd.component_mul(&f_b);
            att * (vdot_b + w.cross(&v_b))
        };
        let alpha = match &m.diagonal {
            Some((_, inv)) => inv.component_mul(&torque),
            None => m.inv_total_inertia * torque,
        };
        (acc_ned, alpha)
    }

    fn deriv(
        &self,
        att: &Quaternion<f64>,
        vel: &Vector3<f64>,
        w: &Vector3<f64>,
        wrench: &Wrench,
        inp: &StepInputs,
    ) -> Deriv {
        // Stage attitudes are used unnormalised-but-close; normalise for the rotation.
        let unit = UnitQuaternion::new_normalize(*att);
        let (acc, alpha) = self.accelerations(&unit, vel, w, wrench, inp);
        let qdot = att * Quaternion::from_imag(*w) * 0.5;
        Deriv {
            vel: *vel,
            acc,
            qdot,
            alpha,
        }
    }

    /// Advances the state by `dt_s` under `wrench` (held constant over the tick).
    pub fn step(&mut self, wrench: &Wrench, inputs: &StepInputs, dt_s: f64) {
        match self.integrator {
            Integrator::Rk4 => self.step_rk4(wrench, inputs, dt_s),
            Integrator::SemiImplicitEuler => self.step_semi_implicit(wrench, inputs, dt_s),
        }
    }

    fn step_rk4(&mut self, wrench: &Wrench, inp: &StepInputs, dt: f64) {
        if let (false, Some((i, inv))) = (self.mass.has_added_mass, self.mass.diagonal) {
            return self.step_rk4_decoupled(wrench, inp, dt, &i, &inv);
        }
        let s = self.state;
        let q0 = *s.att_ned_frd.quaternion();
        let k1 = self.deriv(&q0, &s.vel_ned_m_s, &s.rate_frd_rad_s, wrench, inp);
        let h = 0.5 * dt;
        let k2 = self.deriv(
            &(q0 + k1.qdot * h),
            &(s.vel_ned_m_s + k1.acc * h),
            &(s.rate_frd_rad_s + k1.alpha * h),
            wrench,
            inp,
        );
        let k3 = self.deriv(
            &(q0 + k2.qdot * h),
            &(s.vel_ned_m_s + k2.acc * h),
            &(s.rate_frd_rad_s + k2.alpha * h),
            wrench,
            inp,
        );
        let k4 = self.deriv(
            &(q0 + k3.qdot * dt),
            &(s.vel_ned_m_s + k3.acc * dt),
            &(s.rate_frd_rad_s + k3.alpha * dt),
            wrench,
            inp,
        );
        let w6 = dt / 6.0;
        self.state.pos_ned_m += (k1.vel + (k2.vel + k3.vel) * 2.0 + k4.vel) * w6;
        self.state.vel_ned_m_s += (k1.acc + (k2.acc + k3.acc) * 2.0 + k4.acc) * w6;
        self.state.rate_frd_rad_s += (k1.alpha + (k2.alpha + k3.alpha) * 2.0 + k4.alpha) * w6;
        let q = q0 + (k1.qdot + (k2.qdot + k3.qdot) * 2.0 + k4.qdot) * w6;
        self.state.att_ned_frd = UnitQuaternion::new_normalize(q);
    }

    /// RK4 for a body without added mass and with a diagonal inertia (every
    /// multirotor and rover): the same scheme as the general step, in which
    /// the translational derivative at a stage is the body force turned by
    /// the stage's attitude plus a constant, and the rotational one is
    /// Euler's equation element by element. Each stage turns one vector by
    /// the stage's unnormalised quaternion q as R(q/|q|)·v, without a square
    /// root.
    fn step_rk4_decoupled(
        &mut self,
        wrench: &Wrench,
        inp: &StepInputs,
        dt: f64,
        inertia: &Vector3<f64>,
        inv_inertia: &Vector3<f64>,
    ) {
        let s = self.state;
        let inv_m = 1.0 / self.mass.mass_kg;
        let d = Decoupled {
            f_b: wrench.force_frd_n * inv_m,
            a0: wrench.force_ned_n * inv_m + inp.gravity_ned_m_s2,
            torque: wrench.torque_frd_nm,
            h: inp.rotor_momentum_frd,
            inertia: *inertia,
            inv_inertia: *inv_inertia,
        };
        let (v0, w0, q0) = (s.vel_ned_m_s, s.rate_frd_rad_s, *s.att_ned_frd.quaternion());
        let h = 0.5 * dt;
        let k1 = d.stage(&q0, &w0);
        let v2 = v0 + k1.acc * h;
        let k2 = d.stage(&(q0 + k1.qdot * h), &(w0 + k1.alpha * h));
        let v3 = v0 + k2.acc * h;
        let k3 = d.stage(&(q0 + k2.qdot * h), &(w0 + k2.alpha * h));
        let v4 = v0 + k3.acc * dt;
        let k4 = d.stage(&(q0 + k3.qdot * dt), &(w0 + k3.alpha * dt));
        let w6 = dt / 6.0;
        let sum = |k1: Vector3<f64>, k2, k3, k4| (k1 + (k2 + k3) * 2.0 + k4) * w6;
        self.state.pos_ned_m += sum(v0, v2, v3, v4);
        self.state.vel_ned_m_s += sum(k1.acc, k2.acc, k3.acc, k4.acc);
        self.state.rate_frd_rad_s += sum(k1.alpha, k2.alpha, k3.alpha, k4.alpha);
        let q = q0 + (k1.qdot + (k2.qdot + k3.qdot) * 2.0 + k4.qdot) * w6;
        self.state.att_ned_frd = UnitQuaternion::new_normalize(q);
    }

    fn step_semi_implicit(&mut self, wrench: &Wrench, inp: &StepInputs, dt: f64) {
        let s = self.state;
        let (acc, alpha) = self.accelerations(
            &s.att_ned_frd,
            &s.vel_ned_m_s,
            &s.rate_frd_rad_s,
            wrench,
            inp,
        );
        self.state.vel_ned_m_s += acc * dt;
        self.state.pos_ned_m += self.state.vel_ned_m_s * dt;
        self.state.rate_frd_rad_s += alpha * dt;
        let dq = UnitQuaternion::from_scaled_axis(self.state.rate_frd_rad_s * dt);
        self.state.att_ned_frd = UnitQuaternion::new_normalize(*(s.att_ned_frd * dq).quaternion());
    }

    /// Rotational kinetic energy, J.
    pub fn rotational_energy_j(&self) -> f64 {
        let w = &self.state.rate_frd_rad_s;
        0.5 * w.dot(&(self.mass.total_inertia * w))
    }

    /// Angular momentum about the CG in NED axes, kg·m²/s.
    pub fn angular_momentum_ned(&self) -> Vector3<f64> {
        self.state.att_ned_frd * (self.mass.total_inertia * self.state.rate_frd_rad_s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g() -> StepInputs {
        StepInputs {
            gravity_ned_m_s2: Vector3::new(0.0, 0.0, 9.80665),
            ..Default::default()
        }
    }

    #[test]
    fn free_fall_is_exact() {
        let mass =
            MassProperties::new(1.3, Matrix3::from_diagonal(&Vector3::new(0.01, 0.02, 0.03)))
                .unwrap();
        let mut b = RigidBody::new(mass, BodyState::default());
        let dt = 0.001;
        let n = 10_000;
        for _ in 0..n {
            b.step(&Wrench::default(), &g(), dt);
        }
        let t = n as f64 * dt;
        let expect = 0.5 * 9.80665 * t * t;
        let rel = (b.state.pos_ned_m.z - expect).abs() / expect;
        assert!(
            rel < 1e-9,
            "z {} vs {expect} (rel {rel})",
            b.state.pos_ned_m.z
        );
        assert!((b.state.vel_ned_m_s.z - 9.80665 * t).abs() / (9.80665 * t) < 1e-9);
    }

    fn tumbling(integrator: Integrator) -> (f64, f64, f64, bool) {
        // An asymmetric body spun mostly about its intermediate axis (Dzhanibekov).
        let mass =
            MassProperties::new(2.0, Matrix3::from_diagonal(&Vector3::new(1.0, 2.0, 3.0))).unwrap();
        let state = BodyState {
            rate_frd_rad_s: Vector3::new(0.01, 2.0, 0.01),
            ..Default::default()
        };
        let mut b = RigidBody::new(mass, state).with_integrator(integrator);
        let e0 = b.rotational_energy_j();
        let l0 = b.angular_momentum_ned();
        let mut flipped = false;
        let mut max_qnorm_err: f64 = 0.0;
        for _ in 0..1_000_000 {
            b.step(&Wrench::default(), &StepInputs::default(), 0.001);
            flipped |= b.state.rate_frd_rad_s.y < -1.9;
            max_qnorm_err = max_qnorm_err.max((b.state.att_ned_frd.coords.norm() - 1.0).abs());
        }
        let de = (b.rotational_energy_j() - e0).abs() / e0;
        let dl = (b.angular_momentum_ned() - l0).norm() / l0.norm();
        (de, dl, max_qnorm_err, flipped)
    }

    #[test]
    fn rk4_conserves_where_semi_implicit_euler_drifts() {
        let (de, dl, qn, flipped) = tumbling(Integrator::Rk4);
        assert!(de <= 1e-6, "RK4 energy drift {de}");
        assert!(dl <= 1e-6, "RK4 momentum drift {dl}");
        assert!(qn <= 1e-12, "quaternion norm error {qn}");
        assert!(flipped, "the intermediate-axis flip must occur");
        let (de_e, dl_e, _, _) = tumbling(Integrator::SemiImplicitEuler);
        // The justification for RK4: the cheaper scheme misses the 1e-6 budget.
        assert!(de_e > 1e-6 || dl_e > 1e-6, "semi-implicit: {de_e} {dl_e}");
        assert!(de_e > 100.0 * de && dl_e > 100.0 * dl);
    }

    #[test]
    fn added_mass_slows_surge_response_only() {
        // Pushed along one axis at a time (no Munk moment): a = F / (m + m_a).
        let mass = MassProperties::with_added_mass(
            10.0,
            Matrix3::identity(),
            Vector3::new(5.0, 0.0, 0.0),
            Vector3::zeros(),
        )
        .unwrap();
        for (force, expect) in [
            (Vector3::new(15.0, 0.0, 0.0), Vector3::new(0.01, 0.0, 0.0)),
            (Vector3::new(0.0, 10.0, 0.0), Vector3::new(0.0, 0.01, 0.0)),
        ] {
            let mut b = RigidBody::new(mass, BodyState::default());
            let w = Wrench {
                force_frd_n: force,
                ..Default::default()
            };
            b.step(&w, &StepInputs::default(), 0.01);
            let v = b.state.vel_ned_m_s;
            assert!((v - expect).norm() < 1e-15, "{v}");
        }
    }

    /// The decoupled RK4 of a body without added mass and with a diagonal
    /// inertia is the general RK4 to rounding: the same body stepped both
    /// ways (the general way by hiding the diagonal) under a body force and
    /// a world force, a torque, rotor momentum and gravity, tumbling.
    #[test]
    fn the_decoupled_rk4_is_the_general_one() {
        let fast =
            MassProperties::new(1.5, Matrix3::from_diagonal(&Vector3::new(0.02, 0.03, 0.05)))
                .unwrap();
        let general = MassProperties {
            diagonal: None,
            ..fast
        };
        let state = BodyState {
            vel_ned_m_s: Vector3::new(1.0, -2.0, 0.5),
            rate_frd_rad_s: Vector3::new(0.4, -1.1, 2.3),
            att_ned_frd: UnitQuaternion::from_euler_angles(0.3, -0.2, 1.0),
            ..Default::default()
        };
        let wrench = Wrench {
            force_frd_n: Vector3::new(0.7, -0.3, -16.0),
            force_ned_n: Vector3::new(0.2, 0.5, -0.1),
            torque_frd_nm: Vector3::new(0.01, -0.02, 0.005),
        };
        let inputs = StepInputs {
            rotor_momentum_frd: Vector3::new(0.0, 0.0, 0.004),
            ..g()
        };
        let (mut a, mut b) = (RigidBody::new(fast, state), RigidBody::new(general, state));
        for _ in 0..2_000 {
            a.step(&wrench, &inputs, 0.001);
            b.step(&wrench, &inputs, 0.001);
        }
        let (sa, sb) = (a.state, b.state);
        assert!(
            (sa.pos_ned_m - sb.pos_ned_m).norm() < 1e-11,
            "{sa:?} {sb:?}"
        );
        assert!((sa.vel_ned_m_s - sb.vel_ned_m_s).norm() < 1e-11);
        assert!((sa.rate_frd_rad_s - sb.rate_frd_rad_s).norm() < 1e-11);
        assert!(sa.att_ned_frd.angle_to(&sb.att_ned_frd) < 1e-11);
        // And the body did tumble and move: the comparison is not of rest.
        assert!(sa.att_ned_frd.angle_to(&state.att_ned_frd) > 1.0);
        assert!((sa.pos_ned_m - state.pos_ned_m).norm() > 1.0);
    }

    #[test]
    fn full_inertia_tensor_conserves_momentum_too() {
        // Products of inertia take the general (matrix) path.
        let i = Matrix3::new(1.0, 0.1, -0.05, 0.1, 2.0, 0.02, -0.05, 0.02, 3.0);
        let mass = MassProperties::new(1.0, i).unwrap();
        let state = BodyState {
            rate_frd_rad_s: Vector3::new(0.3, 1.0, -0.2),
            ..Default::default()
        };
        let mut b = RigidBody::new(mass, state);
        let (e0, l0) = (b.rotational_energy_j(), b.angular_momentum_ned());
        for _ in 0..100_000 {
            b.step(&Wrench::default(), &StepInputs::default(), 0.001);
        }
        assert!((b.rotational_energy_j() - e0).abs() / e0 < 1e-9);
        assert!((b.angular_momentum_ned() - l0).norm() / l0.norm() < 1e-9);
    }

    /// A body spinning about its D axis at ω under a constant body-x thrust F:
    /// the thrust turns with it, a_ned = F/m·(cos ωt, sin ωt), so
    /// v = F/(mω)·(sin ωt, 1 − cos ωt) and p = F/(mω²)·(1 − cos ωt, ωt − sin ωt),
    /// with gravity along D and the heading ωt.
    fn spinning_thrust_error(dt: f64, integrator: Integrator) -> f64 {
        let (m, f, w, t_end) = (2.0, 3.0, 0.7, 10.0);
        let mass =
            MassProperties::new(m, Matrix3::from_diagonal(&Vector3::new(0.1, 0.1, 0.2))).unwrap();
        let state = BodyState {
            rate_frd_rad_s: Vector3::new(0.0, 0.0, w),
            ..Default::default()
        };
        let mut b = RigidBody::new(mass, state).with_integrator(integrator);
        let thrust = Wrench {
            force_frd_n: Vector3::new(f, 0.0, 0.0),
            ..Default::default()
        };
        let n = (t_end / dt).round() as usize;
        for _ in 0..n {
            b.step(&thrust, &g(), dt);
        }
        let (s, c, g0) = ((w * t_end).sin(), (w * t_end).cos(), 9.80665);
        let v = Vector3::new(f / (m * w) * s, f / (m * w) * (1.0 - c), g0 * t_end);
        let p = Vector3::new(
            f / (m * w * w) * (1.0 - c),
            f / (m * w * w) * (w * t_end - s),
            0.5 * g0 * t_end * t_end,
        );
        let q = UnitQuaternion::from_euler_angles(0.0, 0.0, w * t_end);
        let st = b.state;
        assert!((st.rate_frd_rad_s - Vector3::new(0.0, 0.0, w)).norm() < 1e-12);
        (st.pos_ned_m - p).norm() + (st.vel_ned_m_s - v).norm() + st.att_ned_frd.angle_to(&q)
    }

    #[test]
    fn thrust_on_a_spinning_body_follows_the_analytic_curve_to_fourth_order() {
        let coarse = spinning_thrust_error(0.02, Integrator::Rk4);
        let fine = spinning_thrust_error(0.01, Integrator::Rk4);
        assert!(fine < 1e-8, "error {fine} at 10 ms");
        // RK4's global error falls as dt⁴: halving the step divides it by 16.
        let order = (coarse / fine).log2();
        assert!(
            (3.7..4.3).contains(&order),
            "order {order} ({coarse} / {fine})"
        );
        // Semi-implicit Euler is first order: far off at the same step.
        let euler = spinning_thrust_error(0.01, Integrator::SemiImplicitEuler);
        assert!(euler > 1e-3 && euler < 1.0, "semi-implicit error {euler}");
    }

    /// Semi-implicit Euler in free fall: v_n = g·n·dt and, moving on the new
    /// velocity, p_n = g·dt²·n(n + 1)/2; a spin ω₀ sped up by a torque about
    /// the same axis, ω_n = ω₀ + α·n·dt, turns on the new rate likewise.
    #[test]
    fn semi_implicit_euler_steps_on_the_new_velocity() {
        let mass = MassProperties::new(1.0, Matrix3::identity()).unwrap();
        let state = BodyState {
            rate_frd_rad_s: Vector3::new(0.0, 0.0, 0.5),
            ..Default::default()
        };
        let mut b = RigidBody::new(mass, state).with_integrator(Integrator::SemiImplicitEuler);
        let (dt, n, g0) = (0.01, 100, 9.80665);
        let torque = Wrench {
            torque_frd_nm: Vector3::new(0.0, 0.0, 0.2),
            ..Wrench::default()
        };
        for _ in 0..n {
            b.step(&torque, &g(), dt);
        }
        let nf = n as f64;
        assert!((b.state.vel_ned_m_s.z - g0 * nf * dt).abs() < 1e-12);
        assert!((b.state.rate_frd_rad_s.z - (0.5 + 0.2 * nf * dt)).abs() < 1e-12);
        let p = g0 * dt * dt * nf * (nf + 1.0) / 2.0;
        assert!(
            (b.state.pos_ned_m.z - p).abs() < 1e-12,
            "{}",
            b.state.pos_ned_m.z
        );
        let yaw = b.state.att_ned_frd.euler_angles().2;
        let want = 0.5 * nf * dt + 0.2 * dt * dt * nf * (nf + 1.0) / 2.0;
        assert!((yaw - want).abs() < 1e-12, "{yaw}");
    }

    /// An axisymmetric top (I = diag(a, a, c)) spun about its axis at ω_z, with
    /// rotors adding momentum h along the axis: torque-free, its transverse rate
    /// turns at λ = ((c − a)·ω_z + h)/a, so ω_xy = ω₀·(cos λt, sin λt) in body axes
    /// (Euler's equations). With products of inertia (the same top turned
    /// in the body) the answer turns with it.
    #[test]
    fn a_top_with_spinning_rotors_precesses_at_the_analytic_rate() {
        let (a, c, wz, w0, h, t_end): (f64, f64, f64, f64, f64, f64) =
            (0.02, 0.05, 3.0, 0.4, 0.03, 5.0);
        let lambda = ((c - a) * wz + h) / a;
        for turn in [
            UnitQuaternion::identity(),
            UnitQuaternion::from_euler_angles(0.3, -0.2, 0.5),
        ] {
            let r = turn.to_rotation_matrix();
            let i = r * Matrix3::from_diagonal(&Vector3::new(a, a, c)) * r.transpose();
            let mass = MassProperties::new(1.0, i).unwrap();
            assert_eq!(mass.diagonal.is_some(), turn == UnitQuaternion::identity());
            let state = BodyState {
                rate_frd_rad_s: turn * Vector3::new(w0, 0.0, wz),
                ..Default::default()
            };
            let mut b = RigidBody::new(mass, state);
            let inputs = StepInputs {
                rotor_momentum_frd: turn * Vector3::new(0.0, 0.0, h),
                ..Default::default()
            };
            let dt = 0.001;
            for _ in 0..(t_end / dt).round() as usize {
                b.step(&Wrench::default(), &inputs, dt);
            }
            let (s, co) = ((lambda * t_end).sin(), (lambda * t_end).cos());
            let expect = turn * Vector3::new(w0 * co, w0 * s, wz);
            let got = b.state.rate_frd_rad_s;
            assert!((got - expect).norm() < 1e-9, "{got} vs {expect}");
        }
    }

    /// A constant torque about a principal axis of a body at rest:
    /// ω = τ/I·t, about the right axis and with the torque's sign.
    #[test]
    fn a_torque_spins_the_body_up_at_torque_over_inertia() {
        let i = Vector3::new(0.5, 2.0, 4.0);
        for (axis, sign) in [(0, 1.0), (1, -1.0), (2, 1.0)] {
            let mass = MassProperties::new(3.0, Matrix3::from_diagonal(&i)).unwrap();
            let mut b = RigidBody::new(mass, BodyState::default());
            let mut torque = Vector3::zeros();
            torque[axis] = sign * 0.8;
            let w = Wrench {
                torque_frd_nm: torque,
                ..Default::default()
            };
            for _ in 0..100 {
                b.step(&w, &StepInputs::default(), 0.01);
            }
            let mut expect = Vector3::zeros();
            expect[axis] = sign * 0.8 / i[axis];
            assert!((b.state.rate_frd_rad_s - expect).norm() < 1e-12);
            assert!((b.rotational_energy_j() - 0.5 * i[axis] * expect[axis].powi(2)).abs() < 1e-12);
            let l = b.angular_momentum_ned();
            assert!((l.norm() - i[axis] * expect[axis].abs()).abs() < 1e-12);
        }
    }

    /// A force in world axes pushes along NED whatever the attitude; a force in
    /// body axes turns with the body.
    #[test]
    fn world_and_body_forces_act_in_their_own_axes() {
        let mass = MassProperties::new(2.0, Matrix3::identity()).unwrap();
        let yawed = BodyState {
            att_ned_frd: UnitQuaternion::from_euler_angles(0.0, 0.0, std::f64::consts::FRAC_PI_2),
            ..Default::default()
        };
        let push = |w: Wrench| {
            let mut b = RigidBody::new(mass, yawed);
            b.step(&w, &StepInputs::default(), 0.1);
            b.state.vel_ned_m_s
        };
        let ned = push(Wrench {
            force_ned_n: Vector3::new(4.0, 0.0, -2.0),
            ..Default::default()
        });
        assert!((ned - Vector3::new(0.2, 0.0, -0.1)).norm() < 1e-15, "{ned}");
        // Facing east, a forward push is eastward.
        let body = push(Wrench {
            force_frd_n: Vector3::new(4.0, 0.0, -2.0),
            ..Default::default()
        });
        assert!(
            (body - Vector3::new(0.0, 0.2, -0.1)).norm() < 1e-15,
            "{body}"
        );
    }

    /// Kirchhoff's equations with surge added mass X (no sway added mass),
    /// moving forward at u and turning at r, no force: in body axes
    /// (m + X)·u̇ = 0 and m·v̇ = −(m + X)·r·u, so the velocity over ground
    /// bends by a_y = r·u − (m + X)·r·u/m = −X·r·u/m; and the Munk moment
    /// N = −(Y − X)·u·v for a body moving obliquely, left out on request.
    #[test]
    fn added_mass_couples_a_turn_and_an_oblique_motion() {
        let (m, x, yv, izz, iazz) = (10.0, 4.0, 6.0, 2.0, 1.0);
        let props = |surge: f64, sway: f64| {
            MassProperties::with_added_mass(
                m,
                Matrix3::from_diagonal(&Vector3::new(1.0, 1.5, izz)),
                Vector3::new(surge, sway, 0.0),
                Vector3::new(0.0, 0.0, iazz),
            )
            .unwrap()
        };
        // The turn, over one short RK4 step.
        let (u, r, dt) = (2.0, 0.3, 1e-4);
        let turning = BodyState {
            vel_ned_m_s: Vector3::new(u, 0.0, 0.0),
            rate_frd_rad_s: Vector3::new(0.0, 0.0, r),
            ..Default::default()
        };
        let mut b = RigidBody::new(props(x, 0.0), turning);
        b.step(&Wrench::default(), &StepInputs::default(), dt);
        let a_y = b.state.vel_ned_m_s.y / dt;
        assert!((a_y - (-x * r * u / m)).abs() < 1e-3, "{a_y}");
        // The same body carried by a current at its own velocity: no relative
        // flow, so the added mass moves with it and only the rigid body turns.
        let mut b = RigidBody::new(props(x, 0.0), turning);
        let current = StepInputs {
            fluid_vel_ned_m_s: Vector3::new(u, 0.0, 0.0),
            ..Default::default()
        };
        b.step(&Wrench::default(), &current, dt);
        assert!((b.state.vel_ned_m_s.y / dt).abs() < 1e-3 * u * r);
        // Moving obliquely at (u, v), not turning: N = −(Y − X)·u·v, and
        // α_z = N / (I_zz + I_A,zz).
        let (u, v) = (2.0, 1.0);
        let oblique = BodyState {
            vel_ned_m_s: Vector3::new(u, v, 0.0),
            ..Default::default()
        };
        for (munk, expect) in [(true, -(yv - x) * u * v / (izz + iazz)), (false, 0.0)] {
            let p = if munk {
                props(x, yv)
            } else {
                props(x, yv).without_yaw_munk_moment()
            };
            let mut b = RigidBody::new(p, oblique);
            b.step(&Wrench::default(), &StepInputs::default(), dt);
            let alpha = b.state.rate_frd_rad_s.z / dt;
            assert!(
                (alpha - expect).abs() < 1e-3,
                "munk {munk}: {alpha} vs {expect}"
            );
        }
        // Added inertia adds to the rigid body's.
        assert_eq!(props(x, yv).total_inertia_frd_kg_m2()[(2, 2)], izz + iazz);
        assert_eq!(props(x, yv).inertia_frd_kg_m2()[(2, 2)], izz);
        assert_eq!(props(x, yv).mass_kg(), m);
    }

    #[test]
    fn the_first_non_finite_field_is_named() {
        let ok = BodyState::default();
        assert_eq!(ok.non_finite_field(), None);
        let mut s = ok;
        s.rate_frd_rad_s.y = f64::INFINITY;
        assert_eq!(s.non_finite_field(), Some("body rates"));
        s.att_ned_frd = UnitQuaternion::new_unchecked(Quaternion::new(f64::NAN, 0.0, 0.0, 0.0));
        assert_eq!(s.non_finite_field(), Some("attitude"));
        s.vel_ned_m_s.x = f64::NAN;
        assert_eq!(s.non_finite_field(), Some("velocity"));
        s.pos_ned_m.z = f64::NEG_INFINITY;
        assert_eq!(s.non_finite_field(), Some("position"));
    }

    #[test]
    fn rejects_bad_mass_properties() {
        assert!(MassProperties::new(0.0, Matrix3::identity()).is_err());
        assert!(MassProperties::new(f64::NAN, Matrix3::identity()).is_err());
        assert!(MassProperties::new(1.0, -Matrix3::identity()).is_err());
        assert_eq!(
            MassProperties::new(-2.0, Matrix3::identity()),
            Err(MassError::Mass(-2.0))
        );
        assert_eq!(
            MassProperties::new(f64::INFINITY, Matrix3::identity()),
            Err(MassError::Mass(f64::INFINITY))
        );
        // Asymmetric, or not finite, though positive definite.
        let mut skew = Matrix3::identity();
        skew[(0, 1)] = 1e-6;
        assert_eq!(MassProperties::new(1.0, skew), Err(MassError::Inertia));
        let mut inf = Matrix3::identity();
        inf[(2, 2)] = f64::INFINITY;
        assert_eq!(MassProperties::new(1.0, inf), Err(MassError::Inertia));
        // Tiny asymmetry from rounding is accepted, relative to the
        // inertia's size (1e-12 of its norm).
        let mut round = Matrix3::identity() * 3.0;
        round[(0, 1)] = 1e-13;
        assert!(MassProperties::new(1.0, round).is_ok());
        let mut big = Matrix3::identity() * 100.0;
        big[(0, 1)] = 1e-11;
        assert!(MassProperties::new(1.0, big).is_ok());
        big[(0, 1)] = 2e-10;
        assert_eq!(MassProperties::new(1.0, big), Err(MassError::Inertia));
        assert!(MassProperties::with_added_mass(
            1.0,
            Matrix3::identity(),
            Vector3::zeros(),
            Vector3::new(0.0, f64::NAN, 0.0)
        )
        .is_err());
        let zero_added = MassProperties::with_added_mass(
            1.0,
            Matrix3::identity(),
            Vector3::zeros(),
            Vector3::zeros(),
        )
        .unwrap();
        assert!(!zero_added.has_added_mass);
        let inertia_only = MassProperties::with_added_mass(
            1.0,
            Matrix3::identity(),
            Vector3::zeros(),
            Vector3::new(0.0, 0.0, 0.5),
        )
        .unwrap();
        assert!(inertia_only.has_added_mass);
        assert!(MassProperties::with_added_mass(
            1.0,
            Matrix3::identity(),
            Vector3::new(-1.0, 0.0, 0.0),
            Vector3::zeros()
        )
        .is_err());
    }
}
