//! A mission turned into what SimpleFlight executes: positions in the local
//! NED frame, commands checked against what it can fly.

use mavsitl_core::vehicle::VehicleKind;
use nalgebra::Vector3;

use mavsitl_core::geo::{GeoPoint, LocalFrame};
use mavsitl_mavlink::mission::commands::{self, classify, command_name, Support};
use mavsitl_mavlink::mission::{
    Mission, MissionItem, FRAME_GLOBAL, FRAME_GLOBAL_RELATIVE_ALT, FRAME_GLOBAL_TERRAIN_ALT,
};

/// One executable step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Step {
    /// Climb to `alt_m` above home (at `pos`'s horizontal position if given).
    Takeoff {
        /// Horizontal position, if the item gives one.
        pos_ne: Option<[f64; 2]>,
        /// Altitude above home, m.
        alt_m: f64,
    },
    /// Fly to `pos` (NED m); hold `hold_s` there; `radius_m` acceptance.
    Waypoint {
        /// Target, NED m.
        pos: Vector3<f64>,
        /// Hold time, s.
        hold_s: f64,
        /// Acceptance radius, m.
        radius_m: f64,
    },
    /// Fly to `pos` (if given) and hold `time_s` (infinite for LOITER_UNLIM).
    Loiter {
        /// Position, NED m (None: where the vehicle is).
        pos: Option<Vector3<f64>>,
        /// Hold time, s (infinite: forever).
        time_s: f64,
    },
    /// Wait `time_s` where the vehicle is.
    Delay {
        /// Seconds.
        time_s: f64,
    },
    /// Return to home and land.
    ReturnToLaunch,
    /// Land at `pos_ne` (or where the vehicle is).
    Land {
        /// Horizontal position, if given.
        pos_ne: Option<[f64; 2]>,
    },
    /// Jump to step index `target`, `repeat` more times (negative: forever).
    Jump {
        /// Target item index.
        target: usize,
        /// Repeats.
        repeat: i64,
    },
    /// Change the horizontal speed (m/s).
    ChangeSpeed {
        /// New speed, m/s (None: unchanged).
        speed_m_s: Option<f64>,
    },
    /// Set home to `pos` (None: the current position).
    SetHome {
        /// New home, NED m.
        pos: Option<Vector3<f64>>,
    },
    /// An item SimpleFlight cannot perform that is safe to skip.
    Skip {
        /// Its MAV_CMD.
        command: u16,
    },
}

/// Why a mission cannot be flown.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("mission item {index} ({name}): {reason}")]
pub struct PlanError {
    /// Item index (0-based, as in QGroundControl's list after home).
    pub index: usize,
    /// Command name.
    pub name: String,
    /// Why.
    pub reason: String,
}

/// A warning about an item that will be skipped.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanWarning {
    /// Item index.
    pub index: usize,
    /// What is skipped and why.
    pub message: String,
}

fn position(it: &MissionItem, frame: &LocalFrame, home_alt_m: f64) -> Option<Vector3<f64>> {
    if !it.is_global() {
        return None;
    }
    if !(it.x.is_finite() && it.y.is_finite()) || (it.x == 0.0 && it.y == 0.0) {
        return None;
    }
    let alt_rel = match it.frame {
        FRAME_GLOBAL | 5 => it.z - home_alt_m,
        FRAME_GLOBAL_RELATIVE_ALT | FRAME_GLOBAL_TERRAIN_ALT | 6 | 11 => it.z,
        _ => it.z,
    };
    let ned = frame.to_ned(&GeoPoint::from_deg(it.x, it.y, frame.origin().alt_m));
    Some(Vector3::new(ned.x, ned.y, -alt_rel))
}

