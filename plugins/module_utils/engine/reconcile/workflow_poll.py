"""§8.4-8.6 of a Workflow pass: polling the Running groups' Jobs (workflow spec).

Each Running group's Job is read as the Job tier left it: a Job gone from outside fails its group; a Job past
`timeoutPerJob` is failed here with JobTimedOut once its log tail was read; a terminal Job completes its group
(completeTerminalGroup) once a failed Job's pods drained, or DRAIN_BOUND after it failed. A failed group with
retries left goes back to NVCRE's Pending, its Job deleted after the status write that makes it stale.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ..api.actions import Action, Delete, Ref, Step
from ..api.objects import condition, is_true, json_copy, meta, parse_duration, parse_time, timestamp
from ..api.vocabulary import (
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
from . import node_results
from .dependency_ledger import DependencyLedger
from .job_tier import scheduling_blocked, scheduling_paused
from .status import status_write
from .workflow_plan import ResolvedPlan
from .workflow_writes import WorkflowWrites
from .world import WorkflowWorld

REQUEUE = 15.0      # JobRequeueInterval
COMPUTE_DOMAIN = "ComputeDomain"
IMMEDIATE = 0.05
DRAIN_BOUND = timedelta(minutes=5)
TIMEOUT_MESSAGE = "Job exceeded timeoutPerJob"
TIMEOUT_BLOCKED_MESSAGE = "Job exceeded timeoutPerJob while its pods were unschedulable"
Obj = dict[str, Any]


def _job_terminal(job: Obj) -> bool:
    return any(is_true(job, kind) for kind in (HARDWARE_FAILED, FAILED, SUCCEEDED))


def _job_failed(job: Obj) -> bool:
    return any(is_true(job, kind) for kind in (FAILED, HARDWARE_FAILED, VALIDATION_FAILED))


def _in_progress(job: Obj, key: str) -> str:
    return (condition(job, IN_PROGRESS) or {}).get(key, "")


@dataclass
class _Polled:
    """What the poll of the Running groups gathered for its status write."""

    moved: bool = False  # a group changed phase: look again at once
    blocked: str = ""    # the first Job whose pods cannot be scheduled, told in the status message
    failed_nodes: list[Obj] = field(default_factory=list)
    deferred: list[Action] = field(default_factory=list)  # deletes that must follow the status write (retried Jobs)


class WorkflowPoll(WorkflowWrites):
    def __init__(self, world: WorkflowWorld, plan: ResolvedPlan) -> None:
        super().__init__(world)
        self.plan = plan
        self.execution = plan.execution  # maxConcurrent, timeoutPerJob, retryFailedGroups
        self.ledger = DependencyLedger(world, self.uid, self.status, self.deadlines)
        self.wants_logs: list[str] = []  # Jobs that timed out, whose log tail the driver reads first (§8.6)

    def job_iteration(self) -> int:
        """The iteration in Job and dependency-copy names: diagnose counts its rounds there."""
        if self.plan.diagnose is not None:
            return int((self.orch.get("diagnose") or {}).get("round") or 0) + 1
        return int(self.orch.get("currentIteration") or 1)

    def running_message(self) -> str:
        running = sum(1 for g in self.orch.get("groups") or [] if g.get("phase") == RUNNING)
        return f"Iteration {self.orch.get('currentIteration', 1)}/{self.plan.iterations}: {running} groups running"

    def reset(self, group: Obj, retries: int) -> None:
        """NVCRE's Pending: no jobRef, no times; an Unpinned group learns its nodes again."""
        group.update(phase=PENDING, retries=retries)
        for key in ("jobRef", "startTime", "completionTime"):
            group.pop(key, None)
        if self.plan.unpinned:
            group["nodes"] = []

    def poll(self) -> Step:
        polled = _Polled()
        job_refs = self.ledger.job_refs(self.job_iteration())  # a group's own refs change only after its owner
        for group in self.orch.get("groups") or []:            # references are seen to
            if group.get("phase") == RUNNING and group.get("jobRef"):
                self.poll_group(group, job_refs.get(group["name"], []), polled)
        if polled.failed_nodes and self.plan.diagnose is None:  # diagnose names only the confirmed nodes (its verdict)
            self.record_nodes(node_results.merge_failed, "failedNodesRef", polled.failed_nodes)
        reason, message = "JobRunning", self.running_message()
        if polled.blocked:
            reason, message = "JobSchedulingBlocked", f"{message}; {polled.blocked}"
        step = self.write(IN_PROGRESS, reason, message, IMMEDIATE if polled.moved else REQUEUE)
        step.actions.extend(polled.deferred)
        return step

    def poll_group(self, group: Obj, refs: list[Obj], polled: _Polled) -> None:
        """One Running group: its Job's progress, a timeout, or its end."""
        name = group["jobRef"]["name"]
        job = self.world.jobs.get(name)
        if job is not None and meta(job).get("deletionTimestamp"):
            if not self.drained(name):
                return
            job = None
        if job is None:  # deleted from outside: the group fails
            self.backfill(group, name, terminal=True)
            self.actions.extend(self.ledger.clean_group(group["name"], self.job_iteration()))
            group.update(phase=FAILED, completionTime=timestamp(self.now))
            group.pop("jobRef", None)
            polled.moved = True
            return
        self.actions.extend(self.ledger.own(job, refs))
        terminal = _job_terminal(job)
        self.backfill(group, name, terminal)
        if not terminal:
            message = self.timeout(group, job)
            if message is None:
                if not polled.blocked and _in_progress(job, "reason") == WORKLOAD_SCHEDULING_BLOCKED:
                    polled.blocked = f"job {name} scheduling blocked: {_in_progress(job, 'message')}"
                return
            if name not in self.world.timeout_logs:  # §8.6: its log tail first, then the verdict
                self.wants_logs.append(name)
                return
            job = self.time_out(job, message)
        elif (is_true(job, SUCCEEDED) and (job.get("spec") or {}).get("thresholds")
              and condition(job, VALIDATION_FAILED) is None):
            return  # the Job tier still evaluates the thresholds
        polled.moved |= self.complete_group(group, job, polled.failed_nodes, polled.deferred)

    def drained(self, job_name: str) -> bool:
        return all((p.get("status") or {}).get("phase") in (SUCCEEDED, FAILED)
                   for p in self.world.pods.get(job_name) or [])

    def backfill(self, group: Obj, job_name: str, terminal: bool) -> None:
        """§8.5: an Unpinned group learns its nodes from its Job's pods (complete while running)."""
        if not self.plan.unpinned or group.get("nodes"):
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
        past = self.deadlines.past
        if blocked is not None and scheduling_blocked(status):
            if past(blocked + limit):
                return TIMEOUT_BLOCKED_MESSAGE
            return TIMEOUT_MESSAGE if start is not None and blocked - start > limit else None
        if start is not None:  # a closed blocked episode does not count (surroundings §2.3)
            return TIMEOUT_MESSAGE if past(start + scheduling_paused(status) + limit) else None
        if status.get("workloadRef"):
            return None
        launched = parse_time(group.get("startTime"))
        return TIMEOUT_MESSAGE if launched is not None and past(launched + limit) else None

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
            if not self.drained(name) and not self.deadlines.past(self.drain_deadline(job), reached=True):
                return False
        failed_nodes.extend((job.get("status") or {}).get("failedNodes") or [])
        self.actions.extend(self.ledger.clean_group(group["name"], self.job_iteration()))
        timed_out = (condition(job, FAILED) or {}).get("reason") == JOB_TIMED_OUT
        retries = int(group.get("retries") or 0)
        if failed and not timed_out and retries < int(self.execution.get("retryFailedGroups") or 0):
            self.reset(group, retries + 1)  # the Job's retry label marks it as the earlier attempt
            deferred.append(Delete(Ref.of(job), uid=meta(job).get("uid", "")))
            return True
        group.update(phase=FAILED if failed else SUCCEEDED, completionTime=timestamp(self.now))
        return True
