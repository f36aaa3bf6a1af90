"""Offline render of a Workflow over a node list, like `nvcrectl workflow render` (surroundings §6).

It runs NVCRE's first reconcile in memory (workflow spec §2 steps 6-7, §4, §8.3): validation, early
override pass, detection, authoritative override pass, placement checks, GPU capacity filter, gang
contract, nodesPerJob, grouping, then the first iteration's dependencies and Jobs. Nothing is written.
"""
from __future__ import annotations

import contextlib
import copy
import gc
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..api.errors import InputError, WorkflowFailure
from ..models import dump, parse_workflow
from ..spec import gang
from ..spec.overrides import OverrideContext, apply_overrides, override_events, validate_overrides
from . import detect, jobs, placement
from .dependencies import DependencyPlan, strip_when

ANNOTATION_PLATFORM = "nvcrectl.nvidia.com/detected-platform"
ANNOTATION_ARCHITECTURE = "nvcrectl.nvidia.com/detected-gpu-architecture"
ANNOTATION_OVERRIDES = "nvcrectl.nvidia.com/applied-overrides"
FIRST_ITERATION = 1


@dataclass
class Rendered:
    """`workflow`: the resolved Workflow (overrides applied, then cleared; detection annotations).
    `plan`: what NVCRE would record and create. `failure`: set where NVCRE would mark the Workflow
    Failed; the plan then holds what was known at that point and no jobs or dependencies."""

    workflow: dict[str, Any]
    plan: dict[str, Any] = field(default_factory=dict)
    failure: WorkflowFailure | None = None


def validate_nodes(nodes: Any, source: str = "nodes") -> list[dict[str, Any]]:
    """Node objects need at least `metadata.name`; `source` names the input in the error."""
    if not isinstance(nodes, list):
        raise InputError(source, f"must be a list of Node objects, got {type(nodes).__name__}")
    seen: set[str] = set()
    for i, node in enumerate(nodes):
        where = f"{source}[{i}]"
        if not isinstance(node, dict):
            raise InputError(where, f"must be a Node object, got {type(node).__name__}")
        if node.get("kind", "Node") != "Node":
            raise InputError(f"{where}.kind", f'must be "Node", got {node.get("kind")!r}')
        for key in ("metadata", "spec", "status"):
            if node.get(key) is not None and not isinstance(node[key], dict):
                raise InputError(f"{where}.{key}", "must be an object")
        meta = node.get("metadata") or {}
        name = meta.get("name")
        if not isinstance(name, str) or not name:
            raise InputError(f"{where}.metadata.name", "Required value")
        if name in seen:
            raise InputError(f"{where}.metadata.name", f'duplicate node name "{name}"')
        seen.add(name)
        labels = meta.get("labels")
        if labels is not None and (not isinstance(labels, dict)
                                   or not all(isinstance(v, str) for v in labels.values())):
            raise InputError(f"{where}.metadata.labels", "must be a map of string to string")
    return nodes


@contextlib.contextmanager
def _without_cyclic_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector: a render builds thousands of acyclic JSON documents (reference
    counting frees them), and each automatic collection would rescan the growing live set, which made
    10,000-node plans spend most of their time, superlinearly, in the collector."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def render(workflow: Any, nodes: Any, nodes_source: str = "nodes", workflow_source: str = "definition") -> Rendered:
    """Render `workflow` (a Workflow dict) over `nodes` (Node dicts). Bad input raises InputError;
    `*_source` name the inputs in its message when the error is not inside the objects."""
    with _without_cyclic_gc():
        return _render_checked(workflow, nodes, nodes_source, workflow_source)


