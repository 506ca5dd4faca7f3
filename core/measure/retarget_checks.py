"""Checks of a retarget's result in world space: a rig whose object
tilt, scale or bone conventions were misread shows it here, as hips at the
wrong height for its size, a character that does not stand upright, or hips
that do not follow the controller. Each finding is one sentence naming what
is wrong and what to try."""

import numpy as np

# Pelvis above the lower foot, as a fraction of the rig's standing pelvis height.
HIPS_LOW, HIPS_HIGH = 0.5, 1.5
# Median cosine between the pelvis-to-head direction and straight up.
UPRIGHT_COS = 0.7
# Mean horizontal distance from the hips to the controller, metres.
FOLLOW_M = 0.5


def result_warnings(label, standing_height, world, controller=None):
    """Sentences about a retargeted motion in world space. ``world``: dict of
    world positions per frame, "pelvis" and "hips" (F, 3), optional "head"
    (F, 3) and "toes" or "ankles" (F, 2, 3); ``standing_height``: the rig's
    standing pelvis height (metres); ``controller`` (F, 3) or None."""
    out = []
    pelvis = np.asarray(world["pelvis"], dtype=np.float64)
    feet = world.get("toes", world.get("ankles"))
    if feet is not None:
        above = np.median(pelvis[:, 2] - np.asarray(feet)[:, :, 2].min(axis=1))
        if not HIPS_LOW * standing_height <= above <= HIPS_HIGH * standing_height:
            out.append("the hips of %s are %.2f m above its feet, where its size puts them about %.2f m: check the "
                       "bone mapping of the legs and the T-poses (or the size)" % (label, above, standing_height))
    if "head" in world:
        up = np.asarray(world["head"], dtype=np.float64) - pelvis
        cos = np.median(up[:, 2] / np.maximum(np.linalg.norm(up, axis=1), 1e-12))
        if cos < UPRIGHT_COS:
            out.append("%s does not stand upright (its head is %.0f degrees from above its hips): check its "
                       "T-pose (Make T-Pose) and that its object is not turned on its side"
                       % (label, np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))))
    if controller is not None:
        hips = np.asarray(world["hips"], dtype=np.float64)
        d = np.linalg.norm(hips[:, :2] - np.asarray(controller)[:, :2], axis=1)
        if d.mean() > FOLLOW_M:
            out.append("the hips of %s stay %.2f m from the controller on average: check the rig's object "
                       "transforms and the size (Scale)" % (label, float(d.mean())))
    return out
