//! Arming, disarming, modes and the requests a ground station queues (PX4's
//! behaviour for each).

use super::*;
use crate::params::name;

impl SimpleFlight {
    /// Arms (the caller has checked the pre-arm state).
    pub(super) fn arm(&mut self, now: SimTime) {
        self.armed = true;
        self.armed_at = now;
        self.landed_at = None;
        {
            let mut st = self.status.borrow_mut();
            st.armed = true;
            st.landed = false;
        }
        self.event(now, EventKind::Armed, None, String::new());
        if let Some(mc) = self.mc.as_mut() {
            mc.reset();
        }
        let here = self.state().pos_ned_m;
        self.hold_pos = here;
        let down = if self.on_ground || self.mc.is_none() {
            self.cfg.initial_down_m
        } else {
            here.z
        };
        self.home_ned = Vector3::new(here.x, here.y, down);
        self.status.borrow_mut().home_ned = Some(self.home_ned);
        let (_, _, yaw) = self.state().att_ned_frd.euler_angles();
        self.yaw_sp = yaw;
        self.chain.restart(Vector3::new(here.x, here.y, down));
        self.last_target = None;
    }

    pub(super) fn disarm(&mut self, now: SimTime, why: &str) {
        self.clear_failsafes();
        self.armed = false;
        self.status.borrow_mut().armed = false;
        self.event(now, EventKind::Disarmed, None, why.to_string());
        self.queue.clear();
        self.phase = Phase::Idle;
        self.after_program = None;
        if self.mc.is_some() && self.from_mission {
            // A mission interrupted by a disarm waits for a new start.
            self.from_mission = false;
        }
    }

    /// Switches mode and sets up what the mode flies (nothing happens while
    /// disarmed; arming starts it).
    pub(super) fn enter_mode(&mut self, now: SimTime, mode: FlightMode) {
        self.set_mode(now, mode);
        self.offboard = None;
        self.queue.clear();
        self.phase = Phase::Idle;
        self.after_program = None;
        self.from_mission = false;
        if !self.armed {
            return;
        }
        let multicopter = self.mc.is_some();
        match mode {
            FlightMode::Mission => {
                self.from_mission = true;
                self.status.borrow_mut().mission_started = true;
                if self.status.borrow().finished {
                    // PX4 holds at the end of a finished mission until the
                    // current item is set again.
                    self.from_mission = false;
                    self.queue.push((
                        Prim::Hold {
                            at: None,
                            time_s: f64::INFINITY,
                        },
                        None,
                    ));
                } else if multicopter && self.on_ground {
                    let alt = self
                        .cfg
                        .mission
                        .iter()
                        .skip(self.next_step)
                        .find_map(|s| match s {
                            Step::Takeoff { .. } => Some(None),
                            Step::Waypoint { pos, .. } => Some(Some(-pos.z + self.home_ned.z)),
                            _ => None,
                        })
                        .unwrap_or(Some(self.takeoff_alt_m));
                    if let Some(alt) = alt {
                        self.queue.push((
                            Prim::Climb {
                                alt_m: alt.max(self.takeoff_alt_m),
                                xy: None,
                            },
                            None,
                        ));
                    }
                }
            }
            FlightMode::Takeoff => {
                if multicopter {
                    self.queue.push((
                        Prim::Climb {
                            alt_m: self.takeoff_alt_m,
                            xy: None,
                        },
                        None,
                    ));
                    self.after_program = Some(FlightMode::Hold);
                } else {
                    self.set_mode(now, FlightMode::Hold);
                    self.enter_hold();
                }
            }
            FlightMode::Return => {
                self.push_return(None);
                if !multicopter {
                    self.after_program = Some(FlightMode::Hold);
                }
            }
            FlightMode::Land => {
                if multicopter {
                    if !self.on_ground {
                        self.queue.push((Prim::Land { xy: None }, None));
                    }
                } else {
                    self.enter_hold();
                }
            }
            FlightMode::Hold | FlightMode::Manual | FlightMode::Offboard => self.enter_hold(),
        }
    }

    pub(super) fn enter_hold(&mut self) {
        if self.mc.is_some() && self.on_ground {
            return;
        }
        self.queue.push((
            Prim::Hold {
                at: None,
                time_s: f64::INFINITY,
            },
            None,
        ));
    }

