"""The built zip installs, enables, disables and re-enables like any extension."""

import bpy

from tools import addon_session


def _registered():
    return hasattr(bpy.types, "MOTION_MATCHING_OT_import_bvh")


def _in_import_menu():
    funcs = bpy.types.TOPBAR_MT_file_import._dyn_ui_initialize()
    return any(getattr(f, "__name__", "") == "menu_import" and "motion_matching" in (f.__module__ or "")
               for f in funcs)


def test_enabled_after_install(addon):
    assert addon in bpy.context.preferences.addons
    assert addon.startswith("bl_ext.")
    assert _registered() and _in_import_menu()
    assert hasattr(bpy.types.Scene, "motion_matching")
    for name in ("import_bvh", "add_virtual_root", "load_tpose"):
        assert hasattr(bpy.types, "MOTION_MATCHING_OT_" + name)
    assert hasattr(bpy.types, "MOTION_MATCHING_PT_import")


def test_disable_enable_cycle(addon):
    try:
        addon_session.disable()
        assert addon not in bpy.context.preferences.addons
        assert not _registered() and not _in_import_menu()
        assert not hasattr(bpy.types.Scene, "motion_matching")
        addon_session.enable()
        assert _registered() and _in_import_menu()
        addon_session.disable()
        assert not _registered()
    finally:
        addon_session.enable()
    assert _registered() and _in_import_menu()
    # Still works after the cycle.
    from sample_paths import SAMPLE_TPOSE

    assert bpy.ops.motion_matching.import_bvh(filepath=SAMPLE_TPOSE, global_scale=0.01) == {"FINISHED"}


def test_manifest_validates():
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, addon_session.extension_tool(), "validate", addon_session.REPO],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and "Success" in proc.stdout, proc.stdout + proc.stderr
