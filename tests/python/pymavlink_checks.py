"""Protocol checks with pymavlink against a running `mavsitl serve`.

usage: pymavlink_checks.py CHECK GCS_PORT VEHICLE_PORT

CHECK is one of:
  params    full parameter list complete and consistent; set / read back;
            out-of-range set refused; PX4 bytewise integers
  mission   upload and download round trip through a proxy that drops 20 % of
            the datagrams in both directions, for mission, fence and rally
  cancel    a cancelled upload and a timed-out upload leave the stored mission
            intact
  commands  every command of the table gets the documented ACK; a
            retransmission is acknowledged but not executed twice; SET_MODE
  garbage   garbage bytes and truncated frames between valid ones are skipped
  signing   (4th argument: the key in hex) unsigned and wrongly signed frames
            are dropped, signed ones answered
  tlog      (4th argument: a .tlog of a 30 s run) the log replays in pymavlink

The vehicle sends to GCS_PORT (its --gcs-out); VEHICLE_PORT is its bound port.
Exits non-zero with a FAIL line on the first failed check.
"""

import math
import random
import socket
import sys
import threading
import time

from pymavlink import mavutil

mavlink = mavutil.mavlink


def fail(msg):
    print("FAIL:", msg, flush=True)
    sys.exit(1)


def connect(port):
    m = mavutil.mavlink_connection(f"udpin:127.0.0.1:{port}", source_system=255,
                                   source_component=190)
    hb = m.wait_heartbeat(timeout=20)
    if hb is None:
        fail("no heartbeat")
    if hb.autopilot != mavlink.MAV_AUTOPILOT_PX4:
        fail(f"autopilot {hb.autopilot}, expected PX4")
    # Answer in MAVLink 2 like the vehicle.
    m.mav.srcSystem, m.mav.srcComponent = 255, 190
    return m


def recv(m, types, timeout=3.0, cond=lambda msg: True):
    end = time.time() + timeout
    while time.time() < end:
        msg = m.recv_match(type=types, blocking=True, timeout=max(0.0, end - time.time()))
        if msg is not None and cond(msg):
            return msg
    return None


# -- parameters -----------------------------------------------------------------

def check_params(m):
    m.mav.param_request_list_send(1, 1)
    values = {}
    count = None
    end = time.time() + 20
    while time.time() < end:
        msg = recv(m, "PARAM_VALUE", 1.0)
        if msg is None:
            if count is not None:
                missing = [i for i in range(count) if i not in values]
                if not missing:
                    break
                for i in missing[:20]:
                    m.mav.param_request_read_send(1, 1, b"", i)
            continue
        if count is None:
            count = msg.param_count
        if msg.param_count != count:
            fail(f"param_count changed {count} -> {msg.param_count}")
        values[msg.param_index] = msg
        if len(values) == count:
            break
    if count is None or len(values) != count:
        fail(f"parameter list incomplete: {len(values)} of {count}")
    names = [v.param_id for v in values.values()]
    if len(set(names)) != len(names):
        fail("duplicate parameter names")
    if sorted(values) != list(range(count)):
        fail("parameter indices are not 0..count-1")
    by_name = {v.param_id: v for v in values.values()}
    for need in ("MIS_TAKEOFF_ALT", "RTL_RETURN_ALT", "MPC_XY_CRUISE", "SYS_AUTOSTART",
                 "COM_DISARM_LAND", "NAV_ACC_RAD", "BAT1_N_CELLS", "MAV_SYS_ID"):
        if need not in by_name:
            fail(f"parameter {need} missing")
    t = by_name["MIS_TAKEOFF_ALT"]
    if t.param_type != mavlink.MAV_PARAM_TYPE_REAL32 or abs(t.param_value - 2.5) > 1e-6:
        fail(f"MIS_TAKEOFF_ALT {t.param_value} type {t.param_type}")
    a = by_name["SYS_AUTOSTART"]
    raw = int.from_bytes(bytes(bytearray(__import__("struct").pack("<f", a.param_value))),
                         "little", signed=True)
    if a.param_type != mavlink.MAV_PARAM_TYPE_INT32 or raw != 4001:
        fail(f"SYS_AUTOSTART bytewise value {raw}, type {a.param_type}")
    print(f"list: {count} parameters, complete and consistent")

    def set_and_read(name, value, ptype):
        m.mav.param_set_send(1, 1, name.encode(), value, ptype)
        r = recv(m, "PARAM_VALUE", 3.0, lambda v: v.param_id == name)
        if r is None:
            fail(f"no PARAM_VALUE after setting {name}")
        return r

    r = set_and_read("MIS_TAKEOFF_ALT", 5.0, mavlink.MAV_PARAM_TYPE_REAL32)
    if abs(r.param_value - 5.0) > 1e-6:
        fail(f"MIS_TAKEOFF_ALT set to 5 reads {r.param_value}")
    m.mav.param_request_read_send(1, 1, b"MIS_TAKEOFF_ALT", -1)
    r = recv(m, "PARAM_VALUE", 3.0, lambda v: v.param_id == "MIS_TAKEOFF_ALT")
    if r is None or abs(r.param_value - 5.0) > 1e-6:
        fail("read by name did not return the new value")
    r = set_and_read("MIS_TAKEOFF_ALT", 1.0e6, mavlink.MAV_PARAM_TYPE_REAL32)
    if abs(r.param_value - 5.0) > 1e-6:
        fail(f"out-of-range set was applied: {r.param_value}")
    import struct
    bytewise = struct.unpack("<f", struct.pack("<i", 4010))[0]
    r = set_and_read("SYS_AUTOSTART", bytewise, mavlink.MAV_PARAM_TYPE_INT32)
    got = struct.unpack("<i", struct.pack("<f", r.param_value))[0]
    if got != 4010:
        fail(f"SYS_AUTOSTART set bytewise to 4010 reads {got}")
    print("set / read back / range check / bytewise int: OK")


