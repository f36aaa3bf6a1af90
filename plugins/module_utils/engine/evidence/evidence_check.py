"""A saved tool output read offline as the certification would read it (ours: the evidence_check module).

A user who pasted `dcgmi diag` output, or saved its `--json`, sees the rows and verdicts a certification would
draw from it, before any run: which GPU failed which test with DCGM's message, which GPU lacked evidence, which
one was missing. A saved nccl-tests or training log gives the rows of the measurement's own reader, with the
LogProfile it was read with, and why the read is partial (rows lost). More formats join with the next issues.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import nccl_rows, training_rows
from .dcgm_json import read_json
from .dcgm_results import DiagReading
from .dcgm_text import read_text
from .dcgm_verdict import Options, judge
from .rows import worst

FORMATS: dict[str, Callable[[str], DiagReading]] = {
    "dcgm-diag-json": read_json,
    "dcgm-diag-text": read_text,
}
# The formats read with a LogProfile; the action names the profile (the built-in nccl-bandwidth, or the training
# profile that reads most of the log's lines).
LOG_FORMATS = ("nccl-tests", "training")


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
