"""What the live preview's simulation was made from, as digests it can compare.

A simulation depends on the scene's bake settings, the tag query, the stored
database (its SHA-1), the armature chosen and its world matrix (and what a
retarget onto it reads: :func:`retarget_digest`), the frame
range and rate, and the controller's path as the bake samples it. The path is
compared as sampled (so any way of moving the controller counts: keys,
constraints, the curve it follows, parents); sampling is cheap when the
controller's own keyed channels are its transform (read in bulk) and costs a
scene update per step otherwise (Follow Path). For those, :func:`head` also
digests what defines the path (the controller's keys, constraints, parents,
and the points and transform of the objects its constraints follow), so that a
frame change can tell an edit without stepping the scene.
"""

import hashlib
from types import SimpleNamespace

import numpy as np

from ...core.errors import MotionMatchingError
from ..bake import bake as bake_bridge, controller as controller_build, moves as bake_moves
from ..blender import bake_settings, compat
from ..database import store as database_store
from ..blender.scene_data import scene_fps

# Set while the preview steps the scene's frames itself (sampling a controller
# frame by frame): its own frame-change handlers then do nothing.
busy = []


def context_of(scene):
    """What the bake's bridge functions read from a context: the scene."""
    return SimpleNamespace(scene=scene)


def chosen_armature(scene):
    """The armature the bake would key (None when there is none to choose)."""
    try:
        return bake_bridge.bake_target(context_of(scene))
    except Exception:  # noqa: BLE001  (a refusal: the preview keeps what it shows)
        return None


def moves(scene):
    """The moves along the timeline the bake of the scene's controller follows
    (its own list, else the markers); raises MotionMatchingError for bad ones."""
    return bake_moves.controller_moves(scene, scene.motion_matching.controller)


def moves_text(scene):
    """The moves as text for the digest (a bad move still digests, by its words)."""
    try:
        return repr(moves(scene))
    except MotionMatchingError as ex:
        return "refused: %s" % ex


def head(scene):
    """Digest of every input but the sampled path (see the module notes)."""
    mm = scene.motion_matching
    h = hashlib.sha1()
    arm = chosen_armature(scene)
    text = [repr(bake_settings.to_core(mm.bake_settings)), mm.tag_query, str(scene.get(database_store.PROP_ID)),
            str(database_store.has_database(scene)), str(scene.frame_start), str(scene.frame_end),
            repr(scene_fps(scene)), arm.name if arm is not None else "", getattr(mm.controller, "name", "")]
    h.update("\0".join(text + [moves_text(scene)]).encode())
    if arm is not None:
        h.update(np.asarray(arm.matrix_world, dtype=np.float64).tobytes())
        h.update(retarget_digest(scene, arm).encode())
    if mm.controller is not None:
        _object_digest(h, mm.controller, set())
    ground_digest(h, mm.ground)
    return h.hexdigest()


def ground_digest(h, obj):
    """The Ground's name, kind, place and its mesh's points (what the bake's ray casts read; None: none)."""
    if obj is None:
        h.update(b"no ground")
        return
    h.update(("%s|%s" % (obj.name, obj.type)).encode())
    h.update(np.asarray(obj.matrix_world, dtype=np.float64).tobytes())
    if obj.type == "MESH":
        co = np.empty(3 * len(obj.data.vertices), dtype=np.float32)
        obj.data.vertices.foreach_get("co", co)
        h.update(co.tobytes())
        h.update(repr([(m.name, m.type, m.show_viewport) for m in obj.modifiers]).encode())


def retarget_digest(scene, armature):
    """Digest of what retargeting onto ``armature`` reads (bridge.bake.bake.retarget_setup):
    the stored database, both armatures (where they stand, their bones at rest, bone maps,
    stored T-poses, bone constraints) and the meshes the target skins (where, how many points)."""
    from ..retarget import meshes

    h = hashlib.sha1(str(scene.get(database_store.PROP_ID)).encode())
    source = next((e.armature for e in scene.motion_matching.entries if e.armature is not None), None)
    for obj in (armature, source):
        if obj is None or obj.type != "ARMATURE":
            h.update(b"-")
            continue
        h.update(("%s|%s" % (obj.name, obj.data.name)).encode())
        h.update(np.asarray(obj.matrix_world, dtype=np.float64).tobytes())
        bones = obj.data.bones
        h.update("\0".join("%s|%s" % (b.name, b.parent.name if b.parent else "") for b in bones).encode())
        rest = np.empty(len(bones) * 16, dtype=np.float32)
        bones.foreach_get("matrix_local", rest)
        h.update(rest.tobytes())
        group = obj.data.motion_matching
        h.update(repr((group.root_bone, group.tpose_source, [(i.name, i.bone) for i in group.bone_map],
                       [(i.name, tuple(i.rotation), tuple(i.head)) for i in group.tpose])).encode())
        for pb in obj.pose.bones:
            for con in pb.constraints:
                h.update(("%s|%s|%s|%s|%r|%s|%s" % (pb.name, con.name, con.type, con.mute, con.influence,
                                                   getattr(getattr(con, "target", None), "name", ""),
                                                   getattr(con, "subtarget", ""))).encode())
    for mesh in meshes.skinned_meshes(armature):
        h.update(("%s|%d" % (mesh.name, len(mesh.data.vertices))).encode())
        h.update(np.asarray(mesh.matrix_world, dtype=np.float64).tobytes())
    return h.hexdigest()


