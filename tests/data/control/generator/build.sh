#!/bin/sh
# Builds the control.cpp reference driver and writes the CSVs to out/.
# src/libraries/ holds the ArduPilot files, byte-identical to commit
# 90700977c553d2dfd95a305acf1c3e098e4d9477; standins/ the stand-in headers
# (searched first).
set -e
cd "$(dirname "$0")"
CXX=${CXX:-g++}
FLAGS="-std=gnu++11 -O2 -ffp-contract=off -fsingle-precision-constant -fno-exceptions -fsigned-char \
 -DCONFIG_HAL_BOARD=HAL_BOARD_SITL -DCONFIG_HAL_BOARD_SUBTYPE=HAL_BOARD_SUBTYPE_NONE \
 -DAPM_BUILD_DIRECTORY=APM_BUILD_Rover -D__AP_LINE__=__LINE__"
INC="-Istandins -Isrc/libraries"
mkdir -p build out
for f in control AP_Math vector2 vector3 matrix3; do
    nice $CXX $FLAGS $INC -c src/libraries/AP_Math/$f.cpp -o build/$f.o
done
nice $CXX $FLAGS $INC -c driver.cpp -o build/driver.o
nice $CXX -o build/driver build/driver.o build/control.o build/AP_Math.o build/vector2.o build/vector3.o build/matrix3.o -lm
./build/driver out
