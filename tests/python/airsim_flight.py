"""Flies mavsitl's AirSim API with AirSim's own Python client, the way
AirSim's examples do (hello_drone.py, multi-step box flights), then collects
IMU data in lockstep. Prints one JSON line of measurements; exits non-zero
with a message on any failure.

Usage: airsim_flight.py PORT [flight|collect|allan|attitude|external|px4]
"""
import json
import math
import sys
import time

import airsim


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def pos(c):
    p = c.simGetGroundTruthKinematics().position
    return p.x_val, p.y_val, p.z_val


def yaw_deg(c):
    o = c.getMultirotorState().kinematics_estimated.orientation
    return math.degrees(airsim.to_eularian_angles(o)[2])


def flight(c):
    out = {}
    c.enableApiControl(True)
    if not c.isApiControlEnabled():
        fail("api control not enabled")
    # The estimator and GPS need a few seconds before arming is allowed.
    for _ in range(200):
        if c.getMultirotorState().can_arm:
            break
        time.sleep(0.05)
    if not c.armDisarm(True):
        fail("arming refused: " + c.getMultirotorState().ready_message)
    c.takeoffAsync().join()
    out["after_takeoff"] = pos(c)
    c.moveToPositionAsync(10, 5, -6, 3).join()
    out["after_move"] = pos(c)
    # A 4 m box by body-frame velocity, 2 s per side.
    for vx, vy in [(2, 0), (0, 2), (-2, 0), (0, -2)]:
        c.moveByVelocityBodyFrameAsync(vx, vy, 0, 2).join()
    out["after_box"] = pos(c)
    y0 = yaw_deg(c)
    c.rotateByYawRateAsync(30, 3).join()
    c.hoverAsync().join()
    out["yaw_turned_deg"] = (yaw_deg(c) - y0 + 540) % 360 - 180
    c.landAsync().join()
    out["landed_state"] = c.getMultirotorState().landed_state
    out["after_land"] = pos(c)
    out["disarmed"] = c.armDisarm(False)
    # What needs Unreal's world (weather) is an error, not a hang.
    try:
        c.simSetWeatherParameter(airsim.WeatherParameter.Rain, 0.5)
        fail("simSetWeatherParameter answered")
    except Exception as e:  # msgpackrpc.error.RPCError
        out["weather_error"] = str(e)
    return out


def collect(c):
    """AirSim's data-collection pattern, all on a paused clock: power up,
    arm, take off and turn at 45 deg/s, then continue 5 ms at a time for 2 s
    reading every IMU sample and the ground truth."""
    c.simPause(True)
    if not c.simIsPause():
        fail("not paused")
    for _ in range(300):
        c.simContinueForTime(0.1)
        if c.getMultirotorState().can_arm:
            break
    c.enableApiControl(True)
    c.armDisarm(True)
    c.takeoffAsync()  # answered later: the clock only runs when continued
    c.simContinueForTime(8)
    c.rotateByYawRateAsync(45, 60)
    c.simContinueForTime(2)
    c.client.call("getImuSamples", "", "")  # what came before
    yaw0 = yaw_rad(c)
    stamps, gyro_z = [], []
    for _ in range(400):
        c.simContinueForTime(0.005)
        for s in c.client.call("getImuSamples", "", ""):
            d = airsim.ImuData.from_msgpack(s)
            stamps.append(d.time_stamp)
            gyro_z.append(d.angular_velocity.z_val)
    yaw1 = yaw_rad(c)
    dts = [b - a for a, b in zip(stamps, stamps[1:])]
    dt = (dts[0] if dts else 0) * 1e-9
    return {
        "samples": len(stamps),
        "first_ns": stamps[0] if stamps else None,
        "last_ns": stamps[-1] if stamps else None,
        "dt_min_ns": min(dts) if dts else None,
        "dt_max_ns": max(dts) if dts else None,
        "yaw_truth_rad": (yaw1 - yaw0 + math.pi) % (2 * math.pi) - math.pi,
        "yaw_gyro_rad": sum(gyro_z) * dt,
        "gyro_z_sum": sum(gyro_z),
    }


