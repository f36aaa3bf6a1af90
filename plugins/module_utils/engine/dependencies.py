"""Workflow dependencies: scope, creation order, job-scoped renamed copies, manifests (workflow spec §7).

A dependency is job-scoped when the Job spec names it (directly or through other job-scoped
dependencies); each launch then gets its own renamed copy. The rest are created once per Workflow.
"""
from __future__ import annotations

import copy
import heapq
import re
from typing import Any, Callable, Iterator

from . import gang, naming

WORKFLOW_LABEL = "nvcre.nvidia.com/workflow"
WORKFLOW_UID_ANNOTATION = "nvcre.nvidia.com/workflow-uid"
API_VERSION = "nvcre.nvidia.com/v1alpha1"
SCOPE_WORKFLOW = "workflow"
SCOPE_JOB = "job"

_RESOURCE_NAME = re.compile(r"^[a-z0-9][-a-z0-9.]*[a-z0-9]$")
# Without a REST mapper (offline render) these core kinds are known to be cluster-scoped; every
# `Cluster*` kind is too. The live driver asks the API server instead.
CLUSTER_SCOPED_KINDS = frozenset({
    "Namespace", "Node", "PersistentVolume", "StorageClass", "PriorityClass", "CustomResourceDefinition",
    "RuntimeClass", "IngressClass", "DeviceClass", "ResourceSlice", "LogProfile", "VolumeSnapshotClass",
    "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
})

Path = tuple[Any, ...]


def name_of(obj: dict[str, Any]) -> str:
    return (obj.get("metadata") or {}).get("name", "")


def strip_when(dependency: dict[str, Any]) -> dict[str, Any]:
    """The Kubernetes object of a DependencySpec (its sibling `when` is API-only, never evaluated)."""
    return {k: copy.deepcopy(v) for k, v in dependency.items() if k != "when"}


def is_cluster_scoped(obj: dict[str, Any]) -> bool:
    kind = obj.get("kind", "")
    return kind.startswith("Cluster") or kind in CLUSTER_SCOPED_KINDS


def resource_name_shaped(text: str) -> bool:
    return 3 <= len(text) <= 253 and bool(_RESOURCE_NAME.match(text)) and any(c.islower() for c in text)


def job_spec_skip(path: Path) -> bool:
    """Maps renaming and classification leave alone: workload labels and runtimePatch label/annotation maps."""
    if path[:1] == ("workloadMetadata",):
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


def substitute(obj: Any, mapping: dict[str, str], skip: Callable[[Path], bool] = lambda _: False,
               path: Path = ()) -> Any:
    """A copy with every string (value or key) equal to a mapping key replaced: NVCRE's quoted substitution."""
    if skip(path):
        return copy.deepcopy(obj)
    if isinstance(obj, str):
        return mapping.get(obj, obj)
    if isinstance(obj, dict):
        return {mapping.get(k, k): substitute(v, mapping, skip, path + (k,)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [substitute(v, mapping, skip, path + (i,)) for i, v in enumerate(obj)]
    return obj


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
    after: list[list[int]] = [[] for _ in range(count)]
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


def rename_job_scoped(job_spec: dict[str, Any], job_deps: list[dict[str, Any]], suffix: str,
                      gang_scheduler: dict[str, Any] | None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Renamed copies of the job-scoped dependencies and the Job spec that refers to them (§7.2, §5)."""
    names = {name_of(d) for d in job_deps}
    seen_in: dict[str, int] = {}
    for dep in job_deps:
        for text in set(strings(dep, _namespace_skip)):
            if resource_name_shaped(text) and text not in names:
                seen_in[text] = seen_in.get(text, 0) + 1
    mapping = {text: naming.dependency_copy_name(text, suffix)
               for text in sorted(names | {t for t, n in seen_in.items() if n >= 2}) if text}
    renamed = [_preserve_scheduling_fields(dep, substitute(dep, mapping, _namespace_skip), gang_scheduler)
               for dep in job_deps]
    return substitute(job_spec, mapping, job_spec_skip), renamed


def _preserve_scheduling_fields(before: dict[str, Any], after: dict[str, Any],
                                gang_scheduler: dict[str, Any] | None) -> dict[str, Any]:
    """PreserveSchedulingFields: a queue named like a dependency survives renaming (copy back, never insert)."""
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
        if isinstance(old_pod, dict) and isinstance(new_pod, dict) and "schedulerName" in old_pod:
            new_pod["schedulerName"] = old_pod["schedulerName"]
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


def manifest(dependency: dict[str, Any], workflow: dict[str, Any], scope: str) -> dict[str, Any]:
    """The object to create: Workflow namespace, tracking label and UID annotation; workflow-scoped
    namespaced objects also get a non-controller owner reference to the Workflow."""
    obj = strip_when(dependency)
    meta = workflow.get("metadata") or {}
    obj_meta = obj.setdefault("metadata", {})
    cluster_scoped = is_cluster_scoped(obj)
    if not cluster_scoped and not obj_meta.get("namespace") and meta.get("namespace"):
        obj_meta["namespace"] = meta["namespace"]
    obj_meta.setdefault("labels", {})[WORKFLOW_LABEL] = meta.get("name", "")
    if meta.get("uid"):
        obj_meta.setdefault("annotations", {})[WORKFLOW_UID_ANNOTATION] = meta["uid"]
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

    def __init__(self, dependencies: list[dict[str, Any]], job_spec: dict[str, Any]) -> None:
        self.objects = [strip_when(d) for d in dependencies]
        order = creation_order(self.objects)
        scoped = classify(self.objects, job_spec)
        self.workflow_scoped = [self.objects[i] for i in order if not scoped[i]]
        self.job_scoped = [self.objects[i] for i in order if scoped[i]]

    def workflow_manifests(self, workflow: dict[str, Any]) -> list[dict[str, Any]]:
        return [manifest(d, workflow, SCOPE_WORKFLOW) for d in self.workflow_scoped]

    def for_launch(self, job_spec: dict[str, Any], suffix: str, gang_scheduler: dict[str, Any] | None,
                   ) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
        """(renamed Job spec, renamed job-scoped copies, effective dependency set for the gang check)."""
        spec, copies = rename_job_scoped(job_spec, self.job_scoped, suffix, gang_scheduler)
        return spec, copies, self.workflow_scoped + copies
