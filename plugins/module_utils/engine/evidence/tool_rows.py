"""What the readers of users' GEMM tools share (gpu-burn, gpu-fryer, mamf-finder, the CUTLASS profiler): the count
of refused lines, and the rows judged into dcgm_verdict.judge's shape.

Each reader is strict about the lines of its tool's format: a line that starts like one of them but does not read
as one is refused (counted, the first kept with its number), never guessed; lines of no form of the tool (banners,
a shell's noise) are left alone. A log with no line of the format at all is UnreadableOutput.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from .dcgm_verdict import Options
from .rows import RANK, Row, sorted_rows, worst


@dataclass
class Refused:
    """Lines refused so far: how many, and the first one's number, reason and text."""

    count: int = 0
    first: str = ""

    def add(self, number: int, why: str, line: str) -> None:
        self.count += 1
        self.first = self.first or f"line {number}: {why}: {line.strip()[:160]!r}"

    def reason(self) -> Optional[str]:  # noqa: UP045 - ansible-test's pylint reads module_utils as older Python
        return f"{self.count} line(s) refused (first: {self.first})" if self.count else None


def joined(*reasons: Optional[str]) -> Optional[str]:  # noqa: UP045 - as above
    """The reasons a read is partial, "; "-joined; None when there is none."""
    return "; ".join(r for r in reasons if r) or None


def judged(rows: list[Row], partial: Optional[str], options: Options, tool: str,  # noqa: UP045 - as above
           verdict_metric: str) -> dict[str, Any]:
    """The rows judged: each GPU's verdict is the worst of its rows; a GPU without a `verdict_metric` row (and
    not failing otherwise) lacks evidence (the tool never said whether it works: warn, fail with skip_is_failure);
    a GPU expected but absent is missing (a row of its own, fail); a partial read makes the node's outcome at
    least what lacking evidence gives. Rows without a GPU index (the tool does not print one) judge the node."""
    lacking_outcome = "fail" if options.skip_is_failure else "warn"
    known = sorted({r.index for r in rows if r.index is not None})
    missing = [g for g in range(options.expected_gpus or 0) if g not in known] if options.expected_gpus else []
    rows = rows + [Row(options.node, "gpu", g, None, None, "presence", None, None, "fail",
                       f"GPU {g} is missing from the {tool} output: {options.expected_gpus} GPUs expected, "
                       f"{len(known)} reported ({', '.join(map(str, known)) or 'none'})") for g in missing]
    gpus: list[dict[str, Any]] = []
    for gpu in sorted({*known, *missing}):
        own = [r for r in rows if r.index == gpu]
        # A GPU already failing has its verdict; lacking evidence is for the rest.
        lacking = gpu not in missing and not any(r.metric == verdict_metric or r.outcome == "fail" for r in own)
        outcomes = [r.outcome for r in own if r.outcome != "skip"] + ([lacking_outcome] if lacking else [])
        gpus.append({"index": gpu, "uuid": next((r.uuid for r in own if r.uuid), None),
                     "outcome": worst(outcomes) or "pass", "lacking_evidence": lacking, "missing": gpu in missing,
                     "failures": [{"test": r.test, "outcome": r.outcome, "detail": r.detail} for r in sorted_rows(own)
                                  if RANK[r.outcome] >= RANK["warn"]]})
    node_rows = [r.outcome for r in rows if r.index is None and r.outcome != "skip"]
    node_outcomes = [g["outcome"] for g in gpus] + node_rows + ([lacking_outcome] if partial else [])
    return {"rows": [r.to_dict() for r in sorted_rows(rows)], "gpus": gpus,
            "outcome": worst(node_outcomes) or lacking_outcome,
            "lacking_evidence": [g["index"] for g in gpus if g["lacking_evidence"]], "missing": missing,
            "runtime_error": None, "partial": partial}
