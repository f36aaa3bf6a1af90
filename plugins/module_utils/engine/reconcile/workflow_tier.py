"""One pass of NVCRE's Workflow reconcile (workflow spec §2 steps 4-12, §4, §7, §8, §10) as a pure function.

`reconcile(world)` reads what the driver observed and returns the actions to run in order. It keeps no
memory between passes: everything it needs is in the cluster (Workflow status, deterministic child names,
labels, owner references), so the driver may be killed between any two actions and the next pass goes on.

Invariants that make every pass safe to interrupt and repeat:

- At most one Workflow `UpdateStatus` per step, carrying the resourceVersion as read: a lost or conflicting
  write is simply recomputed by the next pass from the same cluster state (`workflow_writes`).
- Creates come before the status write that records them. A child that exists but is not recorded gets
  the same deterministic `Create` again; the driver meets AlreadyExists and adopts it (`ownership`).
- Deletes that lose information (a retried group's Job, the previous iteration's Jobs) come *after* the
  status write that makes them stale, and every later pass finishes them: a retried group shows NVCRE's
  Pending status (no jobRef, no times) and its Job's `cre.certification/retry` label tells the Job of an
  earlier attempt (deleted before the name is reused) from a fresh one that exists unrecorded (adopted);
  Jobs named in `iterationHistory` are deleted whenever they are seen. So a retry or an iteration is
  counted once: the counter (`retries`, `completedIterations`) moves in the same write that resets the groups.
- Deletes of job-scoped dependency copies come *before* the write that drops their refs (`dependency_ledger`,
  which also keeps a PVC's ref until its PV is reclaimed): a lost write repeats the deletes (NotFound is success).
- Node-result ConfigMaps are unions (`node_results`), written before the status that references them:
  merging the same Job's failed nodes twice changes nothing.
- Every delete carries the live UID as a precondition: never someone else's object of the same name.

Every pass resolves its spec once (`workflow_plan.ResolvedPlan`); the first discovers the nodes and partitions
them (§4), the later ones launch, poll, and end iterations. The Running groups' Jobs are polled in `workflow_poll`.

Diagnose mode (§9) runs its rounds through the same launch and poll; the end of a round goes to
`diagnose_tier`. Its Job names carry the round (`-<group>-iter-<round+1>`), so a probe group repeated in a later
round is a new Job with its own measurement, and no Job is ever deleted to reuse a name.
"""
from __future__ import annotations

from datetime import timedelta
from typing import Any

from ..api import naming
from ..api.actions import Delete, Ref, Step
from ..api.errors import WorkflowFailure
from ..api.objects import (
    condition,
    is_true,
    meta,
    orchestration_of,
    set_condition,
    status_orchestration,
    thresholds_of,
    timestamp,
)
from ..api.vocabulary import (
    API_VERSION,
    FAILED,
    HARDWARE_FAILED,
    IN_PROGRESS,
    PENDING,
    RUNNING,
    SUCCEEDED,
    VALIDATION_FAILED,
)
from ..models import dump, parse_workflow
from ..plan import detect, jobs, partition
from . import diagnose_gate, diagnose_tier, node_results
from .workflow_plan import ResolvedPlan
from .workflow_poll import COMPUTE_DOMAIN, IMMEDIATE, REQUEUE, WorkflowPoll
from .workflow_writes import WorkflowWrites
from .world import WorkflowWorld

Obj = dict[str, Any]


def reconcile(world: WorkflowWorld) -> Step:
    workflow = world.workflow
    if is_true(workflow, SUCCEEDED) or is_true(workflow, FAILED):
        return Step(terminal=True)
    try:
        run = _Pass(world)
    except WorkflowFailure as failure:  # §2 steps 6-7 refused the spec: OverrideError, CheckpointPVCMissing
        return WorkflowWrites(world).failed(failure.reason, failure.message)
    step = run.run()
    step.wants_logs = run.wants_logs
    return step


