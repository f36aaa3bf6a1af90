"""How one rank's failure spreads through its run, as the launchers of the catalog's runtimes spread it.

A container's own exit is the kubelet's business (the fault stages, then `stages.RESTART`). What the other pods
of the run do about it is the launcher's:

- mpirun (an MPI JobSet: a `launcher` pod and its `node` workers running sshd): mpirun reaches every worker
  when it starts and keeps a daemon on each while it runs. A launcher seen running with every worker up is
  marked as having reached them (`stages.MPIRUN_REACHED`: only then can it complete and print its table); one
  that runs while a worker is not up (not Running and ready: crash-looping, failed, gone) exits 1 with ORTE's
  message; the launcher's Job then retries it as its restart policy says. A worker on a stalled node (`sim fault
  --kind stall`) answers ssh but its ranks hang in the first collective: the launcher is never marked, so it runs
  on, printing no table, until NVCRE's `timeoutPerJob` (or the catalog's `timeout 3600`) ends it.
- torchrun (every other multi-pod JobSet): the ranks of a run form one process group; when one exits with an
  error, the others' collectives fail and they exit too (torchrun's default `--max-restarts 0`), so every pod of
  the run restarts (or fails) together.

Each pass looks at the Job pods of the workload JobSets (the agent's pod cache) and annotates the pods whose
containers reached their workers or must end (`stages.EXIT`); a container is judged once per restart.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any

from kubernetes import client

from . import stages, training_logs
from .cache import Cache
from .containers import ended_at, judged, reached_workers, restarts, serves, started_at, up
from .workload_logs import by_jobset

Obj = dict[str, Any]
MPIRUN_NO_DAEMON = ("ORTE was unable to reliably start one or more daemons: ssh to worker {worker} failed "
                    "(Connection refused)")
MPIRUN_LOST_DAEMON = ("ORTE has lost communication with a remote daemon on worker {worker}: we cannot recover "
                      "from this failure, and therefore will terminate the job")
TORCH_PEER_FAILED = ("torch.distributed.DistBackendError: NCCL communicator was aborted: rank {rank} of the "
                     "process group (pod {pod}) exited")


def _role(pod: Obj) -> str:
    return ((pod.get("metadata") or {}).get("labels") or {}).get(stages.REPLICATED_JOB) or ""


def _when(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def verdicts(group: list[Obj], stalled: frozenset[str] = frozenset()) -> dict[str, dict[str, str]]:
    """pod name -> the annotations to set on it now, for the pods of one JobSet: a launcher that reached all its
    workers is marked so, unless one of them is on a `stalled` node; a container that must end gets its exit."""
    workers = sorted((p for p in group if serves(p)), key=lambda p: p["metadata"]["name"])
    if workers:
        down = next((w["metadata"]["name"] for w in workers if not up(w)), None)
        out = {}
        for launcher in (p for p in group if _role(p) == stages.LAUNCHER and up(p) and not judged(p)):
            name = launcher["metadata"]["name"]
            if down is not None:
                message = MPIRUN_LOST_DAEMON if reached_workers(launcher) else MPIRUN_NO_DAEMON
                out[name] = stages.exit_annotations(restarts(launcher), 1, message.format(worker=down))
            elif not reached_workers(launcher) and not any(w["spec"].get("nodeName") in stalled for w in workers):
                out[name] = {stages.MPIRUN_REACHED: str(restarts(launcher))}
        return out
    # torchrun: a rank that exited with an error after a peer's container started ends that peer.
    failed = [(p, ended_at(p)) for p in group if ended_at(p)]
    out = {}
    for peer in (p for p in group if up(p) and not judged(p)):
        started = started_at(peer)
        cause = next((f for f, ended in failed if f is not peer and started and _when(ended) >= _when(started)), None)
        if cause is not None:
            rank = ((cause.get("metadata") or {}).get("labels") or {}).get("batch.kubernetes.io/job-completion-index", "0")
            out[peer["metadata"]["name"]] = stages.exit_annotations(
                restarts(peer), 1, TORCH_PEER_FAILED.format(rank=rank, pod=cause["metadata"]["name"]))
    return out


def spread(core: client.CoreV1Api, pods_cache: Cache, nodes_cache: Cache) -> list[str]:
    """One pass: mark the launchers that reached their workers, end the containers whose run lost a rank;
    returns the pods annotated."""
    done = []
    stalled = frozenset(n["metadata"]["name"] for n in nodes_cache.items()
                        if ((n["metadata"].get("annotations") or {}).get(training_logs.FAULT_ANNOTATION) == "stall"))
    for group in by_jobset(pods_cache.items()).values():
        if len(group) < 2:
            continue
        for name, marks in verdicts(group, stalled).items():
            pod = next(p for p in group if p["metadata"]["name"] == name)
            core.patch_namespaced_pod(name, pod["metadata"]["namespace"], {"metadata": {"annotations": marks}})
            done.append(name)
    return done
