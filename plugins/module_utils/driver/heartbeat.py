"""A heartbeat while a run shows nothing new: every `interval` seconds without a progress line, one line with the
time elapsed, the groups running and the longest-running Job (so a quiet hour-long Job does not look hung)."""
from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from ..engine.api.objects import go_duration, parse_time, terminal


def heartbeat_line(prefix: str, wf: dict[str, Any], now: datetime, elapsed: float) -> str:
    """`ns/name: still running after 5m0s, 2/6 groups running, longest-running Job <job> (4m10s)`; once the
    Workflow is terminal the run only waits for its last measurements."""
    if phase := terminal(wf):
        return f"{prefix}: {phase}, waiting for the final measurements after {go_duration(int(elapsed))}"
    groups = ((wf.get("status") or {}).get("orchestration") or {}).get("groups") or []
    running = [g for g in groups if g.get("phase") == "Running"]
    line = f"{prefix}: still running after {go_duration(int(elapsed))}, {len(running)}/{len(groups)} groups running"
    started = [(start, g) for g in running if (start := parse_time(g.get("startTime")))]
    if started:
        start, group = min(started, key=lambda item: item[0])
        job = group.get("jobName") or (group.get("jobRef") or {}).get("name") or group.get("name", "")
        line += f", longest-running Job {job} ({go_duration(int((now - start).total_seconds()))})"
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

    def beat(self, line: str) -> None:
        """Print `line` when nothing was shown for `interval` seconds."""
        if self.clock() - self.last >= self.interval:
            self.show(line)
