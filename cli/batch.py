"""Many bakes from one manifest: characters on paths, each with its own variation.

    blender -b -c motion_matching batch MANIFEST --out DIR [--jobs N] [--entries 1-4,7]
        [--keep-going] [--database-only | --summary-only | --count]

The manifest (TOML or JSON, :mod:`.batch_manifest`, docs/user/batch.md) is
checked completely first, every entry's command line too, and nothing runs
when anything is wrong. The database is built once (per mirror choice) into
DIR/database/; each entry is then baked by the bake command in a Blender
process of its own (:mod:`.child`: the same code path as a single bake) on that
database, into a folder of its own that becomes DIR/entries/NAME/ only when the
entry succeeded, with a done marker holding the digest of its manifest entry.
A rerun skips finished entries (the marker there, its digest the same, its
outputs there). A failed entry is named, its log kept in DIR/logs/, and the
others go on; the status at the end is 1 when any entry failed, naming them.
``--jobs N`` runs N entries side by side. At the end DIR/summary.json and a
table of every entry of the manifest (finished, failed or not yet run).
"""

import argparse
import concurrent.futures
import json
import os
import shutil

from ..bridge.child_process import COMMAND
from . import bake_args, batch_manifest, child
from .bake_args import Failure
from .batch_manifest import ManifestError

DONE = "done.json"


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise Failure(message[0].upper() + message[1:] + ("" if message.endswith(".") else "."))


def parse_args(argv):
    ap = _Parser(prog="blender -b -c motion_matching batch", description=__doc__.splitlines()[0])
    ap.add_argument("manifest", help="the batch manifest (.toml or .json)")
    ap.add_argument("--out", required=True, metavar="DIR", help="output folder (made if missing)")
    ap.add_argument("--jobs", type=int, default=1, help="entries baked side by side (processes; default 1)")
    ap.add_argument("--entries", default="all", metavar="SPEC",
                    help="only these entries, numbered from 1 as in the manifest: e.g. 1-4,7 (default all)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--database-only", action="store_true", help="only build the database(s)")
    mode.add_argument("--summary-only", action="store_true",
                      help="bake nothing: write the summary of what the folder holds")
    mode.add_argument("--count", action="store_true", help="print the manifest's number of entries (checked)")
    ap.add_argument("--keep-going", action="store_true",
                    help="end with status 0 even when entries failed (the summary names them; for farm tasks)")
    args = ap.parse_args(argv)
    if not 1 <= args.jobs <= 64:
        raise Failure("--jobs must be from 1 to 64, not %d." % args.jobs)
    return args


# ---------------------------------------------------------------------------
# Where things go


def entry_dir(out, entry):
    return os.path.join(out, "entries", entry["name"])


def database_file(out, manifest, entry):
    if "file" in manifest.database:
        return manifest.database["file"]
    return os.path.join(out, "database", batch_manifest.database_key(entry) + ".npz")


def outputs(entry):
    """The files a finished entry's folder holds (besides the done marker)."""
    return ["baked.blend", "report.json"] + [entry["name"] + batch_manifest.FORMATS[f] for f in entry["exports"]]


def write_json_atomic(path, data):
    tmp = "%s.tmp-%d" % (path, os.getpid())
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1, sort_keys=True)
        fh.write("\n")
    os.replace(tmp, path)


def read_json(path):
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def failed_marker(out, entry):
    return os.path.join(out, "failed", entry["name"] + ".json")


def failure(out, manifest, entry):
    """Why the entry failed when it last ran with the same manifest fields (None: it did not)."""
    marker = read_json(failed_marker(out, entry))
    if marker and marker.get("digest") == batch_manifest.entry_digest(manifest.database, entry):
        return marker.get("reason")
    return None


def finished(out, manifest, entry):
    """Is the entry done: its marker with the same digest, its outputs there?"""
    folder = entry_dir(out, entry)
    marker = read_json(os.path.join(folder, DONE))
    if not marker or marker.get("digest") != batch_manifest.entry_digest(manifest.database, entry):
        return False
    return all(os.path.isfile(os.path.join(folder, f)) for f in outputs(entry))


# ---------------------------------------------------------------------------
# Command lines


def cli_args(manifest, entry, database, folder):
    """The bake command's arguments for one entry (``database``: the .npz, or None for the
    takes themselves, used to check the entry before the database exists)."""
    args = ["--fps", repr(entry["fps"]), "--character", entry["character"], "--out", folder]
    args += database_args(manifest, entry) if database is None else ["--database", database]
    path = entry["path"]
    if "controller" in path:
        args += ["--controller", path["controller"]]
    else:
        args += ["--scenario", path["scenario"], "--speed-scale", repr(entry["speed_scale"]),
                 "--start-frame", str(entry["start_frame"])]
    if entry["tag_query"]:
        args += ["--tag-query", entry["tag_query"]]
    # One --moves=FRAME=QUERY each: the '=' form keeps a query starting with '-' a value.
    args += ["--moves=%r=%s" % (frame, query) for frame, query in entry.get("moves", ())]
    if entry.get("ground"):
        args += ["--ground", entry["ground"]]
    for fmt in entry["exports"]:
        args += ["--export", os.path.join(folder, entry["name"] + batch_manifest.FORMATS[fmt])]
    return args


