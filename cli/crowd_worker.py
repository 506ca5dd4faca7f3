"""The internal command Bake All's other processes run (not for people):

    blender -b -c motion_matching crowd-pairs --blend COPY --pairs 0,3,6 --keys DIR

opens COPY (the open file saved by Bake All; this process waits for it: it is
started while the copy is saved), bakes the crowd list's pairs
numbered (from 0) in --pairs with the scene's bake settings, as Bake All in
one process would (:func:`bridge.bake.crowd.bake_pairs`), each only if no other
process claimed it first (a claim file in DIR), and writes each pair's computed
bake (poses and report, nothing keyed) to DIR as soon as it is done
(:mod:`bridge.bake.crowd_keys`); Bake All keys it.
"""

import argparse
import signal
import sys

from .bake_args import Failure


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise Failure(message[0].upper() + message[1:] + ("" if message.endswith(".") else "."))


def parse_args(argv):
    ap = _Parser(prog="blender -b -c motion_matching crowd-pairs", description=__doc__.splitlines()[0])
    ap.add_argument("--blend", required=True, help="the file whose crowd is baked")
    ap.add_argument("--pairs", required=True, help="the crowd list's pairs to bake, numbered from 0: e.g. 0,3,6")
    ap.add_argument("--keys", required=True, metavar="DIR", help="where each pair's keys go")
    args = ap.parse_args(argv)
    try:
        args.pairs = [int(p) for p in args.pairs.split(",") if p.strip()]
    except ValueError:
        raise Failure("--pairs takes numbers separated by commas, not %r." % args.pairs) from None
    return args


WAIT_SECONDS = 600.0   # for the copy: Bake All starts this process while it saves it


def _wait_for(path, parent):
    """Until the copy is there (Bake All saves it aside and renames it when it
    is whole), while the process that started this one (``parent``) runs."""
    import os
    import time

    deadline = time.monotonic() + WAIT_SECONDS
    while not os.path.exists(path):
        if os.getppid() != parent or time.monotonic() > deadline:
            raise Failure("The copy %s to bake did not come." % path)
        time.sleep(0.01)


def main(argv):
    import os

    parent = os.getppid()
    args = parse_args(argv)
    # Bake All stops this process (Esc) with SIGTERM: end as on any exit, Blender's temporary folder removed.
    signal.signal(signal.SIGTERM, lambda *_args: sys.exit(143))
    import bpy

    from ..bridge.bake import crowd, crowd_keys
    from ..bridge.blender import bake_settings as bake_props
    from ..bridge.database import store as database_store
    from ..core.errors import MotionMatchingError

    _wait_for(args.blend, parent)
    try:
        bpy.ops.wm.open_mainfile(filepath=args.blend, load_ui=False)
    except RuntimeError as ex:
        raise Failure("Cannot open %s (%s)." % (args.blend, str(ex).strip().splitlines()[-1])) from None
    context = bpy.context
    scene = context.scene
    try:
        every = crowd.pairs_to_bake(scene)
        if any(not 0 <= i < len(every) for i in args.pairs):
            raise Failure("--pairs names pairs the crowd list (%d) does not have." % len(every))
        if not args.pairs:
            return 0
        pairs = crowd_keys.Claimed(args.keys, every, args.pairs)   # each baked by whichever process comes first
        settings = bake_props.to_core(scene.motion_matching.bake_settings)
        # Bake All checked (and rebuilt) the database just before saving the copy: it is used as it is.
        database = (database_store.load(scene), "")
        # And what Bake All derived from it already, when it has (the bake's tables).
        database_store.add_derived(database[0], crowd_keys.load_derived(args.keys, database_store.stored_id(scene)))

        def save(_job, computed):
            index = pairs.taken[-1]
            return crowd_keys.save(args.keys, index, every[index][1], computed)

        for _fraction in crowd.bake_pairs(context, pairs, settings, [], database, done=save):
            pass
        return 0
    except MotionMatchingError as ex:
        raise Failure(str(ex)) from None
