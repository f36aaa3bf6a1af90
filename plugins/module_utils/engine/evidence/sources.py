"""Which reader a Job's workload output gets, and that output read into evidence rows (the cluster path).

The reader is decided from the Job's spec alone, so a user's catalog entry or a WorkloadRun that runs `dcgmi diag`
gets the same reading as ours: its trainer's `command` and `args` are matched against SOURCES, the first match
wins. `dcgmi diag` with `--json`/`-j` is read as `dcgm-diag-json`, without as the table (`dcgm-diag-text`).
A Job that asks for a measurement is read by that measurement's reader instead (reconcile/evidence_measured.py:
nccl-tests and training rows, which judge nothing).

An output that cannot be read (an empty log, text that is not the format) is a partial read: no rows are made up
for it, and the reason is kept, so the seal tells partial from zero.
"""
from __future__ import annotations

import json
import posixpath
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Optional

from . import golden
from .dcgm_results import DiagReading, UnreadableOutput
from .dcgm_verdict import Options, judge
from .evidence_check import FORMATS
from .gemm_verdict import GemmOptions, GemmParameters, is_harness, judge_text
from .golden import GoldenOptions, GoldenParameters
from .rows import Row, sorted_rows

Obj = dict[str, Any]
JSON_FLAGS = ("--json", "-j")


def _dcgm_diag(words: list[str]) -> Optional[str]:  # noqa: UP045 - ansible-test's pylint reads module_utils as older Python
    """`dcgmi diag ...` (also inside a shell's `-c` string): json or text by its flags; None when not DCGM's."""
    tokens = [t for w in words for t in w.split()]
    for i, token in enumerate(tokens[:-1]):
        if posixpath.basename(token) == "dcgmi" and tokens[i + 1] == "diag":
            rest = tokens[i + 2:]
            return "dcgm-diag-json" if any(t in JSON_FLAGS for t in rest) else "dcgm-diag-text"
    return None


# `dcgmi diag -r`'s values that run DCGM's deployment checks alone (level 1 and its name), which test no GPU.
DEPLOYMENT_ONLY = ("1", "short", "software")
RUN_FLAGS = ("-r", "--run")


def dcgm_tests_gpus(words: list[str]) -> Optional[bool]:  # noqa: UP045 - as above
    """Whether the `dcgmi diag` in `words` tests GPUs (`-r 2` and up, or named tests beyond the deployment
    checks), False for a deployment-only run, None when its `-r` is not found (the output then says)."""
    tokens = [t for w in words for t in w.split()]
    for i, token in enumerate(tokens):
        flag, equals, value = token.partition("=")
        if flag in RUN_FLAGS and (equals or i + 1 < len(tokens)):
            return any(t.strip().lower() not in DEPLOYMENT_ONLY for t in (value if equals else tokens[i + 1]).split(","))
    return None


GEMM_BURN_IN = "gemm-burn-in"
NODE_DRIFT = "node-drift"
COLLECTOR = "node_drift.py"
SNAPSHOT = "snapshot"   # the metric of the row that keeps a node-drift node's whole snapshot (JSON in its value)


def _gemm_burn_in(words: list[str]) -> Optional[str]:  # noqa: UP045 - as above
    """The GEMM burn-in harness (gemm_burn_in.py), read in its own strict format."""
    return GEMM_BURN_IN if is_harness(words) else None


def _node_drift(words: list[str]) -> Optional[str]:  # noqa: UP045 - as above
    """The node-drift collector (node_drift.py), its `node-drift/1` output judged against the golden profile."""
    return NODE_DRIFT if any(posixpath.basename(t) == COLLECTOR for w in words for t in w.split()) else None


# The dispatch table: a rule reads the trainer's words (command, then args) and names a format, or None.
SOURCES: tuple[Callable[[list[str]], Optional[str]], ...] = (  # noqa: UP045 - as above
    _dcgm_diag, _gemm_burn_in, _node_drift)


