"""The WorkloadRun build: runtime per framework, env and -x merging, sizing, platform overrides, refusals, gang intent."""
from __future__ import annotations

import copy

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError, WorkflowFailure
from ansible_collections.cre.certification.plugins.module_utils.engine.plan import mocknodes
from ansible_collections.cre.certification.plugins.module_utils.engine.plan.render import render
from ansible_collections.cre.certification.plugins.module_utils.engine.plan.workloadrun_build import build_workflow

MPI = {"binary": "/usr/local/bin/all_reduce_perf_mpi", "args": ["-b", "8"], "mpirunPath": "/usr/local/mpi/bin/mpirun"}
FRAMEWORKS = {"mpi": MPI, "torch": {"script": "train.py", "args": ["--steps", "5"]},
              "exec": {"command": ["nvidia-smi"], "args": ["-L"]}}
PLATFORMS = [("aws", "h100"), ("aws", "gb200"), ("aws", "gb300"), ("gcp", "h100"), ("gcp", "gb200"),
             ("azure", "h100"), ("oci", "h100"), ("oci", "gb300"), ("onprem", "b300"), ("onprem", "gb300"),
             ("mistral", "gb300")]


def run(framework="mpi", **spec):
    return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "WorkloadRun",
            "metadata": {"name": "wr", "namespace": "ns", "uid": "uid-1"},
            "spec": {"image": "img:1", "numNodes": 2, "framework": {framework: copy.deepcopy(FRAMEWORKS[framework])},
                     **spec}}


def build(obj, platform="onprem", arch="b300", count=4):
    nodes = mocknodes.mock_nodes(platform, arch, count)
    return build_workflow(obj, platform=platform, gpu_architecture=arch, nodes=nodes), nodes


def trainer(workflow):
    return workflow["spec"]["jobTemplate"]["spec"]["workload"]["trainJob"]["trainer"]


@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
@pytest.mark.parametrize(("platform", "arch"), PLATFORMS)
def test_every_platform_builds_a_workflow_the_controller_accepts(platform, arch, framework):
    (workflow, resolved), nodes = build(run(framework), platform, arch, 4)
    assert workflow["metadata"]["name"] == "wr"
    assert workflow["metadata"]["labels"]["nvcre.nvidia.com/workload-run"] == "wr"
    assert workflow["metadata"]["ownerReferences"][0] == {
        "apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "WorkloadRun", "name": "wr", "uid": "uid-1",
        "controller": True, "blockOwnerDeletion": True}
    rendered = render(workflow, nodes)
    assert rendered.failure is None
    assert rendered.plan["detected_platform"] == platform
    assert rendered.plan["nodes_per_job"] == 2
    runtime = workflow["spec"]["dependencies"][0]
    jobs = [rj["name"] for rj in runtime["spec"]["template"]["spec"]["replicatedJobs"]]
    assert jobs == (["node", "launcher"] if framework == "mpi" else ["node"])
    assert trainer(workflow)["numProcPerNode"] == resolved.gpus_per_node
    images = {c["image"] for rj in runtime["spec"]["template"]["spec"]["replicatedJobs"]
              for c in rj["template"]["spec"]["template"]["spec"]["containers"]}
    assert images == {"img:1"}


@pytest.mark.parametrize(("framework", "command", "args"), [
    ("torch", ["torchrun"], ["train.py", "--steps", "5"]),
    ("exec", ["nvidia-smi"], ["-L"]),
])
def test_torch_and_exec_commands(framework, command, args):
    (workflow, _resolved), _nodes = build(run(framework))
    assert (trainer(workflow)["command"], trainer(workflow)["args"]) == (command, args)


def test_torch_module_runs_with_dash_m():
    obj = run("torch")
    obj["spec"]["framework"]["torch"] = {"module": "pkg.train"}
    (workflow, _resolved), _nodes = build(obj)
    assert trainer(workflow)["args"] == ["-m", "pkg.train"]


def test_env_merges_over_the_nccl_defaults_and_mpi_forwards_it_with_the_users_x_winning():
    obj = run(env=[{"name": "NCCL_DEBUG", "value": "WARN"}, {"name": "FOO", "value": "1"}])
    obj["spec"]["framework"]["mpi"]["mpiArgs"] = ["-x", "FOO=2"]
    (workflow, _resolved), _nodes = build(obj)
    env = {e["name"]: e["value"] for e in trainer(workflow)["env"]}
    assert env == {"NCCL_DEBUG": "WARN", "NCCL_MNNVL_ENABLE": "0", "FOO": "1"}
    args = trainer(workflow)["args"]
    assert args[args.index("NCCL_DEBUG=WARN") - 1] == "-x"
    assert "FOO=1" not in args and args.count("FOO=2") == 1
    assert args[-3:] == ["/usr/local/bin/all_reduce_perf_mpi", "-b", "8"]
    assert trainer(workflow)["command"] == ["timeout", "3600", "/usr/local/mpi/bin/mpirun"]


def test_aws_strips_the_ofi_plugin_and_mpi_forwards_none_unless_the_user_forwards_it():
    (workflow, _resolved), _nodes = build(run("mpi"), "aws", "h100")
    args = trainer(workflow)["args"]
    assert args[args.index("NCCL_NET_PLUGIN=none") - 1] == "-x"
    obj = run("mpi")
    obj["spec"]["framework"]["mpi"]["mpiArgs"] = ["-x", "NCCL_NET_PLUGIN=ofi"]
    (workflow, _resolved), _nodes = build(obj, "aws", "h100")
    assert "NCCL_NET_PLUGIN=none" not in trainer(workflow)["args"]
    (workflow, _resolved), _nodes = build(run("exec"), "aws", "h100")
    assert trainer(workflow)["command"] == ["bash", "-c"]
    assert trainer(workflow)["args"][0].startswith("rm -rf /opt/amazon; unset NCCL_NET_PLUGIN")
    assert trainer(workflow)["args"][1:] == ["nvidia-smi", "-L"]


