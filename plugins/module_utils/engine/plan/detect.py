"""Node discovery, platform and GPU-architecture detection, exclusions (workflow.md §4, surroundings.md §4).

Pure functions over Kubernetes-JSON Node dicts. The reconcile order is:

1. ``detect(nodes, target, resource_slices)`` — steps 1–5 of ``discoverAndPartition``: target filtering,
   cordon handling, platform (must be uniform), majority GPU architecture, exclusion record, events.
2. the authoritative override pass (``overrides.apply_overrides``) with ``Detection.nodes``;
3. ``filter_gpu_capacity(detection, spec)`` — step 8, on the post-override spec;
4. ``not_enough_nodes_message(...)`` when the job size exceeds ``len(detection.nodes)``.

Everything is linear in the number of nodes (plus the name sort NVCRE does).
"""
from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from ..api.errors import WorkflowFailure
from ..api.objects import quantity

GPU_PRESENT = "nvidia.com/gpu.present"
GPU_PRODUCT = "nvidia.com/gpu.product"
GPU_RESOURCE = "nvidia.com/gpu"
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
UNKNOWN_ARCH = "unknown"
# The reference code's list plus akamai, which the v0.11+ docs add (`linode://` → akamai); we follow the docs.
PLATFORMS = ("aws", "gcp", "azure", "oci", "onprem", "togetherai", "mistral", "forge", "nscale", "akamai")
DRA_DRIVER = "gpu.nvidia.com"

Node = dict[str, Any]
Event = dict[str, str]


def node_labels(node: Node) -> dict[str, str]:
    return (node.get("metadata") or {}).get("labels") or {}


_labels = node_labels  # older private name, still used by cluster_summary.py


def node_name(node: Node) -> str:
    return (node.get("metadata") or {}).get("name") or ""


def _allocatable(node: Node) -> dict[str, Any]:
    return (node.get("status") or {}).get("allocatable") or {}


def _event(kind: str, reason: str, message: str) -> Event:
    return {"type": kind, "reason": reason, "message": message}


# ---------------------------------------------------------------- target filtering (§4 step 1)

def _matches_expression(labels: dict[str, str], expr: dict[str, Any]) -> bool:
    key = expr.get("key") or ""
    op = expr.get("operator")
    present = key in labels
    if op == "In":
        return present and labels[key] in (expr.get("values") or [])
    if op == "NotIn":
        return not (present and labels[key] in (expr.get("values") or []))
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    return False  # NVCRE: an unsupported operator (Gt, Lt, …) means the node does not match


def _carries_taint(node: Node, selector: dict[str, Any]) -> bool:
    key, value, effect = selector.get("key"), selector.get("value"), selector.get("effect")
    return any(
        t.get("key") == key and (not value or t.get("value") == value) and (not effect or t.get("effect") == effect)
        for t in (node.get("spec") or {}).get("taints") or []
    )


def _matches_target(node: Node, target: dict[str, Any], names: set[str] | None) -> bool:
    labels = node_labels(node)
    if any(labels.get(k) != v for k, v in (target.get("nodeSelector") or {}).items()):
        return False
    if not all(_matches_expression(labels, e) for e in target.get("matchExpressions") or []):
        return False
    if names is not None and node_name(node) not in names:
        return False
    return all(_carries_taint(node, s) for s in target.get("taintSelectors") or [])


def _gpu_present(node: Node) -> bool:
    return node_labels(node).get(GPU_PRESENT) == "true"


@dataclass(frozen=True)
class Discovery:
    """Target nodes with a GPU (sorted by name) and the names of cordoned GPU nodes left out (sorted)."""

    nodes: list[Node]
    cordoned: list[str]


