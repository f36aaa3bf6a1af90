"""What to do when a Create meets an existing object of the same name (workflow spec §7.2, §8.3).

The driver reads the live object and asks `on_exists`: adopt it (it is ours), retry later (its holder is
being deleted) or fail the Workflow with a collision (someone else's). An object of ours that is
terminating is retried, never adopted (NVCRE's later ADR: do not adopt an own terminating Job).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Union

from ..api.actions import Create
from ..api.errors import InputError, WorkflowFailure
from ..api.objects import controlled_by, meta, owned_by
from ..api.vocabulary import (
    ANNOTATION_WORKFLOW_UID,
    API_VERSION,
    BANDWIDTH_MEASUREMENT,
    DEPENDENCY_NAME_COLLISION,
    GOODPUT_MEASUREMENT,
    JOB,
    JOB_NAME_COLLISION,
    LABEL_MANAGED_BY,
    MANAGER,
    TRAINER_API_VERSION,
    TRAINJOB,
    WORKFLOW,
    WORKLOAD_CREATION_ERROR,
)

# Kinds whose existing namesake counts as created (the Job tier's measurements).
LEFT_ALONE = {(API_VERSION, BANDWIDTH_MEASUREMENT), (API_VERSION, GOODPUT_MEASUREMENT)}
# Kinds adopted only under their controller: (kind, controller kind, collision reason).
CONTROLLED = {(API_VERSION, JOB): (JOB, WORKFLOW, JOB_NAME_COLLISION),
              (TRAINER_API_VERSION, TRAINJOB): (TRAINJOB, JOB, WORKLOAD_CREATION_ERROR)}


@dataclass(frozen=True)
class Adopt:
    """The existing object is ours: treat the Create as done."""


@dataclass(frozen=True)
class Retry:
    """A holder is being deleted: leave the rest of the step and reconcile again later."""

    message: str


@dataclass(frozen=True)
class Collision:
    """Someone else's object holds the name: the Workflow fails with `reason`/`message`."""

    reason: str
    message: str


Decision = Union[Adopt, Retry, Collision]  # noqa: UP007 - ansible-test's pylint reads module_utils as older Python


def _is_ours(live: dict[str, Any], uid: str, controller_only: bool) -> bool:
    if controller_only:
        return controlled_by(live, uid)
    return owned_by(live, uid) or (meta(live).get("annotations") or {}).get(ANNOTATION_WORKFLOW_UID) == uid


def on_exists(create: Create, live: dict[str, Any], owner_name: str) -> Decision:
    """Decide for `create` (whose `owner_uid` proves ownership) given the `live` object of the same name.
    `owner_name` names the owner (the Workflow, or the Job for a workload) in the collision message."""
    obj = create.obj
    name, namespace = meta(obj).get("name", ""), meta(obj).get("namespace", "")
    terminating = bool((live.get("metadata") or {}).get("deletionTimestamp"))
    if (obj.get("apiVersion"), obj.get("kind")) in LEFT_ALONE:
        return Adopt()  # NVCRE leaves an existing measurement of the name alone: AlreadyExists is success
    controlled = CONTROLLED.get((obj.get("apiVersion", ""), obj.get("kind", "")))
    ours = bool(create.owner_uid) and _is_ours(live, create.owner_uid, controller_only=bool(controlled))
    if controlled:
        # A Job is ours only when this Workflow controls it (§8.3); a workload, when its Job does.
        kind, owner_kind, reason = controlled
        return _decide(terminating, ours,
                       f'existing {kind} "{name}" in namespace "{namespace}" is being deleted; retrying',
                       reason, f'{kind} "{name}" already exists in namespace "{namespace}" and is not '
                               f'controlled by {owner_kind} "{owner_name}"; refusing to adopt it')
    where, kind = (f"{namespace}/{name}" if namespace else name), obj.get("kind", "")
    return _decide(terminating, ours, f'dependency {kind} "{where}" already exists but is being deleted; retrying',
                   DEPENDENCY_NAME_COLLISION, f'dependency {kind} "{where}" already exists and is not owned by '
                                              f'Workflow "{owner_name}"; refusing to adopt it')


def _decide(terminating: bool, ours: bool, retrying: str, reason: str, refusal: str) -> Decision:
    """Wait out a deletion, adopt what is ours, refuse the rest."""
    if terminating:
        return Retry(retrying)
    return Adopt() if ours else Collision(reason, refusal)


def admit_ours(kind: str, collision: str, desired: dict[str, Any], live: dict[str, Any],
               finalizer: str = "") -> dict[str, Any]:
    """The live top-level object (a Certification, a WorkloadRun) of `desired`'s name, if this collection may
    continue it: created by us (our label, no resident controller's finalizer) with the same spec. Anything else
    is refused; nothing is adopted."""
    live_meta = meta(live)
    if (finalizer and finalizer in (live_meta.get("finalizers") or [])) or \
            (live_meta.get("labels") or {}).get(LABEL_MANAGED_BY) != MANAGER:
        raise WorkflowFailure(
            collision, f'{kind} "{live_meta.get("name")}" already exists in namespace "{live_meta.get("namespace")}" '
                       f"and is not managed by {MANAGER}; refusing to adopt it")
    if live.get("spec") != desired["spec"]:
        raise InputError("spec", "spec is immutable after creation")
    return live
