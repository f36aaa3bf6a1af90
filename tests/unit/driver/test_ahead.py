"""An iterator made ahead by a thread: order kept, errors raised where they happened, the thread stopped early."""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from ansible_collections.cre.certification.plugins.module_utils.driver.ahead import ahead


def test_the_items_come_in_their_order_and_all_of_them() -> None:
    assert list(ahead(iter(range(1000)), 4)) == list(range(1000))
    assert list(ahead([], 4)) == []


def test_an_error_while_making_is_raised_where_the_items_are_used_after_the_items_before_it() -> None:
    def items() -> Iterator[int]:
        yield 1
        yield 2
        raise ValueError("shard 3 is cut")

    got = []
    with pytest.raises(ValueError, match="shard 3 is cut"):
        for item in ahead(items(), 8):
            got.append(item)
    assert got == [1, 2]


def test_no_more_than_depth_items_are_made_before_they_are_used_and_closing_stops_the_thread() -> None:
    made = []

    def items() -> Iterator[int]:
        for n in range(100):
            made.append(n)
            yield n

    stream = ahead(items(), 3)
    assert next(stream) == 0
    deadline = time.monotonic() + 10
    while len(made) < 5 and time.monotonic() < deadline:   # one used, three queued, one made and waiting for room
        time.sleep(0.01)
    stream.close()   # the thread has ended when close returns: what it made is final
    assert not [t for t in threading.enumerate() if t.name == "ahead"]
    assert made == [0, 1, 2, 3, 4]
