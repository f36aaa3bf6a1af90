"""WorkloadRun on a simulated 16-node H100 cluster through cre.certification.workloadrun_run: an MPI all_reduce_perf
run Pinned in groups of 4 (four Jobs, bandwidth measured and judged), the same Unpinned (one Job), Unpinned with
testScale intra-node refused with NVCRE's message before any write, a gang-scheduling override that changes the
queue label (GangSchedulingConflict, nothing created), torch and exec runs to Succeeded, and a run SIGKILLed
mid-way then run again: the same result, no duplicate object."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from tests.ansible_run import ansible_module, run_playbook, run_until

from .conftest import Sim

pytestmark = pytest.mark.clusters(("aws-h100", 16))

GROUP, VERSION = "nvcre.nvidia.com", "v1alpha1"
IMAGE = "nvcr.io/nvidia/pytorch:26.01-py3"
MPI = {"binary": "/usr/local/bin/all_reduce_perf_mpi", "args": ["-b", "8", "-e", "8G", "-f", "2", "-n", "20"],
       "mpirunPath": "/usr/local/mpi/bin/mpirun"}
BANDWIDTH = {"logProfileRef": "nccl-bandwidth", "testType": "all_reduce", "sampleInterval": "10s"}


@pytest.fixture(scope="module")
def h100(pooled) -> Sim:
    return pooled("aws-h100", 16)


@pytest.fixture
def ns(h100: Sim, request: pytest.FixtureRequest) -> str:
    name = f"wr-{hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:10]}"
    client.CoreV1Api(h100.api).create_namespace({"metadata": {"name": name}})
    return name


def spec(**more: Any) -> dict:
    return {"image": IMAGE, "framework": {"mpi": MPI}, "numNodes": 4, "bandwidthMeasurement": BANDWIDTH,
            "thresholds": {"busBandwidthGBps": "value >= 100"}, **more}


def run(sim: Sim, namespace: str, name: str, body: dict, **more: Any) -> tuple[int, dict]:
    return ansible_module("workloadrun_run", {"kubeconfig": str(sim.kubeconfig), "name": name, "namespace": namespace,
                                              "spec": body, "poll_interval": 0.3, "timeout": 400, **more}, timeout=500)


def items(sim: Sim, namespace: str, plural: str, group: str = GROUP, version: str = VERSION) -> list[dict]:
    return client.CustomObjectsApi(sim.api).list_namespaced_custom_object(group, version, namespace, plural)["items"]


def written(sim: Sim, namespace: str) -> dict[str, list[str]]:
    """Names of what a run may create in its namespace."""
    out = {plural: sorted(i["metadata"]["name"] for i in items(sim, namespace, plural))
           for plural in ("workloadruns", "workflows", "jobs", "bandwidthmeasurements")}
    out["trainjobs"] = sorted(i["metadata"]["name"] for i in items(sim, namespace, "trainjobs", "trainer.kubeflow.org",
                                                                   "v1alpha1"))
    return out


def test_mpi_pinned_in_groups_of_four_then_unpinned_as_one_job(h100: Sim, ns: str) -> None:
    rc, result = run(h100, ns, "ar-pinned", spec())
    assert rc == 0 and result["phase"] == "Succeeded", result
    assert (result["condition"]["reason"], result["workflow"]) == ("WorkflowSucceeded", "ar-pinned")
    jobs = items(h100, ns, "jobs")
    assert len(jobs) == 4 and sorted(len(j["metadata"]["annotations"]["nvcre.nvidia.com/group-nodes"].split(","))
                                     for j in jobs) == [4, 4, 4, 4]
    measured = [m for m in items(h100, ns, "bandwidthmeasurements") if m["status"].get("results")]
    assert len(measured) == 4 and all(float(m["status"]["results"][-1]["busBW"]) >= 100 for m in measured)
    gpu_nodes = client.CoreV1Api(h100.api).list_node(label_selector="nvidia.com/gpu.present=true").items
    assert sorted(result["succeeded_nodes"]) == sorted(n.metadata.name for n in gpu_nodes)
    run_obj = client.CustomObjectsApi(h100.api).get_namespaced_custom_object(
        GROUP, VERSION, ns, "workloadruns", "ar-pinned")
    assert run_obj["status"]["workflowRef"]["name"] == "ar-pinned" and run_obj["status"]["resolvedGpusPerNode"] == 8
    # The report of the run: one category, its bandwidth judged.
    rc, report = ansible_module("certification_results",
                                {"kubeconfig": str(h100.kubeconfig), "workload_run": "ar-pinned", "namespace": ns})
    assert rc == 0 and report["result"] == "PASSED", report
    (category,) = report["report"]["categories"]
    assert (category["domain"], category["variant"], category["jobs"]) == ("workloadrun", "ar-pinned", 4)
    assert len(category["groupBandwidth"]) == 4
    # Unpinned: the same run is one Job of 4 nodes.
    rc, result = run(h100, ns, "ar-unpinned", spec(orchestration={"placement": "Unpinned"}))
    assert rc == 0 and result["phase"] == "Succeeded", result
    unpinned = [j for j in items(h100, ns, "jobs") if j["metadata"]["labels"].get("nvcre.nvidia.com/workflow") ==
                "ar-unpinned"]
    assert len(unpinned) == 1


def test_refusals_write_nothing(h100: Sim, ns: str) -> None:
    rc, result = run(h100, ns, "refused", spec(orchestration={"placement": "Unpinned", "testScale": "intra-node"}))
    assert rc != 0 and result["msg"].startswith(
        'orchestration.placement: Unpinned is incompatible with orchestration.testScale "intra-node"'), result["msg"]
    assert "\n" not in result["msg"]
    # A gang scheduler whose override sets another queue label: NVCRE's GangSchedulingConflict, nothing launched.
    gang = {"schedulerName": "kai-scheduler", "queue": "team-a"}
    override = {"when": {}, "jobTemplatePatch": [
        {"op": "replace", "path": "/spec/workloadMetadata/labels/kai.scheduler~1queue", "value": "team-b"}]}
    rc, result = run(h100, ns, "gang", spec(gangScheduler=gang, overrides=[override]))
    assert rc == 0 and result["phase"] == "Failed", result  # the run ended: its Workflow's verdict is Failed
    workflow = client.CustomObjectsApi(h100.api).get_namespaced_custom_object(GROUP, VERSION, ns, "workflows", "gang")
    (failed,) = [c for c in workflow["status"]["conditions"] if c["type"] == "Failed" and c["status"] == "True"]
    assert failed["reason"] == "GangSchedulingConflict" and '"team-b"' in failed["message"], failed
    after = written(h100, ns)
    assert after["jobs"] == [] and after["trainjobs"] == [] and after["workloadruns"] == ["gang"]


def per_node(framework: dict) -> dict:
    return {"image": IMAGE, "framework": framework, "numNodes": 1, "orchestration": {"testScale": "intra-node"},
            "target": {"nodeNames": ["gpu-node-000", "gpu-node-001"]}}


def test_torch_runs_to_succeeded_and_check_mode_writes_nothing(h100: Sim, ns: str) -> None:
    body = per_node({"torch": {"script": "train.py", "args": ["--steps", "10"]}})
    rc, planned = ansible_module("workloadrun_run", {"kubeconfig": str(h100.kubeconfig), "name": "torch",
                                                     "namespace": ns, "spec": body}, "--check")
    assert rc == 0 and planned["plan"] and written(h100, ns)["workloadruns"] == [], planned
    rc, result = run(h100, ns, "torch", body)
    assert rc == 0 and result["phase"] == "Succeeded", result
    assert sorted(result["succeeded_nodes"]) == ["gpu-node-000", "gpu-node-001"]
    assert len(items(h100, ns, "jobs")) == 2


def test_the_playbook_runs_an_exec_run_and_writes_its_report(h100: Sim, ns: str, tmp_path: Path) -> None:
    host = {"k8s_kubeconfig": str(h100.kubeconfig), "workloadrun_name": "burn", "workloadrun_namespace": ns,
            "workloadrun_spec": per_node({"exec": {"command": ["/bin/sh", "-c"], "args": ["nvidia-smi"]}}),
            "workloadrun_poll_interval": 0.5, "workloadrun_timeout": 300}
    proc = run_playbook("workloadrun.yml", {"lab": host}, tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    report = json.loads((tmp_path / "cre-reports" / "lab" / "report.json").read_text())
    assert report["result"] == "PASSED" and [c["variant"] for c in report["categories"]] == ["burn"]
    assert {n["name"]: n["status"] for n in report["nodeResults"]} == {"gpu-node-000": "Passed",
                                                                       "gpu-node-001": "Passed"}


def test_sigkill_then_rerun_gives_the_same_result_without_duplicates(h100: Sim, ns: str) -> None:
    args = {"kubeconfig": str(h100.kubeconfig), "name": "killed", "namespace": ns, "spec": spec(),
            "poll_interval": 0.3, "timeout": 400}
    writes = [0]

    def third_write(line: str) -> bool:
        if line.lstrip().startswith(("create ", "replace ", "status ", "patch ")):
            writes[0] += 1
        return writes[0] >= 3

    run_until("workloadrun_run", args, third_write)
    assert writes[0] >= 3
    mid = written(h100, ns)
    assert mid["workloadruns"] == ["killed"]
    rc, result = ansible_module("workloadrun_run", args, timeout=500)
    assert rc == 0 and result["phase"] == "Succeeded", result
    after = written(h100, ns)
    assert after["workloadruns"] == ["killed"] and after["workflows"] == ["killed"]
    # One Job per group and at most one workload each: the rerun adopted what the killed run had made.
    assert len(after["jobs"]) == 4 and len(after["trainjobs"]) <= 4
    rc, again = ansible_module("workloadrun_run", args, timeout=200)
    assert rc == 0 and again["changed"] is False and written(h100, ns) == after
