"""What the pods and TrainJobs of a namespace did while a run went on. A finished JobSet deletes its MPI workers
(sshd never exits), as on a real cluster, and NVCRE deletes a failed group's TrainJob, so a test that checks where
the pods of a run ran, or how its TrainJobs ended, records them as it goes."""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from kubernetes import client, watch

POLL_SECONDS = 0.1  # a pod runs at least a second: every pod is seen
TRAINER = ("trainer.kubeflow.org", "v1alpha1")
JOB_LABEL = "nvcre.nvidia.com/job"   # on every pod of an NVCRE Job's workload


@dataclass
class Seen:
    """Each pod (by name): its last version, the nodes it was bound to, its highest restartCount, the phases it
    went through and the exit messages its containers reported; each TrainJob: the conditions that were true."""

    last: dict[str, client.V1Pod] = field(default_factory=dict)
    nodes: dict[str, set[str]] = field(default_factory=dict)
    restarts: dict[str, int] = field(default_factory=dict)
    phases: dict[str, set[str]] = field(default_factory=dict)
    exits: dict[str, set[str]] = field(default_factory=dict)
    trainjobs: dict[str, set[str]] = field(default_factory=dict)
    most_running: int = 0
    """The most NVCRE Jobs' pods seen Running at one look."""

    def add(self, pod: client.V1Pod) -> None:
        name = pod.metadata.name
        self.last[name] = pod
        if pod.spec.node_name:  # a pod not yet scheduled has none
            self.nodes.setdefault(name, set()).add(pod.spec.node_name)
        self.phases.setdefault(name, set()).add(pod.status.phase or "")
        for status in pod.status.container_statuses or []:
            self.restarts[name] = max(self.restarts.get(name, 0), status.restart_count or 0)
            for state in (status.state, status.last_state):
                if state and state.terminated and state.terminated.exit_code:
                    self.exits.setdefault(name, set()).add(state.terminated.message or "")

    def add_trainjob(self, trainjob: dict) -> None:
        true = {c["type"] for c in (trainjob.get("status") or {}).get("conditions") or [] if c["status"] == "True"}
        self.trainjobs.setdefault(trainjob["metadata"]["name"], set()).update(true)

    def on(self, node: str) -> list[str]:
        return sorted(name for name, nodes in self.nodes.items() if node in nodes)

    def pods(self, **labels: str) -> list[client.V1Pod]:
        """The last version of every pod seen whose labels include `labels` (keys with `/` and `.` as given)."""
        return [p for p in self.last.values() if labels.items() <= (p.metadata.labels or {}).items()]


@contextmanager
def watching(api: client.ApiClient, namespace: str) -> Iterator[Seen]:
    """Record the namespace's pods and TrainJobs every 100 ms while the block runs."""
    core, custom, seen, stop = client.CoreV1Api(api), client.CustomObjectsApi(api), Seen(), threading.Event()

    def look() -> None:
        while not stop.is_set():
            pods = core.list_namespaced_pod(namespace).items
            for pod in pods:
                seen.add(pod)
            seen.most_running = max(seen.most_running, sum(p.status.phase == "Running" and JOB_LABEL in (
                p.metadata.labels or {}) for p in pods))
            time.sleep(POLL_SECONDS)

    def follow_trainjobs() -> None:
        """A watch, not a poll: NVCRE deletes a failed TrainJob within moments of its Failed condition."""
        version = ""
        while not stop.is_set():
            for event in watch.Watch().stream(custom.list_namespaced_custom_object, *TRAINER, namespace, "trainjobs",
                                              resource_version=version, timeout_seconds=1):
                seen.add_trainjob(event["object"])
                version = event["object"]["metadata"]["resourceVersion"]

    threads = [threading.Thread(target=look, daemon=True), threading.Thread(target=follow_trainjobs, daemon=True)]
    for thread in threads:
        thread.start()
    try:
        yield seen
    finally:
        stop.set()
        for thread in threads:
            thread.join()
        for pod in core.list_namespaced_pod(namespace).items:
            seen.add(pod)
