"""How fast real firmware flies with mavsitl's physics against its own.

For a user with firmware builds: the same firmware binary flies the same plan
twice on one machine, once with mavsitl (`mavsitl px4 --px4-build … --mission`
or `mavsitl ardupilot --ardupilot … --mission`) and once with the firmware's
built-in physics (PX4 SIH, ArduPilot `--model quad` / `--model motorboat`)
driven by a pymavlink ground station that takes the same steps as mavsitl's
(GPS fix, upload, arm, start, end). For each it reports the wall time of the
whole flight (launch to landed and disarmed, or the last waypoint) and the
sim seconds per wall second (the firmware's boot clock, SYSTEM_TIME, against
the wall clock).

    .venv/bin/python benches/firmware_speed.py --px4-build PX4-Autopilot/build/px4_sitl_default \
        --ardupilot ~/ardupilot [--mavsitl target/release/mavsitl] [--runs 3]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

from pymavlink import mavutil

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INSTANCE = 6  # away from the defaults a user may have running


def plan_items(plan_path):
    plan = json.load(open(plan_path))
    home = plan["mission"]["plannedHomePosition"]
    items = []
    for it in plan["mission"]["items"]:
        if it.get("type") == "SimpleItem":
            items.append((it["command"], it["frame"], [0 if p is None else p for p in it["params"]]))
    return home, items


class Gcs:
    """The steps mavsitl's ground station takes, with pymavlink."""

    def __init__(self, url, ardupilot):
        self.ardupilot = ardupilot
        self.m = mavutil.mavlink_connection(url, source_system=255, source_component=190, retries=100)
        if self.m.wait_heartbeat(timeout=120) is None:
            raise SystemExit(f"no heartbeat on {url}")
        self.boot_ms = 0
        self.reached = set()
        self.armed = False
        self.last = None
        self.retries = 0
        if not ardupilot:
            self.quiet_streams()
        for msg_id in (1, 24, 42, 245, 2):  # SYS_STATUS GPS_RAW_INT MISSION_CURRENT EXTENDED_SYS_STATE SYSTEM_TIME
            self.m.mav.command_long_send(self.m.target_system, self.m.target_component, 511, 0,
                                         msg_id, 200000, 0, 0, 0, 0, 0)

    def quiet_streams(self):
        """Stops the streams this ground station does not read.

        At a high PX4_SIM_SPEED_FACTOR PX4 streams faster than pymavlink
        parses, the replies to its mission requests queue behind telemetry,
        and PX4's mission-protocol timeouts (on its accelerated clock) expire.
        mavsitl's ground station keeps up with the full stream.
        """
        keep = {"HEARTBEAT", "SYS_STATUS", "GPS_RAW_INT", "MISSION_CURRENT", "EXTENDED_SYS_STATE",
                "SYSTEM_TIME", "STATUSTEXT", "COMMAND_ACK", "MISSION_ITEM_REACHED"}
        seen = {}
        t = time.time()
        while time.time() - t < 1.0:
            r = self.m.recv_match(blocking=True, timeout=0.2)
            if r is not None and r.get_type() not in keep and r.get_msgId() >= 0:
                seen[r.get_type()] = r.get_msgId()
        for msg_id in seen.values():
            self.m.mav.command_long_send(self.m.target_system, self.m.target_component, 511, 0,
                                         msg_id, -1, 0, 0, 0, 0, 0)

    def poll(self, timeout=0.5):
        r = self.m.recv_match(blocking=True, timeout=timeout)
        if os.environ.get("DBG") and r is not None and ("MISSION" in r.get_type() or "STATUSTEXT" in r.get_type()): print(time.time(), r, flush=True)
        if r is None:
            return None
        kind = r.get_type()
        if hasattr(r, "time_boot_ms"):
            self.boot_ms = max(self.boot_ms, r.time_boot_ms)
        if kind == "MISSION_ITEM_REACHED":
            self.reached.add(r.seq)
        elif kind == "MISSION_CURRENT":
            self.last = r.seq
        elif kind == "HEARTBEAT" and r.get_srcComponent() == 1 and r.type != 6:
            self.armed = bool(r.base_mode & mavutil.mavlink.MAV_MODE_FLAG_SAFETY_ARMED)
        return r

    def wait(self, pred, wall_s, what):
        deadline = time.time() + wall_s
        while time.time() < deadline:
            r = self.poll()
            if r is not None and pred(r):
                return r
        raise SystemExit(f"timed out waiting for {what}")

    def upload(self, home, items):
        m = self.m
        if self.ardupilot:
            items = [(16, 0, [0, 0, 0, 0, home[0], home[1], home[2]])] + items
        m.mav.mission_count_send(m.target_system, m.target_component, len(items), 0)
        answered = {}
        while True:
            # PX4's onboard link streams faster than Python reads at high
            # speed factors, so the kernel may drop the final MISSION_ACK;
            # MISSION_CURRENT's total then says the upload landed.
            r = self.wait(lambda r: r.get_type() in ("MISSION_REQUEST", "MISSION_REQUEST_INT", "MISSION_ACK")
                          or (r.get_type() == "MISSION_CURRENT" and r.total == len(items)),
                          30, "the mission upload")
            if r.get_type() == "MISSION_CURRENT":
                return len(items)
            if r.get_type() == "MISSION_ACK":
                if r.type != 0:
                    # MAV_MISSION_ERROR: PX4's protocol timeout on its
                    # accelerated clock beat a reply; start again.
                    self.retries += 1
                    if self.retries > 5:
                        raise SystemExit(f"mission refused: {r.type}")
                    m.mav.mission_count_send(m.target_system, m.target_component, len(items), 0)
                    answered = {}
                    continue
                return len(items)
            # Requests repeated while the reply was on its way are answered
            # once: a stale duplicate item aborts PX4's transfer.
            if answered.get(r.seq, 0) > time.time() - 0.05:
                continue
            answered[r.seq] = time.time()
            cmd, frame, p = items[r.seq]
            m.mav.mission_item_int_send(m.target_system, m.target_component, r.seq, frame, cmd, 0, 1,
                                        p[0], p[1], p[2], p[3], int(round(p[4] * 1e7)),
                                        int(round(p[5] * 1e7)), p[6], 0)

    def command(self, cmd, *params, wall_s=300):
        """Sends until accepted (every 2 s of wall time while refused)."""
        m = self.m
        deadline = time.time() + wall_s
        while time.time() < deadline:
            p = list(params) + [0] * (7 - len(params))
            m.mav.command_long_send(m.target_system, m.target_component, cmd, 0, *p)
            t = time.time()
            while time.time() - t < 2:
                r = self.poll(0.2)
                if r is not None and r.get_type() == "COMMAND_ACK" and r.command == cmd:
                    if r.result == 0:
                        return
                    break
        raise SystemExit(f"command {cmd} never accepted")


