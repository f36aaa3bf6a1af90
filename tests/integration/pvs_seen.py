"""What the PersistentVolumes did while a run went on: the PV controller removes a released PV on its own schedule,
so a volume test records every change the apiserver reports (PVWatch) and polls with a deadline (wait_for)."""
from __future__ import annotations

import copy
import threading
import time

from kubernetes import client, watch

from .conftest import Sim

KEY = "nvcre.nvidia.com/workflow-uid"   # the annotation a run stamps on the PVs of its claims


def wait_for(check, seconds: float = 60):
    """What `check` returns once it is true, polled for `seconds` at the most (falsy then: the caller says what never
    came)."""
    deadline = time.monotonic() + seconds
    while not (found := check()) and time.monotonic() < deadline:
        time.sleep(0.5)
    return found


class PVWatch:
    """Every change of the PVs as the apiserver reports it: (event, name, reclaim policy, phase, annotation), until
    `close()`. Short watches, each resumed from the last resourceVersion seen, so closing takes a second or two."""

    def __init__(self, sim: Sim) -> None:
        self.sim, self.seen, self.stop = sim, list[tuple[str, str, str, str, str]](), threading.Event()
        self.thread = threading.Thread(target=self.follow, daemon=True)
        self.thread.start()

    def follow(self) -> None:
        core = client.CoreV1Api(copy.copy(self.sim.api))
        version = ""
        while not self.stop.is_set():
            since = {"resource_version": version} if version else {}
            for event in watch.Watch().stream(core.list_persistent_volume, timeout_seconds=1, **since):
                pv = event["object"]
                version = pv.metadata.resource_version
                self.seen.append((event["type"], pv.metadata.name, pv.spec.persistent_volume_reclaim_policy,
                                  (pv.status.phase if pv.status else "") or "",
                                  (pv.metadata.annotations or {}).get(KEY, "")))

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=30)

    def of(self, name: str) -> list[tuple[str, str, str, str]]:
        return [(e, policy, phase, stamp) for e, n, policy, phase, stamp in self.seen if n == name]
