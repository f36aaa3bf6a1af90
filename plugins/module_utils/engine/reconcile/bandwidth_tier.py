"""One pass of NVCRE's BandwidthMeasurement controller (spec/measurements.md §2.3–§2.6), without finalizers.

`reconcile(world)` is called once; when it needs a pod's log it answers with the `Read` to make, and the
driver calls it again with the log in `world.log`. The throttle and the read anchor are the only memory
(NVCRE keeps them in memory too); after a restart the driver starts them afresh, which can only add a
provisional sample: the final read replaces every provisional result with the whole log, read once.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ..api.actions import Event, Step
from ..api.objects import condition, is_true, meta, parse_duration, parse_time, set_condition, timestamp
from ..api.vocabulary import (
    ANNOTATION_JOB_UID,
    COMPLETE,
    FAILED,
    FINAL_READ_PENDING,
    IN_PROGRESS,
    JOB_FAILED,
    JOB_RUNNING,
    JOB_SUCCEEDED,
    LOG_PROFILE_NOT_FOUND,
    LOGS_UNAVAILABLE,
    MEASURING,
    NO_DATA_COLLECTED,
    ROWS_REFUSED,
    SUCCEEDED,
)
from ..logs.log_lines import LogProfileError
from ..logs.nccl_log import NcclParse, NcclParser, aggregate, merge_transports
from ..status import job_measurements
from . import measurement_pods
from .measurement import (
    MAX_LOOKBACK,
    REQUEUE,
    LogRead,
    Read,
    container,
    profile_ref,
    sample_interval,
    since,
    status_write,
    terminal_anchor,
)

FINAL_READ_GRACE = timedelta(minutes=2)
NO_ROWS = "no bandwidth data was parsed"
PROVISIONAL = "results are provisional and are not used for threshold evaluation"
REFUSED_SHOWN = 20                # refused rows written out in status.refusedRowLines (refusedRows counts all)

Obj = dict[str, Any]


@dataclass
class BandwidthWorld:
    measurement: Obj
    job: Obj | None                   # the Job named by spec.jobRef; None when it does not exist
    pods: list[Obj] = field(default_factory=list)  # the Job's pods
    profile: Obj | None = None
    profile_error: str = ""           # why the LogProfile could not be read (the API's words)
    now: datetime = field(kw_only=True)
    last_sample: datetime | None = None   # the driver's memory: when this run last sampled it
    last_fetch: datetime | None = None    # and up to when it has read the log
    log: LogRead | None = None


@dataclass
class BandwidthStep:
    step: Step = field(default_factory=Step)
    read: Read | None = None          # read this, then call reconcile again with world.log
    sampled: bool = False             # a running sample was taken: last_sample = now
    fetched: bool = False             # the read anchor moves to now


def reconcile(world: BandwidthWorld) -> BandwidthStep:
    m, job = world.measurement, world.job
    if is_true(m, COMPLETE):
        return BandwidthStep(Step(terminal=True))
    if job is None or not job_measurements.measures(m, job):
        return _gone(world)
    if is_true(job, SUCCEEDED):
        return _final(world, succeeded=True)
    if is_true(job, FAILED):
        return _final(world, succeeded=False)
    if is_true(job, IN_PROGRESS):
        return _running(world)
    return BandwidthStep(Step(requeue_after=REQUEUE))


def _parser(world: BandwidthWorld) -> tuple[NcclParser | None, str]:
    """The profile's parser, or why there is none (the spec's texts)."""
    ref = profile_ref(world.measurement)
    if world.profile is None:
        return None, f"getting LogProfile {ref}: {world.profile_error or 'not found'}"
    try:
        return NcclParser.from_profile(world.profile), ""
    except LogProfileError as exc:
        return None, f"creating parser from LogProfile {ref}: {exc}"


def _pod(world: BandwidthWorld) -> tuple[Obj | None, str]:
    """The pod whose log is read, or why there is none."""
    job = world.job or {}
    workload = ((job.get("status") or {}).get("workloadRef") or {}).get("name")
    if not workload:
        return None, f"job {meta(job).get('name')} has no workload reference"
    pod = measurement_pods.bandwidth_pod(world.pods, workload, world.profile or {})
    if pod is None:
        return None, measurement_pods.no_pod_message(meta(job).get("namespace", ""), workload, world.profile or {})
    return pod, ""


# ---------------------------------------------------------------- running (§2.4)

def _running(world: BandwidthWorld) -> BandwidthStep:
    m, now = world.measurement, world.now
    interval = sample_interval(m)
    if world.last_sample is not None and now - world.last_sample < interval:
        return BandwidthStep(Step(requeue_after=(world.last_sample + interval - now).total_seconds()))
    parser, problem = _parser(world)
    if parser is None:
        message = f'LogProfile "{profile_ref(m)}" could not be resolved: {problem}'
        status = copy.deepcopy(m.get("status") or {})
        set_condition(status, MEASURING, False, LOG_PROFILE_NOT_FOUND, message, meta(m).get("generation"), now)
        actions: list[Any] = [Event(m, "Warning", LOG_PROFILE_NOT_FOUND, message)] + status_write(m, status)
        return BandwidthStep(Step(actions, requeue_after=interval.total_seconds()))
    pod, _why = _pod(world)
    if pod is None or (pod.get("status") or {}).get("phase") not in ("Running", "Succeeded"):
        return BandwidthStep(Step(requeue_after=REQUEUE))
    name = container(world.profile)
    if measurement_pods.container_waiting(pod, name):
        return BandwidthStep(Step(requeue_after=interval.total_seconds()))
    if world.log is None:
        start = world.last_fetch - timedelta(seconds=1) if world.last_fetch else parse_time(
            (pod.get("status") or {}).get("startTime"))
        return BandwidthStep(read=Read(meta(pod)["name"], name, since(start, now - MAX_LOOKBACK)))
    if world.log.error:
        return BandwidthStep(Step(requeue_after=interval.total_seconds()))
    parsed = parser.parse(world.log.text, _test_type(m))
    if not parsed.rows:
        # A restarted container may print its table later: keep the anchor so that window is read again.
        keep = measurement_pods.restart_count(pod, name) > 0
        return BandwidthStep(Step(requeue_after=interval.total_seconds()), fetched=not keep)
    status = copy.deepcopy(m.get("status") or {})
    status["results"] = aggregate(status.get("results") or [], parsed.rows)
    transports = merge_transports(status.get("transport") or [], parsed.transports)
    if transports:
        status["transport"] = transports
    status.setdefault("startTime", timestamp(now))
    set_condition(status, MEASURING, True, JOB_RUNNING, "Referenced Job is running, measurement in progress",
                  meta(m).get("generation"), now)
    return BandwidthStep(Step(status_write(m, status), requeue_after=interval.total_seconds()), sampled=True, fetched=True)


# ---------------------------------------------------------------- terminal (§2.5)

def _final_read(world: BandwidthWorld) -> tuple[Read | None, str]:
    """The final read to make, or why it cannot be made yet."""
    parser, problem = _parser(world)
    if parser is None:
        return None, problem
    pod, problem = _pod(world)
    if pod is None:
        return None, problem
    phase = (pod.get("status") or {}).get("phase", "")
    if phase not in ("Succeeded", "Failed"):
        return None, f"pod {meta(pod)['name']} has not finished ({phase})"
    return Read(meta(pod)["name"], container(world.profile), None), ""


def _final(world: BandwidthWorld, succeeded: bool) -> BandwidthStep:
    m, job, now = world.measurement, world.job or {}, world.now
    status = copy.deepcopy(m.get("status") or {})
    parsed: NcclParse | None = None
    error = ""
    retryable = True
    if world.log is None:
        read, error = _final_read(world)
        if read is not None:
            return BandwidthStep(read=read)
    elif world.log.error:
        error, retryable = world.log.error, world.log.retryable
    else:
        parser, error = _parser(world)
        parsed = parser.parse(world.log.text, _test_type(m)) if parser is not None else None
        if parsed is not None:
            _record_reading(status, parsed)
    anchor = terminal_anchor(job, now)
    if not succeeded:
        if parsed is not None and parsed.rows:
            status["results"] = aggregate([], parsed.rows)
        return _complete(m, status, JOB_FAILED, "Job failed", anchor, now)
    if parsed is not None:
        status["results"] = aggregate([], parsed.rows)
        if parsed.rows:
            return _complete(m, status, JOB_SUCCEEDED, "Job succeeded", anchor, now)
        if parsed.withheld:
            line, why = parsed.refused[0]
            return _complete(m, status, ROWS_REFUSED, f"Job succeeded but no figure can be taken from its log: "
                             f"{parsed.withheld}; the first refused row, {line.strip()!r}: {why}; check "
                             "spec.logProfileRef", anchor, now)
        if parsed.refused:
            line, why = parsed.refused[0]
            return _complete(m, status, ROWS_REFUSED, f"Job succeeded but none of the {len(parsed.refused)} result "
                             f"rows of its log could be trusted; the first, {line.strip()!r}: {why}; check "
                             "spec.logProfileRef", anchor, now)
        if parsed.others:
            held, asked = ", ".join(parsed.others), _test_type(m)
            told = f"no {asked} test (it holds {held})" if asked else f"several tests ({held})"
            return _complete(m, status, NO_DATA_COLLECTED, f"Job succeeded but its log holds {told}; check "
                             "spec.testType", anchor, now)
        return _complete(m, status, NO_DATA_COLLECTED,
                         "Job succeeded but no bandwidth data was parsed; check spec.logProfileRef", anchor, now)
    pending = condition(m, MEASURING) or {}
    pending_since = parse_time(pending.get("lastTransitionTime")) if pending.get("reason") == FINAL_READ_PENDING else None
    grace = max(FINAL_READ_GRACE, _measurement_timeout(job))
    if retryable and (pending_since is None or now - pending_since < grace):
        remaining = grace - (now - pending_since) if pending_since else grace
        if pending_since is None:
            set_condition(status, MEASURING, False, FINAL_READ_PENDING,
                          "Job succeeded; waiting to read its complete log", meta(m).get("generation"), now)
        actions: list[Any] = [Event(m, "Warning", FINAL_READ_PENDING, f"Final log read failed, retrying: {error}")]
        return BandwidthStep(Step(actions + status_write(m, status),
                                  requeue_after=min(remaining.total_seconds(), REQUEUE)))
    tail = PROVISIONAL if status.get("results") else NO_ROWS
    return _complete(m, status, LOGS_UNAVAILABLE,
                     f"Job succeeded but its log could not be read in full ({error}); {tail}", anchor, now)


def _test_type(m: Obj) -> str:
    return str((m.get("spec") or {}).get("testType") or "")


def _record_reading(status: Obj, parsed: NcclParse) -> None:
    """What the final read saw beyond NVCRE's fields (ours): the transports, whether MNNVL was on and the hosts
    whose GPU fabric was not ready, the test measured, the other tests of the log, the rows refused (how many, the
    first, and each of the first REFUSED_SHOWN with why), and the tables' warnings."""
    transports = merge_transports(status.get("transport") or [], parsed.transports)
    if transports:
        status["transport"] = transports
    if parsed.mnnvl.enabled is not None:
        status["mnnvl"] = parsed.mnnvl.enabled
    for key, value in (("fabricNotReady", parsed.mnnvl.not_ready_hosts()), ("measuredTest", parsed.measured),
                       ("otherTests", parsed.others), ("refusedRows", len(parsed.refused)),
                       ("tableWarnings", parsed.warnings)):
        if value:
            status[key] = value
    if parsed.refused:
        told = [f"{line.strip()} ({why})" for line, why in parsed.refused]
        status["firstRefusedRow"], status["refusedRowLines"] = told[0], told[:REFUSED_SHOWN]