# -- lossy proxy -----------------------------------------------------------------

class LossyProxy:
    """Relays datagrams between the vehicle and a client, dropping a fraction in
    each direction (seeded)."""

    def __init__(self, vehicle_port, listen_port, client_port, loss, seed):
        self.vehicle = ("127.0.0.1", vehicle_port)
        self.client = ("127.0.0.1", client_port)
        self.loss = loss
        self.rng = random.Random(seed)
        self.a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # vehicle side
        self.a.bind(("127.0.0.1", listen_port))
        self.b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # client side
        self.b.bind(("127.0.0.1", 0))
        self.dropped = [0, 0]
        self.passed = [0, 0]
        self.stop = False
        for f in (self.up, self.down):
            threading.Thread(target=f, daemon=True).start()

    def down(self):  # vehicle -> client
        self.a.settimeout(0.2)
        while not self.stop:
            try:
                data, _ = self.a.recvfrom(65536)
            except socket.timeout:
                continue
            if self.rng.random() < self.loss:
                self.dropped[0] += 1
            else:
                self.passed[0] += 1
                self.b.sendto(data, self.client)

    def up(self):  # client -> vehicle
        self.b.settimeout(0.2)
        while not self.stop:
            try:
                data, _ = self.b.recvfrom(65536)
            except socket.timeout:
                continue
            if self.rng.random() < self.loss:
                self.dropped[1] += 1
            else:
                self.passed[1] += 1
                self.a.sendto(data, self.vehicle)


# -- mission client (GCS side of the protocol, with its own retries) ---------------

def upload(m, items, mission_type=0, timeout=60.0):
    """Uploads `items` (list of dicts); returns the MISSION_ACK result."""
    n = len(items)
    end = time.time() + timeout
    m.mav.mission_count_send(1, 1, n, mission_type)
    last = time.time()
    last_sent = None
    while time.time() < end:
        msg = recv(m, ["MISSION_REQUEST_INT", "MISSION_REQUEST", "MISSION_ACK"], 0.3)
        if msg is None:
            if time.time() - last > 0.5:
                # Nothing heard: resend what the vehicle last needed.
                if last_sent is None:
                    m.mav.mission_count_send(1, 1, n, mission_type)
                else:
                    send_item(m, items[last_sent], last_sent, mission_type)
                last = time.time()
            continue
        if msg.mission_type != mission_type:
            continue
        last = time.time()
        if msg.get_type() == "MISSION_ACK":
            # An ACK before the first request is a stale one (a repeated final
            # ACK of the previous transfer whose first copy was lost).
            if last_sent is None and n > 0 and msg.type == mavlink.MAV_MISSION_ACCEPTED:
                continue
            return msg.type
        seq = msg.seq
        if 0 <= seq < n:
            send_item(m, items[seq], seq, mission_type)
            last_sent = seq
    fail("upload timed out")


