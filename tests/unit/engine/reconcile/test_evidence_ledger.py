"""The Job tier's evidence steps (reconcile/evidence_ledger, evidence_blame) on a DCGM Job: the seal before the
shards, the missing shards written again with the same bytes, a lost log made partial (never zero), the losing
attempt's shards deleted, and the GPU named in the node's failure."""
from __future__ import annotations

import copy
from typing import Any

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.api.actions import (
    Create,
    Delete,
    Event,
    UpdateStatus,
)
from ansible_collections.cre.certification.plugins.module_utils.engine.api.objects import condition
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence import shards
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import evidence_ledger, job_tier
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile.world import JobWorld
from tests.unit.engine.evidence.dcgm_docs import MEMORY_MESSAGE
from tests.unit.engine.reconcile.evidence_objects import (
    ALL_SKIP_5,
    GPU3_MEMORY,
    JOB,
    NODE,
    POD,
    WF_UID,
    dcgm_log,
    job,
    world,
)

Obj = dict[str, Any]


def sealed(w: JobWorld) -> tuple[Obj, list[Obj]]:
    """The first pass: (the Job as its seal write leaves it, the shard ConfigMaps created after it)."""
    step = job_tier.reconcile(w)
    assert isinstance(step.actions[0], UpdateStatus) and not step.terminal
    creates = [a.obj for a in step.actions[1:] if isinstance(a, Create)]
    return step.actions[0].obj, creates


def ended(w: JobWorld) -> Obj:
    """The terminal pass once every sealed shard exists: the Job as written."""
    step = job_tier.reconcile(w)
    writes = [a for a in step.actions if isinstance(a, UpdateStatus)]
    assert step.terminal and len(writes) == 1
    return writes[0].obj


def run(log: str | None, ended_as: str = "Complete", skip_is_failure: bool = False) -> tuple[Obj, Obj, list]:
    """Seal, shards, end: (the seal, the Job as it ends, the terminal step's actions)."""
    first, created = sealed(world(log=log, ended=ended_as, skip_is_failure=skip_is_failure))
    w = world(first, log=log, ended=ended_as, existing=created, skip_is_failure=skip_is_failure)
    step = job_tier.reconcile(w)
    final = next(a.obj for a in step.actions if isinstance(a, UpdateStatus))
    return first["status"]["evidence"], final, step.actions


def test_the_seal_is_written_before_the_shards_in_one_step_and_names_them():
    status_before = world(log=dcgm_log()).job["status"]
    first, created = sealed(world(log=dcgm_log()))
    seal = first["status"]["evidence"]
    assert seal["attempt"] == 1 and seal["shards"] == len(created) == 1 and "partial" not in seal
    # 8 GPUs x 4 tests, and nothing else changed in the status the seal write carries
    assert seal["rows"] == 32
    assert {k: v for k, v in first["status"].items() if k != "evidence"} == status_before
    cm = created[0]
    assert cm["metadata"]["name"] == f"{JOB}-evidence-1-1"
    assert cm["metadata"]["labels"] == {"cre.certification/evidence": "rows", "cre.certification/workflow": "dcgm",
                                        "cre.certification/job": JOB, "cre.certification/attempt": "1"}
    assert cm["metadata"]["annotations"]["cre.certification/evidence-sha256"] == seal["sha256"][0]
    assert cm["metadata"]["ownerReferences"][0]["uid"] == WF_UID
    rows = list(shards.decode(shards.shard_bytes(cm) or b""))
    assert {(r["workflow"], r["iteration"], r["job"], r["attempt"]) for r in rows} == {("dcgm", 1, JOB, 1)}
    assert {r["node"] for r in rows} == {NODE}


def test_the_job_ends_only_once_every_sealed_shard_exists_and_missing_ones_are_written_with_the_same_bytes():
    first, created = sealed(world(log=dcgm_log()))
    again = job_tier.reconcile(world(first, log=dcgm_log()))  # sealed, no shard yet: created again, not ended
    assert not again.terminal and [a.obj for a in again.actions] == created
    done = ended(world(first, log=dcgm_log(), existing=created))
    assert done["status"]["evidence"] == first["status"]["evidence"]
    assert condition(done, "Succeeded")["reason"] == "WorkloadCompleted"


def test_shards_lost_with_the_log_are_partial_never_made_up():
    first, _created = sealed(world(log=dcgm_log()))
    done = ended(world(first, log=None))
    seal = done["status"]["evidence"]
    assert seal["rows"] == 32 and seal["shards"] == 1  # what was sealed stays; partial says what is gone
    assert seal["partial"].startswith("shards 1 of 1 are gone and cannot be written again: ")
    assert "its log could not be read" in seal["partial"]


