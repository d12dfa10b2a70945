#!/bin/sh
# Regenerates out/ (the speed-change and entry-speed cases, with their
# cases_speed.txt and cases_entry.txt) with build/driver, and
# calculate_path.csv with build/path_table. GPL-3.0-or-later.
set -e
cd "$(dirname "$0")"
rm -rf out && mkdir out
block() { sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'; }
SPEED=$(build/driver --list | grep '^speed_')
build/driver out $SPEED > out/speed_body.txt 2> diag_speed.txt
{
  echo "# The speed-change reference cases: parameters exactly as the generator printed them (%.9g: exact floats)."
  echo "# Points: start, then waypoints; metres, SCurve's frame (+z up)."
  echo "# speed_changes: k=v ... : at the start of global tick k (the CSV row index, t/dt), before that tick's"
  echo "# advance_target_along_track, this_leg.set_speed_max(v, v, v) and next_leg.set_speed_max(v, v, v) are"
  echo "# called, and every later calculate_track uses v for speed_xy, speed_up and speed_down."
  echo
  block < out/speed_body.txt
} > out/cases_speed.txt
ENTRY=$(build/driver --list | grep '^entry_')
build/driver out $ENTRY > out/entry_body.txt 2> diag_entry.txt
{
  echo "# The entry- and exit-speed reference cases: parameters exactly as the generator printed them (%.9g: exact floats)."
  echo "# Points: start, then waypoints; metres, SCurve's frame (+z up)."
  echo "# entry_speeds: right after the first leg's calculate_track (before row 0), set_origin_speed_max(origin)"
  echo "# if given, then set_destination_speed_max(destination) if given, on that leg."
  echo
  block < out/entry_body.txt
} > out/cases_entry.txt
rm out/speed_body.txt out/entry_body.txt
build/path_table out/calculate_path.csv > /dev/null
for f in out/*.csv; do gzip -9 -n -f "$f"; done
