//! Ground contact at the physics rate.
//!
//! The ground is a horizontal plane at the height of the ground under the
//! vehicle's centre of mass ([`GroundUnder`]): home's plane z = 0 (NED), or a
//! heightmap's surface there, whose slope is not felt. The vehicle rests on landing
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

/// The margin of [`GroundContact::out_of_reach`] against rounding, m.
const ROUNDING_M: f64 = 1e-6;

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

/// The ground under the vehicle this tick.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GroundUnder {
    /// Its height as NED down, m (0: home's plane).
    pub down_m: f64,
    /// The friction coefficient a zone puts there, replacing the airframe's μ.
    pub friction: Option<f64>,
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
    /// `ground` is the ground under the vehicle; gravity is NED m/s².
    #[inline]
    pub fn apply(
        &self,
        state: &BodyState,
        mass: &MassProperties,
        gravity_ned_m_s2: &Vector3<f64>,
        ground: GroundUnder,
        wrench: &mut Wrench,
        dt: f64,
    ) -> ContactState {
        let gap = self.gap_m(state, ground);
        if self.out_of_reach(gap, state, mass.mass_kg(), gravity_ned_m_s2, wrench, dt) {
            return ContactState::default();
        }
        self.apply_near(state, mass, gravity_ned_m_s2, ground, wrench, dt)
    }

    /// [`GroundContact::apply`] within reach of the ground.
    fn apply_near(
        &self,
        state: &BodyState,
        mass: &MassProperties,
        gravity_ned_m_s2: &Vector3<f64>,
        ground: GroundUnder,
        wrench: &mut Wrench,
        dt: f64,
    ) -> ContactState {
        let m = mass.mass_kg();
        let gap = self.gap_m(state, ground);
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
        let mu = ground.friction.unwrap_or(self.friction).max(0.0);
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
        if gear_holds_at(tilt) {
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

    /// How far the gear is above the ground, m.
    #[inline]
    fn gap_m(&self, state: &BodyState, ground: GroundUnder) -> f64 {
        ground.down_m - (state.pos_ned_m.z + self.gear_height_m)
    }

    /// Whether the gear, `gap` m above the ground, cannot reach it this
    /// tick, by a bound taken without turning the body force into NED: its
    /// vertical part is at most its length, and the length at most the sum
    /// of its components' magnitudes. Past the bound (with a micrometre
    /// against rounding) the exact reach of [`GroundContact::apply_near`]
    /// is short of the ground too, so an airborne vehicle skips its turn
    /// and divisions. The bound is multiplied through by the mass `m` (kg),
    /// which keeps a division off the tick.
    #[inline]
    fn out_of_reach(
        &self,
        gap: f64,
        state: &BodyState,
        m: f64,
        gravity_ned_m_s2: &Vector3<f64>,
        wrench: &Wrench,
        dt: f64,
    ) -> bool {
        let f_max = wrench.force_frd_n.abs().sum() + wrench.force_ned_n.z + m * gravity_ned_m_s2.z;
        let reach_m = (state.vel_ned_m_s.z * dt + ROUNDING_M) * m + 0.5 * f_max.max(0.0) * dt * dt;
        gap * m > reach_m
    }

    /// Removes integration round-off from held contacts after the step, on
    /// the ground at `ground_down_m` (NED m).
    pub fn project(&self, contact: &ContactState, state: &mut BodyState, ground_down_m: f64) {
        let surface_z = ground_down_m - self.gear_height_m;
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

/// Whether the landing gear can still resist roll, pitch and yaw at a tilt
/// (rad): below 30°.
fn gear_holds_at(tilt_rad: f64) -> bool {
    tilt_rad < 30f64.to_radians()
}

/// Angle between the body z axis and the downward vertical, rad.
pub fn tilt_rad(att_ned_frd: &UnitQuaternion<f64>) -> f64 {
    let z_b = att_ned_frd * Vector3::z();
    z_b.z.clamp(-1.0, 1.0).acos()
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Matrix3;

    const G: f64 = 9.80665;
    const DT: f64 = 0.01;

    fn gear() -> GroundContact {
        GroundContact {
            gear_height_m: 0.2,
            footprint_radius_m: 0.25,
            friction: 0.5,
        }
    }

    fn mass() -> MassProperties {
        MassProperties::new(2.0, Matrix3::from_diagonal(&Vector3::new(0.02, 0.03, 0.04))).unwrap()
    }

    /// On the surface (CG at the gear height), level, with `vel` and `rate`.
    fn resting(vel: Vector3<f64>, rate: Vector3<f64>) -> BodyState {
        BodyState {
            pos_ned_m: Vector3::new(0.0, 0.0, -0.2),
            vel_ned_m_s: vel,
            rate_frd_rad_s: rate,
            ..Default::default()
        }
    }

    fn apply(state: &BodyState, wrench: &mut Wrench, mu: Option<f64>) -> ContactState {
        let ground = GroundUnder {
            down_m: 0.0,
            friction: mu,
        };
        gear().apply(
            state,
            &mass(),
            &Vector3::new(0.0, 0.0, G),
            ground,
            wrench,
            DT,
        )
    }

    #[test]
    fn at_rest_the_ground_carries_the_weight_and_holds_everything() {
        let mut w = Wrench::default();
        let c = apply(&resting(Vector3::zeros(), Vector3::zeros()), &mut w, None);
        assert_eq!(c.normal_force_n, 2.0 * G);
        assert!(c.on_ground() && c.stick_horizontal && c.hold_tilt && c.hold_yaw);
        assert_eq!(w.force_ned_n, Vector3::new(0.0, 0.0, -2.0 * G));
        assert_eq!(w.torque_frd_nm, Vector3::zeros());
        // Thrust of 1.5 weights up: nothing to carry, airborne.
        let mut w = Wrench {
            force_frd_n: Vector3::new(0.0, 0.0, -3.0 * G),
            ..Default::default()
        };
        let c = apply(&resting(Vector3::zeros(), Vector3::zeros()), &mut w, None);
        assert_eq!(c, ContactState::default());
        assert!(!c.on_ground());
        // Thrust of half the weight: the ground carries the other half.
        let mut w = Wrench {
            force_frd_n: Vector3::new(0.0, 0.0, -G),
            ..Default::default()
        };
        let c = apply(&resting(Vector3::zeros(), Vector3::zeros()), &mut w, None);
        assert!((c.normal_force_n - G).abs() < 1e-12);
    }

    #[test]
    fn a_touchdown_stops_within_the_tick() {
        // Descending at 2 m/s, on the surface: N = m·(g + v_z/dt).
        let mut w = Wrench::default();
        let c = apply(
            &resting(Vector3::new(0.0, 0.0, 2.0), Vector3::zeros()),
            &mut w,
            None,
        );
        assert!((c.normal_force_n - 2.0 * (G + 2.0 / DT)).abs() < 1e-9);
        // 5 mm above, at 1 m/s: the gear reaches the ground within the tick and
        // arrives on it, N = m·(g + (v_z − gap/dt)/dt).
        let mut s = resting(Vector3::new(0.0, 0.0, 1.0), Vector3::zeros());
        s.pos_ned_m.z = -0.205;
        let c = apply(&s, &mut Wrench::default(), None);
        let expect = 2.0 * (G + (1.0 - 0.005 / DT) / DT);
        assert!(
            (c.normal_force_n - expect).abs() < 1e-9,
            "{}",
            c.normal_force_n
        );
        // 5 cm above at 1 m/s it does not (1 cm plus half g·dt² in a tick).
        s.pos_ned_m.z = -0.25;
        assert_eq!(
            apply(&s, &mut Wrench::default(), None),
            ContactState::default()
        );
        // Just inside reach: gap below v·dt + ½·g·dt².
        s.pos_ned_m.z = -0.2 - (DT + 0.5 * G * DT * DT) + 1e-6;
        assert!(apply(&s, &mut Wrench::default(), None).on_ground());
        // 0.2 mm beyond it: airborne, though the normal force that would
        // bring the gear to the surface, m·(g + (v − gap/dt)/dt), is positive.
        let gap = DT + 0.5 * G * DT * DT + 2e-4;
        s.pos_ned_m.z = -0.2 - gap;
        assert!(G + (1.0 - gap / DT) / DT > 0.0);
        assert_eq!(
            apply(&s, &mut Wrench::default(), None),
            ContactState::default()
        );
        // Climbing away from the surface at 1 m/s: airborne.
        let c = apply(
            &resting(Vector3::new(0.0, 0.0, -1.0), Vector3::zeros()),
            &mut Wrench::default(),
            None,
        );
        assert_eq!(c, ContactState::default());
    }

    /// Exactly at the tick's reach — numbers exact in binary: dt 0.5 s, v 1 m/s,
    /// g 8 m/s², so v·dt + ½·g·dt² = 1.5 m — the gear lands, and the ground
    /// pushes m·(g + (v − gap/dt)/dt) = ½·m·g.
    #[test]
    fn a_gear_exactly_a_ticks_reach_away_lands_within_it() {
        let gear = GroundContact {
            gear_height_m: 0.25,
            ..gear()
        };
        let s = BodyState {
            pos_ned_m: Vector3::new(0.0, 0.0, -1.75),
            vel_ned_m_s: Vector3::new(0.0, 0.0, 1.0),
            ..Default::default()
        };
        let g = Vector3::new(0.0, 0.0, 8.0);
        let c = gear.apply(
            &s,
            &mass(),
            &g,
            GroundUnder::default(),
            &mut Wrench::default(),
            0.5,
        );
        assert_eq!(c.normal_force_n, 0.5 * 2.0 * 8.0);
    }

    /// The quick bound: 2 kg falling at 3 m/s under a body force of
    /// (3, −4, −10) N (|f|₁ = 17 N) and a world force of 2 N down, with
    /// g = 9.81 m/s² and a 10 ms tick, reaches at most
    /// 0.03 + 10⁻⁶ + ½ · (17 + 2 + 19.62) / 2 · 10⁻⁴ = 0.032 966 5 m.
    #[test]
    fn out_of_reach_is_the_bound_on_the_forces_length() {
        let s = BodyState {
            vel_ned_m_s: Vector3::new(1.0, 2.0, 3.0),
            ..Default::default()
        };
        let w = Wrench {
            force_frd_n: Vector3::new(3.0, -4.0, -10.0),
            force_ned_n: Vector3::new(5.0, 5.0, 2.0),
            ..Default::default()
        };
        let g = Vector3::new(0.0, 0.0, 9.81);
        let out = |gap: f64| gear().out_of_reach(gap, &s, 2.0, &g, &w, DT);
        let bound = 0.03 + 1e-6 + 0.5 * (17.0 + 2.0 + 19.62) / 2.0 * DT * DT;
        assert!(out(bound + 1e-9) && !out(bound - 1e-9), "{bound}");
        // Climbing at 3 m/s, the same forces reach 0.03 m less far.
        let up = BodyState {
            vel_ned_m_s: Vector3::new(0.0, 0.0, -3.0),
            ..s
        };
        let out_up = |gap: f64| gear().out_of_reach(gap, &up, 2.0, &g, &w, DT);
        assert!(out_up(bound - 0.06 + 1e-9) && !out_up(bound - 0.06 - 1e-9));
        // A thrust beyond the weight counts for nothing: the gear still
        // moves as far as its speed takes it.
        let lift = Wrench {
            force_frd_n: Vector3::new(0.0, 0.0, -100.0),
            ..Default::default()
        };
        let up_g = Vector3::new(0.0, 0.0, -60.0);
        let coast = 0.03 + 1e-6;
        let out_lift = |gap: f64| gear().out_of_reach(gap, &s, 2.0, &up_g, &lift, DT);
        assert!(out_lift(coast + 1e-9) && !out_lift(coast - 1e-9));
    }

    /// Wherever the quick bound says the ground is out of reach, the exact
    /// test finds no contact either: 20 000 draws of height, speed,
    /// attitude, forces, mass, tick, gravity (up as well as down) and the
    /// ground's height around a tick's reach, and a body force along one
    /// axis turned onto the vertical, where the bound is tightest.
    #[test]
    fn the_quick_bound_never_hides_a_contact() {
        // SplitMix64: uniform draws in [a, b).
        let mut state = 7u64;
        let mut rng = move |a: f64, b: f64| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            a + (b - a) * ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        };
        let (mut skipped, mut touched) = (0, 0);
        let mut check = |s: BodyState, w: Wrench, m: f64, g: Vector3<f64>, ground, dt| {
            let mass = MassProperties::new(m, Matrix3::from_diagonal(&Vector3::repeat(0.03)))
                .expect("mass");
            let (mut quick, mut exact) = (w, w);
            let a = gear().apply(&s, &mass, &g, ground, &mut quick, dt);
            let b = gear().apply_near(&s, &mass, &g, ground, &mut exact, dt);
            assert_eq!(
                (a, quick),
                (b, exact),
                "{s:?} {w:?} {m} {g} {ground:?} {dt}"
            );
            if b.on_ground() {
                touched += 1;
            } else if gear().out_of_reach(gear().gap_m(&s, ground), &s, m, &g, &w, dt) {
                skipped += 1;
            }
        };
        for _ in 0..20_000 {
            let mut u = |a: f64, b: f64| rng(a, b);
            let dt = [0.001, 0.004, 0.01][u(0.0, 3.0) as usize];
            let ground = GroundUnder {
                down_m: u(-30.0, 30.0),
                friction: None,
            };
            let s = BodyState {
                pos_ned_m: Vector3::new(0.0, 0.0, ground.down_m - 0.2 - u(0.0, 0.05)),
                vel_ned_m_s: Vector3::new(u(-1.0, 1.0), u(-1.0, 1.0), u(-4.0, 4.0)),
                att_ned_frd: nalgebra::UnitQuaternion::from_euler_angles(
                    u(-3.2, 3.2),
                    u(-1.6, 1.6),
                    u(-3.2, 3.2),
                ),
                rate_frd_rad_s: Vector3::new(u(-1.0, 1.0), u(-1.0, 1.0), u(-1.0, 1.0)),
            };
            let w = Wrench {
                force_frd_n: Vector3::new(u(-20.0, 20.0), u(-20.0, 20.0), u(-80.0, 20.0)),
                force_ned_n: Vector3::new(u(-5.0, 5.0), u(-5.0, 5.0), u(-10.0, 10.0)),
                torque_frd_nm: Vector3::new(u(-1.0, 1.0), u(-1.0, 1.0), u(-1.0, 1.0)),
            };
            let g = Vector3::new(0.0, 0.0, if u(0.0, 1.0) < 0.9 { G } else { -G });
            check(s, w, u(0.2, 20.0), g, ground, dt);
            // One axis's force turned straight down: |f|₁ is its length.
            let axis = u(0.0, 3.0) as usize;
            let mut f = Vector3::zeros();
            f[axis] = u(-80.0, 80.0);
            let down = nalgebra::UnitQuaternion::rotation_between(&f, &Vector3::z())
                .unwrap_or_else(nalgebra::UnitQuaternion::identity);
            let pushed = Wrench {
                force_frd_n: f,
                ..w
            };
            let turned = BodyState {
                att_ned_frd: down,
                ..s
            };
            check(turned, pushed, u(0.2, 20.0), g, ground, dt);
        }
        // Both sides of the bound are met.
        assert!(skipped > 2_000 && touched > 2_000, "{skipped} {touched}");
    }

    #[test]
    fn friction_sticks_within_mu_n_and_slides_against_the_motion_beyond() {
        // Creeping at 1 mm/s: stopping it needs m·v/dt = 0.2 N < μN = 9.8 N.
        let mut w = Wrench::default();
        let c = apply(
            &resting(Vector3::new(0.001, 0.0, 0.0), Vector3::zeros()),
            &mut w,
            None,
        );
        assert!(c.stick_horizontal);
        assert!((w.force_ned_n.x + 2.0 * 0.001 / DT).abs() < 1e-12);
        // Sliding at 3 m/s north-east: μN against the motion.
        let v = Vector3::new(3.0, -4.0, 0.0);
        let mut w = Wrench::default();
        let c = apply(&resting(v, Vector3::zeros()), &mut w, None);
        assert!(!c.stick_horizontal);
        let f = -v / 5.0 * 0.5 * 2.0 * G;
        assert!(
            (w.force_ned_n.xy() - f.xy()).norm() < 1e-12,
            "{}",
            w.force_ned_n
        );
        // A zone's μ replaces the gear's; a negative one counts as none.
        let mut w = Wrench::default();
        apply(&resting(v, Vector3::zeros()), &mut w, Some(0.1));
        assert!((w.force_ned_n.xy() - f.xy() / 5.0).norm() < 1e-12);
        let mut w = Wrench::default();
        apply(&resting(v, Vector3::zeros()), &mut w, Some(-1.0));
        assert_eq!(w.force_ned_n.xy(), nalgebra::Vector2::zeros());
        // At rest, pushed east harder than μN (15 N > 9.8 N): μN back west.
        let mut w = Wrench {
            force_ned_n: Vector3::new(0.0, 15.0, 0.0),
            ..Default::default()
        };
        let c = apply(&resting(Vector3::zeros(), Vector3::zeros()), &mut w, None);
        assert!(!c.stick_horizontal);
        assert!((w.force_ned_n.y - (15.0 - 0.5 * 2.0 * G)).abs() < 1e-12);
        // Creeping at exactly 1 nm/s, which counts as not sliding, and pushed
        // east past μN: friction opposes the push (west), not the creep.
        let mut w = Wrench {
            force_ned_n: Vector3::new(0.0, 15.0, 0.0),
            ..Default::default()
        };
        apply(
            &resting(Vector3::new(1e-9, 0.0, 0.0), Vector3::zeros()),
            &mut w,
            None,
        );
        assert!(w.force_ned_n.x.abs() < 1e-6, "{}", w.force_ned_n);
        assert!((w.force_ned_n.y - (15.0 - 0.5 * 2.0 * G)).abs() < 1e-6);
        // Pushed more gently (5 N): held.
        let mut w = Wrench {
            force_ned_n: Vector3::new(-5.0, 0.0, 0.0),
            ..Default::default()
        };
        assert!(apply(&resting(Vector3::zeros(), Vector3::zeros()), &mut w, None).stick_horizontal);
        assert!(w.force_ned_n.x.abs() < 1e-12);
    }

    #[test]
    fn the_gear_resists_tilt_up_to_tipping_and_yaw_up_to_friction() {
        // Limits: tipping N·r = 4.9 N·m, yaw μ·N·r = 2.45 N·m.
        let n = 2.0 * G;
        // A roll torque of 1 N·m and a pitch rate of 0.5 rad/s: both held.
        let mut w = Wrench {
            torque_frd_nm: Vector3::new(1.0, 0.0, 0.0),
            ..Default::default()
        };
        let c = apply(
            &resting(Vector3::zeros(), Vector3::new(0.0, 0.5, 0.0)),
            &mut w,
            None,
        );
        assert!(c.hold_tilt && c.hold_yaw);
        // The held torque cancels the roll torque and stops the pitch rate.
        assert!((w.torque_frd_nm - Vector3::new(0.0, -0.03 * 0.5 / DT, 0.0)).norm() < 1e-12);
        // A pitch torque of 10 N·m tips it: the gear gives its limit against it.
        let mut w = Wrench {
            torque_frd_nm: Vector3::new(0.0, -10.0, 0.0),
            ..Default::default()
        };
        let c = apply(&resting(Vector3::zeros(), Vector3::zeros()), &mut w, None);
        assert!(!c.hold_tilt);
        assert!((w.torque_frd_nm.y - (-10.0 + n * 0.25)).abs() < 1e-12);
        // Yawing at 2 rad/s (stopping needs 0.04·2/dt = 8 N·m): friction's limit
        // against the rotation, either way.
        for sign in [1.0, -1.0] {
            let mut w = Wrench::default();
            let c = apply(
                &resting(Vector3::zeros(), Vector3::new(0.0, 0.0, 2.0 * sign)),
                &mut w,
                None,
            );
            assert!(!c.hold_yaw && c.hold_tilt);
            assert!((w.torque_frd_nm.z + sign * 0.5 * n * 0.25).abs() < 1e-12);
        }
        // Tilted 40° (past 30°), the gear gives no torque at all.
        let mut s = resting(Vector3::zeros(), Vector3::new(0.0, 0.0, 0.1));
        s.att_ned_frd = UnitQuaternion::from_euler_angles(40f64.to_radians(), 0.0, 0.0);
        let mut w = Wrench::default();
        let c = apply(&s, &mut w, None);
        assert!(c.on_ground() && !c.hold_tilt && !c.hold_yaw);
        assert_eq!(w.torque_frd_nm, Vector3::zeros());
    }

    #[test]
    fn projection_puts_a_held_contact_back_exactly() {
        let held = ContactState {
            normal_force_n: 1.0,
            stick_horizontal: true,
            hold_tilt: true,
            hold_yaw: true,
        };
        let mut s = BodyState {
            pos_ned_m: Vector3::new(1.0, 2.0, -0.2 + 1e-9),
            vel_ned_m_s: Vector3::new(1e-12, -1e-12, 1e-10),
            att_ned_frd: UnitQuaternion::from_euler_angles(1e-9, -1e-9, 0.7),
            rate_frd_rad_s: Vector3::new(1e-9, 1e-9, 1e-9),
        };
        gear().project(&held, &mut s, 0.0);
        assert_eq!(s.pos_ned_m, Vector3::new(1.0, 2.0, -0.2));
        assert_eq!(s.vel_ned_m_s, Vector3::zeros());
        assert_eq!(s.rate_frd_rad_s, Vector3::zeros());
        let (r, p, y) = s.att_ned_frd.euler_angles();
        assert_eq!((r, p), (0.0, 0.0));
        assert!((y - 0.7).abs() < 1e-12);
        // Airborne but below the surface (a fall through in one tick): on it,
        // with the downward speed removed and an upward one kept.
        for (vz, kept) in [(3.0, 0.0), (-1.0, -1.0)] {
            let mut s = resting(Vector3::new(0.5, 0.0, vz), Vector3::new(0.0, 0.0, 0.3));
            s.pos_ned_m.z = -0.1;
            gear().project(&ContactState::default(), &mut s, 0.0);
            assert_eq!(s.pos_ned_m.z, -0.2);
            assert_eq!(s.vel_ned_m_s, Vector3::new(0.5, 0.0, kept));
            assert_eq!(s.rate_frd_rad_s.z, 0.3);
        }
        // Airborne exactly on it, moving down: untouched too (only a body
        // below the surface is put back on it).
        let mut s = resting(Vector3::new(0.0, 0.0, 3.0), Vector3::zeros());
        let before = s;
        gear().project(&ContactState::default(), &mut s, 0.0);
        assert_eq!(s, before);
        // Airborne above it: untouched.
        let mut s = resting(Vector3::new(0.0, 0.0, 3.0), Vector3::zeros());
        s.pos_ned_m.z = -0.3;
        let before = s;
        gear().project(&ContactState::default(), &mut s, 0.0);
        assert_eq!(s, before);
    }

    #[test]
    fn tilt_is_the_angle_from_the_downward_vertical() {
        assert_eq!(tilt_rad(&UnitQuaternion::identity()), 0.0);
        let roll = UnitQuaternion::from_euler_angles(0.6, 0.0, 1.0);
        assert!((tilt_rad(&roll) - 0.6).abs() < 1e-12);
        let pitch = UnitQuaternion::from_euler_angles(0.0, -0.4, 0.0);
        assert!((tilt_rad(&pitch) - 0.4).abs() < 1e-12);
        let upside_down = UnitQuaternion::from_euler_angles(std::f64::consts::PI, 0.0, 0.0);
        assert!((tilt_rad(&upside_down) - std::f64::consts::PI).abs() < 1e-7);
    }
}
