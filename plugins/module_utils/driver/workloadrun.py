"""The WorkloadRun loop: the parent loop (driver/parent.py) over the WorkloadRun tier, driving its Workflow.

The rules are `engine/reconcile/workloadrun_tier.py`; this file only reads the cluster into the tier's world,
plans in check mode, names the objects its --diff shows and shapes the result.
"""
from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from ..engine.api.actions import Ref
from ..engine.api.errors import InputError, WorkflowFailure
from ..engine.api.objects import true_condition
from ..engine.api.vocabulary import API_VERSION, WORKFLOW
from ..engine.plan import render
from ..engine.reconcile import workloadrun_tier as tier
from ..kube.rest import Kube
from . import diff
from .options import RunOptions
from .parent import ParentLoop
from .preflight import preflight
from .results import WORKLOAD_RUN_DOMAIN, category_data
from .worlds import resource_slices

Obj = dict[str, Any]


class WorkloadRunLoop(ParentLoop):
    """One WorkloadRun driven to its end (the loop is driver/parent.py's)."""

    def admit(self, live: Obj) -> Obj:
        return tier.admit(self.desired, live)

    def observe(self, parent: Obj, expired: bool = False) -> tier.WorkloadRunWorld:
        name = parent["metadata"]["name"]
        world = tier.WorkloadRunWorld(parent, self.workflow(name), now=datetime.now(UTC))
        if tier.needs_nodes(world):
            world.nodes = self.kube.list("v1", "Node")
            world.resource_slices = resource_slices(self.kube, world.nodes)
        return world

    def workflow(self, name: str) -> Obj | None:
        """The run's Workflow (it has the run's name), live; None when not made yet."""
        return self.kube.get(Ref(API_VERSION, WORKFLOW, self.namespace, name))

    def reconcile(self, world: tier.WorkloadRunWorld) -> tier.WorkloadRunStep:
        return tier.reconcile(world)

    def note(self, parent: Obj, line: str) -> str:
        return f"{self.namespace}/{parent['metadata']['name']}: {line}"

    def check(self, parent: Obj) -> Obj:
        plan = self.plan(parent)   # first: a plan to create the Workflow is a change the result must say
        return {**self.result(parent, False), "plan": plan}

    def objects(self) -> dict[str, Obj | None]:
        run = self.kube.get(Ref.of(self.desired))
        workflow = self.workflow(self.desired["metadata"]["name"])
        return {diff.key(self.desired): run, **({diff.key(workflow): workflow} if workflow else {})}

    def planned(self, result: Obj) -> list[Obj]:
        built = (result.get("plan") or {}).get("workflow")
        return [built] if built else []

    def plan(self, run: Obj) -> Obj:
        """Check mode: the Workflow the run would create and its plan over the live nodes; nothing is written."""
        world = self.observe(run)
        if world.workflow is not None or not tier.needs_nodes(world):
            return {}
        try:
            built, _resolved, _platform = tier.build(world)
        except (InputError, WorkflowFailure) as exc:
            self.options.progress(f"build failed: {exc}")
            return {"failure": {"reason": "BuildFailed", "message": str(exc)}}
        self.changed = True
        rendered = render.render(built, world.nodes)
        out: Obj = {"workflow": built, "plan": rendered.plan}
        if rendered.failure:
            out["failure"] = {"reason": rendered.failure.reason, "message": rendered.failure.message}
        return out

    def result(self, parent: Obj, timed_out: bool = False) -> Obj:
        name = parent["metadata"]["name"]
        workflow = self.workflow(name) if parent.get("status") else None
        data = category_data(self.kube, self.namespace, {"domain": WORKLOAD_RUN_DOMAIN, "variant": name}, workflow)
        condition = true_condition(parent)
        phase = condition["type"] if condition["type"] in ("Succeeded", "Failed") else "InProgress"
        status = parent.get("status") or {}
        return {"changed": self.changed, "name": name, "namespace": self.namespace, "phase": phase,
                "condition": condition, "timed_out": timed_out,
                "workflow": (status.get("workflowRef") or {}).get("name", ""),
                "conditions": status.get("conditions") or [],
                "detected_platform": status.get("detectedPlatform", ""),
                "detected_gpu_architecture": status.get("detectedGPUArchitecture", ""),
                "resolved_gpus_per_node": status.get("resolvedGpusPerNode"),
                "succeeded_nodes": data["succeeded"], "failed_nodes": data["failed"]}


def run_workload_run(connect: Callable[[], Kube], args: Obj, options: RunOptions,
                     on_start: Callable[[WorkloadRunLoop], None]) -> Obj:
    """Drive the WorkloadRun `args` describes; bad input is refused before `connect` reaches the cluster."""
    desired = tier.desired_workload_run(args)
    kube = connect()
    preflight(kube, args["namespace"], f"WorkloadRun {args['namespace']}/{args['name']}", workload_run=True,
              priority_class=desired["spec"].get("priorityClassName") or "")
    loop = WorkloadRunLoop(kube, options, desired)
    on_start(loop)
    return loop.run()
