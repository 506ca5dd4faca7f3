"""Following a target bone's pose constraints (copy transforms, rotation,
location, armature) while the retarget poses it, blended by influence as
Blender blends them."""

from ..maths import transforms as tf
from .rotations import inverse, rotate, slerp


def apply_constraints(stack, rot, pos, frame, world, head, frames, rest_rot, rest_pos):
    """A bone's armature-space pose (rot, pos) after its constraints.
    ``frame`` is its own rest frame on this pose (parent pose @ offset);
    ``world``, ``head``, ``frames`` hold the same for bones done before."""
    for c in stack:
        w = c.influence
        if w <= 0.0 or c.kind == "OTHER":
            continue
        if c.kind == "ARMATURE":
            new_rot = new_pos = None
            total = 0.0
            for t, weight in c.targets:
                if weight <= 0.0:
                    continue
                move = tf.quat_mul(world[t], inverse(rest_rot[t]))
                r = tf.quat_mul(move, rot)
                p = rotate(move, pos - rest_pos[t]) + head[t]
                total += weight
                if new_rot is None:
                    new_rot, new_pos = r, p
                else:
                    new_rot = slerp(new_rot, r, weight / total)
                    new_pos = new_pos + (p - new_pos) * (weight / total)
            if new_rot is None:
                continue
        else:
            t = c.targets[0][0]
            if c.space == "WORLD":
                t_rot, t_pos = world[t], head[t]
            else:
                # The target's transform relative to its rest, put on the owner's rest.
                f_rot, f_pos = frames[t]
                l_rot = tf.quat_mul(inverse(f_rot), world[t])
                l_pos = rotate(inverse(f_rot), head[t] - f_pos)
                t_rot = tf.quat_mul(frame[0], l_rot)
                t_pos = frame[1] + rotate(frame[0], l_pos)
            new_rot = t_rot if c.kind in ("COPY_TRANSFORMS", "COPY_ROTATION") else rot
            new_pos = t_pos if c.kind in ("COPY_TRANSFORMS", "COPY_LOCATION") else pos
        if w >= 1.0:
            rot, pos = new_rot, new_pos
        else:
            rot = slerp(rot, new_rot, w)
            pos = pos + (new_pos - pos) * w
    return rot, pos