def _object_digest(h, obj, seen):
    """The definition of ``obj``'s motion: keys, constraints and their targets, parents."""
    if obj is None or obj.name in seen:
        return
    seen.add(obj.name)
    h.update(("%s|%s|%s|%s" % (obj.name, obj.rotation_mode, obj.get(controller_build.USE_FACING, False),
                               obj.parent.name if obj.parent else "")).encode())
    for values in (obj.delta_location, obj.delta_rotation_euler, obj.delta_scale, obj.delta_rotation_quaternion,
                   obj.matrix_parent_inverse):
        h.update(np.asarray(values, dtype=np.float64).tobytes())
    ad = obj.animation_data
    animated = set()
    if ad is not None:
        h.update(("%s|%d|%d" % (getattr(ad.action, "name", ""), len(ad.drivers), len(ad.nla_tracks))).encode())
        if ad.action is not None:
            for fc in compat.fcurves(ad.action, obj):
                animated.add(fc.data_path)
                h.update(("%s[%d]%s%s%d" % (fc.data_path, fc.array_index, fc.mute, fc.extrapolation,
                                             len(fc.modifiers))).encode())
                for values in compat.read_curve(fc).values():
                    h.update(np.ascontiguousarray(values).tobytes())
    # Channels not keyed are the object's own values (keyed ones change with the frame).
    for prop in ("location", "rotation_euler", "rotation_quaternion", "rotation_axis_angle", "scale"):
        if prop not in animated:
            h.update(np.asarray(getattr(obj, prop), dtype=np.float64).tobytes())
    for con in obj.constraints:
        h.update(("%s|%s" % (con.type, con.name)).encode())
        for prop in con.bl_rna.properties:
            path = 'constraints["%s"].%s' % (con.name, prop.identifier)
            if prop.type in {"BOOLEAN", "INT", "FLOAT", "ENUM", "STRING"} and not prop.is_readonly \
                    and not getattr(prop, "array_length", 0) and path not in animated:
                h.update(("%s=%r" % (prop.identifier, getattr(con, prop.identifier))).encode())
        target = getattr(con, "target", None)
        if target is not None:
            _target_digest(h, target)
            _object_digest(h, target, seen)
    _object_digest(h, obj.parent, seen)


def _target_digest(h, obj):
    """A followed object's world matrix and, for a curve, its points."""
    h.update(np.asarray(obj.matrix_world, dtype=np.float64).tobytes())
    data = obj.data
    if obj.type != "CURVE" or data is None:
        return
    h.update(("%s|%s|%d" % (data.use_path, data.resolution_u, len(data.splines))).encode())
    for spline in data.splines:
        h.update(("%s|%s|%d" % (spline.type, spline.use_cyclic_u, spline.resolution_u)).encode())
        for points, props in ((spline.bezier_points, ("co", "handle_left", "handle_right")),
                              (spline.points, ("co",))):
            for prop in props:
                width = len(getattr(points[0], prop)) if len(points) else 0
                values = np.empty(len(points) * width, dtype=np.float32)
                points.foreach_get(prop, values)
                h.update(values.tobytes())
            if len(points):
                tilt = np.empty(len(points), dtype=np.float32)
                points.foreach_get("tilt", tilt)
                h.update(tilt.tobytes())


def path_digest(sampled):
    """Digest of the controller's sampled (world positions, facings or None)."""
    h = hashlib.sha1()
    positions, facing = sampled
    h.update(np.ascontiguousarray(positions, dtype=np.float64).tobytes())
    h.update(b"-" if facing is None else np.ascontiguousarray(facing, dtype=np.float64).tobytes())
    return h.hexdigest()


def cheap_to_sample(scene):
    """Whether the controller is sampled in bulk (no scene update per step)."""
    ctrl = scene.motion_matching.controller
    return ctrl is not None and controller_build.can_sample_in_bulk(ctrl)


def sample_steps(scene, chunk=None):
    """Sample the controller the way the bake does, on the simulation steps of
    the scene's range. A generator: it yields the share done after each
    ``chunk`` steps when the scene must be stepped frame by frame (None: all
    at once) and returns (world positions, facings or None)."""
    database = database_store.load(scene)
    _frames, steps = bake_bridge.sample_frames(scene, database)
    ctrl = scene.motion_matching.controller
    context = context_of(scene)
    if chunk is None or controller_build.can_sample_in_bulk(ctrl):
        return bake_bridge.sample_controller(context, ctrl, steps)
    parts = []
    for i in range(0, len(steps), chunk):
        busy.append(True)
        try:
            parts.append(bake_bridge.sample_controller(context, ctrl, steps[i:i + chunk]))
        finally:
            busy.pop()
        yield min(1.0, (i + chunk) / len(steps))
    positions = np.concatenate([p for p, _f in parts])
    facing = None if parts[0][1] is None else np.concatenate([f for _p, f in parts])
    return positions, facing
