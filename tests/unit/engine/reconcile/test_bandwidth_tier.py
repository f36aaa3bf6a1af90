"""The BandwidthMeasurement tier (spec/measurements.md §2.3–§2.6) without a cluster: running samples read a
window and average, the final read replaces them, the terminal reasons and messages, the Job gone."""
from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ansible_collections.cre.certification.plugins.module_utils.engine.api.actions import Event, UpdateStatus
from ansible_collections.cre.certification.plugins.module_utils.engine.catalog.logprofiles import builtin_profile
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import bandwidth_tier as tier
from tests.unit.engine.reconcile.bandwidth_objects import LOG, job, measurement, pod

DATA = Path(__file__).resolve().parents[1] / "data"

NOW = datetime(2026, 3, 2, 10, 5, tzinfo=UTC)
DONE = NOW - timedelta(seconds=20)
SIZES = [8, 1048576, 134217728, 8589934592]


def world(m: dict, j: dict | None, p: dict | None = None, **kw) -> tier.BandwidthWorld:
    return tier.BandwidthWorld(m, j, [p] if p else [], builtin_profile("nccl-bandwidth"), "", now=NOW, **kw)


def written(step: tier.BandwidthStep) -> dict:
    return next(a.obj for a in step.step.actions if isinstance(a, UpdateStatus))["status"]


def cond(status: dict, kind: str) -> dict:
    return next(c for c in status["conditions"] if c["type"] == kind)


def test_a_running_sample_reads_the_window_since_the_last_read_and_averages():
    w = world(measurement(), job(), pod(), last_fetch=NOW - timedelta(seconds=40))
    first = tier.reconcile(w)
    assert first.read == tier.Read("j-workload-launcher-0-0", "", NOW - timedelta(seconds=41))
    w.log = tier.LogRead(LOG)
    step = tier.reconcile(w)
    status = written(step)
    assert [r["sizeBytes"] for r in status["results"]] == SIZES
    assert status["results"][3] == {"sizeBytes": 8589934592, "algBW": "451.80", "busBW": "847.12", "samples": 1}
    assert status["transport"] == ["IB"]
    assert (cond(status, "Measuring")["status"], cond(status, "Measuring")["reason"]) == ("True", "JobRunning")
    assert cond(status, "Measuring")["message"] == "Referenced Job is running, measurement in progress"
    assert step.sampled and step.fetched and step.step.requeue_after == 30.0
    again = tier.reconcile(world(measurement(status), job(), pod(), last_fetch=NOW, log=tier.LogRead(LOG)))
    assert written(again)["results"][3]["samples"] == 2  # overlapping windows double-count: provisional


def test_the_throttle_waits_for_the_sample_interval():
    step = tier.reconcile(world(measurement(), job(), pod(), last_sample=NOW - timedelta(seconds=10)))
    assert step.read is None and step.step.actions == [] and step.step.requeue_after == 20.0


def test_the_final_read_replaces_provisional_results():
    provisional = {"results": [{"sizeBytes": 8, "algBW": "9.00", "busBW": "9.00", "samples": 5}]}
    w = world(measurement(provisional), job("Succeeded"), pod("Succeeded"))
    assert tier.reconcile(w).read == tier.Read("j-workload-launcher-0-0", "", None)
    w.log = tier.LogRead(LOG)
    step = tier.reconcile(w)
    status = written(step)
    assert [r["samples"] for r in status["results"]] == [1, 1, 1, 1] and status["results"][0]["busBW"] == "0.00"
    assert status["completionTime"] == "2026-03-02T10:04:40Z"  # the Job's terminal time, not the pass's
    for kind, value in (("Measuring", "False"), ("Complete", "True")):
        assert (cond(status, kind)["status"], cond(status, kind)["reason"], cond(status, kind)["message"]) == (
            value, "JobSucceeded", "Job succeeded")
    assert step.step.terminal


def test_a_succeeded_job_without_rows_is_no_data():
    w = world(measurement(), job("Succeeded"), pod("Succeeded"), log=tier.LogRead("2026-03-02T10:00:05Z hello\n"))
    status = written(tier.reconcile(w))
    assert (cond(status, "Complete")["reason"], cond(status, "Complete")["message"]) == (
        "NoDataCollected", "Job succeeded but no bandwidth data was parsed; check spec.logProfileRef")
    assert status["results"] == []


# An older nccl-tests table (no root column, integer times) read with NVCRE's regex, which takes the first digit of
# the `error` column for busbw (logs/nccl_tables.py); and two tests in one log.
OLD_TABLE = """#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error
  8589934592    2147483648   float     sum   127453   67.40  123.56  2e-07   127443   67.40  123.57  2e-07
"""
TWO_TESTS = """# Collective test starting: alltoall_perf
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
     1048576        131072     float    none      -1    50.00   20.97   10.49      0    50.10   20.93   10.47      0
# Collective test starting: sendrecv_perf
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
     1048576        262144     float     sum      -1    20.00   52.43   52.43      0    20.10   52.17   52.17      0
"""


