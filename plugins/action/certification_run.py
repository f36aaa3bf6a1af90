"""certification_run: the Certification tier (surroundings.md §3.2) as a controller-side loop.

One Workflow per category, one after another; each is built with the engine, created (owned by the
Certification) and driven to the end by the Workflow driver. Everything is read back from the cluster on
each start, so a rerun after an interruption continues where the last one stopped, and a rerun over a
finished Certification writes nothing.
"""
from __future__ import annotations

import copy
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from ansible.utils.display import Display

from ansible_collections.cre.certification.plugins.action.certification_results import GROUP, category_data
from ansible_collections.cre.certification.plugins.module_utils.driver import workflow
from ansible_collections.cre.certification.plugins.module_utils.driver.execute import Abandoned
from ansible_collections.cre.certification.plugins.module_utils.engine.api.actions import Ref
from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError, WorkflowFailure
from ansible_collections.cre.certification.plugins.module_utils.engine.models import dump, parse_certification
from ansible_collections.cre.certification.plugins.module_utils.engine.plan import category_build, detect, render
from ansible_collections.cre.certification.plugins.module_utils.kube.client import api_client
from ansible_collections.cre.certification.plugins.module_utils.kube.rest import ApiException, Kube
from ansible_collections.cre.certification.plugins.modules.certification_run import SPEC
from ansible_collections.cre.certification.plugins.plugin_utils.engine_action import EngineAction, caller_alive

MANAGED_BY = category_build.MANAGED_BY
MANAGER = "cre.certification"
RESIDENT_FINALIZER = "nvcre.nvidia.com/certification-finalizer"
EXCLUSIVE = ("InProgress", "Succeeded", "Failed")
# The spec names ThresholdViolation as a Certification reason but gives no message; this one says what happened.
VALIDATION_MESSAGE = "One or more certification categories failed performance threshold validation"
STATUS_RETRIES = 5

Obj = dict[str, Any]


def desired_certification(args: dict[str, Any]) -> Obj:
    """The Certification to create, validated with the models (so nothing is written for bad input)."""
    clash = sorted(set(args["options"]) & {"target", "categories", "gangScheduler"})
    if clash:
        raise InputError(f"options.{clash[0]}", "is not a CategoryOptions field; use the module option instead")
    spec: Obj = {**copy.deepcopy(args["options"]), "categories": categories(args["categories"])}
    if args["target"]:
        spec["target"] = copy.deepcopy(args["target"])
    if args["gang_scheduler"]:
        spec["gangScheduler"] = copy.deepcopy(args["gang_scheduler"])
    obj = {"apiVersion": GROUP, "kind": "Certification",
           "metadata": {"name": args["name"], "namespace": args["namespace"],
                        "labels": {**args["labels"], MANAGED_BY: MANAGER}},
           "spec": spec}
    obj["spec"] = dump(parse_certification(obj))["spec"]
    category_build.check_categories(obj["spec"])
    return obj


def categories(items: list[Any]) -> list[Obj]:
    """Categories as dicts; `domain/variant` strings (what a survey multiselect gives) are accepted too."""
    out = []
    for index, item in enumerate(items):
        if isinstance(item, str):
            domain, sep, variant = item.partition("/")
            if not (sep and domain and variant):
                raise InputError(f"categories[{index}]", f'must be "domain/variant" or a dict, got "{item}"')
            item = {"domain": domain, "variant": variant}
        out.append(copy.deepcopy(item))
    return out


def _owned_by(obj: Obj, owner: Obj) -> bool:
    uid = owner["metadata"].get("uid")
    return any(r.get("controller") and r.get("uid") == uid for r in obj["metadata"].get("ownerReferences") or [])


def _failed_placeholder(reason: str, message: str) -> Obj:
    """A category that failed before its Workflow existed (build error) counts as a Failed Workflow."""
    return {"metadata": {}, "status": {"conditions": [
        {"type": "Failed", "status": "True", "reason": reason, "message": message}]}}


def _conditions(old: list[Obj], chosen: Obj, validation_failed: bool, generation: int, now: str) -> list[Obj]:
    """Exclusive InProgress/Succeeded/Failed (others False/NotApplicable) plus ValidationFailed when it holds;
    lastTransitionTime moves only when a condition's status does."""
    before = {c["type"]: c for c in old}
    wanted = [(t, "True", chosen["reason"], chosen["message"]) if t == chosen["type"]
              else (t, "False", "NotApplicable", "") for t in EXCLUSIVE]
    if validation_failed:
        wanted.append(("ValidationFailed", "True", "ThresholdViolation", VALIDATION_MESSAGE))
    out = []
    for kind, status, reason, message in wanted:
        prior = before.get(kind) or {}
        since = prior.get("lastTransitionTime") if prior.get("status") == status else None
        out.append({"type": kind, "status": status, "reason": reason, "message": message,
                    "lastTransitionTime": since or now, "observedGeneration": generation})
    return out


