"""Many BVH clips in one import: a folder or a multi-selection, one armature with
an action per clip, listed for the build; all or nothing; tags from file names."""

import os

import bpy
import numpy as np
import pytest

from sample_paths import SAMPLE_TAKE
from tools.clip_files import cut_clips
import bl_helpers as H

NAMES = ("walk-turn-left_01.bvh", "run_02.bvh", "walk_03.bvh", "walk-turn-right_04.bvh")
RULES_CARD = """title = "Clips"

[[move]]
name = "walk"

[[move]]
name = "run"

[[move]]
name = "turn_left"

[[move]]
name = "turn_right"

[[rule]]
files = "*walk*"
tag = "walk"

[[rule]]
files = "*-turn-left*"
tag = "turn_left"

[[rule]]
files = "*-turn-right*"
tag = "turn_right"
"""


@pytest.fixture
def clip_folder(tmp_path):
    folder = tmp_path / "clips"
    # Written in another order than their names', 2-3 s each at 60 fps: quick to import.
    cut_clips(SAMPLE_TAKE, str(folder), len(NAMES), min_s=2.0, max_s=3.0, seed=4,
              names=lambda i: NAMES[(i + 2) % len(NAMES)])
    return folder


def _state():
    scene = bpy.context.scene
    return (H.datablock_counts(), len(bpy.data.armatures), len(scene.motion_matching.entries),
            scene.motion_matching.database_stale, scene.frame_end, scene.render.fps,
            sorted(a.name for a in bpy.data.actions))


def _keys(action, obj):
    compat = H.addon_module("bridge.blender.compat")
    out = {}
    for fc in compat.fcurves(action, obj):
        out[(fc.data_path, fc.array_index)] = compat.read_curve(fc, ("co",))["co"]
    return out


def test_a_folder_imports_in_one_call_and_builds(clip_folder):
    before = set(bpy.data.objects.keys())
    assert bpy.ops.motion_matching.import_bvh(directory=str(clip_folder), global_scale=0.01,
                                              add_virtual_root=True) == {"FINISHED"}
    made = H.new_objects(before)
    assert [o.type for o in made] == ["ARMATURE"]          # one skeleton: one armature
    obj = made[0]
    entries = bpy.context.scene.motion_matching.entries
    actions = [e.action for e in entries]
    # Sorted by file name, each remembering its file, kept with a fake user.
    assert [a.name for a in actions] == sorted(os.path.splitext(n)[0] for n in NAMES)
    assert all(e.armature == obj for e in entries)
    assert [os.path.basename(a.motion_matching.source_path) for a in actions] == sorted(NAMES)
    assert all(a.use_fake_user for a in actions)
    assert obj.animation_data.action == actions[0]
    # Every clip has the virtual root's keys, on its own frames.
    root = obj.data.motion_matching.root_bone
    for action in actions:
        keys = _keys(action, obj)
        assert ('pose.bones["%s"].location' % root, 0) in keys
        frames = keys[('pose.bones["Hips"].location', 0)][:, 0]
        assert np.array_equal(keys[('pose.bones["%s"].location' % root, 0)][:, 0], frames)
    # The build takes every clip in one step.
    assert bpy.ops.motion_matching.build_database(mirror_takes="OFF") == {"FINISHED"}
    summary = bpy.context.scene.motion_matching.database_summary
    assert "from 4 actions" in summary, summary
    store = H.addon_module("bridge.database.store")
    database = store.load(bpy.context.scene)
    assert list(database.clips.actions) == [a.name for a in actions]
    lengths = [len(_keys(a, obj)[('pose.bones["Hips"].location', 0)]) for a in actions]
    assert database.matching.num_rows == sum(lengths)


