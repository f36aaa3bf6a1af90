"""An in-memory cluster behind the interface the driver uses: the verbs of `kube/rest.py`'s Kube that the loops call
(get, list, resource, create, replace, merge_patch, json_patch, delete, pod_log, log_tail) on objects kept in a dict,
and informers (`kube/watch.py`'s Informer, its list and watch replaced) fed by those writes as they happen.

Not a fake of the HTTP API: nothing here parses a path or a query. The store keeps what a real one does for the
driver's rules: resourceVersions (a stale write is a 409), UIDs (a delete's precondition), AlreadyExists, a
generation that moves with the spec, and the garbage collector's cascade through owner references. `react` is the
rest of the cluster (Trainer and the kubelet): `instant_workloads` runs every TrainJob to its end the moment it is
created. `kill_after` stops the process after that many writes: every later write raises `Killed`. `resumed` runs a
loop killed and run again; `outcome` and `verdict` are what it must end with to end as the whole run does.

Imported as tests.unit.driver.memory_cluster (shared by the driver loop tests).
"""
from __future__ import annotations

import copy
import itertools
import re
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import jsonpatch
import jsonpointer
import pytest

from ansible_collections.cre.certification.plugins.module_utils.driver import observe
from ansible_collections.cre.certification.plugins.module_utils.engine.api.actions import Ref
from ansible_collections.cre.certification.plugins.module_utils.engine.api.vocabulary import (
    ANNOTATION_GROUP_NODES,
    LABEL_JOB,
)
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile.measurement_pods import JOBSET_NAME
from ansible_collections.cre.certification.plugins.module_utils.kube.errors import ApiError, NotServed, Target
from ansible_collections.cre.certification.plugins.module_utils.kube.watch import Informer

Obj = dict[str, Any]
NVCRE = "nvcre.nvidia.com/v1alpha1"
TRAINER = "trainer.kubeflow.org/v1alpha1"
# (apiVersion, kind) -> (plural, namespaced): what discovery answers.
SERVED = {
    (NVCRE, "Workflow"): ("workflows", True), (NVCRE, "Job"): ("jobs", True),
    (NVCRE, "BandwidthMeasurement"): ("bandwidthmeasurements", True),
    (NVCRE, "GoodputMeasurement"): ("goodputmeasurements", True), (NVCRE, "LogProfile"): ("logprofiles", False),
    (NVCRE, "Certification"): ("certifications", True), (NVCRE, "WorkloadRun"): ("workloadruns", True),
    (TRAINER, "TrainJob"): ("trainjobs", True), (TRAINER, "TrainingRuntime"): ("trainingruntimes", True),
    ("v1", "Pod"): ("pods", True), ("v1", "Node"): ("nodes", False), ("v1", "ConfigMap"): ("configmaps", True),
    ("v1", "Event"): ("events", True), ("v1", "PersistentVolume"): ("persistentvolumes", False),
    ("coordination.k8s.io/v1", "Lease"): ("leases", True),
}
FAILED_LOG = "step 41 of 100\nNCCL WARN exit 1\n"
# What differs between two runs that end the same: when things happened, and the UIDs and versions objects got.
VOLATILE = {"uid", "resourceVersion", "creationTimestamp", "startTime", "completionTime", "lastTransitionTime",
            "workloadStartTime"}


class Killed(BaseException):
    """The driver's process is gone (a BaseException: no `except Exception` of the driver absorbs it)."""


def _requirement(term: str) -> Callable[[dict[str, str]], bool]:
    """One term of a label selector: k=v, k==v, k!=v, k, !k, k in (a,b), k notin (a,b)."""
    term = term.strip()
    if found := re.fullmatch(r"(\S+)\s+(in|notin)\s+\((.*)\)", term):
        key, op, values = found[1], found[2], {v.strip() for v in found[3].split(",")}
        return lambda labels: (labels.get(key) in values) == (op == "in") and (op == "notin" or key in labels)
    if term.startswith("!"):
        return lambda labels: term[1:] not in labels
    if "!=" in term:
        key, value = term.split("!=", 1)
        return lambda labels: labels.get(key) != value
    if "=" in term:
        key, value = term.replace("==", "=").split("=", 1)
        return lambda labels: labels.get(key) == value
    return lambda labels: term in labels


