"""The batch manifest read and checked in plain Python (no Blender): fields
resolved, defaults filled in, and one sentence naming the entry and the field
for each bad manifest."""

import json
import os

import pytest

from addon_package import addon

bm = addon("cli.batch_manifest")
batch = addon("cli.batch")
commands = addon("cli.commands")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TAKE = os.path.join(REPO, "samples", "jl_mm_run.bvh")


@pytest.fixture
def folder(tmp_path):
    for name in ("hero.glb", "extra.fbx", "walk.json", "db.npz", "cast.blend"):
        (tmp_path / name).write_bytes(b"x")
    return tmp_path


def manifest(**changes):
    data = {"fps": 30,
            "database": {"takes": [TAKE], "dance_card": os.path.join(REPO, "samples", "jl_mm_dance_card.toml")},
            "characters": {"hero": "hero.glb", "extra": "cast.blend:Extra"},
            "paths": {"walk": "walk.json", "show": "showcase", "lane": "cast.blend:Lane"},
            "exports": ["fbx"],
            "entries": [{"name": "one", "character": "hero", "path": "walk"},
                        {"character": "extra", "path": "show", "speed_scale": 1.5, "start_time": 2.0,
                         "tag_query": "walk", "mirror": True, "exports": ["glb", "bvh"]},
                        {"character": "hero", "path": "lane"}]}
    for key, value in changes.items():
        if value is None:
            data.pop(key)
        else:
            data[key] = value
    return data


def test_a_manifest_is_resolved_with_its_defaults(folder):
    m = bm.parse(manifest(), str(folder))
    one, two, three = m.entries
    assert one["character"] == str(folder / "hero.glb") and one["path"] == {"scenario": str(folder / "walk.json")}
    assert (one["speed_scale"], one["start_frame"], one["tag_query"], one["mirror"], one["exports"], one["fps"]) == (
        1.0, 1, "", None, ["fbx"], 30.0)
    assert two["name"] == "002_extra_show" and two["character"] == str(folder / "cast.blend") + ":Extra"
    assert two["path"] == {"scenario": "showcase"}
    assert two["start_frame"] == 61            # 2 s after frame 1 at 30 fps
    assert two["exports"] == ["bvh", "glb"] and two["mirror"] is True
    assert three["path"] == {"controller": str(folder / "cast.blend") + ":Lane"}
    assert [bm.database_key(e) for e in m.entries] == ["default", "mirror", "default"]


def test_toml_and_json_manifests_read_the_same(folder):
    (folder / "m.json").write_text(json.dumps(manifest()))
    (folder / "m.toml").write_text("""
fps = 30
exports = ["fbx"]
[database]
takes = [%s]
dance_card = %s
[characters]
hero = "hero.glb"
extra = "cast.blend:Extra"
[paths]
walk = "walk.json"
show = "showcase"
lane = "cast.blend:Lane"
[[entries]]
name = "one"
character = "hero"
path = "walk"
[[entries]]
character = "extra"
path = "show"
speed_scale = 1.5
start_time = 2.0
tag_query = "walk"
mirror = true
exports = ["glb", "bvh"]
[[entries]]
character = "hero"
path = "lane"
""" % (json.dumps(TAKE), json.dumps(os.path.join(REPO, "samples", "jl_mm_dance_card.toml"))))
    a, b = bm.read(str(folder / "m.json")), bm.read(str(folder / "m.toml"))
    assert a.entries == b.entries and a.database == b.database
    assert [bm.entry_digest(a.database, e) for e in a.entries] == [bm.entry_digest(b.database, e) for e in b.entries]


def test_an_entry_digest_changes_with_the_entry_and_its_database(folder):
    m = bm.parse(manifest(), str(folder))
    first = bm.entry_digest(m.database, m.entries[0])
    changed = dict(m.entries[0], speed_scale=1.1)
    assert bm.entry_digest(m.database, changed) != first
    assert bm.entry_digest(dict(m.database, scale=0.02), m.entries[0]) != first
    assert bm.entry_digest(m.database, dict(m.entries[0], index=9)) == first   # its place in the list aside


