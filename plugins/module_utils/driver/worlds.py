"""The worlds one Workflow pass hands the engine: the WorkflowWorld and a JobWorld per Job, built from the
observer's caches (driver/observe.py) and the few reads the caches lack: a Node outside the watched selector, API
discovery for the dependency kinds, the DRA fallback's ResourceSlices, failed containers' log tails, the log
tail of a Job that timed out, and the whole logs a Job's evidence steps read (a measured Job's with the LogProfiles
its measurements name, resolved as the measurement passes resolve them).
"""
from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

from ..engine.api.actions import Ref
from ..engine.api.objects import status_orchestration, terminal
from ..engine.api.vocabulary import API_VERSION, JOB, TRAINER_API_VERSION, TRAINJOB
from ..engine.plan import detect
from ..engine.reconcile import attribution, evidence_ledger
from ..engine.reconcile.world import JobWorld, WorkflowWorld
from ..kube.errors import ApiError, Unreachable
from ..kube.rest import ApiException, Kube
from . import measurements
from .observe import Observer

RESOURCE_API_VERSION = "resource.k8s.io/v1"

Obj = dict[str, Any]


def resource_slices(kube: Kube, nodes: list[Obj]) -> list[Obj] | None:
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


class Worlds:
    """One Workflow's worlds, pass after pass, and what the run remembers for them: the failureLogs read for
    timed-out Jobs (WorkflowWorld.timeout_logs) and the node-health verdicts (JobWorld.health)."""

    def __init__(self, kube: Kube, namespace: str, observer: Observer, skip_is_failure: bool = False) -> None:
        self.kube, self.namespace, self.observer = kube, namespace, observer
        self.skip_is_failure = skip_is_failure
        self.profiles = measurements.Profiles(observer.log_profile)
        self.timeout_logs: dict[str, Obj] = {}  # Job name -> failureLog, read when it timed out
        self.health: dict[tuple[str, str], tuple[str, bool]] = {}
        # Every pod of each Job's workload, the MPI launcher included: measurements and timeouts read the launcher,
        # which (as NVCRE's) carries no Job label, so the Job tier's pods leave it out.
        self.workload_pods: dict[str, list[Obj]] = {}

    def observe(self, wf: Obj, now: datetime, wanted: set[str] | None) -> tuple[WorkflowWorld, dict[str, JobWorld]]:
        """The worlds, from the caches; JobWorlds only for the Jobs in `wanted` (None: every Job)."""
        obs = self.observer
        self.profiles.clear()
        jobs = dict(sorted(obs.items(API_VERSION, JOB).items()))
        workloads = obs.items(TRAINER_API_VERSION, TRAINJOB) if jobs else {}
        pods = obs.pods() if jobs else {}
        self.workload_pods = obs.workload_pods() if jobs else {}
        nodes = obs.nodes()
        refs = (wf.get("status") or {}).get("dependencyRefs") or []
        dependencies = obs.dependencies((r["apiVersion"], r["kind"]) for r in refs)
        found = self.measurements()
        world = WorkflowWorld(wf, jobs, nodes, pods, {}, dependencies, self._resource_slices(wf, nodes),
                              self._scopes(wf), found, self.timeout_logs, now=now)
        by_job: dict[str, list[Obj]] = {}
        for m in found:
            by_job.setdefault(((m.get("spec") or {}).get("jobRef") or {}).get("name", ""), []).append(m)
        job_worlds = {}
        shards = obs.shards() if jobs else {}
        gpus = detect.required_gpus_per_node(wf.get("spec") or {}) or None
        for name, job in jobs.items():
            if wanted is not None and name not in wanted:
                continue
            job_pods = pods.get(name, [])
            jw = job_worlds[name] = JobWorld(
                job, workloads.get(f"{name}-workload"), job_pods, self._pod_nodes(job_pods),
                self._logs(job, job_pods), by_job.get(name, []), self.health, now=now, shards=shards.get(name, {}),
                gpus_per_node=gpus, skip_is_failure=self.skip_is_failure,
                workload_pods=self.workload_pods.get(name, []))
            # Here, not in the pool's threads: the first lookup starts the run's watch of LogProfiles.
            jw.log_profiles = {ref: self.profiles(ref) for ref in evidence_ledger.needs_profiles(jw)}
        return world, job_worlds

    def evidence_logs(self, world: JobWorld) -> JobWorld:
        """`world` with the whole logs its evidence steps read on this pass (evidence_ledger.needs_log), each None
        when it cannot be read (a partial read, which the seal records); the same world when it needs none. A
        measured log is read as its measurement's final read reads it: kubelet timestamps on, in pages."""
        wanted = evidence_ledger.needs_log(world)
        if not wanted:
            return world
        stamped = set(evidence_ledger.stamped(world))
        logs: dict[str, str | None] = {}
        for pod, container in wanted:
            try:
                logs[f"{pod}/{container}"] = measurements.read_log(self.kube, self.namespace, pod, container, None) \
                    if (pod, container) in stamped else self.kube.pod_log(self.namespace, pod, container)
            except (ApiError, Unreachable, measurements.UnreadableLog):
                logs[f"{pod}/{container}"] = None
        return dataclasses.replace(world, evidence_logs=logs)

    def measurements(self) -> list[Obj]:
        """The Workflow's measurements, every kind, each kind by name."""
        out: list[Obj] = []
        for kind in measurements.KINDS:
            out += [m for _n, m in sorted(self.observer.items(API_VERSION, kind).items())]
        return out

    def read_timeout_logs(self, wanted: list[str]) -> bool:
        """The log tails the tier needs before it fails timed-out Jobs (§8.6), kept for the passes that follow."""
        for name in wanted:
            target = attribution.timeout_target(self.workload_pods.get(name, []))
            log = self.kube.log_tail(self.namespace, target[0]["metadata"]["name"], target[1]) if target else ""
            self.timeout_logs[name] = attribution.timeout_failure_log(target, log)
        return bool(wanted)

    def _pod_nodes(self, pods: list[Obj]) -> dict[str, Obj]:
        """The Nodes the pods are bound to; one outside the watched selector (it lost a label) is read."""
        nodes, cached = {}, self.observer.informers[("v1", "Node")]
        for name in sorted({str((p.get("spec") or {}).get("nodeName") or "") for p in pods} - {""}):
            node = cached.get(name) or self.kube.get(Ref("v1", "Node", "", name))
            if node is not None:
                nodes[name] = node
        return nodes

    def _scopes(self, wf: Obj) -> dict[tuple[str, str], bool]:
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

    def _resource_slices(self, wf: Obj, nodes: list[Obj]) -> list[Obj] | None:
        """The DRA fallback's ResourceSlices, before discovery only (workflow spec §4 step 1)."""
        if status_orchestration(wf).get("totalGroups"):
            return None
        return resource_slices(self.kube, nodes)

    def _logs(self, job: Obj, pods: list[Obj]) -> dict[str, str]:
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
