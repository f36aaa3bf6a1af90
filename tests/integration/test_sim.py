"""The local GPU cluster is real: nodes, scheduler, Trainer, JobSet, faults and teardown."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
import yaml
from kubernetes import client

from tools.sim import cache, cluster, computedomain, faults, load, processes, profiles, reset, smoke, stages
from tools.sim.faults import HARDWARE_LABEL
from tools.sim.logs import workload_logs
from tools.sim.state import ClusterState, cluster_dir, known_clusters

from .conftest import NODES, Sim, own_sim
from .pods_seen import watching

ROOT = Path(__file__).resolve().parents[2]
JOBSET, ROLE = "jobset.sigs.k8s.io/jobset-name", "jobset.sigs.k8s.io/replicatedjob-name"


@pytest.fixture(scope="module")
def sim() -> Iterator[Sim]:
    """A cluster of this module's own: its tests fault, cordon and restart it, which no shared cluster may see."""
    with own_sim("simtest", "aws-gb200", NODES) as own:
        yield own


def sim_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tools.sim", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, check=False)


def run_trainjob(api: client.ApiClient, namespace: str, name: str, nodes: list[str]) -> str:
    """Create the runtime and a pinned TrainJob; wait for it to finish; return its final condition type."""
    smoke.ensure_runtime(api, namespace)
    smoke.create_trainjob(api, namespace, name, nodes)
    return smoke.wait_finished(api, namespace, [name], timeout=120)[name]


def test_nodes_ready_with_profile_labels(sim: Sim) -> None:
    nodes = client.CoreV1Api(sim.api).list_node().items
    expected = {n["metadata"]["name"]: n for n in profiles.build_nodes("aws-gb200", NODES)}
    assert sorted(n.metadata.name for n in nodes) == sorted(expected)
    for node in nodes:
        want = expected[node.metadata.name]
        assert {c.type: c.status for c in node.status.conditions}["Ready"] == "True"
        assert want["metadata"]["labels"].items() <= node.metadata.labels.items()
        assert node.metadata.labels["nvidia.com/gpu.product"] == "NVIDIA-GB200"
        assert node.metadata.labels["nvidia.com/gpu.clique"].endswith(".0")
        assert node.spec.provider_id.startswith("aws:///")
        assert node.status.allocatable["nvidia.com/gpu"] == "4"


def test_pinned_trainjob_runs_on_exactly_its_nodes(sim: Sim, namespace: str) -> None:
    pinned = ["gpu-node-004", "gpu-node-009"]
    with watching(sim.api, namespace) as seen:
        assert run_trainjob(sim.api, namespace, "pinned", pinned) == "Complete"
    pods = seen.pods(**{JOBSET: "pinned", ROLE: "node"})
    assert sorted(p.spec.node_name for p in pods) == pinned
    # The sshd workers ran until the finished JobSet deleted them; the launcher succeeded.
    assert all(seen.phases[p.metadata.name] <= {"Pending", "Running"} for p in pods)
    assert [p.status.phase for p in seen.pods(**{JOBSET: "pinned", ROLE: "launcher"})] == ["Succeeded"]


