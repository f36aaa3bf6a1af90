"""The Workflow's `status.evidence` (issue 40): the sums over its Jobs' seals, and whether they are final.

Every Workflow status write carries them, computed from the Jobs as read:
- the Jobs of the current iteration that have evidence (a reader, evidence/sources, or a measurement whose log is
  evidence, evidence_measured), each counted by its seal for its own
  attempt; a losing attempt of a retried group counts nothing (its shards are deleted by the next attempt);
- the Jobs of completed iterations, deleted once the next iteration starts: their seals are added to
  `earlierIterations` in the same write that moves them to `iterationHistory`, so a pass killed before their
  deletes counts them once (the history excludes them from the current sums);
- `partial` lists `<job>: why` for a partial seal and, once the Workflow is terminal, for a Job that ran (has a
  workloadRef) and has no seal (a timed-out Job: its workload never ended, so nothing was sealed); `final: true`
  once the Workflow is terminal: nothing will be added, and what is missing is named in `partial`, so a bundle can
  still be written and says so.
A Workflow none of whose Jobs has evidence has no `evidence` (the report tells missing from zero).
"""
from __future__ import annotations

from typing import Any, Optional

from ..api.objects import meta
from ..api.vocabulary import LABEL_GROUP
from ..plan import jobs
from .evidence_ledger import attempt, has_evidence

Obj = dict[str, Any]
KEYS = ("rows", "shards", "jobs", "truncated")
UNSEALED = "no evidence sealed: its workload did not end while the run watched it"


def _empty() -> Obj:
    return {"rows": 0, "shards": 0, "jobs": 0, "truncated": 0, "partial": []}


def _add(sums: Obj, name: str, seal: Obj) -> None:
    sums["rows"] += int(seal.get("rows") or 0)
    sums["shards"] += int(seal.get("shards") or 0)
    sums["jobs"] += 1
    sums["truncated"] += len(seal.get("truncated") or [])
    if seal.get("partial"):
        sums["partial"].append(f"{name}: {seal['partial']}")


def _seal(job: Obj) -> Optional[Obj]:  # noqa: UP045 - ansible-test's pylint reads module_utils as older Python
    seal = (job.get("status") or {}).get("evidence")
    return seal if seal and seal.get("attempt") == attempt(job) else None


def _sums_of(sums: Obj, counted: list[Obj], terminal: bool) -> None:
    """Add the Jobs' seals to `sums`; a Job that ran and lacks its seal is noted in `partial` once terminal."""
    for job in counted:
        name = meta(job).get("name", "")
        seal = _seal(job)
        if seal is not None:
            _add(sums, name, seal)
        elif terminal and (job.get("status") or {}).get("workloadRef"):
            sums["partial"].append(f"{name}: {UNSEALED}")


def _compact(sums: Obj) -> Obj:
    return {k: v for k, v in sums.items() if k != "partial" or v}


def totals(status: Obj, live: dict[str, Obj], terminal: bool, folding: list[Obj]) -> Optional[Obj]:  # noqa: UP045
    """The `evidence` of the Workflow status `status` (its orchestration as this write leaves it), over the Jobs
    `live` as read; `folding`: the Jobs this write moves to iterationHistory. None when no Job has evidence."""
    orch = status.get("orchestration") or {}
    stale = {g.get("jobName") for it in orch.get("iterationHistory") or [] for g in it.get("groups") or []}
    retries = {g.get("name"): int(g.get("retries") or 0) for g in orch.get("groups") or []}
    earlier = {**_empty(), **((status.get("evidence") or {}).get("earlierIterations") or {})}
    earlier["partial"] = list(earlier.get("partial") or [])
    _sums_of(earlier, [j for j in folding if has_evidence(j)], True)
    counted = [job for name, job in sorted(live.items()) if name not in stale and has_evidence(job)
               and jobs.retry_of(job) >= retries.get((meta(job).get("labels") or {}).get(LABEL_GROUP), 0)]
    if not counted and not earlier["jobs"] and not earlier["partial"]:
        return None
    now = {k: earlier[k] for k in KEYS}
    now["partial"] = list(earlier["partial"])
    _sums_of(now, counted, terminal)
    out = _compact(now)
    if terminal:
        out["final"] = True
    if earlier["jobs"] or earlier["partial"]:
        out["earlierIterations"] = _compact(earlier)
    return out
