//! The mission executor: turns the mission's steps into primitives (take-off,
//! legs, loiters, landings, returns), starts and finishes them, and ends the
//! mission.

use super::boat::nav_state;
use super::*;

impl SimpleFlight {
    /// Takes the next steps off the mission into the primitive queue.
    pub(super) fn load_next(&mut self, now: SimTime) {
        let multicopter = self.mc.is_some();
        // At most this many steps at once: a loop of jumps that flies
        // nothing (which the plan check refuses) cannot hang the autopilot.
        for _ in 0..10_000 {
            if !(self.queue.is_empty() && self.next_step < self.cfg.mission.len()) {
                break;
            }
            let i = self.next_step;
            self.next_step += 1;
            let step = self.cfg.mission[i];
            match step {
                Step::Skip { command } => {
                    self.event(
                        now,
                        EventKind::ItemSkipped,
                        Some(i),
                        mavsitl_mavlink::mission::command_name(command),
                    );
                }
                Step::ChangeSpeed { speed_m_s } => {
                    if let Some(s) = speed_m_s {
                        self.speed_xy = s;
                        let l = self.limits();
                        self.chain.set_speed(&l);
                        if let Some(r) = self.rover.as_mut() {
                            r.set_desired_speed(s);
                        }
                    }
                    self.event(
                        now,
                        EventKind::ItemReached,
                        Some(i),
                        format!("speed {speed_m_s:?}"),
                    );
                    self.status.borrow_mut().reached.push((now, i));
                }
                Step::SetHome { pos } => {
                    self.home_ned = pos.unwrap_or(self.state().pos_ned_m);
                    self.status.borrow_mut().home_ned = Some(self.home_ned);
                    self.event(now, EventKind::ItemReached, Some(i), "home set".into());
                    self.status.borrow_mut().reached.push((now, i));
                }
                Step::Jump { target, repeat } => {
                    let left = self.jumps_left[i].get_or_insert(repeat);
                    if *left != 0 {
                        // Counted; −1 jumps for ever.
                        if left.is_positive() {
                            *left -= 1;
                        }
                        self.event(
                            now,
                            EventKind::ItemReached,
                            Some(i),
                            format!("jump to {target}"),
                        );
                        self.next_step = target;
                    } else {
                        self.jumps_left[i] = None;
                        self.event(now, EventKind::ItemReached, Some(i), "jump done".into());
                    }
                    self.status.borrow_mut().reached.push((now, i));
                }
                Step::Takeoff { pos_ne, alt_m } => self
                    .queue
                    .push((Prim::Climb { alt_m, xy: pos_ne }, Some(i))),
                Step::Waypoint {
                    pos,
                    hold_s,
                    radius_m,
                } => {
                    let next = if hold_s <= 0.0 {
                        self.peek_next_waypoint()
                    } else {
                        None
                    };
                    let to = if multicopter {
                        pos
                    } else {
                        Vector3::new(pos.x, pos.y, 0.0)
                    };
                    self.queue.push((
                        Prim::Leg {
                            to,
                            next,
                            hold_s,
                            radius_m,
                        },
                        Some(i),
                    ));
                }
                Step::Loiter { pos, time_s } => {
                    self.queue.push((Prim::Hold { at: pos, time_s }, Some(i)))
                }
                Step::Delay { time_s } => {
                    self.queue.push((Prim::Hold { at: None, time_s }, Some(i)))
                }
                Step::ReturnToLaunch => self.push_return(Some(i)),
                Step::Land { pos_ne } => {
                    if multicopter {
                        self.queue.push((Prim::Land { xy: pos_ne }, Some(i)));
                    } else {
                        self.queue.push((
                            Prim::Hold {
                                at: None,
                                time_s: 0.0,
                            },
                            Some(i),
                        ));
                    }
                }
            }
        }
    }