def discover_nodes(nodes: Iterable[Node], target: dict[str, Any] | None) -> Discovery:
    """Filter listed Nodes to the orchestration target (workflow.md §4 step 1).

    Order as NVCRE: nodeSelector → matchExpressions → nodeNames (the selector still applies) → taintSelectors →
    cordon (kept when a taintSelector targets ``node.kubernetes.io/unschedulable``; only GPU nodes are reported)
    → ``nvidia.com/gpu.present=true``. Raises ``WorkflowFailure('NodeDiscoveryError', …)`` when nothing is left.
    """
    target = target or {}
    names = set(target["nodeNames"]) if target.get("nodeNames") else None
    keep_cordoned = any(s.get("key") == UNSCHEDULABLE_TAINT for s in target.get("taintSelectors") or [])
    kept: list[Node] = []
    cordoned: list[str] = []
    for node in nodes:
        if not _matches_target(node, target, names):
            continue
        if (node.get("spec") or {}).get("unschedulable") and not keep_cordoned:
            if _gpu_present(node):
                cordoned.append(node_name(node))
            continue
        if _gpu_present(node):
            kept.append(node)
    if not kept:
        raise WorkflowFailure("NodeDiscoveryError", "No target nodes found matching orchestration target")
    kept.sort(key=node_name)
    cordoned.sort()
    return Discovery(kept, cordoned)


# ---------------------------------------------------------------- DRA product fallback

_GFD_DROP = re.compile(r"[^A-Za-z0-9\-_. ]")
_WHITESPACE = re.compile(r"\s+")


def sanitize_product_name(name: str) -> str:
    """Sanitise an NVML product name as GPU Feature Discovery does: ``NVIDIA GB300`` → ``NVIDIA-GB300``."""
    return _WHITESPACE.sub("-", _GFD_DROP.sub("", name).strip())


def _attribute_string(attributes: dict[str, Any], name: str) -> str:
    attr = attributes.get(name) or attributes.get(f"{DRA_DRIVER}/{name}") or {}
    return attr.get("string") or "" if isinstance(attr, dict) else ""


def needs_resource_slices(nodes: Iterable[Node]) -> bool:
    """True when some node lacks ``nvidia.com/gpu.product``: only then does NVCRE list ResourceSlices."""
    return any(not node_labels(n).get(GPU_PRODUCT) for n in nodes)


def fill_products_from_resource_slices(nodes: list[Node], slices: Iterable[dict[str, Any]]) -> list[Node]:
    """Return the nodes with a missing product label synthesised from ``gpu.nvidia.com`` ResourceSlices.

    In memory only (copies of the changed nodes); the first non-``vfio`` device with a ``productName`` wins.
    Both ``resource.k8s.io/v1`` devices and the older ``basic`` wrapper are read.
    """
    products: dict[str, str] = {}
    for rs in slices:
        spec = rs.get("spec") or {}
        if spec.get("driver") != DRA_DRIVER or not spec.get("nodeName") or spec["nodeName"] in products:
            continue
        for device in spec.get("devices") or []:
            attributes = (device.get("basic") or device).get("attributes") or {}
            if _attribute_string(attributes, "type") == "vfio":
                continue
            product = sanitize_product_name(_attribute_string(attributes, "productName"))
            if product:
                products[spec["nodeName"]] = product
                break
    out = []
    for node in nodes:
        filled = products.get(node_name(node))
        if filled and not node_labels(node).get(GPU_PRODUCT):
            meta = dict(node.get("metadata") or {})
            meta["labels"] = {**node_labels(node), GPU_PRODUCT: filled}
            node = {**node, "metadata": meta}
        out.append(node)
    return out


# ---------------------------------------------------------------- platform (§4.1)

