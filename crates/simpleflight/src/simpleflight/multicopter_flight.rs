//! Flying a multicopter: the running primitive or offboard setpoint becomes a
//! position/velocity setpoint for the cascade, with take-off, landing and
//! disarm-on-ground logic.

use super::*;

/// A straight leg (origin, destination), NED m.
type Leg = (Vector3<f64>, Vector3<f64>);

/// A vertical speed moved towards its target with bounded acceleration and
/// jerk: a landing starts from the hover (and slows at MPC_LAND_ALT1)
/// without the step in vertical speed that the velocity loop would turn
/// into a jerk of 40–70 m/s³.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Descent {
    /// Vertical speed, m/s, positive down.
    v: f64,
    /// Its rate of change, m/s².
    a: f64,
}

impl Descent {
    /// Starting at vertical speed `v` (m/s, positive down), not accelerating.
    pub(super) fn from_speed(v: f64) -> Self {
        Descent {
            v: if v.is_finite() { v } else { 0.0 },
            a: 0.0,
        }
    }

    /// One step of `dt` s towards `target` (m/s) with acceleration at most
    /// `a_max` (m/s²) and jerk at most `j_max` (m/s³). The acceleration
    /// wanted is ArduPilot's `sqrt_controller` of the speed error (gain
    /// [`DESCENT_P`], second-order limit `j_max`): the square-root law that
    /// still stops on the target at `j_max`, linear close to it; the
    /// acceleration moves towards it at `j_max`.
    pub(super) fn step(&mut self, target: f64, a_max: f64, j_max: f64, dt: f64) -> f64 {
        let e = target - self.v;
        let linear = j_max / (DESCENT_P * DESCENT_P);
        let a_want = if e.abs() > linear {
            e.signum() * (2.0 * j_max * (e.abs() - 0.5 * linear)).sqrt()
        } else {
            e * DESCENT_P
        };
        let a_want = a_want.clamp(-a_max, a_max);
        self.a += (a_want - self.a).clamp(-j_max * dt, j_max * dt);
        self.v += self.a * dt;
        self.v
    }
}

/// Gain of the descent's speed shaping near its target, 1/s.
const DESCENT_P: f64 = 4.0;

/// An Offboard brake holds its point once slower than this, m/s.
const BRAKE_SETTLED_M_S: f64 = 0.2;

impl SimpleFlight {
    /// One control cycle of a multicopter: the running primitive (or an
    /// offboard set-point) becomes the cascade's set-point, and the cascade
    /// the motor commands.
    pub(super) fn fly_multicopter(&mut self, now: SimTime) {
        let s = self.state();
        let mut sp = McSetpoint::Track {
            pos: self.hold_pos,
            vel: Vector3::zeros(),
            acc: Vector3::zeros(),
            yaw: self.yaw_sp,
        };
        let mut leg = None;
        if let Phase::Running {
            prim,
            item,
            started,
            arrived,
        } = self.phase
        {
            match prim {
                Prim::Climb { .. } | Prim::Leg { .. } => {
                    (sp, leg) = self.follow_path(now, &s, prim, item, started, arrived);
                }
                Prim::Hold { time_s, .. } => {
                    if time_s.is_finite() && now.secs_since(started) >= time_s {
                        self.finish_prim(now, item);
                    }
                }
                Prim::Land { xy } => sp = self.land(now, &s, xy, item),
            }
        }
        if let Some(o) = self.offboard {
            sp = self.offboard_setpoint(&s, o);
        }
        self.status.borrow_mut().leg = leg;
        self.drive_motors(&s, sp);
    }

