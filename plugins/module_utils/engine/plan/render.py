"""Offline render of a Workflow over a node list, like `nvcrectl workflow render` (surroundings §6).

It runs NVCRE's first reconcile in memory (workflow spec §2 steps 6-7, §4, §8.3): validation, early
override pass, detection, authoritative override pass, placement checks, GPU capacity filter, gang
contract, nodesPerJob, grouping, then the first iteration's dependencies and Jobs. Nothing is written.
"""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from ..api.errors import InputError, WorkflowFailure
from ..api.objects import status_orchestration
from ..models import dump, parse_workflow
from ..spec.overrides import validate_overrides
from . import detect, jobs, partition
from .dependencies import DependencyPlan, strip_when
from .render_shape import nvcre_spec

ANNOTATION_PLATFORM = "nvcrectl.nvidia.com/detected-platform"
ANNOTATION_ARCHITECTURE = "nvcrectl.nvidia.com/detected-gpu-architecture"
ANNOTATION_OVERRIDES = "nvcrectl.nvidia.com/applied-overrides"
FIRST_ITERATION = 1
RUNTIME_REF_PATH = "spec.jobTemplate.spec.workload.trainJob.runtimeRef"
# What NVCRE's API server answers for a Workflow without a runtime (the CRD takes Kubeflow Trainer's
# TrainJobSpec, whose runtimeRef is required); nvcrectl renders such a file all the same.
RUNTIME_REF_REQUIRED = f"{RUNTIME_REF_PATH}: Required value"
_PLACEHOLDER = {"name": "runtime-from-overrides"}


@dataclass
class Rendered:
    """`workflow`: the resolved Workflow (overrides applied, then cleared; detection annotations).
    `plan`: what NVCRE would record and create. `failure`: set where NVCRE would mark the Workflow
    Failed; the plan then holds what was known at that point and no jobs or dependencies. `warnings`: what
    nvcrectl renders but NVCRE's API server would refuse to admit, one line each."""

    workflow: dict[str, Any]
    plan: dict[str, Any] = field(default_factory=dict)
    failure: WorkflowFailure | None = None
    warnings: list[str] = field(default_factory=list)


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


def render(workflow: Any, nodes: Any, nodes_source: str = "nodes", workflow_source: str = "definition") -> Rendered:
    """Render `workflow` (a Workflow dict) over `nodes` (Node dicts). Bad input raises InputError;
    `*_source` name the inputs in its message when the error is not inside the objects."""
    return _render_checked(workflow, nodes, nodes_source, workflow_source)


def _render_checked(workflow: Any, nodes: Any, nodes_source: str, workflow_source: str) -> Rendered:
    if not isinstance(workflow, dict):
        raise InputError(workflow_source, f"must be a Workflow object, got {type(workflow).__name__}")
    resolved = _parse_without_runtime(workflow)
    validate_overrides(resolved["spec"])
    validate_nodes(nodes, nodes_source)
    given, dumped = workflow.get("spec"), copy.deepcopy(resolved["spec"])
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
    out.workflow["spec"] = nvcre_spec(given, dumped, out.workflow["spec"])
    if "runtimeRef" not in _train_job(out.workflow["spec"]):
        out.warnings.append(RUNTIME_REF_REQUIRED)
    return out


def _train_job(spec: dict[str, Any]) -> dict[str, Any]:
    return ((((spec.get("jobTemplate") or {}).get("spec") or {}).get("workload") or {}).get("trainJob")) or {}


def _parse_without_runtime(workflow: dict[str, Any]) -> dict[str, Any]:
    """The validated, defaulted Workflow. nvcrectl renders a trainJob without `runtimeRef` (an override, the
    catalog or the platform may supply it), so it is validated with a stand-in that is then taken out again."""
    train_job = _given_train_job(workflow.get("spec"))
    if not isinstance(train_job, dict) or "runtimeRef" in train_job:
        return dump(parse_workflow(workflow))
    stand_in = copy.deepcopy(workflow)
    _given_train_job(stand_in["spec"])["runtimeRef"] = dict(_PLACEHOLDER)
    resolved = dump(parse_workflow(stand_in))
    del _train_job(resolved["spec"])["runtimeRef"]
    return resolved


def _given_train_job(spec: Any) -> Any:
    """The trainJob object itself inside a Workflow spec as given, or None where the path is not all objects."""
    for key in ("jobTemplate", "spec", "workload", "trainJob"):
        spec = spec.get(key) if isinstance(spec, dict) else None
    return spec


def _render(wf: dict[str, Any], nodes: list[dict[str, Any]], out: Rendered) -> None:
    persisted = status_orchestration(wf)
    early = partition.early_spec(wf["spec"], persisted)
    plan = out.plan
    detection, resolved = partition.discover(wf, nodes, early, plan)
    out.workflow = _output_workflow(wf, resolved, detection, plan["applied_overrides"])
    part = partition.partition(resolved, detection, plan)
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


def _output_workflow(wf: dict[str, Any], resolved_spec: dict[str, Any], detection: detect.Detection | None = None,
                     applied: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The Workflow as nvcrectl prints it: resolved spec, `overrides` cleared, no status, detection annotations."""
    out = {k: copy.deepcopy(v) for k, v in wf.items() if k not in ("spec", "status")}
    out["spec"] = {k: copy.deepcopy(v) for k, v in resolved_spec.items() if k != "overrides"}
    if detection is not None:
        annotations = out.setdefault("metadata", {}).setdefault("annotations", {})
        annotations[ANNOTATION_PLATFORM] = detection.platform
        annotations[ANNOTATION_ARCHITECTURE] = detection.gpu_architecture
        if applied:  # nvcrectl writes it only when an override applied
            # Compact JSON like Go's json.Marshal, but without its HTML escaping of `<always>` (\u003c…).
            annotations[ANNOTATION_OVERRIDES] = json.dumps(applied, separators=(",", ":"), ensure_ascii=False)
    return out
