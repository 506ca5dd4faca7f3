"""Tags, Blender side: suggest tags from an action's root motion, and the
coverage report of the scene's database against its dance card."""

import os

import numpy as np

from ...core.database import auto_tags
from ...core.database import coverage as core_coverage
from ...core.database import dance_card as core_dance_card
from ...core.database import file_rules
from ...core.skeleton import virtual_root as vr
from ..blender import armature_data
from . import store as database_store, takes


def suggest_tags(scene, obj):
    """Tags for the action ``obj`` plays, from its root's speed and turning,
    named like the scene's dance-card moves where the card has a move of that
    kind. Returns (core Tags in 0-based action frames, the action's first frame,
    its frame rate)."""
    action = obj.animation_data.action
    frames = takes.action_frames(action, obj)
    names, _parents, _rest, pose = armature_data.armature_pose(obj, action, frames)
    root = names.index(obj.data.motion_matching.root_bone)
    character = vr.character_frames(np.asarray(obj.matrix_world) @ pose[:, root])
    facing = character[:, :2, :3] @ np.array([0.0, -1.0, 0.0])
    card = {m.name.lower(): m.name for m in scene.motion_matching.dance_card}
    mapping = {k: card.get(k, k) for k in auto_tags.AUTO_TAG_KINDS}
    fps = takes.action_fps(action, scene)
    tags = auto_tags.suggest_tags(character[:, :3, 3], facing, fps, names=mapping)
    return tags, int(frames[0]), fps


def add_tags(action, tags, first, replace=False):
    """Put core Tags (0-based frames from ``first``) on ``action``'s tag list."""
    coll = action.motion_matching.tags
    if replace:
        coll.clear()
    for t in tags:
        item = coll.add()
        item.name, item.frame_start, item.frame_end = t.name, first + t.start, first + t.end


def scene_dance_card(settings):
    """The scene's dance card as a core DanceCard (None when it has no moves);
    its file-name rules are checked again here."""
    if not len(settings.dance_card):
        return None
    card = {
        "title": settings.dance_card_title,
        "moves": [dict(name=m.name, **({"duration": m.duration} if m.duration > 0 else {}),
                       **({"description": m.description} if m.description else {}))
                  for m in settings.dance_card]}
    if len(settings.dance_card_rules):
        card["rules"] = [{"files": r.files, "tag": r.tag} for r in settings.dance_card_rules]
    return core_dance_card.dance_card_from_dict(card)


def store_dance_card(settings, card, title):
    """Put a core DanceCard (moves and file-name rules) on the scene."""
    settings.dance_card.clear()
    settings.dance_card_rules.clear()
    settings.dance_card_title = title
    for move in card.moves:
        item = settings.dance_card.add()
        item.name = move.name
        item.duration = move.duration_s or 0.0
        item.description = move.description or ""
    for rule in card.rules:
        item = settings.dance_card_rules.add()
        item.files, item.tag = rule.files, rule.tag


def file_name_tags(scene, actions, obj_of):
    """The whole-clip tags the scene's file-name rules give each action in
    ``actions`` (by the file it was imported from): a list of (action, tag
    names, first frame, last frame), for actions with a file only. Changes
    nothing; raises MotionMatchingError on a bad rule."""
    card = scene_dance_card(scene.motion_matching)
    rules = card.rules if card is not None else []
    out = []
    for action in actions:
        source = action.motion_matching.source_path
        if not source:
            continue
        frames = takes.action_frames(action, obj_of(action))
        out.append((action, file_rules.tags_for_file(rules, os.path.basename(source)),
                    int(frames[0]), int(frames[-1])))
    return out


def add_whole_clip_tags(action, names, first, last):
    """Tag ``action`` from ``first`` to ``last`` with each of ``names`` it does
    not already have on exactly those frames; returns how many were added."""
    have = {(t.name.lower(), t.frame_start, t.frame_end) for t in action.motion_matching.tags}
    added = 0
    for name in names:
        if (name.lower(), first, last) in have:
            continue
        item = action.motion_matching.tags.add()
        item.name, item.frame_start, item.frame_end = name, first, last
        added += 1
    return added


def coverage(scene):
    """The coverage report of the scene's database (a JSON-ready dict)."""
    database = database_store.load(scene)
    db, tags = database.matching, database.tags
    clips = []
    for c, name in enumerate(db.clip_names):
        rows = db.clip_rows(c)
        # The database's own exclusions (settings at build time) leave frames out.
        clips.append((name, float(db.clip_fps[c]), rows.stop - rows.start, tags[c],
                      database.root.positions[rows], database.root.facings[rows], db.excluded[rows]))
    return core_coverage.coverage_report(scene_dance_card(scene.motion_matching), clips, exclude_names=())