def test_a_clip_of_many_has_the_keys_of_the_same_file_imported_alone(clip_folder):
    files = [{"name": n} for n in ("walk_03.bvh", "run_02.bvh")]   # given out of order
    assert bpy.ops.motion_matching.import_bvh(directory=str(clip_folder), files=files,
                                              global_scale=0.01) == {"FINISHED"}
    entries = bpy.context.scene.motion_matching.entries
    assert [e.action.name for e in entries] == ["run_02", "walk_03"]
    many = _keys(entries[1].action, entries[1].armature)
    alone = H.import_ours(str(clip_folder / "walk_03.bvh"), global_scale=0.01)
    one = _keys(alone.animation_data.action, alone)
    assert many.keys() == one.keys() and len(one) > 60
    for key in one:
        assert np.array_equal(many[key], one[key]), key
    # One file alone is not listed (as before): the list keeps the two clips.
    assert len(entries) == 2


def test_add_virtual_root_keys_every_listed_clip_and_moves_no_joint(clip_folder):
    compat = H.addon_module("bridge.blender.compat")
    files = [{"name": n} for n in ("run_02.bvh", "walk_03.bvh")]
    assert bpy.ops.motion_matching.import_bvh(directory=str(clip_folder), files=files,
                                              global_scale=0.01) == {"FINISHED"}
    entries = bpy.context.scene.motion_matching.entries
    obj, first, second = entries[0].armature, entries[0].action, entries[1].action
    names = [b.name for b in obj.data.bones]
    frames = np.arange(int(second.frame_range[0]), int(second.frame_range[1]) + 1, 37)
    compat.assign_action(obj, second)
    before = H.pose_heads(obj, frames, names)
    compat.assign_action(obj, first)
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.motion_matching.add_virtual_root() == {"FINISHED"}
    # The clip the armature does not play got the root too, and its joints stay where they were.
    compat.assign_action(obj, second)
    root = obj.data.motion_matching.root_bone
    assert ('pose.bones["%s"].location' % root, 0) in _keys(second, obj)
    after = H.pose_heads(obj, frames, names)
    assert np.abs(after - before).max() < 1e-4
    assert np.ptp(before[:, 0, 0]) > 0.5   # the hips travel: the check is not trivial


def test_clips_of_another_skeleton_get_an_armature_of_their_own(clip_folder):
    from tools.bvh_writer import sample_layout, write_bvh
    from core.io import bvh_parse

    data = bvh_parse.read_bvh(str(clip_folder / "run_02.bvh"))
    names, parents, offsets, channels, ends = sample_layout(data)
    offsets[1] *= 1.2   # a longer spine: another performer
    write_bvh(str(clip_folder / "other_05.bvh"), names, parents, offsets, channels, data.motion[:90],
              data.frame_time, end_sites=ends)
    before = set(bpy.data.objects.keys())
    assert bpy.ops.motion_matching.import_bvh(directory=str(clip_folder), global_scale=0.01) == {"FINISHED"}
    made = sorted(H.new_objects(before), key=lambda o: o.name)
    assert len(made) == 2
    entries = bpy.context.scene.motion_matching.entries
    by_armature = {}
    for e in entries:
        by_armature.setdefault(e.armature.name, []).append(e.action.name)
    assert sorted(map(sorted, by_armature.values())) == [
        ["other_05"], ["run_02", "walk-turn-left_01", "walk-turn-right_04", "walk_03"]]
    other = next(o for o in made if o.animation_data.action.name == "other_05")
    spine = other.data.bones[names[1]]
    assert spine.head_local.length == pytest.approx(1.2 * np.linalg.norm(data.offsets[1]) * 0.01, rel=1e-4)


def test_progress_moves_through_the_files_in_order(clip_folder, monkeypatch):
    module = H.addon_module("operators.import_bvh")
    told = []
    original = module._Progress.tell

    def tell(self, stage, fraction):
        told.append(self.done + fraction if stage == "keys" else None)
        return original(self, stage, fraction)

    monkeypatch.setattr(module._Progress, "tell", tell)
    assert bpy.ops.motion_matching.import_bvh(directory=str(clip_folder), global_scale=0.01) == {"FINISHED"}
    keys = [t for t in told if t is not None]
    # The keys of file i are told as i + their fraction: one file after the other, ending at the last.
    assert keys == sorted(keys) and keys[-1] == pytest.approx(len(NAMES))
    assert {int(t) for t in keys if t < len(NAMES)} == set(range(len(NAMES)))


