"""The Job controller's threshold check (spec/measurements.md §4.2–§4.3): the measured values of a Succeeded
Job against its `spec.thresholds`, written once as the `ValidationFailed` condition.

It runs on the pass that sees the workload succeed and on every later pass until the condition exists; after
that the verdict never changes. A value still missing waits (15 s at a time) until `measurementTimeout`
after the Job succeeded, so no Job ever waits forever for a verdict.
"""
from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from ..api.objects import condition, go_duration, is_true, meta, parse_duration, parse_time, set_condition
from ..api.vocabulary import (
    ANNOTATION_EXPECTED_NETWORK,
    BANDWIDTH_MEASUREMENT,
    COMPLETE,
    GOODPUT_MEASUREMENT,
    MEASUREMENT_TIMEOUT,
    MEASUREMENT_UNREADABLE,
    ROWS_REFUSED,
    SUCCEEDED,
    THRESHOLD_VIOLATION,
    THRESHOLDS_MET,
    TRANSPORT_MISMATCH,
    UNKNOWN_THRESHOLD_KEY,
    VALIDATION_FAILED,
)
from ..plan import network
from ..spec import thresholds
from ..status import job_measurements
from . import attribution

DEFAULT_MEASUREMENT_TIMEOUT = timedelta(minutes=5)
REQUEUE = 15.0  # WorkloadRequeueInterval
GOODPUT_FIELDS = (("goodputRatio", "result"), ("avgTFLOPsPerGPU", "avgTFLOPSPerGPU"), ("avgStepTimeSec", "avgStepTimeSec"))

Obj = dict[str, Any]


def awaiting(job: Obj) -> bool:
    """Succeeded, with thresholds, and no verdict yet."""
    return is_true(job, SUCCEEDED) and bool((job.get("spec") or {}).get("thresholds")) \
        and condition(job, VALIDATION_FAILED) is None


def measured(job: Obj, measurements: list[Obj]) -> dict[str, float]:
    """The values the thresholds can see: a final bandwidth measurement of this very Job (Complete with
    JobSucceeded and results), and any Complete goodput measurement's figures above zero."""
    values: dict[str, float] = {}
    for bm in job_measurements.of_job(measurements, job, BANDWIDTH_MEASUREMENT):
        results = (bm.get("status") or {}).get("results") or []
        if job_measurements.measures(bm, job) and job_measurements.final(bm) and results:
            values["busBandwidthGBps"] = max(float(r.get("busBW") or 0) for r in results)
            values["algBandwidthGBps"] = max(float(r.get("algBW") or 0) for r in results)
            break
    for gm in job_measurements.of_job(measurements, job, GOODPUT_MEASUREMENT):
        if not is_true(gm, COMPLETE):
            continue
        status = gm.get("status") or {}
        for key, field in GOODPUT_FIELDS:
            try:
                value = float(status.get(field) or 0)
            except ValueError:
                continue
            if value > 0:
                values[key] = value
        break
    return values


def measurement_timeout(job: Obj) -> timedelta:
    text = (job.get("spec") or {}).get("measurementTimeout")
    timeout = parse_duration(text) if text else timedelta(0)
    return timeout if timeout > timedelta(0) else DEFAULT_MEASUREMENT_TIMEOUT


def check(job: Obj, status: Obj, measurements: list[Obj], pods: list[Obj], now: datetime) -> float | None:
    """Set `ValidationFailed` in `status` (the Job's new status, Succeeded already set) when a verdict is
    reached, blaming the group's nodes when it fails; else the seconds to wait before looking again."""
    wanted: dict[str, str] = (job.get("spec") or {}).get("thresholds") or {}
    if not wanted:
        return None
    verdict = (_wrong_network(job, measurements) or _verdict(job, status, wanted, measured(job, measurements), now)
               or _unreadable(job, wanted, measurements))
    if verdict is None:
        return REQUEUE
    failed, reason, message = verdict
    set_condition(status, VALIDATION_FAILED, failed, reason, message, meta(job).get("generation"), now)
    if failed and not status.get("failedNodes"):
        nodes = attribution.group_nodes(job, pods)
        blame = TRANSPORT_MISMATCH if reason == TRANSPORT_MISMATCH else THRESHOLD_VIOLATION
        status["failedNodes"] = attribution.merge_failed_nodes([], attribution.failed_entries(nodes, blame, message))
        if not status["failedNodes"]:
            del status["failedNodes"]
    return None


def _own_bandwidth(job: Obj, measurements: list[Obj]) -> list[Obj]:
    """The bandwidth measurements of this very Job (not of an earlier Job of the same name)."""
    return [bm for bm in job_measurements.of_job(measurements, job, BANDWIDTH_MEASUREMENT)
            if job_measurements.measures(bm, job)]


def _wrong_network(job: Obj, measurements: list[Obj]) -> tuple[bool, str, str] | None:
    """Ours: a group whose final bandwidth log shows another network than its platform's, or no MNNVL inside a
    GB200/GB300 clique, fails whatever its figures (a fallback may still pass a low threshold); the check waits
    for that final read."""
    wanted = network.parse((meta(job).get("annotations") or {}).get(ANNOTATION_EXPECTED_NETWORK))
    if not wanted:
        return None
    for bm in _own_bandwidth(job, measurements):
        if job_measurements.final(bm):
            why = next((w for f in wanted if (w := network.mismatch(f, bm.get("status") or {}))), None)
            return (True, TRANSPORT_MISMATCH, why) if why else None
    return None


def _unreadable(job: Obj, wanted: dict[str, str], measurements: list[Obj]) -> tuple[bool, str, str] | None:
    """Ours: a bandwidth threshold whose measurement refused every row of the log fails now, naming the row,
    rather than after `measurementTimeout` as data that never came."""
    if not {"busBandwidthGBps", "algBandwidthGBps"} & set(wanted):
        return None
    for bm in _own_bandwidth(job, measurements):
        done = condition(bm, COMPLETE) or {}
        if done.get("status") == "True" and done.get("reason") == ROWS_REFUSED:
            return True, MEASUREMENT_UNREADABLE, f"BandwidthMeasurement {meta(bm).get('name')}: {done.get('message')}"
    return None


def _verdict(job: Obj, status: Obj, wanted: dict[str, str], values: dict[str, float], now: datetime
             ) -> tuple[bool, str, str] | None:
    unknown = thresholds.unknown_keys_message(wanted)
    if unknown:
        return True, UNKNOWN_THRESHOLD_KEY, unknown
    missing = sorted(k for k in wanted if k not in values)
    if missing:
        since = parse_time((condition({"status": status}, SUCCEEDED) or {}).get("lastTransitionTime")) or now
        timeout = measurement_timeout(job)
        if now - since <= timeout:
            return None
        return (True, MEASUREMENT_TIMEOUT, f"Measurement data not available within "
                f"{go_duration(int(timeout.total_seconds()))} for keys: [{' '.join(missing)}]")
    problem = thresholds.evaluate_all(wanted, values)
    if problem is not None:
        return True, problem[0], problem[1]
    return False, THRESHOLDS_MET, "All performance thresholds satisfied"
