#!/bin/sh
# Builds the AC_PID / AC_PID_2D / AC_P_2D / SlewLimiter reference driver and
# writes the CSVs to ${OUT:-out}/.
# src/libraries/ holds the ArduPilot files, byte-identical to commit
# 90700977c553d2dfd95a305acf1c3e098e4d9477; standins/ the stand-in headers
# (searched first). OPT (default -O2) selects the optimisation level for
# every object, e.g. OPT=-O0 OUT=out_O0 ./build.sh
set -e
cd "$(dirname "$0")"
CXX=${CXX:-g++}
OPT=${OPT:--O2}
OUT=${OUT:-out}
BUILD=build$OPT
FLAGS="-std=gnu++11 $OPT -ffp-contract=off -fsingle-precision-constant -fno-exceptions -fsigned-char \
 -DCONFIG_HAL_BOARD=HAL_BOARD_SITL -DCONFIG_HAL_BOARD_SUBTYPE=HAL_BOARD_SUBTYPE_NONE \
 -DAPM_BUILD_DIRECTORY=APM_BUILD_Rover -D__AP_LINE__=__LINE__"
INC="-Istandins -Isrc/libraries"
mkdir -p $BUILD $OUT
OBJS=""
for f in AC_PID/AC_PID AC_PID/AC_PID_2D AC_PID/AC_P_2D Filter/SlewLimiter Filter/LowPassFilter \
         AP_Math/AP_Math AP_Math/control AP_Math/vector2 AP_Math/vector3 AP_Math/matrix3; do
    o=$BUILD/$(basename $f).o
    nice $CXX $FLAGS $INC -c src/libraries/$f.cpp -o $o
    OBJS="$OBJS $o"
done
nice $CXX $FLAGS $INC -c driver.cpp -o $BUILD/driver.o
nice $CXX -o $BUILD/driver $BUILD/driver.o $OBJS -lm
./$BUILD/driver $OUT
