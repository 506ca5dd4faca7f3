"""The one place that knows how actions store their curves in each Blender version.

Blender 4.2 keeps F-Curves on ``Action.fcurves``. From 4.4 actions are layered:
curves live in a channelbag, found through a slot, a layer and a keyframe strip;
5.0 removes ``Action.fcurves``. Everything else in the add-on calls the functions
here and never asks which version is running. The checks below look for the
feature (``Action.layers``), not for a version number.
"""

import numpy as np

# Enum values of Keyframe.interpolation as foreach_set takes them.
INTERPOLATION = {"CONSTANT": 0, "LINEAR": 1, "BEZIER": 2}


def is_layered(action):
    return hasattr(action, "layers")


def _slot_for(action, obj):
    """The slot ``obj`` plays from ``action``: its assigned slot, else the first."""
    ad = getattr(obj, "animation_data", None) if obj is not None else None
    if ad is not None and ad.action == action and getattr(ad, "action_slot", None) is not None:
        return ad.action_slot
    return action.slots[0] if len(action.slots) else None


def _channelbag(action, obj, create):
    slot = _slot_for(action, obj)
    if slot is None:
        if not create:
            return None
        slot = action.slots.new(id_type="OBJECT", name=obj.name if obj is not None else "Armature")
    if not len(action.layers):
        if not create:
            return None
        action.layers.new("Layer")
    layer = action.layers[0]
    if not len(layer.strips):
        if not create:
            return None
        layer.strips.new(type="KEYFRAME")
    strip = layer.strips[0]
    return strip.channelbag(slot, ensure=create)


def _curve_owner(action, obj, create=False):
    """What holds the F-Curves and groups: the action (4.2) or its channelbag."""
    if not is_layered(action):
        return action
    return _channelbag(action, obj, create)


def new_action(obj, name):
    """Create an action, assign it to ``obj`` and give it a slot for ``obj``."""
    import bpy

    action = bpy.data.actions.new(name=name)
    if is_layered(action):
        _curve_owner(action, obj, create=True)
    assign_action(obj, action)
    return action


def assign_action(obj, action):
    """Make ``obj`` play ``action`` (with a suitable slot where slots exist)."""
    ad = obj.animation_data or obj.animation_data_create()
    ad.action = action
    if action is not None and is_layered(action) and getattr(ad, "action_slot", None) is None:
        if len(action.slots):
            ad.action_slot = action.slots[0]


def saved_assignment(obj):
    """What ``obj`` plays now, (action, slot or None), for :func:`restore_assignment`."""
    ad = obj.animation_data
    if ad is None:
        return None, None
    return ad.action, getattr(ad, "action_slot", None)


def restore_assignment(obj, saved):
    """Make ``obj`` play what :func:`saved_assignment` recorded."""
    action, slot = saved
    ad = obj.animation_data
    if ad is None:
        return
    if ad.action != action:
        ad.action = action
    if slot is not None and getattr(ad, "action_slot", None) != slot:
        ad.action_slot = slot


def fcurves(action, obj=None):
    """The F-Curves ``obj`` plays from ``action`` (a list, possibly empty)."""
    owner = _curve_owner(action, obj)
    return list(owner.fcurves) if owner is not None else []


def find_fcurve(action, obj, data_path, index):
    owner = _curve_owner(action, obj)
    if owner is None:
        return None
    return owner.fcurves.find(data_path, index=index)


def remove_fcurves(action, obj, data_path):
    """Remove every F-Curve of ``data_path`` (all indices)."""
    owner = _curve_owner(action, obj)
    if owner is None:
        return
    for fc in [fc for fc in owner.fcurves if fc.data_path == data_path]:
        owner.fcurves.remove(fc)


# Blender files a curve into a group, and looks a new curve up among the
# existing ones, with work that grows with the number of curves already there:
# an action of more curves than this is keyed without bone groups.
GROUP_LIMIT = 4000


def write_curves(action, obj, channels, frames, values, interpolation="LINEAR", progress=None):
    """Key many curves at once: ``channels`` is a list of (data_path, index,
    group name or None), ``values`` (F, len(channels)), on ``frames`` (F,).
    See :func:`write_curve_rows`."""
    frames = np.asarray(frames, dtype=np.float64)
    values = np.asarray(values).reshape(len(frames), len(channels))
    write_curve_rows(action, obj, channels, frames, values.T, interpolation, progress)


def write_curve_rows(action, obj, channels, frames, rows, interpolation="LINEAR", progress=None):
    """Key many curves at once: ``channels`` is a list of (data_path, index,
    group name or None), ``rows`` (len(channels), F) the values of each curve
    on ``frames`` (F,). ``progress(fraction)`` is told as the curves are written.
    Replaces any keys those curves had (:func:`ensure_curves`, then :func:`write_keys`)."""
    curves = ensure_curves(action, obj, channels)
    write_keys(curves, frames, rows, interpolation, progress)