def _entry(**fields):
    base = {"name": "bad", "character": "hero", "path": "walk"}
    base.update(fields)
    return manifest(entries=[{"name": "fine", "character": "hero", "path": "walk"}, base])


@pytest.mark.parametrize("data, words", [
    (_entry(speed_scale="fast"), "entry 2 (bad): speed_scale must be a number from 0.05 to 20, not 'fast'."),
    (_entry(speed_scale=0), "entry 2 (bad): speed_scale must be a number"),
    (_entry(start_frame=1.5), "entry 2 (bad): start_frame must be a whole number"),
    (_entry(start_frame=3, start_time=1.0), "entry 2 (bad): give start_frame or start_time, not both."),
    (_entry(character="nobody"), "entry 2 (bad): character 'nobody' is not in the manifest's [characters]"),
    (_entry(path="nowhere"), "entry 2 (bad): path 'nowhere' is not in the manifest's [paths]"),
    (_entry(mirror="yes"), "entry 2 (bad): mirror must be true or false"),
    (_entry(exports=["obj"]), "entry 2 (bad): exports: unknown format 'obj'"),
    (_entry(tag_query=3), "entry 2 (bad): tag_query must be text"),
    (_entry(speedscale=2), "entry 2 (bad) has an unknown field 'speedscale'"),
    (_entry(path="lane", speed_scale=2), "entry 2 (bad): speed_scale and start_frame/start_time apply to scenario"),
    (_entry(name="fine"), "entry 2 (fine): name is already used by entry 1"),
    (_entry(name="a/b"), "entry 2: name 'a/b' must be letters"),
    (manifest(entries=[{"character": "hero", "path": "walk"}, "x"]), "entry 2 must be a table of fields."),
    (manifest(entries=[]), "The manifest needs an entries list"),
    (manifest(database={"takes": [TAKE], "file": "db.npz"}), "[database] needs takes"),
    (manifest(database={"file": "db.npz", "scale": 0.01}), "[database] scale goes with takes"),
    (manifest(database={"takes": ["missing.bvh"]}), "[database] takes[0]: file not found:"),
    (manifest(database={"takes": [TAKE], "mirrors": True}), "[database] has an unknown field 'mirrors'"),
    (manifest(characters={"hero": "hero.obj"}), "[characters] hero (hero.obj) must be a .glb or .gltf or .fbx file."),
    (manifest(characters={"hero": "gone.glb"}), "[characters] hero: file not found:"),
    (manifest(characters={"hero": "cast.blend:"}), "the object name after ':' is empty"),
    (manifest(paths={"walk": "gone.json"}), "[paths] walk: file not found:"),
    (manifest(characters=None), "The manifest needs a [characters] table"),
    (manifest(fps=0), "the manifest's fps must be a number from 1 to 1000"),
    (manifest(extra=1), "the manifest has an unknown field 'extra'"),
])
def test_a_bad_manifest_is_one_sentence_naming_the_entry_and_field(folder, data, words):
    with pytest.raises(bm.ManifestError) as info:
        bm.parse(data, str(folder))
    assert words in str(info.value)


def test_mirror_needs_takes(folder):
    data = manifest(database={"file": "db.npz"}, entries=[{"character": "hero", "path": "walk", "mirror": False}])
    with pytest.raises(bm.ManifestError, match=r"entry 1 \(001_hero_walk\): mirror needs a database built"):
        bm.parse(data, str(folder))


def test_unreadable_manifests(folder):
    (folder / "m.toml").write_text("fps = = 3")
    (folder / "m.yaml").write_text("")
    for name, words in (("m.toml", "cannot be read"), ("m.yaml", "must be a .toml or .json file"),
                        ("gone.json", "Cannot read the manifest")):
        with pytest.raises(bm.ManifestError, match=words):
            bm.read(str(folder / name))


def test_entries_are_chosen_by_numbers_and_ranges():
    assert bm.select("all", 5) == [1, 2, 3, 4, 5]
    assert bm.select("4-5,1,2-2", 5) == [1, 2, 4, 5]
    for spec in ("0-2", "3-9", "2-1", "x", "1,"):
        with pytest.raises(bm.ManifestError, match="--entries"):
            bm.select(spec, 5)


