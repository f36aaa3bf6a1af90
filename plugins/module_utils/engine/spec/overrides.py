"""Workflow overrides: matching, application and tracking (workflow.md §3, surroundings.md §1.5).

Two passes use ``apply_overrides`` exactly as NVCRE's reconcile does:

- the **early pass** (every reconcile, §2 step 6): ``OverrideContext.for_spec(spec, platform=<persisted
  detectedPlatform>, gpu_architecture=<persisted detectedGPUArchitecture>)`` — no nodes, so domainCount is 0;
- the **authoritative pass** (§4 step 6): ``OverrideContext.for_spec(spec, platform=d.platform,
  gpu_architecture=d.gpu_architecture, nodes=d.nodes)`` with the Detection; its ``applied`` list becomes
  ``status.orchestration.appliedOverrides`` and ``override_events`` gives the events.

Overrides are never removed from the spec. Any failure raises ``WorkflowFailure('OverrideError',
'Failed to apply overrides: override[<i>]: …')``. ``validate_overrides`` is the static pre-flight check
(``InputError`` naming the field path) for faces that reject bad input before writing anything.
"""
from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..api.errors import InputError, WorkflowFailure
from ..api.objects import orchestration_of
from . import cel
from .json_patch import OPERATIONS, JSONPatchError, apply_json_patch
from .merge import MergeError, merge_objects, strategic_merge

ORCHESTRATION_FIELDS = ("target", "topology", "execution", "iterations", "placement")
_EXPRESSION_SUMMARY_MAX = 40  # longer expressions are shown as their first 37 chars + "..."


@dataclass(frozen=True)
class OverrideContext:
    """What ``when`` clauses are matched against.

    ``config`` is None in the Workflow controller, which never populates it, so ``when.config`` never
    matches there; the Certification build may pass ``validation.performance.config``.
    """

    platform: str = ""
    gpu_architecture: str = ""
    workload_kind: str = ""
    topology_mode: str = "simple"
    domain_count: int = 0
    config: dict[str, Any] | None = None

    @classmethod
    def for_spec(
        cls,
        spec: dict[str, Any],
        *,
        platform: str = "",
        gpu_architecture: str = "",
        nodes: Iterable[dict[str, Any]] | None = None,
        config: dict[str, Any] | None = None,
    ) -> OverrideContext:
        """Context for a WorkflowSpec dict: workload kind and topology mode come from the (pre-override) spec;
        ``domainCount`` counts distinct non-empty ``topology.topologyKey`` labels on ``nodes`` (0 without)."""
        workload = ((spec.get("jobTemplate") or {}).get("spec") or {}).get("workload") or {}
        topology = orchestration_of(spec).get("topology")
        key = (topology or {}).get("topologyKey") or ""
        domains = {((n.get("metadata") or {}).get("labels") or {}).get(key) for n in nodes or ()} if key else set()
        domains.discard(None)
        domains.discard("")
        return cls(
            platform=platform,
            gpu_architecture=gpu_architecture,
            workload_kind="TrainJob" if workload.get("trainJob") is not None else "",
            topology_mode="topology" if topology is not None else "simple",
            domain_count=len(domains),
            config=config,
        )

    def cel_variables(self) -> dict[str, Any]:
        """The variables a ``when.expression`` sees (cel.WHEN_VARIABLES)."""
        return {
            "platform": self.platform,
            "gpuArchitecture": self.gpu_architecture,
            "workloadKind": self.workload_kind,
            "topologyMode": self.topology_mode,
            "domainCount": self.domain_count,
        }


@dataclass(frozen=True)
class AppliedOverride:
    index: int
    when: str
    patches: str
    no_op: bool = False

    def to_status(self) -> dict[str, Any]:
        """``status.orchestration.appliedOverrides[]`` entry (``noOp`` omitted when false, as omitempty does)."""
        out: dict[str, Any] = {"index": self.index, "when": self.when, "patches": self.patches}
        if self.no_op:
            out["noOp"] = True
        return out


@dataclass(frozen=True)
class OverrideResult:
    """The spec after every matching override (a new dict) and the overrides that matched, in order."""

    spec: dict[str, Any]
    applied: list[AppliedOverride]

    def applied_overrides(self) -> list[dict[str, Any]]:
        return [a.to_status() for a in self.applied]


# ---------------------------------------------------------------- matching (§3.1)

def _string_match(spec: dict[str, Any], value: str) -> bool:
    if spec.get("equals") and value != spec["equals"]:
        return False
    if spec.get("in") and value not in spec["in"]:
        return False
    return value not in (spec.get("notIn") or [])


def _int_match(spec: dict[str, Any], value: int) -> bool:
    if spec.get("equals") is not None and value != spec["equals"]:
        return False
    if spec.get("greaterThan") is not None and not value > spec["greaterThan"]:
        return False
    return spec.get("lessThan") is None or value < spec["lessThan"]


