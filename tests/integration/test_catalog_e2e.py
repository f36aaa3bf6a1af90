"""Every catalog category, in one Certification, certifies a small aws-h100 cluster end to end (issue 12).

Three MPI NCCL entries, both torch loopbacks, the four DCGM levels and both Nemotron trainings: each
TrainingRuntime and TrainJob is accepted by Trainer v2.2.1, becomes a JobSet, Jobs and pods that the real
kube-scheduler binds, and succeeds. Four p5 nodes are the smallest cluster every entry fits (nemotron5-56b
needs 32 GPUs with TP 8).
"""
from __future__ import annotations

from collections.abc import Callable

import pytest
from kubernetes import client

from tests.ansible_run import ansible_module

from .conftest import Sim
from .pods_seen import Seen, watching

pytestmark = pytest.mark.clusters(("aws-h100", 4))

NODES = [f"gpu-node-{i:03d}" for i in range(4)]
NAMESPACE = "catalog"
POD_MS = 300


@pytest.fixture(scope="module")
def h100(pooled: Callable[..., Sim]) -> Sim:
    sim = pooled("aws-h100", len(NODES), pod_ms={NAMESPACE: POD_MS})
    client.CoreV1Api(sim.api).create_namespace({"metadata": {"name": NAMESPACE}})
    return sim


def test_one_certification_of_every_category_succeeds(h100: Sim) -> None:
    _rc, listing = ansible_module("catalog_info", {})
    categories = [{"domain": c["domain"], "variant": c["variant"]} for c in listing["categories"]]
    assert len(categories) == 13, categories
    with watching(h100.api, NAMESPACE) as seen:
        rc, result = ansible_module("certification_run", {
            "kubeconfig": str(h100.kubeconfig), "name": "every", "namespace": NAMESPACE, "categories": categories,
            "poll_interval": 0.5, "timeout": 900}, timeout=1000)
    assert rc == 0, result
    by_key = {f"{c['domain']}/{c['variant']}": c for c in result["categories"]}
    assert list(by_key) == [f"{c['domain']}/{c['variant']}" for c in categories]
    for key, category in by_key.items():
        assert category["status"] == "Succeeded", (key, category)
        assert category["succeeded_nodes"] == NODES, (key, category)
        assert category["failed_nodes"] == [], (key, category)
    assert result["phase"] == "Succeeded", result["condition"]
    assert result["condition"]["reason"] == "AllWorkflowsSucceeded"

    for key, category in by_key.items():
        check_workloads(h100.api, seen, key, category["workflow"])


ROLE = "jobset.sigs.k8s.io/replicatedjob-name"
MPI = {"communication/nccl-all-reduce", "communication/nccl-all-gather", "communication/nccl-alltoall"}
GPUS_PER_NODE = 8


def check_workloads(api: client.ApiClient, seen: Seen, key: str, workflow: str) -> None:
    """The category's pods were bound by kube-scheduler to the cluster's nodes and succeeded (MPI workers, whose
    sshd never exits, ran until their finished JobSet deleted them), and the processes per node reached the
    workload: MPI through Trainer's hostfile slots, torch (whose runtime policy is now empty)
    through PET_NPROC_PER_NODE from the TrainJob's trainer.numProcPerNode."""
    core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
    jobs = custom.list_namespaced_custom_object("nvcre.nvidia.com", "v1alpha1", NAMESPACE, "jobs",
                                                label_selector=f"nvcre.nvidia.com/workflow={workflow}")["items"]
    assert jobs, key
    bound = {e.involved_object.name: e.message.rsplit(" to ", 1)[-1]
             for e in core.list_namespaced_event(NAMESPACE, field_selector="reason=Scheduled").items
             if e.reporting_component == "default-scheduler"}
    workers: list[str] = []
    for job in jobs:
        name = job["metadata"]["name"]
        train_job = custom.get_namespaced_custom_object("trainer.kubeflow.org", "v1alpha1", NAMESPACE, "trainjobs",
                                                        f"{name}-workload")
        trainer = train_job["spec"]["trainer"]
        pods = seen.pods(**{"jobset.sigs.k8s.io/jobset-name": f"{name}-workload"})
        assert pods, (key, name)
        # NVCRE labels the workers only: the MPI launcher is known by its JobSet.
        assert {p.metadata.name for p in pods if p.metadata.labels.get("nvcre.nvidia.com/job") == name} == {
            p.metadata.name for p in pods if p.metadata.labels[ROLE] == "node"}, (key, name)
        assert key not in MPI or any(p.metadata.labels[ROLE] == "launcher" for p in pods), (key, name)
        for pod in pods:
            ended = "Running" if key in MPI and pod.metadata.labels[ROLE] == "node" else "Succeeded"
            assert pod.status.phase == ended, (key, pod.metadata.name, pod.status.phase)
            assert bound.get(pod.metadata.name) == pod.spec.node_name, (key, pod.metadata.name)
        nodes = [p for p in pods if p.metadata.labels[ROLE] == "node"]
        assert len(nodes) == trainer["numNodes"], (key, name)
        workers += [p.spec.node_name for p in nodes]
        if key in MPI:
            assert trainer["numProcPerNode"] == GPUS_PER_NODE, (key, trainer)
            hostfile = core.read_namespaced_config_map(f"{name}-workload-mpi-hostfile", NAMESPACE).data["hostfile"]
            assert [line.split()[-1] for line in hostfile.splitlines()] == [f"slots={GPUS_PER_NODE}"] * len(nodes)
        else:
            expected = GPUS_PER_NODE if key.startswith("training/") else 1
            assert trainer["numProcPerNode"] == expected, (key, trainer)
            for pod in nodes:
                (container,) = [c for c in pod.spec.containers if c.name == "node"]
                env = {e.name: e.value for e in container.env or []}
                assert env.get("PET_NPROC_PER_NODE") == str(expected), (key, pod.metadata.name, env)
                assert env.get("PET_NNODES") == str(trainer["numNodes"]), (key, pod.metadata.name, env)
    assert sorted(workers) == NODES, (key, workers)  # every node ran the category exactly once
