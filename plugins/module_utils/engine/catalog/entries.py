"""The certification catalog's build (NVCRE pkg/catalog): an entry and the run's options into a WorkflowSpec.

Entries (`registry.py`) are our own YAML files at `catalog/<domain>/<variant>.yaml` (the collection root); shared fragments
live in `catalog/_lib/` and are not entries. An entry file holds `description`, optional `meta`
(`minGPUs`, `timeoutPerJob`, `parallelism.<arch|default>.{tp,pp,ep}`), `perNode` (one Job per node),
entry-local `vars`, and `spec`: the WorkflowSpec template (see catalog_template for its directives).

A user's own catalog directories (`catalog_dirs`) hold entries in the same format beside ours (`user.py`
loads and validates them, building each here); an Entry knows its `source` (the user file, empty for ours) and
reads its `$lib` fragments from its own directory's `_lib` first (`lib_dirs`), then ours.
"""
from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Any

try:
    import yaml
except ImportError:  # requirements.py: no face runs without it
    from ...requirements import ABSENT as yaml  # type: ignore[no-redef]

from ..api.errors import InputError
from ..models import CategoryOptions
from ..models.parse import parse
from .registry import ROOT, Catalog, Entry, config_arch, lookup, read_lib
from .template import Renderer, parsed_yaml

# Template defaults (loader.go buildTemplateData); diagnose changes the NCCL iteration counts.
DEFAULTS: dict[str, Any] = {
    "maxSteps": 50, "exitDurationMins": 30, "saveInterval": 250, "saveRetainInterval": 1000, "saveTopK": 1,
    "storageSize": "10Ti", "storageClassName": "", "testScale": "full-scale", "maxBytes": "16G",
    "minGroupSize": 2, "maxConcurrent": 0, "startupStallTimeoutSeconds": 1200, "enableMNNVL": False,
    "enableCheckpoint": False, "nicResourceName": "", "rdmaDeviceAccess": "", "sourceRepo": "",
    "measurementTimeout": "", "thresholds": {}, "repeatCount": 0, "maxRestarts": 0,
}
DEFAULT_SOURCE_REPO = "https://github.com/NVIDIA/Megatron-LM.git"
DEFAULT_GKE_TCPXO_NETWORKS = [f"gpu-nic{i}" for i in range(8)]
# Template variable -> (resources section, resource, default); each falls back on its own.
TRAINING_RESOURCES = {"trainingCpuLimit": ("limits", "cpu", "128"),
                      "trainingMemoryLimit": ("limits", "memory", "800Gi"),
                      "trainingCpuRequest": ("requests", "cpu", "64"),
                      "trainingMemoryRequest": ("requests", "memory", "500Gi")}

# Certification CategoryOptions the catalog build reads or passes through, plus the build inputs the
# Certification controller detects (architecture, platform for the GPU defaults, target, GKE networks,
# TCPXO plugin version).
CATEGORY_OPTIONS = frozenset({
    "nodesPerJob", "gpusPerNode", "mlnxPerNode", "nicResourceName", "enableMNNVL", "enableCheckpoint",
    "maxSteps", "exitDurationMins", "startupStallTimeoutSeconds", "saveInterval", "saveRetainInterval",
    "saveTopK", "storageSize", "storageClassName", "maxRestarts", "resources", "image", "imagePullSecrets",
    "sourceRepo", "repeatCount", "testScale", "maxBytes", "numIterations", "numCycles", "maxConcurrent",
    "minGroupSize", "timeoutPerJob", "measurementTimeout", "thresholds", "workloadMetadata", "rdmaDeviceAccess",
    "checkTransport",
})
BUILD_INPUTS = frozenset({"gpuArchitecture", "platform", "target", "gkeTcpxoNetworks", "tcpxoPluginVersion"})


def normalize_gpu_architecture(value: str) -> str:
    """`gb300`, `NVIDIA-GB300` and `NVIDIA GB300` are the same architecture (ParseGPUArchFlag)."""
    text = re.sub(r"\s+", "-", value.strip())
    if text.upper().startswith("NVIDIA-"):
        text = text[len("NVIDIA-"):]
    if text.upper().startswith("RTX-PRO-6000"):
        return "rtxpro6000"
    return text.split("-", 1)[0].lower()


@lru_cache(maxsize=1)
def gpu_defaults_table() -> dict:
    return yaml.safe_load((ROOT / "gpu-defaults.yaml").read_text(encoding="utf-8"))


