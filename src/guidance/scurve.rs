//! The jerk-limited trigonometric S-curve: 23 segments of raised-cosine jerk,
//! constant jerk, constant acceleration and cruise between an origin and a
//! destination, with corner blending between consecutive legs.
//!
//! Ported from ArduPilot's `libraries/AP_Math/SCurve.cpp` / `SCurve.h` (Leonard
//! Hall, GPLv3): the straight-track form that AR_WPNav and AC_WPNav use (the
//! nine-argument `calculate_track`; ArduPilot's newer arc tracks are not
//! ported). Function and member names are ArduPilot's.
//!
//! **Floating point.** ArduPilot computes in `float` with a float leg clock
//! (`time += dt`), its SITL build doing some length sums in double. This port is
//! `f64` throughout, so it drifts less; against the profile ArduPilot's own code
//! produces (`tests/data/scurve/`) it agrees to about 1e-6 m. Branch decisions use
//! ArduPilot's single-precision epsilon (see [`super::control`]).
//!
//! Position is returned as an offset added to the caller's accumulator (the
//! "move" functions add into `pos`, `vel`, `accel`), NED metres.

use nalgebra::Vector3;

use super::control::{
    c_max, c_min, is_equal, is_negative, is_positive, is_zero, kinematic_limit, safe_sqrt, sq,
};

const SEG_INIT: usize = 0;
const SEG_ACCEL_MAX: usize = 4;
const SEG_ACCEL_END: usize = 7;
const SEG_SPEED_CHANGE_END: usize = 14;
const SEG_CONST: usize = 15;
const SEG_DECEL_START: usize = 15;
const SEG_DECEL_END: usize = 22;
/// Number of time segments of a non-empty path.
pub const SEGMENTS_MAX: usize = 23;

const PI: f64 = std::f64::consts::PI;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[allow(clippy::enum_variant_names)] // ArduPilot's CONSTANT_JERK, POSITIVE_JERK, NEGATIVE_JERK
enum SegmentType {
    #[default]
    ConstantJerk,
    PositiveJerk,
    NegativeJerk,
}

#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Segment {
    jerk_ref: f64,
    seg_type: SegmentType,
    end_time: f64,
    end_accel: f64,
    end_vel: f64,
    end_pos: f64,
}

/// Segment durations from [`SCurve::calculate_path`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PathTimes {
    /// Jerk magnitude actually used.
    pub jm: f64,
    /// Raised-cosine jerk ramp duration, s.
    pub tj: f64,
    /// Constant-jerk duration, s.
    pub t2: f64,
    /// Constant-acceleration duration, s.
    pub t4: f64,
    /// Second constant-jerk duration, s.
    pub t6: f64,
}

/// One straight leg's S-curve.
#[derive(Debug, Clone, PartialEq)]
pub struct SCurve {
    snap_max: f64,
    jerk_max: f64,
    accel_max: f64,
    accel_z_max: f64,
    vel_max: f64,
    time: f64,
    num_segs: usize,
    segment: [Segment; SEGMENTS_MAX],
    seg_delta: Vector3<f64>,
    seg_length: f64,
}

impl Default for SCurve {
    fn default() -> Self {
        let mut s = SCurve {
            snap_max: 0.0,
            jerk_max: 0.0,
            accel_max: 0.0,
            accel_z_max: 0.0,
            vel_max: 0.0,
            time: 0.0,
            num_segs: SEG_INIT,
            segment: [Segment::default(); SEGMENTS_MAX],
            seg_delta: Vector3::zeros(),
            seg_length: 0.0,
        };
        s.init();
        s
    }
}

impl SCurve {
    /// An empty path.
    pub fn new() -> Self {
        Self::default()
    }

    /// Clears the path (`init`).
    pub fn init(&mut self) {
        self.snap_max = 0.0;
        self.jerk_max = 0.0;
        self.accel_max = 0.0;
        self.accel_z_max = 0.0;
        self.vel_max = 0.0;
        self.time = 0.0;
        self.num_segs = SEG_INIT;
        let mut i = self.num_segs;
        self.add_segment(&mut i, 0.0, SegmentType::ConstantJerk, 0.0, 0.0, 0.0, 0.0);
        self.num_segs = i;
        self.seg_delta = Vector3::zeros();
        self.seg_length = 0.0;
    }

    /// Builds the path for a straight track from `origin` to `destination` (NED
    /// m) with horizontal speed, climb and descent speed limits (m/s),
    /// horizontal and vertical acceleration limits (m/s²), snap (m/s⁴) and jerk
    /// (m/s³) limits (`calculate_track`). A zero-length or degenerate track
    /// leaves an empty path; limits are taken as absolute values; NaN inputs give
    /// an empty path.
    #[allow(clippy::too_many_arguments)]
    pub fn calculate_track(
        &mut self,
        origin: &Vector3<f64>,
        destination: &Vector3<f64>,
        speed_xy: f64,
        speed_up: f64,
        speed_down: f64,
        accel_xy: f64,
        accel_z: f64,
        snap_maximum: f64,
        jerk_maximum: f64,
    ) {
        self.init();
        let (speed_xy, speed_up, speed_down) = (speed_xy.abs(), speed_up.abs(), speed_down.abs());
        let (accel_xy, accel_z) = (accel_xy.abs(), accel_z.abs());
        let delta = destination - origin;
        if !delta.iter().all(|x| x.is_finite())
            || delta == Vector3::zeros()
            || is_zero(delta.norm_squared())
        {
            self.seg_delta = Vector3::zeros();
            return;
        }
        self.seg_delta = delta;
        self.seg_length = delta.norm();
        let len_xy = delta.xy().norm();
        self.snap_max = snap_maximum;
        self.jerk_max = jerk_maximum;
        self.vel_max = kinematic_limit(len_xy, delta.z, speed_xy, speed_up, speed_down);
        self.accel_max = kinematic_limit(len_xy, delta.z, accel_xy, accel_z, accel_z);
        self.accel_z_max = accel_z;
        self.finalise_path(self.seg_length);
    }