def _gone(world: BandwidthWorld) -> BandwidthStep:
    m, now = world.measurement, world.now
    status = copy.deepcopy(m.get("status") or {})
    never_saw = (not (meta(m).get("annotations") or {}).get(ANNOTATION_JOB_UID) and not status.get("startTime")
                 and not status.get("results") and condition(m, MEASURING) is None)
    if never_saw:
        return BandwidthStep(Step(requeue_after=REQUEUE))  # Referenced Job does not exist yet
    if status.get("results"):
        reason, tail = LOGS_UNAVAILABLE, PROVISIONAL
    else:
        reason, tail = NO_DATA_COLLECTED, NO_ROWS
    return _complete(m, status, reason, f"Referenced Job no longer exists; {tail}", now, now)


def _measurement_timeout(job: Obj) -> timedelta:
    text = (job.get("spec") or {}).get("measurementTimeout")
    return parse_duration(text) if text else timedelta(0)


def _complete(m: Obj, status: Obj, reason: str, message: str, anchor: datetime, now: datetime) -> BandwidthStep:
    """The one terminal write: completionTime at the anchor, Measuring=False and Complete=True alike."""
    status["completionTime"] = timestamp(anchor)
    generation = meta(m).get("generation")
    set_condition(status, MEASURING, False, reason, message, generation, now)
    set_condition(status, COMPLETE, True, reason, message, generation, now)
    return BandwidthStep(Step(status_write(m, status), terminal=True))
