"""An iterator made ahead by a thread of its own, so that making the next items overlaps with using this one.

Worth it where both sides spend their time outside the GIL (zlib, hashlib, file and socket I/O): a results bundle
unzips the next shard while it writes and hashes this one. The items come in their order; an error raised while
making them is raised where they are used, at the point it happened; a consumer that stops early (closes the generator)
stops the thread (it finishes the item it is making) before the close returns.
"""
from __future__ import annotations

import threading
from collections.abc import Generator, Iterable
from queue import Full, Queue
from typing import Any, TypeVar

T = TypeVar("T")
_POLL = 0.1   # seconds between looks at the stop flag while the queue is full


def ahead(items: Iterable[T], depth: int) -> Generator[T, None, None]:
    """`items` in order, at most `depth` made before they are used."""
    queue: Queue[tuple[bool, Any]] = Queue(maxsize=depth)
    stop = threading.Event()

    def put(entry: tuple[bool, Any]) -> bool:
        while not stop.is_set():
            try:
                queue.put(entry, timeout=_POLL)
                return True
            except Full:
                continue
        return False

    def make() -> None:
        try:
            for item in items:
                if not put((True, item)):
                    return
        except BaseException as err:  # noqa: BLE001 - handed to the consumer, raised there
            put((False, err))
            return
        put((False, None))

    thread = threading.Thread(target=make, name="ahead", daemon=True)
    thread.start()
    try:
        while True:
            more, item = queue.get()   # the thread's last put is an end or an error, unless this stopped it
            if not more:
                if item is not None:
                    raise item
                return
            yield item
    finally:
        stop.set()
        thread.join()
