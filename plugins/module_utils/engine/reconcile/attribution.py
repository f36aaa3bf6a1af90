"""Failed-node attribution and the failure log of a failed workload (surroundings.md §2.2, §2.3).

On Failed with no node attributed yet, NVCRE blames every node of the group (`WorkloadFailed`), not only the
node whose pod exited first: the pod that failed first is often a victim of a peer (a collective that timed
out), so the group is the unit of blame and fault isolation (diagnose mode) narrows it down. The failure log
points at the pod that exited first, so a user still sees which node it ran on.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..api.vocabulary import ANNOTATION_GROUP_NODES

TAIL_LINES = 800
TAIL_BYTES = 32 * 1024
POD_NOT_FOUND = "PodNotFound"
NO_TERMINATED_CONTAINER = "NoTerminatedContainer"
# Why a failed Job has no log to show, in NVCRE's words (captureFailureLog): a failed Job never carries no record.
POD_NOT_FOUND_TAIL = ("no pods for this Job were found when the failure was recorded; the pod was most likely deleted "
                      "before its logs could be read")
NO_TERMINATED_CONTAINER_TAIL = "pods for this Job were found, but none had a container terminated with a non-zero exit code"
OOM_KILLED = "OOMKilled"

Obj = dict[str, Any]


def pod_nodes(pods: Iterable[Obj]) -> list[str]:
    """Sorted distinct nodes the pods are bound to."""
    return sorted({n for p in pods if (n := (p.get("spec") or {}).get("nodeName"))})


def group_nodes(job: Obj, pods: Iterable[Obj]) -> list[str]:
    """The group's nodes: the `nvcre.nvidia.com/group-nodes` annotation, else (Unpinned) the pods' nodes."""
    annotation = ((job.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION_GROUP_NODES) or ""
    listed = [n.strip() for n in annotation.split(",") if n.strip()]
    return listed or pod_nodes(pods)


def merge_failed_nodes(existing: list[Obj], added: Iterable[Obj]) -> list[Obj]:
    """Existing entries first win on (name, reason); the result sorted by (name, reason)."""
    merged: dict[tuple[str, str], Obj] = {}
    for entry in [*existing, *added]:
        merged.setdefault((entry.get("name", ""), entry.get("reason", "")), entry)
    return [merged[key] for key in sorted(merged)]


def failed_entries(names: Iterable[str], reason: str, message: str) -> list[Obj]:
    return [{"name": name, "reason": reason, "message": message} for name in names]


def tail(text: str) -> str:
    """The last 800 lines, then at most the last 32 KiB (cut at a character boundary)."""
    lines = text.splitlines(keepends=True)[-TAIL_LINES:]
    data = "".join(lines).encode("utf-8")
    if len(data) <= TAIL_BYTES:
        return data.decode("utf-8")
    return data[-TAIL_BYTES:].decode("utf-8", errors="ignore")


def _terminations(pod: Obj) -> Iterable[tuple[str, Obj]]:
    """(container, terminated state) of every container that ended, init containers included."""
    status = pod.get("status") or {}
    for statuses in (status.get("initContainerStatuses"), status.get("containerStatuses")):
        for cs in statuses or []:
            for state in (cs.get("state"), cs.get("lastState")):
                terminated = (state or {}).get("terminated")
                if terminated:
                    yield cs.get("name", ""), terminated
                    break


def failure_log(pods: list[Obj], logs: dict[str, str]) -> Obj:
    """`failureLog` for a failed workload: the first container that exited non-zero (earliest finish,
    then pod and container name), an OOMKilled one preferred; its log tail from `logs["<pod>/<container>"]`."""
    if not pods:
        return {"reason": POD_NOT_FOUND, "tail": POD_NOT_FOUND_TAIL}
    candidates = []
    for pod in pods:
        pod_name = (pod.get("metadata") or {}).get("name", "")
        for container, terminated in _terminations(pod):
            code = int(terminated.get("exitCode") or 0)
            if code != 0:
                rank = (terminated.get("reason") != OOM_KILLED, terminated.get("finishedAt") or "", pod_name,
                        container)
                candidates.append((rank, pod, pod_name, container, terminated, code))
    if not candidates:
        return {"reason": NO_TERMINATED_CONTAINER, "tail": NO_TERMINATED_CONTAINER_TAIL}
    pod, pod_name, container, terminated, code = min(candidates, key=lambda c: c[0])[1:]
    log: Obj = {"podName": pod_name}
    if node := (pod.get("spec") or {}).get("nodeName"):
        log["nodeName"] = node
    log["exitCode"] = code
    log["reason"] = terminated.get("reason") or "Error"
    if text := logs.get(f"{pod_name}/{container}"):
        log["tail"] = tail(text)
    return log


# The Trainer labels the launcher/trainer pods of a TrainJob so; a timeout's log is read from one of them.
ANCESTOR_STEP = "trainer.kubeflow.org/trainjob-ancestor-step"
TIMEOUT = "Timeout"


def timeout_target(pods: list[Obj]) -> tuple[Obj, str] | None:
    """§8.6: whose log a timed-out Job keeps: a pod labelled `…/trainjob-ancestor-step=trainer` first (else the
    first by name), its container `node` first (else its first container); None without pods."""
    if not pods:
        return None
    ranked = sorted(pods, key=lambda p: (((p.get("metadata") or {}).get("labels") or {}).get(ANCESTOR_STEP) != "trainer",
                                         (p.get("metadata") or {}).get("name", "")))
    pod = ranked[0]
    names = [c.get("name", "") for c in (pod.get("spec") or {}).get("containers") or []]
    return pod, "node" if "node" in names else (names[0] if names else "")


def timeout_failure_log(target: tuple[Obj, str] | None, log: str) -> Obj:
    """The `failureLog` of a timed-out Job: reason Timeout, the pod, its node and the log's tail."""
    if target is None:
        return {"reason": POD_NOT_FOUND}
    pod = target[0]
    out: Obj = {"podName": (pod.get("metadata") or {}).get("name", "")}
    if node := (pod.get("spec") or {}).get("nodeName"):
        out["nodeName"] = node
    out["reason"] = TIMEOUT
    if log:
        out["tail"] = tail(log)
    return out
