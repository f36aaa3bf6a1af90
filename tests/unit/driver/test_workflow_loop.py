"""The Workflow driver's loop (driver/workflow.py) on an in-memory cluster (tests.unit.driver.memory_cluster): a
small Workflow (4 nodes, 2 groups, 2 iterations, one Job failing) driven to its end through `WorkflowLoop.run`, and the
same run killed after each of its writes, then resumed by a fresh driver from the cluster alone, ending exactly
where the uninterrupted run ends (the driver-level twin of tests/unit/engine/reconcile's kill-anywhere tests).
"""
from __future__ import annotations

import copy
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonpatch
import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.driver.errors import DriverError
from ansible_collections.cre.certification.plugins.module_utils.driver.observe import Changes
from ansible_collections.cre.certification.plugins.module_utils.driver.options import RunOptions
from ansible_collections.cre.certification.plugins.module_utils.driver.schedule import Schedule
from ansible_collections.cre.certification.plugins.module_utils.driver.workflow import WorkflowLoop
from ansible_collections.cre.certification.plugins.module_utils.engine.api.objects import timestamp
from ansible_collections.cre.certification.plugins.module_utils.engine.plan import mocknodes
from tests.unit.driver.memory_cluster import (
    FAILED_LOG,
    Killed,
    MemoryKube,
    instant_workloads,
    outcome,
    verdict,
    watch_in_memory,
)

DATA = Path(__file__).parents[1] / "engine" / "data" / "render" / "_workflow.yaml"
# The render tests' Workflow without performance thresholds (no measurement to wait for), over two iterations.
WORKFLOW = jsonpatch.apply_patch(yaml.safe_load(DATA.read_text()), [
    {"op": "remove", "path": "/spec/validation"},
    {"op": "replace", "path": "/spec/orchestration/iterations", "value": 2}])
NS, NAME = WORKFLOW["metadata"]["namespace"], WORKFLOW["metadata"]["name"]
WF_UID = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
FAILING = ("nccl-test-group-1-iter-2",)

Obj = dict[str, Any]


@pytest.fixture(autouse=True)
def _in_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    watch_in_memory(monkeypatch)


def cluster() -> MemoryKube:
    kube = MemoryKube(instant_workloads(FAILING))
    for node in mocknodes.mock_nodes("aws", "h100", 4):
        kube.put(node)
    workflow = copy.deepcopy(WORKFLOW)
    workflow["metadata"]["uid"] = WF_UID
    kube.put(workflow)
    return kube


def drive(kube: MemoryKube, progress: list[str] | None = None) -> Obj:
    lines = progress if progress is not None else []
    return WorkflowLoop(kube, NS, NAME, RunOptions(30, 0.05, progress=lines.append)).run()


def test_a_workflow_is_driven_to_its_end_through_the_loop():
    kube = cluster()
    progress: list[str] = []
    result = drive(kube, progress)
    assert result["timed_out"] is False and result["changed"] is True
    assert result["phase"] == "Failed" and result["condition"] == {
        "type": "Failed", "reason": "IterationsFailed", "message": "1 groups failed across 2 iterations"}
    assert result["iterations"] == {"current": 2, "completed": 2, "total": 2}
    assert result["succeeded_nodes"] == ["gpu-node-000", "gpu-node-001"]
    assert result["failed_nodes"] == [
        {"name": n, "reason": "WorkloadFailed", "message": "Workload 1/1 failed: jobset failed: exit 1"}
        for n in ("gpu-node-002", "gpu-node-003")]
    assert result["configmaps"] == {"succeeded": "succeeded-nodes-0f1e2d3c", "failed": "failed-nodes-0f1e2d3c"}
    # Iteration 1's Jobs were deleted, and the garbage collector took what they owned.
    assert sorted(kube.of_kind("Job")) == ["nccl-test-group-0-iter-2", "nccl-test-group-1-iter-2"]
    # The failed Job's workload was deleted by the Workflow tier (completeTerminalGroup), its pods with it.
    assert sorted(kube.of_kind("TrainJob")) == ["nccl-test-group-0-iter-2-workload"]
    assert sorted(p["metadata"]["labels"]["nvcre.nvidia.com/job"] for p in kube.of_kind("Pod").values()) == [
        "nccl-test-group-0-iter-2"] * 2
    # The failed container's log tail, read by the world assembly for the Job tier.
    assert kube.of_kind("Job")[FAILING[0]]["status"]["failureLog"]["tail"] == FAILED_LOG
    assert progress[-1].startswith(f"{NS}/{NAME}: iteration 2/2, groups 0 pending, 0 running, 1 succeeded, "
                                   "1 failed -> Failed (IterationsFailed)")


def test_killed_after_any_write_a_fresh_driver_ends_where_the_whole_run_ends():
    whole = cluster()
    expected = verdict(drive(whole))
    end = outcome(whole)
    assert whole.writes > 20, "the run has writes to be killed after"
    for k in range(whole.writes):
        kube = cluster()
        kube.kill_after = k
        with pytest.raises(Killed):
            drive(kube)
        kube.kill_after = None
        assert verdict(drive(kube)) == expected, f"killed after write {k}"
        assert outcome(kube) == end, f"killed after write {k}"


def test_a_finished_workflow_is_driven_again_without_a_write():
    kube = cluster()
    first = drive(kube)
    writes = kube.writes
    again = drive(kube)
    assert kube.writes == writes and again["changed"] is False
    assert verdict(again) == verdict(first)


def test_what_is_due_joins_what_changed():
    schedule = Schedule()
    schedule.later("job/a", 0.0)
    schedule.later("measurement/m", 0.0)
    schedule.later("job/later", 3600.0)
    due = schedule.take(False, False, Changes(jobs={"b"}, any=True))
    assert (due.why, due.jobs, due.measurements, due.workflow) == ("changed", {"a", "b"}, {"m"}, False)
    assert list(schedule.due) == ["job/later"]  # taken once: the pass asks again if it still wants to
    schedule.workflow_after(0.0)
    assert schedule.take(False, False, Changes()).why == "deadline" and schedule.wake_at is None
    first = schedule.take(True, False, Changes())
    assert (first.why, first.jobs, first.measurements, first.workflow) == ("start", None, None, True)


def test_a_resident_controller_s_fresh_lease_stops_the_run_before_any_write():
    kube = cluster()
    kube.put({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
              "metadata": {"name": "nvcre-controller-leader", "namespace": "nvcre"},
              "spec": {"renewTime": timestamp(datetime.now(UTC))}})
    with pytest.raises(DriverError, match="a resident NVCRE controller holds the leader lease nvcre/nvcre-controller"):
        drive(kube)
    assert kube.writes == 0
