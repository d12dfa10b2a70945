//! SimpleFlight's failsafes: geofence, battery, position loss, data-link loss
//! and motor failure, with PX4's parameter names and defaults, decided as
//! PX4's failsafe framework decides them (the most severe action in force
//! wins; an action, once taken, is not repeated until its cause clears).
//!
//! Sans-IO: [`FailsafeMonitor::update`] takes what the autopilot knows and
//! returns the failsafes that just triggered; SimpleFlight switches mode,
//! logs the event and the ground-station endpoint announces it.

use super::geofence::Breach;
use super::params::ParamStore;
use mavsitl_core::time::SimTime;

/// How long the vehicle must be back inside the fence before a new breach
/// counts, s.
const FENCE_CLEAR_S: f64 = 3.0;

/// What a failsafe does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FailsafeAction {
    /// Only tell the pilot.
    Warn,
    /// Hold where it is (Loiter).
    Hold,
    /// Return to the closest safe point (home or a rally point) and land.
    Return,
    /// Land where it is.
    Land,
    /// Descend level, without position control (no position estimate).
    Descend,
    /// Stop the motors.
    Terminate,
}

impl FailsafeAction {
    /// The action's name as PX4 announces it (its `failsafe_action_t`).
    pub fn name(self) -> &'static str {
        match self {
            FailsafeAction::Warn => "warning",
            FailsafeAction::Hold => "Hold",
            FailsafeAction::Return => "RTL",
            FailsafeAction::Land => "Land",
            FailsafeAction::Descend => "Descend",
            FailsafeAction::Terminate => "terminate",
        }
    }

    /// What a boat does instead: it holds or returns, never lands.
    pub fn for_boat(self) -> Self {
        match self {
            FailsafeAction::Land | FailsafeAction::Descend => FailsafeAction::Hold,
            a => a,
        }
    }
}

/// Why a failsafe triggered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailsafeReason {
    /// Remaining charge below BAT_LOW_THR.
    BatteryLow,
    /// Below BAT_CRIT_THR.
    BatteryCritical,
    /// Below BAT_EMERGEN_THR.
    BatteryEmergency,
    /// Outside the geofence.
    Geofence(Breach),
    /// The position estimate is no longer valid.
    PositionLoss,
    /// No ground-station heartbeat for COM_DL_LOSS_T.
    DataLinkLoss,
    /// A motor stopped delivering thrust.
    MotorFailure(usize),
}

/// One failsafe that triggered, as it is announced.
#[derive(Debug, Clone, PartialEq)]
pub struct Failsafe {
    /// Why.
    pub reason: FailsafeReason,
    /// What is done.
    pub action: FailsafeAction,
    /// MAV_SEVERITY of the announcement (0 emergency … 6 info).
    pub severity: u8,
    /// The announcement.
    pub text: String,
}

/// PX4's failsafe parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FailsafeParams {
    /// GF_ACTION: 0 none, 1 warning, 2 hold, 3 return, 4 terminate, 5 land.
    pub gf_action: i32,
    /// BAT_LOW_THR, fraction.
    pub bat_low_thr: f64,
    /// BAT_CRIT_THR, fraction.
    pub bat_crit_thr: f64,
    /// BAT_EMERGEN_THR, fraction.
    pub bat_emergen_thr: f64,
    /// COM_LOW_BAT_ACT: 0 warning, 2 land, 3 return at critical and land at
    /// emergency level.
    pub com_low_bat_act: i32,
    /// COM_POS_FS_DELAY, s: how long the position must be invalid.
    pub com_pos_fs_delay_s: f64,
    /// COM_POS_FS_EPH, m: horizontal accuracy beyond which it is invalid.
    pub com_pos_fs_eph_m: f64,
    /// NAV_DLL_ACT: 0 disabled, 1 hold, 2 return, 3 land, 5 terminate.
    pub nav_dll_act: i32,
    /// COM_DL_LOSS_T, s.
    pub com_dl_loss_t_s: f64,
    /// COM_ACT_FAIL_ACT: 0 disabled (warn), 1 hold, 2 land, 3 return, 4 terminate.
    pub com_act_fail_act: i32,
}