def _history_entry(group: Obj) -> Obj:
    """A group as `iterationHistory` keeps it."""
    entry = {"name": group["name"], "phase": group.get("phase")}
    if group.get("jobRef"):
        entry["jobName"] = group["jobRef"]["name"]
    entry.update({k: group[k] for k in ("startTime", "completionTime") if group.get(k)})
    return entry


class _Pass(WorkflowPoll):
    """The pass: the early-resolved plan (raises WorkflowFailure when §2 steps 6-7 refuse the spec), then
    discovery on the first pass, else launches, the poll of the Running groups, or the end of an iteration."""

    def __init__(self, world: WorkflowWorld) -> None:
        workflow = world.workflow
        # The spec as the API server stores it, defaults included (a no-op for a Workflow it accepted).
        self.spec = dump(parse_workflow({k: v for k, v in workflow.items() if k != "status"}))["spec"]
        persisted = status_orchestration(workflow)
        super().__init__(world, ResolvedPlan.of(workflow, partition.early_spec(self.spec, persisted), world.namespaced))

    # ------------------------------------------------------------------ entry

    def run(self) -> Step:
        if not self.orch.get("totalGroups"):
            return self.discover()
        self.actions.extend(self.ledger.ensure_workflow(self.plan))
        self.actions.extend(self.ledger.stamps())
        active = {g["name"] for g in self.orch.get("groups") or [] if g.get("phase", PENDING) in (PENDING, RUNNING)}
        self.actions.extend(self.ledger.reclaim(active, self.job_iteration()))
        self.delete_previous_iterations()
        groups = self.orch.get("groups") or []
        if any(g.get("phase") == RUNNING for g in groups):
            return self.poll()
        if groups and all(g.get("phase") in (SUCCEEDED, FAILED) for g in groups):
            return self.complete_iteration()
        return self.launch()

    # ------------------------------------------------------------------ §4 discovery and partition

    def discover(self) -> Step:
        record: Obj = {}
        try:
            detection, resolved = partition.discover({**self.workflow, "spec": self.spec}, self.world.nodes,
                                                     self.plan.spec, record, self.world.resource_slices)
            detection = partition.check(resolved, detection, record)
            discovered = ResolvedPlan.of(self.workflow, resolved, self.world.namespaced)
            self.actions.extend(self.ledger.ensure_workflow(discovered))  # step 10, before nodesPerJob and grouping
            part = partition.group(resolved, detection, record)
        except WorkflowFailure as failure:
            if isinstance(failure, detect.DetectionFailure):
                record.update(excluded_nodes=failure.detection.excluded_nodes,
                              exclusion_reason=failure.detection.exclusion_reason)
            self.record_plan(record)
            self.events(record.get("events") or [])
            return self.failed(failure.reason, failure.message)
        self.record_plan(record)
        self.events(record["events"])
        total, npj = len(part.detection.nodes), part.nodes_per_job
        self.orch.update(totalNodes=total, nodesPerJob=npj, totalGroups=len(part.groups), currentIteration=1,
                         groups=part.groups)
        if self.plan.diagnose is not None:
            self.orch["diagnose"] = diagnose_tier.initial_status()
        if discovered.unpinned:
            message = (f"Discovered {total} nodes, running 1 unpinned job of {npj} nodes "
                       f"({total - npj} target nodes not exercised)")
        else:
            message = f"Discovered {total} nodes, partitioned into {len(part.groups)} groups ({npj} nodes/job)"
        return self.write(IN_PROGRESS, "GroupsPartitioned", message, IMMEDIATE)

    def record_plan(self, record: Obj) -> None:
        fields = (("detected_platform", "detectedPlatform"), ("detected_gpu_architecture", "detectedGPUArchitecture"),
                  ("gpu_products", "gpuProducts"), ("applied_overrides", "appliedOverrides"),
                  ("placement", "placement"))
        self.orch.update({key: record[name] for name, key in fields if name in record})
        for key in ("excludedNodes", "exclusionReason"):
            self.orch.pop(key, None)
        if record.get("excluded_nodes"):
            self.orch.update(excludedNodes=record["excluded_nodes"], exclusionReason=record["exclusion_reason"])

    # ------------------------------------------------------------------ §8.2 launch

    def job_name(self, group: Obj) -> str:
        single = jobs.is_single_job(orchestration_of(self.plan.spec), int(self.orch["totalGroups"]))
        return naming.job_name(meta(self.workflow).get("name", ""), group["name"], self.job_iteration(), single)

    def mnnvl_off(self, group: Obj) -> bool:
        """Diagnose runs this group with MNNVL forced to 0 (only a template that turns MNNVL on is changed)."""
        if self.plan.diagnose is None or not self.plan.mnnvl:
            return False
        return diagnose_tier.no_mnnvl(group["name"], group.get("nodes") or [], self.orch.get("diagnose") or {})

    def launch(self) -> Step:
        iteration = self.job_iteration()
        try:
            launches = self.launches(iteration)
        except WorkflowFailure as failure:
            return self.failed(failure.reason, failure.message)
        copies = self.ledger.record_copies([(g["name"], launch.dependencies) for g, launch in launches], iteration)
        launched = 0
        for (group, launch), creates in zip(launches, copies):
            self.actions.extend(creates)
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
        if not launched:
            current = condition(self.workflow, IN_PROGRESS) or {}
            return self.write(IN_PROGRESS, current.get("reason", "JobCreated"), current.get("message", ""), REQUEUE)
        return self.write(IN_PROGRESS, "JobCreated", self.running_message(), REQUEUE)

    def launches(self, iteration: int) -> list[tuple[Obj, jobs.Launch]]:
        """The Pending groups that start now (maxConcurrent, no node of a Running group), each with its Job and
        dependency copies. Raises WorkflowFailure when a Job cannot be rendered."""
        groups = self.orch.get("groups") or []
        limit = int(self.execution.get("maxConcurrent") or 0)
        running = [g for g in groups if g.get("phase") == RUNNING]
        busy = {n for g in running for n in g.get("nodes") or []}
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
            launches.append((group, jobs.launch(self.plan.workflow, self.plan.dependencies, group, iteration,
                                                int(self.orch["totalGroups"]), self.affinity_products(group),
                                                self.mnnvl_off(group))))
            busy.update(group.get("nodes") or [])
        return launches

    def affinity_products(self, group: Obj) -> list[str]:
        """The GPU products the Job's affinity requires: none when a node of the group (Unpinned: of the
        cluster) has no product label, because its product was only synthesized from ResourceSlices (§4)."""
        names = set(group.get("nodes") or []) or None
        gpu_nodes = [n for n in self.world.nodes if names is None or meta(n).get("name") in names]
        if any(not (meta(n).get("labels") or {}).get(detect.GPU_PRODUCT) for n in gpu_nodes
               if (meta(n).get("labels") or {}).get(detect.GPU_PRESENT) == "true"):
            return []
        return self.orch.get("gpuProducts") or []

    # ------------------------------------------------------------------ §8.7-8.8 iterations and final status

    def delete_previous_iterations(self) -> None:
        """Jobs named in iterationHistory: finishes an iteration change that was interrupted before its deletes."""
        stale = {g.get("jobName") for it in self.orch.get("iterationHistory") or [] for g in it.get("groups") or []}
        for name in sorted(stale - {None, ""}):
            job = self.world.jobs.get(name)
            if job is not None and not meta(job).get("deletionTimestamp"):
                self.delete(job)

    def complete_iteration(self) -> Step:
        if self.ledger.settling():  # a moment more, so the iteration's claims are reclaimed before it moves on
            current = condition(self.workflow, IN_PROGRESS) or {}
            return self.write(IN_PROGRESS, current.get("reason", "JobRunning"), current.get("message", ""), REQUEUE)
        if self.plan.diagnose is not None:
            return self.diagnose_round()
        completed = int(self.orch.get("completedIterations") or 0) + 1
        self.orch["completedIterations"] = completed
        groups = self.orch["groups"]
        if completed >= self.plan.iterations:
            return self.final_status()
        snapshot = [_history_entry(group) for group in groups]
        self.orch.setdefault("iterationHistory", []).append(
            {"iteration": int(self.orch.get("currentIteration") or 1), "groups": snapshot})
        done = [self.world.jobs[e["jobName"]] for e in snapshot if e.get("jobName") in self.world.jobs]
        self.folding = done  # their evidence moves to earlierIterations in this write, before their deletes
        self.orch["currentIteration"] = completed + 1
        for group in groups:
            self.reset(group, retries=0)
        step = self.write(IN_PROGRESS, "IterationCompleted",
                          f"Iteration {completed}/{self.plan.iterations} completed, starting next", IMMEDIATE)
        step.actions.extend(Delete(Ref.of(job), uid=meta(job).get("uid", "")) for job in done)
        return step

    def final_status(self) -> Step:
        groups = self.orch["groups"]
        history = [g for it in self.orch.get("iterationHistory") or [] for g in it.get("groups") or []]
        failed = sum(1 for g in history + groups if g.get("phase") == FAILED)
        succeeded_nodes = [n for g in groups if g.get("phase") == SUCCEEDED for n in g.get("nodes") or []]
        if succeeded_nodes:
            self.record_nodes(node_results.merge_succeeded, "succeededNodesRef", succeeded_nodes)
        if not failed:
            return self.write(SUCCEEDED, "JobCompleted",
                              f"All {self.plan.iterations} iterations completed successfully", None, terminal=True)
        failed_jobs = [self.world.jobs.get(g["jobRef"]["name"]) or {} for g in groups
                       if g.get("phase") == FAILED and g.get("jobRef")]
        hardware = any(is_true(j, HARDWARE_FAILED) for j in failed_jobs)
        validation = any(is_true(j, VALIDATION_FAILED) for j in failed_jobs)
        message = f"{failed} groups failed across {self.plan.iterations} iterations"
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
        expression = str(thresholds_of(self.plan.spec).get(diagnose_gate.KEY) or "")
        verdicts, failures = {}, {}
        for group in groups:
            job = self.world.jobs.get((group.get("jobRef") or {}).get("name", ""))
            verdicts[group["name"]] = diagnose_gate.verdict(group, job, self.world.measurements, expression)
            if group.get("phase") == FAILED and job is not None:
                failures[group["name"]] = (job.get("status") or {}).get("failedNodes") or []
        spec = self.plan.diagnose or {}
        decided = diagnose_tier.complete_round(
            self.orch.get("diagnose") or diagnose_tier.initial_status(), groups, verdicts,
            int(spec.get("minGroupSize") or 2), self.plan.mnnvl, bool(spec.get("topologyKey")), failures)
        if decided.pending:  # a measurement is not final: the round is not over (its counter does not move)
            # Look again then, or sooner when the ledger keeps a claim whose PV is not released yet (within 5 s).
            self.deadlines.past(self.now + timedelta(seconds=REQUEUE))
            return Step(self.actions, requeue_after=self.deadlines.requeue(REQUEUE), wake_at=self.deadlines.wake_at)
        self.orch["diagnose"] = decided.diagnose
        if not decided.phase:
            self.orch.update(groups=decided.groups, totalGroups=len(decided.groups))
            return self.write(IN_PROGRESS, decided.reason, decided.message, IMMEDIATE)
        if healthy := decided.diagnose.get("healthyNodes") or []:
            self.record_nodes(node_results.merge_succeeded, "succeededNodesRef", healthy)
        if decided.failed_nodes:
            self.record_nodes(node_results.merge_failed, "failedNodesRef", decided.failed_nodes)
        if decided.phase == SUCCEEDED:
            return self.write(SUCCEEDED, decided.reason, decided.message, None, terminal=True)
        return self.failed(decided.reason, decided.message)