def gpu_defaults(arch: str, platform: str = "") -> tuple[int, int]:
    """(gpusPerNode, mlnxPerNode): the architecture row, then per-field platform overrides (an explicit 0
    overrides, #350); an unknown architecture gets the `unknown` row (4/0)."""
    table = gpu_defaults_table()
    row = dict(table["architectures"].get(arch, table["unknown"]))
    if platform:
        row.update(table.get("platformOverrides", {}).get(platform, {}).get(arch, {}))
    return int(row["gpusPerNode"]), int(row["mlnxPerNode"])


# Where each kind's users set the counts, named in that message.
FIELD_HINT_CERTIFICATION = "spec.gpusPerNode and spec.mlnxPerNode (or spec.categories[].options)"
FIELD_HINT_WORKLOAD_RUN = "spec.gpusPerNode and spec.mlnxPerNode"
# What detection answers for nodes without a GPU product label (a missing label, not a missing row).
UNKNOWN_ARCHITECTURE = "unknown"


def gpu_arch_fallback_message(arch: str, gpus_per_node: int, mlnx_per_node: int, field_hint: str) -> str:
    """The GPUArchitectureDefaults message: what the catalog falls back to for an architecture it has no row
    for, next to the counts the run is sized at (after the user's own); "" for an empty, listed or `unknown`
    architecture, so callers can emit it unconditionally."""
    if not arch or arch == UNKNOWN_ARCHITECTURE or arch in gpu_defaults_table()["architectures"]:
        return ""
    gpus, mlnx = gpu_defaults(arch)
    return (f'GPU architecture "{arch}" has no entry in the catalog\'s GPU defaults, which fall back to '
            f"gpusPerNode={gpus} mlnxPerNode={mlnx} for it; this run is sized at gpusPerNode={gpus_per_node} "
            f"mlnxPerNode={mlnx_per_node}. If the nodes differ, set {field_hint}, and file an issue so the "
            "architecture can be added to the catalog.")


def _tcpxo_profile(version: str) -> dict:
    """Images for the GCP H100 TCPXO plugin version: the newest mapped version <= it, else the minimum."""
    table = parsed_yaml(read_lib("gcp-tcpxo-profiles.yaml"))
    profiles = sorted(table["profiles"], key=lambda p: _version(p["plugin"]))
    wanted = _version(version) if version else None
    chosen = profiles[0]
    for profile in profiles:
        if wanted is not None and _version(profile["plugin"]) <= wanted:
            chosen = profile
    return {"gcpH100NcclImage": chosen["ncclImage"], "gcpH100TrainingImage": chosen["trainingImage"],
            "tcpxoDaemonImage": f"{table['daemonRepo']}:{chosen['daemonTag']}",
            "tcpxoDaemonArgs": table["daemonArgs"]}


def _version(text: str) -> tuple[int, ...]:
    core = text.strip().lstrip("v").split("-", 1)[0]
    try:
        return tuple(int(part) for part in core.split("."))
    except ValueError:
        return (0,)


def _tcpxo_networks(opts: dict) -> list[str]:
    networks = list(opts.get("gkeTcpxoNetworks") or DEFAULT_GKE_TCPXO_NETWORKS)
    if len(networks) != len(DEFAULT_GKE_TCPXO_NETWORKS):
        raise InputError("options.gkeTcpxoNetworks", "must name exactly 8 GPU NIC networks (eth1..eth8)")
    return networks


def _check_options(key: str, options: dict) -> dict:
    """Build inputs are checked here; CategoryOptions by the Certification model (field path and rule)."""
    unknown = sorted(set(options) - CATEGORY_OPTIONS - BUILD_INPUTS)
    if unknown:
        raise InputError(f"options.{unknown[0]}", f"unknown option for {key}")
    parse(CategoryOptions, {k: v for k, v in options.items() if k in CATEGORY_OPTIONS and v is not None}, "options")
    return {k: v for k, v in options.items() if v is not None}


def _nearest_valid(entry: Entry, nodes: int, gpus: int, arch: str) -> str:
    """The `try nodesPerJob=<below> or <above>` hint: nearest valid counts around the requested one."""
    below = next((n for n in range(nodes - 1, 0, -1) if entry.valid_nodes(n, gpus, arch)), 0)
    above = next(n for n in range(nodes + 1, nodes + 2 + entry.min_gpus + 64 * gpus)
                 if entry.valid_nodes(n, gpus, arch))
    return f"try nodesPerJob={below} or {above}" if below else f"try nodesPerJob={above}"


