"""What a reconcile step asks the driver to do. The engine decides; the driver only executes, in order.

Every write carries what the driver needs to stay safe: the resourceVersion for status updates (a 409 means
re-read and reconcile again), the UID precondition for deletes, and the ownership policy for creates.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Union

Obj = dict[str, Any]


@dataclass(frozen=True)
class Ref:
    """Identifies one object; `namespace` is "" for cluster-scoped kinds."""

    api_version: str
    kind: str
    namespace: str
    name: str

    @staticmethod
    def of(obj: Obj) -> Ref:
        meta = obj.get("metadata") or {}
        return Ref(obj["apiVersion"], obj["kind"], meta.get("namespace") or "", meta.get("name") or "")


@dataclass(frozen=True)
class Create:
    """Create `obj`. On AlreadyExists the driver reads the live object and asks `engine.ownership.on_exists`
    whether to adopt it, retry later, or fail the owner with a collision reason."""

    obj: Obj
    owner_uid: str = ""  # the UID that proves an existing object is ours (controller owner or uid annotation)


@dataclass(frozen=True)
class Replace:
    """Update a whole object (spec/data) with optimistic concurrency: `obj.metadata.resourceVersion` is set."""

    obj: Obj


@dataclass(frozen=True)
class UpdateStatus:
    """PUT the status subresource; `obj.metadata.resourceVersion` is set. A 409 means re-read and reconcile again.
    `failure_event`: when the server refuses the write otherwise, a Warning Event of this reason tells why
    (NVCRE's `OverrideErrorStatusUpdateFailed`, `HeterogeneousPlatformStatusUpdateFailed`)."""

    obj: Obj
    failure_event: str = ""


@dataclass(frozen=True)
class Patch:
    """A JSON merge patch."""

    ref: Ref
    patch: Obj


OWNERS = "/metadata/ownerReferences"


@dataclass(frozen=True)
class AddOwner:
    """Append `owner` to the object's ownerReferences, provided they still are `current` (an RFC 6902 `test`, a
    missing list tested as null). Unlike a resourceVersion precondition, what another controller writes meanwhile
    elsewhere in the object (the DRA driver's Ready status on a ComputeDomain, Trainer's finalizer on a runtime)
    does not refuse it; a change of the owners themselves does (the server answers 422: re-read, then decide)."""

    ref: Ref
    current: tuple[Obj, ...]
    owner: Obj

    def operations(self) -> list[Obj]:
        if self.current:
            return [{"op": "test", "path": OWNERS, "value": list(self.current)},
                    {"op": "add", "path": f"{OWNERS}/-", "value": self.owner}]
        return [{"op": "test", "path": OWNERS, "value": None}, {"op": "add", "path": OWNERS, "value": [self.owner]}]


@dataclass(frozen=True)
class Delete:
    """Delete with a UID precondition (never someone else's object of the same name); NotFound is success."""

    ref: Ref
    uid: str = ""
    propagation: str = "Background"


# Event messages are capped at 1,024 bytes, as NVCRE's recorder caps its notes.
EVENT_MESSAGE_LIMIT = 1024
TRUNCATED = "... [truncated]"


def event_message(message: str) -> str:
    """`message` within EVENT_MESSAGE_LIMIT bytes of UTF-8: longer ones keep what fits (never half a
    character) and end with `... [truncated]`."""
    data = message.encode()
    if len(data) <= EVENT_MESSAGE_LIMIT:
        return message
    keep = data[:EVENT_MESSAGE_LIMIT - len(TRUNCATED.encode())].decode(errors="ignore")
    return keep + TRUNCATED


@dataclass(frozen=True)
class Event:
    """A core/v1 Event on `involved` (`type` Normal or Warning); the driver caps the message (event_message)."""

    involved: Obj
    type: str
    reason: str
    message: str


Action = Union[Create, Replace, UpdateStatus, Patch, AddOwner, Delete, Event]  # noqa: UP007 - see ownership.Decision


@dataclass
class Step:
    """The outcome of one reconcile: actions to run in order, when to look again, and whether it is over."""

    actions: list[Action] = field(default_factory=list)
    requeue_after: float | None = None  # seconds; None = when something changes
    terminal: bool = False
    # Jobs that timed out, whose failure log (a pod's log tail) the driver must read before the next pass fails them.
    wants_logs: list[str] = field(default_factory=list)
    # The earliest time at which the same world would give another answer (a timeout, a drain bound); None when
    # only a change can. A driver that watches may skip the reconcile until then while nothing changes.
    wake_at: datetime | None = None
