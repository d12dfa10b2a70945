#!/bin/sh
# Builds the SCurve reference driver and the calculate_path table (see ../README.md). GPL-3.0-or-later.
set -e
cd "$(dirname "$0")"
SRC=src/libraries
FLAGS="-std=gnu++11 ${OPT:--O2} -ffp-contract=off -fsingle-precision-constant -fno-exceptions -fsigned-char \
 -DCONFIG_HAL_BOARD=HAL_BOARD_SITL -DCONFIG_HAL_BOARD_SUBTYPE=HAL_BOARD_SUBTYPE_NONE \
 -DAPM_BUILD_DIRECTORY=APM_BUILD_Rover -D__AP_LINE__=__LINE__"
INC="-Istandins -I$SRC"
B=${BUILD:-build}; mkdir -p $B
for f in SCurve control AP_Math vector2 vector3 matrix3; do
  nice g++ $FLAGS $INC -c $SRC/AP_Math/$f.cpp -o $B/$f.o
done
LIB="$B/SCurve.o $B/control.o $B/AP_Math.o $B/vector2.o $B/vector3.o $B/matrix3.o"
for prog in driver path_table; do
  nice g++ $FLAGS $INC -c $prog.cpp -o $B/$prog.o
  nice g++ -o $B/$prog $B/$prog.o $LIB -lm
done
