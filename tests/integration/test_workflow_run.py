"""workflow_run end to end on a live simulated GB200 cluster: the seed examples, iterations and faults.

Each test runs its own Workflow in its own namespace on its own nodes of one 16-node cluster.
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

import pytest
from kubernetes import client

from ansible_collections.cre.certification.plugins.module_utils.driver.options import RunOptions
from ansible_collections.cre.certification.plugins.module_utils.driver.workflow import run_workflow
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import node_results
from ansible_collections.cre.certification.plugins.module_utils.kube.rest import Kube
from tests.ansible_run import ansible_module
from tools.sim import cluster, faults

from .conftest import SIM, Sim
from .pods_seen import Seen, watching
from .seed import NVCRE, TRAINER, items, node_result_configmaps, nodes, start, stored, workflow

pytestmark = pytest.mark.clusters(SIM)


def run(sim: Sim, ns: str, *flags: str, **args: Any) -> tuple[int, dict]:
    return ansible_module("workflow_run", {"name": "nccl-test", "namespace": ns, "kubeconfig": str(sim.kubeconfig),
                                           "timeout": 240, "poll_interval": 0.5, **args}, *flags, timeout=300)


def pods_by_job(seen: Seen) -> dict[str, set[str]]:
    """NVCRE Job -> the nodes its pods ran on (the MPI workers are gone once their JobSet finished)."""
    out: dict[str, set[str]] = {}
    for pod in seen.last.values():
        job = (pod.metadata.labels or {}).get("nvcre.nvidia.com/job")
        if job:
            out.setdefault(job, set()).add(pod.spec.node_name)
    return out


def configmap(sim: Sim, ns: str, name: str | None) -> dict | None:
    return client.ApiClient().sanitize_for_serialization(
        client.CoreV1Api(sim.api).read_namespaced_config_map(name, ns)) if name else None


def test_pinned_twelve_nodes_six_jobs_each_on_its_two_nodes(e2e: Sim) -> None:
    target = nodes(*range(12))
    ns = start(e2e, workflow(target))
    with watching(e2e.api, ns) as seen:
        rc, result = run(e2e, ns)
    assert rc == 0, result
    assert result["condition"] == {"type": "Succeeded", "reason": "JobCompleted",
                                   "message": "All 1 iterations completed successfully"}
    # Progress reached the user while the task ran, ending with the verdict.
    assert result["_progress"][0].startswith(f"[localhost] {ns}/nccl-test: iteration 1/1, groups 6 pending")
    assert "6 succeeded, 0 failed -> Succeeded (JobCompleted)" in result["_progress"][-1]
    jobs = {j["metadata"]["name"]: j for j in items(e2e, ns, NVCRE, "jobs")}
    assert sorted(jobs) == [f"nccl-test-group-{i}-iter-1" for i in range(6)]
    placed = pods_by_job(seen)
    for i, name in enumerate(sorted(jobs)):
        pinned = set(nodes(2 * i, 2 * i + 1))
        assert jobs[name]["metadata"]["annotations"]["nvcre.nvidia.com/group-nodes"] == ",".join(sorted(pinned))
        assert placed[name] == pinned  # the scheduler bound node and launcher pods inside the group
    assert len(items(e2e, ns, TRAINER, "trainjobs")) == 6
    assert result["succeeded_nodes"] == target and result["failed_nodes"] == []
    cm = configmap(e2e, ns, result["configmaps"]["succeeded"])
    assert node_results.read_succeeded(cm) == target


def test_every_workload_of_a_pass_goes_out_before_any_job_status(e2e: Sim) -> None:
    """The Jobs' passes run in two waves: the pass that first sees the 16 Jobs creates all 16 TrainJobs before it
    writes any Job's status or event (8 Jobs at a time, each whole, would write the first Jobs' statuses before the
    ninth Job's TrainJob); each Job's own order is kept, and the run ends as ever."""
    wf = workflow(nodes(*range(16)))
    wf["spec"]["jobTemplate"]["spec"]["workload"]["trainJob"]["trainer"]["numNodes"] = 1
    ns = start(e2e, wf)
    lines: list[str] = []
    result = run_workflow(Kube(e2e.api), ns, "nccl-test", RunOptions(240, 0.5, trace=lines.append))
    assert result["phase"] == "Succeeded", result["condition"]
    creates = [i for i, line in enumerate(lines) if line.startswith("create TrainJob ")]
    writes = [i for i, line in enumerate(lines) if line.startswith(("status Job ", "event Workload"))]
    assert len(creates) == 16 and writes, lines
    assert max(creates) < min(writes), lines


def test_unpinned_one_job_placed_by_the_scheduler(e2e: Sim) -> None:
    target = nodes(*range(12))
    ns = start(e2e, workflow(target, placement="Unpinned"))
    with watching(e2e.api, ns) as seen:
        rc, result = run(e2e, ns)
    assert rc == 0, result
    assert result["phase"] == "Succeeded"
    status = stored(e2e, ns)["status"]["orchestration"]
    assert status["placement"] == "Unpinned"
    assert [j["metadata"]["name"] for j in items(e2e, ns, NVCRE, "jobs")] == ["nccl-test-job"]
    used = set().union(*pods_by_job(seen).values())
    node_pods = {p.spec.node_name for p in seen.pods(**{"jobset.sigs.k8s.io/replicatedjob-name": "node"})}
    assert len(node_pods) == 2 and node_pods <= set(target)
    assert used <= set(target)  # the other ten target nodes, and every node outside it, untouched
    assert status["groups"][0]["nodes"] == sorted(node_pods)


def test_team_b_label_override_fails_before_anything_is_created(e2e: Sim) -> None:
    wf = workflow(nodes(0, 1))
    wf["spec"]["overrides"] = [{"when": {}, "jobTemplatePatch": [
        {"op": "replace", "path": "/spec/workloadMetadata/labels/kai.scheduler~1queue", "value": "team-b"}]}]
    ns = start(e2e, wf)
    rc, result = run(e2e, ns)
    assert rc == 0, result  # the run ended: the Workflow's verdict is Failed
    assert result["condition"] == {
        "type": "Failed", "reason": "GangSchedulingConflict",
        "message": 'spec.jobTemplate.spec.workloadMetadata.labels["kai.scheduler/queue"]: '
                   'conflicting label value "team-b", expected "team-a"'}
    assert items(e2e, ns, NVCRE, "jobs") == []
    assert items(e2e, ns, TRAINER, "trainjobs") == []
    assert items(e2e, ns, TRAINER, "trainingruntimes") == []


def test_removed_queue_label_is_restored_on_the_trainjob_only(e2e: Sim) -> None:
    wf = workflow(nodes(0, 1))
    wf["spec"]["overrides"] = [{"when": {}, "jobTemplatePatch": [
        {"op": "remove", "path": "/spec/workloadMetadata/labels/kai.scheduler~1queue"}]}]
    ns = start(e2e, wf)
    before = stored(e2e, ns)["spec"]
    rc, result = run(e2e, ns)
    assert rc == 0 and result["phase"] == "Succeeded", result
    (trainjob,) = items(e2e, ns, TRAINER, "trainjobs")
    assert trainjob["metadata"]["labels"]["kai.scheduler/queue"] == "team-a"
    assert stored(e2e, ns)["spec"] == before


def test_three_iterations_two_groups(e2e: Sim) -> None:
    ns = start(e2e, workflow(nodes(8, 9, 10, 11), iterations=3))
    rc, result = run(e2e, ns)
    assert rc == 0, result
    orch = stored(e2e, ns)["status"]["orchestration"]
    assert orch["completedIterations"] == 3 and len(orch["iterationHistory"]) == 2
    assert [h["iteration"] for h in orch["iterationHistory"]] == [1, 2]
    assert result["condition"]["reason"] == "JobCompleted"
    assert sorted(j["metadata"]["name"] for j in items(e2e, ns, NVCRE, "jobs")) == [
        "nccl-test-group-0-iter-3", "nccl-test-group-1-iter-3"]


def test_hardware_and_workload_faults_are_attributed(e2e: Sim) -> None:
    """One node per Job (numNodes 1), so each fault fails only its own node's group."""
    faults.fault(e2e.name, "gpu-node-013", "hardware")
    faults.fault(e2e.name, "gpu-node-014", "workload")
    try:  # the cluster is shared: the faults (and the quarantine's cordon) go when the run ends
        wf = workflow(nodes(12, 13, 14, 15))
        wf["spec"]["jobTemplate"]["spec"]["workload"]["trainJob"]["trainer"]["numNodes"] = 1
        ns = start(e2e, wf)
        rc, result = run(e2e, ns)
    finally:
        for node in nodes(13, 14):
            faults.fault(e2e.name, node, "none")
    assert rc == 0, result
    failed = {f["name"]: f["reason"] for f in result["failed_nodes"]}
    assert failed == {"gpu-node-013": "HardwareFailureDetected", "gpu-node-014": "WorkloadFailed"}
    assert result["succeeded_nodes"] == nodes(12, 15)
    # Hardware wins the Workflow's reason (workflow.md §8.8).
    assert result["condition"]["reason"] == "JobHardwareFailed"
    assert result["condition"]["message"] == (
        "2 groups failed across 1 iterations; hardware failures occurred on one or more nodes")
    cm = configmap(e2e, ns, result["configmaps"]["failed"])
    assert {(f["name"], f["reason"]) for f in node_results.read_failed(cm)} == set(failed.items())


