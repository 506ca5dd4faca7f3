"""Tests never read a clock: a time measured on a shared, busy machine is not a
result (speed is printed by bench/). This scans every test file."""

import os
import re

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLOCK = re.compile(r"\b(perf_counter|monotonic|process_time|thread_time)(_ns)?\s*\(|\btime\.time(_ns)?\s*\(|\btimeit\b")


def test_no_test_reads_a_clock():
    found = []
    for folder, _dirs, files in os.walk(TESTS):
        for name in files:
            if name.endswith(".py") and name != os.path.basename(__file__):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as fh:
                    for number, line in enumerate(fh, 1):
                        if CLOCK.search(line):
                            found.append("%s:%d: %s" % (os.path.relpath(path, TESTS), number, line.strip()))
    assert not found, "clock reads in tests:\n" + "\n".join(found)
