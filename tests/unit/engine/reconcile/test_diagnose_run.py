"""Diagnose runs driven to the end by the Workflow tier (workflow spec §9) over the simulator of
workflow_sim, whose Jobs end as a fault model says: the nodes in a Job decide its outcome, as on a real
cluster. Also: a run killed after every single action ends exactly where an uninterrupted run does."""
from __future__ import annotations

import copy
import math
from datetime import timedelta

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.models.workflow import OrchestrationStatus
from ansible_collections.cre.certification.plugins.module_utils.engine.plan import mnnvl
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import volumes
from tests.unit.engine.reconcile.volume_sim import PVC, VolumeSim
from tests.unit.engine.reconcile.volume_sim import SCENARIO as CLAIMS_SCENARIO
from tests.unit.engine.reconcile.workflow_sim import Sim, condition

CLAIM_PATCH = CLAIMS_SCENARIO["patch"]   # a checkpoint claim per Job

SLOW_BW = "120.00"  # below the base Workflow's threshold `value >= 300.0`
CHUNKS = [{"op": "add", "path": "/spec/orchestration/diagnose", "value": {"minGroupSize": 2}}]
CLIQUES = [{"op": "add", "path": "/spec/orchestration/diagnose",
            "value": {"minGroupSize": 2, "topologyKey": "nvidia.com/gpu.clique"}},
           {"op": "replace", "path": "/spec/jobTemplate/spec/workload/trainJob/trainer/args/3",
            "value": "NCCL_MNNVL_ENABLE=1"},
           {"op": "replace", "path": "/spec/dependencies/0/spec/template/spec/replicatedJobs/1/template/spec/template/spec/"
                                     "containers/0/resources", "value": {"requests": {"nvidia.com/gpu": "4"}}}]


def node(i: int) -> str:
    return f"gpu-node-{i:03d}"


class DiagnoseSim(Sim):
    """Jobs end by their nodes: `slow` lowers the bus bandwidth, `workload` fails, `link` (two node sets) lowers
    the bandwidth of a Job spanning both, `nvlink` fails only with MNNVL on, `ib` only with MNNVL off."""

    def __init__(self, patch: list, count: int, arch: str = "h100", **faults) -> None:
        super().__init__({"patch": patch, "nodes": {"platform": "aws", "gpu_architecture": arch, "count": count}})
        self.faults = faults
        self.measurements: dict[str, dict] = {}
        self.hidden = False

    def world(self):
        world = super().world()
        world.measurements = [] if self.hidden else copy.deepcopy(list(self.measurements.values()))
        return world

    def job_tier(self) -> None:
        for name, job in self.of_kind("Job").items():
            done = any(c["status"] == "True" and c["type"] in ("Succeeded", "Failed", "HardwareFailed")
                       for c in (job.get("status") or {}).get("conditions") or [])
            if name in self.attempts and not done:
                job.setdefault("status", {})
                self.settle(job, self.outcome_of(job))

    def outcome_of(self, job: dict) -> dict:
        nodes = set(job["metadata"]["annotations"]["nvcre.nvidia.com/group-nodes"].split(","))
        nvl = mnnvl.enabled(job["spec"])
        if nodes & set(self.faults.get("workload", [])) or (nvl and nodes & set(self.faults.get("nvlink", []))) \
                or (not nvl and nodes & set(self.faults.get("ib", []))):
            return {"result": "Failed"}
        link = self.faults.get("link")
        if nodes & set(self.faults.get("slow", [])) or (link and nodes & set(link[0]) and nodes & set(link[1])):
            return {"result": "Succeeded", "bus_bw": SLOW_BW}
        return {"result": "Succeeded"}

    def validate(self, job: dict, bus_bw: str) -> None:
        self.measurements[job["metadata"]["name"]] = self.bandwidth_measurement(job, bus_bw)
        super().validate(job, bus_bw)

    @property
    def diagnose(self) -> dict:
        return self.workflow["status"]["orchestration"]["diagnose"]


def check_every_job_was_created_once(sim: DiagnoseSim) -> None:
    assert set(sim.attempts.values()) == {1}
    assert sorted(sim.attempts) == sorted(sim.of_kind("Job"))
    # and the status the API server would store: every field in the schema (nothing pruned on a write)
    OrchestrationStatus.model_validate(sim.workflow["status"]["orchestration"])


