"""Benchmark the exact nearest-row search: brute force against SearchIndex.

Run from the repository root:

    python -m bench.bench_search [--npz FILE] [--queries 1000] [--brute-queries-1m 200]

The base database is the ``features`` array of ``--npz`` if given, else synthetic smooth
random-walk trajectories of 5,562 rows x 27 columns (consecutive rows are consecutive
frames, so neighbouring rows are close), normalised per column. It is then tiled, with
a small offset and noise per tile, up to 1,000,000 rows.

Queries are random database rows plus gaussian noise (sigma 0.1, normalised units).
Every accelerated answer is compared with the brute-force answer (row and bit-identical
cost); the script exits with status 1 on any mismatch.
"""

import argparse
import os
import sys
import time

import numpy as np

if not __package__:
    sys.exit("Run from the repository root as: python -m bench.bench_search")

from core.database import search  # noqa: E402

BASE_ROWS = 5562
DIM = 27
BIG_ROWS = 1_000_000
NOISE = 0.1


def synthetic_base(rng, n_rows=BASE_ROWS, dim=DIM, clip_len=300):
    """Smooth random walks cut into clips, normalised per column, float32."""
    parts = []
    for start in range(0, n_rows, clip_len):
        length = min(clip_len, n_rows - start)
        # Integrated noise twice: velocities wander, positions follow smoothly.
        velocity = np.cumsum(rng.normal(0.0, 0.05, size=(length, dim)), axis=0)
        parts.append(np.cumsum(velocity, axis=0) + rng.normal(0.0, 3.0, size=dim))
    X = np.concatenate(parts)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    return X.astype(np.float32)


def tile_to(base, n_rows, rng):
    """Repeat ``base`` up to ``n_rows`` rows, each tile offset and jittered a little."""
    n_tiles = -(-n_rows // base.shape[0])
    tiles = []
    for _ in range(n_tiles):
        offset = rng.normal(0.0, 0.05, size=base.shape[1])
        jitter = rng.normal(0.0, 0.02, size=base.shape)
        tiles.append(base + offset + jitter)
    return np.concatenate(tiles)[:n_rows].astype(base.dtype)


def make_queries(X, n_queries, rng):
    """Random rows of ``X`` plus gaussian noise."""
    rows = rng.integers(0, X.shape[0], size=n_queries)
    return X[rows].astype(np.float64) + rng.normal(0.0, NOISE, size=(n_queries, X.shape[1]))


def time_each(fn, queries):
    """Call ``fn(q)`` for every query; return the answers and per-query microseconds."""
    answers, micros = [], np.empty(len(queries))
    for i, q in enumerate(queries):
        t0 = time.perf_counter()
        answers.append(fn(q))
        micros[i] = (time.perf_counter() - t0) * 1e6
    return answers, micros


def bench(name, X, queries, n_brute):
    """Time both searches on ``X``; return a result row and the mismatch count."""
    t0 = time.perf_counter()
    index = search.SearchIndex(X)
    build_ms = (time.perf_counter() - t0) * 1e3

    fast, fast_us = time_each(index.search, queries)
    slow, slow_us = time_each(lambda q: search.brute_force(X, q), queries[:n_brute])
    mismatches = sum(a != b for a, b in zip(fast[:n_brute], slow))
    row = {
        "name": name,
        "rows": X.shape[0],
        "build_ms": build_ms,
        "n_fast": len(queries),
        "n_brute": n_brute,
        "brute_med": np.median(slow_us),
        "brute_mean": slow_us.mean(),
        "index_med": np.median(fast_us),
        "index_mean": fast_us.mean(),
        "mismatches": mismatches,
    }
    return row


def print_table(rows):
    """Print the results as a compact fixed-width table."""
    head = (f"{'database':<22}{'rows':>10}{'build ms':>10}{'brute med':>11}{'brute mean':>12}"
            f"{'index med':>11}{'index mean':>12}{'x med':>8}{'x mean':>8}{'mismatch':>10}")
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['name']:<22}{r['rows']:>10,}{r['build_ms']:>10.1f}{r['brute_med']:>11.1f}"
              f"{r['brute_mean']:>12.1f}{r['index_med']:>11.1f}{r['index_mean']:>12.1f}"
              f"{r['brute_med'] / r['index_med']:>8.1f}{r['brute_mean'] / r['index_mean']:>8.1f}"
              f"{r['mismatches']:>6}/{r['n_brute']:<4}")
    print("times in microseconds per query (time.perf_counter); x = brute / index")
    for r in rows:
        print(f"{r['name']}: index timed on {r['n_fast']} queries, brute force and the "
              f"answer check on the first {r['n_brute']} of them")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--npz", help="file whose 'features' array is the base database")
    parser.add_argument("--queries", type=int, default=1000, help="queries per database")
    parser.add_argument("--brute-queries-1m", type=int, default=200,
                        help="queries timed with brute force at 1M rows (it is slow)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    rng = np.random.default_rng(args.seed)
    if args.npz:
        base = np.asarray(np.load(args.npz)["features"])
        source = os.path.basename(args.npz)
    else:
        base = synthetic_base(rng)
        source = "synthetic"
    print(f"base: {source}, {base.shape[0]:,} x {base.shape[1]} {base.dtype}; "
          f"queries: rows + N(0, {NOISE}) noise; numpy {np.__version__}")

    big = tile_to(base, BIG_ROWS, rng)
    results = []
    results.append(bench(f"{source}", base, make_queries(base, args.queries, rng),
                         args.queries))
    results.append(bench(f"{source} tiled", big, make_queries(big, args.queries, rng),
                         min(args.brute_queries_1m, args.queries)))
    print_table(results)
    total = sum(r["mismatches"] for r in results)
    print(f"mismatches: {total}")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
