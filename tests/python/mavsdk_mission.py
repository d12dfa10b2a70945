"""Fly a QGroundControl plan with MAVSDK-Python against a running
`mavsitl serve`: discover, wait for health, upload through MissionRaw's
QGroundControl importer, arm, start, wait for the mission to finish, RTL, wait
for landed (quad) or back home (boat) and disarmed. Checks the track against
the plan and that the battery drained. Exits non-zero on any failure.

usage: mavsdk_mission.py native|grpc PORT PLAN quad|boat MAX_XTRACK_M [GRPC_PORT]
(PLAN "-": only connect and wait until the vehicle is ready to fly)

native: the `mavsdk` 4.x package (ctypes binding, mavsdk.asyncio API).
grpc:   the `mavsdk-grpc` package (the classic System() API over mavsdk_server).
"""

import asyncio
import json
import sys

from track import Track


class Native:
    """The mavsdk 4.x asyncio API."""

    async def connect(self, port, _grpc_port):
        from mavsdk.asyncio import ComponentType, Configuration, Mavsdk
        from mavsdk.asyncio.plugins.action import ActionAsync
        from mavsdk.asyncio.plugins.mission_raw import MissionRawAsync
        from mavsdk.asyncio.plugins.telemetry import FlightMode, TelemetryAsync

        self.FlightMode = FlightMode
        config = Configuration.create_with_component_type(ComponentType.GROUND_STATION)
        self.mavsdk = Mavsdk(config)
        await self.mavsdk.add_any_connection(f"udpin://127.0.0.1:{port}")
        system = await self.mavsdk.first_autopilot(timeout_s=30.0)
        if system is None:
            sys.exit("FAIL: no autopilot discovered")
        self.tel = TelemetryAsync(system)
        self.action = ActionAsync(system)
        self.mission = MissionRawAsync(system)

    def health(self):
        return self.tel.subscribe_health()

    def home(self):
        return self.tel.subscribe_home()

    def armed(self):
        return self.tel.subscribe_armed()

    def in_air(self):
        return self.tel.subscribe_in_air()

    def position(self):
        return self.tel.subscribe_position()

    def battery(self):
        return self.tel.subscribe_battery()

    def flight_mode(self):
        return self.tel.subscribe_flight_mode()

    def progress(self):
        return self.mission.subscribe_mission_progress()

    def close(self):
        self.mavsdk.destroy()


class Grpc:
    """The classic gRPC API (mavsdk-grpc, mavsdk_server started by System)."""

    async def connect(self, port, grpc_port):
        from mavsdk_grpc import System
        from mavsdk_grpc.telemetry import FlightMode

        self.FlightMode = FlightMode
        self.drone = System(port=int(grpc_port))
        await self.drone.connect(system_address=f"udpin://127.0.0.1:{port}")

        async def connected():
            async for s in self.drone.core.connection_state():
                if s.is_connected:
                    return
        await asyncio.wait_for(connected(), 30)
        self.tel = self.drone.telemetry
        self.action = self.drone.action
        self.mission = self.drone.mission_raw

    def health(self):
        return self.tel.health()

    def home(self):
        return self.tel.home()

    def armed(self):
        return self.tel.armed()

    def in_air(self):
        return self.tel.in_air()

    def position(self):
        return self.tel.position()

    def battery(self):
        return self.tel.battery()

    def flight_mode(self):
        return self.tel.flight_mode()

    def progress(self):
        return self.mission.mission_progress()

    def close(self):
        self.drone._stop_mavsdk_server()


async def first(gen, pred, timeout, what):
    async def run():
        async for x in gen:
            if pred(x):
                return x
    try:
        return await asyncio.wait_for(run(), timeout)
    except asyncio.TimeoutError:
        sys.exit(f"FAIL: timed out waiting for {what}")


async def main():
    api, port, plan, kind = sys.argv[1:5]
    max_xtrack = float(sys.argv[5])
    grpc_port = sys.argv[6] if len(sys.argv) > 6 else "50051"
    v = Native() if api == "native" else Grpc()
    await v.connect(port, grpc_port)
    if plan == "-":
        # Watch only: the vehicle is there and ready to fly.
        await first(v.health(), lambda h: h.is_armable and h.is_global_position_ok, 60,
                    "health all OK")
        home = await first(v.home(), lambda h: True, 10, "home")
        print(f"ready at {home.latitude_deg:.7f},{home.longitude_deg:.7f}")
        v.close()
        print("OK")
        return
    health = await first(
        v.health(),
        lambda h: h.is_global_position_ok and h.is_home_position_ok and h.is_armable
        and h.is_gyrometer_calibration_ok and h.is_accelerometer_calibration_ok
        and h.is_magnetometer_calibration_ok and h.is_local_position_ok,
        60, "health all OK")
    print("health", health)
    data = await v.mission.import_qgroundcontrol_mission(plan)
    items = data.mission_items
    print(f"uploading {len(items)} items")
    await v.mission.upload_mission(items)
    back = await v.mission.download_mission()
    if len(back) != len(items):
        sys.exit(f"FAIL: downloaded {len(back)} items, uploaded {len(items)}")
    home = await first(v.home(), lambda h: True, 10, "home")
    track = Track(json.load(open(plan)), home)
    await v.action.arm()
    await first(v.armed(), lambda a: a, 10, "armed")
    await v.mission.start_mission()

    async def record():
        async for p in v.position():
            track.add(p)
    recorder = asyncio.ensure_future(record())
    progress = await first(v.progress(), lambda p: p.total > 0 and p.current == p.total, 600,
                           "mission progress to reach the end")
    print("progress", progress.current, "/", progress.total)
    for _ in range(50):
        if await v.mission.is_mission_finished():
            break
        await asyncio.sleep(0.1)
    else:
        sys.exit("FAIL: mission not reported finished")
    print("mission finished")
    await v.action.return_to_launch()
    if kind == "quad":
        await first(v.in_air(), lambda a: not a, 300, "landed")
        await first(v.armed(), lambda a: not a, 60, "disarmed")
    else:
        # A boat sails home and holds there.
        await first(v.flight_mode(), lambda m: m == v.FlightMode.RETURN_TO_LAUNCH, 30,
                    "Return mode")
        await first(v.flight_mode(), lambda m: m == v.FlightMode.HOLD, 300, "Hold at home")
        await v.action.disarm()
        await first(v.armed(), lambda a: not a, 30, "disarmed")
    recorder.cancel()
    batt = await first(v.battery(), lambda b: True, 10, "battery")
    print(f"battery {batt.voltage_v:.2f} V, {batt.remaining_percent:.1f} %")
    if not (0 < batt.remaining_percent < 100):
        sys.exit(f"FAIL: battery did not drain ({batt.remaining_percent} %)")
    rms, mx = track.cross_track()
    print(f"track: {track.n} points, cross-track RMS {rms:.3f} m, max {mx:.3f} m, "
          f"final {track.final_from_home():.2f} m from home")
    if track.n < 50:
        sys.exit("FAIL: too few position reports")
    if mx > max_xtrack:
        sys.exit(f"FAIL: cross-track max {mx:.2f} m > {max_xtrack} m")
    if track.final_from_home() > 5.0:
        sys.exit("FAIL: did not come back home")
    v.close()
    print("OK")


asyncio.run(main())
