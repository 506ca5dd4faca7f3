# SPDX-License-Identifier: GPL-3.0-or-later
"""Motion Matching for Blender: what Blender loads. It only forwards to the
registration module."""


def register():
    from . import registration

    registration.register()


def unregister():
    from . import registration

    registration.unregister()
