"""NVCRE parity on a live 2-node on-prem B300 cluster whose nodes advertise `rdma/ib` (as the Network Operator's
RDMA device plugin would): the Certification tier's discovery, detection and events, and the Workflow tier's
dependencies, scheduling-blocked status and event rules. Each test has its own namespace."""
from __future__ import annotations

import copy
import itertools
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client

from ansible_collections.cre.certification.plugins.module_utils.driver import execute
from ansible_collections.cre.certification.plugins.module_utils.engine.api.actions import AddOwner, Event, Ref, Step
from ansible_collections.cre.certification.plugins.module_utils.engine.plan import category_build
from ansible_collections.cre.certification.plugins.module_utils.kube.errors import ApiError
from ansible_collections.cre.certification.plugins.module_utils.kube.rest import Kube
from tests.ansible_run import ansible_module

from .conftest import Sim
from .pods_seen import watching
from .seed import NVCRE, SEED

CATEGORY = {"domain": "communication", "variant": "nccl-all-reduce", "options": {"testScale": "intra-node"}}
NODES = ["gpu-node-000", "gpu-node-001"]
_ns = itertools.count()


@pytest.fixture(scope="module")
def onprem(make_sim) -> Sim:
    sim = make_sim("parity", "onprem-b300", 2)
    core = client.CoreV1Api(sim.api)
    for name in NODES:
        core.patch_node_status(name, {"status": {"capacity": {"rdma/ib": "8"}, "allocatable": {"rdma/ib": "8"}}})
    return sim


@pytest.fixture
def ns(onprem: Sim) -> Iterator[str]:
    name = f"parity-{next(_ns)}"
    client.CoreV1Api(onprem.api).create_namespace({"metadata": {"name": name}})
    yield name


def certify(sim: Sim, ns: str, categories: list[Any], timeout: float = 300, **args: Any) -> tuple[int, dict]:
    return ansible_module("certification_run", {
        "kubeconfig": str(sim.kubeconfig), "name": "pc", "namespace": ns, "categories": categories,
        "poll_interval": 0.5, "timeout": timeout, **args}, timeout=timeout + 120)


def drive(sim: Sim, ns: str, timeout: float = 120) -> tuple[int, dict]:
    return ansible_module("workflow_run", {"name": "nccl-test", "namespace": ns, "kubeconfig": str(sim.kubeconfig),
                                           "timeout": timeout, "poll_interval": 0.5}, timeout=timeout + 120)


def certification(sim: Sim, ns: str) -> dict:
    return client.CustomObjectsApi(sim.api).get_namespaced_custom_object(*NVCRE, ns, "certifications", "pc")


def true_condition(obj: dict) -> dict:
    found = next(c for c in obj["status"]["conditions"] if c["status"] == "True"
                 and c["type"] in ("InProgress", "Succeeded", "Failed"))
    return {k: found[k] for k in ("type", "reason", "message")}


def events(sim: Sim, ns: str, name: str) -> list[tuple[str, str, str]]:
    found = client.CoreV1Api(sim.api).list_namespaced_event(ns, field_selector=f"involvedObject.name={name}").items
    return [(e.type, e.reason, e.message) for e in sorted(found, key=lambda e: int(e.metadata.resource_version))]


def seed(ns: str, sim: Sim, wf: dict) -> None:
    client.CustomObjectsApi(sim.api).create_namespaced_custom_object(*NVCRE, ns, "workflows", wf)


def seed_workflow() -> dict:
    wf = copy.deepcopy(SEED)
    wf["spec"]["orchestration"]["target"] = {"nodeNames": NODES}
    return wf


# ---------------------------------------------------------------- the Certification tier

