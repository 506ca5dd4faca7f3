"""core.bake.resume: a bake along an edited path that goes on from a state the
previous bake kept gives the same result, to the last bit, as a bake from the
first step (on a small made-up walking database, no Blender)."""

import dataclasses

import numpy as np
import pytest

from core.bake import resume
from core.bake.playback import SNAPSHOT_EVERY
from core.bake.settings import BakeSettings
from core.job import run
from walk_database import walk_database

SCENE_FPS = 24.0


@pytest.fixture(scope="module")
def database():
    return walk_database()


def _path(database, turn_at=None, turn=0.0, frame_end=150):
    """Walk toward -Y at 0.7 m/s, turning by ``turn`` rad/s from step ``turn_at`` on."""
    frames = run.frames_to_key(1, frame_end)
    steps = run.step_frames(database, frames, SCENE_FPS)
    dt = 1.0 / float(database.matching.clip_fps[0])
    heading = np.zeros(len(steps))
    if turn_at is not None:
        heading[turn_at:] = turn * dt * np.arange(1, len(steps) - turn_at + 1)
    vel = 0.7 * np.column_stack([np.sin(heading), -np.cos(heading)])
    xy = np.vstack([[0.0, 0.0], np.cumsum(vel[:-1] * dt, axis=0)])
    world = np.column_stack([xy, np.zeros(len(steps))])
    return run.ControllerPath.from_world(world, None, frames, SCENE_FPS, armature_world=np.eye(4))


def _same(a, b):
    for field in dataclasses.fields(a.result):
        x, y = getattr(a.result, field.name), getattr(b.result, field.name)
        if isinstance(x, np.ndarray):
            same = x.shape == y.shape and np.ascontiguousarray(x).tobytes() == np.ascontiguousarray(y).tobytes()
            assert same, field.name
    assert a.locations.tobytes() == b.locations.tobytes() and a.rotations.tobytes() == b.rotations.tobytes()
    assert a.report.to_json()["searches"] == b.report.to_json()["searches"]


@pytest.mark.parametrize("flat", [{}, {"use_look_ahead": False}, {"use_time_warp": False},
                                  {"release_in_joints": False}, {"lock_on_contact": False, "lock_on_data": True}])
def test_going_on_from_a_kept_state_is_a_bake_from_the_start(database, flat):
    settings = BakeSettings.of(**flat)
    first = run.run(database, _path(database), settings)
    edited = _path(database, turn_at=110, turn=0.8)
    fresh = run.run(database, edited, settings)
    again = run.run(database, edited, settings, previous=first.result)
    _same(fresh, again)
    assert np.abs(fresh.result.root_pos - first.result.root_pos).max() > 0.05   # the edit moved the character
    # It went on from a state kept before the first changed step, less the look-ahead's reach.
    trace = first.result.trace
    inputs = fresh.result.trace.inputs
    changed = resume.first_changed(trace.inputs, inputs)
    kept = resume.resume_from(trace, trace.settings, trace.db, trace.allowed, trace.playable, inputs)
    assert (trace.reach == 0) == (flat.get("use_look_ahead") is False)
    # The trajectory query reads ahead: its first change comes before the path's.
    assert changed < 110
    assert kept is not None and 0 < kept[0].s <= changed - trace.reach < kept[0].s + SNAPSHOT_EVERY
    # Foot lock went on from its own kept states too: the ones before the edit are those of the first bake.
    for side in (0, 1):
        before, after = trace.legs["locks"][side], again.result.trace.legs["locks"][side]
        assert after.states[0] is before.states[0] and after.states[-1] is not before.states[-1]
        if flat.get("release_in_joints", True):
            before, after = trace.legs["joints"][side], again.result.trace.legs["joints"][side]
            assert before.ends and after.ends[0] is before.ends[0]


