"""The garbage collector paused while a log is read into rows.

A read makes a row per line (a burn-in: 14,400 a node) and keeps every one until they are sorted and encoded.
Rows are tuples of strings and numbers, never in a cycle, but a tuple subclass stays tracked: each 700 of them
set off a collection, and each node's rows, once old enough, a walk over every object the process holds. Those
walks find nothing and cost a fifth of a burn-in's read (bench/evidence.py). Paused, the rows are freed by their
reference counts as ever; the collector goes on where it was once the last read running ends.

The collector is the process's: reads in several threads share one pause (counted under a lock), and a
collector someone else disabled stays disabled.
"""
from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = threading.Lock()
_reads = 0          # reads running under the pause
_resume = False     # whether the first of them found the collector enabled


@contextmanager
def paused() -> Iterator[None]:
    global _reads, _resume  # noqa: PLW0603 - the process's one collector, shared by its threads
    with _LOCK:
        if _reads == 0:
            _resume = gc.isenabled()
            gc.disable()
        _reads += 1
    try:
        yield
    finally:
        with _LOCK:
            _reads -= 1
            if _reads == 0 and _resume:
                gc.enable()