    /// A climb or a leg: the S-curve chain's target, and the leg being flown
    /// (for cross-track statistics). Finishes the primitive on arrival (a leg
    /// after its hold time; a fast leg as it blends into the next).
    fn follow_path(
        &mut self,
        now: SimTime,
        s: &EstimatedState,
        prim: Prim,
        item: Option<usize>,
        started: SimTime,
        arrived: Option<SimTime>,
    ) -> (McSetpoint, Option<Leg>) {
        let l = self.limits();
        let t = self.chain.advance(
            DT,
            &s.pos_ned_m,
            &s.vel_ned_m_s,
            self.last_target.as_ref(),
            self.fp.mpc_xy_p,
            &l,
        );
        let hv = t.vel.xy();
        if hv.norm() > 0.5 {
            self.yaw_sp = hv.y.atan2(hv.x);
        }
        self.last_target = Some(t);
        let sp = McSetpoint::Track {
            pos: t.pos,
            vel: t.vel,
            acc: t.acc,
            yaw: self.yaw_sp,
        };
        let Prim::Leg {
            hold_s, radius_m, ..
        } = prim
        else {
            if t.finished && (s.pos_ned_m.z - t.pos.z).abs() < 0.5 {
                self.hold_pos = t.pos;
                self.finish_prim(now, item);
            }
            return (sp, None);
        };
        let leg = self.chain.leg();
        if t.finished {
            let (_, d) = leg;
            let close = (s.pos_ned_m - d).norm() <= radius_m.max(0.5);
            if self.chain.is_fast() {
                self.hold_pos = t.pos;
                self.finish_prim(now, item);
            } else if close {
                let at = arrived.unwrap_or(now);
                self.phase = Phase::Running {
                    prim,
                    item,
                    started,
                    arrived: Some(at),
                };
                if now.secs_since(at) >= hold_s {
                    self.hold_pos = d;
                    self.finish_prim(now, item);
                }
            }
        }
        (sp, Some(leg))
    }

    /// Landing at `xy` (NE m; None: where it holds): above the point first if
    /// far from it, then down at MPC_Z_V_AUTO_DN, below MPC_LAND_ALT1 at
    /// MPC_LAND_SPEED; level without a position estimate. Off once landed.
    fn land(
        &mut self,
        now: SimTime,
        s: &EstimatedState,
        xy: Option<[f64; 2]>,
        item: Option<usize>,
    ) -> McSetpoint {
        let xy = xy.map_or(Vector2::new(self.hold_pos.x, self.hold_pos.y), |v| {
            Vector2::new(v[0], v[1])
        });
        let height = self.cfg.initial_down_m - s.pos_ned_m.z;
        let vz_target = if height > self.fp.mpc_land_alt1_m {
            self.fp.mpc_z_v_auto_dn_m_s
        } else {
            self.fp.mpc_land_speed_m_s
        };
        let l = self.limits();
        let vz = self.descent.step(vz_target, l.accel_z, l.jerk, DT);
        if self.touched_down(now, s, height, item) {
            return McSetpoint::Off;
        }
        if self.blind {
            McSetpoint::Descend {
                vz,
                yaw: self.yaw_sp,
            }
        } else if (s.pos_ned_m.xy() - xy).norm() > 3.0 {
            McSetpoint::Track {
                pos: Vector3::new(xy.x, xy.y, s.pos_ned_m.z),
                vel: Vector3::zeros(),
                acc: Vector3::zeros(),
                yaw: self.yaw_sp,
            }
        } else {
            McSetpoint::Vertical {
                pos_xy: xy,
                vz,
                yaw: self.yaw_sp,
            }
        }
    }

    /// Whether the vehicle has been down and still (below 1 m, not sinking,
    /// thrust under 90 % of its weight) for a second: then it has landed,
    /// which finishes the primitive (and the mission, if it was the last).
    fn touched_down(
        &mut self,
        now: SimTime,
        s: &EstimatedState,
        height: f64,
        item: Option<usize>,
    ) -> bool {
        let hover = self.mc.as_ref().map_or(0.0, |m| m.last_thrust_n);
        let mass_g = match &self.cfg.vehicle {
            VehicleConfig::Multirotor(a) => a.mass_kg * G0_M_S2,
            VehicleConfig::Boat(_) | VehicleConfig::Rover(_) => 0.0,
        };
        let still = s.vel_ned_m_s.z.abs() < 0.2 && height < 1.0 && hover < 0.9 * mass_g;
        match (still, self.touchdown_since) {
            (true, None) => self.touchdown_since = Some(now),
            (true, Some(t0)) if now.secs_since(t0) > 1.0 => {
                self.event(now, EventKind::Landed, item, String::new());
                self.on_ground = true;
                self.landed_at = Some(now);
                {
                    let mut st = self.status.borrow_mut();
                    st.landed = true;
                    st.on_ground = true;
                }
                self.finish_prim(now, item);
                if self.from_mission
                    && self.queue.is_empty()
                    && self.next_step >= self.cfg.mission.len()
                {
                    self.finish_mission(now);
                }
                self.queue.clear();
                self.phase = Phase::Idle;
                return true;
            }
            (false, _) => self.touchdown_since = None,
            _ => {}
        }
        false
    }

