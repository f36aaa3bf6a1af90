"""Training logs as a GoodputMeasurement reads them (measurements.md §1.1.8, §1.2.2, §1.3).

One fetched window of log text becomes a `GoodputWindow`: the training steps (warmup flagged, logInterval
applied, the last 100 kept), the application start, checkpoints with their save time, a save still open at the
end, and the restore. The measurement pass merges windows into status (goodput.py holds the arithmetic).

Beyond NVCRE, for the progress bars of NeMo and Lightning: the `\\r`-separated updates of one kubelet line are
read one by one, a redraw of the step just read is not a new step, a log record printed right after a step
line's draw still counts, a counter printed as a float ("49.00", "2e+3") is that whole number, and a bar that
prints only tqdm's rate gives the step time: `41.36s/it` as `elapsedTime`, `2.05it/s` as the capture `stepRate`
(ours; its inverse), each used only when the line has no `stepTiming`.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .log_lines import LogProfileError, compile_regex, go_float, go_int, lines, parse_layout, split_timestamp

MAX_STEPS = 100
# The patterns this parser reads, in the order a profile is validated (the NCCL ones belong to nccl_log).
PATTERNS = ("trainingStep", "checkpointSave", "checkpointDone", "checkpointRestore", "checkpointLoaded",
            "applicationStart", "warmupStep")
_PER_SECOND = {"s": 1.0, "ms": 1e3, "us": 1e6}


@dataclass(frozen=True)
class Step:
    global_step: int
    step_timing: float
    """Seconds (elapsedTime when the profile has no stepTiming)."""
    elapsed: float
    """Seconds."""
    epoch: int
    loss: float
    tflops: float
    warmup: bool
    ts: datetime | None


@dataclass(frozen=True)
class Checkpoint:
    step: int
    path: str
    save_duration: float
    """Seconds the save held training up."""
    ts: datetime | None


@dataclass(frozen=True)
class PendingSave:
    """A save line whose done line has not come yet."""

    step: int
    path: str
    ts: datetime | None


@dataclass(frozen=True)
class Restore:
    path: str
    step: int
    ts: datetime | None


@dataclass
class GoodputWindow:
    steps: list[Step] = field(default_factory=list)
    """The last MAX_STEPS kept steps (or as many as `parse` was asked to keep), in log order."""
    first_step: Step | None = None
    last_step: Step | None = None
    application_start_time: datetime | None = None
    checkpoints: list[Checkpoint] = field(default_factory=list)
    last_checkpoint: Checkpoint | None = None
    pending_save: PendingSave | None = None
    restore: Restore | None = None
    last_log_timestamp: datetime | None = None
    """The kubelet time of the window's last line."""
    log_interval: int = 0
    warmup_base: int | None = None
    """The step warmup counts from at the end of the window."""


@dataclass(frozen=True)
class _Pattern:
    regex: re.Pattern[str]
    units: dict[str, str]

    def seconds(self, match: re.Match[str], name: str) -> float:
        """A duration capture in seconds (units s, ms, us; anything else is seconds)."""
        return _float(match, name) / _PER_SECOND.get(self.units.get(name, "s"), 1.0)


def _text(match: re.Match[str], name: str) -> str:
    return (match.group(name) or "") if name in match.re.groupindex else ""


def _float(match: re.Match[str], name: str) -> float:
    return go_float(_text(match, name)) or 0.0


def _int(match: re.Match[str], name: str) -> int:
    text = _text(match, name).strip()
    value = go_int(text)
    if value is None:
        # A progress bar prints its counters as floats ("49.00", "2e+3"); a whole float is that count.
        number = go_float(text)
        value = int(number) if number is not None and number.is_integer() else 0
    return value


def _per_iteration(rate: float) -> float:
    """Seconds per step of a progress bar's rate (tqdm's `2.05it/s`, ours: the `stepRate` capture); 0 without one."""
    return 1.0 / rate if rate > 0 else 0.0


def updates(text: str) -> Iterator[tuple[datetime | None, str]]:
    """Each line's kubelet time and the text after it, split at carriage returns: a progress bar redraws
    itself with `\\r`, so one kubelet line holds every update drawn until its newline."""
    for raw in lines(text):
        prefix, line = split_timestamp(raw)
        for update in line.split("\r"):
            yield prefix, update


