"""Going on from a kept state: a bake of the same database, settings and rows
along a path that differs only from some step on plays the steps before as the
last bake did, so stage 2's step-by-step loop (core.bake.playback.play_rows,
the searches) can start from the last state it kept before that step.

The spring character (core.maths.springs.simulate_character) likewise copies
the steps whose goals did not change. The simulation is causal except for what a step reads ahead: the trajectory
query (compared as computed, so its horizon is in it) and the look-ahead's
window of the spring character's future (its ``reach`` in steps). The inputs
are compared bit for bit. After the loop, foot lock's step-by-step stages (the
lock's state machine, the releases blended in the joints) likewise keep their
state and go on from the last one kept before their own first changed input
(core.bake.legs); the vectorised stages (pose blends, stride warp, the toe
floor) run on every step again. The result is the same, to the last bit, as a
bake from the first step.
"""

from dataclasses import dataclass

import numpy as np


@dataclass
class Trace:
    """What one bake's step-by-step loop read and kept."""

    settings: object         # core BakeSettings, as baked
    db: object               # the matching Database (compared by identity)
    allowed: np.ndarray
    playable: object
    inputs: tuple            # per step: controller, spring positions, yaws, velocities, trajectory queries
    reach: int               # steps ahead of a search it reads
    played: object           # core.bake.playback.Played, with its kept states
    sim: object = None       # core.maths.springs.SimulatedPath (its steps are copied up to the first changed goal)
    legs: dict = None        # what foot lock kept (core.bake.legs.apply.apply_foot_lock's ``kept``)
    moves: object = None     # core.bake.moves_search.StepRows: the rows of each step when the query changes


def _bits(values):
    values = np.ascontiguousarray(values, dtype=np.float64)
    return values.reshape(len(values), -1).view(np.uint64)


def first_changed(before, after):
    """The first step whose inputs differ (bit for bit) between two tuples of
    per-step arrays of one length; that length when none does."""
    steps = len(after[0])
    changed = np.zeros(steps, dtype=bool)
    for a, b in zip(before, after):
        changed |= np.any(_bits(a) != _bits(b), axis=1)
    hit = np.flatnonzero(changed)
    return int(hit[0]) if len(hit) else steps


def first_change(before, after):
    """:func:`first_changed` of two tuples of per-step arrays in which an entry
    may be None on both sides (skipped); an entry None on one side only, or of
    another shape, changes the first step. ``after`` holds at least one array."""
    pairs = [(a, b) for a, b in zip(before, after) if a is not None or b is not None]
    if any(a is None or b is None or np.shape(a) != np.shape(b) for a, b in pairs):
        return 0
    return first_changed(tuple(a for a, _ in pairs), tuple(b for _, b in pairs))


def legs_kept(previous, settings, db, steps):
    """What the legs' stages of ``previous`` (a :class:`Trace` or None) kept,
    when it baked the same database with the same settings over as many
    steps; else None. (Those stages compare their own inputs step by step.)"""
    if previous is None or previous.db is not db or previous.settings != settings \
            or len(previous.inputs[0]) != steps:
        return None
    return previous.legs


def _same(a, b):
    if a is None or b is None:
        return a is None and b is None
    return np.array_equal(np.asarray(a), np.asarray(b))


def resume_from(previous, settings, db, allowed, playable, inputs, moves=None):
    """(kept state, the Played it belongs to) to go on from, or None to start
    at the first step: the last state kept at or before the first step a
    changed input can reach, when ``previous`` (a :class:`Trace` or None) baked
    the same database, settings and rows over as many steps (``moves``: the
    rows of each step, core.bake.moves_search.StepRows, or None)."""
    if previous is None or previous.db is not db or previous.settings != settings:
        return None
    if len(previous.inputs[0]) != len(inputs[0]) or not _same(previous.allowed, allowed) \
            or not _same(previous.playable, playable):
        return None
    if (moves is None) != (previous.moves is None) or (moves is not None and not moves.same_as(previous.moves)):
        return None
    first = first_changed(previous.inputs, inputs) - previous.reach
    kept = [state for state in previous.played.states if state.s <= first]
    return (kept[-1], previous.played) if kept else None
