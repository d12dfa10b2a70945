//! SimpleFlight's geofence and rally points, from the fence and rally lists
//! of a plan (MAV_CMD_NAV_FENCE_* and MAV_CMD_NAV_RALLY_POINT items), in the
//! local NED frame around home.
//!
//! As PX4's geofence: the vehicle is inside when it is inside at least one
//! inclusion polygon or circle (PX4 takes their union) and outside every
//! exclusion, and within the cylinder of `GF_MAX_HOR_DIST` /
//! `GF_MAX_VER_DIST` around home when those are positive.

use nalgebra::{Vector2, Vector3};

use mavsitl_core::geo::{GeoPoint, LocalFrame};
use mavsitl_mavlink::mission::commands;
use mavsitl_mavlink::mission::MissionItem;

/// One fence shape, NE m around home.
#[derive(Debug, Clone, PartialEq)]
enum Shape {
    Polygon(Vec<Vector2<f64>>),
    Circle { centre: Vector2<f64>, radius_m: f64 },
}

impl Shape {
    fn contains(&self, p: &Vector2<f64>) -> bool {
        match self {
            Shape::Circle { centre, radius_m } => (p - centre).norm() <= *radius_m,
            Shape::Polygon(v) => {
                // Even-odd ray casting along +E, over each edge.
                let mut inside = false;
                for (a, b) in v.iter().zip(v.iter().skip(1).chain(v.first())) {
                    if (a.x > p.x) != (b.x > p.x) {
                        let y = a.y + (p.x - a.x) * (b.y - a.y) / (b.x - a.x);
                        if p.y < y {
                            inside = !inside;
                        }
                    }
                }
                inside
            }
        }
    }
}

/// Why the vehicle is outside the fence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Breach {
    /// Outside every inclusion shape.
    Inclusion,
    /// Inside an exclusion shape.
    Exclusion,
    /// Farther than GF_MAX_HOR_DIST from home.
    MaxHorizontal,
    /// Higher than GF_MAX_VER_DIST above home.
    MaxVertical,
}

impl Breach {
    /// A short description.
    pub fn describe(self) -> &'static str {
        match self {
            Breach::Inclusion => "outside the inclusion fence",
            Breach::Exclusion => "inside an exclusion fence",
            Breach::MaxHorizontal => "beyond GF_MAX_HOR_DIST",
            Breach::MaxVertical => "above GF_MAX_VER_DIST",
        }
    }
}

/// The fence.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Geofence {
    inclusion: Vec<Shape>,
    exclusion: Vec<Shape>,
    /// GF_MAX_HOR_DIST, m (≤ 0: off).
    pub max_hor_dist_m: f64,
    /// GF_MAX_VER_DIST, m (≤ 0: off).
    pub max_ver_dist_m: f64,
}

impl Geofence {
    /// The fence of `items` (a plan's fence list; other commands are ignored),
    /// in `frame`.
    pub fn from_items(items: &[MissionItem], frame: &LocalFrame) -> Self {
        let mut fence = Geofence::default();
        let ne = |it: &MissionItem| {
            let p = frame.to_ned(&GeoPoint::from_deg(it.x, it.y, frame.origin().alt_m));
            Vector2::new(p.x, p.y)
        };
        let mut i = 0;
        while let Some(it) = items.get(i) {
            match it.command {
                commands::NAV_FENCE_POLYGON_VERTEX_INCLUSION
                | commands::NAV_FENCE_POLYGON_VERTEX_EXCLUSION => {
                    // param1 is the vertex count, at least 3 (a count that
                    // is not a number or below 3 reads as 3); the vertices
                    // follow in order.
                    let count = (it.params[0] as usize).max(3);
                    let verts: Vec<Vector2<f64>> = items
                        .iter()
                        .skip(i)
                        .take(count)
                        .take_while(|v| v.command == it.command)
                        .map(ne)
                        .collect();
                    let n = verts.len().max(1);
                    if verts.len() >= 3 {
                        let shape = Shape::Polygon(verts);
                        if it.command == commands::NAV_FENCE_POLYGON_VERTEX_INCLUSION {
                            fence.inclusion.push(shape);
                        } else {
                            fence.exclusion.push(shape);
                        }
                    }
                    i += n;
                    continue;
                }
                commands::NAV_FENCE_CIRCLE_INCLUSION | commands::NAV_FENCE_CIRCLE_EXCLUSION => {
                    let radius_m = it.params[0];
                    // (NaN and a radius of zero or less bound nothing.)
                    if radius_m > 0.0 {
                        let shape = Shape::Circle {
                            centre: ne(it),
                            radius_m,
                        };
                        if it.command == commands::NAV_FENCE_CIRCLE_INCLUSION {
                            fence.inclusion.push(shape);
                        } else {
                            fence.exclusion.push(shape);
                        }
                    }
                }
                _ => {}
            }
            i += 1;
        }
        fence
    }

