//! Multirotor: rotors, body drag and landing gear → wrench.
//!
//! Turns normalised motor commands (0..1, one per rotor, in PX4's motor order) and
//! the environment into a [`Wrench`] for the rigid body. It does not integrate.
//!
//! **Geometry.** Quad-X, hexa-X and octo-X from arm length and the PX4 motor
//! angles and spin directions (PX4 `CA_ROTORn_*` of airframes 4001 / 6001 /
//! 12001-style octo X; the quad is rotor 0 front-right CCW, 1 rear-left CCW,
//! 2 front-left CW, 3 rear-right CW, as PX4's iris and x500, so a PX4 actuator
//! vector maps one to one). An airframe may instead list its rotor positions.
//!
//! **Rotor law** (AirSim `RotorParams`, from UIUC propeller data; McCormick,
//! *Aerodynamics, Aeronautics and Flight Mechanics*, 1995, ch. 6):
//! thrust T = C_T·ρ·n²·D⁴, torque Q = C_P·ρ·n²·D⁵/(2π), n in rev/s. A command u
//! sets the target speed n_max·√u (so steady thrust is linear in u, as PX4's
//! mixer assumes with THR_MDL_FAC = 0); the speed follows with a first-order lag
//! (separate τ up and down), discretised exactly.
//!
//! **Rotor inertia.** Each rotor's angular momentum J·ω enters the body's
//! equation as the gyroscopic term −ω × Σh, and a rotor's acceleration J·ω̇
//! reacts on the body about the rotor axis. A CCW rotor (seen from above) drags
//! the body into a positive (clockwise-from-above, NED) yaw torque.
//!
//! **Drag**, wind-relative, in body axes: F = −s·(c_lin ⊙ v + (ρ/ρ₀)·c_quad ⊙ |v| ⊙ v)
//! with v = Rᵀ(v_ground − wind) and s a zone's drag scale; angular damping
//! τ = −c_ang ⊙ ω.

use nalgebra::{Matrix3, Vector3};
use serde::{Deserialize, Serialize};

use super::contact::GroundContact;
use super::params::{check_range, check_range3, params_struct, ParamError};
use super::rigid_body::{BodyState, MassError, MassProperties, Wrench};
use crate::world::Environment;
use mavsitl_core::atmosphere::RHO0_KG_M3;

/// The most rotors a multirotor may have.
pub const MAX_ROTORS: usize = 8;

/// Rotor layout family; fixes the motor order, angles and spin directions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FrameLayout {
    /// Four rotors in X (PX4 quad-X order).
    QuadX,
    /// Six rotors in X (PX4 hexa-X order).
    HexaX,
    /// Eight rotors in X (PX4 octo-X order, same as ArduPilot's octa X).
    OctoX,
}

/// Spin direction seen from above.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Spin {
    /// Counter-clockwise seen from above (PX4 CA_ROTORn_KM > 0).
    Ccw,
    /// Clockwise seen from above.
    Cw,
}

impl Spin {
    /// Sign of the reaction torque on the body about FRD z: +1 for CCW rotors.
    pub fn yaw_sign(self) -> f64 {
        match self {
            Spin::Ccw => 1.0,
            Spin::Cw => -1.0,
        }
    }
}

impl FrameLayout {
    /// Motor angles (deg, clockwise from forward, as seen from above) and spins, in
    /// motor order.
    pub fn motors(self) -> &'static [(f64, Spin)] {
        use Spin::{Ccw, Cw};
        match self {
            FrameLayout::QuadX => &[(45.0, Ccw), (-135.0, Ccw), (-45.0, Cw), (135.0, Cw)],
            FrameLayout::HexaX => &[
                (90.0, Cw),
                (-90.0, Ccw),
                (-30.0, Cw),
                (150.0, Ccw),
                (30.0, Ccw),
                (-150.0, Cw),
            ],
            FrameLayout::OctoX => &[
                (22.5, Cw),
                (-157.5, Cw),
                (67.5, Ccw),
                (157.5, Ccw),
                (-22.5, Ccw),
                (-112.5, Ccw),
                (-67.5, Cw),
                (112.5, Cw),
            ],
        }
    }
}

