"""One pass of NVCRE's Job controller (surroundings.md §2.3), without finalizers: `reconcile(world) -> Step`.

Every pass is computed from the cluster alone (docs/dev/driver.md): the workload is found by its
deterministic name and judged ours by its controller owner UID, so a pass killed between the Create and the
status write that records it is repaired by the next one.

A stalled, failed or vanished workload is restarted from its checkpoint when the Job allows it
(job_stall.py, measurements.md §5): the workload is deleted, the GoodputMeasurement's stall fields are reset
in the same step, and the next pass, seeing no workloadRef, creates a fresh one.
"""
from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

from ..api.actions import Action, Create, Delete, Event, Ref, Step, UpdateStatus
from ..api.errors import InputError
from ..api.objects import (
    condition,
    controlled_by,
    is_true,
    parse_time,
    set_condition,
    set_exclusive,
    timestamp,
    true_type,
)
from ..api.vocabulary import (
    EVIDENCE_LACKING,
    FAILED,
    HARDWARE_FAILED,
    HARDWARE_FAILURE_DETECTED,
    IN_PROGRESS,
    SUCCEEDED,
    TRAINJOB,
    VALIDATION_FAILED,
    WORKLOAD_CREATION_ERROR,
    WORKLOAD_FAILED,
    WORKLOAD_RESTARTING,
    WORKLOAD_SCHEDULING_BLOCKED,
    WORKLOAD_STALLED,
)
from ..models.job import DEFAULT_SCHEDULING_STALL_GRACE_SECONDS
from ..plan import workload
from . import attribution, evidence_blame, evidence_ledger, health, job_measurements, job_stall, job_validation
from .measurement import status_write
from .world import JobWorld

WORKLOAD_CREATED = "WorkloadCreated"
WORKLOAD_ADOPTED = "WorkloadAdopted"
WORKLOAD_PENDING = "WorkloadPending"
WORKLOAD_RUNNING = "WorkloadRunning"
WORKLOAD_COMPLETED = "WorkloadCompleted"
UNSCHEDULABLE = "Unschedulable"
# Backoff after a failed workload create (transient: the Job is not failed).
CREATE_RETRY_SECONDS = 10.0

Obj = dict[str, Any]


def reconcile(world: JobWorld) -> Step:
    job = world.job
    status = job.get("status") or {}
    now = world.now
    if job_validation.awaiting(job):
        return _validate(world, now)
    if is_true(job, SUCCEEDED) or is_true(job, FAILED):
        return Step(terminal=True)  # checks stop; attribution was written with the terminal condition
    ref = status.get("workloadRef")
    live = world.workload if _ours(world.workload, job, ref) else None
    if not ref:
        # Ours but terminating (the run a restart deleted) is not adopted: the Create waits for it to go.
        return _create_or_adopt(world, None if (live and live["metadata"].get("deletionTimestamp")) else live, now)

    new = copy.deepcopy(status)
    requeue = None
    attempt = _attempt(job)
    if live is None:
        outcome = (FAILED, WORKLOAD_FAILED, f"Workload {attempt} was deleted")
    else:
        if not ref.get("uid"):
            new["workloadRef"] = {**ref, "uid": live["metadata"].get("uid", "")}
        outcome, requeue = _judge_workload(world, live, new, attempt)

    _check_health(world, new, now)
    if outcome[0] == FAILED and job_stall.can_restart(job, world.measurements):
        return _restart(world, new, live, now)
    blamed = _evidence(world, new, outcome, attempt)
    if isinstance(blamed, Step):
        return blamed  # the seal and its shards first: the Job ends only once they all exist
    outcome, messages, after = blamed
    if outcome[0] == FAILED:
        _attribute_failure(world, new, outcome[2], messages)
    set_exclusive(new, *outcome, _generation(job), now)
    if outcome[0] == SUCCEEDED:
        requeue = job_validation.check(job, new, world.measurements, world.pods, now)
    creates = _measurements(world) if live is not None else []
    return Step(creates + _write(job, new) + after, requeue_after=requeue,
                terminal=outcome[0] != IN_PROGRESS and requeue is None)


Outcome = tuple[str, str, str]


