"""The WorkloadRun loop: observe, reconcile the WorkloadRun tier, execute, drive its Workflow, repeat.

The rules are `engine/reconcile/workloadrun_tier.py`; this file only reads the cluster, runs the Step (with the
Workflow driver while the Workflow runs) and shapes the result.
"""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from ..engine.api.actions import Ref
from ..engine.api.errors import InputError, WorkflowFailure
from ..engine.api.objects import true_condition
from ..engine.api.vocabulary import API_VERSION, WORKFLOW
from ..engine.plan import render
from ..engine.reconcile import workloadrun_tier as tier
from ..kube.rest import ApiException, Kube
from . import execute
from .options import RunOptions
from .preflight import preflight
from .results import WORKLOAD_RUN_DOMAIN, category_data
from .workflow import resource_slices, run_workflow

Obj = dict[str, Any]


class WorkloadRunDriver:
    """One WorkloadRun driven to its end; `changed` says whether anything was written."""

    def __init__(self, kube: Kube, options: RunOptions, desired: Obj) -> None:
        self.kube, self.options, self.desired = kube, options, desired
        self.namespace = desired["metadata"]["namespace"]
        self.changed = False

    def workload_run(self) -> Obj:
        """The live run, created when missing (not in check mode); refused when it is not ours."""
        live = self.kube.get(Ref.of(self.desired))
        if live is None:
            self.changed = True
            if self.options.check_mode:
                return self.desired
            try:
                return self.kube.create(self.desired)
            except ApiException as exc:
                if exc.status != 409:
                    raise
                live = self.kube.get(Ref.of(self.desired)) or self.desired
        return tier.admit(self.desired, live)

    def observe(self, run: Obj) -> tier.WorkloadRunWorld:
        name = run["metadata"]["name"]
        world = tier.WorkloadRunWorld(run, self.kube.get(Ref(API_VERSION, WORKFLOW, self.namespace, name)),
                                      now=datetime.now(UTC))
        if tier.needs_nodes(world):
            world.nodes = self.kube.list("v1", "Node")
            world.resource_slices = resource_slices(self.kube, world.nodes)
        return world

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

    def run(self) -> Obj:
        options = self.options
        deadline = time.monotonic() + options.timeout
        run = self.workload_run()
        if options.check_mode:
            return {**self.result(run, False), "plan": self.plan(run)}
        conflicts, timed_out = execute.Conflicts("WorkloadRun"), False
        while True:
            world = self.observe(run)
            step = tier.reconcile(world)
            outcome = execute.run(self.kube, step.step, run["metadata"]["name"], options.trace, options.alive)
            self.changed |= outcome.done > 0
            run = self.kube.get(Ref.of(run)) or run
            if conflicts.met(outcome, run["metadata"]["name"]):
                continue
            for line in step.notes:
                options.progress(f"{self.namespace}/{run['metadata']['name']}: {line}")
            if step.failure:
                raise WorkflowFailure(*step.failure)
            if step.done or timed_out:
                return self.result(run, timed_out)
            if step.step.actions:
                continue
            left = dataclasses.replace(options, timeout=max(deadline - time.monotonic(), 1), check_mode=False,
                                       diff=False)
            driven = run_workflow(self.kube, self.namespace, step.drive, left, preflighted=True)
            self.changed |= bool(driven.get("changed"))
            timed_out = bool(driven.get("timed_out"))

    def result(self, run: Obj, timed_out: bool) -> Obj:
        name = run["metadata"]["name"]
        workflow = self.kube.get(Ref(API_VERSION, WORKFLOW, self.namespace, name)) if run.get("status") else None
        data = category_data(self.kube, self.namespace, {"domain": WORKLOAD_RUN_DOMAIN, "variant": name}, workflow)
        condition = true_condition(run)
        phase = condition["type"] if condition["type"] in ("Succeeded", "Failed") else "InProgress"
        status = run.get("status") or {}
        return {"changed": self.changed, "name": name, "namespace": self.namespace, "phase": phase,
                "condition": condition, "timed_out": timed_out,
                "workflow": (status.get("workflowRef") or {}).get("name", ""),
                "conditions": status.get("conditions") or [],
                "detected_platform": status.get("detectedPlatform", ""),
                "detected_gpu_architecture": status.get("detectedGPUArchitecture", ""),
                "resolved_gpus_per_node": status.get("resolvedGpusPerNode"),
                "succeeded_nodes": data["succeeded"], "failed_nodes": data["failed"]}


def run_workload_run(connect: Callable[[], Kube], args: Obj, options: RunOptions,
                     on_start: Callable[[WorkloadRunDriver], None]) -> Obj:
    """Drive the WorkloadRun `args` describes; bad input is refused before `connect` reaches the cluster."""
    desired = tier.desired_workload_run(args)
    kube = connect()
    preflight(kube, args["namespace"], f"WorkloadRun {args['namespace']}/{args['name']}", workload_run=True,
              priority_class=desired["spec"].get("priorityClassName") or "")
    driver = WorkloadRunDriver(kube, options, desired)
    on_start(driver)
    return driver.run()