class _Reader:
    """One window's pass over the lines, in the order §1.3 tries the patterns."""

    def __init__(self, parser: GoodputParser, warmup_base: int | None, pending_save: PendingSave | None,
                 keep: int | None) -> None:
        self.parser = parser
        self.keep = keep
        self.out = GoodputWindow(log_interval=parser.log_interval, warmup_base=warmup_base, pending_save=pending_save)
        self.warmup_pending = warmup_base is None
        self.save_index: int | None = None  # the checkpoint the last save line completed, until its done line
        self.numbered = parser.numbered
        self.drawn: int | None = None  # the step the last step line showed, until a restore

    def when(self, match: re.Match[str], prefix: datetime | None) -> datetime | None:
        captured = _text(match, "timestamp")
        parsed = parse_layout(captured, self.parser.layout) if captured else None
        return parsed or prefix

    def arm_warmup(self) -> None:
        self.warmup_pending, self.out.warmup_base = True, None

    def read(self, prefix: datetime | None, line: str) -> None:
        """One update of a line: the application start falls through, then a step or a lifecycle event."""
        if prefix is not None:
            self.out.last_log_timestamp = prefix
        patterns = self.parser.patterns
        start = patterns.get("applicationStart")
        match = start.regex.search(line) if start else None
        if match and self.out.application_start_time is None:
            when = self.when(match, prefix)
            if when is not None:
                self.out.application_start_time = when
                self.arm_warmup()
        step = patterns.get("trainingStep")
        match = step.regex.search(line) if step else None
        if step and match:
            self.step(step, match, self.when(match, prefix), line)
            # A log record printed right after a progress bar's draw shares its line.
            self.event(prefix, line[match.end():])
        else:
            self.event(prefix, line)

    def event(self, prefix: datetime | None, line: str) -> None:
        """The first lifecycle pattern that matches, in §1.3's order."""
        for name, handle in (("checkpointDone", self.done), ("checkpointSave", self.save),
                             ("checkpointRestore", self.restore), ("checkpointLoaded", self.loaded)):
            pattern = self.parser.patterns.get(name)
            match = pattern.regex.search(line) if pattern else None
            if pattern and match:
                handle(pattern, match, self.when(match, prefix), line)
                return

    def step(self, pattern: _Pattern, match: re.Match[str], when: datetime | None, line: str) -> None:
        global_step = _int(match, "globalStep") or _int(match, "iteration")
        if self.numbered and global_step == self.drawn:
            return  # a redraw of the step just read (the progress bar draws each step more than once)
        self.drawn = global_step
        interval = self.parser.log_interval
        if interval > 1 and global_step % interval != 0:
            return
        if self.warmup_pending:
            self.warmup_pending, self.out.warmup_base = False, global_step
        warmup_line = self.parser.patterns.get("warmupStep")
        warmup = bool(warmup_line and warmup_line.regex.search(line)) or in_warmup(
            global_step, self.out.warmup_base, self.parser.warmup_steps)
        elapsed = pattern.seconds(match, "elapsedTime") or _per_iteration(_float(match, "stepRate"))
        step = Step(global_step=global_step, step_timing=pattern.seconds(match, "stepTiming") or elapsed,
                    elapsed=elapsed, epoch=_int(match, "epoch"), loss=_float(match, "loss"),
                    tflops=_float(match, "tflops"), warmup=warmup, ts=when)
        self.out.steps.append(step)
        if self.keep is not None and len(self.out.steps) > self.keep:
            del self.out.steps[0]
        self.out.first_step = self.out.first_step or step
        self.out.last_step = step

    def add_checkpoint(self, checkpoint: Checkpoint) -> None:
        self.out.checkpoints.append(checkpoint)
        self.out.last_checkpoint = checkpoint

    def fill_path(self, index: int, path: str) -> None:
        complete = self.out.checkpoints[index]
        if not complete.path and path:
            filled = Checkpoint(complete.step, path, complete.save_duration, complete.ts)
            self.out.checkpoints[index] = filled
            if self.out.last_checkpoint is complete:
                self.out.last_checkpoint = filled

    def done(self, pattern: _Pattern, match: re.Match[str], when: datetime | None, line: str) -> None:
        step, path = _int(match, "step"), _text(match, "path")
        recorded = [i for i, checkpoint in enumerate(self.out.checkpoints) if step and checkpoint.step == step]
        pending = self.out.pending_save
        if recorded and self.save_index is None and (pending is None or pending.step != step):
            # A later note of a save already counted (an async save finalised after Megatron's "scheduled" or
            # NeMo's "Global Checkpoint Save" line): not a second checkpoint, and no answer to a save still open.
            self.fill_path(recorded[-1], path)
            return
        self.out.pending_save = None
        index, self.save_index = self.save_index, None
        if index is not None:
            # The save line carried its duration: the done line only completes a missing path.
            self.fill_path(index, path)
            return
        duration = pattern.seconds(match, "saveDuration")
        if not _text(match, "saveDuration") and pending is not None and pending.ts and when:
            duration = (when - pending.ts).total_seconds()
        self.add_checkpoint(Checkpoint(step or (pending.step if pending else 0),
                                       path or (pending.path if pending else ""), duration, when))

    def save(self, pattern: _Pattern, match: re.Match[str], when: datetime | None, line: str) -> None:
        step, path = _int(match, "step"), _text(match, "path")
        if _text(match, "saveDuration"):
            self.out.pending_save, self.save_index = None, len(self.out.checkpoints)
            self.add_checkpoint(Checkpoint(step, path, pattern.seconds(match, "saveDuration"), when))
        else:
            self.out.pending_save, self.save_index = PendingSave(step, path, when), None

    def restore(self, pattern: _Pattern, match: re.Match[str], when: datetime | None, line: str) -> None:
        if self.out.restore is None:
            self.out.restore = Restore(_text(match, "path"), _int(match, "step"), when)
        self.arm_warmup()
        self.drawn = None  # a restarted run may print the last step again

    def loaded(self, pattern: _Pattern, match: re.Match[str], when: datetime | None, line: str) -> None:
        restore = self.out.restore
        if restore is not None:
            self.out.restore = Restore(_text(match, "path") or restore.path, _int(match, "step") or restore.step,
                                       restore.ts)


