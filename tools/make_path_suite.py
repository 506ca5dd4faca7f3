"""Write the path suite (samples/paths/*.json): scenario files the bake was not
tuned on, for measuring it (bench/bench_paths.py; results in bench/RESULTS.md).

Run from the repository root (no Blender needed):

    python -m tools.make_path_suite [--out samples/paths]

Every path starts standing at the origin facing -Y and ends standing. Speeds
ease in and out as the built-in scenarios do (3u^2 - 2u^3 over the ramp), and
waypoints are 0.1 s apart, with a waypoint on every sharp corner. The built-in
``showcase`` completes the suite.
"""

import argparse
import json
import math
import os

import numpy as np

from core.paths import scenario as sc, scenario_builtins
from core.maths.facing import yaw_to_facing

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "samples", "paths")
STEP = 0.1


def _profile(total, speed, ramp):
    """One move of ``total`` metres from standing to standing (core.paths.scenario's
    shape: ease in over ``ramp`` s, cruise, ease out): its duration and the
    distance covered at any time."""
    speed = min(speed, total / ramp)
    cruise = (total - speed * ramp) / speed
    end = 2 * ramp + cruise

    def eased(t):
        u = np.clip(t / ramp, 0.0, 1.0)
        return speed * ramp * (u ** 3 - 0.5 * u ** 4)

    def distance(t):
        t = np.asarray(t, dtype=np.float64)
        return np.where(t <= ramp, eased(t), np.where(t <= ramp + cruise, 0.5 * speed * ramp + speed * (t - ramp),
                                                      total - eased(end - t)))

    def time_at(s_value):   # in the cruise only (corners must not fall in a ramp)
        t = ramp + (s_value - 0.5 * speed * ramp) / speed
        if not ramp <= t <= ramp + cruise:
            raise ValueError("a corner falls in a ramp; make the legs longer")
        return t

    return end, distance, time_at


def polyline_move(t0, start, corners, speed, ramp):
    """Waypoints along straight legs through ``corners`` (list of (x, y)), one
    move (no stop at the corners), a waypoint exactly on each corner."""
    pts = np.vstack([start, corners])
    cum = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(pts, axis=0), axis=1))])
    end, distance, time_at = _profile(cum[-1], speed, ramp)
    ts = np.linspace(0.0, end, int(math.ceil(end / STEP - 1e-9)) + 1)
    ts = np.unique(np.concatenate([ts, [time_at(c) for c in cum[1:-1]]]))
    s = distance(ts)
    s[-1] = cum[-1]
    x = np.interp(s, cum, pts[:, 0])
    y = np.interp(s, cum, pts[:, 1])
    return [(t0 + float(t), float(a), float(b)) for t, a, b in zip(ts, x, y)]


def _builder_points(build):
    b = scenario_builtins._Builder()
    build(b)
    return b.points


def figure8():
    r = 1.75

    def build(b):
        b.stand(1.0)
        # Round a circle to the right, then one to the left: the two meet at the origin.
        b.move([("arc", r, -360.0), ("arc", r, 360.0)], 1.3, 1.2)
        b.stand(1.0)

    return ("Figure 8", "Stand 1 s, a figure 8 of two 1.75 m circles (right, then left) at 1.3 m/s, stand 1 s",
            _builder_points(build))


def zigzag():
    leg, n = 2.5, 6
    pos, corners = np.zeros(2), []
    for i in range(n):
        yaw = math.radians(45.0 if i % 2 == 0 else -45.0)  # alternate: every corner turns 90 degrees
        pos = pos + leg * yaw_to_facing(yaw)
        corners.append(pos.copy())
    pts = [(0.0, 0.0, 0.0)]
    pts += polyline_move(1.0, np.zeros(2), corners, 1.2, 1.2)
    t_end, x, y = pts[-1]
    pts.append((t_end + 1.0, x, y))
    return ("Zig-zag", "Stand 1 s, six 2.5 m legs at 1.2 m/s with sharp 90-degree corners, stand 1 s", pts)


def walk_stand_walk():
    def build(b):
        b.stand(1.0)
        for k in range(3):
            b.move([("line", 4.0)], 1.2, 1.2)
            b.stand(2.0 if k < 2 else 1.0)

    return ("Walk, stand, walk", "Stand 1 s, then three times: walk 4 m straight at 1.2 m/s and stand 2 s",
            _builder_points(build))