def _judge_workload(world: JobWorld, live: Obj, new: Obj, attempt: str) -> tuple[Outcome, float | None]:
    """The outcome the live workload gives (and when to look again): ended, pending, running or stalled."""
    phase, message = workload.status(live)
    if phase == workload.SUCCEEDED:
        return (SUCCEEDED, WORKLOAD_COMPLETED, f"Workload {attempt} completed successfully"), None
    if phase == workload.FAILED:
        return (FAILED, WORKLOAD_FAILED, f"Workload {attempt} failed: {message}"), None
    if phase == workload.PENDING:
        suffix = f": {message}" if message else ""
        return (IN_PROGRESS, WORKLOAD_PENDING, f"Workload {attempt} is pending{suffix}"), None
    outcome, requeue = _running(world, new, attempt, world.now)
    if outcome[1] == WORKLOAD_RUNNING:
        stall = job_stall.stalled(world.job, world.measurements, parse_time(new.get("workloadStartTime")), world.now)
        if stall:
            if "workloadStartTime" not in (world.job.get("status") or {}):  # first seen on this pass: not persisted
                new.pop("workloadStartTime", None)
            return (FAILED, WORKLOAD_STALLED, stall), None
    return outcome, requeue


def _evidence(world: JobWorld, new: Obj, outcome: Outcome, attempt: str
              ) -> Step | tuple[Outcome, dict[str, str], list[Action]]:
    """The evidence steps of a workload that is over (evidence_ledger; not a stall): the Step still to run
    before the Job may end, or the outcome its evidence gives with each node's message and the actions after the
    terminal write (the losing attempt's shards deleted, the lacking-evidence warnings)."""
    evidence = evidence_ledger.gate(world) if evidence_ledger.over(world) else None
    if evidence is None:
        return outcome, {}, []
    if evidence.step is not None:
        return evidence.step
    new["evidence"] = evidence.seal
    blamed = evidence_blame.blame(evidence.read, outcome, attempt, world.skip_is_failure)
    if blamed.entries:
        new["failedNodes"] = attribution.merge_failed_nodes(new.get("failedNodes") or [], blamed.entries)
    warnings = [Event(world.job, "Warning", EVIDENCE_LACKING, w) for w in blamed.warnings]
    return blamed.outcome, blamed.messages, [*evidence.deletes, *warnings]


def _restart(world: JobWorld, new: Obj, live: Obj | None, now: datetime) -> Step:
    """Restart from the checkpoint: delete the workload, forget it, count the restart and reset the
    measurement's stall fields (before the Job's write: a conflict there re-decides the whole restart)."""
    job = world.job
    count = int(new.get("restartCount") or 0) + 1
    for key in ("workloadRef", "workloadStartTime"):
        new.pop(key, None)
    new["restartCount"] = count
    set_exclusive(new, IN_PROGRESS, WORKLOAD_RESTARTING, job_stall.restart_message(count, job), _generation(job), now)
    actions: list[Action] = [Delete(Ref.of(live), live["metadata"].get("uid", ""))] if live is not None else []
    gm = job_stall.goodput(job, world.measurements)
    if gm is not None:
        actions += status_write(gm, job_stall.reset(gm, now))
    return Step(actions + _write(job, new), requeue_after=job_stall.restart_delay(job))


def _measurements(world: JobWorld) -> list[Action]:
    """Create the measurements the Job asks for that do not exist yet (an existing one is left alone)."""
    existing = {(m.get("kind"), (m.get("metadata") or {}).get("name")) for m in world.measurements}
    return [Create(m, owner_uid=m["metadata"]["ownerReferences"][0].get("uid", ""))
            for m in job_measurements.wanted(world.job) if (m["kind"], m["metadata"]["name"]) not in existing]


def _validate(world: JobWorld, now: datetime) -> Step:
    """A Succeeded Job still waiting for its threshold verdict."""
    new = copy.deepcopy(world.job.get("status") or {})
    requeue = job_validation.check(world.job, new, world.measurements, world.pods, now)
    return Step(_write(world.job, new), requeue_after=requeue, terminal=requeue is None)


def fail(world: JobWorld, reason: str, message: str) -> Step:
    """Mark the Job Failed with `reason`/`message` (e.g. when the driver meets a workload it must not adopt)."""
    new = copy.deepcopy(world.job.get("status") or {})
    set_exclusive(new, FAILED, reason, message, _generation(world.job), world.now)
    return Step(_write(world.job, new), terminal=True)


def create_failed(world: JobWorld, message: str) -> Step:
    """A workload create the API refused: transient, a Warning and a retry; the Job is not failed."""
    return Step([Event(world.job, "Warning", WORKLOAD_CREATION_ERROR, message)], requeue_after=CREATE_RETRY_SECONDS)


