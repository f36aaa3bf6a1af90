"""The network a multi-node NCCL group must run over, and whether its log shows it did (ours, beyond NVCRE).

NCCL falls back to plain TCP (`Using network Socket`) when its fast transport does not come up (a missing EFA
device plugin, an RDMA NIC not handed to the pod, a TCPXO plugin that failed to load), and the run still ends
with a table: a lower figure, which a threshold may or may not catch, and never says why. The platform tells
which transport a group must use; the log's `NCCL INFO Using network <name>` lines tell which it used.
"""
from __future__ import annotations

from typing import Any, NamedTuple


class Network(NamedTuple):
    label: str                   # how a user knows it
    names: tuple[str, ...]       # what NCCL prints after `Using network` for it (a name starts with one)


NETWORKS = {
    "efa": Network("EFA (AWS Libfabric)", ("AWS Libfabric", "Libfabric", "OFI")),   # aws-ofi-nccl
    "ib": Network("InfiniBand/RoCE (IB)", ("IB",)),              # NCCL's verbs transport and the IBext plugins
    "tcpxo": Network("TCPXO (FasTrak)", ("FasTrak", "GPUDirectTCPX")),   # GCP's GPUDirect plugins
}


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


def mismatch(family: str, transports: list[str]) -> str | None:
    """Why the transports NCCL named are not the family's, None when one of them is (or NCCL named none: a log
    without NCCL_DEBUG=INFO says nothing either way)."""
    network = NETWORKS.get(family)
    if network is None or not transports or any(t.startswith(network.names) for t in transports):
        return None
    return (f"NCCL ran over {', '.join(transports)} where {network.label} was expected; check that the pods get "
            "the network devices and NCCL's net plugin, or set the category option checkTransport: false")
