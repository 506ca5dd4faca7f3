"""The live preview on a character: when the armature chosen to bake onto is
not the database's own skeleton, the preview poses it the way Bake keys it.

Bake retargets the baked frames onto such a rig (bridge.bake.bake: the same
retarget set-up, the path walked at the database skeleton's size, the feet
planted again on the rig's own legs); the preview runs that same path on the
whole simulation and keeps, per frame, every pose bone's location and
quaternion in the armature's own bone order, so that each frame change sets
them in bulk. The retarget set-up reads the armatures, their T-poses and
meshes: it is kept by the digest of what it reads
(bridge.preview.inputs.retarget_digest) and made again only when that changes.
"""

from types import SimpleNamespace

import numpy as np

from ...core.job.run import skeleton_of
from ..bake import bake as bake_bridge
from ..retarget import meshes, rigify
from . import inputs as preview_inputs

# The key, among the rotation modes the preview sets aside, of the Rigify IK/FK
# switches it turned to FK ({bone: the value before}), given back on Stop: longer
# than a bone's name can be (63 bytes), so no bone has it.
FK_SWITCHES = "Rigify IK/FK switches the motion matching preview turned to FK, with their values before"

_setups = {}        # retarget digest -> Posing (the last few)
KEPT = 4


class Posing:
    """A retarget set-up for the preview: the Setup, how high the target's toes
    stand above its mesh's soles, and its pose bones' names in their order."""

    def __init__(self, setup, toe_above_soles, bone_names, soles=None):
        self.setup = setup
        self.toe_above_soles = toe_above_soles
        self.bone_names = bone_names
        self.soles = soles              # bridge.retarget.meshes.sole_points, as the bake reads them

    def path_options(self):
        """What bridge.bake.bake.run_steps / controller_path take for this rig (as Bake passes them)."""
        return dict(path_scale=self.setup.plan.scale, to_bake=bake_bridge.controller_matrix(self.setup))


def posing_for(context, armature, database):
    """The :class:`Posing` onto ``armature`` (None when it is the database's own
    skeleton, which the preview poses as it is), kept while what it reads is
    unchanged. Refusals (a rig whose joints cannot be mapped, the database's
    armature gone) are Bake's own sentences."""
    skeleton = bake_bridge.database_cache(database)("bake_skeleton", lambda: skeleton_of(database))
    if not bake_bridge.needs_retarget(armature, skeleton):
        return None
    key = preview_inputs.retarget_digest(context.scene, armature)
    posing = _setups.get(key)
    if posing is None:
        setup = bake_bridge.retarget_setup(context, armature, None, database)
        posing = Posing(setup, meshes.toe_above_soles(armature, setup), [pb.name for pb in armature.pose.bones],
                        meshes.sole_points(armature, setup))
        while len(_setups) >= KEPT:
            _setups.pop(next(iter(_setups)))
        _setups[key] = posing
    return posing


def forget():
    """Drop the kept set-ups (another file is opened)."""
    _setups.clear()


def path_options(posing):
    return {} if posing is None else posing.path_options()


def posed(output, posing, fps):
    """The character's pose on every frame of a core BakeOutput: a dict with
    ``locs`` (F, B, 3) and ``rots`` (F, B, 4) for the B pose bones in order
    (bones Bake does not key at rest), ``keyed`` (the names of the bones with
    quaternion keys) and ``to_world`` (4, 4): the matrix taking the
    simulation's space to the world (for the overlay). None for no posing.
    Reads no Blender data (it runs on the simulation's thread)."""
    if posing is None:
        return None
    setup = posing.setup
    result, _planted = bake_bridge.retarget_frames(setup, output, fps, posing.toe_above_soles, posing.soles)
    index = {n: i for i, n in enumerate(posing.bone_names)}
    names = setup.target.names
    frames, count = result.rotations.shape[0], len(posing.bone_names)
    locs = np.zeros((frames, count, 3), dtype=np.float32)
    rots = np.zeros((frames, count, 4), dtype=np.float32)
    rots[..., 0] = 1.0
    keyed = [index[names[j]] for j in result.keyed]
    rots[:, keyed] = result.rotations
    locs[:, [index[names[j]] for j in result.located]] = result.locations
    return dict(locs=locs, rots=rots, keyed=[names[j] for j in result.keyed],
                to_world=np.linalg.inv(bake_bridge.controller_matrix(setup)))


def posed_steps(steps, posing, fps):
    """The bake's step generator ``steps`` followed by :func:`posed`: returns (output, posed)."""
    output = yield from steps
    return output, posed(output, posing, fps)


def at_rest(armature):
    """Put every pose channel Bake does not key at rest, as Bake does before keying (Euler and
    axis-angle rotations, scale); locations and quaternions are set on every frame."""
    bones = armature.pose.bones
    count = len(bones)
    for prop, rest in (("rotation_euler", (0.0, 0.0, 0.0)), ("rotation_axis_angle", (0.0, 0.0, 1.0, 0.0)),
                       ("scale", (1.0, 1.0, 1.0))):
        bones.foreach_set(prop, np.tile(np.asarray(rest, dtype=np.float32), count))


def to_fk(armature, keyed):
    """Turn the Rigify limbs whose FK controls ``keyed`` (bone names) are keyed
    to FK, as Bake does (bridge.retarget.rigify); returns {bone: the switch's value before}."""
    backup = SimpleNamespace(props=[])
    rigify.switch_to_fk(armature, keyed, backup)
    return {bone: value for bone, _prop, value in backup.props}


def give_back_fk(armature, switches):
    """Put back the IK/FK switches :func:`to_fk` turned."""
    bones = armature.pose.bones
    for bone, value in (switches.items() if isinstance(switches, dict) else ()):
        if bone in bones and isinstance(value, (int, float)):
            bones[bone]["IK_FK"] = value


def apply(armature, posed, i):
    """Pose ``armature`` with frame ``i`` of :func:`posed`, in bulk."""
    bones = armature.pose.bones
    if len(bones) != posed["locs"].shape[1]:
        raise KeyError("the armature's bones changed")
    bones.foreach_set("location", posed["locs"][i].ravel())
    bones.foreach_set("rotation_quaternion", posed["rots"][i].ravel())
    armature.update_tag()
