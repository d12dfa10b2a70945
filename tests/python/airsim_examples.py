"""AirSim's own example scripts (PythonClient/multirotor in AirSim's
repository), as a new user runs them: the same calls in the same order,
started right after the server, with AirSim's Python client. Each mode
measures what its script intends and prints one JSON line; a failure exits
non-zero with a message. Waits between calls are in sim time here (the
server runs faster than real time), where the scripts sleep.

Usage: airsim_examples.py PORT CLOCK_SPEED [takeoff|box|pause_continue|reset|hold|multi|navigate]
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
    return [p.x_val, p.y_val, p.z_val]


def yaw_deg(c):
    o = c.simGetGroundTruthKinematics().orientation
    return math.degrees(airsim.to_eularian_angles(o)[2])


def speed(c):
    v = c.simGetGroundTruthKinematics().linear_velocity
    return math.sqrt(v.x_val ** 2 + v.y_val ** 2 + v.z_val ** 2)


class Clock:
    """Sleeps `s` seconds of sim time at the server's clock speed."""

    def __init__(self, speed):
        self.speed = speed

    def sleep(self, s):
        time.sleep(s / self.speed)


def takeoff(c, clock):
    """takeoff.py: arm at once, take off, land, disarm."""
    out = {}
    c.confirmConnection()
    c.enableApiControl(True)
    out["armed"] = c.armDisarm(True)
    out["landed_before"] = c.getMultirotorState().landed_state
    c.takeoffAsync().join()
    out["after_takeoff"] = pos(c)
    c.landAsync().join()
    out["after_land"] = pos(c)
    out["disarmed"] = c.armDisarm(False)
    c.enableApiControl(False)
    return out


def box(c, clock):
    """box.py: a 5 m square by moveByVelocityZ at 7 m, turning to 90, 180,
    270 and 0 degrees, holding between the sides."""
    out = {}
    c.confirmConnection()
    c.enableApiControl(True)
    c.armDisarm(True)
    c.takeoffAsync().join()
    start = pos(c)
    z, duration, spd = -7, 5, 1
    yaws = []
    for vx, vy, yaw in [(spd, 0, 90), (0, spd, 180), (-spd, 0, 270), (0, -spd, 0)]:
        c.moveByVelocityZAsync(vx, vy, z, duration, airsim.DrivetrainType.MaxDegreeOfFreedom,
                               airsim.YawMode(False, yaw)).join()
        yaws.append(yaw_deg(c))
        clock.sleep(duration * spd)
    c.hoverAsync().join()
    end = pos(c)
    out["start"], out["end"], out["yaws_deg"] = start, end, yaws
    c.landAsync().join()
    return out


def pause_continue(c, clock):
    """pause_continue_drone.py, one cycle: a climb by moveByVelocityZ from
    the ground, then a command in flight that is paused, continued for 7.5 s
    and resumed."""
    out = {}
    c.confirmConnection()
    c.enableApiControl(True)
    c.armDisarm(True)
    c.moveByVelocityZAsync(0, 0, -20, 8).join()
    out["after_climb"] = pos(c)
    clock.sleep(3)
    c.moveByVelocityZAsync(-1, -1, -21, 15)
    clock.sleep(5)
    c.simPause(True)
    t0, p0 = c.getMultirotorState().timestamp, pos(c)
    time.sleep(1)
    t1, p1 = c.getMultirotorState().timestamp, pos(c)
    out["paused_moved_m"] = math.dist(p0, p1)
    out["paused_time_s"] = (t1 - t0) * 1e-9
    wall = time.time()
    c.simContinueForTime(7.5)
    out["continue_wall_s"] = time.time() - wall
    t2, p2 = c.getMultirotorState().timestamp, pos(c)
    out["continued_time_s"] = (t2 - t1) * 1e-9
    out["continued_moved_m"] = math.dist(p1, p2)
    out["paused_after_continue"] = c.simIsPause()
    c.simPause(False)
    clock.sleep(2)
    out["resumed_moved_m"] = math.dist(p2, pos(c))
    return out