def node_platform(node: Node) -> str:
    """The platform one node belongs to, from its providerID and a few labels (workflow.md §4.1, + akamai)."""
    provider = (node.get("spec") or {}).get("providerID") or ""
    labels = node_labels(node)
    if not provider:
        if "forge" in labels.get("kubernetes.io/hostname", "") or "nke.nvidia.com/site-name" in labels:
            return "forge"
        return "onprem"
    if provider.startswith("aws://"):
        return "aws"
    if provider.startswith("gce://"):
        return "gcp"
    if provider.startswith("azure://"):
        return "azure"
    if provider.startswith("ocid1."):
        return "oci"
    if provider.startswith("openstack://"):
        return "nscale" if "nscale.com/rdmashare" in _allocatable(node) else "onprem"
    if provider.startswith("kubevirt://"):
        return "togetherai" if "node-role.together.ai/worker" in labels else "onprem"
    if provider.startswith("metal3://"):
        return "mistral"
    if provider.startswith("linode://"):
        return "akamai"  # documented from v0.11 (Akamai LKE); absent from the code the table was read from
    return "onprem"


def go_count_map(counts: dict[str, int]) -> str:
    """Render a string→int map as Go's ``%v`` does (keys sorted): ``map[aws:2 gcp:1]``."""
    return "map[" + " ".join(f"{k}:{counts[k]}" for k in sorted(counts)) + "]"


def detect_platform(nodes: Iterable[Node]) -> str:
    """The one platform all nodes share; ``WorkflowFailure('HeterogeneousPlatform', …)`` otherwise."""
    counts = Counter(node_platform(n) for n in nodes)
    if len(counts) > 1:
        raise WorkflowFailure("HeterogeneousPlatform", f"heterogeneous platforms detected: {go_count_map(counts)}")
    return next(iter(counts), "onprem")


# ---------------------------------------------------------------- GPU architecture (§4.2)

def parse_product(label: str) -> str:
    """``NVIDIA-H100-80GB-HBM3`` → ``h100``; ``NVIDIA-RTX-PRO-6000-…`` → ``rtxpro6000``; "" → ""."""
    if not label:
        return ""
    rest = label.removeprefix("NVIDIA-")
    if rest.upper().startswith("RTX-PRO-6000"):
        return "rtxpro6000"
    return rest.split("-", 1)[0].lower()


def node_architecture(node: Node) -> str:
    return parse_product(node_labels(node).get(GPU_PRODUCT, ""))


def majority_architecture(nodes: Iterable[Node]) -> str:
    """Most common architecture among labelled nodes; ties go to the earliest node's; "" when none is labelled.

    A later architecture wins only with a strictly greater count, so with name-sorted input the tie rule holds.
    """
    counts: Counter[str] = Counter()
    for node in nodes:
        arch = node_architecture(node)
        if arch:
            counts[arch] += 1
    # Counter keeps first-insertion order and max() returns the first maximal item: the earliest node's arch.
    return max(counts, key=counts.__getitem__) if counts else ""


# ---------------------------------------------------------------- result

@dataclass(frozen=True)
class Detection:
    """Outcome of detection (workflow.md §4 steps 1–5, and step 8 after ``filter_gpu_capacity``).

    ``nodes`` are the eligible Node dicts sorted by name. ``excluded_nodes``/``exclusion_reason`` are the
    status fields (cordoned ++ architecture ++ capacity). ``events`` are ``{type, reason, message}`` dicts
    for the events NVCRE emits on the way (CordonedNodesExcluded, HeterogeneousGPU, InsufficientGPUCapacity).
    """

    platform: str
    gpu_architecture: str
    gpu_products: list[str]
    nodes: list[Node]
    cordoned: list[str] = field(default_factory=list)
    arch_excluded: list[str] = field(default_factory=list)
    required_gpus: int = 0
    capacity_excluded: list[tuple[str, int]] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)

    @property
    def node_names(self) -> list[str]:
        return [node_name(n) for n in self.nodes]

    @property
    def excluded_nodes(self) -> list[str]:
        return self.cordoned + self.arch_excluded + [name for name, _gpus in self.capacity_excluded]

    @property
    def exclusion_reason(self) -> str:
        clauses = []
        if self.cordoned:
            clauses.append(
                f"{len(self.cordoned)} node(s) matched the target but were unschedulable (cordoned): "
                + ", ".join(self.cordoned)
            )
        if self.arch_excluded:
            clauses.append(
                f"target set has more than one GPU architecture; certified {self.gpu_architecture} only"
            )
        if self.capacity_excluded:
            clauses.append(
                f"{len(self.capacity_excluded)} node(s) matched the target but have insufficient GPU capacity, "
                f"the workload requests {self.required_gpus} nvidia.com/gpu per node: {self._capacity_list()}"
            )
        return ". ".join(clauses)

    def _capacity_list(self) -> str:
        return ", ".join(f"{name} has {have}" for name, have in self.capacity_excluded)

    def status_fields(self) -> dict[str, Any]:
        """The ``status.orchestration`` fields detection owns, camelCase; empty exclusion fields are omitted."""
        out: dict[str, Any] = {
            "detectedPlatform": self.platform,
            "detectedGPUArchitecture": self.gpu_architecture,
            "gpuProducts": list(self.gpu_products),
        }
        if self.excluded_nodes:
            out["excludedNodes"] = self.excluded_nodes
            out["exclusionReason"] = self.exclusion_reason
        return out


