#!/usr/bin/env python3
"""Turns a `mavsitl ardupilot --record DIR --keep-workdir` flight into the
reference files of one mission here: ground_truth.csv at 10 Hz and
actuators.csv at 20 Hz (from 1 s before the mission starts to 5 s after it
ends), mission_events.csv, and params.parm, the firmware's own value of every
parameter SimpleFlight's boat reads (taken from the PARM messages of
ArduPilot's dataflash log).

Usage: prepare.py RECORDING_DIR ARDUPILOT_LOG.BIN SIMPLEFLIGHT_PARAMS OUT_DIR
SIMPLEFLIGHT_PARAMS is the params.parm a `mavsitl fly --vehicle boat --record`
writes: it names every parameter SimpleFlight knows.
Needs pymavlink (the test venv has it).
"""
import csv
import os
import sys

from pymavlink import mavutil

# The families of parameters SimpleFlight's boat reads (ArduPilot names).
FAMILIES = ("WP_", "PSC_", "ATC_", "CRUISE_", "TURN_RADIUS", "LOIT_", "GUID_OPTIONS", "MOT_")


def window(events):
    start = end = None
    for row in events:
        if row[1] == "mode" and row[3] == "AUTO" and start is None:
            start = int(row[0])
        if row[1] == "mission_finished":
            end = int(row[0])
    if start is None or end is None:
        sys.exit("the recording has no AUTO start or no mission end")
    return start - 1_000_000_000, end + 5_000_000_000


def copy_rows(src, dst, lo, hi, every_ns):
    with open(src) as f, open(dst, "w", newline="") as g:
        g.write(f.readline())
        next_t = lo
        for line in f:
            t = int(line.split(",", 1)[0])
            if lo <= t <= hi and t >= next_t:
                cells = line.strip().split(",")
                g.write(",".join([cells[0]] + [f"{float(c):.5g}" if "e" in c else f"{float(c):.5f}".rstrip("0").rstrip(".") for c in cells[1:]]) + "\n")
                next_t = t + every_ns


def params(log, known):
    m = mavutil.mavlink_connection(log)
    values = {}
    while True:
        msg = m.recv_match(type=["PARM"])
        if msg is None:
            break
        values[msg.Name] = msg.Value
    return {k: v for k, v in values.items() if k.startswith(FAMILIES) and k in known}


def main():
    rec, log, sf_params, out = sys.argv[1:5]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(rec, "mission_events.csv")) as f:
        rows = [r for r in csv.reader(f) if r and not r[0].startswith("#")]
    lo, hi = window(rows)
    copy_rows(os.path.join(rec, "ground_truth.csv"), os.path.join(out, "ground_truth.csv"), lo, hi, 99_000_000)
    copy_rows(os.path.join(rec, "actuators.csv"), os.path.join(out, "actuators.csv"), lo, hi, 49_000_000)
    with open(os.path.join(rec, "mission_events.csv")) as f, open(os.path.join(out, "mission_events.csv"), "w") as g:
        g.write(f.read())
    with open(sf_params) as f:
        known = {line.split()[0] for line in f if line.strip() and not line.startswith("#")}
    with open(os.path.join(out, "params.parm"), "w") as g:
        g.write("# ArduPilot Rover's own values (dataflash PARM) of every parameter SimpleFlight's boat reads\n")
        for k, v in sorted(params(log, known).items()):
            g.write(f"{k} {float('%.7g' % v):g}\n")


if __name__ == "__main__":
    main()
