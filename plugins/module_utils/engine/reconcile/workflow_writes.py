"""What one Workflow pass writes: the status it builds from the one it read, and its actions in order (§8.9).
Every status write carries the evidence totals over its Jobs' seals (evidence_totals).

At most one Workflow `UpdateStatus` per pass, carrying the resourceVersion as read, and only when the status
changed: a lost or conflicting write is recomputed by the next pass from the same cluster state.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, Optional

from ..api.actions import Action, Create, Delete, Event, Ref, Step, UpdateStatus
from ..api.objects import json_copy, meta
from ..api.vocabulary import FAILED, SUCCEEDED
from . import evidence_totals
from .deadlines import Deadlines
from .status import status_write
from .world import WorkflowWorld

STATUS_FAILURE_EVENTS = ("OverrideError", "HeterogeneousPlatform")
Obj = dict[str, Any]
Merge = Callable[[Obj, dict[str, Obj], Any], tuple[str, Optional[Action]]]  # noqa: UP045 - ansible-test's pylint reads module_utils as older Python


class WorkflowWrites:
    def __init__(self, world: WorkflowWorld) -> None:
        self.world = world
        self.workflow = world.workflow
        self.now = world.now
        self.uid = meta(self.workflow).get("uid", "")
        self.namespace = meta(self.workflow).get("namespace", "")
        self.status: Obj = json_copy(self.workflow.get("status") or {})
        self.orch: Obj = self.status.setdefault("orchestration", {})
        self.actions: list[Action] = []
        self.deadlines = Deadlines(self.now)
        self.folding: list[Obj] = []  # the Jobs this write moves to iterationHistory (their evidence is kept)

    def write(self, kind: str, reason: str, message: str, requeue: float | None, terminal: bool = False) -> Step:
        """The Step of this pass: its actions, then the status write when the status changed."""
        for key in ("totalNodes", "nodesPerJob", "totalGroups"):  # required once orchestration exists
            self.orch.setdefault(key, 0)
        requeue = self.deadlines.requeue(requeue)
        evidence = evidence_totals.totals(self.status, self.world.jobs, kind in (SUCCEEDED, FAILED), self.folding)
        if evidence is not None:
            self.status["evidence"] = evidence
        candidate = json_copy(self.status)
        writes = status_write(self.workflow, candidate, kind, reason, message, self.now)
        if candidate != (self.workflow.get("status") or {}):
            self.actions.extend(writes)
        return Step(self.actions, requeue_after=None if terminal else requeue, terminal=terminal,
                    wake_at=None if terminal else self.deadlines.wake_at)

    def failed(self, reason: str, message: str) -> Step:
        step = self.write(FAILED, reason, message, None, terminal=True)
        if reason in STATUS_FAILURE_EVENTS:  # §8.9: a refused write of these is told in a Warning event
            step.actions = [replace(a, failure_event=f"{reason}StatusUpdateFailed") if isinstance(a, UpdateStatus)
                            else a for a in step.actions]
        return step

    def create(self, obj: Obj) -> None:
        self.actions.append(Create(obj, owner_uid=self.uid))

    def delete(self, obj: Obj) -> None:
        self.actions.append(Delete(Ref.of(obj), uid=meta(obj).get("uid", "")))

    def events(self, events: list[Obj]) -> None:
        self.actions.extend(Event(self.workflow, e["type"], e["reason"], e["message"]) for e in events)

    def record_nodes(self, merge: Merge, key: str, nodes: list[Any]) -> None:
        """Merge `nodes` into their node-result ConfigMap (`node_results`), written before the status names it."""
        name, write = merge(self.workflow, self.world.configmaps, nodes)
        if write is not None:
            self.actions.append(write)
        self.status[key] = {"kind": "ConfigMap", "name": name}
