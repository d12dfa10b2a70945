//! The jerk-limited trigonometric S-curve: 23 segments of raised-cosine jerk,
//! constant jerk, constant acceleration and cruise between an origin and a
//! destination, with corner blending between consecutive legs.
//!
//! Ported from ArduPilot's `libraries/AP_Math/SCurve.cpp` / `SCurve.h` (Leonard
//! Hall, GPLv3) as of ArduPilot commit 90700977c553 (July 2025): the
//! straight-track form AC_WPNav and AR_WPNav drive. Function and member names
//! are ArduPilot's.
//!
//! **ArduPilot-exact arithmetic.** The port computes what ArduPilot's SITL build
//! computes, bit for bit: `float` state, arguments and vectors; a float leg
//! clock that accumulates `dt` (and so falls behind n·dt); float literals
//! (`-fsingle-precision-constant`); `Vector3f::length()` partly in double
//! (`ftype`); `kinematic_limit()` in float; the C library's `sinf`, `cosf`,
//! `powf` where ArduPilot calls them; even `powf(x, 1/3)`, an integer division
//! that makes the speed-change jerk time `MIN(1, …)`. Expressions keep
//! ArduPilot's order of operations, since float addition is not associative.
//! The helpers live in [`super::ap_float`]. `crates/guidance/tests/scurve_reference.rs` checks
//! every value of ArduPilot's own output on several missions for equality.
//!
//! Vectors are in the caller's frame (ArduPilot's is NEU: +z up, which
//! `speed_up` limits; a NED caller swaps `speed_up` and `speed_down`), metres,
//! m/s, m/s²; times in seconds. Position is returned as an offset added to the
//! caller's accumulator (the "move" functions add into `pos`, `vel`, `accel`).

use nalgebra::{Vector2, Vector3};

use super::ap_float::{
    is_equal, is_negative, is_positive, is_zero, is_zero3, kinematic_limit, length2, length3,
    length_squared3, max, min, normalized3, safe_sqrt, sq, M_PI,
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
    jerk_ref: f32,
    seg_type: SegmentType,
    end_time: f32,
    end_accel: f32,
    end_vel: f32,
    end_pos: f32,
}

/// Segment durations from [`SCurve::calculate_path`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PathTimes {
    /// Jerk magnitude actually used, m/s³.
    pub jm: f32,
    /// Raised-cosine jerk ramp duration, s.
    pub tj: f32,
    /// Constant-jerk duration, s.
    pub t2: f32,
    /// Constant-acceleration duration, s.
    pub t4: f32,
    /// Second constant-jerk duration, s.
    pub t6: f32,
}

/// One straight leg's S-curve.
#[derive(Debug, Clone, PartialEq)]
pub struct SCurve {
    snap_max: f32,
    jerk_max: f32,
    accel_max: f32,
    accel_z_max: f32,
    vel_max: f32,
    time: f32,
    num_segs: usize,
    segment: [Segment; SEGMENTS_MAX],
    track: Vector3<f32>,
    delta_unit: Vector3<f32>,
    position_sq: f32,
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
            track: Vector3::zeros(),
            delta_unit: Vector3::zeros(),
            position_sq: 0.0,
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

    /// Clears the path (`init`). Like ArduPilot's, it keeps `accel_z_max`.
    pub fn init(&mut self) {
        self.snap_max = 0.0;
        self.jerk_max = 0.0;
        self.accel_max = 0.0;
        self.vel_max = 0.0;
        self.time = 0.0;
        self.num_segs = SEG_INIT;
        let mut i = self.num_segs;
        self.add_segment(&mut i, 0.0, SegmentType::ConstantJerk, 0.0, 0.0, 0.0, 0.0);
        self.num_segs = i;
        self.track = Vector3::zeros();
        self.delta_unit = Vector3::zeros();
        self.position_sq = 0.0;
    }

    /// Builds the path for a straight track from `origin` to `destination` (m)
    /// with horizontal speed, climb (+z) and descent speed limits (m/s),
    /// horizontal and vertical acceleration limits (m/s²), snap (m/s⁴) and jerk
    /// (m/s³) limits (`calculate_track`). A zero-length track or invalid limits
    /// leave an empty path.
    #[allow(clippy::too_many_arguments)]
    pub fn calculate_track(
        &mut self,
        origin: &Vector3<f32>,
        destination: &Vector3<f32>,
        speed_xy: f32,
        speed_up: f32,
        speed_down: f32,
        accel_xy: f32,
        accel_z: f32,
        snap_maximum: f32,
        jerk_maximum: f32,
    ) {
        self.init();
        let track_temp = destination - origin;
        if is_zero3(&track_temp) || is_zero(length_squared3(&track_temp)) {
            return;
        }
        self.snap_max = snap_maximum;
        self.jerk_max = jerk_maximum;
        self.set_kinematic_limits(
            origin,
            destination,
            speed_xy,
            speed_up,
            speed_down,
            accel_xy,
            accel_z,
        );
        if !is_positive(self.snap_max)
            || !is_positive(self.jerk_max)
            || !is_positive(self.accel_max)
            || !is_positive(self.vel_max)
        {
            return;
        }
        self.track = track_temp;
        let track_length = length3(&self.track);
        if is_zero(track_length) {
            self.delta_unit = Vector3::zeros();
        } else {
            self.delta_unit = normalized3(&self.track);
            self.add_segments(track_length);
        }
        if !self.valid() {
            self.init();
        }
    }

