//! Surface vessel: thrusters, rudder, hull hydrodynamics, hydrostatics, windage → wrench.
//!
//! Turns normalised actuator commands and the environment into a [`Wrench`]; the
//! rigid body (with the hull's added mass) integrates it. Model after Fossen,
//! *Handbook of Marine Craft Hydrodynamics and Motion Control* (2011):
//!
//! - **Added mass** (surge, sway, heave; roll, pitch, yaw) goes into the rigid
//!   body's mass matrix, with its Coriolis and Munk terms on the water-relative
//!   velocity (see `rigid_body`).
//! - **Damping**, linear + quadratic, on the velocity relative to the water
//!   (current): surge X = −(X_u·u_r + X_uu·|u_r|·u_r), sway likewise on the
//!   sideways velocity at the centre of lateral resistance (v_r + x_lr·r,
//!   acting there: the sway–yaw coupling that makes a hull directionally
//!   stable), yaw N = −(N_r·r + N_rr·|r|·r); heave, roll and pitch linear.
//!   Scaled by how wet the hull is and by a zone's drag scale.
//! - **Hydrostatics**: buoyancy ρ_w·g·A_wp·(immersion) up, so the hull floats at
//!   the draft m/(ρ_w·A_wp); righting moments −ρ_w·g·∇·GM·sin(angle) in roll and
//!   pitch (metacentric heights GM_T, GM_L).
//! - **Windage**: ½·ρ_a·C_d·A·|v_a|·v_a on the frontal and lateral areas, with v_a
//!   the velocity relative to the wind.
//! - **Actuators**, two layouts:
//!   - `twin_thrusters` (PX4's boat, skid steering): left and right thrusters,
//!     commands −1..1 on `left_channel` / `right_channel`, plus an optional rudder
//!     on `rudder_channel`;
//!   - `throttle_rudder` (ArduPilot Rover motorboat): one centreline thruster on
//!     `throttle_channel` (−1..1) and a rudder on `steering_channel` (−1..1,
//!     positive turns right).
//!
//!   Thrust follows its command with a first-order lag; reverse thrust is
//!   `thruster_reverse_ratio` of forward. The rudder's side force is
//!   ½·ρ_w·A_r·C_Lα·δ·V_r², with V_r² = u_r·|u_r| + 2T/(ρ_w·A_disk) (free stream
//!   plus propeller slipstream, actuator-disk theory), so a rudder steers even at
//!   low speed with the throttle open.

use nalgebra::{Matrix3, Vector3};
use serde::{Deserialize, Serialize};

use super::params::{check_channels, check_range, check_range3, params_struct, ParamError};
use super::rigid_body::{BodyState, MassError, MassProperties, Wrench};
use crate::world::Environment;

/// Static thrust per electrical watt of a small electric marine thruster, N/W
/// (a Blue Robotics T200 at 16 V gives about 0.12 N/W near full power).
pub const THRUSTER_N_PER_W: f64 = 0.12;

/// How the boat's actuators are arranged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BoatLayout {
    /// Differential twin thrusters (PX4 boat): left, right, optional rudder.
    TwinThrusters,
    /// One thruster and a rudder (ArduPilot Rover motorboat).
    ThrottleRudder,
}

