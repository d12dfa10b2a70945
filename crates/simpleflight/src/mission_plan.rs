//! A mission turned into what SimpleFlight executes: positions in the local
//! NED frame, commands checked against what it can fly.

use mavsitl_core::vehicle::VehicleKind;
use nalgebra::Vector3;

use mavsitl_core::geo::{GeoPoint, LocalFrame};
use mavsitl_mavlink::mission::commands::{self, classify, command_name, Support};
use mavsitl_mavlink::mission::{Mission, MissionItem, FRAME_GLOBAL};

/// MAV_FRAME_GLOBAL_INT: MAV_FRAME_GLOBAL with integer coordinates.
const FRAME_GLOBAL_INT: u8 = 5;

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

/// The item's altitude above home, m: MAV_FRAME_GLOBAL and its _INT form
/// (5) give it above mean sea level; the relative and terrain frames give
/// it above home (the terrain taken flat at home's altitude).
fn alt_above_home(it: &MissionItem, home_alt_m: f64) -> f64 {
    if matches!(it.frame, FRAME_GLOBAL | FRAME_GLOBAL_INT) {
        it.z - home_alt_m
    } else {
        it.z
    }
}

/// The item's position, NED m around home; `None` for an item without
/// one: a local frame, or a latitude and longitude of 0/0 or not numbers
/// ("where the vehicle is", as QGroundControl writes it).
fn position(it: &MissionItem, frame: &LocalFrame, home_alt_m: f64) -> Option<Vector3<f64>> {
    if !it.is_global() {
        return None;
    }
    if !(it.x.is_finite() && it.y.is_finite()) || (it.x == 0.0 && it.y == 0.0) {
        return None;
    }
    let ned = frame.to_ned(&GeoPoint::from_deg(it.x, it.y, frame.origin().alt_m));
    Some(Vector3::new(ned.x, ned.y, -alt_above_home(it, home_alt_m)))
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
        // A flown command skipped: a boat's take-off.
        (Step::Skip { .. }, _) => Some(format!(
            "mission item {index} ({name}) has no meaning for a {}; skipped",
            kind.name()
        )),
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
                // The commands classified as safe to skip (camera, servo, …).
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
        let alt = alt_above_home(it, self.home_alt_m);
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

    /// An item at `north_m`, `east_m` from home (None: 0/0, "here").
    fn at(
        command: u16,
        mav_frame: u8,
        params: [f64; 4],
        ne: Option<[f64; 2]>,
        z: f64,
    ) -> MissionItem {
        let (x, y) = ne.map_or((0.0, 0.0), |[n, e]| {
            let g = frame().to_geodetic(&Vector3::new(n, e, 0.0));
            (g.lat_deg(), g.lon_deg())
        });
        MissionItem {
            command,
            frame: mav_frame,
            params,
            x,
            y,
            z,
            autocontinue: true,
        }
    }

    fn compiled(
        items: Vec<MissionItem>,
        kind: VehicleKind,
    ) -> Result<(Vec<Step>, Vec<PlanWarning>), PlanError> {
        let m = Mission {
            items,
            ..Mission::default()
        };
        compile(&m, &frame(), 400.0, kind, 2.0)
    }

    fn near(a: Option<Vector3<f64>>, b: [f64; 3]) -> bool {
        a.is_some_and(|a| (a - Vector3::from(b)).norm() < 1e-6)
    }

    /// The step of a one-item mission for a multicopter.
    fn one(command: u16, frame: u8, params: [f64; 4], ne: Option<[f64; 2]>, z: f64) -> Step {
        let (steps, warnings) = compiled(
            vec![at(command, frame, params, ne, z)],
            VehicleKind::Multirotor,
        )
        .expect("flown");
        assert!(warnings.is_empty(), "{warnings:?}");
        steps[0]
    }

    /// Each navigation command becomes its step: altitudes above mean sea
    /// level (GLOBAL and GLOBAL_INT) less home's 400 m, relative and
    /// terrain ones as given; hold times not numbers, negative or
    /// infinite as 0; a waypoint's own radius, else (none, ≤ 0 or
    /// infinite) the default; an item at 0/0 without a position.
    #[test]
    fn each_navigation_command_compiles_to_its_step() {
        use commands::*;
        const REL: u8 = 3;
        let nan = f64::NAN;
        let takeoff = one(NAV_TAKEOFF, FRAME_GLOBAL_INT, [nan; 4], None, 415.0);
        assert_eq!(
            takeoff,
            Step::Takeoff {
                pos_ne: None,
                alt_m: 15.0
            }
        );
        let waypoint =
            |params, frame, ne: [f64; 2], z| match one(NAV_WAYPOINT, frame, params, Some(ne), z) {
                Step::Waypoint {
                    pos,
                    hold_s,
                    radius_m,
                } => (pos, hold_s, radius_m),
                other => panic!("{other:?}"),
            };
        let (pos, hold_s, radius_m) =
            waypoint([2.5, 4.0, 0.0, nan], FRAME_GLOBAL, [50.0, 0.0], 430.0);
        assert!(near(Some(pos), [50.0, 0.0, -30.0]) && (hold_s, radius_m) == (2.5, 4.0));
        let (pos, hold_s, radius_m) = waypoint([nan; 4], 6, [0.0, 40.0], 20.0);
        assert!(near(Some(pos), [0.0, 40.0, -20.0]) && (hold_s, radius_m) == (0.0, 2.0));
        for radius in [0.0, -3.0, f64::INFINITY] {
            let (_, _, radius_m) = waypoint([0.0, radius, 0.0, nan], REL, [1.0, 0.0], 5.0);
            assert_eq!(radius_m, 2.0, "radius {radius}");
        }
        let Step::Loiter { pos, time_s } = one(
            NAV_LOITER_TIME,
            10,
            [-5.0, 0.0, 0.0, 0.0],
            Some([-30.0, 5.0]),
            12.0,
        ) else {
            panic!("not a loiter")
        };
        assert!(near(pos, [-30.0, 5.0, -12.0]) && time_s == 0.0);
        let unlimited = one(NAV_LOITER_UNLIM, REL, [nan; 4], None, 12.0);
        assert_eq!(
            unlimited,
            Step::Loiter {
                pos: None,
                time_s: f64::INFINITY
            }
        );
        assert_eq!(
            one(NAV_DELAY, REL, [7.5, nan, nan, nan], None, 0.0),
            Step::Delay { time_s: 7.5 }
        );
        let forever = one(NAV_DELAY, REL, [f64::INFINITY, nan, nan, nan], None, 0.0);
        assert_eq!(forever, Step::Delay { time_s: 0.0 });
        let Step::Land {
            pos_ne: Some([n, e]),
        } = one(NAV_LAND, REL, [nan; 4], Some([10.0, -10.0]), 0.0)
        else {
            panic!("not a landing at a place")
        };
        assert!((n - 10.0).abs() < 1e-6 && (e + 10.0).abs() < 1e-6);
        assert_eq!(
            one(NAV_RETURN_TO_LAUNCH, 2, [nan; 4], None, 0.0),
            Step::ReturnToLaunch
        );
    }

    /// DO_CHANGE_SPEED applies only a positive, finite speed (as
    /// ArduPilot does), else leaves it unchanged; DO_SET_HOME's param 1 = 1
    /// means "here", else its position, altitude above mean sea level in
    /// frame 5.
    #[test]
    fn speed_and_home_commands_compile_to_their_steps() {
        use commands::*;
        let speed = |s: f64| one(DO_CHANGE_SPEED, 2, [1.0, s, -1.0, 0.0], None, 0.0);
        assert_eq!(
            speed(3.5),
            Step::ChangeSpeed {
                speed_m_s: Some(3.5)
            }
        );
        for s in [-1.0, 0.0, f64::INFINITY] {
            assert_eq!(speed(s), Step::ChangeSpeed { speed_m_s: None }, "{s}");
        }
        let here = one(DO_SET_HOME, 3, [1.0, 0.0, 0.0, 0.0], Some([5.0, 5.0]), 0.0);
        assert_eq!(here, Step::SetHome { pos: None });
        let Step::SetHome { pos } = one(DO_SET_HOME, 5, [0.0; 4], Some([5.0, 5.0]), 401.0) else {
            panic!("not a home")
        };
        assert!(near(pos, [5.0, 5.0, -1.0]));
    }

    /// A take-off or waypoint at or below home is refused for a
    /// multicopter, whatever the frame; a boat skips its take-off, saying
    /// so, and sails to waypoints at the surface.
    #[test]
    fn altitudes_at_or_below_home_are_refused_and_a_boat_skips_its_take_off() {
        use commands::*;
        let wp = |frame: u8, z: f64| at(NAV_WAYPOINT, frame, [0.0; 4], Some([20.0, 0.0]), z);
        let takeoff = |frame: u8, z: f64| at(NAV_TAKEOFF, frame, [0.0; 4], None, z);
        for (item, says) in [
            (
                takeoff(FRAME_GLOBAL, 400.0),
                "take-off altitude must be above home",
            ),
            (
                takeoff(FRAME_GLOBAL_INT, 399.0),
                "take-off altitude must be above home",
            ),
            (takeoff(3, f64::NAN), "take-off altitude must be above home"),
            (wp(3, 0.0), "waypoint altitude is at or below home"),
            (
                wp(FRAME_GLOBAL_INT, 400.0),
                "waypoint altitude is at or below home",
            ),
        ] {
            let e = compiled(vec![wp(3, 10.0), item], VehicleKind::Multirotor).expect_err(says);
            assert_eq!((e.index, e.reason.as_str()), (1, says));
        }
        let (steps, warnings) =
            compiled(vec![takeoff(3, 10.0), wp(3, 0.0)], VehicleKind::Boat).expect("a boat");
        assert_eq!(
            steps[0],
            Step::Skip {
                command: NAV_TAKEOFF
            }
        );
        assert!(matches!(steps[1], Step::Waypoint { .. }));
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].index, 0);
        assert_eq!(
            warnings[0].message,
            "mission item 0 (MAV_CMD_NAV_TAKEOFF) has no meaning for a boat; skipped"
        );
        let here = at(NAV_WAYPOINT, 3, [0.0; 4], None, 10.0);
        let e = compiled(vec![here], VehicleKind::Boat).expect_err("0/0");
        assert_eq!(e.reason, "a waypoint needs a latitude and longitude");
        let mut nan = wp(3, 10.0);
        nan.x = f64::NAN;
        assert!(compiled(vec![nan], VehicleKind::Multirotor).is_err());
    }

    /// A latitude or longitude of zero alone is a real place (the equator,
    /// the prime meridian); only both zero means "here".
    #[test]
    fn the_equator_and_the_prime_meridian_are_places() {
        for (lat, lon) in [(0.0, 8.0), (47.0, 0.0)] {
            let it = MissionItem::waypoint(lat, lon, 10.0);
            assert!(position(&it, &frame(), 400.0).is_some(), "{lat} {lon}");
        }
        let local = MissionItem {
            frame: 1,
            ..MissionItem::waypoint(47.0, 8.0, 10.0)
        };
        assert_eq!(position(&local, &frame(), 400.0), None);
    }

    /// A command SimpleFlight cannot do but may skip is skipped with a
    /// warning naming it; one whose skipping would change the route is
    /// refused, naming the item.
    #[test]
    fn unsupported_commands_are_skipped_with_a_warning_or_refused() {
        use commands::*;
        let wp = at(NAV_WAYPOINT, 3, [0.0; 4], Some([20.0, 0.0]), 10.0);
        let camera = at(206, 2, [0.0; 4], None, 0.0);
        let (steps, warnings) =
            compiled(vec![wp, camera], VehicleKind::Multirotor).expect("skipped");
        assert_eq!(steps[1], Step::Skip { command: 206 });
        assert_eq!(
            (warnings[0].index, warnings[0].message.as_str()),
            (
                1,
                "mission item 1 (MAV_CMD_DO_SET_CAM_TRIGG_DIST) is not supported; skipped"
            )
        );
        let turns = at(NAV_LOITER_TURNS, 3, [2.0; 4], Some([0.0, 0.0]), 10.0);
        let e = compiled(vec![wp, wp, turns], VehicleKind::Boat).expect_err("refused");
        assert_eq!(e.index, 2);
        assert_eq!(e.name, "MAV_CMD_NAV_LOITER_TURNS");
        assert_eq!(
            e.reason,
            "not supported by SimpleFlight, and skipping it would fly a different route"
        );
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
        // Onto a speed change, then on to a waypoint.
        check(vec![wp(1.0), jump(2.0, 2.0), speed(), wp(2.0)]).expect("over a speed change");
        // Onto a spent jump back: it no longer jumps, so the mission goes on.
        check(vec![wp(1.0), jump(2.0, 2.0), jump(1.0, 0.0), wp(2.0)]).expect("onto a spent jump");
    }
}