def test_nic_resource_is_detected_requested_and_told(onprem: Sim, ns: str) -> None:
    with watching(onprem.api, ns) as seen:
        rc, result = certify(onprem, ns, [CATEGORY])
    assert rc == 0 and result["phase"] == "Succeeded", result
    (category,) = result["categories"]
    wf = client.CustomObjectsApi(onprem.api).get_namespaced_custom_object(*NVCRE, ns, "workflows", category["workflow"])
    runtime = wf["spec"]["dependencies"][0]
    node = next(rj for rj in runtime["spec"]["template"]["spec"]["replicatedJobs"] if rj["name"] == "node")
    resources = node["template"]["spec"]["template"]["spec"]["containers"][0]["resources"]
    assert resources["limits"]["rdma/ib"] == "8" and resources["requests"]["rdma/ib"] == "8"
    # The pods the scheduler bound asked for the NICs too.
    pods = seen.pods(**{"jobset.sigs.k8s.io/replicatedjob-name": "node"})
    assert pods and all(p.spec.containers[0].resources.requests["rdma/ib"] == "8" for p in pods)
    told = events(onprem, ns, "pc")
    assert ("Normal", "NICResourceDetection",
            "Detected NIC resource rdma/ib allocatable at 8 per node on all 2 target nodes") in told
    lifecycle = [(t, r) for t, r, _m in told if r != "NICResourceDetection"]
    assert lifecycle == [("Normal", "WorkflowCreated"), ("Normal", "WorkflowRunning"),
                         ("Normal", "AllWorkflowsSucceeded")]


def test_a_failed_build_does_not_stop_the_next_category(onprem: Sim, ns: str) -> None:
    # nemotron5-56b needs 32 GPUs; two 8-GPU nodes cannot hold it.
    rc, result = certify(onprem, ns, [{"domain": "training", "variant": "nemotron5-56b"}, CATEGORY])
    assert rc == 0, result
    first, second = result["categories"]
    assert (first["status"], first["workflow"], first["condition"]["reason"]) == ("Failed", "", "BuildFailed")
    assert first["condition"]["message"] == ("training/nemotron5-56b: no valid node count <= 2 satisfies model "
                                             "constraints (minGPUs=32, TP×PP=4, 8 GPUs/node)")
    assert second["status"] == "Succeeded" and second["succeeded_nodes"] == NODES
    stored = certification(onprem, ns)
    assert true_condition(stored) == {"type": "Failed", "reason": "WorkflowFailed",
                                      "message": "One or more certification categories failed"}
    assert [s["status"] for s in stored["status"]["categoryStatuses"]] == ["Failed", "Succeeded"]
    assert "workflowRef" not in stored["status"]["categoryStatuses"][0]
    assert ("Normal", "WorkflowFailed",
            "Workflow for category training/nemotron5-56b failed, advancing to next category") in events(onprem, ns, "pc")


def test_an_unknown_category_is_refused_before_anything_is_written(onprem: Sim, ns: str) -> None:
    """NVCRE's controller records CategoryNotFound on a Certification it is given (the engine still does, see
    test_certification_tier); the face checks the catalog first, so a typo leaves no Certification with a spec
    that a corrected rerun would then conflict with."""
    rc, result = certify(onprem, ns, [CATEGORY, "communication/nccl-nope"])
    assert rc != 0 and result["msg"].startswith("categories[1]: unknown category 'communication/nccl-nope'; "), result
    custom = client.CustomObjectsApi(onprem.api)
    assert custom.list_namespaced_custom_object(*NVCRE, ns, "certifications")["items"] == []
    assert custom.list_namespaced_custom_object(*NVCRE, ns, "workflows")["items"] == []
    assert events(onprem, ns, "pc") == []


def test_a_foreign_workflow_of_the_name_is_a_collision(onprem: Sim, ns: str) -> None:
    name = category_build.workflow_name("pc", CATEGORY)
    foreign = {**seed_workflow(), "metadata": {"name": name, "namespace": ns}}
    seed(ns, onprem, foreign)
    before = client.CustomObjectsApi(onprem.api).get_namespaced_custom_object(*NVCRE, ns, "workflows", name)
    rc, result = certify(onprem, ns, [CATEGORY])
    message = (f'Workflow "{name}" already exists in namespace "{ns}" and is not controlled by Certification "pc"; '
               "refusing to adopt it")
    assert rc != 0 and message in result["msg"], result
    assert true_condition(certification(onprem, ns)) == {"type": "Failed", "reason": "WorkflowNameCollision",
                                                         "message": message}
    after = client.CustomObjectsApi(onprem.api).get_namespaced_custom_object(*NVCRE, ns, "workflows", name)
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]  # not touched
    assert ("Warning", "WorkflowNameCollision", message) in events(onprem, ns, "pc")


