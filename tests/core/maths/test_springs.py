import numpy as np
import pytest

from core.errors import MotionMatchingError
from core.maths.facing import facing_to_yaw, yaw_to_facing
from core.maths.prediction import predict_future
from core.maths.springs import (
    CharacterState,
    SpringError,
    controller_yaws,
    critical_spring,
    decay_spring,
    facing_from_path,
    halflife_to_damping,
    simulate_character,
    spring_lead,
    wrap_angle,
    yaw_spring,
)

LN2 = np.log(2.0)
DT = 1.0 / 60.0


# -- the spring -------------------------------------------------------------


def test_halflife_to_damping_value_and_guard():
    assert halflife_to_damping(0.25) == pytest.approx(2 * LN2 / 0.25, rel=1e-15)
    np.testing.assert_allclose(halflife_to_damping([0.1, 0.5]), 2 * LN2 / np.array([0.1, 0.5]))
    for bad in (0.0, -0.1, float("nan"), [0.1, 0.0]):
        with pytest.raises(SpringError) as info:
            halflife_to_damping(bad)
        assert isinstance(info.value, MotionMatchingError)
        assert "half-life" in str(info.value)


def test_value_after_one_halflife_from_rest_is_the_analytic_one():
    h, x0, g = 0.25, 3.0, 1.0
    x, v = critical_spring(x0, 0.0, g, h, h)
    # From rest: x(t) - g = (x0 - g) (1 + y t) exp(-y t); at t = h, y t = 2 ln 2.
    remaining = (1.0 + 2.0 * LN2) / 4.0
    assert x == pytest.approx(g + (x0 - g) * remaining, abs=1e-14)
    assert remaining == pytest.approx(0.5966, abs=1e-4)  # not 0.5: see the module notes
    # v(t) = -(x0 - g) y^2 t exp(-y t)
    y = 2 * LN2 / h
    assert v == pytest.approx(-(x0 - g) * y * y * h / 4.0, abs=1e-14)
    # Half the distance is covered where (1 + s) exp(-s) = 1/2, s ~= 1.6783.
    s = 1.6783469900166608
    x_half, _ = critical_spring(x0, 0.0, g, h, s / y)
    assert x_half == pytest.approx(g + 0.5 * (x0 - g), abs=1e-12)


def test_two_steps_equal_one_double_step_and_many_small_steps():
    rng = np.random.default_rng(1)
    x, v, g = (rng.normal(size=(5, 3)) for _ in range(3))
    one = critical_spring(x, v, g, 0.2, 2 * DT)
    two = critical_spring(*critical_spring(x, v, g, 0.2, DT), g, 0.2, DT)
    np.testing.assert_allclose(two[0], one[0], atol=1e-13)
    np.testing.assert_allclose(two[1], one[1], atol=1e-12)

    xs, vs = x, v
    for _ in range(600):
        xs, vs = critical_spring(xs, vs, g, 0.2, 1.0 / 600.0)
    xb, vb = critical_spring(x, v, g, 0.2, 1.0)
    np.testing.assert_allclose(xs, xb, atol=1e-12)
    np.testing.assert_allclose(vs, vb, atol=1e-12)


def test_velocity_is_the_derivative_of_position():
    x0, v0, g, h = 0.7, -2.0, 0.1, 0.3
    t, eps = 0.137, 1e-6
    xp, _ = critical_spring(x0, v0, g, h, t + eps)
    xm, _ = critical_spring(x0, v0, g, h, t - eps)
    _, v = critical_spring(x0, v0, g, h, t)
    assert (xp - xm) / (2 * eps) == pytest.approx(v, abs=1e-7)


def test_stable_for_large_steps_and_no_overshoot_from_rest():
    for dt in (1.0, 1e3, 1e6, 1e300):
        x, v = critical_spring(np.array([5.0, -5.0]), np.array([100.0, 0.0]), 2.0, 0.1, dt)
        assert np.all(np.isfinite(x)) and np.all(np.isfinite(v))
        if dt >= 1e3:
            np.testing.assert_array_equal(x, [2.0, 2.0])
            np.testing.assert_array_equal(v, [0.0, 0.0])
    ts = np.linspace(0.0, 3.0, 301)
    x, _ = critical_spring(1.0, 0.0, 0.0, 0.25, ts)
    assert np.all(np.diff(x) <= 0.0) and np.all(x >= 0.0)
    with pytest.raises(SpringError):
        critical_spring(1.0, 0.0, 0.0, 0.25, -DT)