def validate_parallelism(entry: Entry, nodes: int, gpus: int, arch: str) -> None:
    """minGPUs, then TP×PP divisibility, then DP%EP, with NVCRE's hint texts (loader.go)."""
    total = nodes * gpus
    tp, pp, ep = entry.parallel(arch)
    if total < entry.min_gpus:
        need = math.ceil(entry.min_gpus / gpus)
        raise InputError("", f"{entry.key}: requires at least {entry.min_gpus} GPUs ({need} nodes × {gpus} "
                             f"GPUs/node), got {total} GPUs ({nodes} nodes); set nodesPerJob to {need} or higher")
    if total % (tp * pp):
        raise InputError("", f"{entry.key}: totalGPUs={total} ({nodes} nodes × {gpus} GPUs/node) must be "
                             f"divisible by TP×PP={tp * pp} (TP={tp}, PP={pp}); "
                             f"{_nearest_valid(entry, nodes, gpus, arch)}")
    if ep and (total // (tp * pp)) % ep:
        raise InputError("", f"{entry.key}: DP={total // (tp * pp)} must be divisible by EP={ep}; "
                             f"{_nearest_valid(entry, nodes, gpus, arch)}")


def template_vars(entry: Entry, opts: dict, arch: str) -> dict:
    """TemplateData: one variable per option (defaults filled) plus the derived ones the entries use."""
    data = {**DEFAULTS, **opts}
    diagnose = data["testScale"] == "diagnose"
    data.setdefault("numIterations", 5 if diagnose else 100)
    data.setdefault("numCycles", 1 if diagnose else 10)
    gpus, mlnx = gpu_defaults(arch, opts.get("platform", ""))
    data.setdefault("gpusPerNode", gpus)
    data.setdefault("mlnxPerNode", mlnx)
    if entry.per_node or data["testScale"] == "intra-node":
        data["nodesPerJob"] = 1
    elif not data.get("nodesPerJob"):
        # Without a cluster to size against, render the smallest valid job (our choice; the
        # Certification build always passes the MaxValidNodes result).
        data["nodesPerJob"] = next(n for n in range(1, 1 + entry.min_gpus + 64 * data["gpusPerNode"])
                                   if entry.valid_nodes(n, data["gpusPerNode"], arch))
    tp, pp, ep = entry.parallel(arch)
    resources = opts.get("resources") or {}
    data.update(
        entryName=entry.variant, domain=entry.domain, gpuArchitecture=arch, configArch=config_arch(arch),
        tp=tp, pp=pp, ep=ep, mnnvl="1" if data["enableMNNVL"] else "0",
        totalGPUs=data["nodesPerJob"] * data["gpusPerNode"],
        timeoutPerJob=entry.effective_timeout(opts.get("timeoutPerJob", ""), data["testScale"]),
        sourceRepo=data["sourceRepo"] or DEFAULT_SOURCE_REPO,
        **{f"tcpxoNet{i}": net for i, net in enumerate(_tcpxo_networks(opts))},
        imagePullSecrets=[s if isinstance(s, dict) else {"name": s} for s in opts.get("imagePullSecrets") or []],
        **{name: str((resources.get(kind) or {}).get(part) or default)
           for name, (kind, part, default) in TRAINING_RESOURCES.items()},
        **_tcpxo_profile(opts.get("tcpxoPluginVersion", "")),
    )
    # Entry vars may be derived from the options (nvswitch loops numIterations).
    data.update(Renderer(data, entry.read_lib).render(entry.vars))
    return data


def build_spec(domain: str, variant: str, options: dict | None = None, catalog: Catalog | None = None) -> dict:
    """The WorkflowSpec (camelCase dict) of one category for the given options (entry.Build); `catalog`: the
    run's (ours plus the user's `catalog_dirs`), ours when none is given."""
    return build_entry(lookup(domain, variant, catalog), options)


def build_entry(entry: Entry, options: dict | None = None) -> dict:
    """The WorkflowSpec of one loaded entry (a user entry is built here to validate it)."""
    opts = _check_options(entry.key, dict(options or {}))
    arch = normalize_gpu_architecture(str(opts.get("gpuArchitecture") or ""))
    if not arch:
        raise InputError("", f"{entry.key}: GPUArchitecture is required but was not provided")
    opts["gpuArchitecture"] = arch
    data = template_vars(entry, opts, arch)
    validate_parallelism(entry, data["nodesPerJob"], data["gpusPerNode"], arch)
    spec = Renderer(data, entry.read_lib).render(entry.template)
    orchestration = spec.setdefault("orchestration", {})
    if opts.get("target"):
        orchestration["target"] = opts["target"]
    if data["repeatCount"] > 0:
        orchestration["iterations"] = data["repeatCount"]
    checkpoint = spec.get("jobTemplate", {}).get("spec", {}).get("checkpoint")
    if data["maxRestarts"] > 0 and checkpoint is not None:
        checkpoint["maxRestarts"] = data["maxRestarts"]
    return spec
