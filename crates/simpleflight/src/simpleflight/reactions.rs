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
    use super::super::test_support::bench;
    use super::*;

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
