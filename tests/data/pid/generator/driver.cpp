// SPDX-License-Identifier: GPL-3.0-or-later
//
// driver.cpp — mavsitl reference-data driver for ArduPilot's PID building
// blocks: libraries/AC_PID/AC_PID.cpp, AC_PID_2D.cpp, AC_P_2D.cpp and
// libraries/Filter/SlewLimiter.cpp (with LowPassFilter.cpp and the AP_Math
// files they call), compiled unmodified at ArduPilot commit
// 90700977c553d2dfd95a305acf1c3e098e4d9477 for the SITL board.
//
// This program is our own code (not ArduPilot's). It runs fixed sequences of
// calls on each class and writes one CSV row per call, with every input and
// output, into the directory given as argv[1] (default "out").
//
// Number formats: float with %.9g, double with %.17g (both round-trip
// exactly), bool as 0/1. `ierr` is the number of INTERNAL_ERROR()s the call
// raised (stand-in AP_InternalError records them and returns, as the real one
// does in a non-debug SITL build).
//
// THE CLOCK. SlewLimiter::modifier() reads AP_HAL::millis(). Here millis() is
// a simulated clock: a double `g_clock_s` (seconds) that the driver advances
// by (double)dt immediately before every call that runs the limiter
// (SlewLimiter::modifier, AC_PID::update_all), but only if is_positive(dt)
// (dt >= FLT_EPSILON); millis() = (uint32_t)(g_clock_s * 1000.0) (truncation).
// That is exactly the millisecond clock the Rust port keeps inside its
// SlewLimiter (clock_s += f64::from(dt); now_ms = (clock_s * 1000.0) as u32,
// skipped when !is_positive(dt)). Each case starts with the clock at 0 and a
// freshly constructed object.
//
// Objects are allocated with NEW_NOTHROW into zero-filled memory, as ArduPilot's
// AP_Common/c++.cpp operator new does (calloc): AC_PID, AC_PID_2D and
// SlewLimiter leave several members to that zero fill (the SlewLimiter state,
// AC_PID's notch-filter pointers, AC_PID_2D's integrator and PID-info).
//
// To print internal state, this file (only) includes the AC_PID and Filter
// headers with `private`/`protected` defined as `public`; the ArduPilot .cpp
// files are compiled unmodified and separately.
//
// NOTE: compiled with -fsingle-precision-constant like the ArduPilot files,
// so every unsuffixed floating literal below is a float.
//
// This program is free software: you can redistribute it and/or modify it
// under the terms of the GNU General Public License as published by the Free
// Software Foundation, either version 3 of the License, or (at your option)
// any later version.

#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <stdarg.h>
#include <string.h>
#include <math.h>
#include <float.h>
#include <inttypes.h>
#include <cmath>
#include <limits>
#include <new>
#include <string>
#include <type_traits>

#include <AP_HAL/AP_HAL.h>
#include <AP_Common/AP_Common.h>
#include <AP_Math/AP_Math.h>
#include <AP_InternalError/AP_InternalError.h>

#define private public
#define protected public
#include <Filter/LowPassFilter.h>
#include <Filter/SlewLimiter.h>
#include <Filter/NotchFilter.h>
#include <Filter/AP_Filter.h>
#include <AC_PID/AC_PID.h>
#include <AC_PID/AC_PID_2D.h>
#include <AC_PID/AC_P_2D.h>
#undef private
#undef protected

static_assert(sizeof(ftype) == 8, "SITL build: ftype must be double");
static_assert(sizeof(postype_t) == 8, "SITL build: postype_t must be double");
static_assert(sizeof(Vector2p) == 16, "SITL build: Vector2p must be Vector2d");
static_assert(AP_FILTER_ENABLED, "SITL build: AP_FILTER_ENABLED (notch filters compiled in)");

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

// The simulated clock (see THE CLOCK above).
static double g_clock_s;
uint32_t AP_HAL::millis() { return (uint32_t)(g_clock_s * 1000.0); }
uint32_t AP_HAL::micros() { return (uint32_t)(g_clock_s * 1000000.0); }
static void clock_reset() { g_clock_s = 0; }
static void clock_advance(float dt)
{
    if (is_positive(dt)) {
        g_clock_s += (double)dt;
    }
}

// As AP_Common/c++.cpp: every new returns zero-filled memory.
void *operator new(size_t size, std::nothrow_t const &) { return calloc(size < 1 ? 1 : size, 1); }
void *operator new[](size_t size, std::nothrow_t const &) { return calloc(size < 1 ? 1 : size, 1); }
void *operator new(size_t size) { return calloc(size < 1 ? 1 : size, 1); }
void *operator new[](size_t size) { return calloc(size < 1 ? 1 : size, 1); }
void operator delete(void *p) noexcept { if (p) free(p); }
void operator delete[](void *p) noexcept { if (p) free(p); }