    /// Queues a return to home, as PX4's RTL does. A multicopter climbs to
    /// the return height (RTL_RETURN_ALT, lowered near home by RTL_CONE_ANG
    /// and RTL_MIN_DIST: [`FlightParams::return_height_m`]) if it is lower,
    /// flies above the return point and lands there. With RTL_LAND_DELAY
    /// it first descends to RTL_DESCEND_ALT (if higher) and hovers that long
    /// (−1: for ever); with PX4's default 0 the descent and the landing are
    /// one. One already on the ground stays there. A boat sails home and
    /// holds there. `item` is the mission item, if any.
    pub(super) fn push_return(&mut self, item: Option<usize>) {
        let here = self.state().pos_ned_m;
        let dest = self.return_point(&here);
        let radius = self.fp.nav_acc_rad_m;
        if self.mc.is_some() && self.on_ground {
            self.queue.push((
                Prim::Hold {
                    at: None,
                    time_s: 0.0,
                },
                item,
            ));
        } else if self.mc.is_some() {
            self.push_multicopter_return(&here, &dest, item);
        } else {
            self.queue.push((
                Prim::Hold {
                    at: Some(Vector3::new(dest.x, dest.y, 0.0)),
                    time_s: 0.0,
                },
                item,
            ));
            self.queue.push((
                Prim::Leg {
                    to: Vector3::new(dest.x, dest.y, 0.0),
                    next: None,
                    hold_s: 0.0,
                    radius_m: radius,
                },
                None,
            ));
        }
    }

    /// A multicopter's return from `here` to `dest` (NED m), in the air: see
    /// [`Self::push_return`].
    fn push_multicopter_return(
        &mut self,
        here: &Vector3<f64>,
        dest: &Vector3<f64>,
        item: Option<usize>,
    ) {
        let radius = self.fp.nav_acc_rad_m;
        let dist = (here.xy() - dest.xy()).norm();
        let height = self.home_ned.z - here.z;
        let alt = self.fp.return_height_m(dist, height);
        let delay = self.fp.rtl_land_delay_s;
        let wait_alt = alt.min(self.fp.rtl_descend_alt_m);
        // In reverse: the queue is popped from the end.
        let over_home = Vector3::new(dest.x, dest.y, self.home_ned.z - wait_alt);
        if delay < 0.0 {
            self.queue.push((
                Prim::Hold {
                    at: Some(over_home),
                    time_s: f64::INFINITY,
                },
                item,
            ));
        } else {
            self.queue.push((
                Prim::Land {
                    xy: Some([dest.x, dest.y]),
                },
                item,
            ));
        }
        if delay != 0.0 {
            if delay > 0.0 {
                self.queue.push((
                    Prim::Hold {
                        at: Some(over_home),
                        time_s: delay,
                    },
                    None,
                ));
            }
            if alt > wait_alt + 0.5 {
                self.queue.push((
                    Prim::Climb {
                        alt_m: wait_alt,
                        xy: Some([dest.x, dest.y]),
                    },
                    None,
                ));
            }
        }
        // Even a short way home is an S-curve leg: the landing's own
        // horizontal hold would take it as a step (the home set at
        // arming can be a metre from the plan's last waypoint).
        if dist > 0.1 {
            self.queue.push((
                Prim::Leg {
                    to: Vector3::new(dest.x, dest.y, self.home_ned.z - alt),
                    next: None,
                    hold_s: 0.0,
                    radius_m: radius,
                },
                None,
            ));
        }
        if alt > height + 0.5 {
            self.queue.push((
                Prim::Climb {
                    alt_m: alt,
                    xy: None,
                },
                None,
            ));
        }
    }

    /// The waypoint the mission will fly to after the current step, past DO
    /// items and skipped ones, through a DO_JUMP with repeats left to its
    /// target and over a spent one (as ArduPilot's `get_next_cmd` looks
    /// ahead, without counting the jump): the next leg the guidance blends
    /// the corner into. None when a navigation item other than a waypoint
    /// comes first.
    pub(super) fn peek_next_waypoint(&self) -> Option<Vector3<f64>> {
        let mut j = self.next_step;
        // At most 64 items ahead: a loop of jumps that flies nothing ends.
        for _ in 0..64 {
            let Some(step) = self.cfg.mission.get(j) else {
                break;
            };
            match *step {
                Step::Waypoint { pos, .. } => {
                    return Some(if self.mc.is_some() {
                        pos
                    } else {
                        Vector3::new(pos.x, pos.y, 0.0)
                    })
                }
                Step::Skip { .. } | Step::ChangeSpeed { .. } | Step::SetHome { .. } => j += 1,
                Step::Jump { target, repeat } => {
                    let left = self.jumps_left[j].unwrap_or(repeat);
                    j = if left != 0 { target } else { j + 1 };
                }
                _ => return None,
            }
        }
        None
    }