def detect(
    nodes: Iterable[Node],
    target: dict[str, Any] | None,
    resource_slices: Iterable[dict[str, Any]] | None = None,
) -> Detection:
    """Discovery, platform, GPU architecture and exclusion record (workflow.md §4 steps 1–5).

    ``nodes``: every listed Node (the caller may pre-filter by ``target.nodeSelector``; it is applied again).
    ``resource_slices``: ``gpu.nvidia.com`` ResourceSlices for the DRA fallback, or None.
    Raises ``WorkflowFailure`` with reason ``NodeDiscoveryError`` or ``HeterogeneousPlatform``.
    """
    found = discover_nodes(nodes, target)
    candidates = found.nodes
    if resource_slices is not None and needs_resource_slices(candidates):
        candidates = fill_products_from_resource_slices(candidates, resource_slices)
    platform = detect_platform(candidates)
    events: list[Event] = []
    if found.cordoned:
        events.append(_event(
            "Warning", "CordonedNodesExcluded",
            f"Excluded {len(found.cordoned)} cordoned node(s) from certification: {', '.join(found.cordoned)}",
        ))
    arch = majority_architecture(candidates)
    kept: list[Node] = candidates
    dropped: list[Node] = []
    if arch:
        kept, dropped = [], []
        for node in candidates:
            (kept if node_architecture(node) == arch else dropped).append(node)
    dropped_names = [node_name(n) for n in dropped]
    if dropped:
        events.append(_event(
            "Warning", "HeterogeneousGPU",
            f"Filtered {len(kept)}/{len(candidates)} nodes to primary GPU architecture {arch}; "
            f"excluded: {', '.join(dropped_names)}",
        ))
    products = sorted({node_labels(n)[GPU_PRODUCT] for n in kept if node_labels(n).get(GPU_PRODUCT)})
    return Detection(
        platform=platform,
        gpu_architecture=arch or UNKNOWN_ARCH,
        gpu_products=products,
        nodes=kept,
        cordoned=found.cordoned,
        arch_excluded=dropped_names,
        events=events,
    )


# ---------------------------------------------------------------- GPU capacity (§4.3)

class DetectionFailure(WorkflowFailure):
    """A WorkflowFailure after the exclusion record exists: ``detection.status_fields()`` goes into the status."""

    def __init__(self, reason: str, message: str, detection: Detection) -> None:
        super().__init__(reason, message)
        self.detection = detection


def _quantity(value: Any) -> int | None:
    """A whole count from a resource quantity (``8``, ``"8"``); fractions round up as Quantity.Value() does."""
    if isinstance(value, bool):
        return None
    try:
        return math.ceil(quantity(value))
    except (ValueError, TypeError, ArithmeticError):
        return None


