"""One pass of NVCRE's GoodputMeasurement controller (spec/measurements.md §3.2–§3.6), without finalizers.

`reconcile(world)` is called once; when it needs logs it answers with the `Read`s to make (worker-0, and
the last worker for a `Multi` profile), and the driver calls it again with them in `world.logs`.

Everything the goodput arithmetic carries from pass to pass is read back from the object's status each
pass (§3.5), and times are kept at the API's second precision, so a run killed mid-measurement and started
again computes the same values. Only three things live in the driver's memory, as NVCRE keeps them in its
own: the throttle, the log anchor (the last log time read) and a checkpoint save whose done line has not
come yet. Losing them costs nothing but a longer window: every figure a re-read window could count twice is
guarded by a watermark in status (lastCheckpointStep, lastNonWarmupStep, the training start).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from ..api.actions import Action, Event, Step
from ..api.objects import is_true, meta, parse_time, set_condition, timestamp
from ..api.vocabulary import (
    COMPLETE,
    FAILED,
    IN_PROGRESS,
    JOB_FAILED,
    JOB_RUNNING,
    JOB_SUCCEEDED,
    LOG_PROFILE_NOT_FOUND,
    MEASURING,
    NO_DATA_COLLECTED,
    SUCCEEDED,
    WORKLOAD_RESTARTED,
)
from ..logs.goodput import (
    accumulate_non_warmup,
    avg_step_time,
    avg_tflops,
    fmt6,
    goodput,
    last_step_time,
    reflag_warmup,
)
from ..logs.goodput_log import GoodputParser, GoodputWindow, PendingSave
from ..logs.log_lines import LogProfileError
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

# The sums of the goodput formula (§3.2): t_rm, t_ch, t_re, t_save.
RESUME, LOST_WORK, RESCHEDULE, SAVE = "resumeTimeSec", "lostWorkTimeSec", "rescheduleTimeSec", "checkpointSaveTimeSec"
RUNNING_MESSAGE = "Referenced Job is running, measurement in progress"

Obj = dict[str, Any]


@dataclass(frozen=True)
class GoodputMemory:
    """What the driver keeps per measurement for the length of a run (NVCRE keeps it in memory too)."""

    last_sample: datetime | None = None
    log_anchor: datetime | None = None
    """The last log time read: the next window starts a second before it."""
    pending_save: PendingSave | None = None
    """A save line of worker-0 whose done line is still to come."""


@dataclass
class GoodputWorld:
    measurement: Obj
    job: Obj | None                   # the Job named by spec.jobRef; None when it does not exist
    pods: list[Obj] = field(default_factory=list)  # the Job's pods
    profile: Obj | None = None
    profile_error: str = ""           # why the LogProfile could not be read (the API's words)
    now: datetime = field(kw_only=True)
    memory: GoodputMemory = field(default_factory=GoodputMemory)
    logs: dict[str, LogRead] | None = None  # pod name -> what was read, once the pass asked for `reads`


@dataclass
class GoodputStep:
    step: Step = field(default_factory=Step)
    reads: list[Read] = field(default_factory=list)  # read these, then call reconcile again with world.logs
    memory: GoodputMemory | None = None              # the driver's memory after this pass (None: unchanged)


def reconcile(world: GoodputWorld) -> GoodputStep:
    m, job = world.measurement, world.job
    if not ((m.get("spec") or {}).get("jobRef") or {}).get("name") or is_true(m, COMPLETE):
        return GoodputStep(Step(terminal=True))
    interval = sample_interval(m).total_seconds()
    if job is None:
        return GoodputStep(Step(requeue_after=interval))  # never completes: the Job may yet appear
    if is_true(job, SUCCEEDED):
        return _final(world, succeeded=True)
    if is_true(job, FAILED):
        return _final(world, succeeded=False)
    if is_true(job, IN_PROGRESS):
        return _running(world)
    return GoodputStep(Step(requeue_after=interval))


def _parser(world: GoodputWorld) -> tuple[GoodputParser | None, str]:
    """The profile's parser, or why there is none (the spec's texts)."""
    if world.profile is None:
        return None, f"failed to get LogProfile {profile_ref(world.measurement)}: {world.profile_error or 'not found'}"
    try:
        return GoodputParser.from_profile(world.profile), ""
    except LogProfileError as exc:
        return None, str(exc)


def _workload(job: Obj) -> str:
    return ((job.get("status") or {}).get("workloadRef") or {}).get("name") or ""


def _workers(world: GoodputWorld) -> tuple[Obj | None, Obj | None]:
    """(worker-0, the last worker to read too): the last worker only for a Multi profile when it is Running."""
    first, last = measurement_pods.goodput_pods(world.pods, _workload(world.job or {}))
    strategy = (((world.profile or {}).get("spec") or {}).get("workerStrategy") or {}).get("type")
    if strategy != "Multi" or last is None or _phase(last) != "Running":
        last = None
    return first, last


def _phase(pod: Obj) -> str:
    return (pod.get("status") or {}).get("phase", "")


# ---------------------------------------------------------------- status numbers

def _num(status: Obj, key: str) -> float:
    """A six-decimal status figure as a number (absent or unreadable is 0)."""
    try:
        return float(status.get(key) or 0)
    except ValueError:
        return 0.0


def _add(status: Obj, key: str, seconds: float) -> None:
    status[key] = fmt6(_num(status, key) + seconds)


def _time(status: Obj, key: str) -> datetime | None:
    return parse_time(status.get(key))


def _training_started(status: Obj) -> bool:
    """Training of the current run has been seen. NVCRE recovers this from startTime, which its first sample
    stamps before any step; the first step's warmupBaseStep says it exactly, and a pending interruption
    means the run it belonged to has ended."""
    return status.get("warmupBaseStep") is not None and not status.get("pendingInterruption")


def _trained(status: Obj) -> bool:
    """A training step has been seen: only then is there a goodput to compute. (startTime alone is not enough:
    the first sample stamps it before any step, and a log the profile does not match must end in
    NoDataCollected, not in a perfect ratio.)"""
    return status.get("currentStep") is not None


def _checkpoint_time(status: Obj) -> datetime | None:
    """lastCheckpointTime, else the one the pending interruption recorded (§3.5)."""
    return _time(status, "lastCheckpointTime") or parse_time(
        (status.get("pendingInterruption") or {}).get("tCheckpoint"))


def _recompute(status: Obj, t_w: float) -> None:
    """t_w and the goodput ratio (§3.2), every sum written out."""
    status["trainingTimeSec"] = fmt6(t_w)
    for key in (RESUME, LOST_WORK, RESCHEDULE, SAVE):
        status[key] = fmt6(_num(status, key))
    status["result"] = fmt6(goodput(t_w, _num(status, RESUME), _num(status, LOST_WORK), _num(status, RESCHEDULE),
                                    _num(status, SAVE)))


def _interrupt(status: Obj, reason: str, at: datetime) -> None:
    """Record an interruption at `at`: the work since the last checkpoint is lost (t_ch), the run's warmup and
    non-warmup sums are snapshotted, and its application start is forgotten. The next run's first step
    completes it (`_start`)."""
    checkpoint_time = _checkpoint_time(status)
    lost = max((at - checkpoint_time).total_seconds(), 0.0) if checkpoint_time else 0.0
    pending: Obj = {"tInterrupt": timestamp(at), "checkpointStep": int(status.get("lastCheckpointStep") or 0),
                    "lastStep": int(status.get("currentStep") or 0), "tCh": fmt6(lost), "reason": reason}
    if checkpoint_time:
        pending["tCheckpoint"] = timestamp(checkpoint_time)
    status["pendingInterruption"] = pending
    _add(status, LOST_WORK, lost)
    status["interruptionCount"] = int(status.get("interruptionCount") or 0) + 1
    status["priorWarmupTimeSec"] = fmt6(_num(status, "warmupTimeSec"))
    status["priorNonWarmupTimeSec"] = fmt6(_num(status, "nonWarmupTimeSec"))
    status.pop("applicationStartTime", None)


def _restarted(status: Obj, now: datetime) -> None:
    """The workload was restarted (§3.4 item 2): interrupted when the application was last seen, and the
    stall clock's fields cleared for the new run."""
    _interrupt(status, WORKLOAD_RESTARTED, _time(status, "applicationStopTime") or now)
    status.pop("lastStepTimestamp", None)
    status.pop("avgStepTimeSec", None)