def test_a_bake_after_a_bake_of_another_database_or_length_keeps_nothing_of_it(database):
    first = run.run(database, _path(database), BakeSettings())
    trace = first.result.trace
    assert resume.legs_kept(trace, trace.settings, trace.db, len(trace.inputs[0])) is trace.legs
    assert resume.legs_kept(trace, trace.settings, walk_database().matching, len(trace.inputs[0])) is None
    assert resume.legs_kept(trace, trace.settings, trace.db, len(trace.inputs[0]) - 1) is None
    assert resume.legs_kept(trace, trace.settings.replaced(lock_speed=0.2), trace.db, len(trace.inputs[0])) is None
    shorter = _path(database, frame_end=140)
    _same(run.run(database, shorter, BakeSettings()), run.run(database, shorter, BakeSettings(),
                                                                 previous=first.result))


def test_the_foot_lock_goes_on_from_the_state_kept_before_the_first_changed_input():
    from core.bake.legs import foot_lock as fl

    rng = np.random.default_rng(5)
    n = 300
    contacts = (np.arange(n) // 17) % 2 == 0
    toes = np.cumsum(rng.normal(0.0, 0.004, (n, 4)), axis=0)
    first = fl.run_foot_lock_kept(contacts, toes, None, 1 / 60, on_contact=True)
    edited = toes.copy()
    edited[200:, :2] += 0.05
    fresh = fl.run_foot_lock_kept(contacts, edited, None, 1 / 60, on_contact=True)
    again = fl.run_foot_lock_kept(contacts, edited, None, 1 / 60, first[3], on_contact=True)
    assert fresh[0].tobytes() == again[0].tobytes() and fresh[1].tobytes() == again[1].tobytes()
    assert fresh[2] == again[2] and np.abs(fresh[0] - first[0]).max() > 0.01
    assert [s for s, _ in again[3].states] == list(range(0, n, fl.KEEP_EVERY))
    # It went on from the state kept at step 192 (the last before the edit): the ones before are the first run's own.
    assert again[3].states[5] is first[3].states[5] and again[3].states[6] is not first[3].states[6]
    # Other parameters: nothing is reused.
    other = fl.run_foot_lock_kept(contacts, edited, None, 1 / 60, first[3], on_contact=True, lock_speed=0.3)
    assert other[3].states[0] is not first[3].states[0]


def test_an_edit_at_the_start_or_other_settings_start_from_the_first_step(database):
    settings = BakeSettings()
    first = run.run(database, _path(database), settings)
    trace = first.result.trace
    at_start = _path(database, turn_at=2, turn=0.8)
    fresh = run.run(database, at_start, settings)
    assert resume.resume_from(trace, trace.settings, trace.db, trace.allowed, trace.playable,
                              fresh.result.trace.inputs) is None
    _same(fresh, run.run(database, at_start, settings, previous=first.result))
    other = settings.replaced(search_interval=0.3)
    edited = _path(database, turn_at=110, turn=0.8)
    fresh = run.run(database, edited, other)
    assert resume.resume_from(trace, fresh.result.trace.settings, trace.db, trace.allowed, trace.playable,
                              fresh.result.trace.inputs) is None
    _same(fresh, run.run(database, edited, other, previous=first.result))


def test_the_spring_character_copies_the_steps_before_the_first_changed_goal():
    from core.maths import springs

    rng = np.random.default_rng(3)
    path = np.cumsum(rng.normal(0.0, 0.02, (300, 3)) * [1, 1, 0], axis=0)
    edited = path.copy()
    edited[200:] += [0.3, -0.1, 0.0]
    first = springs.simulate_character(path, None, 1 / 30)
    fresh = springs.simulate_character(edited, None, 1 / 30)
    again = springs.simulate_character(edited, None, 1 / 30, previous=first)
    for name in ("positions", "velocities", "yaws", "yaw_rates"):
        assert getattr(fresh, name).tobytes() == getattr(again, name).tobytes(), name
    copied = springs._same_steps(first, fresh.goals[:3], 0.25, 0.25, 1 / 30)
    assert 150 < copied < 200      # the goals lead the controller a little
    assert springs._same_steps(first, fresh.goals[:3], 0.3, 0.25, 1 / 30) == 0    # another half-life: none