def _ours(live: Obj | None, job: Obj, ref: Obj | None) -> bool:
    """The live workload is ours: controlled by this Job, and the one recorded when a UID was recorded."""
    if live is None or not controlled_by(live, (job.get("metadata") or {}).get("uid", "")):
        return False
    recorded = (ref or {}).get("uid")
    return not recorded or recorded == live["metadata"].get("uid")


def _create_or_adopt(world: JobWorld, live: Obj | None, now: datetime) -> Step:
    """No workload recorded yet: adopt ours if it exists, else create it (and record the ref in the same step).

    A foreign object holding the name also gets the Create: the driver meets AlreadyExists and
    `ownership.on_exists` decides (retry while it terminates, else a collision), in one place for every kind.
    """
    job = world.job
    status = job.get("status") or {}
    if live is not None:
        meta = live["metadata"]
        new = {**copy.deepcopy(status), "workloadRef": _ref(live, meta.get("uid", ""))}
        reason, message = WORKLOAD_ADOPTED, f"Adopted existing {TRAINJOB} {meta['name']}"
        actions: list[Action] = []
    else:
        try:
            obj = workload.build(job)
        except InputError as err:
            # The labels are immutable, so retrying cannot help: fail now, with the rule that was broken.
            return fail(world, WORKLOAD_CREATION_ERROR, str(err))
        new = {**copy.deepcopy(status), "workloadRef": _ref(obj, "")}
        reason, message = WORKLOAD_CREATED, f"Created {TRAINJOB} {obj['metadata']['name']}"
        actions = [Create(obj, owner_uid=(job.get("metadata") or {}).get("uid", ""))]
    set_exclusive(new, IN_PROGRESS, reason, message, _generation(job), now)
    return Step(actions + _write(job, new))


