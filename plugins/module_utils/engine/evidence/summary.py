"""A category's evidence as the report shows it: each GPU's verdict streamed from its rows, and the state of the
rows behind it (final, partial or missing) from the seals.

`gpus` reads rows once, in any order, holding one entry per GPU (never the rows): a GPU's verdict is the worst
outcome of its rows, skips left out when anything else ran; a GPU none of whose rows but DCGM's deployment checks
passed, warned or failed lacks evidence (a warning, or a failure with `skip_is_failure`); a `presence` row that
fails marks it missing. The same rules as dcgm_verdict, read back from the rows a certification stored.
`category_evidence` is the report's `evidence` entry (docs/dev/architecture.md, the contract of issue 40).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Optional

from ..api.naming import natural
from .rows import RANK, worst

Obj = dict[str, Any]
FINAL, PARTIAL, MISSING = "final", "partial", "missing"
PRESENCE = "presence"
# DCGM's deployment checks (DcgmDiagResponseWrapper.cpp swTestNames, 3.x and 4.x, and the table's shorter
# spellings; 4.x reports them as `software`): they say the node is set up, not that a GPU works.
DEPLOYMENT_TESTS = frozenset((
    "software", "Denylist", "Blacklist", "NVML Library", "CUDA Main Library", "CUDA Toolkit Libraries",
    "Permissions and OS-related Blocks", "Permissions and OS Blocks", "Persistence Mode", "Environmental Variables",
    "Environment Variables", "Page Retirement", "Page Retirement/Row Remap", "Graphics Processes", "Inforom",
    "Fabric Manager"))


class _Gpu:
    """What one GPU's rows said so far: the outcomes that count, evidence or not, missing, failures (deduplicated:
    the same failure in every sample is one entry)."""

    def __init__(self, node: str, index: int) -> None:
        self.node, self.index = node, index
        self.uuid: Optional[str] = None  # noqa: UP045
        self.outcomes: set[str] = set()
        self.evidence = self.missing = False
        self.failures: dict[tuple[Any, str, str], None] = {}

    def add(self, row: Obj) -> None:
        outcome = row["outcome"]
        self.uuid = self.uuid or row.get("uuid")
        if row.get("metric") == PRESENCE and outcome == "fail":
            self.missing = True
        if outcome != "skip":
            self.outcomes.add(outcome)
            self.evidence |= row.get("metric") != PRESENCE and row.get("test") not in DEPLOYMENT_TESTS
        if RANK[outcome] >= RANK["warn"]:
            self.failures.setdefault((row.get("test"), outcome, row.get("detail") or ""), None)

    def verdict(self, lacking_outcome: str) -> Obj:
        lacking = "fail" not in self.outcomes and not self.evidence
        outcome = worst([*self.outcomes, *([lacking_outcome] if lacking else [])])
        return {"node": self.node, "index": self.index, "uuid": self.uuid, "outcome": outcome,
                "lackingEvidence": lacking, "missing": self.missing,
                "failures": [{"test": test, "outcome": out, "detail": detail} for test, out, detail in self.failures]}


def gpus(rows: Iterable[Obj], skip_is_failure: bool = False) -> list[Obj]:
    """Every GPU a `gpu` row names (a row with an index), sorted by node (natural order) then index, with its
    verdict; one pass over `rows`."""
    seen: dict[tuple[str, int], _Gpu] = {}
    for row in rows:
        if row.get("component") != "gpu" or row.get("index") is None:
            continue
        key = (row["node"], row["index"])
        gpu = seen.get(key)
        if gpu is None:
            gpu = seen[key] = _Gpu(*key)
        gpu.add(row)
    lacking_outcome = "fail" if skip_is_failure else "warn"
    return [seen[key].verdict(lacking_outcome) for key in sorted(seen, key=lambda k: (natural(k[0]), k[1]))]


def category_evidence(workflow_evidence: Optional[Obj], seals: dict[str, Obj], gpu_list: list[Obj]) -> Obj:  # noqa: UP045
    """The report's `evidence` of a category that has an evidence reader. `workflow_evidence`: the Workflow's
    `status.evidence` (None when absent); `seals`: Job name -> its `status.evidence`. Missing: nothing sealed.
    Partial: a Job's read lost rows, or the Workflow is not final yet (a Job that ran may still be unsealed).
    Final: the Workflow says so and no read lost rows. The counts are the seals' sums."""
    status = workflow_evidence or {}
    partial = [f"{job}: {seal['partial']}" for job, seal in sorted(seals.items(), key=lambda j: natural(j[0]))
               if seal.get("partial")]
    partial += [p for p in status.get("partial") or [] if p not in partial]
    if not seals and not workflow_evidence:
        state = MISSING
    elif status.get("final") is True and not partial:
        state = FINAL
    else:
        state = PARTIAL
    if state == PARTIAL and status.get("final") is not True:
        partial.append("not final: the Workflow is not terminal, or a Job that ran has no seal yet")
    return {"state": state, "rows": sum(int(s.get("rows") or 0) for s in seals.values()),
            "shards": sum(int(s.get("shards") or 0) for s in seals.values()),
            "truncated": sum(len(s.get("truncated") or []) for s in seals.values()),
            "partial": partial, "gpus": gpu_list}