    /// Runs the cascade on `sp` (motors off while disarmed or on the ground,
    /// unless climbing away from it).
    fn drive_motors(&mut self, s: &EstimatedState, mut sp: McSetpoint) {
        let climbing = matches!(
            self.phase,
            Phase::Running {
                prim: Prim::Climb { .. },
                ..
            }
        );
        if !self.armed || (self.on_ground && !climbing) {
            sp = McSetpoint::Off;
        }
        let mut motors = [0.0; MAX_MOTORS];
        if let Some(mc) = self.mc.as_mut() {
            mc.update(&sp, s, DT, &mut motors);
        }
        self.out = Actuators::from_slice(&motors);
    }

    /// Takes an Offboard set-point (multicopters in the air only), entering
    /// Offboard if not in it.
    pub(super) fn offboard_request(&mut self, now: SimTime, o: Offboard) {
        let airborne = self.armed && self.mc.is_some() && !self.on_ground;
        if !airborne {
            self.event(now, EventKind::Refused, None, "offboard: not flying".into());
            return;
        }
        if self.mode != FlightMode::Offboard || self.offboard.is_none() {
            self.enter_mode(now, FlightMode::Offboard);
            self.hold_pos = self.state().pos_ned_m;
        }
        self.offboard = Some(o);
    }

    /// The multicopter set-point of an Offboard request in force.
    pub(super) fn offboard_setpoint(&mut self, s: &EstimatedState, o: Offboard) -> McSetpoint {
        match o {
            Offboard::Velocity(vel, yaw) => self.velocity_setpoint(s, vel, yaw),
            Offboard::Brake(yaw) => {
                // The position set-point rides with the vehicle while it
                // slows (only the velocity loop brakes it), then stays
                // where it came to rest.
                if s.vel_ned_m_s.norm() > BRAKE_SETTLED_M_S {
                    self.hold_pos = s.pos_ned_m;
                }
                self.turn(yaw, Vector3::zeros());
                McSetpoint::Track {
                    pos: self.hold_pos,
                    vel: Vector3::zeros(),
                    acc: Vector3::zeros(),
                    yaw: self.yaw_sp,
                }
            }
            Offboard::Attitude {
                roll,
                pitch,
                yaw,
                lift,
            } => {
                self.turn(yaw, Vector3::zeros());
                McSetpoint::Attitude {
                    att: UnitQuaternion::from_euler_angles(roll, pitch, self.yaw_sp),
                    lift,
                }
            }
            Offboard::Rates(rates_frd, lift) => McSetpoint::Rates { rates_frd, lift },
        }
    }

    /// Moves the heading set-point as `yaw` asks (travelling at `vel`).
    pub(super) fn turn(&mut self, yaw: YawTarget, vel: Vector3<f64>) {
        match yaw {
            YawTarget::Hold => {}
            YawTarget::Angle(a) => self.yaw_sp = a,
            YawTarget::Rate(r) => {
                self.yaw_sp = (self.yaw_sp + r * DT + std::f64::consts::PI)
                    .rem_euclid(std::f64::consts::TAU)
                    - std::f64::consts::PI;
            }
            YawTarget::AlongVelocity => {
                if vel.xy().norm() > 0.3 {
                    self.yaw_sp = vel.y.atan2(vel.x);
                }
            }
        }
    }

