//! The primitives in their own axes (x forward, y right, z down; centred
//! on the origin), with closed-form ray intersections: the slab test for a
//! box, the quadratic for a sphere, and for an upright cylinder the
//! quadratic of its side with its two caps. A ray from inside a primitive
//! does not meet it (a camera inside an object sees out).

use parry3d::math::Vector;

/// A primitive, single precision, m.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Primitive {
    /// A box of these half edge lengths.
    Box {
        /// Half extents along x, y, z, m.
        half: Vector,
    },
    /// A cylinder standing on its z axis.
    Cylinder {
        /// Radius, m.
        radius: f32,
        /// Half its height, m.
        half_height: f32,
    },
    /// A sphere.
    Sphere {
        /// Radius, m.
        radius: f32,
    },
}

impl Primitive {
    /// Half the extents of its bounding box in its own axes, m.
    pub fn half_extents(&self) -> Vector {
        match *self {
            Primitive::Box { half } => half,
            Primitive::Cylinder {
                radius,
                half_height,
            } => Vector::new(radius, radius, half_height),
            Primitive::Sphere { radius } => Vector::splat(radius),
        }
    }

    /// The radius of the smallest sphere about its centre that holds it, m.
    pub fn bounding_radius(&self) -> f32 {
        match *self {
            Primitive::Box { half } => half.length(),
            Primitive::Cylinder {
                radius,
                half_height,
            } => radius.hypot(half_height),
            Primitive::Sphere { radius } => radius,
        }
    }

    /// The smallest `t` in (0, `max_t`] at which the ray `o + t·d` enters
    /// it; None when it does not, or starts inside.
    pub fn cast(&self, o: Vector, d: Vector, max_t: f32) -> Option<f32> {
        let t = match *self {
            Primitive::Box { half } => enter_box(o, d, half),
            Primitive::Sphere { radius } => enter_sphere(o, d, radius),
            Primitive::Cylinder {
                radius,
                half_height,
            } => enter_cylinder(o, d, radius, half_height),
        }?;
        // Each entry is after the ray's start: only the range to check.
        (t <= max_t).then_some(t)
    }

    /// The outward unit normal at `p`, a point on its surface.
    pub fn normal(&self, p: Vector) -> Vector {
        match *self {
            Primitive::Box { half } => {
                // The face the point is nearest, relative to its size.
                let r = (p / half).abs();
                if r.x >= r.y && r.x >= r.z {
                    Vector::new(p.x.signum(), 0.0, 0.0)
                } else if r.y >= r.z {
                    Vector::new(0.0, p.y.signum(), 0.0)
                } else {
                    Vector::new(0.0, 0.0, p.z.signum())
                }
            }
            Primitive::Sphere { .. } => p.normalize(),
            Primitive::Cylinder {
                radius,
                half_height,
            } => {
                let radial = (p.x * p.x + p.y * p.y).sqrt();
                if p.z.abs() / half_height >= radial / radius {
                    Vector::new(0.0, 0.0, p.z.signum())
                } else {
                    Vector::new(p.x / radial, p.y / radial, 0.0)
                }
            }
        }
    }
}

/// The slab test: where the ray enters the box of half extents `h`.
fn enter_box(o: Vector, d: Vector, h: Vector) -> Option<f32> {
    let inv = d.recip();
    let a = (-h - o) * inv;
    let b = (h - o) * inv;
    let near = a.min(b).max_element();
    let far = a.max(b).min_element();
    // Rays along a face's plane give NaN from 0·∞: they miss.
    (near <= far && near > 0.0).then_some(near)
}

/// The nearer root of |o + t·d|² = r², if the ray starts outside.
fn enter_sphere(o: Vector, d: Vector, r: f32) -> Option<f32> {
    let a = d.dot(d);
    let b = o.dot(d);
    let c = o.dot(o) - r * r;
    let disc = b * b - a * c;
    if disc < 0.0 {
        return None;
    }
    // Outside (c > 0) and closing (b < 0): the nearer root is ahead.
    (c > 0.0 && b < 0.0).then(|| (-b - disc.sqrt()) / a)
}

