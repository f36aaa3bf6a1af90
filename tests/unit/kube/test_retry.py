"""The backoff policy of kube/retry.py: which failures are retried, how long each wait is, when it gives up."""
from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ansible_collections.cre.certification.plugins.module_utils.kube.retry import Backoff, retry_after, retryable

NOW = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)


def test_delays_double_from_the_base_up_to_the_cap_half_fixed_half_random() -> None:
    policy = Backoff(base=0.25, cap=8.0)
    assert [policy.delay(n, rand=lambda: 0.0) for n in range(7)] == [0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 4.0]
    assert [policy.delay(n, rand=lambda: 0.999999) for n in range(7)] == pytest.approx(
        [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 8.0], rel=1e-5)
    assert policy.delay(10_000, rand=lambda: 0.5) == 6.0  # no overflow on a long outage


def test_retry_after_is_obeyed_up_to_its_cap() -> None:
    policy = Backoff(retry_after_cap=30.0)
    assert policy.delay(0, retry_after=3.0) == 3.0
    assert policy.delay(5, retry_after=0.0) == 0.0
    assert policy.delay(0, retry_after=3600.0) == 30.0


def test_budget_is_short_until_the_server_has_answered_once() -> None:
    policy = Backoff(budget=180.0, unreached_budget=3.0)
    assert not policy.gives_up(2.0, 0.5, reached=False)
    assert policy.gives_up(2.9, 0.5, reached=False)
    assert not policy.gives_up(170.0, 8.0, reached=True)
    assert policy.gives_up(175.0, 8.0, reached=True)


@pytest.mark.parametrize(("status", "sent", "repeatable", "expected"), [
    (429, True, False, True),   # throttled: never processed, even a server-named create goes again
    (503, True, False, True),
    (500, True, True, True),
    (502, True, True, True),
    (504, True, True, True),
    (500, True, False, False),  # a generateName create may have happened: not sent twice
    (504, True, False, False),
    (400, True, True, False),
    (403, True, True, False),
    (404, True, True, False),
    (409, True, True, False),   # conflicts are the caller's: it re-reads
    (422, True, True, False),
    (None, False, False, True),  # refused connect: nothing reached the server
    (None, True, True, True),    # reset or read timeout on a repeatable call
    (None, True, False, False),  # … on a create the server names
])
def test_what_is_retried(status: int | None, sent: bool, repeatable: bool, expected: bool) -> None:
    assert retryable(status, sent, repeatable) is expected


@pytest.mark.parametrize(("header", "seconds"), [
    ("3", 3.0), (" 1 ", 1.0), ("0.5", 0.5), ("-4", 0.0),
    ("Tue, 01 Dec 2026 12:00:07 GMT", 7.0), ("Tue, 01 Dec 2026 11:59:00 GMT", 0.0),
    ("", None), (None, None), ("soon", None),
])
def test_retry_after_header(header: str | None, seconds: float | None) -> None:
    assert retry_after(header, NOW) == seconds