def _subset(want: Any, have: Any) -> bool:
    if isinstance(want, dict):
        return isinstance(have, dict) and all(k in have and _subset(v, have[k]) for k, v in want.items())
    return want == have


def matches_when(when: dict[str, Any], ctx: OverrideContext, path: str) -> bool:
    """NVCRE ``matchesWhen``: every present clause must hold; an empty ``when`` matches.

    ``path`` names the ``when`` (e.g. ``spec.overrides[1].when``) in the ``InputError`` a bad expression raises.
    """
    if when.get("platform") is not None and not _string_match(when["platform"], ctx.platform):
        return False
    if when.get("gpuArchitecture") is not None and not _string_match(when["gpuArchitecture"], ctx.gpu_architecture):
        return False
    if when.get("workloadKind") and when["workloadKind"] != ctx.workload_kind:
        return False
    topology = when.get("topology")
    if topology is not None:
        if topology.get("mode") and topology["mode"] != ctx.topology_mode:
            return False
        if topology.get("domainCount") is not None and not _int_match(topology["domainCount"], ctx.domain_count):
            return False
    if when.get("config") is not None and (ctx.config is None or not _subset(when["config"], ctx.config)):
        return False
    if when.get("expression"):
        return cel.evaluate_bool(when["expression"], ctx.cel_variables(), f"{path}.expression")
    return True


# ---------------------------------------------------------------- summaries (§3.3)

def _string_summary(spec: dict[str, Any]) -> str:
    if spec.get("equals"):
        return spec["equals"]
    if spec.get("in"):
        return f"in [{','.join(spec['in'])}]"
    if spec.get("notIn"):
        return f"notIn [{','.join(spec['notIn'])}]"
    return "<any>"


def _int_summary(spec: dict[str, Any]) -> str:
    parts = [f"{op}{spec[key]}" for op, key in (("=", "equals"), (">", "greaterThan"), ("<", "lessThan"))
             if spec.get(key) is not None]
    return ",".join(parts) or "<any>"  # spec silent on an empty IntMatchSpec: shown like an empty StringMatch


def when_summary(when: dict[str, Any]) -> str:
    """``gpuArchitecture=h100, platform=aws``; ``<always>`` for an empty ``when``."""
    parts = []
    for key in ("gpuArchitecture", "platform"):
        if when.get(key) is not None:
            parts.append(f"{key}={_string_summary(when[key])}")
    if when.get("workloadKind"):
        parts.append(f"workloadKind={when['workloadKind']}")
    topology = when.get("topology") or {}
    if topology.get("mode"):
        parts.append(f"topology.mode={topology['mode']}")
    if topology.get("domainCount") is not None:
        parts.append(f"topology.domainCount={_int_summary(topology['domainCount'])}")
    if when.get("config") is not None:
        parts.append("config=<custom>")
    expr = when.get("expression") or ""
    if expr:
        shown = expr if len(expr) <= _EXPRESSION_SUMMARY_MAX else expr[: _EXPRESSION_SUMMARY_MAX - 3] + "..."
        parts.append(f"expression={shown}")
    return ", ".join(parts) or "<always>"


def patches_summary(override: dict[str, Any]) -> str:
    """``jobTemplate, jobTemplatePatch, 2 dependencies, orchestration``; ``none`` when nothing is patched."""
    parts = []
    if override.get("jobTemplate") is not None:
        parts.append("jobTemplate")
    if override.get("jobTemplatePatch") is not None:
        parts.append("jobTemplatePatch")
    if override.get("dependencies"):
        parts.append(f"{len(override['dependencies'])} dependencies")
    if override.get("orchestration") is not None:
        parts.append("orchestration")
    return ", ".join(parts) or "none"


# ---------------------------------------------------------------- application (§3.2)

def _dependency_key(dep: dict[str, Any]) -> tuple[Any, Any, Any]:
    return dep.get("apiVersion"), dep.get("kind"), (dep.get("metadata") or {}).get("name")


