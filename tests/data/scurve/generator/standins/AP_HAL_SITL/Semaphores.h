// Stand-in for ArduPilot's AP_HAL_SITL/Semaphores.h (SPDX-License-Identifier: GPL-3.0-or-later):
// AP_HAL/board/sitl.h only needs the two names to exist; AP_Math never uses them.
#pragma once
namespace HALSITL {
class Semaphore {};
class BinarySemaphore {};
}