def slow_circle():
    def build(b):
        b.stand(1.0)
        b.move([("arc", 1.5, 720.0)], 1.0, 1.2)
        b.stand(1.0)

    return ("Slow circle", "Stand 1 s, walk twice round a 1.5 m circle to the left at 1 m/s, stand 1 s",
            _builder_points(build))


def run_reversal():
    def build(b):
        b.stand(1.0)
        b.move([("line", 12.0)], 3.0, 1.75)
        b.move([("line", 12.0)], 3.0, 1.75, turn_degrees=180.0)  # no stand: turn back at once
        b.stand(1.0)

    return ("Run reversal", "Stand 1 s, run 12 m at 3 m/s, turn back at once (180 degrees), run 12 m back, stand 1 s",
            _builder_points(build))


def strafe():
    def build(b):
        b.stand(1.0)
        b.move([("line", 4.0)], 1.0, 1.2, turn_degrees=90.0)     # to +X: the character's left
        b.stand(1.0)
        b.move([("line", 4.0)], 1.0, 1.2, turn_degrees=180.0)    # back to -X: its right
        b.stand(1.0)

    name, desc, pts = ("Strafe", "Facing held at 0 (-Y): stand 1 s, side-step 4 m to the left at 1 m/s, stand 1 s, "
                       "side-step 4 m back to the right, stand 1 s", _builder_points(build))
    return name, desc, [p + (0.0,) for p in pts]


SUITE = {
    "figure8": figure8,
    "zigzag": zigzag,
    "walk_stand_walk": walk_stand_walk,
    "slow_circle": slow_circle,
    "run_reversal": run_reversal,
    "strafe": strafe,
}


def fast_reversal():
    def build(b):
        b.stand(1.0)
        b.move([("line", 12.0)], 3.2, 1.75)
        b.move([("line", 12.0)], 3.2, 1.75, turn_degrees=180.0)
        b.stand(1.0)

    return ("Fast reversal", "Stand 1 s, run 12 m at 3.2 m/s, turn back at once (180 degrees), run 12 m back, "
            "stand 1 s", _builder_points(build))


def run_zigzag():
    leg, n = 4.2, 6
    pos, corners = np.zeros(2), []
    for i in range(n):
        pos = pos + leg * yaw_to_facing(math.radians(45.0 if i % 2 == 0 else -45.0))
        corners.append(pos.copy())
    pts = [(0.0, 0.0, 0.0)] + polyline_move(1.0, np.zeros(2), corners, 2.5, 1.2)
    t_end, x, y = pts[-1]
    pts.append((t_end + 1.0, x, y))
    return ("Run zig-zag", "Stand 1 s, six 4.2 m legs at 2.5 m/s with sharp 90-degree corners, stand 1 s", pts)


def start_stop():
    def build(b):
        b.stand(1.0)
        for k in range(4):
            b.move([("line", 6.0)], 2.5 if k % 2 else 1.2, 1.2)
            b.stand(2.0 if k < 3 else 1.0)

    return ("Start, stop", "Stand 1 s, then four times: 6 m straight (walk 1.2 m/s, then run 2.5 m/s in turn) "
            "and stand 2 s", _builder_points(build))


# Paths where the takes users bring hold little (bench/bench_gliding.py); not in the suite's files.
EXTRA = {
    "fast_reversal": fast_reversal,
    "run_zigzag": run_zigzag,
    "start_stop": start_stop,
}


def write(out, paths):
    """Write the scenario files of ``paths`` ({name: maker}) into ``out``; their paths."""
    os.makedirs(out, exist_ok=True)
    written = []
    for key, make in paths.items():
        data = to_dict(*make())
        sc.scenario_from_dict(data, key)   # refuse to write a file the loader would refuse
        path = os.path.join(out, key + ".json")
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=None, separators=(",", ":"))
            fh.write("\n")
        written.append((path, data))
    return written


def to_dict(name, description, points):
    out = []
    for p in points:
        d = {"t": round(p[0], 6), "x": round(p[1], 6) + 0.0, "y": round(p[2], 6) + 0.0}
        if len(p) == 4:
            d["facing"] = p[3]
        out.append(d)
    return {"name": name, "description": description, "points": out}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=OUT)
    args = ap.parse_args(argv)
    for path, data in write(args.out, SUITE):
        print("wrote %s (%.1f s, %d points)" % (path, data["points"][-1]["t"], len(data["points"])))


if __name__ == "__main__":
    main()