def _merge_dependencies(base: list[dict[str, Any]], extra: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Merge each override dependency into the base one with the same apiVersion/kind/name, else append.

    The override dependency's own ``when`` is not merged (NVCRE merges the raw objects); the base keeps its own.
    """
    result = list(base)
    for dep in extra:
        key = _dependency_key(dep)
        at = next((i for i, b in enumerate(result) if _dependency_key(b) == key), None)
        if at is None:
            result.append(copy.deepcopy(dep))
        else:
            raw = {k: v for k, v in dep.items() if k != "when"}
            result[at] = merge_objects(result[at], raw)
    return result


def _apply_one(spec: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """One matching override applied to a WorkflowSpec dict, in NVCRE's order; returns a new spec."""
    spec = dict(spec)
    if override.get("jobTemplate") is not None:
        try:
            spec["jobTemplate"] = strategic_merge(spec.get("jobTemplate") or {}, override["jobTemplate"])
        except MergeError as err:
            raise _Failure(f"failed to merge jobTemplate: strategic merge: {err}") from None
    if override.get("jobTemplatePatch") is not None:
        try:
            spec["jobTemplate"] = apply_json_patch(spec.get("jobTemplate") or {}, override["jobTemplatePatch"])
        except JSONPatchError as err:
            raise _Failure(f"failed to apply jobTemplatePatch: {err}") from None
    if override.get("dependencies"):
        spec["dependencies"] = _merge_dependencies(spec.get("dependencies") or [], override["dependencies"])
    orchestration = override.get("orchestration")
    if orchestration is not None:
        spec["orchestration"] = {
            **orchestration_of(spec),
            **{k: copy.deepcopy(orchestration[k]) for k in ORCHESTRATION_FIELDS if orchestration.get(k) is not None},
        }
    return spec


class _Failure(Exception):
    """Internal: the part of an OverrideError message after ``override[<i>]: ``."""


def apply_overrides(spec: dict[str, Any], ctx: OverrideContext) -> OverrideResult:
    """Apply every override of WorkflowSpec ``spec`` whose ``when`` matches ``ctx``, in list order.

    Returns a deep copy of the spec with the overrides applied (``overrides`` itself kept) and the
    AppliedOverride records (index, when/patches summaries, noOp = spec unchanged by that override).
    Raises ``WorkflowFailure('OverrideError', 'Failed to apply overrides: override[<i>]: <err>')``.
    """
    current = copy.deepcopy(spec)
    applied: list[AppliedOverride] = []
    for i, override in enumerate(spec.get("overrides") or []):
        when = override.get("when") or {}
        try:
            try:
                matched = matches_when(when, ctx, f"spec.overrides[{i}].when")
            except InputError as err:
                raise _Failure(f"evaluating when: {err.rule}") from None
            if not matched:
                continue
            after = _apply_one(current, override)
        except _Failure as err:
            raise WorkflowFailure("OverrideError", f"Failed to apply overrides: override[{i}]: {err}") from None
        applied.append(AppliedOverride(i, when_summary(when), patches_summary(override), no_op=after == current))
        current = after
    return OverrideResult(current, applied)


def override_events(result: OverrideResult, total: int, ctx: OverrideContext) -> list[dict[str, str]]:
    """Events of the authoritative pass (``{type, reason, message}``), workflow.md §3.3."""
    events = []
    for a in result.applied:
        if a.no_op:
            events.append({"type": "Warning", "reason": "OverrideNoOp", "message":
                           f"Override[{a.index}] matched ({a.when}) but produced no changes — check field paths"})
        else:
            events.append({"type": "Normal", "reason": "OverrideApplied",
                           "message": f"Override[{a.index}] matched ({a.when}), patching {a.patches}"})
    if not result.applied and total:
        events.append({"type": "Normal", "reason": "NoOverridesMatched", "message":
                       f"0 of {total} overrides matched (platform={ctx.platform}, gpuArchitecture={ctx.gpu_architecture})"})
    return events


# ---------------------------------------------------------------- pre-flight validation

def validate_overrides(spec: dict[str, Any], path: str = "spec") -> None:
    """Reject overrides that could never apply, naming the field path (``InputError``).

    Checks what is wrong whatever the cluster: a ``when.expression`` that does not compile, refers to an
    unknown variable or does not return bool; a ``jobTemplate`` that is not an object; a ``jobTemplatePatch``
    that is not a list of operations with a known ``op``, a JSON-pointer ``path`` and, for move/copy, ``from``.
    NVCRE only finds these when the override matches; catching them first is this collection's choice.
    """
    for i, override in enumerate(spec.get("overrides") or []):
        at = f"{path}.overrides[{i}]"
        expr = (override.get("when") or {}).get("expression")
        if expr:
            cel.check_expression(expr, cel.WHEN_VARIABLES, f"{at}.when.expression")
        if override.get("jobTemplate") is not None and not isinstance(override["jobTemplate"], dict):
            raise InputError(f"{at}.jobTemplate", "must be an object (a strategic merge patch of jobTemplate)")
        _validate_patch(override.get("jobTemplatePatch"), f"{at}.jobTemplatePatch")


def _validate_patch(patch: Any, at: str) -> None:
    if patch is None:
        return
    if not isinstance(patch, list):
        raise InputError(at, "must be a list of RFC 6902 JSON Patch operations")
    for j, op in enumerate(patch):
        if not isinstance(op, dict):
            raise InputError(f"{at}[{j}]", "must be an object with op and path")
        if op.get("op") not in OPERATIONS:
            raise InputError(f"{at}[{j}].op", f"must be one of {', '.join(OPERATIONS)}, got {op.get('op')!r}")
        for member in ("path", "from") if op["op"] in ("move", "copy") else ("path",):
            value = op.get(member)
            if not isinstance(value, str) or (value and not value.startswith("/")):
                raise InputError(f"{at}[{j}].{member}", "must be a JSON pointer starting with '/'")
        if op["op"] in ("add", "replace", "test") and "value" not in op:
            raise InputError(f"{at}[{j}].value", f"is required for op {op['op']}")