    /// Validates limits, builds the segments and checks them (`finalise_path`).
    fn finalise_path(&mut self, path_length: f64) {
        if !is_positive(self.snap_max)
            || !is_positive(self.jerk_max)
            || !is_positive(self.accel_max)
            || !is_positive(self.vel_max)
        {
            self.init();
            return;
        }
        self.add_segments(path_length);
        if !self.valid() {
            self.init();
        }
    }

    /// Changes the maximum speeds along the path, re-planning what is still ahead
    /// (`set_speed_max`).
    pub fn set_speed_max(&mut self, speed_xy: f64, speed_up: f64, speed_down: f64) {
        let (speed_xy, speed_up, speed_down) = (speed_xy.abs(), speed_up.abs(), speed_down.abs());
        if self.num_segs != SEGMENTS_MAX {
            return;
        }
        let track_speed_max = kinematic_limit(
            self.seg_delta.xy().norm(),
            self.seg_delta.z,
            speed_xy,
            speed_up,
            speed_down,
        );
        if is_equal(self.vel_max, track_speed_max) || is_zero(track_speed_max) {
            return;
        }
        self.vel_max = track_speed_max;
        if self.time >= self.segment[SEG_CONST].end_time {
            return;
        }
        let pend = self.segment[SEG_DECEL_END].end_pos;
        let mut vend = self.vel_max.min(self.segment[SEG_DECEL_END].end_vel);

        if is_zero(self.time) {
            let vstart = self.vel_max.min(self.segment[SEG_INIT].end_vel);
            self.num_segs = SEG_INIT;
            let mut i = self.num_segs;
            self.add_segment(&mut i, 0.0, SegmentType::ConstantJerk, 0.0, 0.0, 0.0, 0.0);
            self.num_segs = i;
            self.add_segments(pend);
            self.set_origin_speed_max(vstart);
            self.set_destination_speed_max(vend);
            return;
        }

        let time = self.time;
        if time >= self.segment[SEG_ACCEL_END].end_time
            && time <= self.segment[SEG_SPEED_CHANGE_END].end_time
        {
            // Inside the speed-change block: move it into the acceleration block.
            let s7 = self.segment[SEG_ACCEL_END];
            self.segment[SEG_INIT] = Segment {
                seg_type: SegmentType::ConstantJerk,
                jerk_ref: 0.0,
                ..s7
            };
            for i in SEG_INIT + 1..=SEG_ACCEL_END {
                self.segment[i] = self.segment[i + 7];
            }
            self.fill_empty_segments(SEG_ACCEL_END + 1, SEG_SPEED_CHANGE_END, SEG_ACCEL_END);
        } else if time > self.segment[SEG_SPEED_CHANGE_END].end_time
            && time <= self.segment[SEG_CONST].end_time
        {
            // Cruising: restart from the current position and speed.
            let s14 = self.segment[SEG_SPEED_CHANGE_END];
            self.segment[SEG_INIT] = Segment {
                seg_type: SegmentType::ConstantJerk,
                jerk_ref: 0.0,
                end_accel: 0.0,
                ..s14
            };
            let (_, _, vt, pt) = self.get_jerk_accel_vel_pos_at_time(time);
            for i in SEG_INIT + 1..=SEG_SPEED_CHANGE_END {
                self.segment[i] = Segment {
                    seg_type: SegmentType::ConstantJerk,
                    jerk_ref: 0.0,
                    end_time: time,
                    end_accel: 0.0,
                    end_vel: vt,
                    end_pos: pt,
                };
            }
        }

        // Still in the constant-acceleration part: lower the cruise speed.
        if time <= self.segment[SEG_ACCEL_MAX].end_time
            && is_positive(
                self.segment[SEG_ACCEL_MAX].end_time - self.segment[SEG_ACCEL_MAX - 1].end_time,
            )
            && self.vel_max < self.segment[SEG_ACCEL_END].end_vel
            && is_positive(self.segment[SEG_ACCEL_MAX].end_accel)
        {
            let vstart = self.segment[SEG_INIT].end_vel;
            let vmin = self.segment[SEG_ACCEL_END].end_vel
                - self.segment[SEG_ACCEL_MAX].end_accel
                    * (self.segment[SEG_ACCEL_MAX].end_time
                        - time.max(self.segment[SEG_ACCEL_MAX - 1].end_time));
            let p = Self::calculate_path(
                self.snap_max,
                self.jerk_max,
                vstart,
                self.accel_max,
                vmin.max(self.vel_max),
                pend * 0.5,
            );
            let mut seg = SEG_INIT + 1;
            self.add_segments_jerk(&mut seg, p.tj, p.jm, p.t2);
            self.add_segment_const_jerk(&mut seg, p.t4, 0.0);
            self.add_segments_jerk(&mut seg, p.tj, -p.jm, p.t6);
            self.segment[SEG_ACCEL_END].end_accel = 0.0;
            self.fill_empty_segments(SEG_ACCEL_END + 1, SEG_CONST, SEG_ACCEL_END);
            let p = Self::calculate_path(
                self.snap_max,
                self.jerk_max,
                0.0,
                self.accel_max,
                vmin.max(self.vel_max),
                pend * 0.5,
            );
            let mut seg = SEG_CONST + 1;
            self.add_segments_jerk(&mut seg, p.tj, -p.jm, p.t6);
            self.add_segment_const_jerk(&mut seg, p.t4, 0.0);
            self.add_segments_jerk(&mut seg, p.tj, p.jm, p.t2);
            self.segment[SEG_DECEL_END].end_accel = 0.0;
            self.segment[SEG_DECEL_END].end_vel = self.segment[SEG_DECEL_END].end_vel.max(0.0);
            self.extend_const_vel_to(pend);
        }

        // The speed-change block (segments 8–14).
        self.fill_empty_segments(SEG_ACCEL_END + 1, SEG_SPEED_CHANGE_END, SEG_ACCEL_END);
        let v7 = self.segment[SEG_ACCEL_END].end_vel;
        if !is_equal(self.vel_max, v7) {
            let l = self.segment[SEG_CONST].end_pos - self.segment[SEG_ACCEL_END].end_pos;
            let mut p = PathTimes::default();
            let jerk_time = (((self.vel_max - v7).abs() * PI) / (4.0 * self.snap_max))
                .powf(1.0 / 3.0)
                .min(self.jerk_max * PI / (2.0 * self.snap_max));
            if self.vel_max < v7 && jerk_time * 12.0 < l / v7 {
                // Slowing down: the mirror of speeding up from vel_max to v7.
                let q = Self::calculate_path(
                    self.snap_max,
                    self.jerk_max,
                    self.vel_max,
                    self.accel_max,
                    v7,
                    l * 0.5,
                );
                p = PathTimes {
                    jm: -q.jm,
                    tj: q.tj,
                    t2: q.t6,
                    t4: q.t4,
                    t6: q.t2,
                };
            } else if self.vel_max > v7 && l / (jerk_time * 12.0) > v7 {
                let vm = self.vel_max.min(l / (jerk_time * 12.0));
                p = Self::calculate_path(
                    self.snap_max,
                    self.jerk_max,
                    v7,
                    self.accel_max,
                    vm,
                    l * 0.5,
                );
            }
            let mut seg = SEG_ACCEL_END + 1;
            if !is_zero(p.jm) && !is_negative(p.t2) && !is_negative(p.t4) && !is_negative(p.t6) {
                self.add_segments_jerk(&mut seg, p.tj, p.jm, p.t2);
                self.add_segment_const_jerk(&mut seg, p.t4, 0.0);
                self.add_segments_jerk(&mut seg, p.tj, -p.jm, p.t6);
                self.segment[SEG_SPEED_CHANGE_END].end_accel = 0.0;
            }
        }

        // Deceleration.
        let mut seg = SEG_CONST;
        vend = vend.min(self.segment[SEG_SPEED_CHANGE_END].end_vel);
        self.add_segment_const_jerk(&mut seg, 0.0, 0.0);
        if vend < self.segment[SEG_SPEED_CHANGE_END].end_vel {
            let p = Self::calculate_path(
                self.snap_max,
                self.jerk_max,
                vend,
                self.accel_max,
                self.segment[SEG_CONST].end_vel,
                pend - self.segment[SEG_CONST].end_pos,
            );
            self.add_segments_jerk(&mut seg, p.tj, -p.jm, p.t6);
            self.add_segment_const_jerk(&mut seg, p.t4, 0.0);
            self.add_segments_jerk(&mut seg, p.tj, p.jm, p.t2);
        } else {
            self.fill_empty_segments(SEG_CONST + 1, SEG_DECEL_END, SEG_CONST);
        }
        self.segment[SEG_DECEL_END].end_accel = 0.0;
        self.segment[SEG_DECEL_END].end_vel = self.segment[SEG_DECEL_END].end_vel.max(0.0);
        self.extend_const_vel_to(pend);
        if !self.valid() {
            self.init();
        }
    }

