// SPDX-License-Identifier: GPL-3.0-or-later
//
// mavsitl SCurve reference driver.
//
// Drives ArduPilot's own, unmodified SCurve code (libraries/AP_Math/SCurve.cpp
// at commit 90700977c553d2dfd95a305acf1c3e098e4d9477, compiled separately and
// linked in) the way AR_WPNav chains its legs, with perfect tracking, and writes
// one CSV per case in the format described in tests/data/scurve/README.md.
// The speed-change cases additionally call, at the start of a given global tick
// k (before that tick's advance_target_along_track), as AR_WPNav::update_speed_max()
// does:
//     this_leg.set_speed_max(v, v, v);  next_leg.set_speed_max(v, v, v);
// and from then on every calculate_track uses v for speed_xy, speed_up and
// speed_down (AR_WPNav passes its current speed max for all three).
//
// This program is free software: you can redistribute it and/or modify it under
// the terms of the GNU General Public License as published by the Free Software
// Foundation, either version 3 of the License, or (at your option) any later
// version. It is distributed WITHOUT ANY WARRANTY; see <https://www.gnu.org/licenses/>.
//
// Usage: driver OUTDIR [case ...]      (no case: every case)
//        driver --list
//   writes OUTDIR/<case>.csv, prints the cases.txt block of each case on stdout
//   and diagnostics (segment times, phase of each speed change; "TAB|" lines for
//   the README table) on stderr. SCURVE_MAX_CHANGES=n applies only the first n
//   speed changes of a case (used to check that rows before each k are unchanged).

#include <AP_Math/AP_Math.h>
#include <AP_InternalError/AP_InternalError.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <string>
#include <vector>

// Diagnostics only: the driver reads SCurve's private segment table and clock
// to report which phase a speed change lands in. This changes no code in the
// separately compiled, unmodified SCurve.cpp (and not the class layout).
#define private public
#include <AP_Math/SCurve.h>
#undef private

static_assert(sizeof(ftype) == 8, "SITL build: ftype must be double");

#include "program_names.h"

struct SpeedChange {
    int k;      // global tick (CSV row index) at whose start the change is applied
    float v;    // new speed max (m/s), used for xy, up and down
};

struct Case {
    const char *name;
    const char *comment;
    float speed_xy, speed_up, speed_down, accel_xy, accel_z, jerk, snap, wp_radius, accel_corner, dt;
    std::vector<Vector3f> points;   // start, then waypoints
    std::vector<SpeedChange> changes;
    // Entry and exit speeds of the first leg, set right after its
    // calculate_track (before row 0) as AC_WPNav sets them for a leg entered
    // or left at speed: set_origin_speed_max(origin_speed) if origin_speed >= 0,
    // then set_destination_speed_max(dest_speed) if dest_speed >= 0. Left
    // zero-initialised (entry false) by the aggregate initialisers above.
    bool entry;
    float origin_speed, dest_speed;
};

static Case with_entry(Case c, float origin_speed, float dest_speed)
{
    c.entry = true;
    c.origin_speed = origin_speed;
    c.dest_speed = dest_speed;
    return c;
}

// ---- limits ----
static Case rover(const char *name, const char *comment, std::vector<Vector3f> pts, std::vector<SpeedChange> ch = {})
{
    // Rover (AR_WPNav defaults), as rover_box: accel_corner = 0.6f * 9.80665f
    return Case{name, comment, 2, 2, 2, 1, 1, 1, 15, 2, 0.6f * 9.80665f, 0.02f, pts, ch};
}
static Case copter(const char *name, const char *comment, std::vector<Vector3f> pts, std::vector<SpeedChange> ch = {})
{
    // Copter (AC_WPNav defaults in m), as copter_long; snap from calc_scurve_jerk_and_snap()
    const float snap = 5.23598766f;
    return Case{name, comment, 10, 2.5f, 1.5f, 2.5f, 1, 1, snap, 2, 5, 0.0025f, pts, ch};
}