def selected(obj: Obj, labels: str = "", fields: str = "") -> bool:
    """Whether `obj` matches a label selector and a field selector (metadata.name, metadata.namespace)."""
    meta = obj.get("metadata") or {}
    terms = re.split(r",(?![^()]*\))", labels) if labels else []
    if not all(_requirement(t)(meta.get("labels") or {}) for t in terms):
        return False
    for term in fields.split(",") if fields else []:
        path, value = term.split("=", 1)
        if path == "metadata.name" and meta.get("name") != value:
            return False
        if path == "metadata.namespace" and meta.get("namespace") != value:
            return False
    return True


class MemoryKube:
    """The cluster's objects by Ref. Every write is answered as the API server would, then seen by the informers
    that select it, in the order it happened."""

    def __init__(self, react: Callable[[MemoryKube, str, Obj], None] | None = None) -> None:
        self.objects: dict[Ref, Obj] = {}
        self.react = react
        self.kill_after: int | None = None
        self.writes = 0
        self.requests: Counter[str] = Counter()
        self.bytes_read = 0
        self.logs: dict[tuple[str, str], str] = {}  # (pod, container) -> its log
        self.informers: list[MemoryInformer] = []
        self._rv = itertools.count(1)
        self._names = itertools.count(1)  # generateName's suffixes
        self._made: Counter[Ref] = Counter()  # how many times each object was made: its UID's incarnation
        self._lock = threading.RLock()

    # ---------------------------------------------------------------- reads

    def resource(self, api_version: str, kind: str) -> tuple[str, bool]:
        if (api_version, kind) not in SERVED:
            raise NotServed(api_version, kind)
        return SERVED[(api_version, kind)]

    def get(self, ref: Ref) -> Obj | None:
        with self._lock:
            self.requests["GET"] += 1
            found = self.objects.get(self._key(ref))
            return copy.deepcopy(found) if found is not None else None

    def list(self, api_version: str, kind: str, namespace: str = "", labels: str = "", fields: str = "") -> list[Obj]:
        self.resource(api_version, kind)
        with self._lock:
            self.requests["LIST"] += 1
            return [copy.deepcopy(o) for r, o in sorted(self.objects.items(), key=lambda i: i[0].name)
                    if (r.api_version, r.kind) == (api_version, kind) and (not namespace or r.namespace == namespace)
                    and selected(o, labels, fields)]

    def list_metadata(self, api_version: str, kind: str, namespace: str = "", labels: str = "") -> Iterator[Obj]:
        yield from [o.get("metadata") or {} for o in self.list(api_version, kind, namespace, labels)]

    def pod_log(self, namespace: str, pod: str, container: str = "", since: str = "", timestamps: bool = False,
                limit_bytes: int = 0, tail_lines: int = 0) -> str:
        return self.logs.get((pod, container), "")

    def log_tail(self, namespace: str, pod: str, container: str, lines: int = 800) -> str:
        return self.pod_log(namespace, pod, container)

    # ---------------------------------------------------------------- writes

    def create(self, obj: Obj, dry_run: bool = False) -> Obj:
        with self._lock:
            self._write()
            obj = copy.deepcopy(obj)
            meta = obj["metadata"]
            if not meta.get("name"):
                meta["name"] = f"{meta['generateName']}{next(self._names)}"
            ref = self._key(Ref.of(obj))
            if ref in self.objects:
                raise self._error("create", ref, 409, "AlreadyExists", f'{ref.kind} "{ref.name}" already exists')
            meta.update(uid=self._uid(ref), generation=1, creationTimestamp="2026-01-01T00:00:00Z")
            stored = self._store(ref, obj, "ADDED")
            if self.react:
                self.react(self, "ADDED", stored)
            return copy.deepcopy(stored)

    def replace(self, obj: Obj, sub: str = "") -> Obj:
        with self._lock:
            self._write()
            ref = self._key(Ref.of(obj))
            live = self._live(ref, "update")
            if obj["metadata"].get("resourceVersion") != live["metadata"]["resourceVersion"]:
                raise self._error("update", ref, 409, "Conflict", "the object has been modified")
            new = copy.deepcopy(live)
            if sub == "status":
                new["status"] = copy.deepcopy(obj.get("status"))
            else:
                new = {**copy.deepcopy(obj), "status": new.get("status")}
                new["metadata"].update(uid=live["metadata"]["uid"], generation=live["metadata"].get("generation", 1))
            return copy.deepcopy(self._store(ref, new, "MODIFIED", live))

    def merge_patch(self, ref: Ref, patch: Obj, sub: str = "") -> Obj:
        with self._lock:
            self._write()
            ref = self._key(ref)
            live = self._live(ref, "patch")
            return copy.deepcopy(self._store(ref, _merge(copy.deepcopy(live), patch), "MODIFIED", live))

    def json_patch(self, ref: Ref, operations: Sequence[Obj]) -> Obj:
        with self._lock:
            self._write()
            ref = self._key(ref)
            live = self._live(ref, "patch")
            # As the API server's json-patch: a test for null passes where the member is absent.
            ops = [op for op in operations if not (op["op"] == "test" and op["value"] is None
                                                   and jsonpointer.resolve_pointer(live, op["path"], None) is None)]
            try:
                new = jsonpatch.apply_patch(live, ops)
            except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
                raise self._error("patch", ref, 422, "Invalid", str(exc)) from None
            return copy.deepcopy(self._store(ref, new, "MODIFIED", live))

    def delete(self, ref: Ref, uid: str = "", propagation: str = "Background") -> bool:
        with self._lock:
            self._write()
            ref = self._key(ref)
            live = self.objects.get(ref)
            if live is None:
                return False
            if uid and live["metadata"]["uid"] != uid:
                raise self._error("delete", ref, 409, "Conflict", "Precondition failed: UID in precondition")
            self._remove(ref)
            return True

    # ---------------------------------------------------------------- the store

    def put(self, obj: Obj) -> Obj:
        """An object the test sets up (not a write of the driver's: it is not counted)."""
        with self._lock:
            obj = copy.deepcopy(obj)
            obj["metadata"].setdefault("uid", self._uid(self._key(Ref.of(obj))))
            obj["metadata"].setdefault("generation", 1)
            return self._store(self._key(Ref.of(obj)), obj, "ADDED")

    def of_kind(self, kind: str) -> dict[str, Obj]:
        with self._lock:
            return {r.name: o for r, o in self.objects.items() if r.kind == kind}

    def _key(self, ref: Ref) -> Ref:
        """Cluster-scoped kinds have no namespace, whatever the caller passed."""
        namespaced = SERVED.get((ref.api_version, ref.kind), ("", True))[1]
        return ref if namespaced or not ref.namespace else Ref(ref.api_version, ref.kind, "", ref.name)

    def _uid(self, ref: Ref) -> str:
        """A UID of its own each time an object is made, and the same in two runs that make it alike: names built from
        UIDs (the node-result ConfigMaps') then compare across runs that ended alike."""
        self._made[ref] += 1
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{ref}#{self._made[ref]}"))

    def _write(self) -> None:
        if self.kill_after is not None and self.writes >= self.kill_after:
            raise Killed(f"killed after {self.kill_after} writes")
        self.writes += 1
        self.requests["WRITE"] += 1

    def _live(self, ref: Ref, verb: str) -> Obj:
        if ref not in self.objects:
            raise self._error(verb, ref, 404, "NotFound", f'{ref.kind} "{ref.name}" not found')
        return self.objects[ref]

    @staticmethod
    def _error(verb: str, ref: Ref, status: int, reason: str, message: str) -> ApiError:
        body = f'{{"kind": "Status", "reason": "{reason}", "message": "{message}"}}'
        return ApiError(Target(verb, ref.api_version, ref.kind, ref.namespace, ref.name), status, reason, body)

    def _store(self, ref: Ref, obj: Obj, event: str, live: Obj | None = None) -> Obj:
        if live is not None and obj.get("spec") != live.get("spec"):
            obj["metadata"]["generation"] = live["metadata"].get("generation", 1) + 1
        obj["metadata"]["resourceVersion"] = str(next(self._rv))
        self.objects[ref] = obj
        self._tell(event, obj)
        return obj

    def _remove(self, ref: Ref) -> None:
        """Deleted, and what it owned after it (the garbage collector, in the foreground of this call)."""
        gone = self.objects.pop(ref)
        self._tell("DELETED", gone)
        uid = gone["metadata"]["uid"]
        for child in [r for r, o in self.objects.items()
                      if any(owner.get("uid") == uid for owner in o["metadata"].get("ownerReferences") or [])]:
            if child in self.objects:
                self._remove(child)

    def _tell(self, event: str, obj: Obj) -> None:
        for informer in list(self.informers):
            informer.deliver(event, obj)