    /// Sets the speed at the origin (for a leg entered at speed); returns the
    /// speed actually used, never more than asked (`set_origin_speed_max`).
    pub fn set_origin_speed_max(&mut self, speed: f64) -> f64 {
        if self.num_segs != SEGMENTS_MAX {
            return 0.0;
        }
        let mut speed = speed.abs();
        if is_equal(self.segment[SEG_INIT].end_vel, speed) {
            return speed;
        }
        let vm = self.segment[SEG_ACCEL_END].end_vel;
        speed = speed.min(vm);
        let p = Self::calculate_path(
            self.snap_max,
            self.jerk_max,
            speed,
            self.accel_max,
            vm,
            self.seg_length * 0.5,
        );
        let mut seg = SEG_INIT;
        self.add_segment(
            &mut seg,
            0.0,
            SegmentType::ConstantJerk,
            0.0,
            0.0,
            speed,
            0.0,
        );
        self.add_segments_jerk(&mut seg, p.tj, p.jm, p.t2);
        self.add_segment_const_jerk(&mut seg, p.t4, 0.0);
        self.add_segments_jerk(&mut seg, p.tj, -p.jm, p.t6);
        self.segment[SEG_ACCEL_END].end_accel = 0.0;
        // Shift the acceleration back if it does not fit in half the length.
        let dp_start = (self.seg_length * 0.5 - self.segment[SEG_ACCEL_END].end_pos).min(0.0);
        let dt = dp_start / self.segment[SEG_ACCEL_END].end_vel;
        for s in &mut self.segment[SEG_INIT..=SEG_ACCEL_END] {
            s.end_time += dt;
            s.end_pos += dp_start;
        }
        self.fill_empty_segments(SEG_ACCEL_END + 1, SEG_SPEED_CHANGE_END, SEG_ACCEL_END);
        let mut seg = SEG_CONST;
        self.add_segment_const_jerk(&mut seg, 0.0, 0.0);
        let p = Self::calculate_path(
            self.snap_max,
            self.jerk_max,
            0.0,
            self.accel_max,
            self.segment[SEG_CONST].end_vel,
            self.seg_length * 0.5,
        );
        self.add_segments_jerk(&mut seg, p.tj, -p.jm, p.t6);
        self.add_segment_const_jerk(&mut seg, p.t4, 0.0);
        self.add_segments_jerk(&mut seg, p.tj, p.jm, p.t2);
        self.segment[SEG_DECEL_END].end_accel = 0.0;
        self.segment[SEG_DECEL_END].end_vel = self.segment[SEG_DECEL_END].end_vel.max(0.0);
        self.extend_const_vel_to(self.seg_length);
        if !self.valid() {
            self.init();
            return 0.0;
        }
        speed
    }

