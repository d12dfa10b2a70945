//! Control helpers used by the guidance port: the square-root controller, the
//! jerk-limited shaping functions and the kinematic limit.
//!
//! Ported from ArduPilot's `libraries/AP_Math/control.cpp` (Leonard Hall, GPLv3)
//! and the comparison helpers of `AP_Math.h`. Names follow ArduPilot so the code
//! can be read side by side. Everything is `f64`; the zero/sign tests keep
//! ArduPilot's single-precision epsilon (`FLT_EPSILON`) so that branch decisions
//! match the firmware's.

use nalgebra::{Vector2, Vector3};

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

/// |a − b| < ε.
pub fn is_equal(a: f64, b: f64) -> bool {
    (a - b).abs() < EPSILON
}

/// C's `MIN(a, b)` macro, `a < b ? a : b`: unlike `f64::min` a NaN in `b`
/// propagates, as it does in ArduPilot.
pub fn c_min(a: f64, b: f64) -> f64 {
    if a < b {
        a
    } else {
        b
    }
}

/// C's `MAX(a, b)` macro, `a > b ? a : b`.
pub fn c_max(a: f64, b: f64) -> f64 {
    if a > b {
        a
    } else {
        b
    }
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

/// `x` clamped to [lo, hi] (NaN gives the midpoint's side: lo).
pub fn constrain(x: f64, lo: f64, hi: f64) -> f64 {
    if x.is_nan() {
        return lo;
    }
    x.max(lo).min(hi)
}

/// Wraps an angle to (−π, π].
pub fn wrap_pi(a: f64) -> f64 {
    let mut r = (a + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU) - std::f64::consts::PI;
    if r <= -std::f64::consts::PI {
        r += std::f64::consts::TAU;
    }
    r
}

/// Limits the length of a 2-D vector; returns whether it was limited.
pub fn limit_length(v: &mut Vector2<f64>, max: f64) -> bool {
    let len = v.norm();
    if max > 0.0 && len > max {
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
pub fn inv_sqrt_controller(output: f64, p: f64, d_max: f64) -> f64 {
    if is_positive(d_max) && is_zero(p) {
        return output * output / (2.0 * d_max);
    }
    if (is_negative(d_max) || is_zero(d_max)) && !is_zero(p) {
        return output / p;
    }
    if (is_negative(d_max) || is_zero(d_max)) && is_zero(p) {
        return 0.0;
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

/// Stopping distance of the square-root controller from `velocity`.
pub fn stopping_distance(velocity: f64, p: f64, accel_max: f64) -> f64 {
    inv_sqrt_controller(velocity, p, accel_max)
}

/// Largest magnitude along the direction (horizontal length, vertical length, +
/// down) within the horizontal limit and the up (`max_z_neg`) / down
/// (`max_z_pos`) limits (`kinematic_limit`).
pub fn kinematic_limit(
    segment_length_xy: f64,
    segment_length_z: f64,
    max_xy: f64,
    max_z_neg: f64,
    max_z_pos: f64,
) -> f64 {
    if is_zero(max_xy) || is_zero(max_z_pos) || is_zero(max_z_neg) {
        return 0.0;
    }
    let (max_xy, max_z_pos, max_z_neg) = (max_xy.abs(), max_z_pos.abs(), max_z_neg.abs());
    let length = safe_sqrt(sq(segment_length_xy) + sq(segment_length_z));
    if !is_positive(length) {
        return 0.0;
    }
    let xy = segment_length_xy / length;
    let z = segment_length_z / length;
    if is_zero(xy) {
        return if is_positive(z) { max_z_pos } else { max_z_neg };
    }
    if is_zero(z) {
        return max_xy;
    }
    let slope = z / xy;
    if is_positive(slope) {
        if slope.abs() < max_z_pos / max_xy {
            return max_xy / xy;
        }
        return (max_z_pos / z).abs();
    }
    if slope.abs() < max_z_neg / max_xy {
        return max_xy / xy;
    }
    (max_z_neg / z).abs()
}

/// [`kinematic_limit`] for a 3-D direction vector.
pub fn kinematic_limit_dir(
    direction: &Vector3<f64>,
    max_xy: f64,
    max_z_neg: f64,
    max_z_pos: f64,
) -> f64 {
    if is_zero(direction.norm_squared()) {
        return 0.0;
    }
    kinematic_limit(
        direction.xy().norm(),
        direction.z,
        max_xy,
        max_z_neg,
        max_z_pos,
    )
}

/// Advances `vel` by `accel·dt` unless that increases the error in the limited
/// direction (`update_vel_accel`).
pub fn update_vel_accel(vel: &mut f64, accel: f64, dt: f64, limit: f64, vel_error: f64) {
    let mut delta_vel = accel * dt;
    if is_positive(delta_vel * limit) && is_positive(vel_error * limit) {
        if is_negative(*vel * limit) {
            delta_vel = constrain(delta_vel, -vel.abs(), vel.abs());
        } else {
            delta_vel = 0.0;
        }
    }
    *vel += delta_vel;
}

/// Advances position and velocity (`update_pos_vel_accel`).
#[allow(clippy::too_many_arguments)]
pub fn update_pos_vel_accel(
    pos: &mut f64,
    vel: &mut f64,
    accel: f64,
    dt: f64,
    limit: f64,
    pos_error: f64,
    vel_error: f64,
) {
    let mut delta_pos = *vel * dt + accel * 0.5 * sq(dt);
    if is_positive(delta_pos * limit) && is_positive(pos_error * limit) {
        delta_pos = 0.0;
    }
    *pos += delta_pos;
    update_vel_accel(vel, accel, dt, limit, vel_error);
}

/// 2-D [`update_vel_accel`] (`update_vel_accel_xy`).
pub fn update_vel_accel_xy(
    vel: &mut Vector2<f64>,
    accel: &Vector2<f64>,
    dt: f64,
    limit: &Vector2<f64>,
    vel_error: &Vector2<f64>,
) {
    let mut delta_vel = accel * dt;
    if limit.norm_squared() > 0.0
        && delta_vel.norm_squared() > 0.0
        && is_positive(delta_vel.dot(limit))
        && is_positive(vel_error.dot(limit))
        && !is_negative(vel.dot(limit))
    {
        delta_vel = Vector2::zeros();
    }
    *vel += delta_vel;
}

/// 2-D [`update_pos_vel_accel`] (`update_pos_vel_accel_xy`).
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

/// Moves `accel` toward `accel_desired` at no more than `jerk_max` (`shape_accel`).
pub fn shape_accel(accel_desired: f64, accel: &mut f64, jerk_max: f64, dt: f64) {
    if !is_positive(jerk_max) {
        return;
    }
    if is_positive(dt) {
        *accel += constrain(accel_desired - *accel, -jerk_max * dt, jerk_max * dt);
    }
}

/// 2-D [`shape_accel`] (`shape_accel_xy`).
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

/// Jerk-limited acceleration toward a velocity (`shape_vel_accel`).
#[allow(clippy::too_many_arguments)]
pub fn shape_vel_accel(
    vel_desired: f64,
    accel_desired: f64,
    vel: f64,
    accel: &mut f64,
    accel_min: f64,
    accel_max: f64,
    jerk_max: f64,
    dt: f64,
    limit_total_accel: bool,
) {
    if !is_negative(accel_min) || !is_positive(accel_max) || !is_positive(jerk_max) {
        return;
    }
    let vel_error = vel_desired - vel;
    let kpa = if is_positive(vel_error) {
        jerk_max / accel_max
    } else {
        jerk_max / (-accel_min)
    };
    let mut accel_target = sqrt_controller(vel_error, kpa, jerk_max, dt);
    accel_target = constrain(accel_target, accel_min, accel_max);
    accel_target += accel_desired;
    if limit_total_accel {
        accel_target = constrain(accel_target, accel_min, accel_max);
    }
    shape_accel(accel_target, accel, jerk_max, dt);
}

/// 2-D [`shape_vel_accel`] (`shape_vel_accel_xy`).
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

/// Jerk-limited acceleration toward a position and velocity (`shape_pos_vel_accel`).
#[allow(clippy::too_many_arguments)]
pub fn shape_pos_vel_accel(
    pos_desired: f64,
    vel_desired: f64,
    accel_desired: f64,
    pos: f64,
    vel: f64,
    accel: &mut f64,
    vel_min: f64,
    vel_max: f64,
    accel_min: f64,
    accel_max: f64,
    jerk_max: f64,
    dt: f64,
    limit_total: bool,
) {
    if is_positive(vel_min)
        || is_negative(vel_max)
        || !is_negative(accel_min)
        || !is_positive(accel_max)
        || !is_positive(jerk_max)
    {
        return;
    }
    let pos_error = pos_desired - pos;
    let (accel_tc_max, kpv) = if is_positive(pos_error) {
        (-0.5 * accel_min, 0.5 * jerk_max / (-accel_min))
    } else {
        (0.5 * accel_max, 0.5 * jerk_max / accel_max)
    };
    let mut vel_target = sqrt_controller(pos_error, kpv, accel_tc_max, dt);
    if is_negative(vel_min) || is_positive(vel_max) {
        vel_target = constrain(vel_target, vel_min, vel_max);
    }
    vel_target += vel_desired;
    if limit_total && vel_max > vel_min {
        vel_target = constrain(vel_target, vel_min, vel_max);
    }
    shape_vel_accel(
        vel_target,
        accel_desired,
        vel,
        accel,
        accel_min,
        accel_max,
        jerk_max,
        dt,
        limit_total,
    );
}

/// 2-D [`shape_pos_vel_accel`] (`shape_pos_vel_accel_xy`).
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

/// Limits acceleration to `accel_max`, keeping cross-track authority first
/// (`limit_accel_xy`). Returns whether it limited.
pub fn limit_accel_xy(vel: &Vector2<f64>, accel: &mut Vector2<f64>, accel_max: f64) -> bool {
    if !is_positive(accel_max) {
        return false;
    }
    if accel.norm_squared() > sq(accel_max) {
        if vel.norm_squared() == 0.0 {
            limit_length(accel, accel_max);
        } else {
            let vel_unit = vel.normalize();
            let mut accel_dir = vel_unit.dot(accel);
            let mut accel_cross = *accel - vel_unit * accel_dir;
            if limit_length(&mut accel_cross, accel_max) {
                accel_dir = 0.0;
            } else {
                let accel_max_dir = safe_sqrt(sq(accel_max) - accel_cross.norm_squared());
                accel_dir = constrain(accel_dir, -accel_max_dir, accel_max_dir);
            }
            *accel = accel_cross + vel_unit * accel_dir;
        }
        return true;
    }
    false
}

/// Limits acceleration while reserving 1/√2 of `accel_max` for cross-track
/// correction when along-track dominates (`limit_accel_corner_xy`).
pub fn limit_accel_corner_xy(vel: &Vector2<f64>, accel: &mut Vector2<f64>, accel_max: f64) -> bool {
    if !is_positive(accel_max) {
        return false;
    }
    if vel.norm_squared() == 0.0 {
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

    #[test]
    fn kinematic_limit_cases() {
        assert_eq!(kinematic_limit(1.0, 0.0, 5.0, 2.0, 3.0), 5.0);
        assert_eq!(kinematic_limit(0.0, 1.0, 5.0, 2.0, 3.0), 3.0); // down
        assert_eq!(kinematic_limit(0.0, -1.0, 5.0, 2.0, 3.0), 2.0); // up
        assert_eq!(kinematic_limit(1.0, 1.0, 5.0, 0.0, 3.0), 0.0);
        // A 45° climb limited by the 2 m/s climb rate: 2/sin45.
        assert!((kinematic_limit(1.0, -1.0, 5.0, 2.0, 3.0) - 2.0 * 2f64.sqrt()).abs() < 1e-12);
        // A shallow climb limited horizontally: 5/cos.
        let l = kinematic_limit(10.0, -1.0, 5.0, 2.0, 3.0);
        assert!((l - 5.0 / (10.0 / 101f64.sqrt())).abs() < 1e-12);
    }

    #[test]
    fn shape_accel_respects_jerk() {
        let mut a = 0.0;
        shape_accel(10.0, &mut a, 4.0, 0.1);
        assert!((a - 0.4).abs() < 1e-12);
        let mut v = Vector2::new(0.0, 0.0);
        shape_accel_xy(&Vector2::new(3.0, 4.0), &mut v, 10.0, 0.1);
        assert!((v.norm() - 1.0).abs() < 1e-12);
        assert!((wrap_pi(3.0 * std::f64::consts::PI) - std::f64::consts::PI).abs() < 1e-12);
        assert!((wrap_pi(-0.5) + 0.5).abs() < 1e-15);
    }
}
