"""Run a reconcile Step's actions against the API server, in order, with NVCRE's ownership rules."""
from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

try:
    from kubernetes.client.exceptions import ApiException
except ImportError:
    ApiException = None  # type: ignore[assignment,misc]

from ..engine.api.actions import (
    Action,
    AddOwner,
    Create,
    Delete,
    Event,
    Patch,
    Ref,
    Replace,
    Step,
    UpdateStatus,
    event_message,
)
from ..engine.api.errors import WorkflowFailure
from ..engine.reconcile import ownership
from ..kube.errors import Unreachable
from ..kube.rest import Kube
from .errors import Abandoned
from .pruned_status import refuse_pruned

Record = Callable[[dict[str, Any]], None]
# Parallel writes of one batch; below the kubernetes client's connection pool (5 per CPU, at least 10 on 2).
CONCURRENCY = 8
# Writes that touch one object each and read nothing another wrote: a run of them (distinct objects) goes out
# together. At 2,500 groups the launch's owner-reference patches, one at a time through Trainer's webhook, took
# 30 minutes.
BATCHED = (Create, Patch, AddOwner, Delete)


@dataclass
class Outcome:
    """What happened: `done` actions ran; `stale` means a write met a 409 and the world must be re-read;
    `retry` is a message to wait on; `collision` a (reason, message) the owner must fail with."""

    done: int = 0
    stale: bool = False
    retry: str = ""
    collision: tuple[str, str] | None = None
    failed_create: tuple[Create, str] | None = None  # a Create the server refused (not 409), with its message
    written: list[str] = field(default_factory=list)


STATUS_RETRIES = 5  # conflicting passes in a row before giving up (each one re-reads and recomputes)


@dataclass
class Conflicts:
    """Passes in a row whose writes met a conflict (a 409, a retry, a collision) on one object's status: the pass
    is observed again, until STATUS_RETRIES in a row make it StatusUpdateConflict (another writer keeps at it)."""

    kind: str
    count: int = 0

    def met(self, outcome: Outcome, name: str) -> bool:
        if not (outcome.stale or outcome.retry or outcome.collision):
            self.count = 0
            return False
        self.count += 1
        if self.count >= STATUS_RETRIES:
            raise WorkflowFailure("StatusUpdateConflict", f"could not update the status of {self.kind} {name}: it "
                                                          f"kept changing ({STATUS_RETRIES} conflicts)")
        return True


def describe(action: Action) -> str:
    """One line per action for -vvv output (and for tests that kill the run between two actions)."""
    if isinstance(action, (Create, Replace, UpdateStatus)):
        ref = Ref.of(action.obj)
        verb = {Create: "create", Replace: "replace", UpdateStatus: "status"}[type(action)]
        return f"{verb} {ref.kind} {ref.name}"
    if isinstance(action, (Patch, AddOwner, Delete)):
        return f"{'delete' if isinstance(action, Delete) else 'patch'} {action.ref.kind} {action.ref.name}"
    return f"event {action.reason}"


def run(kube: Kube, step: Step, owner_name: str, trace: Callable[[str], None] | None = None,
        alive: Callable[[], bool] | None = None, record: Record | None = None) -> Outcome:
    """Execute until done or until an action says the world changed under us (409) or we must wait.

    Consecutive Creates, Patches or Deletes of distinct objects are independent, so they go out together; their
    outcomes are then handled in order, exactly as if issued one by one, and nothing after them starts before all
    have answered. A run killed mid-batch re-issues the same writes next pass (from the cluster as it then is) and
    adopts what exists. `record` gets what each write answered (the object as now stored), so a watching caller's
    cache has it before the event."""
    out = Outcome()
    for batch in _batches(step.actions):
        if alive and not alive():
            raise Abandoned("the run was stopped")
        if trace:
            for action in batch:
                trace(describe(action))
        for action, exc in zip(batch, _issue(kube, batch, record)):
            if exc is not None and not _absorbed(kube, action, exc, owner_name, out, record):
                return out
            out.done += 1
            out.written.append(describe(action))
    return out


def _batches(actions: list[Action]) -> Iterator[list[Action]]:
    """Runs of consecutive writes of one kind (BATCHED) to distinct objects; every other action alone."""
    batch: list[Action] = []
    refs: set[Ref | None] = set()
    for action in actions:
        ref = _ref(action)
        if batch and not (type(action) is type(batch[-1]) and isinstance(action, BATCHED) and ref not in refs):
            yield batch
            batch, refs = [], set()
        batch.append(action)
        refs.add(ref)
    if batch:
        yield batch


