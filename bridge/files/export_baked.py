"""Export of one action of an armature (a bake) to BVH, FBX or glTF with
Blender's own exporters, with root motion, on a chosen frame range.

Only the chosen action goes into the file: other actions in the file, on the
NLA or on other objects stay out. The scene is left as it was found: selection,
active object, mode, current frame, frame range, the armature's action and
NLA switch (everything changed for the export is put back in ``finally``).

Exporter options differ between Blender versions; options are passed only when
the running exporter has them (checked on the operator, never by version).
"""

import math
import os

import bpy

from ...core.errors import MotionMatchingError
from .export_bvh import BVH_ROTATE_MODE, BvhProxy, bvh_matrix
from .export_state import SceneState

FORMATS = {"BVH": ".bvh", "FBX": ".fbx", "GLTF": ".glb", "GLTF_SEPARATE": ".gltf"}
KNOWN_EXTENSIONS = (".bvh", ".fbx", ".glb", ".gltf")


def with_extension(filepath, fmt):
    """``filepath`` ending in the format's extension (a known export extension
    of another format is replaced, anything else is kept and extended)."""
    ext = FORMATS[fmt]
    stem, old = os.path.splitext(filepath)
    if old.lower() == ext:
        return filepath
    if old.lower() in KNOWN_EXTENSIONS:
        return stem + ext
    return filepath + ext


def default_action(armature):
    ad = armature.animation_data
    return ad.action if ad is not None else None


def export(context, armature, filepath, fmt="FBX", action=None, frame_start=None, frame_end=None,
           global_scale=1.0):
    """Write ``action`` (default: the armature's current action) of ``armature``
    to ``filepath`` as BVH, FBX, GLTF (binary .glb) or GLTF_SEPARATE (.gltf
    text with its .bin beside it), frames ``frame_start`` to
    ``frame_end`` (default: the action's range). ``global_scale`` scales the
    BVH (1.0: metres, 100: centimetres); FBX and glTF are written in metres.
    Returns (path written, first frame, last frame)."""
    fmt = (fmt or "").upper()
    if fmt not in FORMATS:
        raise MotionMatchingError("Unknown export format %r: choose BVH, FBX, GLTF or GLTF_SEPARATE." % fmt)
    if armature is None or getattr(armature, "type", None) != "ARMATURE":
        raise MotionMatchingError("Choose an armature to export (%s is not one)." % getattr(armature, "name", "nothing"))
    if armature.name not in context.view_layer.objects:
        raise MotionMatchingError("%s is not in this scene's view layer, so it cannot be exported." % armature.name)
    action = action or default_action(armature)
    if action is None:
        raise MotionMatchingError("%s has no action to export: bake it first." % armature.name)
    ad = armature.animation_data
    if ad is not None and ad.use_tweak_mode:
        raise MotionMatchingError("%s is in NLA tweak mode: leave it before exporting." % armature.name)
    first, last = action.frame_range   # whole frames inside it
    first, last = int(math.ceil(first - 1e-6)), int(math.floor(last + 1e-6))
    fs = first if frame_start is None else int(frame_start)
    fe = last if frame_end is None else int(frame_end)
    if fe < fs:
        raise MotionMatchingError("The frame range %d-%d ends before it starts." % (fs, fe))
    if fs < first or fe > last:
        raise MotionMatchingError("The frame range %d-%d is outside the action %s (frames %d-%d)." % (
            fs, fe, action.name, first, last))
    if not global_scale > 0.0:
        raise MotionMatchingError("The scale must be above zero.")
    path = _writable(_file_name(filepath), fmt)
    bvh_space = bvh_matrix(armature) if fmt == "BVH" else None

    state = SceneState(context, armature)
    proxy = None
    try:
        state.prepare(action, fs, fe)
        if fmt == "BVH":
            proxy = BvhProxy(context, armature, action, bvh_space)
            _run(bpy.ops.export_anim.bvh, "BVH", {
                "filepath": path,
                "frame_start": fs,
                "frame_end": fe,
                "global_scale": global_scale * bvh_space[1],
                "rotate_mode": BVH_ROTATE_MODE,
                "root_transform_only": False,  # keep every joint's offsets and positions as in the rig
            }, context, proxy.obj)
        elif fmt == "FBX":
            _run(bpy.ops.export_scene.fbx, "FBX", _fbx_options(path), context, armature)
        else:
            options = _gltf_options(path, action)
            if fmt == "GLTF_SEPARATE":
                options["export_format"] = "GLTF_SEPARATE"   # .gltf text and a .bin of the arrays
            _run(bpy.ops.export_scene.gltf, "glTF", options, context, armature)
    finally:
        # The scene first, while every object it names still exists; the
        # temporary armature goes last (see export_bvh.BvhProxy.remove).
        try:
            state.restore()
        finally:
            if proxy is not None:
                proxy.remove()
    if not os.path.isfile(path):
        raise MotionMatchingError("The exporter did not write %s." % path)
    return path, fs, fe


def _file_name(filepath):
    """The absolute file path asked for; a folder or an empty name is refused
    here, before an extension is added (``takes`` would become ``takes.bvh``
    beside the folder)."""
    path = bpy.path.abspath(filepath or "")
    if os.path.isdir(path):
        raise MotionMatchingError("Choose a file name inside the folder %s." % path)
    if not path.strip() or os.path.basename(path).strip(". ") == "":
        raise MotionMatchingError("Choose a file name to export to.")
    return path


