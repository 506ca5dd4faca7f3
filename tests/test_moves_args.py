"""Moves along the timeline given to the bake command (--moves FRAME=QUERY) and
to a batch manifest's entry (moves = [{frame | time, query}, ...]), read and
checked without Blender: the moves parsed, passed on to the entry's bake
command, and a bad move one sentence naming the entry (or the option)."""

import pytest

from addon_package import addon
from sample_paths import SAMPLE_TAKE
from test_batch_manifest import folder, manifest  # noqa: F401 (the fixture and the manifest maker)

bake_args = addon("cli.bake_args")
bm = addon("cli.batch_manifest")
batch = addon("cli.batch")


@pytest.fixture
def base(tmp_path):
    return ["--bvh", SAMPLE_TAKE, "--out", str(tmp_path / "out")]


def test_moves_on_the_command_line_in_any_order(base):
    args = bake_args.parse(base + ["--moves", "240=walk", "1=idle", "120.5=run or start", "--moves", "300="])
    assert (args.move_list.frames, args.move_list.queries) == ((1.0, 120.5, 240.0, 300.0),
                                                               ("idle", "run or start", "walk", ""))
    assert not bake_args.parse(base).move_list      # no --moves: no moves of the command's own


@pytest.mark.parametrize("items, words", [
    (["120"], "--moves 120: give each move as FRAME=QUERY"),
    (["run=120"], "--moves run=120: give each move as FRAME=QUERY"),
    (["nan=run"], "--moves nan=run: give each move as FRAME=QUERY"),
    (["120=run", "120=walk"], "--moves: Move 2 at frame 120 is not after move 1"),
    (["120=run and"], "--moves: Move 1 (frame 120, tag query 'run and')"),
])
def test_a_bad_move_on_the_command_line_is_one_sentence(base, items, words):
    with pytest.raises(bake_args.Failure) as info:
        bake_args.parse(base + ["--moves", *items])
    assert words in str(info.value) and "\n" not in str(info.value)


def _with_moves(moves):
    data = manifest()
    data["entries"][1]["moves"] = moves
    return data


def test_an_entrys_moves_are_frames_or_times_in_frame_order(folder):  # noqa: F811
    m = bm.parse(_with_moves([{"time": 4.0, "query": " run "}, {"frame": 1, "query": "idle"},
                              {"frame": 300.5, "query": ""}]), str(folder))
    one, two, three = m.entries
    # time: seconds after frame 1 at the manifest's 30 fps, as start_time.
    assert two["moves"] == [[1.0, "idle"], [121.0, "run"], [300.5, ""]]
    # An entry without moves has no moves field, so its digest is what it was.
    assert "moves" not in one and "moves" not in three
    plain = bm.parse(manifest(), str(folder))
    assert bm.entry_digest(m.database, two) != bm.entry_digest(plain.database, plain.entries[1])
    assert bm.entry_digest(m.database, one) == bm.entry_digest(plain.database, plain.entries[0])


def test_an_entrys_moves_reach_its_bake_command(folder, tmp_path):  # noqa: F811
    m = bm.parse(_with_moves([{"frame": 1, "query": "idle"}, {"frame": 121, "query": "-run"},
                              {"frame": 200, "query": ""}]), str(folder))
    args = batch.cli_args(m, m.entries[1], "/db.npz", "/o/e")
    assert [a for a in args if a.startswith("--moves")] == ["--moves=1.0=idle", "--moves=121.0=-run",
                                                            "--moves=200.0="]
    assert not [a for a in batch.cli_args(m, m.entries[0], "/db.npz", "/o/e") if a.startswith("--moves")]
    # The bake command reads them back as the entry gave them ('-run' stays a query, not an option).
    parsed = bake_args.parse(batch.cli_args(m, m.entries[1], None, str(tmp_path / "e")))
    assert (parsed.move_list.frames, parsed.move_list.queries) == ((1.0, 121.0, 200.0), ("idle", "-run", ""))


def test_an_entry_whose_move_query_cannot_be_read_is_named_before_anything_runs(folder, tmp_path):  # noqa: F811
    m = bm.parse(_with_moves([{"frame": 1, "query": "walk and"}]), str(folder))
    with pytest.raises(bm.ManifestError, match=r"^entry 2 \(002_extra_show\): --moves: Move 1 \(frame 1, tag query "
                                               r"'walk and'\)"):
        batch.check_entries(m, m.entries, str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("moves, words", [
    ({"frame": 1}, "entry 2 (002_extra_show): moves must be a list of tables"),
    (["run"], "entry 2 (002_extra_show): moves[0] must be a table"),
    ([{"frame": 1, "time": 0, "query": "run"}], "entry 2 (002_extra_show): moves[0] needs frame (a scene frame) or "
                                                "time"),
    ([{"query": "run"}], "entry 2 (002_extra_show): moves[0] needs frame"),
    ([{"frame": "ten", "query": "run"}], "entry 2 (002_extra_show): moves[0] frame must be a number"),
    ([{"time": -1, "query": "run"}], "entry 2 (002_extra_show): moves[0] time must be a number from 0"),
    ([{"frame": 10}], "entry 2 (002_extra_show): moves[0] needs query"),
    ([{"frame": 10, "query": 3}], "entry 2 (002_extra_show): moves[0] needs query"),
    ([{"frame": 10, "query": "run", "speed": 2}], "entry 2 (002_extra_show): moves[0] has an unknown field 'speed'"),
    ([{"frame": 31, "query": "run"}, {"time": 1.0, "query": "walk"}],
     "entry 2 (002_extra_show): two moves start on frame 31"),
])
def test_a_bad_move_in_a_manifest_is_one_sentence_naming_the_entry(folder, moves, words):  # noqa: F811
    with pytest.raises(bm.ManifestError) as info:
        bm.parse(_with_moves(moves), str(folder))
    assert words in str(info.value) and "\n" not in str(info.value)
