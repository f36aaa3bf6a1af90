"""A Workflow's dependencies as its `status.dependencyRefs` records them (workflow spec §2 step 9, §7.2, §7.3).

The ledger edits the refs of the status a pass is building and returns the actions that go with each edit; the
pass decides where they go among its own. Creates come before the write that records them (a copy that exists
unrecorded is adopted); deletes of job-scoped copies come before the write that drops their refs (a lost write
repeats the deletes, never leaks a ref-less object). Only objects of ours are deleted, each with its live UID.

PVC dependencies (`volumes`): every pass stamps their bound PVs with the Workflow's UID. Cleaning one up deletes
the claim and keeps its ref until its PV is released and, when this Workflow stamped it, switched from Retain to
Delete; the group goes on meanwhile (a claim stays in use while a finished pod that mounts it exists, and the last
iteration's workloads stay), and every later pass retries the kept refs, PV_RELEASE_WAIT apart at most.
"""
from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from ..api.actions import Action, AddOwner, Create, Delete, Ref
from ..api.objects import meta, owned_by, parse_time
from ..api.vocabulary import ANNOTATION_WORKFLOW_UID, API_VERSION
from ..plan.dependencies import SCOPE_JOB, SCOPE_WORKFLOW, reference
from . import ownership, volumes
from .deadlines import Deadlines
from .workflow_plan import ResolvedPlan
from .world import WorkflowWorld

CLAIM_SETTLE = timedelta(seconds=15)  # ours: how long an iteration's end waits for a deleted claim to go
Obj = dict[str, Any]


def _ref_key(ref: Obj) -> Ref:
    return Ref(ref.get("apiVersion", ""), ref.get("kind", ""), ref.get("namespace") or "", ref.get("name", ""))


def _is_claim(key: Ref) -> bool:
    return (key.api_version, key.kind) == ("v1", volumes.PVC)


