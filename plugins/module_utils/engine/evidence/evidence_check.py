"""A saved tool output read offline as the certification would read it (ours: the evidence_check module).

A user who pasted `dcgmi diag` output, or saved its `--json`, sees the rows and verdicts a certification would
draw from it, before any run: which GPU failed which test with DCGM's message, which GPU lacked evidence, which
one was missing. More formats join FORMATS with the next issues.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .dcgm_json import read_json
from .dcgm_results import DiagReading
from .dcgm_text import read_text
from .dcgm_verdict import Options, judge

FORMATS: dict[str, Callable[[str], DiagReading]] = {
    "dcgm-diag-json": read_json,
    "dcgm-diag-text": read_text,
}


def check_evidence(text: str, fmt: str, options: Options) -> dict[str, Any]:
    """The reading of `text` in format `fmt` (a key of FORMATS), judged with `options`. UnreadableOutput names the
    first line or field that the format does not print."""
    return {"format": fmt, **judge(FORMATS[fmt](text), options)}
