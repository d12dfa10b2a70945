//! Control helpers used by the guidance port: the square-root controller and
//! the horizontal jerk-limited shaping functions the position controller
//! runs. (SCurve's single-precision helpers, `kinematic_limit` among them,
//! are in [`crate::ap_float`].)
//!
//! Ported from ArduPilot's `libraries/AP_Math/control.cpp` (Leonard Hall, GPLv3)
//! and the sign tests of `AP_Math.h`. Names follow ArduPilot so the code
//! can be read side by side. Everything is `f64`; the zero/sign tests keep
//! ArduPilot's single-precision epsilon (`FLT_EPSILON`) so that branch decisions
//! match the firmware's.

use nalgebra::Vector2;

/// Standard gravity, m/s² (ArduPilot's `GRAVITY_MSS`). The guidance keeps its
/// own copy so that it depends on nothing in the simulator.
pub const GRAVITY_MSS: f64 = 9.806_65;

/// ArduPilot's `FLT_EPSILON` threshold for `is_zero` and friends.
pub const EPSILON: f64 = f32::EPSILON as f64;

/// |x| < ε.
pub fn is_zero(x: f64) -> bool {
    x.abs() < EPSILON
}

/// x ≥ ε.
pub fn is_positive(x: f64) -> bool {
    x >= EPSILON
}

/// x ≤ −ε.
pub fn is_negative(x: f64) -> bool {
    x <= -EPSILON
}

/// x².
pub fn sq(x: f64) -> f64 {
    x * x
}

/// √x, or 0 where that is not a number (negative or NaN input).
pub fn safe_sqrt(x: f64) -> f64 {
    let r = x.sqrt();
    if r.is_nan() {
        0.0
    } else {
        r
    }
}

/// `x` clamped to [lo, hi]; a NaN gives the midpoint, as ArduPilot's
/// `constrain_value` (which also raises an internal error). Never panics,
/// whatever the bounds.
pub fn constrain(x: f64, lo: f64, hi: f64) -> f64 {
    if x.is_nan() {
        return 0.5 * (lo + hi);
    }
    if x < lo {
        lo
    } else if x > hi {
        hi
    } else {
        x
    }
}

/// Wraps an angle to (−π, π].
pub fn wrap_pi(a: f64) -> f64 {
    let mut r = (a + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU) - std::f64::consts::PI;
    if r <= -std::f64::consts::PI {
        r += std::f64::consts::TAU;
    }
    r
}

/// Both components within ±`FLT_EPSILON` (`Vector2f::is_zero`): ArduPilot's
/// test of a vector for zero, component by component.
pub fn is_zero_xy(v: &Vector2<f64>) -> bool {
    is_zero(v.x) && is_zero(v.y)
}

/// Limits the length of a 2-D vector to `max` (a `max` of zero or less
/// gives zero); returns whether it was limited (`Vector2::limit_length`).
pub fn limit_length(v: &mut Vector2<f64>, max: f64) -> bool {
    let len = v.norm();
    if len > max && is_positive(len) {
        *v *= max / len;
        return true;
    }
    false
}

/// Piecewise linear / square-root controller limiting the second derivative
/// (`sqrt_controller`): P near the set point, √(2·a·Δx) beyond, and never more
/// than the error can absorb in one `dt`.
pub fn sqrt_controller(error: f64, p: f64, second_ord_lim: f64, dt: f64) -> f64 {
    let correction_rate = if is_negative(second_ord_lim) || is_zero(second_ord_lim) {
        error * p
    } else if is_zero(p) {
        if is_positive(error) {
            safe_sqrt(2.0 * second_ord_lim * error)
        } else if is_negative(error) {
            -safe_sqrt(2.0 * second_ord_lim * (-error))
        } else {
            0.0
        }
    } else {
        let linear_dist = second_ord_lim / sq(p);
        if error > linear_dist {
            safe_sqrt(2.0 * second_ord_lim * (error - linear_dist / 2.0))
        } else if error < -linear_dist {
            -safe_sqrt(2.0 * second_ord_lim * (-error - linear_dist / 2.0))
        } else {
            error * p
        }
    };
    if is_positive(dt) {
        constrain(correction_rate, -error.abs() / dt, error.abs() / dt)
    } else {
        correction_rate
    }
}