params_struct! {
    /// Everything that defines a boat. Numbers live in the airframe files.
    pub struct BoatParams / BoatOverrides {
        /// Actuator layout: `twin_thrusters` or `throttle_rudder`.
        pub layout: BoatLayout,
        /// Mass, kg. Range 0.5–10 000.
        pub mass_kg: f64,
        /// Principal moments of inertia about the CG (roll, pitch, yaw), kg·m².
        pub inertia_kg_m2: [f64; 3],
        /// Added mass in surge, sway, heave (−X_u̇, −Y_v̇, −Z_ẇ), kg.
        pub added_mass_kg: [f64; 3],
        /// Added inertia in roll, pitch, yaw (−K_ṗ, −M_q̇, −N_ṙ), kg·m².
        pub added_inertia_kg_m2: [f64; 3],
        /// Waterplane area A_wp, m² (length × beam × waterplane coefficient).
        pub waterplane_area_m2: f64,
        /// Hull depth from keel to deck, m (buoyancy stops growing beyond it).
        pub hull_depth_m: f64,
        /// Height of the CG above the keel, m.
        pub cg_above_keel_m: f64,
        /// Transverse metacentric height GM_T, m (inclining experiment).
        pub metacentric_height_roll_m: f64,
        /// Longitudinal metacentric height GM_L, m.
        pub metacentric_height_pitch_m: f64,
        /// Surge damping: linear X_u (N·s/m) and quadratic X_uu (N·s²/m²).
        pub surge_damping: [f64; 2],
        /// Sway damping: linear Y_v (N·s/m) and quadratic Y_vv (N·s²/m²).
        pub sway_damping: [f64; 2],
        /// Yaw damping: linear N_r (N·m·s/rad) and quadratic N_rr (N·m·s²/rad²).
        pub yaw_damping: [f64; 2],
        /// Where the hull's sway resistance acts, x forward of the CG, m
        /// (negative: aft, where keels, skegs, pontoon sterns and thruster
        /// pods put it). The sway damping is taken on the water's sideways
        /// velocity there, v + x·r, and its force acts there, giving the
        /// sway–yaw coupling (N_v = −x·Y_v, Y_r = −x·Y_v, N_r += x²·Y_v) that
        /// keeps a hull on its course against the Munk moment of its added
        /// masses. Range −50–50; 0 (the default): at the CG, no coupling.
        #[serde(default)]
        pub lateral_resistance_x_m: f64,
        /// Whether the Munk moment of the added masses acts in yaw,
        /// N = −(m_A,sway − m_A,surge)·u_r·v_r (true, the default: the full
        /// Kirchhoff equations). Fossen's Otter model neglects it (false),
        /// leaving the hull's course stability to its cross-flow drag; the
        /// sway and surge Coriolis forces of the added masses stay.
        #[serde(default = "yes")]
        pub yaw_munk_moment: bool,
        /// Cross-flow drag by strip theory (Fossen 2021, §6.7, his
        /// `crossFlowDrag`, summed as he sums it): hull length L, draft T (m)
        /// and 2-D drag coefficient C_D (Hoerner's, from the beam/draft
        /// ratio). Each of 21 points x from −L/2 to L/2 meets the water
        /// sideways at v_r + x·r and is pushed back by
        /// ½·ρ_w·T·C_D·|v_r + x·r|·(v_r + x·r)·L/20, with the moment x times
        /// that: quadratic sway and yaw damping with their coupling in a
        /// turn. `[0, 0, 0]` (the default): none.
        #[serde(default)]
        pub cross_flow: [f64; 3],
        /// Heave damping, N·s/m.
        pub heave_damping_n_s_m: f64,
        /// Roll and pitch damping, N·m·s/rad.
        pub roll_pitch_damping_n_m_s: [f64; 2],
        /// Frontal and lateral windage areas above water, m².
        pub windage_area_m2: [f64; 2],
        /// Windage drag coefficient C_d.
        pub windage_drag_coefficient: f64,
        /// Full forward thrust of one thruster, N (bollard pull).
        pub thruster_max_thrust_n: f64,
        /// Reverse thrust as a fraction of forward, 0–1.
        pub thruster_reverse_ratio: f64,
        /// Thruster time constant, s.
        pub thruster_tau_s: f64,
        /// Thruster position: x (forward, negative aft), lateral half-separation
        /// of twin thrusters (0 for one on the centreline), z (down), m.
        pub thruster_position_m: [f64; 3],
        /// Propeller disk area of one thruster, m² (slipstream over the rudder).
        pub thruster_disk_area_m2: f64,
        /// Rudder area, m² (0: no rudder).
        pub rudder_area_m2: f64,
        /// Rudder lift-curve slope C_Lα, per rad.
        pub rudder_lift_slope_per_rad: f64,
        /// Rudder deflection at full steering command, deg.
        pub rudder_max_deg: f64,
        /// Rudder position x (negative aft), m.
        pub rudder_x_m: f64,
        /// Rudder servo time constant, s.
        pub rudder_tau_s: f64,
        /// Channel of the left thruster (twin layout).
        pub left_channel: usize,
        /// Channel of the right thruster (twin layout).
        pub right_channel: usize,
        /// Channel of the rudder (twin layout, if a rudder is fitted).
        pub rudder_channel: usize,
        /// Channel of the throttle (throttle + rudder layout).
        pub throttle_channel: usize,
        /// Channel of the steering (throttle + rudder layout).
        pub steering_channel: usize,
    }
}

fn yes() -> bool {
    true
}

impl BoatParams {
    /// Checks every value for range and consistency.
    ///
    /// # Errors
    /// [`ParamError`] naming the first bad field.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_range("mass_kg", self.mass_kg, 0.5, 10_000.0)?;
        check_range3("inertia_kg_m2", &self.inertia_kg_m2, 1e-4, 1e6)?;
        check_range3("added_mass_kg", &self.added_mass_kg, 0.0, 1e5)?;
        check_range3("added_inertia_kg_m2", &self.added_inertia_kg_m2, 0.0, 1e6)?;
        check_range("waterplane_area_m2", self.waterplane_area_m2, 1e-3, 1e3)?;
        check_range("hull_depth_m", self.hull_depth_m, 0.01, 20.0)?;
        check_range("cg_above_keel_m", self.cg_above_keel_m, 0.0, 20.0)?;
        check_range(
            "metacentric_height_roll_m",
            self.metacentric_height_roll_m,
            1e-3,
            100.0,
        )?;
        check_range(
            "metacentric_height_pitch_m",
            self.metacentric_height_pitch_m,
            1e-3,
            1000.0,
        )?;
        for (name, v) in [
            ("surge_damping", self.surge_damping),
            ("sway_damping", self.sway_damping),
            ("yaw_damping", self.yaw_damping),
            ("roll_pitch_damping_n_m_s", self.roll_pitch_damping_n_m_s),
            ("windage_area_m2", self.windage_area_m2),
        ] {
            check_range(&format!("{name}[0]"), v[0], 0.0, 1e6)?;
            check_range(&format!("{name}[1]"), v[1], 0.0, 1e6)?;
        }
        check_range("heave_damping_n_s_m", self.heave_damping_n_s_m, 0.0, 1e6)?;
        check_range("cross_flow[0]", self.cross_flow[0], 0.0, 500.0)?;
        check_range("cross_flow[1]", self.cross_flow[1], 0.0, 50.0)?;
        check_range("cross_flow[2]", self.cross_flow[2], 0.0, 5.0)?;
        check_range(
            "lateral_resistance_x_m",
            self.lateral_resistance_x_m,
            -50.0,
            50.0,
        )?;
        check_range(
            "windage_drag_coefficient",
            self.windage_drag_coefficient,
            0.0,
            5.0,
        )?;
        check_range(
            "thruster_max_thrust_n",
            self.thruster_max_thrust_n,
            0.0,
            1e6,
        )?;
        check_range(
            "thruster_reverse_ratio",
            self.thruster_reverse_ratio,
            0.0,
            1.0,
        )?;
        check_range("thruster_tau_s", self.thruster_tau_s, 1e-3, 10.0)?;
        check_range3(
            "thruster_position_m",
            &self.thruster_position_m,
            -100.0,
            100.0,
        )?;
        check_range(
            "thruster_disk_area_m2",
            self.thruster_disk_area_m2,
            1e-5,
            100.0,
        )?;
        check_range("rudder_area_m2", self.rudder_area_m2, 0.0, 100.0)?;
        check_range(
            "rudder_lift_slope_per_rad",
            self.rudder_lift_slope_per_rad,
            0.0,
            10.0,
        )?;
        check_range("rudder_max_deg", self.rudder_max_deg, 0.0, 60.0)?;
        check_range("rudder_x_m", self.rudder_x_m, -100.0, 100.0)?;
        check_range("rudder_tau_s", self.rudder_tau_s, 1e-3, 10.0)?;
        check_channels([
            ("left_channel", self.left_channel),
            ("right_channel", self.right_channel),
            ("rudder_channel", self.rudder_channel),
            ("throttle_channel", self.throttle_channel),
            ("steering_channel", self.steering_channel),
        ])
    }

    /// Mass properties with added mass for the rigid body.
    ///
    /// # Errors
    /// [`MassError`] if the values are not physical.
    pub fn mass_properties(&self) -> Result<MassProperties, MassError> {
        let m = MassProperties::with_added_mass(
            self.mass_kg,
            Matrix3::from_diagonal(&Vector3::from(self.inertia_kg_m2)),
            Vector3::from(self.added_mass_kg),
            Vector3::from(self.added_inertia_kg_m2),
        )?;
        Ok(if self.yaw_munk_moment {
            m
        } else {
            m.without_yaw_munk_moment()
        })
    }

    /// Actuator channels the hull reads: one past the highest in use.
    pub fn channel_count(&self) -> usize {
        let used = match self.layout {
            BoatLayout::TwinThrusters if self.rudder_area_m2 > 0.0 => {
                [self.left_channel, self.right_channel, self.rudder_channel]
            }
            BoatLayout::TwinThrusters => [self.left_channel, self.right_channel, 0],
            BoatLayout::ThrottleRudder => [self.throttle_channel, self.steering_channel, 0],
        };
        used.iter().max().map_or(0, |c| c + 1)
    }

    /// Immersion of the keel at equilibrium (the draft), m, in water of density `rho_w`.
    pub fn draft_m(&self, rho_w: f64) -> f64 {
        self.mass_kg / (rho_w * self.waterplane_area_m2)
    }

    /// NED down coordinate of the CG when floating at rest (water surface z = 0).
    pub fn floating_z_m(&self, rho_w: f64) -> f64 {
        self.draft_m(rho_w) - self.cg_above_keel_m
    }
}

