"""A measured Job's evidence survives a SIGKILL anywhere (issue 40): communication/nccl-all-reduce on 2 nodes,
driven through the loops on an in-memory cluster (tests.unit.driver.memory_cluster) whose MPI launcher prints an
nccl-tests table, then the same run killed after each of its writes and resumed by a fresh loop: it ends with the
same seals, the same shard bytes and the same outcome as the run nobody killed, and the measurement's figures are
the ones it read from the same log."""
from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.cre.certification.plugins.module_utils.driver.certification import CertificationLoop
from ansible_collections.cre.certification.plugins.module_utils.driver.options import RunOptions
from ansible_collections.cre.certification.plugins.module_utils.engine.catalog.logprofiles import builtin_profile
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence import shards
from ansible_collections.cre.certification.plugins.module_utils.engine.plan import mocknodes
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import certification_tier
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile.measurement_pods import (
    COMPLETION_INDEX,
    JOBSET_NAME,
    REPLICATED_JOB,
)
from tests.unit.driver.evidence_runs import evidence, same_after_any_kill
from tests.unit.driver.memory_cluster import MemoryKube, instant_workloads, strip
from tests.unit.engine.reconcile.bandwidth_objects import LOG

NS = "nvcre"
CERTIFICATION = {"name": "cert", "namespace": NS, "categories": ["communication/nccl-all-reduce"], "target": None,
                 "gang_scheduler": None, "options": {}, "labels": {}, "catalog_dirs": []}
NODES = mocknodes.mock_nodes("aws", "h100", 2)

Obj = dict[str, Any]
pytestmark = pytest.mark.usefixtures("in_memory")


def mpi_workloads() -> Any:
    """instant_workloads plus each TrainJob's MPI launcher (no Job label, as Trainer's), printing the table."""
    ran = instant_workloads()

    def react(kube: MemoryKube, event: str, obj: Obj) -> None:
        if event == "ADDED" and obj.get("kind") == "TrainJob":
            meta = obj["metadata"]
            launcher = f"{meta['name']}-launcher-0-0"
            kube.put({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": launcher, "namespace": meta["namespace"],
                                   "labels": {JOBSET_NAME: meta["name"], REPLICATED_JOB: "launcher",
                                              COMPLETION_INDEX: "0"},
                                   "ownerReferences": [{"apiVersion": obj["apiVersion"], "kind": "TrainJob",
                                                        "name": meta["name"], "uid": meta["uid"], "controller": True}]},
                      "spec": {"nodeName": NODES[0]["metadata"]["name"], "containers": [{"name": "node"}]},
                      "status": {"phase": "Succeeded", "startTime": "2026-03-02T10:00:00Z", "containerStatuses": [
                          {"name": "node", "state": {"terminated": {"exitCode": 0, "reason": "Completed",
                                                                    "finishedAt": "2026-03-02T10:01:00Z"}}}]}})
            kube.logs[(launcher, "")] = LOG
        ran(kube, event, obj)
    return react


def cluster() -> MemoryKube:
    kube = MemoryKube(mpi_workloads())
    for obj in [*NODES, builtin_profile("nccl-bandwidth")]:
        kube.put(obj)
    return kube


def certify(kube: MemoryKube, timeout: float = 30) -> Obj:
    desired = certification_tier.desired_certification(CERTIFICATION)
    return CertificationLoop(kube, CERTIFICATION, RunOptions(timeout, 0.05), desired).run()


def test_a_bandwidth_run_seals_group_rows_and_keeps_the_measurements_figures():
    kube = cluster()
    certify(kube)
    seals, cms = evidence(kube)
    [(job, seal)] = seals.items()
    assert (seal["rows"], seal["shards"], "partial" in seal) == (8, 1, False)
    rows = list(shards.decode(shards.shard_bytes(cms[shards.shard_name(job, 1, 1)]) or b""))
    assert {(r["node"], r["component"], r["test"], r["detail"].split("; ", 1)[1]) for r in rows} == {
        ("group-0", "group", "all_reduce", "network IB")}
    # the rows are the measurement's own figures, read from the same log: per size, busBW and algBW
    [m] = kube.of_kind("BandwidthMeasurement").values()
    measured = {(r["sizeBytes"], metric.lower()): float(r[metric]) for r in m["status"]["results"]
                for metric in ("busBW", "algBW")}
    assert len(measured) == 8
    assert {(int(r["detail"].split(" B;")[0]), r["metric"]): r["value"] for r in rows} == measured
    workflow = next(iter(kube.of_kind("Workflow").values()))
    assert workflow["status"]["evidence"] == {"rows": 8, "shards": 1, "jobs": 1, "truncated": 0, "final": True}


def test_killed_after_any_write_the_resumed_run_ends_with_the_same_seals_and_shard_bytes():
    assert same_after_any_kill(cluster, certify) > 10


def test_without_its_log_profile_the_seal_says_so_and_the_run_ends_as_it_did():
    whole, bare = cluster(), MemoryKube(mpi_workloads())
    for node in NODES:
        bare.put(node)
    # the measurement waits for its profile until the run's timeout, as before; the categories end as they did
    assert strip(certify(bare, timeout=2)["categories"]) == strip(certify(whole)["categories"])
    [seal] = evidence(bare)[0].values()
    assert seal == {"attempt": 1, "rows": 0, "shards": 0, "sha256": [], "partial": (
        "nccl-tests: LogProfile 'nccl-bandwidth' could not be read: "
        'logprofiles.nvcre.nvidia.com "nccl-bandwidth" not found')}
