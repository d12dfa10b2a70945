"""Fly a mission with MAVProxy against a running `mavsitl serve`, typing the
commands a user types: `wp load FILE`, `arm throttle`, then start the mission.

MAVProxy 1.8.x cannot switch a PX4 vehicle's mode by name (`mode MISSION`
raises "required argument is not a float" inside MAVProxy before anything is
sent: its mode table holds PX4 (base, main, sub) tuples that pymavlink's
set_mode_px4 then packs as one number). The test checks that this is still
so, and starts the mission the way that works with PX4 and with mavsitl:
`long MISSION_START`. It then waits for the mission to finish and the vehicle
to land and disarm, and reads the mission back with `wp list`.

usage: mavproxy_mission.py PORT PLAN WORKDIR
"""

import json
import os
import queue
import subprocess
import sys
import threading
import time


def write_wpl(plan_path, out_path):
    """The plan's items as QGC WPL 110 in PX4 convention (no home line)."""
    plan = json.load(open(plan_path))
    lines = ["QGC WPL 110"]
    for i, it in enumerate(plan["mission"]["items"]):
        p = [0.0 if x is None else x for x in it["params"]]
        fields = [i, int(i == 0), it["frame"], it["command"], *p, 1]
        lines.append("\t".join(str(f) for f in fields))
    with open(out_path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return len(plan["mission"]["items"])


def main():
    port, plan, work = sys.argv[1], sys.argv[2], sys.argv[3]
    wpl = os.path.join(work, "mission.waypoints")
    n = write_wpl(plan, wpl)
    exe = os.path.join(os.path.dirname(sys.executable), "mavproxy.py")
    p = subprocess.Popen(
        [sys.executable, exe, f"--master=udpin:127.0.0.1:{port}", "--source-system=255",
         "--nowait", "--default-modules=wp,mode,arm,cmdlong,param,log"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        bufsize=1, cwd=work)
    lines = queue.Queue()

    def reader():
        for line in p.stdout:
            print("mavproxy|", line.rstrip(), flush=True)
            lines.put(line)
    threading.Thread(target=reader, daemon=True).start()

    def send(cmd):
        print("mavproxy>", cmd, flush=True)
        p.stdin.write(cmd + "\n")
        p.stdin.flush()

    def wait_all(texts, timeout, resend=None, every=2.0):
        """Waits until MAVProxy has printed every one of `texts`, in any order."""
        pending = list(texts)
        end = time.time() + timeout
        last = time.time()
        found = ""
        while time.time() < end and pending:
            try:
                line = lines.get(timeout=0.2)
            except queue.Empty:
                line = ""
            for t in list(pending):
                if t in line:
                    pending.remove(t)
                    found = line
            if resend and pending and time.time() - last > every:
                send(resend)
                last = time.time()
        if pending:
            p.kill()
            sys.exit(f"FAIL: MAVProxy never printed {pending}")
        return found

    def wait_for(text, timeout, resend=None, every=2.0):
        return wait_all([text], timeout, resend, every)

    try:
        wait_for("Detected vehicle 1:1", 30)
        wait_for("parameters", 30)
        send(f"wp load {wpl}")
        wait_for("Got MISSION_ACK: TYPE_MISSION: ACCEPTED", 20)
        # Arm once the pre-arm checks pass (MAVProxy prints the refusal).
        send("arm throttle")
        wait_for("ARMED", 60, resend="arm throttle", every=3.0)
        send("mode MISSION")
        wait_for("required argument is not a float", 10)
        send("long MISSION_START")
        wait_for("MISSION_START: ACCEPTED", 10)
        wait_all(["Mission finished", "Landing detected", "DISARMED"], 300)
        send("wp list")
        got = wait_for(f"Requesting {n} waypoints", 20)
        print("OK", got.strip())
    finally:
        p.terminate()
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()


main()
