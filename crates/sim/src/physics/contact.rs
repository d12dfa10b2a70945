//! Ground contact at the physics rate.
//!
//! The ground is the plane z = 0 (NED) through home. The vehicle rests on landing
//! gear whose contact point is `gear_height_m` below the centre of mass, on a
//! footprint of radius `footprint_radius_m`. Contact is a unilateral constraint
//! solved at the velocity level every tick (no spring, so no sinking and no
//! jitter):
//!
//! - **Normal force.** When the gear would reach the ground within this tick, the
//!   ground pushes up with N = m·(a_free,z + (v_z − gap/dt)/dt), clamped at ≥ 0,
//!   which brings the gear exactly to the surface; a vehicle at rest gets N = m·g
//!   exactly, so its accelerometer reads −g along body z. A touchdown at v_z
//!   stops within one tick: the IMU feels the impulse m·v_z as a spike of v_z/dt.
//! - **Friction** (Coulomb, one coefficient μ for sticking and sliding): the
//!   horizontal force that would stop sliding is applied if it is within μN,
//!   otherwise μN against the sliding direction.
//! - **Attitude.** The gear resists roll and pitch torques up to N × footprint
//!   radius (beyond that the vehicle tips), and yaw torques up to μ·N × footprint
//!   radius. While held, the body is kept level (yaw free) and at rest in those
//!   axes.
//!
//! The force and torque go into the wrench, so the specific force the IMU sees
//! includes them: this is where "at rest reads −g" and "touchdown is felt" come
//! from. After the integrator, [`GroundContact::project`] removes the round-off of
//! a held contact (position exactly on the surface, held velocities exactly zero).

use nalgebra::{UnitQuaternion, Vector3};

use super::rigid_body::{BodyState, MassProperties, Wrench};

/// Ground-contact geometry and friction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroundContact {
    /// Centre of mass height above the ground when resting level, m.
    pub gear_height_m: f64,
    /// Radius of the landing-gear footprint, m (tipping and yaw-friction lever).
    pub footprint_radius_m: f64,
    /// Coulomb friction coefficient μ.
    pub friction: f64,
}

/// What the contact did this tick.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ContactState {
    /// Normal force, N (0 when airborne).
    pub normal_force_n: f64,
    /// Horizontal velocity held at zero (static friction).
    pub stick_horizontal: bool,
    /// Roll and pitch held level by the gear.
    pub hold_tilt: bool,
    /// Yaw held by friction.
    pub hold_yaw: bool,
}

impl ContactState {
    /// Whether the vehicle is supported by the ground this tick.
    pub fn on_ground(&self) -> bool {
        self.normal_force_n > 0.0
    }
}

impl GroundContact {
    /// Adds the contact force and torque for the coming tick to `wrench`.
    ///
    /// `friction_override` replaces μ (zones); gravity is NED m/s².
    pub fn apply(
        &self,
        state: &BodyState,
        mass: &MassProperties,
        gravity_ned_m_s2: &Vector3<f64>,
        friction_override: Option<f64>,
        wrench: &mut Wrench,
        dt: f64,
    ) -> ContactState {
        let m = mass.mass_kg();
        let gap = -(state.pos_ned_m.z + self.gear_height_m);
        let force_ned = state.att_ned_frd * wrench.force_frd_n + wrench.force_ned_n;
        let a_free = force_ned / m + gravity_ned_m_s2;
        let vz = state.vel_ned_m_s.z;
        let reach = vz * dt + 0.5 * a_free.z * dt * dt;
        if gap > reach {
            return ContactState::default();
        }
        let n = (m * (a_free.z + (vz - gap.max(0.0) / dt) / dt)).max(0.0);
        if n <= 0.0 {
            return ContactState::default();
        }
        let mut out = ContactState {
            normal_force_n: n,
            ..Default::default()
        };
        let mu = friction_override.unwrap_or(self.friction).max(0.0);
        // Horizontal friction.
        let v_h = state.vel_ned_m_s.xy();
        let f_req = -(v_h / dt + a_free.xy()) * m;
        let f_h = if f_req.norm() <= mu * n {
            out.stick_horizontal = true;
            f_req
        } else if v_h.norm() > 1e-9 {
            -v_h.normalize() * mu * n
        } else {
            f_req.normalize() * mu * n
        };
        wrench.force_ned_n += Vector3::new(f_h.x, f_h.y, -n);
        // Torques (body axes) needed to stop roll/pitch and yaw motion this tick.
        let tilt = tilt_rad(&state.att_ned_frd);
        if tilt < 30f64.to_radians() {
            let inertia = mass.total_inertia_frd_kg_m2();
            let w = &state.rate_frd_rad_s;
            let needed = -(inertia * w) / dt - wrench.torque_frd_nm;
            let tip_limit = n * self.footprint_radius_m;
            let rp = nalgebra::Vector2::new(needed.x, needed.y);
            let rp_applied = if rp.norm() <= tip_limit {
                out.hold_tilt = true;
                rp
            } else {
                rp.normalize() * tip_limit
            };
            let yaw_limit = mu * n * self.footprint_radius_m;
            let yaw_applied = if needed.z.abs() <= yaw_limit {
                out.hold_yaw = true;
                needed.z
            } else {
                -w.z.signum() * yaw_limit
            };
            wrench.torque_frd_nm += Vector3::new(rp_applied.x, rp_applied.y, yaw_applied);
        }
        out
    }

    /// Removes integration round-off from held contacts after the step.
    pub fn project(&self, contact: &ContactState, state: &mut BodyState) {
        let surface_z = -self.gear_height_m;
        if contact.on_ground() {
            state.pos_ned_m.z = surface_z;
            state.vel_ned_m_s.z = 0.0;
        } else if state.pos_ned_m.z > surface_z {
            state.pos_ned_m.z = surface_z;
            state.vel_ned_m_s.z = state.vel_ned_m_s.z.min(0.0);
        }
        if contact.stick_horizontal {
            state.vel_ned_m_s.x = 0.0;
            state.vel_ned_m_s.y = 0.0;
        }
        if contact.hold_tilt {
            let (_, _, yaw) = state.att_ned_frd.euler_angles();
            state.att_ned_frd = UnitQuaternion::from_euler_angles(0.0, 0.0, yaw);
            state.rate_frd_rad_s.x = 0.0;
            state.rate_frd_rad_s.y = 0.0;
        }
        if contact.hold_yaw {
            state.rate_frd_rad_s.z = 0.0;
        }
    }
}

/// Angle between the body z axis and the downward vertical, rad.
pub fn tilt_rad(att_ned_frd: &UnitQuaternion<f64>) -> f64 {
    let z_b = att_ned_frd * Vector3::z();
    z_b.z.clamp(-1.0, 1.0).acos()
}