static std::vector<Case> all_cases()
{
    std::vector<Case> c;
    // --- existing cases (for checking the build against tests/data/scurve) ---
    c.push_back(Case{"ardupilot_seed", "", 5, 5, 5, 2, 2, 4, 8, 2, 2, 0.1f,
                     {{0,0,0},{10,10,0},{20,30,0},{30,30,0}}, {}});
    c.push_back(rover("rover_box", "", {{0,0,0},{50,0,0},{50,30,0},{0,30,0},{0,0,0},
                                          {50,0,0},{50,30,0},{0,30,0},{0,0,0},
                                          {50,0,0},{50,30,0},{0,30,0},{0,0,0}}));
    c.push_back(copter("copter_long", "", {{0,0,0},{300,0,20},{300,400,20},{-100,400,60},{0,0,10}}));
    c.push_back(copter("copter_3d", "", {{0,0,0},{5,0,40},{10,0,0},{10,30,10},{40,30,-5},{40,0,30}}));
    {
        Case m = copter("copter_many_corners", "", {{0,0,0}});
        for (int i = 1; i <= 13; i++) {
            m.points.push_back(Vector3f(30.0f * i, (i % 2) ? 20.0f : 0.0f, 0));
        }
        c.push_back(m);
    }
    {
        Case a = rover("near_threshold_below", "", {{0,0,0},{20,0,0},{20,15,0}});
        a.wp_radius = 0.766371727f;
        c.push_back(a);
        a.name = "near_threshold_above";
        a.wp_radius = 0.766371787f;
        c.push_back(a);
        Case b{"near_threshold_dt0.1_below", "", 5, 5, 5, 2, 2, 4, 8, 0.357630879f, 2, 0.1f,
               {{0,0,0},{10,10,0},{20,30,0}}, {}};
        c.push_back(b);
        b.name = "near_threshold_dt0.1_above";
        b.wp_radius = 0.357630908f;
        c.push_back(b);
    }

    // --- speed-change cases ---
    c.push_back(rover("speed_rover_time0",
        "Rover, one 30 m leg: lowered at the leg's time 0, raised while cruising",
        {{0,0,0},{30,0,0}}, {{1, 1.25f}, {1000, 2.5f}}));
    c.push_back(rover("speed_rover_accel_lower",
        "Rover, one 30 m leg: lowered during the first jerk ramp, then below the speed reached during constant acceleration",
        {{0,0,0},{30,0,0}}, {{25, 1.5f}, {70, 0.625f}}));
    c.push_back(rover("speed_rover_accel_raise",
        "Rover, one 40 m leg: raised during constant acceleration, lowered below the speed reached in the last jerk ramp, raised inside the speed-change segments, lowered while decelerating",
        {{0,0,0},{40,0,0}}, {{70, 3}, {135, 1.5f}, {190, 2.5f}, {900, 0.5f}}));
    c.push_back(rover("speed_rover_box",
        "Rover, 50 x 30 m box once round: raised while cruising, lowered during a corner blend, raised on the tick after a promotion, lowered while cruising, raised while decelerating on the last leg",
        {{0,0,0},{50,0,0},{50,30,0},{0,30,0},{0,0,0}},
        {{600, 3}, {1070, 1.5f}, {1103, 2}, {2300, 1}, {5300, 2}}));
    c.push_back(rover("speed_rover_corner_late",
        "Rover, one 90 deg corner: lowered too late in cruise to replan, then raised while decelerating before the blend",
        {{0,0,0},{20,0,0},{20,15,0}}, {{480, 0.5f}, {540, 1}}));
    c.push_back(rover("speed_rover_raise_late",
        "Rover, one 20 m leg: raised in cruise with too little of it left to reach the new speed (about 2 m)",
        {{0,0,0},{20,0,0}}, {{450, 3}}));
    c.push_back(copter("speed_copter_straight",
        "Copter, one 150 m level leg: raised in the first jerk ramp, lowered below the speed reached during constant acceleration, raised inside the speed-change segments, lowered while cruising, raised while decelerating",
        {{0,0,0},{150,0,0}}, {{400, 14}, {1400, 4}, {2600, 8}, {6400, 6}, {9000, 9}}));
    c.push_back(copter("speed_copter_climb",
        "Copter, steep climb then shallow descent: changed at time 0, while cruising and during the corner blend",
        {{0,0,0},{5,0,15},{35,0,0}}, {{1, 2}, {641, 5}, {3000, 1.5f}, {9000, 3}}));
    c.push_back(copter("speed_copter_corners",
        "Copter, three zig-zag legs: lowered in the last jerk ramp, raised during a blend, lowered on the tick after a promotion, raised while decelerating before a blend, raised while cruising on the last leg",
        {{0,0,0},{30,20,0},{60,0,0},{90,20,0}}, {{1500, 6}, {3000, 12}, {3419, 3}, {5000, 4}, {7000, 5}}));

    {
        // Copter limits with a softer vertical acceleration (0.5 m/s²): the
        // corner blend's vertical test (|turn_accel_z| < min accel_z_max)
        // decides with a limit other than 1.
        Case z = copter("copter_3d_soft_z", "", {{0,0,0},{5,0,10},{10,0,0},{10,10,5}});
        z.accel_z = 0.5f;
        c.push_back(z);
    }

    // --- entry and exit speeds (set_origin_speed_max, set_destination_speed_max) ---
    c.push_back(with_entry(rover("entry_rover_origin", "", {{0,0,0},{30,0,0}}), 1, -1));
    c.push_back(with_entry(rover("entry_rover_origin_above_max", "", {{0,0,0},{30,0,0}}), 3, -1));
    // Entered at 0.3 m/s on a 4 m leg: 1.7 m/s to gain, more than Rover's jerk ramps
    // give, so the acceleration from a moving start has a constant part
    // (calculate_path's solution 7 with v0 > 0).
    c.push_back(with_entry(rover("entry_rover_origin_slow", "", {{0,0,0},{4,0,0}}), 0.3f, -1));
    c.push_back(with_entry(rover("entry_rover_destination", "", {{0,0,0},{30,0,0}}), -1, 1));
    c.push_back(with_entry(rover("entry_rover_short_both", "", {{0,0,0},{3,0,0}}), 1.5f, 1));
    c.push_back(with_entry(rover("entry_rover_corner_destination", "", {{0,0,0},{20,0,0},{20,15,0}}), -1, 1));
    c.push_back(with_entry(copter("entry_copter_climb_both", "", {{0,0,0},{5,0,15}}), 2, 1));
    c.push_back(with_entry(copter("entry_copter_long_both", "", {{0,0,0},{150,0,0}}), 6, 4));
    // A 20 m Copter leg peaks near 4.6 m/s within its first 10 m: the
    // acceleration from 2.3 m/s, and the deceleration to it, are planned
    // within half the leg, which limits them.
    c.push_back(with_entry(copter("entry_copter_short_origin", "", {{0,0,0},{20,0,0}}), 2.3f, -1));
    c.push_back(with_entry(copter("entry_copter_short_destination", "", {{0,0,0},{20,0,0}}), -1, 2.3f));
    // A 3 m Copter leg entered at 0.8 m/s: the acceleration to its 1.16
    // m/s peak overshoots half the leg by a rounding step, and is shifted
    // back by it (segment 0 starts at -1.03e-7 s).
    c.push_back(with_entry(copter("entry_copter_3m_origin", "", {{0,0,0},{3,0,0}}), 0.8f, -1));
    // Entered at 1.05 m/s, 0.15 m/s under the 3 m leg's peak: less than
    // 2·jerk·tj² to gain, so calculate_path lowers the jerk to fit it.
    c.push_back(with_entry(copter("entry_copter_3m_near_peak", "", {{0,0,0},{3,0,0}}), 1.05f, -1));
    return c;
}

