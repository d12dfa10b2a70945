//! Ground rover on four wheels: drive motors, brakes, steering and tyres → wrench.
//!
//! The chassis is a rigid body held level on flat ground (the plane z = 0
//! through home, or at the height of a heightmap's surface under the CG,
//! whose slope it does not feel); the ground carries its weight and the
//! tyres push it about in the plane. Wheels are numbered front left, front right, rear
//! left, rear right.
//!
//! - **Normal loads** from the static weight distribution (the CG
//!   `cg_to_front_axle_m` behind the front axle) plus the quasi-static load
//!   transfer of the body's acceleration: m·a_x·h/L from front to rear, and
//!   m·a_y·h/t from the inside to the outside of a turn, shared by the axles
//!   as their static loads are (no roll-stiffness distribution). A wheel
//!   lifts rather than pull (its load is never below 0).
//! - **Tyres** are brush-like springs with a relaxation length σ (Pacejka,
//!   *Tyre and Vehicle Dynamics*, 3rd ed., §7.2, the first-order transient
//!   model): the contact patch deflects under the slip velocity, longitudinal
//!   u and lateral v, as du/dt + |V_x|·u/σ = −V_sx and dv/dt + |V_x|·v/σ =
//!   −V_sy, and pushes with F_x = C_κ·u/σ and F_y = C_α·v/σ. At speed this is
//!   the steady linear tyre, F_x = C_κ·κ and F_y = −C_α·tan α; at rest it is a
//!   spring, so a parked rover holds where a slip-ratio model would creep.
//!   Stiffnesses are per unit load (C_κ = `slip_stiffness`·F_z, C_α =
//!   `cornering_stiffness_per_rad`·F_z, front and rear), as in CommonRoad's
//!   single-track model. Below 1 m/s a damping of 0.5 of critical on a
//!   quarter of the mass keeps the springs from ringing (Pacejka's
//!   low-speed correction).
//! - **Friction limit**: the friction circle. When |F| would exceed μ·F_z the
//!   force and the patch's deflection are scaled back onto it: the tyre
//!   slides. μ is the airframe's `tyre_friction`, or each wheel's zone's.
//! - **Wheels** spin under the drive torque, the tyre's reaction −r·F_x, and
//!   Coulomb torques that only stop a wheel, never turn it: the brake and the
//!   rolling resistance C_rr·F_z·r. Wheel and tyre are stepped in enough
//!   sub-steps of the physics tick to keep the stiffest wheel (wheel inertia
//!   against the tyre's spring) stable.
//! - **Drive motors** are DC motors at the wheel: torque T_stall·(u − ω/ω₀),
//!   within ±T_stall, with u the command after a first-order lag and ω₀ =
//!   `top_speed_m_s`/r the no-load speed. With u = 0 a motor brakes on its
//!   back-EMF, as a brushed ESC's drag brake does.
//! - **Brakes** on every wheel (`brake_channel`, 0..1 of `brake_torque_nm`) and
//!   a handbrake on the rear wheels (`handbrake_channel`, on above 0.5), as
//!   AirSim's car controls give them.
//! - **Two drive kinds**:
//!   - `skid_steer`: a motor per side (`left_channel`, `right_channel`,
//!     −1..1), each side's wheels turning together (belt or chain); turns by
//!     the speed difference, pivoting on the spot;
//!   - `ackermann`: the front wheels steered (`steering_channel`, −1..1,
//!     positive turns right) through Ackermann geometry, the angle rate
//!     limited; one motor (`throttle_channel`, −1..1) through open
//!     differentials to the rear wheels or all four
//!     (`four_wheel_drive`), an equal torque to each.
//!
//! Not modelled: suspension, roll and pitch of the body, aerodynamic drag
//! (small beside the motors' limits at these speeds), camber, and slopes.

use nalgebra::{Matrix3, UnitQuaternion, Vector2, Vector3};
use serde::{Deserialize, Serialize};

use super::params::{check_channels, check_range, check_range3, params_struct, ParamError};
use super::rigid_body::{BodyState, MassError, MassProperties, Wrench};

/// How a rover steers and is driven.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RoverDrive {
    /// Differential: left and right sides driven apart, no steering.
    SkidSteer,
    /// Steered front wheels, one motor through differentials.
    Ackermann,
}

