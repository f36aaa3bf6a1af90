"""Diagnose's bandwidth gate (spec/measurements.md §6.1): did a finished group of the round pass?

A Failed group failed. A Succeeded group passes, unless the Workflow has a `busBandwidthGBps` threshold: then
its Job's own BandwidthMeasurement decides. Until that measurement is final the verdict is *pending* (the
round waits); a measurement that ended without data, or an expression that cannot be evaluated, fails the
group (fail closed); a peak bus bandwidth the expression rejects fails it too.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..api.objects import condition, is_true
from ..api.vocabulary import (
    BANDWIDTH_MEASUREMENT,
    COMPLETE,
    FAILED,
    JOB_SUCCEEDED,
    SUCCEEDED,
    THRESHOLD_VIOLATED,
    THRESHOLD_VIOLATION,
)
from ..spec import thresholds
from ..status import job_measurements

KEY = "busBandwidthGBps"

Obj = dict[str, Any]


@dataclass(frozen=True)
class Verdict:
    passed: bool
    pending: bool = False
    reason: str = ""       # why a Succeeded group was failed by the gate (for its nodes' failed-nodes entries)
    message: str = ""


PASSED = Verdict(True)
PENDING = Verdict(False, pending=True)


def verdict(group: Obj, job: Obj | None, measurements: list[Obj], expression: str) -> Verdict:
    """The gate's verdict on one terminal group; `expression` is the Workflow's busBandwidthGBps threshold or ""."""
    if group.get("phase") == FAILED:
        return Verdict(False)
    if group.get("phase") != SUCCEEDED or not expression or not group.get("jobRef"):
        return PASSED
    if job is None:
        return PENDING
    mine = [m for m in job_measurements.of_job(measurements, job, BANDWIDTH_MEASUREMENT)
            if job_measurements.measures(m, job)]
    if not mine or not is_true(mine[0], COMPLETE):
        return PENDING
    done = condition(mine[0], COMPLETE) or {}
    if done.get("reason") != JOB_SUCCEEDED:
        return Verdict(False, reason=done.get("reason", ""), message=done.get("message", ""))
    results = (mine[0].get("status") or {}).get("results") or []
    if not results:
        return Verdict(False, reason=done.get("reason", ""), message="no bandwidth results to evaluate")
    try:
        peak = max(float(r.get("busBW") or 0) for r in results)
    except ValueError:
        return Verdict(False, reason=THRESHOLD_VIOLATION, message="bandwidth results are not numbers")
    problem = thresholds.evaluate_all({KEY: expression}, {KEY: peak})
    if problem is None:
        return PASSED
    return Verdict(False, reason=THRESHOLD_VIOLATION if problem[0] == THRESHOLD_VIOLATED else problem[0],
                   message=problem[1])
