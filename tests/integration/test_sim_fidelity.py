"""The simulated cluster fails as a real one does (docs/dev/simulator-fidelity.md), on the catalog as shipped: a
failing container is restarted in place by the kubelet until its Job's backoffLimit is spent, MPI workers hold
their node until the launcher ends, and the NVCRE verdict follows from that, never from a retry elsewhere."""
from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import pytest
from kubernetes import client

from tests.ansible_run import ansible_module
from tools.sim import cluster

from .conftest import Sim
from .pods_seen import Seen, watching

pytestmark = pytest.mark.clusters(("aws-h100", 16))

NODES = [f"gpu-node-{i:03d}" for i in range(16)]
BAD = "gpu-node-005"
_ns = itertools.count()


@pytest.fixture(scope="module")
def h100(pooled: Callable[..., Sim]) -> Sim:
    return pooled("aws-h100", 16)


@pytest.fixture
def watched(h100: Sim) -> Iterator[tuple[str, Seen]]:
    """A fresh namespace and what its pods do, read every 100 ms; every node healthy again afterwards."""
    ns = f"fidelity-{next(_ns)}"
    client.CoreV1Api(h100.api).create_namespace({"metadata": {"name": ns}})
    with watching(h100.api, ns) as seen:
        yield ns, seen
    cluster.fault(h100.name, BAD, "none")


def certify(sim: Sim, ns: str, variant: str, domain: str = "communication", **options: object) -> dict:
    rc, result = ansible_module("certification_run", {
        "kubeconfig": str(sim.kubeconfig), "name": "fidelity", "namespace": ns,
        "categories": [{"domain": domain, "variant": variant, "options": options}],
        "poll_interval": 0.5, "timeout": 240}, timeout=300)
    assert rc == 0, result
    (category,) = result["categories"]
    return category


def failed(category: dict) -> dict[str, str]:
    return {f["name"]: f["reason"] for f in category["failed_nodes"]}


def test_mpi_a_failing_worker_restarts_on_its_node_and_fails_only_its_group(h100: Sim, watched: tuple) -> None:
    ns, seen = watched
    cluster.fault(h100.name, BAD, "workload")
    category = certify(h100, ns, "nccl-all-reduce", testScale="full-scale", nodesPerJob=4)
    group = next(g for g in (NODES[i:i + 4] for i in range(0, 16, 4)) if BAD in g)
    assert failed(category) == dict.fromkeys(group, "WorkloadFailed"), category
    assert category["succeeded_nodes"] == [n for n in NODES if n not in group]
    # The kubelet restarted the worker where it ran; no pod of the run ever ran it elsewhere, none succeeded.
    (worker,) = [p for p in seen.on(BAD) if "-node-" in p]
    assert seen.nodes[worker] == {BAD} and seen.restarts[worker] >= 1
    assert "Succeeded" not in seen.phases[worker]
    assert seen.exits[worker] == {"simulated workload fault: process exited with status 1"}
    events = client.CoreV1Api(h100.api).list_namespaced_event(ns, field_selector="reason=BackoffLimitExceeded").items
    assert [e.involved_object.kind for e in events] == ["Job"], [e.message for e in events]


def test_mpi_workers_hold_their_nodes_until_the_launcher_ends(h100: Sim, watched: tuple) -> None:
    ns, seen = watched
    category = certify(h100, ns, "nccl-all-reduce", testScale="full-scale", nodesPerJob=8)
    assert category["status"] == "Succeeded" and category["failed_nodes"] == [], category
    workers = [p for p in seen.nodes if "-node-" in p]
    launchers = [p for p in seen.nodes if "-launcher-" in p]
    assert len(workers) == 16 and len(launchers) == 2
    # sshd never exits: the workers end when the finished JobSet deletes them, never as Succeeded.
    assert all(seen.phases[w] <= {"Pending", "Running"} for w in workers)
    assert all("Succeeded" in seen.phases[launcher] for launcher in launchers)
    left = client.CoreV1Api(h100.api).list_namespaced_pod(ns, label_selector="jobset.sigs.k8s.io/replicatedjob-name=node")
    assert left.items == []


def test_torch_loopback_restarts_in_place_until_its_backoff_limit(h100: Sim, watched: tuple) -> None:
    ns, seen = watched
    cluster.fault(h100.name, BAD, "workload")
    category = certify(h100, ns, "nccl-loopback")
    assert failed(category) == {BAD: "WorkloadFailed"}, category
    assert category["succeeded_nodes"] == [n for n in NODES if n != BAD]
    (pod,) = seen.on(BAD)
    # backoffLimit 6 (the Job's default, the catalog sets none): six restarts on the node, then the Job fails.
    assert seen.nodes[pod] == {BAD} and seen.restarts[pod] == 6 and "Succeeded" not in seen.phases[pod]


def test_exec_restart_policy_never_fails_the_pod_without_a_restart(h100: Sim, watched: tuple) -> None:
    ns, seen = watched
    cluster.fault(h100.name, BAD, "workload")
    category = certify(h100, ns, "dcgm-level1", domain="diagnostics")
    assert failed(category).get(BAD) == "WorkloadFailed", category
    (pod,) = seen.on(BAD)
    assert seen.restarts[pod] == 0 and "Failed" in seen.phases[pod]
    assert seen.exits[pod] == {"simulated workload fault: process exited with status 1"}
