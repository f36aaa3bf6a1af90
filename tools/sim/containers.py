"""What a pod's status says of its (first) container, as the kubelet reports it: the simulator's agents act on it."""
from __future__ import annotations

from typing import Any

from . import commands
from .stages import EXIT_AT, LAUNCHER, MPIRUN_REACHED, REPLICATED_JOB

Obj = dict[str, Any]


def _first(pod: Obj) -> Obj:
    return ((pod.get("status") or {}).get("containerStatuses") or [{}])[0]


def restarts(pod: Obj) -> int:
    """How often the container has been restarted (the restart the EXIT stage compares with)."""
    return int(_first(pod).get("restartCount") or 0)


def up(pod: Obj) -> bool:
    """Running with every container running and ready: a process others can talk to."""
    status = pod.get("status") or {}
    return (status.get("phase") == "Running" and not (pod.get("metadata") or {}).get("deletionTimestamp")
            and any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
            and all((s.get("state") or {}).get("running") for s in status.get("containerStatuses") or [{}]))


def ended_at(pod: Obj) -> str:
    """When the container last exited with an error ("" when it has not)."""
    for state in (_first(pod).get("state"), _first(pod).get("lastState")):
        terminated = (state or {}).get("terminated") or {}
        if terminated.get("exitCode"):
            return str(terminated.get("finishedAt") or "")
    return ""


def started_at(pod: Obj) -> str:
    """When the running container started ("" when none runs)."""
    return str(((_first(pod).get("state") or {}).get("running") or {}).get("startedAt") or "")


def serves(pod: Obj) -> bool:
    """The pod runs sshd (an MPI worker, `commands.runs_sshd`): it never ends on its own."""
    return any(commands.runs_sshd(c) for c in (pod.get("spec") or {}).get("containers") or [])


def role(pod: Obj) -> str:
    """The pod's replicatedJob in its JobSet."""
    return ((pod.get("metadata") or {}).get("labels") or {}).get(REPLICATED_JOB) or ""


def mpi_launcher(pod: Obj) -> bool:
    """An MPI launcher: the `launcher` replicatedJob, running mpirun (`commands.runs_mpirun`); a launcher that
    runs no mpirun is an ordinary container."""
    return role(pod) == LAUNCHER and any(commands.runs_mpirun(c) for c in (pod.get("spec") or {}).get("containers") or [])


def _marked(pod: Obj, annotation: str) -> bool:
    return ((pod.get("metadata") or {}).get("annotations") or {}).get(annotation) == str(restarts(pod))


def judged(pod: Obj) -> bool:
    """Its current container is already set to end (`stages.exit_annotations`)."""
    return _marked(pod, EXIT_AT)


def reached_workers(launcher: Obj) -> bool:
    """The launcher's current mpirun has reached every worker (`stages.MPIRUN_REACHED`)."""
    return _marked(launcher, MPIRUN_REACHED)