impl FailsafeParams {
    /// The parameters from `p` (PX4's defaults where unset).
    pub fn from_params(p: &ParamStore) -> Self {
        let v = p.values();
        FailsafeParams {
            gf_action: v.gf_action as i32,
            bat_low_thr: v.bat_low_thr,
            bat_crit_thr: v.bat_crit_thr,
            bat_emergen_thr: v.bat_emergen_thr,
            com_low_bat_act: v.com_low_bat_act as i32,
            com_pos_fs_delay_s: v.com_pos_fs_delay,
            com_pos_fs_eph_m: v.com_pos_fs_eph,
            nav_dll_act: v.nav_dll_act as i32,
            com_dl_loss_t_s: v.com_dl_loss_t,
            com_act_fail_act: v.com_act_fail_act as i32,
        }
    }
}

/// What the autopilot knows when it checks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FailsafeInputs {
    /// Now.
    pub now: SimTime,
    /// Armed and flying (a multicopter in the air, a boat under way).
    pub flying: bool,
    /// Remaining charge 0..1 from the power module, if any.
    pub battery_remaining: Option<f64>,
    /// Horizontal accuracy of the position estimate, m.
    pub position_eph_m: f64,
    /// The geofence breach at the estimated position, if any.
    pub breach: Option<Breach>,
    /// When a ground station was last heard (None: never).
    pub gcs_heard: Option<SimTime>,
    /// A motor found failed (its index), if any.
    pub motor_failed: Option<usize>,
}

/// Watches the inputs and triggers failsafes.
#[derive(Debug, Clone)]
pub struct FailsafeMonitor {
    /// The parameters in force.
    pub params: FailsafeParams,
    battery_level: u8,
    breached: bool,
    /// Since when the vehicle has been back inside the fence.
    inside_since: Option<SimTime>,
    pos_bad_since: Option<SimTime>,
    pos_lost: bool,
    link_lost: bool,
    motor_failed: bool,
}

impl FailsafeMonitor {
    /// A monitor with `params`, nothing triggered.
    pub fn new(params: FailsafeParams) -> Self {
        FailsafeMonitor {
            params,
            battery_level: 0,
            breached: false,
            inside_since: None,
            pos_bad_since: None,
            pos_lost: false,
            link_lost: false,
            motor_failed: false,
        }
    }

    /// Whether the position estimate has been declared lost.
    pub fn position_lost(&self) -> bool {
        self.pos_lost
    }

    /// The failsafes that trigger now (most are once per cause).
    pub fn update(&mut self, i: &FailsafeInputs, out: &mut Vec<Failsafe>) {
        self.check_battery(i, out);
        self.check_fence(i, out);
        self.check_position(i, out);
        self.check_link(i, out);
        if let (Some(m), false) = (i.motor_failed, self.motor_failed) {
            self.motor_failed = true;
            let action = match self.params.com_act_fail_act {
                1 => FailsafeAction::Hold,
                2 => FailsafeAction::Land,
                3 => FailsafeAction::Return,
                4 => FailsafeAction::Terminate,
                _ => FailsafeAction::Warn,
            };
            out.push(announce(FailsafeReason::MotorFailure(m), action));
        }
    }

    fn check_battery(&mut self, i: &FailsafeInputs, out: &mut Vec<Failsafe>) {
        let Some(r) = i.battery_remaining.filter(|r| r.is_finite()) else {
            return;
        };
        let p = &self.params;
        let level = if r < p.bat_emergen_thr {
            3
        } else if r < p.bat_crit_thr {
            2
        } else if r < p.bat_low_thr {
            1
        } else {
            0
        };
        if level <= self.battery_level {
            return;
        }
        self.battery_level = level;
        let (reason, action) = match (level, p.com_low_bat_act) {
            (1, _) => (FailsafeReason::BatteryLow, FailsafeAction::Warn),
            (2, 2) => (FailsafeReason::BatteryCritical, FailsafeAction::Land),
            (2, 3) => (FailsafeReason::BatteryCritical, FailsafeAction::Return),
            (2, _) => (FailsafeReason::BatteryCritical, FailsafeAction::Warn),
            (_, 2 | 3) => (FailsafeReason::BatteryEmergency, FailsafeAction::Land),
            _ => (FailsafeReason::BatteryEmergency, FailsafeAction::Warn),
        };
        if i.flying || action == FailsafeAction::Warn {
            out.push(announce(reason, action));
        }
    }

