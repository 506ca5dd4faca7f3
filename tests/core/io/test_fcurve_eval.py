"""core.io.fcurve_eval without Blender: segments, snapping, extrapolation, the handle
correction and the cubic solve, checked against plain float64 maths."""

import numpy as np
import pytest

from python_calls import python_calls
from core.errors import MotionMatchingError
from core.io.fcurve_eval import check_curve, evaluate_curves, evaluate_keys
from core.io.fcurve_keys import (BACK, BEZIER, BOUNCE, CONSTANT, EASE_IN, EASE_IN_OUT, EASE_OUT, ELASTIC, LINEAR, QUAD,
                                 SINE, UnsupportedCurve)


def _thirds(x, y):
    """Handles a third of the way toward the neighbouring keys (on the straight
    line between them), so that x(u) is linear in every segment."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    hl = np.column_stack([x, y])
    hr = hl.copy()
    hl[1:] -= np.column_stack([np.diff(x), np.diff(y)]) / 3.0
    hr[:-1] += np.column_stack([np.diff(x), np.diff(y)]) / 3.0
    return np.column_stack([x, y]), hl, hr


def _reference_bezier(p0, p1, p2, p3, frames):
    """Plain float64 maths: each handle shortened to the segment's time span if
    longer, then x(u) = frame solved by bisection, then y(u)."""
    p0, p1, p2, p3 = (np.asarray(p, float) for p in (p0, p1, p2, p3))
    span = p3[0] - p0[0]
    if abs(p1[0] - p0[0]) > span:
        p1 = p0 + (p1 - p0) * span / abs(p1[0] - p0[0])
    if abs(p3[0] - p2[0]) > span:
        p2 = p3 + (p2 - p3) * span / abs(p3[0] - p2[0])

    def point(u, k):
        v = 1.0 - u
        return v**3 * p0[k] + 3 * v * v * u * p1[k] + 3 * v * u * u * p2[k] + u**3 * p3[k]

    lo, hi = np.zeros(len(frames)), np.ones(len(frames))
    for _ in range(60):
        mid = (lo + hi) / 2
        below = point(mid, 0) < frames
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return point((lo + hi) / 2, 1)


# -- segments -----------------------------------------------------------------


def test_keys_return_their_values_and_linear_segments_are_lines():
    x = np.array([1.0, 4.0, 6.0, 13.0])
    y = np.array([2.0, -1.0, 3.5, 0.25])
    co, hl, hr = _thirds(x, y)
    ipo = np.full(4, LINEAR)
    assert np.array_equal(evaluate_keys(co, hl, hr, ipo, x), y.astype(np.float32))
    frames = np.linspace(1, 13, 241)
    np.testing.assert_allclose(evaluate_keys(co, hl, hr, ipo, frames), np.interp(frames, x, y),
                               atol=2e-6)


def test_constant_segments_hold_the_earlier_key():
    x = np.array([0.0, 3.0, 8.0])
    y = np.array([1.0, 5.0, -2.0])
    co, hl, hr = _thirds(x, y)
    frames = np.array([0.5, 2.999, 3.0, 3.5, 7.9, 8.0])
    got = evaluate_keys(co, hl, hr, np.full(3, CONSTANT), frames)
    np.testing.assert_array_equal(got, [1, 1, 5, 5, 5, -2])


def test_frames_within_1e4_of_a_key_snap_onto_it():
    co = np.array([[0.0, 0.0], [10.0, 10.0], [20.0, 0.0]])
    hl, hr = co.copy(), co.copy()
    frames = np.array([10 - 9e-5, 10 + 9e-5, 10 - 5e-4, 10 + 5e-4])
    got = evaluate_keys(co, hl, hr, np.full(3, LINEAR), frames)
    assert got[0] == 10.0 and got[1] == 10.0
    np.testing.assert_allclose(got[2:], [10 - 5e-4, 10 - 5e-4], atol=2e-6)


def test_bezier_with_handles_at_thirds_is_the_cubic_in_u():
    # x(u) = 3 u exactly, so y at frame f is the Bernstein cubic at u = f / 3.
    co = np.array([[0.0, 1.0], [3.0, 4.0]])
    hl = np.array([[-1.0, 0.0], [2.0, 6.0]])
    hr = np.array([[1.0, -2.0], [4.0, 0.0]])
    frames = np.linspace(0, 3, 31)
    u = frames / 3
    v = 1 - u
    want = v**3 * 1 + 3 * v * v * u * -2 + 3 * v * u * u * 6 + u**3 * 4
    got = evaluate_keys(co, hl, hr, [BEZIER, BEZIER], frames)
    np.testing.assert_allclose(got, want, atol=5e-6)


def test_bezier_matches_float64_maths_on_random_sparse_keys():
    rng = np.random.default_rng(3)
    worst = 0.0
    for _ in range(40):
        n = 8
        x = np.cumsum(rng.integers(1, 13, n)).astype(float)
        y = rng.uniform(-5, 5, n)
        gap_l = np.diff(x, prepend=x[0] - 3)
        gap_r = np.diff(x, append=x[-1] + 3)
        # Handles inside or overshooting their segment (up to 1.6 of it).
        hl = np.column_stack([x - gap_l * rng.uniform(0, 1.6, n), y + rng.normal(0, 3, n)])
        hr = np.column_stack([x + gap_r * rng.uniform(0, 1.6, n), y + rng.normal(0, 3, n)])
        co = np.column_stack([x, y])
        co, hl, hr = (a.astype(np.float32).astype(float) for a in (co, hl, hr))
        frames = np.linspace(x[0], x[-1], 400)[1:-1]
        got = evaluate_keys(co, hl, hr, np.full(n, BEZIER), frames)
        seg = np.searchsorted(co[:, 0], frames) - 1
        want = np.empty_like(frames)
        for s in np.unique(seg):
            m = seg == s
            want[m] = _reference_bezier(co[s], hr[s], hl[s + 1], co[s + 1], frames[m])
        worst = max(worst, np.abs(got - want).max())
    # Blender works in float32, so it is near, not equal, to exact maths.
    assert worst < 1e-4


def test_overshooting_handles_are_shortened_to_the_segment():
    co = np.array([[0.0, 0.0], [4.0, 2.0]])
    # The right handle reaches 10 frames past a 4-frame segment, the left one 2.5x.
    hr = np.array([[10.0, 6.0], [5.0, 2.0]])
    hl = np.array([[-1.0, 0.0], [-6.0, -3.0]])
    frames = np.linspace(0.05, 3.95, 79)
    got = evaluate_keys(co, hl, hr, [BEZIER, BEZIER], frames)
    # Shortened by hand: right handle to 4 frames (scale 0.4), left to 4 (scale 0.4).
    want = _reference_bezier([0, 0], [4.0, 2.4], [0.0, 0.0], [4, 2], frames)
    np.testing.assert_allclose(got, want, atol=2e-5)
    # And the curve is a function of time: no jumps between neighbouring frames.
    fine = evaluate_keys(co, hl, hr, [BEZIER, BEZIER], np.linspace(0, 4, 4001))
    assert np.abs(np.diff(fine)).max() < 0.05


def test_monotonic_keys_with_short_handles_give_a_monotonic_curve():
    x = np.array([0.0, 2.0, 9.0, 12.0, 20.0])
    y = np.array([0.0, 1.0, 1.5, 4.0, 4.5])
    co, hl, hr = _thirds(x, y)
    got = evaluate_keys(co, hl, hr, np.full(5, BEZIER), np.linspace(0, 20, 2001))
    assert np.all(np.diff(got) >= -1e-6)


def test_flat_segment_is_exactly_flat():
    co = np.array([[0.0, 2.5], [7.0, 2.5]])
    got = evaluate_keys(co, co - [2, 0], co + [2, 0], [BEZIER, BEZIER], np.linspace(0, 7, 50))
    assert np.all(got == 2.5)


# -- extrapolation -----------------------------------------------------------------


def test_constant_extrapolation_holds_the_end_keys():
    co, hl, hr = _thirds([2.0, 5.0], [1.0, 3.0])
    got = evaluate_keys(co, hl, hr, [BEZIER, BEZIER], [-100.0, 2.0, 5.0, 1e6])
    np.testing.assert_array_equal(got, [1, 1, 3, 3])


def test_linear_extrapolation_follows_the_neighbour_or_the_handle():
    co = np.array([[0.0, 0.0], [10.0, 5.0]])
    hl = np.array([[-2.0, 1.0], [8.0, 4.0]])   # first key's left handle: slope -0.5
    hr = np.array([[2.0, -1.0], [11.0, 8.0]])  # last key's right handle: slope 3
    frames = np.array([-4.0, 14.0])
    # BEZIER end keys: along their outer handles.
    got = evaluate_keys(co, hl, hr, [BEZIER, BEZIER], frames, extrapolation="LINEAR")
    np.testing.assert_allclose(got, [2.0, 17.0], atol=1e-5)
    # LINEAR end keys: along the line to the neighbouring key (slope 0.5).
    got = evaluate_keys(co, hl, hr, [LINEAR, LINEAR], frames, extrapolation="LINEAR")
    np.testing.assert_allclose(got, [-2.0, 7.0], atol=1e-5)
    # A CONSTANT end key holds even with LINEAR extrapolation.
    got = evaluate_keys(co, hl, hr, [CONSTANT, CONSTANT], frames, extrapolation=1)
    np.testing.assert_array_equal(got, [0.0, 5.0])


def test_single_key():
    co = np.array([[5.0, 2.0]])
    flat_h = np.array([[3.0, 2.0]]), np.array([[7.0, 2.0]])
    frames = np.linspace(-10, 20, 13)
    for ipo in (CONSTANT, LINEAR, BEZIER):
        for ext in ("CONSTANT", "LINEAR"):
            assert np.all(evaluate_keys(co, *flat_h, [ipo], frames, ext) == 2.0)
    # Blender extrapolates a lone BEZIER key along a sloped handle.
    got = evaluate_keys(co, [[3.0, 1.0]], [[6.0, 4.0]], [BEZIER], [1.0, 9.0], "LINEAR")
    np.testing.assert_allclose(got, [0.0, 10.0])
    # A vertical handle gives no slope: constant.
    got = evaluate_keys(co, [[5.0, 1.0]], [[5.0, 4.0]], [BEZIER], [1.0, 9.0], "LINEAR")
    np.testing.assert_array_equal(got, [2.0, 2.0])


# -- easing --------------------------------------------------------------------------


def test_easing_modes_follow_their_equations():
    co = np.array([[0.0, 1.0], [8.0, 5.0]])
    frames = np.linspace(0.5, 7.5, 15)
    s = frames / 8

    def ev(ipo, easing):
        return evaluate_keys(co, co, co, [ipo, BEZIER], frames, easing=[easing, 0])

    np.testing.assert_allclose(ev(QUAD, EASE_IN), 1 + 4 * s**2, atol=5e-6)
    np.testing.assert_allclose(ev(QUAD, 0), 1 + 4 * s**2, atol=5e-6)      # AUTO = in
    np.testing.assert_allclose(ev(QUAD, EASE_OUT), 1 + 4 * s * (2 - s), atol=5e-6)
    np.testing.assert_allclose(ev(SINE, EASE_IN_OUT), 1 + 2 * (1 - np.cos(np.pi * s)), atol=5e-6)
    bounce = ev(BOUNCE, 0)                                               # AUTO = out
    assert np.all(bounce <= 5 + 1e-6) and bounce[-1] > 4.9


def test_back_needs_its_factors():
    co = np.array([[0.0, 0.0], [4.0, 1.0]])
    with pytest.raises(UnsupportedCurve):
        evaluate_keys(co, co, co, [BACK, BEZIER], [1.0])
    s = 0.5
    got = evaluate_keys(co, co, co, [BACK, BEZIER], [2.0], easing=[EASE_IN, 0], back=[1.7, 0])
    np.testing.assert_allclose(got, [s * s * (2.7 * s - 1.7)], atol=1e-6)


# -- what is left to Blender, and the batch form -------------------------------


def test_unsupported_curves_raise_a_motion_matching_error():
    co, hl, hr = _thirds([0.0, 5.0, 9.0], [0.0, 1.0, 0.0])
    for ipo in ([ELASTIC, BEZIER, BEZIER], [BEZIER, 99, BEZIER]):
        with pytest.raises(UnsupportedCurve) as info:
            evaluate_keys(co, hl, hr, ipo, [1.0])
        assert isinstance(info.value, MotionMatchingError)
    with pytest.raises(UnsupportedCurve):
        evaluate_keys(co[::-1], hl[::-1], hr[::-1], [BEZIER] * 3, [1.0])
    with pytest.raises(UnsupportedCurve):
        evaluate_keys(co, hl, hr, [BEZIER] * 3, [1.0], extrapolation="CYCLIC")
    with pytest.raises(UnsupportedCurve):
        check_curve(co, [ELASTIC, BEZIER, BEZIER])
    check_curve(co, [BEZIER, BEZIER, ELASTIC])   # the last key does not interpolate
    got = evaluate_keys(co, hl, hr, [BEZIER, BEZIER, ELASTIC], [5.0, 7.0, 20.0])
    assert got[0] == 1.0 and got[2] == 0.0


def test_shapes_empty_curves_and_flat_buffers():
    co, hl, hr = _thirds([0.0, 5.0], [0.0, 1.0])
    frames = np.arange(12.0).reshape(3, 4)
    got = evaluate_keys(co.ravel(), hl.ravel(), hr.ravel(), [LINEAR, LINEAR], frames)
    assert got.shape == (3, 4) and got.dtype == np.float64
    np.testing.assert_allclose(got, np.clip(frames / 5, 0, 1), atol=1e-6)
    assert np.all(evaluate_keys(np.zeros((0, 2)), np.zeros((0, 2)), np.zeros((0, 2)), [],
                                frames) == 0)
    # Blender's key search gives up on NaN and holds the first key.
    co, hl, hr = _thirds([0.0, 5.0], [2.0, 1.0])
    assert evaluate_keys(co, hl, hr, [LINEAR, LINEAR], [np.nan])[0] == 2.0


def test_evaluate_curves_is_evaluate_keys_per_curve():
    rng = np.random.default_rng(5)
    curves, exts = [], []
    for c in range(60):
        n = int(rng.integers(0, 9))
        x = np.cumsum(rng.integers(1, 13, n)).astype(float)
        co, hl, hr = _thirds(x, rng.uniform(-5, 5, n))
        hl[:, 1] += rng.normal(0, 2, n)
        hr[:, 1] += rng.normal(0, 2, n)
        curves.append({"co": co, "handle_left": hl, "handle_right": hr,
                       "interpolation": rng.choice([CONSTANT, LINEAR, BEZIER, BEZIER], n),
                       "easing": np.zeros(n, int)})
        exts.append(rng.choice(["CONSTANT", "LINEAR"]))
    frames = np.linspace(-20, 120, 2000)       # several curves per pass, several passes
    got = evaluate_curves(curves, frames, exts)
    assert got.shape == (60, 2000)
    for c, (curve, ext) in enumerate(zip(curves, exts)):
        one = evaluate_keys(curve["co"], curve["handle_left"], curve["handle_right"],
                            curve["interpolation"], frames, ext)
        np.testing.assert_array_equal(got[c], one)
    co, hl, hr = _thirds([0.0, 5.0, 9.0], [0.0, 1.0, 0.0])
    bad = {"co": co, "handle_left": hl, "handle_right": hr, "interpolation": [ELASTIC] * 3}
    with pytest.raises(UnsupportedCurve) as info:
        evaluate_curves(curves[:2] + [bad], frames)
    assert info.value.curve_index == 2


def _sparse_curves(count, keys, seed=0):
    """``count`` curves of ``keys`` keys 1-12 frames apart, 90% Bezier with
    uneven handles, 10% linear."""
    rng = np.random.default_rng(seed)
    curves = []
    for _ in range(count):
        x = np.cumsum(rng.integers(1, 13, keys)).astype(float)
        co, hl, hr = _thirds(x, rng.uniform(-5, 5, keys))
        hl[:, 0] -= rng.uniform(0, 2, keys)
        hr[:, 0] += rng.uniform(0, 2, keys)
        hl[:, 1] += rng.normal(0, 2, keys)
        hr[:, 1] += rng.normal(0, 2, keys)
        curves.append({"co": co, "handle_left": hl, "handle_right": hr,
                       "interpolation": np.where(rng.random(keys) < 0.9, BEZIER, LINEAR)})
    return curves


def test_work_in_python_does_not_grow_with_keys_or_frames():
    """Evaluation is vectorised: the Python-level calls depend on the number of
    curves (and of passes of about 65,000 values), not on keys or frames. A loop
    over keys or frames in Python would add thousands of calls here. (Timings:
    bench/bench_database.py.)"""
    frames = np.arange(5000.0)
    few, many = _sparse_curves(100, 70), _sparse_curves(100, 7000)
    calls_few = python_calls(lambda: evaluate_curves(few, frames, "LINEAR"))
    calls_many = python_calls(lambda: evaluate_curves(many, frames, "LINEAR"))
    assert calls_many <= calls_few * 1.1
    assert calls_few < 60 * len(few)
    one = _sparse_curves(1, 700)
    last = one[0]["co"][-1, 0]
    calls_short = python_calls(lambda: evaluate_curves(one, np.linspace(-10.0, last + 10.0, 500), "LINEAR"))
    calls_long = python_calls(lambda: evaluate_curves(one, np.linspace(-10.0, last + 10.0, 500000), "LINEAR"))
    # 1000x the frames: the same passes, plus a few rare branches of the cubic
    # solve that only some of the many more frames reach (a bounded number).
    assert calls_long <= calls_short + 60
    # And the many-key curves are right where keys are.
    values = evaluate_curves(many[:3], many[0]["co"][:50, 0], "LINEAR")
    assert np.allclose(values[0], many[0]["co"][:50, 1], atol=1e-5)