/// Vector form of [`sqrt_controller`] along the error's direction.
pub fn sqrt_controller_xy(
    error: &Vector2<f64>,
    p: f64,
    second_ord_lim: f64,
    dt: f64,
) -> Vector2<f64> {
    let len = error.norm();
    if !is_positive(len) {
        return Vector2::zeros();
    }
    error * (sqrt_controller(len, p, second_ord_lim, dt) / len)
}

/// The error that makes [`sqrt_controller`] output `output` (`inv_sqrt_controller`).
///
/// ArduPilot tests the four signs of `p` and `d_max` in three `if`s, each
/// naming both; a `d_max` that is not positive is its `is_negative ||
/// is_zero`.
pub fn inv_sqrt_controller(output: f64, p: f64, d_max: f64) -> f64 {
    if is_zero(p) {
        return if is_positive(d_max) {
            output * output / (2.0 * d_max)
        } else {
            0.0
        };
    }
    if !is_positive(d_max) {
        return output / p;
    }
    let linear_velocity = d_max / p;
    if output.abs() < linear_velocity {
        return output / p;
    }
    let linear_dist = d_max / sq(p);
    let stopping_dist = linear_dist * 0.5 + sq(output) / (2.0 * d_max);
    if is_positive(output) {
        stopping_dist
    } else {
        -stopping_dist
    }
}

/// Advances `vel` by `accel·dt` unless that pushes further along `limit`
/// while the velocity error also points along it (`update_vel_accel_xy`).
pub fn update_vel_accel_xy(
    vel: &mut Vector2<f64>,
    accel: &Vector2<f64>,
    dt: f64,
    limit: &Vector2<f64>,
    vel_error: &Vector2<f64>,
) {
    let mut delta_vel = accel * dt;
    if !is_zero_xy(limit)
        && !is_zero_xy(&delta_vel)
        && is_positive(delta_vel.dot(limit))
        && is_positive(vel_error.dot(limit))
        && !is_negative(vel.dot(limit))
    {
        delta_vel = Vector2::zeros();
    }
    *vel += delta_vel;
}

/// Advances position by `vel·dt + ½·accel·dt²`, unless that moves further
/// along `limit` while the position error also points along it, then the
/// velocity as [`update_vel_accel_xy`] does (`update_pos_vel_accel_xy`).
pub fn update_pos_vel_accel_xy(
    pos: &mut Vector2<f64>,
    vel: &mut Vector2<f64>,
    accel: &Vector2<f64>,
    dt: f64,
    limit: &Vector2<f64>,
    pos_error: &Vector2<f64>,
    vel_error: &Vector2<f64>,
) {
    let mut delta_pos = *vel * dt + accel * (0.5 * sq(dt));
    if !is_zero(limit.norm_squared())
        && is_positive(delta_pos.dot(limit))
        && is_positive(pos_error.dot(limit))
    {
        delta_pos = Vector2::zeros();
    }
    *pos += delta_pos;
    update_vel_accel_xy(vel, accel, dt, limit, vel_error);
}

/// Moves `accel` toward `accel_desired` by at most `jerk_max·dt`
/// (`shape_accel_xy`).
pub fn shape_accel_xy(
    accel_desired: &Vector2<f64>,
    accel: &mut Vector2<f64>,
    jerk_max: f64,
    dt: f64,
) {
    if !is_positive(jerk_max) {
        return;
    }
    if is_positive(dt) {
        let mut delta = accel_desired - *accel;
        limit_length(&mut delta, jerk_max * dt);
        *accel += delta;
    }
}

/// Jerk-limited acceleration toward a velocity: the square-root
/// controller on the velocity error with gain jerk/accel, the corner limit,
/// then [`shape_accel_xy`] (`shape_vel_accel_xy`).
#[allow(clippy::too_many_arguments)]
pub fn shape_vel_accel_xy(
    vel_desired: &Vector2<f64>,
    accel_desired: &Vector2<f64>,
    vel: &Vector2<f64>,
    accel: &mut Vector2<f64>,
    accel_max: f64,
    jerk_max: f64,
    dt: f64,
    limit_total_accel: bool,
) {
    if !is_positive(accel_max) || !is_positive(jerk_max) {
        return;
    }
    let kpa = jerk_max / accel_max;
    let vel_error = vel_desired - vel;
    let mut accel_target = sqrt_controller_xy(&vel_error, kpa, jerk_max, dt);
    limit_accel_corner_xy(vel_desired, &mut accel_target, accel_max);
    accel_target += accel_desired;
    if limit_total_accel {
        limit_length(&mut accel_target, accel_max);
    }
    shape_accel_xy(&accel_target, accel, jerk_max, dt);
}