/// Converts a mission into steps for a vehicle of `kind`, with home
/// at `frame`'s origin (altitude `home_alt_m` AMSL).
///
/// # Errors
/// [`PlanError`] for an item that cannot be flown and must not be skipped.
pub fn compile(
    mission: &Mission,
    frame: &LocalFrame,
    home_alt_m: f64,
    kind: VehicleKind,
    default_radius: f64,
) -> Result<(Vec<Step>, Vec<PlanWarning>), PlanError> {
    let ctx = ItemContext {
        frame,
        home_alt_m,
        kind,
        default_radius,
        items: mission.items.len(),
    };
    let mut steps = Vec::with_capacity(mission.items.len());
    let mut warnings = Vec::new();
    for (index, it) in mission.items.iter().enumerate() {
        let step = ctx.step(it).map_err(|reason| PlanError {
            index,
            name: command_name(it.command),
            reason,
        })?;
        if let Some(message) = skip_warning(index, it, &step, kind) {
            warnings.push(PlanWarning { index, message });
        }
        steps.push(step);
    }
    check_jumps(&steps)?;
    Ok((steps, warnings))
}

/// What every item is compiled against.
struct ItemContext<'a> {
    frame: &'a LocalFrame,
    home_alt_m: f64,
    kind: VehicleKind,
    default_radius: f64,
    /// The mission's length (jump targets must be inside it).
    items: usize,
}

/// A time parameter, s: NaN reads as 0, negatives as 0.
fn seconds(v: f64) -> f64 {
    if v.is_finite() {
        v.max(0.0)
    } else {
        0.0
    }
}

/// Why a skipped item was skipped, for the operator.
fn skip_warning(index: usize, it: &MissionItem, step: &Step, kind: VehicleKind) -> Option<String> {
    let name = command_name(it.command);
    match (step, classify(it.command)) {
        (Step::Skip { .. }, Support::Skipped) => Some(format!(
            "mission item {index} ({name}) is not supported; skipped"
        )),
        (Step::Skip { .. }, _) if it.command == commands::NAV_TAKEOFF && !kind.is_multirotor() => {
            Some(format!(
                "mission item {index} ({name}) has no meaning for a boat; skipped"
            ))
        }
        _ => None,
    }
}

