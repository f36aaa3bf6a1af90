"""Training goodput on the local cluster (spec/measurements.md §3, §5): the simulated Megatron pods print their
training lines through the pod log API; the run measures goodput from them, detects a stall and restarts a
crashed workload from its checkpoint; its Job seals a row per step (issue 40)."""
from __future__ import annotations

import base64
from collections.abc import Callable

import pytest
from kubernetes import client

from ansible_collections.cre.certification.plugins.module_utils.engine.evidence import shards
from ansible_collections.cre.certification.plugins.module_utils.engine.logs.goodput import goodput
from ansible_collections.cre.certification.plugins.module_utils.engine.plan import category_build
from tests.ansible_run import ansible_module
from tools.sim import cluster, faults

from .conftest import Sim

pytestmark = pytest.mark.clusters(("aws-h100", 2))

NVCRE = ("nvcre.nvidia.com", "v1alpha1")
SMALL = {"maxSteps": 500, "saveInterval": 50}


@pytest.fixture(scope="module")
def trainer(pooled: Callable[..., Sim]) -> Sim:
    """Two aws-h100 nodes; a training pod runs 25 s (an iteration line every 0.5 s, 10 steps each)."""
    return pooled("aws-h100", 2, pod_ms={"default": 25000})


def train(sim: Sim, name: str, **options) -> dict:
    rc, result = ansible_module("certification_run", {
        "kubeconfig": str(sim.kubeconfig), "name": name, "namespace": "default",
        "categories": [{"domain": "training", "variant": "nemotron5-8b", "options": {**SMALL, **options}}],
        "poll_interval": 1, "timeout": 400}, timeout=460)
    assert rc == 0, result
    (category,) = result["categories"]
    return category


def one(sim: Sim, plural: str, workflow: str) -> dict:
    (obj,) = client.CustomObjectsApi(sim.api).list_namespaced_custom_object(
        *NVCRE, "default", plural, label_selector=f"nvcre.nvidia.com/workflow={workflow}")["items"]
    return obj


def condition(obj: dict, kind: str) -> dict:
    return next(c for c in obj["status"]["conditions"] if c["type"] == kind)


def test_goodput_is_the_formula_over_what_the_pods_printed(trainer: Sim) -> None:
    category = train(trainer, "steady")
    assert category["status"] == "Succeeded", category
    status = one(trainer, "goodputmeasurements", category["workflow"])["status"]
    done = condition({"status": status}, "Complete")
    assert (done["status"], done["reason"], done["message"]) == ("True", "JobSucceeded",
                                                                 "Referenced Job completed successfully")
    figures = {k: float(status[k]) for k in ("trainingTimeSec", "resumeTimeSec", "lostWorkTimeSec",
                                             "rescheduleTimeSec", "checkpointSaveTimeSec")}
    expected = goodput(figures["trainingTimeSec"], figures["resumeTimeSec"], figures["lostWorkTimeSec"],
                       figures["rescheduleTimeSec"], figures["checkpointSaveTimeSec"])
    assert status["result"] == f"{expected:.6f}" and 0.5 < expected < 1
    # What the pods printed: 50 ms per step (0.5 s per 10), 600 TFLOP/s, a checkpoint every 50 steps taking 0.2 s.
    assert (status["avgStepTimeSec"], status["avgTFLOPSPerGPU"]) == ("0.050000", "600.000000")
    saves = float(status["checkpointSaveTimeSec"]) / 0.2  # each sample counts its window's last checkpoint (§3.4)
    assert saves >= 1 and abs(saves - round(saves)) < 1e-6, status["checkpointSaveTimeSec"]
    assert status["lastCheckpointStep"] % SMALL["saveInterval"] == 0 and status["lastCheckpointStep"] > 0
    assert status["logInterval"] == 10 and status["warmupBaseStep"] == 10


def test_a_stall_fails_the_job_with_workload_stalled(trainer: Sim) -> None:
    faults.fault(trainer.name, "gpu-node-001", "stall")
    try:
        category = train(trainer, "stalled")
    finally:
        faults.fault(trainer.name, "gpu-node-001", "none")
    assert category["status"] == "Failed", category
    job = one(trainer, "jobs", category["workflow"])
    failed = condition(job, "Failed")
    assert (failed["status"], failed["reason"], failed["message"]) == (
        "True", "WorkloadStalled", "Workload stalled: no training step within the configured threshold")