def test_a_bad_file_among_good_ones_refuses_them_all_naming_it(clip_folder):
    (clip_folder / "zz_broken.bvh").write_text("HIERARCHY\nROOT Hips\n{\n")
    before = _state()
    with pytest.raises(RuntimeError, match=r"Nothing was imported from the 5 files: .*zz_broken\.bvh"):
        bpy.ops.motion_matching.import_bvh(directory=str(clip_folder), global_scale=0.01, add_virtual_root=True,
                                           update_scene_duration=True, update_scene_fps=True)
    assert _state() == before
    # The same with a good file whose skeleton cannot take a virtual root after the others went in.
    (clip_folder / "zz_broken.bvh").unlink()
    with pytest.raises(RuntimeError, match="Nothing was imported"):
        bpy.ops.motion_matching.import_bvh(directory=str(clip_folder), global_scale=0.01, add_virtual_root=True,
                                           hips_bone="NoSuchBone")
    assert _state() == before


@pytest.mark.parametrize("case", ["empty folder", "not bvh", "missing folder"])
def test_bad_inputs_are_refused_in_a_sentence(tmp_path, clip_folder, case):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "readme.txt").write_text("no takes here")
    kw, message = {
        "empty folder": (dict(directory=str(empty)), "holds no .bvh file"),
        "not bvh": (dict(directory=str(empty), files=[{"name": "readme.txt"}]), "readme.txt is not a .bvh file"),
        "missing folder": (dict(directory=str(tmp_path / "gone")), "does not exist"),
    }[case]
    before = _state()
    with pytest.raises(RuntimeError, match=message):
        bpy.ops.motion_matching.import_bvh(**kw)
    assert _state() == before


def test_tags_from_file_names(tmp_path, clip_folder):
    card = tmp_path / "card.toml"
    card.write_text(RULES_CARD)
    assert bpy.ops.motion_matching.import_dance_card(filepath=str(card)) == {"FINISHED"}
    rules = bpy.context.scene.motion_matching.dance_card_rules
    assert [(r.files, r.tag) for r in rules] == [("*walk*", "walk"), ("*-turn-left*", "turn_left"),
                                                  ("*-turn-right*", "turn_right")]
    assert bpy.ops.motion_matching.import_bvh(directory=str(clip_folder), global_scale=0.01,
                                              add_virtual_root=True) == {"FINISHED"}
    assert bpy.ops.motion_matching.build_database(mirror_takes="OFF") == {"FINISHED"}
    assert not bpy.context.scene.motion_matching.database_stale
    assert bpy.ops.motion_matching.tags_from_file_names() == {"FINISHED"}
    assert bpy.context.scene.motion_matching.database_stale
    got = {}
    for e in bpy.context.scene.motion_matching.entries:
        start, end = (int(v) for v in e.action.frame_range)
        got[e.action.name] = [(t.name, t.frame_start, t.frame_end) for t in e.action.motion_matching.tags]
        assert all((a, b) == (start, end) for _n, a, b in got[e.action.name])   # the whole clip
    assert {k: [n for n, _a, _b in v] for k, v in got.items()} == {
        "run_02": [], "walk_03": ["walk"], "walk-turn-left_01": ["walk", "turn_left"],
        "walk-turn-right_04": ["walk", "turn_right"]}
    # Again: nothing new (a tag already there is not doubled).
    assert bpy.ops.motion_matching.tags_from_file_names() == {"FINISHED"}
    assert sum(len(e.action.motion_matching.tags) for e in bpy.context.scene.motion_matching.entries) == 5


