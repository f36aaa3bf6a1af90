"""A Workflow with a checkpoint PVC dependency through the Workflow tier (workflow spec §7.2, §7.3), on the
simulator with a provisioner and PV controller (volume_sim.py)."""
from __future__ import annotations

from ansible_collections.cre.certification.plugins.module_utils.engine.api.actions import Delete, Patch, Ref
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import workflow_tier
from tests.unit.engine.reconcile.volume_sim import CLAIMS, KEY, PVC, SCENARIO, VolumeSim
from tests.unit.engine.reconcile.workflow_sim import WF_UID, condition


def test_claims_pvs_are_stamped_then_reclaimed_after_the_claim_is_gone():
    sim = VolumeSim(SCENARIO)
    sim.run()
    assert condition(sim.workflow) == {"type": "Succeeded", "reason": "JobCompleted",
                                       "message": "All 1 iterations completed successfully"}
    for claim in CLAIMS:
        pv = f"pv-{claim}"
        events = [(what, detail) for what, name, detail in sim.log if name in (pv, claim)]
        stamp = {"metadata": {"annotations": {KEY: WF_UID}}}
        switch = ("patch", {"metadata": {"resourceVersion": pv_version(sim, pv)},
                            "spec": {"persistentVolumeReclaimPolicy": "Delete"}})
        # stamped while running, the claim deleted with its ref still recorded, then Retain -> Delete, then gone
        assert events[0] == ("patch", stamp)
        assert events[1][0] == "delete" and claim in events[1][1]
        assert events[2:] == [switch, ("gone", None)]
    assert not sim.of_kind(PVC) and not sim.of_kind("PersistentVolume")
    assert [r["name"] for r in sim.workflow["status"]["dependencyRefs"]] == ["topology-hints"]


def pv_version(sim: VolumeSim, pv: str) -> str:
    """The resourceVersion the reclaim patch carried (the PV as read after its claim was gone)."""
    return next(d["metadata"]["resourceVersion"] for what, name, d in sim.log
                if what == "patch" and name == pv and "spec" in d)


def test_a_group_ends_while_its_claim_terminates_and_the_kept_ref_is_retried_within_5_s():
    """One group at a time: the pass after group-0's claim delete finds it terminating (PV still Bound). Group-0 has
    ended anyway and group-1 runs; the claim's ref is kept, and the tier looks again after 5 s (not 15)."""
    one_at_a_time = {**SCENARIO, "patch": [*SCENARIO["patch"], {
        "op": "add", "path": "/spec/orchestration/execution/maxConcurrent", "value": 1}]}
    sim = VolumeSim(one_at_a_time)
    for _n in range(50):
        sim.execute(sim.reconcile())
        if any(c["metadata"].get("deletionTimestamp") for c in sim.of_kind(PVC).values()):
            break
        sim.job_tier()
    waiting = workflow_tier.reconcile(sim.world())
    sim.execute(waiting)
    groups = sim.workflow["status"]["orchestration"]["groups"]
    assert [g["phase"] for g in groups] == ["Succeeded", "Running"]
    assert CLAIMS[0] in sim.workflow_status_refs()
    assert waiting.requeue_after == 5.0
    assert not any(isinstance(a, (Delete, Patch)) and a.ref.name in (CLAIMS[0], f"pv-{CLAIMS[0]}")
                   for a in waiting.actions)
    sim.job_tier()  # the claim goes, its PV is Released: the next pass reclaims it and drops the ref
    reclaimed = workflow_tier.reconcile(sim.world())
    assert [a.ref.name for a in reclaimed.actions if isinstance(a, Patch) and "spec" in a.patch] == [f"pv-{CLAIMS[0]}"]
    sim.execute(reclaimed)
    assert CLAIMS[0] not in sim.workflow_status_refs()


