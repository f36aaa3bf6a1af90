"""What the driver sees of the cluster: informers over the Workflow's objects, and which Jobs a change touches.

The old way was a fixed handful of lists per pass, each as big as the cluster. Now the caches are listed once
and kept by watches; a pass reads memory, and only the Jobs (and measurements) something happened to are
reconciled again. NVCRE maps a Node's events to Jobs through a pod nodeName index; so does this.
"""
from __future__ import annotations

import re
import threading
import time
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ..engine.api import naming
from ..engine.api.actions import Ref
from ..engine.api.objects import orchestration_of
from ..engine.api.vocabulary import (
    API_VERSION,
    JOB,
    LABEL_JOB,
    LABEL_WORKFLOW,
    LOG_PROFILE,
    TRAINER_API_VERSION,
    TRAINJOB,
    WORKFLOW,
)
from ..engine.evidence import shards
from ..engine.plan import detect
from ..engine.reconcile.measurement_pods import JOBSET_NAME
from ..kube.rest import Kube
from ..kube.watch import Informer
from .measurements import KINDS as MEASUREMENT_KINDS

Obj = dict[str, Any]
WORKLOAD_SUFFIX = "-workload"
# Every pod of a Job's workload carries its JobSet's name (JOBSET_NAME); only the workers carry the Job's label (NVCRE
# labels the worker replicatedJob's pods: its MPI launcher has none and is known by its JobSet, `<job>-workload`).
# Changes that arrive together are reconciled together: a pass waits SETTLE after the first one, and with more
# than SETTLE_GROUPS groups running (each adds its own stream of events) proportionally longer, up to MAX_SETTLE.
# 256 nodes, 128 groups: the driver made ~290 passes at a fixed 0.05 s and ~160 so, with 15% less CPU.
SETTLE = 0.05
SETTLE_GROUPS = 16
MAX_SETTLE = 0.3
# Label-selector operators the API accepts in a list's labelSelector (Gt/Lt exist only in node affinity).
SELECTOR_OPERATORS = {"In": "in", "NotIn": "notin"}
SHARD_NAME = re.compile(r"^(.+)-evidence-\d+-\d+$")


def settle(running: int) -> float:
    """How long a pass waits after the first change for the rest of its burst, with `running` groups."""
    return min(MAX_SETTLE, SETTLE * max(1.0, running / SETTLE_GROUPS))


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def pod_owner(pod: Obj) -> tuple[str, bool]:
    """The Job whose workload runs the pod ("" for none) and whether the pod carries the Job's label."""
    labels = _meta(pod).get("labels") or {}
    if job := labels.get(LABEL_JOB):
        return str(job), True
    jobset = str(labels.get(JOBSET_NAME) or "")
    return (jobset.removesuffix(WORKLOAD_SUFFIX), False) if jobset.endswith(WORKLOAD_SUFFIX) else ("", False)


def trim_pod(pod: Obj) -> Obj:
    """A pod as the engine reads it: metadata, where it runs, its containers' names and its status (the
    spec's env, volumes and commands are most of a pod's bytes and nothing reads them)."""
    spec = pod.get("spec") or {}
    kept: Obj = {"nodeName": spec.get("nodeName")} if spec.get("nodeName") else {}
    for key in ("containers", "initContainers"):
        if spec.get(key):
            kept[key] = [{"name": c.get("name", "")} for c in spec[key]]
    return {"apiVersion": pod.get("apiVersion"), "kind": pod.get("kind"), "metadata": _meta(pod), "spec": kept,
            "status": pod.get("status") or {}}


def trim_node(node: Obj) -> Obj:
    """A node without its image list, the addresses/daemon endpoints no rule reads, and its conditions' heartbeat
    times: a kubelet renews those every few seconds, and none of it is a change to anything a run decides."""
    status = {k: v for k, v in (node.get("status") or {}).items() if k not in ("images", "addresses", "daemonEndpoints")}
    if status.get("conditions"):
        status["conditions"] = [{k: v for k, v in c.items() if k != "lastHeartbeatTime"} for c in status["conditions"]]
    return {**node, "status": status}


def trim_workload(workload: Obj) -> Obj:
    """A TrainJob's metadata and status: the Job tier judges those; its spec is ours and never read back."""
    return {k: v for k, v in workload.items() if k != "spec"}


