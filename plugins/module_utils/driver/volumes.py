"""The PersistentVolumes behind a Workflow's PVC dependencies: read for the Workflow tier each pass, and reclaimed
when the Workflow is deleted while this run drives it (workflow spec §12, without a finalizer).

No finalizer holds a deleted Workflow back, so the garbage collector takes its claims; a `Retain` PV would then
stay `Released` for ever. The run that sees its Workflow go stamps the PVs of the claims still there, waits for
the PVs stamped with the Workflow's UID to be released and switches them to `Delete`, as NVCRE's deletion does.
The decisions are `engine/reconcile/volumes.py`; PVs are listed only when the Workflow has PVC dependencies.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..engine.api.actions import Patch, Step
from ..engine.api.objects import meta
from ..engine.api.vocabulary import ANNOTATION_WORKFLOW_UID, LABEL_WORKFLOW
from ..engine.reconcile import volumes
from ..kube.rest import Kube
from . import execute
from .errors import DriverError

# How long a deleted Workflow's run waits for the garbage collector to release its PVs (its pods go first).
RELEASE_DEADLINE = 180.0

Obj = dict[str, Any]


def observe(kube: Kube, workflow: Obj) -> dict[str, Obj]:
    """The PVs whose claimRef names one of the Workflow's PVC refs (bound to it, or released by it), by name; read
    only when it has such refs. PVs are not watched: the Workflow tier asks to be looked at again while it waits."""
    claims = {(r.get("namespace") or "", r.get("name")) for r in (workflow.get("status") or {}).get("dependencyRefs") or []
              if (r.get("apiVersion"), r.get("kind")) == ("v1", volumes.PVC)}
    if not claims:
        return {}
    found = {}
    for pv in kube.list(volumes.PV_REF_API, volumes.PV_KIND):
        claim_ref = (pv.get("spec") or {}).get("claimRef") or {}
        if (claim_ref.get("namespace") or "", claim_ref.get("name")) in claims:
            found[meta(pv)["name"]] = pv
    return found


def has_claims(workflow: Obj) -> bool:
    """Whether the Workflow's spec names a PVC dependency (overrides included): only then are PVs read at its
    deletion, so a run without checkpoint claims needs no rights on PersistentVolumes."""
    spec = workflow.get("spec") or {}
    deps = [*(spec.get("dependencies") or []), *(d for o in spec.get("overrides") or [] for d in o.get("dependencies") or [])]
    return any(isinstance(d, dict) and (d.get("apiVersion"), d.get("kind")) == ("v1", volumes.PVC) for d in deps)


def reclaim_deleted(kube: Kube, workflow: Obj, trace: Callable[[str], None] | None = None,
                    alive: Callable[[], bool] | None = None, deadline: float = RELEASE_DEADLINE) -> list[str]:
    """Stamp the PVs of the deleted Workflow's remaining claims, then switch every PV stamped with its UID to
    Delete once released; returns the PVs switched. Raises DriverError naming the PVs still Bound when the
    garbage collector has not released them in time."""
    uid, namespace, name = meta(workflow).get("uid", ""), meta(workflow).get("namespace", ""), meta(workflow)["name"]
    until = time.monotonic() + deadline
    switched: list[str] = []
    while True:
        pvs = {meta(pv)["name"]: pv for pv in kube.list(volumes.PV_REF_API, volumes.PV_KIND)}
        claims = [c for c in kube.list("v1", volumes.PVC, namespace, f"{LABEL_WORKFLOW}={name}")
                  if (meta(c).get("annotations") or {}).get(ANNOTATION_WORKFLOW_UID) == uid]
        cleanup = volumes.release([pv for pv in pvs.values() if volumes.stamped(pv, uid)], uid)
        actions = volumes.stamps(claims, pvs, uid) + cleanup.actions
        if cleanup.done and not actions:
            return switched
        if actions:  # then look again at once: a stamp makes a PV reclaimable, a switch is confirmed
            outcome = execute.run(kube, Step(actions), name, trace, alive)
            patched = set(outcome.written)
            switched += [a.ref.name for a in cleanup.actions if isinstance(a, Patch) and execute.describe(a) in patched]
        if time.monotonic() > until:
            waiting = sorted(n for n, pv in pvs.items() if volumes.stamped(pv, uid) and not volumes.reclaim(pv, uid).done)
            raise DriverError(
                f"Workflow {namespace}/{name} was deleted during the run and its PersistentVolumes "
                f"{', '.join(waiting)} are still Bound after {deadline:.0f} s (a pod still uses their claim): once they "
                "are Released, switch them to Delete with kubectl patch pv NAME -p "
                "'{\"spec\":{\"persistentVolumeReclaimPolicy\":\"Delete\"}}'")
        if not actions:
            time.sleep(volumes.PV_RELEASE_WAIT)
