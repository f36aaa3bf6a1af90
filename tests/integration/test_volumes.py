"""PVC dependencies and their PersistentVolumes on the local cluster (workflow spec §7.2, §7.3, §12): the claim's PV
(class sim-retain: Retain) is stamped with the Workflow's UID while the Workflow runs; when the group ends the claim
is deleted and, once the PV is released, the run switches it to Delete and the PV controller removes it. A PV that
another Workflow stamped is untouched, and deleting the Workflow mid-run leaves no claim and no PV behind, even when
the workload's pods mount the claim (so the claim goes only after the garbage collector has removed them)."""
from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from kubernetes import client

from tests.ansible_run import ansible_module

from .conftest import Sim, own_sim
from .pvs_seen import KEY, PVWatch, wait_for
from .seed import NVCRE, nodes, workflow

CLAIM = "ckpt-f8135-job"  # job-scoped copy of `ckpt` for the one group (§7.2)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Sim]:
    """Two GB200 nodes; a Job's pods run 12 s, so a short run stops while its group runs."""
    with own_sim("volumes", "aws-gb200", 2, 12_000) as sim:
        yield sim


def checkpointing(namespace: str, mounted: bool = False) -> dict:
    """The seed Workflow on both nodes, keeping checkpoints on a Retain claim (so the claim is job-scoped); `mounted`:
    the node pods mount it."""
    wf = workflow(nodes(0, 1))
    if mounted:
        runtime = wf["spec"]["dependencies"][0]["spec"]["template"]["spec"]["replicatedJobs"][0]
        runtime["template"]["spec"]["template"]["spec"]["volumes"] = [
            {"name": "ckpt", "persistentVolumeClaim": {"claimName": "ckpt"}}]
    wf["metadata"]["namespace"] = namespace
    wf["spec"]["dependencies"].insert(0, {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "ckpt"},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "sim-retain",
                 "resources": {"requests": {"storage": "1Gi"}}}})
    wf["spec"]["jobTemplate"]["spec"]["checkpoint"] = {"pvcName": "ckpt", "maxRestarts": 1}
    return wf


def start(sim: Sim, namespace: str, mounted: bool = False) -> str:
    """A fresh namespace with the Workflow in it; returns the Workflow's UID."""
    client.CoreV1Api(sim.api).create_namespace({"metadata": {"name": namespace}})
    created = client.CustomObjectsApi(sim.api).create_namespaced_custom_object(
        *NVCRE, namespace, "workflows", checkpointing(namespace, mounted))
    return created["metadata"]["uid"]


def run(sim: Sim, namespace: str, timeout: float) -> tuple[int, dict]:
    return ansible_module("workflow_run", {"name": "nccl-test", "namespace": namespace, "timeout": timeout,
                                           "kubeconfig": str(sim.kubeconfig), "poll_interval": 0.5}, timeout=300)


def volumes(sim: Sim) -> dict[str, client.V1PersistentVolume]:
    return {pv.metadata.name: pv for pv in client.CoreV1Api(sim.api).list_persistent_volume().items}


def foreign_pv(sim: Sim, namespace: str) -> str:
    """A Released Retain PV that once claimed the same claim name, stamped by another Workflow."""
    name = f"foreign-{namespace}"
    client.CoreV1Api(sim.api).create_persistent_volume({
        "apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": name, "annotations": {KEY: "another-workflow"}},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "sim-retain",
                 "persistentVolumeReclaimPolicy": "Retain", "hostPath": {"path": f"/tmp/cre-sim-volumes/{name}"},
                 "claimRef": {"namespace": namespace, "name": CLAIM, "uid": "00000000-0000-0000-0000-000000000000"}}})
    return name