def _merge(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if not isinstance(target, dict):
        target = {}
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        else:
            target[key] = _merge(target.get(key), value)
    return target


class MemoryInformer(Informer):
    """kube/watch.py's Informer with its list read from the MemoryKube and its watch events handed over by each
    write; the cache, `put`, change detection and `changed` calls are the real Informer's."""

    def start(self) -> MemoryInformer:
        kube: MemoryKube = self.kube  # type: ignore[assignment]
        with kube._lock:
            items = kube.list(self.api_version, self.kind, self.namespace, self.labels, self.fields)
            with self._lock:
                self._items = {o["metadata"]["name"]: self._prepare(o) for o in items}
            kube.informers.append(self)
        return self

    def stop(self) -> None:
        kube: MemoryKube = self.kube  # type: ignore[assignment]
        with kube._lock:
            if self in kube.informers:
                kube.informers.remove(self)

    def deliver(self, event: str, obj: Obj) -> None:
        meta = obj["metadata"]
        if (obj.get("apiVersion"), obj.get("kind")) != (self.api_version, self.kind):
            return
        if self.namespace and meta.get("namespace", "") != self.namespace:
            return
        if not selected(obj, self.labels, self.fields):
            if self.get(meta["name"]) is None:
                return
            event = "DELETED"  # it left the selection
        self._apply({"type": event, "object": copy.deepcopy(obj)})


def watch_in_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """The driver's Observer builds MemoryInformers (over the MemoryKube the driver is given) for Informers."""
    monkeypatch.setattr(observe, "Informer", MemoryInformer)


def instant_workloads(failing: Iterable[str] = ()) -> Callable[[MemoryKube, str, Obj], None]:
    """Trainer and the kubelet, at once: a TrainJob created runs its pods (one a group node, labelled with its Job
    and, as JobSet labels every pod it makes, with its JobSet's name)
    to the end, Succeeded, or Failed with exit 1 for the Jobs named in `failing`."""
    fail = set(failing)

    def react(kube: MemoryKube, event: str, obj: Obj) -> None:
        if event != "ADDED" or obj.get("kind") != "TrainJob":
            return
        meta = obj["metadata"]
        job_name = meta["name"].removesuffix("-workload")
        job = kube.objects.get(Ref(NVCRE, "Job", meta["namespace"], job_name)) or {}
        nodes = [n for n in ((job.get("metadata") or {}).get("annotations") or {}).get(
            ANNOTATION_GROUP_NODES, "").split(",") if n]
        failed = job_name in fail
        owner = {"apiVersion": TRAINER, "kind": "TrainJob", "name": meta["name"], "uid": meta["uid"],
                 "controller": True}
        for i, node in enumerate(nodes):
            pod = f"{meta['name']}-node-0-{i}"
            term = {"exitCode": 1 if failed else 0, "reason": "Error" if failed else "Completed",
                    "finishedAt": "2026-01-01T00:01:00Z"}
            kube.put({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": pod, "namespace": meta["namespace"],
                                   "labels": {LABEL_JOB: job_name, JOBSET_NAME: meta["name"]},
                                   "ownerReferences": [owner]},
                      "spec": {"nodeName": node, "containers": [{"name": "node"}]},
                      "status": {"phase": "Failed" if failed else "Succeeded",
                                 "containerStatuses": [{"name": "node", "state": {"terminated": term}}]}})
            if failed:
                kube.logs[(pod, "node")] = FAILED_LOG
        done = {"type": "Failed" if failed else "Complete", "status": "True",
                "reason": "JobsFailed" if failed else "JobsCompleted",
                "message": "jobset failed: exit 1" if failed else "jobset completed"}
        live = kube.objects[Ref.of(obj)]
        kube._store(Ref.of(obj), {**copy.deepcopy(live), "status": {"conditions": [done]}}, "MODIFIED", live)

    return react


def strip(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: strip(v) for k, v in obj.items() if k not in VOLATILE}
    if isinstance(obj, list):
        return [strip(v) for v in obj]
    return obj


def outcome(kube: MemoryKube) -> dict[tuple[str, str], Obj]:
    """Every object the run left but its Events (best effort, and sent again after a kill), without VOLATILE."""
    return {(r.kind, r.name): strip(o) for r, o in kube.objects.items() if r.kind != "Event"}


def verdict(result: Obj) -> Obj:
    """The run's result without how long it took and whether this run itself wrote."""
    return {k: v for k, v in result.items() if k not in ("elapsed", "changed")}


def resumed(kube: MemoryKube, k: int, run: Callable[[MemoryKube], Obj]) -> Obj:
    """`run` killed after write `k`, then run again from what the cluster holds: the second run's result."""
    kube.kill_after = k
    with pytest.raises(Killed):
        run(kube)
    kube.kill_after = None
    return run(kube)
