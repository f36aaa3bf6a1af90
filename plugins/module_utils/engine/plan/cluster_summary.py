"""What `nvcrectl cluster info` shows: platform, GPU, nodes with readiness, topology racks, warnings."""
from __future__ import annotations

from collections import Counter
from typing import Any, TypedDict

from ..api.errors import WorkflowFailure
from ..catalog import entries
from . import detect

# Default topology label per platform (surroundings.md §4.2); other platforms have none.
TOPOLOGY_KEYS = {
    "aws": "topology.k8s.aws/network-node-layer-1",
    "gcp": "cloud.google.com/gce-topology-block",
    "azure": "kubernetes.azure.com/ppg",
}


class NodeRow(TypedDict):
    """One row of the summary's `nodes`."""

    name: str
    gpus: int
    ready: bool
    rack: str


def _ready(node: dict[str, Any]) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (node.get("status") or {}).get("conditions") or [])


def _gpus(node: dict[str, Any]) -> int:
    raw = str(((node.get("status") or {}).get("allocatable") or {}).get(detect.GPU_RESOURCE, "0"))
    return int(raw) if raw.isdigit() else 0


def summarize(nodes: list[dict[str, Any]], target: dict[str, Any] | None = None,
              topology_key: str = "") -> dict[str, Any]:
    """The cluster's GPU summary (snake_case keys of nvcrectl's JSON). Raises on a non-uniform GPU product."""
    gpu_nodes = detect.discover_nodes(nodes, target).nodes
    products = Counter(detect.node_labels(n).get(detect.GPU_PRODUCT, "") for n in gpu_nodes)
    if len(products) > 1:
        raise WorkflowFailure("HeterogeneousGPU", f"heterogeneous GPUs: {detect.go_count_map(products)}")
    product = next(iter(products))
    platform = detect.detect_platform(gpu_nodes)
    arch = detect.parse_product(product) or detect.UNKNOWN_ARCH
    key = topology_key or TOPOLOGY_KEYS.get(platform, "")
    rows: list[NodeRow] = [{"name": detect.node_name(n), "gpus": _gpus(n), "ready": _ready(n),
                           "rack": detect.node_labels(n).get(key, "") if key else ""} for n in gpu_nodes]
    counts = Counter(r["gpus"] for r in rows)
    catalog_gpus, catalog_mlnx = entries.gpu_defaults(arch, platform)
    racks: dict[str, list[str]] = {}
    for row in rows:
        if row["rack"]:
            racks.setdefault(row["rack"], []).append(row["name"])
    warnings = []
    if len(counts) > 1:
        warnings.append(f"nodes have different GPU counts: {detect.go_count_map({str(k): v for k, v in counts.items()})}")
    if min(counts) != catalog_gpus:
        warnings.append(f"catalog expects {catalog_gpus} GPUs per node for {arch}, nodes have {min(counts)}")
    # A certification here would be sized on the catalog's fallback for an architecture it has no row for.
    if fallback := entries.gpu_arch_fallback_message(arch, catalog_gpus, catalog_mlnx, entries.FIELD_HINT_CERTIFICATION):
        warnings.append(fallback)
    if counts.get(0):
        warnings.append(f"{counts[0]} node(s) have 0 allocatable {detect.GPU_RESOURCE}")
    if not racks:
        warnings.append(f"no node carries the topology label {key!r}" if key
                        else f"no default topology label for platform {platform}; set topology_key")
    return {
        "platform": platform,
        "gpu_architecture": arch,
        "gpu_product": product,
        "gpus_per_node": min(counts),
        "catalog_gpus_per_node": catalog_gpus,
        "total_nodes": len(rows),
        "ready_nodes": sum(r["ready"] for r in rows),
        "total_gpus": sum(r["gpus"] for r in rows),
        "nodes": rows,
        "topology": {"key": key, "racks": [{"name": k, "nodes": v, "node_count": len(v)}
                                           for k, v in sorted(racks.items())]},
        "warnings": warnings,
    }
