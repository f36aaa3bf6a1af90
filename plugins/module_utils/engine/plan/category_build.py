"""The Certification controller's build (surroundings.md §3.2–§3.3): one Workflow per category.

Pure functions over Kubernetes-JSON dicts: option resolution, Workflow names and metadata, the catalog
build with overrides applied and pruned, and the resolved transforms (gang scheduler, priority class, image,
workload labels). Build problems raise InputError; the Certification tier records them as Failed/BuildFailed.
"""
from __future__ import annotations

import copy
from typing import Any

from ..api import naming
from ..api.errors import InputError, WorkflowFailure
from ..api.objects import controller_reference, orchestration_of
from ..api.vocabulary import (
    ANNOTATION_CATALOG_SOURCE,
    ANNOTATION_EXPECTED_NETWORK,
    ANNOTATION_TEST_SCALE,
    API_VERSION,
    CATEGORY_NOT_FOUND,
    CERTIFICATION,
    LABEL_CERTIFICATION,
    LABEL_DOMAIN,
    LABEL_MANAGED_BY,
    LABEL_VARIANT,
    MANAGED_BY_NVCRE,
    RUN_ANNOTATIONS,
    TRAINER_GROUP,
    TRAINING_RUNTIME,
    WORKFLOW,
)
from ..catalog import entries
from ..catalog.registry import Catalog, builtin_catalog, lookup
from ..spec import gang
from ..spec.overrides import OverrideContext, apply_overrides, matches_when
from . import network, placement

KAI_SCHEDULER = "kai-scheduler"
# KAI + MPI: the launcher waits for every worker's sshd itself (240 tries × 5 s, about 20 minutes).
WAIT_FOR_WORKERS_SCRIPT = """set -e
for host in $(awk '{print $1}' /etc/mpi/hostfile); do
  tries=0
  until (exec 3<>"/dev/tcp/$host/22") 2>/dev/null; do
    tries=$((tries + 1))
    if [ "$tries" -ge 240 ]; then echo "worker $host: sshd not reachable" >&2; exit 1; fi
    sleep 5
  done
done
"""
_SPEC_ONLY = ("target", "categories", "gangScheduler", "priorityClassName")


def check_categories(spec: dict, catalog: Catalog | None = None) -> None:
    """Every category is looked up before anything is built; the first unknown one fails the Certification.
    `catalog`: the run's, ours plus the user's `catalog_dirs` (ours when none is given)."""
    known = (catalog or builtin_catalog()).entries
    for category in spec.get("categories") or []:
        if (category.get("domain"), category.get("variant")) not in known:
            raise WorkflowFailure(CATEGORY_NOT_FOUND,
                                  f"Unknown certification category: {category.get('domain')}/{category.get('variant')}")


def resolve_options(spec: dict, category: dict) -> dict:
    """ResolveOptions: a per-category value replaces the global one, except workloadMetadata labels,
    which merge per key (per-category wins)."""
    options = {k: copy.deepcopy(v) for k, v in spec.items() if k not in _SPEC_ONLY and v is not None}
    local = category.get("options") or {}
    options.update({k: copy.deepcopy(v) for k, v in local.items() if v is not None and k != "workloadMetadata"})
    labels = {**((spec.get("workloadMetadata") or {}).get("labels") or {}),
              **((local.get("workloadMetadata") or {}).get("labels") or {})}
    if labels:
        options["workloadMetadata"] = {"labels": labels}
    return options


def name_suffix(options: dict | None) -> str:
    """The option tokens that tell two Workflows of the same category apart (only set options count)."""
    if not options:
        return ""
    tokens = []
    if options.get("nodesPerJob") is not None:
        tokens.append(f"n{options['nodesPerJob']}")
    if options.get("enableMNNVL") is not None:
        tokens.append("mnnvl" if options["enableMNNVL"] else "nomnnvl")
    if options.get("testScale"):
        tokens.append(options["testScale"])
    if options.get("enableCheckpoint"):
        tokens.append("ckpt")
    for key, prefix in (("maxSteps", "s"), ("exitDurationMins", "e"), ("gpusPerNode", "g")):
        if options.get(key) is not None:
            tokens.append(f"{prefix}{options[key]}")
    return "".join(f"-{token}" for token in tokens)


