#!/bin/sh
# Regenerates out/ (speed-change cases) with build/driver. GPL-3.0-or-later.
set -e
cd "$(dirname "$0")"
rm -rf out && mkdir out
CASES=$(build/driver --list | grep '^speed_')
build/driver out $CASES > out/cases_body.txt 2> diag_speed.txt
{
  echo "# The speed-change reference cases: parameters exactly as the generator printed them (%.9g: exact floats)."
  echo "# Points: start, then waypoints; metres, SCurve's frame (+z up)."
  echo "# speed_changes: k=v ... : at the start of global tick k (the CSV row index, t/dt), before that tick's"
  echo "# advance_target_along_track, this_leg.set_speed_max(v, v, v) and next_leg.set_speed_max(v, v, v) are"
  echo "# called, and every later calculate_track uses v for speed_xy, speed_up and speed_down."
  echo
  sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' out/cases_body.txt
} > out/cases_speed.txt
rm out/cases_body.txt
for f in out/*.csv; do gzip -9 -n -f "$f"; done
