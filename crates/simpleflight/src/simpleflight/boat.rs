//! Driving a boat: the running primitive becomes a waypoint, loiter or stop
//! for the ArduPilot Rover guidance port, whose throttle and steering the
//! boat's outputs mix.

use super::*;

impl SimpleFlight {
    pub(super) fn fly_boat(&mut self, now: SimTime) {
        let s = self.state();
        let ns = nav_state(&s, now, self.armed);
        let mut leg = None;
        let out: DriverOutput = match self.rover.as_mut() {
            Some(r) => r.update(&ns, DT),
            None => DriverOutput::default(),
        };
        if let Phase::Running {
            prim,
            item,
            started,
            arrived,
        } = self.phase
        {
            let rover_reached = self
                .rover
                .as_ref()
                .is_some_and(|r| r.wpnav.reached_destination());
            // (reached, how long to stay once reached)
            let hold = match prim {
                Prim::Leg { hold_s, .. } => {
                    if let Some(r) = self.rover.as_ref() {
                        let o = r.wpnav.get_origin();
                        let d = r.wpnav.get_destination();
                        leg = Some((Vector3::new(o.x, o.y, 0.0), Vector3::new(d.x, d.y, 0.0)));
                    }
                    Some((out.reached || rover_reached, hold_s))
                }
                Prim::Hold { time_s, at } => Some((at.is_none() || rover_reached, time_s)),
                Prim::Climb { .. } | Prim::Land { .. } => {
                    self.finish_prim(now, item);
                    None
                }
            };
            if let Some((true, hold_s)) = hold {
                let at = arrived.unwrap_or(now);
                self.phase = Phase::Running {
                    prim,
                    item,
                    started,
                    arrived: Some(at),
                };
                if hold_s.is_finite() && now.secs_since(at) >= hold_s {
                    self.finish_prim(now, item);
                }
            }
        }
        self.status.borrow_mut().leg = leg;
        let mut a = Actuators::default();
        if self.armed {
            if let Some(bp) = self.boat {
                bp.mix(&out.outputs, &mut a.controls);
            }
        }
        self.out = a;
    }
}

/// The rover guidance's view of the estimate.
pub(super) fn nav_state(s: &EstimatedState, now: SimTime, armed: bool) -> NavState {
    let (_, _, yaw) = s.att_ned_frd.euler_angles();
    let yaw_rate = (s.att_ned_frd * s.rate_frd_rad_s).z;
    NavState {
        now_s: now.as_secs_f64(),
        armed,
        pos_ne_m: s.pos_ned_m.xy(),
        vel_ne_m_s: s.vel_ned_m_s.xy(),
        accel_ne_m_s2: s.accel_ned_m_s2.xy(),
        yaw_rad: yaw,
        yaw_rate_rad_s: yaw_rate,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guidance_sees_heading_and_yaw_rate_in_the_world_frame() {
        let s = EstimatedState {
            pos_ned_m: Vector3::new(3.0, 4.0, 0.0),
            vel_ned_m_s: Vector3::new(1.0, -1.0, 0.0),
            att_ned_frd: UnitQuaternion::from_euler_angles(0.0, 0.0, 0.5),
            rate_frd_rad_s: Vector3::new(0.0, 0.0, 0.2),
            accel_ned_m_s2: Vector3::zeros(),
            specific_force_frd_m_s2: Vector3::zeros(),
            air_density_kg_m3: 1.2,
        };
        let ns = nav_state(&s, SimTime::from_secs(2), true);
        assert!((ns.yaw_rad - 0.5).abs() < 1e-12);
        assert!((ns.yaw_rate_rad_s - 0.2).abs() < 1e-12);
        assert_eq!(ns.pos_ne_m, Vector2::new(3.0, 4.0));
        assert_eq!(ns.vel_ne_m_s, Vector2::new(1.0, -1.0));
        assert_eq!((ns.now_s, ns.armed), (2.0, true));
    }

    #[test]
    fn a_disarmed_boat_gives_no_thrust() {
        let (mut sf, _) = super::super::test_support::bench(true, Vec::new());
        sf.fly_boat(SimTime::from_secs(1));
        assert!(sf.out.controls.iter().all(|c| *c == 0.0));
    }
}
