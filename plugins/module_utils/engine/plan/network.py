"""The network a multi-node NCCL group must run over, and whether its log shows it did (ours, beyond NVCRE).

NCCL falls back to plain TCP (`Using network Socket`) when its fast transport does not come up (a missing EFA
device plugin, an RDMA NIC not handed to the pod, a TCPXO plugin that failed to load), and the run still ends
with a table: a lower figure, which a threshold may or may not catch, and never says why. The platform tells
which transport a group must use; the log's `NCCL INFO Using network <name>` lines tell which it used.
On GB200/GB300 a group inside one NVLink clique must also run over multi-node NVLink: NCCL turns MNNVL off
without a warning when a rank's GPU fabric is not ready (logs/nccl_mnnvl.py), and the network carries the group.
"""
from __future__ import annotations

from typing import Any, NamedTuple

from .mocknodes import CLIQUE_LABEL


class Network(NamedTuple):
    label: str                   # how a user knows it
    names: tuple[str, ...]       # what NCCL prints after `Using network` for it (a name starts with one)


NETWORKS = {
    "efa": Network("EFA (AWS Libfabric)", ("AWS Libfabric", "Libfabric", "OFI")),   # aws-ofi-nccl
    "ib": Network("InfiniBand/RoCE (IB)", ("IB",)),              # NCCL's verbs transport and the IBext plugins
    "tcpxo": Network("TCPXO (FasTrak)", ("FasTrak", "GPUDirectTCPX")),   # GCP's GPUDirect plugins
}


MNNVL = "mnnvl"
MNNVL_LABEL = "NVLink across the clique (MNNVL)"
MNNVL_ARCHITECTURES = ("gb200", "gb300")


def expected(platform: str, gpu_architecture: str, detected: dict[str, Any]) -> str | None:
    """The network family a multi-node group on this platform must use, None when the platform does not say:
    EFA on AWS, TCPXO on GCP H100 once its networks were detected, InfiniBand/RoCE on Azure and OCI and where
    RDMA NICs were detected on-prem."""
    if platform == "aws":
        return "efa"
    if platform == "gcp" and gpu_architecture == "h100" and detected.get("gkeTcpxoNetworks"):
        return "tcpxo"
    if platform in ("azure", "oci") or (platform == "onprem" and detected.get("nicResourceName")):
        return "ib"
    return None


def families(platform: str, gpu_architecture: str, detected: dict[str, Any], topology_key: str) -> list[str]:
    """What a Workflow's multi-node groups must run over: the platform's network family, and MNNVL on GB200/GB300
    when the groups are made by NVLink clique (`topology_key`)."""
    out = [family] if (family := expected(platform, gpu_architecture, detected)) else []
    if gpu_architecture in MNNVL_ARCHITECTURES and topology_key == CLIQUE_LABEL:
        out.append(MNNVL)
    return out


def parse(annotation: str | None) -> list[str]:
    """The families an expected-network annotation names (comma-separated)."""
    return [f.strip() for f in (annotation or "").split(",") if f.strip()]


def for_group(wanted: list[str], nodes: int, domains: int, mnnvl_off: bool) -> list[str]:
    """A group's share of its Workflow's expectations: none for one node (its ranks talk over NVLink), MNNVL
    only for a group inside one clique whose Job does not turn it off (diagnose's no-NVL re-tests)."""
    if nodes < 2:
        return []
    return [f for f in wanted if f != MNNVL or (domains == 1 and not mnnvl_off)]


def mismatch(family: str, status: dict[str, Any]) -> str | None:
    """Why a final BandwidthMeasurement status shows the group did not run over `family`, None when it did or
    the log does not say (no NCCL_DEBUG=INFO)."""
    if family == MNNVL:
        return _without_mnnvl(status)
    transports = status.get("transport") or []
    network = NETWORKS.get(family)
    if network is None or not transports or any(t.startswith(network.names) for t in transports):
        return None
    return (f"NCCL ran over {', '.join(transports)} where {network.label} was expected; check that the pods get "
            "the network devices and NCCL's net plugin, or set the category option checkTransport: false")


def _without_mnnvl(status: dict[str, Any]) -> str | None:
    if status.get("mnnvl") is not False:
        return None
    over = ", ".join(status.get("transport") or []) or "the network"
    hosts = status.get("fabricNotReady") or []
    why = f"; GPU fabric not ready on {', '.join(hosts)}" if hosts else ""
    return (f"NCCL ran over {over} with MNNVL 0 where {MNNVL_LABEL} was expected{why}; check each node's GPU "
            "fabric (nvidia-smi -q, Fabric State) and the group's ComputeDomain, or set the category option "
            "checkTransport: false")
