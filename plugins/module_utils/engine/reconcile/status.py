"""Conditions, times and the Failed write shared by the Workflow reconcile (workflow spec §8.9)."""
from __future__ import annotations

import copy
import re
from datetime import datetime, timedelta, timezone
from typing import Any

from ..api.actions import Event, Step, UpdateStatus

Obj = dict[str, Any]

IN_PROGRESS = "InProgress"
SUCCEEDED = "Succeeded"
FAILED = "Failed"
EXCLUSIVE = (IN_PROGRESS, SUCCEEDED, FAILED)
NOT_APPLICABLE = "NotApplicable"

_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]*)?)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def timestamp(now: datetime) -> str:
    """metav1.Time as the API server prints it (RFC 3339, seconds, `Z`)."""
    return now.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def parse_duration(text: str) -> timedelta:
    """A Go duration string ("90s", "1h30m", "1.5h"); the CRD pattern has already validated the shape."""
    if text in ("0", ""):
        return timedelta(0)
    return timedelta(seconds=sum(float(n) * _UNIT_SECONDS[u] for n, u in _DURATION_PART.findall(text)))


def conditions(obj: Obj) -> list[Obj]:
    return (obj.get("status") or {}).get("conditions") or []


def condition(obj: Obj, kind: str) -> Obj | None:
    return next((c for c in conditions(obj) if c.get("type") == kind), None)


def is_true(obj: Obj, kind: str) -> bool:
    return (condition(obj, kind) or {}).get("status") == "True"


def set_condition(status: Obj, kind: str, value: bool, reason: str, message: str, generation: int | None,
                  now: datetime) -> None:
    """meta.SetStatusCondition: lastTransitionTime moves only when the status flips; new types are appended."""
    found = status.setdefault("conditions", [])
    new = {"type": kind, "status": "True" if value else "False"}
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


def true_type(obj: Obj) -> str:
    """The exclusive condition that is True, "" when none is."""
    return next((k for k in EXCLUSIVE if is_true(obj, k)), "")


def set_exclusive(status: Obj, kind: str, reason: str, message: str, generation: int | None, now: datetime) -> None:
    """`kind` True with reason/message; the other exclusive types False/NotApplicable with no message."""
    for other in EXCLUSIVE:
        if other == kind:
            set_condition(status, kind, True, reason, message, generation, now)
        else:
            set_condition(status, other, False, NOT_APPLICABLE, "", generation, now)


def status_write(obj: Obj, status: Obj, kind: str, reason: str, message: str, now: datetime) -> list[Any]:
    """UpdateStatus of `obj` (as read, resourceVersion kept) with `status` and the exclusive condition set;
    plus the Event NVCRE emits when the True type changes (Warning for Failed)."""
    before = true_type(obj)
    set_exclusive(status, kind, reason, message, (obj.get("metadata") or {}).get("generation"), now)
    updated = {k: v for k, v in obj.items() if k != "status"}
    updated["status"] = status
    actions: list[Any] = [UpdateStatus(updated)]
    if before != kind:
        actions.append(Event(obj, "Warning" if kind == FAILED else "Normal", reason, message))
    return actions


def fail(world: Any, reason: str, message: str) -> Step:
    """The terminal Failed write for `world.workflow` (also what the driver calls after a name collision)."""
    workflow = world.workflow
    status = copy.deepcopy(workflow.get("status") or {})
    return Step(status_write(workflow, status, FAILED, reason, message, world.now), terminal=True)
