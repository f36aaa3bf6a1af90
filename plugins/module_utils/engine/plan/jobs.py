"""NVCRE `Job` manifests for one launch of a group (workflow spec §8.1, §8.3, §6.3, §6.4).

`launch` is what createJobForGroup decides before any API write: the renamed job-scoped
dependency copies, the gang check on them, and the Job with placement applied via runtimePatches.
"""
from __future__ import annotations

from typing import Any

from ..api import naming
from ..api.errors import InputError
from ..api.objects import controller_reference, json_copy, orchestration_of, performance_of, thresholds_of
from ..api.vocabulary import (
    ANNOTATION_EXPECTED_NETWORK,
    ANNOTATION_GROUP_NODES,
    API_VERSION,
    LABEL_GROUP,
    LABEL_MANAGED_BY,
    LABEL_WORKFLOW,
    MANAGED_BY_NVCRE,
    RUN_ANNOTATIONS,
    WORKFLOW,
)
from ..spec import gang
from . import mnnvl, network, placement
from .dependencies import SCOPE_JOB, DependencyPlan, manifest

RUNTIME_PATCHES = "spec.jobTemplate.spec.workload.trainJob.runtimePatches"

UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
DEFAULT_HEALTH_EXPRESSION = "node.spec.unschedulable == true"
DEFAULT_TARGET = "node"
LAUNCHER = "launcher"
# Manager of the runtimePatch we add when the template has none to carry placement (our choice).
PLACEMENT_PATCH_MANAGER = "nvcre.nvidia.com/placement"
# Ours, not NVCRE's: the group's retry count a Job was created for. A retried group's status no longer names
# its Job (NVCRE's Pending clears jobRef), so this is how a resumed run tells that Job from a fresh one.
LABEL_RETRY = "cre.certification/retry"


def retry_of(job: dict[str, Any]) -> int:
    """The retry a Job was launched for (0 without the label: a first attempt)."""
    value = ((job.get("metadata") or {}).get("labels") or {}).get(LABEL_RETRY, "0")
    return int(value) if str(value).isdigit() else 0


class Launch:
    """Everything one group launch creates: job-scoped dependency copies (in order), then the Job."""

    def __init__(self, job: dict[str, Any], dependencies: list[dict[str, Any]]) -> None:
        self.job = job
        self.dependencies = dependencies


def is_single_job(orchestration: dict[str, Any], total_groups: int) -> bool:
    return naming.single_job(orchestration.get("diagnose") is not None,
                             int(orchestration.get("iterations") or 1), total_groups)


def launch(workflow: dict[str, Any], plan: DependencyPlan, group: dict[str, Any], iteration: int, total_groups: int,
           gpu_products: list[str], mnnvl_off: bool = False) -> Launch:
    """Children of one group launch. `workflow` is the post-override Workflow, `plan` made from its
    jobTemplate.spec and dependencies; `mnnvl_off` is diagnose's no-NVL re-test (§9)."""
    meta = workflow.get("metadata") or {}
    spec = workflow.get("spec") or {}
    orchestration = orchestration_of(spec)
    single = is_single_job(orchestration, total_groups)
    suffix = naming.dependency_suffix(meta.get("name", ""), group["name"], iteration, single)
    renamed, copies, effective = plan.for_launch(suffix)
    working = gang.validate_resolved_job_template(renamed, effective, spec.get("gangScheduler"), group["name"])
    name = naming.job_name(meta.get("name", ""), group["name"], iteration, single)
    job = job_manifest(workflow, working, group, name, gpu_products, mnnvl_off)
    return Launch(job, [manifest(d, workflow, SCOPE_JOB, plan.namespaced) for d in copies])  # fresh: completed in place


def job_manifest(workflow: dict[str, Any], job_spec: dict[str, Any], group: dict[str, Any], name: str,
                 gpu_products: list[str], mnnvl_off: bool = False) -> dict[str, Any]:
    """The NVCRE Job for a group: placement, job size, tolerations, health monitor, labels, owner.

    `job_spec` becomes the Job's spec and is modified: pass a copy you own (as `launch` does).
    """
    meta = workflow.get("metadata") or {}
    wf_spec = workflow.get("spec") or {}
    orchestration = orchestration_of(wf_spec)
    target = orchestration.get("target") or {}
    spec = job_spec

    performance = performance_of(wf_spec)
    if thresholds := thresholds_of(wf_spec):
        spec["thresholds"] = dict(thresholds)
    if performance.get("measurementTimeout"):
        spec["measurementTimeout"] = performance["measurementTimeout"]

    train_job = (spec.get("workload") or {}).get("trainJob")
    if train_job is not None:
        _place(train_job, orchestration, group, gpu_products)
        if mnnvl_off:
            mnnvl.force_off(spec)

    if any(sel.get("key") == UNSCHEDULABLE_TAINT for sel in target.get("taintSelectors") or []):
        spec.pop("nodeHealthMonitor", None)
    elif not spec.get("nodeHealthMonitor"):
        spec["nodeHealthMonitor"] = {"cel": {"expression": DEFAULT_HEALTH_EXPRESSION}}

    template_meta = (wf_spec.get("jobTemplate") or {}).get("metadata") or {}
    labels = {**(template_meta.get("labels") or {}), LABEL_MANAGED_BY: MANAGED_BY_NVCRE,
              LABEL_WORKFLOW: meta.get("name", ""), LABEL_GROUP: group["name"]}
    if group.get("retries"):
        labels[LABEL_RETRY] = str(group["retries"])
    annotations = dict(template_meta.get("annotations") or {})
    if group["nodes"]:
        annotations[ANNOTATION_GROUP_NODES] = ",".join(group["nodes"])
    wanted = network.parse((meta.get("annotations") or {}).get(ANNOTATION_EXPECTED_NETWORK))
    if own := network.for_group(wanted, len(group["nodes"]), len(group.get("domains") or []), mnnvl.forced_off(spec)):
        annotations[ANNOTATION_EXPECTED_NETWORK] = ",".join(own)
    for key in RUN_ANNOTATIONS:
        if value := (meta.get("annotations") or {}).get(key):
            annotations[key] = value
    job_meta: dict[str, Any] = {"name": name}
    if meta.get("namespace"):
        job_meta["namespace"] = meta["namespace"]
    job_meta["labels"] = labels
    if annotations:
        job_meta["annotations"] = annotations
    if meta.get("uid"):
        job_meta["ownerReferences"] = [controller_reference(workflow, WORKFLOW, API_VERSION)]
    return {"apiVersion": API_VERSION, "kind": "Job", "metadata": job_meta, "spec": spec}