/// Intervals of the cross-flow sum.
const CROSS_FLOW_STRIPS: usize = 20;

/// Cross-flow drag sway force (N) and yaw moment (N·m) on a hull of
/// `[length, draft, C_D]` moving sideways at `v` (m/s) and turning at `r`
/// (rad/s), in water of density `rho`: Fossen's `crossFlowDrag` sum, the
/// 21 points from −L/2 to L/2 each weighted L/20. A hull without cross-flow
/// (a zero length, draft or C_D) has every point weighted zero.
fn cross_flow([length, draft, cd]: [f64; 3], rho: f64, v: f64, r: f64) -> (f64, f64) {
    let dx = length / CROSS_FLOW_STRIPS as f64;
    let k = 0.5 * rho * draft * cd * dx;
    let (mut y, mut n) = (0.0, 0.0);
    for i in 0..=CROSS_FLOW_STRIPS {
        let x = -0.5 * length + i as f64 * dx;
        let u = v + x * r;
        let f = -k * u.abs() * u;
        y += f;
        n += x * f;
    }
    (y, n)
}

/// A boat's propulsion and hydrodynamics.
#[derive(Debug, Clone)]
pub struct Boat {
    params: BoatParams,
    thrust_n: [f64; 2],
    rudder_rad: f64,
    alpha_thrust: f64,
    alpha_rudder: f64,
    /// Thrust multiplier per thruster (a failure), 0..1.
    thrust_scale: [f64; 2],
}

/// Clamps a command into −1..1, NaN to 0.
fn sanitize(u: f64) -> f64 {
    if u.is_nan() {
        0.0
    } else {
        u.clamp(-1.0, 1.0)
    }
}

impl Boat {
    /// A boat at rest, for physics tick `dt_s`.
    pub fn new(params: BoatParams, dt_s: f64) -> Self {
        Boat {
            alpha_thrust: 1.0 - (-dt_s / params.thruster_tau_s).exp(),
            alpha_rudder: 1.0 - (-dt_s / params.rudder_tau_s).exp(),
            params,
            thrust_n: [0.0; 2],
            thrust_scale: [1.0; 2],
            rudder_rad: 0.0,
        }
    }

    /// The boat parameters.
    pub fn params(&self) -> &BoatParams {
        &self.params
    }

    /// Scales what each thruster delivers (left, right; or the single
    /// thruster first), 0..1: a thruster failure. 1 is nominal.
    pub fn set_thrust_scale(&mut self, scale: [f64; 2]) {
        self.thrust_scale = scale.map(|k| {
            if k.is_finite() {
                k.clamp(0.0, 1.0)
            } else {
                1.0
            }
        });
    }

    /// Thrust per thruster (left, right; or the single thruster first), N.
    pub fn thrust_n(&self) -> [f64; 2] {
        self.thrust_n
    }

    /// Electrical power the thrusters draw, W: |thrust| / [`THRUSTER_N_PER_W`].
    pub fn electrical_power_w(&self) -> f64 {
        self.thrust_n.iter().map(|t| t.abs()).sum::<f64>() / THRUSTER_N_PER_W
    }

    /// Current rudder angle, rad (positive turns right).
    pub fn rudder_rad(&self) -> f64 {
        self.rudder_rad
    }