def yaw_rad(c):
    o = c.simGetGroundTruthKinematics().orientation
    return airsim.to_eularian_angles(o)[2]


def attitude(c):
    """Angle and rate commands after a take-off: nose up flies backwards,
    right wing down flies right, a yaw rate turns, more throttle climbs."""
    c.enableApiControl(True)
    for _ in range(200):
        if c.getMultirotorState().can_arm:
            break
        time.sleep(0.05)
    c.armDisarm(True)
    c.takeoffAsync().join()
    c.moveToZAsync(-6, 2).join()
    out = {"start": pos(c)}
    c.moveByRollPitchYawZAsync(0, 0.15, 0, -6, 2).join()
    out["after_pitch_up"] = pos(c)
    c.hoverAsync().join()
    c.moveByRollPitchYawrateZAsync(0.15, 0, 0, -6, 2).join()
    out["after_roll_right"] = pos(c)
    y0 = yaw_rad(c)
    c.moveByRollPitchYawrateZAsync(0, 0, 0.5, -6, 2).join()
    out["yaw_by_rate"] = (yaw_rad(c) - y0 + math.pi) % (2 * math.pi) - math.pi
    c.hoverAsync().join()
    z0 = pos(c)[2]
    c.moveByAngleRatesThrottleAsync(0, 0, 0, 0.8, 1.5).join()
    out["climb_by_throttle"] = z0 - pos(c)[2]
    c.hoverAsync().join()
    c.landAsync().join()
    return out


def external(c):
    """ExternalPhysicsEngine: the client's poses move the vehicle. Held 10 m
    up and turned 0.01 rad every 5 ms (2 rad/s), the IMU reads that turn and
    1 g up; a motion command is refused."""
    c.simPause(True)
    c.client.call("getImuSamples", "", "")
    gz, az = [], []
    for k in range(1, 201):
        q = airsim.to_quaternion(0, 0, 0.01 * k)
        c.simSetVehiclePose(airsim.Pose(airsim.Vector3r(0, 0, -10), q), True)
        c.simContinueForTime(0.005)
        for s in c.client.call("getImuSamples", "", ""):
            d = airsim.ImuData.from_msgpack(s)
            if k > 2:
                gz.append(d.angular_velocity.z_val)
                az.append(d.linear_acceleration.z_val)
    p = pos(c)
    # join() only waits; get() raises the server's error.
    f = c.moveToPositionAsync(5, 0, -10, 1)
    c.simContinueForTime(0.01)
    try:
        f.get()
        refused = ""
    except Exception as e:
        refused = str(e)
    return {
        "position": p,
        "gyro_z_mean": sum(gz) / len(gz),
        "accel_z_mean": sum(az) / len(az),
        "refused": refused,
    }


def adev(x, rate_hz, tau_s):
    """Overlapping Allan deviation of samples x at cluster time tau_s."""
    import numpy as np
    m = int(round(tau_s * rate_hz))
    theta = np.cumsum(np.asarray(x, dtype=float)) / rate_hz
    d = theta[2 * m:] - 2 * theta[m:-m] + theta[:-2 * m]
    return float(np.sqrt(np.mean(d * d) / (2 * tau_s * tau_s)))


def allan(c):
    """300 s at rest, paused and continued 10 s at a time: the IMU's rate and
    the Allan deviation of its gyro x and accelerometer x at 1 s."""
    c.simPause(True)
    stamps, gx, ax = [], [], []
    for _ in range(30):
        c.simContinueForTime(10)
        for s in c.client.call("getImuSamples", "", ""):
            d = airsim.ImuData.from_msgpack(s)
            stamps.append(d.time_stamp)
            gx.append(d.angular_velocity.x_val)
            ax.append(d.linear_acceleration.x_val)
    dt = (stamps[-1] - stamps[0]) / (len(stamps) - 1) * 1e-9
    rate = 1.0 / dt
    return {
        "samples": len(stamps),
        "rate_hz": rate,
        "adev_gyro_1s": adev(gx, rate, 1.0),
        "adev_accel_1s": adev(ax, rate, 1.0),
    }