def test_one_slow_node_is_confirmed_and_the_rest_shown_healthy():
    sim = DiagnoseSim(CHUNKS, 16, slow=[node(5)])
    sim.run()
    assert condition(sim.workflow) == {"type": "Failed", "reason": "IterationsFailed",
                                       "message": "Diagnosis complete: 1 faulty nodes confirmed"}
    out = sim.outcome()
    assert [e["name"] for e in out["failed"]] == [node(5)]
    assert out["failed"][0]["reason"] == "ThresholdViolation"
    healthy = [node(i) for i in range(16) if i != 5]
    assert out["succeeded"] == healthy == sim.diagnose["healthyNodes"]
    assert sim.diagnose["stage"] == "complete"
    # screening, inter-domain, one bisection round of the 4-node chunk, confirmation
    assert sim.diagnose["round"] == 4 <= 2 + math.ceil(math.log2(4)) + 1
    assert [g["name"] for g in sim.workflow["status"]["orchestration"]["groups"]] == ["confirm-0", "confirm-1"]
    later = ["inter-domain-iter-2", "bisect-2-0a-iter-3", "bisect-2-0b-iter-3", "confirm-0-iter-4", "confirm-1-iter-4"]
    assert sorted(sim.attempts) == sorted([f"nccl-test-screen-{i}-iter-1" for i in range(4)]
                                          + [f"nccl-test-{name}" for name in later])
    check_every_job_was_created_once(sim)
    # the healthy nodes of failed groups are not blamed: failed-nodes holds the verdict only
    assert "failedNodesRef" in sim.workflow["status"] and "succeededNodesRef" in sim.workflow["status"]


def test_two_faults_in_different_screening_groups_are_both_confirmed():
    sim = DiagnoseSim(CHUNKS, 16, slow=[node(2)], workload=[node(13)])
    sim.run()
    assert condition(sim.workflow)["message"] == "Diagnosis complete: 2 faulty nodes confirmed"
    out = sim.outcome()
    confirmed = [(node(2), "ThresholdViolation"), (node(13), "WorkloadFailed")]
    assert [(e["name"], e["reason"]) for e in out["failed"]] == confirmed
    assert out["succeeded"] == [node(i) for i in range(16) if i not in (2, 13)]
    check_every_job_was_created_once(sim)


def test_no_fault_succeeds_after_screening():
    sim = DiagnoseSim(CHUNKS, 16)
    sim.run()
    assert condition(sim.workflow) == {"type": "Succeeded", "reason": "JobCompleted",
                                       "message": "All screening passed, no faults detected"}
    assert sim.outcome()["succeeded"] == [node(i) for i in range(16)]
    assert sim.outcome()["failed"] == []
    assert "failedNodesRef" not in sim.workflow["status"]


def test_a_link_between_two_chunks_is_an_infrastructure_fault():
    sim = DiagnoseSim(CHUNKS, 16, link=[[node(i) for i in range(4)], [node(i) for i in range(8, 12)]])
    sim.run()
    assert condition(sim.workflow) == {"type": "Failed", "reason": "IterationsFailed",
                                       "message": "Diagnosis complete: 1 infrastructure faults detected"}
    assert sim.diagnose["infrastructureFaults"] == [
        {"domain": "screen-0,screen-2", "groupA": [node(0)], "groupB": [node(8)], "stage": "inter-screening"}]
    assert sim.outcome()["failed"] == []
    assert sim.diagnose["healthyNodes"] == [node(i) for i in range(16) if i not in (0, 8)]
    check_every_job_was_created_once(sim)


def test_a_fault_seen_only_without_nvl_is_bisected_without_nvl():
    sim = DiagnoseSim(CLIQUES, 36, arch="gb200", ib=[node(20)])
    sim.run()
    assert condition(sim.workflow)["message"] == "Diagnosis complete: 1 faulty nodes confirmed"
    assert [e["name"] for e in sim.outcome()["failed"]] == [node(20)]
    assert sim.diagnose["noNVLSuspectNodes"] == [node(i) for i in range(18, 36)]
    clique = "a1b2c3d4-0000-4000-8000-000000000aws.1"
    assert sim.diagnose["noNVLScreeningResults"][clique]["passed"] is False
    assert sim.diagnose["screeningResults"][clique]["passed"] is True
    jobs = sim.of_kind("Job")
    for name, job in jobs.items():
        without = name.startswith(("nccl-test-screen-no-nvl", "nccl-test-bisect", "nccl-test-confirm"))
        assert mnnvl.enabled(job["spec"]) is not without, name
    assert any(n.startswith("nccl-test-screen-no-nvl-") for n in jobs)


def test_an_nvlink_fault_is_found_with_nvl_on():
    sim = DiagnoseSim(CLIQUES, 18, arch="gb200", nvlink=[node(7)])
    sim.run()
    assert condition(sim.workflow)["message"] == "Diagnosis complete: 1 faulty nodes confirmed"
    assert [e["name"] for e in sim.outcome()["failed"]] == [node(7)]
    clique = "a1b2c3d4-0000-4000-8000-000000000aws.0"
    assert sim.diagnose["screeningResults"][clique]["passed"] is False
    assert sim.diagnose["noNVLScreeningResults"][clique]["passed"] is True
    assert "noNVLSuspectNodes" not in sim.diagnose
    assert len(sim.diagnose["healthyNodes"]) == 17


def test_a_pending_measurement_holds_the_round_until_it_is_final():
    sim = DiagnoseSim(CHUNKS, 4)
    sim.hidden = True  # the Workflow tier sees no measurement yet
    with pytest.raises(AssertionError, match="did not finish"):
        sim.run(max_steps=30)
    assert sim.diagnose == {"stage": "intra-screening", "round": 0}
    sim.hidden = False
    sim.run()
    assert condition(sim.workflow)["reason"] == "JobCompleted"


