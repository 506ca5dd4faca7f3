"""Crowd lanes: every walker keeps its distance, walks at its lane's speed, and
bad requests are refused in a sentence."""

import math

import numpy as np
import pytest

from core.paths import crowd_lanes, scenario
from core.paths.crowd_lanes import Lanes


def _s_curve(n=200):
    """An S on the ground: two half circles of radius 6 m, 38 m long in all."""
    a = np.linspace(0.0, math.pi, n)
    first = np.column_stack([6.0 * np.sin(a), 6.0 - 6.0 * np.cos(a)])
    second = np.column_stack([-6.0 * np.sin(a), 18.0 - 6.0 * np.cos(a)])
    return np.vstack([first, second[1:]])


def _tracks(scenarios, step=1 / 30):
    duration = scenario.duration(scenarios[0])
    times = np.arange(0.0, duration + step, step)
    return times, np.stack([scenario.sample(sc, times)[0][:, :2] for sc in scenarios])   # (N, T, 2)


def _closest(tracks):
    d = np.linalg.norm(tracks[:, None] - tracks[None, :], axis=-1)      # (N, N, T)
    d[np.arange(len(tracks)), np.arange(len(tracks))] = np.inf
    return d.min()


@pytest.mark.parametrize("lanes", [
    Lanes(count=12, lanes=3, width=1.0, spacing=1.5, speed_min=1.0, speed_max=1.6, stagger=1.0),
    Lanes(count=7, lanes=2, width=0.8, spacing=2.0, speed_min=0.8, speed_max=2.0, stagger=3.0),
    Lanes(count=5, lanes=1, width=1.0, spacing=1.2, speed_min=1.3, speed_max=1.3, stagger=0.0),
])
def test_no_two_walkers_come_closer_than_the_lane_width_or_spacing(lanes):
    out = crowd_lanes.spread(_s_curve(), lanes)
    assert len(out) == lanes.count
    assert len({round(scenario.duration(sc), 9) for sc in out}) == 1      # every path lasts the same
    _times, tracks = _tracks(out)
    # The sampled paths cut corners between vertices by far less than a centimetre.
    assert _closest(tracks) >= min(lanes.width, lanes.spacing) - 0.01


def test_walkers_keep_their_lane_and_its_speed():
    lanes = Lanes(count=9, lanes=3, width=1.0, spacing=1.5, speed_min=1.0, speed_max=1.6, stagger=1.0)
    path = _s_curve()
    out = crowd_lanes.spread(path, lanes)
    arc = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(path, axis=0), axis=1))])
    fine = np.arange(0.0, arc[-1], 0.005)
    dense = np.column_stack([np.interp(fine, arc, path[:, 0]), np.interp(fine, arc, path[:, 1])])
    times, tracks = _tracks(out, step=1 / 60)
    speeds = np.linalg.norm(np.diff(tracks, axis=1), axis=-1) * 60.0
    for k in range(lanes.count):
        lane = k % lanes.lanes
        offset = abs(lane - 1) * lanes.width
        # Distance from the centre path: the lane's offset (the polyline's chords cut it by millimetres).
        d = np.min(np.linalg.norm(tracks[k][::4, None] - dense[None], axis=-1), axis=1)
        assert np.allclose(d, offset, atol=0.01)
        assert lanes.speed_min - 1e-6 <= speeds[k].max() <= lanes.speed_max * 1.05
    # Walkers of one lane move at that lane's one speed; lanes differ.
    top = [round(float(np.median(speeds[k][speeds[k] > 0.5])), 2) for k in range(3)]
    assert len(set(top)) == 3
    assert [round(float(np.median(speeds[k][speeds[k] > 0.5])), 2) for k in range(3, 9)] == top * 2


def test_the_front_walker_of_a_lane_starts_first():
    out = crowd_lanes.spread(_s_curve(), Lanes(count=6, lanes=2, stagger=2.0))
    times, tracks = _tracks(out)
    moving = np.linalg.norm(np.diff(tracks, axis=1), axis=-1) > 1e-6
    starts = [times[np.argmax(m)] for m in moving]
    assert starts[0] < starts[2] < starts[4] and starts[1] < starts[3] < starts[5]


def test_the_same_request_gives_the_same_paths():
    a = crowd_lanes.spread(_s_curve(), Lanes(count=8))
    b = crowd_lanes.spread(_s_curve(), Lanes(count=8))
    assert [sc.points for sc in a] == [sc.points for sc in b]
    assert [sc.name for sc in a] == ["Crowd.%03d" % k for k in range(8)]


@pytest.mark.parametrize("points, lanes, words", [
    (_s_curve(), Lanes(count=0), "1 to 10000 characters"),
    (_s_curve(), Lanes(count=3, lanes=4), "between 1 lane"),
    (_s_curve(), Lanes(width=0.0), "lane width must be above 0"),
    (_s_curve(), Lanes(spacing=float("nan")), "spacing must be above 0"),
    (_s_curve(), Lanes(speed_min=2.0, speed_max=1.0), "slowest at most the fastest"),
    (_s_curve(), Lanes(stagger=-1.0), "stagger must be 0 s or more"),
    (_s_curve(), Lanes(count=40, lanes=1, spacing=1.5), "too short for 40 walkers"),
    (_s_curve(), Lanes(count=9, lanes=9, width=2.0), "turns tighter than a lane"),
    ([[0.0, 0.0, 0.0]], Lanes(), "at least two finite points"),
    ([[1.0, 1.0, 0.0], [1.0, 1.0, 5.0]], Lanes(), "no length on the ground"),
])
def test_bad_requests_are_refused_in_a_sentence(points, lanes, words):
    with pytest.raises(scenario.ScenarioError, match=words):
        crowd_lanes.spread(points, lanes)
