"""Goodput arithmetic (measurements.md §3.2, §3.4 item 5): the ratio, its number format, and what a window of
steps contributes to a GoodputMeasurement's status.

All pure: the measurement pass decides which window and which persisted values go in, and what is written.
"""
from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from .goodput_log import Step, in_warmup


def goodput(t_w: float, t_rm: float, t_ch: float, t_re: float, t_save: float) -> float:
    """(t_w − (t_rm + t_ch) − t_re − t_save) / (t_w − t_re): the share of wall time that was useful training;
    0 when the denominator is not positive or the numerator is negative."""
    denominator = t_w - t_re
    numerator = t_w - (t_rm + t_ch) - t_re - t_save
    if denominator <= 0 or numerator < 0:
        return 0.0
    return numerator / denominator


def fmt6(x: float) -> str:
    """A GoodputMeasurement status number: fixed six decimals."""
    return f"{x:.6f}"


def reflag_warmup(steps: list[Step], base: int | None, warmup_steps: int) -> list[Step]:
    """The window's steps with warmup decided by the persisted base (`step − base < warmupSteps`), since the
    window alone may not have seen the step warmup counts from. Unchanged without a base or warmup steps."""
    if base is None or warmup_steps <= 0:
        return list(steps)
    return [replace(step, warmup=in_warmup(step.global_step, base, warmup_steps)) for step in steps]


def last_step_time(steps: list[Step]) -> datetime | None:
    """status.lastStepTimestamp from a window: the last step's time, unless that step is warmup (a stall clock
    must not start on warmup)."""
    if not steps or steps[-1].warmup:
        return None
    return steps[-1].ts


def avg_step_time(steps: list[Step]) -> float:
    """status.avgStepTimeSec: mean step timing of the non-warmup steps that report one; without any, the mean of
    (time gap / step gap) between consecutive non-warmup steps. 0 when neither exists (the caller writes only > 0)."""
    trained = [step for step in steps if not step.warmup]
    timings = [step.step_timing for step in trained if step.step_timing > 0]
    if timings:
        return sum(timings) / len(timings)
    gaps = [(b.ts - a.ts).total_seconds() / max(b.global_step - a.global_step, 1)
            for a, b in zip(trained, trained[1:]) if a.ts is not None and b.ts is not None]
    return sum(gaps) / len(gaps) if gaps else 0.0


def avg_tflops(steps: list[Step]) -> float:
    """status.avgTFLOPSPerGPU: mean of the positive TFLOP/s values over all steps, warmup included; 0 without any."""
    values = [step.tflops for step in steps if step.tflops > 0]
    return sum(values) / len(values) if values else 0.0


def accumulate_non_warmup(total: float, watermark: int, steps: list[Step], log_interval: int) -> tuple[float, int]:
    """(nonWarmupTimeSec, lastNonWarmupStep) after a window: each non-warmup step above the watermark adds its
    timing × the steps it stands for (the gap to the previous step of the window, or logInterval for the
    window's first step and for a gap that is not positive); the watermark keeps a re-read step from counting
    twice."""
    previous: int | None = None
    for step in steps:
        delta = step.global_step - previous if previous is not None else 0
        if delta <= 0:
            delta = max(log_interval, 1)
        if not step.warmup and step.global_step > watermark:
            total += step.step_timing * delta
            watermark = step.global_step
        previous = step.global_step
    return total, watermark