@pytest.mark.parametrize("faults", [{"slow": [node(5)]}, {"link": [[node(0), node(1)], [node(4), node(5)]]}],
                         ids=["slow-node", "link"])
def test_killed_after_every_action_ends_where_an_uninterrupted_run_does(faults):
    reference = DiagnoseSim(CHUNKS, 9, **faults)
    counts = reference.steps()
    expected = reference.outcome()
    assert expected["status"]["orchestration"]["diagnose"]["stage"] == "complete"
    points = [(n, k) for n, count in enumerate(counts) for k in range(count)]
    assert len(points) > 20
    for point in points:
        sim = DiagnoseSim(CHUNKS, 9, **faults)
        sim.run(kill=point)
        assert sim.outcome() == expected, f"killed at step {point[0]} before action {point[1]}"
        check_every_job_was_created_once(sim)


COMPUTE_DOMAIN = [
    {"op": "add", "path": "/spec/jobTemplate/spec/workload/trainJob/trainer/env",
     "value": [{"name": "IMEX_DOMAIN", "value": "imex-domain"}]},
    {"op": "add", "path": "/spec/dependencies/-",
     "value": {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "ComputeDomain", "metadata": {"name": "imex-domain"},
               "spec": {"numNodes": 0, "channel": {"resourceClaimTemplate": {"name": "imex-domain-channel"}}}}}]


class PassesSim(DiagnoseSim):
    """Notes what each pass created, by kind, in order."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.passes: list[list[dict]] = []

    def execute(self, step, limit: int | None = None) -> None:
        before = len(self.creates)
        try:
            super().execute(step, limit)
        finally:
            self.passes.append(self.creates[before:])


def test_each_diagnose_round_launches_all_its_groups_a_pass_after_their_compute_domains():
    """Issue 22 for diagnose (GB200/GB300): a round's groups each get their ComputeDomain in one pass and their
    Jobs all in the next; no group waits for another's."""
    sim = PassesSim(CHUNKS + COMPUTE_DOMAIN, 16, slow=[node(5)])
    sim.run()
    assert condition(sim.workflow)["message"] == "Diagnosis complete: 1 faulty nodes confirmed"
    check_every_job_was_created_once(sim)
    job_passes = [i for i, created in enumerate(sim.passes) if any(o["kind"] == "Job" for o in created)]
    rounds = {o["metadata"]["name"].rsplit("-iter-", 1)[1] for i in job_passes for o in sim.passes[i]
              if o["kind"] == "Job"}
    assert len(job_passes) == len(rounds) == sim.diagnose["round"]  # one launching pass per round
    for i in job_passes:
        jobs = sorted(o["metadata"]["name"] for o in sim.passes[i] if o["kind"] == "Job")
        domains = sorted(o["metadata"]["name"] for o in sim.passes[i - 1] if o["kind"] == "ComputeDomain")
        assert len(domains) == len(jobs) > 0, (jobs, domains)
        assert not any(o["kind"] in ("ComputeDomain", "TrainingRuntime") for o in sim.passes[i])  # no copy again
        # each Job's own copy: imex-domain-<hash>-<group>-iter-<round> beside nccl-test-<group>-iter-<round>
        assert [d.split("-", 3)[3] for d in domains] == [j.removeprefix("nccl-test-") for j in jobs]


class DiagnoseClaims(DiagnoseSim, VolumeSim):
    """A diagnose run whose Jobs each have a checkpoint claim, with the provisioner and PV controller of
    test_workflow_volumes."""

    def job_tier(self) -> None:
        self.storage()
        DiagnoseSim.job_tier(self)


def test_a_round_waiting_for_its_measurements_still_looks_again_within_5_s_for_a_claim_s_pv():
    # The round's Jobs ended and their claims were deleted; the claims terminate (their PVs still Bound) while the
    # round waits for its measurements: the tier must look again within PV_RELEASE_WAIT, not after 15 s.
    sim = DiagnoseClaims([*CHUNKS, *CLAIM_PATCH], 4)
    sim.hidden = True
    for _pass in range(10):
        sim.execute(sim.reconcile())
        if any(c["metadata"].get("deletionTimestamp") for c in sim.of_kind(PVC).values()):
            break
        sim.job_tier()
        sim.now += timedelta(minutes=1)
    step = sim.reconcile()   # the claims still terminate: no storage tick since they were deleted
    groups = sim.workflow["status"]["orchestration"]["groups"]
    assert [g["phase"] for g in groups] == ["Succeeded", "Succeeded"]
    assert sim.diagnose == {"stage": "intra-screening", "round": 0}   # held: no measurement is final
    assert step.requeue_after == volumes.PV_RELEASE_WAIT
    assert step.wake_at == sim.now + timedelta(seconds=volumes.PV_RELEASE_WAIT)
