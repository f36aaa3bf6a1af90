"""A heartbeat while a run shows nothing new: every `interval` seconds without a progress line, one line with the
time elapsed, the groups running and the longest-running Jobs (so a quiet hour-long Job does not look hung)."""
from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from ..engine.api.objects import go_duration, parse_time, status_orchestration, terminal

SLOWEST = 3  # the longest-running Jobs a heartbeat names (thousands may run: never a line per group)


def heartbeat_line(prefix: str, wf: dict[str, Any], now: datetime, elapsed: float) -> str:
    """`ns/name: still running after 5m0s, 2/6 groups running, longest-running Jobs <job> (4m10s), <job> (3m2s)`;
    once the Workflow is terminal the run only waits for its last measurements."""
    if phase := terminal(wf):
        return f"{prefix}: {phase}, waiting for the final measurements after {go_duration(int(elapsed))}"
    groups = status_orchestration(wf).get("groups") or []
    running = [g for g in groups if g.get("phase") == "Running"]
    line = f"{prefix}: still running after {go_duration(int(elapsed))}, {len(running)}/{len(groups)} groups running"
    started = sorted(((start, g.get("name", "")), g) for g in running if (start := parse_time(g.get("startTime"))))
    if started:
        slowest = [f"{g.get('jobName') or (g.get('jobRef') or {}).get('name') or g.get('name', '')} "
                   f"({go_duration(int((now - start).total_seconds()))})" for (start, _n), g in started[:SLOWEST]]
        line += f", longest-running Job{'s' if len(slowest) > 1 else ''} {', '.join(slowest)}"
    return line


class Heartbeat:
    """Wraps a progress callback: `shown()` after every line it passes on, `beat()` on every pass."""

    def __init__(self, progress: Callable[[str], None], interval: float, clock: Callable[[], float] = time.monotonic
                 ) -> None:
        self.progress, self.interval, self.clock = progress, interval, clock
        self.last = clock()

    def show(self, line: str) -> None:
        self.progress(line)
        self.last = self.clock()

    def beat(self, line: Callable[[], str]) -> None:
        """Print `line()` when nothing was shown for `interval` seconds (made only then: it reads every group)."""
        if self.clock() - self.last >= self.interval:
            self.show(line())
