"""One pass of the Certification controller (surroundings.md §3.2) as a pure function: `reconcile(world)`.

Categories run one after another, each as a Workflow named `<certification>-<domain>-<variant>[-tokens]`
and controlled by the Certification; a category that fails (its Workflow, or its build) does not stop the
rest. A pass looks at every category in order and returns the first thing to do: record progress in the
status, create the next Workflow, or drive the current one (the shell runs the Workflow tier for that).
Everything comes from the cluster, so a rerun continues where the last run stopped; over a finished
Certification it writes nothing.
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ..api.actions import Create, Event, Step, UpdateStatus
from ..api.errors import InputError, WorkflowFailure
from ..api.objects import condition, controlled_by, is_true, meta, parse_time, timestamp, true_condition, true_type
from ..api.vocabulary import (
    ANNOTATION_GEMM_FLOORS,
    ANNOTATION_GOLDEN_PROFILE,
    API_VERSION,
    BUILD_FAILED,
    CERTIFICATION,
    CERTIFICATION_NAME_COLLISION,
    EXCLUSIVE,
    FAILED,
    FINALIZER_CERTIFICATION,
    GPU_ARCHITECTURE_DEFAULTS,
    IN_PROGRESS,
    LABEL_MANAGED_BY,
    MANAGER,
    NOT_APPLICABLE,
    PENDING,
    SUCCEEDED,
    THRESHOLD_VIOLATION,
    VALIDATION_FAILED,
    WORKFLOW_FAILED,
    WORKFLOW_NAME_COLLISION,
)
from ..catalog import gpu_floors
from ..catalog.registry import Catalog, builtin_catalog
from ..models import dump, parse_certification
from ..plan import category_build, category_detect, detect, render
from ..spec import thresholds
from ..status.workflow import workflow_phase
from . import ownership

# The spec names ThresholdViolation as a Certification reason but gives no message; this one says what happened.
VALIDATION_MESSAGE = "One or more certification categories failed performance threshold validation"
EARLIER_BUILD_FAILURE = "build failed in an earlier run"
WAITING_FOR_NODES = "WaitingForNodes"
WAIT_FOR_NODES = timedelta(minutes=5)
NO_NODES_NOTE = "Nodes that are cordoned or unschedulable do not count."
ARCHITECTURE_UNKNOWN = ("cannot determine GPU architecture from target nodeSelector "
                        "(nvidia.com/gpu.product label is required)")

Obj = dict[str, Any]


# ---------------------------------------------------------------- the Certification object

def desired_certification(args: Obj) -> Obj:
    """The Certification a run asks for, validated with the models (so nothing is written for bad input).

    `args`: name, namespace, categories (dicts, or `domain/variant` strings as a survey gives them), target,
    gang_scheduler, priority_class_name (optional), options (the CategoryOptions of every category) and labels."""
    clash = sorted(set(args["options"]) & {"target", "categories", "gangScheduler", "priorityClassName"})
    if clash:
        raise InputError(f"options.{clash[0]}", "is not a CategoryOptions field; use the module option instead")
    spec: Obj = {**copy.deepcopy(args["options"]), "categories": categories(args["categories"])}
    if args["target"]:
        spec["target"] = copy.deepcopy(args["target"])
    if args["gang_scheduler"]:
        spec["gangScheduler"] = copy.deepcopy(args["gang_scheduler"])
    if args.get("priority_class_name"):
        spec["priorityClassName"] = args["priority_class_name"]
    obj: Obj = {"apiVersion": API_VERSION, "kind": CERTIFICATION,
                "metadata": {"name": args["name"], "namespace": args["namespace"],
                             "labels": {**args["labels"], LABEL_MANAGED_BY: MANAGER}},
                "spec": spec}
    if args.get("gemm_floors"):
        floors = gpu_floors.overrides_text(args["gemm_floors"], "gemm_floors")
        obj["metadata"].setdefault("annotations", {})[ANNOTATION_GEMM_FLOORS] = floors
    if args.get("golden_profile_json"):  # the driver read and checked the file (driver/certification.py)
        obj["metadata"].setdefault("annotations", {})[ANNOTATION_GOLDEN_PROFILE] = args["golden_profile_json"]
    obj["spec"] = dump(parse_certification(obj))["spec"]
    # Thresholds NVCRE would only judge after the run (UnknownThresholdKey) are refused before anything is written.
    thresholds.validate(args["options"].get("thresholds") or {}, "options.thresholds")
    for index, category in enumerate(obj["spec"]["categories"]):
        thresholds.validate((category.get("options") or {}).get("thresholds") or {},
                            f"categories[{index}].options.thresholds")
    return obj  # unknown categories are recorded on the Certification (CategoryNotFound), as NVCRE does


def categories(items: list[Any]) -> list[Obj]:
    """Categories as dicts; `domain/variant` strings are accepted too."""
    out = []
    for index, item in enumerate(items):
        if isinstance(item, str):
            domain, sep, variant = item.partition("/")
            if not (sep and domain and variant):
                raise InputError(f"categories[{index}]", f'must be "domain/variant" or a dict, got "{item}"')
            item = {"domain": domain, "variant": variant}
        out.append(copy.deepcopy(item))
    return out


def admit(desired: Obj, live: Obj) -> Obj:
    """The live Certification of that name, if this collection may continue it (see ownership.admit_ours)."""
    return ownership.admit_ours(CERTIFICATION, CERTIFICATION_NAME_COLLISION, desired, live, FINALIZER_CERTIFICATION)


# ---------------------------------------------------------------- one pass

@dataclass
class CertificationWorld:
    """What the shell observed: the Certification, the live Workflows by name, the Nodes (listed only when a
    category is still to be built), the build failures met earlier in this run (category index → message)
    and whether the run's deadline has passed. For a build also: the gpu.nvidia.com ResourceSlices when a
    GPU node lacks its product label (None: not listed) and the GKE `nccl-tcpxo-installer` pods. `catalog`: the
    categories a run can ask for, ours plus those of the user's `catalog_dirs`, loaded once by the driver. `now`:
    the pass's time, timezone-aware UTC."""

    certification: Obj
    workflows: dict[str, Obj] = field(default_factory=dict)
    nodes: list[Obj] = field(default_factory=list)
    build_failures: dict[int, str] = field(default_factory=dict)
    now: datetime = field(kw_only=True)
    expired: bool = False
    resource_slices: list[Obj] | None = None
    tcpxo_pods: list[Obj] = field(default_factory=list)
    catalog: Catalog = field(default_factory=builtin_catalog)   # the run's option, not the cluster's


