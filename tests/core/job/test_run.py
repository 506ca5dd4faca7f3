"""core.job.run: the bake as one call, from a typed database and a controller
path to the frames to key and the report, on a small made-up walking database
(no Blender)."""

import dataclasses
import re

import numpy as np
import pytest

from core.bake import pipeline
from core.bake.settings import BakeError, BakeSettings
from core.database.tags import TagError
from core.errors import MotionMatchingError
from core.job import run
from core.maths import transforms as tf
from walk_database import FPS, walk_database

SCENE_FPS = 24.0


@pytest.fixture(scope="module")
def database():
    return walk_database()


def _straight(database, frame_start=1, frame_end=91, speed=0.6, scene_fps=SCENE_FPS, **path):
    """A path walking toward -Y at ``speed`` from the armature's origin."""
    frames = run.frames_to_key(frame_start, frame_end)
    steps = run.step_frames(database, frames, scene_fps)
    world = np.column_stack([np.zeros(len(steps)), -speed * (steps - frame_start) / scene_fps, np.zeros(len(steps))])
    return run.ControllerPath.from_world(world, None, frames, scene_fps, armature_world=np.eye(4), **path)


def _clock(*readings):
    """A clock returning ``readings`` in turn."""
    it = iter(readings)
    return lambda: next(it)


def _sentence(error):
    text = str(error.value)
    return isinstance(error.value, MotionMatchingError) and re.fullmatch(r"[A-Z].*\.", text) is not None


def test_the_frames_and_the_report_agree(database):
    out = run.run(database, _straight(database), BakeSettings())
    result, report = out.result, out.report
    np.testing.assert_array_equal(out.frames, np.arange(1.0, 92.0))
    np.testing.assert_allclose(out.times, (out.frames - 1.0) / SCENE_FPS)
    J = len(out.skeleton.names)
    assert out.locations.shape == (91, J, 3) and out.rotations.shape == (91, J, 4)
    np.testing.assert_allclose(np.linalg.norm(out.rotations, axis=-1), 1.0, atol=1e-6)
    # One step per database frame over 90 scene frames at 24 fps: 3.75 s at 30 fps.
    assert len(result.rows) == 113 == int(np.floor(90 / SCENE_FPS * FPS)) + 1
    assert (report.frames, report.frame_start, report.frame_end) == (91, 1, 91)
    assert (report.fps, report.database_fps, report.steps) == (SCENE_FPS, FPS, 113)
    assert report.searches == int(result.searched.sum()) > 0
    assert report.jumps == int(result.jumped.sum()) and report.foot_locks == result.lock_count
    for name in ("match_cost", "jump", "contact", "lock", "tracking_error", "root_yaw"):
        assert len(getattr(report.per_frame, name)) == 91, name
    assert report.tracking_error_max_m >= report.per_frame.tracking_error.max()
    # The first frame is the first step; frame 5 (1/6 s) is step 5 exactly.
    np.testing.assert_allclose(out.locations[0], result.locations[0], atol=1e-9)
    np.testing.assert_allclose(out.locations[4], result.locations[5], atol=1e-6)
    # The legs were found by the humanoid map, so the planted figures are measured.
    assert out.skeleton.legs == [(2, 3, 4, 5), (6, 7, 8, 9)]
    assert report.contact_sliding_cm_per_foot_per_moving_s is not None
    assert report.to_json()["frames"] == 91


def test_the_settings_as_baked_hold_the_takes_toe_floor(database):
    out = run.run(database, _straight(database), BakeSettings())
    toes_z = np.asarray(database.toe_positions)[:, :, 2]
    assert out.settings.toe_floor == pytest.approx(pipeline.toe_floor(toes_z, database.contacts))
    given = run.run(database, _straight(database), BakeSettings.of(toe_floor=0.05))
    assert given.settings.toe_floor == 0.05


