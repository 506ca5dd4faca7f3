"""What the scene asks the database to be built from: the listed (action,
armature) pairs, the feature bones, the feature set and the excluded tags."""

import numpy as np

from ...core.database.feature_spec import FeatureGroup, FeatureSpec, default_spec
from ...core.errors import MotionMatchingError
from ..blender import armature_data


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


def exclude_names(settings):
    return [s.strip().lower() for s in settings.exclude_tags.replace(";", ",").split(",") if s.strip()]
