"""Cross-track statistics of a flown track against a .plan's waypoints."""

import math

R = 6378137.0


def ne(lat, lon, lat0, lon0):
    n = math.radians(lat - lat0) * R
    e = math.radians(lon - lon0) * R * math.cos(math.radians(lat0))
    return n, e


class Track:
    def __init__(self, plan, home):
        self.lat0, self.lon0 = home.latitude_deg, home.longitude_deg
        pts = [(0.0, 0.0)]
        for it in plan["mission"]["items"]:
            if it.get("command") in (16, 22) and it["params"][4] is not None:
                pts.append(ne(it["params"][4], it["params"][5], self.lat0, self.lon0))
        self.legs = [(a, b) for a, b in zip(pts, pts[1:]) if math.dist(a, b) > 1.0]
        self.sq = 0.0
        self.max = 0.0
        self.n = 0
        self.last = None

    def add(self, p):
        x = ne(p.latitude_deg, p.longitude_deg, self.lat0, self.lon0)
        self.last = x
        d = min(seg_dist(x, a, b) for a, b in self.legs)
        self.sq += d * d
        self.n += 1
        self.max = max(self.max, d)

    def cross_track(self):
        return math.sqrt(self.sq / max(self.n, 1)), self.max

    def final_from_home(self):
        return math.hypot(*self.last) if self.last else float("inf")


def seg_dist(p, a, b):
    ax, ay = a
    bx, by = b
    px, py = p
    dx, dy = bx - ax, by - ay
    t = max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)))
    return math.hypot(px - ax - t * dx, py - ay - t * dy)
