"""The rendered Workflow's spec as `nvcrectl workflow render` prints it, so a user can diff the two.

nvcrectl reads the file into NVCRE's Go types and prints them back with encoding/json; no API server has
defaulted anything. So (NVCRE api/v1alpha1/workflow_types.go, pkg/render/testdata/render/*/expected.json):
- a CRD default the file did not set is absent (`iterations`, `maxConcurrent`, `minGroupSize`, ...);
- `omitempty` drops a zero of a plain int/bool/string even when the file wrote it (`maxConcurrent: 0`);
- a struct held by value is always printed, empty or not: `orchestration`, `orchestration.execution`
  (`execution: {}`), `validation.performance.tracking`; `performance.enabled` has no `omitempty`;
- `jobTemplate.metadata` is `omitzero`: an empty one is dropped.
The engine keeps working on the defaulted spec; only the document handed back takes this shape.
"""
from __future__ import annotations

import copy
from typing import Any

_ABSENT = object()

# Plain (non-pointer) Go fields tagged `omitempty`, by path under spec: their zero value is not printed.
_OMITEMPTY_ZEROS: tuple[tuple[tuple[str, ...], Any], ...] = (
    (("namespace",), ""),
    (("orchestration", "iterations"), 0),
    (("orchestration", "execution", "maxConcurrent"), 0),
    (("orchestration", "execution", "retryFailedGroups"), 0),
    (("orchestration", "topology", "strictDomain"), False),
    (("orchestration", "diagnose", "minGroupSize"), 0),
    (("orchestration", "diagnose", "topologyKey"), ""),
    (("orchestration", "placement"), ""),
    (("validation", "performance", "plugin"), ""),
    (("validation", "performance", "tracking", "perNode"), False),
    (("validation", "performance", "tracking", "perDomain"), False),
)


def filled_defaults(given: Any, dumped: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    """(path, value) of every key the model's dump added to `given` (the CRD defaults it filled in)."""
    found: list[tuple[tuple[Any, ...], Any]] = []
    if isinstance(given, dict) and isinstance(dumped, dict):
        for key, value in dumped.items():
            if key not in given:
                found.append((path + (key,), value))
            else:
                found += filled_defaults(given[key], value, path + (key,))
    elif isinstance(given, list) and isinstance(dumped, list) and len(given) == len(dumped):
        for index, (g, d) in enumerate(zip(given, dumped)):
            found += filled_defaults(g, d, path + (index,))
    return found


def _get(obj: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        if isinstance(obj, dict) and key in obj:
            obj = obj[key]
        elif isinstance(obj, list) and isinstance(key, int) and key < len(obj):
            obj = obj[key]
        else:
            return _ABSENT
    return obj


def _drop(obj: Any, path: tuple[Any, ...]) -> None:
    parent = _get(obj, path[:-1])
    if isinstance(parent, dict):
        parent.pop(path[-1], None)


def nvcre_spec(given_spec: Any, dumped_spec: dict[str, Any], output_spec: dict[str, Any]) -> dict[str, Any]:
    """`output_spec` (the resolved, defaulted spec) in the shape nvcrectl prints. `given_spec` is the spec as the
    user wrote it and `dumped_spec` its defaulted dump: a default the dump added is dropped again unless the
    overrides changed it."""
    out = copy.deepcopy(output_spec)
    for path, default in filled_defaults(given_spec, dumped_spec):
        if _get(out, path) == default:
            _drop(out, path)
    for path, zero in _OMITEMPTY_ZEROS:
        value = _get(out, path)
        if value is not _ABSENT and type(value) is type(zero) and value == zero:
            _drop(out, path)
    orchestration = out.setdefault("orchestration", {})
    orchestration.setdefault("execution", {})
    performance = (out.get("validation") or {}).get("performance")
    if isinstance(performance, dict):
        performance.setdefault("enabled", False)
        performance.setdefault("tracking", {})
    template = out.get("jobTemplate")
    if isinstance(template, dict) and template.get("metadata") == {}:
        del template["metadata"]
    return out
