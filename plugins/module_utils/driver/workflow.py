"""The driver: observe, reconcile (Job tier, then Workflow tier), execute, repeat.

Everything it knows comes from the cluster (listed once, then kept current by watches: driver/observe.py), so a
run killed at any point continues on the next start. A pass reconciles what changed, or asked to be looked at
again, and then waits for the next change: its cost follows the changes, not the size of the cluster.
"""
from __future__ import annotations

import dataclasses
import functools
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any, NoReturn

from ..engine.api.actions import Create, Ref, Step
from ..engine.api.objects import condition, parse_time, terminal, true_type
from ..engine.api.vocabulary import (
    API_VERSION,
    DEPENDENCY_CREATION_ERROR,
    FINALIZER_WORKFLOW,
    IN_PROGRESS,
    JOB,
    TRAINER_API_VERSION,
    TRAINJOB,
    WORKFLOW,
)
from ..engine.plan import detect, render
from ..engine.reconcile import attribution, job_tier, job_validation, node_results, status, workflow_tier
from ..engine.reconcile.world import JobWorld, WorkflowWorld
from ..kube.rest import ApiException, Kube
from . import diff, execute, measurements, volumes
from .errors import DriverError
from .heartbeat import Heartbeat, heartbeat_line
from .observe import Observer
from .options import RunOptions
from .pass_stats import PassStats
from .preflight import preflight

# A resident controller's leader-election lease: a name like these, renewed within this window.
LEASE_HINTS = ("nvcre", "cluster-readiness-engine")
LEASE_FRESH = timedelta(seconds=60)
RESIDENT_NAMESPACE = "nvcre"  # where NVCRE's chart (and nvcrectl setup init) runs the controller
RESOURCE_API_VERSION = "resource.k8s.io/v1"
# After the Workflow ends, how long the run keeps reading the logs its measurements still need.
MEASUREMENT_WIND_DOWN = timedelta(minutes=3)
PROGRESS_EVERY = 10.0  # seconds between progress lines while only the group counts change

Progress = Callable[[str], None]


def refuse_resident_controller(kube: Kube, workflow: dict[str, Any], now: datetime, warn: Progress) -> None:
    """Two controllers on one object lose data: stop if NVCRE itself is running in this cluster. Its leader lease
    sits where its chart installs it (`nvcre`) or beside the Workflow; no cluster-wide list is needed, and where
    even that is forbidden the run goes on with a warning."""
    meta = workflow.get("metadata") or {}
    if FINALIZER_WORKFLOW in (meta.get("finalizers") or []):
        raise DriverError(
            f"refusing to drive Workflow {meta.get('namespace')}/{meta.get('name')}: it carries the finalizer "
            f"{FINALIZER_WORKFLOW}, so a resident NVCRE controller manages it")
    for namespace in sorted({RESIDENT_NAMESPACE, meta.get("namespace") or RESIDENT_NAMESPACE}):
        try:
            leases = kube.list("coordination.k8s.io/v1", "Lease", namespace)
        except ApiException as exc:
            if exc.status != 403:
                raise
            warn(f"could not check for a resident NVCRE controller in namespace {namespace}: listing Leases there "
                 f"is forbidden; grant it (rbac/40-role-run.yaml) or make sure NVCRE does not run in this cluster")
            continue
        for lease in leases:
            name = lease["metadata"]["name"]
            renew = (lease.get("spec") or {}).get("renewTime")
            renewed = parse_time(renew)
            if any(h in name for h in LEASE_HINTS) and renewed and now - renewed < LEASE_FRESH:
                raise DriverError(
                    f"refusing to drive Workflow {meta.get('namespace')}/{meta.get('name')}: a resident NVCRE "
                    f"controller holds the leader lease {namespace}/{name} (renewed {renew})")


