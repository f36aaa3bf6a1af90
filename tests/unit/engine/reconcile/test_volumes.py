"""The PV decisions of PVC dependencies (workflow spec §7.2 stamping, §7.3 cleanup, §12 reclaim), and the filters
roles/certify's cleanup reads them through."""
from __future__ import annotations

import pytest

from ansible_collections.cre.certification.plugins.filter.stamped_volumes import claim_workflows, stamped_volumes
from ansible_collections.cre.certification.plugins.module_utils.engine.api.actions import Delete, Patch, Ref
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import volumes

UID = "wf-uid-1"
OTHER = "wf-uid-2"
KEY = "nvcre.nvidia.com/workflow-uid"
CLAIM = Ref("v1", "PersistentVolumeClaim", "certify", "ckpt-f8135-job")


def pv(name: str = "pv-1", phase: str = "Bound", policy: str = "Retain", stamp: str | None = None,
       claim: str = "ckpt-f8135-job", claim_uid: str = "claim-uid") -> dict:
    annotations = {KEY: stamp} if stamp else {}
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "resourceVersion": "7", "annotations": annotations},
            "spec": {"persistentVolumeReclaimPolicy": policy,
                     "claimRef": {"namespace": "certify", "name": claim, "uid": claim_uid}},
            "status": {"phase": phase}}


def claim(volume: str = "pv-1", uid: str = "claim-uid", deleting: bool = False) -> dict:
    metadata = {"name": CLAIM.name, "namespace": "certify", "uid": uid, "annotations": {KEY: UID}}
    if deleting:
        metadata["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": metadata,
            "spec": {"volumeName": volume}}


def by_name(*pvs: dict) -> dict[str, dict]:
    return {p["metadata"]["name"]: p for p in pvs}


STAMP = Patch(Ref("v1", "PersistentVolume", "", "pv-1"), {"metadata": {"annotations": {KEY: UID}}})
SWITCH = Patch(Ref("v1", "PersistentVolume", "", "pv-1"),
               {"metadata": {"resourceVersion": "7"}, "spec": {"persistentVolumeReclaimPolicy": "Delete"}})


@pytest.mark.parametrize(("stamp", "expect"), [(None, [STAMP]), (UID, []), (OTHER, [STAMP])],
                         ids=["unstamped", "ours-already", "another-workflow's"])
def test_a_bound_claim_stamps_its_pv_with_the_workflow_uid(stamp, expect):
    assert volumes.stamps([claim()], by_name(pv(stamp=stamp)), UID) == expect


def test_the_claims_pv_is_found_by_its_claim_ref_uid():
    """The claim's volume is the PV whose claimRef carries its UID (a claim read as metadata has no volumeName);
    a PV of a namesake claim (another UID) is not, and no PV means nothing to stamp."""
    assert volumes.stamps([claim(volume="")], by_name(pv()), UID) == [STAMP]
    assert volumes.stamps([claim()], by_name(pv(claim_uid="someone-else")), UID) == []
    assert volumes.stamps([claim()], {}, UID) == []


@pytest.mark.parametrize(("volume", "actions", "done"), [
    (pv(phase="Released", stamp=UID), [SWITCH], True),
    (pv(phase="Failed", stamp=UID), [SWITCH], True),
    (pv(phase="Bound", stamp=UID), [], False),            # still Bound: keep the ref and wait
    (pv(phase="Released", stamp=UID, policy="Delete"), [], True),  # the cluster deletes it already
    (pv(phase="Released", stamp=UID, policy="Recycle"), [], True),  # only Retain is switched
    (pv(phase="Released"), [], True),                     # never stamped: not ours to touch
    (pv(phase="Released", stamp=OTHER), [], True),        # another Workflow's
    (pv(phase="Bound", stamp=OTHER), [], True),           # another Workflow's, even while Bound
], ids=["released", "failed", "bound", "already-delete", "recycle", "unstamped", "foreign", "foreign-bound"])
def test_reclaim_switches_only_a_released_pv_this_workflow_stamped(volume, actions, done):
    step = volumes.reclaim(volume, UID)
    assert (step.actions, step.done) == (actions, done)


def test_cleaning_up_a_live_claim_deletes_it_with_its_uid_and_keeps_the_ref():
    step = volumes.clean_claim(CLAIM, claim(), by_name(pv(stamp=UID)), UID, owned=True)
    assert (step.actions, step.done) == ([Delete(CLAIM, uid="claim-uid")], False)


def test_a_terminating_claim_is_not_deleted_again_and_its_pv_waits():
    step = volumes.clean_claim(CLAIM, claim(deleting=True), by_name(pv(stamp=UID)), UID, owned=True)
    assert (step.actions, step.done) == ([], False)


def test_a_claim_that_is_not_ours_is_left_with_its_pv():
    step = volumes.clean_claim(CLAIM, claim(), by_name(pv(stamp=UID, phase="Released")), UID, owned=False)
    assert (step.actions, step.done) == ([], True)


@pytest.mark.parametrize(("pvs", "actions", "done"), [
    ([pv(phase="Released", stamp=UID)], [SWITCH], True),
    ([pv(phase="Bound", stamp=UID)], [], False),  # the PV controller has not seen the claim go yet
    ([pv(phase="Released")], [], True),
    ([pv(phase="Released", stamp=UID, claim="another-claim")], [], True),  # claims something else
    ([], [], True),  # never bound, or the PV is gone already
], ids=["released", "still-bound", "unstamped", "other-claim", "no-pv"])
def test_once_the_claim_is_gone_its_stamped_pv_is_reclaimed(pvs, actions, done):
    step = volumes.clean_claim(CLAIM, None, by_name(*pvs), UID, owned=False)
    assert (step.actions, step.done) == (actions, done)


def test_every_pv_that_claimed_the_name_is_reclaimed():
    """A retried group reuses the claim's name: the earlier attempt's PV (released, ours) goes too."""
    old = pv(name="pv-0", phase="Released", stamp=UID, claim_uid="old")
    step = volumes.clean_claim(CLAIM, None, by_name(old, pv(phase="Released", stamp=UID)), UID, owned=False)
    assert [a.ref.name for a in step.actions] == ["pv-0", "pv-1"] and step.done


def test_release_waits_for_any_bound_pv_and_switches_the_rest():
    step = volumes.release([pv(phase="Released", stamp=UID), pv(name="pv-2", stamp=UID)], UID)
    assert (step.actions, step.done) == ([SWITCH], False)


def test_the_cleanup_filters_follow_the_same_rule():
    pvs = [pv(phase="Released", stamp=UID), pv(name="pv-2", stamp=OTHER), pv(name="pv-3", phase="Released"),
           pv(name="pv-4", phase="Released", stamp=OTHER, policy="Delete"), pv(name="pv-5", stamp=UID)]
    assert stamped_volumes(pvs, [UID, OTHER]) == {"bound": ["pv-2", "pv-5"], "reclaim": ["pv-1"]}
    assert stamped_volumes(pvs, ["unknown"]) == {"bound": [], "reclaim": []}
    claim_ref = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "name": "ckpt", "scope": "workflow"}
    other_ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "hints", "scope": "workflow"}
    workflows = [{"metadata": {"uid": UID}, "status": {"dependencyRefs": [claim_ref]}},
                 {"metadata": {"uid": OTHER}, "status": {"dependencyRefs": [other_ref]}},
                 {"metadata": {"uid": "no-status"}}]
    assert claim_workflows(workflows) == [UID]