def _ref(action: Action) -> Ref | None:
    if isinstance(action, (Create, Replace, UpdateStatus)):
        return Ref.of(action.obj)
    return action.ref if isinstance(action, (Patch, AddOwner, Delete)) else None


def _issue(kube: Kube, batch: list[Action], record: Record | None) -> list[ApiException | None]:
    """Each action's ApiException (None when it succeeded); any other error propagates."""
    if len(batch) == 1:
        return [_attempt(kube, batch[0], record)]
    with ThreadPoolExecutor(min(CONCURRENCY, len(batch))) as pool:
        return list(pool.map(lambda action: _attempt(kube, action, record), batch))


def _attempt(kube: Kube, action: Action, record: Record | None = None) -> ApiException | None:
    """The action's ApiException (None when it succeeded). A status write whose answer lacks a field of ours stops the
    run (DriverError): the installed CRD prunes it, and every later pass would only write it again (pruned_status)."""
    try:
        answer = _execute(kube, action)
        if record and isinstance(answer, dict) and answer.get("metadata") and not isinstance(action, (Delete, Event)):
            record(answer)
        if isinstance(action, UpdateStatus):
            refuse_pruned(action.obj, answer)
    except ApiException as exc:
        return exc
    except Unreachable:
        if isinstance(action, Event):  # best effort, and never sent twice (the server names it)
            return None
        raise
    return None


def _absorbed(kube: Kube, action: Action, exc: ApiException, owner_name: str, out: Outcome,
              record: Record | None = None) -> bool:
    """True when the refusal still counts as done (adopted, or a best-effort Event); False when the run
    must stop here, with `out` saying why; anything unexpected is raised. An adopted object goes to `record`: the
    next pass reads it as it is, even before its watch event."""
    if exc.status == 409 and isinstance(action, Create):
        live = kube.get(Ref.of(action.obj))
        if live is None:  # deleted between the two calls: look again next pass
            out.stale = True
            return False
        verdict = ownership.on_exists(action, live, owner_name)
        if isinstance(verdict, ownership.Retry):
            out.retry = verdict.message
            return False
        if isinstance(verdict, ownership.Collision):
            out.collision = (verdict.reason, verdict.message)
            return False
        if record:
            record(live)
        return True
    if exc.status == 409:
        out.stale = True
        return False
    if exc.status == 422 and isinstance(action, AddOwner):
        # A failed test says only "Invalid": the owners read now tell a change (look again) from a real refusal.
        live = kube.get(action.ref)
        if live is None or tuple((live.get("metadata") or {}).get("ownerReferences") or ()) != action.current:
            if live is not None and record:
                record(live)
            out.stale = True
            return False
    if isinstance(action, Create) and 400 <= exc.status < 500 and exc.status != 429:
        out.failed_create = (action, status_message(exc))
        return False
    if isinstance(action, Event):
        return True  # events are best effort, as in any controller
    if isinstance(action, UpdateStatus) and action.failure_event:
        obj = action.obj
        kind, name = obj.get("kind", ""), (obj.get("metadata") or {}).get("name", "")
        _attempt(kube, Event(obj, "Warning", action.failure_event,
                             f"Failed to update the status of {kind} {name}: {status_message(exc)}"))
    raise exc


def status_message(exc: ApiException) -> str:
    """The server's own words (a Status message), as Go's StatusError prints them."""
    try:
        return json.loads(exc.body or "").get("message") or str(exc.reason)
    except (TypeError, ValueError):
        return str(exc.reason)


def _execute(kube: Kube, action: Action) -> Any:
    if isinstance(action, Create):
        return kube.create(action.obj)
    if isinstance(action, Replace):
        return kube.replace(action.obj)
    if isinstance(action, UpdateStatus):
        return kube.replace(action.obj, sub="status")
    if isinstance(action, Patch):
        return kube.merge_patch(action.ref, action.patch)
    if isinstance(action, AddOwner):
        return kube.json_patch(action.ref, action.operations())
    if isinstance(action, Delete):
        return kube.delete(action.ref, action.uid, action.propagation)
    return kube.create(_event(action))


def _event(event: Event) -> dict[str, Any]:
    meta = event.involved.get("metadata") or {}
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"generateName": f"{meta.get('name', 'cre')}.", "namespace": meta.get("namespace") or "default"},
        "involvedObject": {"apiVersion": event.involved.get("apiVersion"), "kind": event.involved.get("kind"),
                           "name": meta.get("name"), "namespace": meta.get("namespace"), "uid": meta.get("uid")},
        "type": event.type,
        "reason": event.reason,
        "message": event_message(event.message),
        "source": {"component": "cre-certification"},
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    }
