"""When a run's TrainJobs appeared and completed, from a watch of their namespace: where the run's time went.

A run's end-to-end time is the cluster's pace plus what the run adds before its first TrainJob (preflight, the
first lists, the Workflow's discovery) and after its last one completed (status, node results, cleanup). The
watch has a client of its own, so its requests are not counted as the run's.
"""
from __future__ import annotations

import time
from typing import Any

from kubernetes import client

from ansible_collections.cre.certification.plugins.module_utils.kube.rest import Kube
from ansible_collections.cre.certification.plugins.module_utils.kube.watch import Informer

TRAINER = "trainer.kubeflow.org/v1alpha1"


def _complete(trainjob: dict[str, Any]) -> bool:
    return any(c.get("type") == "Complete" and c.get("status") == "True"
               for c in (trainjob.get("status") or {}).get("conditions") or [])


class Timeline:
    """Seconds from `start` at which each TrainJob in `namespace` was first seen, and first seen Complete."""

    def __init__(self, api: client.ApiClient, namespace: str) -> None:
        self.start = time.monotonic()
        self.seen: dict[str, float] = {}
        self.complete: dict[str, float] = {}
        self.informer = Informer(Kube(api), TRAINER, "TrainJob", namespace, changed=self._changed)

    def __enter__(self) -> Timeline:
        self.informer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.informer.stop()

    def restart_clock(self) -> None:
        self.start = time.monotonic()

    def _changed(self, kind: str, what: str, names: Any) -> None:
        now = time.monotonic() - self.start
        for name in names:
            trainjob = self.informer.get(name)
            if trainjob is None:
                continue
            self.seen.setdefault(name, now)
            if _complete(trainjob):
                self.complete.setdefault(name, now)

    def summary(self, end: float) -> dict[str, float]:
        """First and last TrainJob seen, last seen Complete, and the run's end (`end` seconds from the start)."""
        if not self.seen or not self.complete:
            return {}
        return {"first TrainJob": min(self.seen.values()), "last TrainJob": max(self.seen.values()),
                "last Complete": max(self.complete.values()), "end": end}


def line(label: str, marks: dict[str, float]) -> str:
    """`ours  first TrainJob 2.1s, last TrainJob 9.8s, last Complete 31.0s, end 33.2s (after the last: 2.2s)`."""
    if not marks:
        return f"  {label:6} timeline not recorded"
    points = ", ".join(f"{k} {v:.1f}s" for k, v in marks.items())
    return f"  {label:6} {points} (after the last Complete: {marks['end'] - marks['last Complete']:.1f}s)"
