"""The body of the process :func:`tools.rig_file.write` starts, run as
``python -m tools.rig_export FORMAT PATH NAME POSE AXIS`` from the repository
root: build the character ``NAME`` of :mod:`tools.rigs` in ``POSE``, export it to
``PATH`` (``FORMAT`` glb or fbx, FBX joints along ``AXIS``) and end the process.
Developer tool, not part of the extension."""

import sys

from tools import addon_session, rigs


def main(argv):
    fmt, path, name, pose, axis = argv

    def work():
        obj, mesh = rigs.build(name, pose)
        if fmt == "glb":
            rigs.export_gltf(obj, mesh, path)
        else:
            rigs.export_fbx(obj, mesh, path, axis)

    addon_session.run_alone(work)


if __name__ == "__main__":
    main(sys.argv[1:])