def send_item(m, it, seq, mission_type):
    m.mav.mission_item_int_send(1, 1, seq, it["frame"], it["command"], int(seq == 0), 1,
                                it["p1"], it["p2"], it["p3"], it["p4"], it["x"], it["y"],
                                it["z"], mission_type)


def download(m, mission_type=0, timeout=60.0):
    end = time.time() + timeout
    count = None
    while count is None and time.time() < end:
        m.mav.mission_request_list_send(1, 1, mission_type)
        msg = recv(m, "MISSION_COUNT", 0.5, lambda c: c.mission_type == mission_type)
        if msg is not None:
            count = msg.count
    if count is None:
        fail("no MISSION_COUNT")
    got = {}
    while len(got) < count and time.time() < end:
        seq = min(i for i in range(count) if i not in got)
        m.mav.mission_request_int_send(1, 1, seq, mission_type)
        msg = recv(m, "MISSION_ITEM_INT", 0.25,
                   lambda i: i.seq == seq and i.mission_type == mission_type)
        if msg is not None:
            got[seq] = msg
    if len(got) < count:
        fail(f"download timed out with {len(got)} of {count}")
    m.mav.mission_ack_send(1, 1, 0, mission_type)
    return [got[i] for i in range(count)]


def make_items(n, seed):
    rng = random.Random(seed)
    items = []
    for i in range(n):
        items.append(dict(frame=6, command=16, p1=float(rng.randint(0, 3)),
                          p2=round(rng.uniform(0.5, 4), 2), p3=0.0, p4=float("nan"),
                          x=473977420 + rng.randint(-20000, 20000),
                          y=85455940 + rng.randint(-20000, 20000),
                          z=round(rng.uniform(5, 50), 2)))
    return items


