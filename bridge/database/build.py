"""Build the motion-matching database from the actions listed on the scene.

Reads every listed action in bulk (takes.py, armature_data), runs forward
kinematics and the feature maths in core, and returns the bytes of the
database's .npz file. :func:`build` changes nothing in the scene;
:func:`build_and_store` stores the result only when the whole build succeeded,
so a failed build keeps the previous database.
"""

import hashlib
import json

import numpy as np

from ...core.database.clip_features import Clip
from ...core.database.feature_database import build_database
from ...core.database import motion_database as mdb
from ...core.maths import transforms as tf
from ...core.skeleton import virtual_root as vr
from ...core.errors import MotionMatchingError
from ...core.database import selection as row_selection
from ..blender import armature_data, bake_settings, compat
from . import mirror as database_mirror, store as database_store
from ..retarget import plan as retarget_plan
from .inputs import entries, exclude_names, feature_bones, spec_from_settings
from .takes import action_fps, action_frames, fk_bones, sample_action, tags_of


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
# The build, by stage: the rows of each take, its mirror image, the database


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


def _wanted_bones(spec, bones):
    """The bones whose world positions the build needs: the features' bones,
    the feet, toes and the root (the root last: its world matrices are kept too)."""
    joint_keys = ("hips", "left_foot", "right_foot", "left_toe", "right_toe")
    wanted = list(dict.fromkeys(list(spec.bones()) + [bones[k] for k in joint_keys]))
    return [n for n in wanted if n != bones["root"]] + [bones["root"]]


def _check_skeleton(obj, first_obj, names, bones):
    """Refuse an armature whose skeleton differs from the first one's or that lacks a feature bone."""
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


class _Rows:
    """The clips and the per-row arrays of the database, gathered clip by clip
    (the quaternions kept sign-continuous across clips)."""

    def __init__(self, wanted, bones):
        self.wanted, self.bones = wanted, bones
        self.column = {n: k for k, n in enumerate(wanted)}
        self.clips, self.bases, self.tags, self.frame_starts, self.actions, self.armatures = [], [], [], [], [], []
        self.root_paths, self.root_facings, self.root_quats, self.toe_paths, self.foot_paths = [], [], [], [], []
        self.previous_quat = None

    def add(self, name, fps, frames, channels, positions, root_world, excluded, tags, action_name, obj_name):
        from ...core.database import tags as core_tags

        bones, column = self.bones, self.column
        character = vr.character_frames(root_world)
        root_pos = character[:, :3, 3].copy()
        root_rot = tf.matrix_to_quat(character[:, :3, :3])
        self.clips.append(Clip(name=name, fps=fps, joint_names=self.wanted, positions=positions, root_pos=root_pos,
                               root_rot=root_rot, excluded=excluded))
        channels = (channels[0], _continue_signs(self.previous_quat, channels[1]))
        self.previous_quat = channels[1][-1]
        self.bases.append(channels)
        self.root_paths.append(root_pos)
        self.root_quats.append(tf.quat_unroll(root_rot, axis=0))
        self.toe_paths.append(positions[:, [column[bones["left_toe"]], column[bones["right_toe"]]]])
        self.foot_paths.append(positions[:, [column[bones["left_foot"]], column[bones["right_foot"]]]])
        self.root_facings.append(character[:, :2, :3] @ np.array([0.0, -1.0, 0.0]))
        self.tags.append([core_tags.Tag(t.name, t.start, t.end) for t in tags])
        self.frame_starts.append(frames[0])
        self.actions.append(action_name)
        self.armatures.append(obj_name)


def _add_mirror_images(scene, settings, rows, first_obj, names, parents, taken):
    """Add each take's mirror image to ``rows`` when the skeleton can be
    mirrored. Returns (which clips are mirror images, a note or "")."""
    mirrored = [False] * len(rows.clips)
    plan, note = _mirror_plan(settings.mirror_takes, first_obj, names, parents, rows.bones, [t[3] for t in taken])
    if plan is not None:
        for action, obj, frames, channels, excluded, tags in taken:
            channels_m, positions_m, root_m = database_mirror.mirrored_take(
                obj, names, parents, rows.wanted, fk_bones(names, parents, rows.wanted), channels, *plan)
            rows.add(action.name + " (mirror)", action_fps(action, scene), frames, channels_m, positions_m, root_m,
                     excluded, database_mirror.mirrored_tags(tags), action.name, obj.name)
        mirrored += [True] * len(taken)
    return mirrored, note


def _motion_database(scene, db, rows, first_obj, names, parents, rest, mirrored):
    """The typed MotionDatabase of the matching ``db`` and the gathered ``rows``."""
    bones = rows.bones
    return mdb.MotionDatabase(
        matching=db,
        skeleton=mdb.Skeleton(names=list(names), parents=np.asarray(parents, dtype=np.int32),
                              rest=rest.astype(np.float64),
                              offsets=armature_data.rest_offsets(first_obj.data, names).astype(np.float64)),
        poses=mdb.Poses(locations=_stack([b[0] for b in rows.bases]), rotations=_stack([b[1] for b in rows.bases])),
        root=mdb.RootFrames(positions=np.concatenate(rows.root_paths).astype(np.float64),
                            quats=np.concatenate(rows.root_quats).astype(np.float64),
                            facings=np.concatenate(rows.root_facings).astype(np.float64)),
        toe_positions=np.concatenate(rows.toe_paths).astype(np.float64),
        foot_positions=np.concatenate(rows.foot_paths).astype(np.float64),
        tags=rows.tags,
        clips=mdb.ClipInfo(actions=rows.actions, armatures=rows.armatures,
                           frame_starts=np.asarray(rows.frame_starts, dtype=np.float64),
                           mirrored=np.array(mirrored, dtype=bool) if any(mirrored) else None),
        feature_bones=mdb.FeatureBones(**bones),
        fingerprint=fingerprint(scene),
        source=retarget_plan.source_record(first_obj),   # a bake onto a character in another file reads it
    )


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
    excl = exclude_names(settings)
    rows = _Rows(_wanted_bones(spec, bones), bones)
    taken = []   # (action, obj, frames, channels, excluded, tags) of each clip, for the mirror
    for i, (action, obj) in enumerate(pairs):
        if progress:
            progress(i, len(pairs))
        _check_skeleton(obj, first_obj, names, bones)
        frames = action_frames(action, obj)
        tags = tags_of(action, frames)
        frames, channels, positions, root_world = sample_action(scene, action, obj, names, parents, rows.wanted,
                                                                frames)
        excluded = core_tags.excluded_rows(tags, len(frames), excl)
        rows.add(action.name, action_fps(action, scene), frames, channels, positions, root_world, excluded, tags,
                 action.name, obj.name)
        del root_world
        if settings.mirror_takes != "OFF":
            taken.append((action, obj, frames, channels, excluded, tags))
    mirrored, note = [False] * len(rows.clips), ""
    if settings.mirror_takes != "OFF":
        mirrored, note = _add_mirror_images(scene, settings, rows, first_obj, names, parents, taken)
    del taken
    clips = rows.clips
    db = build_database(spec, clips, contact_joints=(bones["left_toe"], bones["right_toe"]),
                        contact_speed=settings.contact_speed, contact_filter=settings.contact_filter)
    database = _motion_database(scene, db, rows, first_obj, names, parents, rest, mirrored)
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
            knobs = bake_settings.to_core(settings.bake_settings).tags
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
