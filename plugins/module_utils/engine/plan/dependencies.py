"""Workflow dependencies: scope, creation order, job-scoped renamed copies, manifests (workflow spec §7).

A dependency is job-scoped when the Job spec names it (directly or through other job-scoped
dependencies); each launch then gets its own renamed copy. The rest are created once per Workflow.
"""
from __future__ import annotations

import heapq
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from ..api import naming
from ..api.objects import json_copy
from ..api.vocabulary import ANNOTATION_WORKFLOW_UID, API_VERSION, LABEL_WORKFLOW
from ..spec import gang

SCOPE_WORKFLOW = "workflow"
SCOPE_JOB = "job"

_RESOURCE_NAME = re.compile(r"^[a-z0-9][-a-z0-9.]*[a-z0-9]$")
# Without API discovery (offline render, or a kind the server does not serve yet) these core kinds are known
# to be cluster-scoped; every `Cluster*` kind is too. The live driver asks the API server (§7.2 REST mapper).
CLUSTER_SCOPED_KINDS = frozenset({
    "Namespace", "Node", "PersistentVolume", "StorageClass", "PriorityClass", "CustomResourceDefinition",
    "RuntimeClass", "IngressClass", "DeviceClass", "ResourceSlice", "LogProfile", "VolumeSnapshotClass",
    "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
})

Path = tuple[Any, ...]


def name_of(obj: dict[str, Any]) -> str:
    return (obj.get("metadata") or {}).get("name", "")


def strip_when(dependency: dict[str, Any]) -> dict[str, Any]:
    """A copy of the Kubernetes object of a DependencySpec (its sibling `when` is API-only, never evaluated)."""
    return json_copy({k: v for k, v in dependency.items() if k != "when"})


# (apiVersion, kind) -> namespaced, as API discovery answered.
Scopes = dict[tuple[str, str], bool]


def is_cluster_scoped(obj: dict[str, Any], namespaced: Scopes | None = None) -> bool:
    kind = obj.get("kind", "")
    known = (namespaced or {}).get((obj.get("apiVersion", ""), kind))
    if known is not None:
        return not known
    return kind.startswith("Cluster") or kind in CLUSTER_SCOPED_KINDS


def resource_name_shaped(text: str) -> bool:
    return 3 <= len(text) <= 253 and bool(_RESOURCE_NAME.match(text)) and any(c.islower() for c in text)


# A LogProfile is named by the measurements and read cluster-wide, never from a per-group copy. NVCRE renames it
# too when the name is also a string two job dependencies share: the catalog's GB200/GB300 loopback (`app:
# nccl-loopback` on its runtime and its ComputeDomain) then points at a LogProfile that does not exist, and the
# loopback is never measured (docs/nvcre-compatibility.md).
LOG_PROFILE_REFS = (("bandwidthMeasurement", "logProfileRef"), ("goodputMeasurement", "logProfileRef"))


def job_spec_skip(path: Path) -> bool:
    """What renaming and classification leave alone: workload labels, runtimePatch label/annotation maps and the
    measurements' LogProfile names."""
    if path[:1] == ("workloadMetadata",) or path in LOG_PROFILE_REFS:
        return True
    return (path[:3] == ("workload", "trainJob", "runtimePatches") and len(path) >= 2
            and path[-2] == "metadata" and path[-1] in ("labels", "annotations"))


def _namespace_skip(path: Path) -> bool:
    # Every dependency shares the Workflow namespace string; it must not tie them together.
    return path == ("metadata", "namespace")


def strings(obj: Any, skip: Callable[[Path], bool] = lambda _: False, path: Path = ()) -> Iterator[str]:
    """Every string value in a JSON document, outside the subtrees `skip` names."""
    if skip(path):
        return
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for key, value in obj.items():
            yield from strings(value, skip, path + (key,))
    elif isinstance(obj, list):
        for index, value in enumerate(obj):
            yield from strings(value, skip, path + (index,))


def classify(dependencies: list[dict[str, Any]], job_spec: dict[str, Any]) -> list[bool]:
    """Per dependency: job-scoped? By string reachability from the Job spec, transitively; never `Cluster*`."""
    names = {name_of(d) for d in dependencies}
    dep_strings = [set(strings(d, _namespace_skip)) for d in dependencies]
    shaped = [{s for s in found if resource_name_shaped(s) and s not in names} for found in dep_strings]
    eligible = [not d.get("kind", "").startswith("Cluster") for d in dependencies]
    spec_strings = set(strings(job_spec, job_spec_skip))
    scoped = [eligible[i] and name_of(d) in spec_strings for i, d in enumerate(dependencies)]
    pending = [i for i, s in enumerate(scoped) if s]
    while pending:
        i = pending.pop()
        for j, dep in enumerate(dependencies):
            if not scoped[j] and eligible[j] and (name_of(dep) in dep_strings[i] or shaped[i] & shaped[j]):
                scoped[j] = True
                pending.append(j)
    return scoped


