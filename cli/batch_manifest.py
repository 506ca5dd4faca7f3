"""A batch manifest (TOML or JSON) read and checked completely, in plain
Python: no Blender, no numpy, nothing of the add-on.

The manifest names the database (takes and their options, built once, or an
exported .npz), the characters, the paths, and the entries: one bake each of a
character on a path, with its own variation. File names are relative to the
manifest's folder. The format is documented in docs/user/batch.md.

Every problem is a :class:`ManifestError` whose text names the entry and the
field (``entry 2 (hero_walk): speed_scale must be ...``), raised before
anything runs. :func:`entry_digest` is what a finished entry's done marker holds.
"""

import hashlib
import json
import os
import re

try:
    import tomllib
except ModuleNotFoundError:   # Python < 3.11: TOML needs it; JSON manifests still work
    tomllib = None


class ManifestError(ValueError):
    """A manifest that cannot be used; the text is one sentence."""


FORMATS = {"bvh": ".bvh", "fbx": ".fbx", "glb": ".glb", "gltf": ".gltf"}
CHARACTER_EXTENSIONS = (".glb", ".gltf", ".fbx")
SPEED_SCALE_RANGE = (0.05, 20.0)    # as the bake command's --speed-scale
START_FRAME_RANGE = (0, 1000000)    # as the bake command's --start-frame
FPS_RANGE = (1.0, 1000.0)
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")

TOP_KEYS = ("database", "characters", "paths", "entries", "fps", "exports", "ground")
DATABASE_KEYS = ("takes", "file", "scale", "tpose", "dance_card", "mirror")
ENTRY_KEYS = ("name", "character", "path", "speed_scale", "start_frame", "start_time", "tag_query", "moves",
              "mirror", "exports", "ground")
MOVE_KEYS = ("frame", "time", "query")
GROUND_EXTENSIONS = (".glb", ".gltf", ".fbx", ".obj")


