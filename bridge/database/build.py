"""Build the motion-matching database from the actions listed on the scene.

Reads every listed action in bulk (armature_data), runs forward kinematics and
the feature maths in core, and returns the bytes of the database's .npz file.
:func:`build` changes nothing in the scene; :func:`build_and_store` stores the
result only when the whole build succeeded, so a failed build keeps the
previous database.
"""

import hashlib
import json

import numpy as np

from ...core.database.clip_features import Clip
from ...core.database.feature_database import build_database
from ...core.database.feature_spec import FeatureGroup, FeatureSpec, default_spec
from ...core.database import motion_database as mdb
from ...core.maths import transforms as tf
from ...core.skeleton import virtual_root as vr
from ...core.errors import MotionMatchingError
from ...core.database import selection as row_selection
from ..blender import armature_data, bake_settings as bake_props, compat
from . import mirror as database_mirror, store as database_store
from ..retarget import plan as retarget_plan
from ..blender.scene_data import scene_fps


def action_fps(action, scene):
    fps = action.motion_matching.fps
    return fps if fps > 0 else scene_fps(scene)


def action_frames(action, obj):
    """Whole frames the action covers: its manual range if set, else its keys."""
    if getattr(action, "use_frame_range", False):
        start, end = action.frame_start, action.frame_end
    else:
        lo, hi = None, None
        for fc in compat.fcurves(action, obj):
            if len(fc.keyframe_points) == 0:
                continue
            first, last = fc.range()  # the first and last key (read in C, not key by key)
            lo = first if lo is None else min(lo, first)
            hi = last if hi is None else max(hi, last)
        if lo is None:
            raise MotionMatchingError("The action %s has no keys." % action.name)
        start, end = lo, hi
    if not (np.isfinite(start) and np.isfinite(end)):
        raise MotionMatchingError("The action %s has keys on frames that are not finite numbers." % action.name)
    first, last = int(np.ceil(start - 1e-4)), int(np.floor(end + 1e-4))
    if last < first:
        raise MotionMatchingError("The action %s covers no whole frame." % action.name)
    return np.arange(first, last + 1, dtype=np.float64)


# ---------------------------------------------------------------------------
# Feature bones


def feature_bones(settings, obj):
    """Hips, feet and toes of ``obj``: the settings' overrides, else found by name."""
    from ...core.skeleton import humanoid_map

    names, parents = armature_data.bone_order(obj.data)
    rest = armature_data.rest_matrices(obj.data, names)
    heads = rest[:, :3, 3]
    tails = np.array([obj.data.bones[n].tail_local for n in names])
    auto = {}
    try:
        mapping = humanoid_map.auto_map(names, parents, heads, tails)
        auto = dict(mapping)
    except MotionMatchingError:
        auto = {}
    wanted = {
        "hips": (settings.hips, "Hips"),
        "left_foot": (settings.left_foot, "LeftFoot"),
        "right_foot": (settings.right_foot, "RightFoot"),
        "left_toe": (settings.left_toe, "LeftToes"),
        "right_toe": (settings.right_toe, "RightToes"),
    }
    root = obj.data.motion_matching.root_bone
    hips_bone = obj.data.motion_matching.hips_bone
    out = {}
    for key, (override, canonical) in wanted.items():
        name = override.strip() or (hips_bone if key == "hips" and hips_bone else auto.get(canonical, ""))
        if not name:
            raise MotionMatchingError(
                "Cannot tell which bone of %s is the %s: set it in the Database panel (Feature Bones)."
                % (obj.name, key.replace("_", " ")))
        if name not in obj.data.bones:
            raise MotionMatchingError("%s has no bone named %s (the %s feature bone)."
                                      % (obj.name, name, key.replace("_", " ")))
        out[key] = name
    if not root or root not in obj.data.bones:
        raise MotionMatchingError(
            "%s has no virtual root bone: add one (Virtual Root panel) before building the database." % obj.name)
    out["root"] = root
    return out