    /// Sets the speed at the destination (for a leg left at speed)
    /// (`set_destination_speed_max`).
    pub fn set_destination_speed_max(&mut self, speed: f64) {
        if self.num_segs != SEGMENTS_MAX {
            return;
        }
        let mut speed = speed.abs();
        if is_equal(self.segment[SEGMENTS_MAX - 1].end_vel, speed) {
            return;
        }
        let vm = self.segment[SEG_CONST].end_vel;
        speed = speed.min(vm);
        let p = Self::calculate_path(
            self.snap_max,
            self.jerk_max,
            speed,
            self.accel_max,
            vm,
            self.seg_length * 0.5,
        );
        let mut seg = SEG_CONST;
        self.add_segment_const_jerk(&mut seg, 0.0, 0.0);
        self.add_segments_jerk(&mut seg, p.tj, -p.jm, p.t6);
        self.add_segment_const_jerk(&mut seg, p.t4, 0.0);
        self.add_segments_jerk(&mut seg, p.tj, p.jm, p.t2);
        self.segment[SEG_DECEL_END].end_accel = 0.0;
        self.segment[SEG_DECEL_END].end_vel = self.segment[SEG_DECEL_END].end_vel.max(0.0);
        self.extend_const_vel_to(self.seg_length);
        if !self.valid() {
            self.init();
        }
    }

    /// Moves the target along this leg by `dt`, blending into `next_leg` at the
    /// corner and out of `prev_leg` (`advance_target_along_track`).
    ///
    /// `target_pos` must hold this leg's origin on entry; the leg's (and the
    /// blended legs') position offsets, velocities and accelerations are added to
    /// `target_pos`, `target_vel`, `target_accel`. Returns true once the vehicle
    /// is past the middle of the turn (or at the destination).
    #[allow(clippy::too_many_arguments)]
    pub fn advance_target_along_track(
        &mut self,
        prev_leg: &mut SCurve,
        next_leg: &mut SCurve,
        wp_radius: f64,
        accel_corner: f64,
        fast_waypoint: bool,
        dt: f64,
        target_pos: &mut Vector3<f64>,
        target_vel: &mut Vector3<f64>,
        target_accel: &mut Vector3<f64>,
    ) -> bool {
        prev_leg.move_to_pos_vel_accel(dt, target_pos, target_vel, target_accel);
        self.move_from_pos_vel_accel(dt, target_pos, target_vel, target_accel);
        let mut s_finished = self.finished();

        let time_to_destination = self.get_time_remaining();
        if fast_waypoint
            && is_zero(next_leg.get_time_elapsed())
            && self.get_time_elapsed() >= self.time_decel_start()
            && self.get_time_remaining() <= next_leg.time_accel_end()
        {
            // Where would the blend put us at the middle of the turn?
            let mut turn_pos = -self.seg_delta;
            let mut turn_vel = Vector3::zeros();
            let mut turn_accel = Vector3::zeros();
            self.move_from_time_pos_vel_accel(
                self.get_time_elapsed() + time_to_destination * 0.5,
                &mut turn_pos,
                &mut turn_vel,
                &mut turn_accel,
            );
            next_leg.move_from_time_pos_vel_accel(
                time_to_destination * 0.5,
                &mut turn_pos,
                &mut turn_vel,
                &mut turn_accel,
            );
            let speed_min = self
                .get_speed_along_track()
                .min(next_leg.get_speed_along_track());
            let accel_z_lim = self.get_accel_z_max().min(next_leg.get_accel_z_max());
            if turn_pos.norm() < wp_radius
                && turn_vel.norm() < speed_min
                && turn_accel.xy().norm() < accel_corner
                && turn_accel.z.abs() < accel_z_lim
            {
                next_leg.move_from_pos_vel_accel(dt, target_pos, target_vel, target_accel);
            }
        } else if !is_zero(next_leg.get_time_elapsed()) {
            next_leg.move_from_pos_vel_accel(dt, target_pos, target_vel, target_accel);
            if next_leg.get_time_elapsed() >= self.get_time_remaining() {
                s_finished = true;
            }
        }
        s_finished
    }