# ---------------------------------------------------------------- merging a window (§3.4 items 4-5, §3.6 item 1)

def _start(status: Obj, window: GoodputWindow, warmup_steps: int) -> None:
    """The first step of a run: the warmup base, the time to resume (from the application start on a fresh
    start; rescheduling and resume times when it completes an interruption) and the run's warmup time."""
    first = window.first_step
    if first is None:
        return
    status["warmupBaseStep"] = first.global_step
    app_start = _time(status, "applicationStartTime")
    pending = status.pop("pendingInterruption", None)
    if pending is not None:
        scheduled = app_start or first.ts
        interrupted = parse_time(pending.get("tInterrupt"))
        if scheduled is not None and interrupted is not None:
            _add(status, RESCHEDULE, max((scheduled - interrupted).total_seconds(), 0.0))
        if scheduled is not None and first.ts is not None:
            _add(status, RESUME, max((first.ts - scheduled).total_seconds(), 0.0))
        resumed_from = int(pending.get("checkpointStep") or 0)
        if resumed_from == 0:  # nothing was saved: the run starts over and the earlier sums go with it
            status["priorWarmupTimeSec"] = status["priorNonWarmupTimeSec"] = fmt6(0.0)
        status["nonWarmupTimeSec"] = fmt6(_num(status, "priorNonWarmupTimeSec"))
        status["lastNonWarmupStep"] = resumed_from
    elif app_start is not None and first.ts is not None:
        _add(status, RESUME, max((first.ts - app_start).total_seconds(), 0.0))
    if warmup_steps > 0:
        status["warmupTimeSec"] = fmt6(_num(status, "priorWarmupTimeSec") + first.step_timing)