def spec_from_settings(settings, bones):
    """The feature set: the scene's groups, or the 27 default features."""
    if len(settings.feature_groups) == 0:
        spec = default_spec(bones["left_foot"], bones["right_foot"], bones["hips"])
    else:
        groups = []
        for g in settings.feature_groups:
            try:
                times = [float(t) for t in g.times.replace(";", ",").split(",") if t.strip()]
            except ValueError:
                raise MotionMatchingError("Feature group %s: times must be numbers of seconds separated by commas "
                                          "(got '%s')." % (g.name, g.times)) from None
            bone_list = [b.strip() for b in g.bones.split(",") if b.strip()]
            groups.append(FeatureGroup(name=g.name, kind=g.kind, bones=bone_list, times_s=times,
                                          weight=g.weight))
        spec = FeatureSpec(groups=groups)
    spec.responsiveness = settings.responsiveness
    spec.quality = settings.quality
    return spec


def fill_default_groups(settings, bones):
    """Write the default feature set into the scene's list so users can edit it."""
    spec = default_spec(bones["left_foot"], bones["right_foot"], bones["hips"])
    settings.feature_groups.clear()
    for g in spec.groups:
        item = settings.feature_groups.add()
        item.name = g.name
        item.kind = g.kind
        item.bones = ", ".join(g.bones)
        item.times = ", ".join("%.4g" % t for t in g.times_s)
        item.weight = g.weight


# ---------------------------------------------------------------------------
# Reading one action


def entries(settings):
    """(action, armature object) of each listed entry, checked."""
    out = []
    if len(settings.entries) == 0:
        raise MotionMatchingError("The database has no actions: add at least one to the list.")
    for i, e in enumerate(settings.entries):
        if e.action is None:
            raise MotionMatchingError("Entry %d of the database list has no action." % (i + 1))
        if e.armature is None or e.armature.type != "ARMATURE":
            raise MotionMatchingError("The action %s has no armature to play on: choose one in the list."
                                      % e.action.name)
        out.append((e.action, e.armature))
    return out


def fk_bones(names, parents, wanted):
    """Indices (into ``names``) of the bones ``wanted`` and of all their
    ancestors, parents first (``names`` is in :func:`armature_data.bone_order`)."""
    index = {n: i for i, n in enumerate(names)}
    keep = np.zeros(len(names), dtype=bool)
    for name in wanted:
        j = index[name]
        while j >= 0 and not keep[j]:
            keep[j] = True
            j = parents[j]
    return np.nonzero(keep)[0]