/// Jerk-limited acceleration toward a position and velocity: the
/// square-root controller on the position error with gain ½·jerk/accel and
/// half the acceleration, then [`shape_vel_accel_xy`]
/// (`shape_pos_vel_accel_xy`).
#[allow(clippy::too_many_arguments)]
pub fn shape_pos_vel_accel_xy(
    pos_desired: &Vector2<f64>,
    vel_desired: &Vector2<f64>,
    accel_desired: &Vector2<f64>,
    pos: &Vector2<f64>,
    vel: &Vector2<f64>,
    accel: &mut Vector2<f64>,
    vel_max: f64,
    accel_max: f64,
    jerk_max: f64,
    dt: f64,
    limit_total: bool,
) {
    if is_negative(vel_max) || !is_positive(accel_max) || !is_positive(jerk_max) {
        return;
    }
    let kpv = 0.5 * jerk_max / accel_max;
    let accel_tc_max = 0.5 * accel_max;
    let pos_error = pos_desired - pos;
    let mut vel_target = sqrt_controller_xy(&pos_error, kpv, accel_tc_max, dt);
    if is_positive(vel_max) {
        limit_length(&mut vel_target, vel_max);
    }
    vel_target += vel_desired;
    if limit_total && is_positive(vel_max) {
        limit_length(&mut vel_target, vel_max);
    }
    shape_vel_accel_xy(
        &vel_target,
        accel_desired,
        vel,
        accel,
        accel_max,
        jerk_max,
        dt,
        limit_total,
    );
}

