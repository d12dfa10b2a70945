//! ArduPilot's single-precision `AP_Math` helpers, computed exactly as its SITL
//! build computes them, for the ports that must reproduce ArduPilot bit for
//! bit (see [`super::scurve`]).
//!
//! The SITL build compiles with `-fsingle-precision-constant` (literals are
//! `float`) and defines `ftype` as `double`. That matters in two places:
//!
//! - `sq(float)` is a plain float square, but the variadic `sq(a, b, ...)`
//!   returns `ftype`: `sq(x, y, z)` is `double(x·x) + double(y·y + z·z)`, the
//!   last pair summed in float. `norm()` takes the square root of that in
//!   double; `Vector3f::length()` rounds it to float.
//! - `Vector2f::length()` is therefore `sqrtf(x·x + y·y)` (a float sum whose
//!   double square root, rounded to float, is the float square root).
//!
//! `MIN`/`MAX` are ArduPilot's `one < two ? one : two` (not IEEE min/max: the
//! second argument wins ties, including `0.0` against `-0.0`). Sign tests use
//! `FLT_EPSILON`. Transcendentals (`sinf`, `cosf`, `powf`) are the C library's
//! single-precision functions, as Rust's `f32` methods call them on Linux.
//! Position, velocity and acceleration vectors are NED or NEU metres as the
//! caller uses them; nothing here has a frame.

use nalgebra::{Vector2, Vector3};

/// `FLT_EPSILON`.
pub const FLT_EPSILON: f32 = f32::EPSILON;
/// `M_PI` as `-fsingle-precision-constant` makes it: π rounded to float.
pub const M_PI: f32 = std::f32::consts::PI;

/// `is_zero(float)`: |x| < FLT_EPSILON.
#[inline]
pub fn is_zero(x: f32) -> bool {
    x.abs() < FLT_EPSILON
}

/// `is_positive(float)`: x ≥ FLT_EPSILON.
#[inline]
pub fn is_positive(x: f32) -> bool {
    x >= FLT_EPSILON
}

/// `is_negative(float)`: x ≤ −FLT_EPSILON.
#[inline]
pub fn is_negative(x: f32) -> bool {
    x <= -FLT_EPSILON
}

/// `is_equal(float, float)`: |a − b| < FLT_EPSILON.
#[inline]
pub fn is_equal(a: f32, b: f32) -> bool {
    (a - b).abs() < FLT_EPSILON
}

/// ArduPilot's `MIN(a, b)`: `a < b ? a : b`.
#[inline]
pub fn min(a: f32, b: f32) -> f32 {
    if a < b {
        a
    } else {
        b
    }
}

/// ArduPilot's `MAX(a, b)`: `a > b ? a : b`.
#[inline]
pub fn max(a: f32, b: f32) -> f32 {
    if a > b {
        a
    } else {
        b
    }
}

/// `sq(float)`: the float square.
#[inline]
pub fn sq(x: f32) -> f32 {
    x * x
}

/// `safe_sqrt`: the float square root, 0 for a negative or NaN argument.
#[inline]
pub fn safe_sqrt(x: f32) -> f32 {
    if x >= 0.0 {
        x.sqrt()
    } else {
        0.0
    }
}

/// `Vector3f::length()` on SITL: squares in float, `y² + z²` summed in float,
/// added to `x²` and square-rooted in double, rounded to float.
#[inline]
pub fn length3(v: &Vector3<f32>) -> f32 {
    let yz = v.y * v.y + v.z * v.z;
    (f64::from(v.x * v.x) + f64::from(yz)).sqrt() as f32
}

/// `Vector2f::length()`: `sqrtf(x² + y²)`.
#[inline]
pub fn length2(v: &Vector2<f32>) -> f32 {
    (v.x * v.x + v.y * v.y).sqrt()
}

/// `Vector3f::length_squared()`: the float dot product, summed left to right.
#[inline]
pub fn length_squared3(v: &Vector3<f32>) -> f32 {
    v.x * v.x + v.y * v.y + v.z * v.z
}

/// `Vector3f::is_zero()`: every component within FLT_EPSILON of zero.
#[inline]
pub fn is_zero3(v: &Vector3<f32>) -> bool {
    is_zero(v.x) && is_zero(v.y) && is_zero(v.z)
}

/// `Vector3f::normalized()`: each component divided by [`length3`].
#[inline]
pub fn normalized3(v: &Vector3<f32>) -> Vector3<f32> {
    let l = length3(v);
    Vector3::new(v.x / l, v.y / l, v.z / l)
}

