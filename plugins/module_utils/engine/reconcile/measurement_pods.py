"""Which pod's log a measurement reads (spec/measurements.md §1.5), from the pods of the Job's workload."""
from __future__ import annotations

from typing import Any

from ..api.objects import meta

JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"
REPLICATED_JOB = "jobset.sigs.k8s.io/replicatedjob-name"
RESTART_ATTEMPT = "jobset.sigs.k8s.io/restart-attempt"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
DEFAULT_BANDWIDTH_JOB = "node"
_PHASE_RANK = {"Succeeded": 0, "Running": 1, "Failed": 2}

Obj = dict[str, Any]


def _int_label(pod: Obj, key: str) -> int:
    try:
        return int((meta(pod).get("labels") or {}).get(key, "0"))
    except ValueError:
        return 0


def workload_pods(pods: list[Obj], workload: str, replicated_job: str = "") -> list[Obj]:
    """The workload's pods (of one replicatedJob when named), sorted by completion index."""
    mine = [p for p in pods if (meta(p).get("labels") or {}).get(JOBSET_NAME) == workload
            and (not replicated_job or (meta(p).get("labels") or {}).get(REPLICATED_JOB) == replicated_job)]
    return sorted(mine, key=lambda p: _int_label(p, COMPLETION_INDEX))


def goodput_pods(pods: list[Obj], workload: str) -> tuple[Obj | None, Obj | None]:
    """(worker-0, lastWorker) of a GoodputMeasurement: the lowest and the highest completion index among the
    workload's pods of every replicatedJob; lastWorker is None with one pod. Pods being deleted are left out:
    after a checkpoint restart the old run's pods carry the same jobset name until they are gone, and reading
    them would time the new run from the old run's log."""
    mine = [p for p in workload_pods(pods, workload) if not meta(p).get("deletionTimestamp")] if workload else []
    if not mine:
        return None, None
    return mine[0], mine[-1] if len(mine) > 1 else None


def bandwidth_pod(pods: list[Obj], workload: str, profile: Obj) -> Obj | None:
    """The bandwidth pod: lowest completion index, then Succeeded < Running < Failed < other, then the latest
    restart attempt, then the newest, then by name; from `workerStrategy.replicatedJobName` (else `node`)."""
    replicated = ((profile.get("spec") or {}).get("workerStrategy") or {}).get("replicatedJobName") or DEFAULT_BANDWIDTH_JOB
    candidates = workload_pods(pods, workload, replicated)
    if not candidates:
        return None
    # Sort stably from the last key to the first, so each key breaks the ties of the ones before it.
    candidates.sort(key=lambda p: meta(p).get("name", ""))
    candidates.sort(key=lambda p: meta(p).get("creationTimestamp", ""), reverse=True)
    candidates.sort(key=lambda p: _int_label(p, RESTART_ATTEMPT), reverse=True)
    candidates.sort(key=lambda p: _PHASE_RANK.get((p.get("status") or {}).get("phase", ""), 3))
    candidates.sort(key=lambda p: _int_label(p, COMPLETION_INDEX))
    return candidates[0]


def no_pod_message(namespace: str, workload: str, profile: Obj) -> str:
    replicated = ((profile.get("spec") or {}).get("workerStrategy") or {}).get("replicatedJobName") or DEFAULT_BANDWIDTH_JOB
    return f"no pods found for {namespace}/{workload} replicatedJob {replicated}"


def container_waiting(pod: Obj, container: str) -> bool:
    """The read container sits in a waiting state (e.g. CrashLoopBackOff): nothing new to read."""
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        if (not container or status.get("name") == container) and (status.get("state") or {}).get("waiting"):
            return True
    return False


def finished_at(pod: Obj, container: str) -> str:
    """When the read container last terminated (its current or last state), "" when it has not."""
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        if not container or status.get("name") == container:
            for state in (status.get("state"), status.get("lastState")):
                when = ((state or {}).get("terminated") or {}).get("finishedAt")
                if when:
                    return str(when)
    return ""


def restart_count(pod: Obj, container: str) -> int:
    return max((int(s.get("restartCount") or 0) for s in (pod.get("status") or {}).get("containerStatuses") or []
                if not container or s.get("name") == container), default=0)