    fn thrust_for(&self, u: f64) -> f64 {
        let p = &self.params;
        if u >= 0.0 {
            u * p.thruster_max_thrust_n
        } else {
            u * p.thruster_max_thrust_n * p.thruster_reverse_ratio
        }
    }

    /// Advances thrusters and rudder by one tick under `controls` and returns the
    /// wrench (propulsion, damping, hydrostatics, windage) for that tick.
    pub fn wrench(
        &mut self,
        controls: &[f64],
        env: &Environment,
        state: &BodyState,
        _dt_s: f64,
    ) -> Wrench {
        self.follow_commands(controls);
        let p = &self.params;
        let rho_w = env.water_density_kg_m3;
        let g = env.gravity_ned_m_s2.z;
        let rt = state.att_ned_frd.inverse();
        let v_r = rt * (state.vel_ned_m_s - env.current_ned_m_s);
        let w = &state.rate_frd_rad_s;

        let mut f_b = Vector3::zeros();
        let mut tau = Vector3::zeros();
        let rudder_push_n = self.propulsion(&mut f_b, &mut tau);

        // Immersion and how wet the hull is.
        let draft = p.draft_m(rho_w);
        let immersion = (state.pos_ned_m.z + p.cg_above_keel_m).clamp(0.0, p.hull_depth_m);
        let wet = (immersion / draft).clamp(0.0, 1.0);

        // Rudder (no force without one: its area is zero).
        let slip = 2.0 * rudder_push_n.max(0.0) / (rho_w * p.thruster_disk_area_m2);
        let v2 = v_r.x * v_r.x.abs() + slip;
        let side = -0.5
            * rho_w
            * p.rudder_area_m2
            * p.rudder_lift_slope_per_rad
            * self.rudder_rad
            * v2
            * wet;
        f_b.y += side;
        tau.z += p.rudder_x_m * side;

        hull_damping(
            p,
            rho_w,
            (&v_r, w),
            (env.drag_scale, wet),
            (&mut f_b, &mut tau),
        );

        // Windage.
        let v_a = rt * (state.vel_ned_m_s - env.wind_ned_m_s);
        let k = 0.5 * env.air.density_kg_m3 * p.windage_drag_coefficient * env.drag_scale;
        f_b.x -= k * p.windage_area_m2[0] * v_a.x.abs() * v_a.x;
        f_b.y -= k * p.windage_area_m2[1] * v_a.y.abs() * v_a.y;

        // Hydrostatics: buoyancy (world up), righting moments (body), heave damping.
        let volume = p.waterplane_area_m2 * immersion;
        let buoyancy = rho_w * g * volume;
        let down_b = rt * Vector3::z();
        tau.x -= buoyancy * p.metacentric_height_roll_m * down_b.y;
        tau.y += buoyancy * p.metacentric_height_pitch_m * down_b.x;
        let f_ned = Vector3::new(
            0.0,
            0.0,
            -buoyancy - wet * p.heave_damping_n_s_m * state.vel_ned_m_s.z,
        );

        Wrench {
            force_frd_n: f_b,
            force_ned_n: f_ned,
            torque_frd_nm: tau,
        }
    }

    /// Moves thrust and rudder one tick towards what `controls` command.
    fn follow_commands(&mut self, controls: &[f64]) {
        let p = &self.params;
        let ch = |i: usize| sanitize(controls.get(i).copied().unwrap_or(0.0));
        let (targets, steer) = match p.layout {
            BoatLayout::TwinThrusters => (
                [
                    self.thrust_for(ch(p.left_channel)),
                    self.thrust_for(ch(p.right_channel)),
                ],
                if p.rudder_area_m2 > 0.0 {
                    ch(p.rudder_channel)
                } else {
                    0.0
                },
            ),
            BoatLayout::ThrottleRudder => (
                [self.thrust_for(ch(p.throttle_channel)), 0.0],
                ch(p.steering_channel),
            ),
        };
        for ((t, target), k) in self.thrust_n.iter_mut().zip(targets).zip(self.thrust_scale) {
            *t += (target * k - *t) * self.alpha_thrust;
        }
        self.rudder_rad +=
            (steer * p.rudder_max_deg.to_radians() - self.rudder_rad) * self.alpha_rudder;
    }

    /// Adds the thrusters' force and moment (body frame); returns the thrust
    /// pushing water over the rudder, N.
    fn propulsion(&self, f_b: &mut Vector3<f64>, tau: &mut Vector3<f64>) -> f64 {
        let [tx, half_sep, tz] = self.params.thruster_position_m;
        match self.params.layout {
            BoatLayout::TwinThrusters => {
                for (t, y) in self.thrust_n.iter().zip([-half_sep, half_sep]) {
                    let r = Vector3::new(tx, y, tz);
                    let f = Vector3::new(*t, 0.0, 0.0);
                    *f_b += f;
                    *tau += r.cross(&f);
                }
                0.5 * (self.thrust_n[0] + self.thrust_n[1])
            }
            BoatLayout::ThrottleRudder => {
                let r = Vector3::new(tx, 0.0, tz);
                let f = Vector3::new(self.thrust_n[0], 0.0, 0.0);
                *f_b += f;
                *tau += r.cross(&f);
                self.thrust_n[0]
            }
        }
    }
}