def final_status(log: str, test_type: str = "all_reduce", regex: str = "") -> dict:
    profile = builtin_profile("nccl-bandwidth")
    if regex:
        profile["spec"]["patterns"]["bandwidthResult"]["regex"] = regex
    m = measurement()
    m["spec"]["testType"] = test_type
    w = tier.BandwidthWorld(m, job("Succeeded"), [pod("Succeeded")], profile, "", now=NOW, log=tier.LogRead(log))
    return written(tier.reconcile(w))


def test_rows_the_table_refutes_end_the_measurement_without_a_figure():
    status = final_status(OLD_TABLE, regex=r"^\s*(?P<size>\d+)\s+\d+\s+\w+\s+\w+\s+-?\d+\s+[\d.]+\s+"
                                           r"(?P<algBW>[\d.]+)\s+(?P<busBW>[\d.]+)")
    row = "8589934592    2147483648   float     sum   127453   67.40  123.56  2e-07   127443   67.40  123.57  2e-07"
    assert (cond(status, "Complete")["reason"], cond(status, "Complete")["message"]) == (
        "RowsRefused", f"Job succeeded but none of the 1 result rows of its log could be trusted; the first, {row!r}: "
        "busBW '2' is not a whole column; check spec.logProfileRef")
    assert status["results"] == []
    assert (status["refusedRows"], status["firstRefusedRow"], status["refusedRowLines"]) == (
        1, f"{row} (busBW '2' is not a whole column)", [f"{row} (busBW '2' is not a whole column)"])


def test_rows_refused_above_those_kept_end_without_a_figure_and_each_is_listed():
    """A row of a larger size refused: the smaller rows kept give no figure, the message names the first refused
    row, and status lists each refused row with why."""
    log = """# Collective test starting: all_reduce_perf
# Using devices
#  Rank  0 Group  0 Pid    100 on     node-a device  0 [0x0f] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid    101 on     node-a device  1 [0x15] NVIDIA H100 80GB HBM3
#  Rank  2 Group  0 Pid    102 on     node-a device  2 [0x51] NVIDIA H100 80GB HBM3
#  Rank  3 Group  0 Pid    103 on     node-a device  3 [0x54] NVIDIA H100 80GB HBM3
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
     1048576        262144     float     sum      -1    40.00   26.21   39.32      0    40.10   26.15   39.22      0
    16777216       4194304     float     sum      -1    335.5   50.00   50.00      0    335.0   50.08   75.12      0
   134217728      33554432     float     sum      -1   1342.2  100.00  100.00      0   1342.0  100.01  150.02      0
"""
    status = final_status(log)
    rows = [line.strip() for line in log.splitlines()[-2:]]
    whys = [f"busbw {bus} is not algbw {bus} x 1.5 (all_reduce on 4 ranks)" for bus in ("50.00", "100.00")]
    assert (cond(status, "Complete")["reason"], cond(status, "Complete")["message"]) == (
        "RowsRefused", "Job succeeded but no figure can be taken from its log: a table refused rows of sizes above "
        f"the largest it kept (1048576 B), so its peak is not known; the first refused row, {rows[0]!r}: {whys[0]}; "
        "check spec.logProfileRef")
    assert status["results"] == []
    assert (status["refusedRows"], status["firstRefusedRow"], status["refusedRowLines"]) == (
        2, f"{rows[0]} ({whys[0]})", [f"{row} ({why})" for row, why in zip(rows, whys)])


def test_the_builtin_profile_reads_the_older_table():
    status = final_status(OLD_TABLE)
    assert status["results"] == [{"sizeBytes": 8589934592, "algBW": "67.40", "busBW": "123.56", "samples": 1}]
    assert cond(status, "Complete")["reason"] == "JobSucceeded" and "refusedRows" not in status


def test_the_asked_test_is_measured_and_the_others_named():
    status = final_status(TWO_TESTS, "alltoall")
    assert status["results"] == [{"sizeBytes": 1048576, "algBW": "20.97", "busBW": "10.49", "samples": 1}]
    assert (status["measuredTest"], status["otherTests"]) == ("alltoall", ["sendrecv"])
    missing = final_status(TWO_TESTS, "all_reduce")
    assert (cond(missing, "Complete")["reason"], cond(missing, "Complete")["message"]) == (
        "NoDataCollected", "Job succeeded but its log holds no all_reduce test (it holds alltoall, sendrecv); "
        "check spec.testType")
    assert cond(final_status(TWO_TESTS, ""), "Complete")["message"] == (
        "Job succeeded but its log holds several tests (alltoall, sendrecv); check spec.testType")