params_struct! {
    /// Everything that defines a multirotor airframe. Numbers live in the airframe
    /// files (`physics/airframes/*.json`); a scenario overrides any of them.
    pub struct MultirotorParams / MultirotorOverrides {
        /// Rotor layout (motor order, angles, spins): `quad_x`, `hexa_x`, `octo_x`.
        pub frame: FrameLayout,
        /// Total mass, kg (weigh the vehicle ready to fly). Range 0.05–100.
        pub mass_kg: f64,
        /// Principal moments of inertia about the CG, FRD (Ixx, Iyy, Izz), kg·m²
        /// (bifilar pendulum, or from CAD). Range 1e-6–100.
        pub inertia_kg_m2: [f64; 3],
        /// Distance from the CG to each motor axis, m (used when no positions are listed).
        pub arm_length_m: f64,
        /// Optional explicit rotor positions (x forward, y right), m, in motor order;
        /// overrides `arm_length_m` (e.g. PX4 CA_ROTORn_PX/PY).
        pub rotor_positions_frd_m: Option<Vec<[f64; 2]>>,
        /// Rotor plane height along FRD z, m (negative: above the CG).
        pub rotor_z_m: f64,
        /// Thrust coefficient C_T in T = C_T·ρ·n²·D⁴ (propeller data sheet, or
        /// measure static thrust at a known rpm). Range 0.001–1.
        pub thrust_coefficient: f64,
        /// Power coefficient C_P in Q = C_P·ρ·n²·D⁵/(2π). Range 0.001–1.
        pub power_coefficient: f64,
        /// Propeller diameter D, m.
        pub propeller_diameter_m: f64,
        /// Rotor speed at full command, rpm.
        pub max_rpm: f64,
        /// Motor time constant when speeding up, s (step response to 63 %).
        pub motor_tau_up_s: f64,
        /// Motor time constant when slowing down, s.
        pub motor_tau_down_s: f64,
        /// Moment of inertia of one rotor (propeller + motor bell) about its axis,
        /// kg·m² (≈ m_prop·D²/12).
        pub rotor_inertia_kg_m2: f64,
        /// Linear drag coefficients along FRD x, y, z, N/(m/s) (rotor induced drag).
        pub linear_drag_n_s_m: [f64; 3],
        /// Quadratic drag coefficients along FRD x, y, z at ρ₀ = 1.225, N/(m/s)²
        /// (½·C_d·A·ρ₀ per face; measure terminal speed in a dive or tilt test).
        pub quadratic_drag_n_s2_m2: [f64; 3],
        /// Angular damping about FRD x, y, z, N·m/(rad/s).
        pub angular_damping_n_m_s: [f64; 3],
        /// CG height above the ground when resting level, m.
        pub gear_height_m: f64,
        /// Landing-gear footprint radius, m.
        pub footprint_radius_m: f64,
        /// Ground friction coefficient μ (0 ice … 1 rubber on concrete).
        pub ground_friction: f64,
    }
}