params_struct! {
    /// Everything that defines a ground rover. Numbers live in the airframe files.
    pub struct RoverParams / RoverOverrides {
        /// Drive kind: `skid_steer` or `ackermann`.
        pub drive: RoverDrive,
        /// Mass, kg, wheels included. Range 0.1–10 000.
        pub mass_kg: f64,
        /// Principal moments of inertia about the CG (roll, pitch, yaw), kg·m².
        pub inertia_kg_m2: [f64; 3],
        /// Distance between the axles, m. Range 0.01–20.
        pub wheelbase_m: f64,
        /// Distance between the left and right wheels' contact patches, m.
        /// Range 0.01–10.
        pub track_m: f64,
        /// How far the CG is behind the front axle, m (0 to the wheelbase).
        pub cg_to_front_axle_m: f64,
        /// Height of the CG above the ground, m. Range 0–5.
        pub cg_height_m: f64,
        /// Wheel radius, m. Range 0.005–2.
        pub wheel_radius_m: f64,
        /// Spin inertia of one wheel with its share of the drivetrain, kg·m².
        pub wheel_inertia_kg_m2: f64,
        /// Tyre–ground friction coefficient μ where no zone sets one. Range 0–2.
        pub tyre_friction: f64,
        /// Cornering stiffness per unit load, front and rear tyres: the side
        /// force per newton of load per radian of slip angle, 1/rad.
        pub cornering_stiffness_per_rad: [f64; 2],
        /// Longitudinal slip stiffness per unit load: the force per newton of
        /// load per unit slip ratio.
        pub slip_stiffness: f64,
        /// Tyre relaxation length σ, m.
        pub relaxation_length_m: f64,
        /// Rolling-resistance coefficient C_rr. Range 0–0.5.
        pub rolling_resistance: f64,
        /// Torque of one motor at its wheels at full command from rest, N·m.
        pub motor_stall_torque_nm: f64,
        /// Speed of the wheels' rims at full command with no load, m/s.
        pub top_speed_m_s: f64,
        /// Time constant of a motor's response to its command, s.
        pub motor_tau_s: f64,
        /// Brake torque on each wheel at full brake, N·m.
        pub brake_torque_nm: f64,
        /// Ackermann: all four wheels driven (true) or the rear two (false).
        #[serde(default)]
        pub four_wheel_drive: bool,
        /// Ackermann: the largest steering angle (of the bicycle model's
        /// front wheel), deg. Range 0–89.
        pub max_steer_deg: f64,
        /// Ackermann: how fast the steering angle can change, deg/s.
        pub steer_rate_deg_s: f64,
        /// Skid-steer: channel of the left side's motor.
        pub left_channel: usize,
        /// Skid-steer: channel of the right side's motor.
        pub right_channel: usize,
        /// Ackermann: channel of the throttle.
        pub throttle_channel: usize,
        /// Ackermann: channel of the steering.
        pub steering_channel: usize,
        /// Channel of the brake, 0..1 of `brake_torque_nm` on every wheel
        /// (none: only [`Rover::set_brake`] brakes).
        #[serde(default)]
        pub brake_channel: Option<usize>,
        /// Channel of the handbrake: above 0.5, the full brake on the rear
        /// wheels.
        #[serde(default)]
        pub handbrake_channel: Option<usize>,
    }
}