def workflow_name(certification: str, category: dict) -> str:
    """`<certification>-<domain>-<variant>[-tokens]`, truncated with a hash to the Workflow limit."""
    base = f"{certification}-{category['domain']}-{category['variant']}{name_suffix(category.get('options'))}"
    return naming.truncate(base, naming.WORKFLOW_MAX)


def resolved_gang_scheduler(spec: dict) -> dict | None:
    """The gang-scheduling intent with code defaults filled (stored on Workflow.spec.gangScheduler)."""
    resolved = gang.resolve(spec.get("gangScheduler"))
    if resolved is None:
        return None
    scheduler, queue, key = resolved
    return {"schedulerName": scheduler, "queue": queue, "queueLabelKey": key}


def build_options(spec: dict, category: dict, *, platform: str, gpu_architecture: str, available_nodes: int,
                  detected: dict | None = None, catalog: Catalog | None = None) -> dict:
    """The BuildConfig of one category: resolved options, GPU defaults, MNNVL default, node count.

    `detected` carries what discovery found (nicResourceName, gkeTcpxoNetworks, tcpxoPluginVersion);
    a user-set nicResourceName wins over the detected one.
    """
    entry = lookup(category["domain"], category["variant"], catalog)
    options = resolve_options(spec, category)
    gpus, mlnx = entries.gpu_defaults(gpu_architecture, platform)
    options.setdefault("gpusPerNode", gpus)
    options.setdefault("mlnxPerNode", mlnx)
    options.setdefault("enableMNNVL", gpu_architecture in network.MNNVL_ARCHITECTURES)
    for key, value in (detected or {}).items():
        if value:
            options.setdefault(key, value)
    if not entry.per_node and options.get("testScale") != "intra-node":
        limit = min(options.get("nodesPerJob") or available_nodes, available_nodes)
        nodes = entry.max_valid_nodes(limit, options["gpusPerNode"], gpu_architecture)
        if not nodes:
            tp, pp = entry.parallel(gpu_architecture)[:2]
            raise InputError("", f"{entry.key}: no valid node count <= {limit} satisfies model constraints "
                                 f"(minGPUs={entry.min_gpus}, TP×PP={tp * pp}, "
                                 f"{options['gpusPerNode']} GPUs/node)")
        options["nodesPerJob"] = nodes
    options.update(gpuArchitecture=gpu_architecture, platform=platform)
    if spec.get("target"):
        options["target"] = copy.deepcopy(spec["target"])
    return options


def resolve_overrides(spec: dict, platform: str, gpu_architecture: str, nodes: list | None = None) -> dict:
    """Apply the overrides that match now, then prune them and those whose platform/architecture clauses
    can never match here; the Workflow keeps only what it must still resolve itself."""
    ctx = OverrideContext.for_spec(spec, platform=platform, gpu_architecture=gpu_architecture, nodes=nodes)
    result = apply_overrides(spec, ctx)
    applied = {a.index for a in result.applied}
    kept = []
    for index, override in enumerate(spec.get("overrides") or []):
        when = override.get("when") or {}
        fixed = {k: when[k] for k in ("platform", "gpuArchitecture") if k in when}
        if index not in applied and matches_when(fixed, ctx, f"spec.overrides[{index}].when"):
            kept.append(override)
    out = result.spec
    if kept:
        out["overrides"] = kept
    else:
        out.pop("overrides", None)
    return out


