"""The driver's progress line and result in diagnose mode: the stage and the round running, not the iteration."""
from __future__ import annotations

from ansible_collections.cre.certification.plugins.module_utils.driver import workflow


def wf(diagnose: dict | None, groups: list[str]) -> dict:
    orch: dict = {"groups": [{"name": g, "phase": p, "nodes": []} for g, p in zip(groups, ["Running", "Pending"] * 9)],
                  "currentIteration": 1}
    if diagnose is not None:
        orch["diagnose"] = diagnose
    return {"metadata": {"name": "wf"}, "spec": {"orchestration": {}}, "status": {"orchestration": orch}}


def lines(obj: dict) -> list[str]:
    seen: list[str] = []
    driver = workflow.Driver(None, "ns", "wf", progress=seen.append)  # type: ignore[arg-type]
    driver._report(obj, workflow._counts(obj), 3.2)
    return seen


def test_a_diagnose_round_names_its_stage_round_and_groups():
    obj = wf({"stage": "bisection", "round": 2}, ["bisect-2-0a", "bisect-2-0b", "bisect-2-1a", "bisect-2-1b"])
    assert lines(obj) == ["ns/wf: diagnose: bisection round 3, 4 groups (2 pending, 2 running, 0 succeeded, 0 failed) [3s]"]
    assert workflow._counts(obj)["diagnose"] == {"stage": "bisection", "round": 2}


def test_a_finished_diagnosis_tells_how_many_rounds_ran():
    obj = wf({"stage": "complete", "round": 4}, ["confirm-0"])
    obj["status"]["conditions"] = [{"type": "Failed", "status": "True", "reason": "IterationsFailed",
                                    "message": "Diagnosis complete: 1 faulty nodes confirmed"}]
    assert lines(obj) == ["ns/wf: diagnose: complete after 4 rounds (0 pending, 1 running, 0 succeeded, 0 failed) "
                          "-> Failed (IterationsFailed) [3s]"]


def test_without_diagnose_the_iteration_line_is_unchanged():
    obj = wf(None, ["group-0"])
    assert lines(obj) == ["ns/wf: iteration 1/1, groups 0 pending, 1 running, 0 succeeded, 0 failed [3s]"]
    assert "diagnose" not in workflow._counts(obj)
