"""motion_matching retarget operators (being written)."""

CLASSES = ()