static void print_segments(const char *tag, const SCurve &s)
{
    fprintf(stderr, "    %s: num_segs %u time %.9g vel_max %.9g accel_max %.9g\n", tag, s.num_segs, s.time, s.vel_max, s.accel_max);
    if (s.num_segs != SCurve::segments_max) {
        return;
    }
    fprintf(stderr, "      end_time:");
    for (int i = 0; i < SCurve::segments_max; i++) {
        fprintf(stderr, " %d:%.9g", i, s.segment[i].end_time);
    }
    fprintf(stderr, "\n      end_vel: ");
    for (int i = 0; i < SCurve::segments_max; i++) {
        fprintf(stderr, " %d:%.6g", i, s.segment[i].end_vel);
    }
    fprintf(stderr, "\n");
}

// segment active at time t as get_jerk_accel_vel_pos_at_time() finds it
static int active_segment(const SCurve &s, float t)
{
    if (s.num_segs != SCurve::segments_max) {
        return -1;
    }
    int pnt = s.num_segs;
    for (int i = 0; i < s.num_segs; i++) {
        if (t < s.segment[s.num_segs - 1 - i].end_time) {
            pnt = s.num_segs - 1 - i;
        }
    }
    return pnt;
}

// the segment indexes whose entries differ (float ==, so -0 == 0), e.g. "8-14,16-22"
static std::string changed_segments(const SCurve &a, const SCurve &b)
{
    std::string out;
    int run_start = -1;
    for (int i = 0; i <= SCurve::segments_max; i++) {
        bool diff = false;
        if (i < SCurve::segments_max) {
            const auto &x = a.segment[i];
            const auto &y = b.segment[i];
            diff = x.end_time != y.end_time || x.end_vel != y.end_vel || x.end_pos != y.end_pos ||
                   x.end_accel != y.end_accel || x.jerk_ref != y.jerk_ref || x.seg_type != y.seg_type;
        }
        if (diff && run_start < 0) {
            run_start = i;
        } else if (!diff && run_start >= 0) {
            if (!out.empty()) out += ",";
            out += std::to_string(run_start);
            if (i - 1 > run_start) out += "-" + std::to_string(i - 1);
            run_start = -1;
        }
    }
    return out.empty() ? "none" : out;
}