    pub(super) fn start_prim(&mut self, now: SimTime, prim: Prim, item: Option<usize>) {
        let s = self.state();
        if let Some(i) = item {
            self.event(now, EventKind::ItemCurrent, Some(i), String::new());
            self.status.borrow_mut().current_item = i;
        }
        let l = self.limits();
        match prim {
            Prim::Climb { alt_m, xy } => {
                self.on_ground = false;
                self.status.borrow_mut().on_ground = false;
                let from = s.pos_ned_m;
                let xy = xy.unwrap_or([from.x, from.y]);
                let mut lim = l;
                lim.speed_up = self.cfg.params.values().mpc_tko_speed.min(l.speed_up);
                self.chain.restart(Vector3::new(
                    from.x,
                    from.y,
                    from.z.min(self.cfg.initial_down_m),
                ));
                self.chain.set_destination(
                    Vector3::new(xy[0], xy[1], self.home_ned.z - alt_m),
                    None,
                    &lim,
                );
                self.last_target = None;
            }
            Prim::Leg { to, next, .. } => {
                if let Some(r) = self.rover.as_mut() {
                    let ns = nav_state(&s, now, true);
                    r.auto_set_waypoint(to.xy(), next.map(|n| n.xy()), &ns);
                } else {
                    let (o, d) = self.chain.leg();
                    let here_far = (s.pos_ned_m - d).norm() > 5.0;
                    let interrupted = !self.chain.continues_to(&to);
                    if interrupted && (here_far || self.chain.is_fast()) || o == d {
                        // Start the chain where the vehicle is (after a take-off or a
                        // hold, or when a return breaks off a blended leg).
                        self.chain
                            .restart(self.last_target.map_or(s.pos_ned_m, |t| t.pos));
                    }
                    self.chain.set_destination(to, next, &l);
                }
            }
            Prim::Hold { at, .. } => {
                self.hold_pos = at.unwrap_or(s.pos_ned_m);
                if let Some(r) = self.rover.as_mut() {
                    let ns = nav_state(&s, now, true);
                    match at {
                        Some(p) => {
                            r.auto_set_waypoint(p.xy(), None, &ns);
                        }
                        None => r.start_loiter(&ns),
                    }
                }
            }
            Prim::Land { .. } => {
                self.touchdown_since = None;
                self.descent = Descent::from_speed(s.vel_ned_m_s.z);
            }
        }
        self.phase = Phase::Running {
            prim,
            item,
            started: now,
            arrived: None,
        };
    }

    pub(super) fn finish_prim(&mut self, now: SimTime, item: Option<usize>) {
        if let Some(i) = item {
            self.event(now, EventKind::ItemReached, Some(i), String::new());
            self.status.borrow_mut().reached.push((now, i));
        }
        self.phase = Phase::Idle;
    }

    pub(super) fn step_mission(&mut self, now: SimTime) {
        if self.phase != Phase::Idle {
            return;
        }
        if self.from_mission {
            if self.status.borrow().finished || self.status.borrow().landed {
                return;
            }
            self.load_next(now);
        }
        match self.queue.pop() {
            Some((prim, item)) => self.start_prim(now, prim, item),
            // Items left but nothing to fly: a jump loop the plan check
            // did not see. Never report such a mission as completed.
            None if self.from_mission && self.next_step < self.cfg.mission.len() => {
                self.status.borrow_mut().failure = Some(format!(
                    "mission stuck at item {}: jumps that fly nothing",
                    self.next_step
                ));
            }
            None if self.from_mission => self.finish_mission(now),
            None => {
                if let Some(mode) = self.after_program.take() {
                    self.enter_mode(now, mode);
                }
            }
        }
    }

