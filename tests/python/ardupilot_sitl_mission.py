"""Fly a mission plan on real ArduPilot SITL over mavsitl's JSON physics.

Needs an ArduPilot checkout with the SITL binaries built as ArduPilot's docs
say (`./waf configure --board sitl && ./waf rover copter`). Starts
`mavsitl ardupilot` and the firmware (in a scratch directory, instance 0),
uploads the plan over MAVLink (TCP 5760), arms, flies it in AUTO (a quad takes
off in GUIDED first and ends with the plan's RTL), and checks that every item
is reached and the track stays near the plan's legs. Exit status 0 on success.

    .venv/bin/python tests/python/ardupilot_sitl_mission.py --ardupilot ~/ardupilot --vehicle boat
    .venv/bin/python tests/python/ardupilot_sitl_mission.py --ardupilot ~/ardupilot --vehicle quad
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from types import SimpleNamespace

from pymavlink import mavutil

from track import Track

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VEHICLES = {
    # vehicle: firmware, ArduPilot defaults, our parameters, plan, max cross-track RMS (m)
    "boat": ("ardurover", "rover.parm", "boat.parm", "boat_box.plan", 3.0),
    "quad": ("arducopter", "copter.parm", "quad.parm", "quad_square.plan", 1.5),
}


def fail(msg):
    print("FAIL:", msg, flush=True)
    sys.exit(1)


class Vehicle:
    def __init__(self, url, speedup):
        self.speedup = speedup
        self.m = mavutil.mavlink_connection(url, source_system=255, retries=30)
        if self.m.wait_heartbeat(timeout=60) is None:
            fail("no heartbeat from ArduPilot")
        self.m.mav.request_data_stream_send(
            self.m.target_system, self.m.target_component, mavutil.mavlink.MAV_DATA_STREAM_ALL, 4, 1
        )
        self.reached = set()
        self.track = []

    def wall(self, sim_seconds):
        """Wall-clock allowance for `sim_seconds` of flight, generous."""
        return 30 + 2 * sim_seconds / max(self.speedup, 1)

    def poll(self, timeout=1.0):
        r = self.m.recv_match(blocking=True, timeout=timeout)
        if r is None:
            return None
        kind = r.get_type()
        if kind == "MISSION_ITEM_REACHED":
            self.reached.add(r.seq)
        elif kind == "GLOBAL_POSITION_INT":
            self.track.append(r)
        elif kind == "STATUSTEXT":
            print("   ArduPilot:", r.text, flush=True)
        return r

    def upload(self, items):
        m = self.m
        m.mav.mission_count_send(m.target_system, m.target_component, len(items), 0)
        deadline = time.time() + 30
        while time.time() < deadline:
            r = m.recv_match(type=["MISSION_REQUEST", "MISSION_REQUEST_INT", "MISSION_ACK"], blocking=True, timeout=2)
            if r is None:
                continue
            if r.get_type() == "MISSION_ACK":
                if r.type != 0:
                    fail(f"mission refused: MISSION_ACK type {r.type}")
                return
            if r.seq >= len(items):
                fail(f"ArduPilot asked for item {r.seq} of {len(items)}")
            cmd, frame, p = items[r.seq]
            m.mav.mission_item_int_send(
                m.target_system, m.target_component, r.seq, frame, cmd, 0, 1,
                p[0], p[1], p[2], p[3], int(round(p[4] * 1e7)), int(round(p[5] * 1e7)), p[6], 0,
            )
        fail("mission upload timed out")

    def set_mode(self, name):
        m = self.m
        want = m.mode_mapping()[name]
        deadline = time.time() + 60
        while time.time() < deadline:
            m.set_mode(want)
            t = time.time()
            while time.time() - t < 1:
                r = self.poll(0.5)
                if r is not None and r.get_type() == "HEARTBEAT" and r.get_srcComponent() == 1 and r.custom_mode == want:
                    return
        fail(f"ArduPilot never entered {name}")

    def arm(self):
        m = self.m
        deadline = time.time() + 180
        while time.time() < deadline:
            m.mav.command_long_send(m.target_system, m.target_component, 400, 0, 1, 0, 0, 0, 0, 0, 0)
            t = time.time()
            while time.time() - t < 2:
                r = self.poll(0.5)
                if r is not None and r.get_type() == "COMMAND_ACK" and r.command == 400 and r.result == 0:
                    return
        fail("ArduPilot never armed (see its pre-arm messages above)")

    def armed(self, hb):
        return bool(hb.base_mode & mavutil.mavlink.MAV_MODE_FLAG_SAFETY_ARMED)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ardupilot", required=True, help="ArduPilot checkout with build/sitl/bin")
    ap.add_argument("--vehicle", choices=sorted(VEHICLES), default="boat")
    ap.add_argument("--speedup", type=float, default=10.0, help="ArduPilot's --speedup")
    ap.add_argument("--mavsitl", default=os.path.join(REPO, "target", "release", "mavsitl"))
    args = ap.parse_args()

    firmware, ap_defaults, our_params, plan_name, max_rms = VEHICLES[args.vehicle]
    plan = json.load(open(os.path.join(REPO, "missions", plan_name)))
    home = plan["mission"]["plannedHomePosition"]
    home_arg = f"{home[0]},{home[1]},{home[2]},0"
    binary = os.path.join(args.ardupilot, "build", "sitl", "bin", firmware)
    if not os.access(binary, os.X_OK):
        fail(f"{binary} not found: build it with ./waf configure --board sitl && ./waf {firmware[4:]}")

    scratch = tempfile.mkdtemp(prefix="mavsitl-ardupilot-")
    sim = subprocess.Popen(
        [args.mavsitl, "ardupilot", "--vehicle", args.vehicle, "--home", home_arg],
        stdout=open(os.path.join(scratch, "mavsitl.out"), "w"), stderr=subprocess.STDOUT,
    )
    fw = subprocess.Popen(
        [binary, "--model", "JSON:127.0.0.1", "--speedup", str(args.speedup), "--home", home_arg, "-I0",
         "--defaults", os.path.join(args.ardupilot, "Tools", "autotest", "default_params", ap_defaults)
         + "," + os.path.join(REPO, "firmware_configs", "ardupilot", our_params)],
        cwd=scratch, stdout=open(os.path.join(scratch, "ardupilot.out"), "w"), stderr=subprocess.STDOUT,
    )
    try:
        fly(args, plan, home, max_rms)
    finally:
        fw.terminate()
        sim.terminate()
        fw.wait()
        sim.wait()
        print("logs in", scratch)


def fly(args, plan, home, max_rms):
    v = Vehicle("tcp:127.0.0.1:5760", args.speedup)
    items = [(16, 0, [0, 0, 0, 0, home[0], home[1], home[2]])]  # seq 0: home
    for it in plan["mission"]["items"]:
        if it.get("type") == "SimpleItem":
            items.append((it["command"], it["frame"], [0 if p is None else p for p in it["params"]]))
    # ArduPilot refuses a mission while it is still starting up: wait for its
    # GPS (its own model, fed by mavsitl's state) first.
    deadline = time.time() + v.wall(60)
    while time.time() < deadline:
        r = v.poll()
        if r is not None and r.get_type() == "GPS_RAW_INT" and r.fix_type >= 3:
            break
    else:
        fail("ArduPilot reports no GPS fix")
    v.upload(items)
    print(f"uploaded {len(items) - 1} items", flush=True)
    quad = args.vehicle == "quad"
    v.set_mode("GUIDED" if quad else "HOLD")
    v.arm()
    print("armed", flush=True)
    if quad:
        m = v.m
        m.mav.command_long_send(m.target_system, m.target_component, 22, 0, 0, 0, 0, 0, 0, 0, 10)
        deadline = time.time() + v.wall(60)
        while time.time() < deadline and not (v.track and v.track[-1].relative_alt > 9000):
            v.poll()
        if not (v.track and v.track[-1].relative_alt > 9000):
            fail("no take-off to 10 m")
        print("took off", flush=True)
    v.track.clear()
    v.set_mode("AUTO")
    last = len(items) - 1
    deadline = time.time() + v.wall(600)
    while time.time() < deadline:
        r = v.poll()
        if quad and r is not None and r.get_type() == "HEARTBEAT" and r.get_srcComponent() == 1 and not v.armed(r):
            break
        if not quad and last in v.reached:
            break
    missing = sorted(set(range(1, last + 1)) - v.reached)
    if missing:
        fail(f"items not reached: {missing}")
    origin = SimpleNamespace(latitude_deg=home[0], longitude_deg=home[1])
    track = Track(plan, origin)
    for p in v.track:
        track.add(SimpleNamespace(latitude_deg=p.lat / 1e7, longitude_deg=p.lon / 1e7))
    rms, worst = track.cross_track()
    print(f"{args.vehicle}: {last}/{last} items reached, cross-track {rms:.2f} m RMS, {worst:.2f} m max "
          f"over {track.n} positions; ended {track.final_from_home():.2f} m from home", flush=True)
    if rms > max_rms:
        fail(f"cross-track RMS {rms:.2f} m above {max_rms} m")
    if quad and track.final_from_home() > 3.0:
        fail("the quad did not land near home")


if __name__ == "__main__":
    main()
