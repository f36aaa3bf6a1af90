"""The workloadrun_render face, in-process through the action plugin: the module's own example, the arguments'
rules, and what a refused run returns."""
import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.plan import mocknodes
from ansible_collections.cre.certification.plugins.modules import workloadrun_render as stub

(EXAMPLE,) = [task["cre.certification.workloadrun_render"] for task in yaml.safe_load(stub.EXAMPLES)]
SMALL = {"image": "nvcr.io/nvidia/pytorch:26.01-py3", "numNodes": 2,
         "framework": {"mpi": {"binary": "/usr/local/bin/all_reduce_perf_mpi", "mpirunPath": "/usr/local/mpi/bin/mpirun"}}}
AWS_H100 = {"platform": "aws", "gpu_architecture": "h100"}


def test_the_documented_example_builds_four_pinned_groups_of_four_named_for_the_run(run_action):
    result = run_action("workloadrun_render", EXAMPLE)
    assert not result.get("failed") and result["changed"] is False
    workflow, plan = result["workflow"], result["plan"]
    assert workflow["metadata"]["name"] == "nccl-all-reduce"
    assert workflow["metadata"]["labels"]["nvcre.nvidia.com/workload-run"] == "nccl-all-reduce"
    assert [(o["kind"], o["name"]) for o in workflow["metadata"]["ownerReferences"]] == [("WorkloadRun", "nccl-all-reduce")]
    assert (plan["detected_platform"], plan["placement"], plan["total_nodes"], plan["nodes_per_job"]) == (
        "aws", "Pinned", 16, 4)
    assert [g["nodes"] for g in plan["groups"]] == [[f"gpu-node-{4 * g + i:03d}" for i in range(4)] for g in range(4)]
    assert [j["name"] for j in plan["jobs"]] == [f"nccl-all-reduce-group-{g}-iter-1" for g in range(4)]
    trainer = plan["jobs"][0]["manifest"]["spec"]["workload"]["trainJob"]["trainer"]
    assert trainer["image"] == EXAMPLE["spec"]["image"]


def test_check_mode_returns_the_same_result(run_action):
    assert run_action("workloadrun_render", EXAMPLE, check_mode=True) == run_action("workloadrun_render", EXAMPLE)


def test_intra_node_runs_one_node_per_job(run_action):
    spec = {**EXAMPLE["spec"], "orchestration": {"testScale": "intra-node"}}
    plan = run_action("workloadrun_render", {**EXAMPLE, "spec": spec})["plan"]
    assert plan["nodes_per_job"] == 1 and len(plan["jobs"]) == 16


def test_nodes_given_render_as_the_platform_s_mock_nodes(run_action):
    mocked = run_action("workloadrun_render", {**AWS_H100, "node_count": 4, "spec": SMALL})
    given = run_action("workloadrun_render", {"nodes": mocknodes.mock_nodes("aws", "h100", 4), "spec": SMALL})
    assert given == mocked and len(given["plan"]["jobs"]) == 2


def test_an_override_that_moves_the_gang_queue_is_a_gang_scheduling_conflict_not_a_workflow(run_action):
    override = {"when": {}, "jobTemplatePatch": [
        {"op": "replace", "path": "/spec/workloadMetadata/labels/kai.scheduler~1queue", "value": "team-b"}]}
    spec = {**SMALL, "gangScheduler": {"schedulerName": "kai-scheduler", "queue": "team-a"}, "overrides": [override]}
    result = run_action("workloadrun_render", {**AWS_H100, "node_count": 4, "spec": spec})
    assert (result["failed"], result["reason"]) == (True, "GangSchedulingConflict") and "workflow" not in result
    assert result["msg"] == ('spec.jobTemplate.spec.workloadMetadata.labels["kai.scheduler/queue"]: conflicting label '
                             'value "team-b", expected "team-a"')
    assert result["plan"]["jobs"] == [] and result["plan"]["detected_platform"] == "aws"


@pytest.mark.parametrize(("spec", "msg"), [
    ({k: v for k, v in SMALL.items() if k != "image"}, "spec.image: Required value"),
    ({**SMALL, "framework": {**SMALL["framework"], "exec": {"command": ["true"]}}},
     "spec.framework: at most one of torch, mpi or exec may be set"),
])
def test_a_spec_the_cluster_would_refuse_fails_with_its_field_path(spec, msg, run_action):
    assert run_action("workloadrun_render", {**AWS_H100, "spec": spec}) == {"failed": True, "changed": False, "msg": msg}


@pytest.mark.parametrize(("args", "msg"), [
    ({"platform": "aws"}, "parameters are required together: platform, gpu_architecture"),
    ({"nodes": [], **AWS_H100}, "parameters are mutually exclusive: nodes|platform, nodes|gpu_architecture"),
    ({}, "one of the following is required: nodes, platform"),
])
def test_the_nodes_come_from_exactly_one_place(args, msg, run_action):
    result = run_action("workloadrun_render", {**args, "spec": SMALL})
    assert result["failed"] and result["msg"] == msg and "workflow" not in result


def test_an_unlisted_architecture_is_rendered_with_nvcres_defaults_warning(run_action):
    nodes = mocknodes.mock_nodes("aws", "h100", 4)
    for node in nodes:
        node["metadata"]["labels"]["nvidia.com/gpu.product"] = "NVIDIA-H20"
    result = run_action("workloadrun_render", {"nodes": nodes, "spec": {**SMALL, "gpusPerNode": 8}})
    assert result["warnings"] == [
        'GPU architecture "h20" has no entry in the catalog\'s GPU defaults, which fall back to gpusPerNode=4 '
        "mlnxPerNode=0 for it; this run is sized at gpusPerNode=8 mlnxPerNode=0. If the nodes differ, set "
        "spec.gpusPerNode and spec.mlnxPerNode, and file an issue so the architecture can be added to the catalog."]
    assert run_action("workloadrun_render", {**AWS_H100, "node_count": 4, "spec": SMALL})["warnings"] == []