def test_compute_domain_channel_claims_are_allocated_and_released(sim: Sim, namespace: str) -> None:
    custom = client.CustomObjectsApi(sim.api)
    cd = {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "ComputeDomain", "metadata": {"name": "cd"},
          "spec": {"numNodes": 2, "channel": {"allocationMode": "Single", "resourceClaimTemplate": {"name": "cd-ch"}}}}
    uid = custom.create_namespaced_custom_object(*computedomain.CD, namespace, "computedomains", cd)["metadata"]["uid"]
    deadline = time.monotonic() + 60
    while custom.get_namespaced_custom_object(*computedomain.CD, namespace, "computedomains", "cd").get(
            "status", {}).get("status") != "Ready":
        assert time.monotonic() < deadline, "ComputeDomain not Ready"
        time.sleep(0.2)
    template = custom.get_namespaced_custom_object(*computedomain.DRA, namespace, "resourceclaimtemplates", "cd-ch")
    assert template["metadata"]["ownerReferences"][0]["uid"] == uid
    request = template["spec"]["spec"]["devices"]["requests"][0]
    assert request["exactly"]["deviceClassName"] == "compute-domain-default-channel.nvidia.com"
    assert request["exactly"]["count"] == 1

    pinned = ["gpu-node-012", "gpu-node-013"]
    smoke.ensure_runtime(sim.api, namespace, claim_template="cd-ch")
    with watching(sim.api, namespace) as seen:
        smoke.create_trainjob(sim.api, namespace, "cd-job", pinned)
        assert smoke.wait_finished(sim.api, namespace, ["cd-job"], timeout=120)["cd-job"] == "Complete"
    pods = seen.pods(**{JOBSET: "cd-job", ROLE: "node"})
    assert sorted(p.spec.node_name for p in pods) == pinned
    assert all("Running" in seen.phases[p.metadata.name] for p in pods)
    assert all(p.status.resource_claim_statuses[0].resource_claim_name for p in pods)  # a claim was made per pod
    deadline = time.monotonic() + 30
    while custom.list_namespaced_custom_object(*computedomain.DRA, namespace, "resourceclaims")["items"]:
        assert time.monotonic() < deadline, "the ended pods' channel claims were not released"
        time.sleep(0.5)


def test_workload_fault_fails_trainjob_on_faulty_node(sim: Sim, namespace: str) -> None:
    assert sim_cli("fault", "gpu-node-011", "--kind", "workload", "--name", sim.name).returncode == 0
    try:
        with watching(sim.api, namespace) as seen:  # the failed JobSet may delete a failed worker's Job
            assert run_trainjob(sim.api, namespace, "faulty", ["gpu-node-010", "gpu-node-011"]) == "Failed"
        # restartPolicy OnFailure: the kubelet restarts the container in place until the Job's backoffLimit.
        failed = [p for p in seen.pods(**{JOBSET: "faulty", ROLE: "node"}) if seen.exits.get(p.metadata.name)]
        assert [p.spec.node_name for p in failed] == ["gpu-node-011"]
        assert seen.restarts[failed[0].metadata.name] >= 1 and "Succeeded" not in seen.phases[failed[0].metadata.name]
        assert seen.exits[failed[0].metadata.name] == {stages.FAULT_EXIT["workload"][2]}
    finally:  # other tests of the module run groups on gpu-node-010/011
        assert sim_cli("fault", "gpu-node-011", "--kind", "none", "--name", sim.name).returncode == 0


