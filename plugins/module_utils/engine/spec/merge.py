"""The two merges overrides use (workflow.md §3.2): Kubernetes strategic merge patch and the dependency merge.

``strategic_merge(original, patch, schema)`` follows k8s.io/apimachinery ``strategicpatch`` for the parts a
``JobTemplateSpec`` needs: maps merge recursively, ``null`` deletes a key, ``$patch: replace|delete|merge``
directives, lists with a merge key merge item by item (and keep the server's order the way ``strategicpatch``
does), ``patchStrategy: merge`` lists of scalars union, and every other list is **replaced** (Kubeflow
``trainer.env``/``args``, pod ``tolerations``, …). The Go struct tags are encoded in ``JOB_TEMPLATE_SCHEMA``.

``merge_objects(base, patch)`` is NVCRE's dependency merge: recursive, ``null`` deletes, lists of named
objects merge by ``name``, other values replace.

Inputs are never mutated; results share no containers with the patch.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Union

PATCH_DIRECTIVE = "$patch"


class MergeError(ValueError):
    """A strategic merge patch that cannot apply (message as ``strategicpatch`` words it)."""


@dataclass(frozen=True)
class ListRule:
    """``patchStrategy: merge`` on a list: items merge by ``key`` (None: a list of scalars, merged as a set)."""

    key: str | None
    item: Schema | None = None


Schema = dict[str, Union["Schema", ListRule]]

# Struct tags of the Kubernetes types a JobTemplateSpec embeds (k8s.io/api core/v1, meta/v1).
_CONTAINER: Schema = {
    "env": ListRule("name"),
    "ports": ListRule("containerPort"),
    "volumeMounts": ListRule("mountPath"),
    "volumeDevices": ListRule("devicePath"),
}
POD_SPEC_SCHEMA: Schema = {
    "volumes": ListRule("name"),
    "initContainers": ListRule("name", _CONTAINER),
    "containers": ListRule("name", _CONTAINER),
    "ephemeralContainers": ListRule("name", _CONTAINER),
    "imagePullSecrets": ListRule("name"),
    "hostAliases": ListRule("ip"),
    "topologySpreadConstraints": ListRule("topologyKey"),
    "resourceClaims": ListRule("name"),
    "schedulingGates": ListRule("name"),
}
_OBJECT_META: Schema = {"finalizers": ListRule(None), "ownerReferences": ListRule("uid")}
_POD_TEMPLATE: Schema = {"metadata": _OBJECT_META, "spec": POD_SPEC_SCHEMA}
_REPLICATED_JOB: Schema = {
    "template": {"metadata": _OBJECT_META, "spec": {"template": _POD_TEMPLATE}},
}
# Kubeflow TrainJob runtimePatches: a list-map on ``manager``; inside, JobSet replicatedJobs merge on ``name``.
_RUNTIME_PATCH: Schema = {
    "trainingRuntimeSpec": {
        "template": {
            "metadata": _OBJECT_META,
            "spec": {"replicatedJobs": ListRule("name", _REPLICATED_JOB)},
        },
    },
}
JOB_TEMPLATE_SCHEMA: Schema = {
    "metadata": _OBJECT_META,
    "spec": {"workload": {"trainJob": {"runtimePatches": ListRule("manager", _RUNTIME_PATCH)}}},
}


def go_repr(value: Any) -> str:
    """A JSON value as Go's ``%v`` prints the decoded ``interface{}`` (``map[k:v]``, ``[a b]``)."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_repr(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_repr(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _clean(value: Any) -> Any:
    """A patch value inserted where the original has nothing: copy it without nulls and directives."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if v is not None and not k.startswith("$")}
    if isinstance(value, list):
        return [_clean(v) for v in value if not (isinstance(v, dict) and PATCH_DIRECTIVE in v)]
    return value


def strategic_merge(original: dict[str, Any], patch: Any, schema: Schema | None = None) -> dict[str, Any]:
    """Apply a strategic merge ``patch`` to ``original`` (default schema: a Workflow ``jobTemplate``).

    Raises ``MergeError`` for a patch that is not an object, an unknown ``$patch`` directive, or a
    merge-keyed list item that lacks its key.
    """
    if not isinstance(patch, dict):
        kind = "array" if isinstance(patch, list) else "null" if patch is None else type(patch).__name__
        raise MergeError(f"json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}")
    return _merge_map(original, patch, JOB_TEMPLATE_SCHEMA if schema is None else schema)


def _merge_map(original: dict[str, Any], patch: dict[str, Any], schema: Schema) -> dict[str, Any]:
    directive = patch.get(PATCH_DIRECTIVE)
    if directive == "replace":
        return _clean(patch)
    if directive == "delete":
        return {}
    if directive not in (None, "merge"):
        raise MergeError(f"unknown patch type: {directive} in map: {go_repr(patch)}")
    result = dict(original)
    for key, value in patch.items():
        if key.startswith("$"):
            continue  # $patch handled above; $setElementOrder/$retainKeys only constrain kubectl's diffs
        if value is None:
            result.pop(key, None)
            continue
        sub = schema.get(key)
        base = result.get(key)
        if isinstance(base, dict) and isinstance(value, dict):
            result[key] = _merge_map(base, value, sub if isinstance(sub, dict) else {})
        elif isinstance(base, list) and isinstance(value, list) and isinstance(sub, ListRule):
            result[key] = _merge_list(base, value, sub)
        else:
            result[key] = _clean(value)
    return result


def _identity(item: Any, key: str | None) -> Any:
    """What identifies a list item: its merge-key value (None for a non-object), or the scalar itself."""
    if key is None:
        return _hashable(item)
    return _hashable(item.get(key)) if isinstance(item, dict) else None


def _merge_list(original: list[Any], patch: list[Any], rule: ListRule) -> list[Any]:
    if any(isinstance(p, dict) and p.get(PATCH_DIRECTIVE) == "replace" for p in patch):
        return _clean(patch)
    merged = list(original)
    server_pos: dict[Any, int] = {}
    for i, item in enumerate(original):
        server_pos.setdefault(_identity(item, rule.key), i)
    index = dict(server_pos)  # grows as new items are appended
    patch_ids: list[Any] = []
    deleted: set[Any] = set()
    for item in patch:
        if rule.key is not None:
            if not isinstance(item, dict) or rule.key not in item:
                raise MergeError(f"map: {go_repr(item)} does not contain declared merge key: {rule.key}")
            if item.get(PATCH_DIRECTIVE) == "delete":
                deleted.add(_identity(item, rule.key))
                continue
        ident = _identity(item, rule.key)
        if ident in deleted:
            continue
        patch_ids.append(ident)
        if ident in index:
            if rule.key is not None:
                at = index[ident]
                merged[at] = _merge_map(merged[at], item, rule.item or {})
        else:
            index[ident] = len(merged)
            merged.append(_clean(item))
    if deleted:
        merged = [m for m in merged if _identity(m, rule.key) not in deleted]
    return _normalize_order(merged, patch_ids, server_pos, rule.key)


def _hashable(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    return value


def _normalize_order(merged: list[Any], patch_ids: list[Any], server_pos: dict[Any, int], key: str | None) -> list[Any]:
    """``strategicpatch.normalizeElementOrder``: patch items in patch order, server-only items in server order,
    interleaved so that an item already on the server is placed by its server position."""
    patch_pos = {ident: i for i, ident in reversed(list(enumerate(patch_ids)))}
    in_patch: list[tuple[Any, Any]] = []
    server_only: list[tuple[Any, Any]] = []
    for item in merged:
        ident = _identity(item, key)
        (in_patch if ident in patch_pos else server_only).append((ident, item))
    in_patch.sort(key=lambda pair: patch_pos[pair[0]])
    out: list[Any] = []
    i = j = 0
    while i < len(in_patch) or j < len(server_only):
        if j >= len(server_only):
            out.append(in_patch[i][1])
            i += 1
        elif i >= len(in_patch):
            out.append(server_only[j][1])
            j += 1
        else:
            left, right = server_pos.get(in_patch[i][0]), server_pos.get(server_only[j][0])
            if left is not None and right is not None and left < right:
                out.append(in_patch[i][1])
                i += 1
            else:
                out.append(server_only[j][1])
                j += 1
    return out


def _all_named(items: list[Any]) -> bool:
    return bool(items) and all(isinstance(i, dict) and isinstance(i.get("name"), str) and i["name"] for i in items)


def merge_objects(base: Any, patch: Any) -> Any:
    """NVCRE's dependency merge: maps merge, ``null`` deletes, named-object lists merge by ``name`` (base order
    kept, new names appended), anything else is replaced by the patch value."""
    if isinstance(base, dict) and isinstance(patch, dict):
        result = dict(base)
        for key, value in patch.items():
            if value is None:
                result.pop(key, None)
            elif key in result:
                result[key] = merge_objects(result[key], value)
            else:
                result[key] = copy.deepcopy(value)
        return result
    if isinstance(base, list) and isinstance(patch, list) and _all_named(base) and _all_named(patch):
        merged = list(base)
        at = {item["name"]: i for i, item in enumerate(base)}
        for item in patch:
            if item["name"] in at:
                merged[at[item["name"]]] = merge_objects(merged[at[item["name"]]], item)
            else:
                at[item["name"]] = len(merged)
                merged.append(copy.deepcopy(item))
        return merged
    return copy.deepcopy(patch)
