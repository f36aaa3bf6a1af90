"""The Certification loop: the parent loop (driver/parent.py) over the Certification tier, driving the current
category's Workflow.

The rules are `engine/reconcile/certification_tier.py`; this file only reads the cluster into the tier's world,
plans in check mode, names the objects its --diff shows and shapes the result.
"""
from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from ..engine.api.actions import Ref
from ..engine.api.objects import status_orchestration, true_condition
from ..engine.api.vocabulary import API_VERSION, LABEL_CERTIFICATION, WORKFLOW
from ..engine.catalog import user
from ..engine.plan import category_detect, detect
from ..engine.reconcile import certification_tier as tier
from ..engine.status.workflow import workflow_phase
from ..kube.rest import Kube
from . import diff, golden_files
from .options import RunOptions
from .parent import ParentLoop
from .preflight import preflight
from .results import category_data
from .worlds import resource_slices

Obj = dict[str, Any]


class CertificationLoop(ParentLoop):
    """One Certification, driven category after category (the loop is driver/parent.py's)."""

    def __init__(self, kube: Kube, args: Obj, options: RunOptions, desired: Obj) -> None:
        super().__init__(kube, options, desired)
        self.args = args
        self.build_failures: dict[int, str] = {}
        self.catalog = user.load(tuple(args.get("catalog_dirs") or ()))  # read once: the engine does no I/O

    def admit(self, live: Obj) -> Obj:
        return tier.admit(self.desired, live)

    def observe(self, parent: Obj, expired: bool) -> tier.CertificationWorld:
        name = parent["metadata"]["name"]
        listed = self.kube.list(API_VERSION, WORKFLOW, self.namespace, f"{LABEL_CERTIFICATION}={name}")
        workflows = {w["metadata"]["name"]: w for w in listed}
        for wf_name in tier.workflow_names(parent):  # a namesake without our label is still in the way
            if wf_name not in workflows and (found := self.kube.get(Ref(API_VERSION, WORKFLOW, self.namespace, wf_name))):
                workflows[wf_name] = found
        world = tier.CertificationWorld(parent, workflows, [], dict(self.build_failures), expired, now=datetime.now(UTC),
                                        catalog=self.catalog)
        if tier.needs_nodes(world):  # a build: what discovery and detection read
            world.nodes = self.kube.list("v1", "Node")
            world.resource_slices = resource_slices(self.kube, world.nodes)
            # Only GCP H100 has TCPXO: elsewhere a run needs no right to read kube-system's pods.
            if any(detect.node_platform(n) == "gcp" for n in world.nodes):
                world.tcpxo_pods = self.kube.list("v1", "Pod", category_detect.TCPXO_INSTALLER_NAMESPACE,
                                                  category_detect.TCPXO_INSTALLER_SELECTOR)
        return world

    def reconcile(self, world: tier.CertificationWorld) -> tier.CertificationStep:
        step = tier.reconcile(world)
        self.build_failures.update(step.build_failures)  # a build that failed is not tried again this run
        return step

    def waits(self, step: tier.CertificationStep) -> bool:
        return step.wait

    def check(self, parent: Obj) -> Obj:
        planned = tier.plan(self.observe(parent, False))
        self.build_failures.update(planned.build_failures)
        for line in planned.notes:
            self.options.progress(line)
        self.changed |= planned.changed
        return {**self.result(parent), "plan": planned.plans}

    def objects(self) -> dict[str, Obj | None]:
        cert = self.kube.get(Ref.of(self.desired))
        listed = self.kube.list(API_VERSION, WORKFLOW, self.namespace,
                                f"{LABEL_CERTIFICATION}={self.desired['metadata']['name']}")
        return {diff.key(self.desired): cert, **{diff.key(w): w for w in listed}}

    def planned(self, result: Obj) -> list[Obj]:
        return [p["workflow"] for p in result.get("plan") or []]

    def result(self, parent: Obj, timed_out: bool = False) -> Obj:
        return self.summary(self.observe(parent, False), timed_out)

    def summary(self, world: tier.CertificationWorld, timed_out: bool) -> Obj:
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
                "excluded_nodes": status_orchestration(real).get("excludedNodes") or [],
            })
        phase = condition["type"] if condition["type"] in ("Succeeded", "Failed") else "InProgress"
        short = {"name": cert["metadata"]["name"], "namespace": self.namespace, "phase": phase,
                 "condition": condition, "timed_out": timed_out,
                 "categories": [{"category": f"{s['domain']}/{s['variant']}", "workflow": s["workflow"],
                                 "status": s["status"], "failed_nodes": len({f["name"] for f in s["failed_nodes"]})}
                                for s in summaries]}
        return {"changed": self.changed, **short, "categories": summaries, "summary": short}


def run_certification(connect: Callable[[], Kube], args: Obj, options: RunOptions,
                      on_start: Callable[[CertificationLoop], None]) -> Obj:
    """Drive the Certification `args` describes; `on_start` receives the run (the face reads `changed` from it
    when the run ends in an error). Bad input is refused before `connect` reaches the cluster."""
    args = {**args, **golden_files.run_profile(args.get("golden_profile"))}
    desired = tier.desired_certification(args)
    kube = connect()
    preflight(kube, args["namespace"], f"Certification {args['namespace']}/{args['name']}", certification=True,
              priority_class=desired["spec"].get("priorityClassName") or "")
    run = CertificationLoop(kube, args, options, desired)
    on_start(run)
    return run.run()