    fn check_fence(&mut self, i: &FailsafeInputs, out: &mut Vec<Failsafe>) {
        let outside = i.flying && i.breach.is_some();
        // A breach ends once the vehicle has been back inside for
        // FENCE_CLEAR_S, so that holding on the boundary (estimate noise)
        // does not trigger it again and again.
        if outside {
            self.inside_since = None;
        } else if self.breached {
            let since = *self.inside_since.get_or_insert(i.now);
            if i.now.secs_since(since) >= FENCE_CLEAR_S {
                self.breached = false;
            }
            return;
        }
        if outside && !self.breached {
            let action = match self.params.gf_action {
                0 => None,
                1 => Some(FailsafeAction::Warn),
                2 => Some(FailsafeAction::Hold),
                3 => Some(FailsafeAction::Return),
                4 => Some(FailsafeAction::Terminate),
                _ => Some(FailsafeAction::Land),
            };
            if let (Some(a), Some(b)) = (action, i.breach) {
                out.push(announce(FailsafeReason::Geofence(b), a));
            }
            self.breached = true;
        }
    }

    fn check_position(&mut self, i: &FailsafeInputs, out: &mut Vec<Failsafe>) {
        // (NaN counts as bad.)
        let good = i.position_eph_m <= self.params.com_pos_fs_eph_m;
        let bad = !good;
        if !bad {
            self.pos_bad_since = None;
            self.pos_lost = false;
            return;
        }
        let since = *self.pos_bad_since.get_or_insert(i.now);
        if !self.pos_lost && i.now.secs_since(since) >= self.params.com_pos_fs_delay_s {
            self.pos_lost = true;
            if i.flying {
                out.push(announce(
                    FailsafeReason::PositionLoss,
                    FailsafeAction::Descend,
                ));
            }
        }
    }

    fn check_link(&mut self, i: &FailsafeInputs, out: &mut Vec<Failsafe>) {
        let Some(heard) = i.gcs_heard else {
            return;
        };
        let lost = i.now.secs_since(heard) > self.params.com_dl_loss_t_s;
        if lost && !self.link_lost {
            let action = match self.params.nav_dll_act {
                1 => Some(FailsafeAction::Hold),
                2 => Some(FailsafeAction::Return),
                3 => Some(FailsafeAction::Land),
                5 => Some(FailsafeAction::Terminate),
                _ => None,
            };
            match action {
                Some(a) if i.flying => out.push(announce(FailsafeReason::DataLinkLoss, a)),
                _ => out.push(Failsafe {
                    reason: FailsafeReason::DataLinkLoss,
                    action: FailsafeAction::Warn,
                    severity: 4,
                    text: "Connection to ground station lost".into(),
                }),
            }
        }
        if !lost && self.link_lost {
            out.push(Failsafe {
                reason: FailsafeReason::DataLinkLoss,
                action: FailsafeAction::Warn,
                severity: 6,
                text: "Data link regained".into(),
            });
        }
        self.link_lost = lost;
    }
}

/// Finds a motor that stopped delivering thrust from the ESC telemetry (as
/// PX4's failure detector does from ESC reports): a rotor commanded above
/// 15 % whose speed² per unit command falls below a quarter of the healthy
/// rotors' median for 0.3 s.
#[derive(Debug, Clone, Default)]
pub struct MotorFailureDetector {
    low_since: [Option<SimTime>; 8],
    failed: Option<usize>,
}

impl MotorFailureDetector {
    /// The motor found failed, if any.
    pub fn failed(&self) -> Option<usize> {
        self.failed
    }