def in_warmup(global_step: int, base: int | None, warmup_steps: int) -> bool:
    """The warmupSteps rule: a step within warmupSteps of the base (the first step after a start or restore)."""
    return warmup_steps > 0 and base is not None and global_step - base < warmup_steps


@dataclass(frozen=True)
class GoodputParser:
    patterns: dict[str, _Pattern]
    layout: str
    warmup_steps: int = 0
    log_interval: int = 0

    @property
    def numbered(self) -> bool:
        """Whether step lines name their step, so a redraw of one can be told from the next."""
        step = self.patterns.get("trainingStep")
        return step is not None and bool({"globalStep", "iteration"} & set(step.regex.groupindex))

    @classmethod
    def from_profile(cls, profile: dict[str, Any]) -> GoodputParser:
        """Compile a LogProfile object: every present pattern's regex, and its example must match it."""
        spec = profile.get("spec") or {}
        compiled: dict[str, _Pattern] = {}
        for name in PATTERNS:
            pattern = (spec.get("patterns") or {}).get(name)
            if not pattern:
                continue
            source = pattern.get("regex", "")
            regex = compile_regex(source, f"pattern {name}: invalid regex")
            example = pattern.get("example")
            if example and not regex.search(example):
                raise LogProfileError(f"pattern {name}: example does not match regex\n  regex:   {source}\n  "
                                      f"example: {example}")
            compiled[name] = _Pattern(regex, dict(pattern.get("units") or {}))
        return cls(compiled, (spec.get("timestamp") or {}).get("layout", ""), spec.get("warmupSteps") or 0,
                   spec.get("logInterval") or 0)

    def parse(self, text: str, warmup_base: int | None = None,
              pending_save: PendingSave | None = None, keep: int | None = MAX_STEPS) -> GoodputWindow:
        """One window. `warmup_base` is the step warmup counts from when the window has no start or restore
        (the persisted warmupBaseStep); None lets the window's first kept step be it. `pending_save` is the
        previous window's open save, so a done line in this one is timed from it. `keep`: the last steps kept
        (None: every step, as the evidence rows want them)."""
        reader = _Reader(self, warmup_base, pending_save, keep)
        for prefix, line in updates(text):
            reader.read(prefix, line)
        return reader.out