def creation_order(dependencies: list[dict[str, Any]]) -> list[int]:
    """Stable topological order: a dependency whose name another one mentions comes first; ties by index."""
    count = len(dependencies)
    found = [set(strings(d, _namespace_skip)) for d in dependencies]
    after: list[list[int]] = [[] for _index in range(count)]
    blockers = [0] * count
    for a in range(count):
        for b in range(count):
            if a != b and name_of(dependencies[b]) and name_of(dependencies[b]) in found[a]:
                after[b].append(a)
                blockers[a] += 1
    ready = [i for i in range(count) if blockers[i] == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while len(order) < count:
        if not ready:  # a reference cycle: release the lowest remaining index
            ready = [min(i for i in range(count) if blockers[i] > 0)]
            blockers[ready[0]] = 0
        i = heapq.heappop(ready)
        order.append(i)
        for a in after[i]:
            if blockers[a] > 0:
                blockers[a] -= 1
                if blockers[a] == 0:
                    heapq.heappush(ready, a)
    return order


class Renamer:
    """Job-scoped renaming (§7.2): each job dependency's name, and every resource-name-shaped string two of
    them share, get the launch suffix; quoted occurrences are replaced in the dependencies and the Job spec.

    As NVCRE, this is a substitution on the JSON text, with workload labels, runtimePatch label/annotation
    maps and dependency namespaces detached first and restored after. The text is built once per Workflow,
    so a launch costs one regex pass and one json.loads.
    """

    def __init__(self, job_spec: dict[str, Any], job_deps: list[dict[str, Any]],
                 gang_scheduler: dict[str, Any] | None) -> None:
        names = {name_of(d) for d in job_deps}
        seen_in: dict[str, int] = {}
        for dep in job_deps:
            for text in set(strings(dep, _namespace_skip)):
                if resource_name_shaped(text) and text not in names:
                    seen_in[text] = seen_in.get(text, 0) + 1
        self.keys = sorted(t for t in names | {t for t, n in seen_in.items() if n >= 2} if t)
        self.pattern = re.compile("|".join(re.escape(json.dumps(k)) for k in self.keys)) if self.keys else None
        self.job_deps = job_deps
        self.gang_scheduler = gang_scheduler
        self.spec_held = _held(job_spec, job_spec_skip)
        self.deps_held = [_held(d, _namespace_skip) for d in job_deps]
        self.text = json.dumps({"spec": _without(job_spec, self.spec_held),
                                "deps": [_without(d, h) for d, h in zip(job_deps, self.deps_held)]})

    def rename(self, suffix: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """(Job spec, dependency copies) for one launch; fresh objects the caller may modify."""
        text = self.text
        if self.pattern is not None:
            quoted = {json.dumps(k): json.dumps(naming.dependency_copy_name(k, suffix)) for k in self.keys}
            text = self.pattern.sub(lambda m: quoted[m.group(0)], text)
        doc = json.loads(text)
        spec = _restore(doc["spec"], self.spec_held)
        deps = [_preserve_scheduling_fields(old, _restore(new, held), self.gang_scheduler)
                for old, new, held in zip(self.job_deps, doc["deps"], self.deps_held)]
        return spec, deps


def _held(obj: Any, skip: Callable[[Path], bool], path: Path = ()) -> list[tuple[Path, Any]]:
    """(path, value) of every subtree `skip` names: they are detached before renaming."""
    if skip(path):
        return [(path, obj)]
    if isinstance(obj, dict):
        return [h for k, v in obj.items() for h in _held(v, skip, path + (k,))]
    if isinstance(obj, list):
        return [h for i, v in enumerate(obj) for h in _held(v, skip, path + (i,))]
    return []


def _without(obj: Any, held: list[tuple[Path, Any]]) -> Any:
    """`obj` with the held subtrees replaced by null (shallow copies along their paths only)."""
    for path, _value in held:
        obj = _set(obj, path, None)
    return obj


def _restore(obj: Any, held: list[tuple[Path, Any]]) -> Any:
    for path, value in held:
        obj = _set(obj, path, json_copy(value))
    return obj


def _set(obj: Any, path: Path, value: Any) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    out = dict(obj) if isinstance(obj, dict) else list(obj)
    out[head] = _set(out[head], rest, value)
    return out


def _preserve_scheduling_fields(before: dict[str, Any], after: dict[str, Any],
                                gang_scheduler: dict[str, Any] | None) -> dict[str, Any]:
    """PreserveSchedulingFields: a queue (ours: or priority class) named like a dependency survives renaming (copy
    back, never insert)."""
    if after.get("kind") != "TrainingRuntime":
        return after
    resolved = gang.resolve(gang_scheduler)
    key = resolved[2] if resolved else gang.DEFAULT_QUEUE_LABEL_KEY
    old_jobs = _replicated_jobs(before)
    for index, rj in enumerate(_replicated_jobs(after)):
        if index >= len(old_jobs) or not isinstance(rj, dict) or not isinstance(old_jobs[index], dict):
            continue
        old = old_jobs[index]
        for trail in (("template", "metadata", "labels"), ("template", "spec", "template", "metadata", "labels")):
            old_labels, new_labels = _dig(old, trail), _dig(rj, trail)
            if isinstance(old_labels, dict) and isinstance(new_labels, dict) and key in old_labels:
                new_labels[key] = old_labels[key]
        old_pod, new_pod = (_dig(x, ("template", "spec", "template", "spec")) for x in (old, rj))
        for field in ("schedulerName", "priorityClassName"):  # a PriorityClass named like a dependency too
            if isinstance(old_pod, dict) and isinstance(new_pod, dict) and field in old_pod:
                new_pod[field] = old_pod[field]
    return after


def _replicated_jobs(runtime: dict[str, Any]) -> list[Any]:
    found = _dig(runtime, ("spec", "template", "spec", "replicatedJobs"))
    return found if isinstance(found, list) else []


def _dig(obj: Any, trail: tuple[str, ...]) -> Any:
    for key in trail:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def manifest(obj: dict[str, Any], workflow: dict[str, Any], scope: str,
             namespaced: Scopes | None = None) -> dict[str, Any]:
    """Completes `obj` (a fresh copy, modified in place) into the object to create: Workflow namespace,
    tracking label and UID annotation; workflow-scoped namespaced objects also get a non-controller owner
    reference to the Workflow."""
    meta = workflow.get("metadata") or {}
    # `metadata: null` is no metadata: the API server prunes a null it has no nullable for.
    obj_meta = obj["metadata"] = obj.get("metadata") or {}
    cluster_scoped = is_cluster_scoped(obj, namespaced)
    if not cluster_scoped and not obj_meta.get("namespace") and meta.get("namespace"):
        obj_meta["namespace"] = meta["namespace"]
    obj_meta.setdefault("labels", {})[LABEL_WORKFLOW] = meta.get("name", "")
    if meta.get("uid"):
        obj_meta.setdefault("annotations", {})[ANNOTATION_WORKFLOW_UID] = meta["uid"]
        if scope == SCOPE_WORKFLOW and not cluster_scoped:
            obj_meta.setdefault("ownerReferences", []).append(
                {"apiVersion": API_VERSION, "kind": "Workflow", "name": meta.get("name", ""), "uid": meta["uid"]})
    return obj


def reference(obj: dict[str, Any], scope: str, group: str = "", iteration: int = 0) -> dict[str, Any]:
    """A `status.dependencyRefs` entry."""
    ref: dict[str, Any] = {"apiVersion": obj.get("apiVersion", ""), "kind": obj.get("kind", ""), "name": name_of(obj)}
    if (obj.get("metadata") or {}).get("namespace"):
        ref["namespace"] = obj["metadata"]["namespace"]
    ref["scope"] = scope
    if scope == SCOPE_JOB:
        ref.update(groupName=group, iteration=iteration)
    return ref


class DependencyPlan:
    """Scope and creation order of a Workflow's (post-override) dependencies."""

    def __init__(self, dependencies: list[dict[str, Any]], job_spec: dict[str, Any],
                 gang_scheduler: dict[str, Any] | None = None, namespaced: Scopes | None = None) -> None:
        self.namespaced = namespaced
        objects = [strip_when(d) for d in dependencies]
        order = creation_order(objects)
        scoped = classify(objects, job_spec)
        self.workflow_scoped = [objects[i] for i in order if not scoped[i]]
        self.job_scoped = [objects[i] for i in order if scoped[i]]
        self.renamer = Renamer(job_spec, self.job_scoped, gang_scheduler)

    def workflow_manifests(self, workflow: dict[str, Any]) -> list[dict[str, Any]]:
        return [manifest(json_copy(d), workflow, SCOPE_WORKFLOW, self.namespaced) for d in self.workflow_scoped]

    def for_launch(self, suffix: str) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
        """(renamed Job spec, renamed job-scoped copies, effective dependency set for the gang check)."""
        spec, copies = self.renamer.rename(suffix)
        return spec, copies, self.workflow_scoped + copies