def _ref(obj: Obj, uid: str) -> Obj:
    meta = obj["metadata"]
    ref = {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": meta["name"]}
    if meta.get("namespace"):
        ref["namespace"] = meta["namespace"]
    if uid:
        ref["uid"] = uid
    return ref


def _attempt(job: Obj) -> str:
    """`K/N` of the messages: this attempt of the workload out of the attempts checkpoint restarts allow.

    The spec leaves K/N open; its only other count is `restart n/m`, so K = restartCount+1 and
    N = checkpoint.maxRestarts+1 (1 without checkpointing): `Workload 1/1 is running`.
    """
    spec = job.get("spec") or {}
    checkpoint = spec.get("checkpoint")
    total = int((checkpoint or {}).get("maxRestarts") or 0) + 1
    return f"{int((job.get('status') or {}).get('restartCount') or 0) + 1}/{total}"


def _running(world: JobWorld, new: Obj, attempt: str, now: datetime) -> tuple[tuple[str, str, str], float | None]:
    """Running: stamp the start once, then the scheduling stall (ADR-083) from the pods' PodScheduled conditions.

    Blocked since = the earliest Unschedulable transition among the pods that are still unschedulable, so it
    is the same on every pass. workloadStartTime never moves: on resume `schedulingResumedTime` closes the
    episode that `schedulingBlockedSince` opened, and the Workflow leaves that episode out of timeoutPerJob
    (`scheduling_paused`). A later episode opens a new one.
    """
    new.setdefault("workloadStartTime", timestamp(now))
    running = (IN_PROGRESS, WORKLOAD_RUNNING, f"Workload {attempt} is running")
    blocked = _unschedulable(world.pods)
    grace = timedelta(seconds=int((world.job.get("spec") or {}).get("schedulingStallGraceSeconds")
                                  or DEFAULT_SCHEDULING_STALL_GRACE_SECONDS))
    open_episode = scheduling_blocked(new)
    if blocked:
        since, message = blocked
        since = min(since, now)
        if open_episode or now - since >= grace:
            if not open_episode:
                new["schedulingBlockedSince"] = timestamp(since)
                new.pop("schedulingResumedTime", None)
            return (IN_PROGRESS, WORKLOAD_SCHEDULING_BLOCKED, message), None
        return running, (since + grace - now).total_seconds()
    if open_episode:
        new["schedulingResumedTime"] = timestamp(now)
    return running, None


def scheduling_blocked(status: Obj) -> bool:
    """An open blocked episode: `schedulingBlockedSince` set and not closed by a later `schedulingResumedTime`."""
    since = parse_time(status.get("schedulingBlockedSince"))
    resumed = parse_time(status.get("schedulingResumedTime"))
    return since is not None and (resumed is None or resumed < since)


def scheduling_paused(status: Obj) -> timedelta:
    """The closed blocked episode's length (after workloadStartTime), which timeoutPerJob does not count."""
    since = parse_time(status.get("schedulingBlockedSince"))
    resumed = parse_time(status.get("schedulingResumedTime"))
    start = parse_time(status.get("workloadStartTime"))
    if since is None or resumed is None or resumed < since:
        return timedelta(0)
    return max(resumed - max(since, start or since), timedelta(0))


def _unschedulable(pods: list[Obj]) -> tuple[datetime, str] | None:
    """(earliest Unschedulable transition, that pod's scheduler message) over the pending pods, or None."""
    found = []
    for pod in pods:
        status = pod.get("status") or {}
        if status.get("phase", "Pending") != "Pending" or (pod.get("metadata") or {}).get("deletionTimestamp"):
            continue
        cond = condition(pod, "PodScheduled")
        if cond and cond.get("status") == "False" and cond.get("reason") == UNSCHEDULABLE:
            since = parse_time(cond.get("lastTransitionTime") or "") or datetime.max.replace(tzinfo=UTC)
            found.append((since, (pod.get("metadata") or {}).get("name", ""), cond.get("message") or ""))
    if not found:
        return None
    since, _pod_name, message = min(found)
    return since, message


def _check_health(world: JobWorld, new: Obj, now: datetime) -> None:
    """CEL monitor over the nodes of the Job's pods; failures accumulate (recovered nodes stay listed)."""
    expr = health.expression(world.job.get("spec") or {})
    flagged = health.failing_nodes(expr, attribution.pod_nodes(world.pods), world.nodes, world.health)
    if flagged:
        new["failedNodes"] = attribution.merge_failed_nodes(
            new.get("failedNodes") or [], attribution.failed_entries(flagged, HARDWARE_FAILURE_DETECTED, health.NODE_MESSAGE))
    hardware = [e["name"] for e in new.get("failedNodes") or [] if e.get("reason") == HARDWARE_FAILURE_DETECTED]
    if hardware:
        # Go's %v of a []string: [a b].
        message = f"Hardware failure detected on node(s): [{' '.join(hardware)}]"
        set_condition(new, HARDWARE_FAILED, True, HARDWARE_FAILURE_DETECTED, message, _generation(world.job), now)


def _attribute_failure(world: JobWorld, new: Obj, message: str, messages: dict[str, str]) -> None:
    """Failed with nobody blamed yet: every group node gets WorkloadFailed (with what its evidence names, in
    `messages`, else `message`); the failure log is kept always."""
    if not new.get("failedNodes"):
        nodes = attribution.group_nodes(world.job, world.pods)
        new["failedNodes"] = attribution.merge_failed_nodes(
            [], [entry for node in nodes
                 for entry in attribution.failed_entries([node], WORKLOAD_FAILED, messages.get(node, message))])
        if not new["failedNodes"]:
            del new["failedNodes"]
    new.setdefault("failureLog", attribution.failure_log(world.pods, world.logs))


def _write(job: Obj, new: Obj) -> list[Action]:
    """The status write (job as read, resourceVersion kept) and an event per transition: of the True
    exclusive condition's type or reason (Warning for Failed), and of the HardwareFailed message."""
    if new == (job.get("status") or {}):
        return []
    updated = {**job, "status": new}
    actions: list[Action] = [UpdateStatus(updated)]
    before, after = condition(job, true_type(job)), condition(updated, true_type(updated))
    if after and ((before or {}).get("type"), (before or {}).get("reason")) != (after["type"], after["reason"]):
        kind = "Warning" if after["type"] == FAILED else "Normal"
        actions.append(Event(job, kind, after["reason"], after["message"]))
    hw_before, hw_after = condition(job, HARDWARE_FAILED), condition(updated, HARDWARE_FAILED)
    if hw_after and (hw_before or {}).get("message") != hw_after["message"]:
        actions.append(Event(job, "Warning", hw_after["reason"], hw_after["message"]))
    verdict = condition(updated, VALIDATION_FAILED)
    if verdict and condition(job, VALIDATION_FAILED) is None:
        # A failed verdict warns; a pass is a Normal event the first time it is set (NVCRE 01a04aaf).
        kind = "Warning" if verdict["status"] == "True" else "Normal"
        actions.append(Event(job, kind, verdict["reason"], verdict["message"]))
    return actions


def _generation(job: Obj) -> int | None:
    return (job.get("metadata") or {}).get("generation")
