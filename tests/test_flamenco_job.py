"""The Flamenco job type (tools/flamenco/motion_matching_batch.js) compiled
under Node with a recording stand-in for Flamenco's authoring API: the task
list (names, commands, arguments, dependencies) for a few manifests, and every
task's command line accepted by tools.mm_batch."""

import json
import os
import shutil
import subprocess

import pytest

from addon_package import addon

batch = addon("cli.batch")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JOB_TYPE = os.path.join(REPO, "tools", "flamenco", "motion_matching_batch.js")

# Node runs the job type in a sandbox holding what Flamenco's Manager gives a
# job compiler script: `author` (Task, Command) and `print`; the settings'
# defaults are filled in first, as the Manager does. It prints the task list.
HARNESS = r"""
const fs = require("fs");
const vm = require("vm");
const [file, settingsJson] = process.argv.slice(2);
const tasks = [];
const author = {
    Task(name, type) {
        const task = {name, type, commands: [], dependencies: [],
                      addCommand(c) { this.commands.push(c); },
                      addDependency(t) { this.dependencies.push(t); }};
        return task;
    },
    Command(name, parameters) { return {name, parameters}; },
};
const sandbox = {author, print: () => {}, Number, String, Math};
vm.createContext(sandbox);
vm.runInContext(fs.readFileSync(file, "utf8") + "\n;this.JOB_TYPE = JOB_TYPE; this.compileJob = compileJob;", sandbox);
const settings = JSON.parse(settingsJson);
for (const s of sandbox.JOB_TYPE.settings) {
    if (!(s.key in settings) && "default" in s) settings[s.key] = s.default;
}
const job = {settings, addTask(t) { tasks.push(t); }};
try {
    sandbox.compileJob(job);
} catch (e) {
    console.log(JSON.stringify({error: String(e)}));
    process.exit(0);
}
console.log(JSON.stringify({
    label: sandbox.JOB_TYPE.label,
    settings: sandbox.JOB_TYPE.settings.map(s => s.key),
    tasks: tasks.map(t => ({name: t.name, type: t.type, commands: t.commands,
                            dependencies: t.dependencies.map(d => d.name)})),
}));
"""


@pytest.fixture(scope="module")
def compile_job(tmp_path_factory):
    node = shutil.which("node")
    assert node, "Node.js is needed to run the Flamenco job type's compile function (install the nodejs package)"
    harness = tmp_path_factory.mktemp("flamenco") / "harness.js"
    harness.write_text(HARNESS)

    def run(**settings):
        base = {"manifest": "/farm/crowd.toml", "output": "/farm/out"}
        base.update(settings)
        proc = subprocess.run([node, str(harness), JOB_TYPE, json.dumps(base)], capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    return run


def _batch_args(task):
    """(the program, the batch command's arguments) of a task's one command: Blender
    in the background running the extension's command."""
    (command,) = task["commands"]
    assert command["name"] == "exec"
    args = command["parameters"]["args"]
    assert args[:4] == ["-b", "-c", "motion_matching", "batch"]
    return command["parameters"]["exe"], args[4:]


def test_ten_entries_in_chunks_of_four(compile_job):
    result = compile_job(entry_count=10)
    assert result["label"] == "Motion Matching Batch"
    assert {"manifest", "output", "entry_count", "chunk_size", "blender"} <= set(result["settings"])
    assert not {"repository", "python"} & set(result["settings"])   # workers need Blender only
    names = [t["name"] for t in result["tasks"]]
    assert names == ["database", "bake-entries-1-4", "bake-entries-5-8", "bake-entries-9-10", "summary"]
    tasks = {t["name"]: t for t in result["tasks"]}
    assert tasks["database"]["dependencies"] == []
    for name in names[1:4]:
        assert tasks[name]["dependencies"] == ["database"] and tasks[name]["type"] == "blender"
    assert tasks["summary"]["dependencies"] == names[1:4]
    blender, args = _batch_args(tasks["bake-entries-5-8"])
    assert blender == "{blender}"   # the farm's variable for Blender on each platform
    assert args == ["/farm/crowd.toml", "--out", "/farm/out", "--entries", "5-8", "--jobs", "1", "--keep-going"]
    assert _batch_args(tasks["database"])[1][3:] == ["--database-only"]
    assert _batch_args(tasks["summary"])[1][3:] == ["--summary-only"]
    # Every task's command line is one the batch command accepts.
    for task in result["tasks"]:
        parsed = batch.parse_args(_batch_args(task)[1])
        assert parsed.manifest == "/farm/crowd.toml" and parsed.out == "/farm/out"


@pytest.mark.parametrize("count, size, ranges", [(1, 4, ["1-1"]), (4, 4, ["1-4"]), (5, 2, ["1-2", "3-4", "5-5"]),
                                                 (3, 1, ["1-1", "2-2", "3-3"])])
def test_every_entry_is_in_exactly_one_task(compile_job, count, size, ranges):
    result = compile_job(entry_count=count, chunk_size=size, jobs_per_task=2, blender="/opt/blender/blender")
    bakes = [t for t in result["tasks"] if t["name"].startswith("bake-entries-")]
    assert [t["name"] for t in bakes] == ["bake-entries-" + r for r in ranges]
    covered = []
    for task in bakes:
        blender, args = _batch_args(task)
        assert blender == "/opt/blender/blender" and args[args.index("--jobs") + 1] == "2"
        first, last = map(int, args[args.index("--entries") + 1].split("-"))
        covered += range(first, last + 1)
    assert covered == list(range(1, count + 1))


@pytest.mark.parametrize("settings, words", [({"entry_count": 0}, "entry_count must be"),
                                             ({"entry_count": 3, "chunk_size": 0}, "chunk_size must be"),
                                             ({"entry_count": 3, "jobs_per_task": -1}, "jobs_per_task must be")])
def test_bad_settings_are_refused(compile_job, settings, words):
    assert words in compile_job(**settings)["error"]
