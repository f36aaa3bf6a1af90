"""A measured Job's evidence (reconcile/evidence_measured through evidence_ledger and the Job tier): which Job gets
which rows (the dispatch), which pod's log with which profile, the ledger's seal and shards on a bandwidth Job,
the training rows of a goodput Job, and the Job's outcome left as it is without evidence."""
from __future__ import annotations

import copy
from typing import Any

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.api.actions import Create, Delete, UpdateStatus
from ansible_collections.cre.certification.plugins.module_utils.engine.api.objects import condition
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence import shards
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import (
    evidence_ledger,
    evidence_measured,
    job_tier,
)
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile.world import JobWorld
from tests.unit.engine.reconcile import evidence_objects as dcgm
from tests.unit.engine.reconcile.bandwidth_objects import LOG as NCCL_LOG
from tests.unit.engine.reconcile.measured_objects import (
    BANDWIDTH,
    GOODPUT,
    GROUP,
    JOB,
    LAUNCHER,
    NODES,
    PROFILES,
    TRAINING_LOG,
    WORKER_0,
    WORKER_1,
    job,
    world,
)

Obj = dict[str, Any]
BW_JOB = job({"bandwidthMeasurement": BANDWIDTH})
GP_JOB = job({"goodputMeasurement": GOODPUT})
SIZES = (8, 1048576, 134217728, 8589934592)


@pytest.mark.parametrize(("w", "formats", "logs", "stamped"), [
    (world(BW_JOB), ["nccl-tests"], [(LAUNCHER, "")], [(LAUNCHER, "")]),
    (world(GP_JOB), ["training"], [(WORKER_1, "")], [(WORKER_1, "")]),
    (dcgm.world(log=dcgm.dcgm_log()), [], [(dcgm.POD, "node")], []),
    (world(job()), [], [], []),
], ids=["bandwidth", "goodput", "dcgm", "none"])
def test_which_job_gets_which_rows_read_from_which_log(w: JobWorld, formats: list[str], logs: list, stamped: list):
    assert [s.fmt for s in evidence_measured.sources(w.job)] == formats
    assert evidence_ledger.has_evidence(w.job) == bool(logs)
    assert evidence_ledger.needs_log(w) == logs
    assert evidence_ledger.stamped(w) == stamped
    assert (evidence_ledger.gate(w) is None) == (not logs)


def test_the_bandwidth_source_is_the_measurements_test_type_and_profile_and_reads_the_mpi_launcher():
    assert evidence_measured.sources(BW_JOB) == [evidence_measured.Source("nccl-tests", "nccl-bandwidth", "all_reduce")]
    # the launcher carries no Job label: the Job tier's pods are the workers alone, the workload's pods have it
    w = world(BW_JOB)
    assert LAUNCHER not in {p["metadata"]["name"] for p in w.pods}
    [target] = evidence_measured.targets(w)
    assert (target.pod, target.node, target.problem) == (LAUNCHER, NODES[0], "")


@pytest.mark.parametrize(("strategy", "read"), [("Multi", WORKER_1), ("Single", WORKER_0)])
def test_a_goodput_jobs_steps_are_read_where_its_measurement_reads_them(strategy: str, read: str):
    """A Multi profile's steps are the last worker's (the lifecycle is worker-0's), a Single one's worker-0's."""
    profile = copy.deepcopy(PROFILES["megatron-bridge"][0])
    profile["spec"]["workerStrategy"] = {"type": strategy}
    [target] = evidence_measured.targets(world(GP_JOB, profiles={"megatron-bridge": (profile, "")}))
    assert (target.pod, target.node) == (read, NODES[[WORKER_0, WORKER_1].index(read)])


def test_profiles_are_asked_for_only_once_the_workload_is_over_and_until_the_job_ends():
    assert evidence_ledger.needs_profiles(world(BW_JOB)) == ["nccl-bandwidth"]
    assert evidence_ledger.needs_profiles(world(BW_JOB, ended=None)) == []
    assert evidence_ledger.needs_profiles(world(job({"bandwidthMeasurement": BANDWIDTH}, ended="Succeeded"))) == []
    assert evidence_ledger.needs_profiles(world(dcgm.job())) == []


