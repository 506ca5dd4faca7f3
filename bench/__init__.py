"""Benchmarks: run each from the repository root as ``python -m bench.bench_<name>``."""