def ensure_curves(action, obj, channels, progress=None):
    """The F-Curves of ``channels`` (data_path, index, group name or None), made
    where missing; existing ones lose their keys. Returns them in order.

    Existing curves and groups are looked up in dictionaries made once, so the
    work in Python stays proportional to the number of curves. Blender itself
    looks every new curve up among the existing ones, which is quickest when
    they were allocated together: callers making many curves do it before
    freeing much else (the BVH import makes them while its bones are still in
    edit mode). Curves are grouped (by their group name) only while the action
    holds at most :data:`GROUP_LIMIT` curves. ``progress(fraction)`` is told
    as they are made.
    """
    owner = _curve_owner(action, obj, create=True)
    curves = owner.fcurves
    existing = {(fc.data_path, fc.array_index): fc for fc in curves} if len(curves) else {}
    use_groups = len(existing) + len(channels) <= GROUP_LIMIT
    groups = {g.name: g for g in owner.groups} if use_groups else {}
    made = []
    every = max(1, len(channels) // 100)
    for data_path, index, group in channels:
        if progress is not None and len(made) % every == 0:
            progress(len(made) / len(channels))
        fc = existing.get((data_path, index))
        if fc is None:
            fc = curves.new(data_path, index=index)
        else:
            fc.keyframe_points.clear()
        if group and use_groups:
            grp = groups.get(group)
            if grp is None:
                grp = groups[group] = owner.groups.new(group)
            if fc.group != grp:
                fc.group = grp
        made.append(fc)
    return made


def write_keys(curves, frames, rows, interpolation="LINEAR", progress=None):
    """Add keys to empty F-Curves: ``rows`` (len(curves), F) on ``frames`` (F,).

    Keys and handles go in with one ``foreach_set`` each per curve, from
    arrays made for a block of curves at a time (:data:`KEY_BLOCK` values).
    Handles sit a third of the way toward the neighbouring keys, on the
    straight line to them: a Bezier segment with such handles is exactly the
    straight line, so "LINEAR" keys are left as Blender's default Bezier keys
    (one ``foreach_set`` fewer per curve, and still smooth if a key is edited
    later). Other interpolations are set explicitly.
    """
    frames = np.asarray(frames, dtype=np.float64)
    n = len(frames)
    if len(rows) != len(curves) or (len(rows) and np.shape(rows[0]) != (n,)):
        raise ValueError("write_keys: %d curves and values of shape %s on %d frames"
                         % (len(curves), np.shape(rows), n))
    dx = np.diff(frames) / 3.0
    interp = np.full(n, INTERPOLATION[interpolation], dtype=np.int8)
    every = max(1, len(curves) // 100)
    block = max(1, KEY_BLOCK // max(n, 1))
    for b0 in range(0, len(curves), block):
        co, left, right = _key_arrays(frames, dx, rows[b0:b0 + block])
        for k, fc in enumerate(curves[b0:b0 + block], start=b0):
            kp = fc.keyframe_points
            kp.add(n)
            kp.foreach_set("co", co[k - b0].ravel())
            kp.foreach_set("handle_left", left[k - b0].ravel())
            kp.foreach_set("handle_right", right[k - b0].ravel())
            if interpolation != "LINEAR":
                kp.foreach_set("interpolation", interp)
            if progress is not None and ((k + 1) % every == 0 or k + 1 == len(curves)):
                progress((k + 1) / len(curves))


KEY_BLOCK = 1 << 16     # keys made ready at a time by write_keys (float32 keys and handles: 1.5 MB)


def _key_arrays(frames, dx, rows):
    """Keys and handles (curves, F, 2) float32 of the curves' ``rows`` on ``frames``
    (``dx``: a third of each frame step): a handle a third of the way toward each
    neighbouring key, along the straight line to it."""
    rows = np.asarray(rows, dtype=np.float64).reshape(len(rows), len(frames))
    co = np.empty(rows.shape + (2,), dtype=np.float32)
    co[:, :, 0] = frames
    co[:, :, 1] = rows
    left, right = co.copy(), co.copy()
    left[:, 1:, 0] -= dx
    right[:, :-1, 0] += dx
    dy = rows[:, 1:] - rows[:, :-1]
    dy /= 3.0
    left[:, 1:, 1] -= dy
    right[:, :-1, 1] += dy
    return co, left, right


def write_channels(action, obj, data_path, frames, values, group=None, interpolation="LINEAR"):
    """Key ``values`` (F, K) on frames (F,) into curves ``data_path[0..K-1]``."""
    values = np.asarray(values, dtype=np.float64).reshape(len(frames), -1)
    channels = [(data_path, k, group) for k in range(values.shape[1])]
    write_curves(action, obj, channels, frames, values, interpolation)


KEY_FIELDS = (("co", 2, np.float32), ("handle_left", 2, np.float32), ("handle_right", 2, np.float32),
              ("interpolation", 1, np.int8), ("easing", 1, np.int8))


def read_curve(fc, fields=None):
    """The keys of one F-Curve in bulk: dict of arrays (co (n, 2), handle_left,
    handle_right, interpolation, easing), or only the ``fields`` named."""
    kp = fc.keyframe_points
    n = len(kp)
    out = {}
    for name, width, dtype in KEY_FIELDS:
        if fields is not None and name not in fields:
            continue
        buf = np.empty(n * width, dtype=dtype)
        kp.foreach_get(name, buf)
        out[name] = buf.reshape(n, width) if width > 1 else buf
    return out


def read_channels(action, obj):
    """Every curve of ``action`` for ``obj``: {(data_path, index): read_curve dict}."""
    return {(fc.data_path, fc.array_index): read_curve(fc) for fc in fcurves(action, obj)}
