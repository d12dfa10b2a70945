// Stand-in for ArduPilot's AP_InternalError/AP_InternalError.h
// (SPDX-License-Identifier: GPL-3.0-or-later).
// As the real AP_InternalError::error() in a SITL build without HAL_DEBUG_BUILD,
// error() records the error and returns, so the raising function carries on as
// in the firmware. The driver checks count() and reports any error raised.
#pragma once
#include <stdint.h>
#ifndef AP_INTERNALERROR_ENABLED
#define AP_INTERNALERROR_ENABLED 1   // as AP_InternalError_config.h's default
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
