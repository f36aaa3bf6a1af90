"""What each pass of the driver cost: CPU, requests and bytes (the benchmarks print them; nothing asserts time)."""
from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field

from ..kube.rest import Kube


@dataclass(frozen=True)
class PassCost:
    why: str          # start, acted (the last pass wrote), changed, due (a requeue), deadline; "" = idle
    jobs: int         # Jobs reconciled
    cpu: float        # process CPU seconds (the watch threads' included)
    requests: int
    bytes_read: int
    at: float         # when it began (time.monotonic)


@dataclass
class PassStats:
    """A pass lasts from its start to the next one's: its progress output, and its wait with the watch threads'
    work on what arrived meanwhile, are part of its cost (an idle pass is then what an idle wake-up costs, not an
    empty block)."""

    kube: Kube
    passes: deque[PassCost] = field(default_factory=lambda: deque(maxlen=10_000))  # the latest, for a day-long run
    jobs: int = 0  # Jobs the open pass reconciled
    _open: tuple[str, float, float, int, int] | None = None

    def _now(self) -> tuple[float, int, int]:
        return time.process_time(), sum(self.kube.requests.values()), self.kube.bytes_read

    def begin(self, why: str) -> None:
        self.end()
        self._open, self.jobs = (why, time.monotonic(), *self._now()), 0

    def end(self) -> None:
        if self._open is None:
            return
        (why, at, cpu0, requests0, read0), (cpu, requests, read) = self._open, self._now()
        self.passes.append(PassCost(why, self.jobs, cpu - cpu0, requests - requests0, read - read0, at))
        self._open = None
