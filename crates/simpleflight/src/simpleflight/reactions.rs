//! How SimpleFlight reacts to failures: it checks its failsafes each control
//! cycle, announces each as PX4 does (an event that the endpoint turns into a
//! STATUSTEXT of the same severity), and switches mode. The most severe
//! action in force wins; a boat holds or returns, never lands.

use nalgebra::Vector3;

use super::{EventKind, FlightMode, SimpleFlight};
use crate::failsafe::{Failsafe, FailsafeAction, FailsafeInputs, FailsafeParams};
use mavsitl_core::controller::SensorFrame;
use mavsitl_core::time::SimTime;

impl SimpleFlight {
    /// Runs the failure detectors and failsafes on this cycle's data.
    pub(super) fn check_failsafes(&mut self, now: SimTime, f: &SensorFrame) {
        self.detect_motor_failure(now, f);
        let s = self.state();
        let eph = if self.ground_truth {
            0.0
        } else {
            self.est.horizontal_accuracy_m(now)
        };
        self.status.borrow_mut().position_eph_m = eph;
        let flying = self.armed && !(self.mc.is_some() && self.on_ground);
        let inputs = FailsafeInputs {
            now,
            flying,
            battery_remaining: f.battery.map(|b| b.remaining),
            position_eph_m: eph,
            breach: self.cfg.geofence.check(&s.pos_ned_m, &self.home_ned),
            gcs_heard: self.gcs_heard,
            motor_failed: self.motor_detector.failed(),
        };
        let mut out = std::mem::take(&mut self.failsafes);
        self.failsafe.update(&inputs, &mut out);
        for fs in out.drain(..) {
            self.apply_failsafe(now, fs);
        }
        self.failsafes = out;
    }

    /// Takes a motor the ESC telemetry shows dead out of the allocation. If
    /// the others cannot give torque in every direction (any quad, a hexa)
    /// it gives up the heading and lands at once; the mission is failed.
    fn detect_motor_failure(&mut self, now: SimTime, f: &SensorFrame) {
        let (Some(esc), Some(mc)) = (f.esc, self.mc.as_mut()) else {
            return;
        };
        if !self.armed {
            return;
        }
        let n = esc.count.min(mc.rotors());
        let Some(m) =
            self.motor_detector
                .update(now, &self.out.controls[..n], &esc.speed_rad_s[..n])
        else {
            return;
        };
        mc.set_rotor_failed(m);
        let rotors = mc.rotors();
        if mc.yaw_free() {
            self.apply_failsafe(
                now,
                Failsafe {
                    reason: crate::failsafe::FailsafeReason::MotorFailure(m),
                    action: FailsafeAction::Land,
                    severity: 2,
                    text: format!(
                        "Motor {} failure: switching to Land (the other {} rotors cannot hold the heading)",
                        m + 1,
                        rotors - 1
                    ),
                },
            );
        }
    }

    /// Announces `fs` and, unless a more severe action is in force, does it.
    pub(super) fn apply_failsafe(&mut self, now: SimTime, fs: Failsafe) {
        let kind = if fs.action != FailsafeAction::Warn {
            EventKind::Failsafe
        } else if fs.severity == 0 {
            EventKind::Emergency
        } else if fs.severity <= 5 {
            EventKind::Warning
        } else {
            EventKind::Notice
        };
        // Severity is judged on the action a multicopter would take (a lost
        // position outranks a return, also for a boat that holds instead).
        let rank = fs.action;
        if rank != FailsafeAction::Warn && self.failsafe_action == Some(rank) {
            // Already doing it (a breach flickering on the boundary).
            return;
        }
        self.event(now, kind, None, fs.text.clone());
        if rank == FailsafeAction::Warn || self.failsafe_action.is_some_and(|a| a >= rank) {
            return;
        }
        self.failsafe_action = Some(rank);
        self.status.borrow_mut().failsafe = Some(fs.text);
        let action = if self.mc.is_some() {
            rank
        } else {
            rank.for_boat()
        };
        match action {
            FailsafeAction::Warn => {}
            FailsafeAction::Hold => self.enter_mode(now, FlightMode::Hold),
            FailsafeAction::Return => self.enter_mode(now, FlightMode::Return),
            FailsafeAction::Land => self.enter_mode(now, FlightMode::Land),
            FailsafeAction::Descend => {
                self.blind = true;
                self.est.set_unaccelerated(true);
                self.enter_mode(now, FlightMode::Land);
            }
            FailsafeAction::Terminate => {
                self.disarm(now, "flight termination");
                self.out = mavsitl_core::controller::Actuators::default();
            }
        }
    }

