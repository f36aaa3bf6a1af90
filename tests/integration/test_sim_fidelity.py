"""The simulated cluster fails as a real one does (docs/dev/simulator-fidelity.md), on the catalog as shipped: a
failing container is restarted in place by the kubelet until its Job's backoffLimit is spent, MPI workers hold
their node until the launcher ends, and the NVCRE verdict follows from that, never from a retry elsewhere.

The fault matrix runs one certification per runtime (mpi, torch, exec) with a fault of every kind that acts on
one node, each in a group of its own, and a link fault between the two network domains; each node's outcome (its
group's NVCRE Job reason, its own verdict) must be the one the document's table gives."""
from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import pytest
from kubernetes import client

from ansible_collections.cre.certification.plugins.module_utils.engine.api.vocabulary import ANNOTATION_GROUP_NODES
from tools.sim import cluster, faults, ranks, stages
from tools.sim.state import ClusterState

from .conftest import Sim
from .one_category import NODES, certify, failed
from .pods_seen import Seen, watching
from .seed import NVCRE, items

pytestmark = pytest.mark.clusters(("aws-h100", 16))

BAD = "gpu-node-005"
_ns = itertools.count()
# The fault matrix: one node per kind, each in a group of its own (groups of two run gpu-node-000/001, 002/003...).
HARDWARE, STALL, CRASH, SLOW, WORKLOAD = (f"gpu-node-{i:03d}" for i in (1, 3, 5, 7, 9))
AT_START = {HARDWARE: "hardware", STALL: "stall", CRASH: "crash", SLOW: "slow"}
DOMAINS = ("nn-3c000000", "nn-3c000001")   # aws layer-3 network domains: gpu-node-000..007 and 008..015
# The user's timeoutPerJob: what ends a stalled run. Healthy groups must end well within it on a loaded machine:
# CI runs this beside the unit tests and sanity, and there 15 s timed six healthy MPI groups out.
TIMEOUT = "40s"
MPIRUN_LOST = ranks.MPIRUN_LOST_DAEMON.split(" on worker", maxsplit=1)[0]
MPIRUN_NO_DAEMON = ranks.MPIRUN_NO_DAEMON.split(": ssh", maxsplit=1)[0]
JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"


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
    for node in (BAD, WORKLOAD, *AT_START):
        faults.fault(h100.name, node, "none")
    if ClusterState.load(h100.name).links:
        faults.fault(h100.name, DOMAINS[0], "none")


def inject_at_start(sim: Sim) -> None:
    for node, kind in AT_START.items():
        faults.fault(sim.name, node, kind)
    faults.fault(sim.name, DOMAINS[0], "link", peer=DOMAINS[1])


def outcomes(sim: Sim, ns: str, category: dict) -> dict[str, tuple[str, str]]:
    """node -> (the true conditions of its group's NVCRE Job, as `type/reason`, and the node's verdict: Succeeded, a
    failed-nodes reason, or "-" when it is in neither list, as NVCRE leaves the nodes of a timed-out group)."""
    verdict = dict.fromkeys(category["succeeded_nodes"], "Succeeded") | failed(category)
    out = {}
    for job in items(sim, ns, NVCRE, "jobs"):
        reason = " ".join(sorted(f'{c["type"]}/{c["reason"]}' for c in job["status"]["conditions"]
                                 if c["status"] == "True"))
        for node in job["metadata"]["annotations"][ANNOTATION_GROUP_NODES].split(","):
            out[node] = (reason, verdict.get(node, "-"))
    return out


def workloads(sim: Sim, ns: str, seen: Seen) -> dict[str, set[str]]:
    """node -> how the workloads whose GPU pods ran on it ended: the reasons of their batch Jobs' and JobSet's
    events (`Job/BackoffLimitExceeded`, `JobSet/FailedJobs`...; events outlive the objects, which NVCRE deletes
    after a failure) and the conditions their TrainJob reached (`TrainJob/Complete`)."""
    # JobCreationFailed: a JobSet's controller may still try to create a child Job while NVCRE deletes the failed
    # TrainJob above it (the deletion races the controller); it says nothing of how the workload ended.
    events = [e for e in client.CoreV1Api(sim.api).list_namespaced_event(ns).items
              if e.involved_object.api_version in ("batch/v1", "jobset.x-k8s.io/v1alpha2")
              and e.reason not in ("SuccessfulCreate", "SuccessfulDelete", "JobCreationFailed")]
    out: dict[str, set[str]] = {}
    for name, nodes in seen.nodes.items():
        pod = seen.last[name]
        if not any(stages.GPU_RESOURCE in ((c.resources and c.resources.limits) or {}) for c in pod.spec.containers):
            continue   # an MPI launcher runs on any node
        jobset = pod.metadata.labels[JOBSET_NAME]
        marks = {f"{e.involved_object.kind}/{e.reason}" for e in events
                 if e.involved_object.name == jobset or e.involved_object.name.startswith(f"{jobset}-")}
        for node in nodes:
            out.setdefault(node, set()).update(marks | {f"TrainJob/{c}" for c in seen.trainjobs.get(jobset, ())})
    return out


