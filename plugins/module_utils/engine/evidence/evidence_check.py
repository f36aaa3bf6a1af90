"""A saved tool output read offline as the certification would read it (ours: the evidence_check module).

A user who pasted `dcgmi diag` output, or saved its `--json`, sees the rows and verdicts a certification would
draw from it, before any run: which GPU failed which test with DCGM's message, which GPU lacked evidence, which
one was missing. A saved nccl-tests or training log gives the rows of the measurement's own reader, with the
LogProfile it was read with, and why the read is partial (rows lost). A GEMM burn-in log (ours, or gpu-burn,
gpu-fryer, mamf-finder, the CUTLASS profiler) gives per-GPU rows and verdicts in the same shape (GEMM_FORMATS).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, Optional

from . import cutlass_profiler, gpu_burn, gpu_fryer, mamf_finder, nccl_rows, training_rows
from .dcgm_json import read_json
from .dcgm_results import DiagReading
from .dcgm_text import read_text
from .dcgm_verdict import Options, judge
from .gemm_verdict import GemmOptions, GemmParameters, judge_text
from .rows import worst

FORMATS: dict[str, Callable[[str], DiagReading]] = {
    "dcgm-diag-json": read_json,
    "dcgm-diag-text": read_text,
}
# The formats read with a LogProfile; the action names the profile (the built-in nccl-bandwidth, or the training
# profile that reads most of the log's lines).
LOG_FORMATS = ("nccl-tests", "training")
# The GEMM tools' outputs: (text, options) -> judge's shape with `partial`; gemm-burn-in (our harness) is judged by
# the burn-in's rules with the parameters the caller gives (check_gemm_evidence).
TOOL_FORMATS: dict[str, Callable[[str, Options], dict[str, Any]]] = {
    "gpu-burn": gpu_burn.read,
    "gpu-fryer": gpu_fryer.read,
    "mamf-finder": mamf_finder.read,
    "cutlass-profiler": cutlass_profiler.read,
}
GEMM_FORMATS = ("gemm-burn-in", *TOOL_FORMATS)


def check_evidence(text: str, fmt: str, options: Options) -> dict[str, Any]:
    """The reading of `text` in format `fmt` (a key of FORMATS), judged with `options`. UnreadableOutput names the
    first line or field that the format does not print."""
    return {"format": fmt, **judge(FORMATS[fmt](text), options), "partial": None}


def check_log_evidence(text: str, fmt: str, node: str, profile: dict[str, Any], test_type: str = "") -> dict[str, Any]:
    """The rows of a saved log in format `fmt` (one of LOG_FORMATS) read with `profile`, and the outcome: the worst
    of the rows, a warning at least when the read is partial, None without a row (no evidence is not a pass).
    LogProfileError when the profile cannot read the log's kind."""
    if fmt == "nccl-tests":
        rows, partial = nccl_rows.rows(text, job={}, node=node, group="", profile=profile, test_type=test_type)
    else:
        rows, partial = training_rows.rows(text, job={}, node=node, group="", profile=profile)
    outcomes = [r.outcome for r in rows] + (["warn"] if partial else [])
    return {"format": fmt, "profile": (profile.get("metadata") or {}).get("name", ""),
            "rows": [r.to_dict() for r in rows], "outcome": worst(outcomes), "partial": partial}


def check_gemm_evidence(text: str, fmt: str, options: Options,
                        parameters: Optional[GemmParameters] = None) -> dict[str, Any]:  # noqa: UP045 - module_utils
    """The reading of a GEMM tool's output (`fmt` one of GEMM_FORMATS) judged with `options`; our harness's log by
    the burn-in's rules with `parameters` (its floor, default power limit). UnreadableOutput names the first line
    the format does not print when none of its lines is there."""
    if fmt == "gemm-burn-in":
        out = judge_text(text, GemmOptions(options.node, options.expected_gpus, options.skip_is_failure,
                                           parameters or GemmParameters()))
    else:
        out = TOOL_FORMATS[fmt](text, options)
    return {"format": fmt, **out}
