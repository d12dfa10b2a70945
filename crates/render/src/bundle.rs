//! Bundles of rays from one point: a camera tile's.
//!
//! Every pixel of a camera casts from the same centre, and neighbouring
//! pixels meet the same few primitives. A tile of pixels is cast as a
//! bundle: the hierarchy is walked once for the [`Cone`] through the
//! tile's outer pixel edges, and each of its rays is then cast only against
//! the primitives the cone may meet ([`crate::Scene::gather`], then the
//! scene's bundled cast), a primitive whose bounding sphere the ray's line
//! misses skipped before the ray is turned into its axes. A ray's hit is the one [`crate::Scene::cast`]
//! finds: the same closed forms on the same single-precision operands,
//! and ties broken the same way (the ground's, else the primitive the
//! hierarchy gives first).
//!
//! The cone is four planes through the apex, each through two neighbouring
//! corner directions. The test against a box is conservative (a box that
//! straddles the cone's corner without meeting it passes too); it errs only
//! towards casting a ray against one primitive more.

use nalgebra::Vector3;
use parry3d::bounding_volume::Aabb;
use parry3d::math::Vector;

/// At most this many primitives in a bundle; a tile whose cone meets
/// more casts its rays through the hierarchy one by one.
pub const BUNDLE_CAPACITY: usize = 32;

/// How far a box may lie outside a plane of the cone and still be kept,
/// relative to the reach of the numbers in the test (the box's offset
/// from the apex and its size, and the apex's own distance from home): it
/// covers the rounding of single-precision positions and of the test
/// itself, about 10⁻⁷ of that reach, so that a box whose surface a ray of
/// the tile meets is never dropped.
const ROUNDING: f32 = 1e-5;

/// The rays from `apex` whose directions lie within the quadrilateral of
/// four corner directions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cone {
    /// Where every ray starts, NED m.
    pub apex: Vector,
    /// Each side plane's normal, pointing into the cone.
    normals: [Vector; 4],
}

impl Cone {
    /// The cone from `apex` over `corners`, directions given in order
    /// around the quadrilateral (either way round), within a half-space.
    ///
    /// The sides' normals are worked out in double precision: for a
    /// narrow tile the corner directions are nearly parallel, and a single
    /// precision cross product of them would turn a side by as much as a
    /// pixel (at 3° over 1 920 pixels).
    pub fn new(apex: Vector, corners: [Vector3<f64>; 4]) -> Self {
        let inside = corners[0] + corners[1] + corners[2] + corners[3];
        let normals = [0, 1, 2, 3].map(|i| {
            let n = corners[i].cross(&corners[(i + 1) % 4]);
            let n = if n.dot(&inside) < 0.0 { -n } else { n };
            Vector::new(n.x as f32, n.y as f32, n.z as f32)
        });
        Self { apex, normals }
    }

    /// Whether a ray of the cone may meet a point of `aabb`: false only
    /// when the box lies wholly outside one of its planes.
    pub fn may_meet(&self, aabb: &Aabb) -> bool {
        let c = aabb.center() - self.apex;
        let h = aabb.half_extents();
        let reach = c.abs().max_element() + h.max_element() + self.apex.abs().max_element();
        self.normals.iter().all(|n| {
            let a = n.abs();
            // The box's farthest corner along n, with room for rounding.
            n.dot(c) + a.dot(h) >= -ROUNDING * reach * a.element_sum()
        })
    }
}

/// One primitive of a bundle.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Item {
    /// Its index in the scene.
    pub(crate) index: u32,
    /// The apex in its own axes, m.
    pub(crate) apex_local: Vector,
    /// Its centre from the apex, NED m.
    pub(crate) centre: Vector,
    /// `centre`'s squared length, m².
    pub(crate) centre_sq: f32,
    /// The squared radius of a sphere about its centre that holds it, with
    /// room for rounding, m².
    pub(crate) reach_sq: f32,
}