def _merge(status: Obj, window: GoodputWindow, warmup_steps: int, seen_at: datetime, final: bool) -> None:
    """One window into status. `seen_at` is when the application was last seen alive if the window has a
    line (the pass's time, or the anchor for the final sample); `final` keeps the persisted step figures
    unless the window has newer steps (§3.6 item 1)."""
    started = _training_started(status)
    if window.last_log_timestamp is not None:
        status["applicationStopTime"] = timestamp(seen_at)
    last, persisted = window.last_step, _time(status, "lastStepTimestamp")
    newer = last is not None and (not final or persisted is None or last.global_step > int(status.get("highestStep") or 0)
                                  or (last.ts is not None and last.ts.replace(microsecond=0) > persisted))
    if last is not None:
        current = last.global_step
        status["currentStep"] = max(current, int(status.get("currentStep") or 0)) if final else current
        status["highestStep"] = max(current, int(status.get("highestStep") or 0))
    checkpoint = window.last_checkpoint
    if checkpoint is not None:
        if checkpoint.step > int(status.get("lastCheckpointStep") or 0) and checkpoint.save_duration > 0:
            _add(status, SAVE, checkpoint.save_duration)
        status["lastCheckpointStep"] = checkpoint.step
        if checkpoint.ts is not None:
            status["lastCheckpointTime"] = timestamp(checkpoint.ts)
    if not started:
        if window.application_start_time is not None:
            status["applicationStartTime"] = timestamp(window.application_start_time)
        _start(status, window, warmup_steps)
    if final and not status.get("startTime") and window.first_step is not None and window.first_step.ts is not None:
        status["startTime"] = timestamp(window.first_step.ts)
    if window.log_interval:
        status["logInterval"] = window.log_interval
    steps = reflag_warmup(window.steps, status.get("warmupBaseStep"), warmup_steps)
    if not steps:
        return
    if newer:
        step_time = last_step_time(steps)
        if step_time is not None:
            status["lastStepTimestamp"] = timestamp(step_time)
        for key, value in (("avgStepTimeSec", avg_step_time(steps)), ("avgTFLOPSPerGPU", avg_tflops(steps))):
            if value > 0:
                status[key] = fmt6(value)
    total, watermark = accumulate_non_warmup(_num(status, "nonWarmupTimeSec"), int(status.get("lastNonWarmupStep") or 0),
                                             steps, window.log_interval)
    status["nonWarmupTimeSec"], status["lastNonWarmupStep"] = fmt6(total), watermark


