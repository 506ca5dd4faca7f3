"""core.io.fcurve_eval against Blender: FCurve.evaluate, and what the scene shows after
frame_set, on random sparse keys (gaps 1..12 frames, every handle type, handles
that overshoot their segment, BEZIER / LINEAR / CONSTANT and easing modes, both
extrapolations)."""

import importlib

import bpy
import numpy as np
import pytest

from core.io.fcurve_eval import evaluate_keys
from core.io.fcurve_keys import ELASTIC, UnsupportedCurve
from tools.addon_session import MODULE

TOL = 1e-5
HANDLE_TYPES = ("AUTO_CLAMPED", "AUTO", "VECTOR", "ALIGNED", "FREE")
CHANNELS = [(path, i) for path in ("location", "rotation_euler", "scale") for i in range(3)]
EASINGS = ("SINE", "QUAD", "CUBIC", "QUART", "QUINT", "EXPO", "CIRC", "BACK", "BOUNCE")


def _compat():
    return importlib.import_module(MODULE + ".bridge.blender.compat")


def _new_empty(name):
    obj = bpy.data.objects.new(name, None)
    bpy.context.scene.collection.objects.link(obj)
    return obj


def _key_curve(fc, rng, n, extrapolation, interpolations, start=0.0):
    """Random sparse keys on ``fc``; handles recomputed by Blender afterwards."""
    gaps = rng.integers(1, 13, max(n - 1, 0)).astype(np.float64)
    odd = rng.random(len(gaps)) < 0.15                    # a few keys off whole frames
    gaps[odd] += np.round(rng.random(odd.sum()), 3)
    x = start + np.concatenate([[0.0], np.cumsum(gaps)])
    y = rng.uniform(-5.0, 5.0, n)
    kp = fc.keyframe_points
    kp.add(n)
    kp.foreach_set("co", np.column_stack([x, y]).astype(np.float32).ravel())
    fc.extrapolation = extrapolation
    for i, key in enumerate(kp):
        key.interpolation = rng.choice(interpolations)
        if key.interpolation not in ("CONSTANT", "LINEAR", "BEZIER"):
            key.easing = rng.choice(("AUTO", "EASE_IN", "EASE_OUT", "EASE_IN_OUT"))
            key.back = rng.uniform(0.0, 3.0)
        kind = rng.choice(HANDLE_TYPES)
        key.handle_left_type = kind
        key.handle_right_type = kind if rng.random() < 0.7 else rng.choice(HANDLE_TYPES)
        for side, sign, gap in (("left", -1, gaps[i - 1] if i > 0 else 3.0),
                                ("right", 1, gaps[i] if i < n - 1 else 3.0)):
            if getattr(key, "handle_%s_type" % side) in ("FREE", "ALIGNED"):
                # Up to 1.6 segments long in time (overshooting), sometimes pointing
                # the wrong way (Blender clamps those to the key's frame).
                dx = gap * rng.uniform(-0.2, 1.6)
                setattr(key, "handle_" + side, (x[i] + sign * dx, y[i] + rng.normal(0.0, 4.0)))
    fc.update()
    return x


def _read_keys(fc):
    kp = fc.keyframe_points
    n = len(kp)
    out = {}
    for name, width, dtype in (("co", 2, np.float32), ("handle_left", 2, np.float32),
                               ("handle_right", 2, np.float32), ("interpolation", 1, np.int32),
                               ("easing", 1, np.int32), ("back", 1, np.float32)):
        buf = np.empty(n * width, dtype=dtype)
        kp.foreach_get(name, buf)
        out[name] = buf.reshape(n, width) if width > 1 else buf
    return out


def _ours(fc, frames):
    k = _read_keys(fc)
    return evaluate_keys(k["co"], k["handle_left"], k["handle_right"], k["interpolation"],
                         frames, extrapolation=fc.extrapolation, easing=k["easing"],
                         back=k["back"])


def _probe_frames(fc, rng):
    """Whole and fractional frames over the keys and 20 frames beyond, the keys
    themselves, and frames just inside / outside Blender's 1e-4 key snap."""
    keys = _read_keys(fc)["co"][:, 0].astype(np.float64)
    lo, hi = keys[0] - 20, keys[-1] + 20
    return np.concatenate([
        np.arange(np.floor(lo), np.ceil(hi) + 1),
        np.arange(lo, hi, 0.1),
        rng.uniform(lo, hi, 300),
        keys, keys + 5e-5, keys - 5e-5, keys + 3e-4, keys - 3e-4,
    ])