    /// Applies the queued ground-station requests.
    pub(super) fn apply_requests(&mut self, now: SimTime) {
        loop {
            let Some(req) = self.requests.borrow_mut().pop_front() else {
                break;
            };
            self.apply(now, req);
        }
    }

    /// Acts on one request (one handler each, as PX4 answers it).
    pub(super) fn apply(&mut self, now: SimTime, req: Request) {
        match req {
            Request::Arm { force } => self.request_arm(now, force),
            Request::Disarm { force } => self.request_disarm(now, force),
            Request::SetMode(mode) => {
                // The pilot takes over from a failsafe, as in PX4.
                self.failsafe_action = None;
                self.enter_mode(now, mode);
            }
            Request::Takeoff { alt_m } => {
                self.takeoff_alt_m = alt_m;
                self.enter_mode(now, FlightMode::Takeoff);
            }
            Request::Reposition { ne_m, down_m } => self.reposition(now, ne_m, down_m),
            Request::ChangeSpeed(speed) => self.change_speed(speed),
            Request::SetCurrent(seq) => self.set_current(now, seq),
            Request::SetMission(steps) => self.set_mission(now, steps),
            Request::GcsHeard => self.gcs_heard = Some(now),
            Request::SetHome(pos) => {
                self.home_ned = pos;
                self.status.borrow_mut().home_ned = Some(pos);
            }
            Request::Velocity { .. }
            | Request::Brake { .. }
            | Request::Attitude { .. }
            | Request::Rates { .. } => {
                if let Some(o) = Offboard::of(&req) {
                    self.offboard_request(now, o);
                }
            }
            Request::SetParam(name, value) => self.set_param(name, value),
        }
    }

    /// Arms unless a pre-arm check fails (`force` skips them).
    fn request_arm(&mut self, now: SimTime, force: bool) {
        if self.armed {
            return;
        }
        if let Some(why) = self.preflight_failure(now).filter(|_| !force) {
            self.event(now, EventKind::Refused, None, format!("arming: {why}"));
            return;
        }
        self.arm(now);
        let mode = self.mode;
        self.enter_mode(now, mode);
    }

    /// Disarms on the ground (`force`: also in the air).
    fn request_disarm(&mut self, now: SimTime, force: bool) {
        if !self.armed {
            return;
        }
        if !force && self.mc.is_some() && !self.on_ground {
            self.event(
                now,
                EventKind::Refused,
                None,
                "disarming: in the air".into(),
            );
            return;
        }
        if force {
            self.on_ground = self.mc.is_some();
            self.status.borrow_mut().on_ground = self.on_ground;
        }
        self.disarm(now, if force { "forced" } else { "" });
    }

    /// Hold, then fly to the new position (NE m and down m; None keeps the
    /// current target's) and hold there. A boat stays on the water.
    fn reposition(&mut self, now: SimTime, ne_m: Option<[f64; 2]>, down_m: Option<f64>) {
        let s = self.state();
        let base = self.last_target.map_or(s.pos_ned_m, |t| t.pos);
        let to = Vector3::new(
            ne_m.map_or(base.x, |v| v[0]),
            ne_m.map_or(base.y, |v| v[1]),
            down_m.unwrap_or(base.z),
        );
        self.enter_mode(now, FlightMode::Hold);
        if !self.armed || (self.mc.is_some() && self.on_ground) {
            return;
        }
        let to = if self.mc.is_some() {
            to
        } else {
            Vector3::new(to.x, to.y, 0.0)
        };
        self.queue.clear();
        self.queue.push((
            Prim::Hold {
                at: Some(to),
                time_s: f64::INFINITY,
            },
            None,
        ));
        self.queue.push((
            Prim::Leg {
                to,
                next: None,
                hold_s: 0.0,
                radius_m: self.fp.nav_acc_rad_m,
            },
            None,
        ));
    }

    /// The horizontal cruise speed, m/s, from now on.
    fn change_speed(&mut self, speed: f64) {
        self.speed_xy = speed;
        self.status.borrow_mut().cruise_speed_m_s = speed;
        let l = self.limits();
        self.chain.set_speed(&l);
        if let Some(r) = self.rover.as_mut() {
            r.set_desired_speed(speed);
        }
    }

    /// The mission goes on from item `seq` (jump counters reset).
    fn set_current(&mut self, now: SimTime, seq: usize) {
        let seq = seq.min(self.cfg.mission.len());
        self.next_step = seq;
        self.jumps_left.iter_mut().for_each(|j| *j = None);
        {
            let mut st = self.status.borrow_mut();
            st.current_item = seq;
            st.finished = false;
        }
        if self.mode == FlightMode::Mission {
            self.enter_mode(now, FlightMode::Mission);
        }
    }