@dataclass
class CertificationStep:
    """`step`: the writes, in order. `drive`: the Workflow to drive now (when `step` has nothing to write).
    `wait`: nothing to do until something changes (a foreign Workflow is being deleted, or no node matches the
    target yet): look again later.
    `notes`: progress lines for the user once the writes are done. `build_failures`: met in this pass.
    `failure`: (reason, message) the run ends with, after `step`. `done`: every category is terminal."""

    step: Step = field(default_factory=Step)
    drive: str = ""
    wait: bool = False
    notes: list[str] = field(default_factory=list)
    build_failures: dict[int, str] = field(default_factory=dict)
    failure: tuple[str, str] | None = None
    done: bool = False
    plans: list[Obj] = field(default_factory=list)  # check mode only
    changed: bool = False                           # check mode only: something would be written


def workflow_names(cert: Obj) -> list[str]:
    name = meta(cert)["name"]
    return [category_build.workflow_name(name, c) for c in (cert.get("spec") or {}).get("categories") or []]


def needs_nodes(world: CertificationWorld) -> bool:
    """True when some category still has to be built (so the shell must list the Nodes)."""
    recorded = _recorded(world.certification)
    return any(name not in world.workflows and index not in world.build_failures and not _failed_build(recorded, index)
               for index, name in enumerate(workflow_names(world.certification)))