# The outcomes of the table (docs/dev/simulator-fidelity.md, "The fault kinds"): the group's Job, the node.
PASSED = ("Succeeded/WorkloadCompleted", "Succeeded")
HARDWARE_FAILED = "Failed/WorkloadFailed HardwareFailed/HardwareFailureDetected"
TIMED_OUT = ("Failed/JobTimedOut", "-")
BELOW_THRESHOLD = ("Succeeded/WorkloadCompleted ValidationFailed/ThresholdViolated", "ThresholdViolation")
WORKLOAD_FAILED = ("Failed/WorkloadFailed", "WorkloadFailed")
# ... and of the workloads: the batch Jobs, the JobSet and the TrainJob.
RAN = {"Job/Completed", "JobSet/AllJobsCompleted", "TrainJob/Complete"}
GAVE_UP = {"Job/BackoffLimitExceeded", "JobSet/FailedJobs", "TrainJob/Failed"}
HUNG: set[str] = set()   # still running when NVCRE's timeout deleted it


def expected_workloads(faulty: dict[str, set[str]], quarantined: tuple[str, ...] = (HARDWARE,)) -> dict[str, set[str]]:
    """Every workload ran, but for the `faulty` nodes'; the `quarantined` nodes' (a hardware fault's group) are left
    out: NVCRE's health monitor deletes that workload as soon as the node is quarantined, before or after its Job
    gave up, so only "it never completed" holds there."""
    return {n: RAN for n in NODES if n not in quarantined} | faulty


def expected(faulty: dict[str, tuple[str, str]]) -> dict[str, tuple[str, str]]:
    """Every node's group passed and so did the node, but for the `faulty` ones."""
    return dict.fromkeys(NODES, PASSED) | faulty


def test_mpi_a_failing_worker_restarts_on_its_node_and_fails_only_its_group(h100: Sim, watched: tuple) -> None:
    ns, seen = watched
    faults.fault(h100.name, BAD, "workload")
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


def test_fault_matrix_mpi(h100: Sim, watched: tuple) -> None:
    """nccl-all-reduce in groups of two, a worker's GPU failing mid-run (after mpirun reached it) besides the faults
    injected before the run."""
    ns, seen = watched
    cluster.pod_duration(h100.name, ns, 4000)   # long enough to fail a worker while its launcher runs
    inject_at_start(h100)
    with ThreadPoolExecutor(1) as pool:
        run = pool.submit(certify, h100, ns, "nccl-all-reduce", testScale="full-scale", nodesPerJob=2,
                          timeoutPerJob=TIMEOUT, thresholds={"busBandwidthGBps": "value >= 300.0"})
        launcher = reached_launcher_of(seen, WORKLOAD, run)
        faults.fault(h100.name, WORKLOAD, "workload")
        category = run.result()
    assert outcomes(h100, ns, category) == expected({
        # A GPU off the bus: NVCRE's health monitor names the node; its partner is not blamed.
        "gpu-node-000": (HARDWARE_FAILED, "-"), HARDWARE: (HARDWARE_FAILED, "HardwareFailureDetected"),
        # A stalled rank hangs mpirun: no table, until the user's timeoutPerJob; a timed-out group names no node.
        "gpu-node-002": TIMED_OUT, STALL: TIMED_OUT,
        # crash is a training fault: an NCCL test on the node runs as usual (gpu-node-005 passes).
        "gpu-node-006": BELOW_THRESHOLD, SLOW: BELOW_THRESHOLD,
        "gpu-node-008": WORKLOAD_FAILED, WORKLOAD: WORKLOAD_FAILED})
    ended = workloads(h100, ns, seen)
    assert not ended.pop("gpu-node-000") & RAN and not ended.pop(HARDWARE) & RAN, ended
    assert ended == expected_workloads({"gpu-node-002": HUNG, STALL: HUNG, "gpu-node-008": GAVE_UP, WORKLOAD: GAVE_UP},
                                       quarantined=("gpu-node-000", HARDWARE))
    # mpirun lost the daemon it had on the failed worker, and failed; the worker restarted in place. The launcher's
    # own restarts cannot reach that worker, and say so.
    # When the launcher's Job gives up, JobSet deletes the run's pods in no set order: a launcher that sees its
    # healthy worker go first says so of that one (CI saw it), so only mpirun's messages and the failed worker
    # among those named are required.
    (worker,) = [p for p in seen.on(WORKLOAD) if "-node-" in p]
    exits = seen.exits[launcher]
    assert exits and all(m.startswith((MPIRUN_LOST, MPIRUN_NO_DAEMON)) for m in exits), exits
    assert any(worker in m for m in exits), exits
    assert seen.nodes[worker] == {WORKLOAD} and seen.restarts[worker] >= 1
    assert not any("Succeeded" in seen.phases[p] for p in seen.on(STALL) + seen.on(HARDWARE))