def test_no_matching_node_waits_and_a_rerun_keeps_waiting(onprem: Sim, ns: str) -> None:
    pool = f"pool-{ns}"
    target = {"nodeSelector": {"pool": pool}}
    rc, result = certify(onprem, ns, [CATEGORY], timeout=4, target=target)
    assert rc == 0 and result["phase"] == "InProgress" and result["timed_out"], result
    waiting = re.compile(rf"No schedulable nodes match pool={pool}; retrying for up to (\d+)s more\. "
                         r"Nodes that are cordoned or unschedulable do not count\.")
    first = true_condition(certification(onprem, ns))
    assert first["reason"] == "WaitingForNodes" and 290 <= int(waiting.fullmatch(first["message"])[1]) <= 300
    assert certification(onprem, ns)["status"]["categoryStatuses"][0]["status"] == "Pending"
    rc, result = certify(onprem, ns, [CATEGORY], timeout=3, target=target)  # inside the window: still waiting
    assert rc == 0 and true_condition(certification(onprem, ns)) == first, result
    core = client.CoreV1Api(onprem.api)
    core.patch_node(NODES[1], {"metadata": {"labels": {"pool": pool}}})
    try:
        rc, result = certify(onprem, ns, [CATEGORY], target=target)
    finally:
        core.patch_node(NODES[1], {"metadata": {"labels": {"pool": None}}})
    assert rc == 0 and result["phase"] == "Succeeded", result
    assert result["categories"][0]["succeeded_nodes"] == [NODES[1]]
    assert [r for _t, r, _m in events(onprem, ns, "pc")].count("WaitingForNodes") == 1


# ---------------------------------------------------------------- the Workflow tier

def test_dependency_scope_from_discovery_then_a_refused_dependency(onprem: Sim, ns: str) -> None:
    """A cluster-scoped kind the static list does not know is created without a namespace or an owner; a
    dependency the server refuses fails the Workflow with NVCRE's DependencyCreationError message."""
    driver_name = f"cre-{ns}.example.com"
    wf = seed_workflow()
    wf["spec"]["dependencies"] += [
        {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": driver_name},
         "spec": {"attachRequired": False}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bad-hints"}, "data": {"a": "b"},
         "bogus": True},
    ]
    seed(ns, onprem, wf)
    storage = client.StorageV1Api(onprem.api)
    try:
        rc, result = drive(onprem, ns)
        assert rc == 0, result
        assert result["condition"] == {
            "type": "Failed", "reason": "DependencyCreationError",
            "message": 'Failed to create dependency: failed to create dependency v1/ConfigMap bad-hints: ConfigMap in '
                       'version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "bogus"'}
        created = storage.read_csi_driver(driver_name)
        assert created.metadata.owner_references is None and created.metadata.namespace is None
        assert created.metadata.labels["nvcre.nvidia.com/workflow"] == "nccl-test"
        assert ("Warning", "DependencyCreationError", result["condition"]["message"]) in events(onprem, ns, "nccl-test")
    finally:
        storage.delete_csi_driver(driver_name)


def test_workflow_dependencies_are_created_before_grouping(onprem: Sim, ns: str) -> None:
    """§4 step 10 before step 11: a job size the nodes cannot meet fails the Workflow after its workflow-scoped
    dependency exists, and the Failed status records it."""
    wf = seed_workflow()
    wf["spec"]["jobTemplate"]["spec"]["workload"]["trainJob"]["trainer"]["numNodes"] = 3
    wf["spec"]["dependencies"].append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "hints"},
                                       "data": {"a": "b"}})
    seed(ns, onprem, wf)
    rc, result = drive(onprem, ns)
    assert rc == 0 and result["condition"] == {"type": "Failed", "reason": "PartitionError",
                                               "message": "Not enough schedulable nodes: need 3, found 2"}, result
    hints = client.CoreV1Api(onprem.api).read_namespaced_config_map("hints", ns)
    assert hints.metadata.owner_references[0].name == "nccl-test"
    stored = client.CustomObjectsApi(onprem.api).get_namespaced_custom_object(*NVCRE, ns, "workflows", "nccl-test")
    assert stored["status"]["dependencyRefs"] == [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "hints", "namespace": ns, "scope": "workflow"}]