def test_check_mode_plans_and_writes_nothing(e2e: Sim) -> None:
    ns = start(e2e, workflow(nodes(*range(12))))
    rc, result = run(e2e, ns, "--check")
    assert rc == 0, result
    assert [j["name"] for j in result["plan"]["jobs"]] == [f"nccl-test-group-{i}-iter-1" for i in range(6)]
    assert result["changed"] is False
    assert "status" not in stored(e2e, ns) and items(e2e, ns, NVCRE, "jobs") == []


def test_refuses_when_a_resident_nvcre_controller_runs(e2e: Sim) -> None:
    ns = start(e2e, workflow(nodes(0, 1)))
    coordination = client.CoordinationV1Api(e2e.api)
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    coordination.create_namespaced_lease(ns, {"metadata": {"name": "nvcre-controller-manager.nvcre.nvidia.com"},
                                              "spec": {"holderIdentity": "nvcre-0", "renewTime": now}})
    try:
        rc, result = run(e2e, ns)
    finally:
        coordination.delete_namespaced_lease("nvcre-controller-manager.nvcre.nvidia.com", ns)
    assert rc != 0
    assert result["msg"].startswith(f"refusing to drive Workflow {ns}/nccl-test: a resident NVCRE controller holds "
                                    f"the leader lease {ns}/nvcre-controller-manager.nvcre.nvidia.com")
    assert "status" not in stored(e2e, ns) and items(e2e, ns, NVCRE, "jobs") == []