def reset(c, clock):
    """reset_test_drone.py: fly to 10 m, reset, arm again, fly again."""
    out = {}
    c.confirmConnection()
    c.enableApiControl(True)
    c.armDisarm(True)
    c.moveToPositionAsync(0, 0, -10, 5).join()
    out["first"] = pos(c)
    t_before = c.getMultirotorState().timestamp
    c.reset()
    st = c.getMultirotorState()
    out["after_reset"] = pos(c)
    out["ready_after_reset"] = st.ready
    out["time_goes_on"] = st.timestamp >= t_before
    c.enableApiControl(True)
    out["armed_again"] = c.armDisarm(True)
    clock.sleep(5)
    c.moveToPositionAsync(0, 0, -10, 5).join()
    out["second"] = pos(c)
    # drone_stress_test.py: move, reset, move at once; each climb takes its
    # sim time at the clock speed (after a reset it ran flat out).
    t = c.getMultirotorState().timestamp
    c.reset()
    c.enableApiControl(True)
    wall = time.time()
    c.moveToPositionAsync(0, 0, -10, 5).join()
    out["climb_after_reset_wall_s"] = time.time() - wall
    out["climb_after_reset_sim_s"] = (c.getMultirotorState().timestamp - t) * 1e-9
    out["third"] = pos(c)
    return out


def hold(c, clock):
    """Holding still (box.py's and survey.py's hoverAsync after a fast leg):
    a 10 m/s leg, hover, then 10 s of sim time watched from the stop."""
    out = {}
    c.confirmConnection()
    c.enableApiControl(True)
    c.armDisarm(True)
    c.takeoffAsync().join()
    c.moveToZAsync(-10, 3).join()
    c.moveByVelocityZAsync(10, 0, -10, 4).join()
    c.hoverAsync().join()
    while speed(c) > 0.2:
        time.sleep(0.01)
    stop, yaw0 = pos(c), yaw_deg(c)
    t0 = c.getMultirotorState().timestamp
    worst_m, worst_deg = 0.0, 0.0
    while (c.getMultirotorState().timestamp - t0) * 1e-9 < 10:
        worst_m = max(worst_m, math.dist(stop, pos(c)))
        worst_deg = max(worst_deg, abs((yaw_deg(c) - yaw0 + 540) % 360 - 180))
        time.sleep(0.01)
    out["stop"], out["drift_m"], out["turn_deg"] = stop, worst_m, worst_deg
    # And down again as fast as asked, up to the vehicle's limit.
    fastest, t = 0.0, time.time()
    f = c.moveToZAsync(-2, 5)
    while time.time() - t < 30 / clock.speed and pos(c)[2] < -2.6:
        v = c.simGetGroundTruthKinematics().linear_velocity
        fastest = max(fastest, v.z_val)
        time.sleep(0.01)
    f.join()
    out["fastest_descent_m_s"] = fastest
    return out


def geo_m(a, b):
    """Metres between two GeoPoints (flat earth; they are metres apart)."""
    north = (b.latitude - a.latitude) * 111_320.0
    east = (b.longitude - a.longitude) * 111_320.0 * math.cos(math.radians(a.latitude))
    return math.hypot(north, east)


def multi(c, clock):
    """multi_agent_drone.py: two drones of the settings, each addressed by
    name, take off together and fly apart, each to a point of its own frame
    (from its own start), and each takes its two images, saved as the
    script saves them (a PNG as it came, an uncompressed array flipped and
    written by airsim.write_png)."""
    out = {"vehicles": c.listVehicles()}
    c.confirmConnection()
    c.enableApiControl(True, "Drone1")
    c.enableApiControl(True, "Drone2")
    out["armed"] = [c.armDisarm(True, "Drone1"), c.armDisarm(True, "Drone2")]
    f1 = c.takeoffAsync(vehicle_name="Drone1")
    f2 = c.takeoffAsync(vehicle_name="Drone2")
    f1.join()
    f2.join()
    f1 = c.moveToPositionAsync(-5, 5, -10, 5, vehicle_name="Drone1")
    f2 = c.moveToPositionAsync(5, -5, -10, 5, vehicle_name="Drone2")
    f1.join()
    f2.join()
    s1 = c.getMultirotorState(vehicle_name="Drone1")
    s2 = c.getMultirotorState(vehicle_name="Drone2")
    k1, k2 = s1.kinematics_estimated.position, s2.kinematics_estimated.position
    out["drone1"] = [k1.x_val, k1.y_val, k1.z_val]
    out["drone2"] = [k2.x_val, k2.y_val, k2.z_val]
    out["apart_m"] = geo_m(s1.gps_location, s2.gps_location)
    out["images"] = multi_images(c)
    try:
        c.getMultirotorState(vehicle_name="Drone3")
        out["unknown"] = "answered"
    except Exception as e:  # msgpackrpc.error.RPCError
        out["unknown"] = str(e)
    c.armDisarm(False, "Drone1")
    c.armDisarm(False, "Drone2")
    c.reset()
    p1 = c.simGetVehiclePose("Drone1").position
    out["drone1_after_reset"] = [p1.x_val, p1.y_val, p1.z_val]
    return out


