// Flamenco 3 job type: bake a motion-matching batch manifest on the farm.
//
// Install: copy this file into the "scripts" folder next to the Flamenco
// Manager executable and restart the Manager (docs/user/batch.md).
//
// The job runs, on the workers, Blender with the Motion Matching extension
// installed (blender -b -c motion_matching batch ...); the workers need
// nothing else (no repository, no Python of their own):
//   1. "database": build the manifest's database once (--database-only);
//   2. "bake-entries-I-J": a few entries each (--entries I-J), all after 1;
//      a failed entry does not fail its task (--keep-going), so every other
//      entry is still baked;
//   3. "summary": after all of them, the summary of every entry
//      (--summary-only); it fails, naming them, when any entry failed.
// The Manager cannot read the manifest, so the submitter gives its number of
// entries (blender -b -c motion_matching batch MANIFEST --out DIR --count
// prints it). Blender is the farm's {blender} variable (its program on each
// platform); any worker platform.

const JOB_TYPE = {
    label: "Motion Matching Batch",
    description: "Bake a motion-matching batch manifest: a few entries per task, then the summary",
    settings: [
        { key: "manifest", type: "string", subtype: "file_path", required: true,
          description: "The batch manifest (.toml or .json), as the workers see it" },
        { key: "output", type: "string", subtype: "dir_path", required: true,
          description: "Output folder shared by the workers" },
        { key: "entry_count", type: "int32", required: true,
          description: "Entries in the manifest (blender -b -c motion_matching batch MANIFEST --out DIR --count)" },
        { key: "chunk_size", type: "int32", default: 4, description: "Entries per task" },
        { key: "jobs_per_task", type: "int32", default: 1, description: "Entries baked side by side on a worker" },
        { key: "blender", type: "string", default: "{blender}", visible: false,
          description: "Blender on the workers, with the Motion Matching extension installed" },
    ],
};

function compileJob(job) {
    const settings = job.settings;
    const count = settings.entry_count;
    const size = settings.chunk_size === undefined ? 4 : settings.chunk_size;
    const jobs = settings.jobs_per_task === undefined ? 1 : settings.jobs_per_task;
    if (!(Number.isInteger(count) && count >= 1)) {
        throw `entry_count must be the manifest's number of entries (1 or more), not ${count}`;
    }
    if (!(Number.isInteger(size) && size >= 1)) {
        throw `chunk_size must be 1 or more, not ${size}`;
    }
    if (!(Number.isInteger(jobs) && jobs >= 1)) {
        throw `jobs_per_task must be 1 or more, not ${jobs}`;
    }

    const database = batchTask(settings, "database", "blender", ["--database-only"]);
    job.addTask(database);

    const bakes = [];
    for (const [first, last] of chunks(count, size)) {
        const range = `${first}-${last}`;
        const task = batchTask(settings, `bake-entries-${range}`, "blender",
                               ["--entries", range, "--jobs", String(jobs), "--keep-going"]);
        task.addDependency(database);
        job.addTask(task);
        bakes.push(task);
    }

    const summary = batchTask(settings, "summary", "misc", ["--summary-only"]);
    for (const task of bakes) {
        summary.addDependency(task);
    }
    job.addTask(summary);
}

// Entry ranges [first, last] (numbered from 1, last included) of at most `size` entries.
function chunks(count, size) {
    const out = [];
    for (let first = 1; first <= count; first += size) {
        out.push([first, Math.min(count, first + size - 1)]);
    }
    return out;
}

// A task running `blender -b -c motion_matching batch MANIFEST --out DIR <extra>`.
function batchTask(settings, name, type, extra) {
    const task = author.Task(name, type);
    const args = ["-b", "-c", "motion_matching", "batch", settings.manifest, "--out", settings.output].concat(extra);
    task.addCommand(author.Command("exec", { exe: settings.blender || "{blender}", args: args }));
    return task;
}
