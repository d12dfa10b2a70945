//! The square-root controller and the horizontal shaping functions against
//! what ArduPilot's own, unmodified `control.cpp` computes
//! (`tests/data/control/`, see its README): hand-picked rows on each side of
//! every branch and test at `FLT_EPSILON`, pseudo-random rows, and whole
//! moves of the position and velocity shapers stepped at 400 Hz.
//!
//! ArduPilot computes in single precision (positions in double) and the port
//! in double throughout, so values agree to rounding, not bit for bit: each
//! call's result is checked to a relative 2·10⁻⁵; a sequence, where the
//! single-precision rounding accumulates over up to 4 000 steps (a moving
//! target's velocity is a float summed each step), to 10⁻³ of the value or
//! 10⁻⁴ m, m/s or m/s², whichever is larger. An exact zero must be exactly
//! zero.

use std::collections::HashMap;

use mavsitl_guidance::control::{
    inv_sqrt_controller, shape_accel_xy, shape_pos_vel_accel_xy, shape_vel_accel_xy,
    sqrt_controller, sqrt_controller_xy, update_pos_vel_accel_xy, update_vel_accel_xy,
};
use nalgebra::Vector2;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/control");

/// One row: its label and its numbers by column name.
struct Row {
    label: String,
    values: HashMap<String, f64>,
}

impl Row {
    fn get(&self, key: &str) -> f64 {
        *self
            .values
            .get(key)
            .unwrap_or_else(|| panic!("{}: no column {key}", self.label))
    }

    fn xy(&self, key: &str) -> Vector2<f64> {
        Vector2::new(self.get(&format!("{key}_x")), self.get(&format!("{key}_y")))
    }

    fn flag(&self, key: &str) -> bool {
        self.get(key) != 0.0
    }
}

/// The rows of `name.csv`; the first column labels the row (a sequence's
/// rows are labelled `seq:step`).
fn rows(name: &str) -> Vec<Row> {
    let text = std::fs::read_to_string(format!("{DATA}/{name}.csv")).expect(name);
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let out: Vec<Row> = lines
        .map(|line| {
            let f: Vec<&str> = line.split(',').collect();
            assert_eq!(f.len(), header.len(), "{name}: {line}");
            let values: HashMap<String, f64> = header[1..]
                .iter()
                .zip(&f[1..])
                .map(|(k, v)| (k.to_string(), v.parse().expect("number")))
                .collect();
            let label = match values.get("step") {
                Some(step) => format!("{name} {}:{step}", f[0]),
                None => format!("{name} {}", f[0]),
            };
            Row { label, values }
        })
        .collect();
    assert!(out.len() >= 40, "{name}: {} rows", out.len());
    out
}

/// `ours` agrees with ArduPilot's `want` to a relative `tol` of at least
/// 1 mm (m/s, m/s²), or in the sequences of at least 0.1 m (m/s, m/s²);
/// zero is zero.
#[track_caller]
fn agree(ours: f64, want: f64, tol: f64, what: &str) {
    let floor = if tol == SEQ_TOL { 0.1 } else { 1e-3 };
    let ok = if want == 0.0 {
        ours == 0.0
    } else {
        (ours - want).abs() <= tol * want.abs().max(floor)
    };
    assert!(ok, "{what}: {ours:.9e} but ArduPilot {want:.9e}");
}

#[track_caller]
fn agree_xy(ours: Vector2<f64>, row: &Row, key: &str, tol: f64) {
    agree_from(ours, Vector2::zeros(), row, key, tol);
}

/// As [`agree_xy`] for the displacement from `from` (positions far from
/// the origin: the move is what is computed, m).
#[track_caller]
fn agree_from(ours: Vector2<f64>, from: Vector2<f64>, row: &Row, key: &str, tol: f64) {
    let (ours, want) = (ours - from, row.xy(key) - from);
    agree(ours.x, want.x, tol, &format!("{} {key}_x", row.label));
    agree(ours.y, want.y, tol, &format!("{} {key}_y", row.label));
}

const TOL: f64 = 2e-5;

#[test]
fn sqrt_controller_matches_ardupilot() {
    for r in rows("sqrt_controller") {
        let out = sqrt_controller(
            r.get("error"),
            r.get("p"),
            r.get("second_ord_lim"),
            r.get("dt"),
        );
        agree(out, r.get("out"), TOL, &r.label);
    }
    for r in rows("sqrt_controller_xy") {
        let out = sqrt_controller_xy(
            &r.xy("error"),
            r.get("p"),
            r.get("second_ord_lim"),
            r.get("dt"),
        );
        agree_xy(out, &r, "out", TOL);
    }
    for r in rows("inv_sqrt_controller") {
        let out = inv_sqrt_controller(r.get("output"), r.get("p"), r.get("d_max"));
        agree(out, r.get("out"), TOL, &r.label);
    }
}

#[test]
fn the_limited_updates_match_ardupilot() {
    for r in rows("update_vel_accel_xy") {
        let mut vel = r.xy("vel_in");
        let (limit, vel_error) = (r.xy("limit"), r.xy("vel_error"));
        update_vel_accel_xy(&mut vel, &r.xy("accel"), r.get("dt"), &limit, &vel_error);
        agree_xy(vel, &r, "vel_out", TOL);
    }
    for r in rows("update_pos_vel_accel_xy") {
        let (mut pos, mut vel) = (r.xy("pos_in"), r.xy("vel_in"));
        update_pos_vel_accel_xy(
            &mut pos,
            &mut vel,
            &r.xy("accel"),
            r.get("dt"),
            &r.xy("limit"),
            &r.xy("pos_error"),
            &r.xy("vel_error"),
        );
        agree_from(pos, r.xy("pos_in"), &r, "pos_out", TOL);
        agree_xy(vel, &r, "vel_out", TOL);
    }
}