impl MultirotorParams {
    /// Checks every value for range and consistency.
    ///
    /// # Errors
    /// [`ParamError`] naming the first bad field.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_range("mass_kg", self.mass_kg, 0.05, 100.0)?;
        check_range3("inertia_kg_m2", &self.inertia_kg_m2, 1e-6, 100.0)?;
        check_range("arm_length_m", self.arm_length_m, 0.01, 10.0)?;
        check_range("rotor_z_m", self.rotor_z_m, -5.0, 5.0)?;
        check_range("thrust_coefficient", self.thrust_coefficient, 1e-3, 1.0)?;
        check_range("power_coefficient", self.power_coefficient, 1e-3, 1.0)?;
        check_range("propeller_diameter_m", self.propeller_diameter_m, 0.01, 5.0)?;
        check_range("max_rpm", self.max_rpm, 100.0, 100_000.0)?;
        check_range("motor_tau_up_s", self.motor_tau_up_s, 1e-4, 2.0)?;
        check_range("motor_tau_down_s", self.motor_tau_down_s, 1e-4, 2.0)?;
        check_range("rotor_inertia_kg_m2", self.rotor_inertia_kg_m2, 0.0, 1.0)?;
        check_range3("linear_drag_n_s_m", &self.linear_drag_n_s_m, 0.0, 1e3)?;
        check_range3(
            "quadratic_drag_n_s2_m2",
            &self.quadratic_drag_n_s2_m2,
            0.0,
            1e3,
        )?;
        check_range3(
            "angular_damping_n_m_s",
            &self.angular_damping_n_m_s,
            0.0,
            1e3,
        )?;
        check_range("gear_height_m", self.gear_height_m, 0.0, 10.0)?;
        check_range("footprint_radius_m", self.footprint_radius_m, 0.0, 10.0)?;
        check_range("ground_friction", self.ground_friction, 0.0, 2.0)?;
        if let Some(p) = &self.rotor_positions_frd_m {
            let n = self.frame.motors().len();
            if p.len() != n {
                return Err(ParamError {
                    field: "rotor_positions_frd_m".into(),
                    problem: format!(
                        "{:?} has {n} rotors but {} positions are listed",
                        self.frame,
                        p.len()
                    ),
                });
            }
            for (i, xy) in p.iter().enumerate() {
                check_range(
                    &format!("rotor_positions_frd_m[{i}][0]"),
                    xy[0],
                    -10.0,
                    10.0,
                )?;
                check_range(
                    &format!("rotor_positions_frd_m[{i}][1]"),
                    xy[1],
                    -10.0,
                    10.0,
                )?;
            }
        }
        Ok(())
    }

    /// Rotor positions in FRD (m) and spins, in motor order.
    pub fn rotor_geometry(&self) -> Vec<(Vector3<f64>, Spin)> {
        self.frame
            .motors()
            .iter()
            .enumerate()
            .map(|(i, &(angle_deg, spin))| {
                let xy = match self.rotor_positions_frd_m.as_ref().and_then(|p| p.get(i)) {
                    Some(xy) => *xy,
                    None => {
                        let a = angle_deg.to_radians();
                        [self.arm_length_m * a.cos(), self.arm_length_m * a.sin()]
                    }
                };
                (Vector3::new(xy[0], xy[1], self.rotor_z_m), spin)
            })
            .collect()
    }

    /// Rotor speed at full command, rad/s.
    pub fn max_speed_rad_s(&self) -> f64 {
        self.max_rpm / 60.0 * std::f64::consts::TAU
    }

    /// Thrust of one rotor at full command and air density `rho`, N.
    pub fn max_thrust_n(&self, rho_kg_m3: f64) -> f64 {
        let n = self.max_rpm / 60.0;
        self.thrust_coefficient * rho_kg_m3 * n * n * self.propeller_diameter_m.powi(4)
    }

    /// Mass properties for the rigid body.
    ///
    /// # Errors
    /// [`MassError`] if the values are not physical.
    pub fn mass_properties(&self) -> Result<MassProperties, MassError> {
        MassProperties::new(
            self.mass_kg,
            Matrix3::from_diagonal(&Vector3::from(self.inertia_kg_m2)),
        )
    }

    /// The landing-gear contact model.
    pub fn ground_contact(&self) -> GroundContact {
        GroundContact {
            gear_height_m: self.gear_height_m,
            footprint_radius_m: self.footprint_radius_m,
            friction: self.ground_friction,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Rotor {
    pos_frd_m: Vector3<f64>,
    yaw_sign: f64,
    speed_rad_s: f64,
    /// The speed the motor heads for, rad/s, worked out for a command (0..1)
    /// and a speed scale: a controller changes its commands at its own
    /// rate, so most ticks reuse them (NaN: none yet).
    target: (f64, f64, f64),
}

impl Default for Rotor {
    fn default() -> Self {
        Rotor {
            pos_frd_m: Vector3::zeros(),
            yaw_sign: 0.0,
            speed_rad_s: 0.0,
            target: (f64::NAN, f64::NAN, 0.0),
        }
    }
}

impl Rotor {
    /// The speed command `u` (0..1) asks of a motor whose full speed is
    /// `max_rad_s` scaled by `scale`, rad/s: max · √u · scale.
    #[inline]
    fn target_rad_s(&mut self, u: f64, max_rad_s: f64, scale: f64) -> f64 {
        let (last_u, last_scale, target) = self.target;
        if u == last_u && scale == last_scale {
            return target;
        }
        let target = max_rad_s * u.sqrt() * scale;
        self.target = (u, scale, target);
        target
    }
}

/// Per-rotor outputs of the last tick (for recorders and the IMU's vibration later).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RotorOutput {
    /// Rotor speed, rad/s.
    pub speed_rad_s: f64,
    /// Thrust, N.
    pub thrust_n: f64,
}

/// A multirotor's propulsion and aerodynamics.
#[derive(Debug, Clone)]
pub struct Multirotor {
    params: MultirotorParams,
    rotors: [Rotor; MAX_ROTORS],
    count: usize,
    k_thrust: f64,
    k_torque: f64,
    max_speed_rad_s: f64,
    alpha_up: f64,
    alpha_down: f64,
    rotor_momentum_frd: Vector3<f64>,
    /// Speed multiplier per rotor, √(thrust multiplier) (a motor failure).
    speed_scale: [f64; MAX_ROTORS],
}

impl Multirotor {
    /// A multirotor with rotors at rest, for physics tick `dt_s`.
    pub fn new(params: MultirotorParams, dt_s: f64) -> Self {
        let mut rotors = [Rotor::default(); MAX_ROTORS];
        let geometry = params.rotor_geometry();
        let count = geometry.len().min(MAX_ROTORS);
        for (r, (pos, spin)) in rotors.iter_mut().zip(geometry) {
            r.pos_frd_m = pos;
            r.yaw_sign = spin.yaw_sign();
        }
        let tau2 = std::f64::consts::TAU * std::f64::consts::TAU;
        let d = params.propeller_diameter_m;
        Multirotor {
            k_thrust: params.thrust_coefficient * d.powi(4) / tau2,
            k_torque: params.power_coefficient * d.powi(5) / (std::f64::consts::TAU * tau2),
            max_speed_rad_s: params.max_speed_rad_s(),
            alpha_up: 1.0 - (-dt_s / params.motor_tau_up_s).exp(),
            alpha_down: 1.0 - (-dt_s / params.motor_tau_down_s).exp(),
            rotors,
            count,
            params,
            rotor_momentum_frd: Vector3::zeros(),
            speed_scale: [1.0; MAX_ROTORS],
        }
    }

    /// Scales the thrust each rotor can deliver (motor order), 0..1: a motor
    /// failure. The rotor's speed is limited to √k of its commanded speed,
    /// so thrust and drag torque both scale by k. 1 is nominal.
    pub fn set_thrust_scale(&mut self, scale: &[f64]) {
        for (i, s) in self.speed_scale.iter_mut().enumerate() {
            let k = scale.get(i).copied().unwrap_or(1.0);
            *s = if k.is_finite() {
                k.clamp(0.0, 1.0).sqrt()
            } else {
                1.0
            };
        }
    }

    /// The airframe parameters.
    pub fn params(&self) -> &MultirotorParams {
        &self.params
    }

    /// Number of rotors.
    pub fn rotor_count(&self) -> usize {
        self.count
    }

    /// Total rotor angular momentum, FRD, kg·m²/s.
    pub fn rotor_momentum_frd(&self) -> Vector3<f64> {
        self.rotor_momentum_frd
    }

    /// Sets every rotor to the steady speed of command `u` (e.g. to start in hover).
    pub fn set_rotor_commands_steady(&mut self, controls: &[f64]) {
        for (i, r) in self.rotors.iter_mut().take(self.count).enumerate() {
            let u = controls.get(i).copied().unwrap_or(0.0);
            r.speed_rad_s = self.max_speed_rad_s * sanitize(u).sqrt();
        }
    }

    /// Total shaft power of the rotors at air density `rho` (drag torque × speed), W.
    pub fn shaft_power_w(&self, rho_kg_m3: f64) -> f64 {
        self.rotors[..self.count]
            .iter()
            .map(|r| self.k_torque * rho_kg_m3 * r.speed_rad_s.powi(3))
            .sum()
    }

    /// Rotor speeds and thrusts at air density `rho`.
    pub fn rotor_outputs(&self, rho_kg_m3: f64, out: &mut [RotorOutput; MAX_ROTORS]) {
        for (o, r) in out.iter_mut().zip(&self.rotors[..self.count]) {
            o.speed_rad_s = r.speed_rad_s;
            o.thrust_n = self.k_thrust * rho_kg_m3 * r.speed_rad_s * r.speed_rad_s;
        }
    }

    /// Advances the motors by one tick under `controls` (0..1 per rotor; NaN and
    /// out-of-range values are clamped, NaN to 0) and returns the propulsive and
    /// aerodynamic wrench for that tick.
    pub fn wrench(
        &mut self,
        controls: &[f64],
        env: &Environment,
        state: &BodyState,
        dt_s: f64,
    ) -> Wrench {
        let rho = env.air.density_kg_m3;
        let mut thrust_total = 0.0;
        let mut torque = Vector3::zeros();
        let mut h_z = 0.0;
        let j = self.params.rotor_inertia_kg_m2;
        let (k_thrust, k_torque, j_per_dt) = (self.k_thrust * rho, self.k_torque * rho, j / dt_s);
        for (i, r) in self.rotors.iter_mut().take(self.count).enumerate() {
            let u = sanitize(controls.get(i).copied().unwrap_or(0.0));
            let target = r.target_rad_s(u, self.max_speed_rad_s, self.speed_scale[i]);
            let alpha = if target >= r.speed_rad_s {
                self.alpha_up
            } else {
                self.alpha_down
            };
            let old = r.speed_rad_s;
            r.speed_rad_s += (target - old) * alpha;
            let w2 = r.speed_rad_s * r.speed_rad_s;
            let thrust = k_thrust * w2;
            let drag_torque = k_torque * w2;
            thrust_total += thrust;
            // r × (0, 0, −T)
            torque.x += -r.pos_frd_m.y * thrust;
            torque.y += r.pos_frd_m.x * thrust;
            torque.z += r.yaw_sign * (drag_torque + j_per_dt * (r.speed_rad_s - old));
            h_z -= r.yaw_sign * j * r.speed_rad_s;
        }
        self.rotor_momentum_frd = Vector3::new(0.0, 0.0, h_z);
        let p = &self.params;
        let v_rel = state.att_ned_frd.inverse() * (state.vel_ned_m_s - env.wind_ned_m_s);
        let rho_ratio = rho / RHO0_KG_M3;
        let mut drag = Vector3::zeros();
        for i in 0..3 {
            drag[i] = -env.drag_scale
                * (p.linear_drag_n_s_m[i] * v_rel[i]
                    + rho_ratio * p.quadratic_drag_n_s2_m2[i] * v_rel[i].abs() * v_rel[i]);
            torque[i] -= p.angular_damping_n_m_s[i] * state.rate_frd_rad_s[i];
        }
        Wrench {
            force_frd_n: Vector3::new(drag.x, drag.y, drag.z - thrust_total),
            force_ned_n: Vector3::zeros(),
            torque_frd_nm: torque,
        }
    }
}

/// Clamps a normalised command into 0..1, NaN to 0.
fn sanitize(u: f64) -> f64 {
    if u.is_nan() {
        0.0
    } else {
        u.clamp(0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::airframes;

    #[test]
    fn quad_x_matches_px4_motor_order() {
        let p = airframes::multirotor("generic_quad").unwrap();
        let g = p.rotor_geometry();
        // 0 front-right CCW, 1 rear-left CCW, 2 front-left CW, 3 rear-right CW.
        let expect = [
            (1.0, 1.0, Spin::Ccw),
            (-1.0, -1.0, Spin::Ccw),
            (1.0, -1.0, Spin::Cw),
            (-1.0, 1.0, Spin::Cw),
        ];
        for ((pos, spin), (sx, sy, es)) in g.iter().zip(expect) {
            assert_eq!(pos.x.signum(), sx);
            assert_eq!(pos.y.signum(), sy);
            assert_eq!(*spin, es);
            assert!((pos.xy().norm() - p.arm_length_m).abs() < 1e-12);
        }
        // x500 lists PX4's CA_ROTORn_PX/PY verbatim.
        let x = airframes::multirotor("x500").unwrap();
        let g = x.rotor_geometry();
        assert_eq!((g[0].0.x, g[0].0.y), (0.13, 0.22));
        assert_eq!((g[3].0.x, g[3].0.y), (-0.13, 0.20));
    }

    #[test]
    fn every_layout_alternates_spin_and_balances_torque() {
        for layout in [FrameLayout::QuadX, FrameLayout::HexaX, FrameLayout::OctoX] {
            let mut m = layout.motors().to_vec();
            assert_eq!(m.iter().map(|x| x.1.yaw_sign()).sum::<f64>(), 0.0);
            m.sort_by(|a, b| a.0.total_cmp(&b.0));
            for w in m.windows(2) {
                assert_ne!(w[0].1, w[1].1, "{layout:?} neighbours spin alike");
            }
            // An X frame: arms evenly spaced, none straight ahead.
            let step = 360.0 / m.len() as f64;
            for w in m.windows(2) {
                assert_eq!(w[1].0 - w[0].0, step, "{layout:?}: {m:?}");
            }
            assert_eq!(m[0].0 + 360.0 - m[m.len() - 1].0, step, "{layout:?}");
            assert!(m.iter().all(|x| x.0 % step != 0.0), "{layout:?}");
        }
    }

    #[test]
    fn rotor_law_matches_airsim_numbers() {
        // AirSim's defaults: T_max = 4.179446 N, Q_max = 0.055562 N·m at ρ = 1.225.
        let p = airframes::multirotor("generic_quad").unwrap();
        assert!(
            (p.max_thrust_n(1.225) - 4.179446).abs() < 1e-5,
            "{}",
            p.max_thrust_n(1.225)
        );
        let n = p.max_rpm / 60.0;
        let q = p.power_coefficient * 1.225 * n * n * p.propeller_diameter_m.powi(5)
            / std::f64::consts::TAU;
        assert!((q - 0.055562).abs() < 1e-5);
    }

    /// Still air of density `rho`, a wind and a zone's drag scale.
    fn air(rho: f64, wind: Vector3<f64>, drag_scale: f64) -> Environment {
        Environment {
            gravity_ned_m_s2: Vector3::new(0.0, 0.0, 9.80665),
            air: mavsitl_core::atmosphere::AirState {
                pressure_pa: 101_325.0,
                temperature_k: 288.15,
                density_kg_m3: rho,
            },
            wind_ned_m_s: wind,
            current_ned_m_s: Vector3::zeros(),
            water_density_kg_m3: 1000.0,
            ground_friction: None,
            drag_scale,
            gps_denied: false,
            ground_down_m: 0.0,
        }
    }

    /// A quad with distinct motor time constants, no drag and no damping.
    fn bare_quad() -> MultirotorParams {
        MultirotorParams {
            motor_tau_up_s: 0.02,
            motor_tau_down_s: 0.05,
            linear_drag_n_s_m: [0.0; 3],
            quadratic_drag_n_s2_m2: [0.0; 3],
            angular_damping_n_m_s: [0.0; 3],
            ..airframes::multirotor("generic_quad").unwrap()
        }
    }

    #[test]
    fn rotors_follow_their_lag_up_and_down_and_push_by_the_rotor_law() {
        let p = bare_quad();
        let (dt, rho) = (0.001, 1.1);
        let env = air(rho, Vector3::zeros(), 1.0);
        let mut m = Multirotor::new(p.clone(), dt);
        assert_eq!((m.rotor_count(), m.params()), (4, &p));
        let w_max = p.max_rpm / 60.0 * std::f64::consts::TAU;
        assert_eq!(p.max_speed_rad_s(), w_max);
        // One tick from rest at full command: ω = ω_max·(1 − e^(−dt/τ_up)).
        let w = m.wrench(&[1.0; 4], &env, &BodyState::default(), dt);
        let w1 = w_max * (1.0 - (-dt / 0.02f64).exp());
        let mut out = [RotorOutput::default(); MAX_ROTORS];
        m.rotor_outputs(rho, &mut out);
        assert!((out[0].speed_rad_s - w1).abs() < 1e-9);
        // Thrust C_T·ρ·n²·D⁴ per rotor, n = ω/2π, all four along −z.
        let t1 = p.thrust_coefficient
            * rho
            * (w1 / std::f64::consts::TAU).powi(2)
            * p.propeller_diameter_m.powi(4);
        assert!((out[2].thrust_n - t1).abs() < 1e-12);
        assert!((w.force_frd_n - Vector3::new(0.0, 0.0, -4.0 * t1)).norm() < 1e-12);
        // The spin-up reacts on the body: J·Δω/dt per rotor, CCW positive; the
        // four cancel, as the drag torques do.
        assert!(w.torque_frd_nm.norm() < 1e-12, "{}", w.torque_frd_nm);
        // Steady at u = 0.25: thrust a quarter of the maximum (linear in u).
        m.set_rotor_commands_steady(&[0.25; 4]);
        let w = m.wrench(&[0.25; 4], &env, &BodyState::default(), dt);
        assert!((w.force_frd_n.z + p.max_thrust_n(rho)).abs() < 1e-9);
        // Commanded down to 0: ω falls by e^(−dt/τ_down).
        m.wrench(&[0.0; 4], &env, &BodyState::default(), dt);
        m.rotor_outputs(rho, &mut out);
        let expect = 0.5 * w_max * (-dt / 0.05f64).exp();
        assert!((out[1].speed_rad_s - expect).abs() < 1e-9);
        // Shaft power: Q·ω = C_P·ρ·n²·D⁵/(2π)·ω summed.
        let n = expect / std::f64::consts::TAU;
        let q = p.power_coefficient * rho * n * n * p.propeller_diameter_m.powi(5)
            / std::f64::consts::TAU;
        assert!((m.shaft_power_w(rho) - 4.0 * q * expect).abs() < 1e-9);
    }

    #[test]
    fn one_rotor_rolls_pitches_and_yaws_by_its_arm_and_its_drag() {
        let p = bare_quad();
        let (dt, rho) = (0.001, 1.2);
        let env = air(rho, Vector3::zeros(), 1.0);
        let mut m = Multirotor::new(p.clone(), dt);
        // Rotor 2, front-left CW, steady at u = 0.5, the others stopped.
        let u = [0.0, 0.0, 0.5, 0.0];
        m.set_rotor_commands_steady(&u);
        let w = m.wrench(&u, &env, &BodyState::default(), dt);
        let (pos, _) = p.rotor_geometry()[2];
        let t = 0.5 * p.max_thrust_n(rho);
        let n = p.max_rpm / 60.0 * 0.5f64.sqrt();
        let q = p.power_coefficient * rho * n * n * p.propeller_diameter_m.powi(5)
            / std::f64::consts::TAU;
        // r × (0, 0, −T) = (−y·T, x·T, ·); a CW rotor yaws the body negative.
        let expect = Vector3::new(-pos.y * t, pos.x * t, -q);
        assert!(
            (w.torque_frd_nm - expect).norm() < 1e-12,
            "{} vs {expect}",
            w.torque_frd_nm
        );
        assert!(w.torque_frd_nm.x > 0.0 && w.torque_frd_nm.y > 0.0);
        // Its angular momentum J·ω: clockwise seen from above, it points down,
        // along +z in FRD.
        let h = m.rotor_momentum_frd();
        assert!(
            (h - Vector3::new(
                0.0,
                0.0,
                p.rotor_inertia_kg_m2 * 2.0 * std::f64::consts::PI * n
            ))
            .norm()
                < 1e-12
        );
        // Spinning it up from 0.5 to 1 in a tick adds the reaction −J·Δω/dt.
        let before = m.rotor_momentum_frd().z;
        let w = m.wrench(&[0.0, 0.0, 1.0, 0.0], &env, &BodyState::default(), dt);
        let dh = m.rotor_momentum_frd().z - before;
        let mut out = [RotorOutput::default(); MAX_ROTORS];
        m.rotor_outputs(rho, &mut out);
        let n2 = out[2].speed_rad_s / std::f64::consts::TAU;
        let q2 = p.power_coefficient * rho * n2 * n2 * p.propeller_diameter_m.powi(5)
            / std::f64::consts::TAU;
        assert!(
            (w.torque_frd_nm.z - (-q2 - dh / dt)).abs() < 1e-9,
            "{}",
            w.torque_frd_nm.z
        );
    }

    #[test]
    fn drag_acts_on_the_air_relative_velocity_in_body_axes() {
        let p = MultirotorParams {
            linear_drag_n_s_m: [0.1, 0.2, 0.3],
            quadratic_drag_n_s2_m2: [0.01, 0.02, 0.03],
            angular_damping_n_m_s: [0.002, 0.003, 0.004],
            ..bare_quad()
        };
        // Facing east and flying east at 5 m/s into a 3 m/s wind from the east:
        // 8 m/s of air on the nose. Sinking at 1 m/s, at half sea-level
        // density, in a zone that doubles drag.
        let rho = 0.5 * RHO0_KG_M3;
        let env = air(rho, Vector3::new(0.0, -3.0, 0.0), 2.0);
        let state = BodyState {
            vel_ned_m_s: Vector3::new(0.0, 5.0, 1.0),
            att_ned_frd: nalgebra::UnitQuaternion::from_euler_angles(
                0.0,
                0.0,
                std::f64::consts::FRAC_PI_2,
            ),
            rate_frd_rad_s: Vector3::new(1.0, -2.0, 3.0),
            ..Default::default()
        };
        let mut m = Multirotor::new(p, 0.001);
        let w = m.wrench(&[0.0; 4], &env, &state, 0.001);
        let fx = -2.0 * (0.1 * 8.0 + 0.5 * 0.01 * 8.0 * 8.0);
        let fz = -2.0 * (0.3 * 1.0 + 0.5 * 0.03 * 1.0);
        assert!(
            (w.force_frd_n - Vector3::new(fx, 0.0, fz)).norm() < 1e-12,
            "{}",
            w.force_frd_n
        );
        assert_eq!(w.force_ned_n, Vector3::zeros());
        let damping = Vector3::new(-0.002, 0.006, -0.012);
        assert!(
            (w.torque_frd_nm - damping).norm() < 1e-15,
            "{}",
            w.torque_frd_nm
        );
        // Backwards through the air, the quadratic drag keeps opposing the motion.
        let back = BodyState {
            vel_ned_m_s: Vector3::new(0.0, -5.0, -1.0),
            ..state
        };
        let w = m.wrench(&[0.0; 4], &air(rho, Vector3::zeros(), 1.0), &back, 0.001);
        let fx = 0.1 * 5.0 + 0.5 * 0.01 * 25.0;
        let fz = 0.3 + 0.5 * 0.03;
        assert!(
            (w.force_frd_n - Vector3::new(fx, 0.0, fz)).norm() < 1e-12,
            "{}",
            w.force_frd_n
        );
    }

    #[test]
    fn a_failed_motor_delivers_its_share_of_thrust() {
        let p = bare_quad();
        let env = air(1.0, Vector3::zeros(), 1.0);
        let mut m = Multirotor::new(p.clone(), 0.001);
        // Rotor 1 at 36 % thrust (60 % speed); NaN and out-of-range scales are
        // nominal and clamped; rotors past the list are nominal.
        m.set_thrust_scale(&[f64::NAN, 0.36, 2.0]);
        m.set_rotor_commands_steady(&[0.5; 4]);
        for _ in 0..2000 {
            m.wrench(
                &[0.5, 0.5, 0.5, f64::NAN],
                &env,
                &BodyState::default(),
                0.001,
            );
        }
        let mut out = [RotorOutput::default(); MAX_ROTORS];
        m.rotor_outputs(1.0, &mut out);
        let t = 0.5 * p.max_thrust_n(1.0);
        let thrusts: Vec<f64> = out[..4].iter().map(|o| o.thrust_n).collect();
        for (got, want) in thrusts.iter().zip([t, 0.36 * t, t, 0.0]) {
            assert!((got - want).abs() < 1e-9 * t, "{thrusts:?}");
        }
        m.set_thrust_scale(&[-1.0]);
        for _ in 0..2000 {
            m.wrench(&[0.5; 4], &env, &BodyState::default(), 0.001);
        }
        m.rotor_outputs(1.0, &mut out);
        assert!(out[0].thrust_n < 1e-12 * t, "{}", out[0].thrust_n);
        assert!((out[1].thrust_n - t).abs() < 1e-9 * t);
        // Commands beyond 1 are full throttle.
        m.set_rotor_commands_steady(&[7.0, 7.0, 7.0, 7.0]);
        m.rotor_outputs(1.0, &mut out);
        assert!((out[3].thrust_n - p.max_thrust_n(1.0)).abs() < 1e-9);
    }

    #[test]
    fn rotor_positions_must_match_the_layout_and_be_in_range() {
        let mut p = airframes::multirotor("generic_quad").unwrap();
        assert!(p.validate().is_ok());
        p.rotor_positions_frd_m = Some(vec![[0.1, 0.1]; 3]);
        let e = p.validate().unwrap_err();
        assert_eq!(e.field, "rotor_positions_frd_m");
        assert!(e.problem.contains("has 4 rotors but 3"), "{}", e.problem);
        p.rotor_positions_frd_m = Some(vec![[0.1, 0.1], [0.1, 0.1], [0.1, 10.5], [0.1, 0.1]]);
        assert_eq!(
            p.validate().unwrap_err().field,
            "rotor_positions_frd_m[2][1]"
        );
        p.rotor_positions_frd_m = Some(vec![[0.1, 0.1], [-10.5, 0.1], [0.1, 0.1], [0.1, 0.1]]);
        assert_eq!(
            p.validate().unwrap_err().field,
            "rotor_positions_frd_m[1][0]"
        );
        p.rotor_positions_frd_m = Some(vec![[10.0, -10.0]; 4]);
        assert!(p.validate().is_ok());
    }

    #[test]
    fn ccw_rotor_yaws_body_positive() {
        let p = airframes::multirotor("generic_quad").unwrap();
        let mut m = Multirotor::new(p, 0.001);
        let env = crate::world::World::calm(mavsitl_core::geo::LocalFrame::new(
            mavsitl_core::geo::GeoPoint::from_deg(0.0, 0.0, 0.0),
        ))
        .environment(&Vector3::zeros(), 0, &Vector3::zeros());
        let mut w = Wrench::default();
        for _ in 0..200 {
            w = m.wrench(&[1.0, 0.0, 0.0, 0.0], &env, &BodyState::default(), 0.001);
        }
        assert!(
            w.torque_frd_nm.z > 0.0,
            "front-right CCW rotor gives positive yaw torque"
        );
        assert!(w.torque_frd_nm.x < 0.0, "right rotor rolls left");
        assert!(w.torque_frd_nm.y > 0.0, "front rotor pitches up");
    }
}
