"""The PersistentVolumes behind a Workflow's PVC dependencies (workflow spec §7.2, §7.3, §12), as pure decisions.

A PVC's bound PV is stamped with `nvcre.nvidia.com/workflow-uid` on every pass while the Workflow runs, so the PV
stays recognisable as this Workflow's after its claim is gone (then only the PV's claimRef still names the claim).
Cleaning up a PVC dependency deletes the claim, then switches its PV from `Retain` to `Delete` once the PV is no
longer `Bound`, and only when it carries this Workflow's UID: a PV someone else stamped (or nobody did) is never
touched. Until then the ref is kept, and the Workflow tier retries it every pass, PV_RELEASE_WAIT apart at most.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..api.actions import Action, Delete, Patch, Ref
from ..api.vocabulary import ANNOTATION_WORKFLOW_UID

PVC = "PersistentVolumeClaim"
PV_REF_API = "v1"
PV_KIND = "PersistentVolume"
PV_RELEASE_WAIT = 5.0  # seconds: NVCRE's requeue while a cleaned-up claim's PV is still Bound
BOUND = "Bound"
RETAIN = "Retain"
DELETE = "Delete"
Obj = dict[str, Any]


def meta(obj: Obj) -> Obj:
    """Its metadata (objects.meta's twin without that module's imports: the stamped_volumes filter loads this
    file where only ansible-core is installed)."""
    return obj.get("metadata") or {}


@dataclass
class Cleanup:
    """What cleaning up one claim asks for; `done` False means keep its ref and look again after PV_RELEASE_WAIT."""

    actions: list[Action] = field(default_factory=list)
    done: bool = True


def stamped(pv: Obj, uid: str) -> bool:
    return bool(uid) and (meta(pv).get("annotations") or {}).get(ANNOTATION_WORKFLOW_UID) == uid


def bound_volume(claim: Obj, volumes: Mapping[str, Obj]) -> Obj | None:
    """The PV bound (or pre-bound by its provisioner) to this claim: its claimRef carries the claim's UID. Read from
    the PV side, so the claim's metadata is enough."""
    uid = meta(claim).get("uid")
    return next((volumes[n] for n in sorted(volumes)
                 if uid and (((volumes[n].get("spec") or {}).get("claimRef") or {}).get("uid") == uid)), None)


def claimed_by(ref: Ref, volumes: Mapping[str, Obj]) -> list[Obj]:
    """The PVs whose claimRef names this claim (a released PV keeps it after the claim is gone), by name."""
    found = []
    for name in sorted(volumes):
        claim_ref = (volumes[name].get("spec") or {}).get("claimRef") or {}
        if (claim_ref.get("namespace") or "", claim_ref.get("name")) == (ref.namespace, ref.name):
            found.append(volumes[name])
    return found


def stamp(pv: Obj, uid: str) -> list[Action]:
    """§7.2: the annotation patch when the PV does not carry this Workflow's UID yet (nothing when it does)."""
    if stamped(pv, uid):
        return []
    return [Patch(Ref(PV_REF_API, PV_KIND, "", meta(pv).get("name", "")),
                  {"metadata": {"annotations": {ANNOTATION_WORKFLOW_UID: uid}}})]


def stamps(claims: Iterable[Obj], volumes: Mapping[str, Obj], uid: str) -> list[Action]:
    """Stamp the bound PV of each of these (live, owned) claims."""
    actions: list[Action] = []
    for claim in claims:
        pv = bound_volume(claim, volumes)
        if pv is not None:
            actions += stamp(pv, uid)
    return actions


def reclaim(pv: Obj, uid: str) -> Cleanup:
    """§7.3/§12 for one PV: untouched unless stamped with `uid`; wait while Bound; then Retain -> Delete. The patch
    carries the resourceVersion as read, so a PV that changed meanwhile is re-read instead of switched."""
    if not stamped(pv, uid):
        return Cleanup()
    spec, phase = pv.get("spec") or {}, (pv.get("status") or {}).get("phase")
    if phase == BOUND:
        return Cleanup(done=False)
    if spec.get("persistentVolumeReclaimPolicy") != RETAIN:
        return Cleanup()
    return Cleanup([Patch(Ref(PV_REF_API, PV_KIND, "", meta(pv).get("name", "")),
                          {"metadata": {"resourceVersion": meta(pv).get("resourceVersion")},
                           "spec": {"persistentVolumeReclaimPolicy": DELETE}})])


def clean_claim(ref: Ref, live: Obj | None, volumes: Mapping[str, Obj], uid: str, owned: bool) -> Cleanup:
    """§7.3 for one PVC ref: delete the claim (UID precondition), then reclaim the PVs that claimed it once the claim
    is gone. A claim that is not ours is left with its PV. (The pass has stamped the claim's PV already: `stamps`
    runs on every pass, the one that deletes included.)"""
    if live is not None and not owned:
        return Cleanup()
    if live is not None:  # its PV stays Bound until the claim is gone
        deleting = meta(live).get("deletionTimestamp")
        return Cleanup([] if deleting else [Delete(ref, uid=meta(live).get("uid", ""))], done=False)
    out = Cleanup()
    for pv in claimed_by(ref, volumes):
        step = reclaim(pv, uid)
        out.actions += step.actions
        out.done &= step.done
    return out


def release(volumes: Iterable[Obj], uid: str) -> Cleanup:
    """§12 without a finalizer (the Workflow is being deleted): reclaim every PV stamped with its UID."""
    out = Cleanup()
    for pv in volumes:
        step = reclaim(pv, uid)
        out.actions += step.actions
        out.done &= step.done
    return out
