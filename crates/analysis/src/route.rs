//! The planned route of a mission in the simulation's NED frame: home, then
//! every item with a position in the order it is flown (DO_JUMP followed),
//! as 3-D points with their acceptance radii, and
//! the horizontal legs between them that a controller is judged against.

use nalgebra::{Vector2, Vector3};

use mavsitl_core::geo::{GeoPoint, LocalFrame};
use mavsitl_core::vehicle::VehicleKind;
use mavsitl_mavlink::mission::{commands, Mission, MissionItem, FRAME_GLOBAL};

/// Legs shorter than this horizontally (a vertical take-off or landing) are
/// not judged for cross-track, m.
pub const MIN_LEG_M: f64 = 1.0;

/// The acceptance radius a route's points get where the plan sets none, m:
/// the one mavsitl's autopilot parameters give a vehicle of `kind` (a
/// multirotor's 2 m, the boats' WP_RADIUS 3, the rovers' 1).
pub fn default_radius_m(kind: VehicleKind) -> f64 {
    match kind {
        VehicleKind::Multirotor => 2.0,
        VehicleKind::Boat => 3.0,
        VehicleKind::Rover => 1.0,
    }
}

/// One planned position.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoutePoint {
    /// Position, NED m from home (z: minus the altitude above home).
    pub ned_m: Vector3<f64>,
    /// Index of the mission item (None: home); an item flown again after a
    /// DO_JUMP appears again.
    pub item: Option<usize>,
    /// Acceptance radius, m.
    pub radius_m: f64,
}

/// A horizontal leg between two route points.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Leg {
    /// Start, NED m.
    pub from: Vector3<f64>,
    /// End, NED m.
    pub to: Vector3<f64>,
    /// Route distance flown before this leg starts, m (horizontal).
    pub start_along_m: f64,
    /// The larger acceptance radius of its two ends, m: within it of an end
    /// the vehicle is turning, climbing or descending there, not flying the
    /// leg.
    pub end_radius_m: f64,
}

impl Leg {
    /// Horizontal length, m.
    pub fn length_m(&self) -> f64 {
        (self.to.xy() - self.from.xy()).norm()
    }

    /// Unit direction, horizontal NE.
    pub fn direction(&self) -> Vector2<f64> {
        (self.to.xy() - self.from.xy()) / self.length_m().max(f64::MIN_POSITIVE)
    }

    /// Where the horizontal projection of `p` falls along the leg: 0 at the
    /// start, 1 at the end (clamped), and the horizontal distance to it, m.
    pub fn project(&self, p: &Vector2<f64>) -> (f64, f64) {
        let a = self.from.xy();
        let d = self.to.xy() - a;
        let t = ((p - a).dot(&d) / d.norm_squared().max(f64::MIN_POSITIVE)).clamp(0.0, 1.0);
        (t, (p - (a + d * t)).norm())
    }
}

/// The planned route.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Route {
    /// Home first, then each positioned item in order.
    pub points: Vec<RoutePoint>,
    /// The horizontal legs (at least [`MIN_LEG_M`] long).
    pub legs: Vec<Leg>,
}

impl Route {
    /// The route of `mission` flown from home, the origin of `frame`;
    /// `default_radius_m` where an item sets no acceptance radius.
    pub fn new(mission: &Mission, frame: &LocalFrame, default_radius_m: f64) -> Self {
        Self::launched_at(mission, frame, default_radius_m, Vector2::zeros())
    }