// AC_PID.cpp (AP_FILTER_ENABLED, as on SITL) links against the notch filter
// and the AP_Filters singleton. They are reached only when a PID's NTF/NEF
// parameter is non-zero and set_notch_sample_rate() is called; neither happens
// here (NTF = NEF = 0 from the var_info defaults, _target_notch/_error_notch
// stay nullptr from the zero fill). These stubs abort if ever reached.
template <> float NotchFilter<float>::apply(const float &) { AP_HAL::panic("NotchFilter<float>::apply stub reached"); }
template <> void NotchFilter<float>::reset() { AP_HAL::panic("NotchFilter<float>::reset stub reached"); }
AP_Filter *AP_Filters::get_filter(uint8_t) { AP_HAL::panic("AP_Filters::get_filter stub reached"); }
AP_Filters &AP::filters() { AP_HAL::panic("AP::filters stub reached"); }

// ---------------------------------------------------------------------------
// The LCG (Knuth's MMIX constants), as in the control.cpp reference driver:
//   state = state * 6364136223846793005 + 1442695040888963407   (mod 2^64)
//   u = (state >> 11) * 2^-53 ;  rnd(lo, hi) = (float)(lo + (hi - lo) * u)
// The draw and signal functions are noinline (g++ 12.2 -O2 SLP pitfall, see
// README).

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

// pi as a double (a long-double literal is not affected by
// -fsingle-precision-constant).
static const double PI_D = (double)3.141592653589793238462643383279502884L;

// amp * sin(2*pi*hz*t), computed in double, rounded to float.
static NOINLINE float sig_sin(double amp, double hz, double t)
{
    return (float)(amp * sin(2 * PI_D * hz * t));
}
static NOINLINE float sig_cos(double amp, double hz, double t)
{
    return (float)(amp * cos(2 * PI_D * hz * t));
}
// First-order plant: y + (u - y) * a, in float.
static NOINLINE float plant(float y, float u, float a)
{
    return y + (u - y) * a;
}
static NOINLINE float fadd(float a, float b) { return a + b; }

// ---------------------------------------------------------------------------
// CSV output helpers.

static FILE *out;
static std::string row;

static FILE *open_file(const char *dir, const char *name, const char *header)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f == nullptr) {
        perror(path);
        exit(1);
    }
    fprintf(f, "%s\n", header);
    return f;
}