def test_a_shard_of_other_bytes_is_deleted_and_written_again():
    first, created = sealed(world(log=dcgm_log()))
    wrong = copy.deepcopy(created[0])
    wrong["metadata"]["annotations"]["cre.certification/evidence-sha256"] = "0" * 64
    step = job_tier.reconcile(world(first, log=dcgm_log(), existing=[wrong]))
    assert not step.terminal and [type(a) for a in step.actions] == [Delete]


def test_a_retried_attempt_deletes_the_losing_attempts_shards():
    _first, losing = sealed(world(log=dcgm_log(GPU3_MEMORY), ended="Failed"))
    retried = job(retry=1)
    step = job_tier.reconcile(world(retried, log=dcgm_log(), existing=losing))
    seal = step.actions[0].obj["status"]["evidence"]
    assert seal["attempt"] == 2
    assert [a.obj["metadata"]["name"] for a in step.actions if isinstance(a, Create)] == [f"{JOB}-evidence-2-1"]
    assert [a.ref.name for a in step.actions if isinstance(a, Delete)] == [f"{JOB}-evidence-1-1"]


def test_needs_log_only_for_a_reader_whose_workload_is_over_and_job_not_ended():
    assert evidence_ledger.needs_log(world(log=dcgm_log())) == [(POD, "node")]
    assert evidence_ledger.needs_log(world(log=dcgm_log(), ended=None)) == []  # still running
    assert evidence_ledger.needs_log(world(job(args=("all_reduce_perf",)), log="")) == []  # no reader
    first, created = sealed(world(log=dcgm_log()))
    done = ended(world(first, log=dcgm_log(), existing=created))
    assert evidence_ledger.needs_log(world(done, log=dcgm_log())) == []


def test_a_failed_workload_names_gpu_test_and_dcgm_message_in_the_node_entry():
    _seal, final, _actions = run(dcgm_log(GPU3_MEMORY), "Failed")
    assert final["status"]["failedNodes"] == [{"name": NODE, "reason": "WorkloadFailed",
                                               "message": f"GPU 3: memory failed: {MEMORY_MESSAGE} (DCGM error 12)"}]
    assert condition(final, "Failed")["reason"] == "WorkloadFailed"


def test_a_failing_gpu_fails_the_node_though_dcgmi_exited_0():
    _seal, final, _actions = run(dcgm_log(GPU3_MEMORY))
    assert condition(final, "Failed")["message"] == ("Workload 1/1 completed, but its dcgm-diag-json output names "
                                                     f"failures on node(s) [{NODE}]")
    assert final["status"]["failedNodes"][0]["message"].startswith("GPU 3: memory failed: A memory mismatch")


def test_lacking_evidence_warns_and_succeeds_by_default_and_fails_with_the_option():
    seal, final, actions = run(dcgm_log(ALL_SKIP_5))
    assert condition(final, "Succeeded") is not None and "failedNodes" not in final["status"]
    assert seal["rows"] == 32 and "partial" not in seal
    warnings = [a for a in actions if isinstance(a, Event) and a.reason == "EvidenceLacking"]
    assert len(warnings) == 1 and "GPU 5: lacking evidence" in warnings[0].message
    _seal, strict, _actions = run(dcgm_log(ALL_SKIP_5), skip_is_failure=True)
    assert condition(strict, "Failed")["reason"] == "EvidenceLacking"
    assert strict["status"]["failedNodes"] == [{
        "name": NODE, "reason": "EvidenceLacking",
        "message": "GPU 5: lacking evidence: no test passed, warned or failed on it (every test skipped)"}]


@pytest.mark.parametrize("log", ["", "Error: unable to connect to host engine\n"], ids=["empty", "not-json"])
def test_an_unreadable_output_is_partial_lacking_evidence_not_a_pass(log: str):
    seal, final, actions = run(log)
    assert seal["rows"] == 0 and seal["shards"] == 0 and seal["partial"].startswith(f"pod {POD} on node {NODE}: ")
    assert condition(final, "Succeeded") is not None
    assert any(isinstance(a, Event) and a.reason == "EvidenceLacking" for a in actions)
    _seal, failed, _actions = run(log, "Failed")
    message = failed["status"]["failedNodes"][0]["message"]
    assert message.startswith("Workload 1/1 failed: jobset failed; evidence partial: pod ")


def test_the_engine_changes_nothing_of_its_world():
    w = world(log=dcgm_log(GPU3_MEMORY), ended="Failed")
    before = copy.deepcopy(w)
    job_tier.reconcile(w)
    assert w == before


def test_a_log_unreadable_at_the_end_leaves_the_shards_and_says_the_verdict_rests_on_another_read():
    first, created = sealed(world(log=dcgm_log()))
    done = ended(world(first, log=None, existing=created))
    seal = done["status"]["evidence"]
    assert (seal["rows"], seal["sha256"]) == (32, first["status"]["evidence"]["sha256"])
    assert seal["partial"] == (f"the verdict rests on another read than the sealed rows: pod {POD} on node {NODE}: "
                               "its log could not be read")
