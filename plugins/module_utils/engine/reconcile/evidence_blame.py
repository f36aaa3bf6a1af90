"""What a Job's evidence says of its nodes (issue 40): the GPU, test and tool's message in a failed node's entry,
and the Job's verdict when the tool's exit code and its output disagree.

- The workload failed: each node keeps reason WorkloadFailed; its message names the failing GPUs
  (`GPU 3 (GPU-…): memory failed: <DCGM's message>`, several joined with "; ") when the output names them, and
  says so when its output could not be read.
- The workload succeeded but its output names a failing GPU: the evidence wins, the node fails (WorkloadFailed).
- The workload succeeded but a GPU lacks evidence (every test skipped, or the output unreadable): a Warning event
  and the Job succeeds; with `skip_is_failure` the node fails with EvidenceLacking.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..api.vocabulary import EVIDENCE_LACKING, FAILED, SUCCEEDED, WORKLOAD_FAILED
from ..evidence.sources import NodeReading
from . import attribution
from .evidence_ledger import Read

Obj = dict[str, Any]


@dataclass
class Blame:
    """The Job's outcome after its evidence, the failedNodes entries it adds, and the warnings to tell."""

    outcome: tuple[str, str, str]
    entries: list[Obj] = field(default_factory=list)
    messages: dict[str, str] = field(default_factory=dict)  # node -> its WorkloadFailed message (a failed workload)
    warnings: list[str] = field(default_factory=list)


def _gpu(gpu: Obj) -> str:
    return f"GPU {gpu['index']} ({gpu['uuid']})" if gpu.get("uuid") else f"GPU {gpu['index']}"


def failures(reading: NodeReading) -> list[str]:
    """`GPU 3 (GPU-…): memory failed: <message>` for every failing result of the node's output, node-wide ones too."""
    verdict = reading.verdict
    if verdict is None:
        return []
    out = []
    for row in verdict["rows"]:
        # The node's own results, and those of what is not a GPU (a NIC port of node-drift: a `link` row).
        if row["component"] != "gpu" and row["outcome"] == "fail":  # what failed, observed, then expected
            out.append(f"{row['test']} failed: {row['metric']} {row['value']}: {row['detail']}")
        elif row["index"] is None and row["outcome"] == "fail":
            out.append(f"{row['test']} failed: {row['detail']}" if row["test"] else row["detail"])
    for gpu in verdict["gpus"]:
        for failure in gpu["failures"]:
            if failure["outcome"] == "fail":
                test = failure["test"]
                out.append(f"{_gpu(gpu)}: {test} failed: {failure['detail']}" if test
                           else f"{_gpu(gpu)}: {failure['detail']}")
    return out


def lacking(reading: NodeReading) -> list[str]:
    """Why the node's GPUs prove nothing: each GPU whose every test was skipped, or the unreadable output."""
    if reading.verdict is None:
        return [f"no evidence: {reading.partial}"] if reading.partial else []
    return [f"{_gpu(gpu)}: lacking evidence: no test passed, warned or failed on it (every test skipped)"
            for gpu in reading.verdict["gpus"] if gpu["lacking_evidence"]]


def _by_node(read: Read, what: Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for reading in read.readings:
        found = what(reading)
        if found:
            out.setdefault(reading.node, []).extend(found)
    return out


def blame(read: Read, outcome: tuple[str, str, str], attempt: str, skip_is_failure: bool) -> Blame:
    """The Job's outcome and the entries its evidence adds, for the workload's `outcome` (Succeeded or Failed)."""
    failing = _by_node(read, failures)
    empty = _by_node(read, lacking)
    partial = {r.node: r.partial for r in read.readings if r.partial}
    if outcome[0] == FAILED:
        messages = {node: "; ".join(failing.get(node) or [outcome[2]]) for node in {*failing, *partial}}
        for node, why in partial.items():
            messages[node] = f"{messages[node]}; evidence partial: {why}"
        return Blame(outcome, messages=messages)
    if outcome[0] != SUCCEEDED:
        return Blame(outcome)
    entries = [attribution.failed_entries([node], WORKLOAD_FAILED, "; ".join(found))[0]
               for node, found in sorted(failing.items())]
    lacked = {node: found for node, found in empty.items() if node not in failing}
    if skip_is_failure:
        entries += [attribution.failed_entries([node], EVIDENCE_LACKING, "; ".join(found))[0]
                    for node, found in sorted(lacked.items())]
    if failing:
        nodes = " ".join(sorted(failing))
        return Blame((FAILED, WORKLOAD_FAILED, f"Workload {attempt} completed, but its {read.fmt} output names "
                                               f"failures on node(s) [{nodes}]"), entries)
    listed = "; ".join(f"node {node}: {'; '.join(found)}" for node, found in sorted(lacked.items()))
    if lacked and skip_is_failure:
        return Blame((FAILED, EVIDENCE_LACKING, f"Workload {attempt} completed, but its {read.fmt} output lacks "
                                                f"evidence on node(s) [{' '.join(sorted(lacked))}]"), entries)
    warnings = [f"Workload {attempt} completed, but its {read.fmt} output lacks evidence (the Job succeeds: "
                f"skip_is_failure is off): {listed}"] if lacked else []
    return Blame(outcome, warnings=warnings)
