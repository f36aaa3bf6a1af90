"""When a failed API call is worth another try, and how long to wait first (pure: no I/O, no clock).

A run lasts hours; the API server restarts, throttles (429) and sheds load (503) in that time. Those answers
are retried with a bounded, jittered exponential backoff that honours the server's Retry-After. A server that
never answered at all is a configuration problem (wrong address, wrong port): that fails within seconds.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime

# 429 throttling; 500/502/503/504 an apiserver whose etcd, aggregated API or webhook is briefly gone.
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
# The server certainly did not act on these: even a create that must not be repeated can be sent again.
UNPROCESSED_STATUSES = frozenset({429, 503})


@dataclass(frozen=True)
class Backoff:
    """Delays base, 2×base, 4×base… capped at `cap`, each half fixed and half random (so many clients
    restarted together do not retry in lockstep); a Retry-After is obeyed up to `retry_after_cap`."""

    base: float = 0.25
    cap: float = 8.0
    retry_after_cap: float = 30.0
    budget: float = 180.0  # seconds of retrying a call once the server has answered this process
    unreached_budget: float = 3.0  # … and before it ever has

    def delay(self, attempt: int, retry_after: float | None = None, rand: Callable[[], float] = lambda: 0.5) -> float:
        """The wait before retry number `attempt` (0 for the first); `rand` returns a float in [0, 1)."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.retry_after_cap)
        ceiling = min(self.cap, self.base * 2 ** min(attempt, 32))
        return ceiling / 2 + rand() * ceiling / 2

    def gives_up(self, elapsed: float, delay: float, reached: bool) -> bool:
        """True when waiting `delay` more would spend more than the budget on this call."""
        return elapsed + delay > (self.budget if reached else self.unreached_budget)


def retryable(status: int | None, sent: bool, repeatable: bool, too_large: bool = False) -> bool:
    """Whether an answer (`status`) or a transport failure (`status` None) is retried.

    `sent`: the request may have reached the server (False for a refused or timed-out connect).
    `repeatable`: sending the request twice has the effect of sending it once (every verb but a POST that
    lets the server pick the name; a named create that already happened answers 409, which the caller reads).
    `too_large`: the answer refuses the object for its size (kube/errors.too_large), a 500 another try repeats."""
    if too_large:
        return False
    if status is None:
        return repeatable or not sent
    if status in UNPROCESSED_STATUSES:
        return True
    return status in RETRY_STATUSES and repeatable


def retry_after(value: str | None, now: datetime) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date); None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max((when - now).total_seconds(), 0.0)