    /// The route of a vehicle launched at `launch` (NED m, horizontal; one
    /// vehicle of several starts away from home): its take-off and a return
    /// to launch are there.
    pub fn launched_at(
        mission: &Mission,
        frame: &LocalFrame,
        default_radius_m: f64,
        launch: Vector2<f64>,
    ) -> Self {
        let home_alt = frame.origin().alt_m;
        let mut points = vec![RoutePoint {
            ned_m: Vector3::new(launch.x, launch.y, 0.0),
            item: None,
            radius_m: default_radius_m,
        }];
        for i in flown_order(mission) {
            let Some(it) = mission.items.get(i) else {
                continue;
            };
            let Some(last) = points.last().map(|p| p.ned_m) else {
                break;
            };
            let Some(ned_m) = item_position(it, frame, home_alt, &last, &launch) else {
                continue;
            };
            let r = it.params[1];
            let radius_m = if it.command == commands::NAV_WAYPOINT && r.is_finite() && r > 0.0 {
                r
            } else {
                default_radius_m
            };
            points.push(RoutePoint {
                ned_m,
                item: Some(i),
                radius_m,
            });
        }
        let mut legs = Vec::new();
        let mut along = 0.0;
        for w in points.windows(2) {
            if let [a, b] = w {
                let leg = Leg {
                    from: a.ned_m,
                    to: b.ned_m,
                    start_along_m: along,
                    end_radius_m: a.radius_m.max(b.radius_m),
                };
                if leg.length_m() >= MIN_LEG_M {
                    along += leg.length_m();
                    legs.push(leg);
                }
            }
        }
        Route { points, legs }
    }

    /// Route length, horizontal m.
    pub fn length_m(&self) -> f64 {
        self.legs.iter().map(Leg::length_m).sum()
    }

    /// The leg nearest to `p` horizontally: (index, fraction along it,
    /// distance to it in m). None without legs.
    pub fn nearest_leg(&self, p: &Vector2<f64>) -> Option<(usize, f64, f64)> {
        self.legs
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let (t, d) = l.project(p);
                (i, t, d)
            })
            .min_by(|a, b| a.2.total_cmp(&b.2))
    }
}

/// Most items a route follows through its jumps (a jump repeated for ever
/// is followed once).
const MAX_ROUTE_ITEMS: usize = 10_000;

/// The item indices in the order a mission flies them: DO_JUMP followed for
/// its repeat count (a repeat of −1, for ever, once).
fn flown_order(mission: &Mission) -> Vec<usize> {
    let n = mission.items.len();
    // The jumps left per item, read only at a DO_JUMP: its repeat count, or
    // one for a count that is negative (for ever) or not a number.
    let mut left: Vec<i64> = mission
        .items
        .iter()
        .map(|it| match it.params[1] {
            r if r.is_finite() && r >= 0.0 => r as i64,
            _ => 1,
        })
        .collect();
    let mut order = Vec::new();
    let mut pc = 0;
    while order.len() < MAX_ROUTE_ITEMS {
        let Some(it) = mission.items.get(pc) else {
            break;
        };
        order.push(pc);
        let target = it.params[0];
        let jumps = it.command == commands::DO_JUMP
            && target.is_finite()
            && target >= 0.0
            && (target as usize) < n
            && left.get(pc).is_some_and(|l| *l > 0);
        if jumps {
            if let Some(l) = left.get_mut(pc) {
                *l -= 1;
            }
            pc = target as usize;
        } else {
            pc += 1;
        }
    }
    order
}