def _writable(path, fmt):
    path = with_extension(path, fmt)
    if os.path.basename(path) in FORMATS.values():
        raise MotionMatchingError("Choose a file name to export to.")
    if os.path.isdir(path):
        raise MotionMatchingError("%s is a folder: choose a file name." % path)
    folder = os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        raise MotionMatchingError("The folder %s does not exist." % folder)
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise MotionMatchingError("Cannot write to %s (no permission)." % path)
    return path


def _fbx_options(path):
    """FBX settings for game engines (Unity, Unreal, Godot), each chosen on purpose."""
    return {
        "filepath": path,
        "use_selection": True,            # only the armature (it is the only object selected)
        "use_visible": False,
        "use_active_collection": False,
        "object_types": {"ARMATURE"},     # the skeleton and its animation, no meshes, lights, cameras
        "global_scale": 1.0,
        "apply_unit_scale": True,
        # Units go into the file's unit scale (metres), objects keep scale 1: engines
        # then see a skeleton of the right size without a 100x scale on its root.
        "apply_scale_options": "FBX_SCALE_UNITS",
        "bake_space_transform": False,    # experimental in Blender; the axis change stays in the file header
        # Y up, and a character facing Blender's -Y faces +Z: Unity's forward, and the
        # same axes as the glTF and BVH files (Blender's defaults).
        "axis_forward": "-Z",
        "axis_up": "Y",
        "use_custom_props": False,        # mm_* figures are for the Graph Editor, not for engines
        "add_leaf_bones": False,          # no extra "_end" bones in the engine's skeleton
        "primary_bone_axis": "Y",         # Blender's bone axes, so a round trip keeps bone orientation
        "secondary_bone_axis": "X",
        "use_armature_deform_only": False,  # every bone, including the root that carries root motion
        "armature_nodetype": "NULL",
        "bake_anim": True,
        "bake_anim_use_all_bones": True,  # key every bone, even still ones
        "bake_anim_use_nla_strips": False,  # no NLA strips ...
        "bake_anim_use_all_actions": False,  # ... and no other actions: one take, the action playing
        "bake_anim_force_startend_keying": True,
        "bake_anim_step": 1.0,            # one key per frame
        "bake_anim_simplify_factor": 0.0,  # no key reduction: every frame exactly as baked
        "path_mode": "AUTO",
        "embed_textures": False,
        "batch_mode": "OFF",
    }


def _gltf_options(path, action):
    """glTF settings for game engines, each chosen on purpose."""
    return {
        "filepath": path,
        "export_format": "GLB",           # one binary file
        "use_selection": True,            # only the armature (it is the only object selected)
        "use_visible": False,
        "use_renderable": False,
        "use_active_collection": False,
        "use_active_scene": False,
        "export_yup": True,               # glTF is Y up by definition (the character faces +Z)
        "export_extras": False,           # mm_* figures are for the Graph Editor, not for engines
        "export_cameras": False,
        "export_lights": False,
        "export_animations": True,
        # The armature's assigned action becomes the one animation; NLA tracks are
        # not exported (the exporter turns the NLA off while sampling) ...
        "export_animation_mode": "ACTIVE_ACTIONS",
        # ... and other armature actions in the file are not added.
        "export_anim_single_armature": False,
        "export_nla_strips_merged_animation_name": action.name,  # the animation keeps the action's name
        "export_bake_animation": False,
        "export_force_sampling": True,    # sample every frame (rotations as quaternions, exact)
        "export_frame_step": 1,
        "export_frame_range": True,       # clip to the scene range, set to the requested range for the export
        "export_anim_slide_to_zero": True,  # the clip starts at time 0, as engines play it
        "export_negative_frame": "SLIDE",
        "export_optimize_animation_size": False,  # a key on every frame for every channel, like the bake
        "export_def_bones": False,        # every bone: the virtual root may not be a deform bone, and carries root motion
        "export_leaf_bone": False,
        "export_hierarchy_flatten_bones": False,
        "export_armature_object_remove": False,  # keep the armature node, so the object's placement is kept
        "export_rest_position_armature": True,   # joints' bind pose is the rest pose, not the current frame
        "export_reset_pose_bones": True,
        "export_current_frame": False,
        "export_skins": True,
        "export_morph": False,
        "export_pointer_animation": False,  # no KHR_animation_pointer channels (custom properties)
        "export_extra_animations": False,
        "export_optimize_disable_viewport": False,
        "export_materials": "NONE",
        "will_save_settings": False,      # leave no exporter settings stored in the scene
    }


def _run(op, label, options, context, obj):
    """Call an exporter with the options it knows, on ``obj`` alone."""
    names = {p.identifier for p in op.get_rna_type().properties}
    kwargs = {k: v for k, v in options.items() if k in names}
    override = {"active_object": obj, "object": obj, "selected_objects": [obj], "selected_editable_objects": [obj]}
    try:
        with context.temp_override(**override):
            result = op(**kwargs)
    except RuntimeError as ex:
        raise MotionMatchingError("Blender's %s exporter failed: %s" % (label, str(ex).strip())) from None
    if "FINISHED" not in result:
        raise MotionMatchingError("Blender's %s exporter did not finish." % label)
