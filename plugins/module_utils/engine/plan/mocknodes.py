"""Built-in mock Node sets for offline rendering (like nvcrectl's embedded `pkg/render/nodes/*.yaml`).

The node shapes are those of the local simulated cluster (tools/sim/profiles.py): providerID and
topology labels per platform, GPU product and count, `nvidia.com/gpu.present`, hostname, CPU
architecture, and 18-node NVLink cliques (`nvidia.com/gpu.clique`) for GB200/GB300.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..api.errors import InputError

CLIQUE_LABEL = "nvidia.com/gpu.clique"
CLIQUE_SIZE = 18


def _aws(i: int) -> tuple[str, dict[str, str]]:
    return f"aws:///us-east-1a/i-{i:017x}", {
        "topology.kubernetes.io/region": "us-east-1", "topology.kubernetes.io/zone": "us-east-1a",
        "topology.k8s.aws/network-node-layer-1": "nn-1a000001",
        "topology.k8s.aws/network-node-layer-2": f"nn-2b{i // 32:06d}",
        "topology.k8s.aws/network-node-layer-3": f"nn-3c{i // 8:06d}"}


def _gcp(i: int) -> tuple[str, dict[str, str]]:
    return f"gce://cre-sim/us-central1-a/gpu-{i:05d}", {
        "topology.kubernetes.io/region": "us-central1", "topology.kubernetes.io/zone": "us-central1-a",
        "cloud.google.com/gce-topology-block": f"block-{i // 32:04d}",
        "cloud.google.com/gce-topology-subblock": f"subblock-{i // 8:04d}"}


def _azure(i: int) -> tuple[str, dict[str, str]]:
    return (f"azure:///subscriptions/0000/resourceGroups/cre-sim/providers/Microsoft.Compute/"
            f"virtualMachineScaleSets/gpu/virtualMachines/{i}"), {
        "topology.kubernetes.io/region": "eastus", "topology.kubernetes.io/zone": "eastus-1",
        "kubernetes.azure.com/ppg": f"ppg-{i // 16:04d}"}


def _oci(i: int) -> tuple[str, dict[str, str]]:
    return f"ocid1.instance.oc1.iad.sim{i:012d}", {
        "topology.kubernetes.io/region": "us-ashburn-1", "topology.kubernetes.io/zone": "US-ASHBURN-AD-1",
        "oci.oraclecloud.com/rdma.local_block_id": f"lb-{i // 16:04d}"}


def _onprem(i: int) -> tuple[str, dict[str, str]]:
    return "", {"topology.kubernetes.io/zone": "dc1", "rack": f"rack-{i // 8:03d}"}


def _mistral(i: int) -> tuple[str, dict[str, str]]:
    return f"metal3://cre-sim/gpu-{i:05d}/gpu-{i:05d}", {"topology.kubernetes.io/zone": "par1"}


# platform -> providerID and topology labels of node i
PLATFORMS: dict[str, Callable[[int], tuple[str, dict[str, str]]]] = {
    "aws": _aws, "gcp": _gcp, "azure": _azure, "oci": _oci, "onprem": _onprem, "mistral": _mistral}

# arch -> (nvidia.com/gpu.product, GPUs per node, instance type, NVLink clique size in nodes or 0)
ARCHITECTURES: dict[str, tuple[str, int, str, int]] = {
    "h100": ("NVIDIA-H100-80GB-HBM3", 8, "p5.48xlarge", 0),
    "gb200": ("NVIDIA-GB200", 4, "p6e-gb200.36xlarge", CLIQUE_SIZE),
    "gb300": ("NVIDIA-GB300-NVL72", 4, "gb300-nvl72", CLIQUE_SIZE),
    "b300": ("NVIDIA-B300-SXM6-AC", 8, "b300-hgx", 0),
}


def mock_nodes(platform: str, gpu_architecture: str, node_count: int = 1) -> list[dict[str, Any]]:
    """`node_count` GPU Nodes of one platform and GPU architecture, named `gpu-node-<i>` (zero-padded)."""
    if platform not in PLATFORMS:
        raise InputError("platform", f'unsupported value "{platform}": must be one of {", ".join(PLATFORMS)}')
    if gpu_architecture not in ARCHITECTURES:
        raise InputError("gpu_architecture",
                         f'unsupported value "{gpu_architecture}": must be one of {", ".join(ARCHITECTURES)}')
    if isinstance(node_count, bool) or not isinstance(node_count, int) or node_count < 1:
        raise InputError("node_count", f"must be an integer >= 1, got {node_count!r}")
    product, gpus, instance_type, clique_size = ARCHITECTURES[gpu_architecture]
    width = max(3, len(str(node_count - 1)))
    capacity = {"cpu": "144", "memory": "2000Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}
    nodes = []
    for i in range(node_count):
        name = f"gpu-node-{i:0{width}d}"
        provider_id, topology = PLATFORMS[platform](i)
        labels = {
            "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "arm64" if gpu_architecture.startswith("gb") else "amd64",
            "node.kubernetes.io/instance-type": instance_type,
            "nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": product,
            "nvidia.com/gpu.count": str(gpus), **topology}
        if clique_size:
            labels[CLIQUE_LABEL] = f"a1b2c3d4-0000-4000-8000-{platform:0>12}.{i // clique_size}"
        nodes.append({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "spec": {"providerID": provider_id} if provider_id else {},
            "status": {"allocatable": dict(capacity), "capacity": dict(capacity)}})
    return nodes
