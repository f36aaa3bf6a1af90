"""The status write and the terminal Failed write shared by the tiers (workflow spec §8.9)."""
from __future__ import annotations

import copy
from datetime import datetime
from typing import Any

from ..api.actions import Action, Event, Step, UpdateStatus
from ..api.objects import set_exclusive, true_type
from ..api.vocabulary import FAILED

Obj = dict[str, Any]


def status_write(obj: Obj, status: Obj, kind: str, reason: str, message: str, now: datetime) -> list[Action]:
    """UpdateStatus of `obj` (as read, resourceVersion kept) with `status` and the exclusive condition set;
    plus the Event NVCRE emits when the True type changes (Warning for Failed)."""
    before = true_type(obj)
    set_exclusive(status, kind, reason, message, (obj.get("metadata") or {}).get("generation"), now)
    updated = {k: v for k, v in obj.items() if k != "status"}
    updated["status"] = status
    actions: list[Action] = [UpdateStatus(updated)]
    if before != kind:
        actions.append(Event(obj, "Warning" if kind == FAILED else "Normal", reason, message))
    return actions


def fail(world: Any, reason: str, message: str) -> Step:
    """The terminal Failed write for `world.workflow` (also what the driver calls after a name collision)."""
    workflow = world.workflow
    status = copy.deepcopy(workflow.get("status") or {})
    return Step(status_write(workflow, status, FAILED, reason, message, world.now), terminal=True)