def _gpu_requests(obj: Any) -> Iterable[int]:
    # Iterative walk: any ``requests``/``limits`` map anywhere in the JSON counts.
    stack = [obj]
    while stack:
        cur = stack.pop()
        if isinstance(cur, dict):
            for key, value in cur.items():
                if key in ("requests", "limits") and isinstance(value, dict) and GPU_RESOURCE in value:
                    q = _quantity(value[GPU_RESOURCE])
                    if q is not None:
                        yield q
                stack.append(value)
        elif isinstance(cur, list):
            stack.extend(cur)


def required_gpus_per_node(spec: dict[str, Any]) -> int:
    """Max ``nvidia.com/gpu`` request/limit in ``jobTemplate`` and every dependency of a WorkflowSpec (0 = none)."""
    return max(_gpu_requests([spec.get("jobTemplate"), spec.get("dependencies")]), default=0)


def _allocatable_gpus(node: Node) -> int | None:
    """Allocatable ``nvidia.com/gpu`` when it is an exact positive integer, else None (never filtered)."""
    raw = _allocatable(node).get(GPU_RESOURCE)
    text = str(raw) if raw is not None and not isinstance(raw, bool) else ""
    return int(text) if text.isdigit() and int(text) > 0 else None


def filter_gpu_capacity(detection: Detection, spec: dict[str, Any]) -> Detection:
    """Drop nodes with fewer allocatable GPUs than the post-override ``spec`` requests (workflow.md §4 step 8).

    Returns a new Detection (exclusion record recomputed, ``InsufficientGPUCapacity`` event appended).
    Raises ``DetectionFailure('PartitionError', …)`` when no node survives; it carries the Detection so the
    caller can persist the exclusion record with the Failed status, as NVCRE does.
    """
    need = required_gpus_per_node(spec)
    if need <= 0:
        return detection
    kept, short = [], []
    for node in detection.nodes:
        have = _allocatable_gpus(node)
        if have is not None and have < need:
            short.append((node_name(node), have))
        else:
            kept.append(node)
    if not short:
        return replace(detection, required_gpus=need)
    result = replace(detection, nodes=kept, required_gpus=need, capacity_excluded=short)
    result = replace(result, events=detection.events + [_event(
        "Warning", "InsufficientGPUCapacity",
        f"Excluded {len(short)} node(s) with fewer than {need} allocatable nvidia.com/gpu: {result._capacity_list()}",
    )])
    if not kept:
        raise DetectionFailure(
            "PartitionError",
            f"No node can supply the {need} nvidia.com/gpu the workload requests per node; "
            f"best available is {max(have for _name, have in short)}",
            result,
        )
    return result


# ---------------------------------------------------------------- shortfall (§4.4)

def not_enough_nodes_message(need: int, detection: Detection, unpinned: bool) -> str:
    """NVCRE's ``notEnoughNodesMessage`` for ``nodesPerJob`` > ``len(detection.nodes)`` (workflow.md §4.4)."""
    found = len(detection.nodes)
    base = f"Not enough schedulable nodes: need {need}, found {found}"
    size_remedy = (
        f"Unpinned runs the requested job size exactly, so make {need} qualifying nodes available "
        "rather than lowering nodesPerJob"
        if unpinned else f"Set nodesPerJob to {found}"
    )
    causes, remedies = [], []
    if detection.arch_excluded:
        causes.append(
            f"{len(detection.arch_excluded)} node(s) matched the target but were excluded for not being "
            f"GPU architecture {detection.gpu_architecture}: {', '.join(detection.arch_excluded)}"
        )
        remedies.append("narrow the target to one architecture")
    if detection.capacity_excluded:
        causes.append(
            f"{len(detection.capacity_excluded)} node(s) matched the target but were excluded for having fewer "
            f"than the {detection.required_gpus} allocatable nvidia.com/gpu the workload requests per node: "
            f"{detection._capacity_list()}"
        )
        remedies.append("lower gpusPerNode")
    if not causes:
        return f"{base}. {size_remedy}" if unpinned else base
    return f"{base}. {'. '.join(causes)}. {size_remedy}, or {', or '.join(remedies)}"
