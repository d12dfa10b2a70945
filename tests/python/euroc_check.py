"""Opens a mavsitl recording as a EuRoC-style data set, as a SLAM tool's
loader does: the ASL folders under mav0/ read with OpenCV, NumPy and
PyYAML, Kalibr's camchain-imucam.yaml and imu.yaml beside them, and the
LiDAR's binary PCD sweeps. Prints one JSON line of what it found.

Usage: euroc_check.py RECORDING_DIR
"""

import csv
import json
import os
import sys

import cv2
import numpy as np
import yaml

PCD_FIELDS = np.dtype(
    [("x", "<f4"), ("y", "<f4"), ("z", "<f4"), ("t", "<f4"), ("ring", "<u2"), ("label", "u1")]
)


def index(folder):
    """data.csv's rows: (timestamp ns, file name, the rest)."""
    with open(os.path.join(folder, "data.csv"), newline="") as f:
        rows = [r for r in csv.reader(f) if r and not r[0].startswith("#")]
    return [(int(r[0]), r[1].strip(), r[2:]) for r in rows]


def t_bs(sensor):
    m = sensor["T_BS"]
    return np.array(m["data"], dtype=float).reshape(m["rows"], m["cols"])


def is_rigid(t):
    r = t[:3, :3]
    return bool(
        np.allclose(r @ r.T, np.eye(3), atol=1e-9)
        and abs(np.linalg.det(r) - 1.0) < 1e-9
        and np.allclose(t[3], [0, 0, 0, 1])
    )


def read_pcd(path):
    with open(path, "rb") as f:
        data = f.read()
    end = data.index(b"DATA binary\n") + len(b"DATA binary\n")
    header = dict(
        line.split(" ", 1) for line in data[:end].decode().splitlines() if not line.startswith("#")
    )
    n = int(header["POINTS"])
    return header["FIELDS"], np.frombuffer(data[end:], dtype=PCD_FIELDS, count=n)


def cameras(mav0, imu_stamps):
    out = {}
    for name in sorted(os.listdir(mav0)):
        if not name.startswith(("cam", "depth", "seg")):
            continue
        folder = os.path.join(mav0, name)
        with open(os.path.join(folder, "sensor.yaml")) as f:
            sensor = yaml.safe_load(f)
        rows = index(folder)
        shapes, dtypes = set(), set()
        for _, file, _ in rows:
            img = cv2.imread(os.path.join(folder, "data", file), cv2.IMREAD_UNCHANGED)
            shapes.add(img.shape)
            dtypes.add(str(img.dtype))
        w, h = sensor["resolution"]
        centre = None
        if name.startswith("depth") and rows:
            img = cv2.imread(os.path.join(folder, "data", rows[-1][1]), cv2.IMREAD_UNCHANGED)
            centre = int(img[h // 2, w // 2])
        out[name] = {
            "frames": len(rows),
            "on_imu_clock": all(t in imu_stamps for t, _, _ in rows),
            "shapes": sorted(list(s) for s in shapes),
            "dtypes": sorted(dtypes),
            "resolution": [w, h],
            "rate_hz": sensor["rate_hz"],
            "intrinsics": sensor["intrinsics"],
            "rigid": is_rigid(t_bs(sensor)),
            "t": t_bs(sensor)[:3, 3].tolist(),
            "last_depth_mm_centre": centre,
        }
    return out


def kalibr(root, mav0):
    with open(os.path.join(root, "camchain-imucam.yaml")) as f:
        chain = yaml.safe_load(f)
    with open(os.path.join(root, "imu.yaml")) as f:
        imu = yaml.safe_load(f)
    inverse_of_t_bs = []
    for cam, c in chain.items():
        with open(os.path.join(mav0, cam, "sensor.yaml")) as f:
            sensor = yaml.safe_load(f)
        product = np.array(c["T_cam_imu"]) @ t_bs(sensor)
        inverse_of_t_bs.append(bool(np.allclose(product, np.eye(4), atol=1e-8)))
    baselines = [
        float(np.linalg.norm(np.array(c["T_cn_cnm1"])[:3, 3])) for c in chain.values() if "T_cn_cnm1" in c
    ]
    return {
        "chain": sorted(chain),
        "T_cam_imu_inverts_T_BS": inverse_of_t_bs,
        "baselines": baselines,
        "imu_keys": sorted(imu),
        "imu_update_rate": imu["update_rate"],
    }


def lidars(mav0):
    out = {}
    for name in sorted(os.listdir(mav0)):
        if not name.startswith("lidar"):
            continue
        folder = os.path.join(mav0, name)
        with open(os.path.join(folder, "sensor.yaml")) as f:
            sensor = yaml.safe_load(f)
        sweeps = index(folder)
        counts_match, t_max, rings, fields = True, 0.0, set(), set()
        for _, file, rest in sweeps:
            f, pts = read_pcd(os.path.join(folder, "data", file))
            fields.add(f)
            counts_match &= len(pts) == int(rest[0])
            if len(pts):
                t_max = max(t_max, float(pts["t"].max()))
                rings.update(int(r) for r in np.unique(pts["ring"]))
        out[name] = {
            "sweeps": len(sweeps),
            "counts_match": counts_match,
            "t_max_s": t_max,
            "rings": len(rings),
            "fields": sorted(fields),
            "rate_hz": sensor["rate_hz"],
            "rigid": is_rigid(t_bs(sensor)),
        }
    return out


def main():
    root = sys.argv[1]
    mav0 = os.path.join(root, "mav0")
    imu = index(os.path.join(mav0, "imu0"))
    imu_stamps = {t for t, _, _ in imu}
    with open(os.path.join(mav0, "imu0", "sensor.yaml")) as f:
        imu_sensor = yaml.safe_load(f)
    print(
        json.dumps(
            {
                "imu_rows": len(imu),
                "imu_identity": bool(np.allclose(t_bs(imu_sensor), np.eye(4))),
                "cameras": cameras(mav0, imu_stamps),
                "kalibr": kalibr(root, mav0),
                "lidars": lidars(mav0),
            }
        )
    )


if __name__ == "__main__":
    main()