class InUseSim(VolumeSim):
    """pvc-protection as on a real cluster: a deleted claim stays while a pod that mounts it exists, finished or not
    (the last iteration's workloads, and so their pods, stay until the Workflow is deleted)."""

    def storage(self) -> None:
        held = {ref: obj for ref, obj in self.store.items() if ref.kind == PVC and obj["metadata"].get("deletionTimestamp")
                and any(ref.name.replace("ckpt-", "nccl-test-").replace("f8135-", "") == job for job in self.pods)}
        for ref in held:
            del self.store[ref]
        super().storage()
        self.store.update(held)


def test_claims_in_use_at_the_end_keep_their_refs_and_their_stamped_pvs():
    """The Workflow ends with its claims still terminating: their refs stay in its status, and their PVs stay Bound,
    stamped, on Retain (the run that sees the Workflow deleted, or certify_cleanup, reclaims them then)."""
    sim = InUseSim(SCENARIO)
    sim.run()
    assert condition(sim.workflow)["reason"] == "JobCompleted"
    assert set(CLAIMS) <= set(sim.workflow_status_refs())
    assert all(c["metadata"].get("deletionTimestamp") for c in sim.of_kind(PVC).values()) and len(sim.of_kind(PVC)) == 2
    pvs = sim.of_kind("PersistentVolume")
    assert sorted(pvs) == [f"pv-{c}" for c in CLAIMS]
    assert all((pv["status"]["phase"], pv["spec"]["persistentVolumeReclaimPolicy"], pv["metadata"]["annotations"][KEY])
               == ("Bound", "Retain", WF_UID) for pv in pvs.values())


def test_a_pv_stamped_by_another_workflow_is_untouched():
    sim = VolumeSim(SCENARIO, foreign=True)
    sim.run()
    assert [name for _what, name, _d in sim.log if name == "pv-foreign"] == []
    foreign = sim.of_kind("PersistentVolume")
    assert list(foreign) == ["pv-foreign"]
    assert foreign["pv-foreign"]["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert foreign["pv-foreign"]["metadata"]["annotations"] == {KEY: "another-workflow"}


def test_killed_anywhere_the_run_resumes_to_the_same_end():
    reference = VolumeSim(SCENARIO)
    counts = reference.steps()
    expected = reference.outcome()
    points = [(n, k) for n, count in enumerate(counts) for k in range(count)]
    assert len(points) > 10
    for point in points:
        sim = VolumeSim(SCENARIO)
        sim.run(kill=point)
        assert sim.outcome() == expected, f"killed at step {point[0]} before action {point[1]}"


class SlowReleaseSim(VolumeSim):
    """The PV controller marks a PV Released one tick after its claim has gone (it still reads Bound meanwhile)."""

    def __init__(self, scenario: dict) -> None:
        super().__init__(scenario)
        self.lagging: set[str] = set()

    def storage(self) -> None:
        for name in self.lagging:
            self.store[Ref("v1", "PersistentVolume", "", name)]["status"]["phase"] = "Released"
        released = {n for n, pv in self.of_kind("PersistentVolume").items() if pv["status"]["phase"] == "Released"}
        super().storage()
        self.lagging = {n for n, pv in self.of_kind("PersistentVolume").items()
                        if pv["status"]["phase"] == "Released" and n not in released}
        for name in self.lagging:
            self.store[Ref("v1", "PersistentVolume", "", name)]["status"]["phase"] = "Bound"


def test_the_end_waits_for_a_gone_claims_pv_to_be_released_and_reclaims_it():
    """At the iteration's end a claim is gone but its PV not released yet: the end waits for it (not for a claim a
    pod still mounts), so the Workflow ends with its PVs reclaimed and no claim ref left."""
    sim = SlowReleaseSim(SCENARIO)
    sim.run()
    assert condition(sim.workflow)["reason"] == "JobCompleted"
    assert not sim.of_kind("PersistentVolume") and not sim.of_kind(PVC)
    assert [r["name"] for r in sim.workflow["status"]["dependencyRefs"]] == ["topology-hints"]
