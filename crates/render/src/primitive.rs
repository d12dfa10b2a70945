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
        (t > 0.0 && t <= max_t).then_some(t)
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
    (c > 0.0 && disc >= 0.0 && b < 0.0).then(|| (-b - disc.sqrt()) / a)
}

/// Where the ray enters an upright cylinder: its side between the caps, or
/// a cap within the radius.
fn enter_cylinder(o: Vector, d: Vector, r: f32, hh: f32) -> Option<f32> {
    let inside = o.x * o.x + o.y * o.y < r * r && o.z.abs() < hh;
    if inside {
        return None;
    }
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
        let cap = -hh * d.z.signum();
        let t = (cap - o.z) / d.z;
        let (x, y) = (o.x + t * d.x, o.y + t * d.y);
        if t > 0.0 && x * x + y * y <= r * r && best.is_none_or(|b| t < b) {
            best = Some(t);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: f32, y: f32, z: f32) -> Vector {
        Vector::new(x, y, z)
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
