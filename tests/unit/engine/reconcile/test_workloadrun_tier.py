"""The WorkloadRun tier: build and create, adopt after a kill, mirror the Workflow, the failures NVCRE records."""
from __future__ import annotations

import copy
from datetime import UTC, datetime

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.api.actions import Create, Event, UpdateStatus
from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError
from ansible_collections.cre.certification.plugins.module_utils.engine.plan import mocknodes
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import workloadrun_tier as tier

NOW = datetime(2026, 12, 5, tzinfo=UTC)
SPEC = {"image": "img:1", "numNodes": 2,
        "framework": {"mpi": {"binary": "/bin/ar", "mpirunPath": "/usr/local/mpi/bin/mpirun"}}}


def desired(**spec):
    return tier.desired_workload_run({"name": "wr", "namespace": "ns", "labels": {}, "spec": {**SPEC, **spec}})


def live(status=None, **spec):
    obj = desired(**spec)
    obj["metadata"].update(uid="uid-1", resourceVersion="1", generation=1)
    if status:
        obj["status"] = status
    return obj


def world(run, workflow=None):
    return tier.WorkloadRunWorld(run, workflow, mocknodes.mock_nodes("onprem", "b300", 4), now=NOW)


def writes(step, kind):
    return [a for a in step.step.actions if isinstance(a, kind)]


def status_of(step):
    return writes(step, UpdateStatus)[-1].obj["status"]


def true(status):
    return next(c for c in status["conditions"] if c["status"] == "True" and c["type"] != "ValidationFailed")


def workflow(conditions=(), **status):
    wf = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Workflow",
          "metadata": {"name": "wr", "namespace": "ns", "ownerReferences": [
              {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "WorkloadRun", "name": "wr", "uid": "uid-1",
               "controller": True}]},
          "spec": {"jobTemplate": {"spec": {"workload": {"trainJob": {"trainer": {"numProcPerNode": 8}}}}}},
          "status": {"conditions": [{"type": t, "status": "True", "reason": r, "message": m} for t, r, m in conditions],
                     **status}}
    return wf


def test_bad_input_is_refused_before_anything_with_nvcres_placement_message():
    with pytest.raises(InputError) as err:
        desired(orchestration={"placement": "Unpinned", "testScale": "intra-node"})
    assert str(err.value) == ('orchestration.placement: Unpinned is incompatible with orchestration.testScale '
                              '"intra-node": intra-node runs one job per target node, Unpinned runs exactly one job; '
                              'drop one of the two')
    with pytest.raises(InputError) as err:
        desired(numNodes=0)
    assert err.value.path == "spec.numNodes"


def test_first_pass_creates_the_workflow_then_records_it():
    step = tier.reconcile(world(live()))
    assert isinstance(step.step.actions[0], Create)
    assert step.step.actions[0].obj["metadata"]["name"] == "wr"
    status = status_of(step)
    assert status["workflowRef"] == {"name": "wr", "namespace": "ns"}
    assert status["resolvedGpusPerNode"] == 8
    assert (true(status)["reason"], true(status)["message"]) == ("WorkflowCreated", "Workflow wr created")


def test_a_kill_between_create_and_status_adopts_our_workflow_without_a_second_create():
    step = tier.reconcile(world(live(), workflow()))
    assert not writes(step, Create)
    assert status_of(step)["workflowRef"]["name"] == "wr"


def test_a_foreign_workflow_of_the_name_is_a_collision():
    foreign = workflow()
    foreign["metadata"]["ownerReferences"] = []
    step = tier.reconcile(world(live(), foreign))
    assert step.failure[0] == "WorkflowNameCollision"
    assert not writes(step, Create)


def test_no_framework_fails_the_run_with_build_failed():
    run = live()
    run["spec"]["framework"] = {}
    step = tier.reconcile(world(run))
    assert step.failure == ("BuildFailed", "workloadrun wr: exec framework selected but spec.framework.exec is nil")
    assert not writes(step, Create)


