"""Where the simulated character will be, and face, a few moments ahead of a
given state: the springs of :mod:`.springs` run forward toward the controller's
later samples."""

import numpy as np

from .facing import yaw_to_facing
from .springs import ControllerGoals, SpringError


def predict_future(state, controller_pos, controller_facing, frame, dt,
                   times=(1.0 / 3.0, 2.0 / 3.0, 1.0), halflife_pos=0.25, halflife_rot=0.25,
                   lead=None):
    """Where the simulated character will be, and face, ``times`` seconds ahead.

    ``state`` (:class:`CharacterState`) is the simulated character at ``frame``.
    Offline the controller's future is known, so the prediction is the same springs
    run forward from ``state`` toward the controller's later samples (past the last
    sample the controller stands still). A time that is not a whole number of
    frames ends with a partial step toward the goal of the step it falls in.
    Returns ``(positions (K, 3), facings (K, 2))`` in world space; expressing them
    in the character's ground frame is the feature code's job.

    When ``state`` comes from :func:`simulate_character` with the same controller and
    settings, the prediction equals that simulation's later frames: a bake that never
    resets the simulated state can read its futures straight off the
    :class:`SimulatedPath`. This function serves bakes that do change the state.
    """
    goals = ControllerGoals(controller_pos, controller_facing, dt, halflife_pos, halflife_rot, lead)
    dt = goals.dt
    times = np.atleast_1d(np.asarray(times, dtype=np.float64))
    if times.ndim != 1 or not np.all(np.isfinite(times)) or np.any(times < 0.0):
        raise SpringError("Prediction times must be zero or positive seconds.")
    frame = int(frame)
    if not 0 <= frame < len(goals.pos):
        raise SpringError(
            "Frame %d is outside the controller's %d frames." % (frame, len(goals.pos)))

    # Whole steps before each time, with slack for 1/3 s / (1/60 s) rounding.
    n_steps = np.floor(times / dt + 1e-9).astype(int)
    rests = np.maximum(times - n_steps * dt, 0.0)
    n_max = int(n_steps.max()) if len(times) else 0
    goal_p, goal_y = goals.at(frame + 1 + np.arange(n_max + 1))
    goal_p, goal_y = goal_p.tolist(), goal_y.tolist()

    out_p = np.empty((len(times), 3))
    out_y = np.empty(len(times))
    pos = np.asarray(state.position, dtype=np.float64).tolist()
    vel = np.asarray(state.velocity, dtype=np.float64).tolist()
    yaw, rate = float(state.yaw), float(state.yaw_rate)
    k = 0
    for idx in np.argsort(n_steps, kind="stable"):
        while k < n_steps[idx]:
            pos, vel, yaw, rate = goals.advance(pos, vel, yaw, rate, goal_p[k], goal_y[k], dt)
            k += 1
        if rests[idx] > 1e-12:
            out_p[idx], _, out_y[idx], _ = goals.advance(pos, vel, yaw, rate, goal_p[k],
                                                         goal_y[k], float(rests[idx]))
        else:
            out_p[idx], out_y[idx] = pos, yaw
    return out_p, yaw_to_facing(out_y)