// true if the two curves have the same segment table (float ==, so -0 == 0)
static bool same_profile(const SCurve &a, const SCurve &b)
{
    if (a.num_segs != b.num_segs) {
        return false;
    }
    for (int i = 0; i < a.num_segs; i++) {
        const auto &x = a.segment[i];
        const auto &y = b.segment[i];
        if (x.end_time != y.end_time || x.end_vel != y.end_vel || x.end_pos != y.end_pos ||
            x.end_accel != y.end_accel || x.jerk_ref != y.jerk_ref || x.seg_type != y.seg_type) {
            return false;
        }
    }
    return true;
}

static const char *phase_name(const SCurve &s, float t)
{
    const int p = active_segment(s, t);
    if (p < 0) return "zero-length";
    if (t <= 0.0f) return "time 0 (not started)";
    if (p == 0) return "seg 0 (initial)";
    if (p <= 3) return "accel: jerk ramp up (seg 1-3)";
    if (p == 4) return "accel: constant acceleration (seg 4)";
    if (p <= 7) return "accel: jerk ramp down (seg 5-7)";
    if (p <= 14) return "speed-change segments (seg 8-14)";
    if (p == 15) return "cruise (seg 15)";
    if (p <= 22) return "deceleration (seg 16-22)";
    return "finished (past seg 22)";
}

struct Chain {
    const Case &c;
    float speed_xy, speed_up, speed_down;
    SCurve prev, cur, next;
    Vector3f origin, destination;
    bool fast_waypoint = false;

    explicit Chain(const Case &cs) : c(cs), speed_xy(cs.speed_xy), speed_up(cs.speed_up), speed_down(cs.speed_down)
    {
        prev.init();
        cur.init();
        next.init();
        origin = destination = cs.points[0];
    }

    void track(SCurve &s, const Vector3f &o, const Vector3f &d)
    {
        s.calculate_track(o, d, speed_xy, speed_up, speed_down, c.accel_xy, c.accel_z, c.snap, c.jerk);
    }

