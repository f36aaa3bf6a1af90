"""How one rank's failure spreads through its run, as the launchers of the catalog's runtimes spread it.

A container's own exit is the kubelet's business (the fault stages, then `stages.RESTART`). What the other pods
of the run do about it is the launcher's:

- mpirun (an MPI JobSet: a `launcher` pod running mpirun and its `node` workers running sshd, as `commands`
  reads their command lines): mpirun reaches every worker over ssh when it starts and keeps a daemon on each
  while it runs. A launcher seen running with every worker up is marked as having reached them
  (`stages.MPIRUN_REACHED`: only then can it complete and print its table); one that runs while a worker is not
  up (not Running and ready: crash-looping, failed, gone), or beside a worker that runs no sshd (ssh is refused
  there), prints ssh's error and ORTE's help text (`mpirun_output`) and exits 1 with ORTE's message; the
  launcher's Job then retries it as its restart policy says. A worker on a stalled node (`sim fault
  --kind stall`) answers ssh but its ranks hang in the first collective: the launcher is never marked, so it runs
  on, printing no table, until NVCRE's `timeoutPerJob` (or the catalog's `timeout 3600`) ends it.
- torchrun (every other multi-pod JobSet): the ranks of a run form one process group; when one exits with an
  error, the others' collectives fail and they exit too (torchrun's default `--max-restarts 0`), so every pod of
  the run restarts (or fails) together.

Each pass looks at the Job pods of the workload JobSets (the agent's pod cache) and annotates the pods whose
containers reached their workers or must end (`stages.EXIT`), after writing what mpirun prints as it fails;
a container is judged once per restart.
"""
from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kubernetes import client

from . import stages
from .cache import Cache
from .containers import ended_at, judged, mpi_launcher, reached_workers, restarts, serves, started_at, up
from .logs import mpirun_output, training_logs, workload_logs

Obj = dict[str, Any]
MPIRUN_NO_DAEMON = ("ORTE was unable to reliably start one or more daemons: ssh to worker {worker} failed "
                    "(Connection refused)")
MPIRUN_LOST_DAEMON = ("ORTE has lost communication with a remote daemon on worker {worker}: we cannot recover "
                      "from this failure, and therefore will terminate the job")
TORCH_PEER_FAILED = ("torch.distributed.DistBackendError: NCCL communicator was aborted: rank {rank} of the "
                     "process group (pod {pod}) exited")


def _when(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _name(pod: Obj) -> str:
    return str(pod["metadata"]["name"])


def judge(group: list[Obj], stalled: frozenset[str] = frozenset()) -> dict[str, tuple[dict[str, str], list[str]]]:
    """pod name -> (the annotations to set on it now, the lines its container prints as it ends), for the pods
    of one JobSet: a launcher that reached all its workers is marked so, unless one of them is on a `stalled`
    node; a container that must end gets its exit."""
    workers = sorted((p for p in group if serves(p)), key=_name)
    launchers = [p for p in group if mpi_launcher(p)]
    if workers or launchers:
        return _mpirun(workers, launchers, group, stalled)
    return {name: (marks, []) for name, marks in _torchrun(group).items()}


def verdicts(group: list[Obj], stalled: frozenset[str] = frozenset()) -> dict[str, dict[str, str]]:
    """pod name -> the annotations to set on it now (`judge`)."""
    return {name: marks for name, (marks, _lines) in judge(group, stalled).items()}


def _mpirun(workers: list[Obj], launchers: list[Obj], group: list[Obj],
            stalled: frozenset[str]) -> dict[str, tuple[dict[str, str], list[str]]]:
    """The launchers' verdicts: mpirun reaches its workers, or fails at a worker that is down or refuses ssh."""
    down = next((w for w in workers if not up(w)), None)
    refusing = next((p for p in sorted(group, key=_name) if not mpi_launcher(p) and not serves(p)), None)
    out = {}
    for launcher in (p for p in launchers if up(p) and not judged(p)):
        reached = reached_workers(launcher)
        # Once mpirun has reached its workers only a worker going down ends it; before, a refused ssh does too.
        failed = down if down is not None or reached else refusing
        if failed is not None:
            lost = reached and failed is down
            message = (MPIRUN_LOST_DAEMON if lost else MPIRUN_NO_DAEMON).format(worker=_name(failed))
            lines = [] if lost else mpirun_output.failed_daemon_launch(mpirun_output.ssh_host(failed))
            out[_name(launcher)] = (stages.exit_annotations(restarts(launcher), 1, message), lines)
        elif not reached and not any(w["spec"].get("nodeName") in stalled for w in workers):
            out[_name(launcher)] = ({stages.MPIRUN_REACHED: str(restarts(launcher))}, [])
    return out


def _torchrun(group: list[Obj]) -> dict[str, dict[str, str]]:
    """torchrun: a rank that exited with an error after a peer's container started ends that peer."""
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


def spread(core: client.CoreV1Api, custom: client.CustomObjectsApi, logs_dir: Path, pods_cache: Cache,
           nodes_cache: Cache) -> list[str]:
    """One pass: mark the launchers that reached their workers, end the containers whose run lost a rank (their
    output in their log first, as a process prints before it exits); returns the pods annotated."""
    done = []
    stalled = frozenset(n["metadata"]["name"] for n in nodes_cache.items()
                        if ((n["metadata"].get("annotations") or {}).get(training_logs.FAULT_ANNOTATION) == "stall"))
    for group in workload_logs.by_jobset(pods_cache.items()).values():
        for name, (marks, lines) in judge(group, stalled).items():
            pod = next(p for p in group if _name(p) == name)
            if lines:
                now = datetime.now(UTC)
                workload_logs.serve(custom, pod, logs_dir).write_text(
                    "".join(workload_logs.cri_line(line, now) for line in lines))
            core.patch_namespaced_pod(name, pod["metadata"]["namespace"], {"metadata": {"annotations": marks}})
            done.append(name)
    return done
