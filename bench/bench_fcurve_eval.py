"""Bulk F-Curve evaluation speed (core/io/fcurve_eval.py and its fcurve_* parts), no Blender needed.

Run: python -m bench.bench_fcurve_eval [--repeat 7]

100 sparse Bezier curves of 700 keys each (90% Bezier, 10% linear segments,
uneven handles, as a hand-keyed or decimated take has) evaluated on 5,000
frames in one call; prints the median and best time and the cost per curve
and frame.
"""

import argparse
import statistics
import sys
import time

import numpy as np

if not __package__:
    sys.exit("Run from the repository root as: python -m bench.bench_fcurve_eval")

from core.io.fcurve_eval import evaluate_curves  # noqa: E402
from core.io.fcurve_keys import BEZIER, LINEAR  # noqa: E402


def sparse_curves(rng, count=100, keys=700):
    curves = []
    for _ in range(count):
        x = np.cumsum(rng.integers(1, 13, keys)).astype(float)
        y = rng.uniform(-5, 5, keys)
        co = np.column_stack([x, y])
        # Handles a third of the way to the neighbours, then jittered.
        hl, hr = co.copy(), co.copy()
        step = np.diff(co, axis=0) / 3.0
        hl[1:] -= step
        hr[:-1] += step
        hl[:, 0] -= rng.uniform(0, 2, keys)
        hr[:, 0] += rng.uniform(0, 2, keys)
        hl[:, 1] += rng.normal(0, 2, keys)
        hr[:, 1] += rng.normal(0, 2, keys)
        curves.append({"co": co, "handle_left": hl, "handle_right": hr,
                       "interpolation": np.where(rng.random(keys) < 0.9, BEZIER, LINEAR)})
    return curves


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args(argv)
    curves = sparse_curves(np.random.default_rng(0))
    frames = np.arange(5000.0)
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        evaluate_curves(curves, frames, "LINEAR")
        times.append(time.perf_counter() - start)
    med = statistics.median(times)
    print("100 curves x 700 keys on 5,000 frames: median %.3f s, best %.3f s (%.2f us per curve-frame)"
          % (med, min(times), med / (len(curves) * len(frames)) * 1e6))


if __name__ == "__main__":
    main()