/// `kinematic_limit(Vector3f direction, max_xy, max_z_pos, max_z_neg)` from
/// `AP_Math/control.cpp`: the largest magnitude along `direction` whose
/// horizontal part stays within `max_xy` and vertical part within `max_z_pos`
/// (along +z) or `max_z_neg` (along −z). 0 for a zero direction or limit.
pub fn kinematic_limit(
    direction: Vector3<f32>,
    max_xy: f32,
    max_z_pos: f32,
    max_z_neg: f32,
) -> f32 {
    if is_zero(length_squared3(&direction))
        || is_zero(max_xy)
        || is_zero(max_z_pos)
        || is_zero(max_z_neg)
    {
        return 0.0;
    }
    let max_xy = max_xy.abs();
    let max_z_pos = max_z_pos.abs();
    let max_z_neg = max_z_neg.abs();
    let d = normalized3(&direction);
    let xy_length = length2(&Vector2::new(d.x, d.y));
    if is_zero(xy_length) {
        return if is_positive(d.z) {
            max_z_pos
        } else {
            max_z_neg
        };
    }
    if is_zero(d.z) {
        return max_xy;
    }
    let slope = d.z / xy_length;
    if is_positive(slope) {
        if slope.abs() < max_z_pos / max_xy {
            return max_xy / xy_length;
        }
        return (max_z_pos / d.z).abs();
    }
    if slope.abs() < max_z_neg / max_xy {
        return max_xy / xy_length;
    }
    (max_z_neg / d.z).abs()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length3_sums_yz_in_float_and_the_rest_in_double() {
        // y² + z² loses the low bits in float; x² then adds in double.
        let v = Vector3::new(1.0e-4_f32, 3.0, 4.0);
        let yz = 25.0_f32;
        let want = (f64::from(1.0e-4_f32 * 1.0e-4_f32) + f64::from(yz)).sqrt() as f32;
        assert_eq!(length3(&v).to_bits(), want.to_bits());
        assert_eq!(length3(&Vector3::new(3.0, 4.0, 0.0)), 5.0);
    }

    #[test]
    fn min_and_max_let_the_second_argument_win_ties() {
        assert!(min(0.0, -0.0).is_sign_negative());
        assert!(max(-0.0, 0.0).is_sign_positive());
        assert_eq!(min(1.0, 2.0), 1.0);
        assert_eq!(max(1.0, 2.0), 2.0);
    }

    #[test]
    fn kinematic_limit_picks_the_binding_axis() {
        let up = Vector3::new(0.0, 0.0, 1.0);
        assert_eq!(kinematic_limit(up, 5.0, 2.0, 1.0), 2.0);
        assert_eq!(kinematic_limit(-up, 5.0, 2.0, 1.0), 1.0);
        assert_eq!(
            kinematic_limit(Vector3::new(3.0, 4.0, 0.0), 5.0, 2.0, 1.0),
            5.0
        );
        // 45° climb: the vertical limit binds at 2/sin 45°.
        let v = kinematic_limit(Vector3::new(1.0, 0.0, 1.0), 5.0, 2.0, 1.0);
        assert!((v - 2.0 * std::f32::consts::SQRT_2).abs() < 1e-5, "{v}");
        assert_eq!(kinematic_limit(Vector3::zeros(), 5.0, 2.0, 1.0), 0.0);
        assert_eq!(kinematic_limit(up, 5.0, 0.0, 1.0), 0.0);
    }

    #[test]
    fn kinematic_limit_is_zero_when_any_one_limit_is() {
        // A 45° climb, limited on every axis but one.
        let climb = Vector3::new(1.0, 0.0, 1.0);
        assert!(kinematic_limit(climb, 5.0, 2.0, 1.0) > 2.0);
        assert_eq!(kinematic_limit(climb, 0.0, 2.0, 1.0), 0.0);
        assert_eq!(kinematic_limit(climb, 5.0, 0.0, 1.0), 0.0);
        assert_eq!(kinematic_limit(-climb, 5.0, 2.0, 0.0), 0.0);
        // Also where the zero limit is not the binding one: straight up
        // with no horizontal limit, level with no vertical one.
        assert_eq!(
            kinematic_limit(Vector3::new(0.0, 0.0, 1.0), 0.0, 2.0, 1.0),
            0.0
        );
        assert_eq!(
            kinematic_limit(Vector3::new(1.0, 0.0, 0.0), 5.0, 0.0, 1.0),
            0.0
        );
        assert_eq!(
            kinematic_limit(Vector3::new(1.0, 0.0, 0.0), 5.0, 2.0, 0.0),
            0.0
        );
        // A shallow descent: the horizontal limit binds, 5 / cos(atan 0.1).
        let v = kinematic_limit(Vector3::new(10.0, 0.0, -1.0), 5.0, 2.0, 1.0);
        assert!((v - 5.0 * 1.01_f32.sqrt()).abs() < 1e-5, "{v}");
        // A steep one: the downward limit, 1 / sin(atan 10).
        let v = kinematic_limit(Vector3::new(1.0, 0.0, -10.0), 5.0, 2.0, 1.0);
        assert!((v - 1.01_f32.sqrt()).abs() < 1e-5, "{v}");
        // Negative limits count by their size.
        let v = kinematic_limit(Vector3::new(3.0, 4.0, 0.0), -5.0, 2.0, 1.0);
        assert_eq!(v, 5.0);
    }

    #[test]
    fn sign_and_zero_tests_use_flt_epsilon_strictly() {
        let half = FLT_EPSILON / 2.0;
        assert!(is_zero(0.0) && is_zero(half) && is_zero(-half));
        assert!(!is_zero(FLT_EPSILON) && !is_zero(-FLT_EPSILON));
        assert!(is_positive(FLT_EPSILON) && !is_positive(half) && !is_positive(-1.0));
        assert!(is_negative(-FLT_EPSILON) && is_negative(-1.0));
        assert!(!is_negative(-half) && !is_negative(0.0) && !is_negative(1.0));
        assert!(is_equal(0.3, 0.3) && is_equal(-2.0, -2.0 + half));
        assert!(!is_equal(0.0, FLT_EPSILON) && !is_equal(1.0, 2.0) && !is_equal(2.0, 1.0));
        assert!(is_zero3(&Vector3::zeros()) && is_zero3(&Vector3::new(half, -half, half)));
        for axis in 0..3 {
            let mut v = Vector3::new(half, half, half);
            v[axis] = 1e-3;
            assert!(!is_zero3(&v), "{v:?}");
        }
    }
}
