"""The node-drift configuration faults (`python -m tools.sim fault NODE --kind config --field F [--gpu N]`):
checked before anything changes, then kept in `ClusterState.config_faults` (node -> [{field, gpu}]), which the
node-drift writer (`logs/node_drift_logs`) reads from the state alone; nothing is left on the node. A node may
carry several; the same field on the same GPU again adds nothing. A GPU field without `--gpu` is on GPU 0; a NIC
field takes no `--gpu`. `--kind none` clears them with the node's other faults.
"""
from __future__ import annotations

from . import gpu_faults
from .cluster import SimError
from .logs import node_drift_logs, node_drift_output
from .state import ClusterState

FIELDS = node_drift_output.FIELDS


def checked(kind: str, field: str | None, gpu: int | None) -> None:
    """`--field` and `--gpu` of a configuration fault, as far as they can be judged without the cluster."""
    if kind != "config":
        if field is not None:
            raise SimError(f"--field is for --kind config only, not {kind!r}")
        return
    if field is None:
        raise SimError(f"--kind config needs --field F: one of {', '.join(FIELDS)}")
    if field not in FIELDS:
        raise SimError(f"unknown --field {field!r}: must be one of {', '.join(FIELDS)}")
    if gpu is not None and field in node_drift_output.NIC_FIELDS:
        raise SimError(f"--gpu is not for --field {field}: it is the node's NICs, not a GPU")


def add(st: ClusterState, target: dict, node: str, field: str, gpu: int | None) -> None:
    """Put the fault on the node (refused when it has no such GPU, or no RDMA NIC for a NIC field)."""
    if field in node_drift_output.NIC_FIELDS:
        if not node_drift_output.nic_ports(node_drift_logs.node_of(target), []):
            raise SimError(f"node {node!r} has no RDMA NIC (its platform's NICs are not RDMA): --field {field} "
                           "needs one")
        entry: dict = {"field": field, "gpu": None}
    else:
        index = 0 if gpu is None else gpu
        gpu_faults.in_range(target, node, index)
        entry = {"field": field, "gpu": index}
    kept = st.config_faults.setdefault(node, [])
    if entry not in kept:
        kept.append(entry)
    st.save()
