"""A Workflow's status as read: its phase from the conditions, its groups over every iteration."""
from __future__ import annotations

from typing import Any

from ..api.objects import is_true
from ..api.vocabulary import FAILED, IN_PROGRESS, PENDING, SUCCEEDED

Obj = dict[str, Any]


def workflow_phase(workflow: Obj | None) -> str:
    """Pending (not created yet), InProgress, Succeeded or Failed, from the Workflow's conditions."""
    if workflow is None:
        return PENDING
    if is_true(workflow, FAILED):
        return FAILED
    if is_true(workflow, SUCCEEDED):
        return SUCCEEDED
    return IN_PROGRESS


def all_groups(orchestration: Obj) -> list[tuple[int, Obj]]:
    """(iteration, group) for every iteration in history plus the current (last) one."""
    out = [(entry.get("iteration", 0), group) for entry in orchestration.get("iterationHistory") or []
           for group in entry.get("groups") or []]
    current = orchestration.get("currentIteration") or 1
    return out + [(current, group) for group in orchestration.get("groups") or []]


def job_name(group: Obj) -> str:
    """The name of the group's Job (`jobName`, else its `jobRef`); empty before it has one."""
    return group.get("jobName") or (group.get("jobRef") or {}).get("name") or ""
