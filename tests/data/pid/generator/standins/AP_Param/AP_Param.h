// Stand-in for ArduPilot's AP_Param/AP_Param.h, for the mavsitl AC_PID
// reference driver only (SPDX-License-Identifier: GPL-3.0-or-later).
//
// What it keeps from the real header at commit 90700977 (same names, same
// semantics for what the compiled files use):
//  - enum ap_var_type, AP_PARAM_FLAG_DEFAULT_POINTER, struct AP_Param::GroupInfo
//    and the AP_GROUPINFO / AP_GROUPINFO_FLAGS_DEFAULT_POINTER / AP_GROUPEND
//    macros, so the var_info[] tables in AC_PID*.cpp / AC_P_2D.cpp compile as is;
//  - AP_Param::setup_object_defaults(), as the real one: for every scalar
//    entry it sets the parameter to its default (read through the default
//    pointer for *_DEFAULT_POINTER entries). The real one first consults the
//    parameter-override table (empty here: no defaults file), and nothing is
//    ever loaded from EEPROM;
//  - AP_ParamT<T, PT> (AP_Float, AP_Int8, AP_Int16, AP_Int32) holding one T:
//    get(), set() (plain assignment, as the real set()), and the conversion
//    operator returning a *reference* to the value (`operator const T &`), so
//    SlewLimiter's `const float &slew_rate_max` tracks later set() calls as in
//    the firmware; for AP_Float the conversion is the real templated
//    `operator const float &()` plus explicit int/double casts;
//  - AP_Enum<E> (AP_Filter.h) and AP_ParamV / AP_PARAMDEFV (AP_Math.h).
// load()/save() do nothing (no storage). Nothing else of AP_Param exists.
#pragma once
#include <stdint.h>
#include <stddef.h>
#include <type_traits>

enum ap_var_type {
    AP_PARAM_NONE    = 0,
    AP_PARAM_INT8,
    AP_PARAM_INT16,
    AP_PARAM_INT32,
    AP_PARAM_FLOAT,
    AP_PARAM_VECTOR3F,
    AP_PARAM_GROUP
};

#define AP_PARAM_FLAG_DEFAULT_POINTER (1<<7)

#define AP_VAROFFSET(type, element) (((ptrdiff_t)(&((const type *)1)->element))-1)
#define AP_CLASSTYPE(clazz, element) ((uint8_t)(((const clazz *) 1)->element.vtype))
#define AP_GROUPINFO_FLAGS(name, idx, clazz, element, def, flags) { name, AP_VAROFFSET(clazz, element), {def_value : def}, flags, idx, AP_CLASSTYPE(clazz, element)}
#define AP_GROUPINFO_FLAGS_DEFAULT_POINTER(name, idx, clazz, element, def) {  name, AP_VAROFFSET(clazz, element), {def_value_offset : AP_VAROFFSET(clazz, element) - AP_VAROFFSET(clazz, def)}, AP_PARAM_FLAG_DEFAULT_POINTER, idx, AP_CLASSTYPE(clazz, element) }
#define AP_GROUPINFO(name, idx, clazz, element, def) AP_GROUPINFO_FLAGS(name, idx, clazz, element, def, 0)
#define AP_GROUPEND     { "", 0,       { group_info : nullptr }, 0, 0xFF, AP_PARAM_NONE }

class AP_Param {
public:
    struct GroupInfo {
        const char *name;
        ptrdiff_t offset; // offset within the object
        union {
            const struct GroupInfo *group_info;
            const struct GroupInfo **group_info_ptr;
            const float def_value;
            ptrdiff_t def_value_offset;
        };
        uint16_t flags;
        uint8_t idx;  // identifier within the group
        uint8_t type; // AP_PARAM_*
    };

    static void setup_object_defaults(const void *object_pointer, const struct GroupInfo *group_info);

    void load() {}
    void save() {}
};

template<typename T, ap_var_type PT>
class AP_ParamTBase : public AP_Param
{
public:
    static const ap_var_type        vtype = PT;
    const T &get(void) const { return _value; }
    void set(const T &v) { _value = v; }
protected:
    T _value;
};

template<typename T, ap_var_type PT>
class AP_ParamT : public AP_ParamTBase<T, PT>
{
public:
    operator const T &() const { return this->_value; }
};

template<>
class AP_ParamT<float, AP_PARAM_FLOAT> : public AP_ParamTBase<float, AP_PARAM_FLOAT>
{
public:
    template<bool X = true>
    operator const float &() const { return this->_value; }
    explicit operator int () const { return (int)this->_value; }
    explicit operator double () const { return (double)this->_value; }
};

template<typename T, ap_var_type PT>
class AP_ParamV : public AP_Param
{
public:
    static const ap_var_type        vtype = PT;
    const T &get(void) const { return _value; }
    void set(const T &v) { _value = v; }
    operator const T &() const { return _value; }
protected:
    T        _value;
};

#define AP_PARAMDEF(_t, _suffix, _pt)   typedef AP_ParamT<_t, _pt> AP_ ## _suffix;
AP_PARAMDEF(float, Float, AP_PARAM_FLOAT);
AP_PARAMDEF(int8_t, Int8, AP_PARAM_INT8);
AP_PARAMDEF(int16_t, Int16, AP_PARAM_INT16);
AP_PARAMDEF(int32_t, Int32, AP_PARAM_INT32);
#define AP_PARAMDEFV(_t, _suffix, _pt)   typedef AP_ParamV<_t, _pt> AP_ ## _suffix;

static_assert(not std::is_convertible<AP_Float, int>::value, "illegal conversion possible");

template<typename eclass>
class AP_Enum : public AP_Int8
{
public:
    operator const eclass () const { return (eclass)_value; }
    void set(eclass value) { _value = (int8_t)value; }
};

// As AP_Param::set_value() + setup_object_defaults() in AP_Param.cpp at 90700977,
// without the parameter-override table (empty here).
inline void AP_Param::setup_object_defaults(const void *object_pointer, const struct GroupInfo *group_info)
{
    ptrdiff_t base = (ptrdiff_t)object_pointer;
    uint8_t type;
    for (uint8_t i=0;
         (type=group_info[i].type) != AP_PARAM_NONE;
         i++) {
        if (type <= AP_PARAM_FLOAT) {
            void *ptr = (void *)(base + group_info[i].offset);
            float value;
            if ((group_info[i].flags & AP_PARAM_FLAG_DEFAULT_POINTER) != 0) {
                value = *((float*)((ptrdiff_t)ptr - group_info[i].def_value_offset));
            } else {
                value = group_info[i].def_value;
            }
            switch (type) {
            case AP_PARAM_INT8:  ((AP_Int8 *)ptr)->set(value); break;
            case AP_PARAM_INT16: ((AP_Int16 *)ptr)->set(value); break;
            case AP_PARAM_INT32: ((AP_Int32 *)ptr)->set(value); break;
            case AP_PARAM_FLOAT: ((AP_Float *)ptr)->set(value); break;
            default: break;
            }
        }
        // AP_PARAM_VECTOR3F entries: none in the compiled tables.
    }
}