    /// Whether the leg's clock has reached its end (`finished`).
    pub fn finished(&self) -> bool {
        self.time >= self.time_end()
    }

    /// Origin → destination vector, NED m (`get_origin_to_destination`).
    pub fn get_origin_to_destination(&self) -> &Vector3<f64> {
        &self.seg_delta
    }

    /// Maximum speed along the track, m/s (`get_speed_along_track`).
    pub fn get_speed_along_track(&self) -> f64 {
        self.vel_max
    }

    /// Maximum acceleration along the track, m/s² (`get_accel_along_track`).
    pub fn get_accel_along_track(&self) -> f64 {
        self.accel_max
    }

    /// Maximum vertical acceleration, m/s² (`get_accel_z_max`).
    pub fn get_accel_z_max(&self) -> f64 {
        self.accel_z_max
    }

    /// The leg's clock, s (`get_time_elapsed`).
    pub fn get_time_elapsed(&self) -> f64 {
        self.time
    }

    /// Duration of the whole leg, s; 0 for an empty path (`time_end`).
    pub fn time_end(&self) -> f64 {
        if self.num_segs != SEGMENTS_MAX {
            return 0.0;
        }
        self.segment[SEG_DECEL_END].end_time
    }

    /// Time left on the leg, s (`get_time_remaining`).
    pub fn get_time_remaining(&self) -> f64 {
        if self.num_segs != SEGMENTS_MAX {
            return 0.0;
        }
        self.segment[SEG_DECEL_END].end_time - self.time
    }

    /// End of the acceleration phase, s (`get_accel_finished_time`).
    pub fn get_accel_finished_time(&self) -> f64 {
        self.time_accel_end()
    }

    /// Whether the leg is braking to its destination (true for an empty path)
    /// (`braking`).
    pub fn braking(&self) -> bool {
        if self.num_segs != SEGMENTS_MAX {
            return true;
        }
        self.time >= self.segment[SEG_CONST].end_time
    }

    /// Time offset at which the turn onto this leg may start (`time_accel_end`).
    pub fn time_accel_end(&self) -> f64 {
        if self.num_segs != SEGMENTS_MAX {
            return 0.0;
        }
        self.segment[SEG_ACCEL_END].end_time
    }

    /// Time offset at which the turn off this leg may start (`time_decel_start`).
    pub fn time_decel_start(&self) -> f64 {
        if self.num_segs != SEGMENTS_MAX {
            return 0.0;
        }
        self.segment[SEG_DECEL_START].end_time
    }

    /// Whether the path is empty (zero length or invalid limits).
    pub fn is_empty(&self) -> bool {
        self.num_segs != SEGMENTS_MAX
    }

    fn advance_time(&mut self, dt: f64) {
        self.time = (self.time + dt).min(self.time_end());
    }

    /// Advances by `dt` and adds the position (from the origin), velocity and
    /// acceleration (`move_from_pos_vel_accel`).
    pub fn move_from_pos_vel_accel(
        &mut self,
        dt: f64,
        pos: &mut Vector3<f64>,
        vel: &mut Vector3<f64>,
        accel: &mut Vector3<f64>,
    ) {
        self.advance_time(dt);
        let (_, a, v, p) = self.get_jerk_accel_vel_pos_at_time(self.time);
        self.project(a, v, p, pos, vel, accel);
    }

    /// Advances by `dt` and adds the position relative to the destination,
    /// velocity and acceleration (`move_to_pos_vel_accel`).
    pub fn move_to_pos_vel_accel(
        &mut self,
        dt: f64,
        pos: &mut Vector3<f64>,
        vel: &mut Vector3<f64>,
        accel: &mut Vector3<f64>,
    ) {
        self.advance_time(dt);
        let (_, a, v, p) = self.get_jerk_accel_vel_pos_at_time(self.time);
        self.project(a, v, p, pos, vel, accel);
        *pos -= self.seg_delta;
    }

    /// Adds the position (from the origin), velocity and acceleration at
    /// `time_now` without moving the clock (`move_from_time_pos_vel_accel`).
    pub fn move_from_time_pos_vel_accel(
        &self,
        time_now: f64,
        pos: &mut Vector3<f64>,
        vel: &mut Vector3<f64>,
        accel: &mut Vector3<f64>,
    ) {
        let (_, a, v, p) = self.get_jerk_accel_vel_pos_at_time(time_now);
        self.project(a, v, p, pos, vel, accel);
    }

    fn project(
        &self,
        a: f64,
        v: f64,
        p: f64,
        pos: &mut Vector3<f64>,
        vel: &mut Vector3<f64>,
        accel: &mut Vector3<f64>,
    ) {
        if is_zero(self.seg_length) {
            return;
        }
        let unit = self.seg_delta / self.seg_length;
        *pos += unit * p;
        *vel += unit * v;
        *accel += unit * a;
    }

