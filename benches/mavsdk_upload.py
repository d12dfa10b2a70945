"""Wall time of a 500-item mission upload from MAVSDK (native 4.x) to a running
`mavsitl serve`, over UDP on this machine: the figure a user waits for.

usage: .venv/bin/python benches/mavsdk_upload.py PORT [ITEMS] [RUNS]
(start `mavsitl serve --gcs-out 127.0.0.1:PORT` first)
"""

import asyncio
import statistics
import sys
import time

from mavsdk.asyncio import ComponentType, Configuration, Mavsdk
from mavsdk.asyncio.plugins.mission_raw import MissionRawAsync
from mavsdk.plugins.mission_raw import MissionItem


async def main():
    port = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    config = Configuration.create_with_component_type(ComponentType.GROUND_STATION)
    async with Mavsdk(config) as mavsdk:
        await mavsdk.add_any_connection(f"udpin://127.0.0.1:{port}")
        system = await mavsdk.first_autopilot(timeout_s=30.0)
        mission = MissionRawAsync(system)
        items = [
            MissionItem(i, 6, 16, int(i == 0), 1, 0.0, 2.0, 0.0, float("nan"),
                        473977420 + (i % 50) * 200, 85455940 + (i // 50) * 200, 20.0, 0)
            for i in range(n)
        ]
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            await mission.upload_mission(items)
            times.append(time.perf_counter() - t0)
        back = await mission.download_mission()
        assert len(back) == n, f"downloaded {len(back)} of {n}"
        print(f"{n}-item upload: median {statistics.median(times) * 1000:.0f} ms, "
              f"min {min(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms over {runs} runs")


asyncio.run(main())
