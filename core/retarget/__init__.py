"""Retargeting through T-pose correspondence.

Both skeletons are mapped to the canonical humanoid joints (core.skeleton.humanoid_joints).
With each skeleton's T-pose known as armature-space bone rotations, every
paired bone follows

    q_t = q_s * q_s0^-1 * q_t0

(q_s: source bone on this frame, q_s0: source bone in T-pose, q_t0: target
bone in T-pose, all armature-space rotations of the bones' pose matrices). The
rotations are then turned into each target bone's local (basis) rotation,
parents first, with Blender's rule pose = parent_pose @ offset @ basis.

Conventions and decisions
-------------------------
- The body frame: each skeleton may carry its object's matrix without the
  ground part (see :func:`split_object_matrix`): the tilt and uniform scale
  an importer gives (glTF and FBX imports of Mixamo characters: turned +90
  degrees about X, scale 0.01, bones Y up in centimetres). The maths runs in
  that frame (Z up, metres, facing -Y), so such a rig moves as it does with
  its transforms applied. Inputs and outputs stay armature-space: source
  rotations and heads, T-poses, the keys written (locations in the rig's
  own units). What remains of the object (its place and its turn about the
  vertical, the ground frame) carries the motion: a character moved or
  turned on the ground walks there.
- Pairs: every canonical joint mapped on both sides, plus the unmapped bones
  between two paired joints when both skeletons have the same number of them
  there (the sample's Chest3 between Chest2 and Chest4 and a fourth spine bone
  on the target, say), paired in order. Other target bones keep their rest
  pose (basis identity): fingers, face, twist segments, Rigify's mechanism.
- Translation: the target's pelvis point (the midpoint of its two hip
  joints, i.e. upper-leg heads) follows the source's, scaled about the
  armature origin (z = 0 is the ground of both, as for the virtual root and
  for rigs standing on their origin) by the ratio of the standing pelvis
  heights: pelvis above the lowest foot/toe point, each measured in its own
  T-pose, so it does not matter where a T-pose stands (a BVH rest pose has
  its hips at the origin). The target hips bone is placed to achieve that;
  the pelvis point, unlike the hips bone's head, is in the same place on
  every skeleton (Rigify's torso control starts 15 cm above the pelvis).
  With ``root_motion="ROOT"`` a target bone above the hips (its "root")
  also carries the source root's ground motion: the same turn about Z and
  the scaled ground position, at its own rest height; the hips then move
  relative to it.
- Target constraints: a keyed bone's local rotation is taken relative to its
  parent as Blender will evaluate it, so the constraints of unkeyed
  mechanism bones are followed (:class:`Constraint`: copy transforms,
  rotation, location, armature): Rigify's FK controls hang from such bones.
- A mapped target bone whose pose does not depend on the mapped joint it
  belongs under (Rigify's DEF-thigh hangs from ORG-spine, not DEF-spine)
  also gets a location key that keeps its head where it sits at rest in
  that joint's frame.
- The T-pose that make_tpose computes (:func:`compute_tpose`): from the rest
  pose, upper arm, forearm and hand turn by the shortest arc to point along
  +X (left) or -X (right), thighs and shins straight down, and with
  ``straighten_spine`` the spine, neck and head straight up; the feet keep
  their rest orientation in the armature (a rest pose stands on flat feet);
  shoulders (clavicles), hips and unmapped bones keep their rest relative to
  their parents. A bone's direction is from its head to the head of the next
  mapped joint of its chain, or to its own tail at the end of a chain. It
  follows the hierarchy only (constraints are not evaluated there).

Modules, in the order the retarget uses them: :mod:`.rig` (the armatures,
their constraints and T-poses), :mod:`.tpose` (computing a T-pose and the
standing height), :mod:`.pairing` (which bones correspond), :mod:`.plan`
(everything fixed before the first frame), :mod:`.frames` (the per-frame
solve), with :mod:`.rotations` and :mod:`.constraints` as their pieces.
"""