/// Where the ray enters an upright cylinder: its side between the caps, or
/// a cap within the radius.
fn enter_cylinder(o: Vector, d: Vector, r: f32, hh: f32) -> Option<f32> {
    // From inside, the side's nearer root and the cap facing the ray are
    // both behind the start: nothing is entered.
    let mut best: Option<f32> = None;
    let a = d.x * d.x + d.y * d.y;
    if a > 0.0 {
        let b = o.x * d.x + o.y * d.y;
        let c = o.x * o.x + o.y * o.y - r * r;
        let disc = b * b - a * c;
        if disc >= 0.0 {
            let t = (-b - disc.sqrt()) / a;
            if t > 0.0 && (o.z + t * d.z).abs() <= hh {
                best = Some(t);
            }
        }
    }
    if d.z != 0.0 {
        // The cap facing the ray: the top (−z) for a ray going down.
        let cap = -hh.copysign(d.z);
        let t = (cap - o.z) / d.z;
        let (x, y) = (o.x + t * d.x, o.y + t * d.y);
        // A ray that enters through this cap crosses the side's surface
        // above or below the body, so at most one of the two is met.
        if t > 0.0 && x * x + y * y <= r * r {
            best = Some(t);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `p` is inside the primitive, from its definition.
    fn inside(s: &Primitive, p: Vector) -> bool {
        match *s {
            Primitive::Box { half } => {
                p.x.abs() <= half.x && p.y.abs() <= half.y && p.z.abs() <= half.z
            }
            Primitive::Sphere { radius } => p.length() <= radius,
            Primitive::Cylinder {
                radius,
                half_height,
            } => (p.x * p.x + p.y * p.y).sqrt() <= radius && p.z.abs() <= half_height,
        }
    }

    /// Where the ray first enters, marched in steps of 2 mm then bisected:
    /// independent of the closed forms.
    fn marched(s: &Primitive, o: Vector, d: Vector, max_t: f32) -> Option<f32> {
        if inside(s, o) {
            return None;
        }
        let step = 0.002 / d.length();
        let mut t = 0.0;
        while t < max_t {
            let next = t + step;
            if inside(s, o + d * next) {
                let (mut lo, mut hi) = (t, next);
                for _ in 0..40 {
                    let mid = 0.5 * (lo + hi);
                    if inside(s, o + d * mid) {
                        hi = mid;
                    } else {
                        lo = mid;
                    }
                }
                return (hi <= max_t).then_some(hi);
            }
            t = next;
        }
        None
    }

    /// Rays from a shell 3–6 m out at every angle, aimed near the centre,
    /// against shapes of unequal, non-unit sizes: the closed forms agree
    /// with the march to 0.1 mm, and each normal is a unit vector facing
    /// the ray, on the face the point lies on.
    #[test]
    fn closed_forms_agree_with_marching_the_definition() {
        let shapes = [
            Primitive::Box {
                half: Vector::new(0.7, 1.3, 2.1),
            },
            Primitive::Sphere { radius: 1.7 },
            Primitive::Cylinder {
                radius: 1.3,
                half_height: 2.2,
            },
        ];
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 40) as f32 / (1u64 << 24) as f32
        };
        let (mut hits, mut misses) = (0, 0);
        for s in &shapes {
            for _ in 0..300 {
                let dir_o = Vector::new(next() - 0.5, next() - 0.5, next() - 0.5).normalize();
                let o = dir_o * (3.0 + 3.0 * next());
                let aim = Vector::new(next() - 0.5, next() - 0.5, next() - 0.5) * 4.0;
                let d = (aim - o) * (0.5 + next());
                let want = marched(s, o, d, 100.0);
                let got = s.cast(o, d, 100.0);
                match (want, got) {
                    (Some(w), Some(g)) => {
                        assert!((w - g).abs() * d.length() < 1e-4, "{s:?} {o} {d}: {w} {g}");
                        let p = o + d * g;
                        let n = s.normal(p);
                        assert!((n.length() - 1.0).abs() < 1e-5);
                        assert!(n.dot(d) < 0.0, "{s:?} {p} {n}");
                        // On the face: the surface's own extent along n.
                        let reach = match *s {
                            Primitive::Box { half } => (n * half).abs().element_sum(),
                            Primitive::Sphere { radius } => radius,
                            Primitive::Cylinder {
                                radius,
                                half_height,
                            } => {
                                if n.z != 0.0 {
                                    half_height
                                } else {
                                    radius
                                }
                            }
                        };
                        assert!((p.dot(n) - reach).abs() < 1e-3, "{s:?} {p} {n}");
                        hits += 1;
                    }
                    (None, None) => misses += 1,
                    other => panic!("{s:?} {o} {d}: {other:?}"),
                }
            }
        }
        assert!(hits > 300 && misses > 100, "{hits} {misses}");
    }

    fn v(x: f32, y: f32, z: f32) -> Vector {
        Vector::new(x, y, z)
    }

    #[test]
    fn the_bounding_radius_reaches_the_farthest_point() {
        let b = Primitive::Box {
            half: v(1.0, 2.0, 2.0),
        };
        let c = Primitive::Cylinder {
            radius: 3.0,
            half_height: 4.0,
        };
        let s = Primitive::Sphere { radius: 2.5 };
        assert_eq!([b, c, s].map(|p| p.bounding_radius()), [3.0, 5.0, 2.5]);
    }

    #[test]
    fn a_box_is_entered_at_its_nearest_face_from_any_side() {
        let b = Primitive::Box {
            half: v(1.0, 2.0, 3.0),
        };
        assert_eq!(
            b.cast(v(-5.0, 0.0, 0.0), v(1.0, 0.0, 0.0), 100.0),
            Some(4.0)
        );
        assert_eq!(
            b.cast(v(5.0, 0.0, 0.0), v(-2.0, 0.0, 0.0), 100.0),
            Some(2.0)
        );
        assert_eq!(
            b.cast(v(0.0, 10.0, 0.0), v(0.0, -1.0, 0.0), 100.0),
            Some(8.0)
        );
        assert_eq!(
            b.cast(v(0.0, 0.0, -9.0), v(0.0, 0.0, 1.0), 100.0),
            Some(6.0)
        );
        // Beyond the range, behind, beside, from inside: no.
        assert_eq!(b.cast(v(-5.0, 0.0, 0.0), v(1.0, 0.0, 0.0), 3.9), None);
        assert_eq!(b.cast(v(-5.0, 0.0, 0.0), v(-1.0, 0.0, 0.0), 100.0), None);
        assert_eq!(b.cast(v(-5.0, 2.5, 0.0), v(1.0, 0.0, 0.0), 100.0), None);
        assert_eq!(b.cast(v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0), 100.0), None);
        // From a face, inwards: it starts on the box, so does not enter.
        assert_eq!(b.cast(v(-1.0, 0.0, 0.0), v(1.0, 0.0, 0.0), 100.0), None);
        // Diagonally through a corner region: the later slab decides.
        let t = b
            .cast(v(-3.0, -4.0, 0.0), v(1.0, 1.0, 0.0), 100.0)
            .expect("hit");
        assert!((t - 2.0).abs() < 1e-6, "{t}");
        assert_eq!(b.normal(v(1.0, 0.5, 0.5)), v(1.0, 0.0, 0.0));
        assert_eq!(b.normal(v(0.5, -2.0, 0.5)), v(0.0, -1.0, 0.0));
        assert_eq!(b.normal(v(0.5, 1.0, -3.0)), v(0.0, 0.0, -1.0));
        assert_eq!(b.half_extents(), v(1.0, 2.0, 3.0));
    }

    #[test]
    fn a_sphere_is_entered_at_the_nearer_root() {
        let s = Primitive::Sphere { radius: 2.0 };
        assert_eq!(
            s.cast(v(-10.0, 0.0, 0.0), v(1.0, 0.0, 0.0), 100.0),
            Some(8.0)
        );
        // A ray 1 m off the centre line: √(4 − 1) short of the centre.
        let t = s
            .cast(v(-10.0, 1.0, 0.0), v(2.0, 0.0, 0.0), 100.0)
            .expect("hit");
        assert!((t - (10.0 - 3f32.sqrt()) / 2.0).abs() < 1e-6, "{t}");
        assert_eq!(s.cast(v(-10.0, 2.5, 0.0), v(1.0, 0.0, 0.0), 100.0), None);
        assert_eq!(s.cast(v(-10.0, 0.0, 0.0), v(-1.0, 0.0, 0.0), 100.0), None);
        assert_eq!(s.cast(v(0.5, 0.0, 0.0), v(1.0, 0.0, 0.0), 100.0), None);
        assert_eq!(s.cast(v(0.5, 0.0, 0.0), v(-1.0, 0.0, 0.0), 100.0), None);
        // From its surface, inwards.
        assert_eq!(s.cast(v(-2.0, 0.0, 0.0), v(1.0, 0.0, 0.0), 100.0), None);
        let n = s.normal(v(0.0, -2.0, 0.0));
        assert_eq!(n, v(0.0, -1.0, 0.0));
        assert_eq!(s.half_extents(), v(2.0, 2.0, 2.0));
    }

    #[test]
    fn a_cylinder_is_entered_through_its_side_or_a_cap() {
        let c = Primitive::Cylinder {
            radius: 1.0,
            half_height: 2.0,
        };
        // Side, level.
        assert_eq!(
            c.cast(v(-5.0, 0.0, 0.0), v(1.0, 0.0, 0.0), 100.0),
            Some(4.0)
        );
        // Top cap from above (down is +z), and the bottom from below.
        assert_eq!(
            c.cast(v(0.5, 0.0, -7.0), v(0.0, 0.0, 1.0), 100.0),
            Some(5.0)
        );
        assert_eq!(
            c.cast(v(0.5, 0.0, 6.0), v(0.0, 0.0, -2.0), 100.0),
            Some(2.0)
        );
        // Slanting: over the top edge onto the cap, or short of it onto
        // the side.
        let t = c
            .cast(v(-1.5, 0.0, -4.0), v(1.0, 0.0, 2.0), 100.0)
            .expect("cap");
        assert!((t - 1.0).abs() < 1e-6, "{t}");
        let t = c
            .cast(v(-3.0, 0.0, -1.0), v(1.0, 0.0, 0.25), 100.0)
            .expect("side");
        assert!((t - 2.0).abs() < 1e-6, "{t}");
        // Past the side above the top, beside, inside, behind: no.
        assert_eq!(c.cast(v(-5.0, 0.0, -2.5), v(1.0, 0.0, 0.0), 100.0), None);
        assert_eq!(c.cast(v(-5.0, 1.5, 0.0), v(1.0, 0.0, 0.0), 100.0), None);
        assert_eq!(c.cast(v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0), 100.0), None);
        // From its side or its top, inwards: on it, so not entered.
        assert_eq!(c.cast(v(-1.0, 0.0, 0.0), v(1.0, 0.0, 0.0), 100.0), None);
        assert_eq!(c.cast(v(0.5, 0.0, -2.0), v(0.0, 0.0, 1.0), 100.0), None);
        // From inside towards a cap, or up its axis from below: inside.
        assert_eq!(c.cast(v(0.3, 0.2, 1.0), v(0.0, 0.0, 1.0), 100.0), None);
        assert_eq!(c.cast(v(0.3, 0.2, -1.0), v(0.1, 0.0, -1.0), 100.0), None);
        assert_eq!(c.cast(v(-5.0, 0.0, 0.0), v(-1.0, 0.0, 0.0), 100.0), None);
        assert_eq!(c.cast(v(0.5, 0.0, -7.0), v(0.0, 0.0, 1.0), 4.0), None);
        // A cap beyond the radius, going straight down beside it.
        assert_eq!(c.cast(v(1.5, 0.0, -7.0), v(0.0, 0.0, 1.0), 100.0), None);
        assert_eq!(c.normal(v(-1.0, 0.0, 0.5)), v(-1.0, 0.0, 0.0));
        assert_eq!(c.normal(v(0.2, 0.3, -2.0)), v(0.0, 0.0, -1.0));
        assert_eq!(c.normal(v(0.2, 0.3, 2.0)), v(0.0, 0.0, 1.0));
        assert_eq!(c.half_extents(), v(1.0, 1.0, 2.0));
    }
}
