"""The driver: observe, reconcile (Job tier, then Workflow tier), execute, repeat.

Everything it knows comes from the cluster (listed once, then kept current by watches: driver/observe.py), so a
run killed at any point continues on the next start. A pass reconciles what changed, or asked to be looked at
again, and then waits for the next change: its cost follows the changes, not the size of the cluster. Its parts
live beside it: what is due (driver/schedule.py), the worlds (driver/worlds.py), the measurements
(driver/measurements.py), the check for a resident NVCRE controller (driver/resident.py).
"""
from __future__ import annotations

import dataclasses
import functools
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any, NoReturn

from ..engine.api.actions import Create, Ref, Step
from ..engine.api.objects import condition, orchestration_of, status_orchestration, terminal, true_type
from ..engine.api.vocabulary import API_VERSION, DEPENDENCY_CREATION_ERROR, IN_PROGRESS, JOB, WORKFLOW
from ..engine.plan import render
from ..engine.reconcile import job_tier, job_validation, status, workflow_tier
from ..engine.reconcile.world import JobWorld, WorkflowWorld
from ..engine.status import node_results
from ..kube.rest import ApiException, Kube
from . import diff, execute, measurements, volumes
from .errors import DriverError
from .heartbeat import Heartbeat, heartbeat_line
from .observe import Observer
from .options import RunOptions
from .pass_stats import PassStats
from .preflight import preflight
from .resident import refuse_resident_controller
from .schedule import Due, Schedule
from .worlds import Worlds

# After the Workflow ends, how long the run keeps reading the logs its measurements still need.
MEASUREMENT_WIND_DOWN = timedelta(minutes=3)
PROGRESS_EVERY = 10.0  # seconds between progress lines while only the group counts change


@dataclasses.dataclass(frozen=True)
class Led:
    """A Job's Step after the first wave: `lead` leading creates, of which `first` says how many went through."""

    world: JobWorld
    step: Step
    first: execute.Outcome
    lead: int


