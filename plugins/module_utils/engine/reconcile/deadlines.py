"""When a Workflow pass wants to look again: the earliest deadline still ahead (Step.wake_at) and a bound on its
requeue. The pass and its dependency ledger share one, so each deadline either meets is remembered once."""
from __future__ import annotations

from datetime import datetime, timedelta


class Deadlines:
    def __init__(self, now: datetime) -> None:
        self.now = now
        self.wake_at: datetime | None = None  # the earliest deadline still ahead
        self.requeue_bound: float | None = None  # seconds: look again this soon at the latest

    def past(self, deadline: datetime, reached: bool = False) -> bool:
        """Whether `deadline` has passed (`reached`: or is now); if not, it is remembered as a time to look again."""
        if self.now > deadline or (reached and self.now == deadline):
            return True
        self.wake_at = deadline if self.wake_at is None else min(self.wake_at, deadline)
        return False

    def within(self, seconds: float) -> None:
        """Look again `seconds` from now at the latest (a requeue shortened to it, and a deadline then)."""
        self.requeue_bound = seconds if self.requeue_bound is None else min(self.requeue_bound, seconds)
        self.past(self.now + timedelta(seconds=seconds))

    def requeue(self, seconds: float | None) -> float | None:
        """A requeue (None: only on a change) within the bound, when there is one."""
        if seconds is None or self.requeue_bound is None:
            return seconds
        return min(seconds, self.requeue_bound)
