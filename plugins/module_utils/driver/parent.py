"""The parent loop: a Certification or a WorkloadRun, each driving the Workflow it makes.

One loop for both kinds: get or create the parent, then pass after pass observe -> reconcile its tier -> execute
the Step -> read the parent again -> conflicts -> done -> drive the child Workflow (driver/workflow.py) with the
time left; Ansible's --diff around it. What differs by kind (its world, its tier, its result, its check mode,
the objects its diff shows) is a subclass's:
driver/certification.py, driver/workloadrun.py.
"""
from __future__ import annotations

import dataclasses
import time
from abc import ABC, abstractmethod
from typing import Any, Protocol

from ..engine.api.actions import Ref, Step
from ..engine.api.errors import WorkflowFailure
from ..kube.rest import ApiException, Kube
from . import diff, execute
from .options import RunOptions
from .workflow import run_workflow

Obj = dict[str, Any]


class TierStep(Protocol):
    """What a parent tier's pass answers (certification_tier.CertificationStep, workloadrun_tier.WorkloadRunStep)."""

    step: Step
    drive: str
    done: bool
    failure: tuple[str, str] | None
    notes: list[str]


def created(kube: Kube, obj: Obj) -> Obj | None:
    """`obj` created; None when it exists already (made meanwhile by someone else: a 409 AlreadyExists)."""
    try:
        return kube.create(obj)
    except ApiException as exc:
        if exc.status != 409:
            raise
        return None


class ParentLoop(ABC):
    """One parent object driven to its end; `changed` says whether anything was written."""

    def __init__(self, kube: Kube, options: RunOptions, desired: Obj) -> None:
        self.kube, self.options, self.desired = kube, options, desired
        self.namespace = desired["metadata"]["namespace"]
        self.changed = False

    @abstractmethod
    def admit(self, live: Obj) -> Obj:
        """The live parent, if this collection may continue it (the tier's `admit`)."""

    @abstractmethod
    def observe(self, parent: Obj, expired: bool) -> Any:
        """The tier's world; `expired`: the run's time is up."""

    @abstractmethod
    def reconcile(self, world: Any) -> TierStep:
        """The tier's pass over `world`."""

    @abstractmethod
    def result(self, parent: Obj, timed_out: bool = False) -> Obj:
        """The run's result, read from the cluster."""

    @abstractmethod
    def check(self, parent: Obj) -> Obj:
        """Check mode: the result and what the run would write; nothing is written."""

    @abstractmethod
    def objects(self) -> dict[str, Obj | None]:
        """The parent (None when missing) and its Workflows, live, keyed as --diff names them (diff.key)."""

    @abstractmethod
    def planned(self, result: Obj) -> list[Obj]:
        """The Workflows a check-mode result plans to create."""

    def note(self, parent: Obj, line: str) -> str:
        """A tier's note as its progress line."""
        return line

    def waits(self, step: Any) -> bool:
        """Whether the tier waits (for nodes) with nothing to write and no Workflow to drive."""
        return False

    def live(self) -> Obj:
        """The live parent, created when missing (not in check mode); refused when it is not ours."""
        ref = Ref.of(self.desired)
        live = self.kube.get(ref)
        if live is None:
            self.changed = True
            if self.options.check_mode:
                return self.desired
            made = created(self.kube, self.desired)
            if made is not None:
                return made
            live = self.kube.get(ref) or self.desired
        return self.admit(live)

    def run(self) -> Obj:
        """Drive the parent until its tier says done or fails, or the time is up; with --diff the result also says
        what changed (in check mode: what would, the parent and the Workflows planned)."""
        before = self.objects() if self.options.diff else {}
        result = self._drive()
        if self.options.diff:
            after = dict(before) if self.options.check_mode else self.objects()
            if self.options.check_mode:
                after[diff.key(self.desired)] = after.get(diff.key(self.desired)) or self.desired
                after.update((diff.key(workflow), workflow) for workflow in self.planned(result))
            result["diff"] = diff.entries(before, after)
        return result

    def _drive(self) -> Obj:
        options = self.options
        deadline = time.monotonic() + options.timeout
        parent = self.live()
        if options.check_mode:
            return self.check(parent)
        conflicts, timed_out = execute.Conflicts(self.desired["kind"]), False
        while True:
            expired = time.monotonic() > deadline
            step = self.reconcile(self.observe(parent, expired))
            outcome = execute.run(self.kube, step.step, parent["metadata"]["name"], options.trace, options.alive)
            self.changed |= outcome.done > 0
            parent = self.kube.get(Ref.of(parent)) or parent
            if conflicts.met(outcome, parent["metadata"]["name"]):
                continue
            for line in step.notes:
                options.progress(self.note(parent, line))
            if step.failure:
                raise WorkflowFailure(*step.failure)
            if step.done or timed_out:
                return self.result(parent, timed_out)
            if step.step.actions:
                continue
            if self.waits(step):
                if expired:  # still waiting (for nodes) when the run's time is up
                    return self.result(parent, True)
                time.sleep(options.poll_interval)
                continue
            timed_out = self.drive(step.drive, deadline)

    def drive(self, workflow: str, deadline: float) -> bool:
        """The child Workflow driven with the time left; whether that time ran out."""
        left = dataclasses.replace(self.options, timeout=max(deadline - time.monotonic(), 1), check_mode=False,
                                   diff=False)
        driven = run_workflow(self.kube, self.namespace, workflow, left, preflighted=True)
        self.changed |= bool(driven.get("changed"))
        return bool(driven.get("timed_out"))