impl RoverParams {
    /// Checks every value for range and consistency.
    ///
    /// # Errors
    /// [`ParamError`] naming the first bad field.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_range("mass_kg", self.mass_kg, 0.1, 10_000.0)?;
        check_range3("inertia_kg_m2", &self.inertia_kg_m2, 1e-5, 1e6)?;
        check_range("wheelbase_m", self.wheelbase_m, 0.01, 20.0)?;
        check_range("track_m", self.track_m, 0.01, 10.0)?;
        check_range(
            "cg_to_front_axle_m",
            self.cg_to_front_axle_m,
            0.0,
            self.wheelbase_m,
        )?;
        check_range("cg_height_m", self.cg_height_m, 0.0, 5.0)?;
        check_range("wheel_radius_m", self.wheel_radius_m, 0.005, 2.0)?;
        check_range("wheel_inertia_kg_m2", self.wheel_inertia_kg_m2, 1e-7, 1e3)?;
        check_range("tyre_friction", self.tyre_friction, 0.0, 2.0)?;
        for (i, c) in self.cornering_stiffness_per_rad.iter().enumerate() {
            check_range(&format!("cornering_stiffness_per_rad[{i}]"), *c, 0.1, 100.0)?;
        }
        check_range("slip_stiffness", self.slip_stiffness, 0.1, 100.0)?;
        check_range("relaxation_length_m", self.relaxation_length_m, 1e-3, 5.0)?;
        check_range("rolling_resistance", self.rolling_resistance, 0.0, 0.5)?;
        check_range(
            "motor_stall_torque_nm",
            self.motor_stall_torque_nm,
            0.0,
            1e5,
        )?;
        check_range("top_speed_m_s", self.top_speed_m_s, 0.01, 200.0)?;
        check_range("motor_tau_s", self.motor_tau_s, 1e-3, 10.0)?;
        check_range("brake_torque_nm", self.brake_torque_nm, 0.0, 1e5)?;
        check_range("max_steer_deg", self.max_steer_deg, 0.0, 89.0)?;
        check_range("steer_rate_deg_s", self.steer_rate_deg_s, 0.1, 1e5)?;
        let brakes = [
            ("brake_channel", self.brake_channel),
            ("handbrake_channel", self.handbrake_channel),
        ];
        check_channels(
            [
                ("left_channel", self.left_channel),
                ("right_channel", self.right_channel),
                ("throttle_channel", self.throttle_channel),
                ("steering_channel", self.steering_channel),
            ]
            .into_iter()
            .chain(brakes.into_iter().filter_map(|(n, c)| Some((n, c?)))),
        )
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

    /// Actuator channels the rover reads: one past the highest in use.
    pub fn channel_count(&self) -> usize {
        let used = match self.drive {
            RoverDrive::SkidSteer => [self.left_channel, self.right_channel],
            RoverDrive::Ackermann => [self.throttle_channel, self.steering_channel],
        };
        used.into_iter()
            .chain(self.brake_channel)
            .chain(self.handbrake_channel)
            .max()
            .map_or(0, |c| c + 1)
    }

    /// NED down coordinate of the CG standing on the ground (z = 0), m.
    pub fn standing_z_m(&self) -> f64 {
        -self.cg_height_m
    }

    /// Each wheel's contact point from the CG, FRD, m: front left, front
    /// right, rear left, rear right.
    pub fn wheel_positions_frd_m(&self) -> [Vector3<f64>; 4] {
        let (lf, lr) = (
            self.cg_to_front_axle_m,
            self.wheelbase_m - self.cg_to_front_axle_m,
        );
        let (y, h) = (0.5 * self.track_m, self.cg_height_m);
        [
            Vector3::new(lf, -y, h),
            Vector3::new(lf, y, h),
            Vector3::new(-lr, -y, h),
            Vector3::new(-lr, y, h),
        ]
    }

    /// The static load on each wheel under gravity `g` (m/s²), N.
    pub fn static_loads_n(&self, g: f64) -> [f64; 4] {
        let front =
            self.mass_kg * g * (self.wheelbase_m - self.cg_to_front_axle_m) / self.wheelbase_m;
        let rear = self.mass_kg * g - front;
        [0.5 * front, 0.5 * front, 0.5 * rear, 0.5 * rear]
    }

    /// The bicycle model's understeer gradient, rad per m/s² of lateral
    /// acceleration: (1/g)·(1/C_Sf − 1/C_Sr) for stiffnesses per unit load
    /// (positive: understeer).
    pub fn understeer_gradient_rad_per_m_s2(&self, g: f64) -> f64 {
        let [cf, cr] = self.cornering_stiffness_per_rad;
        (1.0 / cf - 1.0 / cr) / g
    }
}

/// Below this speed over the ground the tyres' springs are damped, m/s.
const LOW_SPEED_M_S: f64 = 1.0;
/// Damping ratio of a tyre's spring on a quarter of the mass at rest.
const LOW_SPEED_DAMPING_RATIO: f64 = 0.5;
/// A wheel–tyre sub-step advances its fastest oscillation by at most this, rad.
const SUBSTEP_PHASE_RAD: f64 = 0.2;
/// Most sub-steps in one physics tick.
const MAX_SUBSTEPS: usize = 64;