    /// Changes the maximum speeds along the path, re-planning what is still ahead
    /// (`set_speed_max`).
    pub fn set_speed_max(&mut self, speed_xy: f32, speed_up: f32, speed_down: f32) {
        if self.num_segs != SEGMENTS_MAX {
            return;
        }
        let track_speed_max =
            kinematic_limit(self.delta_unit, speed_xy, speed_up, speed_down.abs());
        if is_equal(self.vel_max, track_speed_max) || is_zero(track_speed_max) {
            return;
        }
        self.vel_max = track_speed_max;
        if self.time >= self.segment[SEG_CONST].end_time {
            return;
        }
        let pend = self.segment[SEG_DECEL_END].end_pos;
        let vend = min(self.vel_max, self.segment[SEG_DECEL_END].end_vel);
        if is_zero(self.time) {
            let vstart = min(self.vel_max, self.segment[SEG_INIT].end_vel);
            self.num_segs = SEG_INIT;
            let mut i = self.num_segs;
            self.add_segment(&mut i, 0.0, SegmentType::ConstantJerk, 0.0, 0.0, 0.0, 0.0);
            self.num_segs = i;
            self.add_segments(pend);
            self.set_origin_speed_max(vstart);
            self.set_destination_speed_max(vend);
            return;
        }
        self.restart_speed_change_here();
        self.lower_cruise_in_acceleration(pend);
        self.replan_speed_change();
        self.replan_deceleration(pend, vend);
        if !self.valid() {
            self.init();
        }
    }

