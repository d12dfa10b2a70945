// Stand-in for ArduPilot's AP_Param/AP_Param.h: only the names AP_Math.h refers
// to (AP_Float in a static_assert, the AP_PARAMDEFV macro).
#pragma once
class AP_Float {
public:
    operator float() const { return _value; }
private:
    float _value;
};
#define AP_PARAMDEFV(_t, _suffix, _pt) typedef _t AP_ ## _suffix;