/// One wheel after a tick: what it carries, how it slips and pushes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WheelState {
    /// Normal load, N.
    pub load_n: f64,
    /// Friction coefficient under it this tick.
    pub mu: f64,
    /// Steering angle, rad (positive turns right).
    pub steer_rad: f64,
    /// Spin rate, rad/s (positive rolling forward).
    pub spin_rad_s: f64,
    /// Tyre force in the wheel's axes (forward, right), N, over the tick.
    pub force_n: Vector2<f64>,
    /// Slip angle, rad: the contact patch's velocity's angle from the
    /// wheel's heading (positive sliding right); 0 at rest.
    pub slip_angle_rad: f64,
    /// Longitudinal slip ratio, (ω·r − V_x) / max(|V_x|, |ω·r|); 0 at rest.
    pub slip_ratio: f64,
    /// Contact patch deflection (forward, right), m.
    deflection_m: Vector2<f64>,
    /// Tyre force of the latest sub-step (forward, right), N.
    patch_n: Vector2<f64>,
}

/// A rover's drivetrain and tyres.
#[derive(Debug, Clone)]
pub struct Rover {
    params: RoverParams,
    wheels: [WheelState; 4],
    /// Motor commands after their lag (left, right; or the one motor first).
    motor_cmd: [f64; 2],
    /// Bicycle steering angle, rad.
    steer_rad: f64,
    /// Brake (0..1) on every wheel, and the handbrake on the rear ones, as
    /// [`Rover::set_brake`] sets them.
    brake: (f64, bool),
    /// The same from the brake channels, this tick.
    brake_cmd: (f64, bool),
    /// What each motor delivers (a failure), 0..1.
    motor_scale: [f64; 2],
    alpha_motor: f64,
    substeps: usize,
    /// The body's acceleration of the latest tick (FRD x, y), m/s².
    accel_frd_m_s2: Vector2<f64>,
    /// Shaft power of the motors over the latest tick, W.
    shaft_power_w: f64,
}

/// Clamps a command into −1..1, NaN to 0.
fn sanitize(u: f64) -> f64 {
    if u.is_nan() {
        0.0
    } else {
        u.clamp(-1.0, 1.0)
    }
}

impl Rover {
    /// A rover at rest, for physics tick `dt_s`, under gravity `g_m_s2`.
    pub fn new(params: RoverParams, dt_s: f64, g_m_s2: f64) -> Self {
        let substeps = substeps_for(&params, dt_s, g_m_s2);
        let mut wheels = [WheelState::default(); 4];
        for (w, n) in wheels.iter_mut().zip(params.static_loads_n(g_m_s2)) {
            w.load_n = n;
            w.mu = params.tyre_friction;
        }
        Rover {
            alpha_motor: 1.0 - (-dt_s / params.motor_tau_s).exp(),
            params,
            wheels,
            motor_cmd: [0.0; 2],
            steer_rad: 0.0,
            brake: (0.0, false),
            brake_cmd: (0.0, false),
            motor_scale: [1.0; 2],
            substeps,
            accel_frd_m_s2: Vector2::zeros(),
            shaft_power_w: 0.0,
        }
    }

    /// The rover parameters.
    pub fn params(&self) -> &RoverParams {
        &self.params
    }

    /// The wheels after the latest tick: front left, front right, rear left,
    /// rear right.
    pub fn wheels(&self) -> &[WheelState; 4] {
        &self.wheels
    }

    /// The bicycle model's steering angle, rad (positive turns right).
    pub fn steer_rad(&self) -> f64 {
        self.steer_rad
    }

    /// Applies the brake, 0..1 of `brake_torque_nm` on every wheel, and the
    /// handbrake (the full torque on the rear wheels), until changed.
    pub fn set_brake(&mut self, brake: f64, handbrake: bool) {
        self.brake = (
            if brake.is_finite() {
                brake.clamp(0.0, 1.0)
            } else {
                0.0
            },
            handbrake,
        );
    }

    /// Scales what each motor delivers (left, right; or the one motor
    /// first), 0..1: a motor failure. 1 is nominal.
    pub fn set_motor_scale(&mut self, scale: [f64; 2]) {
        self.motor_scale = scale.map(|k| {
            if k.is_finite() {
                k.clamp(0.0, 1.0)
            } else {
                1.0
            }
        });
    }