def test_a_final_read_that_fails_waits_within_the_grace_then_gives_up():
    w = world(measurement(), job("Succeeded"), pod("Succeeded"), log=tier.LogRead(error="reading log of pod p: boom"))
    step = tier.reconcile(w)
    status = written(step)
    assert (cond(status, "Measuring")["reason"], cond(status, "Measuring")["message"]) == (
        "FinalReadPending", "Job succeeded; waiting to read its complete log")
    assert [(a.reason, a.message) for a in step.step.actions if isinstance(a, Event)] == [
        ("FinalReadPending", "Final log read failed, retrying: reading log of pod p: boom")]
    assert step.step.requeue_after == 15.0 and not step.step.terminal
    pending = copy.deepcopy(status)
    pending["conditions"][0]["lastTransitionTime"] = "2026-03-02T10:02:00Z"  # three minutes ago: past 2m grace
    late = written(tier.reconcile(world(measurement(pending), job("Succeeded"), pod("Succeeded"),
                                        log=tier.LogRead(error="reading log of pod p: boom"))))
    assert (cond(late, "Complete")["reason"], cond(late, "Complete")["message"]) == (
        "LogsUnavailable",
        "Job succeeded but its log could not be read in full (reading log of pod p: boom); no bandwidth data was parsed")


def test_a_pod_that_has_not_finished_is_retried_as_a_pending_final_read():
    step = tier.reconcile(world(measurement(), job("Succeeded"), pod("Running")))
    assert step.read is None
    assert [a.message for a in step.step.actions if isinstance(a, Event)] == [
        "Final log read failed, retrying: pod j-workload-launcher-0-0 has not finished (Running)"]


def test_a_failed_job_is_complete_with_what_one_read_gives():
    status = written(tier.reconcile(world(measurement(), job("Failed"), pod("Failed"), log=tier.LogRead(LOG))))
    assert cond(status, "Complete")["reason"] == "JobFailed" and cond(status, "Complete")["message"] == "Job failed"
    assert len(status["results"]) == 4


def test_the_job_gone_or_replaced():
    gone = written(tier.reconcile(world(measurement(), None)))
    assert (cond(gone, "Complete")["reason"], cond(gone, "Complete")["message"]) == (
        "NoDataCollected", "Referenced Job no longer exists; no bandwidth data was parsed")
    with_rows = measurement({"results": [{"sizeBytes": 8, "algBW": "1.00", "busBW": "1.00", "samples": 1}]})
    replaced = written(tier.reconcile(world(with_rows, job(uid="another"), pod())))
    assert (cond(replaced, "Complete")["reason"], cond(replaced, "Complete")["message"]) == (
        "LogsUnavailable", "Referenced Job no longer exists; results are provisional and are not used for threshold "
                           "evaluation")


def test_a_missing_profile_is_reported_and_retried():
    w = tier.BandwidthWorld(measurement(), job(), [pod()], None, 'logprofiles.nvcre.nvidia.com "x" not found', now=NOW)
    step = tier.reconcile(w)
    status = written(step)
    message = ('LogProfile "nccl-bandwidth" could not be resolved: getting LogProfile nccl-bandwidth: '
               'logprofiles.nvcre.nvidia.com "x" not found')
    assert (cond(status, "Measuring")["status"], cond(status, "Measuring")["reason"],
            cond(status, "Measuring")["message"]) == ("False", "LogProfileNotFound", message)
    assert not step.step.terminal and step.step.requeue_after == 30.0


def test_a_complete_measurement_is_left_alone():
    done = measurement({"conditions": [{"type": "Complete", "status": "True", "reason": "JobSucceeded"}]})
    step = tier.reconcile(world(done, job("Succeeded"), pod("Succeeded")))
    assert step.step.terminal and step.step.actions == [] and step.read is None


def test_the_final_read_records_whether_mnnvl_was_on_and_whose_fabric_was_not_ready():
    log = (DATA / "nccl_logs" / "t28-v2.19.1-gb200-fabric-not-ready-mnnvl-off.log").read_text()
    status = final_status(log)
    assert (status["transport"], status["mnnvl"], status["fabricNotReady"]) == (
        ["IB"], False, ["gb200-r03-t02 (fabric state 1: not started)"])
    on = final_status((DATA / "nccl_logs" / "t21-v2.19.1-gb200-mnnvl-nvls.log").read_text())
    assert on["mnnvl"] is True and "fabricNotReady" not in on
    assert "mnnvl" not in final_status(OLD_TABLE)   # no NCCL INFO lines: nothing said