def _build(rng, n_objects, interpolations, n_keys=(2, 16)):
    compat = _compat()
    objects = []
    for j in range(n_objects):
        obj = _new_empty("Probe%d" % j)
        action = compat.new_action(obj, "ProbeAction%d" % j)
        owner = compat._curve_owner(action, obj, create=True)
        curves = []
        for path, index in CHANNELS:
            fc = owner.fcurves.new(path, index=index)
            n = int(rng.integers(*n_keys)) if rng.random() > 0.05 else 1
            _key_curve(fc, rng, n, rng.choice(("CONSTANT", "LINEAR")), interpolations,
                       start=float(rng.integers(-10, 10)))
            curves.append(fc)
        objects.append((obj, curves))
    return objects


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_fcurve_evaluate(seed):
    rng = np.random.default_rng(seed)
    interpolations = ("BEZIER",) * 4 + ("LINEAR", "CONSTANT")
    worst = 0.0
    for obj, curves in _build(rng, 12, interpolations):
        for fc in curves:
            frames = _probe_frames(fc, rng)
            theirs = np.array([fc.evaluate(f) for f in frames])
            ours = _ours(fc, frames)
            err = np.abs(ours - theirs)
            worst = max(worst, err.max())
            assert err.max() < TOL, (fc.data_path, fc.array_index, frames[err.argmax()],
                                     ours[err.argmax()], theirs[err.argmax()])
    print("seed %d: worst |ours - FCurve.evaluate| = %.3g" % (seed, worst))


def test_matches_the_scene_after_frame_set():
    """The peer: what Blender puts on the object when the scene plays the action."""
    rng = np.random.default_rng(7)
    objects = _build(rng, 10, ("BEZIER",) * 4 + ("LINEAR", "CONSTANT"))
    scene = bpy.context.scene
    whole = np.arange(-30, 200)
    subs = [(int(f), s) for f in range(-30, 200, 3) for s in (0.25, 0.5, 0.8)]
    steps = [(int(f), 0.0) for f in whole] + subs
    # Blender's evaluation time is frame + subframe, summed in float32.
    times = np.array([np.float32(f) + np.float32(s) for f, s in steps], dtype=np.float64)
    shown = np.empty((len(objects), len(steps), len(CHANNELS)))
    for i, (f, s) in enumerate(steps):
        scene.frame_set(f, subframe=s)
        deps = bpy.context.evaluated_depsgraph_get()
        for j, (obj, _) in enumerate(objects):
            ev = obj.evaluated_get(deps)
            shown[j, i] = (*ev.location, *ev.rotation_euler, *ev.scale)
    for j, (obj, curves) in enumerate(objects):
        ours = np.column_stack([_ours(fc, times) for fc in curves])
        err = np.abs(ours - shown[j])
        assert err.max() < TOL, (obj.name, np.unravel_index(err.argmax(), err.shape))


def test_easing_modes_match_fcurve_evaluate():
    rng = np.random.default_rng(11)
    for obj, curves in _build(rng, 6, EASINGS + ("BEZIER", "LINEAR")):
        for fc in curves:
            frames = _probe_frames(fc, rng)
            theirs = np.array([fc.evaluate(f) for f in frames])
            err = np.abs(_ours(fc, frames) - theirs)
            assert err.max() < TOL, (fc.data_path, fc.array_index, frames[err.argmax()])


def test_single_key_and_handle_extrapolation():
    compat = _compat()
    obj = _new_empty("Single")
    action = compat.new_action(obj, "Single")
    owner = compat._curve_owner(action, obj, create=True)
    for i, (ipo, ext) in enumerate([("BEZIER", "LINEAR"), ("LINEAR", "LINEAR"),
                                    ("CONSTANT", "LINEAR"), ("BEZIER", "CONSTANT")]):
        fc = owner.fcurves.new("location", index=i)
        fc.extrapolation = ext
        key = fc.keyframe_points.insert(5.0, 2.0)
        key.interpolation = ipo
        key.handle_left_type = key.handle_right_type = "FREE"
        key.handle_left = (3.0, 1.0)        # a sloped handle: Blender extrapolates along it
        key.handle_right = (6.0, 4.0)
        fc.update()
        frames = np.linspace(-10, 20, 61)
        theirs = np.array([fc.evaluate(f) for f in frames])
        assert np.abs(_ours(fc, frames) - theirs).max() < TOL, (ipo, ext)


def test_elastic_is_left_to_blender():
    compat = _compat()
    obj = _new_empty("Elastic")
    action = compat.new_action(obj, "Elastic")
    fc = compat._curve_owner(action, obj, create=True).fcurves.new("location", index=0)
    for f, v in ((1, 0.0), (10, 1.0)):
        fc.keyframe_points.insert(f, v).interpolation = "ELASTIC"
    keys = _read_keys(fc)
    assert keys["interpolation"][0] == ELASTIC
    with pytest.raises(UnsupportedCurve):
        _ours(fc, np.arange(12.0))