class CertificationRun:
    def __init__(self, kube: Kube, args: dict[str, Any], check_mode: bool, progress: Callable[[str], None],
                 trace: Callable[[str], None] | None = None, alive: Callable[[], bool] | None = None) -> None:
        self.kube, self.args, self.check_mode, self.progress = kube, args, check_mode, progress
        self.trace, self.alive = trace, alive
        self.namespace = args["namespace"]
        self.changed = False
        self.deadline = time.monotonic() + args["timeout"]

    # ---------------------------------------------------------------- the Certification object

    def ensure_certification(self, desired: Obj) -> Obj:
        """Create it, or continue the one this collection created with the same spec; refuse anything else."""
        ref = Ref.of(desired)
        live = self.kube.get(ref)
        if live is None:
            self.changed = True
            if self.check_mode:
                return desired
            try:
                return self.kube.create(desired)
            except ApiException as exc:
                if exc.status != 409:
                    raise
                live = self.kube.get(ref) or desired
        meta = live["metadata"]
        if RESIDENT_FINALIZER in (meta.get("finalizers") or []) or (meta.get("labels") or {}).get(MANAGED_BY) != MANAGER:
            raise WorkflowFailure(
                "CertificationNameCollision",
                f'Certification "{ref.name}" already exists in namespace "{ref.namespace}" and is not managed by '
                f"{MANAGER}; refusing to adopt it")
        if live.get("spec") != desired["spec"]:
            raise InputError("spec", "spec is immutable after creation")
        return live

    def write_status(self, cert: Obj, workflows: list[Obj | None], override: Obj | None = None) -> Obj:
        """Record progress through the status subresource (resourceVersion kept; a conflict re-reads)."""
        progress = category_build.certification_progress(cert, workflows)
        statuses = progress["categoryStatuses"]
        for status in statuses:
            if not status.get("workflowRef"):
                status.pop("workflowRef", None)
        chosen = override or progress["condition"]
        if self.check_mode:
            return cert
        for _attempt in range(STATUS_RETRIES):
            old = cert.get("status") or {}
            now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            status = {**old, "categoryStatuses": statuses,
                      "conditions": _conditions(old.get("conditions") or [], chosen, progress["validationFailed"],
                                                cert["metadata"].get("generation", 1), now)}
            if status == old:
                return cert
            try:
                cert = self.kube.replace({**cert, "status": status}, sub="status")
                self.changed = True
                return cert
            except ApiException as exc:
                if exc.status != 409:
                    raise
                cert = self.kube.get(Ref.of(cert)) or cert
        raise WorkflowFailure("StatusUpdateConflict",
                              f"could not update the status of Certification {cert['metadata']['name']}: "
                              f"it kept changing ({STATUS_RETRIES} conflicts)")

    # ---------------------------------------------------------------- one category

    def live_workflow(self, cert: Obj, name: str) -> Obj | None:
        """The category's Workflow if it is ours; waits out a foreign one that is being deleted."""
        while True:
            wf = self.kube.get(Ref(GROUP, "Workflow", self.namespace, name))
            if wf is None or _owned_by(wf, cert):
                return wf
            if not wf["metadata"].get("deletionTimestamp") or time.monotonic() > self.deadline:
                raise WorkflowFailure(
                    "WorkflowNameCollision",
                    f'Workflow "{name}" already exists in namespace "{self.namespace}" and is not controlled by '
                    f'Certification "{cert["metadata"]["name"]}"; refusing to adopt it')
            time.sleep(self.args["poll_interval"])

    def build(self, cert: Obj, category: Obj) -> tuple[Obj, list[Obj]]:
        """Detect platform and architecture on the target nodes, then build the Workflow (steps 1–6)."""
        nodes = self.kube.list("v1", "Node")
        found = detect.detect(nodes, (cert.get("spec") or {}).get("target"))
        workflow = category_build.build_workflow(
            cert, category, platform=found.platform, gpu_architecture=found.gpu_architecture,
            available_nodes=len(found.nodes), nodes=found.nodes)
        return workflow, nodes

    def create(self, cert: Obj, workflow: Obj) -> Obj:
        try:
            created = self.kube.create(workflow)
        except ApiException as exc:
            if exc.status != 409:
                raise
            created = self.live_workflow(cert, workflow["metadata"]["name"])
            if created is None:  # deleted in between: create again on the next pass
                return self.create(cert, workflow)
        self.changed = True
        return created

    # ---------------------------------------------------------------- the loop

    def run(self) -> Obj:
        desired = desired_certification(self.args)
        cert = self.ensure_certification(desired)
        categories = cert["spec"]["categories"]
        recorded = (cert.get("status") or {}).get("categoryStatuses") or []
        workflows: list[Obj | None] = [None] * len(categories)
        plans: list[Obj] = []
        try:
            for index, category in enumerate(categories):
                key = f"{category['domain']}/{category['variant']}"
                name = category_build.workflow_name(cert["metadata"]["name"], category)
                wf = self.live_workflow(cert, name)
                if wf is None and index < len(recorded) and recorded[index].get("status") == "Failed" \
                        and not recorded[index].get("workflowRef"):
                    workflows[index] = _failed_placeholder("BuildFailed", "build failed in an earlier run")
                    continue
                if wf is None:
                    try:
                        built, nodes = self.build(cert, category)
                    except (InputError, WorkflowFailure) as exc:
                        self.progress(f"{key}: build failed: {exc}")
                        workflows[index] = _failed_placeholder("BuildFailed", f"{key}: {exc}")
                        cert = self.write_status(cert, workflows)
                        continue
                    if self.check_mode:
                        self.changed = True
                        rendered = render.render(built, nodes)
                        plans.append({"category": key, "workflow": built, "plan": rendered.plan,
                                      **({"failure": {"reason": rendered.failure.reason,
                                                      "message": rendered.failure.message}}
                                         if rendered.failure else {})})
                        continue
                    wf = self.create(cert, built)
                    self.progress(f"{key}: created Workflow {name} ({index + 1} of {len(categories)})")
                workflows[index] = wf
                cert = self.write_status(cert, workflows)
                if category_build.workflow_phase(wf) in ("Succeeded", "Failed"):
                    continue
                if self.check_mode:
                    self.changed = True  # it would be driven on
                    continue
                remaining = self.deadline - time.monotonic()
                outcome = workflow.run_workflow(self.kube, self.namespace, name, timeout=max(remaining, 1),
                                              poll_interval=self.args["poll_interval"], progress=self.progress,
                                              trace=self.trace, alive=self.alive)
                self.changed |= bool(outcome.get("changed"))
                workflows[index] = self.kube.get(Ref(GROUP, "Workflow", self.namespace, name))
                cert = self.write_status(cert, workflows)
                if outcome.get("timed_out"):
                    return self.result(cert, workflows, timed_out=True)
        except WorkflowFailure as exc:
            if exc.reason != "WorkflowNameCollision":
                raise
            self.write_status(cert, workflows, {"type": "Failed", "reason": exc.reason, "message": exc.message})
            raise
        if self.check_mode:
            return {**self.result(cert, workflows), "plan": plans}
        cert = self.write_status(cert, workflows)
        return self.result(cert, workflows)

    def result(self, cert: Obj, workflows: list[Obj | None], timed_out: bool = False) -> Obj:
        progress = category_build.certification_progress(cert, workflows)
        condition = progress["condition"]
        summaries = []
        for category, wf in zip(cert["spec"]["categories"], workflows):
            real = wf if wf is not None and wf["metadata"].get("name") else None
            data = category_data(self.kube, self.namespace, category, real) if real else {"succeeded": [], "failed": []}
            cond = next((c for c in ((wf or {}).get("status") or {}).get("conditions") or []
                         if c.get("status") == "True" and c.get("type") in EXCLUSIVE), {})
            summaries.append({
                "domain": category["domain"], "variant": category["variant"],
                "workflow": real["metadata"]["name"] if real else "",
                "status": category_build.workflow_phase(wf),
                "condition": {k: cond.get(k, "") for k in ("type", "reason", "message")},
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


class ActionModule(EngineAction):
    SPEC = SPEC
    _supports_check_mode = True

    def execute(self, args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        if args["timeout"] <= 0:
            raise InputError("timeout", "must be greater than 0")
        display = Display()
        run = CertificationRun(Kube(api_client(args)), args, bool(self._task.check_mode), display.display,
                               trace=display.v, alive=caller_alive())
        try:
            return run.run()
        except (workflow.DriverError, Abandoned) as exc:
            return {"failed": True, "changed": run.changed, "msg": str(exc)}
        except WorkflowFailure as exc:
            return {"failed": True, "changed": run.changed, "reason": exc.reason, "msg": exc.message}
        except ApiException as exc:
            return {"failed": True, "changed": run.changed, "msg": f"API error {exc.status} {exc.reason}: {exc.body}"}