def _window(world: GoodputWorld, parser: GoodputParser, first: Obj, last: Obj | None, status: Obj
            ) -> GoodputWindow | None:
    """The window read: worker-0's alone, or merged with the last worker's (§1.5: lifecycle from worker-0,
    steps and the last log time from the last worker); the one that was read when the other failed; None
    when nothing was."""
    logs = world.logs or {}
    base = status.get("warmupBaseStep")
    lead = logs.get(meta(first)["name"])
    mine = parser.parse(lead.text, base, world.memory.pending_save) if lead and not lead.error else None
    tail = logs.get(meta(last)["name"]) if last is not None else None
    theirs = parser.parse(tail.text, base) if tail and not tail.error else None
    if mine is None or theirs is None:
        return mine or theirs
    return replace(mine, steps=theirs.steps, first_step=theirs.first_step, last_step=theirs.last_step,
                   last_log_timestamp=theirs.last_log_timestamp or mine.last_log_timestamp)


def _reads(world: GoodputWorld, first: Obj, last: Obj | None, start: datetime | None, floor: datetime) -> list[Read]:
    name = container(world.profile)
    window = since(start, floor)
    return [Read(meta(pod)["name"], name, window) for pod in (first, last) if pod is not None]


# ---------------------------------------------------------------- running (§3.4)

def _running(world: GoodputWorld) -> GoodputStep:
    m, job, now, memory = world.measurement, world.job or {}, world.now, world.memory
    interval = sample_interval(m)
    if memory.last_sample is not None and now - memory.last_sample < interval:
        return GoodputStep(Step(requeue_after=(memory.last_sample + interval - now).total_seconds()))
    status = copy.deepcopy(m.get("status") or {})
    parser, problem = _parser(world)
    if parser is None:
        message = f'LogProfile "{profile_ref(m)}" could not be resolved: {problem}'
        set_condition(status, MEASURING, False, LOG_PROFILE_NOT_FOUND, message, meta(m).get("generation"), now)
        actions: list[Action] = [Event(m, "Warning", LOG_PROFILE_NOT_FOUND, message)]
        return GoodputStep(Step(actions + status_write(m, status), requeue_after=interval.total_seconds()))
    if not _workload(job) and _training_started(status):
        # The Job tier deleted the workload to restart it from a checkpoint: the run ended here.
        _restarted(status, now)
        return GoodputStep(Step(status_write(m, status), requeue_after=interval.total_seconds()),
                           memory=GoodputMemory(last_sample=memory.last_sample))
    if int((job.get("status") or {}).get("restartCount") or 0) > int(status.get("interruptionCount") or 0):
        # A restart this measurement did not see happen (the new workload is already there).
        _restarted(status, now)
        memory = GoodputMemory(last_sample=memory.last_sample)
    first, last = _workers(world)
    if first is None or _phase(first) != "Running":
        return GoodputStep(Step(status_write(m, status), requeue_after=REQUEUE), memory=memory)
    if world.logs is None:
        start = (memory.log_anchor - timedelta(seconds=1) if memory.log_anchor
                 else parse_time((first.get("status") or {}).get("startTime")))
        return GoodputStep(reads=_reads(world, first, last, start, now - MAX_LOOKBACK))
    window = _window(world, parser, first, last, status)
    if window is None:
        return GoodputStep(Step(status_write(m, status), requeue_after=interval.total_seconds()), memory=memory)
    _merge(status, window, parser.warmup_steps, now, final=False)
    training_start = _time(status, "startTime") or (window.first_step.ts if window.first_step else None)
    if training_start is not None and _trained(status):
        _recompute(status, (now - training_start).total_seconds())
    status.setdefault("startTime", timestamp(now))
    set_condition(status, MEASURING, True, JOB_RUNNING, RUNNING_MESSAGE, meta(m).get("generation"), now)
    return GoodputStep(Step(status_write(m, status), requeue_after=interval.total_seconds()),
                       memory=GoodputMemory(now, window.last_log_timestamp or memory.log_anchor, window.pending_save))