def reached_launcher_of(seen: Seen, node: str, run: Future) -> str:
    """The launcher of the group running on `node`, once its mpirun has reached every worker."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not run.done():
        workers = [seen.last[p] for p in seen.on(node) if "-node-" in p]
        group = {w.metadata.labels["jobset.sigs.k8s.io/jobset-name"] for w in workers}
        for pod in seen.pods(**{stages.REPLICATED_JOB: stages.LAUNCHER}):
            if pod.metadata.labels["jobset.sigs.k8s.io/jobset-name"] in group and \
                    (pod.metadata.annotations or {}).get(stages.MPIRUN_REACHED) == "0":
                return str(pod.metadata.name)
        time.sleep(0.05)
    raise AssertionError(f"no launcher of {node}'s group reached its workers")


def test_fault_matrix_torch(h100: Sim, watched: tuple) -> None:
    """nccl-loopback: one torch pod per node (restartPolicy OnFailure)."""
    ns, seen = watched
    inject_at_start(h100)
    faults.fault(h100.name, WORKLOAD, "workload")
    category = certify(h100, ns, "nccl-loopback", timeoutPerJob=TIMEOUT,
                       thresholds={"busBandwidthGBps": "value >= 400.0"})
    assert outcomes(h100, ns, category) == expected({
        HARDWARE: (HARDWARE_FAILED, "HardwareFailureDetected"), STALL: TIMED_OUT, SLOW: BELOW_THRESHOLD,
        WORKLOAD: WORKLOAD_FAILED})
    ended = workloads(h100, ns, seen)
    assert not ended.pop(HARDWARE) & RAN, ended
    assert ended == expected_workloads({STALL: HUNG, WORKLOAD: GAVE_UP})
    (pod,) = seen.on(WORKLOAD)
    # backoffLimit 6 (the Job's default, the catalog sets none): six restarts on the node, then the Job fails.
    assert seen.nodes[pod] == {WORKLOAD} and seen.restarts[pod] == 6 and "Succeeded" not in seen.phases[pod]
    assert seen.exits[pod] == {stages.FAULT_EXIT["workload"][2]}


def test_fault_matrix_exec(h100: Sim, watched: tuple) -> None:
    """dcgm-level1: one pod per node, restartPolicy Never and backoffLimit 0 (a failed diagnostic is a verdict)."""
    ns, seen = watched
    inject_at_start(h100)
    faults.fault(h100.name, WORKLOAD, "workload")
    category = certify(h100, ns, "dcgm-level1", domain="diagnostics", timeoutPerJob=TIMEOUT)
    # dcgm diag measures no bandwidth: the slow node passes.
    assert outcomes(h100, ns, category) == expected({
        HARDWARE: (HARDWARE_FAILED, "HardwareFailureDetected"), STALL: TIMED_OUT, WORKLOAD: WORKLOAD_FAILED})
    ended = workloads(h100, ns, seen)
    assert not ended.pop(HARDWARE) & RAN, ended
    assert ended == expected_workloads({STALL: HUNG, WORKLOAD: GAVE_UP})
    (pod,) = seen.on(WORKLOAD)
    assert seen.restarts[pod] == 0 and "Failed" in seen.phases[pod]
    assert seen.exits[pod] == {stages.FAULT_EXIT["workload"][2]}
