# SPDX-License-Identifier: GPL-3.0-or-later
"""Motion Matching for Blender: what Blender loads. It only forwards to the
registration module."""


def register():
    from .motion_matching_addon import registration

    registration.register()


def unregister():
    from .motion_matching_addon import registration

    registration.unregister()