    /// A new mission (a vehicle flying the old one holds).
    fn set_mission(&mut self, now: SimTime, steps: Vec<Step>) {
        let n = steps.len();
        self.cfg.mission = steps;
        self.jumps_left = vec![None; n];
        self.next_step = 0;
        {
            let mut st = self.status.borrow_mut();
            st.current_item = 0;
            st.mission_len = n;
            st.finished = false;
            st.mission_started = false;
        }
        if self.mode == FlightMode::Mission {
            self.enter_mode(now, FlightMode::Hold);
        }
    }

    /// Sets a parameter (range-checked by the store) and applies what
    /// changes at once.
    fn set_param(&mut self, name: &'static str, value: f64) {
        if self.cfg.params.set(name, value).is_err() {
            return;
        }
        self.fp = FlightParams::from_store(&self.cfg.params);
        match name {
            name::MPC_XY_CRUISE => self.change_speed(value),
            name::MIS_TAKEOFF_ALT => self.takeoff_alt_m = value,
            name::COM_DISARM_LAND => self.disarm_land_s = value,
            name::COM_DISARM_PRFLT => self.disarm_preflight_s = value,
            name::SF_GROUND_TRUTH => self.ground_truth = value != 0.0,
            _ => self.reload_failsafe_params(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{bench, kinds};
    use super::*;

    #[test]
    fn arming_waits_for_the_prearm_checks_unless_forced() {
        let (mut sf, status) = bench(false, Vec::new());
        let t = SimTime::from_secs(1);
        sf.apply(t, Request::Arm { force: false });
        assert!(!sf.armed);
        let refused = status.borrow().events.iter().last().cloned();
        let refused = refused.expect("an event");
        assert_eq!(refused.kind, EventKind::Refused);
        assert_eq!(refused.detail, "arming: no IMU data");
        sf.apply(t, Request::Arm { force: true });
        assert!(sf.armed);
        assert!(kinds(&status).contains(&EventKind::Armed));
        // On the ground a plain disarm is accepted.
        sf.apply(t, Request::Disarm { force: false });
        assert!(!sf.armed);
        assert_eq!(kinds(&status).last(), Some(&EventKind::Disarmed));
    }

    #[test]
    fn a_parameter_set_reaches_the_snapshot_and_a_refused_one_changes_nothing() {
        let (mut sf, _) = bench(false, Vec::new());
        let t = SimTime::ZERO;
        sf.apply(t, Request::SetParam("MIS_TAKEOFF_ALT", 12.0));
        assert_eq!(sf.takeoff_alt_m, 12.0);
        assert_eq!(sf.fp.mis_takeoff_alt_m, 12.0);
        sf.apply(t, Request::SetParam("NAV_ACC_RAD", -3.0));
        assert_eq!(sf.fp.nav_acc_rad_m, 2.0, "out of range: refused");
        sf.apply(t, Request::SetParam("MPC_XY_CRUISE", 7.5));
        assert_eq!(sf.speed_xy, 7.5);
        assert_eq!(sf.status.borrow().cruise_speed_m_s, 7.5);
    }

    #[test]
    fn a_new_mission_resets_progress_and_stops_flying_the_old_one() {
        let (mut sf, status) = bench(false, vec![waypoint_north(10.0)]);
        let t = SimTime::ZERO;
        sf.apply(t, Request::SetCurrent(1));
        assert_eq!(status.borrow().current_item, 1);
        sf.apply(t, Request::SetCurrent(99));
        assert_eq!(sf.next_step, 1, "clamped to the mission's end");
        sf.mode = FlightMode::Mission;
        sf.apply(
            t,
            Request::SetMission(vec![waypoint_north(5.0), waypoint_north(6.0)]),
        );
        assert_eq!((sf.next_step, status.borrow().mission_len), (0, 2));
        assert_eq!(sf.mode, FlightMode::Hold);
    }

    use super::super::test_support::{on_truth_at, waypoint_north};

    fn climb(alt_m: f64) -> (Prim, Option<usize>) {
        (Prim::Climb { alt_m, xy: None }, None)
    }

    fn hold() -> (Prim, Option<usize>) {
        let time_s = f64::INFINITY;
        (Prim::Hold { at: None, time_s }, None)
    }

    /// Home is where the vehicle arms: on the ground (and for a boat,
    /// always) at the configured start height, in the air where it is.
    #[test]
    fn home_is_set_where_the_vehicle_arms() {
        let t = SimTime::from_secs(2);
        let here = Vector3::new(12.0, -7.0, -30.0);
        for (boat, on_ground, down) in [
            (false, false, -30.0),
            (false, true, 1.5),
            (true, false, 1.5),
            (true, true, 1.5),
        ] {
            let (mut sf, status) = on_truth_at(boat, here);
            sf.cfg.initial_down_m = 1.5;
            sf.on_ground = on_ground;
            sf.arm(t);
            let home = Vector3::new(12.0, -7.0, down);
            assert_eq!(sf.home_ned, home, "boat {boat}, on the ground {on_ground}");
            assert_eq!(status.borrow().home_ned, Some(home));
            assert_eq!((sf.hold_pos, sf.armed_at), (here, t));
        }
    }

    /// In the air a quad refuses a plain disarm and takes a forced one,
    /// which counts it as on the ground; a boat disarms under way.
    #[test]
    fn in_the_air_only_a_forced_disarm_is_taken() {
        let t = SimTime::ZERO;
        let (mut sf, status) = on_truth_at(false, Vector3::new(0.0, 0.0, -10.0));
        sf.armed = true;
        sf.apply(t, Request::Disarm { force: false });
        assert!(sf.armed);
        assert_eq!(kinds(&status).last(), Some(&EventKind::Refused));
        sf.apply(t, Request::Disarm { force: true });
        assert!(!sf.armed);
        assert!(sf.on_ground && status.borrow().on_ground);
        let (mut sf, _) = on_truth_at(true, Vector3::zeros());
        sf.armed = true;
        sf.apply(t, Request::Disarm { force: false });
        assert!(!sf.armed);
    }

    /// A multicopter's interrupted mission waits for a new start after a
    /// disarm; a boat's goes on when it arms again.
    #[test]
    fn a_disarm_ends_a_multicopters_mission_not_a_boats() {
        for boat in [false, true] {
            let (mut sf, _) = on_truth_at(boat, Vector3::zeros());
            sf.armed = true;
            sf.from_mission = true;
            sf.disarm(SimTime::ZERO, "");
            assert_eq!(sf.from_mission, boat, "boat {boat}");
        }
    }

    /// A quad on the ground starting a mission first climbs to its first
    /// waypoint's height above home (at least MIS_TAKEOFF_ALT), unless the
    /// mission takes off itself; a boat just goes.
    #[test]
    fn a_mission_started_on_the_ground_climbs_to_its_first_waypoint() {
        let t = SimTime::ZERO;
        let up = |n: f64, alt: f64| Step::Waypoint {
            pos: Vector3::new(n, 0.0, -alt),
            hold_s: 0.0,
            radius_m: 2.0,
        };
        let start = |boat: bool, mission: Vec<Step>| {
            let (mut sf, _) = on_truth_at(boat, Vector3::zeros());
            sf.cfg.mission = mission;
            sf.armed = true;
            sf.on_ground = true;
            // Home 2 m below the frame's origin: a waypoint 25 m above
            // the origin is 27 m above home.
            sf.home_ned.z = 2.0;
            sf.takeoff_alt_m = 4.0;
            sf.enter_mode(t, FlightMode::Mission);
            assert!(sf.from_mission);
            sf.queue
        };
        assert_eq!(start(false, vec![up(10.0, 25.0)]), vec![climb(27.0)]);
        assert_eq!(start(false, vec![up(10.0, 1.0)]), vec![climb(4.0)]);
        assert_eq!(start(false, Vec::new()), vec![climb(4.0)]);
        let takeoff = Step::Takeoff {
            pos_ne: None,
            alt_m: 10.0,
        };
        assert_eq!(start(false, vec![takeoff, up(10.0, 25.0)]), vec![]);
        assert_eq!(start(true, vec![up(10.0, 25.0)]), vec![]);
    }

    /// Return: a boat holds where it ends; Land: a quad in the air
    /// descends, on the ground does nothing, and a boat holds.
    #[test]
    fn return_and_land_as_each_vehicle_does_them() {
        let t = SimTime::ZERO;
        let enter = |boat: bool, on_ground: bool, mode: FlightMode| {
            let (mut sf, _) = on_truth_at(boat, Vector3::new(0.0, 0.0, -10.0));
            sf.armed = true;
            sf.on_ground = on_ground;
            sf.enter_mode(t, mode);
            (sf.queue.clone(), sf.after_program)
        };
        assert_eq!(enter(false, false, FlightMode::Return).1, None);
        assert_eq!(
            enter(true, false, FlightMode::Return).1,
            Some(FlightMode::Hold)
        );
        let land = (Prim::Land { xy: None }, None);
        assert_eq!(enter(false, false, FlightMode::Land).0, vec![land]);
        assert_eq!(enter(false, true, FlightMode::Land).0, vec![]);
        assert_eq!(enter(true, false, FlightMode::Land).0, vec![hold()]);
        assert_eq!(enter(true, true, FlightMode::Hold).0, vec![hold()]);
        assert_eq!(enter(false, false, FlightMode::Hold).0, vec![hold()]);
        assert_eq!(enter(false, true, FlightMode::Hold).0, vec![]);
    }

    /// Requests queued by the ground station are all applied, in order.
    #[test]
    fn queued_requests_are_applied_in_order() {
        let (mut sf, _) = bench(false, Vec::new());
        let queue = sf.request_queue();
        queue
            .borrow_mut()
            .push_back(Request::SetParam("MIS_TAKEOFF_ALT", 7.0));
        queue
            .borrow_mut()
            .push_back(Request::Takeoff { alt_m: 9.0 });
        sf.apply_requests(SimTime::ZERO);
        assert!(queue.borrow().is_empty());
        assert_eq!((sf.takeoff_alt_m, sf.mode), (9.0, FlightMode::Takeoff));
    }

    /// A reposition holds, then flies to the new point (NE given, height
    /// kept) and holds there; a boat stays on the water. Disarmed or on
    /// the ground a quad does not go.
    #[test]
    fn a_reposition_flies_to_the_point_and_holds_there() {
        let t = SimTime::ZERO;
        let go = |boat: bool, armed: bool, on_ground: bool| {
            let (mut sf, _) = on_truth_at(boat, Vector3::new(3.0, 4.0, -12.0));
            sf.armed = armed;
            sf.on_ground = on_ground;
            sf.apply(
                t,
                Request::Reposition {
                    ne_m: Some([40.0, 10.0]),
                    down_m: None,
                },
            );
            assert_eq!(sf.mode, FlightMode::Hold);
            sf.queue
        };
        let to = |down: f64| {
            let to = Vector3::new(40.0, 10.0, down);
            let time_s = f64::INFINITY;
            let leg = Prim::Leg {
                to,
                next: None,
                hold_s: 0.0,
                radius_m: 2.0,
            };
            vec![
                (
                    Prim::Hold {
                        at: Some(to),
                        time_s,
                    },
                    None,
                ),
                (leg, None),
            ]
        };
        assert_eq!(go(false, true, false), to(-12.0));
        assert_eq!(go(true, true, false), to(0.0));
        assert_eq!(go(true, true, true), to(0.0));
        assert_eq!(go(false, false, false), vec![]);
        assert_eq!(go(false, true, true), vec![]);
    }

    /// Setting the current item restarts a mission in flight from it, and
    /// changes nothing else in another mode.
    #[test]
    fn a_new_current_item_restarts_only_a_mission_in_flight() {
        for mode in [FlightMode::Mission, FlightMode::Hold] {
            let (mut sf, _) = on_truth_at(false, Vector3::new(0.0, 0.0, -10.0));
            sf.cfg.mission = vec![waypoint_north(10.0), waypoint_north(20.0)];
            sf.armed = true;
            sf.enter_mode(SimTime::ZERO, mode);
            sf.from_mission = false;
            sf.apply(SimTime::ZERO, Request::SetCurrent(1));
            assert_eq!(sf.next_step, 1);
            assert_eq!(sf.from_mission, mode == FlightMode::Mission, "{mode:?}");
        }
    }

    /// The disarm delays follow their parameters at once.
    #[test]
    fn the_disarm_delays_follow_their_parameters() {
        let (mut sf, _) = bench(false, Vec::new());
        sf.apply(SimTime::ZERO, Request::SetParam("COM_DISARM_LAND", 4.5));
        sf.apply(SimTime::ZERO, Request::SetParam("COM_DISARM_PRFLT", -1.0));
        assert_eq!((sf.disarm_land_s, sf.disarm_preflight_s), (4.5, -1.0));
    }
}
