"""Fly a QGroundControl plan with MAVSDK-Python 4.x (native API) against a
running `mavsitl serve`: discover, wait for health, upload through MissionRaw's
QGroundControl importer, arm, start, wait for the mission to finish, RTL, wait
for landed and disarmed. Prints the track statistics and exits non-zero on any
failure.

usage: mavsdk_mission.py PORT PLAN quad|boat MAX_XTRACK_M
"""

import asyncio
import json
import sys

from mavsdk.asyncio import ComponentType, Configuration, Mavsdk
from mavsdk.asyncio.plugins.action import ActionAsync
from mavsdk.asyncio.plugins.mission_raw import MissionRawAsync
from mavsdk.asyncio.plugins.telemetry import TelemetryAsync

from track import Track


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
    port, plan, kind, max_xtrack = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    config = Configuration.create_with_component_type(ComponentType.GROUND_STATION)
    async with Mavsdk(config) as mavsdk:
        await mavsdk.add_any_connection(f"udpin://127.0.0.1:{port}")
        system = await mavsdk.first_autopilot(timeout_s=30.0)
        if system is None:
            sys.exit("FAIL: no autopilot discovered")
        tel, act, mis = TelemetryAsync(system), ActionAsync(system), MissionRawAsync(system)
        health = await first(
            tel.subscribe_health(),
            lambda h: h.is_global_position_ok and h.is_home_position_ok and h.is_armable
            and h.is_gyrometer_calibration_ok and h.is_accelerometer_calibration_ok
            and h.is_magnetometer_calibration_ok and h.is_local_position_ok,
            60, "health all OK")
        print("health", health)
        data = await mis.import_qgroundcontrol_mission(plan)
        items = data.mission_items
        print(f"uploading {len(items)} items")
        await mis.upload_mission(items)
        back = await mis.download_mission()
        if len(back) != len(items):
            sys.exit(f"FAIL: downloaded {len(back)} items, uploaded {len(items)}")
        home = await first(tel.subscribe_home(), lambda h: True, 10, "home")
        track = Track(json.load(open(plan)), home)
        await act.arm()
        await first(tel.subscribe_armed(), lambda a: a, 10, "armed")
        await mis.start_mission()

        async def record():
            async for p in tel.subscribe_position():
                track.add(p)
        recorder = asyncio.ensure_future(record())
        progress = await first(mis.subscribe_mission_progress(),
                               lambda p: p.total > 0 and p.current == p.total, 600,
                               "mission progress to reach the end")
        print("progress", progress.current, "/", progress.total)
        if not await mis.is_mission_finished():
            await first(mis.subscribe_mission_progress(), lambda p: True, 5, "progress")
            if not await mis.is_mission_finished():
                sys.exit("FAIL: mission not reported finished")
        print("mission finished")
        await act.return_to_launch()
        if kind == "quad":
            await first(tel.subscribe_in_air(), lambda a: not a, 300, "landed")
            await first(tel.subscribe_armed(), lambda a: not a, 60, "disarmed")
        else:
            await first(tel.subscribe_flight_mode(), lambda m: str(m).endswith("RETURN_TO_LAUNCH") or str(m).endswith("HOLD"), 30, "return mode")
            await asyncio.sleep(5)
            await act.disarm()
            await first(tel.subscribe_armed(), lambda a: not a, 30, "disarmed")
        recorder.cancel()
        batt = await first(tel.subscribe_battery(), lambda b: True, 10, "battery")
        print(f"battery {batt.voltage_v:.2f} V, {batt.remaining_percent:.1f} %")
        if not (0 < batt.remaining_percent < 100):
            sys.exit(f"FAIL: battery did not drain ({batt.remaining_percent} %)")
        rms, mx = track.cross_track()
        print(f"track: {track.n} points, cross-track RMS {rms:.3f} m, max {mx:.3f} m, "
              f"final {track.final_from_home():.2f} m from home")
        if mx > max_xtrack:
            sys.exit(f"FAIL: cross-track max {mx:.2f} m > {max_xtrack} m")
        if track.final_from_home() > 5.0:
            sys.exit("FAIL: did not come back home")
        print("OK")


asyncio.run(main())
