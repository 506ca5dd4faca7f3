"""What the meshes an armature skins say about it: their rest points, how
high its toes stand above their soles, and whether the bones are the size of
the mesh."""

import bpy
import numpy as np


def skinned_meshes(obj):
    """Mesh objects deformed by ``obj`` (an Armature modifier on it)."""
    return [o for o in bpy.data.objects if o.type == "MESH" and any(
        m.type == "ARMATURE" and m.object == obj for m in o.modifiers)]


def mesh_rest_points(obj):
    """World positions (N, 3) of the undeformed vertices of the meshes ``obj`` skins."""
    pts = []
    for mesh in skinned_meshes(obj):
        co = np.empty(len(mesh.data.vertices) * 3, dtype=np.float32)
        mesh.data.vertices.foreach_get("co", co)
        mw = np.array(mesh.matrix_world, dtype=np.float64)
        pts.append(co.reshape(-1, 3) @ mw[:3, :3].T + mw[:3, 3])
    return np.concatenate(pts) if pts else np.zeros((0, 3))


def toe_above_soles(obj, setup, most=0.15):
    """How high the target's toe heads stand above the soles of the mesh it
    skins, at rest (metres, the mean of both toes above the mesh's lowest
    vertex), or None without a mesh, without mapped toes, or when the lowest
    vertex is not just under the toes (more than ``most`` below, or above
    them: a cape, a prop or a ground plane in the mesh)."""
    pts = mesh_rest_points(obj)
    tgt = setup.target
    toes = [tgt.joints.get(s + "Toes") for s in ("Left", "Right")]
    if not len(pts) or None in toes:
        return None
    lowest = float(pts[:, 2].min()) - float(setup.ground[2, 3])       # into the body frame's height
    h = float(np.mean(tgt.rest[toes, 2, 3])) - lowest
    return h if 0.0 <= h <= most else None


def mesh_size_note(obj, pelvis_height):
    """A sentence when the bones are far from the size of the mesh they skin
    (a rig in centimetres with scale 1, say); '' when they agree or there is
    no mesh. A standing person's pelvis is about half its height."""
    pts = mesh_rest_points(obj)
    if not len(pts):
        return ""
    tall = float(np.ptp(pts[:, 2]))
    if not tall > 1e-6:
        return ""
    ratio = pelvis_height / (0.53 * tall)
    if 1.0 / 3.0 <= ratio <= 3.0:
        return ""
    return ("the bones of %s are %.3g times the size of the mesh they skin (hips %.2f m above the feet, mesh "
            "%.2f m tall): check its object's scale (a rig in centimetres needs 0.01) or set the size by hand"
            % (obj.name, ratio, pelvis_height, tall))


def sole_points(obj, setup, band=0.1, most=64):
    """The soles of the meshes ``obj`` skins, per leg (left, right): (points
    in the foot bone's rest frame, points in the toe bone's) (n, 3) each, in
    the target's body frame (metres): the rest vertices weighted to that bone
    (more than 0.3) within ``band`` of the foot's lowest one, at most ``most``
    of each, spread over them. None without a mesh or mapped feet and toes."""
    tgt = setup.target
    bones = [(tgt.joints.get(s + "Foot"), tgt.joints.get(s + "Toes")) for s in ("Left", "Right")]
    meshes = skinned_meshes(obj)
    if not meshes or any(b is None for pair in bones for b in pair):
        return None
    inv_ground = np.linalg.inv(np.asarray(setup.ground, dtype=np.float64))
    found = {b: [] for pair in bones for b in pair}
    for mesh in meshes:
        index = {g.index: tgt.names.index(g.name) for g in mesh.vertex_groups if g.name in tgt.names}
        co = np.empty(len(mesh.data.vertices) * 3, dtype=np.float32)
        mesh.data.vertices.foreach_get("co", co)
        mw = inv_ground @ np.array(mesh.matrix_world, dtype=np.float64)
        pts = co.reshape(-1, 3) @ mw[:3, :3].T + mw[:3, 3]
        for v in mesh.data.vertices:
            for g in v.groups:
                b = index.get(g.group)
                if b in found and g.weight > 0.3:
                    found[b].append(pts[v.index])
    out = []
    for foot, toe in bones:
        pts = {b: np.array(found[b]).reshape(-1, 3) for b in (foot, toe)}
        both = np.concatenate([pts[foot], pts[toe]])
        if not len(both):
            return None
        low = both[:, 2].min()
        side = []
        for b in (foot, toe):
            p = pts[b][pts[b][:, 2] <= low + band]
            p = p[np.linspace(0, len(p) - 1, min(len(p), most)).astype(int)] if len(p) else p
            rest = tgt.rest[b]
            side.append((p - rest[:3, 3]) @ rest[:3, :3])
        out.append(tuple(side))
    return out
