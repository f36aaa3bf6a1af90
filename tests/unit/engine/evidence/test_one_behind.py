"""OneBehind: calls run on a thread of their own, one behind the caller, their answers and errors taken in order,
the thread gone once closed."""
from __future__ import annotations

import threading

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.one_behind import OneBehind


def threads(name: str) -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name.startswith(name)]


def test_each_answer_is_its_call_s_and_the_calls_run_off_the_caller_s_thread() -> None:
    behind, ran_on = OneBehind("behind-order"), []

    def call(n: int) -> int:
        ran_on.append(threading.current_thread().name)
        return n * n

    answers = []
    for n in range(5):
        behind.put(call, n)
        answers.append(behind.take())
    behind.close()
    assert answers == [0, 1, 4, 9, 16]
    assert len(set(ran_on)) == 1 and ran_on[0].startswith("behind-order")
    assert threads("behind-order") == []


def test_a_call_s_error_is_raised_where_its_answer_is_taken() -> None:
    behind = OneBehind("behind-error")
    behind.put(int, "not a number")
    with pytest.raises(ValueError, match="not a number"):
        behind.take()
    behind.put(int, "7")
    assert behind.take() == 7
    behind.close()


def test_nothing_handed_over_is_none_and_starts_no_thread() -> None:
    behind = OneBehind("behind-idle")
    assert behind.take() is None
    assert threads("behind-idle") == []
    behind.close()


def test_a_second_call_before_the_first_answer_is_taken_is_refused() -> None:
    behind = OneBehind("behind-twice")
    behind.put(len, "ab")
    with pytest.raises(RuntimeError, match="was not taken"):
        behind.put(len, "abc")
    assert behind.take() == 2
    behind.close()


def test_close_with_an_answer_not_taken_stops_the_thread() -> None:
    behind = OneBehind("behind-close")
    behind.put(sum, range(1000))
    behind.close()
    assert threads("behind-close") == [] and behind.take() is None
