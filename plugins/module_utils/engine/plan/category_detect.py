"""What the Certification build detects on the target nodes besides platform and GPU architecture
(surroundings.md §3.2 step 4, §4.2; user-docs §2.6): the NIC resource to request, the GKE TCPXO networks and
the TCPXO NCCL plugin version. Each rule returns its value ("" or [] when nothing was found) and the event
NVCRE emits on the Certification; the build passes the values to `category_build.build_workflow(detected=…)`.

The spec names the events (Normal `NICResourceDetection`, Warning `GKENetworkDetection`, Warning
`TCPXOPluginDetection`) but not their messages; the messages here are ours (docs/nvcre-compatibility.md).
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Optional

from ..api.objects import quantity
from ..api.vocabulary import GPU_ARCHITECTURE_DEFAULTS
from ..catalog import entries, registry
from ..catalog.template import parsed_yaml

NIC_RESOURCE_DETECTION = "NICResourceDetection"
GKE_NETWORK_DETECTION = "GKENetworkDetection"
TCPXO_PLUGIN_DETECTION = "TCPXOPluginDetection"
MLNX_NICS = "nvidia.com/mlnxnics"
RDMA_PREFIX = "rdma/"
GKE_NETWORK_PREFIX = "networking.gke.io.networks/"
GKE_DEFAULT_NETWORK = "default"
# The GKE NCCL TCPXO installer DaemonSet (kube-system) labels its pods so; its image tag is the plugin version.
TCPXO_INSTALLER_NAMESPACE = "kube-system"
TCPXO_INSTALLER_SELECTOR = "name=nccl-tcpxo-installer"
TCPXO_PLUGIN_IMAGE = "nccl-plugin-gpudirecttcpx"
TCPXO_PROFILES = "gcp-tcpxo-profiles.yaml"

Obj = dict[str, Any]
MaybeEvent = Optional[dict]  # noqa: UP045 - module_utils aliases stay typing (ansible-test's pylint)


def _event(kind: str, reason: str, message: str) -> dict:
    return {"type": kind, "reason": reason, "message": message}


def _allocatable(node: Obj) -> dict[str, Any]:
    return (node.get("status") or {}).get("allocatable") or {}


def _count(value: Any) -> float:
    try:
        return float(quantity(value))
    except (ValueError, TypeError, ArithmeticError):
        return 0.0


# ---------------------------------------------------------------- NIC resource (on-prem)

def detect_nic_resource(nodes: list[Obj], mlnx_per_node: int) -> tuple[str, MaybeEvent]:
    """The one `rdma/*` or `nvidia.com/mlnxnics` resource every target node can give `mlnx_per_node` of.

    Exactly one candidate: it is requested. None, or more than one: nothing is requested. Both answers are
    told in a Normal NICResourceDetection event. `mlnx_per_node` 0 opts out: no detection, no event."""
    if mlnx_per_node <= 0 or not nodes:
        return "", None
    common: set[str] | None = None
    for node in nodes:
        fits = {name for name, value in _allocatable(node).items()
                if (name.startswith(RDMA_PREFIX) or name == MLNX_NICS) and _count(value) >= mlnx_per_node}
        common = fits if common is None else common & fits
    found = sorted(common or ())
    where = f"at {mlnx_per_node} per node on all {len(nodes)} target nodes"
    if len(found) == 1:
        return found[0], _event("Normal", NIC_RESOURCE_DETECTION, f"Detected NIC resource {found[0]} allocatable {where}")
    if found:
        return "", _event("Normal", NIC_RESOURCE_DETECTION,
                          f"More than one NIC resource is allocatable {where} ({', '.join(found)}); requesting none, "
                          "set nicResourceName to choose one")
    return "", _event("Normal", NIC_RESOURCE_DETECTION,
                      f"No rdma/* or {MLNX_NICS} resource is allocatable {where}; requesting none")


# ---------------------------------------------------------------- GKE TCPXO (GCP H100, A3 Mega)

def _natural(text: str) -> list[Any]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def detect_gke_networks(nodes: list[Obj]) -> tuple[list[str], MaybeEvent]:
    """The 8 GPU-NIC networks GKE multi-networking advertises on every node (`networking.gke.io.networks/<n>`,
    without `default` and the `.IP` counters), in name order for eth1..eth8. Any other count: the catalog
    default `gpu-nic0..7` and a Warning GKENetworkDetection."""
    common: set[str] | None = None
    for node in nodes:
        names = {key[len(GKE_NETWORK_PREFIX):] for key in _allocatable(node) if key.startswith(GKE_NETWORK_PREFIX)}
        names = {n for n in names if n and not n.endswith(".IP") and n != GKE_DEFAULT_NETWORK}
        common = names if common is None else common & names
    found = sorted(common or (), key=_natural)
    wanted = len(entries.DEFAULT_GKE_TCPXO_NETWORKS)
    if len(found) == wanted:
        return found, None
    default = ", ".join(entries.DEFAULT_GKE_TCPXO_NETWORKS)
    return [], _event("Warning", GKE_NETWORK_DETECTION,
                      f"Found {len(found)} GPU NIC networks ({GKE_NETWORK_PREFIX}*) on every target node, need {wanted}; "
                      f"using the default networks {default}")


def _image_version(image: str) -> str:
    """`…/nccl-plugin-gpudirecttcpx-dev:v1.0.15-1` → `v1.0.15-1` (digests and untagged images give "")."""
    name = image.split("@", 1)[0]
    tail = name.rsplit("/", 1)[-1]
    return tail.split(":", 1)[1] if ":" in tail else ""


def _version_key(version: str) -> tuple[int, ...]:
    core = version.strip().lstrip("v").split("-", 1)[0]
    try:
        return tuple(int(part) for part in core.split("."))
    except ValueError:
        return ()


def detect_tcpxo_plugin(pods: Iterable[Obj]) -> tuple[str, MaybeEvent]:
    """The TCPXO NCCL plugin version the `nccl-tcpxo-installer` pods install (their plugin image tag), the
    lowest when they differ (the images' CUDA major must match it on every node). None found: "" (the build
    uses the minimum profile) and a Warning TCPXOPluginDetection."""
    versions = set()
    for pod in pods:
        spec = pod.get("spec") or {}
        for container in (spec.get("initContainers") or []) + (spec.get("containers") or []):
            image = container.get("image") or ""
            if TCPXO_PLUGIN_IMAGE in image and _version_key(_image_version(image)):
                versions.add(_image_version(image))
    if versions:
        return min(versions, key=_version_key), None
    minimum = min((p["plugin"] for p in parsed_yaml(registry.read_lib(TCPXO_PROFILES))["profiles"]),
                  key=_version_key)
    return "", _event("Warning", TCPXO_PLUGIN_DETECTION,
                      f"Could not detect the TCPXO NCCL plugin version from the {TCPXO_INSTALLER_NAMESPACE} "
                      f"nccl-tcpxo-installer pods; using the images for {minimum}")


# ---------------------------------------------------------------- GPU defaults

def architecture_defaults_event(gpu_architecture: str, platform: str, options: Obj, field_hint: str) -> MaybeEvent:
    """Warning GPUArchitectureDefaults when the catalog has no row for the architecture and sizes the run on its
    4 GPU / 0 NIC fallback; the message names the counts the run is sized at (`options` win over the defaults)."""
    gpus, mlnx = entries.gpu_defaults(gpu_architecture, platform)
    if options.get("gpusPerNode") is not None:
        gpus = int(options["gpusPerNode"])
    if options.get("mlnxPerNode") is not None:
        mlnx = int(options["mlnxPerNode"])
    message = entries.gpu_arch_fallback_message(gpu_architecture, gpus, mlnx, field_hint)
    return _event("Warning", GPU_ARCHITECTURE_DEFAULTS, message) if message else None


# ---------------------------------------------------------------- all of it, for one category

def detect_for_build(nodes: list[Obj], *, platform: str, gpu_architecture: str, options: Obj,
                     tcpxo_pods: Iterable[Obj]) -> tuple[Obj, list[dict]]:
    """(`detected` for build_workflow, events) for one category's resolved `options` on its target nodes.

    NIC detection runs on-prem (the only platform whose catalog patches read nicResourceName) when the user
    named no resource; the TCPXO rules on GCP H100 (the only TCPXO shape)."""
    detected: Obj = {}
    events: list[dict] = []
    if event := architecture_defaults_event(gpu_architecture, platform, options, entries.FIELD_HINT_CERTIFICATION):
        events.append(event)
    if platform == "onprem" and not options.get("nicResourceName"):
        mlnx = options.get("mlnxPerNode")
        if mlnx is None:
            mlnx = entries.gpu_defaults(gpu_architecture, platform)[1]
        name, event = detect_nic_resource(nodes, int(mlnx))
        if name:
            detected["nicResourceName"] = name
        events += [event] if event else []
    if platform == "gcp" and gpu_architecture == "h100":
        networks, event = detect_gke_networks(nodes)
        if networks:
            detected["gkeTcpxoNetworks"] = networks
        events += [event] if event else []
        version, event = detect_tcpxo_plugin(tcpxo_pods)
        if version:
            detected["tcpxoPluginVersion"] = version
        events += [event] if event else []
    return detected, events