    /// Jerk, acceleration, velocity and position along the track at `time_now`
    /// (`get_jerk_accel_vel_pos_at_time`); zeros for an empty path; position is
    /// never negative.
    pub fn get_jerk_accel_vel_pos_at_time(&self, time_now: f64) -> (f64, f64, f64, f64) {
        if self.num_segs != SEGMENTS_MAX {
            return (0.0, 0.0, 0.0, 0.0);
        }
        let n = self.num_segs;
        let pnt = (0..n)
            .find(|&i| time_now < self.segment[i].end_time)
            .unwrap_or(n);
        let (jtype, jm, tj, t0, a0, v0, p0) = if pnt == 0 {
            let s = self.segment[0];
            (
                SegmentType::ConstantJerk,
                0.0,
                0.0,
                s.end_time,
                s.end_accel,
                s.end_vel,
                s.end_pos,
            )
        } else if pnt == n {
            let s = self.segment[n - 1];
            (
                SegmentType::ConstantJerk,
                0.0,
                0.0,
                s.end_time,
                s.end_accel,
                s.end_vel,
                s.end_pos,
            )
        } else {
            let s = self.segment[pnt];
            let b = self.segment[pnt - 1];
            (
                s.seg_type,
                s.jerk_ref,
                s.end_time - b.end_time,
                b.end_time,
                b.end_accel,
                b.end_vel,
                b.end_pos,
            )
        };
        let t = time_now - t0;
        let (j, a, v, p) = match jtype {
            SegmentType::ConstantJerk => calc_javp_for_segment_const_jerk(t, jm, a0, v0, p0),
            SegmentType::PositiveJerk => calc_javp_for_segment_incr_jerk(t, tj, jm, a0, v0, p0),
            SegmentType::NegativeJerk => calc_javp_for_segment_decr_jerk(t, tj, jm, a0, v0, p0),
        };
        (j, a, v, p.max(0.0))
    }

    /// Builds the 23 segments for a path of length `l` from rest to rest
    /// (`add_segments`).
    fn add_segments(&mut self, l: f64) {
        if is_zero(l) {
            return;
        }
        let p = Self::calculate_path(
            self.snap_max,
            self.jerk_max,
            0.0,
            self.accel_max,
            self.vel_max,
            l * 0.5,
        );
        let mut n = self.num_segs;
        self.add_segments_jerk(&mut n, p.tj, p.jm, p.t2);
        self.add_segment_const_jerk(&mut n, p.t4, 0.0);
        self.add_segments_jerk(&mut n, p.tj, -p.jm, p.t6);
        self.segment[SEG_ACCEL_END].end_accel = 0.0;
        for _ in SEG_ACCEL_END + 1..=SEG_SPEED_CHANGE_END {
            self.add_segment_const_jerk(&mut n, 0.0, 0.0);
        }
        let s14 = self.segment[SEG_SPEED_CHANGE_END];
        let t15 = ((l - 2.0 * s14.end_pos) / s14.end_vel).max(0.0);
        self.add_segment_const_jerk(&mut n, t15, 0.0);
        self.add_segments_jerk(&mut n, p.tj, -p.jm, p.t6);
        self.add_segment_const_jerk(&mut n, p.t4, 0.0);
        self.add_segments_jerk(&mut n, p.tj, p.jm, p.t2);
        self.num_segs = n;
        self.segment[SEG_DECEL_END].end_accel = 0.0;
        self.segment[SEG_DECEL_END].end_vel = 0.0;
    }

