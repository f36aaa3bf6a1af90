"""A DiagReading judged: the evidence rows, each GPU's verdict and the node's, as a certification reads them.

The rules (docs/evidence-check.md):
- a GPU's verdict is the worst outcome of its own results, a skipped test left out when anything else ran (a
  lone skipped EUD test is no failure);
- a GPU is lacking evidence when the run tested GPUs (a GPU test appears in the output, even skipped; or the
  caller knows the level tests them) and no test but DCGM's deployment checks passed, warned or failed on it
  (every test skipped, or none run): DCGM exits 0 there, yet nothing says the GPU works. Its verdict is `warn`,
  or `fail` with `skip_is_failure`. A deployment-only run (level 1) tests no GPU: its GPUs are judged by the
  deployment checks, and one they do not name is lacking evidence only when a check of the node failed (a cut
  message may have dropped its name);
- a GPU expected (`expected_gpus`) but absent from the output is missing: a row of its own, `fail`;
- a run that did not happen (`runtime_error`) is no evidence at all: one row, `fail`;
- the node's outcome is the worst of its GPUs' verdicts and of the results of the node as a whole.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from .dcgm_results import DEPLOYMENT, DiagReading, DiagResult, outcome_of
from .rows import RANK, Row, sorted_rows, worst

# DCGM 3.x joins a check's errors with ", " (one per GPU, each a sentence); each piece names its GPU as "GPU <n>".
PIECES = re.compile(r"(?<=\.), (?=\S)")
NAMES_GPU = re.compile(r"\bGPU (\d+)\b")
# 4.x names its deployment checks `software`; 3.x puts them under the Deployment category.
DEPLOYMENT_TESTS = ("software",)


@dataclass(frozen=True)
class Options:
    """How the rows are labelled and judged: `node` names the rows, `expected_gpus` the GPU count the node has
    (None: unknown, nothing can be missing), `skip_is_failure` turns lacking evidence into a failure."""

    node: str = ""
    expected_gpus: int | None = None
    skip_is_failure: bool = False
    # Whether the run tests GPUs (a level of 2 or more): None infers it from the output (a GPU test appears).
    gpu_tests: bool | None = None


def judge(reading: DiagReading, options: Options) -> dict[str, Any]:
    """The rows, per-GPU verdicts and the node's outcome of `reading`."""
    results = attribute(reading.results)
    rows = [_row(options.node, result) for result in results]
    known = sorted(set(reading.gpus) | {r.gpu for r in results if r.gpu is not None})
    missing = [] if reading.runtime_error else _missing(known, options.expected_gpus)
    rows += [_missing_row(options.node, gpu, options.expected_gpus, known) for gpu in missing]
    if reading.runtime_error:
        rows.append(Row(options.node, "gpu", None, None, None, "runtime_error", None, None, "fail",
                        f"dcgmi diag did not run: {reading.runtime_error}"))
    lacking_outcome = "fail" if options.skip_is_failure else "warn"
    tested = options.gpu_tests if options.gpu_tests is not None else any(_is_gpu_test(r) for r in results)
    deployment_ok = all(outcome_of(r.status, r.test) in ("pass", "skip") for r in reading.results if r.gpu is None)
    judged = _Judged(lacking_outcome, tested or not deployment_ok)
    gpus = [_gpu_verdict(gpu, results, gpu in missing, judged, rows) for gpu in sorted({*known, *missing})]
    node_rows = [r.outcome for r in rows if r.index is None and r.outcome != "skip"]
    outcome = worst([g["outcome"] for g in gpus] + node_rows) or lacking_outcome
    return {
        "format_version": reading.layout,
        "dcgm_version": reading.dcgm_version,
        "driver_version": reading.driver_version,
        "rows": [row.to_dict() for row in sorted_rows(rows)],
        "gpus": gpus,
        "outcome": outcome,
        "lacking_evidence": [g["index"] for g in gpus if g["lacking_evidence"]],
        "missing": missing,
        "runtime_error": reading.runtime_error,
    }