def read(path):
    """The manifest at ``path`` (.toml or .json), checked: a :class:`Manifest`."""
    ext = os.path.splitext(path)[1].lower()
    if ext not in (".toml", ".json"):
        raise ManifestError("The manifest %s must be a .toml or .json file." % path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as ex:
        raise ManifestError("Cannot read the manifest %s (%s)." % (path, ex.strerror or ex)) from None
    try:
        text = raw.decode("utf-8")
        if ext == ".json":
            data = json.loads(text)
        elif tomllib is None:
            raise ManifestError("TOML manifests need Python 3.11 or later; write it as JSON.")
        else:
            data = tomllib.loads(text)
    except UnicodeDecodeError:
        raise ManifestError("The manifest %s is not UTF-8 text." % path) from None
    except ValueError as ex:   # json.JSONDecodeError and tomllib.TOMLDecodeError
        if isinstance(ex, ManifestError):
            raise
        raise ManifestError("The manifest %s cannot be read: %s." % (path, str(ex).rstrip("."))) from None
    return parse(data, os.path.dirname(os.path.abspath(path)))


class Manifest:
    """``database`` (dict), ``entries`` (list of dicts, every field resolved:
    absolute file names, defaults filled in), ``folder``."""

    def __init__(self, database, entries, folder):
        self.database, self.entries, self.folder = database, entries, folder

    def names(self):
        return [e["name"] for e in self.entries]


def parse(data, folder):
    """Check the parsed manifest ``data`` (file names relative to ``folder``)."""
    if not isinstance(data, dict):
        raise ManifestError("The manifest must be a table (an object) at the top.")
    _known(data, TOP_KEYS, "the manifest")
    fps = _number(data.get("fps", 24.0), "the manifest's fps", *FPS_RANGE)
    database = _database(data.get("database"), folder)
    database["fps"] = fps   # the scene's rate when the takes are imported
    characters = _table(data, "characters", folder, _character)
    paths = _table(data, "paths", folder, _path)
    default_exports = _exports(data.get("exports", []), "the manifest's exports")
    entries = data.get("entries")
    if not isinstance(entries, list) or not entries:
        raise ManifestError("The manifest needs an entries list ([[entries]] in TOML), one per bake.")
    ground = _ground(data["ground"], "the manifest's ground", folder) if data.get("ground") else ""
    out = [_entry(i + 1, e, characters, paths, database, fps, default_exports, ground, folder)
           for i, e in enumerate(entries)]
    seen = {}
    for e in out:
        if e["name"] in seen:
            raise ManifestError("entry %d (%s): name is already used by entry %d; names must differ."
                                % (e["index"], e["name"], seen[e["name"]]))
        seen[e["name"]] = e["index"]
    return Manifest(database, out, folder)


def _known(table, keys, where):
    unknown = sorted(k for k in table if k not in keys)
    if unknown:
        raise ManifestError("%s has an unknown field %r; the fields are %s." % (where, unknown[0], ", ".join(keys)))


def _file(value, where, folder, exts=None):
    if not isinstance(value, str) or not value.strip():
        raise ManifestError("%s must be a file name." % where)
    path = os.path.normpath(os.path.join(folder, os.path.expanduser(value)))
    if exts and os.path.splitext(path)[1].lower() not in exts:
        raise ManifestError("%s (%s) must be a %s file." % (where, value, " or ".join(exts)))
    if not os.path.isfile(path):
        raise ManifestError("%s: file not found: %s" % (where, path))
    return path


def _number(value, where, lo, hi, kind=float):
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is int:
        ok = ok and float(value).is_integer()
    if not ok or not lo <= value <= hi:
        raise ManifestError("%s must be %s from %g to %g, not %r." % (
            where, "a whole number" if kind is int else "a number", lo, hi, value))
    return kind(value)


def _bool(value, where):
    if not isinstance(value, bool):
        raise ManifestError("%s must be true or false, not %r." % (where, value))
    return value


def _database(db, folder):
    if not isinstance(db, dict):
        raise ManifestError("The manifest needs a [database] table: takes = [...] or file = \"....npz\".")
    _known(db, DATABASE_KEYS, "[database]")
    if ("takes" in db) == ("file" in db):
        raise ManifestError("[database] needs takes (BVH files to build it from) or file (an exported .npz), "
                            "one of the two.")
    if "file" in db:
        extra = sorted(k for k in db if k != "file")
        if extra:
            raise ManifestError("[database] %s goes with takes; an exported file is already built." % extra[0])
        return {"file": _file(db["file"], "[database] file", folder, (".npz",))}
    takes = db["takes"]
    if not isinstance(takes, list) or not takes:
        raise ManifestError("[database] takes must be a list of BVH files.")
    out = {"takes": [_file(t, "[database] takes[%d]" % i, folder, (".bvh",)) for i, t in enumerate(takes)],
           "scale": _number(db.get("scale", 0.01), "[database] scale", 0.0001, 1000000.0),
           "mirror": None if db.get("mirror") is None else _bool(db["mirror"], "[database] mirror")}
    for key in ("tpose", "dance_card"):
        exts = (".bvh",) if key == "tpose" else (".toml", ".json")
        out[key] = _file(db[key], "[database] " + key, folder, exts) if key in db else None
    return out


def _table(data, key, folder, check):
    table = data.get(key)
    if not isinstance(table, dict) or not table:
        raise ManifestError("The manifest needs a [%s] table of name = file." % key)
    out = {}
    for name, value in table.items():
        if not NAME.match(name):
            raise ManifestError("[%s] %r: names are letters, digits, '_', '.' and '-'." % (key, name))
        out[name] = check(value, "[%s] %s" % (key, name), folder)
    return out


def _blend_object(value, where, folder):
    at = value.lower().rfind(".blend:")
    if at < 0:
        return None
    name = value[at + len(".blend:"):]
    if not name.strip():
        raise ManifestError("%s (%s): the object name after ':' is empty." % (where, value))
    return _file(value[:at + len(".blend")], where, folder) + ":" + name


def _character(value, where, folder):
    if not isinstance(value, str):
        raise ManifestError("%s must be a file name (.glb, .gltf, .fbx or FILE.blend:Object)." % where)
    blend = _blend_object(value, where, folder)
    return blend or _file(value, where, folder, CHARACTER_EXTENSIONS)


def _ground(value, where, folder):
    """The ground mesh's file (.glb, .gltf, .fbx, .obj or FILE.blend:Object); "" for none."""
    if not isinstance(value, str):
        raise ManifestError("%s must be a file name (.glb, .gltf, .fbx, .obj or FILE.blend:Object)." % where)
    if not value:
        return ""
    return _blend_object(value, where, folder) or _file(value, where, folder, GROUND_EXTENSIONS)


def _path(value, where, folder):
    """{"controller": FILE.blend:Object} or {"scenario": a JSON file or a built-in name}."""
    if not isinstance(value, str) or not value.strip():
        raise ManifestError("%s must be a scenario file, a built-in scenario name or FILE.blend:Object." % where)
    blend = _blend_object(value, where, folder)
    if blend:
        return {"controller": blend}
    if value.lower().endswith(".json"):
        return {"scenario": _file(value, where, folder)}
    if not NAME.match(value):
        raise ManifestError("%s (%s) is neither a .json scenario file nor a built-in scenario name." % (where, value))
    return {"scenario": value}   # a built-in name: the bake command checks it


def _exports(value, where):
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ManifestError("%s must be a list of formats (%s)." % (where, ", ".join(FORMATS)))
    for v in value:
        if v.lower() not in FORMATS:
            raise ManifestError("%s: unknown format %r; the formats are %s." % (where, v, ", ".join(FORMATS)))
    return sorted(set(v.lower() for v in value), key=list(FORMATS).index)


def _entry(index, e, characters, paths, database, fps, default_exports, ground="", folder="."):
    label = "entry %d" % index
    if not isinstance(e, dict):
        raise ManifestError("%s must be a table of fields." % label)
    if "name" in e:
        if not isinstance(e["name"], str) or not NAME.match(e["name"]):
            raise ManifestError("%s: name %r must be letters, digits, '_', '.' and '-' (a folder name)."
                                % (label, e.get("name")))
        label = "entry %d (%s)" % (index, e["name"])
    _known(e, ENTRY_KEYS, label)
    for key, table in (("character", characters), ("path", paths)):
        if e.get(key) not in table:
            raise ManifestError("%s: %s %r is not in the manifest's [%s] (%s)." % (
                label, key, e.get(key), key + "s", ", ".join(sorted(table))))
    name = e.get("name") or "%03d_%s_%s" % (index, e["character"], e["path"])
    label = "entry %d (%s)" % (index, name)
    path = paths[e["path"]]
    out = {"index": index, "name": name, "character": characters[e["character"]], "path": dict(path), "fps": fps,
           "speed_scale": _number(e.get("speed_scale", 1.0), label + ": speed_scale", *SPEED_SCALE_RANGE),
           "tag_query": e.get("tag_query", ""),
           "ground": _ground(e["ground"], label + ": ground", folder) if "ground" in e else ground,
           "exports": _exports(e["exports"], label + ": exports") if "exports" in e else default_exports}
    if not isinstance(out["tag_query"], str):
        raise ManifestError("%s: tag_query must be text, like \"walk or run\"." % label)
    out["start_frame"] = _start_frame(e, label, fps)
    if "moves" in e:   # only then: an entry without moves keeps its digest
        out["moves"] = _moves(e["moves"], label, fps)
    if "controller" in path and (out["speed_scale"] != 1.0 or out["start_frame"] != 1):
        raise ManifestError("%s: speed_scale and start_frame/start_time apply to scenario paths; path %r is a "
                            "controller with its own keys." % (label, e["path"]))
    mirror = e.get("mirror", database.get("mirror"))
    if "mirror" in e:
        _bool(mirror, label + ": mirror")
        if "file" in database:
            raise ManifestError("%s: mirror needs a database built from takes; the exported file is already built."
                                % label)
    out["mirror"] = mirror
    return out


def _start_frame(e, label, fps):
    """start_frame (the frame of the path's time 0), or start_time in seconds after frame 1."""
    if "start_frame" in e and "start_time" in e:
        raise ManifestError("%s: give start_frame or start_time, not both." % label)
    if "start_time" in e:
        seconds = _number(e["start_time"], label + ": start_time", 0.0, START_FRAME_RANGE[1] / fps)
        return 1 + int(round(seconds * fps))
    return _number(e.get("start_frame", 1), label + ": start_frame", *START_FRAME_RANGE, kind=int)


def _moves(moves, label, fps):
    """[[scene frame, tag query], ...] in frame order: each move a table with
    frame (a scene frame) or time (seconds after frame 1, as start_time), and query."""
    if not isinstance(moves, list):
        raise ManifestError("%s: moves must be a list of tables like {frame = 120, query = \"run\"}." % label)
    out = []
    for i, m in enumerate(moves):
        where = "%s: moves[%d]" % (label, i)
        if not isinstance(m, dict):
            raise ManifestError("%s must be a table like {frame = 120, query = \"run\"}." % where)
        _known(m, MOVE_KEYS, where)
        if ("frame" in m) == ("time" in m):
            raise ManifestError("%s needs frame (a scene frame) or time (seconds after frame 1), one of the two."
                                % where)
        if "frame" in m:
            frame = _number(m["frame"], where + " frame", *START_FRAME_RANGE)
        else:
            frame = 1.0 + _number(m["time"], where + " time", 0.0, START_FRAME_RANGE[1] / fps) * fps
        query = m.get("query")
        if not isinstance(query, str):
            raise ManifestError("%s needs query: a tag query in quotes (\"\" goes back to the entry's tag_query)."
                                % where)
        out.append([float(frame), query.strip()])
    out.sort(key=lambda move: move[0])
    for (a, _), (b, _) in zip(out, out[1:]):
        if a == b:
            raise ManifestError("%s: two moves start on frame %g; each move needs a frame of its own." % (label, a))
    return out


def database_key(entry):
    """Which database an entry bakes with: its mirror choice ("default", "mirror", "plain")."""
    return {None: "default", True: "mirror", False: "plain"}[entry["mirror"]]


def database_digest(database, key):
    """A digest of the database's manifest fields and the entry's mirror choice."""
    text = json.dumps({"database": database, "mirror": key}, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def entry_digest(database, entry):
    """A digest of everything the manifest says about one entry (its index aside)."""
    fields = {k: v for k, v in entry.items() if k != "index"}
    text = json.dumps({"entry": fields, "database": database_digest(database, database_key(entry))},
                      sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def select(spec, count):
    """Entry indexes (1-based, in order) of ``spec``: "all", or numbers and
    ranges like "1-4,7"; a ManifestError sentence for anything else."""
    if spec in (None, "", "all"):
        return list(range(1, count + 1))
    chosen = set()
    for part in str(spec).split(","):
        m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if not m:
            raise ManifestError("--entries %s: give entry numbers and ranges like 1-4,7." % spec)
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if not 1 <= lo <= hi <= count:
            raise ManifestError("--entries %s: %s is not within the manifest's entries 1-%d." % (spec, part.strip(),
                                                                                                 count))
        chosen.update(range(lo, hi + 1))
    return sorted(chosen)
