"""One pass of the WorkloadRun controller (surroundings.md §3.4) as a pure function: `reconcile(world)`.

A run builds one Workflow of its own name (plan/workloadrun_build.py), records it in `status.workflowRef`
and from then on only mirrors it: the terminal condition (a threshold miss as WorkflowValidationFailed),
ValidationFailed as ThresholdViolation, the node-result refs, the detected platform and GPU. Everything
comes from the cluster, so a rerun continues where the last one stopped; over a finished run it writes nothing.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..api.actions import Create, Event, Step, UpdateStatus
from ..api.errors import InputError, WorkflowFailure
from ..api.objects import condition, controlled_by, is_true, meta, orchestration_of, timestamp, true_condition
from ..api.vocabulary import (
    API_VERSION,
    BUILD_FAILED,
    FAILED,
    GPU_ARCHITECTURE_DEFAULTS,
    IN_PROGRESS,
    LABEL_MANAGED_BY,
    MANAGER,
    SUCCEEDED,
    VALIDATION_FAILED,
    WORKFLOW_DELETED,
    WORKFLOW_FAILED,
    WORKFLOW_NAME_COLLISION,
    WORKFLOW_SUCCEEDED,
    WORKFLOW_VALIDATION_FAILED,
    WORKLOAD_RUN,
    WORKLOAD_RUN_NAME_COLLISION,
)
from ..models import dump, parse_workload_run
from ..plan import detect
from ..plan.workloadrun_build import Resolved, build_workflow, validate_placement
from ..spec import thresholds
from . import ownership
from .certification_tier import conditions, gpu_architecture

WORKFLOW_CREATED = "WorkflowCreated"
JOB_VALIDATION_FAILED = "JobValidationFailed"

Obj = dict[str, Any]


def desired_workload_run(args: Obj) -> Obj:
    """The WorkloadRun a run asks for, validated with the models and NVCRE's placement rule (nothing is written
    for bad input). `args`: name, namespace, spec (camelCase WorkloadRunSpec) and labels."""
    obj: Obj = {"apiVersion": API_VERSION, "kind": WORKLOAD_RUN,
                "metadata": {"name": args["name"], "namespace": args["namespace"],
                             "labels": {**args["labels"], LABEL_MANAGED_BY: MANAGER}},
                "spec": copy.deepcopy(args["spec"])}
    obj["spec"] = dump(parse_workload_run(obj))["spec"]
    validate_placement(obj["spec"])
    thresholds.validate(obj["spec"].get("thresholds") or {}, "thresholds")
    return obj


def admit(desired: Obj, live: Obj) -> Obj:
    """The live run of that name, if this collection created it with the same spec (see ownership.admit_ours)."""
    return ownership.admit_ours(WORKLOAD_RUN, WORKLOAD_RUN_NAME_COLLISION, desired, live)


@dataclass
class WorkloadRunWorld:
    """The run, the Workflow of its name (None when absent), and for a build the Nodes (plus ResourceSlices
    when a GPU node lacks its product label)."""

    run: Obj
    workflow: Obj | None = None
    nodes: list[Obj] = field(default_factory=list)
    now: datetime = field(kw_only=True)
    resource_slices: list[Obj] | None = None


@dataclass
class WorkloadRunStep:
    """`step`: the writes. `drive`: the Workflow to drive now. `done`: the run is terminal.
    `failure`: (reason, message) the run ends with, after `step`. `notes`: progress lines."""

    step: Step = field(default_factory=Step)
    drive: str = ""
    done: bool = False
    failure: tuple[str, str] | None = None
    notes: list[str] = field(default_factory=list)


def terminal(run: Obj) -> bool:
    return is_true(run, SUCCEEDED) or is_true(run, FAILED)


def needs_nodes(world: WorkloadRunWorld) -> bool:
    """A build is ahead: the run is not terminal, has no Workflow recorded and none of its name exists."""
    return not terminal(world.run) and not _ref(world.run) and world.workflow is None


def build(world: WorkloadRunWorld) -> tuple[Obj, Resolved, str]:
    """Discovery and detection on the target (default nvidia.com/gpu.present=true), then the Workflow; also the
    detected platform. Raises WorkflowFailure (BuildFailed) or InputError."""
    target = (world.run.get("spec") or {}).get("target")
    found = detect.detect(world.nodes, target, world.resource_slices)
    arch = gpu_architecture(found, target)
    workflow, resolved = build_workflow(world.run, platform=found.platform, gpu_architecture=arch,
                                        nodes=found.nodes)
    return workflow, resolved, found.platform


def reconcile(world: WorkloadRunWorld) -> WorkloadRunStep:
    run, workflow = world.run, world.workflow
    name = meta(run)["name"]
    out = WorkloadRunStep()
    if terminal(run):
        out.done = True
        return out
    if not _ref(run):
        if workflow is not None:
            if not controlled_by(workflow, meta(run).get("uid", "")):
                message = (f'Workflow "{name}" already exists in namespace "{meta(run).get("namespace")}" and is not '
                           f'controlled by WorkloadRun "{name}"; refusing to adopt it')
                return _fail(out, world, WORKFLOW_NAME_COLLISION, message)
            # Ours, created by a run killed before it recorded the ref: record it now.
            out.step = Step(_status_write(world, _created(name), workflow))
            return out
        try:
            built, resolved, _platform = build(world)
        except (InputError, WorkflowFailure) as exc:
            return _fail(out, world, BUILD_FAILED, f"workloadrun {name}: {exc}")
        warned = [Event(run, "Warning", GPU_ARCHITECTURE_DEFAULTS, resolved.defaults_warning)
                  ] if resolved.defaults_warning else []
        out.step = Step(warned + [Create(built, owner_uid=meta(run).get("uid", ""))]
                        + _status_write(world, _created(name), built, resolved.gpus_per_node))
        out.notes += [f"{GPU_ARCHITECTURE_DEFAULTS}: {resolved.defaults_warning}"] if resolved.defaults_warning else []
        out.notes.append(f"created Workflow {name} ({resolved.framework}, {resolved.nodes_per_job} nodes per job)")
        return out
    if workflow is None:
        return _fail(out, world, WORKFLOW_DELETED, "Workflow was deleted")
    chosen = mirrored_condition(workflow) or true_condition(run)
    out.step = Step(_status_write(world, chosen, workflow), terminal=chosen["type"] in (SUCCEEDED, FAILED))
    out.done = out.step.terminal
    if not out.done:
        out.drive = name
    return out


def mirrored_condition(workflow: Obj) -> Obj | None:
    """The run's condition for a terminal Workflow (None while it runs)."""
    if is_true(workflow, SUCCEEDED):
        return {"type": SUCCEEDED, "reason": WORKFLOW_SUCCEEDED, "message": "Workflow completed successfully"}
    if is_true(workflow, FAILED):
        failed = condition(workflow, FAILED) or {}
        # A threshold miss reads apart from a broken run; a mixed failure keeps the generic reason.
        reason = WORKFLOW_VALIDATION_FAILED if failed.get("reason") == JOB_VALIDATION_FAILED else WORKFLOW_FAILED
        return {"type": FAILED, "reason": reason, "message": failed.get("message", "")}
    return None