/// Adds the hull's damping on the water-relative velocity `v_r` and body
/// rates `w` to the body force and moment, scaled by a zone's drag scale
/// and by how wet the hull is (0..1).
fn hull_damping(
    p: &BoatParams,
    rho_w: f64,
    (v_r, w): (&Vector3<f64>, &Vector3<f64>),
    (drag_scale, wet): (f64, f64),
    (f_b, tau): (&mut Vector3<f64>, &mut Vector3<f64>),
) {
    let s = drag_scale * wet;
    let quad = |c: [f64; 2], v: f64| c[0] * v + c[1] * v.abs() * v;
    f_b.x -= s * quad(p.surge_damping, v_r.x);
    let x_lr = p.lateral_resistance_x_m;
    let sway = -s * quad(p.sway_damping, v_r.y + x_lr * w.z);
    f_b.y += sway;
    tau.z += x_lr * sway;
    tau.z -= s * quad(p.yaw_damping, w.z);
    let (y, n) = cross_flow(p.cross_flow, rho_w, v_r.y, w.z);
    f_b.y += s * y;
    tau.z += s * n;
    tau.x -= wet * p.roll_pitch_damping_n_m_s[0] * w.x;
    tau.y -= wet * p.roll_pitch_damping_n_m_s[1] * w.y;
}

#[cfg(test)]
mod tests {
    use super::*;
    use mavsitl_core::controller::MAX_ACTUATORS;
    use nalgebra::UnitQuaternion;

    fn usv_twin() -> BoatParams {
        crate::physics::airframes::boat("usv_twin").expect("shipped")
    }

    /// A value out of range is refused naming its field (an array's
    /// element by index); every channel up to the last actuator's is
    /// accepted, the one past it refused.
    #[test]
    fn validate_names_the_bad_field_and_a_channel_past_the_last() {
        type Set = fn(&mut BoatParams);
        let cases: [(&str, Set); 10] = [
            ("mass_kg", |p| p.mass_kg = 0.49),
            ("added_mass_kg[2]", |p| p.added_mass_kg[2] = -1.0),
            ("yaw_damping[1]", |p| p.yaw_damping[1] = f64::NAN),
            ("windage_area_m2[0]", |p| p.windage_area_m2[0] = -0.1),
            ("cross_flow[2]", |p| p.cross_flow[2] = 5.1),
            ("thruster_tau_s", |p| p.thruster_tau_s = 0.0),
            ("rudder_max_deg", |p| p.rudder_max_deg = 61.0),
            ("left_channel", |p| p.left_channel = MAX_ACTUATORS),
            ("rudder_channel", |p| p.rudder_channel = MAX_ACTUATORS),
            ("steering_channel", |p| {
                p.steering_channel = MAX_ACTUATORS + 3
            }),
        ];
        assert_eq!(usv_twin().validate(), Ok(()));
        for (field, set) in cases {
            let mut p = usv_twin();
            set(&mut p);
            assert_eq!(p.validate().expect_err(field).field, field);
        }
        let mut last = usv_twin();
        last.left_channel = MAX_ACTUATORS - 1;
        last.steering_channel = MAX_ACTUATORS - 1;
        assert_eq!(last.validate(), Ok(()));
    }

    /// One past the highest channel the layout reads: the rudder's only
    /// where a rudder is fitted, the throttle and steering only on a
    /// single-thruster hull.
    #[test]
    fn channel_count_is_one_past_the_highest_channel_in_use() {
        let mut p = usv_twin();
        (p.left_channel, p.right_channel, p.rudder_channel) = (3, 1, 6);
        (p.throttle_channel, p.steering_channel) = (9, 10);
        p.rudder_area_m2 = 0.0;
        assert_eq!(p.channel_count(), 4);
        p.rudder_area_m2 = 0.01;
        assert_eq!(p.channel_count(), 7);
        p.rudder_channel = 2;
        assert_eq!(p.channel_count(), 4);
        p.layout = BoatLayout::ThrottleRudder;
        assert_eq!(p.channel_count(), 11);
        p.steering_channel = 5;
        assert_eq!(p.channel_count(), 10);
    }

    /// Full ahead on the left, full astern on the right: each thruster
    /// follows its command through its 0.1 s lag to 33 N ahead and 0.8 ×
    /// 33 N astern, and together they draw |thrust| / 0.12 N/W.
    #[test]
    fn thrusters_follow_their_lag_either_way_and_draw_power_for_both() {
        let mut b = Boat::new(usv_twin(), 0.01);
        b.follow_commands(&[1.0, -1.0]);
        let a = 1.0 - (-0.1f64).exp();
        let [l, r] = b.thrust_n();
        assert!((l - 33.0 * a).abs() < 1e-12 && (r + 26.4 * a).abs() < 1e-12);
        assert!((b.electrical_power_w() - 59.4 * a / 0.12).abs() < 1e-9);
        for _ in 0..999 {
            b.follow_commands(&[1.0, -1.0]);
        }
        let [l, r] = b.thrust_n();
        assert!(
            (l - 33.0).abs() < 1e-9 && (r + 26.4).abs() < 1e-9,
            "{l} {r}"
        );
        assert!((b.electrical_power_w() - 495.0).abs() < 1e-6);
    }

    /// The rudder follows the steering channel through its 0.05 s lag to
    /// ±35°, positive to the right; the single thruster the throttle.
    #[test]
    fn the_rudder_follows_its_lag_to_its_limit_either_way() {
        let p = crate::physics::airframes::boat("usv_rudder").expect("shipped");
        let mut b = Boat::new(p, 0.01);
        let a = 1.0 - (-0.2f64).exp();
        let full = 35f64.to_radians();
        for steer in [1.0, -1.0] {
            let mut controls = [0.0; 3];
            (controls[0], controls[2]) = (steer, 0.5);
            b = Boat::new(b.params().clone(), 0.01);
            b.follow_commands(&controls);
            assert!((b.rudder_rad() - steer * full * a).abs() < 1e-12);
            for _ in 0..199 {
                b.follow_commands(&controls);
            }
            assert!((b.rudder_rad() - steer * full).abs() < 1e-12, "{steer}");
            assert!((b.thrust_n()[0] - 33.0).abs() < 1e-6);
            assert_eq!(b.thrust_n()[1], 0.0);
        }
    }