    /// Checks the commands (0..1, motor order) against the reported speeds
    /// (rad/s); returns a motor that has just been found failed.
    pub fn update(&mut self, now: SimTime, commands: &[f64], speeds: &[f64]) -> Option<usize> {
        if self.failed.is_some() {
            return None;
        }
        let n = commands.len().min(speeds.len()).min(8);
        let mut ratio = [f64::NAN; 8];
        let mut sorted = [0.0; 8];
        let mut k = 0;
        for i in 0..n {
            if commands[i] > 0.15 {
                ratio[i] = speeds[i] * speeds[i] / commands[i];
                sorted[k] = ratio[i];
                k += 1;
            }
        }
        if k < 3 {
            self.low_since = [None; 8];
            return None;
        }
        sorted[..k].sort_by(|a, b| a.total_cmp(b));
        let median = sorted[k / 2];
        for (i, (r, low_since)) in ratio.iter().zip(&mut self.low_since).take(n).enumerate() {
            // (NaN: not commanded, not judged.)
            let low = *r < 0.25 * median;
            if !low {
                *low_since = None;
                continue;
            }
            let since = *low_since.get_or_insert(now);
            if now.secs_since(since) >= 0.3 {
                self.failed = Some(i);
                return Some(i);
            }
        }
        None
    }
}