/// Limits acceleration while reserving 1/√2 of `accel_max` for cross-track
/// correction when along-track dominates (`limit_accel_corner_xy`).
pub fn limit_accel_corner_xy(vel: &Vector2<f64>, accel: &mut Vector2<f64>, accel_max: f64) -> bool {
    if !is_positive(accel_max) {
        return false;
    }
    if is_zero_xy(vel) {
        return limit_length(accel, accel_max);
    }
    let vel_unit = vel.normalize();
    let mut accel_dir = vel_unit.dot(accel);
    let mut accel_cross = *accel - vel_unit * accel_dir;
    if sq(accel_dir) <= accel_cross.norm_squared() {
        return limit_length(accel, accel_max);
    }
    limit_length(
        &mut accel_cross,
        std::f64::consts::FRAC_1_SQRT_2 * accel_max,
    );
    let accel_max_dir = safe_sqrt(sq(accel_max) - accel_cross.norm_squared());
    accel_dir = constrain(accel_dir, -accel_max_dir, accel_max_dir);
    *accel = accel_cross + vel_unit * accel_dir;
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqrt_controller_is_linear_then_square_root_and_inverts() {
        // Linear region: p·e.
        assert_eq!(sqrt_controller(0.1, 2.0, 4.0, 0.0), 0.2);
        // Beyond linear_dist = a/p² = 1: √(2a(e − 1/2)).
        assert!((sqrt_controller(3.0, 2.0, 4.0, 0.0) - (2.0f64 * 4.0 * 2.5).sqrt()).abs() < 1e-12);
        assert!((sqrt_controller(-3.0, 2.0, 4.0, 0.0) + (2.0f64 * 4.0 * 2.5).sqrt()).abs() < 1e-12);
        // Never overshoots in one step.
        assert!((sqrt_controller(0.01, 100.0, 0.0, 0.1) - 0.1).abs() < 1e-15);
        for e in [-5.0, -0.3, 0.0, 0.2, 0.9, 7.0] {
            let out = sqrt_controller(e, 1.5, 3.0, 0.0);
            assert!((inv_sqrt_controller(out, 1.5, 3.0) - e).abs() < 1e-9, "{e}");
        }
    }

    /// Each branch of the square-root controller: P only without a second
    /// order limit, √(2·a·|e|) without P, and the one-step clamp |e|/dt
    /// either way.
    #[test]
    fn sqrt_controller_branches() {
        assert_eq!(sqrt_controller(3.0, 2.0, 0.0, 0.0), 6.0);
        assert_eq!(sqrt_controller(-3.0, 2.0, -1.0, 0.0), -6.0);
        assert_eq!(sqrt_controller(2.0, 0.0, 4.0, 0.0), 4.0);
        assert_eq!(sqrt_controller(-2.0, 0.0, 4.0, 0.0), -4.0);
        assert_eq!(sqrt_controller(0.0, 0.0, 4.0, 0.0), 0.0);
        // The one-step clamp, |e|/dt = 0.1, either way; inside it the
        // output is untouched.
        assert!((sqrt_controller(-0.01, 100.0, 0.0, 0.1) + 0.1).abs() < 1e-15);
        assert_eq!(sqrt_controller(0.5, 2.0, 4.0, 0.1), 1.0);
        // The vector form acts along the error.
        let v = sqrt_controller_xy(&Vector2::new(3.0, -4.0), 2.0, 0.0, 0.0);
        assert_eq!(v, Vector2::new(6.0, -8.0));
        assert_eq!(
            sqrt_controller_xy(&Vector2::zeros(), 2.0, 4.0, 0.1),
            Vector2::zeros()
        );
    }

    /// Each branch of the inverse: P only, square root only, neither, and
    /// the two regions, either sign.
    #[test]
    fn inv_sqrt_controller_branches() {
        assert_eq!(inv_sqrt_controller(4.0, 0.0, 4.0), 2.0);
        assert_eq!(inv_sqrt_controller(-4.0, 0.0, 4.0), 2.0, "a distance");
        assert_eq!(inv_sqrt_controller(6.0, 2.0, 0.0), 3.0);
        assert_eq!(inv_sqrt_controller(-6.0, 2.0, -1.0), -3.0);
        assert_eq!(inv_sqrt_controller(6.0, 0.0, 0.0), 0.0);
        assert_eq!(inv_sqrt_controller(6.0, 0.0, -1.0), 0.0);
        // Linear below a/p = 2 m/s; beyond, a/(2p²) + v²/(2a).
        assert_eq!(inv_sqrt_controller(1.0, 2.0, 4.0), 0.5);
        assert_eq!(inv_sqrt_controller(6.0, 2.0, 4.0), 0.5 + 36.0 / 8.0);
        assert_eq!(inv_sqrt_controller(-6.0, 2.0, 4.0), -(0.5 + 36.0 / 8.0));
    }

    /// A length is limited above its maximum, and says so; a maximum of zero
    /// leaves nothing.
    #[test]
    fn limit_length_above_the_maximum() {
        let mut v = Vector2::new(3.0, 4.0);
        assert!(!limit_length(&mut v, 5.0));
        assert_eq!(v, Vector2::new(3.0, 4.0));
        assert!(limit_length(&mut v, 2.5));
        assert!((v - Vector2::new(1.5, 2.0)).norm() < 1e-15);
        assert!(limit_length(&mut v, 0.0));
        assert_eq!(v, Vector2::zeros());
        assert!(!limit_length(&mut v, -1.0), "nothing left to limit");
    }

    /// `constrain` clamps, and gives the midpoint for a NaN.
    #[test]
    fn constrain_clamps_and_centres_a_nan() {
        assert_eq!(constrain(5.0, -1.0, 2.0), 2.0);
        assert_eq!(constrain(-5.0, -1.0, 2.0), -1.0);
        assert_eq!(constrain(0.5, -1.0, 2.0), 0.5);
        assert_eq!(constrain(f64::NAN, -1.0, 2.0), 0.5);
    }

    /// The sign tests are ArduPilot's: strict about zero, inclusive at
    /// ±`FLT_EPSILON`.
    #[test]
    fn the_sign_tests_hold_at_flt_epsilon() {
        assert!(is_zero(0.0) && is_zero(-0.5 * EPSILON) && is_zero(0.5 * EPSILON));
        assert!(!is_zero(EPSILON) && !is_zero(-EPSILON));
        assert!(is_positive(EPSILON) && !is_positive(0.5 * EPSILON));
        assert!(is_negative(-EPSILON) && !is_negative(-0.5 * EPSILON));
    }

    #[test]
    fn shape_accel_respects_jerk() {
        let mut v = Vector2::new(0.0, 0.0);
        shape_accel_xy(&Vector2::new(3.0, 4.0), &mut v, 10.0, 0.1);
        assert!((v.norm() - 1.0).abs() < 1e-12);
        assert!((wrap_pi(3.0 * std::f64::consts::PI) - std::f64::consts::PI).abs() < 1e-12);
        assert!((wrap_pi(-0.5) + 0.5).abs() < 1e-15);
    }
}