impl ItemContext<'_> {
    /// The step for an item, or why it cannot be flown.
    fn step(&self, it: &MissionItem) -> Result<Step, String> {
        let p = position(it, self.frame, self.home_alt_m);
        let step =
            match (classify(it.command), it.command) {
                (Support::Refused, _) => return Err(
                    "not supported by SimpleFlight, and skipping it would fly a different route"
                        .into(),
                ),
                (Support::Skipped, _) => Step::Skip {
                    command: it.command,
                },
                (_, commands::NAV_TAKEOFF) => self.takeoff(it, p)?,
                (_, commands::NAV_WAYPOINT) => self.waypoint(it, p)?,
                (_, commands::NAV_LOITER_TIME) => Step::Loiter {
                    pos: p,
                    time_s: seconds(it.params[0]),
                },
                (_, commands::NAV_LOITER_UNLIM) => Step::Loiter {
                    pos: p,
                    time_s: f64::INFINITY,
                },
                (_, commands::NAV_DELAY) => Step::Delay {
                    time_s: seconds(it.params[0]),
                },
                (_, commands::NAV_RETURN_TO_LAUNCH) => Step::ReturnToLaunch,
                (_, commands::NAV_LAND) => Step::Land {
                    pos_ne: p.map(|v| [v.x, v.y]),
                },
                (_, commands::DO_JUMP) => self.jump(it)?,
                (_, commands::DO_CHANGE_SPEED) => {
                    let s = it.params[1];
                    Step::ChangeSpeed {
                        speed_m_s: (s.is_finite() && s > 0.0).then_some(s),
                    }
                }
                (_, commands::DO_SET_HOME) => Step::SetHome {
                    pos: if it.params[0] == 1.0 { None } else { p },
                },
                _ => Step::Skip {
                    command: it.command,
                },
            };
        Ok(step)
    }

    /// NAV_TAKEOFF: a multicopter climbs to param 7 above home; a boat skips it.
    fn takeoff(&self, it: &MissionItem, p: Option<Vector3<f64>>) -> Result<Step, String> {
        if !self.kind.is_multirotor() {
            return Ok(Step::Skip {
                command: it.command,
            });
        }
        let alt = if it.frame == FRAME_GLOBAL {
            it.z - self.home_alt_m
        } else {
            it.z
        };
        if !alt.is_finite() || alt <= 0.0 {
            return Err("take-off altitude must be above home".into());
        }
        Ok(Step::Takeoff {
            pos_ne: p.map(|v| [v.x, v.y]),
            alt_m: alt,
        })
    }

    /// NAV_WAYPOINT: param 1 the hold time, param 2 the acceptance radius
    /// (else the default).
    fn waypoint(&self, it: &MissionItem, p: Option<Vector3<f64>>) -> Result<Step, String> {
        let pos = p.ok_or("a waypoint needs a latitude and longitude")?;
        if self.kind.is_multirotor() && -pos.z <= 0.0 {
            return Err("waypoint altitude is at or below home".into());
        }
        let radius = if it.params[1].is_finite() && it.params[1] > 0.0 {
            it.params[1]
        } else {
            self.default_radius
        };
        Ok(Step::Waypoint {
            pos,
            hold_s: seconds(it.params[0]),
            radius_m: radius,
        })
    }

    /// DO_JUMP: param 1 the target item, param 2 the repeat count, whole
    /// numbers both (ArduPilot's repeat is an int16: −1 for ever, up to
    /// 32767). NaN, a fraction or a value out of range is refused, not read
    /// as 0 (a NaN repeat used to skip the loop and report the mission done).
    fn jump(&self, it: &MissionItem) -> Result<Step, String> {
        let target = it.params[0];
        if !(target.is_finite() && target >= 0.0 && target.fract() == 0.0)
            || target as usize >= self.items
        {
            return Err(format!(
                "jump target {} is not an item of this mission (0..={})",
                mavsitl_core::time::show(target),
                self.items.saturating_sub(1)
            ));
        }
        let repeat = it.params[1];
        if !(repeat.is_finite() && repeat.fract() == 0.0 && (-1.0..=32767.0).contains(&repeat)) {
            return Err(format!(
                "jump repeat count {} is not a whole number from -1 (for ever) to 32767",
                mavsitl_core::time::show(repeat)
            ));
        }
        Ok(Step::Jump {
            target: target as usize,
            repeat: repeat as i64,
        })
    }
}

/// Whether a step takes the vehicle somewhere or takes time.
fn flies(step: &Step) -> bool {
    matches!(
        step,
        Step::Takeoff { .. }
            | Step::Waypoint { .. }
            | Step::Loiter { .. }
            | Step::Delay { .. }
            | Step::ReturnToLaunch
            | Step::Land { .. }
    )
}

