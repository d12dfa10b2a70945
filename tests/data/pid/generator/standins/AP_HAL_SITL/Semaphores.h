// Stand-in for ArduPilot's AP_HAL_SITL/Semaphores.h: AP_HAL/board/sitl.h only
// needs the two names to exist; AP_Math never uses them.
#pragma once
namespace HALSITL {
class Semaphore {};
class BinarySemaphore {};
}