RECORDED = {"workflowRef": {"name": "wr", "namespace": "ns"}}


@pytest.mark.parametrize(("conditions", "reason", "message"), [
    ([("Succeeded", "AllDone", "ok")], "WorkflowSucceeded", "Workflow completed successfully"),
    ([("Failed", "JobValidationFailed", "thresholds missed"), ("ValidationFailed", "JobValidationFailed", "bw low")],
     "WorkflowValidationFailed", "thresholds missed"),
    ([("Failed", "IterationsFailed", "group-0 failed")], "WorkflowFailed", "group-0 failed"),
])
def test_terminal_workflows_are_mirrored(conditions, reason, message):
    wf = workflow(conditions, orchestration={"detectedPlatform": "onprem", "detectedGPUArchitecture": "b300"},
                  succeededNodesRef={"kind": "ConfigMap", "name": "succeeded-nodes-abc"})
    step = tier.reconcile(world(live(copy.deepcopy(RECORDED)), wf))
    status = status_of(step)
    assert (true(status)["reason"], true(status)["message"]) == (reason, message)
    assert status["detectedPlatform"] == "onprem" and status["detectedGPUArchitecture"] == "b300"
    assert status["succeededNodesRef"]["name"] == "succeeded-nodes-abc"
    assert step.done and not step.drive
    validation = [c for c in status["conditions"] if c["type"] == "ValidationFailed"]
    assert bool(validation) == (reason == "WorkflowValidationFailed")
    if validation:
        assert (validation[0]["reason"], validation[0]["message"]) == ("ThresholdViolation", "bw low")


def test_a_running_workflow_is_driven_and_a_deleted_one_fails_the_run():
    step = tier.reconcile(world(live(copy.deepcopy(RECORDED)), workflow()))
    assert step.drive == "wr" and not step.done
    step = tier.reconcile(world(live(copy.deepcopy(RECORDED))))
    assert step.failure == ("WorkflowDeleted", "Workflow was deleted")


def test_a_terminal_run_writes_nothing():
    run = live({**RECORDED, "conditions": [{"type": "Succeeded", "status": "True", "reason": "WorkflowSucceeded",
                                            "message": "", "lastTransitionTime": "x"}]})
    step = tier.reconcile(world(run, workflow()))
    assert step.done and not step.step.actions


def test_admit_refuses_a_run_we_did_not_create_or_a_changed_spec():
    other = live()
    other["metadata"]["labels"] = {}
    with pytest.raises(Exception, match="not managed by cre.certification"):
        tier.admit(desired(), other)
    with pytest.raises(InputError, match="spec is immutable after creation"):
        tier.admit(desired(numNodes=3), live())


def test_an_unlisted_architecture_warns_on_the_workload_run_with_its_own_field_hint():
    nodes = mocknodes.mock_nodes("onprem", "b300", 4)
    for node in nodes:
        node["metadata"]["labels"]["nvidia.com/gpu.product"] = "NVIDIA-H20"
    step = tier.reconcile(tier.WorkloadRunWorld(live(gpusPerNode=8), None, nodes, now=NOW))
    warned = [e for e in writes(step, Event) if e.type == "Warning"]
    assert [(e.reason, e.involved["metadata"]["uid"]) for e in warned] == [("GPUArchitectureDefaults", "uid-1")]
    assert warned[0].message == (
        'GPU architecture "h20" has no entry in the catalog\'s GPU defaults, which fall back to gpusPerNode=4 '
        "mlnxPerNode=0 for it; this run is sized at gpusPerNode=8 mlnxPerNode=0. If the nodes differ, set "
        "spec.gpusPerNode and spec.mlnxPerNode, and file an issue so the architecture can be added to the catalog.")
    assert step.notes[0] == f"GPUArchitectureDefaults: {warned[0].message}"
    assert writes(step, Create)
    assert not [e for e in writes(tier.reconcile(world(live())), Event) if e.type == "Warning"]  # b300 has its row