def passes(the_job: Obj, logs: dict[str, str | None], ended: str = "Complete") -> tuple[Obj, list[Obj], list]:
    """The seal pass, then the pass once its shards exist: (the Job as the seal write leaves it, the shards, the
    terminal step's actions)."""
    first = job_tier.reconcile(world(the_job, logs, ended))
    assert isinstance(first.actions[0], UpdateStatus) and not first.terminal
    sealed = first.actions[0].obj
    created = [a.obj for a in first.actions[1:] if isinstance(a, Create) and a.obj["kind"] == "ConfigMap"]
    final = job_tier.reconcile(world(sealed, logs, ended, existing=created))
    assert final.terminal
    return sealed, created, final.actions


def decoded(created: list[Obj]) -> list[Obj]:
    return [row for cm in created for row in shards.decode(shards.shard_bytes(cm) or b"")]


def test_a_bandwidth_job_seals_group_rows_per_message_size_then_writes_them_then_ends():
    sealed, created, actions = passes(BW_JOB, {f"{LAUNCHER}/": NCCL_LOG})
    seal = sealed["status"]["evidence"]
    assert {k: v for k, v in sealed["status"].items() if k != "evidence"} == BW_JOB["status"]
    assert (seal["attempt"], seal["rows"], seal["shards"], "partial" in seal) == (1, 8, 1, False)
    assert created[0]["metadata"]["annotations"][shards.ANNOTATION_SHA256] == seal["sha256"][0]
    rows = decoded(created)
    assert [(r["metric"], int(r["detail"].split(" B;")[0])) for r in rows] == [
        (metric, size) for metric in ("algbw", "busbw") for size in SIZES]
    assert {(r["node"], r["component"], r["test"], r["unit"], r["outcome"]) for r in rows} == {
        (GROUP, "group", "all_reduce", "GB/s", "pass")}
    assert {r["detail"].split("; ", 1)[1] for r in rows} == {"network IB"}
    assert {(r["workflow"], r["iteration"], r["job"], r["attempt"]) for r in rows} == {("nccl", 1, JOB, 1)}
    largest = {r["metric"]: r["value"] for r in rows if r["detail"].startswith("8589934592 B")}
    assert largest == {"busbw": 847.12, "algbw": 451.80}
    end = next(a.obj for a in actions if isinstance(a, UpdateStatus))
    assert end["status"]["evidence"] == seal
    assert condition(end, "Succeeded")["reason"] == "WorkloadCompleted" and "failedNodes" not in end["status"]


def test_a_goodput_job_gives_a_row_per_step_with_its_time_and_tflops():
    sealed, created, _actions = passes(GP_JOB, {f"{WORKER_1}/": TRAINING_LOG})
    assert sealed["status"]["evidence"]["rows"] == 4
    assert [(r["node"], r["component"], r["index"], r["metric"], r["value"], r["time"]) for r in decoded(created)] == [
        (GROUP, "step", 48, "step_time", 1.5327, "2024-09-12T14:03:23.000000Z"),
        (GROUP, "step", 48, "tflops", 402.6, "2024-09-12T14:03:23.000000Z"),
        (GROUP, "step", 49, "step_time", 1.5299, "2024-09-12T14:03:24.000000Z"),
        (GROUP, "step", 49, "tflops", 403.3, "2024-09-12T14:03:24.000000Z")]


def today(monkeypatch: pytest.MonkeyPatch, w: JobWorld) -> Obj:
    """The Job's terminal status as the Job tier wrote it before measured evidence: the evidence steps left out."""
    with monkeypatch.context() as patched:
        patched.setattr(evidence_ledger, "gate", lambda _world: None)
        step = job_tier.reconcile(w)
    return next(a.obj for a in step.actions if isinstance(a, UpdateStatus))["status"]


@pytest.mark.parametrize(("ended", "log"), [("Complete", NCCL_LOG), ("Failed", NCCL_LOG), ("Failed", None),
                                            ("Complete", NCCL_LOG.replace("1402.6", "1402.6 x"))])
