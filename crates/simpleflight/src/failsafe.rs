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
