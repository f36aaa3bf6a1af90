"""A category's per-GPU evidence (the CertReport's `evidence`) as the report writers show it: each GPU's kind (its
worst outcome, or lacking evidence, or missing), the GPUs that warned or failed with the test and the tool's
message, the evidence state as one line, and the failing GPUs of a whole report.

Pure: CertReport dicts in, plain values out. A category without `evidence` has no reader for its workload (None
here, never "nothing failed"); missing, partial and zero rows stay three different lines.
"""
from __future__ import annotations

from typing import Any

from .text import natural

Obj = dict[str, Any]
PASS, WARN, FAIL, SKIP = "pass", "warn", "fail", "skip"
# A GPU's kind: its outcome, unless no test says anything about it (lacking) or the tool's output lacks it (missing).
LACKING, MISSING = "lacking", "missing"
KINDS = (PASS, WARN, FAIL, SKIP, LACKING, MISSING)
LACKING_TEXT = "lacking evidence: no test passed, warned or failed on it"
VERBS = {FAIL: "failed", WARN: "warned"}
NOTES = {LACKING: " (lacking evidence)", MISSING: " (missing)"}


def evidence(category: Obj) -> Obj | None:
    """The category's evidence, or None when its workload has no evidence reader."""
    found = category.get("evidence")
    return found if isinstance(found, dict) else None


def gpus(category: Obj) -> list[Obj]:
    return list((evidence(category) or {}).get("gpus") or [])


def kind(gpu: Obj) -> str:
    """missing, lacking, or the GPU's outcome."""
    if gpu.get("missing"):
        return MISSING
    if gpu.get("lackingEvidence"):
        return LACKING
    return str(gpu.get("outcome") or SKIP)


def name(gpu: Obj) -> str:
    """`GPU 3 (GPU-…)`, as the failed node's message names it; `GPU 3` when DCGM gave no UUID."""
    return f"GPU {gpu['index']}" + (f" ({gpu['uuid']})" if gpu.get("uuid") else "")


def findings(gpu: Obj) -> list[Obj]:
    """What the GPU's verdict rests on, worst first: its warned or failed rows ({test, outcome, detail}), and for
    a GPU lacking evidence whose rows say nothing (every test skipped) that it lacks evidence, at its outcome."""
    rows = sorted(gpu.get("failures") or [], key=lambda f: f.get("outcome") != FAIL)
    if gpu.get("lackingEvidence") and not rows:
        rows = [{"test": None, "outcome": gpu.get("outcome") or WARN, "detail": LACKING_TEXT}]
    return rows


def finding_text(finding: Obj) -> str:
    """`memory failed: <message>`; a row of no test (a missing GPU) is its message alone."""
    if finding.get("test") is None:
        return str(finding.get("detail") or "")
    verb = VERBS.get(str(finding.get("outcome")), str(finding.get("outcome")))
    return f"{finding['test']} {verb}: {finding.get('detail') or ''}".rstrip(": ")


def gpu_lines(category: Obj) -> dict[str, list[str]]:
    """node -> one line per finding of its GPUs that did not pass: `GPU 3 (GPU-…): memory failed: …`; a finding
    below fail (a warning, lacking evidence) starts with `warning: `."""
    out: dict[str, list[str]] = {}
    for gpu in gpus(category):
        for finding in findings(gpu):
            prefix, text = "" if finding.get("outcome") == FAIL else "warning: ", finding_text(finding)
            # A missing GPU's message names it already ("GPU 7 is missing from …").
            named = text if text.startswith(f"GPU {gpu['index']} ") else f"{name(gpu)}: {text}"
            out.setdefault(gpu["node"], []).append(prefix + named)
    return out


def problems(category: Obj) -> list[Obj]:
    """The category's GPUs that did not pass, one entry per finding: node, index, uuid, kind, outcome (`warn
    (lacking evidence)`, `fail (missing)`), test and message, in the evidence's order (node, then index)."""
    return [{"node": gpu["node"], "index": gpu["index"], "uuid": gpu.get("uuid") or "", "kind": kind(gpu),
             "outcome": (finding.get("outcome") or "") + NOTES.get(kind(gpu), ""), "test": finding.get("test") or "",
             "message": finding_text(finding) if finding.get("test") is None else str(finding.get("detail") or "")}
            for gpu in gpus(category) for finding in findings(gpu)]


def without_test(category: Obj, test: str) -> Obj:
    """The category with its evidence's findings of `test` left out (a section of its own says them); the report
    itself is untouched."""
    found = evidence(category)
    if found is None:
        return category
    left = [{**g, "failures": [f for f in g.get("failures") or [] if f.get("test") != test]} for g in gpus(category)]
    return {**category, "evidence": {**found, "gpus": left}}


def state_line(found: Obj) -> str:
    """`final: 96 rows in 1 shard, 0 truncated`; `partial: …, 1 truncated (job-a: why)`; `missing: no evidence
    was sealed`. Partial reasons are listed apart (partial_reasons)."""
    state = str(found.get("state") or "missing")
    if state == "missing":
        return "missing: no evidence was sealed"
    shards = found.get("shards", 0)
    return (f"{state}: {found.get('rows', 0)} rows in {shards} shard{'' if shards == 1 else 's'}, "
            f"{found.get('truncated', 0)} truncated")


def counts_line(category: Obj) -> str:
    """`16 GPUs on 2 nodes: 13 pass, 1 warn, 2 fail, 0 skip; 1 lacking evidence, 1 missing`, or "" without GPUs."""
    found = gpus(category)
    if not found:
        return ""
    outcomes = {o: sum(1 for g in found if g.get("outcome") == o) for o in (PASS, WARN, FAIL, SKIP)}
    nodes = len({g["node"] for g in found})
    return (f"{len(found)} GPUs on {nodes} node{'' if nodes == 1 else 's'}: "
            + ", ".join(f"{count} {o}" for o, count in outcomes.items())
            + f"; {sum(1 for g in found if g.get('lackingEvidence'))} lacking evidence, "
            f"{sum(1 for g in found if g.get('missing'))} missing")


def failing(report: Obj) -> list[tuple[str, int]]:
    """(node, index) of every GPU whose outcome is fail in any category, each once, in natural node order."""
    found = {(g["node"], g["index"]) for c in report.get("categories") or [] for g in gpus(c) if g.get("outcome") == FAIL}
    return sorted(found, key=lambda item: (natural(item[0]), item[1]))


def report_state(report: Obj) -> str | None:
    """The worst evidence state over the report's categories (missing, partial, final), None when no category has
    an evidence reader: then no GPU count is known."""
    states = {str((evidence(c) or {}).get("state") or "missing") for c in report.get("categories") or []
              if evidence(c) is not None}
    return next((s for s in ("missing", "partial", "final") if s in states), None)


def failing_text(count: int, state: str) -> str:
    """`2`, `2 (evidence partial)`, `0 (evidence missing)`: a count not resting on final evidence says so."""
    return str(count) if state == "final" else f"{count} (evidence {state})"
