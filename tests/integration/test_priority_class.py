"""spec.priorityClassName live (issue 43): a Certification that names a PriorityClass runs to Succeeded and every
pod it created, the MPI launcher included, carries the class and the priority the API server resolved from it; the
same run naming a class that does not exist is refused before anything is written (the role's and workloadrun_run's
refusals are judged by cluster snapshots in test_bad_input_live)."""
from __future__ import annotations

import hashlib
from collections.abc import Iterator

import pytest
from kubernetes import client

from tests.ansible_run import ansible_module

from .conftest import Sim
from .pods_seen import watching

pytestmark = pytest.mark.clusters(("aws-h100", 16))

NVCRE = ("nvcre.nvidia.com", "v1alpha1")
ROLE = "jobset.sigs.k8s.io/replicatedjob-name"
CLASS, VALUE = "cre-certify-high", 100000
NODES = ["gpu-node-000", "gpu-node-001", "gpu-node-002", "gpu-node-003"]


@pytest.fixture(scope="module")
def h100(pooled) -> Sim:
    return pooled("aws-h100", 16)


@pytest.fixture
def priority_class(h100: Sim) -> Iterator[str]:
    """The PriorityClass, removed after the test: it is cluster-scoped, so the pool's reset would keep it."""
    scheduling = client.SchedulingV1Api(h100.api)
    scheduling.create_priority_class({"metadata": {"name": CLASS}, "value": VALUE})
    yield CLASS
    scheduling.delete_priority_class(CLASS)


@pytest.fixture
def ns(h100: Sim, request: pytest.FixtureRequest) -> str:
    name = f"prio-{hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:10]}"
    client.CoreV1Api(h100.api).create_namespace({"metadata": {"name": name}})
    return name


def certify(sim: Sim, ns: str, priority_class: str) -> tuple[int, dict]:
    return ansible_module("certification_run", {
        "kubeconfig": str(sim.kubeconfig), "name": "prio", "namespace": ns, "priority_class_name": priority_class,
        "categories": [{"domain": "communication", "variant": "nccl-all-reduce", "options": {"nodesPerJob": 2}}],
        "target": {"nodeNames": NODES}, "poll_interval": 0.3, "timeout": 400}, timeout=500)


def test_every_pod_of_the_run_carries_the_class(h100: Sim, ns: str, priority_class: str) -> None:
    with watching(h100.api, ns) as seen:
        rc, result = certify(h100, ns, priority_class)
    assert rc == 0 and result["phase"] == "Succeeded", result
    pods = list(seen.last.values())
    # two groups of two nodes: per group one launcher and two workers
    assert sorted((p.metadata.labels or {}).get(ROLE, "") for p in pods) == ["launcher"] * 2 + ["node"] * 4
    assert {(p.metadata.name, p.spec.priority_class_name, p.spec.priority) for p in pods} == {
        (p.metadata.name, CLASS, VALUE) for p in pods}


def test_a_missing_class_is_refused_before_anything_is_written(h100: Sim, ns: str) -> None:
    rc, result = certify(h100, ns, "no-such-class")
    assert rc != 0 and result["msg"] == (
        'priority_class_name: no PriorityClass named "no-such-class" exists; create it or name one that does (kubectl '
        "get priorityclasses), then rerun; nothing was written"), result
    custom = client.CustomObjectsApi(h100.api)
    for plural in ("certifications", "workflows", "jobs"):
        assert custom.list_namespaced_custom_object(*NVCRE, ns, plural)["items"] == [], plural
    assert client.CoreV1Api(h100.api).list_namespaced_pod(ns).items == []