def test_the_tag_query_picks_the_clips_played(database):
    clip = database.matching.clip_index
    slow = run.run(database, _straight(database), BakeSettings(), tag_query="slow")
    fast = run.run(database, _straight(database, speed=1.2), BakeSettings(), tag_query="fast")
    assert set(clip[slow.result.rows]) == {1} and set(clip[fast.result.rows]) == {0}
    with pytest.raises(TagError) as error:
        next(run.bake(database, _straight(database), BakeSettings(), tag_query="limp"))
    assert _sentence(error) and "limp" in str(error.value)


def test_the_bake_time_comes_from_the_clock_given(database):
    duration = 90 / SCENE_FPS
    out = run.run(database, _straight(database), clock=_clock(10.0, 12.5))
    assert out.report.bake_seconds == 2.5
    assert out.report.real_time_factor == pytest.approx(duration / 2.5)
    later = run.run(database, _straight(database), clock=_clock(12.0), started=5.0)
    assert later.report.bake_seconds == 7.0


def test_the_cache_hook_keeps_what_it_is_given_and_changes_nothing(database):
    store, made = {}, []

    def cache(key, make):
        if key not in store:
            made.append(key)
            store[key] = make()
        return store[key]

    plain = run.run(database, _straight(database))
    first = run.run(database, _straight(database), cache=cache)
    assert run.SEARCH_INDEX in store and any(k.startswith("raw_take_joints") for k in store)
    second = run.run(database, _straight(database), cache=cache)
    assert len(made) == len(store)        # nothing made twice
    assert run.search_index(database, cache) is store[run.SEARCH_INDEX]
    for out in (first, second):
        np.testing.assert_array_equal(out.locations, plain.locations)
        np.testing.assert_array_equal(out.rotations, plain.rotations)
        assert out.report.contact_sliding_ratio == plain.report.contact_sliding_ratio


def test_a_path_for_a_larger_rig_reports_its_distances_at_that_size(database):
    one = run.run(database, _straight(database))
    two = run.run(database, dataclasses.replace(_straight(database), path_scale=2.0))
    np.testing.assert_array_equal(two.locations, one.locations)
    assert two.report.tracking_error_max_m == pytest.approx(2 * one.report.tracking_error_max_m)
    assert two.report.final_distance_m == pytest.approx(2 * one.report.final_distance_m)


def test_world_positions_come_into_the_armatures_space(database):
    turn = np.eye(4)
    turn[:3, :3] = tf.quat_to_matrix(tf.quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), np.pi / 2))
    turn[:3, 3] = (2.0, 3.0, 0.5)
    local = np.array([[0.0, -1.0, 0.0], [1.0, -2.0, 0.0]])
    world = local * 2.0 @ turn[:3, :3].T + turn[:3, 3]
    facing = np.array([[0.0, -1.0], [1.0, 0.0]]) @ turn[:2, :2].T
    frames = np.array([1.0, 2.0])
    path = run.ControllerPath.from_world(world, facing, frames, 24.0, armature_world=turn, path_scale=2.0)
    np.testing.assert_allclose(path.positions, local, atol=1e-12)
    np.testing.assert_allclose(path.facing, [[0.0, -1.0], [1.0, 0.0]], atol=1e-12)
    # A matrix into the space, scale included, is applied as it is.
    to_bake = np.linalg.inv(turn) / 2.0
    to_bake[3, 3] = 1.0
    again = run.ControllerPath.from_world(world, facing, frames, 24.0, to_bake=to_bake)
    np.testing.assert_allclose(again.positions, local, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(again.facing, axis=1), 1.0)
    # The world controller on the keyed frames, from the steps.
    steps = np.array([1.0, 1.5, 2.0])
    np.testing.assert_allclose(run.on_frames(np.array([[0, 0, 0], [1, 2, 3], [2, 4, 6.0]]), steps, frames),
                               [[0, 0, 0], [2, 4, 6]])