def apply_gang_scheduler(spec: dict, gang_scheduler: dict | None) -> None:
    """Write side of the gang contract: schedulerName on every TrainingRuntime pod, the queue label on
    job and pod templates; KAI + MPI also drops the launcher gate for a wait-for-workers init container."""
    if not gang_scheduler:
        return
    scheduler, queue, key = (gang_scheduler[k] for k in ("schedulerName", "queue", "queueLabelKey"))
    for dep in spec.get("dependencies") or []:
        if dep.get("kind") != TRAINING_RUNTIME or gang.api_group(dep.get("apiVersion", "")) != TRAINER_GROUP:
            continue
        runtime_spec = dep.setdefault("spec", {})
        template_spec = runtime_spec.setdefault("template", {}).setdefault("spec", {})
        kai_mpi = scheduler == KAI_SCHEDULER and "mpi" in (runtime_spec.get("mlPolicy") or {})
        if kai_mpi:
            # KAI needs every sub-group to have pods before it binds any, so nothing may wait on Ready.
            template_spec.pop("startupPolicy", None)
        for rj in template_spec.get("replicatedJobs") or []:
            job_template = rj.setdefault("template", {})
            job_template.setdefault("metadata", {}).setdefault("labels", {})[key] = queue
            pod_template = job_template.setdefault("spec", {}).setdefault("template", {})
            pod_template.setdefault("metadata", {}).setdefault("labels", {})[key] = queue
            pod_spec = pod_template.setdefault("spec", {})
            pod_spec["schedulerName"] = scheduler
            if kai_mpi and rj.get("name") == "launcher":
                rj.pop("dependsOn", None)
                image = ((pod_spec.get("containers") or [{}])[0]).get("image", "")
                pod_spec["initContainers"] = [c for c in pod_spec.get("initContainers") or []
                                              if c.get("name") != "wait-for-workers"] + [
                    {"name": "wait-for-workers", "image": image, "command": ["bash", "-c"],
                     "args": [WAIT_FOR_WORKERS_SCRIPT]}]


def apply_priority_class(spec: dict, priority_class: str | None) -> None:
    """spec.priorityClassName on the pod spec of every replicatedJob of every TrainingRuntime (the MPI launcher
    too), whatever the scheduler; set over any value the catalog or an override gave, as the gang scheduler is."""
    if not priority_class:
        return
    for dep in spec.get("dependencies") or []:
        if dep.get("kind") != TRAINING_RUNTIME or gang.api_group(dep.get("apiVersion", "")) != TRAINER_GROUP:
            continue
        template_spec = dep.setdefault("spec", {}).setdefault("template", {}).setdefault("spec", {})
        for rj in template_spec.get("replicatedJobs") or []:
            pod_template = rj.setdefault("template", {}).setdefault("spec", {}).setdefault("template", {})
            pod_template.setdefault("spec", {})["priorityClassName"] = priority_class


