"""Helpers over Kubernetes-JSON objects: conditions, owner references, the nested spec and status reads every layer
makes (orchestration, performance thresholds), times, durations, quantities.

The one home of these readers and writers; conditions follow apimachinery's meta.SetStatusCondition.
"""
from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

try:
    import durationpy
    from kubernetes.utils.quantity import parse_quantity
except ImportError:  # requirements.py: no face runs without them
    from ...requirements import ABSENT as durationpy  # type: ignore[no-redef]
    from ...requirements import ABSENT as parse_quantity

from .vocabulary import EXCLUSIVE, NOT_APPLICABLE

Obj = dict[str, Any]


def json_copy(value: Any) -> Any:
    """A deep copy of a JSON document: its dicts and lists copied, the rest (strings, numbers, bools, None) shared.
    Several times faster than copy.deepcopy, which copies a Workflow's status with its groups twice a pass."""
    if isinstance(value, dict):
        return {k: json_copy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_copy(v) for v in value]
    return value


# ---------------------------------------------------------------- metadata and owners

def meta(obj: Obj | None) -> Obj:
    return (obj or {}).get("metadata") or {}


def controlled_by(obj: Obj | None, uid: str) -> bool:
    """True when `obj`'s controller owner reference carries `uid`."""
    return bool(uid) and any(r.get("controller") and r.get("uid") == uid for r in meta(obj).get("ownerReferences") or [])


def owned_by(obj: Obj | None, uid: str) -> bool:
    """True when any owner reference of `obj` carries `uid` (controller or not)."""
    return bool(uid) and any(r.get("uid") == uid for r in meta(obj).get("ownerReferences") or [])


def controller_reference(owner: Obj, kind: str, api_version: str) -> Obj:
    """`owner` as the controller owner reference of what it creates (the garbage collector cleans up)."""
    owner_meta = meta(owner)
    return {"apiVersion": api_version, "kind": kind, "name": owner_meta.get("name", ""),
            "uid": owner_meta.get("uid", ""), "controller": True, "blockOwnerDeletion": True}


# ---------------------------------------------------------------- nested reads of a spec and a status

def orchestration_of(spec: Obj | None) -> Obj:
    """The `orchestration` of a spec, a status or an override: {} when absent or null."""
    return (spec or {}).get("orchestration") or {}


def status_orchestration(obj: Obj | None) -> Obj:
    """An object's `status.orchestration` (a Workflow's groups, iterations, detection): {} before its first write."""
    return orchestration_of((obj or {}).get("status"))


def performance_of(spec: Obj | None) -> Obj:
    """A WorkflowSpec's `validation.performance`: {} when absent."""
    return ((spec or {}).get("validation") or {}).get("performance") or {}


def thresholds_of(spec: Obj | None) -> Obj:
    """A WorkflowSpec's CEL thresholds by key (`validation.performance.thresholds.thresholds`): {} when absent."""
    return (performance_of(spec).get("thresholds") or {}).get("thresholds") or {}


# ---------------------------------------------------------------- conditions

def conditions(obj: Obj | None) -> list[Obj]:
    return ((obj or {}).get("status") or {}).get("conditions") or []


def condition(obj: Obj | None, kind: str) -> Obj | None:
    return next((c for c in conditions(obj) if c.get("type") == kind), None)


def is_true(obj: Obj | None, kind: str) -> bool:
    return (condition(obj, kind) or {}).get("status") == "True"


def true_type(obj: Obj | None) -> str:
    """The exclusive condition (InProgress/Succeeded/Failed) that is True, "" when none is."""
    return next((k for k in EXCLUSIVE if is_true(obj, k)), "")


def true_condition(obj: Obj | None) -> Obj:
    """`{type, reason, message}` of the object's True exclusive condition (empty strings when none)."""
    found = condition(obj, true_type(obj)) or {}
    return {k: found.get(k, "") for k in ("type", "reason", "message")}


def terminal(obj: Obj | None) -> str:
    """"Succeeded" or "Failed" when that condition is True, else ""."""
    kind = true_type(obj)
    return kind if kind in EXCLUSIVE[1:] else ""


def set_condition(status: Obj, kind: str, value: bool, reason: str, message: str, generation: int | None,
                  now: datetime) -> None:
    """meta.SetStatusCondition: lastTransitionTime moves only when the status flips; new types are appended."""
    found = status.setdefault("conditions", [])
    new: Obj = {"type": kind, "status": "True" if value else "False"}
    if generation is not None:
        new["observedGeneration"] = generation
    new.update(lastTransitionTime=timestamp(now), reason=reason, message=message)
    for i, old in enumerate(found):
        if old.get("type") == kind:
            if old.get("status") == new["status"]:
                new["lastTransitionTime"] = old.get("lastTransitionTime", new["lastTransitionTime"])
            found[i] = new
            return
    found.append(new)


def set_exclusive(status: Obj, kind: str, reason: str, message: str, generation: int | None, now: datetime) -> None:
    """`kind` True with reason/message; the other exclusive types False/NotApplicable with no message."""
    for other in EXCLUSIVE:
        if other == kind:
            set_condition(status, kind, True, reason, message, generation, now)
        else:
            set_condition(status, other, False, NOT_APPLICABLE, "", generation, now)


# ---------------------------------------------------------------- times, durations, quantities

def timestamp(now: datetime) -> str:
    """metav1.Time as the API server prints it (RFC 3339, seconds, `Z`)."""
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text.replace("Z", "+00:00")) if text else None


def parse_duration(text: str) -> timedelta:
    """A Go duration string ("90s", "1h30m", "1.5h"); the CRD pattern has already validated the shape."""
    return durationpy.from_str(text) if text else timedelta(0)


def go_duration(seconds: int) -> str:
    """Whole seconds as Go's time.Duration prints them (`1h2m3s`, `45s`, `0s`)."""
    hours, rest = divmod(max(seconds, 0), 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    return f"{minutes}m{secs}s" if minutes else f"{secs}s"


def quantity(value: int | float | str) -> Decimal:
    """The value of a resource.Quantity (`8`, `"500m"`, `"1.5Gi"`); ValueError when it is not one."""
    return parse_quantity(value)