def test_gb200_one_node_groups_each_wait_for_their_own_compute_domain_and_run_at_once(e2e: Sim) -> None:
    """Every group's ComputeDomain goes out in one pass and each Job as soon as its own is there (issue 22): the
    8 loopback groups of a GB200 certification all run at the same moment, none held back by another's."""
    ns = "gb200-launch"
    client.CoreV1Api(e2e.api).create_namespace({"metadata": {"name": ns}})
    cluster.pod_duration(e2e.name, ns, 6000)
    with watching(e2e.api, ns) as seen:
        rc, result = ansible_module("certification_run", {
            "kubeconfig": str(e2e.kubeconfig), "name": "launch", "namespace": ns,
            "categories": [{"domain": "communication", "variant": "nccl-loopback",
                            "options": {"testScale": "intra-node"}}],
            "target": {"nodeNames": nodes(*range(8))}, "poll_interval": 0.5, "timeout": 240}, timeout=300)
    assert rc == 0 and result["phase"] == "Succeeded", result
    assert len(items(e2e, ns, NVCRE, "jobs")) == 8
    assert seen.most_running == 8, seen.most_running


def test_a_log_profile_created_during_the_run_is_read_from_the_watch(e2e: Sim) -> None:
    """The run watches the LogProfiles instead of reading one per pass: a profile missing at the first sample
    (LogProfileNotFound, requeued at the sample interval as NVCRE does) is read once it is created, and the
    measurement ends with the table's figures; the node-result ConfigMaps, read from their own watch, hold the
    group."""
    profile = f"late-{datetime.now(UTC):%H%M%S%f}"
    wf = workflow(nodes(0, 1))
    wf["spec"]["jobTemplate"]["spec"]["bandwidthMeasurement"] = {"logProfileRef": profile, "sampleInterval": "1s"}
    ns = start(e2e, wf)
    cluster.pod_duration(e2e.name, ns, 8000)
    custom = client.CustomObjectsApi(e2e.api)
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(run, e2e, ns)
        deadline = time.monotonic() + 120
        while not any(c.get("reason") == "LogProfileNotFound" for m in items(e2e, ns, NVCRE, "bandwidthmeasurements")
                      for c in (m.get("status") or {}).get("conditions") or []):
            assert time.monotonic() < deadline and not running.done(), "no LogProfileNotFound while the Job ran"
            time.sleep(0.3)
        builtin = custom.get_cluster_custom_object(*NVCRE, "logprofiles", "nccl-bandwidth")
        custom.create_cluster_custom_object(*NVCRE, "logprofiles", {
            "apiVersion": builtin["apiVersion"], "kind": "LogProfile", "metadata": {"name": profile},
            "spec": builtin["spec"]})
        try:  # cluster-scoped: the pool's reset would not remove it
            rc, result = running.result(timeout=300)
        finally:
            custom.delete_cluster_custom_object(*NVCRE, "logprofiles", profile)
    assert rc == 0 and result["condition"]["reason"] == "JobCompleted", result
    (m,) = items(e2e, ns, NVCRE, "bandwidthmeasurements")
    done = next(c for c in m["status"]["conditions"] if c["type"] == "Complete")
    assert (done["status"], done["reason"]) == ("True", "JobSucceeded"), m["status"]
    assert m["status"]["results"] and max(float(r["busBW"]) for r in m["status"]["results"]) > 0
    assert result["succeeded_nodes"] == nodes(0, 1) and result["failed_nodes"] == []
    assert node_result_configmaps(e2e, ns, stored(e2e, ns)["metadata"]["uid"])["succeeded-nodes"][0] == nodes(0, 1)
