"""Errors raised by core: plain sentences a user can act on."""


class MotionMatchingError(Exception):
    """Base class of every error core raises."""