def fly_builtin(gcs, home, items, multicopter):
    gcs.wait(lambda r: r.get_type() == "GPS_RAW_INT" and r.fix_type >= 3, 300, "a GPS fix")
    n = gcs.upload(home, items)
    if gcs.ardupilot:
        gcs.command(176, 1, 4)          # GUIDED (Copter) / HOLD (Rover)
        gcs.command(400, 1)             # arm
        gcs.command(300, 0, 0)          # MISSION_START
    else:
        # Mode first, then arm, as mavsitl's ground station does: armed in
        # another mode, PX4's preflight auto-disarm (COM_DISARM_PRFLT, on its
        # accelerated clock) can beat the mode command.
        gcs.command(176, 1, 4, 4)       # AUTO.MISSION
        gcs.command(400, 1)
    last = n - 1
    deadline = time.time() + 900
    seen_armed = False
    while time.time() < deadline:
        gcs.poll()
        seen_armed |= gcs.armed
        if multicopter and seen_armed and not gcs.armed:
            return
        if not multicopter and (last in gcs.reached or (gcs.last is not None and gcs.last >= last)):
            return
    raise SystemExit("the mission did not end")


def run_builtin(kind, args, plan):
    home, items = plan_items(plan)
    scratch = tempfile.mkdtemp(prefix="firmware-speed-")
    log = open(os.path.join(scratch, "console.log"), "w")
    env = dict(os.environ)
    if kind == "px4-quad":
        build = args.px4_build
        env.update(PX4_SYS_AUTOSTART="10040", PX4_SIM_SPEED_FACTOR=str(args.px4_speed),
                   PX4_HOME_LAT=str(home[0]), PX4_HOME_LON=str(home[1]), PX4_HOME_ALT=str(home[2]))
        cmd = [os.path.join(build, "bin", "px4"), "-i", str(INSTANCE), "-d", os.path.join(build, "etc")]
        url = "udpin:127.0.0.1:14550"
    else:
        binary, model, defaults = {
            "ardupilot-quad": ("arducopter", "quad", "copter.parm"),
            "ardupilot-boat": ("ardurover", "motorboat", "rover.parm"),
        }[kind]
        ap = args.ardupilot
        cmd = [os.path.join(ap, "build", "sitl", "bin", binary), "-S", "--model", model, "--speedup", "1000",
               "--home", f"{home[0]},{home[1]},{home[2]},0", f"-I{INSTANCE}", "--defaults",
               os.path.join(ap, "Tools", "autotest", "default_params", defaults)
               + ("," + os.path.join(ap, "Tools", "autotest", "default_params", "motorboat.parm")
                  if kind == "ardupilot-boat" else "")]
        url = f"tcp:127.0.0.1:{5760 + 10 * INSTANCE}"
    t0 = time.time()
    fw = subprocess.Popen(cmd, cwd=scratch, env=env, stdout=log, stderr=subprocess.STDOUT,
                          start_new_session=True)
    try:
        gcs = Gcs(url, kind.startswith("ardupilot"))
        fly_builtin(gcs, home, items, kind.endswith("quad"))
        wall = time.time() - t0
        return wall, gcs.boot_ms / 1000.0
    finally:
        fw.terminate()
        try:
            fw.wait(5)
        except subprocess.TimeoutExpired:
            fw.kill()