    /// `set_speed_max` while moving: makes the current phase the start of the
    /// plan (the speed change moves into the acceleration block; when cruising,
    /// both restart from the present position and speed).
    fn restart_speed_change_here(&mut self) {
        let time = self.time;
        if time >= self.segment[SEG_ACCEL_END].end_time
            && time <= self.segment[SEG_SPEED_CHANGE_END].end_time
        {
            let mut s0 = self.segment[SEG_ACCEL_END];
            s0.seg_type = SegmentType::ConstantJerk;
            s0.jerk_ref = 0.0;
            self.segment[SEG_INIT] = s0;
            for i in SEG_INIT + 1..=SEG_ACCEL_END {
                self.segment[i] = self.segment[i + 7];
            }
            self.fill_empty_segments(SEG_ACCEL_END + 1, SEG_SPEED_CHANGE_END, SEG_ACCEL_END);
        } else if time > self.segment[SEG_SPEED_CHANGE_END].end_time
            && time <= self.segment[SEG_CONST].end_time
        {
            let mut s0 = self.segment[SEG_SPEED_CHANGE_END];
            s0.seg_type = SegmentType::ConstantJerk;
            s0.jerk_ref = 0.0;
            s0.end_accel = 0.0;
            self.segment[SEG_INIT] = s0;
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
    }

    /// `set_speed_max` still in constant acceleration: lowers the cruise speed
    /// as close to the new one as shortening that segment allows.
    fn lower_cruise_in_acceleration(&mut self, pend: f32) {
        let time = self.time;
        let s = &self.segment;
        if !(time <= s[SEG_ACCEL_MAX].end_time
            && is_positive(s[SEG_ACCEL_MAX].end_time - s[SEG_ACCEL_MAX - 1].end_time)
            && self.vel_max < s[SEG_ACCEL_END].end_vel
            && is_positive(s[SEG_ACCEL_MAX].end_accel))
        {
            return;
        }
        let vstart = s[SEG_INIT].end_vel;
        let vmin = s[SEG_ACCEL_END].end_vel
            - s[SEG_ACCEL_MAX].end_accel
                * (s[SEG_ACCEL_MAX].end_time - max(time, s[SEG_ACCEL_MAX - 1].end_time));
        let p = Self::calculate_path(
            self.snap_max,
            self.jerk_max,
            vstart,
            self.accel_max,
            max(vmin, self.vel_max),
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
            max(vmin, self.vel_max),
            pend * 0.5,
        );
        let mut seg = SEG_CONST + 1;
        self.add_segments_jerk(&mut seg, p.tj, -p.jm, p.t6);
        self.add_segment_const_jerk(&mut seg, p.t4, 0.0);
        self.add_segments_jerk(&mut seg, p.tj, p.jm, p.t2);
        self.segment[SEG_DECEL_END].end_accel = 0.0;
        self.segment[SEG_DECEL_END].end_vel = max(0.0, self.segment[SEG_DECEL_END].end_vel);
        self.extend_const_vel_to(pend);
    }

    /// `set_speed_max`: the speed-change block (segments 8–14).
    fn replan_speed_change(&mut self) {
        self.fill_empty_segments(SEG_ACCEL_END + 1, SEG_SPEED_CHANGE_END, SEG_ACCEL_END);
        let v7 = self.segment[SEG_ACCEL_END].end_vel;
        if is_equal(self.vel_max, v7) {
            return;
        }
        let l = self.segment[SEG_CONST].end_pos - self.segment[SEG_ACCEL_END].end_pos;
        // ArduPilot writes MIN(powf(|Δv|·π/(4·snap), 1/3), jerk·π/(2·snap)):
        // 1/3 is an integer division, and powf(x, 0) is 1 for every x.
        let jerk_time = min(1.0, self.jerk_max * M_PI / (2.0 * self.snap_max));
        let p = if self.vel_max < v7 && jerk_time * 12.0 < l / v7 {
            // Slowing down: the mirror of speeding up from vel_max to v7.
            let q = Self::calculate_path(
                self.snap_max,
                self.jerk_max,
                self.vel_max,
                self.accel_max,
                v7,
                l * 0.5,
            );
            PathTimes {
                jm: -q.jm,
                tj: q.tj,
                t2: q.t6,
                t4: q.t4,
                t6: q.t2,
            }
        } else {
            // Speeding up, as far as 12 jerk times of what is left of the
            // cruise allow. ArduPilot goes here only when vel_max > v7 and
            // that distance allows more than v7; otherwise vm ≤ v7 and
            // calculate_path plans nothing, as it does here.
            let vm = min(self.vel_max, l / (jerk_time * 12.0));
            Self::calculate_path(
                self.snap_max,
                self.jerk_max,
                v7,
                self.accel_max,
                vm,
                l * 0.5,
            )
        };
        let mut seg = SEG_ACCEL_END + 1;
        // (ArduPilot also tests t2, t4 and t6 for a sign calculate_path
        // never gives them.)
        if !is_zero(p.jm) {
            self.add_segments_jerk(&mut seg, p.tj, p.jm, p.t2);
            self.add_segment_const_jerk(&mut seg, p.t4, 0.0);
            self.add_segments_jerk(&mut seg, p.tj, -p.jm, p.t6);
            self.segment[SEG_SPEED_CHANGE_END].end_accel = 0.0;
        }
    }

    /// `set_speed_max`: the deceleration to `vend` at `pend`.
    fn replan_deceleration(&mut self, pend: f32, vend: f32) {
        let mut seg = SEG_CONST;
        let vend = min(vend, self.segment[SEG_SPEED_CHANGE_END].end_vel);
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
        self.segment[SEG_DECEL_END].end_vel = max(0.0, self.segment[SEG_DECEL_END].end_vel);
        self.extend_const_vel_to(pend);
    }

    /// Sets the speed at the origin (for a leg entered at speed); returns the
    /// speed actually used, never more than asked (`set_origin_speed_max`).
    pub fn set_origin_speed_max(&mut self, speed: f32) -> f32 {
        if self.num_segs != SEGMENTS_MAX {
            return 0.0;
        }
        if is_equal(self.segment[SEG_INIT].end_vel, speed) {
            return speed;
        }
        let vm = self.segment[SEG_ACCEL_END].end_vel;
        let track_length = length3(&self.track);
        let speed = min(speed, vm);
        let p = Self::calculate_path(
            self.snap_max,
            self.jerk_max,
            speed,
            self.accel_max,
            vm,
            track_length * 0.5,
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
        let dp_start = min(
            0.0,
            track_length * 0.5 - self.segment[SEG_ACCEL_END].end_pos,
        );
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
            track_length * 0.5,
        );
        self.add_decel_and_extend(&mut seg, &p, track_length);
        if !self.valid() {
            self.init();
            return 0.0;
        }
        speed
    }

    /// Sets the speed at the destination (for a leg left at speed)
    /// (`set_destination_speed_max`).
    pub fn set_destination_speed_max(&mut self, speed: f32) {
        if self.num_segs != SEGMENTS_MAX {
            return;
        }
        if is_equal(self.segment[SEGMENTS_MAX - 1].end_vel, speed) {
            return;
        }
        let vm = self.segment[SEG_CONST].end_vel;
        let track_length = length3(&self.track);
        let speed = min(speed, vm);
        let p = Self::calculate_path(
            self.snap_max,
            self.jerk_max,
            speed,
            self.accel_max,
            vm,
            track_length * 0.5,
        );
        let mut seg = SEG_CONST;
        self.add_segment_const_jerk(&mut seg, 0.0, 0.0);
        self.add_decel_and_extend(&mut seg, &p, track_length);
        if !self.valid() {
            self.init();
        }
    }

    /// The deceleration segments from `seg`, then the cruise stretched so the
    /// path ends at `length`.
    fn add_decel_and_extend(&mut self, seg: &mut usize, p: &PathTimes, length: f32) {
        self.add_segments_jerk(seg, p.tj, -p.jm, p.t6);
        self.add_segment_const_jerk(seg, p.t4, 0.0);
        self.add_segments_jerk(seg, p.tj, p.jm, p.t2);
        self.segment[SEG_DECEL_END].end_accel = 0.0;
        self.segment[SEG_DECEL_END].end_vel = max(0.0, self.segment[SEG_DECEL_END].end_vel);
        self.extend_const_vel_to(length);
    }

    /// Moves the target along this leg by `dt` (s), blending into `next_leg` at
    /// the corner and out of `prev_leg` (`advance_target_along_track`).
    ///
    /// `target_pos` must hold this leg's origin on entry; the leg's (and the
    /// blended legs') position offsets, velocities and accelerations are added to
    /// `target_pos`, `target_vel`, `target_accel`. Returns true once the target
    /// is past the middle of the turn (or at the destination).
    #[allow(clippy::too_many_arguments)]
    pub fn advance_target_along_track(
        &mut self,
        prev_leg: &mut SCurve,
        next_leg: &mut SCurve,
        wp_radius: f32,
        accel_corner: f32,
        fast_waypoint: bool,
        dt: f32,
        target_pos: &mut Vector3<f32>,
        target_vel: &mut Vector3<f32>,
        target_accel: &mut Vector3<f32>,
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
            // Where would the blend put the target at the middle of the turn?
            let mut turn_pos = -self.track;
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
            let speed_min = min(
                self.get_speed_along_track(),
                next_leg.get_speed_along_track(),
            );
            let accel_z_lim = min(self.get_accel_z_max(), next_leg.get_accel_z_max());
            if length3(&turn_pos) < wp_radius
                && length3(&turn_vel) < speed_min
                && length2(&Vector2::new(turn_accel.x, turn_accel.y)) < accel_corner
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

    /// Whether the leg's clock has reached its end or the target its
    /// destination (`finished`).
    pub fn finished(&self) -> bool {
        self.time >= self.time_end() || self.position_sq >= length_squared3(&self.track)
    }

    /// Origin → destination vector, m (`get_track`).
    pub fn get_track(&self) -> &Vector3<f32> {
        &self.track
    }

    /// Maximum speed along the track, m/s (`get_speed_along_track`).
    pub fn get_speed_along_track(&self) -> f32 {
        self.vel_max
    }

    /// Maximum acceleration along the track, m/s² (`get_accel_along_track`).
    pub fn get_accel_along_track(&self) -> f32 {
        self.accel_max
    }

    /// Maximum vertical acceleration, m/s² (`get_accel_z_max`).
    pub fn get_accel_z_max(&self) -> f32 {
        self.accel_z_max
    }

    /// The leg's clock, s (`get_time_elapsed`).
    pub fn get_time_elapsed(&self) -> f32 {
        self.time
    }

    /// Duration of the whole leg, s; 0 for an empty path (`time_end`).
    pub fn time_end(&self) -> f32 {
        if self.num_segs != SEGMENTS_MAX {
            return 0.0;
        }
        self.segment[SEG_DECEL_END].end_time
    }

    /// Time left on the leg, s (`get_time_remaining`).
    pub fn get_time_remaining(&self) -> f32 {
        if self.num_segs != SEGMENTS_MAX {
            return 0.0;
        }
        self.segment[SEG_DECEL_END].end_time - self.time
    }

    /// Time offset at which the turn onto this leg may start (`time_accel_end`).
    pub fn time_accel_end(&self) -> f32 {
        if self.num_segs != SEGMENTS_MAX {
            return 0.0;
        }
        self.segment[SEG_ACCEL_END].end_time
    }

    /// Time offset at which the turn off this leg may start (`time_decel_start`).
    pub fn time_decel_start(&self) -> f32 {
        if self.num_segs != SEGMENTS_MAX {
            return 0.0;
        }
        self.segment[SEG_DECEL_START].end_time
    }

    /// Whether the path is empty (zero length or invalid limits).
    pub fn is_empty(&self) -> bool {
        self.num_segs != SEGMENTS_MAX
    }

    fn advance_time(&mut self, dt: f32) {
        self.time = min(self.time + dt, self.time_end());
    }

    /// Advances by `dt` and adds the position (from the origin), velocity and
    /// acceleration (`move_from_pos_vel_accel`).
    pub fn move_from_pos_vel_accel(
        &mut self,
        dt: f32,
        pos: &mut Vector3<f32>,
        vel: &mut Vector3<f32>,
        accel: &mut Vector3<f32>,
    ) {
        self.advance_time(dt);
        let (_, a, v, p) = self.get_jerk_accel_vel_pos_at_time(self.time);
        self.project(a, v, p, pos, vel, accel);
        self.position_sq = sq(p);
    }

    /// Advances by `dt` and adds the position relative to the destination,
    /// velocity and acceleration (`move_to_pos_vel_accel`).
    pub fn move_to_pos_vel_accel(
        &mut self,
        dt: f32,
        pos: &mut Vector3<f32>,
        vel: &mut Vector3<f32>,
        accel: &mut Vector3<f32>,
    ) {
        self.move_from_pos_vel_accel(dt, pos, vel, accel);
        *pos -= self.track;
    }

    /// Adds the position (from the origin), velocity and acceleration at
    /// `time_now` without moving the clock (`move_from_time_pos_vel_accel`).
    pub fn move_from_time_pos_vel_accel(
        &self,
        time_now: f32,
        pos: &mut Vector3<f32>,
        vel: &mut Vector3<f32>,
        accel: &mut Vector3<f32>,
    ) {
        let (_, a, v, p) = self.get_jerk_accel_vel_pos_at_time(time_now);
        self.project(a, v, p, pos, vel, accel);
    }

    fn project(
        &self,
        a: f32,
        v: f32,
        p: f32,
        pos: &mut Vector3<f32>,
        vel: &mut Vector3<f32>,
        accel: &mut Vector3<f32>,
    ) {
        *pos += self.delta_unit * p;
        *vel += self.delta_unit * v;
        *accel += self.delta_unit * a;
    }

    /// Jerk, acceleration, velocity and position along the track at `time_now`
    /// (`get_jerk_accel_vel_pos_at_time`); zeros for an empty path; position is
    /// never negative.
    pub fn get_jerk_accel_vel_pos_at_time(&self, time_now: f32) -> (f32, f32, f32, f32) {
        if self.num_segs != SEGMENTS_MAX {
            return (0.0, 0.0, 0.0, 0.0);
        }
        let n = self.num_segs;
        let pnt = (0..n)
            .find(|&i| time_now < self.segment[i].end_time)
            .unwrap_or(n);
        let (jtype, jm, tj, t0, a0, v0, p0) = if pnt == 0 || pnt == n {
            // Before the first segment's end, its end; after the last's, the last's.
            let s = self.segment[pnt.min(n - 1)];
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
        (j, a, v, max(0.0, p))
    }

    /// Builds the 23 segments for a path of length `l` from rest to rest
    /// (`add_segments`).
    fn add_segments(&mut self, l: f32) {
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
        let t15 = max(0.0, (l - 2.0 * s14.end_pos) / s14.end_vel);
        self.add_segment_const_jerk(&mut n, t15, 0.0);
        self.add_segments_jerk(&mut n, p.tj, -p.jm, p.t6);
        self.add_segment_const_jerk(&mut n, p.t4, 0.0);
        self.add_segments_jerk(&mut n, p.tj, p.jm, p.t2);
        self.num_segs = n;
        self.segment[SEG_DECEL_END].end_accel = 0.0;
        self.segment[SEG_DECEL_END].end_vel = 0.0;
    }

    /// Segment durations of the trigonometric S-curve that takes speed `v0` to at
    /// most `vm` (m/s) within half-length `l` (m), with snap `sm`, jerk `jm`,
    /// acceleration `am` limits (`calculate_path`, ArduPilot's closed-form
    /// cases). Invalid inputs give all zeros; invalid outputs keep only `tj`.
    pub fn calculate_path(sm: f32, jm: f32, v0: f32, am: f32, vm: f32, l: f32) -> PathTimes {
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
        let mut tj = jm * M_PI / (2.0 * sm);
        let at = min(
            min(am, (vm - v0) / (2.0 * tj)),
            (l + 4.0 * v0 * tj) / (4.0 * sq(tj)),
        );
        let (t2, t4, t6);
        if at.abs() < jm * tj {
            if is_zero(v0) {
                tj = min(
                    min(
                        min(tj, ((l * M_PI) / (8.0 * sm)).powf(1.0 / 4.0)),
                        ((vm * M_PI) / (4.0 * sm)).powf(1.0 / 3.0),
                    ),
                    safe_sqrt((am * M_PI) / (2.0 * sm)),
                );
                jm = 2.0 * sm * tj / M_PI;
                am = jm * tj;
            } else {
                am = at;
                jm = am / tj;
            }
            t2 = 0.0;
            t6 = 0.0;
            t4 = if vm <= v0 + 2.0 * am * tj || l <= 4.0 * v0 * tj + 4.0 * am * sq(tj) {
                0.0
            } else {
                max(t4_const_accel(am, jm, tj, v0, vm, l), 0.0)
            };
        } else if vm < v0 + am * tj + (am * am) / jm
            || l < 1.0 / (jm * jm) * (am * am * am + am * jm * (v0 * 2.0 + am * tj * 2.0))
                + v0 * tj * 2.0
                + am * (tj * tj)
        {
            // Solution 5 (t2 = t6 > 0, no constant acceleration): reduce Am.
            am = min(
                min(am, am_for_speed(jm, tj, v0, vm)),
                am_for_length(jm, tj, v0, l),
            );
            t2 = am / jm - tj;
            t4 = 0.0;
            t6 = t2;
        } else {
            // Solution 7 (t2 = t6 > 0 and constant acceleration).
            t2 = am / jm - tj;
            t4 = max(t4_const_accel(am, jm, tj, v0, vm, l), 0.0);
            t6 = t2;
        }
        let bad = |x: f32| !x.is_finite() || is_negative(x);
        if [jm, tj, t2, t4, t6].into_iter().any(bad) {
            return PathTimes { tj, ..zero };
        }
        PathTimes { jm, tj, t2, t4, t6 }
    }

    fn add_segments_jerk(&mut self, index: &mut usize, tj: f32, jm: f32, tcj: f32) {
        self.add_segment_incr_jerk(index, tj, jm);
        self.add_segment_const_jerk(index, tcj, jm);
        self.add_segment_decr_jerk(index, tj, jm);
    }

    fn prev(&self, index: usize) -> Segment {
        self.segment[index.saturating_sub(1)]
    }

    /// A segment of no duration that keeps the previous segment's end state
    /// (what ArduPilot adds when a jerk phase has zero length).
    fn add_segment_zero_duration(&mut self, index: &mut usize, b: &Segment, jerk: f32) {
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

    fn add_segment_const_jerk(&mut self, index: &mut usize, tj: f32, j0: f32) {
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
            + (1.0 / 6.0) * j0 * tj.powf(3.0);
        self.add_segment(index, t, SegmentType::ConstantJerk, j0, a, v, p);
    }

    fn add_segment_incr_jerk(&mut self, index: &mut usize, tj: f32, jm: f32) {
        let b = self.prev(*index);
        if !is_positive(tj) {
            self.add_segment_zero_duration(index, &b, 0.0);
            return;
        }
        let beta = M_PI / tj;
        let alpha = jm * 0.5;
        let at = alpha * tj;
        let vt = alpha * (sq(tj) * 0.5 - 2.0 / sq(beta));
        let pt = alpha * ((-1.0 / sq(beta)) * tj + (1.0 / 6.0) * tj.powf(3.0));
        let t = b.end_time + tj;
        let a = b.end_accel + at;
        let v = b.end_vel + b.end_accel * tj + vt;
        let p = b.end_pos + b.end_vel * tj + 0.5 * b.end_accel * sq(tj) + pt;
        self.add_segment(index, t, SegmentType::PositiveJerk, jm, a, v, p);
    }

    fn add_segment_decr_jerk(&mut self, index: &mut usize, tj: f32, jm: f32) {
        let b = self.prev(*index);
        if !is_positive(tj) {
            self.add_segment_zero_duration(index, &b, 0.0);
            return;
        }
        let beta = M_PI / tj;
        let alpha = jm * 0.5;
        let at = alpha * tj;
        let vt = alpha * (sq(tj) * 0.5 - 2.0 / sq(beta));
        let pt = alpha * ((-1.0 / sq(beta)) * tj + (1.0 / 6.0) * tj.powf(3.0));
        let a2t = jm * tj;
        let v2t = jm * sq(tj);
        let p2t = alpha * ((-1.0 / sq(beta)) * 2.0 * tj + (4.0 / 3.0) * tj.powf(3.0));
        let t = b.end_time + tj;
        let a = (b.end_accel - at) + a2t;
        let v = (b.end_vel - vt) + (b.end_accel - at) * tj + v2t;
        let p = (b.end_pos - pt) + (b.end_vel - vt) * tj + 0.5 * (b.end_accel - at) * sq(tj) + p2t;
        self.add_segment(index, t, SegmentType::NegativeJerk, jm, a, v, p);
    }

    /// Stretches the cruise so the path ends at `target_pos` (ArduPilot
    /// divides by the cruise speed unguarded; a zero speed makes the path
    /// invalid and [`Self::valid`] clears it).
    fn extend_const_vel_to(&mut self, target_pos: f32) {
        let dp = max(0.0, target_pos - self.segment[SEG_DECEL_END].end_pos);
        let t15 = dp / self.segment[SEG_CONST].end_vel;
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
        end_time: f32,
        seg_type: SegmentType,
        jerk_ref: f32,
        end_accel: f32,
        end_vel: f32,
        end_pos: f32,
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

    /// Speed and acceleration limits along the track (`set_kinematic_limits`).
    #[allow(clippy::too_many_arguments)]
    fn set_kinematic_limits(
        &mut self,
        origin: &Vector3<f32>,
        destination: &Vector3<f32>,
        speed_xy: f32,
        speed_up: f32,
        speed_down: f32,
        accel_xy: f32,
        accel_z: f32,
    ) {
        let (speed_xy, speed_up, speed_down) = (speed_xy.abs(), speed_up.abs(), speed_down.abs());
        let (accel_xy, accel_z) = (accel_xy.abs(), accel_z.abs());
        let direction = destination - origin;
        self.vel_max = kinematic_limit(direction, speed_xy, speed_up, speed_down);
        self.accel_max = kinematic_limit(direction, accel_xy, accel_z, accel_z);
        self.accel_z_max = accel_z;
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

/// `calculate_path`'s t4 (constant acceleration time) of solutions 2 and 7,
/// term by term in ArduPilot's order. ArduPilot takes the larger of the
/// quadratic's two roots, (… ± root)/(Am·Jm); with Am and Jm positive, as
/// every call has them, that is always the + root, the one computed here.
fn t4_const_accel(am: f32, jm: f32, tj: f32, v0: f32, vm: f32, l: f32) -> f32 {
    let root = safe_sqrt(
        (am * am * am * am) * (1.0 / 4.0)
            + (jm * jm) * (v0 * v0)
            + (am * am) * (jm * jm) * (tj * tj) * (1.0 / 4.0)
            + am * (jm * jm) * l * 2.0
            - (am * am) * jm * v0
            + (am * am * am) * jm * tj * (1.0 / 2.0)
            - am * (jm * jm) * v0 * tj,
    );
    let plus = ((am * am) * (-3.0 / 2.0) + root - jm * v0 - am * jm * tj * (3.0 / 2.0)) / (am * jm);
    min(-(v0 - vm + am * tj + (am * am) / jm) / am, plus)
}

/// Solution 5's acceleration limit from the speed change. ArduPilot takes
/// the larger of −Jm·(tj ± s)/2; with Jm positive and s a square root that
/// is always the − one, computed here.
fn am_for_speed(jm: f32, tj: f32, v0: f32, vm: f32) -> f32 {
    let s = safe_sqrt((v0 * -4.0 + vm * 4.0 + jm * (tj * tj)) / jm);
    jm * (tj - s) * (-1.0 / 2.0)
}

/// Solution 5's acceleration limit from the half-length (Cardano's root).
fn am_for_length(jm: f32, tj: f32, v0: f32, l: f32) -> f32 {
    let n = (jm * jm) * (tj * tj) * (1.0 / 9.0) - jm * v0 * (2.0 / 3.0);
    let m = -(jm * jm) * l * (1.0 / 2.0) + (jm * jm * jm) * (tj * tj * tj) * (8.0 / 2.7E1)
        - jm * tj * ((jm * jm) * (tj * tj) + jm * v0 * 2.0) * (1.0 / 3.0)
        + (jm * jm) * v0 * tj;
    let q = safe_sqrt(m.powf(2.0) - n.powf(3.0)) + (jm * jm) * l * (1.0 / 2.0)
        - (jm * jm * jm) * (tj * tj * tj) * (8.0 / 2.7E1)
        + jm * tj * ((jm * jm) * (tj * tj) + jm * v0 * 2.0) * (1.0 / 3.0)
        - (jm * jm) * v0 * tj;
    jm * tj * (-2.0 / 3.0) + n / q.powf(1.0 / 3.0) + q.powf(1.0 / 3.0)
}

fn calc_javp_for_segment_const_jerk(
    t: f32,
    j0: f32,
    a0: f32,
    v0: f32,
    p0: f32,
) -> (f32, f32, f32, f32) {
    (
        j0,
        a0 + j0 * t,
        v0 + a0 * t + 0.5 * j0 * (t * t),
        p0 + v0 * t + 0.5 * a0 * (t * t) + (1.0 / 6.0) * j0 * (t * t * t),
    )
}

fn calc_javp_for_segment_incr_jerk(
    t: f32,
    tj: f32,
    jm: f32,
    a0: f32,
    v0: f32,
    p0: f32,
) -> (f32, f32, f32, f32) {
    if !is_positive(tj) {
        return (0.0, a0, v0, p0);
    }
    let alpha = jm * 0.5;
    let beta = M_PI / tj;
    (
        alpha * (1.0 - (beta * t).cos()),
        a0 + alpha * t - (alpha / beta) * (beta * t).sin(),
        v0 + a0 * t + (alpha * 0.5) * (t * t) + (alpha / (beta * beta)) * (beta * t).cos()
            - alpha / (beta * beta),
        p0 + v0 * t
            + 0.5 * a0 * (t * t)
            + (-alpha / (beta * beta)) * t
            + alpha * (t * t * t) / 6.0
            + (alpha / (beta * beta * beta)) * (beta * t).sin(),
    )
}

fn calc_javp_for_segment_decr_jerk(
    t: f32,
    tj: f32,
    jm: f32,
    a0: f32,
    v0: f32,
    p0: f32,
) -> (f32, f32, f32, f32) {
    if !is_positive(tj) {
        return (0.0, a0, v0, p0);
    }
    let alpha = jm * 0.5;
    let beta = M_PI / tj;
    let at = alpha * tj;
    let vt = alpha * ((tj * tj) * 0.5 - 2.0 / (beta * beta));
    let pt = alpha * ((-1.0 / (beta * beta)) * tj + (1.0 / 6.0) * (tj * tj * tj));
    (
        alpha * (1.0 - (beta * (t + tj)).cos()),
        (a0 - at) + alpha * (t + tj) - (alpha / beta) * (beta * (t + tj)).sin(),
        (v0 - vt)
            + (a0 - at) * t
            + 0.5 * alpha * (t + tj) * (t + tj)
            + (alpha / (beta * beta)) * (beta * (t + tj)).cos()
            - alpha / (beta * beta),
        (p0 - pt)
            + (v0 - vt) * t
            + 0.5 * (a0 - at) * (t * t)
            + (-alpha / (beta * beta)) * (t + tj)
            + (alpha / 6.0) * (t + tj) * (t + tj) * (t + tj)
            + (alpha / (beta * beta * beta)) * (beta * (t + tj)).sin(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Rover leg of 20 m: a well-formed plan.
    fn planned() -> SCurve {
        let mut s = SCurve::new();
        s.calculate_track(
            &Vector3::zeros(),
            &Vector3::new(20.0, 0.0, 0.0),
            2.0,
            2.0,
            2.0,
            1.0,
            1.0,
            15.0,
            1.0,
        );
        s
    }

    /// `valid` refuses a plan with any segment not finite, a negative speed,
    /// time or position running backwards, a wrong segment count, or an
    /// acceleration left at the end.
    #[test]
    fn valid_refuses_each_kind_of_broken_plan() {
        let good = planned();
        assert!(good.valid());
        assert!(!good.finished());
        type Corruption = (&'static str, fn(&mut SCurve));
        let broken: [Corruption; 10] = [
            ("segment count", |s| s.num_segs -= 1),
            ("jerk", |s| s.segment[5].jerk_ref = f32::NAN),
            ("time", |s| s.segment[5].end_time = f32::INFINITY),
            ("acceleration", |s| s.segment[5].end_accel = f32::NAN),
            ("speed", |s| s.segment[5].end_vel = f32::NAN),
            ("negative speed", |s| s.segment[5].end_vel = -0.01),
            ("position", |s| s.segment[5].end_pos = f32::NAN),
            ("time backwards", |s| {
                s.segment[6].end_time = s.segment[5].end_time - 0.01;
            }),
            ("position backwards", |s| {
                s.segment[6].end_pos = s.segment[5].end_pos - 0.01;
            }),
            ("final acceleration", |s| {
                s.segment[SEGMENTS_MAX - 1].end_accel = 0.01;
            }),
        ];
        for (what, corrupt) in broken {
            let mut s = good.clone();
            corrupt(&mut s);
            assert!(!s.valid(), "{what}");
        }
        // Equal times and positions (a segment of zero length) are fine, as is
        // a speed of exactly zero.
        let mut s = good.clone();
        s.segment[6].end_time = s.segment[5].end_time;
        s.segment[6].end_pos = s.segment[5].end_pos;
        s.segment[0].end_vel = 0.0;
        assert!(s.valid());
    }
}
