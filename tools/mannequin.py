"""A box mannequin skinned to an armature, so renders show the character.

One mesh: a tapered box along every bone (the root and bones shorter than 1 cm
are skipped), each box weighted fully to its bone, deformed by an Armature
modifier. Used by the demo and its pictures; not part of the extension.
"""

import numpy as np

_FACES = [(0, 1, 2, 3), (4, 7, 6, 5), (0, 4, 5, 1), (1, 5, 6, 2), (2, 6, 7, 3), (3, 7, 4, 0)]


def add_mannequin(armature, skip=(), name=None, color=(0.85, 0.55, 0.3, 1.0)):
    """Create and return the mannequin mesh object for ``armature``."""
    import bpy

    verts, faces, groups = [], [], []
    for bone in armature.data.bones:
        if bone.name in skip or bone.length < 0.01 or bone.parent is None:
            continue
        m = np.array(bone.matrix_local)
        length = bone.length
        r0 = min(0.07, max(0.02, 0.18 * length))
        r1 = 0.7 * r0
        if "head" in bone.name.lower():
            r0 = r1 = min(0.1, max(0.06, 0.45 * length))
        base = len(verts)
        for y, r in ((0.0, r0), (length, r1)):
            for x, z in ((-r, -r), (r, -r), (r, r), (-r, r)):
                verts.append(tuple((m @ np.array([x, y, z, 1.0]))[:3]))
        faces += [tuple(base + i for i in f) for f in _FACES]
        groups.append((bone.name, list(range(base, base + 8))))
    mesh = bpy.data.meshes.new(name or armature.name + "_mannequin")
    mesh.from_pydata(verts, [], faces)
    mesh.update()
    obj = bpy.data.objects.new(mesh.name, mesh)
    for coll in armature.users_collection:
        coll.objects.link(obj)
    obj.matrix_world = armature.matrix_world.copy()
    for bone_name, idx in groups:
        vg = obj.vertex_groups.new(name=bone_name)
        vg.add(idx, 1.0, "REPLACE")
    mod = obj.modifiers.new("Armature", "ARMATURE")
    mod.object = armature
    obj.parent = armature
    obj.matrix_parent_inverse = armature.matrix_world.inverted()
    obj.color = color
    return obj