impl Item {
    /// The primitive of index `index` whose centre lies `centre` (NED m)
    /// from the bundle's `apex` (NED m from home), `apex_local` in its own
    /// axes, held by a sphere of `radius` m about its centre.
    pub(crate) fn new(
        index: u32,
        apex_local: Vector,
        centre: Vector,
        apex: Vector,
        radius: f32,
    ) -> Self {
        let centre_sq = centre.length_squared();
        Self {
            index,
            apex_local,
            centre,
            centre_sq,
            reach_sq: radius * radius + SPHERE_ROUNDING * (centre_sq + apex.length_squared()),
        }
    }

    /// Whether the line from the apex along `dir` (`dir_sq` its squared
    /// length) misses the primitive's sphere: its squared distance from
    /// the centre, times `dir_sq`, beyond the sphere's.
    #[inline(always)]
    pub(crate) fn missed_by(&self, dir: Vector, dir_sq: f32) -> bool {
        let along = self.centre.dot(dir);
        self.centre_sq * dir_sq - along * along > self.reach_sq * dir_sq
    }
}

/// Room for rounding in a bundle's sphere test, relative to the squared
/// distances in it (the centre's from the apex, the apex's from home): a
/// radius 10⁻³ of them larger, against single precision's 10⁻⁷.
const SPHERE_ROUNDING: f32 = 1e-6;

/// The primitives a cone may meet, each with the apex in its own axes:
/// filled by [`crate::Scene::gather`], in the hierarchy's order.
#[derive(Debug, Clone, Copy)]
pub struct Bundle {
    /// The apex, NED m.
    pub(crate) apex: Vector,
    /// How many of `items` hold primitives.
    pub(crate) len: usize,
    /// The cone met more than [`BUNDLE_CAPACITY`]: cast through the hierarchy.
    pub(crate) overflow: bool,
    /// The primitives, in the order they are cast.
    pub(crate) items: [Item; BUNDLE_CAPACITY],
}

impl Default for Bundle {
    fn default() -> Self {
        Self {
            apex: Vector::ZERO,
            len: 0,
            overflow: false,
            items: [Item::default(); BUNDLE_CAPACITY],
        }
    }
}