    /// Whether any limit is set.
    pub fn is_active(&self) -> bool {
        !self.inclusion.is_empty()
            || !self.exclusion.is_empty()
            || self.max_hor_dist_m > 0.0
            || self.max_ver_dist_m > 0.0
    }

    /// The breach at `pos_ned_m` for home at `home_ned_m`, if any.
    pub fn check(&self, pos_ned_m: &Vector3<f64>, home_ned_m: &Vector3<f64>) -> Option<Breach> {
        let p = pos_ned_m.xy();
        if !self.inclusion.is_empty() && !self.inclusion.iter().any(|s| s.contains(&p)) {
            return Some(Breach::Inclusion);
        }
        if self.exclusion.iter().any(|s| s.contains(&p)) {
            return Some(Breach::Exclusion);
        }
        if self.max_hor_dist_m > 0.0 && (p - home_ned_m.xy()).norm() > self.max_hor_dist_m {
            return Some(Breach::MaxHorizontal);
        }
        if self.max_ver_dist_m > 0.0 && home_ned_m.z - pos_ned_m.z > self.max_ver_dist_m {
            return Some(Breach::MaxVertical);
        }
        None
    }
}

/// Rally points of a plan's rally list, NED m around home (altitude relative
/// to home, as QGroundControl writes them).
pub fn rally_points(items: &[MissionItem], frame: &LocalFrame) -> Vec<Vector3<f64>> {
    items
        .iter()
        .filter(|it| it.command == commands::NAV_RALLY_POINT)
        .map(|it| {
            let p = frame.to_ned(&GeoPoint::from_deg(it.x, it.y, frame.origin().alt_m));
            Vector3::new(p.x, p.y, -it.z)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame() -> LocalFrame {
        LocalFrame::new(GeoPoint::from_deg(47.0, 8.0, 400.0))
    }

    fn item(command: u16, n: f64, north_m: f64, east_m: f64) -> MissionItem {
        let g = frame().to_geodetic(&Vector3::new(north_m, east_m, 0.0));
        let (lat, lon) = (g.lat_deg(), g.lon_deg());
        MissionItem {
            command,
            frame: 0,
            params: [n, 0.0, 0.0, 0.0],
            x: lat,
            y: lon,
            z: 0.0,
            autocontinue: true,
        }
    }

    /// The winding number of `poly` about `p`, from the sum of the angles
    /// its edges subtend: nonzero inside a simple polygon.
    fn winding(poly: &[Vector2<f64>], p: &Vector2<f64>) -> f64 {
        let n = poly.len();
        (0..n)
            .map(|i| {
                let (a, b) = (poly[i] - p, poly[(i + 1) % n] - p);
                (a.x * b.y - a.y * b.x).atan2(a.dot(&b))
            })
            .sum::<f64>()
            / std::f64::consts::TAU
    }

    /// Whether `p` lies on an edge of `poly` (within 1 mm).
    fn on_an_edge(poly: &[Vector2<f64>], p: &Vector2<f64>) -> bool {
        let n = poly.len();
        (0..n).any(|i| {
            let (a, b) = (poly[i], poly[(i + 1) % n]);
            let t = ((p - a).dot(&(b - a)) / (b - a).norm_squared()).clamp(0.0, 1.0);
            (a + (b - a) * t - p).norm() < 1e-3
        })
    }

    /// A concave arrowhead of slanted edges, with vertices level with the
    /// grid's rows: the ray cast agrees with the winding number at every
    /// point of a 1 m grid off its edges, and the points hugging its edges
    /// half a metre in and out fall on their sides.
    #[test]
    fn a_concave_polygon_contains_what_its_winding_number_says() {
        let arrow = [(0.0, 0.0), (40.0, 20.0), (0.0, 40.0), (12.0, 20.0)]
            .map(|(n, e)| Vector2::new(n, e))
            .to_vec();
        let shape = Shape::Polygon(arrow.clone());
        let mut inside = 0;
        for n in -2..=42 {
            for e in -2..=42 {
                let p = Vector2::new(f64::from(n), f64::from(e));
                if on_an_edge(&arrow, &p) {
                    continue;
                }
                let w = winding(&arrow, &p);
                assert_eq!(shape.contains(&p), w.abs() > 0.5, "{p:?}: winding {w}");
                inside += usize::from(w.abs() > 0.5);
            }
        }
        // The arrowhead's area is 560 m²: about that many grid points.
        assert!((500..620).contains(&inside), "{inside}");
        // Either side of the slanted edge from (0, 0) to (40, 20), whose
        // inside is east of it, and of the notch's edge (12, 20)–(0, 40).
        for (n, e, want) in [
            (20.0, 10.5, true),
            (20.0, 9.5, false),
            (6.0, 29.7, false),
            (6.0, 30.3, true),
            (20.0, 20.0, true),
            (30.0, 20.0, true),
            (8.0, 20.0, false),
        ] {
            assert_eq!(shape.contains(&Vector2::new(n, e)), want, "({n}, {e})");
        }
    }

    /// Each polygon takes as many vertices as its count says, at least
    /// three, and only while the command stays the same; the inclusions
    /// are a union. A circle of no radius is no fence.
    #[test]
    fn polygons_take_their_counted_vertices_and_empty_circles_are_dropped() {
        let inc = commands::NAV_FENCE_POLYGON_VERTEX_INCLUSION;
        let exc = commands::NAV_FENCE_POLYGON_VERTEX_EXCLUSION;
        let items = [
            // A triangle whose count says 2: read as 3.
            item(inc, 2.0, 0.0, 0.0),
            item(inc, 2.0, 20.0, 0.0),
            item(inc, 2.0, 0.0, 20.0),
            // A square north-east of it, counted 4.
            item(inc, 4.0, 30.0, 30.0),
            item(inc, 4.0, 40.0, 30.0),
            item(inc, 4.0, 40.0, 40.0),
            item(inc, 4.0, 30.0, 40.0),
            // An exclusion that says 5 but has 3.
            item(exc, 5.0, 32.0, 32.0),
            item(exc, 5.0, 34.0, 32.0),
            item(exc, 5.0, 32.0, 34.0),
            item(commands::NAV_FENCE_CIRCLE_INCLUSION, 0.0, 100.0, 100.0),
            item(commands::NAV_FENCE_CIRCLE_INCLUSION, -5.0, 100.0, 100.0),
            item(commands::NAV_FENCE_CIRCLE_INCLUSION, f64::NAN, 100.0, 100.0),
        ];
        let f = Geofence::from_items(&items, &frame());
        let home = Vector3::zeros();
        let at = |n: f64, e: f64| f.check(&Vector3::new(n, e, -5.0), &home);
        assert_eq!(at(5.0, 5.0), None);
        assert_eq!(at(12.0, 12.0), Some(Breach::Inclusion));
        assert_eq!(at(38.0, 38.0), None);
        assert_eq!(at(32.5, 32.5), Some(Breach::Exclusion));
        assert_eq!(at(100.0, 100.0), Some(Breach::Inclusion));
        assert!(f.is_active());
        let circles = Geofence::from_items(&items[10..], &frame());
        assert!(!circles.is_active(), "{circles:?}");
        let exclusion = Geofence::from_items(&items[7..], &frame());
        assert!(exclusion.is_active());
        for (hor, ver, active) in [(0.1, 0.0, true), (0.0, 0.1, true), (-1.0, -1.0, false)] {
            let limits = Geofence {
                max_hor_dist_m: hor,
                max_ver_dist_m: ver,
                ..Geofence::default()
            };
            assert_eq!(limits.is_active(), active, "{hor} {ver}");
        }
    }

    /// GF_MAX_HOR_DIST and GF_MAX_VER_DIST are measured from home, not
    /// from the origin, and a vehicle exactly at either is inside (as
    /// PX4's checks have it).
    #[test]
    fn the_distance_limits_count_from_home_and_include_their_ends() {
        let f = Geofence {
            max_hor_dist_m: 20.0,
            max_ver_dist_m: 15.0,
            ..Geofence::default()
        };
        let home = Vector3::new(30.0, -40.0, -2.0);
        let at = |n: f64, e: f64, d: f64| f.check(&Vector3::new(n, e, d), &home);
        assert_eq!(at(30.0, -40.0, -5.0), None);
        assert_eq!(at(42.0, -24.0, -5.0), None, "20 m away");
        assert_eq!(at(42.0, -23.9, -5.0), Some(Breach::MaxHorizontal));
        assert_eq!(at(30.0, -40.0, -17.0), None, "15 m above home");
        assert_eq!(at(30.0, -40.0, -17.1), Some(Breach::MaxVertical));
        assert_eq!(at(0.0, 0.0, -5.0), Some(Breach::MaxHorizontal));
    }

    /// Rally points come from the rally items alone, NED around home at
    /// their altitude above it.
    #[test]
    fn rally_points_are_the_rally_items_above_home() {
        let rally = |n: f64, e: f64, alt: f64| MissionItem {
            z: alt,
            ..item(commands::NAV_RALLY_POINT, 0.0, n, e)
        };
        let items = [
            rally(100.0, -50.0, 30.0),
            item(commands::NAV_FENCE_CIRCLE_INCLUSION, 5.0, 10.0, 10.0),
            rally(-20.0, 60.0, 12.5),
        ];
        let points = rally_points(&items, &frame());
        assert_eq!(points.len(), 2);
        for (p, want) in points
            .iter()
            .zip([[100.0, -50.0, -30.0], [-20.0, 60.0, -12.5]])
        {
            assert!(
                (p - Vector3::from(want)).norm() < 1e-6,
                "{p:?} against {want:?}"
            );
        }
    }

    #[test]
    fn each_breach_is_described_by_its_limit() {
        let said = [
            Breach::Inclusion,
            Breach::Exclusion,
            Breach::MaxHorizontal,
            Breach::MaxVertical,
        ]
        .map(Breach::describe);
        assert_eq!(
            said,
            [
                "outside the inclusion fence",
                "inside an exclusion fence",
                "beyond GF_MAX_HOR_DIST",
                "above GF_MAX_VER_DIST",
            ]
        );
    }

    #[test]
    fn a_polygon_and_a_circle_bound_the_vehicle() {
        let inc = commands::NAV_FENCE_POLYGON_VERTEX_INCLUSION;
        let items = [
            item(inc, 4.0, -10.0, -10.0),
            item(inc, 4.0, 50.0, -10.0),
            item(inc, 4.0, 50.0, 10.0),
            item(inc, 4.0, -10.0, 10.0),
            item(commands::NAV_FENCE_CIRCLE_EXCLUSION, 5.0, 30.0, 0.0),
        ];
        let f = Geofence::from_items(&items, &frame());
        let home = Vector3::zeros();
        let at = |n: f64, e: f64| f.check(&Vector3::new(n, e, -10.0), &home);
        assert_eq!(at(0.0, 0.0), None);
        assert_eq!(at(49.0, 9.0), None);
        assert_eq!(at(51.0, 0.0), Some(Breach::Inclusion));
        assert_eq!(at(0.0, -10.5), Some(Breach::Inclusion));
        assert_eq!(at(32.0, 2.0), Some(Breach::Exclusion));
        let f = Geofence {
            max_hor_dist_m: 20.0,
            max_ver_dist_m: 15.0,
            ..f
        };
        assert_eq!(
            f.check(&Vector3::new(0.0, 0.0, -16.0), &home),
            Some(Breach::MaxVertical)
        );
        assert_eq!(
            f.check(&Vector3::new(21.0, 0.0, -1.0), &home),
            Some(Breach::MaxHorizontal)
        );
    }
}
