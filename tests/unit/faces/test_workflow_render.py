"""The workflow_render face: in-process through the action plugin, and a few runs of the real `ansible`."""
import json
from pathlib import Path

import jsonpatch
import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.plan import mocknodes
from ansible_collections.cre.certification.plugins.modules import workflow_render as stub
from tests.ansible_run import ansible_module
from tests.unit.faces.module_stub import documented_spec

ROOT = Path(__file__).resolve().parents[3]
WORKFLOW_FILE = ROOT / "tests" / "unit" / "engine" / "data" / "render" / "_workflow.yaml"
BASE = yaml.safe_load(WORKFLOW_FILE.read_text())
MOCK = {"platform": "aws", "gpu_architecture": "h100"}
CONFLICT = [{"op": "add", "path": "/spec/overrides", "value": [{"when": {"platform": {"equals": "aws"}}, "jobTemplatePatch": [
    {"op": "replace", "path": "/spec/workloadMetadata/labels/kai.scheduler~1queue", "value": "team-b"}]}]}]
CONFLICT_MSG = ('spec.jobTemplate.spec.workloadMetadata.labels["kai.scheduler/queue"]: conflicting label value "team-b", '
                'expected "team-a"')


def job_names(result):
    return [j["name"] for j in result["plan"]["jobs"]]


def test_pinned_and_unpinned_twelve_nodes(run_action):
    pinned = run_action("workflow_render", {"src": str(WORKFLOW_FILE), **MOCK, "node_count": 12})
    assert not pinned.get("failed") and pinned["changed"] is False
    assert job_names(pinned) == [f"nccl-test-group-{i}-iter-1" for i in range(6)]
    unpinned = jsonpatch.apply_patch(BASE, [{"op": "add", "path": "/spec/orchestration/placement", "value": "Unpinned"}])
    result = run_action("workflow_render", {"definition": unpinned, **MOCK, "node_count": 12})
    assert job_names(result) == ["nccl-test-job"] and result["plan"]["groups"][0]["nodes"] == []


def test_failure_carries_reason_and_exact_message(run_action):
    result = run_action("workflow_render", {"definition": jsonpatch.apply_patch(BASE, CONFLICT), **MOCK})
    assert (result["failed"], result["reason"], result["msg"]) == (True, "GangSchedulingConflict", CONFLICT_MSG)
    assert result["plan"]["jobs"] == [] and result["plan"]["detected_platform"] == "aws"


def test_a_workflow_without_runtime_ref_renders_with_a_warning(run_action):
    """nvcrectl renders it; the warning is what NVCRE's API server would answer to the rendered Workflow."""
    no_runtime = jsonpatch.apply_patch(BASE, [{"op": "remove", "path": "/spec/jobTemplate/spec/workload/trainJob/runtimeRef"},
                                              {"op": "remove", "path": "/spec/gangScheduler"},
                                              {"op": "remove", "path": "/spec/jobTemplate/spec/workloadMetadata"}])
    result = run_action("workflow_render", {"definition": no_runtime, **MOCK, "node_count": 4})
    assert not result.get("failed"), result.get("msg")
    assert result["warnings"] == ["spec.jobTemplate.spec.workload.trainJob.runtimeRef: Required value"]
    assert "runtimeRef" not in result["workflow"]["spec"]["jobTemplate"]["spec"]["workload"]["trainJob"]
    assert job_names(result) == ["nccl-test-group-0-iter-1", "nccl-test-group-1-iter-1"]
    assert run_action("workflow_render", {"definition": BASE, **MOCK, "node_count": 4})["warnings"] == []


def test_check_mode_returns_the_same_plan(run_action):
    args = {"definition": BASE, **MOCK, "node_count": 4}
    assert run_action("workflow_render", args, check_mode=True) == run_action("workflow_render", args)


@pytest.mark.parametrize("shape", ["list", "v1-list", "documents"])
def test_nodes_file_shapes(shape, tmp_path, run_action):
    nodes = mocknodes.mock_nodes("gcp", "gb200", 20)
    path = tmp_path / "nodes.yaml"
    if shape == "list":
        path.write_text(json.dumps(nodes))
    elif shape == "v1-list":
        path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": nodes}))
    else:
        path.write_text(yaml.safe_dump_all(nodes))
    from_file = run_action("workflow_render", {"definition": BASE, "nodes_file": str(path)})
    inline = run_action("workflow_render", {"definition": BASE, "nodes": nodes})
    mock = run_action("workflow_render", {"definition": BASE, "platform": "gcp", "gpu_architecture": "gb200",
                                          "node_count": 20})
    assert from_file == inline == mock
    assert from_file["reason"] == "PartitionError"  # 8 GPUs requested, GB200 nodes have 4
    assert from_file["msg"] == "No node can supply the 8 nvidia.com/gpu the workload requests per node; best available is 4"


def test_documentation_matches_the_argument_spec():
    spec = documented_spec(stub, ("type", "elements", "choices", "default"))
    assert spec["platform"]["choices"] == list(mocknodes.PLATFORMS)
    assert spec["gpu_architecture"]["choices"] == list(mocknodes.ARCHITECTURES)


def ansible(args: dict) -> tuple[int, dict]:
    return ansible_module("workflow_render", args)


def test_real_ansible_renders_six_jobs():
    rc, result = ansible({"src": str(WORKFLOW_FILE.relative_to(ROOT)), **MOCK, "node_count": 12})
    assert rc == 0, result
    assert job_names(result) == [f"nccl-test-group-{i}-iter-1" for i in range(6)]
    assert result["workflow"]["metadata"]["annotations"]["nvcrectl.nvidia.com/detected-platform"] == "aws"


def test_real_ansible_reports_a_gang_conflict():
    rc, result = ansible({"definition": jsonpatch.apply_patch(BASE, CONFLICT), **MOCK})
    assert rc != 0
    assert (result["reason"], result["msg"]) == ("GangSchedulingConflict", CONFLICT_MSG)
    assert "Traceback" not in result.get("exception", "")  # ansible 2.19 reports "(traceback unavailable)"


def test_real_ansible_rejects_two_node_contexts():
    rc, result = ansible({"definition": BASE, "nodes": [], **MOCK})
    assert rc != 0 and "Traceback" not in result.get("exception", "")
    assert "mutually exclusive: nodes|nodes_file|platform" in result["msg"]
