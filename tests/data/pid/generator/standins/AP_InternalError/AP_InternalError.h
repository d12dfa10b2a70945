// Stand-in for ArduPilot's AP_InternalError/AP_InternalError.h.
// Same interface as the real one for the names AP_Math uses. Like the real
// AP_InternalError::error() in a non-debug SITL build (which panics only when
// HAL_DEBUG_BUILD is defined), error() records the error and returns, so the
// function that raised it continues exactly as in the firmware. The driver
// reads count() before and after each call to report whether one was raised.
#pragma once
#include <stdint.h>
#ifndef AP_INTERNALERROR_ENABLED
#define AP_INTERNALERROR_ENABLED 1
#endif
class AP_InternalError {
public:
    enum class error_t : uint32_t {
        constraining_nan      = (1U << 10),
        bad_rotation          = (1U << 22),
        invalid_arg_or_result = (1U << 29),
    };
    void error(const error_t e, uint16_t line) {
        internal_errors |= uint32_t(e);
        total_error_count++;
        last_line = line;
    }
    uint32_t count() const { return total_error_count; }
    uint32_t errors() const { return internal_errors; }
    uint16_t last_error_line() const { return last_line; }
private:
    uint32_t internal_errors;
    uint32_t total_error_count;
    uint16_t last_line;
};
namespace AP {
    AP_InternalError &internalerror();
};
#define INTERNAL_ERROR(error_number) \
    AP::internalerror().error(error_number, __AP_LINE__);