def sample_action(scene, action, obj, names, parents, wanted, frames=None):
    """Sample ``action`` on ``obj`` (bones ``names`` parents first, with
    ``parents``) on its whole frames.

    Returns (frames, (locations (F, J, 3), quaternions (F, J, 4)), positions
    (F, K, 3), root (F, 4, 4)): every bone's channels in float32 (as the
    database keeps them; quaternions sign-continuous), the world positions of
    the K bones ``wanted`` and the world matrices of the last of them. Memory
    stays near the float32 channels: curves are read a few bones at a time and
    forward kinematics runs on ``wanted`` and their ancestors only, a block of
    frames at a time.
    """
    if frames is None:
        frames = action_frames(action, obj)
    curves = compat.fcurves(action, obj)
    if not any(len(fc.keyframe_points) for fc in curves):
        raise MotionMatchingError("The action %s has no keys." % action.name)
    del curves
    by_bone = armature_data.curves_by_bone(action, obj)
    F, J = len(frames), len(names)
    fk = fk_bones(names, parents, wanted)
    slot = {int(j): k for k, j in enumerate(fk)}
    K = len(fk)
    loc32 = np.empty((F, J, 3), dtype=np.float32)
    quat32 = np.empty((F, J, 4), dtype=np.float32)
    fk_loc, fk_quat, fk_scale = np.empty((F, K, 3)), np.empty((F, K, 4)), np.empty((F, K, 3))
    block = max(1, (1 << 18) // max(F, 1))
    for b0 in range(0, J, block):
        sub = names[b0:b0 + block]
        loc, quat, scale = armature_data.pose_channels(obj, action, frames, sub, by_bone)
        finite = (np.isfinite(loc).all(axis=2) & np.isfinite(quat).all(axis=2)
                  & np.isfinite(scale).all(axis=2))
        if not finite.all():
            f, j = np.argwhere(~finite)[0]
            raise MotionMatchingError("The action %s holds NaN or infinite values (bone %s, frame %d)."
                                      % (action.name, sub[j], int(frames[f])))
        loc32[:, b0:b0 + len(sub)] = loc
        quat32[:, b0:b0 + len(sub)] = tf.quat_unroll(quat, axis=0)
        for i in range(len(sub)):
            k = slot.get(b0 + i)
            if k is not None:
                fk_loc[:, k], fk_quat[:, k], fk_scale[:, k] = loc[:, i], quat[:, i], scale[:, i]
        del loc, quat, scale
    positions, last = armature_data.fk_world(obj, names, parents, fk, wanted, F, lambda f0, f1: (
        armature_data.basis_matrices(fk_loc[f0:f1], fk_quat[f0:f1], fk_scale[f0:f1])))
    return frames, (loc32, quat32), positions, last


def _continue_signs(previous, quats):
    """Flip each bone's quaternions of a clip (float32, (F, J, 4)) where their
    first frame points away from ``previous`` (J, 4), the last frame of the clip
    before, so that the concatenated rows stay sign-continuous."""
    if previous is None:
        return quats
    away = np.einsum("jk,jk->j", previous.astype(np.float64), quats[0].astype(np.float64)) < 0.0
    if away.any():
        quats[:, away] *= -1.0
    return quats


def tags_of(action, frames):
    """The action's tags as core Tags in 0-based clip frames; a tag outside the
    action is refused in the action's own frame numbers."""
    from ...core.database import tags as core_tags

    first, last = int(frames[0]), int(frames[-1])
    out = []
    for t in action.motion_matching.tags:
        core_tags.check_tag_name(t.name)
        if t.frame_end < t.frame_start:
            raise MotionMatchingError("Tag '%s' of %s ends (frame %d) before it starts (frame %d)."
                                      % (t.name, action.name, t.frame_end, t.frame_start))
        if t.frame_start < first or t.frame_end > last:
            raise MotionMatchingError(
                "Tag '%s' of %s covers frames %d-%d but the action has frames %d-%d; move the tag inside it."
                % (t.name, action.name, t.frame_start, t.frame_end, first, last))
        out.append(core_tags.Tag(t.name, int(t.frame_start - first), int(t.frame_end - first)))
    core_tags.validate_tags(out, len(frames), action.name)
    return out


def exclude_names(settings):
    return [s.strip().lower() for s in settings.exclude_tags.replace(";", ",").split(",") if s.strip()]


# ---------------------------------------------------------------------------
# Fingerprint: what the database was built from


def fingerprint(scene):
    """A hash of every input of the build: settings, actions' keys, tags."""
    settings = scene.motion_matching
    h = hashlib.sha1()
    keys = ["left_foot", "right_foot", "left_toe", "right_toe", "hips", "responsiveness", "quality",
            "exclude_tags", "contact_speed", "contact_filter"]
    h.update(json.dumps({k: getattr(settings, k) for k in keys}, sort_keys=True).encode())
    # Only when not Off, so databases built before the choice (a switch then) keep their fingerprint.
    if settings.mirror_takes != "OFF":
        h.update(b"mirror_takes")
    for g in settings.feature_groups:
        h.update(json.dumps([g.name, g.kind, g.bones, g.times, g.weight]).encode())
    for e in settings.entries:
        h.update(("%s|%s" % (e.action.name if e.action else "", e.armature.name if e.armature else "")).encode())
        if e.action is None or e.armature is None:
            continue
        h.update(repr(e.action.motion_matching.fps).encode())
        for t in e.action.motion_matching.tags:
            h.update(("%s:%d:%d" % (t.name, t.frame_start, t.frame_end)).encode())
        for fc in compat.fcurves(e.action, e.armature):
            h.update(("%s[%d]" % (fc.data_path, fc.array_index)).encode())
            keys = compat.read_curve(fc, ("co", "handle_left", "handle_right"))
            for prop in ("co", "handle_left", "handle_right"):
                h.update(keys[prop].tobytes())
        h.update(np.asarray(e.armature.matrix_world, dtype=np.float32).tobytes())
    return h.hexdigest()


# ---------------------------------------------------------------------------
# The build


def _stack(parts):
    """One array of the clips' float32 rows (no copy for a single clip)."""
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _mirror_plan(mode, obj, names, parents, bones, takes):
    """((each bone's counterpart, channel map) or None, a sentence saying why
    there are no mirror images or ""). Mirror Takes "ON" refuses a skeleton
    that cannot be mirrored; "AUTO" builds without mirror images and says why."""
    try:
        return database_mirror.mirror_plan(obj, names, parents, bones, takes), ""
    except MotionMatchingError as ex:
        reason = str(ex).rstrip(".")
        if mode == "ON":
            raise MotionMatchingError("%s; set Mirror Takes to Automatic or Off (Database panel) to build from the "
                                      "takes alone." % reason) from None
        return None, "No mirror images (Mirror Takes is Automatic), because %s." % (reason[:1].lower() + reason[1:])


def build(scene, progress=None):
    """Return (npz bytes, summary dict, core MotionDatabase). Raises
    MotionMatchingError with a plain sentence on bad input; the scene is not
    changed."""
    from ...core.database import tags as core_tags
    from .store import to_bytes

    settings = scene.motion_matching
    pairs = entries(settings)
    first_obj = pairs[0][1]
    bones = feature_bones(settings, first_obj)
    names, parents = armature_data.bone_order(first_obj.data)
    rest = armature_data.rest_matrices(first_obj.data, names)
    spec = spec_from_settings(settings, bones)
    spec.validate(joint_names=names)
    clips, bases, clip_tags, frame_starts, actions, armatures = [], [], [], [], [], []
    root_paths, root_facings, root_quats, toe_paths, foot_paths = [], [], [], [], []
    excl = exclude_names(settings)
    # World positions are needed for the features' bones, the feet, toes and
    # the root only (the root last: its world matrices are kept too).
    joint_keys = ("hips", "left_foot", "right_foot", "left_toe", "right_toe")
    wanted = list(dict.fromkeys(list(spec.bones()) + [bones[k] for k in joint_keys]))
    wanted = [n for n in wanted if n != bones["root"]] + [bones["root"]]
    column = {n: k for k, n in enumerate(wanted)}
    previous_quat = None
    taken = []   # (action, obj, frames, channels, excluded, tags) of each clip, for the mirror

    def add_clip(name, fps, frames, channels, positions, root_world, excluded, tags, action_name, obj_name):
        nonlocal previous_quat
        character = vr.character_frames(root_world)
        root_pos = character[:, :3, 3].copy()
        root_rot = tf.matrix_to_quat(character[:, :3, :3])
        clips.append(Clip(name=name, fps=fps, joint_names=wanted, positions=positions, root_pos=root_pos,
                             root_rot=root_rot, excluded=excluded))
        channels = (channels[0], _continue_signs(previous_quat, channels[1]))
        previous_quat = channels[1][-1]
        bases.append(channels)
        root_paths.append(root_pos)
        root_quats.append(tf.quat_unroll(root_rot, axis=0))
        toe_paths.append(positions[:, [column[bones["left_toe"]], column[bones["right_toe"]]]])
        foot_paths.append(positions[:, [column[bones["left_foot"]], column[bones["right_foot"]]]])
        root_facings.append(character[:, :2, :3] @ np.array([0.0, -1.0, 0.0]))
        clip_tags.append([core_tags.Tag(t.name, t.start, t.end) for t in tags])
        frame_starts.append(frames[0])
        actions.append(action_name)
        armatures.append(obj_name)

    for i, (action, obj) in enumerate(pairs):
        if progress:
            progress(i, len(pairs))
        obj_names, _ = armature_data.bone_order(obj.data)
        if obj_names != names:
            missing = sorted(set(names) - set(obj_names))
            raise MotionMatchingError(
                "Every action must play on the same skeleton: %s differs from %s%s." % (
                    obj.name, first_obj.name, (" (it lacks %s)" % ", ".join(missing[:5])) if missing else ""))
        for key in ("hips", "left_foot", "right_foot", "left_toe", "right_toe", "root"):
            if bones[key] not in obj.data.bones:
                raise MotionMatchingError("%s has no bone named %s (the %s feature bone)."
                                          % (obj.name, bones[key], key.replace("_", " ")))
        frames = action_frames(action, obj)
        tags = tags_of(action, frames)
        frames, channels, positions, root_world = sample_action(scene, action, obj, names, parents, wanted, frames)
        excluded = core_tags.excluded_rows(tags, len(frames), excl)
        add_clip(action.name, action_fps(action, scene), frames, channels, positions, root_world, excluded, tags,
                 action.name, obj.name)
        del root_world
        if settings.mirror_takes != "OFF":
            taken.append((action, obj, frames, channels, excluded, tags))
    mirrored, note = [False] * len(clips), ""
    plan = None
    if settings.mirror_takes != "OFF":
        plan, note = _mirror_plan(settings.mirror_takes, first_obj, names, parents, bones,
                                  [t[3] for t in taken])
    if plan is not None:
        for action, obj, frames, channels, excluded, tags in taken:
            channels_m, positions_m, root_m = database_mirror.mirrored_take(
                obj, names, parents, wanted, fk_bones(names, parents, wanted), channels, *plan)
            add_clip(action.name + " (mirror)", action_fps(action, scene), frames, channels_m, positions_m, root_m,
                     excluded, database_mirror.mirrored_tags(tags), action.name, obj.name)
        mirrored += [True] * len(taken)
    del taken
    db = build_database(spec, clips, contact_joints=(bones["left_toe"], bones["right_toe"]),
                           contact_speed=settings.contact_speed, contact_filter=settings.contact_filter)
    database = mdb.MotionDatabase(
        matching=db,
        skeleton=mdb.Skeleton(names=list(names), parents=np.asarray(parents, dtype=np.int32),
                              rest=rest.astype(np.float64),
                              offsets=armature_data.rest_offsets(first_obj.data, names).astype(np.float64)),
        poses=mdb.Poses(locations=_stack([b[0] for b in bases]), rotations=_stack([b[1] for b in bases])),
        root=mdb.RootFrames(positions=np.concatenate(root_paths).astype(np.float64),
                            quats=np.concatenate(root_quats).astype(np.float64),
                            facings=np.concatenate(root_facings).astype(np.float64)),
        toe_positions=np.concatenate(toe_paths).astype(np.float64),
        foot_positions=np.concatenate(foot_paths).astype(np.float64),
        tags=clip_tags,
        clips=mdb.ClipInfo(actions=actions, armatures=armatures, frame_starts=np.asarray(frame_starts, dtype=np.float64),
                           mirrored=np.array(mirrored, dtype=bool) if any(mirrored) else None),
        feature_bones=mdb.FeatureBones(**bones),
        fingerprint=fingerprint(scene),
        source=retarget_plan.source_record(first_obj),   # a bake onto a character in another file reads it
    )
    summary = {
        "rows": db.num_rows, "features": db.dim, "clips": len(clips),
        "valid_rows": int(db.valid.sum()), "excluded_rows": int(db.excluded.sum()),
        "seconds": float(sum(c.num_frames / c.fps for c in clips)),
        "mirrored_clips": int(sum(mirrored)), "note": note,
    }
    return to_bytes(database.to_arrays()), summary, database


def summary_text(summary):
    mirrored = summary.get("mirrored_clips", 0)
    actions = summary["clips"] - mirrored
    return "%d rows (%d searchable, %d excluded) from %d action%s%s, %.1f s, %d features" % (
        summary["rows"], summary["valid_rows"], summary["excluded_rows"], actions, "" if actions == 1 else "s",
        " and their mirror images" if mirrored else " without mirror images" if summary.get("note") else "",
        summary["seconds"],
        summary["features"])


def build_and_store(context):
    """Build the scene's database and store it; raise MotionMatchingError on bad
    input (the scene's tag query included), leaving the previous database."""
    wm = context.window_manager
    settings = context.scene.motion_matching
    wm.progress_begin(0, max(1, len(settings.entries)))
    try:
        data, summary, database = build(context.scene, progress=lambda i, k: wm.progress_update(i))
        # What loading will demand of the stored bytes (e.g. values of sane size).
        database.check()
        if settings.tag_query.strip():
            knobs = bake_props.to_core(settings.bake_settings).tags
            row_selection.allowed_rows(database, settings.tag_query, ahead_s=knobs.tag_query_ahead,
                                       strict=knobs.strict_tag_query)
        del database   # only the bytes are kept: free the arrays before Blender copies them
    finally:
        wm.progress_end()
    database_store.store(context.scene, data)
    settings.database_built = True
    settings.database_stale = False
    settings.database_summary = summary_text(summary)
    settings.database_note = summary.get("note", "")
    return summary