def same(sent, got):
    if len(sent) != len(got):
        return f"{len(got)} items back, {len(sent)} sent"
    for i, (s, g) in enumerate(zip(sent, got)):
        pairs = [(s["frame"], g.frame), (s["command"], g.command), (s["x"], g.x),
                 (s["y"], g.y)]
        for a, b in pairs:
            if a != b:
                return f"item {i}: sent {s}, got {g}"
        for a, b in ((s["p1"], g.param1), (s["p2"], g.param2), (s["p3"], g.param3),
                     (s["p4"], g.param4), (s["z"], g.z)):
            if not ((math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-4 * max(1, abs(a))):
                return f"item {i}: sent {s}, got {g}"
    return None


def check_mission(gcs_port, vehicle_port):
    # The vehicle sends to gcs_port, where the proxy listens; the client sits
    # behind the proxy.
    client_port = free_port()
    proxy = LossyProxy(vehicle_port, gcs_port, client_port, 0.2, seed=7)
    m = connect(client_port)
    items = make_items(40, seed=1)
    r = upload(m, items)
    if r != mavlink.MAV_MISSION_ACCEPTED:
        fail(f"upload through 20 % loss: ACK {r}")
    back = download(m)
    err = same(items, back)
    if err:
        fail(f"mission round trip through 20 % loss: {err}")
    print(f"mission: 40 items round trip exact through 20 % loss "
          f"(dropped {proxy.dropped[0]} down, {proxy.dropped[1]} up)")
    fence = [dict(frame=5, command=5001, p1=4.0, p2=0.0, p3=0.0, p4=0.0,
                  x=473977420 + dx, y=85455940 + dy, z=0.0)
             for dx, dy in ((0, 0), (0, 9000), (9000, 9000), (9000, 0))]
    fence.append(dict(frame=5, command=5004, p1=15.0, p2=0.0, p3=0.0, p4=0.0,
                      x=473980000, y=85460000, z=0.0))
    rally = [dict(frame=6, command=5100, p1=0.0, p2=0.0, p3=0.0, p4=0.0,
                  x=473979000, y=85457000, z=30.0)]
    for kind, lst, name in ((1, fence, "fence"), (2, rally, "rally")):
        r = upload(m, lst, kind)
        if r != mavlink.MAV_MISSION_ACCEPTED:
            fail(f"{name} upload ACK {r}")
        err = same(lst, download(m, kind))
        if err:
            fail(f"{name} round trip: {err}")
    # The mission survived the fence and rally uploads.
    err = same(items, download(m))
    if err:
        fail(f"mission changed by fence/rally upload: {err}")
    # A waypoint is not a rally point.
    r = upload(m, items[:1], 2)
    if r != mavlink.MAV_MISSION_UNSUPPORTED:
        fail(f"waypoint uploaded as rally point: ACK {r}")
    print("fence and rally round trip exact; wrong item kind refused")
    proxy.stop = True


def check_cancel(m):
    a = make_items(3, seed=2)
    if upload(m, a) != mavlink.MAV_MISSION_ACCEPTED:
        fail("upload A refused")
    b = make_items(5, seed=3)
    m.mav.mission_count_send(1, 1, len(b), 0)
    for _ in range(2):
        req = recv(m, "MISSION_REQUEST_INT", 2.0)
        if req is None:
            fail("no MISSION_REQUEST_INT for upload B")
        send_item(m, b[req.seq], req.seq, 0)
    m.mav.mission_ack_send(1, 1, mavlink.MAV_MISSION_OPERATION_CANCELLED, 0)
    time.sleep(0.5)
    err = same(a, download(m))
    if err:
        fail(f"cancelled upload changed the mission: {err}")
    print("cancelled upload left the mission intact")
    # An upload that stalls: the vehicle re-requests, then gives up.
    m.mav.mission_count_send(1, 1, 4, 0)
    t0 = time.time()
    requests = 0
    ack = None
    while time.time() - t0 < 10:
        msg = recv(m, ["MISSION_REQUEST_INT", "MISSION_ACK"], 1.0)
        if msg is None:
            continue
        if msg.get_type() == "MISSION_REQUEST_INT":
            requests += 1
        else:
            ack = msg
            break
    if ack is None or ack.type != mavlink.MAV_MISSION_OPERATION_CANCELLED:
        fail(f"stalled upload not abandoned (ack {ack})")
    if requests < 5:
        fail(f"only {requests} re-requests before giving up")
    err = same(a, download(m))
    if err:
        fail(f"timed-out upload changed the mission: {err}")
    print(f"stalled upload: {requests} requests, given up after "
          f"{time.time() - t0:.1f} s, mission intact")


# -- commands ----------------------------------------------------------------------

def command(m, cmd, params, confirmation=0, timeout=3.0):
    p = list(params) + [0.0] * (7 - len(params))
    m.mav.command_long_send(1, 1, cmd, confirmation, *p)
    ack = recv(m, "COMMAND_ACK", timeout, lambda a: a.command == cmd)
    if ack is None:
        fail(f"no COMMAND_ACK for command {cmd}")
    return ack.result


def expect(m, cmd, params, result, what):
    r = command(m, cmd, params)
    if r != result:
        fail(f"{what}: command {cmd} got result {r}, expected {result}")
    print(f"  {what:48s} {cmd:6d} -> {r}")


def wait_ready(m):
    st = recv(m, "SYS_STATUS", 60.0,
              lambda s: s.onboard_control_sensors_health & mavlink.MAV_SYS_STATUS_PREARM_CHECK)
    if st is None:
        fail("pre-arm checks never passed")


def check_commands(m):
    R = mavlink
    print("command table:")
    expect(m, 54321, [], R.MAV_RESULT_UNSUPPORTED, "unknown command id")
    expect(m, R.MAV_CMD_DO_ORBIT, [], R.MAV_RESULT_UNSUPPORTED, "DO_ORBIT (not flown)")
    expect(m, R.MAV_CMD_REQUEST_MESSAGE, [148], R.MAV_RESULT_ACCEPTED,
           "REQUEST_MESSAGE AUTOPILOT_VERSION")
    av = recv(m, "AUTOPILOT_VERSION", 3.0)
    if av is None or not av.capabilities & R.MAV_PROTOCOL_CAPABILITY_MISSION_INT:
        fail("AUTOPILOT_VERSION missing or without MISSION_INT")
    expect(m, R.MAV_CMD_REQUEST_MESSAGE, [397], R.MAV_RESULT_UNSUPPORTED,
           "REQUEST_MESSAGE COMPONENT_METADATA")
    expect(m, R.MAV_CMD_REQUEST_MESSAGE, [435], R.MAV_RESULT_UNSUPPORTED,
           "REQUEST_MESSAGE AVAILABLE_MODES")
    expect(m, 520, [1], R.MAV_RESULT_ACCEPTED, "REQUEST_AUTOPILOT_CAPABILITIES")
    # (pymavlink's dialect no longer has PROTOCOL_VERSION to decode the reply.)
    expect(m, 519, [], R.MAV_RESULT_ACCEPTED, "REQUEST_PROTOCOL_VERSION")
    expect(m, R.MAV_CMD_MISSION_START, [0, 0], R.MAV_RESULT_DENIED, "MISSION_START, no mission")
    expect(m, R.MAV_CMD_DO_SET_MISSION_CURRENT, [3], R.MAV_RESULT_DENIED,
           "DO_SET_MISSION_CURRENT, no such item")
    expect(m, R.MAV_CMD_DO_REPOSITION, [-1, 1, 0, float("nan"), 47.398, 8.546, 500],
           R.MAV_RESULT_DENIED, "DO_REPOSITION while disarmed")
    expect(m, R.MAV_CMD_DO_SET_MODE, [1, 5, 0], R.MAV_RESULT_DENIED, "DO_SET_MODE ACRO")
    expect(m, R.MAV_CMD_DO_SET_MODE, [1, 4, 3], R.MAV_RESULT_ACCEPTED, "DO_SET_MODE AUTO.LOITER")
    # Interval: GLOBAL_POSITION_INT at 20 Hz of sim time.
    expect(m, R.MAV_CMD_SET_MESSAGE_INTERVAL, [33, 50000], R.MAV_RESULT_ACCEPTED,
           "SET_MESSAGE_INTERVAL GLOBAL_POSITION_INT 20 Hz")
    t0 = None
    n = 0
    while n < 41:
        msg = recv(m, "GLOBAL_POSITION_INT", 3.0)
        if msg is None:
            fail("GLOBAL_POSITION_INT stopped")
        if t0 is None:
            t0 = msg.time_boot_ms
        n += 1
    rate = 40 / ((msg.time_boot_ms - t0) / 1000.0)
    if not 17 < rate < 23:
        fail(f"GLOBAL_POSITION_INT at {rate:.1f} Hz of sim time, asked 20")
    print(f"  GLOBAL_POSITION_INT now at {rate:.1f} Hz (sim time)")
    expect(m, R.MAV_CMD_SET_MESSAGE_INTERVAL, [12345, 1000], R.MAV_RESULT_UNSUPPORTED,
           "SET_MESSAGE_INTERVAL of a message never sent")
    wait_ready(m)
    expect(m, R.MAV_CMD_DO_SET_HOME, [1], R.MAV_RESULT_ACCEPTED, "DO_SET_HOME here")
    expect(m, R.MAV_CMD_GET_HOME_POSITION, [], R.MAV_RESULT_ACCEPTED, "GET_HOME_POSITION")
    if recv(m, "HOME_POSITION", 3.0) is None:
        fail("no HOME_POSITION")
    expect(m, R.MAV_CMD_DO_CHANGE_SPEED, [1, 7.5, -1], R.MAV_RESULT_ACCEPTED, "DO_CHANGE_SPEED")
    # Retransmission: the same command again with confirmation 1 is acked and
    # not executed again (one "Speed" status text, two ACKs).
    m.mav.command_long_send(1, 1, R.MAV_CMD_DO_CHANGE_SPEED, 0, 1, 6.0, -1, 0, 0, 0, 0)
    m.mav.command_long_send(1, 1, R.MAV_CMD_DO_CHANGE_SPEED, 1, 1, 6.0, -1, 0, 0, 0, 0)
    acks, texts = 0, 0
    end = time.time() + 2.0
    while time.time() < end:
        msg = recv(m, ["COMMAND_ACK", "STATUSTEXT"], 0.5)
        if msg is None:
            continue
        if msg.get_type() == "COMMAND_ACK" and msg.command == R.MAV_CMD_DO_CHANGE_SPEED:
            acks += 1
        elif msg.get_type() == "STATUSTEXT" and msg.text.startswith("Speed 6.0"):
            texts += 1
    if (acks, texts) != (2, 1):
        fail(f"retransmission: {acks} ACKs and {texts} executions, expected 2 and 1")
    print("  retransmission acked twice, executed once")
    # Arm, check the heartbeat, disarm (force), takeoff (MAVSDK: NaN altitude).
    expect(m, R.MAV_CMD_COMPONENT_ARM_DISARM, [1], R.MAV_RESULT_ACCEPTED, "arm")
    hb = recv(m, "HEARTBEAT", 3.0, lambda h: h.base_mode & R.MAV_MODE_FLAG_SAFETY_ARMED)
    if hb is None:
        fail("heartbeat never showed armed")
    expect(m, R.MAV_CMD_NAV_TAKEOFF, [0, 0, 0, float("nan"), float("nan"), float("nan"),
                                      float("nan")], R.MAV_RESULT_ACCEPTED, "NAV_TAKEOFF (NaN alt)")
    pos = recv(m, "GLOBAL_POSITION_INT", 30.0, lambda p: p.relative_alt > 2000)
    if pos is None:
        fail("did not climb after takeoff")
    expect(m, R.MAV_CMD_COMPONENT_ARM_DISARM, [0], R.MAV_RESULT_DENIED, "disarm in the air")
    expect(m, R.MAV_CMD_DO_REPOSITION, [-1, 1, 0, float("nan"), float("nan"), float("nan"),
                                        float("nan")], R.MAV_RESULT_ACCEPTED, "DO_REPOSITION pause")
    # SET_MODE message (QGroundControl's PX4 path): Land, verified by heartbeat.
    m.mav.set_mode_send(1, R.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED, 100925440)
    hb = recv(m, "HEARTBEAT", 3.0, lambda h: h.custom_mode == 100925440)
    if hb is None:
        fail("SET_MODE to Land not reflected in the heartbeat")
    print("  SET_MODE Land reflected in the heartbeat")
    expect(m, R.MAV_CMD_NAV_RETURN_TO_LAUNCH, [], R.MAV_RESULT_ACCEPTED, "NAV_RETURN_TO_LAUNCH")
    expect(m, R.MAV_CMD_NAV_LAND, [], R.MAV_RESULT_ACCEPTED, "NAV_LAND")
    expect(m, R.MAV_CMD_PREFLIGHT_REBOOT_SHUTDOWN, [1], R.MAV_RESULT_DENIED, "reboot while armed")
    expect(m, R.MAV_CMD_COMPONENT_ARM_DISARM, [0, 21196], R.MAV_RESULT_ACCEPTED, "force disarm")
    hb = recv(m, "HEARTBEAT", 3.0, lambda h: not h.base_mode & R.MAV_MODE_FLAG_SAFETY_ARMED)
    if hb is None:
        fail("still armed after force disarm")
    # TIMESYNC and PING.
    m.mav.timesync_send(0, 123456789)
    ts = recv(m, "TIMESYNC", 3.0, lambda t: t.ts1 == 123456789 and t.tc1 != 0)
    if ts is None:
        fail("no TIMESYNC reply")
    m.mav.ping_send(42, 7, 0, 0)
    if recv(m, "PING", 3.0, lambda p: p.seq == 7 and p.time_usec == 42) is None:
        fail("no PING reply")
    print("  TIMESYNC and PING answered")
    before = recv(m, "SYSTEM_TIME", 3.0)
    expect(m, R.MAV_CMD_PREFLIGHT_REBOOT_SHUTDOWN, [1], R.MAV_RESULT_ACCEPTED, "reboot")
    after = recv(m, "SYSTEM_TIME", 5.0, lambda s: s.time_boot_ms < before.time_boot_ms)
    if after is None:
        fail("reboot did not reset the simulation")
    print("  reboot reset the simulation")


def check_garbage(m, vehicle_port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rng = random.Random(5)
    good = m.mav.command_long_encode(1, 1, mavlink.MAV_CMD_REQUEST_MESSAGE, 0, 148,
                                     0, 0, 0, 0, 0, 0).pack(m.mav)
    sent = 0
    for i in range(200):
        junk = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 60)))
        trunc = good[: rng.randrange(1, len(good) - 1)]
        # A datagram: junk, a truncated frame, then a valid frame.
        s.sendto(junk + trunc + good, ("127.0.0.1", vehicle_port))
        s.sendto(bytes([0xFD, 0xFF]) + junk, ("127.0.0.1", vehicle_port))
        sent += 1
        if i % 10 == 9:
            # Keep the burst inside the socket buffers: UDP loss is not the point.
            time.sleep(0.01)
    acks = 0
    end = time.time() + 5
    while time.time() < end and acks < sent:
        a = m.recv_match(type="COMMAND_ACK", blocking=True, timeout=1)
        if a is not None and a.command == mavlink.MAV_CMD_REQUEST_MESSAGE:
            acks += 1
    # Each valid frame behind the garbage is answered (retransmission rule aside:
    # each is a new command with confirmation 0).
    if acks < sent:
        fail(f"{acks} ACKs for {sent} valid frames hidden among garbage")
    if m.wait_heartbeat(timeout=5) is None:
        fail("vehicle stopped after garbage")
    print(f"garbage: {sent} valid frames among junk and truncated frames all answered")