def px4(c):
    """A PX4Multirotor: PX4 flies, the client reads state on a clock it
    pauses and continues; the commands only PX4 takes are errors naming
    PX4's MAVLink port."""
    out = {"errors": {}}
    c.simPause(True)
    for name, call in [
        ("armDisarm", lambda: c.armDisarm(True)),
        ("takeoffAsync", lambda: c.takeoffAsync().get()),  # join() drops errors
        ("moveToPositionAsync", lambda: c.moveToPositionAsync(1, 1, -2, 1).get()),
    ]:
        try:
            call()
            fail(name + " answered")
        except Exception as e:  # msgpackrpc.error.RPCError
            out["errors"][name] = str(e)
    c.client.call("getImuSamples", "", "")  # what came before
    stamps, states = [], []
    for _ in range(100):
        c.simContinueForTime(0.02)
        stamps += [airsim.ImuData.from_msgpack(s).time_stamp
                   for s in c.client.call("getImuSamples", "", "")]
        states.append(c.getMultirotorState().timestamp)
    dts = [b - a for a, b in zip(stamps, stamps[1:])]
    st = c.getMultirotorState()
    home = c.getHomeGeoPoint()
    out.update({
        "samples": len(stamps),
        "dt_min_ns": min(dts) if dts else None,
        "dt_max_ns": max(dts) if dts else None,
        "state_steps_ns": sorted({b - a for a, b in zip(states, states[1:])}),
        "landed_state": st.landed_state,
        "z": pos(c)[2],
        "home": [home.latitude, home.longitude, home.altitude],
        "paused": c.simIsPause(),
    })
    return out


def hostile(c):
    """Out-of-range calls are refused with an error the client raises, and
    the server keeps serving; an endless continue stops on a pause from
    another client, which gets its answer."""
    import threading
    refused = {}

    def refuses(name, call):
        try:
            call()
            refused[name] = False
        except Exception as e:  # msgpackrpc's RPCError
            refused[name] = str(e)

    refuses("wind_1e300", lambda: c.simSetWind(airsim.Vector3r(1e300, 0, 0)))
    refuses("wind_200", lambda: c.simSetWind(airsim.Vector3r(200, 0, 0)))
    refuses("pose_x_1e300", lambda: c.simSetVehiclePose(
        airsim.Pose(airsim.Vector3r(1e300, 0, 0), airsim.to_quaternion(0, 0, 0)), True))
    refuses("pose_z_-1e9", lambda: c.simSetVehiclePose(
        airsim.Pose(airsim.Vector3r(0, 0, -1e9), airsim.to_quaternion(0, 0, 0)), True))
    refuses("continue_1e300", lambda: c.simContinueForTime(1e300))
    refuses("frames_2^64-1", lambda: c.simContinueForFrames(2**64 - 1))
    c.simSetWind(airsim.Vector3r(50, 0, 0))
    wind_50_ok = True
    other = airsim.MultirotorClient(port=c.client._address.port, timeout_value=30)
    done = {}

    def endless():
        t0 = time.time()
        other.simContinueForTime(1e6)
        done["after_s"] = time.time() - t0

    th = threading.Thread(target=endless)
    th.start()
    time.sleep(0.5)
    c.simPause(True)
    th.join(timeout=20)
    return {
        "refused": refused,
        "wind_50_ok": wind_50_ok,
        "continue_answered_after_pause_s": done.get("after_s"),
        "paused": c.simIsPause(),
        "still_serving": c.getServerVersion() is not None,
    }


def no_control(c):
    """Arming before enableApiControl(True): AirSim answers False."""
    return {"armed": c.armDisarm(True)}


def main():
    port = int(sys.argv[1])
    what = sys.argv[2] if len(sys.argv) > 2 else "flight"
    c = airsim.MultirotorClient(port=port, timeout_value=120)
    c.confirmConnection()
    out = {"version": c.getServerVersion()}
    out.update({"flight": flight, "collect": collect, "allan": allan, "attitude": attitude, "external": external, "px4": px4, "hostile": hostile,
                "no_control": no_control}[what](c))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
