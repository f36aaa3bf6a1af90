"""The planning pipeline of a live Workflow's first reconciles (workflow spec §2 steps 6-7, §4): the early
override pass and checkpoint check, discovery and the authoritative override pass, then placement, the GPU
capacity filter, the gang contract, nodesPerJob and the groups. The Workflow tier runs it on the cluster's
nodes; the offline render (`render.py`) runs the same functions over a node list.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..api.errors import WorkflowFailure
from ..api.objects import orchestration_of
from ..spec import gang
from ..spec.overrides import OverrideContext, apply_overrides, override_events
from . import detect, placement
from .dependencies import strip_when


@dataclass
class Partition:
    """What discoverAndPartition decides (§4): the authoritative spec, the detection after the capacity
    filter, nodesPerJob and the Pending group statuses."""

    spec: dict[str, Any]
    detection: detect.Detection
    nodes_per_job: int
    groups: list[dict[str, Any]]


def early_spec(spec: dict[str, Any], persisted: dict[str, Any]) -> dict[str, Any]:
    """§2 steps 6-7, run on every reconcile: overrides applied with the persisted detection and no nodes,
    then the checkpoint PVC check. Raises WorkflowFailure (OverrideError, CheckpointPVCMissing)."""
    early = apply_overrides(spec, OverrideContext.for_spec(
        spec, platform=persisted.get("detectedPlatform", ""),
        gpu_architecture=persisted.get("detectedGPUArchitecture", ""))).spec
    _check_checkpoint(early)
    return early


def discover(wf: dict[str, Any], nodes: list[dict[str, Any]], early: dict[str, Any],
             plan: dict[str, Any], resource_slices: list[dict[str, Any]] | None = None
             ) -> tuple[detect.Detection, dict[str, Any]]:
    """§4 steps 1-6: detection, then the authoritative override pass → (detection, resolved spec).
    `plan` is filled as facts become known, so that on a WorkflowFailure it holds what NVCRE would
    persist with the Failed condition; so is `partition`. `resource_slices` (gpu.nvidia.com, live runs
    only) fill a missing GPU product label in memory."""
    spec = wf["spec"]
    detection = detect.detect(nodes, orchestration_of(early).get("target"), resource_slices)
    plan.update(detected_platform=detection.platform, detected_gpu_architecture=detection.gpu_architecture,
                gpu_products=list(detection.gpu_products), excluded_nodes=detection.excluded_nodes,
                exclusion_reason=detection.exclusion_reason)
    ctx = OverrideContext.for_spec(spec, platform=detection.platform,
                                   gpu_architecture=detection.gpu_architecture, nodes=detection.nodes)
    result = apply_overrides(spec, ctx)
    events = detection.events + override_events(result, len(spec.get("overrides") or []), ctx)
    plan.update(applied_overrides=result.applied_overrides(), events=events)
    return detection, result.spec


def partition(resolved: dict[str, Any], detection: detect.Detection, plan: dict[str, Any]) -> Partition:
    """§4 steps 7-13 on the resolved spec: placement, GPU capacity filter, gang contract, nodesPerJob, groups.
    (A live Workflow creates its workflow-scoped dependencies between `check` and `group`, step 10.)"""
    return group(resolved, check(resolved, detection, plan), plan)


def check(resolved: dict[str, Any], detection: detect.Detection, plan: dict[str, Any]) -> detect.Detection:
    """§4 steps 7-9: placement, GPU capacity filter, gang contract; the detection after the capacity filter."""
    orchestration = orchestration_of(resolved)
    plan["placement"] = orchestration.get("placement") or placement.PINNED
    placement.validate_placement(orchestration)
    before = len(detection.events)
    detection = detect.filter_gpu_capacity(detection, resolved)
    plan["events"].extend(detection.events[before:])
    plan.update(excluded_nodes=detection.excluded_nodes, exclusion_reason=detection.exclusion_reason)
    job_spec = (resolved.get("jobTemplate") or {}).get("spec") or {}
    dependencies = [strip_when(d) for d in resolved.get("dependencies") or []]
    gang.validate_resolved_job_template(job_spec, dependencies, resolved.get("gangScheduler"))
    return detection


def group(resolved: dict[str, Any], detection: detect.Detection, plan: dict[str, Any]) -> Partition:
    """§4 steps 11-13: nodesPerJob and the Pending group statuses."""
    orchestration = orchestration_of(resolved)
    job_spec = (resolved.get("jobTemplate") or {}).get("spec") or {}
    npj = placement.nodes_per_job(job_spec, orchestration, detection)
    labels = {detect.node_name(n): (n.get("metadata") or {}).get("labels") or {} for n in detection.nodes}
    npj, groups = placement.plan_groups(detection.node_names, orchestration, npj, labels)
    topology_key = "" if placement.is_unpinned(orchestration) else (orchestration.get("topology") or {}).get(
        "topologyKey", "")
    plan.update(total_nodes=len(detection.nodes), nodes_per_job=npj)
    return Partition(resolved, detection, npj, placement.group_statuses(groups, topology_key, labels))


def _check_checkpoint(spec: dict[str, Any]) -> None:
    """§2 step 7: a checkpointing job needs its PVC among the dependencies."""
    pvc = (((spec.get("jobTemplate") or {}).get("spec") or {}).get("checkpoint") or {}).get("pvcName")
    if pvc is None:
        return
    if not any(d.get("kind") == "PersistentVolumeClaim" and (d.get("metadata") or {}).get("name") == pvc
               for d in spec.get("dependencies") or []):
        raise WorkflowFailure("CheckpointPVCMissing", f'Checkpoint requires PVC "{pvc}" in dependencies')
