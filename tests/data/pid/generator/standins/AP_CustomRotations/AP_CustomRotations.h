// Stand-in for ArduPilot's AP_CustomRotations/AP_CustomRotations.h: custom
// rotations are disabled (only Vector3::rotate() refers to them; not used here).
#pragma once
#ifndef AP_CUSTOMROTATIONS_ENABLED
#define AP_CUSTOMROTATIONS_ENABLED 0
#endif