    // AR_WPNav::set_desired_location(): heads for waypoint leg + 1
    void set_destination(size_t leg)
    {
        prev = cur;
        origin = destination;
        destination = c.points[leg + 1];
        if (fast_waypoint && !next.finished()) {
            cur = next;
        } else {
            track(cur, origin, destination);
        }
        next.init();
        fast_waypoint = false;
        if (leg + 2 < c.points.size()) {
            track(next, destination, c.points[leg + 2]);
            fast_waypoint = true;
        }
    }
};

static bool run_case(const Case &c, const char *outdir)
{
    const std::string path = std::string(outdir) + "/" + c.name + ".csv";
    FILE *f = fopen(path.c_str(), "w");
    if (f == nullptr) {
        perror(path.c_str());
        return false;
    }
    const uint32_t errors_before = AP::internalerror().count();
    fprintf(f, "t,pos_x,pos_y,pos_z,vel_x,vel_y,vel_z,acc_x,acc_y,acc_z,leg,fast_waypoint,finished,leg_time\n");

    Chain ch(c);
    const size_t legs = c.points.size() - 1;
    size_t leg = 0;
    ch.set_destination(leg);
    if (c.entry) {
        if (c.origin_speed >= 0) {
            const float used = ch.cur.set_origin_speed_max(c.origin_speed);
            fprintf(stderr, "  set_origin_speed_max(%.9g) -> %.9g\n", c.origin_speed, used);
        }
        if (c.dest_speed >= 0) {
            ch.cur.set_destination_speed_max(c.dest_speed);
            fprintf(stderr, "  set_destination_speed_max(%.9g)\n", c.dest_speed);
        }
    }
    fprintf(stderr, "[%s]\n  leg 0 at start:\n", c.name);
    print_segments("this_leg", ch.cur);
    print_segments("next_leg", ch.next);

    // row 0: the state before the first call
    fprintf(f, "%.4f,0,0,0,0,0,0,0,0,0,%u,%d,0,%.9g\n", 0.0, 0u, ch.fast_waypoint ? 1 : 0, ch.cur.time);

    std::vector<long> finish_ticks;
    long end_tick = -1;
    const long tail = lrint(1.0 / c.dt);
    size_t next_change = 0;
    // check aid: SCURVE_MAX_CHANGES=n applies only the first n speed changes
    size_t n_changes = c.changes.size();
    if (getenv("SCURVE_MAX_CHANGES") != nullptr) {
        n_changes = MIN(n_changes, (size_t)atoi(getenv("SCURVE_MAX_CHANGES")));
    }
    for (long n = 1; end_tick < 0 || n <= end_tick; n++) {
        // speed change at the start of tick n (AR_WPNav::update_speed_max() runs
        // in update() before advance_wp_target_along_track())
        while (next_change < n_changes && c.changes[next_change].k == n) {
            const float v = c.changes[next_change].v;
            fprintf(stderr, "  change k=%ld v=%.9g (leg %zu):\n", n, v, leg);
            fprintf(stderr, "    this_leg clock %.9g -> %s\n", ch.cur.time, phase_name(ch.cur, ch.cur.time));
            fprintf(stderr, "    next_leg clock %.9g -> %s\n", ch.next.time, phase_name(ch.next, ch.next.time));
            float J0, A0, V0, P0, J1, A1, V1, P1;
            ch.cur.get_jerk_accel_vel_pos_at_time(ch.cur.time, J0, A0, V0, P0);
            print_segments("this_leg before", ch.cur);
            const float vm_before = ch.cur.vel_max;
            const int seg_before = active_segment(ch.cur, ch.cur.time);
            const char *phase_this = phase_name(ch.cur, ch.cur.time);
            const char *phase_next = phase_name(ch.next, ch.next.time);
            const float seg_t0 = (seg_before > 0 && seg_before < 23) ? ch.cur.segment[seg_before - 1].end_time : 0.0f;
            const float seg_t1 = (seg_before >= 0 && seg_before < 23) ? ch.cur.segment[seg_before].end_time : 0.0f;
            const SCurve this_before = ch.cur;
            const uint32_t e0 = AP::internalerror().count();
            ch.cur.set_speed_max(v, v, v);
            const uint32_t e1 = AP::internalerror().count();
            print_segments("this_leg after ", ch.cur);
            ch.cur.get_jerk_accel_vel_pos_at_time(ch.cur.time, J1, A1, V1, P1);
            fprintf(stderr, "    this_leg state at clock: P %.9g->%.9g V %.9g->%.9g A %.9g->%.9g J %.9g->%.9g%s\n",
                    P0, P1, V0, V1, A0, A1, J0, J1,
                    (P0 != P1 || V0 != V1 || A0 != A1) ? "  ** DISCONTINUITY **" : "");
            fprintf(stderr, "SUM %s k=%ld v=%.9g leg=%zu | this clock %.6g [%s] speed %.6g vel_max %.6g->%.6g seg[%d] %.6g..%.6g time_end %.6g | next clock %.6g [%s] vel_max %.6g",
                    c.name, n, v, leg, ch.cur.time, phase_this, V0, vm_before, ch.cur.vel_max,
                    seg_before, seg_before > 0 && seg_before < 23 ? seg_t0 : 0.0f, seg_before >= 0 && seg_before < 23 ? seg_t1 : 0.0f,
                    ch.cur.time_end(), ch.next.time, phase_next, ch.next.vel_max);
            const int nseg = active_segment(ch.next, ch.next.time);
            float nJ0, nA0, nV0, nP0, nJ1, nA1, nV1, nP1;
            ch.next.get_jerk_accel_vel_pos_at_time(ch.next.time, nJ0, nA0, nV0, nP0);
            SCurve next_before = ch.next;
            ch.next.set_speed_max(v, v, v);
            ch.next.get_jerk_accel_vel_pos_at_time(ch.next.time, nJ1, nA1, nV1, nP1);
            fprintf(stderr, " seg[%d] %.6g..%.6g speed %.6g -> vel_max %.6g time_end %.6g | replanned this %s next %s%s\n", nseg,
                    (nseg > 0 && nseg < 23) ? ch.next.segment[nseg - 1].end_time : 0.0f,
                    (nseg >= 0 && nseg < 23) ? ch.next.segment[nseg].end_time : 0.0f,
                    nV0, ch.next.vel_max, ch.next.time_end(),
                    same_profile(this_before, ch.cur) ? "no" : "yes",
                    same_profile(next_before, ch.next) ? "no" : "yes",
                    (nP0 != nP1 || nV0 != nV1 || nA0 != nA1) ? "  ** next DISCONTINUITY **" : "");
            print_segments("next_leg before", next_before);
            // one table row for README_section.md (this leg's times before the change)
            {
                const SCurve &b = this_before;
                const bool z = b.num_segs != SCurve::segments_max;
                fprintf(stderr, "TAB|%s|%ld|%.9g|%zu|%.6g|%s|%d|%.6g|%.6g|%.6g|%.6g|%.6g|%.6g|%.6g|%.6g|%.6g|%s|%.6g|%s|%.6g|%.6g|%s|%s|%s\n",
                        c.name, n, v, leg, b.time, phase_this, seg_before, V0,
                        z ? 0.0f : b.segment[3].end_time, z ? 0.0f : b.segment[4].end_time,
                        z ? 0.0f : b.segment[7].end_time, z ? 0.0f : b.segment[14].end_time,
                        z ? 0.0f : b.segment[15].end_time, z ? 0.0f : b.segment[22].end_time,
                        vm_before, ch.cur.vel_max, same_profile(this_before, ch.cur) ? "no" : "yes",
                        next_before.time, phase_next, next_before.vel_max, ch.next.vel_max,
                        same_profile(next_before, ch.next) ? "no" : "yes",
                        changed_segments(this_before, ch.cur).c_str(), changed_segments(next_before, ch.next).c_str());
            }
            print_segments("next_leg after ", ch.next);
            const uint32_t e2 = AP::internalerror().count();
            if (e1 != e0 || e2 != e1) {
                fprintf(stderr, "    ** INTERNAL_ERROR raised (this %u, next %u)\n", e1 - e0, e2 - e1);
            }
            ch.speed_xy = ch.speed_up = ch.speed_down = v;
            next_change++;
        }

        Vector3f pos = ch.origin;
        Vector3f vel, acc;
        const bool fast = ch.fast_waypoint;
        const float next_clock_before = ch.next.time;
        const bool finished = ch.cur.advance_target_along_track(ch.prev, ch.next, c.wp_radius, c.accel_corner,
                                                                fast, c.dt, pos, vel, acc);
        if (next_clock_before == 0.0f && ch.next.time != 0.0f) {
            fprintf(stderr, "  leg %zu: blend starts tick %ld (t %.4f), leg clock %.9g, time_decel_start %.9g\n",
                    leg, n, n * (double)c.dt, ch.cur.time, ch.cur.time_decel_start());
        }
        fprintf(f, "%.4f,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%zu,%d,%d,%.9g\n",
                n * (double)c.dt,
                pos.x, pos.y, pos.z, vel.x, vel.y, vel.z, acc.x, acc.y, acc.z,
                leg, fast ? 1 : 0, finished ? 1 : 0, ch.cur.time);
        if (finished && finish_ticks.size() == leg) {
            finish_ticks.push_back(n);
            fprintf(stderr, "  leg %zu finishes tick %ld (t %.4f), time_end %.9g\n", leg, n, n * (double)c.dt, ch.cur.time_end());
            if (leg + 1 < legs) {
                leg++;
                ch.set_destination(leg);
                fprintf(stderr, "  leg %zu promoted (from tick %ld):\n", leg, n + 1);
                print_segments("this_leg", ch.cur);
                print_segments("next_leg", ch.next);
            } else {
                end_tick = n + tail;
            }
        }
        if (n > 10000000) {
            fprintf(stderr, "%s: did not finish\n", c.name);
            fclose(f);
            return false;
        }
    }
    fclose(f);
    if (next_change != n_changes) {
        fprintf(stderr, "** %s: %zu speed changes not applied (k past the end)\n", c.name, n_changes - next_change);
    }
    const uint32_t errors = AP::internalerror().count() - errors_before;
    fprintf(stderr, "  %s: %ld rows + header, internal errors %u\n", c.name, end_tick + 1, errors);

    // cases.txt block
    printf("[%s]\n", c.name);
    printf("params: speed_xy=%.9g speed_up=%.9g speed_down=%.9g accel_xy=%.9g accel_z=%.9g jerk=%.9g snap=%.9g wp_radius=%.9g accel_corner=%.9g dt=%.9g\n",
           c.speed_xy, c.speed_up, c.speed_down, c.accel_xy, c.accel_z, c.jerk, c.snap, c.wp_radius, c.accel_corner, c.dt);
    if (!c.changes.empty()) {
        printf("speed_changes:");
        for (const SpeedChange &s : c.changes) {
            printf(" %d=%.9g", s.k, s.v);
        }
        printf("\n");
    }
    if (c.entry) {
        printf("entry_speeds:");
        if (c.origin_speed >= 0) {
            printf(" origin=%.9g", c.origin_speed);
        }
        if (c.dest_speed >= 0) {
            printf(" destination=%.9g", c.dest_speed);
        }
        printf("\n");
    }
    printf("points:");
    for (const Vector3f &p : c.points) {
        printf(" (%.9g,%.9g,%.9g)", p.x, p.y, p.z);
    }
    printf("\n");
    printf("\n");
    return errors == 0;
}

int main(int argc, char **argv)
{
    const std::vector<Case> cases = all_cases();
    if (argc >= 2 && strcmp(argv[1], "--list") == 0) {
        for (const Case &c : cases) {
            printf("%s\n", c.name);
        }
        return 0;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: %s OUTDIR [case ...] | --list\n", argv[0]);
        return 2;
    }
    bool ok = true;
    for (const Case &c : cases) {
        bool wanted = argc == 2;
        for (int i = 2; i < argc; i++) {
            wanted = wanted || strcmp(argv[i], c.name) == 0;
        }
        if (wanted) {
            ok = run_case(c, argv[1]) && ok;
        }
    }
    return ok ? 0 : 1;
}