    /// Segment durations of the trigonometric S-curve that takes speed `v0` to at
    /// most `vm` within half-length `l`, with snap `sm`, jerk `jm`, acceleration
    /// `am` limits (`calculate_path`, the closed-form cases of ArduPilot). Invalid
    /// inputs or outputs give all zeros.
    pub fn calculate_path(sm: f64, jm: f64, v0: f64, am: f64, vm: f64, l: f64) -> PathTimes {
        let zero = PathTimes::default();
        if !is_positive(sm)
            || !is_positive(jm)
            || !is_positive(am)
            || !is_positive(vm)
            || !is_positive(l)
        {
            return zero;
        }
        if v0 >= vm {
            return zero;
        }
        let (mut jm, mut am) = (jm, am);
        let mut tj = jm * PI / (2.0 * sm);
        let at = c_min(
            c_min(am, (vm - v0) / (2.0 * tj)),
            (l - 4.0 * v0 * tj) / (4.0 * sq(tj)),
        );
        if !is_positive(at) {
            return zero;
        }
        let (t2, t4, t6);
        // t4 for the "1 1 1" and "0 1 0" solutions.
        let t4_of = |am: f64, jm: f64, tj: f64| -> f64 {
            let root = safe_sqrt(
                (am * am * am * am) * 0.25
                    + (jm * jm) * (v0 * v0)
                    + (am * am) * (jm * jm) * (tj * tj) * 0.25
                    + am * (jm * jm) * l * 2.0
                    - (am * am) * jm * v0
                    + (am * am * am) * jm * tj * 0.5
                    - am * (jm * jm) * v0 * tj,
            );
            let base = (am * am) * (-1.5) - jm * v0 - am * jm * tj * 1.5;
            let a = (base + root) / (am * jm);
            let b = (base - root) / (am * jm);
            c_max(
                c_min(-(v0 - vm + am * tj + (am * am) / jm) / am, c_max(a, b)),
                0.0,
            )
        };
        if at.abs() < jm * tj {
            if is_zero(v0) {
                tj = c_min(
                    c_min(
                        c_min(tj, ((l * PI) / (8.0 * sm)).powf(0.25)),
                        ((vm * PI) / (4.0 * sm)).powf(1.0 / 3.0),
                    ),
                    safe_sqrt((am * PI) / (2.0 * sm)),
                );
                jm = 2.0 * sm * tj / PI;
                am = jm * tj;
            } else {
                am = at;
                jm = am / tj;
            }
            if vm <= v0 + 2.0 * am * tj || l <= 4.0 * v0 * tj + 4.0 * am * sq(tj) {
                t2 = 0.0;
                t4 = 0.0;
                t6 = 0.0;
            } else {
                t2 = 0.0;
                t4 = t4_of(am, jm, tj);
                t6 = 0.0;
            }
        } else if vm < v0 + am * tj + (am * am) / jm
            || l < 1.0 / (jm * jm) * (am * am * am + am * jm * (v0 * 2.0 + am * tj * 2.0))
                + v0 * tj * 2.0
                + am * (tj * tj)
        {
            // Solution 5 (t2 = t6 > 0, no constant acceleration): reduce Am.
            let s1 = safe_sqrt((v0 * -4.0 + vm * 4.0 + jm * (tj * tj)) / jm);
            let a_speed = c_max(jm * (tj + s1) * -0.5, jm * (tj - s1) * -0.5);
            let q = (jm * jm) * (tj * tj) / 9.0 - jm * v0 * (2.0 / 3.0);
            let r = (jm * jm) * l * 0.5 - (jm * jm * jm) * (tj * tj * tj) * (8.0 / 27.0)
                + jm * tj * ((jm * jm) * (tj * tj) + jm * v0 * 2.0) / 3.0
                - (jm * jm) * v0 * tj;
            let disc = safe_sqrt(sq(-r) - q * q * q);
            let a_length = jm * tj * (-2.0 / 3.0)
                + q / (disc + r).powf(1.0 / 3.0)
                + (disc + r).powf(1.0 / 3.0);
            am = c_min(c_min(am, a_speed), a_length);
            t2 = am / jm - tj;
            t4 = 0.0;
            t6 = t2;
        } else {
            // Solution 7 (t2 = t6 > 0 and constant acceleration).
            t2 = am / jm - tj;
            t4 = t4_of(am, jm, tj);
            t6 = t2;
        }
        let out = PathTimes { jm, tj, t2, t4, t6 };
        let ok = |x: f64| x.is_finite() && !is_negative(x);
        if !(ok(out.jm) && ok(out.tj) && ok(out.t2) && ok(out.t4) && ok(out.t6)) {
            return PathTimes { tj, ..zero };
        }
        out
    }

    fn add_segments_jerk(&mut self, index: &mut usize, tj: f64, jm: f64, tcj: f64) {
        self.add_segment_incr_jerk(index, tj, jm);
        self.add_segment_const_jerk(index, tcj, jm);
        self.add_segment_decr_jerk(index, tj, jm);
    }

    fn prev(&self, index: usize) -> Segment {
        self.segment[index.saturating_sub(1)]
    }

    /// A segment of no duration that keeps the previous segment's end state
    /// (what ArduPilot adds when a jerk phase has zero length).
    fn add_segment_zero_duration(&mut self, index: &mut usize, b: &Segment, jerk: f64) {
        self.add_segment(
            index,
            b.end_time,
            SegmentType::ConstantJerk,
            jerk,
            b.end_accel,
            b.end_vel,
            b.end_pos,
        );
    }

    fn add_segment_const_jerk(&mut self, index: &mut usize, tj: f64, j0: f64) {
        let b = self.prev(*index);
        if !is_positive(tj) {
            self.add_segment_zero_duration(index, &b, j0);
            return;
        }
        let t = b.end_time + tj;
        let a = b.end_accel + j0 * tj;
        let v = b.end_vel + b.end_accel * tj + 0.5 * j0 * sq(tj);
        let p = b.end_pos
            + b.end_vel * tj
            + 0.5 * b.end_accel * sq(tj)
            + (1.0 / 6.0) * j0 * tj * tj * tj;
        self.add_segment(index, t, SegmentType::ConstantJerk, j0, a, v, p);
    }

    fn add_segment_incr_jerk(&mut self, index: &mut usize, tj: f64, jm: f64) {
        let b = self.prev(*index);
        if !is_positive(tj) {
            self.add_segment_zero_duration(index, &b, 0.0);
            return;
        }
        let beta = PI / tj;
        let alpha = jm * 0.5;
        let at = alpha * tj;
        let vt = alpha * (sq(tj) * 0.5 - 2.0 / sq(beta));
        let pt = alpha * ((-1.0 / sq(beta)) * tj + (1.0 / 6.0) * tj * tj * tj);
        let t = b.end_time + tj;
        let a = b.end_accel + at;
        let v = b.end_vel + b.end_accel * tj + vt;
        let p = b.end_pos + b.end_vel * tj + 0.5 * b.end_accel * sq(tj) + pt;
        self.add_segment(index, t, SegmentType::PositiveJerk, jm, a, v, p);
    }

