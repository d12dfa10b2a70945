// SPDX-License-Identifier: GPL-3.0-or-later
//
// The two names the stand-in headers leave to each generator program: the
// internal-error singleton and AP_HAL::panic. Include once, from the
// program's own source file.
#pragma once
#include <AP_HAL/AP_HAL.h>
#include <AP_InternalError/AP_InternalError.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static AP_InternalError internal_error_singleton;
AP_InternalError &AP::internalerror() { return internal_error_singleton; }
void AP_HAL::panic(const char *errormsg, ...)
{
    va_list ap;
    va_start(ap, errormsg);
    vfprintf(stderr, errormsg, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    abort();
}