#[test]
fn the_shapers_match_ardupilot_call_by_call() {
    for r in rows("shape_accel_xy") {
        let mut accel = r.xy("accel_in");
        shape_accel_xy(
            &r.xy("accel_input"),
            &mut accel,
            r.get("jerk_max"),
            r.get("dt"),
        );
        agree_xy(accel, &r, "accel_out", TOL);
    }
    for r in rows("shape_vel_accel_xy") {
        let mut accel = r.xy("accel_in");
        shape_vel_accel_xy(
            &r.xy("vel_input"),
            &r.xy("accel_input"),
            &r.xy("vel"),
            &mut accel,
            r.get("accel_max"),
            r.get("jerk_max"),
            r.get("dt"),
            r.flag("limit_total_accel"),
        );
        agree_xy(accel, &r, "accel_out", TOL);
    }
    for r in rows("shape_pos_vel_accel_xy") {
        let mut accel = r.xy("accel_in");
        shape_pos_vel_accel_xy(
            &r.xy("pos_input"),
            &r.xy("vel_input"),
            &r.xy("accel_input"),
            &r.xy("pos"),
            &r.xy("vel"),
            &mut accel,
            r.get("vel_max"),
            r.get("accel_max"),
            r.get("jerk_max"),
            r.get("dt"),
            r.flag("limit_total"),
        );
        agree_xy(accel, &r, "accel_out", TOL);
    }
}

/// The rows of a sequence file grouped by sequence, in order.
fn sequences(name: &str) -> Vec<Vec<Row>> {
    let mut out: Vec<Vec<Row>> = Vec::new();
    for r in rows(name) {
        let seq = r.label.split(':').next().map(str::to_string);
        let same = out
            .last()
            .and_then(|s| s.first())
            .is_some_and(|first| first.label.split(':').next().map(str::to_string) == seq);
        if same {
            out.last_mut().expect("a sequence").push(r);
        } else {
            out.push(vec![r]);
        }
    }
    out
}

const SEQ_TOL: f64 = 1e-3;

/// A velocity shaped toward its target and integrated, 400 Hz, compared at
/// every recorded step.
#[test]
fn a_velocity_shaped_step_by_step_matches_ardupilot() {
    let seqs = sequences("seq_shape_vel_accel_xy");
    assert!(seqs.len() >= 4, "{} sequences", seqs.len());
    for seq in seqs {
        let r0 = &seq[0];
        let dt = r0.get("dt");
        let (target_vel, target_accel) = (r0.xy("target_vel"), r0.xy("target_accel"));
        let (mut vel, mut accel) = (r0.xy("vel"), r0.xy("accel"));
        let mut step = 0.0;
        for r in &seq[1..] {
            while step < r.get("step") {
                shape_vel_accel_xy(
                    &target_vel,
                    &target_accel,
                    &vel,
                    &mut accel,
                    r0.get("accel_max"),
                    r0.get("jerk_max"),
                    dt,
                    r0.flag("limit_total_accel"),
                );
                let zero = Vector2::zeros();
                update_vel_accel_xy(&mut vel, &accel, dt, &zero, &zero);
                step += 1.0;
            }
            agree_xy(vel, r, "vel", SEQ_TOL);
            agree_xy(accel, r, "accel", SEQ_TOL);
        }
    }
}

/// A position shaped toward a (possibly moving) target as AC_PosControl
/// does it, 400 Hz, compared at every recorded step.
#[test]
fn a_position_shaped_step_by_step_matches_ardupilot() {
    let seqs = sequences("seq_shape_pos_vel_accel_xy");
    assert!(seqs.len() >= 4, "{} sequences", seqs.len());
    for seq in seqs {
        let r0 = &seq[0];
        let dt = r0.get("dt");
        let limit = r0.xy("update_limit");
        let limited = limit != Vector2::zeros();
        let (mut tpos, mut tvel, taccel) = (
            r0.xy("target_pos"),
            r0.xy("target_vel"),
            r0.xy("target_accel"),
        );
        let (mut pos, mut vel, mut accel) = (r0.xy("pos"), r0.xy("vel"), r0.xy("accel"));
        let zero = Vector2::zeros();
        let mut step = 0.0;
        for r in &seq[1..] {
            while step < r.get("step") {
                if r0.flag("target_moves") {
                    update_pos_vel_accel_xy(&mut tpos, &mut tvel, &taccel, dt, &zero, &zero, &zero);
                }
                shape_pos_vel_accel_xy(
                    &tpos,
                    &tvel,
                    &taccel,
                    &pos,
                    &vel,
                    &mut accel,
                    r0.get("vel_max"),
                    r0.get("accel_max"),
                    r0.get("jerk_max"),
                    dt,
                    r0.flag("limit_total"),
                );
                let (pos_error, vel_error) = if limited {
                    (tpos - pos, tvel - vel)
                } else {
                    (zero, zero)
                };
                update_pos_vel_accel_xy(
                    &mut pos, &mut vel, &accel, dt, &limit, &pos_error, &vel_error,
                );
                step += 1.0;
            }
            agree_from(pos, r0.xy("pos"), r, "pos", SEQ_TOL);
            agree_xy(vel, r, "vel", SEQ_TOL);
            agree_xy(accel, r, "accel", SEQ_TOL);
        }
    }
}