impl Bundle {
    /// The primitives' indices, in the order they are cast; none when the
    /// bundle overflowed.
    pub fn indices(&self) -> impl Iterator<Item = u32> + '_ {
        self.items[..self.len].iter().map(|item| item.index)
    }

    /// Whether the cone met more primitives than a bundle holds.
    pub fn overflowed(&self) -> bool {
        self.overflow
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cone() -> Cone {
        // From (1, 2, 3), the directions within ±0.1 of +x in y and z.
        let d = |y: f64, z: f64| Vector3::new(1.0, y, z);
        Cone::new(
            Vector::new(1.0, 2.0, 3.0),
            [d(-0.1, -0.1), d(0.1, -0.1), d(0.1, 0.1), d(-0.1, 0.1)],
        )
    }

    fn cube(x: f32, y: f32, z: f32, half: f32) -> Aabb {
        let c = Vector::new(x, y, z);
        Aabb::new(c - Vector::splat(half), c + Vector::splat(half))
    }

    #[test]
    fn a_box_on_the_axis_or_straddling_a_side_is_met() {
        let c = cone();
        // 10 m ahead, the cone is ±1 m about (11, 2, 3).
        assert!(c.may_meet(&cube(11.0, 2.0, 3.0, 0.1)));
        // Straddling each side (the near face 0.9 m off the axis), and
        // just clear of it (1.1 m off, where the cone reaches 1.01 m at
        // the far face).
        for (dy, dz) in [(1.0, 0.0), (-1.0, 0.0), (0.0, 1.0), (0.0, -1.0)] {
            let at = |r: f32| cube(11.0, 2.0 + dy * r, 3.0 + dz * r, 0.1);
            assert!(c.may_meet(&at(1.0)), "{dy} {dz}");
            assert!(!c.may_meet(&at(1.2)), "{dy} {dz}");
        }
    }

    #[test]
    fn a_box_behind_the_apex_is_not_met_either_way_round() {
        let c = cone();
        assert!(!c.may_meet(&cube(-9.0, 2.0, 3.0, 0.5)));
        // The same corners given the other way round make the same cone.
        let d = |y: f64, z: f64| Vector3::new(1.0, y, z);
        let back = Cone::new(
            c.apex,
            [d(-0.1, 0.1), d(0.1, 0.1), d(0.1, -0.1), d(-0.1, -0.1)],
        );
        assert!(!back.may_meet(&cube(-9.0, 2.0, 3.0, 0.5)));
        assert!(back.may_meet(&cube(11.0, 2.0, 3.0, 0.1)));
        assert!(!back.may_meet(&cube(11.0, 3.2, 3.0, 0.1)));
    }

    #[test]
    fn a_box_is_kept_within_rounding_of_a_side_and_no_further() {
        // Between the planes y = 0 and y = x (and within z = ±x): the side
        // y = 0 has the normal (0, 2, 0). A box of half-side 0.5 at x = 10
        // whose top face is δ below y = 0 is kept while 2δ is within 10⁻⁵
        // of the normal's |·|₁ (2) times the reach: from the origin 10 +
        // 0.5, so δ ≤ 1.05·10⁻⁴; from an apex 100 m off home, 110.5 more.
        let d = |y: f64, z: f64| Vector3::new(1.0, y, z);
        let corners = [d(0.0, -1.0), d(0.0, 1.0), d(1.0, 1.0), d(1.0, -1.0)];
        for (apex, kept, dropped) in [(0.0, 1.0e-4, 1.1e-4), (100.0, 1.0e-3, 1.2e-3)] {
            let c = Cone::new(Vector::new(0.0, 0.0, apex), corners);
            let below = |delta: f32| cube(10.0, -0.5 - delta, apex, 0.5);
            assert!(c.may_meet(&below(0.0)), "{apex}");
            assert!(c.may_meet(&below(kept)), "{apex}");
            assert!(!c.may_meet(&below(dropped)), "{apex}");
            // Above the side, by as much: inside.
            assert!(c.may_meet(&cube(10.0, 0.5 + dropped, apex, 0.5)), "{apex}");
        }
    }

    #[test]
    fn a_line_misses_a_sphere_only_beyond_its_radius_and_the_rounding_room() {
        // A sphere of radius 1 m, 10 m ahead and `y` m aside of a line
        // along x: room 10⁻⁶ × 100 m² on the squared radius, so the line
        // passes within √1.0001 ≈ 1.00005 m and is kept.
        let item = |apex: Vector, y: f32| {
            let centre = Vector::new(10.0, y, 0.0);
            Item::new(7, Vector::ZERO, centre, apex, 1.0)
        };
        let along = Vector::new(1.0, 0.0, 0.0);
        for (y, missed) in [
            (0.0, false),
            (0.99, false),
            (1.00004, false),
            (1.0002, true),
            (-1.0002, true),
        ] {
            assert_eq!(item(Vector::ZERO, y).missed_by(along, 1.0), missed, "{y}");
        }
        // From an apex 1 km from home: room for 10⁶ m² more, a radius of
        // √(1 + 1.0001) ≈ 1.4143 m.
        let far = Vector::new(0.0, 0.0, 1000.0);
        for (y, missed) in [(1.41, false), (1.42, true)] {
            assert_eq!(item(far, y).missed_by(along, 1.0), missed, "{y}");
        }
        // A longer direction along the same line: the same answers.
        let longer = along * 3.0;
        assert!(item(Vector::ZERO, 1.0002).missed_by(longer, 9.0));
        assert!(!item(Vector::ZERO, 0.5).missed_by(longer, 9.0));
        // Behind the apex, the line still passes it: not missed.
        assert!(!item(Vector::ZERO, 0.5).missed_by(-along, 1.0));
    }

    #[test]
    fn a_box_holding_the_apex_is_met() {
        assert!(cone().may_meet(&cube(1.0, 2.0, 3.0, 0.5)));
    }
}