/// The announcement of `reason` leading to `action`, worded as PX4's
/// failsafe framework words its events (`commander/failsafe/framework.cpp`):
/// "{cause}: switching to {action}" at critical severity when it acts; the
/// battery warnings' own texts, else "Failsafe warning: {cause}", at warning
/// severity when it only warns.
fn announce(reason: FailsafeReason, action: FailsafeAction) -> Failsafe {
    let cause = match reason {
        FailsafeReason::BatteryLow => "Low battery level".to_string(),
        FailsafeReason::BatteryCritical => "Critical battery level".to_string(),
        FailsafeReason::BatteryEmergency => "Emergency battery level".to_string(),
        FailsafeReason::Geofence(b) => format!("Geofence violation ({})", b.describe()),
        FailsafeReason::PositionLoss => "Position estimate lost".to_string(),
        FailsafeReason::DataLinkLoss => "GCS connection loss".to_string(),
        FailsafeReason::MotorFailure(m) => format!("Motor {} failure", m + 1),
    };
    let (severity, text) = match (action, reason) {
        (FailsafeAction::Warn, FailsafeReason::BatteryLow) => {
            (4, "Low battery level, return advised".to_string())
        }
        (FailsafeAction::Warn, FailsafeReason::BatteryCritical) => {
            (4, "Critical battery level, land now".to_string())
        }
        (FailsafeAction::Warn, FailsafeReason::BatteryEmergency) => {
            (0, "Emergency battery level, land immediately".to_string())
        }
        (FailsafeAction::Warn, _) => (4, format!("Failsafe warning: {cause}")),
        (a, _) => (2, format!("{cause}: switching to {}", a.name())),
    };
    Failsafe {
        reason,
        action,
        severity,
        text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geofence::Breach;

    fn inputs(t: f64) -> FailsafeInputs {
        FailsafeInputs {
            now: SimTime::from_secs_f64(t),
            flying: true,
            battery_remaining: Some(0.9),
            position_eph_m: 1.0,
            breach: None,
            gcs_heard: None,
            motor_failed: None,
        }
    }

    fn run(m: &mut FailsafeMonitor, i: FailsafeInputs) -> Vec<Failsafe> {
        let mut out = Vec::new();
        m.update(&i, &mut out);
        out
    }

    fn px4_defaults() -> FailsafeParams {
        FailsafeParams::from_params(&ParamStore::default())
    }

    /// The one failsafe `i` triggers on a new monitor with `p`, if any.
    fn first(p: FailsafeParams, i: FailsafeInputs) -> Option<(FailsafeAction, u8, String)> {
        let fs = run(&mut FailsafeMonitor::new(p), i);
        assert!(fs.len() <= 1, "{fs:?}");
        fs.into_iter()
            .next()
            .map(|f| (f.action, f.severity, f.text))
    }

    #[test]
    fn actions_are_named_as_px4_names_them_and_a_boat_never_lands() {
        use FailsafeAction::*;
        let names = [Warn, Hold, Return, Land, Descend, Terminate].map(FailsafeAction::name);
        assert_eq!(
            names,
            ["warning", "Hold", "RTL", "Land", "Descend", "terminate"]
        );
        let boat = [Warn, Hold, Return, Land, Descend, Terminate].map(FailsafeAction::for_boat);
        assert_eq!(boat, [Warn, Hold, Return, Hold, Hold, Terminate]);
    }

    /// COM_ACT_FAIL_ACT 0 warns, 1 holds, 2 lands, 3 returns, 4 stops the
    /// motors; a failure is announced once, counting motors from 1.
    #[test]
    fn a_motor_failure_acts_as_com_act_fail_act_says_once() {
        let failed = FailsafeInputs {
            motor_failed: Some(2),
            ..inputs(3.0)
        };
        let expected = [
            (
                0,
                FailsafeAction::Warn,
                4,
                "Failsafe warning: Motor 3 failure",
            ),
            (
                1,
                FailsafeAction::Hold,
                2,
                "Motor 3 failure: switching to Hold",
            ),
            (
                2,
                FailsafeAction::Land,
                2,
                "Motor 3 failure: switching to Land",
            ),
            (
                3,
                FailsafeAction::Return,
                2,
                "Motor 3 failure: switching to RTL",
            ),
            (
                4,
                FailsafeAction::Terminate,
                2,
                "Motor 3 failure: switching to terminate",
            ),
        ];
        for (act, action, severity, text) in expected {
            let mut p = px4_defaults();
            p.com_act_fail_act = act;
            let mut m = FailsafeMonitor::new(p);
            let fs = run(&mut m, failed);
            assert_eq!(fs.len(), 1, "COM_ACT_FAIL_ACT {act}");
            assert_eq!((fs[0].action, fs[0].severity), (action, severity));
            assert_eq!(
                (fs[0].reason, fs[0].text.as_str()),
                (FailsafeReason::MotorFailure(2), text)
            );
            assert!(run(&mut m, failed).is_empty(), "once");
        }
    }

    /// PX4's battery levels are strict: a charge of exactly BAT_LOW_THR is
    /// not low, exactly BAT_CRIT_THR is low, exactly BAT_EMERGEN_THR is
    /// critical.
    #[test]
    fn a_charge_exactly_at_a_threshold_is_the_level_above() {
        let p = px4_defaults();
        let at = |r: f64| FailsafeInputs {
            battery_remaining: Some(r),
            ..inputs(1.0)
        };
        let level = |r: f64| first(p, at(r)).map(|(_, _, text)| text);
        assert_eq!(level(p.bat_low_thr), None);
        let low = Some("Low battery level, return advised".to_string());
        let critical = Some("Critical battery level, land now".to_string());
        let emergency = Some("Emergency battery level, land immediately".to_string());
        assert_eq!(level(p.bat_crit_thr), low);
        assert_eq!(level(p.bat_emergen_thr), critical);
        assert_eq!(level(0.049), emergency);
        assert_eq!(level(f64::NAN), None);
    }

    /// Each COM_LOW_BAT_ACT at the critical and emergency levels, flying
    /// and on the ground: on the ground only the warnings are said.
    #[test]
    fn battery_actions_and_their_words_follow_com_low_bat_act() {
        use FailsafeAction::*;
        let expected = [
            (0, 0.06, Warn, 4, "Critical battery level, land now"),
            (
                2,
                0.06,
                Land,
                2,
                "Critical battery level: switching to Land",
            ),
            (
                3,
                0.06,
                Return,
                2,
                "Critical battery level: switching to RTL",
            ),
            (
                0,
                0.04,
                Warn,
                0,
                "Emergency battery level, land immediately",
            ),
            (
                2,
                0.04,
                Land,
                2,
                "Emergency battery level: switching to Land",
            ),
            (
                3,
                0.04,
                Land,
                2,
                "Emergency battery level: switching to Land",
            ),
        ];
        for (act, r, action, severity, text) in expected {
            let mut p = px4_defaults();
            p.com_low_bat_act = act;
            let i = FailsafeInputs {
                battery_remaining: Some(r),
                ..inputs(1.0)
            };
            let said = first(p, i);
            assert_eq!(
                said,
                Some((action, severity, text.to_string())),
                "{act} {r}"
            );
            let landed = first(p, FailsafeInputs { flying: false, ..i });
            assert_eq!(landed.is_some(), action == Warn, "{act} {r} on the ground");
        }
    }

    /// GF_ACTION 0 does nothing, 1 warns, 2 holds, 3 returns, 4 stops the
    /// motors, 5 lands; a vehicle on the ground breaches nothing.
    #[test]
    fn a_breach_acts_as_gf_action_says_only_in_flight() {
        use FailsafeAction::*;
        let out = FailsafeInputs {
            breach: Some(Breach::MaxVertical),
            ..inputs(2.0)
        };
        let expected = [
            (0, None),
            (
                1,
                Some((
                    Warn,
                    4,
                    "Failsafe warning: Geofence violation (above GF_MAX_VER_DIST)",
                )),
            ),
            (
                2,
                Some((
                    Hold,
                    2,
                    "Geofence violation (above GF_MAX_VER_DIST): switching to Hold",
                )),
            ),
            (
                3,
                Some((
                    Return,
                    2,
                    "Geofence violation (above GF_MAX_VER_DIST): switching to RTL",
                )),
            ),
            (
                4,
                Some((
                    Terminate,
                    2,
                    "Geofence violation (above GF_MAX_VER_DIST): switching to terminate",
                )),
            ),
            (
                5,
                Some((
                    Land,
                    2,
                    "Geofence violation (above GF_MAX_VER_DIST): switching to Land",
                )),
            ),
        ];
        for (gf, want) in expected {
            let mut p = px4_defaults();
            p.gf_action = gf;
            let want = want.map(|(a, s, t)| (a, s, t.to_string()));
            assert_eq!(first(p, out), want, "GF_ACTION {gf}");
            assert_eq!(
                first(
                    p,
                    FailsafeInputs {
                        flying: false,
                        ..out
                    }
                ),
                None
            );
        }
    }

    /// A breach is announced once; it ends only after 3 s back inside, so
    /// that a vehicle holding on the boundary is not told again and again.
    #[test]
    fn a_breach_counts_again_only_after_3_s_back_inside() {
        let mut m = FailsafeMonitor::new(px4_defaults());
        let out = |t: f64| FailsafeInputs {
            breach: Some(Breach::Inclusion),
            ..inputs(t)
        };
        assert_eq!(run(&mut m, out(1.0)).len(), 1);
        assert!(run(&mut m, out(1.1)).is_empty(), "once per breach");
        assert!(run(&mut m, inputs(2.0)).is_empty());
        assert!(run(&mut m, inputs(4.9)).is_empty());
        assert!(
            run(&mut m, out(5.0)).is_empty(),
            "2.9 s inside: the same breach"
        );
        assert!(run(&mut m, inputs(6.0)).is_empty());
        assert!(run(&mut m, inputs(9.0)).is_empty(), "3 s inside: cleared");
        let again = run(&mut m, out(9.1));
        assert_eq!(again[0].reason, FailsafeReason::Geofence(Breach::Inclusion));
        assert_eq!(again[0].action, FailsafeAction::Hold);
    }

    /// NAV_DLL_ACT 1 holds, 2 returns, 3 lands, 5 stops the motors; 0 (and
    /// any action on the ground) only says the link is lost. The link is
    /// lost after more than COM_DL_LOSS_T, and its return is said.
    #[test]
    fn a_lost_link_acts_as_nav_dll_act_says_and_its_return_is_said() {
        use FailsafeAction::*;
        let heard = |t: f64| FailsafeInputs {
            gcs_heard: Some(SimTime::from_secs(5)),
            ..inputs(t)
        };
        let lost = "Connection to ground station lost";
        let expected = [
            (0, Warn, 4, lost.to_string()),
            (
                1,
                Hold,
                2,
                "GCS connection loss: switching to Hold".to_string(),
            ),
            (
                2,
                Return,
                2,
                "GCS connection loss: switching to RTL".to_string(),
            ),
            (
                3,
                Land,
                2,
                "GCS connection loss: switching to Land".to_string(),
            ),
            (
                5,
                Terminate,
                2,
                "GCS connection loss: switching to terminate".to_string(),
            ),
            (6, Warn, 4, lost.to_string()),
        ];
        for (act, action, severity, text) in expected {
            let mut p = px4_defaults();
            p.nav_dll_act = act;
            let mut m = FailsafeMonitor::new(p);
            assert!(run(&mut m, heard(15.0)).is_empty(), "exactly COM_DL_LOSS_T");
            assert_eq!(first(p, heard(15.001)), Some((action, severity, text)));
            let grounded = FailsafeInputs {
                flying: false,
                ..heard(15.001)
            };
            assert_eq!(first(p, grounded), Some((Warn, 4, lost.to_string())));
        }
        let mut m = FailsafeMonitor::new(px4_defaults());
        assert_eq!(run(&mut m, heard(16.0)).len(), 1);
        assert!(run(&mut m, heard(17.0)).is_empty(), "once while lost");
        let back = FailsafeInputs {
            gcs_heard: Some(SimTime::from_secs(17)),
            ..inputs(17.5)
        };
        let regained = run(&mut m, back);
        assert_eq!(regained[0].text, "Data link regained");
        assert_eq!((regained[0].action, regained[0].severity), (Warn, 6));
        assert!(run(&mut m, back).is_empty());
    }

    /// An accuracy of exactly COM_POS_FS_EPH is still good; a worse one for
    /// exactly COM_POS_FS_DELAY loses the position, said only in flight.
    #[test]
    fn the_position_is_lost_at_the_delay_and_said_only_in_flight() {
        let p = px4_defaults();
        let eph = |e: f64, t: f64| FailsafeInputs {
            position_eph_m: e,
            ..inputs(t)
        };
        let mut m = FailsafeMonitor::new(p);
        assert!(run(&mut m, eph(p.com_pos_fs_eph_m, 1.0)).is_empty());
        assert!(run(&mut m, eph(p.com_pos_fs_eph_m, 9.0)).is_empty());
        assert!(!m.position_lost());
        let mut grounded = FailsafeMonitor::new(p);
        let on_ground = |t: f64| FailsafeInputs {
            flying: false,
            ..eph(f64::NAN, t)
        };
        assert!(run(&mut grounded, on_ground(1.0)).is_empty());
        assert!(run(&mut grounded, on_ground(2.0)).is_empty());
        assert!(grounded.position_lost(), "NaN is bad, and lost after 1 s");
        let fs = run(&mut m, eph(5.01, 10.0));
        assert!(fs.is_empty());
        let fs = run(&mut m, eph(5.01, 10.0 + p.com_pos_fs_delay_s));
        assert_eq!(fs[0].text, "Position estimate lost: switching to Descend");
        assert!(run(&mut m, eph(5.01, 20.0)).is_empty(), "once");
    }

    #[test]
    fn a_motor_without_speed_is_found_after_0_3_s() {
        let mut d = MotorFailureDetector::default();
        let cmd = [0.5; 6];
        let mut speeds = [700.0; 6];
        for ms in 0..1000u64 {
            if ms == 200 {
                speeds[4] = 20.0;
            }
            let found = d.update(SimTime::from_micros(ms * 1000), &cmd, &speeds);
            if found.is_some() {
                assert_eq!((found, ms), (Some(4), 500));
            }
        }
        assert_eq!(d.failed(), Some(4));
    }

    /// The first motor `speeds` lets the detector find within 1 s of
    /// constant `commands`, and when, ms.
    fn found_within_1_s(commands: &[f64], speeds: &[f64]) -> Option<(usize, u64)> {
        let mut d = MotorFailureDetector::default();
        (0..1000u64).find_map(|ms| {
            d.update(SimTime::from_micros(ms * 1000), commands, speeds)
                .map(|m| (m, ms))
        })
    }

    /// Speed² per unit command is what a healthy rotor holds whatever its
    /// command; a rotor below a quarter of the median's is failed, one at
    /// exactly a quarter is not. Three judged rotors are enough, a rotor at
    /// 15 % or less is not judged.
    #[test]
    fn a_motor_is_judged_on_its_speed_squared_per_command() {
        // Healthy rotors on different commands, speed ∝ √command.
        let cmd = [0.2, 0.8, 0.8, 0.45];
        let healthy = cmd.map(|c: f64| 1000.0 * c.sqrt());
        assert_eq!(found_within_1_s(&cmd, &healthy), None);
        // At 0.2 of the healthy speed² (√0.2 of the speed): failed. At 0.3
        // (√0.3 of the speed): not.
        let mut weak = healthy;
        weak[0] *= 0.2f64.sqrt();
        assert_eq!(found_within_1_s(&cmd, &weak), Some((0, 300)));
        weak[0] = healthy[0] * 0.3f64.sqrt();
        assert_eq!(found_within_1_s(&cmd, &weak), None);
        // Exactly a quarter: 400 rad/s where 800 is healthy, in binary exactly.
        let cmd = [0.5; 4];
        assert_eq!(found_within_1_s(&cmd, &[800.0, 800.0, 400.0, 800.0]), None);
        assert_eq!(
            found_within_1_s(&cmd, &[800.0, 800.0, 399.0, 800.0]),
            Some((2, 300))
        );
        // Three commanded rotors are enough to judge.
        let three = [0.5, 0.5, 0.5, 0.0];
        assert_eq!(
            found_within_1_s(&three, &[800.0, 0.0, 800.0, 0.0]),
            Some((1, 300))
        );
        // A stopped rotor commanded exactly 15 % is not judged.
        let idle = [0.5, 0.5, 0.5, 0.15];
        assert_eq!(found_within_1_s(&idle, &[800.0, 800.0, 800.0, 0.0]), None);
        assert_eq!(
            found_within_1_s(&[0.5, 0.5, 0.5, 0.151], &[800.0, 800.0, 800.0, 0.0]),
            Some((3, 300))
        );
    }

    #[test]
    fn battery_levels_trigger_once_each_as_com_low_bat_act_says() {
        let mut p = FailsafeParams::from_params(&ParamStore::default());
        p.com_low_bat_act = 3;
        let mut m = FailsafeMonitor::new(p);
        let at = |r: f64| FailsafeInputs {
            battery_remaining: Some(r),
            ..inputs(1.0)
        };
        assert!(run(&mut m, at(0.5)).is_empty());
        let low = run(&mut m, at(0.14));
        assert_eq!(low[0].action, FailsafeAction::Warn);
        assert!(run(&mut m, at(0.13)).is_empty(), "once per level");
        assert_eq!(run(&mut m, at(0.06))[0].action, FailsafeAction::Return);
        assert_eq!(run(&mut m, at(0.04))[0].action, FailsafeAction::Land);
    }

    #[test]
    fn the_position_is_lost_after_com_pos_fs_delay() {
        let mut m = FailsafeMonitor::new(FailsafeParams::from_params(&ParamStore::default()));
        let bad = |t: f64| FailsafeInputs {
            position_eph_m: 9.0,
            ..inputs(t)
        };
        assert!(run(&mut m, bad(10.0)).is_empty());
        assert!(run(&mut m, bad(10.9)).is_empty());
        let fs = run(&mut m, bad(11.0));
        assert_eq!(fs[0].action, FailsafeAction::Descend);
        assert!(m.position_lost());
        assert!(run(&mut m, inputs(12.0)).is_empty());
        assert!(!m.position_lost());
    }

    #[test]
    fn the_link_fails_after_com_dl_loss_t_only_once_a_gcs_was_heard() {
        let mut p = FailsafeParams::from_params(&ParamStore::default());
        p.nav_dll_act = 2;
        let mut m = FailsafeMonitor::new(p);
        assert!(run(&mut m, inputs(100.0)).is_empty());
        let heard = |t: f64| FailsafeInputs {
            gcs_heard: Some(SimTime::from_secs(5)),
            ..inputs(t)
        };
        assert!(run(&mut m, heard(15.0)).is_empty());
        assert_eq!(run(&mut m, heard(15.1))[0].action, FailsafeAction::Return);
        assert!(run(&mut m, heard(20.0)).is_empty());
    }
}