    /// Mechanical power the motors deliver at their wheels over the latest
    /// tick, W (|torque·speed| summed).
    pub fn shaft_power_w(&self) -> f64 {
        self.shaft_power_w
    }

    /// Advances motors, steering, wheels and tyres by one tick of `dt_s`
    /// under `controls`, with friction `mu` under each wheel, and returns the
    /// wrench on the chassis: the tyres' forces and the ground's support.
    pub fn wrench(
        &mut self,
        controls: &[f64],
        mu: [f64; 4],
        gravity_ned_m_s2: &Vector3<f64>,
        state: &BodyState,
        dt_s: f64,
    ) -> Wrench {
        self.follow_commands(controls, dt_s);
        let g = gravity_ned_m_s2.z;
        self.set_loads(g, mu);
        let v_b = state.att_ned_frd.inverse() * state.vel_ned_m_s;
        let r = state.rate_frd_rad_s.z;
        let pos = self.params.wheel_positions_frd_m();
        let steer = self.wheel_steer_rad();
        let h = dt_s / self.substeps as f64;
        let mut sum = [Vector2::zeros(); 4];
        let mut energy_j = 0.0;
        for _ in 0..self.substeps {
            energy_j += self.spin_wheels(h) * h;
            for (i, w) in self.wheels.iter_mut().enumerate() {
                let vc = Vector2::new(v_b.x - r * pos[i].y, v_b.y + r * pos[i].x);
                let (c, s) = (steer[i].cos(), steer[i].sin());
                let v = Vector2::new(c * vc.x + s * vc.y, -s * vc.x + c * vc.y);
                w.steer_rad = steer[i];
                let axle = usize::from(i >= 2);
                let c_alpha = self.params.cornering_stiffness_per_rad[axle];
                tyre_step(w, &self.params, c_alpha, v, h);
                sum[i] += w.patch_n;
            }
        }
        self.shaft_power_w = energy_j / dt_s;
        let (mut f, mut tz) = (Vector2::zeros(), 0.0);
        for (i, w) in self.wheels.iter_mut().enumerate() {
            w.force_n = sum[i] / self.substeps as f64;
            let (c, s) = (steer[i].cos(), steer[i].sin());
            let fb = Vector2::new(
                c * w.force_n.x - s * w.force_n.y,
                s * w.force_n.x + c * w.force_n.y,
            );
            f += fb;
            tz += pos[i].x * fb.y - pos[i].y * fb.x;
        }
        self.accel_frd_m_s2 = f / self.params.mass_kg;
        Wrench {
            force_frd_n: Vector3::new(f.x, f.y, 0.0),
            // The ground carries the weight.
            force_ned_n: -self.params.mass_kg * gravity_ned_m_s2,
            torque_frd_nm: Vector3::new(0.0, 0.0, tz),
        }
    }

    /// Puts the chassis back on the ground after integration: level, at its
    /// standing height over the ground at `ground_down_m` (NED m), moving
    /// only in the plane and turning only in yaw.
    pub fn project(&self, state: &mut BodyState, ground_down_m: f64) {
        let (_, _, yaw) = state.att_ned_frd.euler_angles();
        state.att_ned_frd = UnitQuaternion::from_euler_angles(0.0, 0.0, yaw);
        state.pos_ned_m.z = ground_down_m + self.params.standing_z_m();
        state.vel_ned_m_s.z = 0.0;
        state.rate_frd_rad_s.x = 0.0;
        state.rate_frd_rad_s.y = 0.0;
    }

    /// Moves motor commands and steering one tick towards `controls`.
    fn follow_commands(&mut self, controls: &[f64], dt_s: f64) {
        let p = &self.params;
        let ch = |i: usize| sanitize(controls.get(i).copied().unwrap_or(0.0));
        let targets = match p.drive {
            RoverDrive::SkidSteer => [ch(p.left_channel), ch(p.right_channel)],
            RoverDrive::Ackermann => {
                let target = ch(p.steering_channel) * p.max_steer_deg.to_radians();
                let most = p.steer_rate_deg_s.to_radians() * dt_s;
                self.steer_rad += (target - self.steer_rad).clamp(-most, most);
                [ch(p.throttle_channel), 0.0]
            }
        };
        for (c, t) in self.motor_cmd.iter_mut().zip(targets) {
            *c += (t - *c) * self.alpha_motor;
        }
        let p = &self.params;
        self.brake_cmd = (
            p.brake_channel.map_or(0.0, |c| ch(c).max(0.0)),
            p.handbrake_channel.is_some_and(|c| ch(c) > 0.5),
        );
    }

