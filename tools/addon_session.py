"""Load the add-on into a bpy process the way Blender does.

Builds the extension zip with Blender's own extension tool (shipped inside bpy),
installs it into a throw-away user directory and enables it. Used by the tests,
the benchmarks and the command line. Call :func:`prepare_user_dir` before the
first ``import bpy`` so that Blender uses the throw-away directory, and
:func:`finish` at the end: it disables the add-on and removes that directory
(the zip is built inside it), so a run leaves nothing behind.
"""

import importlib
import os
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULE = "bl_ext.user_default.motion_matching"
ZIP_ENV = "MM_EXTENSION_ZIP"   # a built extension zip for start() to reuse


_MADE = []   # throw-away user folders made here (removed by finish)


def prepare_user_dir(path=None):
    """Point Blender's user resources at ``path`` (a new temporary folder by
    default, removed by :func:`finish`). Must run before bpy is imported."""
    if "bpy" in sys.modules:
        raise RuntimeError("prepare_user_dir() must run before bpy is imported")
    if path is None:
        path = tempfile.mkdtemp(prefix="mm_blender_user_")
        _MADE.append(path)
    os.environ["BLENDER_USER_RESOURCES"] = path
    return path


def finish(blender_temp=False):
    """Disable the add-on and remove the throw-away user folders made by
    :func:`prepare_user_dir` (with the zip built inside them).

    ``blender_temp``: also remove Blender's own session folder in the temp
    directory (``bpy.app.tempdir``), which Blender removes only when it shuts
    down normally; pass it right before ``os._exit``, which skips that."""
    try:
        if "bpy" in sys.modules:
            disable()
    finally:
        while _MADE:
            shutil.rmtree(_MADE.pop(), ignore_errors=True)
        if blender_temp and "bpy" in sys.modules:
            import bpy

            session = os.path.normpath(bpy.app.tempdir or "")
            if os.path.basename(session).startswith("blender_") and os.path.isdir(session):
                shutil.rmtree(session, ignore_errors=True)


def write_in_new_process(module, args, path, what, timeout=600):
    """Run ``python -m module args`` (a tool that writes one file with Blender,
    see :func:`run_alone`) in a new process; returns ``path`` once it is there,
    or raises RuntimeError naming ``what`` with the end of the tool's output."""
    proc = subprocess.run([sys.executable, "-m", module, *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout)
    if proc.returncode != 0 or not os.path.isfile(path):
        raise RuntimeError("writing %s to %s failed:\n%s%s" % (what, path, proc.stdout[-2000:], proc.stderr[-2000:]))
    return path


def run_alone(work):
    """The body of a process that only writes one file with Blender: a
    throw-away user folder, factory settings, ``work()``, then exit with its
    status at once (Blender 4.2's glTF exporter can crash in a process that
    opened other files, and bpy can crash while Python shuts down after it)."""
    prepare_user_dir()
    status = 1
    try:
        import bpy

        bpy.ops.wm.read_factory_settings(use_empty=True)
        work()
        status = 0
    finally:
        finish(blender_temp=True)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)


def extension_tool():
    import bpy

    return os.path.join(bpy.utils.system_resource("SCRIPTS"), "addons_core", "bl_pkg", "cli", "blender_ext.py")


def build_zip(output_dir, source_dir=REPO):
    """Build the extension zip with Blender's tool; return its path."""
    os.makedirs(output_dir, exist_ok=True)
    proc = subprocess.run(
        [sys.executable, extension_tool(), "build", "--source-dir", source_dir, "--output-dir", output_dir],
        capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError("Blender's extension build failed:\n%s%s" % (proc.stdout, proc.stderr))
    zips = [f for f in os.listdir(output_dir) if f.endswith(".zip")]
    if len(zips) != 1:
        raise RuntimeError("expected one zip in %s, found %s" % (output_dir, zips))
    return os.path.join(output_dir, zips[0])


def install(zip_path):
    """Install the zip into the user repository and enable it (Blender's own operator)."""
    import bpy

    result = bpy.ops.extensions.package_install_files(
        filepath=zip_path, repo="user_default", enable_on_install=True)
    if result != {"FINISHED"} or MODULE not in bpy.context.preferences.addons:
        raise RuntimeError("Installing %s did not enable %s" % (zip_path, MODULE))
    return MODULE


def enable():
    import bpy

    bpy.ops.preferences.addon_enable(module=MODULE)


def disable():
    import bpy

    if MODULE in bpy.context.preferences.addons:
        bpy.ops.preferences.addon_disable(module=MODULE)


def start(user_dir=None):
    """Fresh user directory, build, install, enable: the one call most callers
    need (end with :func:`finish`).

    If the environment names a zip already built from this checkout
    (``ZIP_ENV``; the test session sets it for the processes it starts), that
    zip is installed instead of building another."""
    user = prepare_user_dir(user_dir)
    import bpy  # noqa: F401  (Blender starts here, using the user directory above)

    zip_path = os.environ.get(ZIP_ENV, "")
    if not os.path.isfile(zip_path):
        zip_path = build_zip(os.path.join(user, "dist"))
    return install(zip_path)


def addon_module(name):
    """A module of the enabled extension, e.g. ``addon_module("cli.top_view")``."""
    return importlib.import_module(MODULE + "." + name)


def run_command(argv):
    """``blender -b -c motion_matching argv`` for a checkout with the bpy module:
    a throw-away user folder, the extension built and installed there, the
    registered command called as Blender calls it, everything removed again.
    Returns the command's exit status."""
    import contextlib
    import io

    try:
        with contextlib.redirect_stdout(io.StringIO()):   # the installer's own status lines
            start()
    except ImportError:
        print("motion_matching: this Python has no bpy module: use the environment of the set-up command "
              "(README), or run blender -b -c motion_matching inside Blender.", file=sys.stderr)
        finish()
        return 1
    try:
        return addon_module("cli").execute(argv)
    finally:
        finish(blender_temp=True)


def exit_now(code):
    """End a tool's process with ``code``; once bpy is loaded, at once (bpy can
    crash in Python's teardown in some Blender versions once exporters have run)."""
    sys.stdout.flush()
    sys.stderr.flush()
    if "bpy" in sys.modules:
        os._exit(code)
    sys.exit(code)