def test_shapes_broadcast_and_decay_spring():
    x, v = critical_spring(np.ones((4, 2)), 0.0, 0.0, 0.1, DT)
    assert x.shape == v.shape == (4, 2)
    xs, vs = decay_spring(np.ones((4, 2)), 0.0, 0.1, DT)
    np.testing.assert_array_equal(xs, x)
    np.testing.assert_array_equal(vs, v)


# -- angles -------------------------------------------------------------------


def test_yaw_and_facing_conventions():
    np.testing.assert_allclose(yaw_to_facing(0.0), [0.0, -1.0], atol=1e-15)
    np.testing.assert_allclose(yaw_to_facing(np.pi / 2), [1.0, 0.0], atol=1e-15)  # left turn
    yaws = np.linspace(-3.0, 3.0, 13)
    np.testing.assert_allclose(facing_to_yaw(yaw_to_facing(yaws)), yaws, atol=1e-12)
    assert wrap_angle(np.radians(190.0)) == pytest.approx(np.radians(-170.0))
    assert wrap_angle(np.radians(-190.0)) == pytest.approx(np.radians(170.0))


def test_yaw_spring_takes_the_short_way():
    yaw, rate = np.radians(-179.0), 0.0
    seen = []
    for _ in range(240):
        yaw, rate = yaw_spring(yaw, rate, np.radians(179.0), 0.25, DT)
        seen.append(float(yaw))
    seen = np.degrees(seen)
    assert seen.min() >= -181.0 - 1e-9 and seen.max() <= -179.0
    assert np.all(np.diff(seen) <= 1e-12)  # monotone: never turns back
    assert seen[-1] == pytest.approx(-181.0, abs=1e-3)


def test_simulated_facing_takes_the_short_way_across_the_seam():
    t = 120
    facing = np.tile(yaw_to_facing(np.radians(179.0)), (t, 1))
    start = CharacterState(np.zeros(3), np.zeros(3), np.radians(-179.0), 0.0)
    sim = simulate_character(np.zeros((t, 3)), facing, DT, initial_state=start)
    deg = np.degrees(sim.yaws)
    assert np.all(deg <= -179.0) and np.all(deg >= -181.0 - 1e-9)
    np.testing.assert_allclose(sim.facings[-1], facing[-1], atol=1e-3)

    # A controller turning steadily from 170 deg through 180 to 190 deg (-170 deg):
    # the character turns +20 deg, not -340 deg.
    turn = np.radians(np.linspace(170.0, 190.0, t))
    sim = simulate_character(np.zeros((t, 3)), yaw_to_facing(wrap_angle(turn)), DT)
    total = np.degrees(sim.yaws[-1] - sim.yaws[0])
    assert 15.0 < total < 20.0 + 1e-6
    assert np.all(np.abs(np.diff(sim.yaws)) < np.radians(2.0))


# -- the controller and the simulated character ----------------------------------


def test_facing_from_path_holds_and_backfills():
    p = np.zeros((10, 3))
    p[5:, 0] = np.arange(5) * 0.05  # still for 5 frames, then walks along +X
    f = facing_from_path(p, DT)
    np.testing.assert_allclose(f[0], [1.0, 0.0])
    np.testing.assert_allclose(f[-1], [1.0, 0.0])
    np.testing.assert_allclose(facing_from_path(np.zeros((4, 3)), DT), [[0.0, -1.0]] * 4)
    assert controller_yaws(p, None, DT)[0] == pytest.approx(np.pi / 2)


