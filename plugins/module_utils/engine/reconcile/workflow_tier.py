"""One pass of NVCRE's Workflow reconcile (workflow spec §2 steps 4-12, §4, §7, §8, §10) as a pure function.

`reconcile(world)` reads what the driver observed and returns the actions to run in order. It keeps no
memory between passes: everything it needs is in the cluster (Workflow status, deterministic child names,
labels, owner references), so the driver may be killed between any two actions and the next pass goes on.

Invariants that make every pass safe to interrupt and repeat:

- At most one Workflow `UpdateStatus` per step, carrying the resourceVersion as read: a lost or conflicting
  write is simply recomputed by the next pass from the same cluster state.
- Creates come before the status write that records them. A child that exists but is not recorded gets
  the same deterministic `Create` again; the driver meets AlreadyExists and adopts it (`ownership`).
- Deletes that lose information (a retried group's Job, the previous iteration's Jobs) come *after* the
  status write that makes them stale, and every later pass finishes them: a retried group shows NVCRE's
  Pending status (no jobRef, no times) and its Job's `cre.certification/retry` label tells the Job of an
  earlier attempt (deleted before the name is reused) from a fresh one that exists unrecorded (adopted);
  Jobs named in `iterationHistory` are deleted whenever they are seen. So a retry or an iteration is
  counted once: the counter (`retries`, `completedIterations`) moves in the same write that resets the groups.
- Deletes of job-scoped dependency copies come *before* the write that drops their refs: a lost write
  repeats the deletes (NotFound is success), never leaks a ref-less object.
- Node-result ConfigMaps are unions (`node_results`), written before the status that references them:
  merging the same Job's failed nodes twice changes nothing.
- Every delete carries the live UID as a precondition: never someone else's object of the same name.

Diagnose mode (§9) runs its rounds through the same launch and poll; the end of a round goes to
`diagnose_tier`. Its Job names carry the round (`-<group>-iter-<round+1>`), so a probe group repeated in a later
round is a new Job with its own measurement, and no Job is ever deleted to reuse a name.

PVC dependencies (§7.2, §7.3, `volumes`): every pass stamps their bound PVs with the Workflow's UID. Cleaning one up
deletes the claim and keeps its ref until its PV is released and, when this Workflow stamped it, switched from
Retain to Delete; the group goes on meanwhile (a claim stays in use while a finished pod that mounts it exists,
and the last iteration's workloads stay), and every later pass retries the kept refs, 5 s apart at most.
"""
from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from ..api import naming
from ..api.actions import Action, AddOwner, Create, Delete, Event, Ref, Step, UpdateStatus
from ..api.errors import WorkflowFailure
from ..api.objects import (
    condition,
    is_true,
    json_copy,
    meta,
    owned_by,
    parse_duration,
    parse_time,
    set_condition,
    timestamp,
)
from ..api.vocabulary import (
    ANNOTATION_WORKFLOW_UID,
    API_VERSION,
    FAILED,
    HARDWARE_FAILED,
    IN_PROGRESS,
    JOB_TIMED_OUT,
    PENDING,
    RUNNING,
    SUCCEEDED,
    VALIDATION_FAILED,
    WORKLOAD_SCHEDULING_BLOCKED,
)
from ..models import dump, parse_workflow
from ..plan import detect, jobs, mnnvl, partition, placement
from ..plan.dependencies import SCOPE_JOB, SCOPE_WORKFLOW, DependencyPlan, reference, strip_when
from . import diagnose_gate, diagnose_tier, node_results, ownership, volumes
from .job_tier import scheduling_blocked, scheduling_paused
from .status import status_write
from .world import WorkflowWorld

STATUS_FAILURE_EVENTS = ("OverrideError", "HeterogeneousPlatform")
REQUEUE = 15.0      # JobRequeueInterval
COMPUTE_DOMAIN = "ComputeDomain"
IMMEDIATE = 0.05
DRAIN_BOUND = timedelta(minutes=5)
CLAIM_SETTLE = timedelta(seconds=15)  # ours: how long an iteration's end waits for a deleted claim to go
TIMEOUT_MESSAGE = "Job exceeded timeoutPerJob"
TIMEOUT_BLOCKED_MESSAGE = "Job exceeded timeoutPerJob while its pods were unschedulable"
Obj = dict[str, Any]


def reconcile(world: WorkflowWorld) -> Step:
    workflow = world.workflow
    if is_true(workflow, SUCCEEDED) or is_true(workflow, FAILED):
        return Step(terminal=True)
    run = _Pass(world)
    step = run.run()
    step.wants_logs = run.wants_logs
    return step