def database_args(manifest, entry):
    db = manifest.database
    if "file" in db:
        return ["--database", db["file"]]
    args = []
    for take in db["takes"]:
        args += ["--bvh", take]
    args += ["--scale", repr(db["scale"]), "--fps", repr(db["fps"])]
    if db["tpose"]:
        args += ["--tpose", db["tpose"]]
    if db["dance_card"]:
        args += ["--dance-card", db["dance_card"]]
    if entry["mirror"] is not None:
        args.append("--mirror-takes" if entry["mirror"] else "--no-mirror-takes")
    return args


def check_entries(manifest, entries, out):
    """Every entry's command line checked as the bake command checks it (no
    Blender needed): a ManifestError naming the entry."""
    for entry in entries:
        try:
            bake_args.parse(cli_args(manifest, entry, None, os.path.join(out, "entries", entry["name"])))
        except Failure as ex:
            raise ManifestError("entry %d (%s): %s" % (entry["index"], entry["name"], ex)) from None


def run_cli(command, args, log):
    """Run the ``command`` (bake or build) in a Blender process of its own;
    returns (ok, the sentence it failed with)."""
    argv = [command, *args]
    proc = child.run(argv)
    os.makedirs(os.path.dirname(log), exist_ok=True)
    with open(log, "w", encoding="utf-8") as fh:
        fh.write("$ %s\n%s\n%s" % (" ".join(child.shown(argv)), proc.stdout, proc.stderr))
    prefix = COMMAND + ": "
    said = [line[len(prefix):] for line in proc.stderr.splitlines() if line.startswith(prefix)]
    if proc.returncode == 0:
        return True, ""
    return False, said[-1] if said else "the bake ended with status %d (see %s)." % (proc.returncode, log)


# ---------------------------------------------------------------------------
# The database, then the entries


def build_databases(manifest, entries, out, jobs=1):
    """Build each database the entries need (``jobs`` at a time), unless built
    for the same manifest fields; returns {key: None or the reason it failed}."""
    if "file" in manifest.database:
        return {}
    first = {}
    for entry in entries:
        first.setdefault(batch_manifest.database_key(entry), entry)
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {key: pool.submit(build_database, manifest, entry, key, out) for key, entry in first.items()}
        return {key: future.result() for key, future in futures.items()}


def build_database(manifest, entry, key, out):
    """One database (the entry's mirror choice ``key``); None or why it failed."""
    path = database_file(out, manifest, entry)
    marker = path + ".done.json"
    digest = batch_manifest.database_digest(manifest.database, key)
    done = read_json(marker)
    if done and done.get("digest") == digest and os.path.isfile(path):
        return None
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = "%s.partial-%d.npz" % (path[:-4], os.getpid())
    ok, said = run_cli("build", database_args(manifest, entry) + ["--save-database", tmp],
                       os.path.join(out, "logs", "database-%s.log" % key))
    if not ok:
        print("database %s: FAILED: %s" % (key, said), flush=True)
        return said
    os.replace(tmp, path)
    write_json_atomic(marker, {"digest": digest})
    print("database %s: built %s" % (key, path), flush=True)
    return None


def bake_entry(manifest, entry, out):
    """Bake one entry into a folder of its own, made the entry's folder when it
    succeeded; returns None or the reason it failed."""
    final = entry_dir(out, entry)
    stem = ".%s.partial-" % entry["name"]
    for left in os.listdir(os.path.join(out, "entries")):   # what a stopped run left half-written
        if left.startswith(stem):
            shutil.rmtree(os.path.join(out, "entries", left), ignore_errors=True)
    tmp = os.path.join(out, "entries", "%s%d" % (stem, os.getpid()))
    os.makedirs(tmp)
    ok, said = run_cli("bake", cli_args(manifest, entry, database_file(out, manifest, entry), tmp),
                       os.path.join(out, "logs", entry["name"] + ".log"))
    if not ok:
        shutil.rmtree(tmp, ignore_errors=True)
        return said
    missing = [f for f in outputs(entry) if not os.path.isfile(os.path.join(tmp, f))]
    if missing:
        shutil.rmtree(tmp, ignore_errors=True)
        return "the bake did not write %s." % ", ".join(missing)
    write_json_atomic(os.path.join(tmp, DONE), {"digest": batch_manifest.entry_digest(manifest.database, entry),
                                                "outputs": outputs(entry)})
    if os.path.exists(final):
        old = tmp + ".old"
        os.rename(final, old)
        shutil.rmtree(old, ignore_errors=True)
    os.rename(tmp, final)
    return None


