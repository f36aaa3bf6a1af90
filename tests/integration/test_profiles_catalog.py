"""Every single-platform sim profile advertises what the catalog's NCCL all-reduce and loopback request on that
platform (EFA, hugepages, RDMA NICs, ComputeDomain channels), so their pods schedule and the categories certify;
the loopback's bus bandwidth is measured against a threshold (on GB200/GB300 its LogProfile name is also a string
its runtime and ComputeDomain share, which NVCRE's renaming would turn into a per-group name)."""
from __future__ import annotations

import pytest

from tests.ansible_run import ansible_module

CATEGORY = {"domain": "communication", "variant": "nccl-all-reduce", "options": {"testScale": "intra-node"}}
LOOPBACK = {"domain": "communication", "variant": "nccl-loopback", "options": {
    "thresholds": {"busBandwidthGBps": "value >= 100.0"}, "measurementTimeout": "60s"}}


# The last two share their clusters with the next modules of their family (test_goodput, test_secrets): they stay up.
PROFILES = [
    "gcp-h100",     # TCPXO: GKE multi-networking annotations only, no node resource
    "azure-h100",   # nvidia.com/mlnxnics
    "oci-gb300",    # nvidia.com/mlnxnics, ComputeDomain channel claim
    "onprem-b300",  # GPUs only
    "aws-gb200",    # vpc.amazonaws.com/efa, hugepages-2Mi, ComputeDomain channel claim
    "aws-h100",     # vpc.amazonaws.com/efa
]
pytestmark = pytest.mark.clusters(*((profile, 2) for profile in PROFILES))


@pytest.mark.parametrize("profile", PROFILES)
def test_catalog_all_reduce_certifies_every_node(shared, profile: str) -> None:
    sim = shared(profile, 2)
    rc, result = ansible_module("certification_run", {
        "kubeconfig": str(sim.kubeconfig), "name": "pc", "namespace": "default", "categories": [CATEGORY, LOOPBACK],
        "poll_interval": 0.5, "timeout": 600}, timeout=700)
    assert rc == 0, result
    for category in result["categories"]:
        assert category["status"] == "Succeeded", category
        assert category["succeeded_nodes"] == ["gpu-node-000", "gpu-node-001"]
        assert category["failed_nodes"] == []
    assert result["phase"] == "Succeeded"