# ---------------------------------------------------------------- terminal (§3.6)

def _until(window: GoodputWindow, anchor: datetime) -> GoodputWindow:
    """The window as it stood at the Job's end: entries stamped after the anchor dropped."""
    def before(when: datetime | None) -> bool:
        return when is None or when <= anchor

    steps = [step for step in window.steps if before(step.ts)]
    checkpoints = [checkpoint for checkpoint in window.checkpoints if before(checkpoint.ts)]
    pending = window.pending_save if window.pending_save and before(window.pending_save.ts) else None
    start = window.application_start_time if before(window.application_start_time) else None
    last_log = min(window.last_log_timestamp, anchor) if window.last_log_timestamp else None
    first = window.first_step if window.first_step is not None and before(window.first_step.ts) else None
    return replace(window, steps=steps, first_step=first, last_step=steps[-1] if steps else None, checkpoints=checkpoints,
                   last_checkpoint=checkpoints[-1] if checkpoints else None, pending_save=pending,
                   application_start_time=start, last_log_timestamp=last_log)


def _final_sample(world: GoodputWorld, status: Obj, anchor: datetime) -> list[Read]:
    """Merge the last window into `status` (no write of its own, throttle untouched), or the reads it needs
    first. Skipped without a workload, a profile, or a Running worker-0."""
    parser = _parser(world)[0]
    first, last = _workers(world)
    if parser is None or first is None or _phase(first) != "Running":
        return []
    if world.logs is None:
        pod_start = parse_time((first.get("status") or {}).get("startTime"))
        last_step = _time(status, "lastStepTimestamp")
        back = last_step - sample_interval(world.measurement) if last_step else None
        start = max((t for t in (pod_start, back) if t is not None), default=None)
        return _reads(world, first, last, start, anchor - MAX_LOOKBACK)
    window = _window(world, parser, first, last, status)
    if window is not None:
        _merge(status, _until(window, anchor), parser.warmup_steps, anchor, final=True)
    return []


def _final(world: GoodputWorld, succeeded: bool) -> GoodputStep:
    m, job, now = world.measurement, world.job or {}, world.now
    anchor = terminal_anchor(job, now)
    status = copy.deepcopy(m.get("status") or {})
    reads = _final_sample(world, status, anchor)
    if reads:
        return GoodputStep(reads=reads)
    start = _time(status, "startTime") if _trained(status) else None
    if succeeded:
        if start is not None:
            _recompute(status, (anchor - start).total_seconds() if anchor > start else _num(status, "trainingTimeSec"))
        if _num(status, "result") == 0:
            return _complete(m, status, NO_DATA_COLLECTED,
                             "Job succeeded but no goodput was computed; check spec.logProfileRef", anchor, now)
        return _complete(m, status, JOB_SUCCEEDED, "Referenced Job completed successfully", anchor, now)
    first, _last = _workers(world)
    stopped = _time(status, "applicationStopTime") or parse_time(
        measurement_pods.finished_at(first, container(world.profile)) if first else None) or anchor
    termination = min(stopped, anchor)
    _interrupt(status, JOB_FAILED, termination)
    if start is not None:
        _recompute(status, (termination - start).total_seconds())
    return _complete(m, status, JOB_FAILED, "Referenced Job failed", anchor, now)


def _complete(m: Obj, status: Obj, reason: str, message: str, anchor: datetime, now: datetime) -> GoodputStep:
    """setComplete: the computed status, completionTime at the anchor, Complete=True and Measuring=False."""
    status["completionTime"] = timestamp(anchor)
    generation = meta(m).get("generation")
    set_condition(status, COMPLETE, True, reason, message, generation, now)
    set_condition(status, MEASURING, False, reason, "Measurement completed", generation, now)
    return GoodputStep(Step(status_write(m, status), terminal=True))
