"""Drives mavsitl's AirSim car API with AirSim's own Python client: the
steps of AirSim's hello_car.py (forward, brake, reverse, reset), then a
20 m square by throttle and steering alone, with the clock paused and
stepped. Prints one JSON line of measurements; exits non-zero with a
message on any failure.

Usage: airsim_car.py PORT
"""
import json
import math
import sys

import airsim


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def truth(c):
    k = c.simGetGroundTruthKinematics()
    p, v = k.position, k.linear_velocity
    yaw = airsim.to_eularian_angles(k.orientation)[2]
    return (p.x_val, p.y_val), (v.x_val, v.y_val), yaw


def step(c, seconds):
    c.simContinueForTime(seconds)


def hello_car(c, out):
    """AirSim's hello_car.py, step by step (without its images)."""
    controls = airsim.CarControls()
    controls.throttle = 0.5
    controls.steering = 0
    c.setCarControls(controls)
    step(c, 3)
    s = c.getCarState()
    out["forward_speed"] = s.speed
    out["forward_gear"] = s.gear
    controls.throttle = 0
    controls.brake = 1
    c.setCarControls(controls)
    step(c, 3)
    out["braked_speed"] = c.getCarState().speed
    controls.brake = 0
    controls.throttle = -0.5
    controls.is_manual_gear = True
    controls.manual_gear = -1
    c.setCarControls(controls)
    step(c, 3)
    s = c.getCarState()
    out["reverse_speed"] = s.speed
    out["reverse_gear"] = s.gear
    back = c.getCarControls()
    out["controls_read_back"] = [back.throttle, back.manual_gear, back.is_manual_gear]
    c.reset()
    c.enableApiControl(True)
    out["after_reset"], _, _ = truth(c)


def square(c, out):
    """A 20 m square north, east, south, west, by steering towards each
    corner and holding 2 m/s with the throttle; the speeds getCarState
    reports beside ground truth's along the way."""
    corners = [(20.0, 0.0), (20.0, 20.0), (0.0, 20.0), (0.0, 0.0)]
    controls = airsim.CarControls()
    worst = 0.0
    compared = 0
    reached = []
    t = 0.0
    for target in corners:
        for _ in range(4000):
            (n, e), (vn, ve), yaw = truth(c)
            dn, de = target[0] - n, target[1] - e
            if math.hypot(dn, de) < 1.5:
                reached.append(round(t, 2))
                break
            err = math.atan2(de, dn) - yaw
            err = (err + math.pi) % (2 * math.pi) - math.pi
            speed = c.getCarState().speed
            forward = vn * math.cos(yaw) + ve * math.sin(yaw)
            worst = max(worst, abs(speed - forward))
            compared += 1
            controls.steering = max(-1.0, min(1.0, 2.0 * err))
            controls.throttle = max(0.0, min(1.0, 0.3 + 0.3 * (2.0 - speed)))
            c.setCarControls(controls)
            step(c, 0.05)
            t += 0.05
        else:
            fail(f"corner {target} not reached")
    controls.throttle = 0
    controls.brake = 1
    c.setCarControls(controls)
    step(c, 2)
    out["square_corners_s"] = reached
    out["square_end"], _, _ = truth(c)
    out["speed_vs_truth_worst"] = worst
    out["speeds_compared"] = compared


def main():
    port = int(sys.argv[1])
    c = airsim.CarClient(port=port)
    c.confirmConnection()
    out = {"version": c.getServerVersion()}
    try:
        c.setCarControls(airsim.CarControls())
        fail("setCarControls without API control was accepted")
    except Exception as e:  # the server refuses it with its reason
        out["without_api_control"] = str(e)
    c.enableApiControl(True)
    c.simPause(True)
    try:
        # CarClient has no getMultirotorState: sent as a multirotor client would.
        c.client.call("getMultirotorState", "")
        fail("getMultirotorState on a car was answered")
    except Exception as e:
        out["multirotor_call"] = str(e)
    hello_car(c, out)
    square(c, out)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
