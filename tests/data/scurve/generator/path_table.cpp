// SPDX-License-Identifier: GPL-3.0-or-later
//
// mavsitl SCurve::calculate_path reference table.
//
// Calls ArduPilot's own, unmodified SCurve::calculate_path (libraries/AP_Math/
// SCurve.cpp at commit 90700977c553d2dfd95a305acf1c3e098e4d9477, compiled
// separately and linked in; the function is public and static "for the test
// suite") over a grid of snap, jerk, entry speed, acceleration, speed and
// length limits, and writes one CSV row per call: the six inputs, the five
// outputs (Jm, tj, t2, t4, t6), every float printed with %.9g, which gives
// back its exact bits when read, and whether the call raised ArduPilot's
// internal error (its outputs failed their own check and were zeroed).
//
// This program is free software: you can redistribute it and/or modify it under
// the terms of the GNU General Public License as published by the Free Software
// Foundation, either version 3 of the License, or (at your option) any later
// version. It is distributed WITHOUT ANY WARRANTY; see <https://www.gnu.org/licenses/>.
//
// Usage: path_table OUT.csv    (SITL builds print the internal errors on stdout)

#include <AP_Math/AP_Math.h>
#include <AP_InternalError/AP_InternalError.h>
#include <AP_Math/SCurve.h>
#include "program_names.h"

static FILE *out;

static void row(float sm, float jm, float v0, float am, float vm, float l)
{
    float jm_out, tj, t2, t4, t6;
    const uint32_t errors = AP::internalerror().count();
    SCurve::calculate_path(sm, jm, v0, am, vm, l, jm_out, tj, t2, t4, t6);
    const int raised = AP::internalerror().count() != errors;
    fprintf(out, "%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%d\n", sm, jm, v0, am,
            vm, l, jm_out, tj, t2, t4, t6, raised);
}

int main(int argc, char **argv)
{
    if (argc != 2 || (out = fopen(argv[1], "w")) == NULL) {
        fprintf(stderr, "usage: %s OUT.csv\n", argv[0]);
        return 1;
    }
    fprintf(out, "sm,jm,v0,am,vm,l,jm_out,tj,t2,t4,t6,internal_error\n");
    // The grid: rover (AR_WPNAV_SNAP_MAX 15) and copter-like snaps; jerks that
    // make the raised-cosine ramp short or long against the acceleration; entry
    // speeds from rest to above the limit; lengths from a few centimetres,
    // where the length binds, to a long leg, where the speed does.
    const float sms[] = {15.0f, 60.0f};
    const float jms[] = {0.8f, 2.5f, 10.0f};
    const float ams[] = {0.4f, 1.0f, 3.0f};
    const float vms[] = {0.3f, 2.0f, 8.0f};
    const float v0_fracs[] = {0.0f, 0.05f, 0.3f, 0.7f, 0.97f, 1.0f, 1.2f};
    const float ls[] = {0.01f, 0.08f, 0.3f, 1.0f, 4.0f, 20.0f, 200.0f};
    for (float sm : sms)
        for (float jm : jms)
            for (float am : ams)
                for (float vm : vms)
                    for (float f : v0_fracs)
                        for (float l : ls)
                            row(sm, jm, vm * f, am, vm, l);
    // Invalid limits: each zero or negative in turn.
    row(0.0f, 1.0f, 0.0f, 1.0f, 2.0f, 10.0f);
    row(15.0f, -1.0f, 0.0f, 1.0f, 2.0f, 10.0f);
    row(15.0f, 1.0f, 0.0f, 0.0f, 2.0f, 10.0f);
    row(15.0f, 1.0f, 0.0f, 1.0f, -2.0f, 10.0f);
    row(15.0f, 1.0f, 0.0f, 1.0f, 2.0f, 0.0f);
    return fclose(out) == 0 ? 0 : 1;
}
