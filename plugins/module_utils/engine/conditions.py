"""metav1.Condition bookkeeping shared by the Workflow and Job tiers (workflow.md §8.9, surroundings.md §2.2).

The exclusive set InProgress/Succeeded/Failed has exactly one True condition; the others are False with
reason `NotApplicable` and an empty message. lastTransitionTime moves only when the status flips.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any

IN_PROGRESS = "InProgress"
SUCCEEDED = "Succeeded"
FAILED = "Failed"
EXCLUSIVE = (IN_PROGRESS, SUCCEEDED, FAILED)
NOT_APPLICABLE = "NotApplicable"

Condition = dict[str, Any]


def timestamp(now: datetime) -> str:
    """RFC 3339 in UTC with second precision, as metav1.Time serialises."""
    return now.strftime("%Y-%m-%dT%H:%M:%SZ")


def find(conditions: list[Condition] | None, type_: str) -> Condition | None:
    return next((c for c in conditions or [] if c.get("type") == type_), None)


def is_true(conditions: list[Condition] | None, type_: str) -> bool:
    cond = find(conditions, type_)
    return cond is not None and cond.get("status") == "True"


def true_exclusive(conditions: list[Condition] | None) -> Condition | None:
    """The exclusive condition that is True, if any."""
    return next((c for c in conditions or [] if c.get("type") in EXCLUSIVE and c.get("status") == "True"), None)


def set_condition(conditions: list[Condition], type_: str, status: str, reason: str, message: str, now: datetime,
                  generation: int | None = None) -> list[Condition]:
    """A new list with `type_` set (added at the end when absent, else replaced in place)."""
    old = find(conditions, type_)
    new: Condition = {"type": type_, "status": status}
    if generation is not None:
        new["observedGeneration"] = generation
    new["lastTransitionTime"] = (old["lastTransitionTime"] if old and old.get("status") == status
                                 and old.get("lastTransitionTime") else timestamp(now))
    new["reason"] = reason
    new["message"] = message
    if old is None:
        return [*conditions, new]
    return [new if c is old else c for c in conditions]


def set_exclusive(conditions: list[Condition], type_: str, reason: str, message: str, now: datetime,
                  generation: int | None = None) -> list[Condition]:
    """`type_` True with reason/message, the other exclusive types False/NotApplicable."""
    result = list(conditions)
    for other in EXCLUSIVE:
        if other == type_:
            result = set_condition(result, other, "True", reason, message, now, generation)
        else:
            result = set_condition(result, other, "False", NOT_APPLICABLE, "", now, generation)
    return result