def apply_image(spec: dict, image: str | None) -> None:
    """The `image` option: the trainer, containers[0] of every runtime replicatedJob, and init containers
    that ran the same image as that container (fix-ssh-permissions, megatron-clone); others keep theirs."""
    if not image:
        return
    trainer = (((spec.get("jobTemplate") or {}).get("spec") or {}).get("workload") or {}).get("trainJob", {})
    if "trainer" in trainer:
        trainer["trainer"]["image"] = image
    for dep in spec.get("dependencies") or []:
        if dep.get("kind") != "TrainingRuntime":
            continue
        for rj in ((dep.get("spec") or {}).get("template") or {}).get("spec", {}).get("replicatedJobs") or []:
            pod_spec = (((rj.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
            containers = pod_spec.get("containers") or []
            if not containers:
                continue
            original = containers[0].get("image")
            containers[0]["image"] = image
            for init in pod_spec.get("initContainers") or []:
                if init.get("image") == original:
                    init["image"] = image


def apply_workload_labels(spec: dict, labels: dict | None, gang_scheduler: dict | None) -> None:
    """Workload labels: the catalog's, then the user's (global then per-category, already merged), then
    the gang queue label (inserted if missing, accepted if equal, an error if different); at most 32."""
    job_spec = spec.setdefault("jobTemplate", {}).setdefault("spec", {})
    merged = {**((job_spec.get("workloadMetadata") or {}).get("labels") or {}), **(labels or {})}
    if gang_scheduler:
        key, queue = gang_scheduler["queueLabelKey"], gang_scheduler["queue"]
        if key in merged and merged[key] != queue:
            raise InputError(f'{gang.LABELS_PATH}["{key}"]',
                             f'conflicting label value "{merged[key]}", expected "{queue}"')
        merged[key] = queue
    if not merged:
        return
    if error := gang.labels_error(merged):
        path, _sep, rule = error.partition(": ")
        raise InputError(path, rule)
    job_spec["workloadMetadata"] = {"labels": merged}


def build_workflow(certification: dict, category: dict, *, platform: str, gpu_architecture: str,
                   available_nodes: int, nodes: list | None = None, detected: dict | None = None,
                   catalog: Catalog | None = None) -> dict:
    """The Workflow the Certification controller creates for one category (createWorkflowForCategory
    steps 3–6): built, overrides applied and pruned, then the resolved transforms (ADR-079). A category from
    the user's `catalog_dirs` (in the run's `catalog`) carries its entry file in the `catalog-source` annotation
    (ours carry none)."""
    meta = certification.get("metadata") or {}
    cert_spec = certification.get("spec") or {}
    options = build_options(cert_spec, category, platform=platform, gpu_architecture=gpu_architecture,
                            available_nodes=available_nodes, detected=detected, catalog=catalog)
    spec = entries.build_spec(category["domain"], category["variant"], options, catalog)
    spec = resolve_overrides(spec, platform, gpu_architecture, nodes)
    gang_scheduler = resolved_gang_scheduler(cert_spec)
    apply_gang_scheduler(spec, gang_scheduler)
    apply_priority_class(spec, cert_spec.get("priorityClassName"))
    apply_image(spec, options.get("image"))
    apply_workload_labels(spec, (options.get("workloadMetadata") or {}).get("labels"), gang_scheduler)
    if gang_scheduler:
        spec["gangScheduler"] = gang_scheduler
    metadata: dict[str, Any] = {"name": workflow_name(meta["name"], category)}
    if meta.get("namespace"):
        metadata["namespace"] = meta["namespace"]
    metadata.update({
        "labels": {LABEL_MANAGED_BY: MANAGED_BY_NVCRE, LABEL_CERTIFICATION: meta["name"],
                   LABEL_DOMAIN: category["domain"], LABEL_VARIANT: category["variant"]},
        # What the user asked for (full-scale when unset); intra-node also forced nodesPerJob to 1.
        "annotations": {ANNOTATION_TEST_SCALE: options.get("testScale") or "full-scale"},
        "ownerReferences": [controller_reference(certification, CERTIFICATION, API_VERSION)],
    })
    if families := _expected_networks(spec, options, platform, gpu_architecture, detected or {}):
        metadata["annotations"][ANNOTATION_EXPECTED_NETWORK] = ",".join(families)
    if source := lookup(category["domain"], category["variant"], catalog).source:
        metadata["annotations"][ANNOTATION_CATALOG_SOURCE] = source
    for key in RUN_ANNOTATIONS:
        if value := (meta.get("annotations") or {}).get(key):
            metadata["annotations"][key] = value
    return {"apiVersion": API_VERSION, "kind": WORKFLOW, "metadata": metadata, "spec": spec}


def _expected_networks(spec: dict, options: dict, platform: str, gpu_architecture: str, detected: dict) -> list[str]:
    """Ours: what the category's multi-node NCCL groups must run over (network.py), unless the user turned the
    check off; loopback runs stay inside one node."""
    bandwidth = ((spec.get("jobTemplate") or {}).get("spec") or {}).get("bandwidthMeasurement") or {}
    if options.get("checkTransport") is False or not bandwidth or str(bandwidth.get("testType", "")).startswith(
            "loopback"):
        return []
    orchestration = orchestration_of(spec)
    grouping = orchestration.get("diagnose") or orchestration.get("topology") or {}
    topology_key = "" if placement.is_unpinned(orchestration) else str(grouping.get("topologyKey") or "")
    return network.families(platform, gpu_architecture, detected, topology_key)