def test_each_entry_becomes_the_command_line_of_a_single_bake(folder):
    m = bm.parse(manifest(), str(folder))
    args = batch.cli_args(m, m.entries[1], "/db.npz", "/o/e")
    assert args[args.index("--database") + 1] == "/db.npz"
    assert args[args.index("--speed-scale") + 1] == "1.5" and args[args.index("--start-frame") + 1] == "61"
    assert args[args.index("--tag-query") + 1] == "walk"
    assert [args[i + 1] for i, a in enumerate(args) if a == "--export"] == ["/o/e/002_extra_show.bvh",
                                                                            "/o/e/002_extra_show.glb"]
    plain = batch.cli_args(m, m.entries[2], None, "/o/e")
    assert "--controller" in plain and "--speed-scale" not in plain and "--tag-query" not in plain
    assert plain[plain.index("--bvh") + 1] == TAKE and "--mirror-takes" not in plain
    assert "--mirror-takes" in batch.database_args(m, m.entries[1])


def test_an_entry_mm_cli_would_refuse_is_named_before_anything_runs(folder, tmp_path):
    m = bm.parse(manifest(paths={"walk": "walk.json", "show": "nowhere_builtin", "lane": "cast.blend:Lane"}),
                 str(folder))
    with pytest.raises(bm.ManifestError, match=r"entry 2 \(002_extra_show\): --scenario 'nowhere_builtin' is "
                                                r"neither a built-in"):
        batch.check_entries(m, m.entries, str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


def test_entries_on_an_exported_database_are_checked_with_its_file(folder, tmp_path):
    data = manifest(database={"file": "db.npz"})
    del data["entries"][1]["mirror"]
    m = bm.parse(data, str(folder))
    batch.check_entries(m, m.entries, str(tmp_path / "out"))
    args = batch.cli_args(m, m.entries[0], None, "/o/e")
    assert args[args.index("--database") + 1] == str(folder / "db.npz") and "--bvh" not in args


def test_the_count_of_a_checked_manifest(folder, capsys):
    (folder / "m.json").write_text(json.dumps(manifest()))
    assert commands.main(["batch", str(folder / "m.json"), "--out", str(folder / "out"), "--count"]) == 0
    assert capsys.readouterr().out.strip() == "3"
    assert not (folder / "out").exists()
    data = manifest()
    data["entries"][2]["speed_scale"] = 2.0      # on a controller path
    (folder / "m.json").write_text(json.dumps(data))
    assert commands.main(["batch", str(folder / "m.json"), "--out", str(folder / "out"), "--count"]) == 1
    assert "motion_matching: entry 3 (003_hero_lane): speed_scale" in capsys.readouterr().err


def test_the_ground_is_the_manifests_unless_an_entry_gives_its_own(folder):
    (folder / "hills.obj").write_bytes(b"x")
    entries = [{"character": "hero", "path": "walk"},
               {"character": "hero", "path": "walk", "ground": "cast.blend:Steps"},
               {"character": "hero", "path": "walk", "ground": ""}]
    m = bm.parse(manifest(ground="hills.obj", entries=entries), str(folder))
    assert [e["ground"] for e in m.entries] == [str(folder / "hills.obj"), str(folder / "cast.blend") + ":Steps", ""]
    assert bm.parse(manifest(), str(folder)).entries[0]["ground"] == ""
    args = batch.cli_args(m, m.entries[1], None, "/o/e")
    assert args[args.index("--ground") + 1] == str(folder / "cast.blend") + ":Steps"
    assert "--ground" not in batch.cli_args(m, m.entries[2], None, "/o/e")
    with pytest.raises(bm.ManifestError, match=r"^entry 1 \(001_hero_walk\): ground \(hills.png\) must be a "):
        bm.parse(manifest(entries=[{"character": "hero", "path": "walk", "ground": "hills.png"}]), str(folder))
    with pytest.raises(bm.ManifestError, match=r"^the manifest's ground: file not found"):
        bm.parse(manifest(ground="gone.obj"), str(folder))