def run_mavsitl(kind, args, plan):
    if kind == "px4-quad":
        cmd = [args.mavsitl, "px4", "--px4-build", args.px4_build]
    else:
        cmd = [args.mavsitl, "ardupilot", "--ardupilot", args.ardupilot]
    cmd += ["--instance", str(INSTANCE), "--mission", plan]
    t0 = time.time()
    out = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.time() - t0
    if "mission completed" not in out.stdout:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{out.stdout}\n{out.stderr}")
    sim = float(re.search(r"sim time\s+([0-9.]+) s", out.stdout).group(1))
    return wall, sim


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--px4-build", help="PX4-Autopilot/build/px4_sitl_default")
    ap.add_argument("--ardupilot", help="ArduPilot checkout with build/sitl/bin")
    ap.add_argument("--mavsitl", default=os.path.join(REPO, "target", "release", "mavsitl"))
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--px4-speed", type=float, default=60.0,
                    help="PX4_SIM_SPEED_FACTOR for SIH (it has no 'as fast as possible')")
    args = ap.parse_args()
    cases = []
    if args.px4_build:
        cases.append(("px4-quad", "missions/quad_square.plan"))
    if args.ardupilot:
        cases += [("ardupilot-quad", "missions/quad_square.plan"),
                  ("ardupilot-boat", "missions/boat_box.plan")]
    if not cases:
        ap.error("give --px4-build and/or --ardupilot")
    print(f"{'case':16} {'physics':9} {'wall s':>7} {'sim s':>7} {'sim/wall':>9}")
    for kind, plan in cases:
        plan = os.path.join(REPO, plan)
        rows = {}
        for name, run in (("built-in", run_builtin), ("mavsitl", run_mavsitl)):
            for _ in range(args.runs):
                wall, sim = run(kind, args, plan)
                rows.setdefault(name, []).append((wall, sim))
                print(f"{kind:16} {name:9} {wall:7.1f} {sim:7.1f} {sim / wall:8.1f}x", flush=True)
        # Each physics flies the mission in its own time (ArduPilot's
        # motorboat is not mavsitl's boat), so the speed ratio is of sim
        # seconds per wall second, best run each.
        b = max(sim / wall for wall, sim in rows["built-in"])
        m = max(sim / wall for wall, sim in rows["mavsitl"])
        print(f"{kind:16} speed with mavsitl / with built-in physics: {m / b:.2f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
