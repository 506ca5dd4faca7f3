"""Application handlers: notice when the database's inputs change."""

import bpy
from bpy.app.handlers import persistent

from . import build as database_build, store as database_store
from .properties import mark_stale


def is_stale(scene):
    """Whether a database built in this file from its list no longer matches the
    list's inputs (an imported database never is). Changes nothing."""
    if not database_store.has_database(scene) or database_store.is_imported(scene):
        return False
    stored = database_store.load(scene).fingerprint
    return stored != database_build.fingerprint(scene)


def check_stale(scene):
    """:func:`is_stale`, and mark the database stale (and return True) when it is."""
    stale = is_stale(scene)
    if stale:
        mark_stale(scene)
    return stale


@persistent
def on_depsgraph_update(scene, depsgraph):
    settings = getattr(scene, "motion_matching", None)
    if settings is None or not settings.database_built or settings.database_stale:
        return
    listed = {e.action.name for e in settings.entries if e.action is not None}
    if not listed:
        return
    for update in depsgraph.updates:
        if isinstance(update.id, bpy.types.Action) and update.id.name in listed:
            mark_stale(scene)
            return


@persistent
def on_load_pre(*_args):
    # Parsed databases and search indexes belong to the file that made them.
    database_store.forget()


def register():
    if on_depsgraph_update not in bpy.app.handlers.depsgraph_update_post:
        bpy.app.handlers.depsgraph_update_post.append(on_depsgraph_update)
    if on_load_pre not in bpy.app.handlers.load_pre:
        bpy.app.handlers.load_pre.append(on_load_pre)


def unregister():
    if on_depsgraph_update in bpy.app.handlers.depsgraph_update_post:
        bpy.app.handlers.depsgraph_update_post.remove(on_depsgraph_update)
    if on_load_pre in bpy.app.handlers.load_pre:
        bpy.app.handlers.load_pre.remove(on_load_pre)