def test_toe_speeds_are_central_differences_within_clips(database):
    speeds = run.toe_speeds(database)
    toes = np.asarray(database.toe_positions)
    first, end = database.matching.clip_offsets[1:3]
    inner = np.arange(first + 1, end - 1)
    expect = np.linalg.norm(toes[inner + 1] - toes[inner - 1], axis=-1) * FPS / 2
    np.testing.assert_allclose(speeds[inner], expect)
    # A clip's first row looks forward only, not into the clip before it.
    np.testing.assert_allclose(speeds[first], np.linalg.norm(toes[first + 1] - toes[first], axis=-1) * FPS)
    assert speeds.shape == (database.matching.num_rows, 2)


def test_a_leg_that_is_not_a_chain_turns_foot_lock_off(database):
    parents = np.array(database.skeleton.parents)
    parents[4] = 1      # the left foot hangs from the hips, not from its knee
    broken = dataclasses.replace(database, skeleton=dataclasses.replace(database.skeleton, parents=parents))
    assert run.skeleton_of(broken).legs == []


@pytest.mark.parametrize("start, end, words", [(5, 5, "has one frame"), (5, 3, "ends before it starts")])
def test_a_frame_range_of_one_frame_is_refused(start, end, words):
    with pytest.raises(BakeError) as error:
        run.frames_to_key(start, end)
    assert _sentence(error) and words in str(error.value)


def _bad_paths(database):
    good = _straight(database)
    S = len(good.positions)
    return {
        "one frame": (dataclasses.replace(good, frames=np.array([1.0])), "at least two scene frames"),
        "frames backwards": (dataclasses.replace(good, frames=good.frames[::-1]), "increasing"),
        "flat positions": (dataclasses.replace(good, positions=good.positions[:, :2]), "3 numbers per step"),
        "too few samples": (dataclasses.replace(good, positions=good.positions[:-1]), "%d samples" % (S - 1)),
        "facings of 3": (dataclasses.replace(good, facing=np.zeros((S, 3))), "2 numbers per step"),
        "short facings": (dataclasses.replace(good, facing=np.tile([0.0, -1.0], (S - 2, 1))), "facings have"),
        "no scale": (dataclasses.replace(good, path_scale=0.0), "scale must be above 0"),
    }


@pytest.mark.parametrize("case", ["one frame", "frames backwards", "flat positions", "too few samples",
                                  "facings of 3", "short facings", "no scale"])
def test_a_bad_path_is_refused_before_any_work(database, case):
    path, words = _bad_paths(database)[case]
    made = []
    steps = run.bake(database, path, BakeSettings(), cache=lambda key, make: made.append(key) or make())
    with pytest.raises(BakeError) as error:
        next(steps)
    assert _sentence(error) and words in str(error.value), str(error.value)
    assert made == []


def test_world_positions_of_the_wrong_shape_are_refused():
    with pytest.raises(BakeError) as error:
        run.ControllerPath.from_world(np.zeros((4, 2)), None, np.array([1.0, 2.0]), 24.0, armature_world=np.eye(4))
    assert _sentence(error) and "shape 4x2" in str(error.value)
    with pytest.raises(BakeError) as error:
        run.ControllerPath.from_world(np.zeros((4, 3)), None, np.array([1.0, 2.0]), 24.0)
    assert _sentence(error)


def test_the_frames_contacts_without_the_report_are_the_reports(database):
    """core.job.replant.frame_contacts: what replanting reads, from the result alone (the preview measures no
    report), equals the report's per-frame contacts and root yaw."""
    from core.job import replant

    out = run.run(database, _straight(database, frame_end=61), BakeSettings())
    contact, root_yaw = replant.frame_contacts(out.result, out.times)
    np.testing.assert_array_equal(contact, out.report.per_frame.contact)
    np.testing.assert_array_equal(root_yaw, out.report.per_frame.root_yaw)