class WorkflowLoop:
    """One Workflow, driven to the end (or the deadline, or `until_iteration`)."""

    def __init__(self, kube: Kube, namespace: str, name: str, options: RunOptions) -> None:
        self.kube, self.namespace, self.name, self.options = kube, namespace, name, options
        self.heartbeat = Heartbeat(options.progress, options.heartbeat)
        self.progress = self.heartbeat.show
        self.warn = options.warn
        self.trace = options.trace
        self.alive = options.alive
        self._last_line = ""
        self._last_stage: tuple[Any, ...] = ()
        self._last_shown = 0.0
        self._counted: tuple[str, dict[str, Any]] = ("", {})  # the counts, by the Workflow's resourceVersion
        self._wind_down: float | None = None  # after the Workflow ends: until when its measurements are waited for
        self.writes = 0
        self._writes_lock = threading.Lock()  # Job and measurement passes run concurrently
        self.observer = Observer(kube, namespace, name)
        self.worlds = Worlds(kube, namespace, self.observer, options.skip_is_failure)
        self.schedule = Schedule()
        self.passes = (measurements.BandwidthPass(kube, namespace, self.observer.log_profile),
                       measurements.GoodputPass(kube, namespace, self.observer.log_profile))
        self.seen: dict[str, Any] | None = None  # the Workflow as last read (its UID, should it be deleted)
        self.stats = PassStats(kube)

    def workflow(self) -> dict[str, Any]:
        wf = self.kube.get(Ref(API_VERSION, WORKFLOW, self.namespace, self.name))
        if wf is None:
            raise DriverError(f"Workflow {self.namespace}/{self.name} not found")
        self.seen = wf
        return wf

    def watched_workflow(self) -> dict[str, Any]:
        wf = self.observer.workflow()
        if wf is None or wf["metadata"].get("deletionTimestamp"):
            self._deleted(wf or self.seen)
        self.seen = wf
        return wf

    def _deleted(self, last: dict[str, Any] | None) -> NoReturn:
        """Deleted while driven (no finalizer holds it; the garbage collector removes what it made): reclaim the PVs
        stamped with its UID, as NVCRE's deletion does (§12), then stop with one line. `last`: as last seen."""
        if last is None:
            raise DriverError(f"Workflow {self.namespace}/{self.name} not found")
        switched = volumes.reclaim_deleted(self.kube, last, self.trace, self.alive) if volumes.has_claims(last) else []
        reclaimed = f"; PersistentVolumes switched to Delete: {', '.join(switched)}" if switched else ""
        raise DriverError(f"Workflow {self.namespace}/{self.name} was deleted during the run: the cluster's garbage "
                          f"collector removes what it made{reclaimed}; rerun to certify again")

    def plan(self) -> dict[str, Any]:
        """Check mode: what the run would create, from the live nodes; nothing is written."""
        rendered = render.render(self.workflow(), self.kube.list("v1", "Node"))
        return {"plan": rendered.plan, "failure": rendered.failure, "workflow": rendered.workflow}

    def run(self, until_iteration: int | None = None) -> dict[str, Any]:
        """Drive the Workflow until it ends (or iteration `until_iteration` completes), or the options' timeout."""
        start = time.monotonic()
        wf = self.workflow()
        refuse_resident_controller(self.kube, wf, datetime.now(UTC), self.warn)
        try:
            self.observer.start(wf)  # inside: a list refused halfway stops the watches already started
            # One pool for the loop's parallel maps (the Jobs' waves, the measurements): a pass then starts no
            # threads of its own (a pool per map started up to 8 threads per pass, ~5% of the driver's CPU).
            with ThreadPoolExecutor(execute.CONCURRENCY, thread_name_prefix="cre-pass") as pool:
                return self._loop(pool, start, start + self.options.timeout, until_iteration,
                                  self.options.poll_interval)
        except ApiException as exc:
            live = self.kube.get(Ref(API_VERSION, WORKFLOW, self.namespace, self.name)) if exc.status == 404 else wf
            if live is None or live["metadata"].get("deletionTimestamp"):  # a write met the Workflow's deletion
                self._deleted(live or self.seen)
            raise
        finally:
            self.observer.stop()

    def _loop(self, pool: ThreadPoolExecutor, start: float, deadline: float, until_iteration: int | None,
              poll_interval: float) -> dict[str, Any]:
        """Pass after pass: what is due -> the worlds -> the Jobs' two waves -> the measurements -> the Workflow
        tier -> the report -> wait for the next change (none after a pass that wrote: its writes are changes).
        The first pass looks at everything: the cluster is the only state, so a restarted run continues where it
        was."""
        first, acted = True, False
        while True:
            self.observer.check()
            changes = self.observer.take()
            wf = self.watched_workflow()
            due = self.schedule.take(first, acted, changes)
            first, acted = False, False
            self.stats.begin(due.why)
            if due.why:
                acted, self.stats.jobs = self._pass(pool, wf, due)
                wf = self.watched_workflow()
            counts = self._counts(wf)
            self._report(wf, counts, time.monotonic() - start)
            self.heartbeat.beat(functools.partial(heartbeat_line, f"{self.namespace}/{self.name}", wf,
                                                  datetime.now(UTC), time.monotonic() - start))
            done = self._finished(wf, counts, until_iteration)
            if done or time.monotonic() > deadline:
                self.stats.end()
                return {**self._summary(wf, counts, self.writes, time.monotonic() - start), "timed_out": not done}
            if not acted:
                self.observer.wait(max(0.05, self.schedule.next_wake(deadline, poll_interval) - time.monotonic()),
                                   counts["groups"]["running"])

    def _pass(self, pool: ThreadPoolExecutor, wf: dict[str, Any], due: Due) -> tuple[bool, int]:
        """One pass over what is due: whether it wrote, and how many Jobs it reconciled."""
        world, job_worlds = self.worlds.observe(wf, due.now, due.jobs)
        acted = False
        if not terminal(wf):
            acted = self._job_waves(pool, job_worlds)
        # Measurements before the Workflow tier: a Job it is about to delete still has its log to read.
        acted |= self._measurement_pass(pool, world, due.now, due.measurements, set(job_worlds))
        if not terminal(wf) and (due.workflow or acted):
            acted |= self._workflow_pass(world)
        return acted, len(job_worlds)

    def _job_waves(self, pool: ThreadPoolExecutor, job_worlds: dict[str, JobWorld]) -> bool:
        """Each Job's actions touch only that Job and its workload: the Jobs go in parallel, in two waves. Every
        Job's leading creates (its workload) go out before any Job's status and events: the cluster gets the
        workloads sooner (256 nodes: the last TrainJob 0.6 s sooner). Each Job's own actions keep their order, so a
        run killed between the waves leaves what a kill right after that create would."""
        led = list(pool.map(self._job_lead, job_worlds.values()))
        return any(list(pool.map(self._job_pass, led)))

    def _counts(self, wf: dict[str, Any]) -> dict[str, Any]:
        """run_counts, computed again only when the Workflow changed."""
        if self._counted[0] != wf["metadata"].get("resourceVersion"):
            self._counted = (wf["metadata"].get("resourceVersion"), run_counts(wf))
        return self._counted[1]

    def _finished(self, wf: dict[str, Any], counts: dict[str, Any], until_iteration: int | None) -> bool:
        """Terminal, and the measurements done or their wind-down over; or iteration `until_iteration` complete."""
        if terminal(wf) and self._wind_down is None:
            self._wind_down = time.monotonic() + MEASUREMENT_WIND_DOWN.total_seconds()
        measuring = self._wind_down is not None and time.monotonic() < self._wind_down and measurements.waiting(
            self.worlds.measurements(), self.observer.items(API_VERSION, JOB))
        return (terminal(wf) and not measuring) or bool(
            until_iteration and counts["iterations"]["completed"] >= until_iteration)

    def _apply(self, step: Step, owner: str) -> execute.Outcome:
        outcome = execute.run(self.kube, step, owner, self.trace, self.alive, self.observer.record)
        with self._writes_lock:
            self.writes += outcome.done
        if outcome.retry:
            self.progress(f"{self.namespace}/{owner}: {outcome.retry}")
        return outcome

    def _job_lead(self, jw: JobWorld) -> Led:
        """The Job tier's Step for one Job, and its leading creates executed (the first wave)."""
        jw = self.worlds.evidence_logs(jw)  # in the pool's thread: many Jobs ending together read in parallel
        step = job_tier.reconcile(jw)
        lead = next((i for i, action in enumerate(step.actions) if not isinstance(action, Create)), len(step.actions))
        first = self._apply(dataclasses.replace(step, actions=step.actions[:lead]), jw.job["metadata"]["name"]) \
            if lead else execute.Outcome()
        return Led(jw, step, first, lead)

    def _job_pass(self, led: Led) -> bool:
        """The rest of one Job's Step (the second wave); a workload the server refuses is NVCRE's transient
        WorkloadCreationError. A running Job whose stall only time reveals, or one whose Step was cut short, is looked
        at again after WorkloadRequeueInterval even if nothing changes."""
        jw, step = led.world, led.step
        name = jw.job["metadata"]["name"]
        outcome = led.first
        if outcome.done == led.lead:  # the creates went through: the rest follows, as if issued in one go
            rest = self._apply(dataclasses.replace(step, actions=step.actions[led.lead:]), name)
            outcome = dataclasses.replace(rest, done=outcome.done + rest.done, written=outcome.written + rest.written)
        requeue = step.requeue_after
        cut_short = outcome.done < len(step.actions)  # a 409 or a foreign workload terminating: look again
        if requeue is None and (cut_short or (not step.terminal and (jw.job.get("spec") or {}).get("stallMultiplier"))):
            requeue = job_validation.REQUEUE
        problem = outcome.collision[1] if outcome.collision else outcome.failed_create[1] if outcome.failed_create else ""
        if problem:
            retry = job_tier.create_failed(jw, problem)
            self._apply(retry, name)
            requeue = retry.requeue_after
        self.schedule.later(f"job/{name}", requeue)
        return outcome.done > 0 or bool(problem)

    def _measurement_pass(self, pool: ThreadPoolExecutor, world: WorkflowWorld, now: datetime,
                          wanted: set[str] | None, jobs: set[str]) -> bool:
        """The measurements that changed, asked to be looked at again, or whose Job was reconciled."""
        chosen = [m for m in world.measurements if wanted is None or m["metadata"]["name"] in wanted
                  or ((m.get("spec") or {}).get("jobRef") or {}).get("name") in jobs]
        acted = False
        for kind in self.passes:
            # Each measurement's reads and writes touch only it: they go in parallel, as the Jobs' do, so many
            # groups ending together do not wait for each other's log reads.
            items = kind.open(chosen, world.jobs, self.worlds.workload_pods)
            if items:
                acted |= any(list(pool.map(functools.partial(self._measure, kind, now), items)))
        return acted

    def _measure(self, kind: measurements.MeasurementPass, now: datetime, item: measurements.Open) -> bool:
        """One open measurement, stepped and written; when it wants to be looked at again."""
        step = kind.step(item, now)
        done = self._apply(step, item.name).done > 0
        self.schedule.later(f"measurement/{item.name}", step.requeue_after)
        return done

    def _workflow_pass(self, world: WorkflowWorld) -> bool:
        """The Workflow tier, on the pass's world with the node-result ConfigMaps and the PVs as they are now; a
        refused dependency create or a name collision fails the Workflow. Whether it wrote (or read logs)."""
        world = dataclasses.replace(world, configmaps=self.observer.node_results(),
                                    volumes=volumes.observe(self.kube, world.workflow))
        step = workflow_tier.reconcile(world)
        read = self.worlds.read_timeout_logs(step.wants_logs)
        outcome = self._apply(step, self.name)
        failure = outcome.collision
        if outcome.failed_create:
            create, message = outcome.failed_create
            ref = Ref.of(create.obj)
            if ref.kind != JOB or ref.api_version != API_VERSION:  # Jobs back off and retry, as NVCRE's do
                failure = (DEPENDENCY_CREATION_ERROR, "Failed to create dependency: "
                           f"failed to create dependency {ref.api_version}/{ref.kind} {ref.name}: {message}")
        if failure:
            self._apply(status.fail(world, *failure), self.name)
        # Only a change (which wakes the loop anyway) or its next deadline can change the tier's answer; a Step cut
        # short (a 409, a foreign object still terminating) is looked at again after its requeue, as NVCRE does.
        waits = [] if step.wake_at is None else [(step.wake_at - world.now).total_seconds()]
        if outcome.done < len(step.actions) and step.requeue_after is not None:
            waits.append(step.requeue_after)
        self.schedule.workflow_after(min(waits) if waits else None)
        return outcome.done > 0 or failure is not None or read

    def _report(self, wf: dict[str, Any], counts: dict[str, Any], elapsed: float) -> None:
        g, it = counts["groups"], counts["iterations"]
        tally = f"{g['pending']} pending, {g['running']} running, {g['succeeded']} succeeded, {g['failed']} failed"
        line = f"{self.namespace}/{self.name}: iteration {it['current']}/{it['total']}, groups {tally}"
        if diagnose := counts.get("diagnose"):
            line = f"{self.namespace}/{self.name}: {_diagnose_progress(diagnose, g['total'])} ({tally})"
        if terminal(wf):
            line += f" -> {counts['phase']} ({counts['condition']['reason']})"
        # Thousands of groups move the counts on nearly every pass: while only they move, one line per interval.
        stage = (it["current"], (diagnose or {}).get("stage"), (diagnose or {}).get("round"), terminal(wf))
        moved = stage != self._last_stage or time.monotonic() - self._last_shown >= PROGRESS_EVERY
        if line != self._last_line and moved:
            self._last_line, self._last_stage, self._last_shown = line, stage, time.monotonic()
            self.progress(f"{line} [{elapsed:.0f}s]")

    def _summary(self, wf: dict[str, Any], counts: dict[str, Any], writes: int, elapsed: float) -> dict[str, Any]:
        status = wf.get("status") or {}
        refs = {k: (status.get(f"{k}NodesRef") or {}).get("name") for k in ("succeeded", "failed")}
        cached = self.observer.node_results()
        cms = {k: cached.get(n) if n else None for k, n in refs.items()}
        return {
            "changed": writes > 0,
            **counts,
            "succeeded_nodes": node_results.read_succeeded(cms["succeeded"]) if cms["succeeded"] else [],
            "failed_nodes": node_results.read_failed(cms["failed"]) if cms["failed"] else [],
            "configmaps": refs,
            "excluded_nodes": orchestration_of(status).get("excludedNodes") or [],
            "elapsed": round(elapsed, 3),
        }