def check_signing(gcs_port, key_hex):
    m = connect(gcs_port)
    # Unsigned: dropped by the vehicle.
    m.mav.command_long_send(1, 1, mavlink.MAV_CMD_REQUEST_MESSAGE, 0, 148, 0, 0, 0, 0, 0, 0)
    if recv(m, "COMMAND_ACK", 2.0) is not None:
        fail("an unsigned command was answered with signing on")
    # Wrong key: dropped.
    m.setup_signing(bytes(32), sign_outgoing=True)
    m.mav.command_long_send(1, 1, mavlink.MAV_CMD_REQUEST_MESSAGE, 0, 148, 0, 0, 0, 0, 0, 0)
    if recv(m, "COMMAND_ACK", 2.0) is not None:
        fail("a command signed with the wrong key was answered")
    m.setup_signing(bytes.fromhex(key_hex), sign_outgoing=True)
    m.mav.command_long_send(1, 1, mavlink.MAV_CMD_REQUEST_MESSAGE, 0, 148, 0, 0, 0, 0, 0, 0)
    ack = recv(m, "COMMAND_ACK", 3.0)
    if ack is None or ack.result != mavlink.MAV_RESULT_ACCEPTED:
        fail(f"signed command not accepted: {ack}")
    hb = recv(m, "HEARTBEAT", 3.0)
    if hb is None or not hb.get_signed():
        fail("the vehicle's frames are not signed")
    print("signing: unsigned and wrongly signed frames dropped, signed frames answered, "
          "replies signed")


