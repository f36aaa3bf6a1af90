"""The GEMM burn-in's GPU faults (`python -m tools.sim fault NODE --kind gpu-slow|gpu-throttle|gpu-degrade|gpu-wrong|
power-limit --gpu N ...`): checked before anything changes, then kept in `ClusterState.gpu_faults` (node -> GPU index
-> kind -> its parameters), which the burn-in writer (`logs/burn_in_logs`) reads from the state alone; nothing is
left on the node. A GPU may carry several kinds at once; the same kind again replaces it. `--kind none` clears them
with the node's other faults.
"""
from __future__ import annotations

from typing import Any

from .cluster import SimError
from .logs import burn_in_output, dcgm_logs
from .state import ClusterState

KINDS = burn_in_output.KINDS
WITH_FACTOR = ("gpu-slow", "gpu-degrade", "power-limit")
FACTOR_HELP = {"gpu-slow": "the GPU's speed", "gpu-degrade": "the GPU's speed at the run's end",
               "power-limit": "the enforced power limit"}


def checked(kind: str, gpu: int | None, factor: float | None, reason: str | None,
            after_minutes: float | None) -> dict[str, Any]:
    """The fault's parameters as stored, once the flags are found good for `kind` (a burn-in GPU kind or not)."""
    if kind not in KINDS:
        for flag, value in (("--reason", reason), ("--after-minutes", after_minutes)):
            if value is not None:
                raise SimError(f"{flag} is for --kind gpu-throttle only, not {kind!r}")
        return {}
    if gpu is None:
        raise SimError(f"--kind {kind} needs --gpu N: the index of the GPU on the node (0 to its GPU count - 1)")
    if kind in WITH_FACTOR:
        if factor is None:
            raise SimError(f"--kind {kind} needs --factor F: {FACTOR_HELP[kind]} as a fraction of its own, in (0, 1]")
        if not 0 < factor <= 1:
            raise SimError(f"--factor must be in (0, 1], got {factor}")
    elif factor is not None:
        raise SimError(f"--factor is not for --kind {kind} (only {', '.join(WITH_FACTOR)})")
    if kind != "gpu-throttle":
        for flag, value in (("--reason", reason), ("--after-minutes", after_minutes)):
            if value is not None:
                raise SimError(f"{flag} is for --kind gpu-throttle only, not {kind!r}")
        return {"factor": factor} if kind in WITH_FACTOR else {}
    if reason not in burn_in_output.THROTTLE_REASONS:
        raise SimError(f"--kind gpu-throttle needs --reason R: one of {', '.join(burn_in_output.THROTTLE_REASONS)}"
                       + (f", not {reason!r}" if reason is not None else ""))
    if after_minutes is not None and after_minutes < 0:
        raise SimError(f"--after-minutes must be 0 or more, got {after_minutes}")
    return {"reason": reason, "after_minutes": after_minutes or 0.0}


def in_range(target: dict, node: str, gpu: int) -> None:
    """Refuse a GPU index the node does not have."""
    count = dcgm_logs.node_gpus(target)
    if not 0 <= gpu < count:
        raise SimError(f"--gpu {gpu} is out of range for node {node!r}: it has {count} GPUs "
                       f"({'0 to ' + str(count - 1) if count else 'none'})")


def add(st: ClusterState, target: dict, node: str, kind: str, gpu: int, params: dict[str, Any]) -> None:
    """Put the fault on GPU `gpu` of the node (refused when the node has no such GPU)."""
    in_range(target, node, gpu)
    st.gpu_faults.setdefault(node, {}).setdefault(str(gpu), {})[kind] = params
    st.save()