def reconcile(world: CertificationWorld) -> CertificationStep:
    cert = world.certification
    cats = (cert.get("spec") or {}).get("categories") or []
    names = workflow_names(cert)
    recorded = _recorded(cert)
    seen: list[Obj | None] = [None] * len(cats)
    out = CertificationStep()
    try:
        category_build.check_categories(cert.get("spec") or {}, world.catalog)
    except WorkflowFailure as unknown:  # every category is looked up before anything is built
        failed = {"type": FAILED, "reason": unknown.reason, "message": unknown.message}
        out.step = Step(_status_write(cert, seen, world.now, failed), terminal=True)
        out.failure = (unknown.reason, unknown.message)
        return out
    for index, (category, name) in enumerate(zip(cats, names)):
        key = _key(category)
        wf = world.workflows.get(name)
        if wf is not None and not controlled_by(wf, meta(cert).get("uid", "")):
            if meta(wf).get("deletionTimestamp") and not world.expired:
                out.step, out.wait = Step(_status_write(cert, seen, world.now)), True
                return out
            message = _collision(cert, name)
            failed = {"type": FAILED, "reason": WORKFLOW_NAME_COLLISION, "message": message}
            out.step = Step(_status_write(cert, seen, world.now, failed), terminal=True)
            out.failure = (WORKFLOW_NAME_COLLISION, message)
            return out
        if wf is None:
            message = world.build_failures.get(index) or (EARLIER_BUILD_FAILURE if _failed_build(recorded, index) else "")
            if not message:
                try:
                    built, events = build(cert, category, world)
                except NoNodes as exc:
                    left = _wait_left(world, seen, index)
                    if left > timedelta(0):
                        waiting = {"type": IN_PROGRESS, "reason": WAITING_FOR_NODES, "message": exc.waiting(left)}
                        out.step, out.wait = Step(_status_write(cert, seen, world.now, waiting)), True
                        return out
                    message = exc.message
                    out.notes.append(f"{key}: build failed: {message}")
                    out.build_failures[index] = message
                except (InputError, WorkflowFailure) as exc:
                    message = str(exc)
                    out.notes.append(f"{key}: build failed: {exc}")
                    out.build_failures[index] = message
                else:
                    out.step = Step(_status_write(cert, seen, world.now)
                                    + [Event(cert, e["type"], e["reason"], e["message"]) for e in events]
                                    + [Create(built, owner_uid=meta(cert).get("uid", ""))])
                    out.notes += [f"{key}: {e['reason']}: {e['message']}" for e in events
                                  if e["reason"] == GPU_ARCHITECTURE_DEFAULTS]
                    out.notes.append(f"{key}: created Workflow {name} ({index + 1} of {len(cats)})")
                    return out
            seen[index] = failed_build(message)
            continue
        seen[index] = wf
        if workflow_phase(wf) not in (SUCCEEDED, FAILED):
            out.step = Step(_status_write(cert, seen, world.now))
            out.drive = name
            return out
    out.step = Step(_status_write(cert, seen, world.now), terminal=True)
    out.done = True
    return out


def plan(world: CertificationWorld) -> CertificationStep:
    """Check mode: what each category still to be built would create (`plans`), whether anything would change,
    and the build failures; nothing is written."""
    cert = world.certification
    category_build.check_categories(cert.get("spec") or {}, world.catalog)  # CategoryNotFound: fails at once
    out = CertificationStep(done=True)
    out.changed = not meta(cert).get("uid")  # the Certification itself would be created
    recorded = _recorded(cert)
    for index, (category, name) in enumerate(zip((cert.get("spec") or {}).get("categories") or [], workflow_names(cert))):
        wf = world.workflows.get(name)
        if wf is not None and not controlled_by(wf, meta(cert).get("uid", "")):
            raise WorkflowFailure(WORKFLOW_NAME_COLLISION, _collision(cert, name))
        if wf is not None:
            out.changed |= workflow_phase(wf) not in (SUCCEEDED, FAILED)  # it would be driven on
            continue
        if _failed_build(recorded, index):
            continue
        out.changed = True
        try:
            built, _events = build(cert, category, world)
        except (InputError, WorkflowFailure) as exc:
            out.notes.append(f"{_key(category)}: build failed: {exc}")
            out.build_failures[index] = str(exc)
            continue
        rendered = render.render(built, world.nodes)
        out.plans.append({"category": _key(category), "workflow": built, "plan": rendered.plan,
                          **({"failure": {"reason": rendered.failure.reason, "message": rendered.failure.message}}
                             if rendered.failure else {})})
    return out


class NoNodes(WorkflowFailure):
    """No schedulable node matches the target (step 1): NVCRE waits up to 5 minutes before failing."""

    def __init__(self, target: Obj | None) -> None:
        selector = ",".join(f"{k}={v}" for k, v in sorted(((target or {}).get("nodeSelector") or {}).items()))
        self.selector = selector or "the target"
        super().__init__(BUILD_FAILED, f"No schedulable nodes match {self.selector}. {NO_NODES_NOTE}")

    def waiting(self, left: timedelta) -> str:
        seconds = math.ceil(left.total_seconds())
        return f"No schedulable nodes match {self.selector}; retrying for up to {seconds}s more. {NO_NODES_NOTE}"