def _created(name: str) -> Obj:
    return {"type": IN_PROGRESS, "reason": WORKFLOW_CREATED, "message": f"Workflow {name} created"}


def _ref(run: Obj) -> Obj:
    return (run.get("status") or {}).get("workflowRef") or {}


def _fail(out: WorkloadRunStep, world: WorkloadRunWorld, reason: str, message: str) -> WorkloadRunStep:
    failed = {"type": FAILED, "reason": reason, "message": message}
    out.step = Step(_status_write(world, failed, None), terminal=True)
    out.failure = (reason, message)
    out.done = True
    return out


def _status_write(world: WorkloadRunWorld, chosen: Obj, workflow: Obj | None, gpus: int | None = None) -> list[Any]:
    """The run's status with `chosen` as its condition and what it mirrors of `workflow`; nothing when unchanged."""
    run = world.run
    old = run.get("status") or {}
    status = {**old}
    validation = None
    if workflow is not None:
        wf_meta, wf_status = meta(workflow), workflow.get("status") or {}
        status["workflowRef"] = {k: wf_meta[k] for k in ("name", "namespace") if wf_meta.get(k)}
        orchestration = orchestration_of(wf_status)
        for key in ("detectedPlatform", "detectedGPUArchitecture"):
            if orchestration.get(key):
                status[key] = orchestration[key]
        for key in ("succeededNodesRef", "failedNodesRef"):
            if wf_status.get(key):
                status[key] = copy.deepcopy(wf_status[key])
        trainer = (((workflow.get("spec") or {}).get("jobTemplate") or {}).get("spec") or {}).get(
            "workload", {}).get("trainJob", {}).get("trainer") or {}
        gpus = gpus or trainer.get("numProcPerNode")
        if is_true(workflow, VALIDATION_FAILED):
            validation = (condition(workflow, VALIDATION_FAILED) or {}).get("message", "")
    if gpus:
        status["resolvedGpusPerNode"] = gpus
    stamp = timestamp(world.now)
    status["conditions"] = conditions(old.get("conditions") or [], chosen, validation is not None,
                                      meta(run).get("generation", 1), stamp, validation or "")
    if status == old:
        return []
    actions: list[Any] = [UpdateStatus({**run, "status": status})]
    if {k: chosen[k] for k in ("type", "reason", "message")} != true_condition(run):
        actions.append(Event(run, "Warning" if chosen["type"] == FAILED else "Normal", chosen["reason"],
                             chosen["message"]))
    return actions