def test_unschedulable_pods_show_as_job_scheduling_blocked(onprem: Sim, ns: str) -> None:
    wf = seed_workflow()
    wf["spec"]["jobTemplate"]["spec"]["schedulingStallGraceSeconds"] = 1
    wf["spec"]["orchestration"]["execution"] = {"timeoutPerJob": "20s"}
    node = wf["spec"]["dependencies"][0]["spec"]["template"]["spec"]["replicatedJobs"][0]
    resources = node["template"]["spec"]["template"]["spec"]["containers"][0]["resources"]
    for part in ("limits", "requests"):
        resources[part]["example.com/absent"] = "1"  # no node has it: the scheduler cannot place the pods
    seed(ns, onprem, wf)
    rc, result = drive(onprem, ns, timeout=12)
    assert rc == 0 and result["timed_out"], result
    job = client.CustomObjectsApi(onprem.api).get_namespaced_custom_object(*NVCRE, ns, "jobs", "nccl-test-job")
    blocked = true_condition(job)
    assert blocked["reason"] == "WorkloadSchedulingBlocked" and "example.com/absent" in blocked["message"]
    assert result["condition"] == {
        "type": "InProgress", "reason": "JobSchedulingBlocked",
        "message": f"Iteration 1/1: 1 groups running; job nccl-test-job scheduling blocked: {blocked['message']}"}
    start = job["status"]["workloadStartTime"]
    rc, result = drive(onprem, ns)
    assert rc == 0 and result["condition"]["reason"] == "IterationsFailed", result
    job = client.CustomObjectsApi(onprem.api).get_namespaced_custom_object(*NVCRE, ns, "jobs", "nccl-test-job")
    assert true_condition(job) == {"type": "Failed", "reason": "JobTimedOut",
                                   "message": "Job exceeded timeoutPerJob while its pods were unschedulable"}
    log = job["status"]["failureLog"]  # §8.6: read before the Job was failed (no node: its pods never ran)
    assert log["reason"] == "Timeout" and log["podName"].startswith("nccl-test-job-workload-") and "nodeName" not in log
    assert job["status"]["workloadStartTime"] == start  # stamped once, never moved


def test_a_refused_override_error_write_is_told_in_an_event(onprem: Sim, ns: str) -> None:
    """An admission policy refuses the Failed/OverrideError status write: NVCRE's Warning
    OverrideErrorStatusUpdateFailed tells why."""
    admission = client.AdmissionregistrationV1Api(onprem.api)
    name = f"deny-{ns}"
    admission.create_validating_admission_policy({
        "metadata": {"name": name},
        "spec": {"failurePolicy": "Fail",
                 "matchConstraints": {"resourceRules": [{"apiGroups": ["nvcre.nvidia.com"], "apiVersions": ["*"],
                                                         "operations": ["UPDATE"],
                                                         "resources": ["workflows/status"]}]},
                 "validations": [{"expression": "!object.status.conditions.exists(c, c.reason == 'OverrideError')",
                                  "message": "OverrideError is not accepted here"}]}})
    admission.create_validating_admission_policy_binding({
        "metadata": {"name": name},
        "spec": {"policyName": name, "validationActions": ["Deny"],
                 "matchResources": {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}}}}})
    try:
        wf = seed_workflow()
        wf["spec"]["overrides"] = [{"when": {}, "jobTemplatePatch": [{"op": "remove", "path": "/spec/nope"}]}]
        seed(ns, onprem, wf)
        refused_once_loaded(client.CustomObjectsApi(onprem.api), ns, "nccl-test")
        rc, result = drive(onprem, ns, timeout=30)
        assert rc != 0, result
        told = [e for e in events(onprem, ns, "nccl-test") if e[1] == "OverrideErrorStatusUpdateFailed"]
        assert len(told) == 1 and told[0][0] == "Warning", told
        assert told[0][2].startswith("Failed to update the status of Workflow nccl-test: ")
        assert "OverrideError is not accepted here" in told[0][2]
    finally:
        admission.delete_validating_admission_policy_binding(name)
        admission.delete_validating_admission_policy(name)