    /// The mission has no more items: hold where it ended.
    pub(super) fn finish_mission(&mut self, now: SimTime) {
        let mut st = self.status.borrow_mut();
        if st.finished {
            return;
        }
        st.finished = true;
        drop(st);
        self.event(now, EventKind::MissionFinished, None, String::new());
        if self.status.borrow().landed {
            return;
        }
        let here = self.state().pos_ned_m;
        self.hold_pos = self.last_target.map_or(here, |t| t.pos);
        self.set_mode(now, FlightMode::Hold);
        self.from_mission = false;
        if let Some(r) = self.rover.as_mut() {
            let s = self.est.state();
            r.start_loiter(&nav_state(&s, now, true));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{bench, kinds, on_truth_at, waypoint_north};
    use super::*;

    #[test]
    fn a_mission_from_the_ground_climbs_first_then_flies_its_legs() {
        let (mut sf, status) = bench(false, vec![waypoint_north(20.0), waypoint_north(40.0)]);
        let t = SimTime::from_secs(1);
        sf.apply(t, Request::Arm { force: true });
        sf.apply(t, Request::SetMode(FlightMode::Mission));
        sf.step_mission(t);
        let Phase::Running { prim, .. } = sf.phase else {
            panic!("nothing running: {:?}", sf.phase);
        };
        assert!(matches!(prim, Prim::Climb { .. }), "{prim:?}");
        // The climb done, the first leg runs with the next one known.
        sf.finish_prim(t, None);
        sf.step_mission(t);
        let Phase::Running { prim, item, .. } = sf.phase else {
            panic!("nothing running after the climb");
        };
        assert_eq!(item, Some(0));
        let Prim::Leg { to, next, .. } = prim else {
            panic!("not a leg: {prim:?}");
        };
        assert_eq!(to, Vector3::new(20.0, 0.0, -10.0));
        assert_eq!(next, Some(Vector3::new(40.0, 0.0, -10.0)));
        assert_eq!(status.borrow().current_item, 0);
    }

    /// The look-ahead from the step after a waypoint, as the executor
    /// stands there.
    fn peek(mission: Vec<Step>, next_step: usize, jumps_left: &[(usize, i64)]) -> Option<f64> {
        let (mut sf, _) = bench(true, mission);
        sf.next_step = next_step;
        for (i, left) in jumps_left {
            sf.jumps_left[*i] = Some(*left);
        }
        sf.peek_next_waypoint().map(|p| p.x)
    }

    #[test]
    fn the_next_leg_is_looked_up_through_jumps_as_ardupilot_does() {
        let jump = |target, repeat| Step::Jump { target, repeat };
        let speed = Step::ChangeSpeed {
            speed_m_s: Some(2.0),
        };
        let home = Step::SetHome { pos: None };
        // 0 wp 10, 1 wp 20, 2 jump to 0 once, 3 speed, 4 set home, 5 wp 30.
        let m = || {
            vec![
                waypoint_north(10.0),
                waypoint_north(20.0),
                jump(0, 1),
                speed,
                home,
                waypoint_north(30.0),
            ]
        };
        // A jump not yet taken, or with repeats left: its target.
        assert_eq!(peek(m(), 2, &[]), Some(10.0));
        assert_eq!(peek(m(), 2, &[(2, 1)]), Some(10.0));
        // Spent: past it, the DO items, to the waypoint after.
        assert_eq!(peek(m(), 2, &[(2, 0)]), Some(30.0));
        // For ever (−1): always the target.
        let mut forever = m();
        forever[2] = jump(0, -1);
        assert_eq!(peek(forever, 2, &[(2, -1)]), Some(10.0));
        // A jump that lands on something other than a waypoint: none.
        let mut to_loiter = m();
        to_loiter[0] = Step::Loiter {
            pos: None,
            time_s: 5.0,
        };
        assert_eq!(peek(to_loiter, 2, &[]), None);
        // Plain order: the next waypoint.
        assert_eq!(peek(m(), 1, &[]), Some(20.0));
        // A jump onto itself for ever: the look-ahead gives up.
        assert_eq!(peek(vec![jump(0, -1), waypoint_north(5.0)], 0, &[]), None);
    }

    /// Runs the mission on the bench (a boat: no climb), finishing each
    /// primitive as it starts; the north of each leg flown, up to `max`.
    fn legs_flown(mission: Vec<Step>, max: usize) -> (Vec<f64>, StatusHandle) {
        let (mut sf, status) = bench(true, mission);
        let t = SimTime::from_secs(1);
        sf.apply(t, Request::Arm { force: true });
        sf.apply(t, Request::SetMode(FlightMode::Mission));
        let mut legs = Vec::new();
        while legs.len() < max && !status.borrow().finished {
            sf.step_mission(t);
            let Phase::Running { prim, item, .. } = sf.phase else {
                break;
            };
            if let Prim::Leg { to, .. } = prim {
                legs.push(to.x);
            }
            sf.finish_prim(t, item);
        }
        (legs, status)
    }

    /// DO_JUMP with a count of 2 flies its loop twice more, then goes on;
    /// −1 loops for ever.
    #[test]
    fn a_counted_jump_repeats_its_count_and_a_forever_jump_never_ends() {
        let jump = |target, repeat| Step::Jump { target, repeat };
        let counted = vec![
            waypoint_north(10.0),
            waypoint_north(20.0),
            jump(1, 2),
            waypoint_north(30.0),
        ];
        let (legs, status) = legs_flown(counted, 100);
        assert_eq!(legs, [10.0, 20.0, 20.0, 20.0, 30.0]);
        assert!(status.borrow().finished);
        let (legs, status) = legs_flown(vec![waypoint_north(10.0), jump(0, -1)], 50);
        assert_eq!(legs, [10.0; 50]);
        assert!(!status.borrow().finished);
    }

    /// A loop of jumps that flies nothing (a plan the check would refuse)
    /// stops the mission as stuck rather than spinning for ever.
    #[test]
    fn a_loop_of_jumps_that_flies_nothing_is_reported_stuck() {
        let (legs, status) = legs_flown(
            vec![Step::Jump {
                target: 0,
                repeat: -1,
            }],
            10,
        );
        assert!(legs.is_empty());
        let failure = status.borrow().failure.clone();
        assert_eq!(
            failure.as_deref(),
            Some("mission stuck at item 0: jumps that fly nothing")
        );
        assert!(!status.borrow().finished);
    }

    /// A quad on the bench, in the air at `pos` (NED m, home at the
    /// origin), with the return's parameters PX4's defaults but for the
    /// land delay.
    fn airborne_at(pos: Vector3<f64>, land_delay_s: f64) -> SimpleFlight {
        let (mut sf, _) = on_truth_at(false, pos);
        sf.fp.rtl_land_delay_s = land_delay_s;
        sf
    }

    /// As PX4's RTL with its defaults (RTL_RETURN_ALT 60 m, RTL_DESCEND_ALT
    /// 30 m): from 100 m out at 20 m, climb to 60 m, fly home, land; the
    /// queue is popped from its end, so it reads backwards.
    #[test]
    fn a_return_climbs_to_its_height_flies_home_and_lands() {
        let item = Some(4);
        let home_leg = |alt: f64| {
            (
                Prim::Leg {
                    to: Vector3::new(0.0, 0.0, -alt),
                    next: None,
                    hold_s: 0.0,
                    radius_m: 2.0,
                },
                None,
            )
        };
        let climb = |alt_m: f64, xy: Option<[f64; 2]>| (Prim::Climb { alt_m, xy }, None);
        let land = (
            Prim::Land {
                xy: Some([0.0, 0.0]),
            },
            item,
        );
        let over_home = Some(Vector3::new(0.0, 0.0, -30.0));

        let mut sf = airborne_at(Vector3::new(100.0, 0.0, -20.0), 0.0);
        sf.push_return(item);
        assert_eq!(sf.queue, [land, home_leg(60.0), climb(60.0, None)]);
        // Already higher: no climb, home at its own height.
        let mut sf = airborne_at(Vector3::new(100.0, 0.0, -70.0), 0.0);
        sf.push_return(item);
        assert_eq!(sf.queue, [land, home_leg(70.0)]);
        // RTL_LAND_DELAY 5 s: down to RTL_DESCEND_ALT, hover 5 s, land.
        let mut sf = airborne_at(Vector3::new(100.0, 0.0, -20.0), 5.0);
        sf.push_return(item);
        let hover = (
            Prim::Hold {
                at: over_home,
                time_s: 5.0,
            },
            None,
        );
        let descend = climb(30.0, Some([0.0, 0.0]));
        assert_eq!(
            sf.queue,
            [land, hover, descend, home_leg(60.0), climb(60.0, None)]
        );
        // −1: hover there for ever.
        let mut sf = airborne_at(Vector3::new(100.0, 0.0, -20.0), -1.0);
        sf.push_return(item);
        let hover = (
            Prim::Hold {
                at: over_home,
                time_s: f64::INFINITY,
            },
            item,
        );
        assert_eq!(
            sf.queue,
            [hover, descend, home_leg(60.0), climb(60.0, None)]
        );
        // Above home (moved 20 m north): straight down, no leg. On the
        // ground: stay.
        let mut sf = airborne_at(Vector3::new(20.05, 0.0, -20.0), 0.0);
        sf.home_ned = Vector3::new(20.0, 0.0, 0.0);
        sf.push_return(item);
        let above = (
            Prim::Land {
                xy: Some([20.0, 0.0]),
            },
            item,
        );
        assert_eq!(sf.queue.first(), Some(&above));
        assert!(!sf.queue.iter().any(|(p, _)| matches!(p, Prim::Leg { .. })));
        // Within half a metre of the return height: no climb, nor a
        // descent to RTL_DESCEND_ALT within half a metre of it (5 m from
        // home the cone allows 5 m; 30.3 m up is the height).
        let mut sf = airborne_at(Vector3::new(100.0, 0.0, -59.8), 0.0);
        sf.push_return(item);
        assert_eq!(sf.queue, [land, home_leg(60.0)]);
        let mut sf = airborne_at(Vector3::new(5.0, 0.0, -30.3), 5.0);
        sf.push_return(item);
        let hover_at = |alt: f64| {
            (
                Prim::Hold {
                    at: Some(Vector3::new(0.0, 0.0, -alt)),
                    time_s: 5.0,
                },
                None,
            )
        };
        assert_eq!(sf.queue, [land, hover_at(30.0), home_leg(30.3)]);
        // A home 10 m above the origin: heights count from it.
        let mut sf = airborne_at(Vector3::new(100.0, 0.0, -75.0), 0.0);
        sf.home_ned = Vector3::new(0.0, 0.0, -10.0);
        sf.push_return(item);
        assert_eq!(sf.queue, [land, home_leg(75.0)]);
        let mut sf = airborne_at(Vector3::new(100.0, 0.0, 0.0), 0.0);
        sf.on_ground = true;
        sf.push_return(item);
        assert_eq!(
            sf.queue,
            [(
                Prim::Hold {
                    at: None,
                    time_s: 0.0
                },
                item
            )]
        );
    }

    /// The leg a quad starts from `from` (after flying to `a`, then
    /// towards `b` blending into `c` if given) when it heads for `to`.
    fn leg_started(
        from: Vector3<f64>,
        c: Option<Vector3<f64>>,
        to: Vector3<f64>,
    ) -> (Vector3<f64>, Vector3<f64>) {
        let t = SimTime::from_secs(1);
        let (a, b) = (
            Vector3::new(20.0, 0.0, -10.0),
            Vector3::new(40.0, 0.0, -10.0),
        );
        let mut sf = airborne_at(Vector3::new(0.0, 0.0, -10.0), 0.0);
        let leg = |to, next| Prim::Leg {
            to,
            next,
            hold_s: 0.0,
            radius_m: 2.0,
        };
        sf.start_prim(t, leg(a, Some(b)), None);
        assert_eq!(
            sf.chain.leg(),
            (Vector3::new(0.0, 0.0, -10.0), a),
            "from where it is"
        );
        sf.start_prim(t, leg(b, c), None);
        assert_eq!(sf.chain.leg(), (a, b), "blended on");
        if let Some(truth) = sf.truth.as_mut() {
            truth.pos_ned_m = from;
        }
        sf.start_prim(t, leg(to, None), None);
        sf.chain.leg()
    }

    /// A leg continues from the last one's end when it is the blend that
    /// leg was making, or when the vehicle is within 5 m of that end and
    /// not blending; otherwise (a return breaking off a blended leg, or
    /// far from the end) it starts where the vehicle is.
    #[test]
    fn a_leg_starts_where_the_last_ended_only_when_it_carries_on_from_there() {
        let b = Vector3::new(40.0, 0.0, -10.0);
        let c = Vector3::new(40.0, 20.0, -10.0);
        let d = Vector3::new(0.0, 50.0, -10.0);
        let (near, far) = (
            Vector3::new(36.0, 0.0, -10.0),
            Vector3::new(25.0, 0.0, -10.0),
        );
        assert_eq!(leg_started(near, None, d), (b, d));
        assert_eq!(leg_started(far, None, d), (far, d));
        assert_eq!(leg_started(near, Some(c), d), (near, d));
        assert_eq!(leg_started(far, Some(c), c), (b, c));
    }

    /// A climb heads straight up to its height above home, wherever home
    /// is, at the take-off speed.
    #[test]
    fn a_climb_heads_for_its_height_above_home() {
        let mut sf = airborne_at(Vector3::new(3.0, 4.0, -1.0), 0.0);
        sf.home_ned = Vector3::new(0.0, 0.0, -10.0);
        sf.start_prim(
            SimTime::from_secs(1),
            Prim::Climb {
                alt_m: 15.0,
                xy: None,
            },
            None,
        );
        assert_eq!(sf.chain.leg().1, Vector3::new(3.0, 4.0, -25.0));
        sf.start_prim(
            SimTime::from_secs(1),
            Prim::Climb {
                alt_m: 15.0,
                xy: Some([1.0, 2.0]),
            },
            None,
        );
        assert_eq!(sf.chain.leg().1, Vector3::new(1.0, 2.0, -25.0));
        assert!(!sf.on_ground);
    }

    /// A chain with no leg yet starts at the vehicle, even within 5 m of
    /// where the chain was made.
    #[test]
    fn the_first_leg_starts_where_the_vehicle_is() {
        let mut sf = airborne_at(Vector3::new(1.0, 2.0, -3.0), 0.0);
        let (o, d) = sf.chain.leg();
        assert_eq!(o, d, "no leg yet");
        let to = Vector3::new(20.0, 0.0, -10.0);
        let leg = Prim::Leg {
            to,
            next: None,
            hold_s: 0.0,
            radius_m: 2.0,
        };
        sf.start_prim(SimTime::from_secs(1), leg, None);
        assert_eq!(sf.chain.leg(), (Vector3::new(1.0, 2.0, -3.0), to));
    }

    /// A program that is not the mission (a take-off, then hold) ends in
    /// the mode it asked for, and does not finish the mission; a mission
    /// that has landed, or finished, starts nothing more.
    #[test]
    fn a_take_off_ends_in_hold_and_a_landed_mission_starts_nothing() {
        let t = SimTime::from_secs(1);
        let (mut sf, status) = bench(false, vec![waypoint_north(20.0)]);
        sf.apply(t, Request::Arm { force: true });
        sf.apply(t, Request::SetMode(FlightMode::Takeoff));
        sf.step_mission(t);
        assert!(matches!(
            sf.phase,
            Phase::Running {
                prim: Prim::Climb { .. },
                ..
            }
        ));
        sf.finish_prim(t, None);
        sf.step_mission(t);
        assert_eq!(sf.mode, FlightMode::Hold);
        assert!(!status.borrow().finished);
        assert!(!kinds(&status).contains(&EventKind::MissionFinished));
        for (landed, finished) in [(true, false), (false, true)] {
            let (mut sf, status) = bench(true, vec![waypoint_north(20.0)]);
            sf.apply(t, Request::Arm { force: true });
            sf.apply(t, Request::SetMode(FlightMode::Mission));
            status.borrow_mut().landed = landed;
            status.borrow_mut().finished = finished;
            sf.step_mission(t);
            assert_eq!(
                sf.phase,
                Phase::Idle,
                "landed {landed}, finished {finished}"
            );
        }
    }

    /// A boat sails home and holds there; on the water it is never "on the
    /// ground".
    #[test]
    fn a_boat_returns_by_sailing_home_and_holding() {
        let (mut sf, _) = bench(true, Vec::new());
        sf.on_ground = true;
        sf.push_return(Some(2));
        let home = Vector3::zeros();
        assert_eq!(
            sf.queue,
            [
                (
                    Prim::Hold {
                        at: Some(home),
                        time_s: 0.0
                    },
                    Some(2)
                ),
                (
                    Prim::Leg {
                        to: home,
                        next: None,
                        hold_s: 0.0,
                        radius_m: 2.0
                    },
                    None
                ),
            ]
        );
    }

    #[test]
    fn the_last_item_done_finishes_the_mission_once() {
        let (mut sf, status) = bench(true, vec![waypoint_north(20.0)]);
        let t = SimTime::from_secs(1);
        sf.apply(t, Request::Arm { force: true });
        sf.apply(t, Request::SetMode(FlightMode::Mission));
        sf.step_mission(t);
        assert!(
            matches!(
                sf.phase,
                Phase::Running {
                    prim: Prim::Leg { .. },
                    ..
                }
            ),
            "a boat starts on the water"
        );
        sf.finish_prim(t, Some(0));
        sf.step_mission(t);
        assert!(status.borrow().finished);
        sf.step_mission(t);
        let n = status
            .borrow()
            .events
            .iter()
            .filter(|e| e.kind == EventKind::MissionFinished)
            .count();
        assert_eq!(n, 1);
    }
}