def _judge(fmt: str, log: str, options: Options, parameters: Any) -> Obj:
    """The judged reading of one log: the burn-in and node-drift readers take their node's parameters
    (reconcile/burn_in_parameters, node_drift_parameters); the others only the options."""
    if fmt == GEMM_BURN_IN:
        return judge_text(log, GemmOptions.of(options, parameters or GemmParameters()))
    if fmt == NODE_DRIFT:
        verdict = golden.judge_text(log, GoldenOptions.of(options, parameters or GoldenParameters()))
        kept = Row(options.node, "gpu", None, None, golden.TEST, SNAPSHOT,
                   json.dumps(verdict["snapshot"], sort_keys=True, separators=(",", ":")), None, "pass",
                   "the node's configuration as collected (node-drift/1): what a later run compares with")
        return {**verdict, "rows": [*verdict["rows"], kept.to_dict()]}
    return READERS[fmt](log, options)


def _judged(read: Callable[[str], DiagReading]) -> Callable[[str, Options], Obj]:
    def reader(text: str, options: Options) -> Obj:
        return judge(read(text), options)
    return reader


# A format's reader: (log text, options) -> the judged reading (dcgm_verdict.judge's shape).
READERS: dict[str, Callable[[str, Options], Obj]] = {fmt: _judged(read) for fmt, read in FORMATS.items()}


def trainer_words(job: Obj) -> list[str]:
    """The trainer's command and args of a Job's TrainJob workload ([] when it has none)."""
    trainer = ((((job.get("spec") or {}).get("workload") or {}).get("trainJob") or {}).get("trainer")) or {}
    return [str(w) for w in [*(trainer.get("command") or []), *(trainer.get("args") or [])]]


def reader_of(job: Obj) -> Optional[str]:  # noqa: UP045 - as above
    """The format a Job's workload output is read in, None when nothing reads it."""
    words = trainer_words(job)
    for rule in SOURCES:
        fmt = rule(words)
        if fmt is not None:
            return fmt
    return None


@dataclass(frozen=True)
class Labels:
    """Where rows come from on the cluster path (Row.workflow/iteration/job/attempt)."""

    workflow: str
    iteration: int
    job: str
    attempt: int


@dataclass
class NodeReading:
    """One pod's output read: its rows, the verdict (judge's dict; None for a partial read) and why it is partial."""

    node: str
    rows: list[Row] = field(default_factory=list)
    verdict: Optional[Obj] = None  # noqa: UP045 - as above
    partial: Optional[str] = None  # noqa: UP045 - as above


def rows_of(fmt: str, log: Optional[str], node: str, expected_gpus: Optional[int],  # noqa: UP045 - as above
            skip_is_failure: bool, labels: Labels, pod: str = "",
            gpu_tests: Optional[bool] = None,  # noqa: UP045 - as above
            parameters: Any = None) -> NodeReading:
    """The rows and verdict of one pod's log (`log` None: it could not be read), labelled with `labels`;
    `gpu_tests`: whether the run tests GPUs (dcgm_tests_gpus of the Job's words); `parameters`: the burn-in's or
    the node-drift's for this node (reconcile/burn_in_parameters, node_drift_parameters). An empty or unreadable
    output is partial: no rows, a reason, no verdict (never a pass); a burn-in log that lost lines is partial too,
    with its verdict."""
    where = f"pod {pod} on node {node}" if pod else f"node {node}"
    if log is None:
        return NodeReading(node, partial=f"{where}: its log could not be read")
    if not log.strip():
        return NodeReading(node, partial=f"{where}: the log is empty, no {fmt} output to read")
    options = Options(node, expected_gpus, skip_is_failure, gpu_tests)
    try:
        verdict = _judge(fmt, log, options, parameters)
    except UnreadableOutput as err:
        return NodeReading(node, partial=f"{where}: not {fmt} output: {err}")
    extra = {"workflow": labels.workflow, "iteration": labels.iteration, "job": labels.job,
             "attempt": labels.attempt}
    rows = sorted_rows([Row(**{**row, **extra}) for row in verdict["rows"]])
    partial = verdict.get("partial")
    return NodeReading(node, rows, verdict, f"{where}: {partial}" if partial else None)
