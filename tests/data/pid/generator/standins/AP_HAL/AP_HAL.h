// Stand-in for ArduPilot's AP_HAL/AP_HAL.h, for the mavsitl AC_PID/SlewLimiter
// reference driver only (SPDX-License-Identifier: GPL-3.0-or-later).
// Pulls in only the real board definitions and macros, so the SITL board
// settings (HAL_WITH_EKF_DOUBLE, HAL_WITH_POSTYPE_DOUBLE, HAL_PROGRAM_SIZE_LIMIT_KB,
// ...) apply unchanged, and declares the AP_HAL names the compiled files use.
#pragma once
#include <stdint.h>
#include <AP_HAL/AP_HAL_Boards.h>
#include <AP_HAL/AP_HAL_Macros.h>

namespace AP_HAL {
    // AP_Math.cpp's fill_nanf() calls panic(); the driver defines it as
    // print-and-abort. It is never reached in this build.
    void panic(const char *errormsg, ...) __attribute__((noreturn));
    // SlewLimiter::modifier() reads millis(). The driver defines both from its
    // simulated clock (see clock.h / README: "The clock rule"); they do not
    // read the wall clock.
    uint32_t millis();
    uint32_t micros();
}