def _diagnose_progress(diagnose: dict[str, Any], groups: int) -> str:
    """`diagnose: bisection round 3, 4 groups`: the round running (its Jobs' `-iter-<n>`), or how many ran."""
    rounds = int(diagnose.get("round") or 0)
    if diagnose.get("stage") == "complete":
        return f"diagnose: complete after {rounds} rounds"
    return f"diagnose: {diagnose.get('stage', '')} round {rounds + 1}, {groups} groups"


def run_counts(wf: dict[str, Any]) -> dict[str, Any]:
    """Phase, the True condition, iterations and group phases (and diagnose's status), from the Workflow's status."""
    orch = status_orchestration(wf)
    groups = orch.get("groups") or []
    count = {p: sum(1 for g in groups if (g.get("phase") or "Pending") == p)
             for p in ("Pending", "Running", "Succeeded", "Failed")}
    true = condition(wf, true_type(wf)) or {}
    extra = {"diagnose": orch["diagnose"]} if orch.get("diagnose") else {}
    return {
        "phase": terminal(wf) or IN_PROGRESS,
        "condition": {k: true.get(k, "") for k in ("type", "reason", "message")},
        "iterations": {"current": orch.get("currentIteration", 0), "completed": orch.get("completedIterations", 0),
                       "total": orchestration_of(wf.get("spec")).get("iterations", 1)},
        "groups": {"pending": count["Pending"], "running": count["Running"], "succeeded": count["Succeeded"],
                   "failed": count["Failed"], "total": len(groups)},
        **extra,
    }


def run_workflow(kube: Kube, namespace: str, name: str, options: RunOptions, until_iteration: int | None = None,
                 preflighted: bool = False) -> dict[str, Any]:
    """Drive one Workflow (check mode: plan it); the result is documented in docs/dev/driver.md. `preflighted`: the
    caller has already checked the APIs and permissions (driver/preflight.py)."""
    if not preflighted:
        preflight(kube, namespace, f"Workflow {namespace}/{name}")
    driver = WorkflowLoop(kube, namespace, name, options)
    before = driver.workflow() if options.diff else None
    if options.check_mode:
        planned = driver.plan()
        if planned["failure"]:
            raise planned["failure"]
        result = {"changed": False, "plan": planned["plan"]}
        # What the run would write first: the resolved spec and its detection annotations, over the live status.
        after = {**planned["workflow"], "status": (before or {}).get("status")} if before and not terminal(before) \
            else before
    else:
        result = driver.run(until_iteration)
        after = kube.get(Ref(API_VERSION, WORKFLOW, namespace, name)) if options.diff else None
    if options.diff and before is not None:
        result["diff"] = diff.entries({diff.key(before): before}, {diff.key(before): after})
    return result
