"""motion_matching controller operators (being written)."""

CLASSES = ()