    fn calm() -> Environment {
        use mavsitl_core::geo::{GeoPoint, LocalFrame};
        crate::world::World::calm(LocalFrame::new(GeoPoint::from_deg(0.0, 0.0, 0.0))).environment(
            &Vector3::zeros(),
            0,
            &Vector3::zeros(),
        )
    }

    /// The hull's drag acts on the velocity through the water, the
    /// windage on the velocity through the air: a hull drifting with both
    /// feels neither; one held still in them is pushed along by each, by
    /// the quadratic laws of its coefficients.
    #[test]
    fn drag_acts_on_the_velocity_through_the_water_and_the_air() {
        let mut p = usv_twin();
        p.windage_drag_coefficient = 1.5;
        let mut env = calm();
        env.drag_scale = 2.0;
        let c = Vector3::new(0.5, -0.2, 0.0);
        (env.current_ned_m_s, env.wind_ned_m_s) = (c, c);
        let rho = env.water_density_kg_m3;
        let floating = BodyState {
            pos_ned_m: Vector3::new(0.0, 0.0, p.floating_z_m(rho)),
            ..BodyState::default()
        };
        let mut b = Boat::new(p.clone(), 0.01);
        let drifting = BodyState {
            vel_ned_m_s: c,
            ..floating
        };
        let w = b.wrench(&[0.0; 2], &env, &drifting, 0.01);
        assert_eq!((w.force_frd_n.x, w.force_frd_n.y), (0.0, 0.0));
        assert_eq!(w.torque_frd_nm.z, 0.0);
        let w = b.wrench(&[0.0; 2], &env, &floating, 0.01);
        // A zone's drag scale of 2 on both. Surge: 4·0.5 + 6·0.5² N; sway:
        // −(40·0.2 + 60·0.2²) N, acting 0.5 m aft. Windage: ½·1.225·C_D·A·v²
        // on 0.1 and 0.3 m², C_D 1.5.
        let k = 0.5 * env.air.density_kg_m3 * 1.5 * 2.0;
        let surge = 2.0 * (4.0 * 0.5 + 6.0 * 0.25) + k * 0.1 * 0.25;
        let sway = -2.0 * (40.0 * 0.2 + 60.0 * 0.04) - k * 0.3 * 0.04;
        assert!(
            (w.force_frd_n.x - surge).abs() < 1e-9,
            "{}",
            w.force_frd_n.x
        );
        assert!((w.force_frd_n.y - sway).abs() < 1e-9, "{}", w.force_frd_n.y);
        let yaw = -0.5 * -2.0 * (40.0 * 0.2 + 60.0 * 0.04);
        assert!(
            (w.torque_frd_nm.z - yaw).abs() < 1e-9,
            "{}",
            w.torque_frd_nm.z
        );
    }

    /// The rudder's side force ½·ρ·A·C_L·δ·v²: at rest, v² is the
    /// thruster's slipstream 2·T/(ρ·A_disk); under way without thrust it is
    /// the speed's u·|u|, so going astern the rudder pushes the other way.
    /// Right rudder pushes the stern left: a moment to the right. Half out
    /// of the water, half as much.
    #[test]
    fn the_rudder_pushes_with_the_slipstream_and_the_flow_either_way() {
        let p = crate::physics::airframes::boat("usv_rudder").expect("shipped");
        let env = calm();
        let rho = env.water_density_kg_m3;
        let floating = BodyState {
            pos_ned_m: Vector3::new(0.0, 0.0, p.floating_z_m(rho)),
            ..BodyState::default()
        };
        let delta = 35f64.to_radians();
        let lift = 0.5 * rho * p.rudder_area_m2 * p.rudder_lift_slope_per_rad * delta;
        let side_lifted = |throttle: f64, u: f64, lift_m: f64| {
            let mut b = Boat::new(p.clone(), 0.01);
            let controls = [1.0, 0.0, throttle];
            for _ in 0..2000 {
                b.follow_commands(&controls);
            }
            let mut state = BodyState {
                vel_ned_m_s: Vector3::new(u, 0.0, 0.0),
                ..floating
            };
            state.pos_ned_m.z -= lift_m;
            let w = b.wrench(&controls, &env, &state, 0.01);
            assert!((w.torque_frd_nm.z - p.rudder_x_m * w.force_frd_n.y).abs() < 1e-9);
            w.force_frd_n.y
        };
        let side_at = |throttle: f64, u: f64| side_lifted(throttle, u, 0.0);
        let slip = 2.0 * p.thruster_max_thrust_n / (rho * p.thruster_disk_area_m2);
        let at_rest = side_at(1.0, 0.0);
        assert!((at_rest + lift * slip).abs() < 1e-9 * slip, "{at_rest}");
        assert!(at_rest < 0.0 && p.rudder_x_m * at_rest > 0.0);
        // Lifted half out of the water, the rudder is half as wet.
        let half = side_lifted(1.0, 0.0, 0.5 * p.draft_m(rho));
        assert!((half - 0.5 * at_rest).abs() < 1e-9 * slip, "{half}");
        // Astern thrust blows no slipstream over the rudder.
        assert_eq!(side_at(-1.0, 0.0), 0.0);
        for u in [2.0, -2.0] {
            let side = side_at(0.0, u);
            assert!((side + lift * u * u.abs()).abs() < 1e-9, "{u}: {side}");
        }
    }

