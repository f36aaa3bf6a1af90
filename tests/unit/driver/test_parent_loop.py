"""The parent loop (driver/parent.py) on an in-memory cluster (tests.unit.driver.memory_cluster): a small
Certification (two DCGM categories on 2 nodes, one Job failing) and a small WorkloadRun (an exec run, one Job per
node, one failing) driven to their ends through `CertificationLoop.run` and `WorkloadRunLoop.run`, each child Workflow
by the Workflow loop itself; the same runs killed after each of their writes, then resumed by a fresh loop from the
cluster alone, ending exactly where the uninterrupted run ends; check mode writes nothing.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pytest

from ansible_collections.cre.certification.plugins.module_utils.driver.certification import CertificationLoop
from ansible_collections.cre.certification.plugins.module_utils.driver.options import RunOptions
from ansible_collections.cre.certification.plugins.module_utils.driver.parent import created
from ansible_collections.cre.certification.plugins.module_utils.driver.workloadrun import WorkloadRunLoop
from ansible_collections.cre.certification.plugins.module_utils.engine.plan import mocknodes
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import (
    certification_tier,
    workloadrun_tier,
)
from tests.unit.driver.memory_cluster import (
    MemoryKube,
    instant_workloads,
    outcome,
    resumed,
    strip,
    verdict,
)

NS = "nvcre"
CERTIFICATION = {"name": "cert", "namespace": NS, "categories": ["diagnostics/dcgm-level1", "diagnostics/dcgm-level2"],
                 "target": None, "gang_scheduler": None, "options": {}, "labels": {}, "catalog_dirs": []}
WORKLOAD_RUN = {"name": "burn", "namespace": NS, "labels": {},
                "spec": {"image": "nvcr.io/nvidia/pytorch:26.01-py3", "numNodes": 1,
                         "framework": {"exec": {"command": ["/bin/sh", "-c"], "args": ["nvidia-smi"]}},
                         "orchestration": {"testScale": "intra-node"},
                         "target": {"nodeNames": ["gpu-node-000", "gpu-node-001"]}}}
# One Job of each run fails (the Job names are the catalog's: a hash of the group's nodes, or group and iteration).
FAILING = ("cert-diagnostics-dcgm-level1-69724", "burn-group-1-iter-1")

Obj = dict[str, Any]
Drive = Callable[[MemoryKube, RunOptions], Obj]
NODES = mocknodes.mock_nodes("aws", "h100", 2)
pytestmark = pytest.mark.usefixtures("in_memory")


def cluster() -> MemoryKube:
    kube = MemoryKube(instant_workloads(FAILING))
    for node in NODES:
        kube.put(node)
    return kube


def certify(kube: MemoryKube, options: RunOptions) -> Obj:
    desired = certification_tier.desired_certification(CERTIFICATION)
    return CertificationLoop(kube, CERTIFICATION, options, desired).run()


def workload_run(kube: MemoryKube, options: RunOptions) -> Obj:
    return WorkloadRunLoop(kube, options, workloadrun_tier.desired_workload_run(WORKLOAD_RUN)).run()


def ending(result: Obj) -> Obj:
    """The verdict without the times it carries (a WorkloadRun's result quotes its conditions)."""
    return strip(verdict(result))


def drive(run: Drive, kube: MemoryKube, progress: list[str] | None = None) -> Obj:
    lines = progress if progress is not None else []
    return run(kube, RunOptions(30, 0.05, progress=lines.append))


def test_a_certification_is_driven_to_its_end_through_the_parent_loop():
    kube = cluster()
    progress: list[str] = []
    result = drive(certify, kube, progress)
    assert result["timed_out"] is False and result["changed"] is True
    assert (result["phase"], result["condition"]["reason"]) == ("Failed", "WorkflowFailed")
    assert result["summary"]["categories"] == [
        {"category": "diagnostics/dcgm-level1", "workflow": "cert-diagnostics-dcgm-level1", "status": "Failed",
         "failed_nodes": 1},
        {"category": "diagnostics/dcgm-level2", "workflow": "cert-diagnostics-dcgm-level2", "status": "Succeeded",
         "failed_nodes": 0}]
    assert [n["name"] for n in result["categories"][0]["failed_nodes"]] == ["gpu-node-001"]
    assert result["categories"][1]["succeeded_nodes"] == ["gpu-node-000", "gpu-node-001"]
    assert sorted(kube.of_kind("Workflow")) == ["cert-diagnostics-dcgm-level1", "cert-diagnostics-dcgm-level2"]
    # The tier's notes as they are, and the child Workflows' progress lines through the same display.
    assert "diagnostics/dcgm-level2: created Workflow cert-diagnostics-dcgm-level2 (2 of 2)" in progress
    assert progress[-1].startswith("nvcre/cert-diagnostics-dcgm-level2: iteration 1/1")


def test_a_workload_run_is_driven_to_its_end_through_the_parent_loop():
    kube = cluster()
    progress: list[str] = []
    result = drive(workload_run, kube, progress)
    assert result["timed_out"] is False and result["changed"] is True
    assert (result["phase"], result["workflow"]) == ("Failed", "burn")
    assert result["succeeded_nodes"] == ["gpu-node-000"]
    assert [n["name"] for n in result["failed_nodes"]] == ["gpu-node-001"]
    assert (result["detected_platform"], result["detected_gpu_architecture"]) == ("aws", "h100")
    # A WorkloadRun's notes name the run.
    assert progress[0] == "nvcre/burn: created Workflow burn (exec, 1 nodes per job)"


@pytest.mark.parametrize("run", [certify, workload_run], ids=["certification", "workloadrun"])
def test_killed_after_any_write_a_fresh_loop_ends_where_the_whole_run_ends(run: Drive):
    whole = cluster()
    expected = ending(drive(run, whole))
    end = outcome(whole)
    assert whole.writes > 20, "the run has writes to be killed after"
    for k in range(whole.writes):
        kube = cluster()
        assert ending(resumed(kube, k, functools.partial(drive, run))) == expected, f"killed after write {k}"
        assert outcome(kube) == end, f"killed after write {k}"


@pytest.mark.parametrize("run", [certify, workload_run], ids=["certification", "workloadrun"])
def test_a_finished_run_is_driven_again_without_a_write(run: Drive):
    kube = cluster()
    first = drive(run, kube)
    writes = kube.writes
    again = drive(run, kube)
    assert kube.writes == writes and again["changed"] is False
    assert ending(again) == ending(first)


@pytest.mark.parametrize("run", [certify, workload_run], ids=["certification", "workloadrun"])
def test_check_mode_plans_and_writes_nothing(run: Drive):
    kube = cluster()
    result = run(kube, RunOptions(30, 0.05, check_mode=True))
    assert kube.writes == 0 and result["changed"] is True and result["plan"]


def test_an_object_made_meanwhile_is_as_good_as_created():
    kube = cluster()
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}
    assert created(kube, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": NS}})
    assert created(kube, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": NS}}) is None
    assert created(kube, namespace)


def test_check_mode_over_a_workload_run_without_its_workflow_yet_is_a_change():
    # The WorkloadRun exists (made by a run stopped before its first pass, or by kubectl): the plan to create its
    # Workflow is a change, and check mode must say so.
    kube = cluster()
    kube.put(workloadrun_tier.desired_workload_run(WORKLOAD_RUN))
    result = workload_run(kube, RunOptions(30, 0.05, check_mode=True))
    assert kube.writes == 0 and result["plan"]["workflow"]["metadata"]["name"] == "burn"
    assert result["changed"] is True


@pytest.mark.parametrize(("run", "parent", "workflows"), [
    (certify, "Certification nvcre/cert",
     ["Workflow nvcre/cert-diagnostics-dcgm-level1", "Workflow nvcre/cert-diagnostics-dcgm-level2"]),
    (workload_run, "WorkloadRun nvcre/burn", ["Workflow nvcre/burn"]),
], ids=["certification", "workloadrun"])
def test_diff_shows_what_a_run_would_create_then_what_it_did_then_nothing(run: Drive, parent: str,
                                                                          workflows: list[str]):
    kube = cluster()
    planned = run(kube, RunOptions(30, 0.05, check_mode=True, diff=True))["diff"]
    assert kube.writes == 0
    assert [(e["before_header"], e["after_header"]) for e in planned] == \
        [(f"{name} (absent)", name) for name in (parent, *workflows)]
    assert all(e["before"] == {} and e["after"]["metadata"]["name"] for e in planned)

    done = run(kube, RunOptions(30, 0.05, diff=True))["diff"]
    assert [e["after_header"] for e in done][:2] == [parent, workflows[0]]
    assert all(e["before"] == {} and e["after"]["status"] for e in done)   # created, and the status the run left

    assert run(kube, RunOptions(30, 0.05, diff=True))["diff"] == []   # a finished run changes nothing
    assert run(kube, RunOptions(30, 0.05, check_mode=True, diff=True))["diff"] == []
