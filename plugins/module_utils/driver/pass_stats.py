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


@dataclass
class PassStats:
    kube: Kube
    passes: deque[PassCost] = field(default_factory=lambda: deque(maxlen=10_000))  # the latest, for a day-long run
    _start: tuple[float, int, int] = (0.0, 0, 0)

    def _now(self) -> tuple[float, int, int]:
        return time.process_time(), sum(self.kube.requests.values()), self.kube.bytes_read

    def begin(self) -> None:
        self._start = self._now()

    def end(self, why: str, jobs: int) -> None:
        cpu, requests, read = self._now()
        self.passes.append(PassCost(why, jobs, cpu - self._start[0], requests - self._start[1], read - self._start[2]))