    /// Floating at its waterline, buoyancy carries the weight; heeled or
    /// trimmed it rights itself with ρ·g·V·GM·sin(angle) (V·ρ·g the weight),
    /// either way; sinking it is damped by the heave coefficient.
    #[test]
    fn buoyancy_carries_the_weight_and_rights_a_heel_or_a_trim_either_way() {
        let p = usv_twin();
        let env = calm();
        let weight = p.mass_kg * env.gravity_ned_m_s2.z;
        let floating = BodyState {
            pos_ned_m: Vector3::new(0.0, 0.0, p.floating_z_m(env.water_density_kg_m3)),
            ..BodyState::default()
        };
        let mut b = Boat::new(p.clone(), 0.01);
        for angle in [0.1, -0.1] {
            let heeled = BodyState {
                att_ned_frd: UnitQuaternion::from_euler_angles(angle, 0.0, 0.0),
                ..floating
            };
            let w = b.wrench(&[0.0; 2], &env, &heeled, 0.01);
            let righting = -weight * p.metacentric_height_roll_m * f64::sin(angle);
            assert!((w.torque_frd_nm.x - righting).abs() < 1e-9, "{angle}");
            assert!((w.force_ned_n.z + weight).abs() < 1e-9);
            let trimmed = BodyState {
                att_ned_frd: UnitQuaternion::from_euler_angles(0.0, angle, 0.0),
                ..floating
            };
            let w = b.wrench(&[0.0; 2], &env, &trimmed, 0.01);
            let righting = -weight * p.metacentric_height_pitch_m * f64::sin(angle);
            assert!((w.torque_frd_nm.y - righting).abs() < 1e-9, "{angle}");
        }
        let sinking = BodyState {
            vel_ned_m_s: Vector3::new(0.0, 0.0, 0.2),
            ..floating
        };
        let w = b.wrench(&[0.0; 2], &env, &sinking, 0.01);
        let heave = p.heave_damping_n_s_m * 0.2;
        assert!(
            (w.force_ned_n.z + weight + heave).abs() < 1e-9,
            "{}",
            w.force_ned_n.z
        );
    }

    /// At rest, settled: the thrusters' force and their moments about the
    /// CG, r × F; left ahead and right astern yaw the twin hull to the
    /// right by the half-separation times their difference. With a rudder
    /// fitted, the twin's slipstream is their mean thrust's.
    #[test]
    fn the_thrusters_push_and_turn_from_where_they_are_mounted() {
        let env = calm();
        let settled = |p: &BoatParams, controls: &[f64]| {
            let floating = BodyState {
                pos_ned_m: Vector3::new(0.0, 0.0, p.floating_z_m(env.water_density_kg_m3)),
                ..BodyState::default()
            };
            let mut b = Boat::new(p.clone(), 0.01);
            for _ in 0..3000 {
                b.follow_commands(controls);
            }
            b.wrench(controls, &env, &floating, 0.01)
        };
        let twin = usv_twin();
        let [_, half_sep, tz] = twin.thruster_position_m;
        let w = settled(&twin, &[1.0, -1.0]);
        assert!((w.force_frd_n.x - 6.6).abs() < 1e-9, "{}", w.force_frd_n.x);
        assert!((w.torque_frd_nm.z - half_sep * 59.4).abs() < 1e-9);
        assert!((w.torque_frd_nm.y - tz * 6.6).abs() < 1e-9);
        let w = settled(&twin, &[-0.5, 1.0]);
        assert!((w.torque_frd_nm.z + half_sep * (33.0 + 13.2)).abs() < 1e-9);

        let single = crate::physics::airframes::boat("usv_rudder").expect("shipped");
        let w = settled(&single, &[0.0, 0.0, 1.0]);
        let tz = single.thruster_position_m[2];
        assert!((w.force_frd_n.x - 66.0).abs() < 1e-9, "{}", w.force_frd_n.x);
        assert!((w.torque_frd_nm.y - tz * 66.0).abs() < 1e-9);
        assert_eq!(w.torque_frd_nm.z, 0.0);

        let mut rudder_twin = usv_twin();
        rudder_twin.rudder_area_m2 = 0.01;
        let w = settled(&rudder_twin, &[1.0, 0.5, 1.0]);
        let rho = env.water_density_kg_m3;
        let v2 = 2.0 * 0.5 * (33.0 + 16.5) / (rho * rudder_twin.thruster_disk_area_m2);
        let side = -0.5 * rho * 0.01 * 3.0 * 35f64.to_radians() * v2;
        assert!(
            (w.force_frd_n.y - side).abs() < 1e-9 * v2,
            "{} {side}",
            w.force_frd_n.y
        );
    }

    /// Turning at 0.5 rad/s without drifting, the hull meets the water
    /// sideways at its lateral resistance point, 0.5 m aft, and its yaw is
    /// damped; all of it scales with a zone's drag scale and with how wet
    /// the hull is. The Otter's cross-flow strips add theirs.
    #[test]
    fn a_turn_is_damped_at_the_lateral_resistance_point_by_drag_scale_and_wetness() {
        let mut env = calm();
        let rho = env.water_density_kg_m3;
        let damped = |p: &BoatParams, env: &Environment, lift_m: f64| {
            let turning = BodyState {
                pos_ned_m: Vector3::new(0.0, 0.0, p.floating_z_m(rho) - lift_m),
                rate_frd_rad_s: Vector3::new(0.0, 0.0, 0.5),
                ..BodyState::default()
            };
            Boat::new(p.clone(), 0.01).wrench(&[0.0; 2], env, &turning, 0.01)
        };
        let p = usv_twin();
        // Sway at x = −0.5 m: −0.25 m/s, resisted by 40·0.25 + 60·0.25² N.
        let sway = 40.0 * 0.25 + 60.0 * 0.0625;
        let yaw = 8.0 * 0.5 + 6.0 * 0.25;
        for (drag_scale, lift_m, s) in [
            (1.0, 0.0, 1.0),
            (2.0, 0.0, 2.0),
            (2.0, 0.5 * p.draft_m(rho), 1.0),
        ] {
            env.drag_scale = drag_scale;
            let w = damped(&p, &env, lift_m);
            assert!(
                (w.force_frd_n.y - s * sway).abs() < 1e-9,
                "{s}: {}",
                w.force_frd_n.y
            );
            let moment = -0.5 * s * sway - s * yaw;
            assert!(
                (w.torque_frd_nm.z - moment).abs() < 1e-9,
                "{s}: {}",
                w.torque_frd_nm.z
            );
        }
        env.drag_scale = 2.0;
        let otter = crate::physics::airframes::boat("otter_usv").expect("shipped");
        let w = damped(&otter, &env, 0.0);
        let (y, n) = cross_flow(otter.cross_flow, rho, 0.0, 0.5);
        let x_lr = otter.lateral_resistance_x_m;
        let quad = |c: [f64; 2], v: f64| c[0] * v + c[1] * v.abs() * v;
        let sway = -2.0 * quad(otter.sway_damping, x_lr * 0.5);
        assert!(
            (w.force_frd_n.y - (sway + 2.0 * y)).abs() < 1e-9,
            "{}",
            w.force_frd_n.y
        );
        let moment = x_lr * sway - 2.0 * quad(otter.yaw_damping, 0.5) + 2.0 * n;
        assert!(
            (w.torque_frd_nm.z - moment).abs() < 1e-9,
            "{}",
            w.torque_frd_nm.z
        );
        assert!(n < 0.0, "the strips resist the turn: {n}");
    }