def test_a_container_that_crashed_then_ran_to_its_end_keeps_its_restarts_and_last_exit(sim: Sim, namespace: str) -> None:
    """As the kubelet reports a container: once restarted it still shows the exit before the restart (lastState);
    once it then completes, its restart count, that exit and its own start stay (kwok's pod-complete drops them)."""
    core, message = client.CoreV1Api(sim.api), stages.FAULT_EXIT["workload"][2]
    assert sim_cli("fault", "gpu-node-014", "--kind", "workload", "--name", sim.name).returncode == 0
    try:
        client.BatchV1Api(sim.api).create_namespaced_job(namespace, {"metadata": {"name": "again"}, "spec": {
            "backoffLimit": 100, "template": {"spec": {
                "restartPolicy": "OnFailure", "nodeSelector": {"kubernetes.io/hostname": "gpu-node-014"},
                "containers": [{"name": "c", "image": "busybox", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}})
        pod_of(core, namespace, "again", lambda s: s.last_state.terminated is not None or s.restart_count >= 1)
    finally:
        assert sim_cli("fault", "gpu-node-014", "--kind", "none", "--name", sim.name).returncode == 0
    restarted = pod_of(core, namespace, "again", lambda s: s.restart_count >= 1 and s.state.running is not None)
    (status,) = restarted.status.container_statuses
    assert status.last_state.terminated.exit_code == 1 and status.last_state.terminated.message == message
    done = pod_of(core, namespace, "again", lambda s: s.state.terminated is not None)
    (status,) = done.status.container_statuses
    assert done.status.phase == "Succeeded" and status.restart_count >= 1
    assert status.state.terminated.reason == "Completed" and status.state.terminated.exit_code == 0
    assert status.last_state.terminated.message == message
    assert status.state.terminated.started_at >= status.last_state.terminated.finished_at
    assert status.state.terminated.started_at < status.state.terminated.finished_at
    assert {c.type: c.status for c in done.status.conditions}["Ready"] == "False"


def pod_of(core: client.CoreV1Api, namespace: str, job: str, until: Callable[[Any], bool]) -> client.V1Pod:
    """The Job's pod once its container's status meets `until` (within a minute)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for pod in core.list_namespaced_pod(namespace, label_selector=f"job-name={job}").items:
            if any(until(s) for s in pod.status.container_statuses or []):
                return pod
        time.sleep(0.05)
    raise AssertionError(f"no pod of Job {job} came to the state asked for")


def test_hardware_fault_marks_node_and_fails_its_pods(sim: Sim, namespace: str) -> None:
    assert sim_cli("fault", "gpu-node-013", "--kind", "hardware", "--name", sim.name).returncode == 0
    try:  # the fault and the quarantine's cordon go afterwards: other tests run groups on gpu-node-013
        node = client.CoreV1Api(sim.api).read_node("gpu-node-013")
        assert node.metadata.labels[faults.HARDWARE_LABEL] == "unhealthy"
        assert {c.type: c.status for c in node.status.conditions}[faults.HARDWARE_CONDITION] == "False"
        assert not node.spec.unschedulable  # a broken GPU shows under load, not before
        with watching(sim.api, namespace) as seen:  # the failed JobSet may delete a failed worker's Job
            assert run_trainjob(sim.api, namespace, "hw", ["gpu-node-012", "gpu-node-013"]) == "Failed"
        failed = [p.spec.node_name for p in seen.pods(**{JOBSET: "hw", ROLE: "node"}) if seen.exits.get(p.metadata.name)]
        assert failed == ["gpu-node-013"]
        # The health agent quarantined the node once the workload ran on it; its partner was left alone.
        assert client.CoreV1Api(sim.api).read_node("gpu-node-013").spec.unschedulable is True
        assert not client.CoreV1Api(sim.api).read_node("gpu-node-012").spec.unschedulable
    finally:
        assert sim_cli("fault", "gpu-node-013", "--kind", "none", "--name", sim.name).returncode == 0


def test_cordon_fault_sets_unschedulable(sim: Sim) -> None:
    assert sim_cli("fault", "gpu-node-015", "--kind", "cordon", "--name", sim.name).returncode == 0
    try:
        assert client.CoreV1Api(sim.api).read_node("gpu-node-015").spec.unschedulable is True
    finally:
        assert sim_cli("fault", "gpu-node-015", "--kind", "none", "--name", sim.name).returncode == 0
        assert not client.CoreV1Api(sim.api).read_node("gpu-node-015").spec.unschedulable


def test_unknown_gpu_product_stays_pending(sim: Sim, namespace: str) -> None:
    core = client.CoreV1Api(sim.api)
    core.create_namespaced_pod(namespace, {"metadata": {"name": "nowhere"}, "spec": {
        "containers": [{"name": "c", "image": "busybox"}],
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "nvidia.com/gpu.product", "operator": "In",
                                   "values": ["NVIDIA-A100-SXM4-80GB"]}]}]}}}}})
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        pod = core.read_namespaced_pod("nowhere", namespace)
        scheduled = {c.type: c for c in pod.status.conditions or []}.get("PodScheduled")
        if scheduled and scheduled.reason == "Unschedulable":
            break
        time.sleep(0.3)
    assert scheduled is not None and scheduled.status == "False" and scheduled.reason == "Unschedulable"
    assert "node affinity" in scheduled.message
    # A fixed wait, only to prove what must NOT happen: a later scheduling attempt binds the pod to some node.
    time.sleep(2)
    pod = core.read_namespaced_pod("nowhere", namespace)
    assert pod.status.phase == "Pending" and not pod.spec.node_name


def test_cluster_survives_apiserver_restart(sim: Sim, namespace: str) -> None:
    # Every component runs without leader election (tools/sim: nothing to lose while the apiserver is away), so
    # what is checked is that each rides out the outage and reconnects; 5 s breaks every watch and request.
    cluster.restart(sim.name, "apiserver", down_seconds=5)
    others = [p for p in (cluster_dir(sim.name) / "pids").glob("*.pid") if p.stem != "kube-apiserver"]
    assert all(processes.alive(int(p.read_text()), cluster.owner(sim.name)) for p in others)
    assert all(processes.alive(pid, cluster.owner(sim.name)) for pid in ClusterState.load(sim.name).pids.values())
    # Trainer's webhook may not see a new runtime for up to a minute after the apiserver is back (create_trainjob).
    assert run_trainjob(sim.api, namespace, "after-restart", ["gpu-node-001", "gpu-node-002"]) == "Complete"


def test_agent_cache_follows_nodes_across_an_apiserver_restart(sim: Sim) -> None:
    """The agents' list+watch cache: a change shows, and one made right after the apiserver came back (its watch
    broken meanwhile) shows too, as the trimmed view the agents read."""
    core = client.CoreV1Api(sim.api)
    nodes = cache.Cache(client.CoreV1Api(cluster.api(sim.kubeconfig)).list_node, keep=cache.node_view)
    threading.Thread(target=nodes.run, daemon=True).start()
    assert nodes.synced.wait(30)
    assert sorted(nodes.by_name()) == sorted(profiles.node_names(NODES))

    def shows(value: str) -> bool:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if (nodes.by_name()["gpu-node-005"]["metadata"].get("annotations") or {}).get("test/cache") == value:
                return True
            time.sleep(0.1)
        return False

    try:
        core.patch_node("gpu-node-005", {"metadata": {"annotations": {"test/cache": "before"}}})
        assert shows("before")
        cluster.restart(sim.name, "apiserver", down_seconds=2)
        core.patch_node("gpu-node-005", {"metadata": {"annotations": {"test/cache": "after"}}})
        assert shows("after")
        assert set(nodes.by_name()["gpu-node-005"]) == {"metadata", "spec"}
    finally:
        core.patch_node("gpu-node-005", {"metadata": {"annotations": {"test/cache": None}}})


def known_here() -> list[str]:
    """The clusters on disk, less those of other test workers (they start and stop clusters meanwhile)."""
    mine = f"t{os.getpid()}-"
    return [n for n in known_clusters() if not re.match(r"t\d+-", n) or n.startswith(mine)]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["up", "--profile", "nope", "--nodes", "1", "--name", "bad1"], "unknown profile 'nope'"),
        (["up", "--profile", "aws-h100", "--nodes", "0", "--name", "bad2"], "--nodes must be at least 1"),
        (["up", "--profile", "aws-h100", "--nodes", "1", "--name", "Bad_Name"], "invalid cluster name"),
        (["down", "--name", "never-created"], "no cluster named 'never-created'"),
    ],
)
def test_bad_input_is_one_line_and_changes_nothing(args: list[str], message: str) -> None:
    before = known_here()
    result = sim_cli(*args)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and message in result.stderr
    assert known_here() == before


def test_bad_input_against_running_cluster(sim: Sim) -> None:
    nodes_before = [n.metadata.labels for n in client.CoreV1Api(sim.api).list_node().items]
    result = sim_cli("fault", "gpu-node-999", "--kind", "workload", "--name", sim.name)
    assert result.returncode == 1 and "node 'gpu-node-999' does not exist" in result.stderr
    result = sim_cli("up", "--profile", "aws-h100", "--nodes", "1", "--name", sim.name)
    assert result.returncode == 1 and f"cluster {sim.name!r} already exists" in result.stderr
    assert [n.metadata.labels for n in client.CoreV1Api(sim.api).list_node().items] == nodes_before
    assert client.VersionApi(sim.api).get_code().git_version == "v1.36.3"


def _listens(port: int) -> bool:
    """Whether a socket LISTENs on `port` (IPv4 or IPv6), from the kernel's tables."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:
                return True
    return False


def test_down_leaves_no_process_and_frees_ports() -> None:
    """...and spares a process that has the pid of a component that died before (pids wrap within a session)."""
    name = f"t{os.getpid()}-down"
    result = sim_cli("up", "--profile", "aws-h100", "--nodes", "2", "--name", name)
    assert result.returncode == 0, result.stderr
    kubeconfig = Path(result.stdout.strip().splitlines()[-1])
    assert kubeconfig.is_file()
    state = ClusterState.load(name)
    pids = [int(p.read_text()) for p in (cluster_dir(name) / "pids").glob("*.pid")] + list(state.pids.values())
    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    (cluster_dir(name) / "pids" / "kube-proxy.pid").write_text(str(stranger.pid))
    with ClusterState.update(name) as st:
        st.pids["gone"] = stranger.pid
    ports = list(state.ports.values()) + [urlparse(yaml.safe_load(kubeconfig.read_text())["clusters"][0]["cluster"]
                                                   ["server"]).port]
    assert len(pids) >= 7 and all(processes.alive(p, cluster.owner(name)) for p in pids)
    with cluster.ports_taken():  # no other worker's cluster start takes a freed port before it is checked
        assert sim_cli("down", "--name", name).returncode == 0
        assert not any(processes.alive(p, cluster.owner(name)) for p in pids)
        # Nothing listens there any more. Not a bind: another worker's outgoing connection may take a freed
        # ephemeral port as its own local port at any moment, which makes a bind fail though nothing listens.
        listening = [port for port in ports if _listens(port)]
        assert not listening, f"still listening after down: {listening}"
    assert not cluster_dir(name).exists()
    try:
        assert stranger.poll() is None
    finally:
        stranger.kill()
        stranger.wait()


# ------------------------------------------------------------------ faults only diagnose can localise

ROW = re.compile(r"^\s*(\d+)\s+\d+\s+\w+\s+\w+\s+-?\d+\s+[\d.]+\s+[\d.]+\s+([\d.]+)\s")
RACK0, RACK1 = "nn-3c000000", "nn-3c000001"  # the session cluster's network-node-layer-3 domains: 0-7, 8-15


def run_nccl(api: client.ApiClient, namespace: str, jobs: dict[str, tuple[list[str], str]]) -> dict[str, float]:
    """Run all_reduce_perf_mpi TrainJobs at once (name -> (nodes, NCCL_MNNVL_ENABLE or "" for unset)); each
    one's peak bus bandwidth as its launcher printed it, read through the pod log API."""
    smoke.ensure_runtime(api, namespace)
    for name, (nodes, mnnvl) in jobs.items():
        smoke.create_trainjob(api, namespace, name, nodes, trainer={"command": ["mpirun"], "args": [
            *(["-x", f"NCCL_MNNVL_ENABLE={mnnvl}"] if mnnvl else []),
            "/usr/local/bin/all_reduce_perf_mpi", "-b", "8", "-e", "1G"]})
    assert set(smoke.wait_finished(api, namespace, list(jobs), timeout=120).values()) == {"Complete"}
    return {name: launcher_peak(api, namespace, name) for name in jobs}


def launcher_peak(api: client.ApiClient, namespace: str, name: str) -> float:
    core = client.CoreV1Api(api)
    (pod,) = core.list_namespaced_pod(namespace, label_selector=f"jobset.sigs.k8s.io/jobset-name={name},"
                                                                "jobset.sigs.k8s.io/replicatedjob-name=launcher").items
    deadline = time.monotonic() + 60
    while True:  # the agent serves a finished pod's log on its next pass
        try:
            rows = [m for m in map(ROW.match, core.read_namespaced_pod_log(pod.metadata.name, namespace).splitlines())
                    if m]
        except client.ApiException:
            rows = []
        if rows:
            assert int(rows[-1][1]) == 1024**3
            return float(rows[-1][2])
        assert time.monotonic() < deadline, f"{name}: no nccl-tests table in the launcher's log"
        time.sleep(0.5)


def test_link_fault_shows_only_in_groups_spanning_both_domains(sim: Sim, namespace: str) -> None:
    result = sim_cli("fault", RACK0, "--kind", "link", "--peer", RACK1, "--name", sim.name)
    assert result.returncode == 0, result.stderr
    try:
        assert ClusterState.load(sim.name).links == [["topology.k8s.aws/network-node-layer-3", RACK0, RACK1, 0.5]]
        figures = run_nccl(sim.api, namespace, {"across": (["gpu-node-006", "gpu-node-009"], "0"),
                                                "rack0": (["gpu-node-000", "gpu-node-001"], "0"),
                                                "rack1": (["gpu-node-010", "gpu-node-011"], "0")})
        assert figures == {"across": 200.0, "rack0": 400.0, "rack1": 400.0}  # GB200 without MNNVL: 400 GB/s
    finally:
        cleared = sim_cli("fault", RACK0, "--kind", "none", "--name", sim.name)
    assert cleared.returncode == 0, cleared.stderr
    assert ClusterState.load(sim.name).links == []
    assert not any(workload_logs.LINK_ANNOTATION in (n.metadata.annotations or {})
                   for n in client.CoreV1Api(sim.api).list_node().items)
    assert run_nccl(sim.api, namespace, {"again": (["gpu-node-006", "gpu-node-009"], "0")}) == {"again": 400.0}


def test_nvlink_fault_shows_only_while_mnnvl_is_on(sim: Sim, namespace: str) -> None:
    result = sim_cli("fault", "gpu-node-003", "--kind", "nvlink", "--name", sim.name)
    assert result.returncode == 0, result.stderr
    try:
        figures = run_nccl(sim.api, namespace, {"nvl": (["gpu-node-002", "gpu-node-003"], "1"),
                                                "default": (["gpu-node-003", "gpu-node-004"], ""),
                                                "no-nvl": (["gpu-node-003", "gpu-node-005"], "0"),
                                                "healthy": (["gpu-node-006", "gpu-node-007"], "1")})
        assert figures == {"nvl": 210.0, "default": 210.0, "no-nvl": 400.0, "healthy": 840.0}
    finally:
        cleared = sim_cli("fault", "gpu-node-003", "--kind", "none", "--name", sim.name)
    assert cleared.returncode == 0, cleared.stderr
    assert run_nccl(sim.api, namespace, {"cleared": (["gpu-node-002", "gpu-node-003"], "1")}) == {"cleared": 840.0}


@pytest.mark.parametrize(("args", "message"), [
    (["nn-3c000000", "--kind", "link"], "--kind link needs --peer DOMAIN"),
    (["nn-3c000000", "--kind", "link", "--peer", "nn-3c000000"], "--peer must name another domain"),
    (["nn-3c000000", "--kind", "link", "--peer", "nn-3c000042"], "has both domains 'nn-3c000000' and 'nn-3c000042'"),
    (["gpu-node-001", "--kind", "slow", "--peer", "nn-3c000001"], "--peer is for --kind link only"),
    (["gpu-node-001", "--kind", "nvlink", "--factor", "1.5"], "--factor must be in (0, 1]"),
    (["nn-3c000009", "--kind", "none"], "no node and no domain with a link fault named 'nn-3c000009'"),
])
def test_bad_link_and_nvlink_faults_are_one_line_and_change_nothing(sim: Sim, args: list[str], message: str) -> None:
    before = [(n.metadata.annotations, n.metadata.labels) for n in client.CoreV1Api(sim.api).list_node().items]
    result = sim_cli("fault", *args, "--name", sim.name)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr
    assert [(n.metadata.annotations, n.metadata.labels) for n in client.CoreV1Api(sim.api).list_node().items] == before
    assert ClusterState.load(sim.name).links == []


def _job_seconds(api: client.ApiClient, namespace: str, name: str) -> float:
    """How long the Job took, from its start to its completion (the Job controller's own stamps)."""
    batch = client.BatchV1Api(api)
    deadline = time.monotonic() + 90
    while not (job := batch.read_namespaced_job(name, namespace)).status.completion_time:
        assert time.monotonic() < deadline, f"Job {namespace}/{name} did not complete: {job.status}"
        time.sleep(0.2)
    return (job.status.completion_time - job.status.start_time).total_seconds()


def test_pod_duration_is_set_per_namespace(sim: Sim, namespace: str) -> None:
    """Tests that share a cluster each choose how long their pods run: one namespace's pods run 6 s, the rest keep
    the cluster's 1 s, at the same time on the same cluster."""
    core, batch = client.CoreV1Api(sim.api), client.BatchV1Api(sim.api)
    slow = f"{namespace[:40]}-slow"
    core.create_namespace({"metadata": {"name": slow}})
    try:
        assert sim_cli("pod-ms", slow, "--ms", "6000", "--name", sim.name).returncode == 0
        assert ClusterState.load(sim.name).namespace_pod_ms == {slow: 6000}
        for ns in (slow, namespace):
            batch.create_namespaced_job(ns, load.job("timed", 1, "1"))
        assert _job_seconds(sim.api, slow, "timed") >= 6
        assert _job_seconds(sim.api, namespace, "timed") < 5
    finally:
        cluster.pod_duration(sim.name, slow, None)
        core.delete_namespace(slow)
    assert ClusterState.load(sim.name).namespace_pod_ms == {}
    bad = sim_cli("pod-ms", "Bad_NS", "--ms", "5", "--name", sim.name)
    assert bad.returncode == 1 and bad.stderr.strip().splitlines() == [
        "error: invalid namespace 'Bad_NS': lowercase letters, digits and '-', at most 63"]


def test_reset_leaves_the_cluster_as_up_made_it(sim: Sim) -> None:
    """What a shared cluster's next user must not see: faults, a link fault, cordons, pod durations, namespaces and
    the workloads in `default`; all gone after `reset`, and the nodes as `up` made them."""
    core, batch = client.CoreV1Api(sim.api), client.BatchV1Api(sim.api)
    faults.fault(sim.name, "gpu-node-001", "hardware")
    faults.fault(sim.name, "gpu-node-002", "slow")
    faults.fault(sim.name, "gpu-node-003", "cordon")
    faults.fault(sim.name, RACK0, "link", peer=RACK1)
    core.create_namespace({"metadata": {"name": "left-behind"}})
    cluster.pod_duration(sim.name, "left-behind", 60_000)
    batch.create_namespaced_job("left-behind", load.job("lingers", 1, "1"))
    batch.create_namespaced_job("default", load.job("lingers", 1, "1"))
    core.create_namespaced_config_map("default", {"metadata": {"name": "left-behind"}})

    assert sim_cli("reset", "--name", sim.name).returncode == 0
    state = ClusterState.load(sim.name)
    assert (state.faults, state.links, state.namespace_pod_ms) == ({}, [], {})
    assert {ns.metadata.name for ns in core.list_namespace().items} == reset.SYSTEM_NAMESPACES
    assert batch.list_namespaced_job("default").items == []
    assert [c.metadata.name for c in core.list_namespaced_config_map("default").items] == ["kube-root-ca.crt"]
    nodes = core.list_node().items
    made = {n["metadata"]["name"]: n["metadata"]["labels"] for n in profiles.build_nodes("aws-gb200", NODES)}
    assert {n.metadata.name: {k: n.metadata.labels[k] for k in made[n.metadata.name]} for n in nodes} == made
    assert not any(n.spec.unschedulable or HARDWARE_LABEL in n.metadata.labels for n in nodes)
    assert not any((n.metadata.annotations or {}).get(key) for n in nodes
                   for key in (workload_logs.FACTOR_ANNOTATION, workload_logs.LINK_ANNOTATION))
    custom = client.CustomObjectsApi(sim.api)
    stage = custom.get_cluster_custom_object("kwok.x-k8s.io", "v1alpha1", "stages", "pod-complete")
    assert stage["spec"]["delay"] == {"durationMilliseconds": 1000}
