"""AirSim's hello_drone.py flow (PythonClient/multirotor in AirSim's
repository) against mavsitl with AirSim's own client: state and sensors,
take-off, a move, the script's four image requests saved as the script
saves them (PFM, PNG and an uncompressed array through OpenCV), then a
collection's Scene, DepthPlanar and Segmentation images, the LiDAR, and
landing. Prints one JSON line of what it measured; exits non-zero with a
message on any failure.

Usage: airsim_vision.py PORT OUT_DIR
"""
import json
import os
import sys

import airsim
import cv2
import numpy as np


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def hello_drone(client, out_dir):
    """hello_drone.py, without its key presses."""
    client.getMultirotorState()
    client.getImuData()
    client.getBarometerData()
    client.getMagnetometerData()
    client.getGpsData()
    client.armDisarm(True)
    client.takeoffAsync().join()
    client.moveToPositionAsync(-10, 10, -10, 5).join()
    client.hoverAsync().join()
    responses = client.simGetImages([
        airsim.ImageRequest("0", airsim.ImageType.DepthVis),
        airsim.ImageRequest("1", airsim.ImageType.DepthPerspective, True),
        airsim.ImageRequest("1", airsim.ImageType.Scene),
        airsim.ImageRequest("1", airsim.ImageType.Scene, False, False)])
    saved = []
    for idx, response in enumerate(responses):
        filename = os.path.join(out_dir, str(idx))
        if response.pixels_as_float:
            airsim.write_pfm(os.path.normpath(filename + '.pfm'), airsim.get_pfm_array(response))
            saved.append(filename + '.pfm')
        elif response.compress:
            airsim.write_file(os.path.normpath(filename + '.png'), response.image_data_uint8)
            saved.append(filename + '.png')
        else:
            img1d = np.frombuffer(response.image_data_uint8, dtype=np.uint8)
            img_rgb = img1d.reshape(response.height, response.width, 3)
            cv2.imwrite(os.path.normpath(filename + '.png'), img_rgb)
            saved.append(filename + '.png')
    return responses, saved


def decoded(response):
    img = cv2.imdecode(np.frombuffer(response.image_data_uint8, np.uint8), cv2.IMREAD_COLOR)
    if img is None:
        fail("a compressed image is not a PNG")
    return img


def main():
    port = int(sys.argv[1])
    out_dir = sys.argv[2]
    client = airsim.MultirotorClient(port=port, timeout_value=120)
    client.confirmConnection()
    client.enableApiControl(True)
    out = {}
    responses, saved = hello_drone(client, out_dir)
    out["hello"] = [[r.image_type, r.width, r.height, len(r.image_data_uint8),
                     len(r.image_data_float) if r.pixels_as_float else 0,
                     r.pixels_as_float, r.compress] for r in responses]
    out["saved"] = [os.path.getsize(f) for f in saved]
    # A PNG decodes to the size it claims; the uncompressed array is the
    # same picture in B, G, R order.
    png = decoded(responses[2])
    out["png_shape"] = list(png.shape)
    raw = np.frombuffer(responses[3].image_data_uint8, np.uint8).reshape(png.shape)
    out["raw_equals_png"] = bool((raw == png).all())
    depth = airsim.get_pfm_array(responses[1])
    out["depth_finite_share"] = float(np.isfinite(depth).mean())
    # A collection on a paused clock: the three images of one instant from
    # the stereo pair, beside the IMU's latest sample.
    client.simPause(True)
    t0 = client.getImuData().time_stamp
    shots = client.simGetImages([
        airsim.ImageRequest("front_left", airsim.ImageType.Scene),
        airsim.ImageRequest("front_left", airsim.ImageType.DepthPlanar, True),
        airsim.ImageRequest("front_left", airsim.ImageType.Segmentation),
        airsim.ImageRequest("front_right", airsim.ImageType.Scene)])
    out["stamps"] = [r.time_stamp - t0 for r in shots]
    # Saved as a collection script saves them.
    airsim.write_file(os.path.join(out_dir, "left.png"), shots[0].image_data_uint8)
    airsim.write_pfm(os.path.join(out_dir, "left_depth.pfm"), airsim.get_pfm_array(shots[1]))
    airsim.write_file(os.path.join(out_dir, "left_seg.png"), shots[2].image_data_uint8)
    out["collection_files"] = [os.path.getsize(os.path.join(out_dir, f))
                               for f in ("left.png", "left_depth.pfm", "left_seg.png")]
    seg = decoded(shots[2])
    colours = {tuple(int(c) for c in px[::-1]) for px in seg.reshape(-1, 3)}
    out["seg_colours"] = sorted(list(c) for c in colours)
    client.simPause(False)
    a, b = shots[0].camera_position, shots[3].camera_position
    out["camera_gap"] = ((a.x_val - b.x_val) ** 2 + (a.y_val - b.y_val) ** 2 + (a.z_val - b.z_val) ** 2) ** 0.5
    info = client.simGetCameraInfo("front_left")
    out["fov"] = info.fov
    out["objects"] = client.simListSceneObjects("Cube.*")
    out["ball_id"] = client.simGetSegmentationObjectID("OrangeBall")
    lidar = client.getLidarData("Lidar1")
    out["lidar_points"] = len(lidar.point_cloud) // 3
    out["lidar_segmentation"] = len(lidar.segmentation)
    try:
        client.getLidarData("NoSuchLidar")
        out["lidar_error"] = None
    except Exception as e:  # the server's error, as the client raises it
        out["lidar_error"] = str(e)
    try:
        client.simGetImages([airsim.ImageRequest("nowhere", airsim.ImageType.Scene)])
        out["camera_error"] = None
    except Exception as e:
        out["camera_error"] = str(e)
    client.landAsync().join()
    client.armDisarm(False)
    client.enableApiControl(False)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