def check_tlog(path):
    log = mavutil.mavlink_connection(path)
    heartbeats, first, last, prev = 0, None, None, 0.0
    while True:
        msg = log.recv_match()
        if msg is None:
            break
        t = msg._timestamp
        if t < prev:
            fail(f"tlog timestamps go backwards at {msg}")
        prev = t
        first = t if first is None else first
        last = t
        if msg.get_type() == "HEARTBEAT" and msg.get_srcSystem() == 1:
            heartbeats += 1
            if msg.autopilot != mavlink.MAV_AUTOPILOT_PX4:
                fail("tlog heartbeat is not PX4's")
    if first is None:
        fail("empty tlog")
    year = time.gmtime(first).tm_year
    span = last - first
    if not (2020 <= year <= 2035):
        fail(f"tlog time starts in {year}: not the scenario's date")
    if not (29.0 <= span <= 30.5) or not (29 <= heartbeats <= 31):
        fail(f"tlog spans {span:.1f} s with {heartbeats} heartbeats; the run was 30 s at 1 Hz")
    print(f"tlog: {heartbeats} heartbeats over {span:.1f} s of sim time, "
          f"starting {time.strftime('%Y-%m-%d', time.gmtime(first))}")


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def main():
    check, gcs_port, vehicle_port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    if check == "mission":
        check_mission(gcs_port, vehicle_port)
    elif check == "signing":
        check_signing(gcs_port, sys.argv[4])
    elif check == "tlog":
        check_tlog(sys.argv[4])
    else:
        m = connect(gcs_port)
        {"params": check_params,
         "cancel": check_cancel,
         "commands": check_commands,
         "garbage": lambda m: check_garbage(m, vehicle_port)}[check](m)
    print("OK")


main()