def _job_terminal(job: Obj) -> bool:
    return any(is_true(job, kind) for kind in (HARDWARE_FAILED, FAILED, SUCCEEDED))


def _job_failed(job: Obj) -> bool:
    return any(is_true(job, kind) for kind in (FAILED, HARDWARE_FAILED, VALIDATION_FAILED))


def _ref_key(ref: Obj) -> Ref:
    return Ref(ref.get("apiVersion", ""), ref.get("kind", ""), ref.get("namespace") or "", ref.get("name", ""))


class _Pass:
    def __init__(self, world: WorkflowWorld) -> None:
        self.world = world
        self.workflow = world.workflow
        self.now = world.now or datetime.now(UTC)
        self.uid = meta(self.workflow).get("uid", "")
        self.namespace = meta(self.workflow).get("namespace", "")
        self.status: Obj = json_copy(self.workflow.get("status") or {})
        self.orch: Obj = self.status.setdefault("orchestration", {})
        self.wants_logs: list[str] = []
        self.actions: list[Action] = []
        self.wake_at: datetime | None = None  # the earliest deadline still ahead (Step.wake_at)
        self.release_wait = False  # a cleaned-up claim's PV is not released yet: look again after PV_RELEASE_WAIT
        # The spec as the API server stores it, defaults included (a no-op for a Workflow it accepted).
        self.spec = dump(parse_workflow({k: v for k, v in self.workflow.items() if k != "status"}))["spec"]

    # ------------------------------------------------------------------ entry

    def run(self) -> Step:
        try:
            early = partition.early_spec(self.spec, self.orch)
        except WorkflowFailure as failure:
            return self.failed(failure.reason, failure.message)
        self.diagnose = (early.get("orchestration") or {}).get("diagnose")
        if not self.orch.get("totalGroups"):
            return self.discover(early)
        self.resolved = early
        self.wf_resolved = {**self.workflow, "spec": early}
        self.execution = (early.get("orchestration") or {}).get("execution") or {}
        self.iterations = max(int((early.get("orchestration") or {}).get("iterations") or 1), 1)
        self.unpinned = placement.is_unpinned(early.get("orchestration") or {})
        self.dep_plan = self.dependency_plan(early, (early.get("jobTemplate") or {}).get("spec") or {})
        self.ensure_workflow_dependencies()
        self.stamp_volumes()
        self.reclaim_claims()
        self.delete_previous_iterations()
        groups = self.orch.get("groups") or []
        if any(g.get("phase") == RUNNING for g in groups):
            return self.poll()
        if groups and all(g.get("phase") in (SUCCEEDED, FAILED) for g in groups):
            return self.complete_iteration()
        return self.launch()

    # ------------------------------------------------------------------ writes

    def write(self, kind: str, reason: str, message: str, requeue: float | None, terminal: bool = False) -> Step:
        for key in ("totalNodes", "nodesPerJob", "totalGroups"):  # required once orchestration exists
            self.orch.setdefault(key, 0)
        if self.release_wait and requeue is not None:
            requeue = min(requeue, volumes.PV_RELEASE_WAIT)
        candidate = json_copy(self.status)
        writes = status_write(self.workflow, candidate, kind, reason, message, self.now)
        if candidate != (self.workflow.get("status") or {}):
            self.actions.extend(writes)
        return Step(self.actions, requeue_after=None if terminal else requeue, terminal=terminal,
                    wake_at=None if terminal else self.wake_at)

    def failed(self, reason: str, message: str) -> Step:
        step = self.write(FAILED, reason, message, None, terminal=True)
        if reason in STATUS_FAILURE_EVENTS:  # §8.9: a refused write of these is told in a Warning event
            step.actions = [replace(a, failure_event=f"{reason}StatusUpdateFailed") if isinstance(a, UpdateStatus)
                            else a for a in step.actions]
        return step

    def create(self, obj: Obj) -> None:
        self.actions.append(Create(obj, owner_uid=self.uid))

    def create_copy(self, obj: Obj) -> None:
        """A group's dependency copy, unless the pass that wrote its ref made it and it is seen, ours and not
        going away (a group that waited for its ComputeDomain): its create would only meet AlreadyExists and a
        read to adopt it, two requests per copy. Anything else goes to the server, which decides as before."""
        live = self.world.dependencies.get(Ref.of(obj))
        verdict = None if live is None else ownership.on_exists(Create(obj, owner_uid=self.uid), live, "")
        if not isinstance(verdict, ownership.Adopt):
            self.create(obj)

    def delete(self, obj: Obj) -> None:
        self.actions.append(Delete(Ref.of(obj), uid=meta(obj).get("uid", "")))

    def events(self, events: list[Obj]) -> None:
        self.actions.extend(Event(self.workflow, e["type"], e["reason"], e["message"]) for e in events)

    # ------------------------------------------------------------------ §4 discovery and partition

    def discover(self, early: Obj) -> Step:
        plan: Obj = {}
        try:
            detection, resolved = partition.discover(self.normalized(), self.world.nodes, early, plan,
                                                     self.world.resource_slices)
            detection = partition.check(resolved, detection, plan)
            job_spec = (resolved.get("jobTemplate") or {}).get("spec") or {}
            self.dep_plan = self.dependency_plan(resolved, job_spec)
            self.wf_resolved = {**self.workflow, "spec": resolved}
            self.ensure_workflow_dependencies()  # step 10, before nodesPerJob and grouping
            part = partition.group(resolved, detection, plan)
        except WorkflowFailure as failure:
            if isinstance(failure, detect.DetectionFailure):
                plan.update(excluded_nodes=failure.detection.excluded_nodes,
                            exclusion_reason=failure.detection.exclusion_reason)
            self.record_plan(plan)
            self.events(plan.get("events") or [])
            return self.failed(failure.reason, failure.message)
        self.record_plan(plan)
        self.events(plan["events"])
        total, npj = len(part.detection.nodes), part.nodes_per_job
        self.orch.update(totalNodes=total, nodesPerJob=npj, totalGroups=len(part.groups), currentIteration=1,
                         groups=part.groups)
        if self.diagnose is not None:
            self.orch["diagnose"] = diagnose_tier.initial_status()
        if placement.is_unpinned(resolved.get("orchestration") or {}):
            message = (f"Discovered {total} nodes, running 1 unpinned job of {npj} nodes "
                       f"({total - npj} target nodes not exercised)")
        else:
            message = f"Discovered {total} nodes, partitioned into {len(part.groups)} groups ({npj} nodes/job)"
        return self.write(IN_PROGRESS, "GroupsPartitioned", message, IMMEDIATE)

    def dependency_plan(self, resolved: Obj, job_spec: Obj) -> DependencyPlan:
        return DependencyPlan([strip_when(d) for d in resolved.get("dependencies") or []], job_spec,
                              resolved.get("gangScheduler"), self.world.namespaced)

    def normalized(self) -> Obj:
        return {**self.workflow, "spec": self.spec}

    def record_plan(self, plan: Obj) -> None:
        fields = (("detected_platform", "detectedPlatform"), ("detected_gpu_architecture", "detectedGPUArchitecture"),
                  ("gpu_products", "gpuProducts"), ("applied_overrides", "appliedOverrides"),
                  ("placement", "placement"))
        self.orch.update({key: plan[name] for name, key in fields if name in plan})
        for key in ("excludedNodes", "exclusionReason"):
            self.orch.pop(key, None)
        if plan.get("excluded_nodes"):
            self.orch.update(excludedNodes=plan["excluded_nodes"], exclusionReason=plan["exclusion_reason"])

    # ------------------------------------------------------------------ §7 dependencies

    def ensure_workflow_dependencies(self) -> None:
        """§2 step 9: idempotent by count of workflow-scoped refs, as NVCRE (the rest are created in order)."""
        refs = self.status.setdefault("dependencyRefs", [])
        done = sum(1 for r in refs if r.get("scope", "") in ("", SCOPE_WORKFLOW))
        for obj in self.dep_plan.workflow_manifests(self.wf_resolved)[done:]:
            self.create(obj)
            refs.append(reference(obj, SCOPE_WORKFLOW))
        if not refs:
            self.status.pop("dependencyRefs")

    def clean_job_dependencies(self, group: Obj) -> None:
        """§7.3: delete this group's copies of the current iteration (reverse order), then drop their refs; a
        claim's ref stays until its PV is released and reclaimed (`reclaim_claims` retries it)."""
        refs = self.status.get("dependencyRefs") or []
        iteration = self.job_iteration()
        self.clean_refs([r for r in refs if r.get("scope") == SCOPE_JOB and r.get("groupName") == group["name"]
                         and r.get("iteration") == iteration])

    def reclaim_claims(self) -> None:
        """§7.3 "keep ref and retry": the claim refs a cleanup kept (claim terminating, PV not released yet), retried
        each pass. Only refs of groups that ended, or of earlier iterations or rounds: a Pending or Running group's
        claim is the live one of its next or current attempt (same name), cleaned when that attempt ends."""
        iteration = self.job_iteration()
        active = {g["name"] for g in self.orch.get("groups") or [] if g.get("phase", PENDING) in (PENDING, RUNNING)}
        self.clean_refs([r for r in self.status.get("dependencyRefs") or []
                         if r.get("scope") == SCOPE_JOB and (r.get("apiVersion"), r.get("kind")) == ("v1", volumes.PVC)
                         and not (r.get("iteration") == iteration and r.get("groupName") in active)])

    def clean_refs(self, mine: list[Obj]) -> None:
        """Delete what these refs name (ours only, reverse order) and drop the refs, but for claims still waiting."""
        refs = self.status.get("dependencyRefs") or []
        kept = []
        for ref in reversed(mine):
            key = _ref_key(ref)
            live = self.world.dependencies.get(key)
            if (key.api_version, key.kind) == ("v1", volumes.PVC):
                cleanup = volumes.clean_claim(key, live, self.world.volumes, self.uid,
                                              live is not None and self.owns(live))
                self.actions.extend(cleanup.actions)
                if not cleanup.done:
                    kept.append(ref)
            elif live is not None and self.owns(live):
                self.actions.append(Delete(key, uid=meta(live).get("uid", "")))
        gone = [r for r in mine if r not in kept]
        if gone:
            self.status["dependencyRefs"] = [r for r in refs if r not in gone]
            if not self.status["dependencyRefs"]:
                self.status.pop("dependencyRefs")
        if kept:
            self.release_wait = True
            self.past(self.now + timedelta(seconds=volumes.PV_RELEASE_WAIT))  # look again then (Step.wake_at)

    def settling_claims(self) -> bool:
        """Whether a kept claim ref is about to be reclaimed: its claim is gone but the PV not released yet, or the
        claim was deleted less than CLAIM_SETTLE ago (a claim no pod mounts goes within moments). A claim still there
        after that is mounted by a pod that stays (the last iteration's workloads do): it is not waited for, and
        keeps its ref."""
        for ref in self.status.get("dependencyRefs") or []:
            key = _ref_key(ref)
            if ref.get("scope") != SCOPE_JOB or (key.api_version, key.kind) != ("v1", volumes.PVC):
                continue
            live = self.world.dependencies.get(key)
            if live is None:
                if not all(volumes.reclaim(pv, self.uid).done for pv in volumes.claimed_by(key, self.world.volumes)):
                    return True
                continue
            deleted = parse_time(meta(live).get("deletionTimestamp"))
            if deleted is not None and not self.past(deleted + CLAIM_SETTLE):
                return True
        return False

    def stamp_volumes(self) -> None:
        """§7.2: the bound PV of every live PVC dependency of ours carries the Workflow's UID (each pass)."""
        claims = [obj for key, obj in self.world.dependencies.items()
                  if (key.api_version, key.kind) == ("v1", volumes.PVC) and self.owns(obj)]
        self.actions.extend(volumes.stamps(claims, self.world.volumes, self.uid))

    def job_refs(self) -> dict[str, list[Obj]]:
        """Group name -> its dependency refs of the current iteration (one walk over the refs, not one per group:
        at 2,500 groups that walk per group was a second of CPU per pass)."""
        iteration = self.job_iteration()
        by_group: dict[str, list[Obj]] = {}
        for ref in self.status.get("dependencyRefs") or []:
            if ref.get("scope") == SCOPE_JOB and ref.get("iteration") == iteration:
                by_group.setdefault(str(ref.get("groupName") or ""), []).append(ref)
        return by_group

    def own_job_dependencies(self, job: Obj, refs: list[Obj]) -> None:
        """§7.2: once its Job exists, each namespaced copy of the group (`refs`) gets a non-controller owner
        reference to it, so deleting the Workflow (and so the Job) lets the garbage collector take the copies too."""
        job_ref = {"apiVersion": job.get("apiVersion", API_VERSION), "kind": "Job", "name": meta(job).get("name", ""),
                   "uid": meta(job).get("uid", "")}
        for ref in refs:
            live = self.world.dependencies.get(_ref_key(ref))
            if live is None or not meta(live).get("namespace") or not job_ref["uid"] or owned_by(live, job_ref["uid"]):
                continue
            self.actions.append(AddOwner(_ref_key(ref), tuple(meta(live).get("ownerReferences") or ()), job_ref))

    def owns(self, obj: Obj) -> bool:
        return owned_by(obj, self.uid) or (meta(obj).get("annotations") or {}).get(ANNOTATION_WORKFLOW_UID) == self.uid

    # ------------------------------------------------------------------ §8.2 launch

    def job_iteration(self) -> int:
        """The iteration in Job and dependency-copy names: diagnose counts its rounds there."""
        if self.diagnose is not None:
            return int((self.orch.get("diagnose") or {}).get("round") or 0) + 1
        return int(self.orch.get("currentIteration") or 1)

    def job_name(self, group: Obj) -> str:
        single = jobs.is_single_job(self.resolved.get("orchestration") or {}, int(self.orch["totalGroups"]))
        return naming.job_name(meta(self.workflow).get("name", ""), group["name"], self.job_iteration(), single)

    def mnnvl_off(self, group: Obj) -> bool:
        """Diagnose runs this group with MNNVL forced to 0 (only a template that turns MNNVL on is changed)."""
        if self.diagnose is None or not mnnvl.enabled((self.resolved.get("jobTemplate") or {}).get("spec") or {}):
            return False
        return diagnose_tier.no_mnnvl(group["name"], group.get("nodes") or [], self.orch.get("diagnose") or {})

    def launch(self) -> Step:
        groups = self.orch.get("groups") or []
        limit = int(self.execution.get("maxConcurrent") or 0)
        running = [g for g in groups if g.get("phase") == RUNNING]
        busy = {n for g in running for n in g.get("nodes") or []}
        iteration = self.job_iteration()
        launches: list[tuple[Obj, jobs.Launch]] = []
        for group in groups:
            if group.get("phase", PENDING) != PENDING:
                continue
            if limit and len(running) + len(launches) >= limit:
                break
            if busy & set(group.get("nodes") or []):
                continue
            live = self.world.jobs.get(self.job_name(group))
            if live is not None and meta(live).get("deletionTimestamp"):
                continue  # a previous holder of the name is going away; never adopt a terminating Job
            if live is not None and jobs.retry_of(live) < int(group.get("retries") or 0):
                self.delete(live)  # an earlier attempt's Job, whose delete was interrupted: finish it first
                continue
            try:
                launch = jobs.launch(self.wf_resolved, self.dep_plan, group, iteration,
                                     int(self.orch["totalGroups"]), self.affinity_products(group),
                                     self.mnnvl_off(group))
            except WorkflowFailure as failure:
                return self.failed(failure.reason, failure.message)
            launches.append((group, launch))
            busy.update(group.get("nodes") or [])
        refs = self.status.setdefault("dependencyRefs", [])
        known = {json.dumps(r, sort_keys=True) for r in refs}  # `ref not in refs` per copy was O(groups²)
        launched = 0
        for group, launch in launches:
            for obj in launch.dependencies:
                self.create_copy(obj)
                ref = reference(obj, SCOPE_JOB, group["name"], iteration)
                if (key := json.dumps(ref, sort_keys=True)) not in known:
                    known.add(key)
                    refs.append(ref)
            if any(obj.get("kind") == COMPUTE_DOMAIN and Ref.of(obj) not in self.world.dependencies
                   for obj in launch.dependencies):
                # §7.2: a ComputeDomain just created is not ready; its Job waits for a later pass. Its refs are
                # written now, so that pass sees it (and cleanup finds it). NVCRE stops launching there; the groups
                # after it are independent, so theirs go out in this pass too (issue 22: one pass, not one a group).
                continue
            self.create(launch.job)
            launched += 1
            job_meta = launch.job["metadata"]
            group.update(phase=RUNNING, jobRef={"apiVersion": API_VERSION, "kind": "Job", "name": job_meta["name"],
                                                "namespace": job_meta.get("namespace", self.namespace)},
                         startTime=timestamp(self.now))
        if not refs:
            self.status.pop("dependencyRefs")
        if not launched:
            current = condition(self.workflow, IN_PROGRESS) or {}
            return self.write(IN_PROGRESS, current.get("reason", "JobCreated"), current.get("message", ""), REQUEUE)
        return self.write(IN_PROGRESS, "JobCreated", self.running_message(), REQUEUE)

    def affinity_products(self, group: Obj) -> list[str]:
        """The GPU products the Job's affinity requires: none when a node of the group (Unpinned: of the
        cluster) has no product label, because its product was only synthesized from ResourceSlices (§4)."""
        names = set(group.get("nodes") or []) or None
        gpu_nodes = [n for n in self.world.nodes if names is None or meta(n).get("name") in names]
        if any(not (meta(n).get("labels") or {}).get(detect.GPU_PRODUCT) for n in gpu_nodes
               if (meta(n).get("labels") or {}).get(detect.GPU_PRESENT) == "true"):
            return []
        return self.orch.get("gpuProducts") or []

    def running_message(self) -> str:
        running = sum(1 for g in self.orch.get("groups") or [] if g.get("phase") == RUNNING)
        return f"Iteration {self.orch.get('currentIteration', 1)}/{self.iterations}: {running} groups running"

    # ------------------------------------------------------------------ §8.4-8.6 polling

    def poll(self) -> Step:
        blocked = ""
        moved = False
        failed_nodes: list[Obj] = []
        deferred: list[Action] = []  # deletes that must follow the status write (retried Jobs)
        job_refs = self.job_refs()  # a group's own refs change only after its owner references are seen to
        for group in self.orch.get("groups") or []:
            if group.get("phase") != RUNNING or not group.get("jobRef"):
                continue
            name = group["jobRef"]["name"]
            job = self.world.jobs.get(name)
            if job is not None and meta(job).get("deletionTimestamp"):
                if not self.drained(name):
                    continue
                job = None
            if job is None:  # deleted from outside: the group fails
                self.backfill(group, name, terminal=True)
                self.clean_job_dependencies(group)
                group.update(phase=FAILED, completionTime=timestamp(self.now))
                group.pop("jobRef", None)
                moved = True
                continue
            self.own_job_dependencies(job, job_refs.get(group["name"], []))
            terminal = _job_terminal(job)
            self.backfill(group, name, terminal)
            if not terminal:
                message = self.timeout(group, job)
                if message is None:
                    if not blocked and self.in_progress_reason(job) == WORKLOAD_SCHEDULING_BLOCKED:
                        blocked = f"job {name} scheduling blocked: {self.in_progress_message(job)}"
                    continue
                if name not in self.world.timeout_logs:  # §8.6: its log tail first, then the verdict
                    self.wants_logs.append(name)
                    continue
                job = self.time_out(job, message)
            elif (is_true(job, SUCCEEDED) and (job.get("spec") or {}).get("thresholds")
                  and condition(job, VALIDATION_FAILED) is None):
                continue  # the Job tier still evaluates the thresholds
            moved |= self.complete_group(group, job, failed_nodes, deferred)
        if failed_nodes and self.diagnose is None:  # diagnose names only the confirmed nodes (its verdict)
            name, write = node_results.merge_failed(self.workflow, self.world.configmaps, failed_nodes)
            if write is not None:
                self.actions.append(write)
            self.status["failedNodesRef"] = {"kind": "ConfigMap", "name": name}
        reason, message = "JobRunning", self.running_message()
        if blocked:
            reason, message = "JobSchedulingBlocked", f"{message}; {blocked}"
        step = self.write(IN_PROGRESS, reason, message, IMMEDIATE if moved else REQUEUE)
        step.actions.extend(deferred)
        return step

    def in_progress_reason(self, job: Obj) -> str:
        return (condition(job, IN_PROGRESS) or {}).get("reason", "")

    def in_progress_message(self, job: Obj) -> str:
        return (condition(job, IN_PROGRESS) or {}).get("message", "")

    def drained(self, job_name: str) -> bool:
        return all((p.get("status") or {}).get("phase") in (SUCCEEDED, FAILED)
                   for p in self.world.pods.get(job_name) or [])

    def backfill(self, group: Obj, job_name: str, terminal: bool) -> None:
        """§8.5: an Unpinned group learns its nodes from its Job's pods (complete while running)."""
        if not self.unpinned or group.get("nodes"):
            return
        pods = self.world.pods.get(job_name) or []
        nodes = sorted({(p.get("spec") or {}).get("nodeName", "") for p in pods} - {None, ""})
        if nodes and (terminal or len(nodes) == int(self.orch.get("nodesPerJob") or 0)):
            group["nodes"] = nodes

    def timeout(self, group: Obj, job: Obj) -> str | None:
        """§8.6: the timeout message when a non-terminal Job has exceeded `timeoutPerJob`, else None."""
        if not self.execution.get("timeoutPerJob"):
            return None
        limit = parse_duration(self.execution["timeoutPerJob"])
        status = job.get("status") or {}
        start = parse_time(status.get("workloadStartTime"))
        blocked = parse_time(status.get("schedulingBlockedSince"))
        if blocked is not None and scheduling_blocked(status):
            if self.past(blocked + limit):
                return TIMEOUT_BLOCKED_MESSAGE
            return TIMEOUT_MESSAGE if start is not None and blocked - start > limit else None
        if start is not None:  # a closed blocked episode does not count (surroundings §2.3)
            return TIMEOUT_MESSAGE if self.past(start + scheduling_paused(status) + limit) else None
        if status.get("workloadRef"):
            return None
        launched = parse_time(group.get("startTime"))
        return TIMEOUT_MESSAGE if launched is not None and self.past(launched + limit) else None

    def past(self, deadline: datetime, reached: bool = False) -> bool:
        """Whether `deadline` has passed (`reached`: or is now); if not, it is remembered as a time to look again
        (Step.wake_at)."""
        if self.now > deadline or (reached and self.now == deadline):
            return True
        self.wake_at = deadline if self.wake_at is None else min(self.wake_at, deadline)
        return False

    def time_out(self, job: Obj, message: str) -> Obj:
        """Fail the Job with JobTimedOut (its status subresource), with the failure log read while it still ran."""
        status = json_copy(job.get("status") or {})
        status.setdefault("failureLog", self.world.timeout_logs[meta(job).get("name", "")])
        self.actions.extend(status_write(job, status, FAILED, JOB_TIMED_OUT, message, self.now))
        return {**job, "status": status}

    def drain_deadline(self, job: Obj) -> datetime:
        times = [parse_time(c.get("lastTransitionTime")) for c in (job.get("status") or {}).get("conditions") or []
                 if c.get("type") in (FAILED, HARDWARE_FAILED, VALIDATION_FAILED) and c.get("status") == "True"]
        times.append(parse_time(meta(job).get("deletionTimestamp")))
        latest = max((t for t in times if t is not None), default=self.now)
        return latest + DRAIN_BOUND

    def complete_group(self, group: Obj, job: Obj, failed_nodes: list[Obj], deferred: list[Action]) -> bool:
        """completeTerminalGroup; False while a failed Job's pods drain (the group stays Running)."""
        failed = _job_failed(job)
        name = meta(job)["name"]
        if failed:
            workload = (job.get("status") or {}).get("workloadRef")
            if workload:
                self.actions.append(Delete(Ref(workload.get("apiVersion", ""), workload.get("kind", ""),
                                               workload.get("namespace") or self.namespace, workload["name"]),
                                           uid=workload.get("uid", "")))
            if not self.drained(name) and not self.past(self.drain_deadline(job), reached=True):
                return False
        failed_nodes.extend((job.get("status") or {}).get("failedNodes") or [])
        self.clean_job_dependencies(group)
        timed_out = (condition(job, FAILED) or {}).get("reason") == JOB_TIMED_OUT
        retries = int(group.get("retries") or 0)
        if failed and not timed_out and retries < int(self.execution.get("retryFailedGroups") or 0):
            # NVCRE's Pending: no jobRef, no times. The Job's retry label marks it as the earlier attempt.
            group.update(phase=PENDING, retries=retries + 1)
            for key in ("jobRef", "startTime", "completionTime"):
                group.pop(key, None)
            if self.unpinned:
                group["nodes"] = []
            deferred.append(Delete(Ref.of(job), uid=meta(job).get("uid", "")))
            return True
        group.update(phase=FAILED if failed else SUCCEEDED, completionTime=timestamp(self.now))
        return True

    # ------------------------------------------------------------------ §8.7-8.8 iterations and final status

    def delete_previous_iterations(self) -> None:
        """Jobs named in iterationHistory: finishes an iteration change that was interrupted before its deletes."""
        stale = {g.get("jobName") for it in self.orch.get("iterationHistory") or [] for g in it.get("groups") or []}
        for name in sorted(stale - {None, ""}):
            job = self.world.jobs.get(name)
            if job is not None and not meta(job).get("deletionTimestamp"):
                self.delete(job)

    def complete_iteration(self) -> Step:
        if self.settling_claims():  # a moment more, so the iteration's claims are reclaimed before it moves on
            current = condition(self.workflow, IN_PROGRESS) or {}
            return self.write(IN_PROGRESS, current.get("reason", "JobRunning"), current.get("message", ""), REQUEUE)
        if self.diagnose is not None:
            return self.diagnose_round()
        completed = int(self.orch.get("completedIterations") or 0) + 1
        self.orch["completedIterations"] = completed
        groups = self.orch["groups"]
        if completed >= self.iterations:
            return self.final_status()
        snapshot = []
        for group in groups:
            entry = {"name": group["name"], "phase": group.get("phase")}
            if group.get("jobRef"):
                entry["jobName"] = group["jobRef"]["name"]
            entry.update({k: group[k] for k in ("startTime", "completionTime") if group.get(k)})
            snapshot.append(entry)
        self.orch.setdefault("iterationHistory", []).append(
            {"iteration": int(self.orch.get("currentIteration") or 1), "groups": snapshot})
        done = [self.world.jobs[e["jobName"]] for e in snapshot if e.get("jobName") in self.world.jobs]
        self.orch["currentIteration"] = completed + 1
        for group in groups:
            group.update(phase=PENDING, retries=0)
            for key in ("jobRef", "startTime", "completionTime"):
                group.pop(key, None)
            if self.unpinned:
                group["nodes"] = []
        step = self.write(IN_PROGRESS, "IterationCompleted",
                          f"Iteration {completed}/{self.iterations} completed, starting next", IMMEDIATE)
        step.actions.extend(Delete(Ref.of(job), uid=meta(job).get("uid", "")) for job in done)
        return step

    def final_status(self) -> Step:
        groups = self.orch["groups"]
        history = [g for it in self.orch.get("iterationHistory") or [] for g in it.get("groups") or []]
        failed = sum(1 for g in history + groups if g.get("phase") == FAILED)
        succeeded_nodes = [n for g in groups if g.get("phase") == SUCCEEDED for n in g.get("nodes") or []]
        if succeeded_nodes:
            name, write = node_results.merge_succeeded(self.workflow, self.world.configmaps, succeeded_nodes)
            if write is not None:
                self.actions.append(write)
            self.status["succeededNodesRef"] = {"kind": "ConfigMap", "name": name}
        if not failed:
            return self.write(SUCCEEDED, "JobCompleted", f"All {self.iterations} iterations completed successfully",
                              None, terminal=True)
        failed_jobs = [self.world.jobs.get(g["jobRef"]["name"]) or {} for g in groups
                       if g.get("phase") == FAILED and g.get("jobRef")]
        hardware = any(is_true(j, HARDWARE_FAILED) for j in failed_jobs)
        validation = any(is_true(j, VALIDATION_FAILED) for j in failed_jobs)
        message = f"{failed} groups failed across {self.iterations} iterations"
        if validation:
            set_condition(self.status, VALIDATION_FAILED, True, "JobValidationFailed",
                          "One or more Jobs failed performance threshold validation",
                          meta(self.workflow).get("generation"), self.now)
        if hardware:
            return self.failed("JobHardwareFailed", f"{message}; hardware failures occurred on one or more nodes")
        return self.failed("JobValidationFailed" if validation else "IterationsFailed", message)

    # ------------------------------------------------------------------ §9 diagnose rounds

    def diagnose_round(self) -> Step:
        """The end of a diagnose round: the gate's verdicts, then the next round's groups or the verdict."""
        groups = self.orch["groups"]
        performance = (self.resolved.get("validation") or {}).get("performance") or {}
        expression = str(((performance.get("thresholds") or {}).get("thresholds") or {}).get(diagnose_gate.KEY) or "")
        verdicts, failures = {}, {}
        for group in groups:
            job = self.world.jobs.get((group.get("jobRef") or {}).get("name", ""))
            verdicts[group["name"]] = diagnose_gate.verdict(group, job, self.world.measurements, expression)
            if group.get("phase") == FAILED and job is not None:
                failures[group["name"]] = (job.get("status") or {}).get("failedNodes") or []
        spec = self.diagnose or {}
        decided = diagnose_tier.complete_round(
            self.orch.get("diagnose") or diagnose_tier.initial_status(), groups, verdicts,
            int(spec.get("minGroupSize") or 2), mnnvl.enabled((self.resolved.get("jobTemplate") or {}).get("spec") or {}),
            bool(spec.get("topologyKey")), failures)
        if decided.pending:  # a measurement is not final: the round is not over (its counter does not move)
            return Step(self.actions, requeue_after=REQUEUE, wake_at=self.now + timedelta(seconds=REQUEUE))
        self.orch["diagnose"] = decided.diagnose
        if not decided.phase:
            self.orch.update(groups=decided.groups, totalGroups=len(decided.groups))
            return self.write(IN_PROGRESS, decided.reason, decided.message, IMMEDIATE)
        if healthy := decided.diagnose.get("healthyNodes") or []:
            name, write = node_results.merge_succeeded(self.workflow, self.world.configmaps, healthy)
            if write is not None:
                self.actions.append(write)
            self.status["succeededNodesRef"] = {"kind": "ConfigMap", "name": name}
        if decided.failed_nodes:
            name, write = node_results.merge_failed(self.workflow, self.world.configmaps, decided.failed_nodes)
            if write is not None:
                self.actions.append(write)
            self.status["failedNodesRef"] = {"kind": "ConfigMap", "name": name}
        if decided.phase == SUCCEEDED:
            return self.write(SUCCEEDED, decided.reason, decided.message, None, terminal=True)
        return self.failed(decided.reason, decided.message)
