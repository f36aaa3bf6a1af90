"""Diagnose's bandwidth gate (spec/measurements.md §6.1): pending until the Job's own measurement is final,
fail closed on a measurement without data or an expression that cannot be evaluated, else the threshold."""
from __future__ import annotations

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import diagnose_gate

JOB = {"metadata": {"name": "wf-screen-0-iter-1", "uid": "job-uid"}}
SUCCEEDED = {"name": "screen-0", "phase": "Succeeded", "jobRef": {"name": "wf-screen-0-iter-1"}}


def measurement(reason: str | None = "JobSucceeded", results: list | None = None, uid: str | None = "job-uid",
                kind: str = "BandwidthMeasurement") -> dict:
    meta: dict = {"name": "wf-screen-0-iter-1-bandwidth"}
    if uid is not None:
        meta["annotations"] = {"nvcre.nvidia.com/job-uid": uid}
    status: dict = {"results": [{"sizeBytes": 8, "algBW": "1.0", "busBW": "0.5"},
                                {"sizeBytes": 8589934592, "algBW": "451.80", "busBW": "847.12"}]
                    if results is None else results}
    if reason is not None:
        status["conditions"] = [{"type": "Complete", "status": "True", "reason": reason, "message": f"{reason} text"}]
    return {"kind": kind, "metadata": meta, "spec": {"jobRef": {"name": "wf-screen-0-iter-1"}}, "status": status}


@pytest.mark.parametrize("group, job, measurements, expression, expect", [
    # a failed group failed; without the threshold a succeeded one passed
    ({**SUCCEEDED, "phase": "Failed"}, JOB, [], "value >= 300.0", (False, False, "")),
    (SUCCEEDED, JOB, [], "", (True, False, "")),
    # pending: no measurement, no Job, an earlier same-named Job's measurement, not Complete, a goodput one only
    (SUCCEEDED, JOB, [], "value >= 300.0", (False, True, "")),
    (SUCCEEDED, None, [measurement()], "value >= 300.0", (False, True, "")),
    (SUCCEEDED, JOB, [measurement(uid="earlier-job")], "value >= 300.0", (False, True, "")),
    (SUCCEEDED, JOB, [measurement(reason=None)], "value >= 300.0", (False, True, "")),
    (SUCCEEDED, JOB, [measurement(kind="GoodputMeasurement")], "value >= 300.0", (False, True, "")),
    # fail closed: a measurement that ended without data, or without results
    (SUCCEEDED, JOB, [measurement("LogsUnavailable")], "value >= 300.0", (False, False, "LogsUnavailable")),
    (SUCCEEDED, JOB, [measurement("NoDataCollected")], "value >= 300.0", (False, False, "NoDataCollected")),
    (SUCCEEDED, JOB, [measurement(results=[])], "value >= 300.0", (False, False, "JobSucceeded")),
    # the peak bus bandwidth against the expression; a legacy measurement without the UID annotation counts
    (SUCCEEDED, JOB, [measurement()], "value >= 300.0", (True, False, "")),
    (SUCCEEDED, JOB, [measurement(uid=None)], "value >= 300.0", (True, False, "")),
    (SUCCEEDED, JOB, [measurement()], "value >= 900.0", (False, False, "ThresholdViolation")),
    (SUCCEEDED, JOB, [measurement()], "value >= 'fast'", (False, False, "InvalidThresholdExpression")),
])
def test_gate(group, job, measurements, expression, expect):
    verdict = diagnose_gate.verdict(group, job, measurements, expression)
    assert (verdict.passed, verdict.pending, verdict.reason) == expect


def test_a_rejected_peak_is_told_in_nvcre_words():
    verdict = diagnose_gate.verdict(SUCCEEDED, JOB, [measurement()], "value >= 900.0")
    assert verdict.message == 'Threshold "busBandwidthGBps" violated: measured 847.1200, expression: value >= 900.0'
