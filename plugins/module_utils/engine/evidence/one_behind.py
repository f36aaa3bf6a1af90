"""Calls run one behind the caller, on a thread of their own: the caller hands one over (`put`) and goes on, and
takes its answer (`take`) before it hands over the next.

Worth it for a call that lets go of the GIL (zlib's deflate): a shard writer deflates one batch of lines while it
encodes the next. Python hands the GIL to a waiting thread only after its switch interval (5 ms), far longer than
one batch's deflate; so `put` yields the GIL once (time.sleep(0)), and the thread starts the call at once instead
of after the caller's next batch. One thread, the calls in the order handed over: what they make is what one
thread would have made. The thread is started at the first call and stopped by `close`.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any


class OneBehind:
    def __init__(self, name: str) -> None:
        self._name = name
        self._pool: ThreadPoolExecutor | None = None
        self._pending: Future[Any] | None = None

    def put(self, call: Callable[..., Any], *args: Any) -> None:
        """Run `call(*args)` on the thread; the answer of the call before must have been taken."""
        if self._pending is not None:
            raise RuntimeError("the answer of the call before was not taken")
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix=self._name)
        self._pending = self._pool.submit(call, *args)
        time.sleep(0)   # the GIL to the thread now, not at the end of the switch interval

    def take(self) -> Any:
        """The answer of the call handed over (its error raised here), None when none is waiting."""
        pending, self._pending = self._pending, None
        return None if pending is None else pending.result()

    def close(self) -> None:
        """Stop the thread, after the call it runs (its answer, never taken, is dropped)."""
        self._pending = None
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