    /// Each wheel's steering angle, rad: the front wheels by Ackermann's
    /// geometry about the rear axle's line, tan δ_i = L·tan δ / (L − y_i·tan δ)
    /// (a skid-steer rover's δ stays 0).
    fn wheel_steer_rad(&self) -> [f64; 4] {
        let (l, t) = (self.params.wheelbase_m, self.steer_rad.tan());
        let y = 0.5 * self.params.track_m;
        let front = |yi: f64| (l * t / (l - yi * t)).atan();
        [front(-y), front(y), 0.0, 0.0]
    }

    /// Each wheel's load from the static weight distribution and the latest
    /// acceleration, and the friction under it.
    fn set_loads(&mut self, g: f64, mu: [f64; 4]) {
        let p = &self.params;
        let stat = p.static_loads_n(g);
        let m_h = p.mass_kg * p.cg_height_m;
        let axle = m_h * self.accel_frd_m_s2.x / p.wheelbase_m;
        let side = m_h * self.accel_frd_m_s2.y / p.track_m;
        let total = p.mass_kg * g;
        for (i, w) in self.wheels.iter_mut().enumerate() {
            let (front, right) = (i < 2, i % 2 == 1);
            let share = 2.0 * stat[i] / total.max(f64::MIN_POSITIVE);
            let lon = if front { -0.5 * axle } else { 0.5 * axle };
            let lat = if right {
                -0.5 * side * share
            } else {
                0.5 * side * share
            };
            w.load_n = (stat[i] + lon + lat).max(0.0);
            w.mu = if mu[i].is_finite() {
                mu[i].max(0.0)
            } else {
                p.tyre_friction
            };
        }
    }

    /// Advances each wheel's spin by `h` under its motor, tyre and Coulomb
    /// torques; returns the motors' shaft power, W.
    fn spin_wheels(&mut self, h: f64) -> f64 {
        let p = &self.params;
        let r = p.wheel_radius_m;
        let omega0 = p.top_speed_m_s / r;
        let dc = |cmd: f64, scale: f64, omega: f64| {
            scale * p.motor_stall_torque_nm * (cmd - omega / omega0).clamp(-1.0, 1.0)
        };
        // The harder of the brake set and the brake commanded.
        let brake = self.brake.0.max(self.brake_cmd.0);
        let handbrake = self.brake.1 || self.brake_cmd.1;
        let coulomb = |i: usize, w: &WheelState| {
            let hand = if handbrake && i >= 2 { 1.0 } else { brake };
            hand * p.brake_torque_nm + p.rolling_resistance * w.load_n * r
        };
        let mut power = 0.0;
        match p.drive {
            RoverDrive::SkidSteer => {
                for (side, wheels) in [[0, 2], [1, 3]].iter().enumerate() {
                    let omega = self.wheels[wheels[0]].spin_rad_s;
                    let t = dc(self.motor_cmd[side], self.motor_scale[side], omega);
                    power += (t * omega).abs();
                    let tyre: f64 = wheels.iter().map(|&i| r * self.wheels[i].patch_n.x).sum();
                    let stop: f64 = wheels.iter().map(|&i| coulomb(i, &self.wheels[i])).sum();
                    let inertia = 2.0 * p.wheel_inertia_kg_m2;
                    let next = coulomb_step(omega, (t - tyre) / inertia, stop / inertia, h);
                    for &i in wheels {
                        self.wheels[i].spin_rad_s = next;
                    }
                }
            }
            RoverDrive::Ackermann => {
                let driven: &[usize] = if p.four_wheel_drive {
                    &[0, 1, 2, 3]
                } else {
                    &[2, 3]
                };
                let mean = driven
                    .iter()
                    .map(|&i| self.wheels[i].spin_rad_s)
                    .sum::<f64>()
                    / driven.len() as f64;
                let t = dc(self.motor_cmd[0], self.motor_scale[0], mean);
                power += (t * mean).abs();
                let each = t / driven.len() as f64;
                for i in 0..4 {
                    let w = &self.wheels[i];
                    let drive = if driven.contains(&i) { each } else { 0.0 };
                    let acc = (drive - r * w.patch_n.x) / p.wheel_inertia_kg_m2;
                    let stop = coulomb(i, w) / p.wheel_inertia_kg_m2;
                    self.wheels[i].spin_rad_s = coulomb_step(w.spin_rad_s, acc, stop, h);
                }
            }
        }
        power
    }
}