    /// Where Return goes from `here`: the closest of home and the rally
    /// points (PX4's RTL to the closest safe destination), NED m.
    pub(super) fn return_point(&self, here: &Vector3<f64>) -> Vector3<f64> {
        let d = |p: &Vector3<f64>| (p.xy() - here.xy()).norm();
        self.cfg
            .rally
            .iter()
            .copied()
            .filter(|r| d(r) < d(&self.home_ned))
            .min_by(|a, b| d(a).total_cmp(&d(b)))
            .unwrap_or(self.home_ned)
    }

    /// Re-reads the failsafe parameters (after a parameter was set).
    pub(super) fn reload_failsafe_params(&mut self) {
        let p = &self.cfg.params;
        self.failsafe.params = FailsafeParams::from_params(p);
        self.cfg.geofence.max_hor_dist_m = p.values().gf_max_hor_dist;
        self.cfg.geofence.max_ver_dist_m = p.values().gf_max_ver_dist;
    }

    /// Clears the failsafe state on disarming.
    pub(super) fn clear_failsafes(&mut self) {
        self.failsafe_action = None;
        self.blind = false;
        self.est.set_unaccelerated(false);
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{bench, on_truth_at};
    use super::super::*;
    use super::*;
    use crate::failsafe::FailsafeReason;
    use mavsitl_core::controller::{EscSample, PowerModuleSample};

    /// Armed, flying 20 m above home on perfect state: a quad in the air
    /// or a boat under way.
    fn under_way(boat: bool) -> (SimpleFlight, StatusHandle) {
        let down = if boat { 0.0 } else { -20.0 };
        let (mut sf, status) = on_truth_at(boat, Vector3::new(30.0, -5.0, down));
        sf.armed = true;
        (sf, status)
    }

    fn failsafe(action: FailsafeAction, severity: u8, text: &str) -> Failsafe {
        Failsafe {
            reason: FailsafeReason::BatteryLow,
            action,
            severity,
            text: text.into(),
        }
    }

    /// The last event's kind and words, mode changes aside.
    fn last(status: &StatusHandle) -> Option<(EventKind, String)> {
        let st = status.borrow();
        let said = st.events.iter().filter(|e| e.kind != EventKind::Mode);
        said.last().map(|e| (e.kind, e.detail.clone()))
    }

    /// A warning is said at its severity's kind (0 emergency, up to 5 a
    /// warning, above a notice) every time, and never acts; an action is a
    /// failsafe event.
    #[test]
    fn warnings_are_said_at_their_severity_and_act_on_nothing() {
        let (mut sf, status) = under_way(false);
        sf.set_mode(SimTime::ZERO, FlightMode::Mission);
        let t = SimTime::from_secs(3);
        let n = |status: &StatusHandle| status.borrow().events.len();
        for (severity, kind) in [
            (0, EventKind::Emergency),
            (1, EventKind::Warning),
            (5, EventKind::Warning),
            (6, EventKind::Notice),
            (7, EventKind::Notice),
        ] {
            for _ in 0..2 {
                let before = n(&status);
                sf.apply_failsafe(t, failsafe(FailsafeAction::Warn, severity, "w"));
                assert_eq!(n(&status), before + 1, "severity {severity}, said again");
                assert_eq!(last(&status), Some((kind, "w".into())), "{severity}");
            }
        }
        assert_eq!(sf.failsafe_action, None);
        assert_eq!(sf.mode, FlightMode::Mission);
        assert_eq!(status.borrow().failsafe, None);
        sf.apply_failsafe(t, failsafe(FailsafeAction::Hold, 2, "h"));
        assert_eq!(last(&status), Some((EventKind::Failsafe, "h".into())));
        assert_eq!(status.borrow().failsafe.as_deref(), Some("h"));
    }

    /// The most severe action in force wins: the same action again is not
    /// said again (a breach flickering on the boundary), a milder one is
    /// said but not done, a more severe one takes over.
    #[test]
    fn the_most_severe_failsafe_in_force_wins() {
        let (mut sf, status) = under_way(false);
        let t = SimTime::from_secs(3);
        let n = |status: &StatusHandle| status.borrow().events.len();
        sf.apply_failsafe(t, failsafe(FailsafeAction::Return, 2, "rtl"));
        assert_eq!(
            (sf.mode, sf.failsafe_action),
            (FlightMode::Return, Some(FailsafeAction::Return))
        );
        let before = n(&status);
        sf.apply_failsafe(t, failsafe(FailsafeAction::Return, 2, "rtl again"));
        assert_eq!(n(&status), before, "the same action is not said twice");
        sf.apply_failsafe(t, failsafe(FailsafeAction::Hold, 2, "hold"));
        assert_eq!(last(&status), Some((EventKind::Failsafe, "hold".into())));
        assert_eq!(
            (sf.mode, sf.failsafe_action),
            (FlightMode::Return, Some(FailsafeAction::Return))
        );
        assert_eq!(status.borrow().failsafe.as_deref(), Some("rtl"));
        sf.apply_failsafe(t, failsafe(FailsafeAction::Land, 2, "land"));
        assert_eq!(
            (sf.mode, sf.failsafe_action),
            (FlightMode::Land, Some(FailsafeAction::Land))
        );
        assert_eq!(status.borrow().failsafe.as_deref(), Some("land"));
        assert!(!sf.blind);
    }

    /// Descend lands blind, on the bare estimate; Terminate stops the
    /// motors and disarms, which clears the failsafe state.
    #[test]
    fn descend_lands_blind_and_terminate_disarms() {
        let (mut sf, _) = under_way(false);
        let t = SimTime::from_secs(3);
        sf.apply_failsafe(t, failsafe(FailsafeAction::Descend, 2, "d"));
        assert_eq!((sf.mode, sf.blind), (FlightMode::Land, true));
        sf.out.controls[0] = 0.6;
        sf.apply_failsafe(t, failsafe(FailsafeAction::Terminate, 0, "x"));
        assert!(!sf.armed);
        assert_eq!(sf.out, mavsitl_core::controller::Actuators::default());
        assert_eq!((sf.failsafe_action, sf.blind), (None, false));
    }

    /// A boat asked to land or descend holds instead; its return returns.
    #[test]
    fn a_boat_holds_where_a_multicopter_would_land() {
        for action in [FailsafeAction::Land, FailsafeAction::Descend] {
            let (mut sf, _) = under_way(true);
            sf.apply_failsafe(SimTime::from_secs(3), failsafe(action, 2, "l"));
            assert_eq!(sf.mode, FlightMode::Hold, "{action:?}");
            assert_eq!(sf.failsafe_action, Some(action), "ranked as asked");
            assert!(!sf.blind);
        }
        let (mut sf, _) = under_way(true);
        sf.apply_failsafe(
            SimTime::from_secs(3),
            failsafe(FailsafeAction::Return, 2, "r"),
        );
        assert_eq!(sf.mode, FlightMode::Return);
    }

    fn frame(remaining: f64) -> SensorFrame {
        SensorFrame {
            battery: Some(PowerModuleSample {
                voltage_v: 14.0,
                current_a: 10.0,
                consumed_mah: 4_000.0,
                consumed_j: 0.0,
                remaining,
            }),
            ..SensorFrame::default()
        }
    }

    /// The failsafes act only while flying: armed, and for a multicopter
    /// off the ground. A parameter set is read at once.
    #[test]
    fn failsafes_act_only_while_flying() {
        let t = SimTime::from_secs(5);
        let emergency = frame(0.02);
        let run = |boat: bool, armed: bool, on_ground: bool| {
            let (mut sf, status) = under_way(boat);
            sf.apply(SimTime::ZERO, Request::SetParam("COM_LOW_BAT_ACT", 3.0));
            sf.armed = armed;
            sf.on_ground = on_ground;
            sf.check_failsafes(t, &emergency);
            let said = last(&status).map(|(_, d)| d);
            (sf.mode, said)
        };
        let land = Some("Emergency battery level: switching to Land".to_string());
        assert_eq!(run(false, true, false), (FlightMode::Land, land.clone()));
        assert_eq!(run(false, true, true).1, None, "on the ground");
        assert_eq!(run(false, false, false).1, None, "disarmed");
        assert_eq!(run(true, true, true), (FlightMode::Hold, land), "a boat");
        assert_eq!(run(true, false, true).1, None, "a boat disarmed");
        // With the default COM_LOW_BAT_ACT (0) it only warns.
        let (mut sf, status) = under_way(false);
        sf.check_failsafes(t, &emergency);
        assert_eq!(last(&status).map(|(k, _)| k), Some(EventKind::Emergency));
        assert_eq!(sf.failsafe_action, None);
    }

    /// The position accuracy reported is the estimate's (99.99 m without a
    /// fix), or zero on perfect state.
    #[test]
    fn the_reported_accuracy_is_the_estimates_or_zero_on_perfect_state() {
        let (mut sf, status) = under_way(false);
        sf.check_failsafes(SimTime::from_secs(1), &frame(0.9));
        assert_eq!(status.borrow().position_eph_m, 0.0);
        sf.apply(SimTime::ZERO, Request::SetParam("SF_GROUND_TRUTH", 0.0));
        assert!(!sf.ground_truth);
        sf.check_failsafes(SimTime::from_secs(1), &frame(0.9));
        assert_eq!(status.borrow().position_eph_m, 99.99);
        sf.apply(SimTime::ZERO, Request::SetParam("SF_GROUND_TRUTH", 1.0));
        assert!(sf.ground_truth);
    }

    /// A rotor that stops turning under command for 0.3 s is taken out;
    /// a quad cannot hold its heading on three and lands. Disarmed, the
    /// telemetry is not judged.
    #[test]
    fn a_dead_rotor_lands_a_quad() {
        let esc = SensorFrame {
            esc: Some(EscSample {
                speed_rad_s: [800.0, 800.0, 800.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                count: 4,
            }),
            ..SensorFrame::default()
        };
        let run = |armed: bool| {
            let (mut sf, status) = under_way(false);
            sf.armed = armed;
            sf.out.controls[..4].fill(0.5);
            sf.check_failsafes(SimTime::from_secs(1), &esc);
            sf.check_failsafes(SimTime::from_secs_f64(1.4), &esc);
            (sf, status)
        };
        let (sf, status) = run(true);
        assert_eq!(sf.motor_detector.failed(), Some(3));
        assert_eq!(sf.mode, FlightMode::Land);
        assert_eq!(sf.failsafe_action, Some(FailsafeAction::Land));
        let said: Vec<String> = status
            .borrow()
            .events
            .iter()
            .map(|e| e.detail.clone())
            .collect();
        assert!(
            said.contains(
                &"Motor 4 failure: switching to Land (the other 3 rotors cannot hold the heading)"
                    .to_string()
            ),
            "{said:?}"
        );
        let (sf, _) = run(false);
        assert_eq!(sf.motor_detector.failed(), None);
    }

    /// The fence's distance limits follow their parameters at once.
    #[test]
    fn the_fence_limits_follow_their_parameters() {
        let (mut sf, _) = under_way(false);
        sf.apply(SimTime::ZERO, Request::SetParam("GF_MAX_HOR_DIST", 120.0));
        sf.apply(SimTime::ZERO, Request::SetParam("GF_MAX_VER_DIST", 45.0));
        assert_eq!(sf.cfg.geofence.max_hor_dist_m, 120.0);
        assert_eq!(sf.cfg.geofence.max_ver_dist_m, 45.0);
    }

    /// A return heads for the closest rally point nearer than home, else
    /// home; a rally point as far as home does not win.
    #[test]
    fn the_return_point_is_the_nearest_rally_point_closer_than_home() {
        let (mut sf, _) = bench(false, Vec::new());
        sf.home_ned = Vector3::new(10.0, 0.0, 0.0);
        sf.cfg.rally = vec![
            Vector3::new(110.0, 0.0, -20.0),
            Vector3::new(50.0, 0.0, -15.0),
        ];
        let at = |n: f64| Vector3::new(n, 0.0, -30.0);
        assert_eq!(sf.return_point(&at(60.0)), Vector3::new(50.0, 0.0, -15.0));
        assert_eq!(sf.return_point(&at(95.0)), Vector3::new(110.0, 0.0, -20.0));
        assert_eq!(sf.return_point(&at(0.0)), sf.home_ned);
        // 30 m from home and from the rally point at 50 m north.
        assert_eq!(sf.return_point(&at(30.0)), sf.home_ned);
    }
}