class DependencyLedger:
    def __init__(self, world: WorkflowWorld, uid: str, status: Obj, deadlines: Deadlines) -> None:
        self.world = world
        self.uid = uid
        self.status = status  # the Workflow status the pass is building: its dependencyRefs are edited in place
        self.deadlines = deadlines

    def refs(self) -> list[Obj]:
        return self.status.get("dependencyRefs") or []

    def owns(self, obj: Obj) -> bool:
        return owned_by(obj, self.uid) or (meta(obj).get("annotations") or {}).get(ANNOTATION_WORKFLOW_UID) == self.uid

    # ------------------------------------------------------------------ creates

    def ensure_workflow(self, plan: ResolvedPlan) -> list[Action]:
        """§2 step 9: idempotent by count of workflow-scoped refs, as NVCRE (the rest are created in order)."""
        refs = self.status.setdefault("dependencyRefs", [])
        done = sum(1 for r in refs if r.get("scope", "") in ("", SCOPE_WORKFLOW))
        creates: list[Action] = []
        for obj in plan.dependencies.workflow_manifests(plan.workflow)[done:]:
            creates.append(Create(obj, owner_uid=self.uid))
            refs.append(reference(obj, SCOPE_WORKFLOW))
        if not refs:
            self.status.pop("dependencyRefs")
        return creates

    def record_copies(self, copies: list[tuple[str, list[Obj]]], iteration: int) -> list[list[Action]]:
        """§7.2: each launching group's (name, job-scoped copies): their refs recorded once, and per group the
        creates its copies need."""
        refs = self.status.setdefault("dependencyRefs", [])
        known = {json.dumps(r, sort_keys=True) for r in refs}  # `ref not in refs` per copy was O(groups²)
        creates = []
        for group, objs in copies:
            creates.append([create for obj in objs for create in self.create_copy(obj)])
            for obj in objs:
                ref = reference(obj, SCOPE_JOB, group, iteration)
                if (key := json.dumps(ref, sort_keys=True)) not in known:
                    known.add(key)
                    refs.append(ref)
        if not refs:
            self.status.pop("dependencyRefs")
        return creates

    def create_copy(self, obj: Obj) -> list[Action]:
        """A group's dependency copy, unless the pass that wrote its ref made it and it is seen, ours and not
        going away (a group that waited for its ComputeDomain): its create would only meet AlreadyExists and a
        read to adopt it, two requests per copy. Anything else goes to the server, which decides as before."""
        create = Create(obj, owner_uid=self.uid)
        live = self.world.dependencies.get(Ref.of(obj))
        verdict = None if live is None else ownership.on_exists(create, live, "")
        return [] if isinstance(verdict, ownership.Adopt) else [create]

    def job_refs(self, iteration: int) -> dict[str, list[Obj]]:
        """Group name -> its dependency refs of this iteration (one walk over the refs, not one per group:
        at 2,500 groups that walk per group was a second of CPU per pass)."""
        by_group: dict[str, list[Obj]] = {}
        for ref in self.refs():
            if ref.get("scope") == SCOPE_JOB and ref.get("iteration") == iteration:
                by_group.setdefault(str(ref.get("groupName") or ""), []).append(ref)
        return by_group

    def own(self, job: Obj, refs: list[Obj]) -> list[Action]:
        """§7.2: once its Job exists, each namespaced copy of the group (`refs`) gets a non-controller owner
        reference to it, so deleting the Workflow (and so the Job) lets the garbage collector take the copies too."""
        job_ref = {"apiVersion": job.get("apiVersion", API_VERSION), "kind": "Job", "name": meta(job).get("name", ""),
                   "uid": meta(job).get("uid", "")}
        owners: list[Action] = []
        for ref in refs:
            live = self.world.dependencies.get(_ref_key(ref))
            if live is None or not meta(live).get("namespace") or not job_ref["uid"] or owned_by(live, job_ref["uid"]):
                continue
            owners.append(AddOwner(_ref_key(ref), tuple(meta(live).get("ownerReferences") or ()), job_ref))
        return owners

    def stamps(self) -> list[Action]:
        """§7.2: the bound PV of every live PVC dependency of ours carries the Workflow's UID (each pass)."""
        claims = [obj for key, obj in self.world.dependencies.items() if _is_claim(key) and self.owns(obj)]
        return volumes.stamps(claims, self.world.volumes, self.uid)

    # ------------------------------------------------------------------ cleanup

    def clean_group(self, group: str, iteration: int) -> list[Action]:
        """§7.3: delete this group's copies of this iteration (reverse order), then drop their refs; a claim's ref
        stays until its PV is released and reclaimed (`reclaim` retries it)."""
        return self.clean([r for r in self.refs() if r.get("scope") == SCOPE_JOB and r.get("groupName") == group
                           and r.get("iteration") == iteration])

    def reclaim(self, active: set[str], iteration: int) -> list[Action]:
        """§7.3 "keep ref and retry": the claim refs a cleanup kept (claim terminating, PV not released yet), retried
        each pass. Only refs of groups that ended, or of earlier iterations or rounds: an `active` (Pending or
        Running) group's claim is the live one of its next or current attempt (same name), cleaned when it ends."""
        return self.clean([r for r in self.refs() if r.get("scope") == SCOPE_JOB and _is_claim(_ref_key(r))
                           and not (r.get("iteration") == iteration and r.get("groupName") in active)])

    def clean(self, mine: list[Obj]) -> list[Action]:
        """Delete what these refs name (ours only, reverse order) and drop the refs, but for claims still waiting."""
        refs = self.refs()
        actions: list[Action] = []
        kept = []
        for ref in reversed(mine):
            key = _ref_key(ref)
            live = self.world.dependencies.get(key)
            if _is_claim(key):
                cleanup = volumes.clean_claim(key, live, self.world.volumes, self.uid,
                                              live is not None and self.owns(live))
                actions.extend(cleanup.actions)
                if not cleanup.done:
                    kept.append(ref)
            elif live is not None and self.owns(live):
                actions.append(Delete(key, uid=meta(live).get("uid", "")))
        gone = [r for r in mine if r not in kept]
        if gone:
            self.status["dependencyRefs"] = [r for r in refs if r not in gone]
            if not self.status["dependencyRefs"]:
                self.status.pop("dependencyRefs")
        if kept:
            self.deadlines.within(volumes.PV_RELEASE_WAIT)
        return actions

    def settling(self) -> bool:
        """Whether a kept claim ref is about to be reclaimed: its claim is gone but the PV not released yet, or the
        claim was deleted less than CLAIM_SETTLE ago (a claim no pod mounts goes within moments). A claim still there
        after that is mounted by a pod that stays (the last iteration's workloads do): it is not waited for, and
        keeps its ref."""
        for ref in self.refs():
            key = _ref_key(ref)
            if ref.get("scope") != SCOPE_JOB or not _is_claim(key):
                continue
            live = self.world.dependencies.get(key)
            if live is None:
                if not all(volumes.reclaim(pv, self.uid).done for pv in volumes.claimed_by(key, self.world.volumes)):
                    return True
                continue
            deleted = parse_time(meta(live).get("deletionTimestamp"))
            if deleted is not None and not self.deadlines.past(deleted + CLAIM_SETTLE):
                return True
        return False