    fn add_segment_decr_jerk(&mut self, index: &mut usize, tj: f64, jm: f64) {
        let b = self.prev(*index);
        if !is_positive(tj) {
            self.add_segment_zero_duration(index, &b, 0.0);
            return;
        }
        let beta = PI / tj;
        let alpha = jm * 0.5;
        let at = alpha * tj;
        let vt = alpha * (sq(tj) * 0.5 - 2.0 / sq(beta));
        let pt = alpha * ((-1.0 / sq(beta)) * tj + (1.0 / 6.0) * tj * tj * tj);
        let a2t = jm * tj;
        let v2t = jm * sq(tj);
        let p2t = alpha * ((-1.0 / sq(beta)) * 2.0 * tj + (4.0 / 3.0) * tj * tj * tj);
        let t = b.end_time + tj;
        let a = (b.end_accel - at) + a2t;
        let v = (b.end_vel - vt) + (b.end_accel - at) * tj + v2t;
        let p = (b.end_pos - pt) + (b.end_vel - vt) * tj + 0.5 * (b.end_accel - at) * sq(tj) + p2t;
        self.add_segment(index, t, SegmentType::NegativeJerk, jm, a, v, p);
    }

    fn extend_const_vel_to(&mut self, target_pos: f64) {
        let dp = (target_pos - self.segment[SEG_DECEL_END].end_pos).max(0.0);
        let v = self.segment[SEG_CONST].end_vel;
        let t15 = if is_positive(v) { dp / v } else { 0.0 };
        for s in &mut self.segment[SEG_CONST..=SEG_DECEL_END] {
            s.end_time += t15;
            s.end_pos += dp;
        }
    }

    fn fill_empty_segments(&mut self, first: usize, last: usize, src: usize) {
        let s = self.segment[src];
        for seg in &mut self.segment[first..=last] {
            *seg = Segment {
                seg_type: SegmentType::ConstantJerk,
                jerk_ref: 0.0,
                end_time: s.end_time,
                end_accel: 0.0,
                end_vel: s.end_vel,
                end_pos: s.end_pos,
            };
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn add_segment(
        &mut self,
        index: &mut usize,
        end_time: f64,
        seg_type: SegmentType,
        jerk_ref: f64,
        end_accel: f64,
        end_vel: f64,
        end_pos: f64,
    ) {
        if let Some(s) = self.segment.get_mut(*index) {
            *s = Segment {
                jerk_ref,
                seg_type,
                end_time,
                end_accel,
                end_vel,
                end_pos,
            };
        }
        *index += 1;
    }

    /// Whether the path is well formed (`valid`).
    fn valid(&self) -> bool {
        if self.num_segs != SEGMENTS_MAX {
            return false;
        }
        for (i, s) in self.segment.iter().enumerate() {
            if !s.jerk_ref.is_finite()
                || !s.end_time.is_finite()
                || !s.end_accel.is_finite()
                || !s.end_vel.is_finite()
                || is_negative(s.end_vel)
                || !s.end_pos.is_finite()
            {
                return false;
            }
            if i >= 1 {
                let b = self.segment[i - 1];
                if is_negative(s.end_time - b.end_time) || is_negative(s.end_pos - b.end_pos) {
                    return false;
                }
            }
        }
        is_zero(self.segment[SEGMENTS_MAX - 1].end_accel)
    }
}

fn calc_javp_for_segment_const_jerk(
    t: f64,
    j0: f64,
    a0: f64,
    v0: f64,
    p0: f64,
) -> (f64, f64, f64, f64) {
    (
        j0,
        a0 + j0 * t,
        v0 + a0 * t + 0.5 * j0 * (t * t),
        p0 + v0 * t + 0.5 * a0 * (t * t) + (1.0 / 6.0) * j0 * (t * t * t),
    )
}

fn calc_javp_for_segment_incr_jerk(
    t: f64,
    tj: f64,
    jm: f64,
    a0: f64,
    v0: f64,
    p0: f64,
) -> (f64, f64, f64, f64) {
    if !is_positive(tj) {
        return (0.0, a0, v0, p0);
    }
    let alpha = jm * 0.5;
    let beta = PI / tj;
    let (s, c) = (beta * t).sin_cos();
    (
        alpha * (1.0 - c),
        a0 + alpha * t - (alpha / beta) * s,
        v0 + a0 * t + (alpha * 0.5) * (t * t) + (alpha / (beta * beta)) * c - alpha / (beta * beta),
        p0 + v0 * t
            + 0.5 * a0 * (t * t)
            + (-alpha / (beta * beta)) * t
            + alpha * (t * t * t) / 6.0
            + (alpha / (beta * beta * beta)) * s,
    )
}

fn calc_javp_for_segment_decr_jerk(
    t: f64,
    tj: f64,
    jm: f64,
    a0: f64,
    v0: f64,
    p0: f64,
) -> (f64, f64, f64, f64) {
    if !is_positive(tj) {
        return (0.0, a0, v0, p0);
    }
    let alpha = jm * 0.5;
    let beta = PI / tj;
    let at = alpha * tj;
    let vt = alpha * ((tj * tj) * 0.5 - 2.0 / (beta * beta));
    let pt = alpha * ((-1.0 / (beta * beta)) * tj + (1.0 / 6.0) * (tj * tj * tj));
    let y = t + tj;
    let (s, c) = (beta * y).sin_cos();
    (
        alpha * (1.0 - c),
        (a0 - at) + alpha * y - (alpha / beta) * s,
        (v0 - vt) + (a0 - at) * t + 0.5 * alpha * y * y + (alpha / (beta * beta)) * c
            - alpha / (beta * beta),
        (p0 - pt)
            + (v0 - vt) * t
            + 0.5 * (a0 - at) * (t * t)
            + (-alpha / (beta * beta)) * y
            + (alpha / 6.0) * y * y * y
            + (alpha / (beta * beta * beta)) * s,
    )
}
