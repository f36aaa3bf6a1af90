"""Training logs as evidence rows: one per step, read by the GoodputMeasurement's own reader.

Every step line the profile's trainingStep pattern reads (logs/goodput_log.py, every step kept rather than the
measurement's last 100) gives a `step_time` row (seconds; no value where the line prints no time) and, where the
line prints TFLOP/s per GPU, a `tflops` row; `index` is the step number, `sample` how many times the step was
printed before (a run restored from a checkpoint prints steps again), `time` the line's own stamp or the
kubelet's. Warmup steps are rows too, marked in `detail`. The thresholds judge the run's averages elsewhere (the
job tier), so every row is `pass`. The reader refuses no line (a line its pattern does not match is not a step);
a log whose last line is cut short (no line end: the stream stopped mid-write) is a partial read.
"""
from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ..logs.goodput_log import GoodputParser
from .rows import Row, sorted_rows

TEST = "training"


def rows(log: str, *, job: dict[str, Any], node: str, group: str,
         profile: dict[str, Any]) -> tuple[list[Row], str | None]:
    """The rows of `log` read with the LogProfile `profile`, in the fixed order, and why the read is partial (None
    when whole). The rows' node is `group` (the run's steps are the group's), else `node`. LogProfileError when
    the profile's patterns do not compile. `job`: as nccl_rows.rows."""
    del job  # the signature every row source shares (sources.py)
    window = GoodputParser.from_profile(profile).parse(log, keep=None)
    name = group or node
    seen: dict[int, int] = {}
    out: list[Row] = []
    for step in window.steps:
        sample = seen.get(step.global_step, 0)
        seen[step.global_step] = sample + 1
        when = stamp(step.ts)
        warmup = "warmup step" if step.warmup else ""
        timing = step.step_timing if step.step_timing > 0 else None
        out.append(Row(name, "step", step.global_step, None, TEST, "step_time", timing, "s", "pass",
                       warmup if timing is not None else _joined(warmup, "the step line prints no step time"),
                       sample, when))
        if step.tflops > 0:
            out.append(Row(name, "step", step.global_step, None, TEST, "tflops", step.tflops, "TFLOP/s per GPU",
                           "pass", warmup, sample, when))
    return sorted_rows(out), _cut_short(log)


def stamp(when: datetime | None) -> str | None:
    """An aware time as RFC 3339 in UTC with microseconds (`2026-03-02T10:05:34.992501Z`: one width, so equal times
    give equal bytes), None for none."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ") if when is not None else None


def _joined(*parts: str) -> str:
    return "; ".join(part for part in parts if part)


def _cut_short(log: str) -> str | None:
    last = log.rsplit("\n", 1)[-1]
    if not last.strip():
        return None
    return f"the log ends mid-line ({last.strip()[:80]!r}): the stream stopped while the workload wrote"
