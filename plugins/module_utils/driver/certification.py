"""The Certification loop: observe, reconcile the Certification tier, execute, drive the current Workflow, repeat.

The rules are `engine/reconcile/certification_tier.py`; this file only reads the cluster, runs the Step
(with the Workflow driver for the category in progress) and shapes the result.
"""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from ..engine.api.actions import Ref
from ..engine.api.errors import WorkflowFailure
from ..engine.api.objects import true_condition
from ..engine.api.vocabulary import API_VERSION, LABEL_CERTIFICATION, WORKFLOW
from ..engine.catalog import user
from ..engine.plan import category_detect, detect
from ..engine.reconcile import certification_tier as tier
from ..engine.status.workflow import workflow_phase
from ..kube.rest import ApiException, Kube
from . import diff, execute
from .options import RunOptions
from .preflight import preflight
from .results import category_data
from .workflow import resource_slices, run_workflow

Obj = dict[str, Any]


class CertificationRun:
    """One Certification, driven category after category; `changed` says whether anything was written."""

    def __init__(self, kube: Kube, args: Obj, options: RunOptions, desired: Obj) -> None:
        self.kube, self.args, self.options, self.desired = kube, args, options, desired
        self.namespace = args["namespace"]
        self.changed = False
        self.build_failures: dict[int, str] = {}
        self.catalog = user.load(tuple(args.get("catalog_dirs") or ()))  # read once: the engine does no I/O

    def certification(self, desired: Obj) -> Obj:
        """The live Certification, created when missing (not in check mode); refused when it is not ours."""
        ref = Ref.of(desired)
        live = self.kube.get(ref)
        if live is None:
            self.changed = True
            if self.options.check_mode:
                return desired
            try:
                return self.kube.create(desired)
            except ApiException as exc:
                if exc.status != 409:
                    raise
                live = self.kube.get(ref) or desired
        return tier.admit(desired, live)

    def observe(self, cert: Obj, expired: bool) -> tier.CertificationWorld:
        name = cert["metadata"]["name"]
        listed = self.kube.list(API_VERSION, WORKFLOW, self.namespace, f"{LABEL_CERTIFICATION}={name}")
        workflows = {w["metadata"]["name"]: w for w in listed}
        for wf_name in tier.workflow_names(cert):  # a namesake without our label is still in the way
            if wf_name not in workflows and (found := self.kube.get(Ref(API_VERSION, WORKFLOW, self.namespace, wf_name))):
                workflows[wf_name] = found
        world = tier.CertificationWorld(cert, workflows, [], dict(self.build_failures), expired, now=datetime.now(UTC),
                                        catalog=self.catalog)
        if tier.needs_nodes(world):  # a build: what discovery and detection read
            world.nodes = self.kube.list("v1", "Node")
            world.resource_slices = resource_slices(self.kube, world.nodes)
            # Only GCP H100 has TCPXO: elsewhere a run needs no right to read kube-system's pods.
            if any(detect.node_platform(n) == "gcp" for n in world.nodes):
                world.tcpxo_pods = self.kube.list("v1", "Pod", category_detect.TCPXO_INSTALLER_NAMESPACE,
                                                  category_detect.TCPXO_INSTALLER_SELECTOR)
        return world

    def objects(self) -> dict[str, Obj | None]:
        """The Certification (None when missing) and its Workflows, live, for --diff."""
        cert = self.kube.get(Ref.of(self.desired))
        listed = self.kube.list(API_VERSION, WORKFLOW, self.namespace,
                                f"{LABEL_CERTIFICATION}={self.desired['metadata']['name']}")
        return {diff.key(self.desired): cert, **{diff.key(w): w for w in listed}}

    def run(self) -> Obj:
        """Drive the Certification; with --diff the result also says what changed (or would)."""
        before = self.objects() if self.options.diff else {}
        result = self._run()
        if self.options.diff:
            after = dict(before) if self.options.check_mode else self.objects()
            if self.options.check_mode:
                after[diff.key(self.desired)] = after.get(diff.key(self.desired)) or self.desired
                after.update((diff.key(p["workflow"]), p["workflow"]) for p in result.get("plan") or [])
            result["diff"] = diff.entries(before, after)
        return result

    def _run(self) -> Obj:
        options = self.options
        deadline = time.monotonic() + options.timeout
        cert = self.certification(self.desired)
        if options.check_mode:
            planned = tier.plan(self.observe(cert, False))
            self.build_failures.update(planned.build_failures)
            for line in planned.notes:
                options.progress(line)
            self.changed |= planned.changed
            return {**self.result(self.observe(cert, False)), "plan": planned.plans}
        conflicts, timed_out = execute.Conflicts("Certification"), False
        while True:
            world = self.observe(cert, time.monotonic() > deadline)
            step = tier.reconcile(world)
            outcome = execute.run(self.kube, step.step, cert["metadata"]["name"], options.trace, options.alive)
            self.changed |= outcome.done > 0
            self.build_failures.update(step.build_failures)
            cert = self.kube.get(Ref.of(cert)) or cert
            if conflicts.met(outcome, cert["metadata"]["name"]):
                continue
            for line in step.notes:
                options.progress(line)
            if step.failure:
                raise WorkflowFailure(*step.failure)
            if step.done or timed_out:
                return self.result(self.observe(cert, False), timed_out)
            if step.step.actions:
                continue
            if step.wait:
                if world.expired:  # still waiting (for nodes) when the run's time is up
                    return self.result(self.observe(cert, False), True)
                time.sleep(options.poll_interval)
                continue
            left = dataclasses.replace(options, timeout=max(deadline - time.monotonic(), 1), check_mode=False,
                                       diff=False)
            driven = run_workflow(self.kube, self.namespace, step.drive, left, preflighted=True)
            self.changed |= bool(driven.get("changed"))
            timed_out = bool(driven.get("timed_out"))

    def result(self, world: tier.CertificationWorld, timed_out: bool = False) -> Obj:
        cert = world.certification
        workflows = tier.category_workflows(world)
        condition = tier.certification_progress(cert, workflows)["condition"]
        summaries = []
        for category, wf in zip(cert["spec"]["categories"], workflows):
            real = wf if wf is not None and wf["metadata"].get("name") else None
            data = category_data(self.kube, self.namespace, category, real) if real else {"succeeded": [], "failed": []}
            summaries.append({
                "domain": category["domain"], "variant": category["variant"],
                "workflow": real["metadata"]["name"] if real else "",
                "status": workflow_phase(wf),
                "condition": true_condition(wf),
                "succeeded_nodes": data["succeeded"], "failed_nodes": data["failed"],
                "excluded_nodes": (((real or {}).get("status") or {}).get("orchestration") or {}).get("excludedNodes")
                or [],
            })
        phase = condition["type"] if condition["type"] in ("Succeeded", "Failed") else "InProgress"
        short = {"name": cert["metadata"]["name"], "namespace": self.namespace, "phase": phase,
                 "condition": condition, "timed_out": timed_out,
                 "categories": [{"category": f"{s['domain']}/{s['variant']}", "workflow": s["workflow"],
                                 "status": s["status"], "failed_nodes": len({f["name"] for f in s["failed_nodes"]})}
                                for s in summaries]}
        return {"changed": self.changed, **short, "categories": summaries, "summary": short}


def run_certification(connect: Callable[[], Kube], args: Obj, options: RunOptions,
                      on_start: Callable[[CertificationRun], None]) -> Obj:
    """Drive the Certification `args` describes; `on_start` receives the run (the face reads `changed` from it
    when the run ends in an error). Bad input is refused before `connect` reaches the cluster."""
    desired = tier.desired_certification(args)
    kube = connect()
    preflight(kube, args["namespace"], f"Certification {args['namespace']}/{args['name']}", certification=True,
              priority_class=desired["spec"].get("priorityClassName") or "")
    run = CertificationRun(kube, args, options, desired)
    on_start(run)
    return run.run()