    /// A twin-thruster hull reads its rudder channel only where a rudder
    /// is fitted.
    #[test]
    fn a_twin_hull_steers_its_rudder_only_where_one_is_fitted() {
        let mut p = usv_twin();
        let controls = [0.0, 0.0, 1.0];
        let mut bare = Boat::new(p.clone(), 0.01);
        bare.follow_commands(&controls);
        assert_eq!(bare.rudder_rad(), 0.0);
        p.rudder_area_m2 = 0.01;
        let mut fitted = Boat::new(p, 0.01);
        fitted.follow_commands(&controls);
        let a = 1.0 - (-0.2f64).exp();
        assert!((fitted.rudder_rad() - 35f64.to_radians() * a).abs() < 1e-12);
    }

    #[test]
    fn cross_flow_drag_matches_its_integrals_both_ways() {
        let (rho, hull) = (1025.0, [2.0, 0.2, 1.0]);
        let k = 0.5 * rho * 0.2 * 1.0;
        // Sideways alone: 21 points of weight L/20, −k·1.05·L·|v|·v (the
        // integral's −k·L·|v|·v and a half point more at each end, as
        // Fossen's sum has it); no moment (the points are symmetric).
        for v in [0.7, -0.7] {
            let (y, n) = cross_flow(hull, rho, v, 0.0);
            assert!((y + k * 2.1 * v * v.abs()).abs() < 1e-9, "{y}");
            assert!(n.abs() < 1e-9);
        }
        // Turning alone: no force, moment −k·|r|·r·Σ|x|³·dx with x = ±0.1j
        // (j = 1..10), dx = 0.1: 2·0.1⁴·3025 = 0.605 (the integral is 0.5).
        for r in [0.5, -0.5] {
            let (y, n) = cross_flow(hull, rho, 0.0, r);
            let sum = -k * r * r.abs() * 0.605;
            assert!(y.abs() < 1e-9);
            assert!((n / sum - 1.0).abs() < 1e-12, "{n} against {sum}");
        }
        // Together: the bow strips (x > 0) meet v + x·r > v, the stern
        // strips less, so drifting to starboard while turning to starboard
        // gives a moment against the turn larger than the turn's alone.
        let (_, n_both) = cross_flow(hull, rho, 0.3, 0.3);
        let (_, n_turn) = cross_flow(hull, rho, 0.0, 0.3);
        assert!(n_both < n_turn && n_turn < 0.0, "{n_both} {n_turn}");
        for hull in [[0.0, 0.2, 1.0], [2.0, 0.0, 1.0], [2.0, 0.2, 0.0]] {
            assert_eq!(cross_flow(hull, rho, 1.0, 1.0), (0.0, 0.0));
        }
    }

    /// The hull's damping, term by term: surge, sway at the lateral
    /// resistance point, yaw, the cross-flow strips' force and moment, all
    /// scaled by a zone's drag scale and the wetness; roll and pitch by the
    /// wetness alone.
    #[test]
    fn hull_damping_adds_each_term_with_its_scale() {
        let mut p = usv_twin();
        p.cross_flow = [2.0, 0.2, 0.8];
        p.roll_pitch_damping_n_m_s = [30.0, 50.0];
        p.lateral_resistance_x_m = -0.4;
        let (rho, scale, wet) = (1025.0, 1.5, 0.5);
        let v_r = Vector3::new(1.0, 0.4, 0.0);
        let w = Vector3::new(0.2, -0.1, 0.3);
        let (mut f, mut tau) = (Vector3::zeros(), Vector3::zeros());
        hull_damping(&p, rho, (&v_r, &w), (scale, wet), (&mut f, &mut tau));
        let s = scale * wet;
        let quad = |c: [f64; 2], v: f64| c[0] * v + c[1] * v.abs() * v;
        let (y, n) = cross_flow(p.cross_flow, rho, v_r.y, w.z);
        assert!(y.abs() > 1.0 && n.abs() > 0.1, "{y} {n}");
        let sway = -s * quad(p.sway_damping, 0.4 - 0.4 * 0.3);
        assert!((f.x + s * quad(p.surge_damping, 1.0)).abs() < 1e-9);
        assert!((f.y - (sway + s * y)).abs() < 1e-9);
        let yaw = -0.4 * sway - s * quad(p.yaw_damping, 0.3) + s * n;
        assert!((tau.z - yaw).abs() < 1e-9, "{} against {yaw}", tau.z);
        assert_eq!((tau.x, tau.y), (-0.5 * 30.0 * 0.2, -0.5 * 50.0 * -0.1));
    }
}