def test_a_card_with_a_bad_rule_is_refused_and_the_scene_keeps_its_card(tmp_path):
    card = tmp_path / "card.toml"
    card.write_text(RULES_CARD)
    assert bpy.ops.motion_matching.import_dance_card(filepath=str(card)) == {"FINISHED"}
    bad = tmp_path / "bad.toml"
    bad.write_text(RULES_CARD + '\n[[rule]]\nfiles = "*jog*"\ntag = "jog"\n')
    settings = bpy.context.scene.motion_matching
    before = ([m.name for m in settings.dance_card], [(r.files, r.tag) for r in settings.dance_card_rules])
    with pytest.raises(RuntimeError, match=r"Rule 4 \('\*jog\*' -> jog\) of dance card 'bad.toml'"):
        bpy.ops.motion_matching.import_dance_card(filepath=str(bad))
    assert ([m.name for m in settings.dance_card], [(r.files, r.tag) for r in settings.dance_card_rules]) == before
    # A rule spoiled on the scene afterwards (by script) is refused when applied, naming it, tags unchanged.
    obj = H.import_ours(SAMPLE_TAKE, global_scale=0.01)
    settings.dance_card_rules[0].tag = "stroll"
    with pytest.raises(RuntimeError, match=r"Rule 1 \('\*walk\*' -> stroll\)"):
        bpy.ops.motion_matching.tags_from_file_names()
    assert len(obj.animation_data.action.motion_matching.tags) == 0


def _cli(*args):
    import subprocess
    import sys

    from sample_paths import REPO

    env = {k: v for k, v in os.environ.items() if k != "BLENDER_USER_RESOURCES"}
    return subprocess.run([sys.executable, "-m", "tools.mm_cli", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=600, env=env)


def _saved_clips(blend):
    """(action name, names of its tags over the whole clip) of each clip in the
    database list of a saved file, and the database's clips."""
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    scene = bpy.context.scene
    listed = []
    for e in scene.motion_matching.entries:
        whole = tuple(int(v) for v in e.action.frame_range)
        listed.append((e.action.name, sorted({t.name for t in e.action.motion_matching.tags
                                              if (t.frame_start, t.frame_end) == whole})))
    database = H.addon_module("bridge.database.store").load(scene)
    return listed, list(database.clips.actions)


def test_the_command_line_builds_a_folder_with_file_name_tags(tmp_path, clip_folder):
    card = tmp_path / "card.toml"
    card.write_text(RULES_CARD)
    out = tmp_path / "run"
    proc = _cli("--bvh", str(clip_folder), "--scale", "0.01", "--dance-card", str(card), "--no-mirror-takes",
                "--scenario", "straight_walk", "--fps", "30", "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    listed, in_database = _saved_clips(out / "baked.blend")
    names = sorted(os.path.splitext(n)[0] for n in NAMES)
    assert [n for n, _t in listed] == names and in_database == names
    assert dict(listed) == {"run_02": [], "walk_03": ["walk"], "walk-turn-left_01": ["turn_left", "walk"],
                            "walk-turn-right_04": ["turn_right", "walk"]}


def test_the_command_line_takes_several_files(tmp_path, clip_folder):
    out = tmp_path / "run"
    files = [str(clip_folder / "walk_03.bvh"), str(clip_folder / "run_02.bvh")]
    proc = _cli("--bvh", *files, "--scale", "0.01", "--mirror-takes", "--scenario", "straight_walk",
                "--fps", "30", "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    listed, in_database = _saved_clips(out / "baked.blend")
    assert [n for n, _t in listed] == ["run_02", "walk_03"]
    assert in_database == ["run_02", "walk_03", "run_02", "walk_03"]   # and their mirror images


def test_the_command_line_refuses_a_bad_file_among_good_ones(tmp_path, clip_folder):
    (clip_folder / "zz_broken.bvh").write_text("HIERARCHY\n")
    out = tmp_path / "run"
    proc = _cli("--bvh", str(clip_folder), "--scale", "0.01", "--scenario", "straight_walk", "--out", str(out))
    assert proc.returncode == 1
    lines = [line for line in proc.stderr.splitlines() if line.startswith("motion_matching:")]
    assert len(lines) == 1 and "Nothing was imported from the 5 files: zz_broken.bvh" in lines[0], proc.stderr
    assert not out.exists()
