// Stand-in for ArduPilot's AP_HAL/AP_HAL.h, for the mavsitl SCurve reference
// driver only (SPDX-License-Identifier: GPL-3.0-or-later).
// It pulls in only the real board definitions and macros, so the SITL board
// settings (HAL_WITH_EKF_DOUBLE -> ftype double, ALLOW_DOUBLE_MATH_FUNCTIONS)
// apply unchanged, and declares the AP_HAL names the compiled files refer to.
#pragma once
#include <stdint.h>
#include <AP_HAL/AP_HAL_Boards.h>
#include <AP_HAL/AP_HAL_Macros.h>

namespace AP_HAL {
    class HAL;   // SCurve.cpp: `extern const AP_HAL::HAL &hal;` (never used)
    // AP_Math.cpp's fill_nanf(): the driver defines it as print-and-abort; never reached.
    void panic(const char *errormsg, ...) __attribute__((noreturn));
}