def multi_images(c):
    """multi_agent_drone.py's image calls and their saving: per image, its
    type, size, what the saved file decodes to (NumPy and OpenCV), and
    where the camera stood (each drone's own NED frame, m)."""
    import os
    import tempfile

    import cv2
    import numpy as np

    requests = [
        airsim.ImageRequest("0", airsim.ImageType.DepthVis),
        airsim.ImageRequest("1", airsim.ImageType.Scene, False, False)]
    responses1 = c.simGetImages(requests, vehicle_name="Drone1")
    responses2 = c.simGetImages(requests, vehicle_name="Drone2")
    tmp_dir = tempfile.mkdtemp(prefix="airsim_drone")
    out = []
    for idx, response in enumerate(responses1 + responses2):
        filename = os.path.normpath(os.path.join(tmp_dir, str(idx)) + ".png")
        if response.pixels_as_float:
            fail("multi_agent_drone.py asks for no float image")
        elif response.compress:
            airsim.write_file(filename, response.image_data_uint8)
        else:
            img1d = np.frombuffer(response.image_data_uint8, dtype=np.uint8)
            img_rgb = img1d.reshape(response.height, response.width, 3)
            img_rgb = np.flipud(img_rgb)
            airsim.write_png(filename, img_rgb)
        img = cv2.imread(filename, cv2.IMREAD_COLOR)
        if img is None:
            fail(f"{filename} does not decode")
        out.append({"type": response.image_type, "compress": response.compress,
                    "size": [response.width, response.height],
                    "decoded": list(img.shape),
                    "from": [response.camera_position.x_val, response.camera_position.y_val,
                             response.camera_position.z_val]})
    return out


def navigate(c, clock):
    """navigate.py's loop, as written, for `rounds` rounds: a DepthVis image
    of camera "0" by simGetImage, decoded by OpenCV, its top half cut into
    five bands, the most open band steered for, and a 1 s velocity command
    at 6 m along the heading (ForwardOnly). Where the script hovers and
    waits for a key (the band ahead reads closer than 20 of 255), the key
    is taken as pressed. Each image is taken paused, between two reads of
    the pose, for the camera's pitch and height when it was taken."""
    import cv2
    import numpy as np

    c.confirmConnection()
    c.enableApiControl(True)
    c.armDisarm(True)
    c.takeoffAsync().join()
    yaw, pi, vx, vy = 0, 3.14159265483, 0, 0
    rounds = []
    for _ in range(12):
        c.simPause(True)
        before = c.simGetVehiclePose()
        result = c.simGetImage("0", airsim.ImageType.DepthVis)
        after = c.simGetVehiclePose()
        c.simPause(False)
        if result == "\0":
            fail("simGetImage returned no image")
        png = cv2.imdecode(np.frombuffer(result, np.int8), cv2.IMREAD_UNCHANGED)
        gray = cv2.cvtColor(png, cv2.COLOR_BGR2GRAY)
        top = np.vsplit(gray, 2)[0]
        bands = np.hsplit(top, [50, 100, 150, 200])
        maxes = [int(np.max(x)) for x in bands]
        least = int(np.argmin(maxes))
        distance = 255 - maxes[least]
        current = 255 - maxes[2]
        stopped = current < 20
        if stopped:
            c.hoverAsync().join()
        pitch, roll, yaw = airsim.to_eularian_angles(c.simGetVehiclePose().orientation)
        if distance > current + 30:
            change = [-2 * pi / 10, -pi / 10, 0, pi / 10, 2 * pi / 10][least]
            yaw = yaw + change
            vx, vy = math.cos(yaw), math.sin(yaw)
        if vx == 0 and vy == 0:
            vx, vy = math.cos(yaw), math.sin(yaw)
        c.moveByVelocityZAsync(vx, vy, -6, 1, airsim.DrivetrainType.ForwardOnly,
                               airsim.YawMode(False, 0)).join()
        bottom = int(gray[-1, 0])
        pitches = [math.degrees(airsim.to_eularian_angles(p.orientation)[0])
                   for p in (before, after)]
        rounds.append({"shape": list(png.shape), "maxes": maxes, "stopped": stopped,
                       "bottom_left": bottom, "pitch_deg": pitches,
                       "height_m": [-p.position.z_val for p in (before, after)],
                       "at": pos(c), "yaw_deg": yaw_deg(c)})
    return {"rounds": rounds}


def main():
    port, clock_speed = int(sys.argv[1]), float(sys.argv[2])
    what = sys.argv[3]
    c = airsim.MultirotorClient(port=port)
    modes = {"takeoff": takeoff, "box": box, "pause_continue": pause_continue,
             "reset": reset, "hold": hold, "multi": multi, "navigate": navigate}
    print(json.dumps(modes[what](c, Clock(clock_speed))))


if __name__ == "__main__":
    main()
