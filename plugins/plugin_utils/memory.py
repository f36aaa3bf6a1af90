"""Process-wide memory tuning, which only a face (the process's owner) may do; the engine never does."""
from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector: a render builds thousands of acyclic JSON documents (reference
    counting frees them), and each automatic collection would rescan the growing live set, which made
    10,000-node plans spend most of their time, superlinearly, in the collector."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