def test_the_claims_pv_is_stamped_while_running_then_deleted_after_the_claim(cluster: Sim) -> None:
    namespace = "volumes-lifecycle"
    uid = start(cluster, namespace)
    foreign = foreign_pv(cluster, namespace)
    code, result = run(cluster, namespace, timeout=6)  # stops while the group runs
    assert code == 0 and result["timed_out"] and result["groups"]["running"] == 1, result.get("msg", result)
    claim = client.CoreV1Api(cluster.api).read_namespaced_persistent_volume_claim(CLAIM, namespace)
    pv = volumes(cluster)[claim.spec.volume_name]
    assert (claim.status.phase, pv.spec.persistent_volume_reclaim_policy) == ("Bound", "Retain")
    assert pv.metadata.annotations[KEY] == uid

    seen = PVWatch(cluster)
    code, result = run(cluster, namespace, timeout=120)  # resumes to the end
    assert code == 0 and result["phase"] == "Succeeded", result.get("msg", result)
    # The run switches the released PV to Delete; the PV controller deletes it on its own schedule (its periodic
    # resync), which on a loaded machine has taken more than a minute: wait for it, and say where it stood if not.
    gone = wait_for(lambda: claim.spec.volume_name not in volumes(cluster), seconds=180)
    left = volumes(cluster).get(claim.spec.volume_name)
    assert gone, ("the PV is still there", left and (left.spec.persistent_volume_reclaim_policy, left.status.phase),
                  seen.of(claim.spec.volume_name))
    seen.close()
    events = seen.of(claim.spec.volume_name)
    # Released on Retain, then switched to Delete (by the run), then deleted (by the PV controller).
    assert ("MODIFIED", "Retain", "Released", uid) in events, events
    switched = events.index(("MODIFIED", "Delete", "Released", uid))
    assert events[-1][0] == "DELETED" and switched < len(events) - 1, events
    assert client.CoreV1Api(cluster.api).list_namespaced_persistent_volume_claim(namespace).items == []
    objects = client.CustomObjectsApi(cluster.api)
    stored = objects.get_namespaced_custom_object(*NVCRE, namespace, "workflows", "nccl-test")
    assert all(r["kind"] != "PersistentVolumeClaim" for r in stored["status"].get("dependencyRefs") or [])
    untouched = volumes(cluster)[foreign]
    assert (untouched.spec.persistent_volume_reclaim_policy, untouched.metadata.annotations[KEY]) == (
        "Retain", "another-workflow")
    assert seen.of(foreign) == [] or all(e[1] == "Retain" for e in seen.of(foreign))


def test_deleting_the_workflow_mid_run_leaves_no_claim_and_no_pv(cluster: Sim) -> None:
    namespace = "volumes-deleted"
    uid = start(cluster, namespace, mounted=True)
    outcome: dict = {}
    runner = threading.Thread(target=lambda: outcome.update(zip(("code", "result"), run(cluster, namespace, 120))))
    runner.start()
    stamped = wait_for(lambda: [n for n, pv in volumes(cluster).items()
                                if (pv.metadata.annotations or {}).get(KEY) == uid])
    assert stamped, "the run never stamped the claim's PV"
    assert wait_for(lambda: any(v.persistent_volume_claim for p in client.CoreV1Api(cluster.api).list_namespaced_pod(
        namespace).items for v in p.spec.volumes or [])), "no pod mounts the claim"
    client.CustomObjectsApi(cluster.api).delete_namespaced_custom_object(
        *NVCRE, namespace, "workflows", "nccl-test", propagation_policy="Background")
    runner.join(timeout=280)
    code, result = outcome["code"], outcome["result"]
    assert code != 0 and result["msg"] == (
        f"Workflow {namespace}/nccl-test was deleted during the run: the cluster's garbage collector removes what it "
        f"made; PersistentVolumes switched to Delete: {stamped[0]}; rerun to certify again"), result["msg"]
    assert wait_for(lambda: stamped[0] not in volumes(cluster)), "the PV is still there"
    core = client.CoreV1Api(cluster.api)
    assert wait_for(lambda: not core.list_namespaced_persistent_volume_claim(namespace).items
                    and not core.list_namespaced_pod(namespace).items)