def test_a_crash_restarts_from_the_checkpoint_and_succeeds(trainer: Sim) -> None:
    faults.fault(trainer.name, "gpu-node-000", "crash")
    try:
        category = train(trainer, "crashed", enableCheckpoint=True)
    finally:
        faults.fault(trainer.name, "gpu-node-000", "none")
    assert category["status"] == "Succeeded", category
    job = one(trainer, "jobs", category["workflow"])
    assert job["status"]["restartCount"] == 1
    events = client.CoreV1Api(trainer.api).list_namespaced_event(
        "default", field_selector=f"involvedObject.name={job['metadata']['name']},reason=WorkloadRestarting").items
    assert [e.message for e in events] == ["Restarting workload from checkpoint (restart 1/3)"]
    measurement = one(trainer, "goodputmeasurements", category["workflow"])["status"]
    assert measurement["interruptionCount"] == 1 and float(measurement["rescheduleTimeSec"]) > 0


def test_a_nemo_2_run_is_measured_with_the_nemo_4_training_profile(trainer: Sim) -> None:
    """The catalog's training Workflow as a NeMo user runs it: its goodput measurement names the built-in
    nemo-4-training profile, and the pods print NeMo 2's `Training epoch E, iteration I/N | ...` lines."""
    ns = "nemo"
    client.CoreV1Api(trainer.api).create_namespace({"metadata": {"name": ns}})
    cluster.pod_duration(trainer.name, ns, 25000)
    cluster.log_style(trainer.name, ns, training="nemo2")
    category = {"domain": "training", "variant": "nemotron5-8b", "options": SMALL}
    workflow = category_build.build_workflow({"metadata": {"name": "nemo", "namespace": ns},
                                              "spec": {"categories": [category]}}, category,
                                             platform="aws", gpu_architecture="h100", available_nodes=2)
    del workflow["metadata"]["ownerReferences"]
    workflow["spec"]["jobTemplate"]["spec"]["goodputMeasurement"]["logProfileRef"] = "nemo-4-training"
    client.CustomObjectsApi(trainer.api).create_namespaced_custom_object(*NVCRE, ns, "workflows", workflow)
    rc, result = ansible_module("workflow_run", {"kubeconfig": str(trainer.kubeconfig), "name": workflow[
        "metadata"]["name"], "namespace": ns, "poll_interval": 1, "timeout": 300}, timeout=360)
    assert rc == 0 and result["phase"] == "Succeeded", result
    (status,) = [g["status"] for g in client.CustomObjectsApi(trainer.api).list_namespaced_custom_object(
        *NVCRE, ns, "goodputmeasurements")["items"]]
    done = condition({"status": status}, "Complete")
    assert (done["status"], done["reason"]) == ("True", "JobSucceeded"), status
    assert status["highestStep"] > 0 and 0.5 < float(status["result"]) <= 1, status


def test_a_training_run_seals_a_row_per_step_with_what_the_pods_printed(trainer: Sim) -> None:
    """Issue 40: the GoodputMeasurement's worker-0 log, read by the measurement's own reader, one row per step."""
    category = train(trainer, "rows")
    assert category["status"] == "Succeeded", category
    job = one(trainer, "jobs", category["workflow"])
    seal = job["status"]["evidence"]
    assert seal["attempt"] == 1 and seal["rows"] > 0 and "partial" not in seal, seal
    rows = [row for k in range(1, seal["shards"] + 1) for row in shards.decode(base64.b64decode(
        client.CoreV1Api(trainer.api).read_namespaced_config_map(
            shards.shard_name(job["metadata"]["name"], 1, k), "default").binary_data[shards.DATA_KEY]))]
    assert len(rows) == seal["rows"]
    group = job["metadata"]["labels"]["nvcre.nvidia.com/group"]
    assert {(r["node"], r["component"], r["test"], r["outcome"]) for r in rows} == {(group, "step", "training", "pass")}
    steps = [r for r in rows if r["metric"] == "step_time"]
    # What the pods printed: a line every 10 steps, 50 ms per step, 600 TFLOP/s per GPU; each stamped.
    assert len(steps) == len([r for r in rows if r["metric"] == "tflops"]) > 1
    assert {r["index"] % 10 for r in steps} == {0} and {r["value"] for r in steps} == {0.05}
    assert {r["value"] for r in rows if r["metric"] == "tflops"} == {600.0}
    assert all(r["time"] for r in rows)