/// One step of `h` of a spin rate `omega` under an angular acceleration
/// `acc` and a Coulomb deceleration up to `stop` (rad/s²) that only opposes
/// the motion: a wheel the Coulomb torque can hold stops, and stays.
fn coulomb_step(omega: f64, acc: f64, stop: f64, h: f64) -> f64 {
    let free = omega + acc * h;
    if free.abs() <= stop * h {
        0.0
    } else {
        free - free.signum() * stop * h
    }
}

/// Advances one tyre's contact patch by `h` at the contact's velocity `v`
/// (wheel axes, m/s), sets its force within the friction circle, its slip
/// angle and ratio.
fn tyre_step(w: &mut WheelState, p: &RoverParams, c_alpha: f64, v: Vector2<f64>, h: f64) {
    let sigma = p.relaxation_length_m;
    let rim = w.spin_rad_s * p.wheel_radius_m;
    let slip = Vector2::new(v.x - rim, v.y);
    // du/dt = −V_s − (|V_x|/σ)·u, exactly over the step for V constant.
    let a = v.x.abs() / sigma;
    let decay = (-a * h).exp();
    // (1 − e^(−a·h)) / a, which is h at a = 0.
    let gain = if a > 0.0 { -(-a * h).exp_m1() / a } else { h };
    w.deflection_m = w.deflection_m * decay - slip * gain;
    let k = Vector2::new(p.slip_stiffness, c_alpha) * (w.load_n / sigma);
    // Slow, the spring is damped (a quarter of the mass on each), the
    // damping fading out at LOW_SPEED_M_S.
    let speed = v.norm().max(rim.abs());
    let quarter = 0.25 * p.mass_kg;
    let damping =
        k.map(|k| 2.0 * LOW_SPEED_DAMPING_RATIO * (k * quarter).sqrt()) * low_speed_fade(speed);
    let mut f = k.component_mul(&w.deflection_m) - damping.component_mul(&slip);
    let limit = w.mu * w.load_n;
    // Within the friction circle: scaled back onto it from outside (a zero
    // force, 0/0, stays as it is).
    let s = (limit / f.norm()).min(1.0);
    f *= s;
    w.deflection_m *= s;
    w.patch_n = f;
    w.slip_angle_rad = if v.norm() > 1e-6 {
        v.y.atan2(v.x.abs())
    } else {
        0.0
    };
    let reference = v.x.abs().max(rim.abs());
    w.slip_ratio = if reference > 1e-6 {
        (rim - v.x) / reference
    } else {
        0.0
    };
}

/// The share of the low-speed damping at `speed` (m/s): 1 at rest, falling
/// linearly to 0 at LOW_SPEED_M_S and beyond.
fn low_speed_fade(speed: f64) -> f64 {
    (1.0 - speed / LOW_SPEED_M_S).max(0.0)
}

/// Sub-steps per physics tick of `dt_s` for the stiffest wheel: a wheel's
/// spin against its tyre's longitudinal spring oscillates at
/// r·√(k/I) with k = C_κ·F_z/σ, taken at twice the heaviest static load.
fn substeps_for(p: &RoverParams, dt_s: f64, g: f64) -> usize {
    let load = 2.0 * p.static_loads_n(g).iter().fold(0.0, |a: f64, b| a.max(*b));
    let k = p.slip_stiffness * load / p.relaxation_length_m;
    let inertia = match p.drive {
        RoverDrive::SkidSteer => 2.0 * p.wheel_inertia_kg_m2,
        RoverDrive::Ackermann => p.wheel_inertia_kg_m2,
    };
    let omega_n = p.wheel_radius_m * (k / inertia).sqrt();
    let n = (omega_n * dt_s / SUBSTEP_PHASE_RAD).ceil();
    if n.is_finite() {
        (n as usize).clamp(1, MAX_SUBSTEPS)
    } else {
        MAX_SUBSTEPS
    }
}

#[cfg(test)]
mod tests;
