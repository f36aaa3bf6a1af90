"""The Workflow's status.evidence (reconcile/evidence_totals): the sums over its Jobs' seals, the losing attempt
left out, completed iterations kept once their Jobs are deleted, and `final` only when terminal and all sealed."""
from __future__ import annotations

from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile.evidence_totals import totals
from tests.unit.engine.reconcile.evidence_objects import job

Obj = dict[str, Any]


def named(name: str, seal: Obj | None = None, retry: int = 0, ran: bool = True, group: str = "group-0",
          args: tuple[str, ...] = ("diag", "-j")) -> Obj:
    status: Obj = {"workloadRef": {"name": f"{name}-workload"}} if ran else {}
    if seal is not None:
        status["evidence"] = seal
    out = job(retry=retry, args=args, status=status)
    out["metadata"] = {**out["metadata"], "name": name,
                       "labels": {**out["metadata"]["labels"], "nvcre.nvidia.com/group": group}}
    return out


def seal(rows: int, shards: int, attempt: int = 1, partial: str | None = None, truncated: int = 0) -> Obj:
    out: Obj = {"attempt": attempt, "rows": rows, "shards": shards, "sha256": ["x"] * shards}
    if truncated:
        out["truncated"] = [{"node": "n"}] * truncated
    if partial:
        out["partial"] = partial
    return out


def status(groups: list[Obj] | None = None, history: list[str] | None = None, evidence: Obj | None = None) -> Obj:
    orch: Obj = {"groups": groups or []}
    if history:
        orch["iterationHistory"] = [{"iteration": 1, "groups": [{"name": "g", "jobName": n} for n in history]}]
    return {"orchestration": orch, **({"evidence": evidence} if evidence else {})}


def test_no_job_with_a_reader_has_no_evidence():
    assert totals(status(), {"a": named("a", args=("all_reduce_perf",))}, True, []) is None


def test_sums_over_the_seals_final_once_terminal():
    empty = seal(0, 0, partial="pod p: the log is empty")
    live = {"a": named("a", seal(32, 1)), "b": named("b", empty, group="group-1")}
    running = totals(status(), live, False, [])
    assert running == {"rows": 32, "shards": 1, "jobs": 2, "truncated": 0, "partial": ["b: pod p: the log is empty"]}
    assert totals(status(), live, True, []) == {**running, "final": True}


def test_a_job_that_ran_without_a_seal_is_named_partial_in_the_final_totals():
    """A timed-out Job's workload never ended, so nothing sealed it: once the Workflow is terminal nothing more will
    come, the totals are final and say which Job's evidence is missing (a bundle can be written, and says so)."""
    live = {"a": named("a", seal(32, 1, truncated=2)), "b": named("b", group="group-1"),
            "c": named("c", ran=False, group="group-2")}
    assert totals(status(), live, False, []) == {"rows": 32, "shards": 1, "jobs": 1, "truncated": 2}
    assert totals(status(), live, True, []) == {
        "rows": 32, "shards": 1, "jobs": 1, "truncated": 2, "final": True,
        "partial": ["b: no evidence sealed: its workload did not end while the run watched it"]}


def test_the_losing_attempt_counts_nothing():
    live = {"a": named("a", seal(32, 1), retry=0)}
    assert totals(status([{"name": "group-0", "retries": 1}]), live, False, []) is None
    live = {"a": named("a", seal(8, 1, attempt=2), retry=1)}
    assert totals(status([{"name": "group-0", "retries": 1}]), live, False, [])["rows"] == 8


def test_a_completed_iteration_is_kept_once_across_its_deletes():
    done = named("it1", seal(32, 1))
    # The write that moves it1 to the history folds its seal into earlierIterations ...
    moved = totals(status(history=["it1"]), {"it1": done}, False, [done])
    assert moved == {"rows": 32, "shards": 1, "jobs": 1, "truncated": 0,
                     "earlierIterations": {"rows": 32, "shards": 1, "jobs": 1, "truncated": 0}}
    # ... and a later write, it1 still alive (its delete interrupted) or gone, counts it once.
    later = status(history=["it1"], evidence=moved)
    it2 = named("it2", seal(30, 1))
    for live in ({"it1": done, "it2": it2}, {"it2": it2}):
        assert totals(later, live, True, []) == {**moved, "rows": 62, "shards": 2, "jobs": 2, "final": True}
