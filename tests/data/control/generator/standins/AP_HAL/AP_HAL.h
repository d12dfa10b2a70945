// Stand-in for ArduPilot's AP_HAL/AP_HAL.h (mavsitl control.cpp reference build).
// Pulls in only the real board definitions and macros, so the SITL board
// settings (HAL_WITH_EKF_DOUBLE, HAL_WITH_POSTYPE_DOUBLE, ...) apply unchanged.
#pragma once
#include <stdint.h>
#include <AP_HAL/AP_HAL_Boards.h>
#include <AP_HAL/AP_HAL_Macros.h>

// AP_Math.cpp's fill_nanf() calls AP_HAL::panic(); the driver defines it as
// print-and-abort. It is never reached in this build.
namespace AP_HAL {
    void panic(const char *errormsg, ...) __attribute__((noreturn));
}
