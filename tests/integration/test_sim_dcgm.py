"""A DCGM GPU fault on the simulator, live: `fault --kind dcgm` makes a `dcgmi diag --run 2 --json` pod print
the failing GPU in its log and fail with dcgmi's exit code; a fault on a test level 2 does not run does not show;
`--kind none` clears it and the next run passes. Read back with the product's own reader."""
from __future__ import annotations

import time

import pytest
from kubernetes import client

from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.dcgm_json import read_json
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.dcgm_verdict import Options, judge
from tools.sim import cluster, faults, stages
from tools.sim.state import ClusterState

from .conftest import SIM, Sim

pytestmark = pytest.mark.clusters(SIM)
NODE = "gpu-node-012"   # a GB200 node: 4 GPUs
ARGS = ["diag", "--host", "nvidia-dcgm.gpu-operator.svc:5555", "--run", "2", "--json", "--verbose"]


def run_dcgm(api: client.ApiClient, namespace: str, name: str) -> tuple[client.V1Pod, str]:
    """A Job pod on NODE running the catalog's level-2 command, once ended, and its log."""
    client.BatchV1Api(api).create_namespaced_job(namespace, {"metadata": {"name": name}, "spec": {
        "backoffLimit": 0, "template": {"metadata": {"labels": {stages.JOBSET_NAME: name}}, "spec": {
            "restartPolicy": "Never", "nodeSelector": {"kubernetes.io/hostname": NODE},
            "containers": [{"name": "node", "image": "dcgm", "command": ["dcgmi"], "args": ARGS,
                            "resources": {"limits": {"nvidia.com/gpu": "4"}}}]}}}})
    core, deadline = client.CoreV1Api(api), time.monotonic() + 60
    while time.monotonic() < deadline:
        for pod in core.list_namespaced_pod(namespace, label_selector=f"job-name={name}").items:
            if pod.status.phase in ("Succeeded", "Failed"):
                return pod, core.read_namespaced_pod_log(pod.metadata.name, namespace)
        time.sleep(0.1)
    raise AssertionError(f"the DCGM pod of Job {name} did not end within a minute")


def test_a_dcgm_fault_fails_its_gpu_in_the_log_and_the_pod_and_none_clears_it(sim: Sim, namespace: str) -> None:
    cluster.pod_duration(sim.name, namespace, 300)
    faults.fault(sim.name, NODE, "dcgm", gpu=3, test="memory")
    faults.fault(sim.name, NODE, "dcgm", gpu=1, test="targeted_stress")   # level 3 and up only
    try:
        pod, log = run_dcgm(sim.api, namespace, "faulty")
    finally:
        faults.fault(sim.name, NODE, "none")
    (status,) = pod.status.container_statuses
    assert pod.status.phase == "Failed" and status.state.terminated.exit_code == 205
    out = judge(read_json(log), Options(node=NODE, expected_gpus=4))
    assert [(g["index"], [f["test"] for f in g["failures"]]) for g in out["gpus"] if g["outcome"] != "pass"] == [
        (3, ["memory"])]
    assert "A memory mismatch was detected on GPU 3" in out["gpus"][3]["failures"][0]["detail"]
    assert ClusterState.load(sim.name).dcgm_faults == {}
    pod, log = run_dcgm(sim.api, namespace, "healed")
    (status,) = pod.status.container_statuses
    assert pod.status.phase == "Succeeded" and status.state.terminated.exit_code == 0
    assert judge(read_json(log), Options(node=NODE, expected_gpus=4))["outcome"] == "pass"