def resource_slices(kube: Kube, nodes: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The gpu.nvidia.com ResourceSlices, only when a GPU node lacks its product label (NVCRE's DRA fallback);
    None where the cluster serves no DRA API."""
    gpu_nodes = [n for n in nodes if ((n.get("metadata") or {}).get("labels") or {}).get(detect.GPU_PRESENT) == "true"]
    if not detect.needs_resource_slices(gpu_nodes):
        return None
    try:
        return kube.list(RESOURCE_API_VERSION, "ResourceSlice", fields=f"spec.driver={detect.DRA_DRIVER}")
    except LookupError:
        return None
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


@dataclasses.dataclass(frozen=True)
class Led:
    """A Job's Step after the first wave: `lead` leading creates, of which `first` says how many went through."""

    world: JobWorld
    step: Step
    first: execute.Outcome
    lead: int


class Driver:
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
        self.writes = 0
        self._writes_lock = threading.Lock()  # Job and measurement passes run concurrently
        self.observer = Observer(kube, namespace, name)
        self.passes = (measurements.BandwidthPass(kube, namespace, self.observer.log_profile),
                       measurements.GoodputPass(kube, namespace, self.observer.log_profile))
        self.measurements: list[dict[str, Any]] = []
        # Every pod of each Job's workload, the MPI launcher included: measurements and timeouts read the launcher,
        # which (as NVCRE's) carries no Job label, so the Job tier's pods leave it out.
        self.workload_pods: dict[str, list[dict[str, Any]]] = {}
        self.timeout_logs: dict[str, dict[str, Any]] = {}  # Job name -> failureLog, read when it timed out
        self.health: dict[tuple[str, str], tuple[str, bool]] = {}  # node-health verdicts (JobWorld.health)
        self.seen: dict[str, Any] | None = None  # the Workflow as last read (its UID, should it be deleted)
        self.due: dict[str, float] = {}  # "job/<name>", "measurement/<name>" -> when it asked to be looked at again
        self.wake_at: float | None = None  # the Workflow tier's next deadline, while nothing changes
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

    def observe(self, wf: dict[str, Any], now: datetime, wanted: set[str] | None
                ) -> tuple[WorkflowWorld, dict[str, JobWorld]]:
        """The worlds, from the caches; JobWorlds only for the Jobs in `wanted` (None: every Job)."""
        obs = self.observer
        jobs = dict(sorted(obs.items(API_VERSION, JOB).items()))
        workloads = obs.items(TRAINER_API_VERSION, TRAINJOB) if jobs else {}
        pods = obs.pods() if jobs else {}
        self.workload_pods = obs.workload_pods() if jobs else {}
        nodes = obs.nodes()
        refs = (wf.get("status") or {}).get("dependencyRefs") or []
        dependencies = obs.dependencies((r["apiVersion"], r["kind"]) for r in refs)
        self.measurements = self._measurements()
        world = WorkflowWorld(wf, jobs, nodes, pods, {}, dependencies, now, self._resource_slices(wf, nodes),
                              self._scopes(wf), self.measurements, self.timeout_logs)
        by_job: dict[str, list[dict[str, Any]]] = {}
        for m in self.measurements:
            by_job.setdefault(((m.get("spec") or {}).get("jobRef") or {}).get("name", ""), []).append(m)
        job_worlds = {}
        for name, job in jobs.items():
            if wanted is not None and name not in wanted:
                continue
            job_pods = pods.get(name, [])
            job_worlds[name] = JobWorld(
                job, workloads.get(f"{name}-workload"), job_pods, self._pod_nodes(job_pods),
                self._logs(job, job_pods), now, by_job.get(name, []), self.health)
        return world, job_worlds

    def _measurements(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for kind in measurements.KINDS:
            out += [m for _n, m in sorted(self.observer.items(API_VERSION, kind).items())]
        return out

    def _pod_nodes(self, pods: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """The Nodes the pods are bound to; one outside the watched selector (it lost a label) is read."""
        nodes, cached = {}, self.observer.informers[("v1", "Node")]
        for name in sorted({str((p.get("spec") or {}).get("nodeName") or "") for p in pods} - {""}):
            node = cached.get(name) or self.kube.get(Ref("v1", "Node", "", name))
            if node is not None:
                nodes[name] = node
        return nodes

    def _scopes(self, wf: dict[str, Any]) -> dict[tuple[str, str], bool]:
        """Whether each dependency kind the spec names is namespaced, from API discovery (NVCRE's REST mapper,
        workflow spec §7.2); one discovery call per group-version per process. Kinds the server does not serve
        are left out (the engine falls back to its static list; their create then fails clearly)."""
        spec = wf.get("spec") or {}
        deps = list(spec.get("dependencies") or [])
        for override in spec.get("overrides") or []:
            deps += override.get("dependencies") or []
        scopes: dict[tuple[str, str], bool] = {}
        for api_version, kind in {(d.get("apiVersion", ""), d.get("kind", "")) for d in deps if isinstance(d, dict)}:
            if not (api_version and kind):
                continue
            try:
                scopes[(api_version, kind)] = self.kube.resource(api_version, kind)[1]
            except LookupError:
                continue
            except ApiException as exc:
                if exc.status != 404:
                    raise
        return scopes

    def _resource_slices(self, wf: dict[str, Any], nodes: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
        """The DRA fallback's ResourceSlices, before discovery only (workflow spec §4 step 1)."""
        if ((wf.get("status") or {}).get("orchestration") or {}).get("totalGroups"):
            return None
        return resource_slices(self.kube, nodes)

    def _logs(self, job: dict[str, Any], pods: list[dict[str, Any]]) -> dict[str, str]:
        """Log tails of failed containers, only while a Job that is not yet terminal lacks its failureLog
        (the Job tier captures it on the pass that sees the workload fail)."""
        if (terminal(job) or (job.get("status") or {}).get("failureLog")
                or not any((p.get("status") or {}).get("phase") == "Failed" for p in pods)):
            return {}
        logs = {}
        for pod in pods:
            for cs in (pod.get("status") or {}).get("containerStatuses") or []:
                term = (cs.get("state") or {}).get("terminated") or {}
                if term.get("exitCode"):
                    key = f"{pod['metadata']['name']}/{cs['name']}"
                    logs[key] = self.kube.log_tail(self.namespace, pod["metadata"]["name"], cs["name"])
        return logs

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
        """Reconcile what changed (or asked to be looked at again), then wait for the next change. The first pass
        looks at everything: the cluster is the only state, so a restarted run continues where it was."""
        wind_down: float | None = None
        first, acted = True, False
        counted: tuple[str, dict[str, Any]] = ("", {})
        while True:
            self.observer.check()
            changes = self.observer.take()
            wf = self.watched_workflow()
            mono, now = time.monotonic(), datetime.now(UTC)
            ripe = {key for key, when in self.due.items() if when <= mono}
            for key in ripe:  # consumed: the pass schedules it again if it still wants to be looked at
                del self.due[key]
            wf_due = self.wake_at is not None and self.wake_at <= mono
            if wf_due:
                self.wake_at = None  # the Workflow tier sets its next one
            why = next((label for label, cause in (("start", first), ("acted", acted), ("changed", changes.any),
                                                   ("due", bool(ripe)), ("deadline", wf_due)) if cause), "")
            look_at_workflow = first or acted or changes.workflow or wf_due
            acted = False
            self.stats.begin(why)
            job_worlds: dict[str, JobWorld] = {}
            if why:
                jobs = None if first else changes.jobs | {k.split("/", 1)[1] for k in ripe if k.startswith("job/")}
                world, job_worlds = self.observe(wf, now, jobs)
                if not terminal(wf):
                    # Each Job's actions touch only that Job and its workload: the Jobs go in parallel, in two
                    # waves. Every Job's leading creates (its workload) go out before any Job's status and events:
                    # the cluster gets the workloads sooner (256 nodes: the last TrainJob 0.6 s sooner). Each Job's
                    # own actions keep their order, so a run killed between the waves leaves what a kill right
                    # after that create would.
                    led = list(pool.map(self._job_lead, job_worlds.values()))
                    acted = any(list(pool.map(self._job_pass, led)))
                # Measurements before the Workflow tier: a Job it is about to delete still has its log to read.
                wanted = None if first else changes.measurements | {
                    k.split("/", 1)[1] for k in ripe if k.startswith("measurement/")}
                acted |= self._measurement_pass(pool, world, now, wanted, set(job_worlds))
                if not terminal(wf) and (look_at_workflow or acted):
                    acted |= self._workflow_pass(world)
                wf = self.watched_workflow()
            self.stats.jobs = len(job_worlds)
            first = False
            if counted[0] != wf["metadata"].get("resourceVersion"):
                counted = (wf["metadata"].get("resourceVersion"), run_counts(wf))
            counts = counted[1]
            self._report(wf, counts, time.monotonic() - start)
            self.heartbeat.beat(functools.partial(heartbeat_line, f"{self.namespace}/{self.name}", wf,
                                                  datetime.now(UTC), time.monotonic() - start))
            if terminal(wf) and wind_down is None:
                wind_down = time.monotonic() + MEASUREMENT_WIND_DOWN.total_seconds()
            measuring = wind_down is not None and time.monotonic() < wind_down and measurements.waiting(
                self._measurements(), self.observer.items(API_VERSION, JOB))
            done = (terminal(wf) and not measuring) or bool(
                until_iteration and counts["iterations"]["completed"] >= until_iteration)
            if done or time.monotonic() > deadline:
                self.stats.end()
                return {**self._summary(wf, counts, self.writes, time.monotonic() - start), "timed_out": not done}
            if not acted:
                wake = [deadline, time.monotonic() + poll_interval, *self.due.values()]
                if self.wake_at is not None:
                    wake.append(self.wake_at)
                self.observer.wait(max(0.05, min(wake) - time.monotonic()), counts["groups"]["running"])

    def _apply(self, step: Step, owner: str) -> execute.Outcome:
        outcome = execute.run(self.kube, step, owner, self.trace, self.alive, self.observer.record)
        with self._writes_lock:
            self.writes += outcome.done
        if outcome.retry:
            self.progress(f"{self.namespace}/{owner}: {outcome.retry}")
        return outcome

    def _schedule(self, key: str, requeue: float | None) -> None:
        """When `key` wants to be looked at again even if nothing changes (its Step's requeue_after)."""
        if requeue is None:
            self.due.pop(key, None)
        else:
            self.due[key] = time.monotonic() + requeue

    def _job_lead(self, jw: JobWorld) -> Led:
        """The Job tier's Step for one Job, and its leading creates executed (the first wave)."""
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
        with self._writes_lock:
            self._schedule(f"job/{name}", requeue)
        return outcome.done > 0 or bool(problem)

    def _measurement_pass(self, pool: ThreadPoolExecutor, world: WorkflowWorld, now: datetime,
                          wanted: set[str] | None, jobs: set[str]) -> bool:
        """The measurements that changed, asked to be looked at again, or whose Job was reconciled."""
        chosen = [m for m in self.measurements if wanted is None or m["metadata"]["name"] in wanted
                  or ((m.get("spec") or {}).get("jobRef") or {}).get("name") in jobs]
        acted = False
        for kind in self.passes:
            # Each measurement's reads and writes touch only it: they go in parallel, as the Jobs' do, so many
            # groups ending together do not wait for each other's log reads.
            items = kind.open(chosen, world.jobs, self.workload_pods)
            if items:
                acted |= any(list(pool.map(functools.partial(self._measure, kind, now), items)))
        return acted

    def _measure(self, kind: measurements.MeasurementPass, now: datetime, item: measurements.Open) -> bool:
        """One open measurement, stepped and written; when it wants to be looked at again."""
        step = kind.step(item, now)
        done = self._apply(step, item.name).done > 0
        with self._writes_lock:
            self._schedule(f"measurement/{item.name}", step.requeue_after)
        return done

    def _workflow_pass(self, world: WorkflowWorld) -> bool:
        world = dataclasses.replace(world, configmaps=self.observer.node_results(),
                                    volumes=volumes.observe(self.kube, world.workflow))
        step = workflow_tier.reconcile(world)
        read = self._read_timeout_logs(step.wants_logs, world)
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
        waits = [] if step.wake_at is None else [(step.wake_at - (world.now or datetime.now(UTC))).total_seconds()]
        if outcome.done < len(step.actions) and step.requeue_after is not None:
            waits.append(step.requeue_after)
        self.wake_at = time.monotonic() + max(min(waits), 0.0) if waits else None
        return outcome.done > 0 or failure is not None or read

    def _read_timeout_logs(self, wanted: list[str], world: WorkflowWorld) -> bool:
        """The log tails the tier needs before it fails timed-out Jobs (§8.6), kept for the passes that follow."""
        for name in wanted:
            target = attribution.timeout_target(self.workload_pods.get(name, []))
            log = self.kube.log_tail(self.namespace, target[0]["metadata"]["name"], target[1]) if target else ""
            self.timeout_logs[name] = attribution.timeout_failure_log(target, log)
        return bool(wanted)

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
            "excluded_nodes": ((status.get("orchestration") or {}).get("excludedNodes")) or [],
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
    orch = (wf.get("status") or {}).get("orchestration") or {}
    groups = orch.get("groups") or []
    count = {p: sum(1 for g in groups if (g.get("phase") or "Pending") == p)
             for p in ("Pending", "Running", "Succeeded", "Failed")}
    true = condition(wf, true_type(wf)) or {}
    extra = {"diagnose": orch["diagnose"]} if orch.get("diagnose") else {}
    return {
        "phase": terminal(wf) or IN_PROGRESS,
        "condition": {k: true.get(k, "") for k in ("type", "reason", "message")},
        "iterations": {"current": orch.get("currentIteration", 0), "completed": orch.get("completedIterations", 0),
                       "total": ((wf.get("spec") or {}).get("orchestration") or {}).get("iterations", 1)},
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
    driver = Driver(kube, namespace, name, options)
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