    /// Offboard velocity: a carrot moving at `vel` (kept within 2 m of the
    /// vehicle, so that a blocked vehicle does not wind up) with `vel` as
    /// feed-forward.
    pub(super) fn velocity_setpoint(
        &mut self,
        s: &EstimatedState,
        vel: Vector3<f64>,
        yaw: YawTarget,
    ) -> McSetpoint {
        self.hold_pos += vel * DT;
        let lag = self.hold_pos - s.pos_ned_m;
        let (lag_xy, lag_z) = (lag.xy(), lag.z);
        if lag_xy.norm() > 2.0 {
            let xy = s.pos_ned_m.xy() + lag_xy.normalize() * 2.0;
            self.hold_pos.x = xy.x;
            self.hold_pos.y = xy.y;
        }
        self.hold_pos.z = s.pos_ned_m.z + lag_z.clamp(-2.0, 2.0);
        self.turn(yaw, vel);
        McSetpoint::Track {
            pos: self.hold_pos,
            vel,
            acc: Vector3::zeros(),
            yaw: self.yaw_sp,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::bench;
    use super::*;

    #[test]
    fn the_motors_stay_off_while_disarmed_or_standing_on_the_ground() {
        let (mut sf, _) = bench(false, Vec::new());
        let t = SimTime::from_secs(1);
        sf.fly_multicopter(t);
        assert!(sf.out.controls.iter().all(|c| *c == 0.0), "disarmed");
        sf.apply(t, Request::Arm { force: true });
        sf.fly_multicopter(t);
        assert!(
            sf.out.controls.iter().all(|c| *c == 0.0),
            "armed, on the ground, holding"
        );
        sf.apply(t, Request::Takeoff { alt_m: 5.0 });
        sf.step_mission(t);
        sf.fly_multicopter(t);
        assert!(
            sf.out.controls.iter().take(4).all(|c| *c > 0.0),
            "climbing: {:?}",
            sf.out
        );
    }

    #[test]
    fn a_descent_is_shaped_within_its_acceleration_and_jerk() {
        // From hover to 1.5 m/s down with a ≤ 2 m/s², j ≤ 4 m/s³: no step,
        // and the target reached (a jerk-limited ramp takes at least
        // 2·sqrt(v/j) = 1.22 s for 1.5 m/s).
        let mut d = Descent::from_speed(0.0);
        let (dt, mut prev_v, mut prev_a, mut t) = (0.004, 0.0, 0.0, 0.0);
        while (d.v - 1.5).abs() > 1e-3 && t < 5.0 {
            let v = d.step(1.5, 2.0, 4.0, dt);
            let a = (v - prev_v) / dt;
            assert!((-0.05..=2.0 + 1e-9).contains(&a), "accel {a} at {t}");
            assert!((a - prev_a).abs() <= 4.0 * dt + 1e-9, "jerk at {t}");
            (prev_v, prev_a, t) = (v, a, t + dt);
        }
        assert!((1.2..2.5).contains(&t), "took {t} s");
        // Slowing from 1.5 to 0.7 m/s: down the same way, hardly below.
        let mut lowest = f64::INFINITY;
        for _ in 0..2000 {
            lowest = lowest.min(d.step(0.7, 2.0, 4.0, dt));
        }
        assert!(
            lowest > 0.68 && (d.v - 0.7).abs() < 1e-3,
            "{lowest} {}",
            d.v
        );
        // Upwards (negative) targets are reached too.
        let mut d = Descent::from_speed(0.5);
        (0..2000).for_each(|_| {
            d.step(-1.0, 2.0, 4.0, dt);
        });
        assert!((d.v + 1.0).abs() < 1e-3, "{}", d.v);
    }

    #[test]
    fn return_land_or_mission_on_the_ground_never_lifts_off() {
        for mode in [FlightMode::Return, FlightMode::Land, FlightMode::Mission] {
            let (mut sf, _) = bench(
                false,
                vec![super::super::test_support::waypoint_north(20.0)],
            );
            let t = SimTime::from_secs(1);
            sf.apply(t, Request::Arm { force: true });
            // The mission flown and landed: on the ground, finished.
            sf.status.borrow_mut().finished = true;
            sf.status.borrow_mut().landed = true;
            sf.apply(t, Request::SetMode(mode));
            for k in 0..500 {
                let now = SimTime::from_micros(1_000_000 + k * 4_000);
                sf.step_mission(now);
                sf.fly_multicopter(now);
                assert!(
                    sf.out.controls.iter().all(|c| *c == 0.0),
                    "{mode:?}: motors {:?}",
                    sf.out
                );
            }
            assert!(sf.on_ground, "{mode:?}");
        }
    }

    #[test]
    fn a_landing_is_detected_after_a_second_down_and_still() {
        let (mut sf, status) = bench(false, Vec::new());
        sf.apply(SimTime::from_secs(1), Request::Arm { force: true });
        sf.on_ground = false;
        sf.apply(SimTime::from_secs(1), Request::SetMode(FlightMode::Land));
        let s = sf.state();
        assert!(!sf.touched_down(SimTime::from_secs(2), &s, 0.0, None));
        assert!(!sf.touched_down(SimTime::from_micros(2_900_000), &s, 0.0, None));
        assert!(sf.touched_down(SimTime::from_micros(3_100_000), &s, 0.0, None));
        assert!(sf.on_ground && status.borrow().landed);
        assert!(status
            .borrow()
            .events
            .iter()
            .any(|e| e.kind == EventKind::Landed));
        // Moving or high is no touchdown.
        let (mut sf, _) = bench(false, Vec::new());
        assert!(!sf.touched_down(SimTime::from_secs(2), &s, 3.0, None));
        assert_eq!(sf.touchdown_since, None);
    }
}