def test_follows_a_steady_controller_without_lag_and_lags_without_lead():
    t, speed = 600, 1.5
    p = np.zeros((t, 3))
    p[:, 0] = speed * DT * np.arange(t)
    lead_frames = int(np.ceil(spring_lead(0.25, DT) / DT))
    sim = simulate_character(p, None, DT)
    # On the path to 0.1 mm, until the look-ahead runs past the controller's end.
    np.testing.assert_allclose(sim.positions[:-lead_frames], p[:-lead_frames], atol=1e-4)
    np.testing.assert_allclose(sim.facings, [[1.0, 0.0]] * t, atol=1e-9)

    plain = simulate_character(p, None, DT, lead=0.0)
    y = 2 * LN2 / 0.25
    # The plain spring (no lead) trails by u (2 / y - dt / 2).
    lag = p[-1, 0] - plain.positions[-1, 0]
    assert lag == pytest.approx(speed * (2 / y - DT / 2), rel=1e-6)
    assert lag > 0.5


def test_controller_teleport_and_stop_are_smoothed_without_overshoot():
    t = 240
    p = np.zeros((t, 3))
    p[60:, 1] = 1.0  # the controller teleports 1 m
    sim = simulate_character(p, np.tile([0.0, -1.0], (t, 1)), DT)
    y = sim.positions[:, 1]
    assert np.abs(np.diff(y)).max() < 0.05  # no frame moves more than 5 cm
    assert y.min() >= 0.0 and y.max() <= 1.0 + 1e-12
    assert np.all(np.diff(y) >= -1e-15)  # monotone
    assert y[-1] == pytest.approx(1.0, abs=1e-4)

    p = np.zeros((400, 3))
    p[:200, 0] = 3.0 * DT * np.arange(200)  # run at 3 m/s, then stop dead
    p[200:, 0] = p[199, 0]
    sim = simulate_character(p, None, DT)
    assert sim.positions[:, 0].max() <= p[-1, 0] + 1e-9
    assert sim.positions[-1, 0] == pytest.approx(p[-1, 0], abs=1e-4)


def _curvy_controller(t=400):
    s = np.arange(t) * DT
    p = np.stack([np.sin(s) * 2.0, np.cos(0.7 * s) - 1.0, np.zeros(t)], axis=1)
    p[150:, 0] += 0.5  # and a sharp change
    return p


def test_prediction_equals_the_later_simulation():
    p = _curvy_controller()
    sim = simulate_character(p, None, DT)
    for frame in (0, 97, 250, 380):
        pos, fac = predict_future(sim.state(frame), p, None, frame, DT)
        idx = np.minimum([frame + 20, frame + 40, frame + 60], len(p) - 1)
        if frame + 60 < len(p):
            np.testing.assert_allclose(pos, sim.positions[idx], atol=1e-12)
            np.testing.assert_allclose(fac, sim.facings[idx], atol=1e-12)
        else:  # past the end the controller stands still
            assert np.all(np.isfinite(pos))
            np.testing.assert_allclose(pos[-1], p[-1], atol=0.05)


def test_prediction_between_frames_and_errors():
    p = _curvy_controller()
    sim = simulate_character(p, None, DT)
    times = [20 * DT, 20.5 * DT, 21 * DT]
    pos, _ = predict_future(sim.state(30), p, None, 30, DT, times=times)
    np.testing.assert_allclose(pos[[0, 2]], sim.positions[[50, 51]], atol=1e-12)
    # The half-step lands between the two whole frames (the path is locally straight).
    mid = 0.5 * (pos[0] + pos[2])
    assert np.linalg.norm(pos[1] - mid) < 0.1 * np.linalg.norm(pos[2] - pos[0])
    assert predict_future(sim.state(30), p, None, 30, DT, times=[0.0])[0][0] == \
        pytest.approx(sim.positions[30])

    with pytest.raises(SpringError):
        predict_future(sim.state(0), p, None, len(p), DT)
    with pytest.raises(SpringError):
        predict_future(sim.state(0), p, None, 0, DT, times=[-1.0])
    with pytest.raises(SpringError):
        simulate_character(np.zeros((10, 2)), None, DT)
    with pytest.raises(SpringError):
        simulate_character(p, np.zeros((3, 2)), DT)