/// Where an item puts the vehicle, NED m (None: the item has no position).
/// A take-off climbs above where the vehicle is; a return to launch comes back
/// over home at the altitude it flew; a landing without coordinates lands
/// where it is.
fn item_position(
    it: &MissionItem,
    frame: &LocalFrame,
    home_alt: f64,
    last: &Vector3<f64>,
    launch: &Vector2<f64>,
) -> Option<Vector3<f64>> {
    let up = if it.frame == FRAME_GLOBAL {
        it.z - home_alt
    } else {
        it.z
    };
    let has_xy = it.is_global() && (it.x != 0.0 || it.y != 0.0);
    let xy = |lat: f64, lon: f64| frame.to_ned(&GeoPoint::from_deg(lat, lon, home_alt)).xy();
    match it.command {
        commands::NAV_RETURN_TO_LAUNCH => Some(Vector3::new(launch.x, launch.y, last.z)),
        commands::NAV_TAKEOFF => {
            let p = if has_xy { xy(it.x, it.y) } else { last.xy() };
            Some(Vector3::new(p.x, p.y, -up))
        }
        commands::NAV_LAND => {
            let p = if has_xy { xy(it.x, it.y) } else { last.xy() };
            Some(Vector3::new(p.x, p.y, 0.0))
        }
        16..=99 if has_xy => {
            let p = xy(it.x, it.y);
            Some(Vector3::new(p.x, p.y, -up))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_square_gives_its_points_legs_and_route_distance() {
        let frame = LocalFrame::new(GeoPoint::from_deg(47.0, 8.0, 400.0));
        let at = |n: f64, e: f64| {
            let g = frame.to_geodetic(&Vector3::new(n, e, 0.0));
            MissionItem::waypoint(g.lat_deg(), g.lon_deg(), 10.0)
        };
        let mut takeoff = MissionItem::waypoint(0.0, 0.0, 10.0);
        takeoff.command = commands::NAV_TAKEOFF;
        let mut rtl = MissionItem::waypoint(0.0, 0.0, 0.0);
        rtl.command = commands::NAV_RETURN_TO_LAUNCH;
        let m = Mission {
            items: vec![takeoff, at(50.0, 0.0), at(50.0, 50.0), rtl],
            ..Mission::default()
        };
        let r = Route::new(&m, &frame, 2.0);
        assert_eq!(r.points.len(), 5);
        assert!((r.points[1].ned_m - Vector3::new(0.0, 0.0, -10.0)).norm() < 1e-9);
        // take-off column (vertical) left out: N50, E50, the diagonal home.
        assert_eq!(r.legs.len(), 3);
        assert!((r.length_m() - (100.0 + 50.0 * 2f64.sqrt())).abs() < 1e-6);
        assert!((r.legs[2].start_along_m - 100.0).abs() < 1e-6);
        let (i, t, d) = r.nearest_leg(&Vector2::new(52.0, 25.0)).expect("legs");
        assert_eq!(i, 1);
        assert!((t - 0.5).abs() < 1e-6 && (d - 2.0).abs() < 1e-6);
    }

    fn frame() -> LocalFrame {
        LocalFrame::new(GeoPoint::from_deg(47.0, 8.0, 400.0))
    }

    /// A waypoint `n` m north and `e` m east of home, 10 m up.
    fn at(n: f64, e: f64) -> MissionItem {
        let g = frame().to_geodetic(&Vector3::new(n, e, 0.0));
        MissionItem::waypoint(g.lat_deg(), g.lon_deg(), 10.0)
    }

    fn with(command: u16, params: [f64; 4], it: MissionItem) -> MissionItem {
        MissionItem {
            command,
            params,
            ..it
        }
    }

    fn items(r: &Route) -> Vec<Option<usize>> {
        r.points.iter().map(|p| p.item).collect()
    }

    /// A landing on the equator or on the prime meridian has a position of
    /// its own (only 0/0 means "where it is").
    #[test]
    fn a_landing_on_the_equator_or_the_prime_meridian_is_a_position() {
        let last = Vector3::new(1.0, 2.0, -10.0);
        for (lat, lon) in [(0.0, 8.0), (47.0, 0.0)] {
            let land = with(
                commands::NAV_LAND,
                [0.0; 4],
                MissionItem::waypoint(lat, lon, 0.0),
            );
            let p = item_position(&land, &frame(), 400.0, &last, &Vector2::zeros());
            let want = frame().to_ned(&GeoPoint::from_deg(lat, lon, 400.0)).xy();
            let got = p.expect("a landing has a position");
            assert_eq!((got.x, got.y, got.z), (want.x, want.y, 0.0), "{lat}, {lon}");
        }
        let here = with(
            commands::NAV_LAND,
            [0.0; 4],
            MissionItem::waypoint(0.0, 0.0, 0.0),
        );
        let p = item_position(&here, &frame(), 400.0, &last, &Vector2::zeros());
        assert_eq!(p, Some(Vector3::new(1.0, 2.0, 0.0)));
    }

    #[test]
    fn a_boat_accepts_wider_than_a_multirotor_and_a_rover_narrower() {
        let r = |k| default_radius_m(k);
        assert_eq!(
            (
                r(VehicleKind::Boat),
                r(VehicleKind::Multirotor),
                r(VehicleKind::Rover)
            ),
            (3.0, 2.0, 1.0)
        );
    }

    /// DO_JUMP is followed for its repeat count; −1 (for ever) once; a
    /// jump to no item, or to a negative one, is not taken.
    #[test]
    fn jumps_are_followed_for_their_repeat_count() {
        let jump = |target: f64, repeat: f64| {
            with(
                commands::DO_JUMP,
                [target, repeat, 0.0, 0.0],
                MissionItem::waypoint(0.0, 0.0, 0.0),
            )
        };
        let route = |j: MissionItem| {
            let m = Mission {
                items: vec![at(50.0, 0.0), at(50.0, 50.0), j, at(0.0, 50.0)],
                ..Mission::default()
            };
            items(&Route::new(&m, &frame(), 2.0))
        };
        let (a, b, c) = (Some(0), Some(1), Some(3));
        assert_eq!(route(jump(0.0, 2.0)), [None, a, b, a, b, a, b, c]);
        assert_eq!(route(jump(0.0, 0.0)), [None, a, b, c]);
        assert_eq!(route(jump(1.0, -1.0)), [None, a, b, b, c]);
        assert_eq!(route(jump(1.0, f64::NAN)), [None, a, b, b, c]);
        assert_eq!(route(jump(4.0, 2.0)), [None, a, b, c]);
        assert_eq!(route(jump(-1.0, 2.0)), [None, a, b, c]);
        assert_eq!(route(jump(f64::NAN, 2.0)), [None, a, b, c]);
        // A jump to itself for ever is followed up to the cap.
        let m = Mission {
            items: vec![at(50.0, 0.0), jump(0.0, 1e9)],
            ..Mission::default()
        };
        assert_eq!(flown_order(&m).len(), MAX_ROUTE_ITEMS);
    }

    /// Where each kind of item puts the vehicle: a take-off climbs where
    /// it is (or at its own position), a landing comes down where it is
    /// (or at its own position), a return goes to the launch point at the
    /// altitude flown, an AMSL altitude counts from home's, and items
    /// without a position add no point.
    #[test]
    fn each_item_puts_the_vehicle_where_it_says() {
        let f = frame();
        let here = MissionItem::waypoint(0.0, 0.0, 0.0);
        let amsl = MissionItem {
            frame: FRAME_GLOBAL,
            z: 430.0,
            ..at(30.0, 40.0)
        };
        let m = Mission {
            items: vec![
                with(
                    commands::NAV_TAKEOFF,
                    [0.0; 4],
                    MissionItem { z: 15.0, ..here },
                ),
                with(
                    commands::NAV_TAKEOFF,
                    [0.0; 4],
                    MissionItem {
                        z: 20.0,
                        ..at(10.0, 0.0)
                    },
                ),
                amsl,
                with(
                    commands::DO_CHANGE_SPEED,
                    [1.0, 5.0, -1.0, 0.0],
                    at(60.0, 60.0),
                ),
                with(commands::NAV_LOITER_TIME, [5.0, 0.0, 0.0, 0.0], here),
                with(commands::NAV_RETURN_TO_LAUNCH, [0.0; 4], here),
                with(commands::NAV_LAND, [0.0; 4], here),
                with(commands::NAV_LAND, [0.0; 4], at(-20.0, 5.0)),
            ],
            ..Mission::default()
        };
        let r = Route::launched_at(&m, &f, 2.0, Vector2::new(3.0, 4.0));
        let got: Vec<Vector3<f64>> = r.points.iter().map(|p| p.ned_m).collect();
        let want = [
            Vector3::new(3.0, 4.0, 0.0),
            Vector3::new(3.0, 4.0, -15.0),
            Vector3::new(10.0, 0.0, -20.0),
            Vector3::new(30.0, 40.0, -30.0),
            Vector3::new(3.0, 4.0, -30.0),
            Vector3::new(3.0, 4.0, 0.0),
            Vector3::new(-20.0, 5.0, 0.0),
        ];
        assert_eq!(got.len(), want.len(), "{got:?}");
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).norm() < 1e-6, "{g} {w}");
        }
        assert_eq!(
            items(&r),
            [None, Some(0), Some(1), Some(2), Some(5), Some(6), Some(7)]
        );
    }

    /// A waypoint's acceptance radius is its param1 when positive; other
    /// items, and 0 or NaN, take the default. A leg ends within the larger
    /// of its two radii; legs under [`MIN_LEG_M`] are not judged, and one
    /// of exactly that length is.
    #[test]
    fn radii_come_from_waypoints_and_short_legs_are_left_out() {
        let wp = |n: f64, r: f64| with(commands::NAV_WAYPOINT, [0.0, r, 0.0, 0.0], at(n, 0.0));
        let spline = with(
            commands::NAV_SPLINE_WAYPOINT,
            [0.0, 7.0, 0.0, 0.0],
            at(40.0, 0.0),
        );
        let m = Mission {
            items: vec![wp(10.0, 5.0), wp(20.0, 0.0), wp(30.0, f64::NAN), spline],
            ..Mission::default()
        };
        let r = Route::new(&m, &frame(), 2.5);
        let radii: Vec<f64> = r.points.iter().map(|p| p.radius_m).collect();
        assert_eq!(radii, [2.5, 5.0, 2.5, 2.5, 2.5]);
        let ends: Vec<f64> = r.legs.iter().map(|l| l.end_radius_m).collect();
        assert_eq!(ends, [5.0, 5.0, 2.5, 2.5]);
        let starts: Vec<f64> = r.legs.iter().map(|l| l.start_along_m.round()).collect();
        assert_eq!(starts, [0.0, 10.0, 20.0, 30.0]);

        // From a launch point 1 m, then 0.5 m, south of a waypoint over home.
        let home = frame().origin();
        let over_home = MissionItem::waypoint(home.lat_deg(), home.lon_deg(), 10.0);
        let m = Mission {
            items: vec![
                with(
                    commands::NAV_TAKEOFF,
                    [0.0; 4],
                    MissionItem::waypoint(0.0, 0.0, 10.0),
                ),
                over_home,
            ],
            ..Mission::default()
        };
        let one = Route::launched_at(&m, &frame(), 2.0, Vector2::new(-1.0, 0.0));
        assert_eq!(one.legs.len(), 1);
        assert_eq!(one.length_m(), MIN_LEG_M);
        let half = Route::launched_at(&m, &frame(), 2.0, Vector2::new(-0.5, 0.0));
        assert!(half.legs.is_empty());
    }

    /// Projections are clamped to the leg: before its start, past its end.
    #[test]
    fn a_projection_falls_on_the_leg_or_its_nearest_end() {
        let leg = Leg {
            from: Vector3::new(0.0, 0.0, -5.0),
            to: Vector3::new(30.0, 40.0, -5.0),
            start_along_m: 0.0,
            end_radius_m: 2.0,
        };
        assert_eq!(leg.length_m(), 50.0);
        assert!((leg.direction() - Vector2::new(0.6, 0.8)).norm() < 1e-12);
        let (t, d) = leg.project(&Vector2::new(-3.0, -4.0));
        assert_eq!((t, d), (0.0, 5.0));
        let (t, d) = leg.project(&Vector2::new(36.0, 48.0));
        assert!(
            (t - 1.0).abs() < 1e-12 && (d - 10.0).abs() < 1e-9,
            "{t} {d}"
        );
        // 10 m along, 5 m to the left.
        let (t, d) = leg.project(&Vector2::new(6.0 + 4.0, 8.0 - 3.0));
        assert!((t - 0.2).abs() < 1e-12 && (d - 5.0).abs() < 1e-9, "{t} {d}");
        let point = Leg {
            to: leg.from,
            ..leg
        };
        assert_eq!(point.direction(), Vector2::zeros());
        assert_eq!(point.project(&Vector2::new(3.0, 4.0)), (0.0, 5.0));
    }
}
