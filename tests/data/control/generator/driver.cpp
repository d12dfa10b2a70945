// SPDX-License-Identifier: GPL-3.0-or-later
//
// driver.cpp — mavsitl reference-data driver for ArduPilot's
// libraries/AP_Math/control.cpp (Leonard Hall's jerk-limited shaping
// functions), compiled unmodified at ArduPilot commit
// 90700977c553d2dfd95a305acf1c3e098e4d9477 for the SITL board.
//
// This program is our own code. It calls each control.cpp function for a
// deterministic list of inputs (hand-picked edge cases, then pseudo-random
// cases from a fixed LCG, then multi-step sequences) and writes one CSV per
// function into the directory given as argv[1] (default "out").
//
// Number formats: float with %.9g, double with %.17g (both round-trip
// exactly), bool as 0/1. The column `ierr` is the number of INTERNAL_ERROR()s
// the call raised (the stand-in AP_InternalError records them and returns, as
// the real one does in a non-debug SITL build).
//
// NOTE: this file is compiled with -fsingle-precision-constant like the
// ArduPilot files, so every floating literal below is a float. Doubles that
// are not floats are produced only by the LCG or by atof().
//
// This program is free software: you can redistribute it and/or modify it
// under the terms of the GNU General Public License as published by the Free
// Software Foundation, either version 3 of the License, or (at your option)
// any later version.

#include <AP_Math/AP_Math.h>
#include <AP_Math/control.h>
#include <AP_InternalError/AP_InternalError.h>

#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <math.h>
#include <float.h>
#include <string>

static_assert(sizeof(ftype) == 8, "SITL build: ftype must be double");
static_assert(sizeof(postype_t) == 8, "SITL build: postype_t must be double");
static_assert(sizeof(Vector2p) == 16, "SITL build: Vector2p must be Vector2d");

// ---------------------------------------------------------------------------
// Stand-in definitions the ArduPilot files link against.

static AP_InternalError g_internal_error;
AP_InternalError &AP::internalerror() { return g_internal_error; }

void AP_HAL::panic(const char *errormsg, ...)
{
    va_list ap;
    va_start(ap, errormsg);
    vfprintf(stderr, errormsg, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    abort();
}

// ---------------------------------------------------------------------------
// The LCG (Knuth's MMIX constants), 64-bit state, wrapping arithmetic:
//   state = state * 6364136223846793005 + 1442695040888963407   (mod 2^64)
// Each draw advances the state once and uses the new state:
//   u      = (state >> 11) * 2^-53                  uniform double in [0, 1)
//   rnd(lo, hi)  = (float)(lo + (hi - lo) * u)      (lo, hi, u as double)
//   rndd(lo, hi) = lo + (hi - lo) * u               (double)
//   pick(n)      = (state >> 33) % n                integer in [0, n)
// Every CSV's random block starts by seeding the state with its own seed
// (listed in README.md).

//
// The draw functions are noinline: g++ 12.2 at -O2 (whose default
// -ftree-vectorize includes SLP) was seen to vectorise two inlined
// `pin - (double)rnd(...)` computations and drop the rounding to float inside
// rnd() (see README.md). Keeping the draws out of line avoids that; the
// -O0 build of this driver gives byte-identical CSVs.

#define NOINLINE __attribute__((noinline))
static uint64_t lcg_state;
static void lcg_seed(uint64_t s) { lcg_state = s; }
static NOINLINE uint64_t lcg_next()
{
    lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return lcg_state;
}
static NOINLINE double lcg_u() { return (double)(lcg_next() >> 11) * ldexp(1.0, -53); }
static NOINLINE float rnd(double lo, double hi) { return (float)(lo + (hi - lo) * lcg_u()); }
static NOINLINE double rndd(double lo, double hi) { return lo + (hi - lo) * lcg_u(); }
static NOINLINE unsigned pick(unsigned n) { return (unsigned)((lcg_next() >> 33) % n); }
static const float DTS[3] = {0.0025f, 0.02f, 0.1f};
static float rnd_dt() { return DTS[pick(3)]; }
static bool rnd_bool() { return pick(2) == 1; }

// ---------------------------------------------------------------------------
// CSV output helpers.

static FILE *out;
static std::string row;

static void open_csv(const char *dir, const char *name, const char *header)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    out = fopen(path, "w");
    if (out == nullptr) {
        perror(path);
        exit(1);
    }
    fprintf(out, "%s\n", header);
}
static void close_csv() { fclose(out); out = nullptr; }