def gpu_architecture(found: detect.Detection, target: Obj | None) -> str:
    """Step 2: the majority vote, then the product label the nodeSelector asks for, else the spec's error."""
    if found.gpu_architecture != detect.UNKNOWN_ARCH:
        return found.gpu_architecture
    wanted = detect.parse_product(((target or {}).get("nodeSelector") or {}).get(detect.GPU_PRODUCT, ""))
    if wanted:
        return wanted
    raise WorkflowFailure(BUILD_FAILED, ARCHITECTURE_UNKNOWN)


def build(cert: Obj, category: Obj, world: CertificationWorld) -> tuple[Obj, list[Obj]]:
    """Steps 1–6 for one category: discover and detect on the target nodes (NoNodes when none matches), then
    build the Workflow. Returns it with the detection events for the Certification."""
    spec = cert.get("spec") or {}
    target = spec.get("target")
    try:
        found = detect.detect(world.nodes, target, world.resource_slices)
    except WorkflowFailure as failure:
        if failure.reason == "NodeDiscoveryError":
            raise NoNodes(target) from None
        raise
    arch = gpu_architecture(found, target)
    options = category_build.resolve_options(spec, category)
    detected, events = category_detect.detect_for_build(found.nodes, platform=found.platform, gpu_architecture=arch,
                                                        options=options, tcpxo_pods=world.tcpxo_pods)
    built = category_build.build_workflow(cert, category, platform=found.platform, gpu_architecture=arch,
                                          available_nodes=len(found.nodes), nodes=found.nodes, detected=detected,
                                          catalog=world.catalog)
    return built, events


def _wait_left(world: CertificationWorld, seen: list[Obj | None], index: int) -> timedelta:
    """How much of the 5-minute node wait is left for category `index`. The wait starts when the category
    became current: the Certification's creation, or the end of the latest earlier Workflow (both in the
    cluster, so a rerun inside the window keeps waiting)."""
    starts = [parse_time(meta(world.certification).get("creationTimestamp"))]
    for workflow in seen[:index]:
        done = condition(workflow, true_type(workflow)) if workflow is not None else None
        starts.append(parse_time((done or {}).get("lastTransitionTime")))
    begun = max((t for t in starts if t is not None), default=None)
    if begun is None:
        return WAIT_FOR_NODES
    return begun + WAIT_FOR_NODES - world.now


def failed_build(message: str) -> Obj:
    """A category that failed before its Workflow existed counts as a Failed Workflow."""
    return {"metadata": {}, "status": {"conditions": [
        {"type": FAILED, "status": "True", "reason": BUILD_FAILED, "message": message}]}}


def category_workflows(world: CertificationWorld) -> list[Obj | None]:
    """Each category's Workflow (None when not created; a stand-in when its build failed), in order."""
    recorded = _recorded(world.certification)
    out: list[Obj | None] = []
    for index, name in enumerate(workflow_names(world.certification)):
        message = world.build_failures.get(index) or (EARLIER_BUILD_FAILURE if _failed_build(recorded, index) else "")
        out.append(world.workflows.get(name) or (failed_build(message) if message else None))
    return out


def _collision(cert: Obj, name: str) -> str:
    return (f'Workflow "{name}" already exists in namespace "{meta(cert).get("namespace")}" and is not '
            f'controlled by Certification "{meta(cert)["name"]}"; refusing to adopt it')


def _key(category: Obj) -> str:
    return f"{category['domain']}/{category['variant']}"


def _recorded(cert: Obj) -> list[Obj]:
    return (cert.get("status") or {}).get("categoryStatuses") or []


def _failed_build(recorded: list[Obj], index: int) -> bool:
    """Recorded as Failed with no Workflow: its build failed in an earlier run (it is not built again)."""
    return index < len(recorded) and recorded[index].get("status") == FAILED and not recorded[index].get("workflowRef")


# ---------------------------------------------------------------- status

def category_status(category: Obj, workflow: Obj | None) -> Obj:
    status = {"domain": category["domain"], "variant": category["variant"], "status": workflow_phase(workflow)}
    if workflow is not None:
        wf_meta = meta(workflow)
        ref = {k: wf_meta[k] for k in ("name", "namespace") if wf_meta.get(k)}
        if ref:
            status["workflowRef"] = ref
        for key in ("succeededNodesRef", "failedNodesRef"):
            if (workflow.get("status") or {}).get(key):
                status[key] = copy.deepcopy(workflow["status"][key])
    return status


