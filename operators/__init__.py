"""Operators: one module per user job. Each checks its input, calls the
Blender-side bridge (bridge) and core, and reports. Each module
lists what it registers in ``classes``; registration.py registers them."""
