"""When the Workflow loop looks again without a change: each Job's and measurement's requeue (its Step's
`requeue_after`), and the Workflow tier's next deadline. A pass takes what is due with what changed; a quiet loop
sleeps until the earliest of them.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from .observe import Changes


@dataclass(frozen=True)
class Due:
    """What one pass looks at: `why` (start, acted, changed, due, deadline; "" = nothing, an idle wake-up), the Jobs
    and measurements to reconcile (None: every one), whether the Workflow tier is asked, and the pass's `now`."""

    why: str
    jobs: set[str] | None
    measurements: set[str] | None
    workflow: bool
    now: datetime


class Schedule:
    """The requeues asked for ("job/<name>", "measurement/<name>" -> when, time.monotonic) and the Workflow tier's
    next deadline. The Job and measurement passes run in parallel: their requeues go in under a lock."""

    def __init__(self) -> None:
        self.due: dict[str, float] = {}
        self.wake_at: float | None = None  # the Workflow tier's next deadline, while nothing changes
        self._lock = threading.Lock()

    def later(self, key: str, requeue: float | None) -> None:
        """When `key` wants to be looked at again even if nothing changes (None: only on a change)."""
        with self._lock:
            if requeue is None:
                self.due.pop(key, None)
            else:
                self.due[key] = time.monotonic() + requeue

    def workflow_after(self, seconds: float | None) -> None:
        """The Workflow tier's next look without a change, `seconds` from now (None: only on a change)."""
        self.wake_at = time.monotonic() + max(seconds, 0.0) if seconds is not None else None

    def take(self, first: bool, acted: bool, changes: Changes) -> Due:
        """This pass's share: what changed, what is due (consumed: a pass schedules it again if it still wants to
        be looked at), and the Workflow tier's deadline once reached (it sets its next one)."""
        mono, now = time.monotonic(), datetime.now(UTC)
        ripe = {key for key, when in self.due.items() if when <= mono}
        for key in ripe:
            del self.due[key]
        wf_due = self.wake_at is not None and self.wake_at <= mono
        if wf_due:
            self.wake_at = None
        why = next((label for label, cause in (("start", first), ("acted", acted), ("changed", changes.any),
                                               ("due", bool(ripe)), ("deadline", wf_due)) if cause), "")
        return Due(why, None if first else changes.jobs | _named(ripe, "job/"),
                   None if first else changes.measurements | _named(ripe, "measurement/"),
                   first or acted or changes.workflow or wf_due, now)

    def next_wake(self, deadline: float, poll_interval: float) -> float:
        """The earliest of the run's deadline, the poll interval, every requeue and the Workflow tier's deadline."""
        wake = [deadline, time.monotonic() + poll_interval, *self.due.values()]
        if self.wake_at is not None:
            wake.append(self.wake_at)
        return min(wake)


def _named(keys: set[str], prefix: str) -> set[str]:
    return {k.removeprefix(prefix) for k in keys if k.startswith(prefix)}