def refused_once_loaded(custom: client.CustomObjectsApi, ns: str, name: str) -> None:
    """Wait until the API server's admission refuses an OverrideError status write (a dry run, which admission
    judges like any write): its policy cache loads a new policy and binding a moment after they are created."""
    probe = {"apiVersion": "/".join(NVCRE), "kind": "Workflow", "metadata": {"name": name},
             "status": {"conditions": [{"type": "Failed", "status": "True", "reason": "OverrideError", "message": "probe",
                                        "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        probe["metadata"]["resourceVersion"] = custom.get_namespaced_custom_object(
            *NVCRE, ns, "workflows", name)["metadata"]["resourceVersion"]
        try:
            custom.replace_namespaced_custom_object_status(*NVCRE, ns, "workflows", name, probe, dry_run="All")
        except client.ApiException as e:
            if "OverrideError is not accepted here" in (e.body or ""):
                return
            raise
        time.sleep(0.2)
    raise AssertionError("the admission policy never refused the probe write")


def test_event_messages_are_capped_at_1024_bytes(onprem: Sim, ns: str) -> None:
    involved = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "namespace": ns}}
    outcome = execute.run(Kube(onprem.api), Step([Event(involved, "Normal", "Long", "é" * 2000)]), ns)
    assert outcome.done == 1
    (told,) = events(onprem, ns, ns)
    assert told[2] == "é" * 504 + "... [truncated]" and len(told[2].encode()) == 1023


def test_an_owner_is_added_whatever_else_changed_but_never_over_new_owners(onprem: Sim, ns: str) -> None:
    """§7.2's owner reference to the Job on a group's copy. A write elsewhere in the copy after it was read (the DRA
    driver's Ready status, Trainer's finalizer) does not refuse it, as a resourceVersion precondition did; owners
    changed meanwhile do (the pass looks again) and stay; a reference the server finds invalid is an error."""
    core, kube = client.CoreV1Api(onprem.api), Kube(onprem.api)
    jobs = [core.create_namespaced_config_map(ns, {"metadata": {"name": f"job-{i}"}}).metadata for i in range(3)]
    job = [{"apiVersion": "v1", "kind": "ConfigMap", "name": m.name, "uid": m.uid} for m in jobs]
    core.create_namespaced_config_map(ns, {"metadata": {"name": "copy"}})
    copy_ref = Ref("v1", "ConfigMap", ns, "copy")

    def owners() -> list[str]:
        return [o.uid for o in core.read_namespaced_config_map("copy", ns).metadata.owner_references or []]

    uids = [r["uid"] for r in job]
    core.patch_namespaced_config_map("copy", ns, {"data": {"written": "after our read"}})
    assert execute.run(kube, Step([AddOwner(copy_ref, (), job[0])]), ns).done == 1
    assert owners() == uids[:1]
    core.patch_namespaced_config_map("copy", ns, {"metadata": {"ownerReferences": job[:2]}})
    outcome = execute.run(kube, Step([AddOwner(copy_ref, (job[0],), job[2])]), ns)
    assert outcome.stale and outcome.done == 0
    assert owners() == uids[:2]
    assert execute.run(kube, Step([AddOwner(copy_ref, tuple(job[:2]), job[2])]), ns).done == 1
    assert owners() == uids
    with pytest.raises(ApiError) as refused:
        execute.run(kube, Step([AddOwner(copy_ref, tuple(job), {**job[0], "uid": ""})]), ns)
    assert refused.value.status == 422 and owners() == uids
