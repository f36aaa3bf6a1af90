"""The driver's progress line and result in diagnose mode: the stage and the round running, not the iteration."""
from __future__ import annotations

from ansible_collections.cre.certification.plugins.module_utils.driver import workflow
from ansible_collections.cre.certification.plugins.module_utils.driver.options import RunOptions


def wf(diagnose: dict | None, groups: list[str]) -> dict:
    orch: dict = {"groups": [{"name": g, "phase": p, "nodes": []} for g, p in zip(groups, ["Running", "Pending"] * 9)],
                  "currentIteration": 1}
    if diagnose is not None:
        orch["diagnose"] = diagnose
    return {"metadata": {"name": "wf"}, "spec": {"orchestration": {}}, "status": {"orchestration": orch}}


def lines(obj: dict) -> list[str]:
    seen: list[str] = []
    driver = workflow.WorkflowLoop(None, "ns", "wf", RunOptions(1, progress=seen.append))  # type: ignore[arg-type]
    driver._report(obj, workflow.run_counts(obj), 3.2)
    return seen


def test_a_diagnose_round_names_its_stage_round_and_groups():
    obj = wf({"stage": "bisection", "round": 2}, ["bisect-2-0a", "bisect-2-0b", "bisect-2-1a", "bisect-2-1b"])
    assert lines(obj) == ["ns/wf: diagnose: bisection round 3, 4 groups (2 pending, 2 running, 0 succeeded, 0 failed) [3s]"]
    assert workflow.run_counts(obj)["diagnose"] == {"stage": "bisection", "round": 2}


def test_a_finished_diagnosis_tells_how_many_rounds_ran():
    obj = wf({"stage": "complete", "round": 4}, ["confirm-0"])
    obj["status"]["conditions"] = [{"type": "Failed", "status": "True", "reason": "IterationsFailed",
                                    "message": "Diagnosis complete: 1 faulty nodes confirmed"}]
    assert lines(obj) == ["ns/wf: diagnose: complete after 4 rounds (0 pending, 1 running, 0 succeeded, 0 failed) "
                          "-> Failed (IterationsFailed) [3s]"]


def test_without_diagnose_the_iteration_line_is_unchanged():
    obj = wf(None, ["group-0"])
    assert lines(obj) == ["ns/wf: iteration 1/1, groups 0 pending, 1 running, 0 succeeded, 0 failed [3s]"]
    assert "diagnose" not in workflow.run_counts(obj)


def test_while_only_the_counts_move_there_is_one_line_per_interval():
    seen: list[str] = []
    driver = workflow.WorkflowLoop(None, "ns", "wf", RunOptions(1, progress=seen.append))  # type: ignore[arg-type]
    for running in range(1, 6):  # five passes within a second, each with another count
        driver._report(wf(None, [f"group-{i}" for i in range(running)]),
                       workflow.run_counts(wf(None, [f"group-{i}" for i in range(running)])), 1.0)
    assert seen == ["ns/wf: iteration 1/1, groups 0 pending, 1 running, 0 succeeded, 0 failed [1s]"]
    done = wf(None, ["group-0"])
    done["status"]["conditions"] = [{"type": "Succeeded", "status": "True", "reason": "JobCompleted", "message": ""}]
    driver._report(done, workflow.run_counts(done), 2.0)  # the end is always shown
    assert seen[-1] == "ns/wf: iteration 1/1, groups 0 pending, 1 running, 0 succeeded, 0 failed -> Succeeded (JobCompleted) [2s]"
    driver._last_shown -= workflow.PROGRESS_EVERY  # an interval later, the counts show again
    driver._report(wf(None, ["group-0", "group-1"]), workflow.run_counts(wf(None, ["group-0", "group-1"])), 12.0)
    assert len(seen) == 3
