// Stand-in for ArduPilot's AP_CustomRotations/AP_CustomRotations.h
// (SPDX-License-Identifier: GPL-3.0-or-later): custom rotations disabled
// (only Vector3::rotate() refers to them; not used by SCurve).
#pragma once
#ifndef AP_CUSTOMROTATIONS_ENABLED
#define AP_CUSTOMROTATIONS_ENABLED 0
#endif
