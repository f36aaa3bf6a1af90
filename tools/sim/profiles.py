"""Node profiles of the simulated GPU clusters: real labels, providerIDs and capacity per platform."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Platform:
    """How one cloud names and places its nodes."""

    provider_id: Callable[[int], str]
    topology: Callable[[int], dict[str, str]]


@dataclass(frozen=True)
class Gpu:
    """A node shape. The bus bandwidths (GB/s) are our own nominal figures for what the simulated nccl-tests
    print at the largest message size: across nodes, and on one node (loopback). GB200/GB300 groups run over
    multi-node NVLink (MNNVL) unless their pods set `NCCL_MNNVL_ENABLE=0`; then they print `no_nvl_bus_gbps`."""

    product: str
    count: int
    instance_type: str
    nominal_bus_gbps: float
    loopback_bus_gbps: float
    clique_size: int = 0  # NVLink domain size in nodes; 0 = no `nvidia.com/gpu.clique` label
    no_nvl_bus_gbps: float = 0.0  # across nodes with MNNVL off (the network alone); 0 = no NVLink domain


CLIQUE_LABEL = "nvidia.com/gpu.clique"
# The labels that name a node's topology domain (rack, block, NVLink clique): where `fault --kind link` looks
# a domain up, most specific first.
DOMAIN_LABELS = (CLIQUE_LABEL, "topology.k8s.aws/network-node-layer-3", "topology.k8s.aws/network-node-layer-2",
                 "topology.k8s.aws/network-node-layer-1", "cloud.google.com/gce-topology-subblock",
                 "cloud.google.com/gce-topology-block", "kubernetes.azure.com/ppg",
                 "oci.oraclecloud.com/rdma.local_block_id", "rack", "topology.kubernetes.io/zone")


def _aws_topology(i: int) -> dict[str, str]:
    return {
        "topology.kubernetes.io/region": "us-east-1",
        "topology.kubernetes.io/zone": "us-east-1a",
        "topology.k8s.aws/network-node-layer-1": "nn-1a000001",
        "topology.k8s.aws/network-node-layer-2": f"nn-2b{i // 32:06d}",
        "topology.k8s.aws/network-node-layer-3": f"nn-3c{i // 8:06d}",
    }


def _gcp_topology(i: int) -> dict[str, str]:
    return {
        "topology.kubernetes.io/region": "us-central1",
        "topology.kubernetes.io/zone": "us-central1-a",
        "cloud.google.com/gce-topology-block": f"block-{i // 32:04d}",
        "cloud.google.com/gce-topology-subblock": f"subblock-{i // 8:04d}",
    }


def _azure_topology(i: int) -> dict[str, str]:
    return {
        "topology.kubernetes.io/region": "eastus",
        "topology.kubernetes.io/zone": "eastus-1",
        "kubernetes.azure.com/ppg": f"ppg-{i // 16:04d}",
    }


def _oci_topology(i: int) -> dict[str, str]:
    return {
        "topology.kubernetes.io/region": "us-ashburn-1",
        "topology.kubernetes.io/zone": "US-ASHBURN-AD-1",
        "oci.oraclecloud.com/rdma.local_block_id": f"lb-{i // 16:04d}",
    }


def _onprem_topology(i: int) -> dict[str, str]:
    return {"topology.kubernetes.io/zone": "dc1", "rack": f"rack-{i // 8:03d}"}


PLATFORMS: dict[str, Platform] = {
    "aws": Platform(lambda i: f"aws:///us-east-1a/i-{i:017x}", _aws_topology),
    "gcp": Platform(lambda i: f"gce://cre-sim/us-central1-a/gpu-{i:05d}", _gcp_topology),
    "azure": Platform(
        lambda i: f"azure:///subscriptions/0000/resourceGroups/cre-sim/providers/"
        f"Microsoft.Compute/virtualMachineScaleSets/gpu/virtualMachines/{i}",
        _azure_topology,
    ),
    "oci": Platform(lambda i: f"ocid1.instance.oc1.iad.sim{i:012d}", _oci_topology),
    "onprem": Platform(lambda i: "", _onprem_topology),
}

GPUS: dict[str, Gpu] = {
    "h100": Gpu("NVIDIA-H100-80GB-HBM3", 8, "p5.48xlarge", 360.0, 480.0),
    "gb200": Gpu("NVIDIA-GB200", 4, "p6e-gb200.36xlarge", 840.0, 700.0, clique_size=18,
                 no_nvl_bus_gbps=400.0),
    "gb300": Gpu("NVIDIA-GB300-NVL72", 4, "gb300-nvl72", 900.0, 760.0, clique_size=18,
                 no_nvl_bus_gbps=440.0),
    "b300": Gpu("NVIDIA-B300-SXM6-AC", 8, "b300-hgx", 720.0, 800.0),
}


# Device-plugin resources a node of (platform, gpu) advertises besides its GPUs, as the catalog's platform
# patches request them: AWS EFA interfaces (32 on p5.48xlarge, one 400G EFAv4 NIC per GPU on p6e-gb200) and
# the 2 MiB hugepages the EFA AMIs preallocate (5128 pages); the RDMA NICs the NVIDIA Network Operator's
# device plugin exposes as `nvidia.com/mlnxnics` (Azure ND H100 v5: 8 x 400G NDR InfiniBand ConnectX-7, one per
# GPU; OCI BM.GPU.GB300.4: 4 x 800G ConnectX-8 RDMA NICs, one per GPU, the catalog's OCI gb300 mlnxPerNode).
# GCP a3-megagpu TCPXO NICs are GKE multi-networking pod annotations, not node resources.
EXTRA_CAPACITY: dict[tuple[str, str], dict[str, str]] = {
    ("aws", "h100"): {"vpc.amazonaws.com/efa": "32", "hugepages-2Mi": "10256Mi"},
    ("aws", "gb200"): {"vpc.amazonaws.com/efa": "4", "hugepages-2Mi": "10256Mi"},
    ("azure", "h100"): {"nvidia.com/mlnxnics": "8"},
    ("oci", "gb300"): {"nvidia.com/mlnxnics": "4"},
}


@dataclass(frozen=True)
class Profile:
    """A profile is a list of (platform, gpu) kinds that the nodes cycle through."""

    kinds: tuple[tuple[str, str], ...]
    description: str = field(default="")


PROFILES: dict[str, Profile] = {
    "aws-h100": Profile((("aws", "h100"),), "AWS p5 nodes, 8 x H100"),
    "aws-gb200": Profile((("aws", "gb200"),), "AWS GB200 NVL72 nodes, 4 GPUs, 18-node cliques"),
    "gcp-h100": Profile((("gcp", "h100"),), "GCP a3 nodes, 8 x H100"),
    "azure-h100": Profile((("azure", "h100"),), "Azure ND H100 v5 nodes"),
    "oci-gb300": Profile((("oci", "gb300"),), "OCI GB300 NVL72 nodes, 18-node cliques"),
    "onprem-b300": Profile((("onprem", "b300"),), "On-prem B300 HGX nodes, no providerID"),
    "mixed-gpu": Profile((("aws", "h100"), ("aws", "gb200")), "AWS H100 and GB200 nodes together"),
    "mixed-platform": Profile((("aws", "h100"), ("gcp", "h100")), "AWS and GCP H100 nodes together"),
}


def node_names(count: int) -> list[str]:
    return [f"gpu-node-{i:03d}" for i in range(count)]


def build_nodes(profile: str, count: int) -> list[dict]:
    """The Node objects of a profile, status included (create keeps it, as kubelet registration does)."""
    kinds = PROFILES[profile].kinds
    nodes = []
    for i, name in enumerate(node_names(count)):
        platform_name, gpu_name = kinds[i % len(kinds)]
        platform, gpu = PLATFORMS[platform_name], GPUS[gpu_name]
        labels = {
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "arm64" if gpu_name.startswith("gb") else "amd64",
            "node.kubernetes.io/instance-type": gpu.instance_type,
            "nvidia.com/gpu.present": "true",
            "nvidia.com/gpu.product": gpu.product,
            "nvidia.com/gpu.count": str(gpu.count),
            "type": "kwok",
            **platform.topology(i),
        }
        if gpu.clique_size:
            labels[CLIQUE_LABEL] = f"{_cluster_uuid(platform_name)}.{i // gpu.clique_size}"
        capacity = {"cpu": "144", "memory": "2000Gi", "pods": "110", "nvidia.com/gpu": str(gpu.count),
                    **EXTRA_CAPACITY.get((platform_name, gpu_name), {})}
        spec: dict = {"podCIDR": f"10.{64 + i // 256}.{i % 256}.0/24"}
        if platform.provider_id(i):
            spec["providerID"] = platform.provider_id(i)
        nodes.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": labels, "annotations": {"kwok.x-k8s.io/node": "fake"}},
                "spec": spec,
                "status": {"allocatable": capacity, "capacity": dict(capacity)},
            }
        )
    return nodes


def _cluster_uuid(platform: str) -> str:
    return {"aws": "a1b2c3d4-0000-4000-8000-00000000aws0", "oci": "a1b2c3d4-0000-4000-8000-00000000oci0"}.get(
        platform, "a1b2c3d4-0000-4000-8000-000000000000"
    )