def test_gb300_gets_the_compute_domain_and_aws_gb300_mpi_pins_tcp():
    (workflow, _resolved), _nodes = build(run("mpi"), "aws", "gb300")
    kinds = {d["kind"] for d in workflow["spec"]["dependencies"]}
    assert {"ComputeDomain", "ResourceClaimTemplate"} <= kinds
    args = trainer(workflow)["args"]
    assert "btl_tcp_if_include" in args and "coll_ucc_enable" in args


@pytest.mark.parametrize(("orchestration", "nodes_per_job", "groups"), [
    ({}, 2, 2), ({"placement": "Unpinned"}, 2, 1), ({"testScale": "intra-node"}, 1, 4)])
def test_pinned_unpinned_and_intra_node(orchestration, nodes_per_job, groups):
    (workflow, resolved), nodes = build(run(orchestration=orchestration))
    assert trainer(workflow)["numNodes"] == nodes_per_job == resolved.nodes_per_job
    assert len(render(workflow, nodes).plan["groups"]) == groups


@pytest.mark.parametrize("scale", ["intra-node", "intra-rack"])
def test_unpinned_with_a_per_node_or_rack_scale_is_refused_with_nvcres_message(scale):
    with pytest.raises(InputError) as err:
        build(run(orchestration={"placement": "Unpinned", "testScale": scale}))
    assert str(err.value).startswith(f'orchestration.placement: Unpinned is incompatible with orchestration.testScale '
                                     f'"{scale}": {scale} runs one job per ')


def test_no_framework_is_a_build_failure():
    obj = run()
    obj["spec"]["framework"] = {}
    with pytest.raises(WorkflowFailure) as err:
        build(obj)
    assert err.value.message == "exec framework selected but spec.framework.exec is nil"


def test_gang_intent_is_recorded_and_a_conflicting_override_is_reported():
    gang = {"schedulerName": "kai-scheduler", "queue": "team-a"}
    (workflow, _resolved), nodes = build(run(gangScheduler=gang))
    assert workflow["spec"]["gangScheduler"] == {**gang, "queueLabelKey": "kai.scheduler/queue"}
    assert workflow["spec"]["jobTemplate"]["spec"]["workloadMetadata"]["labels"] == {"kai.scheduler/queue": "team-a"}
    assert render(workflow, nodes).failure is None
    override = {"when": {}, "dependencies": [{
        "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime", "metadata": {"name": "wr-runtime"},
        "spec": {"template": {"spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {"template": {
            "metadata": {"labels": {"kai.scheduler/queue": "other"}}}}}}]}}}}]}
    (workflow, _resolved), nodes = build(run(gangScheduler=gang, overrides=[override]))
    failure = render(workflow, nodes).failure
    assert failure is not None and failure.reason == "GangSchedulingConflict"


def test_measurements_thresholds_and_checkpoint_pass_through():
    (workflow, _resolved), _nodes = build(run(
        bandwidthMeasurement={"logProfileRef": "nccl-bandwidth", "testType": "all_reduce"},
        thresholds={"busBandwidthGBps": "value >= 400"}, checkpoint={"storageSize": "1Ti", "maxRestarts": 2},
        orchestration={"timeoutPerJob": "2h", "repeatCount": 3}))
    spec = workflow["spec"]
    assert spec["jobTemplate"]["spec"]["bandwidthMeasurement"]["testType"] == "all_reduce"
    assert spec["validation"]["performance"]["thresholds"]["thresholds"] == {"busBandwidthGBps": "value >= 400"}
    assert spec["jobTemplate"]["spec"]["checkpoint"] == {"pvcName": "wr-checkpoint-pvc", "maxRestarts": 2}
    assert spec["orchestration"]["iterations"] == 3 and spec["orchestration"]["execution"]["timeoutPerJob"] == "2h"
    assert any(d["kind"] == "PersistentVolumeClaim" for d in spec["dependencies"])


@pytest.mark.parametrize("framework", ["mpi", "torch", "exec"])
def test_a_named_nic_resource_is_requested_on_every_node_pod_and_the_launcher_is_labelled(framework):
    (workflow, _resolved), _nodes = build(run(framework, nicResourceName="rdma/ib", mlnxPerNode=2))
    (runtime,) = [d for d in workflow["spec"]["dependencies"] if d.get("kind") == "TrainingRuntime"]
    jobs = {j["name"]: j for j in runtime["spec"]["template"]["spec"]["replicatedJobs"]}
    (node,) = [c for c in jobs["node"]["template"]["spec"]["template"]["spec"]["containers"] if c["name"] == "node"]
    assert node["resources"]["limits"]["rdma/ib"] == node["resources"]["requests"]["rdma/ib"] == "2"
    patches = workflow["spec"]["jobTemplate"]["spec"]["workload"]["trainJob"]["runtimePatches"]
    addressed = [j["name"] for p in patches for j in p["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]]
    assert addressed == (["node", "launcher"] if framework == "mpi" else ["node"])
    (plain, _resolved), _nodes = build(run(framework))
    assert "rdma/ib" not in str(plain)