def trim_metadata(obj: Obj) -> Obj:
    return {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "metadata": _meta(obj)}


def node_selector(spec: Obj) -> str:
    """The server-side label selector for the Nodes a Workflow can use: GPU nodes, and the target's labels when
    nothing can change the target (an override may, and an Unpinned Job's affinity reads every GPU node)."""
    terms = [f"{detect.GPU_PRESENT}=true"]
    orch = orchestration_of(spec)
    overridden = any("target" in (orchestration_of(o) if isinstance(o, dict) else {})
                     for o in spec.get("overrides") or [])
    if overridden or orch.get("placement") == "Unpinned":
        return ",".join(terms)
    target = orch.get("target") or {}
    terms += [f"{k}={v}" for k, v in sorted((target.get("nodeSelector") or {}).items())]
    for expr in target.get("matchExpressions") or []:
        key, op, values = expr.get("key") or "", expr.get("operator"), expr.get("values") or []
        if op in SELECTOR_OPERATORS and values:
            terms.append(f"{key} {SELECTOR_OPERATORS[op]} ({','.join(values)})")
        elif op == "Exists":
            terms.append(key)
        elif op == "DoesNotExist":
            terms.append(f"!{key}")
    return ",".join(terms)


@dataclass
class Changes:
    """What happened since the last pass: Jobs and measurements to reconcile again, whether anything did, and
    whether the Workflow tier must look (as NVCRE's Workflow controller, it does not watch Nodes: a Node's
    change concerns the Jobs with pods on it)."""

    jobs: set[str] = field(default_factory=set)
    measurements: set[str] = field(default_factory=set)
    any: bool = False
    workflow: bool = False