def record(out, manifest, entry, reason):
    """Say how the entry went; a failure is kept in DIR/failed/NAME.json for the summary."""
    marker = failed_marker(out, entry)
    if reason:
        os.makedirs(os.path.dirname(marker), exist_ok=True)
        write_json_atomic(marker, {"digest": batch_manifest.entry_digest(manifest.database, entry), "reason": reason})
    elif os.path.exists(marker):
        os.remove(marker)
    print("entry %d (%s): %s" % (entry["index"], entry["name"], "FAILED: " + reason if reason else "baked"),
          flush=True)


def run_entries(manifest, entries, out, jobs, db_failed):
    """Bake the entries not finished yet, ``jobs`` at a time."""
    todo = []
    for entry in entries:
        key = batch_manifest.database_key(entry)
        if finished(out, manifest, entry):
            print("entry %d (%s): finished before, skipped" % (entry["index"], entry["name"]), flush=True)
        elif db_failed.get(key):
            record(out, manifest, entry, "its database was not built: %s" % db_failed[key])
        else:
            todo.append(entry)
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(bake_entry, manifest, e, out): e for e in todo}
        for future in concurrent.futures.as_completed(futures):
            try:
                reason = future.result()
            except OSError as ex:
                reason = "cannot write its files (%s)." % (ex.strerror or ex)
            record(out, manifest, futures[future], reason)


# ---------------------------------------------------------------------------
# The summary


COLUMNS = (("#", "index", "%d"), ("entry", "name", "%s"), ("status", "status", "%s"), ("frames", "frames", "%d"),
           ("jumps", "jumps", "%d"), ("track mean m", "tracking_error_mean_m", "%.3f"),
           ("planted slide x", "contact_sliding_ratio", "%.2f"), ("x real time", "real_time_factor", "%.1f"),
           ("warnings", "warnings", "%d"))


def summary(manifest, out):
    """One row per manifest entry: its status (done, failed, not run) and its
    report's main figures, or why it failed."""
    rows = []
    for entry in manifest.entries:
        row = {"index": entry["index"], "name": entry["name"], "folder": entry_dir(out, entry)}
        if finished(out, manifest, entry):
            report = read_json(os.path.join(entry_dir(out, entry), "report.json")) or {}
            row["status"] = "done"
            for _title, key, _fmt in COLUMNS[3:]:
                value = report.get(key)
                row[key] = len(value) if key == "warnings" and isinstance(value, list) else value
        elif failure(out, manifest, entry):
            row.update(status="failed", reason=failure(out, manifest, entry))
        else:
            row["status"] = "not run"
        rows.append(row)
    return rows


def table(rows):
    lines = []
    cells = [[title for title, _k, _f in COLUMNS]]
    for row in rows:
        cells.append([fmt % row[key] if row.get(key) is not None else "-" for _t, key, fmt in COLUMNS])
    widths = [max(len(c[i]) for c in cells) for i in range(len(COLUMNS))]
    for c in cells:
        lines.append("  ".join(v.ljust(w) for v, w in zip(c, widths)).rstrip())
    for row in rows:
        if row["status"] == "failed":
            lines.append("entry %d (%s) failed: %s" % (row["index"], row["name"], row["reason"]))
    return "\n".join(lines)


def run(args):
    manifest = batch_manifest.read(args.manifest)
    chosen = batch_manifest.select(args.entries, len(manifest.entries))
    entries = [manifest.entries[i - 1] for i in chosen]
    out = os.path.abspath(args.out)
    if os.path.exists(out) and not os.path.isdir(out):
        raise Failure("--out %s is a file: give a folder." % args.out)
    check_entries(manifest, entries, out)   # before anything runs
    if args.count:
        print(len(manifest.entries))
        return None
    if not args.summary_only:
        os.makedirs(os.path.join(out, "entries"), exist_ok=True)
        todo = [e for e in entries if not finished(out, manifest, e)]
        db_failed = build_databases(manifest, todo, out, args.jobs)
        if args.database_only:
            bad = sorted(k for k, v in db_failed.items() if v)
            return ("the database %s was not built." % ", ".join(bad)) if bad else None
        run_entries(manifest, entries, out, args.jobs, db_failed)
    rows = summary(manifest, out)
    write_json_atomic(os.path.join(out, "summary.json"), {"manifest": os.path.abspath(args.manifest),
                                                          "entries": rows})
    print(table(rows))
    print("wrote %s" % os.path.join(out, "summary.json"))
    selected = [r for r in rows if r["index"] in chosen] if not args.summary_only else rows
    bad = [r for r in selected if r["status"] != "done"]
    if not bad:
        return None
    names = ", ".join("%d (%s)" % (r["index"], r["name"]) for r in bad)
    if args.summary_only:
        return "%d of %d entries are not finished: %s." % (len(bad), len(selected), names)
    if args.keep_going:
        print("%d of %d entries failed: %s (--keep-going: status 0)." % (len(bad), len(selected), names))
        return None
    return "%d of %d entries failed: %s." % (len(bad), len(selected), names)


def main(argv):
    """The batch command; returns its status (a problem raises Failure)."""
    try:
        problem = run(parse_args(argv))
    except ManifestError as ex:
        raise Failure(str(ex)) from None
    if problem:
        raise Failure(problem)
    return 0
