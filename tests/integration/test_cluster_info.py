"""cluster_info against the live simulated cluster, through real `ansible`."""
from __future__ import annotations

import pytest
from kubernetes import client

from tests.ansible_run import ansible_module

from .conftest import SIM, Sim

pytestmark = pytest.mark.clusters(SIM)


def test_cluster_info_reports_the_gb200_cluster(sim: Sim) -> None:
    cordoned = {n.metadata.name for n in client.CoreV1Api(sim.api).list_node().items if n.spec.unschedulable}
    rc, result = ansible_module("cluster_info", {"kubeconfig": str(sim.kubeconfig)}, "--check")
    assert rc == 0, result
    assert (result["platform"], result["gpu_architecture"], result["gpu_product"]) == ("aws", "gb200", "NVIDIA-GB200")
    assert result["gpus_per_node"] == result["catalog_gpus_per_node"] == 4
    assert result["total_nodes"] == 16 - len(cordoned) == result["ready_nodes"]
    assert result["total_gpus"] == 4 * result["total_nodes"]
    assert {n["name"] for n in result["nodes"]} == {f"gpu-node-{i:03d}" for i in range(16)} - cordoned
    assert result["topology"]["key"] == "topology.k8s.aws/network-node-layer-1"
    assert result["changed"] is False


def test_cluster_info_by_clique_and_target(sim: Sim) -> None:
    rc, result = ansible_module("cluster_info", {
        "kubeconfig": str(sim.kubeconfig), "topology_key": "nvidia.com/gpu.clique",
        "target": {"nodeNames": ["gpu-node-000", "gpu-node-001"]}})
    assert rc == 0, result
    assert [r["node_count"] for r in result["topology"]["racks"]] == [2]
    assert result["topology"]["racks"][0]["name"].endswith(".0")


def test_cluster_info_fails_cleanly_without_gpu_nodes(sim: Sim) -> None:
    rc, result = ansible_module("cluster_info", {"kubeconfig": str(sim.kubeconfig),
                                                 "target": {"nodeSelector": {"pool": "none"}}})
    assert rc != 0
    assert result["reason"] == "NodeDiscoveryError"
    assert result["msg"] == "No target nodes found matching orchestration target"