class Observer:
    """The informers of one Workflow's run, and the change set they fill between passes."""

    def __init__(self, kube: Kube, namespace: str, name: str) -> None:
        self.kube, self.namespace, self.name = kube, namespace, name
        self._wake = threading.Condition()
        self._changes = Changes()
        self._node_jobs: dict[str, Counter[str]] = {}  # node -> Jobs with pods there (how many)
        self._pod_at: dict[str, tuple[str, str]] = {}  # pod -> (its node or "", its Job)
        self._job_pods: dict[str, set[str]] = {}  # Job -> its pods' names
        # What a pass reads of every Job's pods and of the Nodes, kept until one of them changes: a busy pass then
        # costs what changed, not a sort of the whole cluster. Filled and emptied with the lock held.
        self._pod_lists: dict[str, tuple[list[Obj], list[Obj]]] = {}  # Job -> (its workload's pods, the labelled)
        self._node_list: list[Obj] | None = None
        self.informers: dict[tuple[str, str], Informer] = {}
        # The node-result ConfigMaps, each watched by its name (no label marks them; a pass never wakes for them:
        # only the Workflow tier reads them, when it runs anyway).
        self.results: dict[str, Informer] = {}

    # ---------------------------------------------------------------- lifecycle

    def start(self, workflow: Obj) -> None:
        """List every kind at once, then watch: the first pass waits for the slowest list, not for their sum (a big
        cluster's Pods and Nodes take a while, and so does the first label-selected list of a custom resource while
        the apiserver fills its cache)."""
        ns, by_workflow = self.namespace, f"{LABEL_WORKFLOW}={self.name}"
        informers = [
            Informer(self.kube, API_VERSION, WORKFLOW, ns, fields=f"metadata.name={self.name}", changed=self._changed),
            Informer(self.kube, API_VERSION, JOB, ns, by_workflow, changed=self._changed),
            Informer(self.kube, TRAINER_API_VERSION, TRAINJOB, ns, LABEL_JOB, trim=trim_workload, changed=self._changed),
            Informer(self.kube, "v1", "Pod", ns, JOBSET_NAME, trim=trim_pod, changed=self._changed),
            Informer(self.kube, "v1", "Node", labels=node_selector(workflow.get("spec") or {}), trim=trim_node,
                     changed=self._changed),
            *(Informer(self.kube, API_VERSION, kind, ns, by_workflow, changed=self._changed)
              for kind in MEASUREMENT_KINDS),
            # The evidence shards, metadata only (a Job's ledger reads their names and sha256 annotations; their rows
            # are for the bundle, read once at the end): hundreds of KiB each would otherwise sit in memory.
            Informer(self.kube, "v1", "ConfigMap", ns, f"{shards.SELECTOR},{shards.LABEL_WORKFLOW}={self.name}",
                     trim=trim_metadata, metadata_only=True, changed=self._changed)]
        self.informers.update(((i.api_version, i.kind), i) for i in informers)
        uid = _meta(workflow).get("uid", "")
        self.results = {cm: Informer(self.kube, "v1", "ConfigMap", ns, fields=f"metadata.name={cm}")
                        for cm in (naming.succeeded_nodes_configmap(uid), naming.failed_nodes_configmap(uid))}
        # Every informer is registered before any starts: a refused list stops the run, and stop() ends them all.
        with ThreadPoolExecutor(len(self._all())) as pool:
            list(pool.map(Informer.start, self._all()))
        with self._wake:
            for name, pod in self.informers[("v1", "Pod")].items().items():
                self._index_pod(name, pod)

    def dependencies(self, kinds: Iterable[tuple[str, str]]) -> dict[Ref, Obj]:
        """Live dependency objects (their metadata: cleanup and ownership read no more), one informer per kind,
        started the first time a kind is named."""
        found: dict[Ref, Obj] = {}
        for api_version, kind in sorted(set(kinds)):
            informer = self.informers.get((api_version, kind))
            if informer is None:
                informer = self._add(Informer(self.kube, api_version, kind, self.namespace,
                                              f"{LABEL_WORKFLOW}={self.name}", trim=trim_metadata, metadata_only=True,
                                              changed=self._changed))
            for obj in informer.items().values():
                found[Ref.of(obj)] = obj
        return found

    def log_profile(self, name: str) -> Obj | None:
        """A LogProfile (cluster-scoped) from a watch of them all, started the first time a measurement asks: a
        profile created or changed during the run is seen as NVCRE's informer sees it, without a read per pass."""
        informer = self.informers.get((API_VERSION, LOG_PROFILE))
        if informer is None:
            informer = self._add(Informer(self.kube, API_VERSION, LOG_PROFILE))
        return informer.get(name)

    def stop(self) -> None:
        for informer in self._all():
            informer.stop()

    def _all(self) -> list[Informer]:
        return [*self.informers.values(), *self.results.values()]

    def _add(self, informer: Informer) -> Informer:
        self.informers[(informer.api_version, informer.kind)] = informer.start()
        return informer

    # ---------------------------------------------------------------- reading

    def items(self, api_version: str, kind: str) -> dict[str, Obj]:
        return self.informers[(api_version, kind)].items()

    def workflow(self) -> Obj | None:
        return self.informers[(API_VERSION, WORKFLOW)].get(self.name)

    def node_results(self) -> dict[str, Obj]:
        """The succeeded/failed node ConfigMaps that exist, by name."""
        return {name: cm for name, informer in self.results.items() if (cm := informer.get(name)) is not None}

    def shards(self) -> dict[str, dict[str, Obj]]:
        """Job -> its evidence shard ConfigMaps (metadata only), by name."""
        out: dict[str, dict[str, Obj]] = {}
        for name, cm in self.items("v1", "ConfigMap").items():
            out.setdefault(str((_meta(cm).get("labels") or {}).get(shards.LABEL_JOB, "")), {})[name] = cm
        return out

    def pods(self) -> dict[str, list[Obj]]:
        """Job -> its pods as NVCRE's Job controller finds them, by the Job's label (the workers), by name (the lists
        are shared: callers must not change them)."""
        return {job: lists[1] for job, lists in self._lists().items()}

    def workload_pods(self) -> dict[str, list[Obj]]:
        """Job -> every pod of its workload (the MPI launcher too), as a measurement finds them by JobSet (shared)."""
        return {job: lists[0] for job, lists in self._lists().items()}

    def _lists(self) -> dict[str, tuple[list[Obj], list[Obj]]]:
        pods = self.informers[("v1", "Pod")]
        with self._wake:
            for job in self._job_pods.keys() - self._pod_lists.keys():
                found = [pod for pod in (pods.get(name) for name in sorted(self._job_pods[job])) if pod is not None]
                self._pod_lists[job] = (found, [pod for pod in found if pod_owner(pod)[1]])
            return {job: self._pod_lists[job] for job in sorted(self._job_pods)}

    def nodes(self) -> list[Obj]:
        """The watched Nodes, by name (shared, as `pods`)."""
        with self._wake:
            if self._node_list is None:
                by_name = self.items("v1", "Node")
                self._node_list = [by_name[name] for name in sorted(by_name)]
            return self._node_list

    def check(self) -> None:
        """Raise what stopped a watch for good (403, 404): the run cannot see the cluster any more."""
        for informer in self._all():
            if informer.error is not None:
                raise informer.error

    def record(self, obj: Obj) -> None:
        """A write's answer into its cache (when the kind is watched), so the next pass reads its own writes."""
        result = self.results.get(_meta(obj).get("name", "")) if obj.get("kind") == "ConfigMap" else None
        if result is not None and _meta(obj).get("namespace", "") == result.namespace:
            result.put(obj)
            return
        informer = self.informers.get((obj.get("apiVersion", ""), obj.get("kind", "")))
        if informer is not None and _meta(obj).get("namespace", "") == informer.namespace:
            informer.put(obj)
            self._changed(informer.kind, "write", [_meta(obj).get("name", "")])

    # ---------------------------------------------------------------- changes

    def take(self) -> Changes:
        with self._wake:
            changes, self._changes = self._changes, Changes()
        return changes

    def wait(self, timeout: float, running: int = 0) -> None:
        """Until something changes or `timeout` passes; then a moment more (longer with more `running` groups), so
        that a burst is one pass."""
        end = time.monotonic() + max(timeout, 0.0)
        with self._wake:
            while not self._changes.any:
                left = end - time.monotonic()
                if left <= 0:
                    return
                self._wake.wait(left)
        time.sleep(min(settle(running), max(end - time.monotonic(), 0.0)))

    def _changed(self, kind: str, what: str, names: Iterable[str]) -> None:
        jobs: set[str] = set()
        measurements: set[str] = set()
        for name in names:
            if kind == JOB:
                jobs.add(name)
            elif kind == TRAINJOB:
                jobs.add(name.removesuffix(WORKLOAD_SUFFIX))
            elif kind == "Pod":
                jobs |= self._pod_jobs(name)
            elif kind == "Node":
                with self._wake:
                    jobs |= set(self._node_jobs.get(name, ()))
                    self._node_list = None
            elif kind == "ConfigMap":  # an evidence shard: `<job>-evidence-<attempt>-<k>`
                if found := SHARD_NAME.match(name):
                    jobs.add(found[1])
            elif kind in MEASUREMENT_KINDS:
                measurements.add(name)
                obj = self.informers[(API_VERSION, kind)].get(name) or {}
                if job := ((obj.get("spec") or {}).get("jobRef") or {}).get("name"):
                    jobs.add(job)
        with self._wake:
            self._changes.jobs |= jobs
            self._changes.measurements |= measurements
            self._changes.any = True
            self._changes.workflow |= kind not in ("Node", "ConfigMap")
            self._wake.notify_all()

    def _pod_jobs(self, name: str) -> set[str]:
        """The Job of a changed pod (and the one it had, for a deleted pod), keeping the indexes."""
        pod = self.informers[("v1", "Pod")].get(name)
        with self._wake:
            before = self._pod_at.get(name)
            self._index_pod(name, pod)
        jobs = {before[1]} if before else set()
        if pod is not None:
            jobs |= {pod_owner(pod)[0]} - {""}
        return jobs

    def _index_pod(self, name: str, pod: Obj | None) -> None:
        """Called with the lock held."""
        before = self._pod_at.pop(name, None)
        if before:
            node, job = before
            self._pod_lists.pop(job, None)
            self._job_pods[job].discard(name)
            if not self._job_pods[job]:
                del self._job_pods[job]
            if node:
                jobs = self._node_jobs[node]
                jobs[job] -= 1
                if jobs[job] <= 0:
                    del jobs[job]
                if not jobs:
                    del self._node_jobs[node]
        if pod is None:
            return
        at = str((pod.get("spec") or {}).get("nodeName") or "")
        owner = pod_owner(pod)[0]
        if not owner:
            return
        self._pod_at[name] = (at, owner)
        self._pod_lists.pop(owner, None)
        self._job_pods.setdefault(owner, set()).add(name)
        if at:
            self._node_jobs.setdefault(at, Counter())[owner] += 1