def attribute(results: list[DiagResult]) -> list[DiagResult]:
    """Results of the node whose failure messages name GPUs (a 3.x deployment check, a 3.x table's `Warning`)
    given to those GPUs: the message pieces naming `GPU <n>` join GPU n's result of the same test (made when it has
    none, with the node result's word); what names no GPU stays the node's. Passing results are left alone."""
    out = [r for r in results if r.gpu is not None]
    for result in (r for r in results if r.gpu is None):
        if outcome_of(result.status, result.test) not in ("fail", "warn"):
            out.append(result)
            continue
        own, by_gpu = _split(result.messages)
        for gpu, messages in by_gpu.items():
            out = _add_messages(out, result, gpu, messages)
        if own or not by_gpu:
            out.append(replace(result, messages=tuple(own)))
    return out


def _split(messages: tuple[str, ...]) -> tuple[list[str], dict[int, list[str]]]:
    own: list[str] = []
    by_gpu: dict[int, list[str]] = {}
    for message in messages:
        for piece in ([message] if message.startswith("Info: ") else PIECES.split(message)):
            named = NAMES_GPU.search(piece)
            if named and not piece.startswith("Info: "):
                by_gpu.setdefault(int(named.group(1)), []).append(piece)
            else:
                own.append(piece)
    return own, by_gpu


def _add_messages(out: list[DiagResult], node: DiagResult, gpu: int, messages: list[str]) -> list[DiagResult]:
    for i, result in enumerate(out):
        if (result.gpu, result.test, result.sample) == (gpu, node.test, node.sample):
            out[i] = replace(result, messages=result.messages + tuple(messages))
            return out
    return [*out, replace(node, gpu=gpu, messages=tuple(messages), info=())]


def _row(node: str, result: DiagResult) -> Row:
    return Row(node, "gpu", result.gpu, None, result.test, "result", result.status, None,
               outcome_of(result.status, result.test), "; ".join([*result.messages, *result.info]),
               sample=result.sample)


def _missing(known: list[int], expected: int | None) -> list[int]:
    return [gpu for gpu in range(expected) if gpu not in known] if expected is not None else []


def _missing_row(node: str, gpu: int, expected: int | None, known: list[int]) -> Row:
    return Row(node, "gpu", gpu, None, None, "presence", None, None, "fail",
               f"GPU {gpu} is missing from the dcgmi diag output: {expected} GPUs expected, "
               f"{len(known)} reported ({', '.join(map(str, known)) or 'none'})")


def _is_gpu_test(result: DiagResult) -> bool:
    """Whether a result is of a test of the GPU (whatever its outcome), not of a deployment check."""
    return result.category != DEPLOYMENT and result.test not in DEPLOYMENT_TESTS


def _is_evidence(result: DiagResult) -> bool:
    """Whether a result says something about the GPU itself: a test that ran, not a deployment check."""
    return _is_gpu_test(result) and outcome_of(result.status, result.test) != "skip"


@dataclass(frozen=True)
class _Judged:
    lacking_outcome: str   # warn, or fail with skip_is_failure
    needs_evidence: bool   # the run tested GPUs, or a check of the node failed


def _gpu_verdict(gpu: int, results: list[DiagResult], missing: bool, judged: _Judged,
                 rows: list[Row]) -> dict[str, Any]:
    own = [r for r in results if r.gpu == gpu]
    outcomes = [o for o in (outcome_of(r.status, r.test) for r in own) if o != "skip"]
    outcomes += ["fail"] if missing else []
    # A GPU that failed (a deployment check naming it, or missing) has its verdict; lacking evidence is for the rest.
    lacking = judged.needs_evidence and "fail" not in outcomes and not any(_is_evidence(r) for r in own)
    outcomes += [judged.lacking_outcome] if lacking else ["pass"] if not outcomes else []
    failures = [{"test": r.test, "outcome": r.outcome, "detail": r.detail} for r in sorted_rows(rows)
                if r.index == gpu and RANK[r.outcome] >= RANK["warn"]]
    return {"index": gpu, "uuid": None, "outcome": worst(outcomes), "lacking_evidence": lacking,
            "missing": missing, "failures": failures}
