"""Counting Python-level calls: a deterministic stand-in for timing in tests."""

import sys


def python_calls(fn):
    """How many Python functions ``fn`` calls (numpy's compiled work is not counted)."""
    count = [0]

    def profile(_frame, event, _arg):
        if event == "call":
            count[0] += 1

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count[0]