/// Refuses a DO_JUMP that can come back to itself without flying anything in
/// between (a loop around nothing, or two jumps pointing at each other): it
/// would spin through its repeats, or forever, without the mission moving on.
/// PX4 and ArduPilot refuse such missions too.
fn check_jumps(steps: &[Step]) -> Result<(), PlanError> {
    for (start, step) in steps.iter().enumerate() {
        let Step::Jump { target, repeat } = *step else {
            continue;
        };
        if repeat == 0 {
            continue;
        }
        // Follow the jumps from this one until something flies or the
        // mission ends; coming back to a jump already taken is a loop.
        let first = target;
        let mut taken = vec![start];
        let mut pos = target;
        while let Some(s) = steps.get(pos) {
            if flies(s) {
                break;
            }
            match *s {
                Step::Jump { target, repeat } if repeat != 0 => {
                    if taken.contains(&pos) {
                        return Err(PlanError {
                            index: start,
                            name: command_name(commands::DO_JUMP),
                            reason: format!(
                                "the jump to item {first} comes back to a jump with no \
                                 navigation item on the way, so it would repeat without flying"
                            ),
                        });
                    }
                    taken.push(pos);
                    pos = target;
                }
                _ => pos += 1,
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame() -> LocalFrame {
        LocalFrame::new(GeoPoint::from_deg(47.0, 8.0, 400.0))
    }

    fn jump(target: f64, repeat: f64) -> MissionItem {
        let mut j = MissionItem::waypoint(0.0, 0.0, 0.0);
        j.command = commands::DO_JUMP;
        j.frame = mavsitl_mavlink::mission::FRAME_MISSION;
        j.params = [target, repeat, 0.0, 0.0];
        j
    }

    fn speed() -> MissionItem {
        let mut s = jump(0.0, 0.0);
        s.command = commands::DO_CHANGE_SPEED;
        s.params = [1.0, 3.0, -1.0, 0.0];
        s
    }

    fn check(items: Vec<MissionItem>) -> Result<(), PlanError> {
        let m = Mission {
            items,
            ..Mission::default()
        };
        compile(&m, &frame(), 400.0, VehicleKind::Multirotor, 2.0).map(|_| ())
    }

    fn wp(n: f64) -> MissionItem {
        MissionItem::waypoint(47.0 + n * 1e-4, 8.0, 10.0)
    }

    #[test]
    fn jump_loops_around_nothing_are_refused() {
        // A jump to itself, forever and 32767 times.
        for repeat in [-1.0, 32767.0] {
            let e = check(vec![wp(1.0), wp(2.0), jump(2.0, repeat), wp(3.0)]).expect_err("loop");
            assert_eq!(e.index, 2);
            assert!(e.reason.contains("would repeat without flying"), "{e}");
        }
        // Two jumps pointing at each other, with a speed change between.
        let e = check(vec![
            wp(1.0),
            jump(3.0, 2.0),
            speed(),
            jump(1.0, 2.0),
            wp(2.0),
        ])
        .expect_err("ping-pong");
        assert_eq!(e.index, 1);
        // A jump forward onto a jump back to it.
        assert!(check(vec![wp(1.0), jump(2.0, -1.0), jump(1.0, -1.0), wp(2.0)]).is_err());
    }

    #[test]
    fn jump_counts_and_targets_must_be_whole_numbers_in_range() {
        for (target, repeat, says) in [
            (1.0, f64::NAN, "jump repeat count NaN is not a whole number"),
            (1.0, f64::INFINITY, "jump repeat count inf"),
            (1.0, 1.5, "jump repeat count 1.5"),
            (1.0, -2.0, "jump repeat count -2"),
            (1.0, 1e300, "jump repeat count 1e300"),
            (
                f64::NAN,
                1.0,
                "jump target NaN is not an item of this mission (0..=2)",
            ),
            (0.5, 1.0, "jump target 0.5"),
            (3.0, 1.0, "jump target 3 is not an item"),
        ] {
            let e = check(vec![wp(1.0), wp(2.0), jump(target, repeat)]).expect_err("refused");
            assert_eq!(e.index, 2);
            assert!(e.reason.contains(says), "{e}");
        }
        check(vec![wp(1.0), wp(2.0), jump(0.0, 32767.0)]).expect("the largest count");
    }

    #[test]
    fn jump_loops_that_fly_are_kept() {
        // Back over a waypoint, forever or counted; a spent (0) jump to itself.
        check(vec![wp(1.0), wp(2.0), jump(1.0, -1.0)]).expect("loop over item 1");
        check(vec![wp(1.0), speed(), wp(2.0), jump(1.0, 3.0), wp(3.0)]).expect("counted");
        check(vec![wp(1.0), jump(1.0, 0.0), wp(2.0)]).expect("a jump that never jumps");
        // Forward over items, then on.
        check(vec![wp(1.0), jump(3.0, 1.0), wp(2.0), wp(3.0)]).expect("forward");
    }
}
