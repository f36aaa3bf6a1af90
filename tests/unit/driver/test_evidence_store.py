"""The evidence store: a Workflow's shards read back in a fixed order, only the sealed attempt's, and every way the
shards, the seals and the Workflow's totals disagree named in one line each."""
from __future__ import annotations

import base64
import copy
from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.driver import evidence_store
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence import shards
from tests.evidence_seed import dcgm_rows, job, seed
from tests.unit.driver.evidence_cluster import EvidenceKube

Obj = dict[str, Any]
WORKFLOW = {"metadata": {"name": "wf", "namespace": "default", "uid": "u-1"}}
JOBS = ("wf-group-10", "wf-group-2", "wf-group-1")


def _stored(final: bool = True) -> tuple[Obj, dict[str, Obj], list[Obj]]:
    seeded = seed(WORKFLOW, {name: dcgm_rows(f"node-{name[-2:]}") for name in JOBS}, final=final)
    workflow = {**WORKFLOW, "status": {"evidence": seeded.status}}
    return workflow, {n: job(n, "wf", s) for n, s in seeded.seals.items()}, seeded.configmaps


def test_the_shards_are_read_jobs_in_natural_order_and_match_their_seals() -> None:
    workflow, jobs, cms = _stored()
    kube = EvidenceKube(cms)
    read = evidence_store.read(kube, workflow, jobs)
    assert [r.job for r in read.shards] == ["wf-group-1", "wf-group-2", "wf-group-10"]
    rows = list(evidence_store.rows(kube, read))
    assert len(rows) == 3 * 24 and read.problems == [] and read.ignored == [] and read.final()
    assert rows[0]["job"] == "wf-group-1" and rows[-1]["job"] == "wf-group-10"
    assert kube.lists == 1  # one metadata list; the bytes one shard at a time
    assert kube.gets == [r.name for r in read.shards]


def test_nothing_sealed_is_no_evidence_and_asks_nothing() -> None:
    kube = EvidenceKube([])
    read = evidence_store.read(kube, WORKFLOW, {"wf-group-1": job("wf-group-1", "wf", None)})
    assert not read.stored and kube.lists == 0 and read.shards == []


def test_another_attempts_shards_are_ignored_and_reported() -> None:
    workflow, jobs, cms = _stored()
    stale = copy.deepcopy(cms[0])
    stale["metadata"]["name"] = shards.shard_name("wf-group-1", 0, 1)
    stale["metadata"]["labels"][shards.LABEL_ATTEMPT] = "0"
    kube = EvidenceKube([*cms, stale])
    read = evidence_store.read(kube, workflow, jobs)
    assert read.problems == []
    assert read.ignored == ["ConfigMap default/wf-group-1-evidence-0-1: attempt 0, Job wf-group-1's seal is of "
                            "attempt 1"]
    assert stale["metadata"]["name"] not in [r.name for r in read.shards]


def test_a_missing_shard_an_extra_one_and_a_row_count_are_named() -> None:
    workflow, jobs, cms = _stored()
    extra = copy.deepcopy(cms[1])
    extra["metadata"]["name"] = shards.shard_name("wf-group-2", 1, 2)
    extra["metadata"]["annotations"][shards.ANNOTATION_SHARD] = "2/2"
    kube = EvidenceKube([cms[1], cms[2], extra])
    read = evidence_store.read(kube, workflow, jobs)
    assert read.problems == [
        "ConfigMap default/wf-group-1-evidence-1-1 is missing: Job wf-group-1's seal counts 1 shards",
        "Job wf-group-1: its shards hold 0 rows, its seal says 24",
        "ConfigMap default/wf-group-2-evidence-1-2 is extra: Job wf-group-2's seal counts 1 shards",
    ]


def test_a_shard_whose_bytes_differ_from_its_seal_is_left_out_and_named() -> None:
    workflow, jobs, cms = _stored()
    tampered = copy.deepcopy(cms)
    data = bytearray(base64.b64decode(tampered[0]["binaryData"][shards.DATA_KEY]))
    data[20] ^= 1
    tampered[0]["binaryData"][shards.DATA_KEY] = base64.b64encode(bytes(data)).decode()
    kube = EvidenceKube(tampered)
    read = evidence_store.read(kube, workflow, jobs)
    assert read.problems == []  # the annotations still agree: only the bytes tell
    assert len(list(evidence_store.shard_data(kube, read))) == 2
    assert len(read.problems) == 1 and read.problems[0].startswith(
        "ConfigMap default/wf-group-1-evidence-1-1: its bytes' sha256 is ")
    assert read.problems[0].endswith(f"its annotation and Job wf-group-1's seal say {read.shards[0].sha256}")


def test_an_annotation_that_differs_from_the_seal_is_named() -> None:
    workflow, jobs, cms = _stored()
    cms[2]["metadata"]["annotations"][shards.ANNOTATION_SHA256] = "0" * 64
    read = evidence_store.read(EvidenceKube(cms), workflow, jobs)
    assert read.problems == [f"ConfigMap default/{cms[2]['metadata']['name']}: sha256 {'0' * 64} is not the one "
                             f"Job wf-group-10's seal gives shard 1"]


def test_the_workflows_totals_are_checked_against_its_jobs_seals() -> None:
    workflow, jobs, cms = _stored()
    workflow["status"]["evidence"]["rows"] = 70
    read = evidence_store.read(EvidenceKube(cms), workflow, jobs)
    assert read.problems == ["Workflow default/wf: status.evidence.rows is 70, its Jobs' seals sum to 72"]
    missing = evidence_store.read(EvidenceKube(cms), WORKFLOW, jobs)
    assert missing.problems == ["Workflow default/wf has no status.evidence, yet its Jobs are sealed"]


def _earlier_iteration() -> tuple[Obj, dict[str, Obj], list[Obj]]:
    """wf-group-1's Job of iteration 1 is gone (deleted when iteration 2 started): its shards stay, its seal's sums
    are in earlierIterations; iteration 2's Job is live and sealed."""
    seeded = seed(WORKFLOW, {"wf-group-1-iter-1": dcgm_rows("node-01"), "wf-group-1-iter-2": dcgm_rows("node-01")})
    gone = seeded.seals.pop("wf-group-1-iter-1")
    earlier = evidence_store.totals([("wf-group-1-iter-1", gone)])
    status = {**seeded.status, "earlierIterations": {k: v for k, v in earlier.items() if v}}
    jobs = {n: job(n, "wf", s) for n, s in seeded.seals.items()}
    return {**WORKFLOW, "status": {"evidence": status}}, jobs, seeded.configmaps


def test_an_earlier_iteration_s_shards_count_against_its_sums_once_its_job_is_gone() -> None:
    workflow, jobs, cms = _earlier_iteration()
    kube = EvidenceKube(cms)
    read = evidence_store.read(kube, workflow, jobs)
    assert read.problems == [] and read.ignored == []
    assert [r.job for r in read.shards] == ["wf-group-1-iter-1", "wf-group-1-iter-2"]
    assert read.earlier == {"rows": 24, "shards": 1} and len(list(evidence_store.rows(kube, read))) == 48


def test_an_earlier_iteration_s_lost_shard_is_a_problem() -> None:
    workflow, jobs, cms = _earlier_iteration()
    read = evidence_store.read(EvidenceKube(cms[1:]), workflow, jobs)
    assert read.problems == [
        "Workflow default/wf: status.evidence.earlierIterations.rows is 24, the shards of its earlier iterations' "
        "Jobs hold 0",
        "Workflow default/wf: status.evidence.earlierIterations.shards is 1, the shards of its earlier iterations' "
        "Jobs hold 0"]
