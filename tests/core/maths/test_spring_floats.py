"""The springs' plain-float step gives the numpy step's bits exactly."""

import numpy as np

from core.maths.springs import (
    ControllerGoals,
    critical_spring,
    simulate_character,
    spring_floats,
    step_decay,
    wrap_angle,
    wrap_float,
    yaw_spring,
)

DT = 1.0 / 60.0


def test_spring_floats_matches_critical_spring_bit_for_bit():
    rng = np.random.default_rng(3)
    for _ in range(2000):
        x, v, g = rng.normal(scale=rng.choice([1e-3, 1.0, 1e3]), size=3)
        halflife, dt = rng.uniform(0.01, 2.0), rng.choice([DT, 1 / 24, rng.uniform(0, 3)])
        y, e = step_decay(halflife, dt)
        got = spring_floats(float(x), float(v), float(g), y, e, float(dt))
        want = critical_spring(x, v, g, halflife, dt)
        assert got[0] == float(want[0]) and got[1] == float(want[1])


def test_wrap_float_matches_wrap_angle_bit_for_bit():
    rng = np.random.default_rng(4)
    values = np.concatenate([rng.uniform(-50, 50, 5000), [np.pi, -np.pi, 0.0, -0.0, 2 * np.pi, 1e-300, -3 * np.pi]])
    got = np.array([wrap_float(float(a)) for a in values])
    assert got.tobytes() == wrap_angle(values).tobytes()


def _simulate_with_numpy(pos, facing, hp, hr):
    """The simulation stepped by critical_spring and yaw_spring (numpy)."""
    goals = ControllerGoals(pos, facing, DT, hp, hr, None)
    s = goals.initial_state()
    gp, gy = goals.at(np.arange(1, len(pos)))
    p, v, yaw, rate = s.position, s.velocity, s.yaw, s.yaw_rate
    out = [(p, v, yaw, rate)]
    for i in range(len(pos) - 1):
        p, v = critical_spring(p, v, gp[i], hp, DT)
        yaw, rate = yaw_spring(yaw, rate, gy[i], hr, DT)
        out.append((p, v, float(yaw), float(rate)))
    return [np.array([o[k] for o in out]) for k in range(4)]


def test_simulate_character_matches_numpy_steps_bit_for_bit():
    rng = np.random.default_rng(5)
    t = 400
    pos = np.cumsum(rng.normal(scale=0.03, size=(t, 3)), axis=0)
    ang = np.cumsum(rng.normal(scale=0.2, size=t))
    facing = np.stack([np.cos(ang), np.sin(ang)], axis=1)
    sim = simulate_character(pos, facing, DT, halflife_pos=0.2, halflife_rot=0.3)
    want = _simulate_with_numpy(pos, facing, 0.2, 0.3)
    for got, ref in zip((sim.positions, sim.velocities, sim.yaws, sim.yaw_rates), want):
        assert got.tobytes() == ref.astype(np.float64).tobytes()


def test_goals_advance_is_spring_floats_per_coordinate_bit_for_bit():
    from core.maths.springs import ControllerGoals, spring_floats, wrap_float

    rng = np.random.default_rng(9)
    pos = np.cumsum(rng.normal(scale=0.03, size=(50, 3)), axis=0)
    goals = ControllerGoals(pos, None, DT, 0.2, 0.3, None)
    for trial in range(300):
        p, v, g = (rng.normal(scale=2.0, size=3).tolist() for _ in range(3))
        yaw, rate, goal_yaw = (float(x) for x in rng.normal(scale=4.0, size=3))
        span = float(rng.choice([DT, DT * 0.5, DT * 1.7, 1.0 / 24.0]))
        (yp, ep), (yr, er) = goals._decays(span)
        pv = [spring_floats(x, w, h, yp, ep, span) for x, w, h in zip(p, v, g)]
        d = wrap_float(yaw - goal_yaw)
        d_new, rate_new = spring_floats(d, rate, 0.0, yr, er, span)
        want = ([a for a, _ in pv], [b for _, b in pv], yaw + (d_new - d), rate_new)
        got = goals.advance(p, v, yaw, rate, g, goal_yaw, span)
        assert np.array(got[0]).tobytes() == np.array(want[0]).tobytes()
        assert np.array(got[1]).tobytes() == np.array(want[1]).tobytes()
        assert np.array(got[2:]).tobytes() == np.array(want[2:]).tobytes()