def test_the_jobs_outcome_and_failed_nodes_are_what_they_were_without_evidence(
        monkeypatch: pytest.MonkeyPatch, ended: str, log: str | None):
    before = today(monkeypatch, world(BW_JOB, {f"{LAUNCHER}/": log}, ended))
    first = job_tier.reconcile(world(BW_JOB, {f"{LAUNCHER}/": log}, ended))
    the_job = first.actions[0].obj if not first.terminal else BW_JOB
    created = [a.obj for a in first.actions if isinstance(a, Create)]
    final = job_tier.reconcile(world(the_job, {f"{LAUNCHER}/": log}, ended, existing=created))
    end = next(a.obj for a in (final if not first.terminal else first).actions if isinstance(a, UpdateStatus))
    status = {k: v for k, v in end["status"].items() if k != "evidence"}
    assert status == before
    if ended == "Failed":
        assert [(e["name"], e["reason"]) for e in status["failedNodes"]] == [(n, "WorkloadFailed") for n in NODES]


def test_a_partial_read_is_recorded_in_the_seal_and_fails_nothing():
    cut = "".join(NCCL_LOG.splitlines(keepends=True)[:-2])  # the log ends before its # Avg bus bandwidth line
    sealed, created, actions = passes(BW_JOB, {f"{LAUNCHER}/": cut})
    seal = sealed["status"]["evidence"]
    assert seal["rows"] == 8 and len(decoded(created)) == 8
    assert seal["partial"] == (f"nccl-tests of pod {LAUNCHER}: all_reduce: a table ends before its # Avg bus "
                               f"bandwidth line (the log ends early)")
    end = next(a.obj for a in actions if isinstance(a, UpdateStatus))
    assert condition(end, "Succeeded")["status"] == "True"


@pytest.mark.parametrize(("logs", "profiles", "why"), [
    ({}, None, f"nccl-tests of pod {LAUNCHER}: its log could not be read"),
    ({f"{LAUNCHER}/": "\n"}, None, f"nccl-tests of pod {LAUNCHER}: the log is empty, no nccl-tests output to read"),
    ({f"{LAUNCHER}/": NCCL_LOG}, {"nccl-bandwidth": (None, 'logprofiles.nvcre.nvidia.com "nccl-bandwidth" not found')},
     "nccl-tests: LogProfile 'nccl-bandwidth' could not be read: logprofiles.nvcre.nvidia.com \"nccl-bandwidth\" "
     "not found"),
], ids=["unread", "empty", "no-profile"])
def test_no_rows_is_partial_never_zero_and_the_seal_rides_on_the_terminal_write(logs: dict, profiles: Any, why: str):
    step = job_tier.reconcile(world(BW_JOB, logs, profiles=profiles))
    assert step.terminal and [a.obj["kind"] for a in step.actions if isinstance(a, Create)] == ["BandwidthMeasurement"]
    end = next(a.obj for a in step.actions if isinstance(a, UpdateStatus))
    assert end["status"]["evidence"] == {"attempt": 1, "rows": 0, "shards": 0, "sha256": [], "partial": why}
    assert condition(end, "Succeeded")["status"] == "True"


def test_missing_shards_are_written_again_with_the_same_bytes_and_a_retry_deletes_the_losing_attempts():
    logs = {f"{LAUNCHER}/": NCCL_LOG}
    sealed, created, _actions = passes(BW_JOB, logs)
    again = job_tier.reconcile(world(sealed, logs))  # killed after the seal: no shard exists yet
    assert [a.obj for a in again.actions if isinstance(a, Create)] == created and not again.terminal
    retried = job({"bandwidthMeasurement": BANDWIDTH}, retry=1)
    first = job_tier.reconcile(world(retried, logs, existing=created))
    deletes = [a.ref.name for a in first.actions if isinstance(a, Delete)]
    assert deletes == [shards.shard_name(JOB, 1, 1)]
    assert [a.obj["metadata"]["name"] for a in first.actions if isinstance(a, Create)] == [shards.shard_name(JOB, 2, 1)]


def test_the_engine_changes_nothing_of_its_world():
    w = world(BW_JOB, {f"{LAUNCHER}/": NCCL_LOG, f"{WORKER_1}/node": "not read"})
    before = copy.deepcopy(w)
    job_tier.reconcile(w)
    assert w == before