static void app(const char *fmt, ...)
{
    char buf[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (!row.empty()) {
        row += ',';
    }
    row += buf;
}
static void S(const char *s) { app("%s", s); }
static void F(float v) { app("%.9g", (double)v); }
static void D(double v) { app("%.17g", v); }
static void B(bool v) { app("%d", v ? 1 : 0); }
static void I(long v) { app("%ld", v); }
static void V2(const Vector2f &v) { F(v.x); F(v.y); }
static void V2p(const Vector2p &v) { D(v.x); D(v.y); }
static void end_row() { fprintf(out, "%s\n", row.c_str()); row.clear(); }

static uint32_t ierr_before;
static void ierr_mark() { ierr_before = AP::internalerror().count(); }
static long ierr_count() { return (long)(AP::internalerror().count() - ierr_before); }

static const float EPS = FLT_EPSILON;
static float up(float x) { return nextafterf(x, INFINITY); }
static float down(float x) { return nextafterf(x, -INFINITY); }

// Case label: "h<n>_<tag>" for hand-picked cases, "r<n>" for random ones.
static char label[64];
static int case_no;
static const char *hl(const char *tag) { snprintf(label, sizeof(label), "h%02d_%s", case_no++, tag); return label; }
static const char *rl() { snprintf(label, sizeof(label), "r%02d", case_no++); return label; }

// ===========================================================================
// sqrt_controller (float)

static void do_sqrt_controller(const char *tag, float error, float p, float lim, float dt)
{
    const float r = sqrt_controller(error, p, lim, dt);
    S(tag); F(error); F(p); F(lim); F(dt); F(r); end_row();
}

static void gen_sqrt_controller(const char *dir)
{
    open_csv(dir, "sqrt_controller.csv", "case,error,p,second_ord_lim,dt,out");
    case_no = 0;
    // zero error
    do_sqrt_controller(hl("zero"), 0, 1, 1, 0);
    do_sqrt_controller(hl("negzero_dt"), -0.0f, 1, 1, 0.02f);
    do_sqrt_controller(hl("zero_dt"), 0, 2, 4, 0.1f);
    // second_ord_lim <= 0 or is_zero: linear
    do_sqrt_controller(hl("lim0"), 1, 2, 0, 0);
    do_sqrt_controller(hl("lim_neg"), -3, 2, -1, 0);
    do_sqrt_controller(hl("lim_halfeps"), 5, 2, 0.5f * EPS, 0);
    do_sqrt_controller(hl("lim_negeps"), 5, 2, -EPS, 0);
    do_sqrt_controller(hl("lim_eps"), 5, 2, EPS, 0);
    do_sqrt_controller(hl("lim_below_eps"), 5, 2, down(EPS), 0);
    do_sqrt_controller(hl("lim0_big"), 40, 3, 0, 0.02f);
    // p zero: pure square root
    do_sqrt_controller(hl("p0_pos"), 4, 0, 2, 0);
    do_sqrt_controller(hl("p0_neg"), -4, 0, 2, 0);
    do_sqrt_controller(hl("p0_err_halfeps"), 0.5f * EPS, 0, 2, 0);
    do_sqrt_controller(hl("p0_err_neghalfeps"), -0.5f * EPS, 0, 2, 0);
    do_sqrt_controller(hl("p0_err_eps"), EPS, 0, 2, 0);
    do_sqrt_controller(hl("p0_err_negeps"), -EPS, 0, 2, 0);
    do_sqrt_controller(hl("p_halfeps"), 4, 0.5f * EPS, 2, 0);
    do_sqrt_controller(hl("p_negtiny"), -4, -0.5f * EPS, 2, 0);
    do_sqrt_controller(hl("p0_zero_err"), 0, 0, 2, 0.1f);
    // hybrid: linear_dist = lim/p^2 boundaries
    do_sqrt_controller(hl("ld1_at"), 1, 2, 4, 0);
    do_sqrt_controller(hl("ld1_above"), up(1), 2, 4, 0);
    do_sqrt_controller(hl("ld1_below"), down(1), 2, 4, 0);
    do_sqrt_controller(hl("ld1_neg_at"), -1, 2, 4, 0);
    do_sqrt_controller(hl("ld1_neg_beyond"), down(-1), 2, 4, 0);
    do_sqrt_controller(hl("ld1_neg_inside"), up(-1), 2, 4, 0);
    {
        const float ld = 5.0f / (3.0f * 3.0f);
        do_sqrt_controller(hl("ld59_at"), ld, 3, 5, 0);
        do_sqrt_controller(hl("ld59_above"), up(ld), 3, 5, 0);
        do_sqrt_controller(hl("ld59_neg_at"), -ld, 3, 5, 0);
        do_sqrt_controller(hl("ld59_neg_beyond"), down(-ld), 3, 5, 0);
    }
    do_sqrt_controller(hl("sqrt_pos"), 3, 2, 4, 0);
    do_sqrt_controller(hl("sqrt_neg"), -3, 2, 4, 0);
    do_sqrt_controller(hl("p_negative"), 3, -2, 4, 0);
    do_sqrt_controller(hl("p_negative_lin"), 0.5f, -2, 4, 0);
    // dt clamp |error|/dt
    do_sqrt_controller(hl("clamp_pos"), 0.01f, 100, 0, 0.1f);
    do_sqrt_controller(hl("clamp_neg"), -0.01f, 100, 0, 0.1f);
    do_sqrt_controller(hl("clamp_sqrt"), 0.01f, 100, 1000, 0.1f);
    do_sqrt_controller(hl("noclamp"), 0.01f, 1, 1, 0.1f);
    do_sqrt_controller(hl("dt_halfeps"), 0.01f, 100, 0, 0.5f * EPS);
    do_sqrt_controller(hl("dt_eps"), 0.01f, 100, 0, EPS);
    do_sqrt_controller(hl("dt_neg"), 0.01f, 100, 0, -0.1f);
    do_sqrt_controller(hl("big_pos"), 1000, 1, 2, 0.0025f);
    do_sqrt_controller(hl("big_neg"), -1000, 1, 2, 0.02f);
    do_sqrt_controller(hl("p0_clamp"), 0.001f, 0, 50, 0.1f);
    // random
    lcg_seed(1);
    for (int i = 0; i < 24; i++) {
        const float e = rnd(-50, 50), p = rnd(0.1, 5), lim = rnd(0.1, 6), dt = rnd_dt();
        do_sqrt_controller(rl(), e, p, lim, dt);
    }
    for (int i = 0; i < 16; i++) {
        const float e = rnd(-1, 1), p = rnd(0.1, 5), lim = rnd(0.1, 6), dt = rnd_dt();
        do_sqrt_controller(rl(), e, p, lim, dt);
    }
    for (int i = 0; i < 8; i++) {
        const float e = rnd(-0.05, 0.05), p = rnd(0.5, 20), lim = rnd(0.1, 6), dt = rnd_dt();
        do_sqrt_controller(rl(), e, p, lim, dt);
    }
    close_csv();
}

// ===========================================================================
// sqrt_controller (Vector2f)

static void do_sqrt_controller_xy(const char *tag, Vector2f error, float p, float lim, float dt)
{
    const Vector2f r = sqrt_controller(error, p, lim, dt);
    S(tag); V2(error); F(p); F(lim); F(dt); V2(r); end_row();
}

static void gen_sqrt_controller_xy(const char *dir)
{
    open_csv(dir, "sqrt_controller_xy.csv", "case,error_x,error_y,p,second_ord_lim,dt,out_x,out_y");
    case_no = 0;
    do_sqrt_controller_xy(hl("zero"), Vector2f(0, 0), 1, 1, 0);
    do_sqrt_controller_xy(hl("len_halfeps"), Vector2f(0.5f * EPS, 0), 1, 1, 0);
    do_sqrt_controller_xy(hl("len_eps"), Vector2f(0, EPS), 1, 1, 0);
    do_sqrt_controller_xy(hl("len_eps_neg"), Vector2f(-EPS, 0), 2, 4, 0.1f);
    do_sqrt_controller_xy(hl("tiny_diag"), Vector2f(1e-7f, 1e-7f), 1, 1, 0);
    do_sqrt_controller_xy(hl("x_lin"), Vector2f(0.5f, 0), 2, 4, 0);
    do_sqrt_controller_xy(hl("x_sqrt"), Vector2f(3, 0), 2, 4, 0);
    do_sqrt_controller_xy(hl("neg_y_sqrt"), Vector2f(0, -3), 2, 4, 0);
    do_sqrt_controller_xy(hl("34_sqrt"), Vector2f(3, 4), 2, 4, 0);
    do_sqrt_controller_xy(hl("34_lin_boundary"), Vector2f(0.6f, 0.8f), 2, 4, 0);
    do_sqrt_controller_xy(hl("m34"), Vector2f(-3, -4), 1, 2, 0.02f);
    do_sqrt_controller_xy(hl("lim0"), Vector2f(3, 4), 2, 0, 0);
    do_sqrt_controller_xy(hl("lim_neg"), Vector2f(3, -4), 2, -1, 0);
    do_sqrt_controller_xy(hl("p0"), Vector2f(3, 4), 0, 2, 0);
    do_sqrt_controller_xy(hl("p0_dt"), Vector2f(-3, 4), 0, 2, 0.1f);
    do_sqrt_controller_xy(hl("clamp"), Vector2f(0.006f, 0.008f), 100, 0, 0.1f);
    do_sqrt_controller_xy(hl("clamp_sqrt"), Vector2f(-0.006f, 0.008f), 100, 1000, 0.1f);
    do_sqrt_controller_xy(hl("dt_neg"), Vector2f(0.006f, 0.008f), 100, 0, -0.1f);
    do_sqrt_controller_xy(hl("big"), Vector2f(700, -300), 1, 2.5f, 0.0025f);
    do_sqrt_controller_xy(hl("one_component_tiny"), Vector2f(5, 1e-9f), 1, 2, 0.02f);
    lcg_seed(2);
    for (int i = 0; i < 24; i++) {
        const Vector2f e{rnd(-50, 50), rnd(-50, 50)};
        const float p = rnd(0.1, 5), lim = rnd(0.1, 6), dt = rnd_dt();
        do_sqrt_controller_xy(rl(), e, p, lim, dt);
    }
    for (int i = 0; i < 16; i++) {
        const Vector2f e{rnd(-1, 1), rnd(-1, 1)};
        const float p = rnd(0.1, 5), lim = rnd(0.1, 6), dt = rnd_dt();
        do_sqrt_controller_xy(rl(), e, p, lim, dt);
    }
    close_csv();
}

// ===========================================================================
// inv_sqrt_controller and stopping_distance

static void do_inv(const char *tag, float output, float p, float dmax)
{
    const float r = inv_sqrt_controller(output, p, dmax);
    S(tag); F(output); F(p); F(dmax); F(r); end_row();
}

static void do_stop(const char *tag, float vel, float p, float amax)
{
    const float r = stopping_distance(vel, p, amax);
    S(tag); F(vel); F(p); F(amax); F(r); end_row();
}

static void gen_inv(const char *dir)
{
    open_csv(dir, "inv_sqrt_controller.csv", "case,output,p,d_max,out");
    case_no = 0;
    do_inv(hl("p0"), 2, 0, 4);
    do_inv(hl("p0_neg"), -2, 0, 4);
    do_inv(hl("p_halfeps"), 2, 0.5f * EPS, 4);
    do_inv(hl("p0_dmax_eps"), 2, 0, EPS);
    do_inv(hl("dmax0"), 3, 2, 0);
    do_inv(hl("dmax_neg"), 3, 2, -1);
    do_inv(hl("dmax_halfeps"), 3, 2, 0.5f * EPS);
    do_inv(hl("both0"), 3, 0, 0);
    do_inv(hl("both0_dneg"), 3, 0, -1);
    do_inv(hl("both_tiny"), 3, 0.5f * EPS, -0.5f * EPS);
    do_inv(hl("lin"), 1.9f, 2, 4);
    do_inv(hl("lin_below_lv"), down(2), 2, 4);
    do_inv(hl("at_lv"), 2, 2, 4);
    do_inv(hl("neg_at_lv"), -2, 2, 4);
    do_inv(hl("neg_lin"), -1.5f, 2, 4);
    do_inv(hl("zero"), 0, 2, 4);
    do_inv(hl("negzero"), -0.0f, 2, 4);
    do_inv(hl("sqrt"), 5, 2, 4);
    do_inv(hl("sqrt_neg"), -5, 2, 4);
    do_inv(hl("p_neg"), 1, -2, 4);
    do_inv(hl("p_neg_negout"), -1, -2, 4);
    do_inv(hl("out_tiny_sqrt"), 0.5f * EPS, 1e6f, 1e-6f);
    do_inv(hl("lv_frac"), 1.5f, 3, 5);
    do_inv(hl("lv_frac_at"), 5.0f / 3.0f, 3, 5);
    do_inv(hl("lv_frac_above"), up(5.0f / 3.0f), 3, 5);
    lcg_seed(3);
    for (int i = 0; i < 24; i++) {
        const float o = rnd(-15, 15), p = rnd(0.1, 5), dmax = rnd(0.1, 6);
        do_inv(rl(), o, p, dmax);
    }
    for (int i = 0; i < 16; i++) {
        // outputs of sqrt_controller for random errors (round-trip cases)
        const float e = rnd(-50, 50), p = rnd(0.1, 5), dmax = rnd(0.1, 6);
        do_inv(rl(), sqrt_controller(e, p, dmax, 0), p, dmax);
    }
    close_csv();

    open_csv(dir, "stopping_distance.csv", "case,velocity,p,accel_max,out");
    case_no = 0;
    do_stop(hl("zero"), 0, 1, 2);
    do_stop(hl("lin"), 0.5f, 1, 2);
    do_stop(hl("at_lv"), 2, 1, 2);
    do_stop(hl("sqrt"), 10, 1, 2);
    do_stop(hl("sqrt_neg"), -10, 1, 2);
    do_stop(hl("p0"), 5, 0, 2.5f);
    do_stop(hl("p0_neg"), -5, 0, 2.5f);
    do_stop(hl("amax0"), 5, 0.5f, 0);
    do_stop(hl("amax_neg"), -5, 0.5f, -1);
    do_stop(hl("both0"), 5, 0, 0);
    do_stop(hl("copter_like"), 10, 1, 2.5f);
    do_stop(hl("rover_like"), 2, 0.2f, 1);
    lcg_seed(4);
    for (int i = 0; i < 36; i++) {
        const float v = rnd(-15, 15), p = rnd(0.1, 5), amax = rnd(0.1, 6);
        do_stop(rl(), v, p, amax);
    }
    close_csv();
}

// ===========================================================================
// kinematic_limit

static void do_kin(const char *tag, Vector3f dir, float mxy, float mzp, float mzn)
{
    const float r = kinematic_limit(dir, mxy, mzp, mzn);
    S(tag); F(dir.x); F(dir.y); F(dir.z); F(mxy); F(mzp); F(mzn); F(r); end_row();
}

static void gen_kin(const char *dir)
{
    open_csv(dir, "kinematic_limit.csv", "case,dir_x,dir_y,dir_z,max_xy,max_z_pos,max_z_neg,out");
    case_no = 0;
    do_kin(hl("dir0"), Vector3f(0, 0, 0), 5, 2, 1);
    do_kin(hl("dir_lensq_below_eps"), Vector3f(1e-4f, 0, 0), 5, 2, 1);
    do_kin(hl("dir_lensq_above_eps"), Vector3f(4e-4f, 0, 0), 5, 2, 1);
    do_kin(hl("mxy0"), Vector3f(1, 0, 0), 0, 2, 1);
    do_kin(hl("mzp0"), Vector3f(1, 0, 0), 5, 0, 1);
    do_kin(hl("mzn0"), Vector3f(1, 0, 0), 5, 2, 0);
    do_kin(hl("mzn_halfeps"), Vector3f(0, 0, 1), 5, 2, 0.5f * EPS);
    do_kin(hl("x"), Vector3f(1, 0, 0), 5, 2, 1);
    do_kin(hl("y"), Vector3f(0, 1, 0), 5, 2, 1);
    do_kin(hl("xy34"), Vector3f(3, 4, 0), 5, 2, 1);
    do_kin(hl("up_zpos"), Vector3f(0, 0, 1), 5, 2, 1);
    do_kin(hl("down_zneg"), Vector3f(0, 0, -1), 5, 2, 1);
    do_kin(hl("zpos_long"), Vector3f(0, 0, 5), 5, 2, 1);
    do_kin(hl("neg_limits"), Vector3f(1, 0, 1), -5, -2, -1);
    do_kin(hl("xy_tiny"), Vector3f(1e-8f, 0, 1), 5, 2, 1);
    do_kin(hl("xy_tiny_down"), Vector3f(0, -1e-8f, -1), 5, 2, 1);
    do_kin(hl("z_tiny"), Vector3f(1, 0, 1e-8f), 5, 2, 1);
    do_kin(hl("z_tiny_neg"), Vector3f(0, 1, -1e-8f), 5, 2, 1);
    do_kin(hl("45_zpos_dominates"), Vector3f(1, 0, 1), 5, 2, 1);
    do_kin(hl("shallow_zpos"), Vector3f(10, 0, 1), 5, 2, 1);
    do_kin(hl("shallow_zneg"), Vector3f(10, 0, -1), 5, 2, 1);
    do_kin(hl("steep_zneg"), Vector3f(1, 0, -10), 5, 2, 1);
    do_kin(hl("slope_eq_zpos"), Vector3f(1, 0, 1), 2, 2, 2);
    do_kin(hl("slope_eq_zneg"), Vector3f(0, 1, -1), 2, 2, 2);
    do_kin(hl("copter_climb"), Vector3f(300, 400, 20), 10, 2.5f, 1.5f);
    do_kin(hl("copter_descend"), Vector3f(-400, 0, -50), 10, 2.5f, 1.5f);
    do_kin(hl("copter_steep"), Vector3f(5, 0, 40), 10, 2.5f, 1.5f);
    do_kin(hl("rover_flat"), Vector3f(50, 30, 0), 2, 2, 2);
    do_kin(hl("accel_3d"), Vector3f(30, 0, -15), 2.5f, 1, 1);
    lcg_seed(5);
    for (int i = 0; i < 30; i++) {
        const Vector3f d{rnd(-1, 1), rnd(-1, 1), rnd(-1, 1)};
        const float mxy = rnd(0.1, 15), mzp = rnd(0.1, 6), mzn = rnd(0.1, 6);
        do_kin(rl(), d, mxy, mzp, mzn);
    }
    for (int i = 0; i < 10; i++) {
        const Vector3f d{rnd(-100, 100), rnd(-100, 100), (i % 2) ? 0.0f : rnd(-5, 5)};
        const float mxy = rnd(0.1, 15), mzp = rnd(0.1, 6), mzn = rnd(0.1, 6);
        do_kin(rl(), d, mxy, mzp, mzn);
    }
    close_csv();
}

// ===========================================================================
// update_vel_accel / update_pos_vel_accel (scalar)

static void do_uva(const char *tag, float vel, float accel, float dt, float limit, float vel_error)
{
    const float vel_in = vel;
    update_vel_accel(vel, accel, dt, limit, vel_error);
    S(tag); F(vel_in); F(accel); F(dt); F(limit); F(vel_error); F(vel); end_row();
}

static void do_upva(const char *tag, double pos, float vel, float accel, float dt, float limit, float pos_error, float vel_error)
{
    const double pos_in = pos;
    const float vel_in = vel;
    postype_t p = pos;
    update_pos_vel_accel(p, vel, accel, dt, limit, pos_error, vel_error);
    S(tag); D(pos_in); F(vel_in); F(accel); F(dt); F(limit); F(pos_error); F(vel_error); D(p); F(vel); end_row();
}

static float rnd_limit()
{
    switch (pick(5)) {
    case 0: return 0;
    case 1: return 1;
    case 2: return -1;
    default: return rnd(-1, 1);
    }
}

static void gen_uva(const char *dir)
{
    open_csv(dir, "update_vel_accel.csv", "case,vel_in,accel,dt,limit,vel_error,vel_out");
    case_no = 0;
    do_uva(hl("limit0"), 1, 2, 0.1f, 0, 1);
    do_uva(hl("blocked"), 1, 2, 0.1f, 1, 1);
    do_uva(hl("opposing_small"), -1, 2, 0.1f, 1, 1);
    do_uva(hl("opposing_clamped"), -0.1f, 2, 0.1f, 1, 1);
    do_uva(hl("accel_against_limit"), 1, -2, 0.1f, 1, 1);
    do_uva(hl("vel_error_neg"), 1, 2, 0.1f, 1, -1);
    do_uva(hl("neglimit_blocked"), -1, -2, 0.1f, -1, -1);
    do_uva(hl("neglimit_opposing"), 1, -2, 0.1f, -1, -1);
    do_uva(hl("neglimit_clamped"), 0.05f, -2, 0.1f, -1, -1);
    do_uva(hl("dt0"), 1, 2, 0, 1, 1);
    do_uva(hl("dv_lim_eps"), 1, EPS, 1, 1, 1);
    do_uva(hl("dv_lim_halfeps"), 1, 0.5f * EPS, 1, 1, 1);
    do_uva(hl("dv_lim_below_eps"), 1, down(EPS), 1, 1, 1);
    do_uva(hl("vel_error0"), 1, 2, 0.1f, 1, 0);
    do_uva(hl("vel_error_eps"), 1, 2, 0.1f, 1, EPS);
    do_uva(hl("vel_error_halfeps"), 1, 2, 0.1f, 1, 0.5f * EPS);
    do_uva(hl("vel0"), 0, 2, 0.1f, 1, 1);
    do_uva(hl("vel_neghalfeps"), -0.5f * EPS, 2, 0.1f, 1, 1);
    do_uva(hl("vel_negeps"), -EPS, 2, 0.1f, 1, 1);
    do_uva(hl("vel_negzero"), -0.0f, 2, 0.1f, 1, 1);
    do_uva(hl("limit_half"), -3, 5, 0.02f, 0.5f, 2);
    do_uva(hl("limit_small"), -3, 5, 0.02f, 1e-3f, 2);
    do_uva(hl("limit_tiny"), -3, 5, 0.02f, 1e-7f, 2);
    do_uva(hl("accel0"), 4, 0, 0.1f, 1, 1);
    lcg_seed(6);
    for (int i = 0; i < 40; i++) {
        const float vel = rnd(-15, 15), accel = rnd(-6, 6), dt = rnd_dt(), limit = rnd_limit(), verr = rnd(-5, 5);
        do_uva(rl(), vel, accel, dt, limit, verr);
    }
    // opposing-velocity cases where the clamp can bind (|vel| small)
    for (int i = 0; i < 8; i++) {
        const float limit = rnd_bool() ? 1.0f : -1.0f;
        const float vel = -limit * rnd(0.0, 0.05), accel = limit * rnd(0.1, 6), dt = rnd_dt(), verr = limit * rnd(0.1, 5);
        do_uva(rl(), vel, accel, dt, limit, verr);
    }
    close_csv();

    open_csv(dir, "update_pos_vel_accel.csv", "case,pos_in,vel_in,accel,dt,limit,pos_error,vel_error,pos_out,vel_out");
    case_no = 0;
    do_upva(hl("limit0"), 0, 1, 2, 0.1f, 0, 1, 1);
    do_upva(hl("pos_blocked_vel_blocked"), 10, 1, 2, 0.1f, 1, 1, 1);
    do_upva(hl("pos_blocked_vel_free"), 10, 1, 2, 0.1f, 1, 1, -1);
    do_upva(hl("pos_free_vel_blocked"), 10, 1, 2, 0.1f, 1, -1, 1);
    do_upva(hl("dpos_neg"), 10, -1, 2, 0.1f, 1, 1, 1);
    do_upva(hl("dpos_neg_opposing_clamped"), 10, -0.1f, 2, 0.1f, 1, 1, 1);
    do_upva(hl("neglimit"), -5, -1, -2, 0.1f, -1, -1, -1);
    do_upva(hl("dt0"), 3, 1, 2, 0, 1, 1, 1);
    do_upva(hl("pos_error0"), 3, 1, 2, 0.1f, 1, 0, 1);
    do_upva(hl("pos_error_eps"), 3, 1, 2, 0.1f, 1, EPS, 1);
    do_upva(hl("dpos_tiny"), 3, 1e-7f, 0, 1, 1, 1, 1);
    do_upva(hl("dpos_eps"), 3, EPS, 0, 1, 1, 1, 1);
    do_upva(hl("big_pos"), atof("123456.789012345678"), 2.5f, -1, 0.0025f, 0, 0, 0);
    do_upva(hl("big_pos_small_step"), atof("-987654.321"), 0.001f, 0.001f, 0.0025f, 0, 0, 0);
    do_upva(hl("vel_only"), 1, 5, 0, 0.02f, 0, 0, 0);
    do_upva(hl("accel_only"), 1, 0, 3, 0.02f, 0, 0, 0);
    lcg_seed(7);
    for (int i = 0; i < 44; i++) {
        const double pos = rndd(-1000, 1000);
        const float vel = rnd(-15, 15), accel = rnd(-6, 6), dt = rnd_dt(), limit = rnd_limit(), perr = rnd(-50, 50), verr = rnd(-5, 5);
        do_upva(rl(), pos, vel, accel, dt, limit, perr, verr);
    }
    close_csv();
}

// ===========================================================================
// update_vel_accel_xy / update_pos_vel_accel_xy

static void do_uvaxy(const char *tag, Vector2f vel, Vector2f accel, float dt, Vector2f limit, Vector2f vel_error)
{
    const Vector2f vel_in = vel;
    update_vel_accel_xy(vel, accel, dt, limit, vel_error);
    S(tag); V2(vel_in); V2(accel); F(dt); V2(limit); V2(vel_error); V2(vel); end_row();
}

static void do_upvaxy(const char *tag, Vector2p pos, Vector2f vel, Vector2f accel, float dt, Vector2f limit, Vector2f pos_error, Vector2f vel_error)
{
    const Vector2p pos_in = pos;
    const Vector2f vel_in = vel;
    update_pos_vel_accel_xy(pos, vel, accel, dt, limit, pos_error, vel_error);
    S(tag); V2p(pos_in); V2(vel_in); V2(accel); F(dt); V2(limit); V2(pos_error); V2(vel_error); V2p(pos); V2(vel); end_row();
}

static Vector2f rnd_limit_xy()
{
    switch (pick(4)) {
    case 0: return Vector2f(0, 0);
    case 1: { const float a = rnd(-M_PI, M_PI); return Vector2f(cosf(a), sinf(a)); }
    default: return Vector2f{rnd(-1, 1), rnd(-1, 1)};
    }
}

static void gen_uvaxy(const char *dir)
{
    open_csv(dir, "update_vel_accel_xy.csv", "case,vel_in_x,vel_in_y,accel_x,accel_y,dt,limit_x,limit_y,vel_error_x,vel_error_y,vel_out_x,vel_out_y");
    case_no = 0;
    do_uvaxy(hl("limit0"), Vector2f(1, 2), Vector2f(3, -1), 0.1f, Vector2f(0, 0), Vector2f(1, 1));
    do_uvaxy(hl("blocked"), Vector2f(1, 0), Vector2f(2, 1), 0.1f, Vector2f(1, 0), Vector2f(1, 0));
    do_uvaxy(hl("vel_opposing_not_blocked"), Vector2f(-1, 0), Vector2f(2, 1), 0.1f, Vector2f(1, 0), Vector2f(1, 0));
    do_uvaxy(hl("vel_perp_blocked"), Vector2f(0, 3), Vector2f(2, 1), 0.1f, Vector2f(1, 0), Vector2f(1, 0));
    do_uvaxy(hl("accel_against"), Vector2f(1, 0), Vector2f(-2, 1), 0.1f, Vector2f(1, 0), Vector2f(1, 0));
    do_uvaxy(hl("vel_error_against"), Vector2f(1, 0), Vector2f(2, 1), 0.1f, Vector2f(1, 0), Vector2f(-1, 0));
    do_uvaxy(hl("diag_limit_blocked"), Vector2f(1, 1), Vector2f(1, 2), 0.02f, Vector2f(0.70710677f, 0.70710677f), Vector2f(3, 1));
    do_uvaxy(hl("dt0"), Vector2f(1, 0), Vector2f(2, 1), 0, Vector2f(1, 0), Vector2f(1, 0));
    do_uvaxy(hl("accel0"), Vector2f(1, 0), Vector2f(0, 0), 0.1f, Vector2f(1, 0), Vector2f(1, 0));
    // component-wise is_zero(): limit and delta_vel with every component below FLT_EPSILON
    do_uvaxy(hl("limit_components_tiny"), Vector2f(0, 0), Vector2f(100, 0), 0.1f, Vector2f(5e-8f, 0), Vector2f(10, 0));
    do_uvaxy(hl("limit_components_tiny2"), Vector2f(0, 0), Vector2f(100, 100), 0.1f, Vector2f(1e-7f, 1e-7f), Vector2f(10, 10));
    do_uvaxy(hl("dvel_components_tiny"), Vector2f(0, 0), Vector2f(1e-6f, 0), 0.1f, Vector2f(1000, 0), Vector2f(1, 0));
    do_uvaxy(hl("dvel_components_tiny2"), Vector2f(0.5f, 0), Vector2f(1e-6f, 1e-6f), 0.1f, Vector2f(1000, 1000), Vector2f(1, 1));
    do_uvaxy(hl("dot_dv_eps"), Vector2f(1, 0), Vector2f(EPS, 0), 1, Vector2f(1, 0), Vector2f(1, 0));
    do_uvaxy(hl("dot_dv_halfeps"), Vector2f(1, 0), Vector2f(0.5f * EPS, 0), 1, Vector2f(1, 0), Vector2f(1, 0));
    do_uvaxy(hl("dot_vel_neghalfeps"), Vector2f(-0.5f * EPS, 0), Vector2f(2, 0), 0.1f, Vector2f(1, 0), Vector2f(1, 0));
    do_uvaxy(hl("dot_vel_negeps"), Vector2f(-EPS, 0), Vector2f(2, 0), 0.1f, Vector2f(1, 0), Vector2f(1, 0));
    do_uvaxy(hl("vel_error0"), Vector2f(1, 0), Vector2f(2, 1), 0.1f, Vector2f(1, 0), Vector2f(0, 0));
    lcg_seed(8);
    for (int i = 0; i < 40; i++) {
        const Vector2f vel{rnd(-15, 15), rnd(-15, 15)}, accel{rnd(-6, 6), rnd(-6, 6)};
        const float dt = rnd_dt();
        const Vector2f limit = rnd_limit_xy(), verr{rnd(-5, 5), rnd(-5, 5)};
        do_uvaxy(rl(), vel, accel, dt, limit, verr);
    }
    close_csv();

    open_csv(dir, "update_pos_vel_accel_xy.csv", "case,pos_in_x,pos_in_y,vel_in_x,vel_in_y,accel_x,accel_y,dt,limit_x,limit_y,pos_error_x,pos_error_y,vel_error_x,vel_error_y,pos_out_x,pos_out_y,vel_out_x,vel_out_y");
    case_no = 0;
    do_upvaxy(hl("limit0"), Vector2p(1, 2), Vector2f(1, 2), Vector2f(3, -1), 0.1f, Vector2f(0, 0), Vector2f(1, 1), Vector2f(1, 1));
    do_upvaxy(hl("both_blocked"), Vector2p(1, 2), Vector2f(1, 0), Vector2f(2, 1), 0.1f, Vector2f(1, 0), Vector2f(1, 0), Vector2f(1, 0));
    do_upvaxy(hl("pos_blocked_only"), Vector2p(1, 2), Vector2f(1, 0), Vector2f(2, 1), 0.1f, Vector2f(1, 0), Vector2f(1, 0), Vector2f(-1, 0));
    do_upvaxy(hl("vel_blocked_only"), Vector2p(1, 2), Vector2f(1, 0), Vector2f(2, 1), 0.1f, Vector2f(1, 0), Vector2f(-1, 0), Vector2f(1, 0));
    do_upvaxy(hl("dpos_against"), Vector2p(1, 2), Vector2f(-1, 0), Vector2f(2, 1), 0.1f, Vector2f(1, 0), Vector2f(1, 0), Vector2f(1, 0));
    do_upvaxy(hl("limit_lensq_below_eps"), Vector2p(0, 0), Vector2f(10, 0), Vector2f(0, 0), 0.1f, Vector2f(1e-4f, 0), Vector2f(1e4f, 0), Vector2f(0, 0));
    do_upvaxy(hl("limit_lensq_above_eps"), Vector2p(0, 0), Vector2f(10, 0), Vector2f(0, 0), 0.1f, Vector2f(4e-4f, 0), Vector2f(1e4f, 0), Vector2f(0, 0));
    do_upvaxy(hl("limit_tiny_components_vel"), Vector2p(0, 0), Vector2f(0, 0), Vector2f(100, 0), 0.1f, Vector2f(5e-8f, 0), Vector2f(0, 0), Vector2f(10, 0));
    do_upvaxy(hl("dt0"), Vector2p(3, 4), Vector2f(1, 1), Vector2f(2, 2), 0, Vector2f(1, 0), Vector2f(1, 0), Vector2f(1, 0));
    do_upvaxy(hl("big_pos"), Vector2p(atof("123456.789012345678"), atof("-98765.4321")), Vector2f(2.5f, -1), Vector2f(0.5f, 0.25f), 0.0025f, Vector2f(0, 0), Vector2f(0, 0), Vector2f(0, 0));
    do_upvaxy(hl("big_pos_tiny_step"), Vector2p(atof("1000000.1"), atof("-2000000.2")), Vector2f(0.001f, 0), Vector2f(0, 0.001f), 0.0025f, Vector2f(0, 0), Vector2f(0, 0), Vector2f(0, 0));
    lcg_seed(9);
    for (int i = 0; i < 40; i++) {
        const Vector2p pos{rndd(-1000, 1000), rndd(-1000, 1000)};
        const Vector2f vel{rnd(-15, 15), rnd(-15, 15)}, accel{rnd(-6, 6), rnd(-6, 6)};
        const float dt = rnd_dt();
        const Vector2f limit = rnd_limit_xy(), perr{rnd(-50, 50), rnd(-50, 50)}, verr{rnd(-5, 5), rnd(-5, 5)};
        do_upvaxy(rl(), pos, vel, accel, dt, limit, perr, verr);
    }
    close_csv();
}

// ===========================================================================
// shape_accel, shape_accel_xy (Vector2f and Vector3f)

static void do_sa(const char *tag, float ain, float accel, float jerk, float dt)
{
    const float a_in = accel;
    ierr_mark();
    shape_accel(ain, accel, jerk, dt);
    const long e = ierr_count();
    S(tag); F(ain); F(a_in); F(jerk); F(dt); F(accel); I(e); end_row();
}

static void do_saxy(const char *tag, Vector2f ain, Vector2f accel, float jerk, float dt)
{
    const Vector2f a_in = accel;
    ierr_mark();
    shape_accel_xy(ain, accel, jerk, dt);
    const long e = ierr_count();
    S(tag); V2(ain); V2(a_in); F(jerk); F(dt); V2(accel); I(e); end_row();
}

static void do_saxy3(const char *tag, Vector3f ain, Vector3f accel, float jerk, float dt)
{
    const Vector3f a_in = accel;
    ierr_mark();
    shape_accel_xy(ain, accel, jerk, dt);
    const long e = ierr_count();
    S(tag); F(ain.x); F(ain.y); F(ain.z); F(a_in.x); F(a_in.y); F(a_in.z); F(jerk); F(dt);
    F(accel.x); F(accel.y); F(accel.z); I(e); end_row();
}

static void gen_sa(const char *dir)
{
    open_csv(dir, "shape_accel.csv", "case,accel_input,accel_in,jerk_max,dt,accel_out,ierr");
    case_no = 0;
    do_sa(hl("jerk0"), 3, 1, 0, 0.1f);
    do_sa(hl("jerk_neg"), 3, 1, -1, 0.1f);
    do_sa(hl("jerk_halfeps"), 3, 1, 0.5f * EPS, 0.1f);
    do_sa(hl("jerk_eps"), 3, 1, EPS, 0.1f);
    do_sa(hl("dt0"), 3, 1, 10, 0);
    do_sa(hl("dt_neg"), 3, 1, 10, -0.1f);
    do_sa(hl("dt_halfeps"), 3, 1, 10, 0.5f * EPS);
    do_sa(hl("within"), 1.5f, 1, 10, 0.1f);
    do_sa(hl("limited_up"), 3, 1, 10, 0.1f);
    do_sa(hl("limited_down"), -3, 1, 10, 0.1f);
    do_sa(hl("exact_step"), 2, 1, 10, 0.1f);
    do_sa(hl("same"), 1, 1, 10, 0.1f);
    do_sa(hl("from0"), 5, 0, 20, 0.0025f);
    lcg_seed(10);
    for (int i = 0; i < 40; i++) {
        const float ain = rnd(-6, 6), a = rnd(-6, 6), jerk = rnd(0.5, 20), dt = rnd_dt();
        do_sa(rl(), ain, a, jerk, dt);
    }
    close_csv();

    open_csv(dir, "shape_accel_xy.csv", "case,accel_input_x,accel_input_y,accel_in_x,accel_in_y,jerk_max,dt,accel_out_x,accel_out_y,ierr");
    case_no = 0;
    do_saxy(hl("jerk0"), Vector2f(3, 4), Vector2f(0, 0), 0, 0.1f);
    do_saxy(hl("jerk_neg"), Vector2f(3, 4), Vector2f(0, 0), -2, 0.1f);
    do_saxy(hl("jerk_halfeps"), Vector2f(3, 4), Vector2f(0, 0), 0.5f * EPS, 0.1f);
    do_saxy(hl("dt0"), Vector2f(3, 4), Vector2f(1, 1), 10, 0);
    do_saxy(hl("dt_neg"), Vector2f(3, 4), Vector2f(1, 1), 10, -0.1f);
    do_saxy(hl("within"), Vector2f(0.3f, 0.4f), Vector2f(0, 0), 10, 0.1f);
    do_saxy(hl("exact_len"), Vector2f(0.6f, 0.8f), Vector2f(0, 0), 10, 0.1f);
    do_saxy(hl("limited"), Vector2f(3, 4), Vector2f(0, 0), 10, 0.1f);
    do_saxy(hl("limited_from_nonzero"), Vector2f(-3, 4), Vector2f(2, -1), 5, 0.02f);
    do_saxy(hl("same"), Vector2f(1, 2), Vector2f(1, 2), 10, 0.1f);
    do_saxy(hl("tiny_delta"), Vector2f(1, 2), Vector2f(1, up(2)), 10, 0.1f);
    lcg_seed(11);
    for (int i = 0; i < 40; i++) {
        const Vector2f ain{rnd(-6, 6), rnd(-6, 6)}, a{rnd(-6, 6), rnd(-6, 6)};
        const float jerk = rnd(0.5, 20), dt = rnd_dt();
        do_saxy(rl(), ain, a, jerk, dt);
    }
    close_csv();

    open_csv(dir, "shape_accel_xy3.csv", "case,accel_input_x,accel_input_y,accel_input_z,accel_in_x,accel_in_y,accel_in_z,jerk_max,dt,accel_out_x,accel_out_y,accel_out_z,ierr");
    case_no = 0;
    do_saxy3(hl("jerk0"), Vector3f(3, 4, 5), Vector3f(0, 0, 1), 0, 0.1f);
    do_saxy3(hl("dt0"), Vector3f(3, 4, 5), Vector3f(0, 0, 1), 10, 0);
    do_saxy3(hl("limited"), Vector3f(3, 4, 5), Vector3f(0, 0, 1), 10, 0.1f);
    do_saxy3(hl("within"), Vector3f(0.3f, 0.4f, -7), Vector3f(0, 0, 2), 10, 0.1f);
    lcg_seed(12);
    for (int i = 0; i < 8; i++) {
        const Vector3f ain{rnd(-6, 6), rnd(-6, 6), rnd(-6, 6)}, a{rnd(-6, 6), rnd(-6, 6), rnd(-6, 6)};
        const float jerk = rnd(0.5, 20), dt = rnd_dt();
        do_saxy3(rl(), ain, a, jerk, dt);
    }
    close_csv();
}

// ===========================================================================
// shape_vel_accel, shape_vel_accel_xy

static void do_sva(const char *tag, float vin, float ain, float vel, float accel, float amin, float amax, float jerk, float dt, bool lt)
{
    const float a_in = accel;
    ierr_mark();
    shape_vel_accel(vin, ain, vel, accel, amin, amax, jerk, dt, lt);
    const long e = ierr_count();
    S(tag); F(vin); F(ain); F(vel); F(a_in); F(amin); F(amax); F(jerk); F(dt); B(lt); F(accel); I(e); end_row();
}

static void do_svaxy(const char *tag, Vector2f vin, Vector2f ain, Vector2f vel, Vector2f accel, float amax, float jerk, float dt, bool lt)
{
    const Vector2f a_in = accel;
    ierr_mark();
    shape_vel_accel_xy(vin, ain, vel, accel, amax, jerk, dt, lt);
    const long e = ierr_count();
    S(tag); V2(vin); V2(ain); V2(vel); V2(a_in); F(amax); F(jerk); F(dt); B(lt); V2(accel); I(e); end_row();
}

static void gen_sva(const char *dir)
{
    open_csv(dir, "shape_vel_accel.csv", "case,vel_input,accel_input,vel,accel_in,accel_min,accel_max,jerk_max,dt,limit_total_accel,accel_out,ierr");
    case_no = 0;
    do_sva(hl("amin0"), 5, 0, 0, 0, 0, 2, 10, 0.1f, false);
    do_sva(hl("amin_pos"), 5, 0, 0, 0, 1, 2, 10, 0.1f, false);
    do_sva(hl("amin_neghalfeps"), 5, 0, 0, 0, -0.5f * EPS, 2, 10, 0.1f, false);
    do_sva(hl("amax0"), 5, 0, 0, 0, -2, 0, 10, 0.1f, false);
    do_sva(hl("jerk0"), 5, 0, 0, 0, -2, 2, 0, 0.1f, false);
    do_sva(hl("jerk_neg"), 5, 0, 0, 0, -2, 2, -1, 0.1f, false);
    do_sva(hl("pos_err"), 5, 0, 0, 0, -2, 2, 10, 0.1f, false);
    do_sva(hl("neg_err"), -5, 0, 0, 0, -2, 2, 10, 0.1f, false);
    do_sva(hl("zero_err"), 3, 0, 3, 1, -2, 2, 10, 0.1f, false);
    do_sva(hl("err_halfeps"), 3, 0, down(3), 1, -2, 2, 10, 0.1f, false);
    do_sva(hl("asym_pos_err"), 5, 0, 0, 0, -1, 3, 4, 0.02f, false);
    do_sva(hl("asym_neg_err"), -5, 0, 0, 0, -1, 3, 4, 0.02f, false);
    do_sva(hl("small_err_lin"), 0.01f, 0, 0, 0, -2, 2, 10, 0.0025f, false);
    do_sva(hl("ff_no_total_limit"), 5, 3, 0, 2, -2, 2, 100, 0.1f, false);
    do_sva(hl("ff_total_limit"), 5, 3, 0, 2, -2, 2, 100, 0.1f, true);
    do_sva(hl("ff_neg_total_limit"), -5, -3, 0, -2, -2, 2, 100, 0.1f, true);
    do_sva(hl("ff_neg_no_total_limit"), -5, -3, 0, -2, -2, 2, 100, 0.1f, false);
    do_sva(hl("dt0"), 5, 1, 0, 0.5f, -2, 2, 10, 0, true);
    do_sva(hl("jerk_limited_step"), 10, 0, 0, 0, -5, 5, 2, 0.1f, false);
    do_sva(hl("accel_in_far"), 0, 0, 0, 5, -2, 2, 10, 0.02f, false);
    lcg_seed(13);
    for (int i = 0; i < 48; i++) {
        const float vin = rnd(-15, 15), ain = rnd(-3, 3), vel = rnd(-15, 15), a = rnd(-6, 6);
        const float amin = -rnd(0.1, 6), amax = rnd(0.1, 6), jerk = rnd(0.5, 20), dt = rnd_dt();
        const bool lt = rnd_bool();
        do_sva(rl(), vin, ain, vel, a, amin, amax, jerk, dt, lt);
    }
    close_csv();

    open_csv(dir, "shape_vel_accel_xy.csv", "case,vel_input_x,vel_input_y,accel_input_x,accel_input_y,vel_x,vel_y,accel_in_x,accel_in_y,accel_max,jerk_max,dt,limit_total_accel,accel_out_x,accel_out_y,ierr");
    case_no = 0;
    do_svaxy(hl("amax0"), Vector2f(3, 4), Vector2f(0, 0), Vector2f(0, 0), Vector2f(0, 0), 0, 10, 0.1f, false);
    do_svaxy(hl("jerk0"), Vector2f(3, 4), Vector2f(0, 0), Vector2f(0, 0), Vector2f(0, 0), 2, 0, 0.1f, false);
    do_svaxy(hl("vin0"), Vector2f(0, 0), Vector2f(0, 0), Vector2f(3, -4), Vector2f(0, 0), 2, 100, 0.1f, false);
    do_svaxy(hl("vin_tiny_components"), Vector2f(1e-8f, 0), Vector2f(0, 0), Vector2f(-10, -5), Vector2f(0, 0), 2, 100, 0.1f, false);
    do_svaxy(hl("vin_tiny_components2"), Vector2f(-1e-8f, 1e-8f), Vector2f(0, 0), Vector2f(-10, 5), Vector2f(0, 0), 2, 100, 0.1f, false);
    do_svaxy(hl("along_dominates"), Vector2f(10, 0), Vector2f(0, 0), Vector2f(0, 3), Vector2f(0, 0), 2, 100, 0.1f, false);
    do_svaxy(hl("cross_dominates"), Vector2f(10, 0), Vector2f(0, 0), Vector2f(8, 6), Vector2f(0, 0), 2, 100, 0.1f, false);
    do_svaxy(hl("along_eq_cross"), Vector2f(1, 0), Vector2f(0, 0), Vector2f(-2, -3), Vector2f(0, 0), 2, 100, 0.1f, false);
    do_svaxy(hl("along_only"), Vector2f(5, 0), Vector2f(0, 0), Vector2f(0, 0), Vector2f(0, 0), 2, 100, 0.1f, false);
    do_svaxy(hl("along_neg"), Vector2f(5, 0), Vector2f(0, 0), Vector2f(12, 1), Vector2f(0, 0), 2, 100, 0.1f, false);
    do_svaxy(hl("within_limits"), Vector2f(1, 0.2f), Vector2f(0, 0), Vector2f(0.9f, 0.2f), Vector2f(0, 0), 2, 10, 0.02f, false);
    do_svaxy(hl("ff_no_total_limit"), Vector2f(10, 0), Vector2f(3, 3), Vector2f(0, 0), Vector2f(0, 0), 2, 1000, 0.1f, false);
    do_svaxy(hl("ff_total_limit"), Vector2f(10, 0), Vector2f(3, 3), Vector2f(0, 0), Vector2f(0, 0), 2, 1000, 0.1f, true);
    do_svaxy(hl("dt0"), Vector2f(10, 0), Vector2f(1, 1), Vector2f(0, 0), Vector2f(0.5f, 0), 2, 10, 0, true);
    do_svaxy(hl("zero_err"), Vector2f(3, 4), Vector2f(0, 0), Vector2f(3, 4), Vector2f(1, 1), 2, 10, 0.02f, false);
    do_svaxy(hl("jerk_limited"), Vector2f(-7, 2), Vector2f(0, 0), Vector2f(3, 4), Vector2f(0, 0), 5, 2, 0.1f, false);
    lcg_seed(14);
    for (int i = 0; i < 48; i++) {
        const Vector2f vin{rnd(-15, 15), rnd(-15, 15)}, ain{rnd(-3, 3), rnd(-3, 3)};
        const Vector2f vel{rnd(-15, 15), rnd(-15, 15)}, a{rnd(-6, 6), rnd(-6, 6)};
        const float amax = rnd(0.1, 6), jerk = rnd(0.5, 20), dt = rnd_dt();
        const bool lt = rnd_bool();
        do_svaxy(rl(), vin, ain, vel, a, amax, jerk, dt, lt);
    }
    close_csv();
}

// ===========================================================================
// shape_pos_vel_accel, shape_pos_vel_accel_xy

static void do_spva(const char *tag, double pin, float vin, float ain, double pos, float vel, float accel,
                    float vmin, float vmax, float amin, float amax, float jerk, float dt, bool lt)
{
    const float a_in = accel;
    ierr_mark();
    shape_pos_vel_accel(pin, vin, ain, pos, vel, accel, vmin, vmax, amin, amax, jerk, dt, lt);
    const long e = ierr_count();
    S(tag); D(pin); F(vin); F(ain); D(pos); F(vel); F(a_in); F(vmin); F(vmax); F(amin); F(amax); F(jerk); F(dt); B(lt);
    F(accel); I(e); end_row();
}

static void do_spvaxy(const char *tag, Vector2p pin, Vector2f vin, Vector2f ain, Vector2p pos, Vector2f vel, Vector2f accel,
                      float vmax, float amax, float jerk, float dt, bool lt)
{
    const Vector2f a_in = accel;
    ierr_mark();
    shape_pos_vel_accel_xy(pin, vin, ain, pos, vel, accel, vmax, amax, jerk, dt, lt);
    const long e = ierr_count();
    S(tag); V2p(pin); V2(vin); V2(ain); V2p(pos); V2(vel); V2(a_in); F(vmax); F(amax); F(jerk); F(dt); B(lt);
    V2(accel); I(e); end_row();
}

static void gen_spva(const char *dir)
{
    open_csv(dir, "shape_pos_vel_accel.csv", "case,pos_input,vel_input,accel_input,pos,vel,accel_in,vel_min,vel_max,accel_min,accel_max,jerk_max,dt,limit_total,accel_out,ierr");
    case_no = 0;
    do_spva(hl("vmin_pos"), 10, 0, 0, 0, 0, 0, 1, 5, -2, 2, 10, 0.1f, false);
    do_spva(hl("vmax_neg"), 10, 0, 0, 0, 0, 0, -5, -1, -2, 2, 10, 0.1f, false);
    do_spva(hl("amin0"), 10, 0, 0, 0, 0, 0, -5, 5, 0, 2, 10, 0.1f, false);
    do_spva(hl("amax0"), 10, 0, 0, 0, 0, 0, -5, 5, -2, 0, 10, 0.1f, false);
    do_spva(hl("jerk0"), 10, 0, 0, 0, 0, 0, -5, 5, -2, 2, 0, 0.1f, false);
    do_spva(hl("vmin_halfeps_ok"), 10, 0, 0, 0, 0, 0, 0.5f * EPS, 5, -2, 2, 10, 0.1f, false);
    do_spva(hl("basic_pos"), 10, 0, 0, 0, 0, 0, -5, 5, -2, 2, 10, 0.1f, false);
    do_spva(hl("basic_neg"), -10, 0, 0, 0, 0, 0, -5, 5, -2, 2, 10, 0.1f, false);
    do_spva(hl("vel_limits_both0"), 100, 0, 0, 0, 0, 0, 0, 0, -2, 2, 10, 0.1f, true);
    do_spva(hl("vmax0_pos_err"), 100, 0, 0, 0, 0, 0, -5, 0, -2, 2, 10, 0.1f, false);
    do_spva(hl("vmax0_neg_err"), -100, 0, 0, 0, 0, 0, -5, 0, -2, 2, 10, 0.1f, false);
    do_spva(hl("vmin0_pos_err"), 100, 0, 0, 0, 0, 0, 0, 5, -2, 2, 10, 0.1f, false);
    do_spva(hl("vmin0_neg_err"), -100, 0, 0, 0, 0, 0, 0, 5, -2, 2, 10, 0.1f, false);
    do_spva(hl("vel_limit_binds"), 100, 0, 0, 0, 4, 0, -3, 3, -2, 2, 10, 0.1f, false);
    do_spva(hl("total_limit_off"), 100, 4, 0, 0, 4, 0, -5, 5, -2, 2, 10, 0.1f, false);
    do_spva(hl("total_limit_on"), 100, 4, 0, 0, 4, 0, -5, 5, -2, 2, 10, 0.1f, true);
    do_spva(hl("total_limit_on_vel_equal"), 100, 4, 0, 0, 4, 0, 0, 0, -2, 2, 10, 0.1f, true);
    do_spva(hl("ff_accel_total"), 1, 0, 5, 0, 0, 0, -5, 5, -2, 2, 1000, 0.1f, true);
    do_spva(hl("ff_accel_no_total"), 1, 0, 5, 0, 0, 0, -5, 5, -2, 2, 1000, 0.1f, false);
    do_spva(hl("asym_pos_err"), 20, 0, 0, 0, 0, 0, -3, 6, -1, 3, 5, 0.02f, false);
    do_spva(hl("asym_neg_err"), -20, 0, 0, 0, 0, 0, -3, 6, -1, 3, 5, 0.02f, false);
    do_spva(hl("zero_err"), 7, 0, 0, 7, 0, 0.5f, -5, 5, -2, 2, 10, 0.02f, false);
    do_spva(hl("tiny_err"), 7, 0, 0, atof("6.9999999"), 0, 0, -5, 5, -2, 2, 10, 0.02f, false);
    do_spva(hl("big_pos"), atof("100000.123456789"), 0, 0, atof("99990.0000001"), 1, 0.2f, -5, 5, -2.5f, 2.5f, 10, 0.0025f, true);
    do_spva(hl("big_pos_small_err"), atof("1234567.000001"), 0, 0, atof("1234567.0"), 0, 0, -5, 5, -2.5f, 2.5f, 10, 0.0025f, true);
    do_spva(hl("dt0"), 10, 0, 0, 0, 0, 0.1f, -5, 5, -2, 2, 10, 0, false);
    do_spva(hl("moving_away"), 10, 0, 0, 0, -4, 0, -5, 5, -2, 2, 10, 0.1f, false);
    lcg_seed(15);
    for (int i = 0; i < 48; i++) {
        const double pin = rndd(-1000, 1000);
        const double pos = pin - (double)rnd(-50, 50);
        const float vin = rnd(-5, 5), ain = rnd(-2, 2), vel = rnd(-15, 15), a = rnd(-6, 6);
        const float vmin = (pick(4) == 0) ? 0.0f : -rnd(0.5, 15);
        const float vmax = (pick(4) == 0) ? 0.0f : rnd(0.5, 15);
        const float amin = -rnd(0.1, 6), amax = rnd(0.1, 6), jerk = rnd(0.5, 20), dt = rnd_dt();
        const bool lt = rnd_bool();
        do_spva(rl(), pin, vin, ain, pos, vel, a, vmin, vmax, amin, amax, jerk, dt, lt);
    }
    close_csv();

    open_csv(dir, "shape_pos_vel_accel_xy.csv", "case,pos_input_x,pos_input_y,vel_input_x,vel_input_y,accel_input_x,accel_input_y,pos_x,pos_y,vel_x,vel_y,accel_in_x,accel_in_y,vel_max,accel_max,jerk_max,dt,limit_total,accel_out_x,accel_out_y,ierr");
    case_no = 0;
    const Vector2f z2(0, 0);
    const Vector2p z2p(0, 0);
    do_spvaxy(hl("vmax_neg"), Vector2p(10, 5), z2, z2, z2p, z2, z2, -1, 2, 10, 0.1f, false);
    do_spvaxy(hl("amax0"), Vector2p(10, 5), z2, z2, z2p, z2, z2, 5, 0, 10, 0.1f, false);
    do_spvaxy(hl("jerk0"), Vector2p(10, 5), z2, z2, z2p, z2, z2, 5, 2, 0, 0.1f, false);
    do_spvaxy(hl("basic"), Vector2p(10, 5), z2, z2, z2p, z2, z2, 5, 2, 10, 0.1f, false);
    do_spvaxy(hl("vmax0_no_limit"), Vector2p(100, 50), z2, z2, z2p, z2, z2, 0, 2, 10, 0.1f, true);
    do_spvaxy(hl("vmax_binds"), Vector2p(100, 50), z2, z2, z2p, Vector2f(3, 1), z2, 3, 2, 10, 0.1f, false);
    do_spvaxy(hl("total_limit_off"), Vector2p(100, 0), Vector2f(0, 4), z2, z2p, Vector2f(3, 1), z2, 5, 2, 10, 0.1f, false);
    do_spvaxy(hl("total_limit_on"), Vector2p(100, 0), Vector2f(0, 4), z2, z2p, Vector2f(3, 1), z2, 5, 2, 10, 0.1f, true);
    do_spvaxy(hl("ff_accel_total"), Vector2p(1, 1), z2, Vector2f(3, -3), z2p, z2, z2, 5, 2, 1000, 0.1f, true);
    do_spvaxy(hl("ff_accel_no_total"), Vector2p(1, 1), z2, Vector2f(3, -3), z2p, z2, z2, 5, 2, 1000, 0.1f, false);
    do_spvaxy(hl("zero_err"), Vector2p(7, -3), z2, z2, Vector2p(7, -3), Vector2f(1, 0), Vector2f(0.5f, 0.5f), 5, 2, 10, 0.02f, false);
    do_spvaxy(hl("tiny_err"), Vector2p(7, -3), z2, z2, Vector2p(atof("6.99999999"), -3), z2, z2, 5, 2, 10, 0.02f, false);
    do_spvaxy(hl("big_pos"), Vector2p(atof("100000.123456789"), atof("-200000.5")), z2, z2, Vector2p(atof("99990.0000001"), atof("-199995.25")), Vector2f(1, -1), Vector2f(0.2f, 0), 5, 2.5f, 10, 0.0025f, true);
    do_spvaxy(hl("dt0"), Vector2p(10, 5), z2, z2, z2p, z2, Vector2f(0.1f, 0), 5, 2, 10, 0, false);
    do_spvaxy(hl("moving_away"), Vector2p(10, 0), z2, z2, z2p, Vector2f(-4, 2), z2, 5, 2, 10, 0.1f, false);
    lcg_seed(16);
    for (int i = 0; i < 48; i++) {
        const Vector2p pin{rndd(-1000, 1000), rndd(-1000, 1000)};
        const Vector2p pos{pin.x - (double)rnd(-50, 50), pin.y - (double)rnd(-50, 50)};
        const Vector2f vin{rnd(-5, 5), rnd(-5, 5)}, ain{rnd(-2, 2), rnd(-2, 2)};
        const Vector2f vel{rnd(-15, 15), rnd(-15, 15)}, a{rnd(-6, 6), rnd(-6, 6)};
        const float vmax = (pick(4) == 0) ? 0.0f : rnd(0.5, 15);
        const float amax = rnd(0.1, 6), jerk = rnd(0.5, 20), dt = rnd_dt();
        const bool lt = rnd_bool();
        do_spvaxy(rl(), pin, vin, ain, pos, vel, a, vmax, amax, jerk, dt, lt);
    }
    close_csv();
}

// ===========================================================================
// limit_accel_xy

static void do_lax(const char *tag, Vector2f vel, Vector2f accel, float amax)
{
    const Vector2f a_in = accel;
    const bool r = limit_accel_xy(vel, accel, amax);
    S(tag); V2(vel); V2(a_in); F(amax); V2(accel); B(r); end_row();
}

static void gen_lax(const char *dir)
{
    open_csv(dir, "limit_accel_xy.csv", "case,vel_x,vel_y,accel_in_x,accel_in_y,accel_max,accel_out_x,accel_out_y,ret");
    case_no = 0;
    do_lax(hl("amax0"), Vector2f(1, 0), Vector2f(30, 40), 0);
    do_lax(hl("amax_neg"), Vector2f(1, 0), Vector2f(30, 40), -1);
    do_lax(hl("amax_halfeps"), Vector2f(1, 0), Vector2f(30, 40), 0.5f * EPS);
    do_lax(hl("within"), Vector2f(1, 0), Vector2f(1, 1), 5);
    do_lax(hl("exactly_at"), Vector2f(1, 0), Vector2f(3, 4), 5);
    do_lax(hl("just_above"), Vector2f(1, 0), Vector2f(3, up(4)), 5);
    do_lax(hl("vel0"), Vector2f(0, 0), Vector2f(6, 8), 5);
    do_lax(hl("vel_tiny_components"), Vector2f(1e-8f, 0), Vector2f(3, 8), 5);
    do_lax(hl("vel_tiny_components2"), Vector2f(0, -1e-8f), Vector2f(3, 8), 5);
    do_lax(hl("cross_exceeds"), Vector2f(1, 0), Vector2f(3, 8), 5);
    do_lax(hl("cross_exceeds_neg"), Vector2f(-2, 0), Vector2f(-3, -8), 5);
    do_lax(hl("along_limited"), Vector2f(1, 0), Vector2f(8, 3), 5);
    do_lax(hl("along_limited_neg"), Vector2f(0, 3), Vector2f(3, -8), 5);
    do_lax(hl("along_only"), Vector2f(3, 4), Vector2f(6, 8), 5);
    do_lax(hl("cross_only"), Vector2f(3, 4), Vector2f(8, -6), 5);
    do_lax(hl("cross_eq_amax"), Vector2f(1, 0), Vector2f(1, 5), 5);
    do_lax(hl("diag"), Vector2f(1, 1), Vector2f(10, 0), 5);
    lcg_seed(17);
    for (int i = 0; i < 48; i++) {
        const Vector2f vel = (pick(8) == 0) ? Vector2f(0, 0) : Vector2f{rnd(-15, 15), rnd(-15, 15)};
        const Vector2f a{rnd(-12, 12), rnd(-12, 12)};
        const float amax = rnd(0.1, 6);
        do_lax(rl(), vel, a, amax);
    }
    close_csv();
}

// ===========================================================================
// Multi-step sequences at dt = 0.0025 (float). Most run 200 steps with rows
// for step 0 (the initial state, before any call) and after steps 10, 20,
// ..., 200; the position sequences named long_* run 3200 or 4000 steps (8 or
// 10 s, a whole move) with a row every 100 steps.
//
// Each step of a position sequence (the scalar one; the _xy one likewise):
//   if target_moves: update_pos_vel_accel(tp, tv, ta, dt, 0, 0, 0)
//   shape_pos_vel_accel(tp, tv, ta, pos, vel, accel, vel_min, vel_max,
//                       accel_min, accel_max, jerk_max, dt, limit_total)
//   update_pos_vel_accel(pos, vel, accel, dt, L, L ? (float)(tp - pos) : 0,
//                        L ? tv - vel : 0)              L = update_limit
// (pos_error and vel_error are computed after the shaping call and before
// the update; (float)(tp - pos) is the double difference rounded to float.)
// Each step of a velocity sequence:
//   shape_vel_accel(tv, ta, vel, accel, accel_min, accel_max, jerk_max, dt, limit_total)
//   update_vel_accel(vel, accel, dt, 0, 0)

static const int SEQ_STEPS = 200;
static const int SEQ_EVERY = 10;
static const float SEQ_DT = 0.0025f;

struct Seq1 {
    const char *name;
    double tp; float tv, ta;
    double pos; float vel, accel;
    float vmin, vmax, amin, amax, jerk;
    bool lt, moves;
    float limit;
    int steps, every;
};

static void gen_seq_pos(const char *dir)
{
    open_csv(dir, "seq_shape_pos_vel_accel.csv",
             "seq,step,dt,vel_min,vel_max,accel_min,accel_max,jerk_max,limit_total,target_moves,update_limit,"
             "target_pos,target_vel,target_accel,pos,vel,accel,ierr");
    const Seq1 seqs[] = {
        {"step_from_rest", 10, 0, 0, 0, 0, 0, -5, 5, -2.5f, 2.5f, 10, true, false, 0, 200, 10},
        {"moving_target", 5, 2, 0, 0, 0, 0, -3, 3, -2, 2, 8, true, true, 0, 200, 10},
        {"moving_away_asym", 3, 0, 0, 0, -4, 0, -6, 6, -1, 3, 5, false, false, 0, 200, 10},
        {"accel_target_big_pos", atof("100000.25"), 1, 0.5f, atof("99999.5"), 0, 0, -4, 4, -2, 2, 12, true, true, 0, 200, 10},
        {"update_limit_pos", 2, 0, 0, 0, 0, 0, -5, 5, -2.5f, 2.5f, 20, true, false, 1, 200, 10},
        {"update_limit_neg", -2, 0, 0, 0, 0, 0, -5, 5, -2.5f, 2.5f, 20, false, false, -1, 200, 10},
        {"vmax0_one_sided", 10, 0, 0, 0, 1, 0, -5, 0, -2, 2, 10, false, false, 0, 200, 10},
        {"long_step_from_rest", 10, 0, 0, 0, 0, 0, -5, 5, -2.5f, 2.5f, 10, true, false, 0, 3200, 100},
        {"long_moving_away_asym", -3, 0, 0, 0, 4, 0, -6, 6, -1, 3, 5, false, false, 0, 3200, 100},
    };
    for (const Seq1 &q : seqs) {
        postype_t tp = q.tp, pos = q.pos;
        float tv = q.tv, ta = q.ta, vel = q.vel, accel = q.accel;
        long ierr = 0;
        for (int step = 0; step <= q.steps; step++) {
            if (step > 0) {
                ierr_mark();
                if (q.moves) {
                    update_pos_vel_accel(tp, tv, ta, SEQ_DT, 0, 0, 0);
                }
                shape_pos_vel_accel(tp, tv, ta, pos, vel, accel, q.vmin, q.vmax, q.amin, q.amax, q.jerk, SEQ_DT, q.lt);
                const float perr = (q.limit != 0) ? (float)(tp - pos) : 0.0f;
                const float verr = (q.limit != 0) ? tv - vel : 0.0f;
                update_pos_vel_accel(pos, vel, accel, SEQ_DT, q.limit, perr, verr);
                ierr += ierr_count();
            }
            if (step % q.every == 0) {
                S(q.name); I(step); F(SEQ_DT); F(q.vmin); F(q.vmax); F(q.amin); F(q.amax); F(q.jerk); B(q.lt); B(q.moves); F(q.limit);
                D(tp); F(tv); F(ta); D(pos); F(vel); F(accel); I(ierr); end_row();
            }
        }
    }
    close_csv();
}

struct Seq2 {
    const char *name;
    Vector2p tp; Vector2f tv, ta;
    Vector2p pos; Vector2f vel, accel;
    float vmax, amax, jerk;
    bool lt, moves;
    Vector2f limit;
    int steps, every;
};

static void gen_seq_pos_xy(const char *dir)
{
    open_csv(dir, "seq_shape_pos_vel_accel_xy.csv",
             "seq,step,dt,vel_max,accel_max,jerk_max,limit_total,target_moves,update_limit_x,update_limit_y,"
             "target_pos_x,target_pos_y,target_vel_x,target_vel_y,target_accel_x,target_accel_y,"
             "pos_x,pos_y,vel_x,vel_y,accel_x,accel_y,ierr");
    const Seq2 seqs[] = {
        {"step_from_rest", Vector2p(10, 5), Vector2f(0, 0), Vector2f(0, 0), Vector2p(0, 0), Vector2f(0, 0), Vector2f(0, 0), 5, 2.5f, 10, true, false, Vector2f(0, 0), 200, 10},
        {"moving_target", Vector2p(5, -5), Vector2f(2, -1), Vector2f(0, 0), Vector2p(0, 0), Vector2f(0, 3), Vector2f(0, 0), 4, 2, 8, true, true, Vector2f(0, 0), 200, 10},
        {"turn_no_total_limit", Vector2p(0, 20), Vector2f(0, 0), Vector2f(0, 0), Vector2p(0, 0), Vector2f(4, 0), Vector2f(0, 0), 5, 2, 10, false, false, Vector2f(0, 0), 200, 10},
        {"big_pos_accel_target", Vector2p(atof("100000.25"), atof("-50000.75")), Vector2f(1, 1), Vector2f(0.5f, -0.25f), Vector2p(atof("99999.5"), atof("-50001.5")), Vector2f(0, 0), Vector2f(0, 0), 3, 2, 12, true, true, Vector2f(0, 0), 200, 10},
        {"vmax0", Vector2p(30, -40), Vector2f(0, 0), Vector2f(0, 0), Vector2p(0, 0), Vector2f(0, 0), Vector2f(0, 0), 0, 3, 15, true, false, Vector2f(0, 0), 200, 10},
        {"update_limit", Vector2p(2, 1), Vector2f(0, 0), Vector2f(0, 0), Vector2p(0, 0), Vector2f(0, 0), Vector2f(0, 0), 5, 2.5f, 20, true, false, Vector2f(1, 0), 200, 10},
        {"long_turn", Vector2p(0, 20), Vector2f(0, 0), Vector2f(0, 0), Vector2p(0, 0), Vector2f(4, 0), Vector2f(0, 0), 5, 2, 10, true, false, Vector2f(0, 0), 4000, 100},
        {"long_moving_target", Vector2p(5, -5), Vector2f(2, -1), Vector2f(0, 0), Vector2p(0, 0), Vector2f(0, 3), Vector2f(0, 0), 4, 2, 8, true, true, Vector2f(0, 0), 4000, 100},
    };
    for (const Seq2 &q : seqs) {
        Vector2p tp = q.tp, pos = q.pos;
        Vector2f tv = q.tv, ta = q.ta, vel = q.vel, accel = q.accel;
        long ierr = 0;
        for (int step = 0; step <= q.steps; step++) {
            if (step > 0) {
                ierr_mark();
                if (q.moves) {
                    update_pos_vel_accel_xy(tp, tv, ta, SEQ_DT, Vector2f(0, 0), Vector2f(0, 0), Vector2f(0, 0));
                }
                shape_pos_vel_accel_xy(tp, tv, ta, pos, vel, accel, q.vmax, q.amax, q.jerk, SEQ_DT, q.lt);
                const bool lim = !q.limit.is_zero();
                const Vector2f perr = lim ? (tp - pos).tofloat() : Vector2f(0, 0);
                const Vector2f verr = lim ? tv - vel : Vector2f(0, 0);
                update_pos_vel_accel_xy(pos, vel, accel, SEQ_DT, q.limit, perr, verr);
                ierr += ierr_count();
            }
            if (step % q.every == 0) {
                S(q.name); I(step); F(SEQ_DT); F(q.vmax); F(q.amax); F(q.jerk); B(q.lt); B(q.moves); V2(q.limit);
                V2p(tp); V2(tv); V2(ta); V2p(pos); V2(vel); V2(accel); I(ierr); end_row();
            }
        }
    }
    close_csv();
}

static void gen_seq_vel(const char *dir)
{
    open_csv(dir, "seq_shape_vel_accel.csv",
             "seq,step,dt,accel_min,accel_max,jerk_max,limit_total_accel,target_vel,target_accel,vel,accel,ierr");
    struct Q { const char *name; float tv, ta, vel, accel, amin, amax, jerk; bool lt; };
    const Q seqs[] = {
        {"from_rest", 5, 0, 0, 0, -2, 2, 8, false},
        {"reverse_asym_ff_total", -3, 0.5f, 4, 0, -1, 3, 10, true},
        {"reverse_asym_ff_no_total", -3, 0.5f, 4, 0, -1, 3, 10, false},
        {"small_step_high_jerk", 0.05f, 0, 0, 1, -2, 2, 50, false},
    };
    for (const Q &q : seqs) {
        float vel = q.vel, accel = q.accel;
        long ierr = 0;
        for (int step = 0; step <= SEQ_STEPS; step++) {
            if (step > 0) {
                ierr_mark();
                shape_vel_accel(q.tv, q.ta, vel, accel, q.amin, q.amax, q.jerk, SEQ_DT, q.lt);
                update_vel_accel(vel, accel, SEQ_DT, 0, 0);
                ierr += ierr_count();
            }
            if (step % SEQ_EVERY == 0) {
                S(q.name); I(step); F(SEQ_DT); F(q.amin); F(q.amax); F(q.jerk); B(q.lt); F(q.tv); F(q.ta); F(vel); F(accel); I(ierr); end_row();
            }
        }
    }
    close_csv();

    open_csv(dir, "seq_shape_vel_accel_xy.csv",
             "seq,step,dt,accel_max,jerk_max,limit_total_accel,target_vel_x,target_vel_y,target_accel_x,target_accel_y,vel_x,vel_y,accel_x,accel_y,ierr");
    struct Q2 { const char *name; Vector2f tv, ta, vel, accel; float amax, jerk; bool lt; };
    const Q2 seqs2[] = {
        {"from_rest", Vector2f(3, 4), Vector2f(0, 0), Vector2f(0, 0), Vector2f(0, 0), 2, 5, false},
        {"turn_90", Vector2f(0, 4), Vector2f(0, 0), Vector2f(4, 0), Vector2f(0, 0), 2, 10, false},
        {"turn_90_ff_total", Vector2f(0, 4), Vector2f(1, 1), Vector2f(4, 0), Vector2f(0, 0), 2, 10, true},
        {"stop", Vector2f(0, 0), Vector2f(0, 0), Vector2f(-3, 2), Vector2f(1, 0), 2.5f, 12, false},
    };
    for (const Q2 &q : seqs2) {
        Vector2f vel = q.vel, accel = q.accel;
        long ierr = 0;
        for (int step = 0; step <= SEQ_STEPS; step++) {
            if (step > 0) {
                ierr_mark();
                shape_vel_accel_xy(q.tv, q.ta, vel, accel, q.amax, q.jerk, SEQ_DT, q.lt);
                update_vel_accel_xy(vel, accel, SEQ_DT, Vector2f(0, 0), Vector2f(0, 0));
                ierr += ierr_count();
            }
            if (step % SEQ_EVERY == 0) {
                S(q.name); I(step); F(SEQ_DT); F(q.amax); F(q.jerk); B(q.lt); V2(q.tv); V2(q.ta); V2(vel); V2(accel); I(ierr); end_row();
            }
        }
    }
    close_csv();
}

int main(int argc, char **argv)
{
    const char *dir = (argc > 1) ? argv[1] : "out";
    gen_sqrt_controller(dir);
    gen_sqrt_controller_xy(dir);
    gen_inv(dir);
    gen_kin(dir);
    gen_uva(dir);
    gen_uvaxy(dir);
    gen_sa(dir);
    gen_sva(dir);
    gen_spva(dir);
    gen_lax(dir);
    gen_seq_pos(dir);
    gen_seq_pos_xy(dir);
    gen_seq_vel(dir);
    return 0;
}
