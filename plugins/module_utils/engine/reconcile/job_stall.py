"""The Job controller's stall detection and checkpoint restart (spec/measurements.md §5), from the Job's
GoodputMeasurement.

A stall is judged from what the measurement last saw: before the first non-warmup step, the time since the
application started against a startup budget; after it, the time since the last step against a multiple of
the average step time. Either way two sample intervals of slack cover a measurement that has not sampled
yet. A stalled, failed or vanished workload is restarted from its checkpoint when the Job allows it.
"""
from __future__ import annotations

import copy
from datetime import datetime
from typing import Any

from ..api.objects import parse_duration, parse_time, timestamp
from ..api.vocabulary import GOODPUT_MEASUREMENT
from ..models.job import DEFAULT_STARTUP_STALL_TIMEOUT_SECONDS
from ..status import job_measurements
from .measurement import sample_interval

STARTUP_STALL = "Workload stalled: no training step observed within startup timeout"
TRAINING_STALL = "Workload stalled: no training step within the configured threshold"
DEFAULT_RESTART_DELAY = 30.0
# The measurement fields a restart clears, so the new run's stall clock starts afresh.
RESET_FIELDS = ("lastStepTimestamp", "avgStepTimeSec", "applicationStartTime")

Obj = dict[str, Any]


def goodput(job: Obj, measurements: list[Obj]) -> Obj | None:
    """The Job's GoodputMeasurement (the first by name whose jobRef names it)."""
    return next(iter(job_measurements.of_job(measurements, job, GOODPUT_MEASUREMENT)), None)


def stalled(job: Obj, measurements: list[Obj], workload_start: datetime | None, now: datetime) -> str:
    """The stall message, or "" when the workload is not stalled (or stall detection is off: it needs
    spec.stallMultiplier and a GoodputMeasurement). `workload_start` is this pass's workloadStartTime, which
    may not be persisted yet. Time before status.schedulingResumedTime was unschedulable and is not charged."""
    spec = job.get("spec") or {}
    multiplier = int(spec.get("stallMultiplier") or 0)
    gm = goodput(job, measurements)
    if multiplier < 1 or gm is None:
        return ""
    status = gm.get("status") or {}
    slack = 2 * int(sample_interval(gm).total_seconds())
    resumed = parse_time((job.get("status") or {}).get("schedulingResumedTime"))
    last_step = parse_time(status.get("lastStepTimestamp"))
    if last_step is None or not status.get("avgStepTimeSec"):
        anchor = parse_time(status.get("applicationStartTime")) or parse_time(status.get("startTime"))
        if anchor is None:
            return ""
        anchor = max(t for t in (anchor, workload_start, resumed) if t is not None)
        budget = int(spec.get("startupStallTimeoutSeconds") or DEFAULT_STARTUP_STALL_TIMEOUT_SECONDS) + slack
        return STARTUP_STALL if (now - anchor).total_seconds() > budget else ""
    try:
        average = float(status["avgStepTimeSec"])
    except ValueError:
        return ""
    if average <= 0:
        return ""
    anchor = max(last_step, resumed) if resumed else last_step
    threshold = multiplier * average * max(int(status.get("logInterval") or 0), 1) + slack
    return TRAINING_STALL if (now - anchor).total_seconds() > threshold else ""


def can_restart(job: Obj, measurements: list[Obj]) -> bool:
    """spec.checkpoint set, restarts left (maxRestarts, default 0) and a checkpoint some measurement saw saved."""
    checkpoint = (job.get("spec") or {}).get("checkpoint")
    if checkpoint is None:
        return False
    if int((job.get("status") or {}).get("restartCount") or 0) >= int(checkpoint.get("maxRestarts") or 0):
        return False
    return any(int((gm.get("status") or {}).get("lastCheckpointStep") or 0) > 0
               for gm in job_measurements.of_job(measurements, job, GOODPUT_MEASUREMENT))


def restart_message(count: int, job: Obj) -> str:
    maximum = int(((job.get("spec") or {}).get("checkpoint") or {}).get("maxRestarts") or 0)
    return f"Restarting workload from checkpoint (restart {count}/{maximum})"


def restart_delay(job: Obj) -> float:
    """Seconds before the fresh workload: two of the Job's goodput sample intervals, else 30."""
    text = ((job.get("spec") or {}).get("goodputMeasurement") or {}).get("sampleInterval")
    return 2 * parse_duration(text).total_seconds() if text else DEFAULT_RESTART_DELAY


def reset(gm: Obj, now: datetime) -> Obj:
    """The measurement's status after a restart: no last step, average or application start, and its
    startTime now (the new run's startup budget counts from here)."""
    status = copy.deepcopy(gm.get("status") or {})
    for key in RESET_FIELDS:
        status.pop(key, None)
    status["startTime"] = timestamp(now)
    return status