def certification_progress(certification: Obj, workflows: list[Obj | None]) -> Obj:
    """Where a Certification stands, given its categories' Workflows in category order (None = not created).

    Returns `next` (index of the category whose Workflow to create now, or None), `categoryStatuses`, and
    `condition` (`{type, reason, message}` of the one True condition among InProgress/Succeeded/Failed), plus
    `validationFailed` when some Workflow reports failed thresholds.
    """
    cats = (certification.get("spec") or {}).get("categories") or []
    statuses = [category_status(c, w) for c, w in zip(cats, workflows)]
    total = len(cats)
    result: Obj = {"next": None, "categoryStatuses": statuses,
                   "validationFailed": any(is_true(w, VALIDATION_FAILED) for w in workflows if w is not None)}
    for index, status in enumerate(statuses):
        key = f"{status['domain']}/{status['variant']}"
        if status["status"] == IN_PROGRESS:
            result["condition"] = {"type": IN_PROGRESS, "reason": "WorkflowRunning",
                                   "message": f"Created Workflow for category {key} ({index + 1} of {total})"}
            return result
        if status["status"] == PENDING:
            result["next"] = index
            previous = statuses[index - 1] if index else None
            if previous and previous["status"] == FAILED:
                message = (f"Workflow for category {previous['domain']}/{previous['variant']} failed, "
                           "advancing to next category")
                result["condition"] = {"type": IN_PROGRESS, "reason": WORKFLOW_FAILED, "message": message}
            else:
                result["condition"] = {"type": IN_PROGRESS, "reason": "WorkflowCreated",
                                       "message": f"Created Workflow for category {key} ({index + 1} of {total})"}
            return result
    if any(s["status"] == FAILED for s in statuses):
        result["condition"] = {"type": FAILED, "reason": WORKFLOW_FAILED,
                               "message": "One or more certification categories failed"}
    else:
        result["condition"] = {"type": SUCCEEDED, "reason": "AllWorkflowsSucceeded",
                               "message": "All certification categories completed successfully"}
    return result


def conditions(old: list[Obj], chosen: Obj, validation_failed: bool, generation: int, now: str,
               validation_message: str = VALIDATION_MESSAGE) -> list[Obj]:
    """Exclusive InProgress/Succeeded/Failed (the others False/NotApplicable) plus ValidationFailed when it holds;
    lastTransitionTime moves only when a condition's status does."""
    before = {c["type"]: c for c in old}
    wanted = [(t, "True", chosen["reason"], chosen["message"]) if t == chosen["type"]
              else (t, "False", NOT_APPLICABLE, "") for t in EXCLUSIVE]
    if validation_failed:
        wanted.append((VALIDATION_FAILED, "True", THRESHOLD_VIOLATION, validation_message))
    out = []
    for kind, status, reason, message in wanted:
        prior = before.get(kind) or {}
        since = prior.get("lastTransitionTime") if prior.get("status") == status else None
        out.append({"type": kind, "status": status, "reason": reason, "message": message,
                    "lastTransitionTime": since or now, "observedGeneration": generation})
    return out


def _status_write(cert: Obj, workflows: list[Obj | None], now: datetime, override: Obj | None = None) -> list[Any]:
    """The status write that records `workflows` (categories not seen yet count as not created), or nothing
    when the status already says so."""
    progress = certification_progress(cert, workflows)
    statuses = progress["categoryStatuses"]
    old = cert.get("status") or {}
    stamp = timestamp(now)
    chosen = override or progress["condition"]
    before = true_condition(cert)
    if chosen["reason"] == WAITING_FOR_NODES and before["reason"] == WAITING_FOR_NODES:
        chosen = before  # still waiting: the message said how long when the wait began; no rewrite per pass
    status = {**old, "categoryStatuses": statuses,
              "conditions": conditions(old.get("conditions") or [], chosen,
                                       progress["validationFailed"], meta(cert).get("generation", 1), stamp)}
    if status == old:
        return []
    actions: list[Any] = [UpdateStatus({**cert, "status": status})]
    if {k: chosen[k] for k in ("type", "reason", "message")} != before:
        # A lifecycle event per transition of the True condition (Warning for Failed), as every NVCRE tier.
        actions.append(Event(cert, "Warning" if chosen["type"] == FAILED else "Normal", chosen["reason"],
                             chosen["message"]))
    return actions