def _render_checked(workflow: Any, nodes: Any, nodes_source: str, workflow_source: str) -> Rendered:
    if not isinstance(workflow, dict):
        raise InputError(workflow_source, f"must be a Workflow object, got {type(workflow).__name__}")
    resolved = dump(parse_workflow(workflow))
    validate_overrides(resolved["spec"])
    validate_nodes(nodes, nodes_source)
    # Until the authoritative override pass succeeds, the Workflow is shown as given (overrides kept).
    out = Rendered(workflow={k: copy.deepcopy(v) for k, v in resolved.items() if k != "status"})
    try:
        _render(resolved, nodes, out)
    except WorkflowFailure as failure:
        out.failure = failure
        out.plan.update(jobs=[], dependencies=[])
        if isinstance(failure, detect.DetectionFailure):  # the capacity filter's exclusion record
            out.plan.update(excluded_nodes=failure.detection.excluded_nodes,
                            exclusion_reason=failure.detection.exclusion_reason)
    return out


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
             plan: dict[str, Any]) -> tuple[detect.Detection, dict[str, Any]]:
    """§4 steps 1-6: detection, then the authoritative override pass → (detection, resolved spec).
    `plan` is filled as facts become known, so that on a WorkflowFailure it holds what NVCRE would
    persist with the Failed condition; so is `partition`."""
    spec = wf["spec"]
    detection = detect.detect(nodes, (early.get("orchestration") or {}).get("target"))
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
    """§4 steps 7-13 on the resolved spec: placement, GPU capacity filter, gang contract, nodesPerJob, groups."""
    orchestration = resolved.get("orchestration") or {}
    plan["placement"] = orchestration.get("placement") or placement.PINNED
    placement.validate_placement(orchestration)
    before = len(detection.events)
    detection = detect.filter_gpu_capacity(detection, resolved)
    plan["events"].extend(detection.events[before:])
    plan.update(excluded_nodes=detection.excluded_nodes, exclusion_reason=detection.exclusion_reason)
    job_spec = (resolved.get("jobTemplate") or {}).get("spec") or {}
    dependencies = [strip_when(d) for d in resolved.get("dependencies") or []]
    gang.validate_resolved_job_template(job_spec, dependencies, resolved.get("gangScheduler"))

    npj = placement.nodes_per_job(job_spec, orchestration, detection)
    labels = {detect.node_name(n): (n.get("metadata") or {}).get("labels") or {} for n in detection.nodes}
    npj, groups = placement.plan_groups(detection.node_names, orchestration, npj, labels)
    topology_key = "" if placement.is_unpinned(orchestration) else (orchestration.get("topology") or {}).get(
        "topologyKey", "")
    plan.update(total_nodes=len(detection.nodes), nodes_per_job=npj)
    return Partition(resolved, detection, npj, placement.group_statuses(groups, topology_key, labels))


def _render(wf: dict[str, Any], nodes: list[dict[str, Any]], out: Rendered) -> None:
    persisted = (wf.get("status") or {}).get("orchestration") or {}
    early = early_spec(wf["spec"], persisted)
    plan = out.plan
    detection, resolved = discover(wf, nodes, early, plan)
    out.workflow = _output_workflow(wf, resolved, detection, plan["applied_overrides"])
    part = partition(resolved, detection, plan)
    plan["groups"] = [{"name": s["name"], "nodes": s["nodes"], "overflow": s.get("overflow", False),
                       "domains": s.get("domains", []),
                       **({"domainNodeCounts": s["domainNodeCounts"]} if "domainNodeCounts" in s else {})}
                      for s in part.groups]

    job_spec = (resolved.get("jobTemplate") or {}).get("spec") or {}
    dependencies = [strip_when(d) for d in resolved.get("dependencies") or []]
    dep_plan = DependencyPlan(dependencies, job_spec, resolved.get("gangScheduler"))
    resolved_wf = {**wf, "spec": resolved}
    to_create = dep_plan.workflow_manifests(resolved_wf)
    first_jobs = []
    for group in part.groups:
        launch = jobs.launch(resolved_wf, dep_plan, group, FIRST_ITERATION, len(part.groups),
                             part.detection.gpu_products)
        to_create.extend(launch.dependencies)
        first_jobs.append({"name": launch.job["metadata"]["name"], "group": group["name"],
                           "iteration": FIRST_ITERATION, "manifest": launch.job})
    plan.update(jobs=first_jobs, dependencies=to_create)


def _check_checkpoint(spec: dict[str, Any]) -> None:
    """§2 step 7: a checkpointing job needs its PVC among the dependencies."""
    pvc = (((spec.get("jobTemplate") or {}).get("spec") or {}).get("checkpoint") or {}).get("pvcName")
    if pvc is None:
        return
    if not any(d.get("kind") == "PersistentVolumeClaim" and (d.get("metadata") or {}).get("name") == pvc
               for d in spec.get("dependencies") or []):
        raise WorkflowFailure("CheckpointPVCMissing", f'Checkpoint requires PVC "{pvc}" in dependencies')


def _output_workflow(wf: dict[str, Any], resolved_spec: dict[str, Any], detection: detect.Detection | None = None,
                     applied: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The Workflow as nvcrectl prints it: resolved spec, `overrides` cleared, no status, detection annotations."""
    out = {k: copy.deepcopy(v) for k, v in wf.items() if k not in ("spec", "status")}
    out["spec"] = {k: copy.deepcopy(v) for k, v in resolved_spec.items() if k != "overrides"}
    if detection is not None:
        annotations = out.setdefault("metadata", {}).setdefault("annotations", {})
        annotations[ANNOTATION_PLATFORM] = detection.platform
        annotations[ANNOTATION_ARCHITECTURE] = detection.gpu_architecture
        # Compact JSON like Go's json.Marshal, but without its HTML escaping of `<always>` (\u003c…).
        annotations[ANNOTATION_OVERRIDES] = json.dumps(applied or [], separators=(",", ":"), ensure_ascii=False)
    return out
