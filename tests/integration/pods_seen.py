"""What the pods and TrainJobs of a namespace did while a run went on. A finished JobSet deletes its MPI workers
(sshd never exits), as on a real cluster, and NVCRE deletes a failed group's TrainJob, so a test that checks where
the pods of a run ran, or how its TrainJobs ended, records them as it goes."""
from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from kubernetes import client, watch

TRAINER = ("trainer.kubeflow.org", "v1alpha1")
JOB_LABEL = "nvcre.nvidia.com/job"   # on the workers of an NVCRE Job's workload (not its MPI launcher)


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
    logs: dict[str, str] = field(default_factory=dict)
    """The log of each pod that exited non-zero, read as soon as the exit was seen (with `read_logs=True`): the
    pod may be gone moments later."""
    most_running: int = 0
    """The most NVCRE Jobs' pods Running at one moment (one version of the namespace's pods)."""

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


def _follow(stop: threading.Event, lister: Callable[..., Any], args: tuple, on_event: Callable[[str, Any], None],
            on_relist: Callable[[], None]) -> None:
    """Every version of the listed objects until `stop`: a watch, renewed each second from where it left off; if the
    apiserver no longer holds that point (410 Gone), everything is listed again after `on_relist`."""
    version = ""
    while not stop.is_set():
        try:
            for event in watch.Watch().stream(lister, *args, resource_version=version, timeout_seconds=1):
                obj = event["object"]
                on_event(event["type"], obj)
                version = obj["metadata"]["resourceVersion"] if isinstance(obj, dict) else obj.metadata.resource_version
        except client.ApiException as e:
            if e.status != 410:
                raise
            version = ""
            on_relist()


@contextmanager
def watching(api: client.ApiClient, namespace: str, read_logs: bool = False) -> Iterator[Seen]:
    """Record every version of the namespace's pods and TrainJobs while the block runs: watches, not polls, since a
    Job that gives up deletes its pod within moments of its last restart, and NVCRE deletes a failed TrainJob
    within moments of its Failed condition. With `read_logs`, a pod's log is read on the event of its exit."""
    core, custom, seen, stop = client.CoreV1Api(api), client.CustomObjectsApi(api), Seen(), threading.Event()
    live: dict[str, client.V1Pod] = {}

    def pod_event(kind: str, pod: client.V1Pod) -> None:
        seen.add(pod)
        name = pod.metadata.name
        if read_logs and name in seen.exits and name not in seen.logs:
            try:
                seen.logs[name] = core.read_namespaced_pod_log(name, namespace)
            except client.ApiException as e:
                if e.status != 404:  # gone already: its next exit (or another pod's) is read instead
                    raise
        if kind == "DELETED":
            live.pop(pod.metadata.name, None)
        else:
            live[pod.metadata.name] = pod
        seen.most_running = max(seen.most_running, sum(p.status.phase == "Running" and JOB_LABEL in (
            p.metadata.labels or {}) for p in live.values()))

    pods = (stop, core.list_namespaced_pod, (namespace,), pod_event, live.clear)
    trainjobs = (stop, custom.list_namespaced_custom_object, (*TRAINER, namespace, "trainjobs"),
                 lambda _, trainjob: seen.add_trainjob(trainjob), lambda: None)
    threads = [threading.Thread(target=_follow, daemon=True, args=args) for args in (pods, trainjobs)]
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