def _place(train_job: dict[str, Any], orchestration: dict[str, Any], group: dict[str, Any],
           gpu_products: list[str]) -> None:
    """The group's placement on its TrainJob: the job size (pinned), node affinity and tolerations on every target."""
    _check_runtime_patches(train_job)
    target = orchestration.get("target") or {}
    unpinned = placement.is_unpinned(orchestration)
    hosts = placement.affinity_hosts(orchestration, group)
    affinity = placement.node_affinity(hosts, target, gpu_products)
    if not unpinned:
        train_job.setdefault("trainer", {})["numNodes"] = len(group["nodes"])
    targets = _target_names(train_job)
    tolerations = placement.job_tolerations(target, LAUNCHER in targets, unpinned)
    if affinity or tolerations:
        for pod_spec in _pod_spec_patches(train_job, targets):
            # Each target gets its own objects: shared ones would print as YAML anchors.
            if affinity:
                pod_spec.setdefault("affinity", {})["nodeAffinity"] = placement.node_affinity(hosts, target, gpu_products)
            if tolerations:
                pod_spec.setdefault("tolerations", []).extend(json_copy(tolerations))


def _check_runtime_patches(train_job: dict[str, Any]) -> None:
    """The runtimePatches the placement writes into have the Trainer API's shapes (schemaless in the CRD)."""
    for i, patch in enumerate(train_job.get("runtimePatches") or []):
        path = f"{RUNTIME_PATCHES}[{i}]"
        shape: Any = patch
        for key in ("trainingRuntimeSpec", "template", "spec"):
            if not isinstance(shape, dict):
                raise InputError(path, "must be an object")
            shape, path = shape.get(key) or {}, f"{path}.{key}"
        if not isinstance(shape, dict) or not isinstance(shape.get("replicatedJobs") or [], list):
            raise InputError(path, "must be an object with a replicatedJobs list")
        for j, rj in enumerate(shape.get("replicatedJobs") or []):
            where = f"{path}.replicatedJobs[{j}]"
            if not isinstance(rj, dict) or not isinstance(rj.get("name", ""), str):
                raise InputError(where, "must be an object with a string name")
            pod: Any = rj
            for key in ("template", "spec", "template", "spec"):
                pod, where = pod.get(key, {}), f"{where}.{key}"
                if not isinstance(pod, dict):
                    raise InputError(where, "must be an object")
            for key, kind in (("affinity", dict), ("tolerations", list)):
                if not isinstance(pod.get(key, kind()), kind):
                    raise InputError(f"{where}.{key}", f"must be {'an object' if kind is dict else 'a list'}")


def _target_names(train_job: dict[str, Any]) -> list[str]:
    """replicatedJob names the runtimePatches address, in first-seen order; `node` when there are none."""
    names = list(dict.fromkeys(rj.get("name", "") for rj in gang.runtime_patch_jobs(train_job)))
    return names or [DEFAULT_TARGET]


def _pod_spec_patches(train_job: dict[str, Any], targets: list[str]) -> list[dict[str, Any]]:
    """The pod spec patch of each target: its first entry across runtimePatches, created if absent."""
    found: dict[str, dict[str, Any]] = {}
    for rj in gang.runtime_patch_jobs(train_job):
        found.setdefault(rj.get("name", ""), rj)
    missing = [{"name": name} for name in targets if name not in found]
    if missing:
        train_job.setdefault("runtimePatches", []).append(
            {"manager": PLACEMENT_PATCH_MANAGER,
             "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": missing}}}})
        found.update((rj["name"], rj) for rj in missing)
    pod_specs = []
    for name in targets:
        template = found[name].setdefault("template", {})
        pod_template = template.setdefault("spec", {}).setdefault("template", {})
        pod_specs.append(pod_template.setdefault("spec", {}))
    return pod_specs