static void app(const char *fmt, ...)
{
    char buf[1024];
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
static void U(unsigned long v) { app("%lu", v); }
static void E() { app("%s", ""); }
static void V2(const Vector2f &v) { F(v.x); F(v.y); }
static void V2p(const Vector2p &v) { D(v.x); D(v.y); }
static void end_row(FILE *f) { fprintf(f, "%s\n", row.c_str()); row.clear(); }

static uint32_t ierr_before;
static void ierr_mark() { ierr_before = AP::internalerror().count(); }
static long ierr_count() { return (long)(AP::internalerror().count() - ierr_before); }

// ===========================================================================
// SlewLimiter

struct SlewCase {
    const char *name;
    float dt;
    int n;
    float smax;
    float tau;
    int kind;       // signal, see slew_sample()
    double clock0;  // simulated clock at construction, s (0 unless given)
};

// Sample generators for the SlewLimiter cases.
enum { SL_RAMP_SLOW, SL_RAMP_FAST, SL_SINE_ABOVE, SL_SINE_BELOW, SL_STEP, SL_SINE_THEN_CALM, SL_SINE_BIG };

static NOINLINE float slew_sample(int kind, int i, double t)
{
    switch (kind) {
    case SL_RAMP_SLOW:      // 8 units/s, then held
        return (float)(t < 1.5 ? 8.0 * t : 12.0);
    case SL_RAMP_FAST:      // 30 units/s one way (one sign of exceedance only)
        return (float)(30.0 * t);
    case SL_SINE_ABOVE:     // 5 Hz, amplitude 1: peak slew 31.4/s
        return sig_sin(1.0, 5.0, t);
    case SL_SINE_BELOW:     // 2 Hz, amplitude 0.2: peak slew 2.5/s
        return sig_sin(0.2, 2.0, t);
    case SL_STEP:           // 0, then 5 from sample 20
        return i < 20 ? 0.0f : 5.0f;
    // SL_SINE_THEN_CALM (3 Hz amplitude 1, peak 18.8/s, for the first half of
    // the case, then 0.05 at 0.5 Hz) needs n: generated in gen_slew().
    case SL_SINE_BIG:       // 8 Hz amplitude 2 (peak 100/s): hits the 10*SMAX cap
        return sig_sin(2.0, 8.0, t);
    }
    return 0.0f;
}

static void gen_slew(const char *dir)
{
    FILE *fc = open_file(dir, "slew_limiter_cases.csv", "case,dt,n,slew_rate_max,slew_rate_tau,clock0_s,signal");
    FILE *f = open_file(dir, "slew_limiter.csv",
                        "case,i,dt,sample,now_ms,modifier,slew_rate,filt,max_pos,max_neg,modifier_slew_rate");
    const SlewCase cases[] = {
        {"ramp_slow_400hz",       0.0025f, 120, 10.0f, 1.0f, SL_RAMP_SLOW},
        {"ramp_fast_400hz",       0.0025f, 260, 10.0f, 1.0f, SL_RAMP_FAST},
        {"sine_above_400hz",      0.0025f, 200, 10.0f, 1.0f, SL_SINE_ABOVE},
        {"step_400hz",            0.0025f,  80, 10.0f, 1.0f, SL_STEP},
        {"sine_above_50hz",       0.02f,   120, 10.0f, 1.0f, SL_SINE_ABOVE},
        {"sine_below_50hz",       0.02f,    80, 10.0f, 1.0f, SL_SINE_BELOW},
        {"ramp_fast_50hz",        0.02f,   100, 10.0f, 1.0f, SL_RAMP_FAST},
        {"step_50hz",             0.02f,    80, 10.0f, 1.0f, SL_STEP},
        {"sine_then_calm_50hz",   0.02f,   200,  5.0f, 1.0f, SL_SINE_THEN_CALM},
        {"sine_above_smax0_50hz", 0.02f,    60,  0.0f, 1.0f, SL_SINE_ABOVE},
        {"sine_above_tau03_50hz", 0.02f,   100, 10.0f, 0.3f, SL_SINE_ABOVE},
        {"sine_big_cap_400hz",    0.0025f, 120,  5.0f, 1.0f, SL_SINE_BIG},
        // The same step as step_50hz, but with millis() already at 5000 ms at
        // the first call, as when a vehicle's PID first runs some time after
        // boot (the zero-filled event times are then older than the window).
        {"step_50hz_clock5s",     0.02f,    80, 10.0f, 1.0f, SL_STEP, 5.0},
    };
    static const char *signal_names[] = {
        "8*t for t<1.5 then 12", "30*t", "sin(2pi*5t)", "0.2*sin(2pi*2t)", "0 for i<20 then 5",
        "sin(2pi*3t) for i<n/2 then 0.05*sin(2pi*0.5t)", "2*sin(2pi*8t)",
    };
    for (const SlewCase &c : cases) {
        row.clear();
        S(c.name); F(c.dt); I(c.n); F(c.smax); F(c.tau); D(c.clock0); S(signal_names[c.kind]); end_row(fc);
        clock_reset();
        g_clock_s = c.clock0;
        // The limiter reads its limits through const float& as in AC_PID.
        float *smax = NEW_NOTHROW float(c.smax);
        float *tau = NEW_NOTHROW float(c.tau);
        SlewLimiter *sl = NEW_NOTHROW SlewLimiter(*smax, *tau);
        for (int i = 0; i < c.n; i++) {
            const double t = i * (double)c.dt;
            float sample;
            if (c.kind == SL_SINE_THEN_CALM) {
                sample = (i < c.n / 2) ? sig_sin(1.0, 3.0, t) : sig_sin(0.05, 0.5, t);
            } else {
                sample = slew_sample(c.kind, i, t);
            }
            // A few zero-dt calls in the step case: modifier returns 1 and
            // changes nothing (the clock does not advance either).
            float dt = c.dt;
            if (c.kind == SL_STEP && (i == 10 || i == 30)) {
                dt = 0.0f;
            }
            clock_advance(dt);
            const float m = sl->modifier(sample, dt);
            S(c.name); I(i); F(dt); F(sample); U(AP_HAL::millis()); F(m); F(sl->get_slew_rate());
            F(sl->slew_filter.get()); F(sl->_max_pos_slew_rate); F(sl->_max_neg_slew_rate);
            F(sl->_modifier_slew_rate);
            end_row(f);
        }
        delete sl;
        delete smax;
        delete tau;
    }
    fclose(f);
    fclose(fc);
}

// ===========================================================================
// AC_PID

struct PidCase {
    const char *name;
    float p, i, d, ff, imax, fltt, flte, fltd, smax, srtau, dff, pdmx;
    float dt;
    int n;
    const char *what;
};

static FILE *fpid;

static void pid_row(AC_PID &pid, const char *cs, int i, const char *op, float target, float meas,
                    float dt, bool limit, float pd_scale, float out, long ierr)
{
    const AP_PIDInfo &info = pid.get_pid_info();
    S(cs); I(i); S(op); F(dt); F(target); F(meas); B(limit); F(pd_scale);
    F(out); F(pid.get_p()); F(pid.get_i()); F(pid.get_d()); F(info.FF); F(info.DFF); F(pid.get_ff());
    F(info.Dmod); F(info.slew_rate); F(info.target); F(info.error);
    B(info.PD_limit); B(info.reset); B(info.I_term_set); U(AP_HAL::millis()); I(ierr);
    end_row(fpid);
}

// One update_all call, printed.
static float pid_step(AC_PID &pid, const char *cs, int i, const char *op, float target, float meas,
                      float dt, bool limit, float pd_scale)
{
    clock_advance(dt);
    ierr_mark();
    const float out = pid.update_all(target, meas, dt, limit, pd_scale);
    const long ierr = ierr_count();
    pid_row(pid, cs, i, op, target, meas, dt, limit, pd_scale, out, ierr);
    return out;
}

static AC_PID *new_pid(const PidCase &c)
{
    AC_PID *pid = NEW_NOTHROW AC_PID(c.p, c.i, c.d, c.ff, c.imax, c.fltt, c.flte, c.fltd, c.smax, c.srtau, c.dff);
    if (c.pdmx != 0) {
        pid->set_pdmax(c.pdmx);
    }
    return pid;
}

static void gen_pid(const char *dir)
{
    FILE *fc = open_file(dir, "ac_pid_cases.csv",
                         "case,kP,kI,kD,kFF,kIMAX,filt_T_hz,filt_E_hz,filt_D_hz,slew_rate_max,slew_rate_tau,kDFF,kPDMX,dt,n,what");
    fpid = open_file(dir, "ac_pid.csv",
                     "case,i,op,dt,target,measurement,limit,pd_scale,out,P,I,D,FF,DFF,get_ff,Dmod,slew_rate,"
                     "target_filt,error,PD_limit,reset,I_term_set,now_ms,ierr");
    const PidCase cases[] = {
        // name                p     i     d     ff    imax fltt flte fltd smax srtau dff  pdmx  dt       n
        {"rover_steer_step",  0.2f, 0.2f, 0.0f, 0.2f, 1.0f, 0, 10, 0, 0, 1, 0, 0, 0.02f, 120,
         "Rover steering-rate defaults; target 0, 1 at i=10, -0.5 at i=70; first-order plant"},
        {"sine_filters_400hz", 1.5f, 0.5f, 0.05f, 0.3f, 2.0f, 5, 10, 20, 0, 1, 0, 0, 0.0025f, 200,
         "target sin(2pi*1.5t); plant + LCG noise; all three filters"},
        {"limit_hold",        0.5f, 1.0f, 0.0f, 0.0f, 10.0f, 0, 0, 0, 0, 1, 0, 0, 0.02f, 150,
         "target 1; meas 0, 2 from i=60, 0 from i=105; limit for 20<=i<80 and i>=105 (integrator crosses zero while limited)"},
        {"imax_clamp",        0.1f, 2.0f, 0.0f, 0.1f, 0.5f, 0, 5, 0, 0, 1, 0, 0, 0.02f, 100,
         "target 1 then -1 at i=50; meas 0; integrator clamps at +-IMAX"},
        {"smax_osc_400hz",    2.0f, 0.0f, 0.05f, 0.0f, 0.0f, 0, 0, 20, 5, 1, 0, 0, 0.0025f, 300,
         "target 0; meas 0.5*sin(2pi*5t) for i<200, then 0.02*sin(2pi*0.5t)"},
        {"smax_osc_50hz",     1.0f, 0.3f, 0.02f, 0.2f, 1.0f, 0, 0, 10, 2, 1, 0, 0, 0.02f, 200,
         "target sin(2pi*0.2t); plant + 0.4*sin(2pi*3t) for 1<=t<2.5 s"},
        {"resets",            0.8f, 0.6f, 0.03f, 0.4f, 1.0f, 8, 15, 12, 10, 1, 0, 0, 0.01f, 200,
         "target 2*sin(2pi*t)+0.5 step at i=100; plant; reset_I at 50, reset_filter at 90, both at 140, reset_filter at 170"},
        {"pdmx_dff_400hz",    3.0f, 0.2f, 0.1f, 0.1f, 0.5f, 20, 0, 30, 0, 1, 0.01f, 0.3f, 0.0025f, 140,
         "PDMX 0.3 and D_FF 0.01 (not in the port); target steps 0,1,-1 and a sine; plant"},
        {"pd_scale",          1.0f, 0.2f, 0.05f, 0.2f, 1.0f, 0, 5, 10, 0, 1, 0, 0, 0.02f, 60,
         "pd_scale 0.5 for 20<=i<40 (not in the port); target 1; plant"},
        {"dt_edge",           1.0f, 1.0f, 0.1f, 0.2f, 2.0f, 5, 5, 5, 3, 1, 0, 0, 0.02f, 80,
         "LCG targets/measurements; dt 0 every 10th call, 1e-8 every 15th, else LCG pick of 0.0025/0.02/0.1"},
        {"dt_tiny_nofilt",    1.0f, 1.0f, 0.1f, 0.2f, 2.0f, 0, 0, 0, 0, 1, 0, 0, 0.02f, 30,
         "no filters; LCG targets; dt 1e-8 (< FLT_EPSILON) every 5th call, 0 every 7th, else 0.02"},
    };
    for (const PidCase &c : cases) {
        row.clear();
        S(c.name); F(c.p); F(c.i); F(c.d); F(c.ff); F(c.imax); F(c.fltt); F(c.flte); F(c.fltd);
        F(c.smax); F(c.srtau); F(c.dff); F(c.pdmx); F(c.dt); I(c.n); app("\"%s\"", c.what); end_row(fc);
        clock_reset();
        AC_PID *pid = new_pid(c);
        const char *cs = c.name;
        float meas = 0.0f;
        float out = 0.0f;
        const float dt = c.dt;
        if (!strcmp(cs, "rover_steer_step")) {
            for (int i = 0; i < c.n; i++) {
                const float target = i < 10 ? 0.0f : (i < 70 ? 1.0f : -0.5f);
                out = pid_step(*pid, cs, i, "", target, meas, dt, false, 1.0f);
                meas = plant(meas, 2.0f * fadd(out, pid->get_ff()), 0.15f);
            }
        } else if (!strcmp(cs, "sine_filters_400hz")) {
            lcg_seed(101);
            for (int i = 0; i < c.n; i++) {
                const double t = i * (double)dt;
                const float target = sig_sin(1.0, 1.5, t);
                const float noise = rnd(-0.02, 0.02);
                out = pid_step(*pid, cs, i, "", target, fadd(meas, noise), dt, false, 1.0f);
                meas = plant(meas, fadd(out, pid->get_ff()), 0.02f);
            }
        } else if (!strcmp(cs, "limit_hold")) {
            for (int i = 0; i < c.n; i++) {
                const float m = i < 60 ? 0.0f : (i < 105 ? 2.0f : 0.0f);
                const bool limit = (i >= 20 && i < 80) || i >= 105;
                pid_step(*pid, cs, i, "", 1.0f, m, dt, limit, 1.0f);
            }
        } else if (!strcmp(cs, "imax_clamp")) {
            for (int i = 0; i < c.n; i++) {
                pid_step(*pid, cs, i, "", i < 50 ? 1.0f : -1.0f, 0.0f, dt, false, 1.0f);
            }
        } else if (!strcmp(cs, "smax_osc_400hz")) {
            for (int i = 0; i < c.n; i++) {
                const double t = i * (double)dt;
                const float m = i < 200 ? sig_sin(0.5, 5.0, t) : sig_sin(0.02, 0.5, t);
                pid_step(*pid, cs, i, "", 0.0f, m, dt, false, 1.0f);
            }
        } else if (!strcmp(cs, "smax_osc_50hz")) {
            for (int i = 0; i < c.n; i++) {
                const double t = i * (double)dt;
                const float target = sig_sin(1.0, 0.2, t);
                const float osc = (t >= 1.0 && t < 2.5) ? sig_sin(0.4, 3.0, t) : 0.0f;
                out = pid_step(*pid, cs, i, "", target, fadd(meas, osc), dt, false, 1.0f);
                meas = plant(meas, fadd(out, pid->get_ff()), 0.2f);
            }
        } else if (!strcmp(cs, "resets")) {
            for (int i = 0; i < c.n; i++) {
                const double t = i * (double)dt;
                const float target = fadd(sig_sin(2.0, 1.0, t), i >= 100 ? 0.5f : 0.0f);
                const char *op = "";
                if (i == 50) { pid->reset_I(); op = "reset_I"; }
                if (i == 90) { pid->reset_filter(); op = "reset_filter"; }
                if (i == 140) { pid->reset_I(); pid->reset_filter(); op = "reset_I+reset_filter"; }
                if (i == 170) { pid->reset_filter(); op = "reset_filter"; }
                out = pid_step(*pid, cs, i, op, target, meas, dt, false, 1.0f);
                meas = plant(meas, fadd(out, pid->get_ff()), 0.1f);
            }
        } else if (!strcmp(cs, "pdmx_dff_400hz")) {
            for (int i = 0; i < c.n; i++) {
                const double t = i * (double)dt;
                const float target = i < 20 ? 0.0f : (i < 60 ? 1.0f : (i < 100 ? -1.0f : sig_sin(0.8, 4.0, t)));
                out = pid_step(*pid, cs, i, "", target, meas, dt, false, 1.0f);
                meas = plant(meas, fadd(out, pid->get_ff()), 0.05f);
            }
        } else if (!strcmp(cs, "pd_scale")) {
            for (int i = 0; i < c.n; i++) {
                const float pd_scale = (i >= 20 && i < 40) ? 0.5f : 1.0f;
                out = pid_step(*pid, cs, i, "", 1.0f, meas, dt, false, pd_scale);
                meas = plant(meas, fadd(out, pid->get_ff()), 0.1f);
            }
        } else if (!strcmp(cs, "dt_edge")) {
            lcg_seed(102);
            static const float DTS[3] = {0.0025f, 0.02f, 0.1f};
            for (int i = 0; i < c.n; i++) {
                const float target = rnd(-2, 2);
                const float m = rnd(-2, 2);
                const bool limit = (lcg_next() >> 33) % 4 == 0;
                float d = DTS[(lcg_next() >> 33) % 3];
                if (i % 10 == 9) {
                    d = 0.0f;
                } else if (i % 15 == 14) {
                    d = 1e-8f;
                }
                pid_step(*pid, cs, i, "", target, m, d, limit, 1.0f);
            }
        } else if (!strcmp(cs, "dt_tiny_nofilt")) {
            lcg_seed(103);
            for (int i = 0; i < c.n; i++) {
                const float target = rnd(-2, 2);
                const float m = rnd(-2, 2);
                float d = dt;
                if (i % 5 == 4) {
                    d = 1e-8f;
                } else if (i % 7 == 6) {
                    d = 0.0f;
                }
                pid_step(*pid, cs, i, "", target, m, d, false, 1.0f);
            }
        }
        delete pid;
    }
    fclose(fpid);
    fclose(fc);
}

// ===========================================================================
// AC_PID_2D

struct Pid2Case {
    const char *name;
    float p, i, d, ff, imax, flte, fltd;
    float dt;
    int n;
    const char *what;
};

static FILE *fpid2;

static Vector2f pid2_step(AC_PID_2D &pid, const char *cs, int i, const char *op, const Vector2f *set_i,
                          const Vector2f &target, const Vector2f &meas, float dt, const Vector2f &limit)
{
    ierr_mark();
    const Vector2f out = pid.update_all(target, meas, dt, limit);
    const long ierr = ierr_count();
    S(cs); I(i); S(op);
    if (set_i != nullptr) { V2(*set_i); } else { E(); E(); }
    F(dt); V2(target); V2(meas); V2(limit);
    V2(out); V2(pid.get_p()); V2(pid.get_i()); V2(pid.get_d()); V2(pid.get_ff()); V2(pid.get_error());
    B(pid.get_pid_info_x().limit); I(ierr);
    end_row(fpid2);
    return out;
}

static void gen_pid2(const char *dir)
{
    FILE *fc = open_file(dir, "ac_pid_2d_cases.csv", "case,kP,kI,kD,kFF,kIMAX,filt_E_hz,filt_D_hz,dt,n,what");
    fpid2 = open_file(dir, "ac_pid_2d.csv",
                      "case,i,op,set_i_x,set_i_y,dt,target_x,target_y,meas_x,meas_y,limit_x,limit_y,"
                      "out_x,out_y,p_x,p_y,i_x,i_y,d_x,d_y,ff_x,ff_y,error_x,error_y,"
                      "i_limited,ierr");
    const Pid2Case cases[] = {
        {"step_plant",      1.0f, 0.5f, 0.05f, 0.2f, 1.0f, 5, 5, 0.02f, 80,
         "target (1,0.5) from i=5, (-0.5,1) from i=40; meas = plant of out"},
        {"circle_400hz",    2.0f, 1.0f, 0.1f, 0.0f, 2.0f, 10, 20, 0.0025f, 120,
         "target 2*(cos,sin)(2pi*1t); plant + LCG noise"},
        {"limit_hold",      0.0f, 1.0f, 0.0f, 0.0f, 10.0f, 0, 0, 0.05f, 80,
         "I only: build along +x; limit (1,0) with error (1,1); error (-1,0); limit (0,-1) with error (0.5,-2); free (5,5) to IMAX"},
        {"imax",            0.5f, 3.0f, 0.0f, 0.1f, 0.8f, 2, 0, 0.02f, 60,
         "target (2,-1) then (-3,0.5) at i=30; meas 0"},
        {"resets",          0.7f, 0.4f, 0.08f, 0.3f, 1.5f, 8, 12, 0.01f, 90,
         "rotating target; plant; reset_I at 30, reset_filter at 50, both at 70"},
        {"set_integrator",  0.6f, 0.8f, 0.05f, 0.2f, 1.0f, 5, 5, 0.02f, 70,
         "AR_PosControl style: before each call set_integrator(lateral part of I) with yaw 0.02*i; limit along +lateral for 20<=i<45"},
        {"dt_edge",         1.0f, 1.0f, 0.1f, 0.2f, 2.0f, 5, 5, 0.02f, 40,
         "LCG vectors; dt 0 every 10th call, 1e-8 every 15th"},
    };
    for (const Pid2Case &c : cases) {
        row.clear();
        S(c.name); F(c.p); F(c.i); F(c.d); F(c.ff); F(c.imax); F(c.flte); F(c.fltd); F(c.dt); I(c.n);
        app("\"%s\"", c.what); end_row(fc);
        AC_PID_2D *pid = NEW_NOTHROW AC_PID_2D(c.p, c.i, c.d, c.ff, c.imax, c.flte, c.fltd);
        const char *cs = c.name;
        const float dt = c.dt;
        Vector2f meas;
        const Vector2f zero;
        if (!strcmp(cs, "step_plant")) {
            for (int i = 0; i < c.n; i++) {
                const Vector2f target = i < 5 ? Vector2f() : (i < 40 ? Vector2f(1.0f, 0.5f) : Vector2f(-0.5f, 1.0f));
                const Vector2f out = pid2_step(*pid, cs, i, "", nullptr, target, meas, dt, zero);
                meas = Vector2f(plant(meas.x, out.x, 0.1f), plant(meas.y, out.y, 0.1f));
            }
        } else if (!strcmp(cs, "circle_400hz")) {
            lcg_seed(201);
            for (int i = 0; i < c.n; i++) {
                const double t = i * (double)dt;
                const Vector2f target(sig_cos(2.0, 1.0, t), sig_sin(2.0, 1.0, t));
                const float nx = rnd(-0.01, 0.01);
                const float ny = rnd(-0.01, 0.01);
                const Vector2f m(fadd(meas.x, nx), fadd(meas.y, ny));
                const Vector2f out = pid2_step(*pid, cs, i, "", nullptr, target, m, dt, zero);
                meas = Vector2f(plant(meas.x, out.x, 0.02f), plant(meas.y, out.y, 0.02f));
            }
        } else if (!strcmp(cs, "limit_hold")) {
            for (int i = 0; i < c.n; i++) {
                Vector2f target, limit;
                if (i < 20) { target = Vector2f(1, 0); }
                else if (i < 40) { target = Vector2f(1, 1); limit = Vector2f(1, 0); }
                else if (i < 50) { target = Vector2f(-1, 0); limit = Vector2f(1, 0); }
                else if (i < 65) { target = Vector2f(0.5f, -2); limit = Vector2f(0, -1); }
                else { target = Vector2f(5, 5); }
                pid2_step(*pid, cs, i, "", nullptr, target, zero, dt, limit);
            }
        } else if (!strcmp(cs, "imax")) {
            for (int i = 0; i < c.n; i++) {
                pid2_step(*pid, cs, i, "", nullptr, i < 30 ? Vector2f(2, -1) : Vector2f(-3, 0.5f), zero, dt, zero);
            }
        } else if (!strcmp(cs, "resets")) {
            for (int i = 0; i < c.n; i++) {
                const double t = i * (double)dt;
                const Vector2f target(sig_cos(1.5, 0.5, t), sig_sin(1.0, 0.5, t));
                const char *op = "";
                if (i == 30) { pid->reset_I(); op = "reset_I"; }
                if (i == 50) { pid->reset_filter(); op = "reset_filter"; }
                if (i == 70) { pid->reset_I(); pid->reset_filter(); op = "reset_I+reset_filter"; }
                const Vector2f out = pid2_step(*pid, cs, i, op, nullptr, target, meas, dt, zero);
                const Vector2f ff = pid->get_ff();
                meas = Vector2f(plant(meas.x, fadd(out.x, ff.x), 0.1f), plant(meas.y, fadd(out.y, ff.y), 0.1f));
            }
        } else if (!strcmp(cs, "set_integrator")) {
            for (int i = 0; i < c.n; i++) {
                const double yaw = 0.02 * i;
                const Vector2f right_ef((float)-sin(yaw), (float)cos(yaw));
                Vector2f si = right_ef * (pid->get_i() * right_ef);
                pid->set_integrator(si);
                const Vector2f target(1.0f, sig_sin(0.5, 0.3, i * (double)dt));
                const Vector2f limit = (i >= 20 && i < 45) ? right_ef : Vector2f();
                const Vector2f out = pid2_step(*pid, cs, i, "set_integrator", &si, target, meas, dt, limit);
                meas = Vector2f(plant(meas.x, out.x, 0.1f), plant(meas.y, out.y, 0.1f));
            }
        } else if (!strcmp(cs, "dt_edge")) {
            lcg_seed(202);
            static const float DTS[3] = {0.0025f, 0.02f, 0.1f};
            for (int i = 0; i < c.n; i++) {
                const float tx = rnd(-2, 2), ty = rnd(-2, 2), mx = rnd(-2, 2), my = rnd(-2, 2);
                const float lx = rnd(-1, 1), ly = rnd(-1, 1);
                float d = DTS[(lcg_next() >> 33) % 3];
                if (i % 10 == 9) {
                    d = 0.0f;
                } else if (i % 15 == 14) {
                    d = 1e-8f;
                }
                pid2_step(*pid, cs, i, "", nullptr, Vector2f(tx, ty), Vector2f(mx, my), d, Vector2f(lx, ly));
            }
        }
        delete pid;
    }
    fclose(fpid2);
    fclose(fc);
}

// ===========================================================================
// AC_P_2D

struct P2Case {
    const char *name;
    float kp, output_max, d1_max, d2_max;
    float error_max_call;   // > 0: set_error_max() after set_limits() (not in the port)
    int n;
    const char *what;
};

static void gen_p2(const char *dir)
{
    FILE *fc = open_file(dir, "ac_p_2d_cases.csv", "case,kP,output_max,D_Out_max,D2_Out_max,set_error_max,n,what");
    FILE *f = open_file(dir, "ac_p_2d.csv",
                        "case,i,target_in_x,target_in_y,meas_x,meas_y,target_out_x,target_out_y,out_x,out_y,"
                        "error_x,error_y,error_max,D1_max,ierr");
    const P2Case cases[] = {
        {"rover_limits",   0.2f, 2.0f, 1.0f, 0.0f, 0, 40, "AR_PosControl style set_limits(speed 2, accel 1, 0)"},
        {"no_limits",      0.5f, 0.0f, 0.0f, 0.0f, 0, 35, "set_limits(0,0,0): pure P, no error limit"},
        {"d1_only",        1.0f, 0.0f, 2.0f, 0.0f, 0, 35, "set_limits(0, 2, 0): sqrt region, no error limit"},
        {"kp0",            0.0f, 3.0f, 1.5f, 0.0f, 0, 35, "kP 0: pure sqrt; output_max ignored for the error limit"},
        {"d2_limit",       0.8f, 3.0f, 5.0f, 1.0f, 0, 35, "set_limits(3, 5, 1): D1 = min(5, 1/kP)"},
        {"set_error_max",  0.4f, 4.0f, 2.0f, 0.0f, 1.5f, 35, "set_limits(4,2,0) then set_error_max(1.5) (not in the port)"},
        {"far_positions",  0.3f, 5.0f, 2.5f, 4.0f, 0, 40, "positions ~1e5..1e6 m (double), errors up to 1e3 m"},
    };
    int cidx = 0;
    for (const P2Case &c : cases) {
        row.clear();
        S(c.name); F(c.kp); F(c.output_max); F(c.d1_max); F(c.d2_max); F(c.error_max_call); I(c.n);
        app("\"%s\"", c.what); end_row(fc);
        AC_P_2D *p = NEW_NOTHROW AC_P_2D(c.kp);
        p->set_limits(c.output_max, c.d1_max, c.d2_max);
        if (c.error_max_call > 0) {
            p->set_error_max(c.error_max_call);
        }
        lcg_seed(300 + cidx++);
        const bool far = !strcmp(c.name, "far_positions");
        for (int i = 0; i < c.n; i++) {
            Vector2p meas, target;
            if (far) {
                meas = Vector2p(rndd(1e5, 1e6), rndd(-1e6, -1e5));
                const double r = (i % 3 == 0) ? rndd(0, 1e3) : rndd(0, 5);
                const double a = rndd(-PI_D, PI_D);
                target = Vector2p(meas.x + r * cos(a), meas.y + r * sin(a));
            } else {
                meas = Vector2p(rndd(-50, 50), rndd(-50, 50));
                // error length: a mix of tiny, linear-region, sqrt-region and far errors
                double r;
                switch (i % 5) {
                case 0: r = rndd(0, 1e-6); break;
                case 1: r = rndd(0, 0.5); break;
                case 2: r = rndd(0.5, 5); break;
                case 3: r = rndd(5, 50); break;
                default: r = rndd(50, 500); break;
                }
                const double a = rndd(-PI_D, PI_D);
                target = Vector2p(meas.x + r * cos(a), meas.y + r * sin(a));
            }
            if (i == 0) {
                target = meas;   // zero error
            }
            const Vector2p target_in = target;
            ierr_mark();
            const Vector2f out = p->update_all(target, meas);
            const long ierr = ierr_count();
            S(c.name); I(i); V2p(target_in); V2p(meas); V2p(target); V2(out); V2(p->get_error());
            F(p->get_error_max()); F(p->_D1_max); I(ierr);
            end_row(f);
        }
        delete p;
    }
    fclose(f);
    fclose(fc);
}

int main(int argc, char **argv)
{
    const char *dir = (argc > 1) ? argv[1] : "out";
    gen_slew(dir);
    gen_pid(dir);
    gen_pid2(dir);
    gen_p2(dir);
    return 0;
}
