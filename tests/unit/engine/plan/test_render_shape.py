"""The rendered Workflow has the shape `nvcrectl workflow render` prints (NVCRE's pkg/render testdata), while the
plan keeps working on the defaulted spec."""
import copy
from pathlib import Path

import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError
from ansible_collections.cre.certification.plugins.module_utils.engine.plan import mocknodes, render
from ansible_collections.cre.certification.plugins.module_utils.engine.plan.render_shape import nvcre_spec

DATA = Path(__file__).parents[1] / "data" / "render"
SHAPES = yaml.safe_load((DATA / "nvcre_shapes.yaml").read_text())
BASE = yaml.safe_load((DATA / "_workflow.yaml").read_text())
TRAINER = {"image": "nvcr.io/nvidia/pytorch:24.12-py3", "command": ["/bin/bash", "-c"],
           "args": ["torchrun --nnodes 4"], "numNodes": 4, "numProcPerNode": 4}


def nodes_of(case):
    if "node_list" in case:
        return case["node_list"]
    spec = case["nodes"]
    return mocknodes.mock_nodes(spec["platform"], spec["gpu_architecture"], spec["count"])


def nvcre_input(case):
    """NVCRE's test Workflow: a trainJob with no runtimeRef, `execution: {}`, the case's overrides."""
    trainer = {**TRAINER, **case.get("trainer", {})}
    return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Workflow", "metadata": {"name": "test-workflow"},
            "spec": {"jobTemplate": {"spec": {"workload": {"trainJob": {"trainer": trainer}}}},
                     "orchestration": {"execution": {}}, "overrides": case["overrides"]}}


@pytest.mark.parametrize("case", SHAPES, ids=[c["id"] for c in SHAPES])
def test_rendered_workflow_is_what_nvcrectl_prints(case):
    given = nvcre_input(case)
    out = render.render(copy.deepcopy(given), nodes_of(case))
    expect = case["expect"]
    trainer = {**given["spec"]["jobTemplate"]["spec"]["workload"]["trainJob"]["trainer"], **expect["trainer"]}
    assert out.workflow == {
        "apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Workflow",
        "metadata": {"name": "test-workflow", "annotations": expect["annotations"]},
        "spec": {"jobTemplate": {"spec": {"workload": {"trainJob": {"trainer": trainer}}}}, **expect["spec"]}}
    # nvcrectl renders it; NVCRE's API server would refuse it until something supplies the runtime.
    assert out.warnings == [render.RUNTIME_REF_REQUIRED]
    assert render.RUNTIME_REF_REQUIRED == "spec.jobTemplate.spec.workload.trainJob.runtimeRef: Required value"


def test_an_override_that_supplies_the_runtime_leaves_no_warning():
    given = nvcre_input(SHAPES[0])
    given["spec"]["overrides"] = [{"when": {"platform": {"equals": "aws"}}, "jobTemplate": {"spec": {"workload": {
        "trainJob": {"runtimeRef": {"name": "aws-runtime"}}}}}}]
    out = render.render(given, mocknodes.mock_nodes("aws", "h100", 4))
    assert out.warnings == []
    assert out.workflow["spec"]["jobTemplate"]["spec"]["workload"]["trainJob"]["runtimeRef"] == {"name": "aws-runtime"}


def test_the_plan_still_runs_on_the_defaulted_spec():
    """The Jobs the run would create are unchanged by the document's shape (maxConcurrent, iterations filled)."""
    out = render.render(copy.deepcopy(BASE), mocknodes.mock_nodes("aws", "h100", 4))
    assert out.failure is None and [j["name"] for j in out.plan["jobs"]] == [
        "nccl-test-group-0-iter-1", "nccl-test-group-1-iter-1"]
    assert out.workflow["spec"]["orchestration"] == {"iterations": 1, "execution": {"timeoutPerJob": "30m"}}
    assert out.warnings == []


def test_an_empty_runtime_ref_is_still_refused():
    given = copy.deepcopy(BASE)
    given["spec"]["jobTemplate"]["spec"]["workload"]["trainJob"]["runtimeRef"] = {}
    with pytest.raises(InputError, match=r"trainJob\.runtimeRef\.name: Required value"):
        render.render(given, mocknodes.mock_nodes("aws", "h100", 2))


# (given spec, its defaulted dump, the resolved spec) -> the document's spec
CASES = [
    pytest.param({"orchestration": {}}, {"orchestration": {"iterations": 1}}, {"orchestration": {"iterations": 1}},
                 {"orchestration": {"execution": {}}}, id="defaults-not-given-are-absent"),
    pytest.param({"orchestration": {"execution": {"maxConcurrent": 0, "retryFailedGroups": 0}, "iterations": 1}},
                 {"orchestration": {"execution": {"maxConcurrent": 0, "retryFailedGroups": 0}, "iterations": 1}},
                 {"orchestration": {"execution": {"maxConcurrent": 0, "retryFailedGroups": 0}, "iterations": 1}},
                 {"orchestration": {"execution": {}, "iterations": 1}}, id="omitempty-drops-a-written-zero"),
    pytest.param({"orchestration": {}}, {"orchestration": {"iterations": 1}}, {"orchestration": {"iterations": 3}},
                 {"orchestration": {"iterations": 3, "execution": {}}}, id="an-override-set-value-stays"),
    pytest.param({"orchestration": {"execution": {"maxConcurrent": 2}, "topology": {"topologyKey": "k",
                                                                                    "strictDomain": False}}},
                 {"orchestration": {"execution": {"maxConcurrent": 2, "retryFailedGroups": 0},
                                    "topology": {"topologyKey": "k", "strictDomain": False}, "iterations": 1}},
                 {"orchestration": {"execution": {"maxConcurrent": 2, "retryFailedGroups": 0},
                                    "topology": {"topologyKey": "k", "strictDomain": False}, "iterations": 1}},
                 {"orchestration": {"execution": {"maxConcurrent": 2}, "topology": {"topologyKey": "k"}}},
                 id="non-zero-kept-false-dropped"),
    pytest.param({"orchestration": {}, "validation": {"performance": {"plugin": "nccl"}}},
                 {"orchestration": {"iterations": 1}, "validation": {"performance": {"plugin": "nccl", "enabled": False}}},
                 {"orchestration": {"iterations": 1}, "validation": {"performance": {"plugin": "nccl", "enabled": False}}},
                 {"orchestration": {"execution": {}},
                  "validation": {"performance": {"plugin": "nccl", "enabled": False, "tracking": {}}}},
                 id="performance-enabled-and-tracking-always-printed"),
    pytest.param({"orchestration": {}, "jobTemplate": {"metadata": {}, "spec": {"checkpoint": {"pvcName": "p"}}}},
                 {"orchestration": {"iterations": 1},
                  "jobTemplate": {"metadata": {}, "spec": {"checkpoint": {"pvcName": "p", "maxRestarts": 0}}}},
                 {"orchestration": {"iterations": 1},
                  "jobTemplate": {"metadata": {}, "spec": {"checkpoint": {"pvcName": "p", "maxRestarts": 0}}}},
                 {"orchestration": {"execution": {}}, "jobTemplate": {"spec": {"checkpoint": {"pvcName": "p"}}}},
                 id="empty-template-metadata-and-pointer-default-absent"),
]


@pytest.mark.parametrize(("given", "dumped", "resolved", "expected"), CASES)
def test_nvcre_spec(given, dumped, resolved, expected):
    before = copy.deepcopy(resolved)
    assert nvcre_spec(given, dumped, resolved) == expected
    assert resolved == before  # the engine's copy is left as it was
