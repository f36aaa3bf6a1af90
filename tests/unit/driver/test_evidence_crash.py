"""Evidence shards survive a SIGKILL anywhere (issue 40): a DCGM Certification (diagnostics/dcgm-level2 on 2 nodes,
GPU 3 of one failing `memory`, dcgmi exiting 0 on both) driven through the loops on an in-memory cluster
(tests.unit.driver.memory_cluster), then the same run killed after each of its writes and resumed by a fresh loop:
it ends with exactly the sealed rows and shards, none twice, none missing, the same sha256s as the whole run."""
from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.cre.certification.plugins.module_utils.driver.certification import CertificationLoop
from ansible_collections.cre.certification.plugins.module_utils.driver.options import RunOptions
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence import shards
from ansible_collections.cre.certification.plugins.module_utils.engine.plan import mocknodes
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import certification_tier
from tests.unit.driver.memory_cluster import MemoryKube, instant_workloads, outcome, resumed, strip, verdict
from tests.unit.engine.reconcile.evidence_objects import GPU3_MEMORY, dcgm_log

NS = "nvcre"
CERTIFICATION = {"name": "cert", "namespace": NS, "categories": ["diagnostics/dcgm-level2"], "target": None,
                 "gang_scheduler": None, "options": {}, "labels": {}, "catalog_dirs": []}
NODES = mocknodes.mock_nodes("aws", "h100", 2)
BAD = "gpu-node-001"

Obj = dict[str, Any]
pytestmark = pytest.mark.usefixtures("in_memory")


def dcgm_workloads() -> Any:
    """instant_workloads, each pod printing DCGM's JSON: every GPU passing, but GPU 3 of BAD failing memory."""
    ran = instant_workloads()

    def react(kube: MemoryKube, event: str, obj: Obj) -> None:
        ran(kube, event, obj)
        if event == "ADDED" and obj.get("kind") == "TrainJob":
            for pod in kube.of_kind("Pod").values():
                if pod["metadata"]["ownerReferences"][0]["uid"] == obj["metadata"]["uid"]:
                    node = pod["spec"]["nodeName"]
                    kube.logs[(pod["metadata"]["name"], "node")] = dcgm_log(GPU3_MEMORY if node == BAD else None)
    return react


def cluster() -> MemoryKube:
    kube = MemoryKube(dcgm_workloads())
    for node in NODES:
        kube.put(node)
    return kube


def certify(kube: MemoryKube) -> Obj:
    desired = certification_tier.desired_certification(CERTIFICATION)
    return CertificationLoop(kube, CERTIFICATION, RunOptions(30, 0.05), desired).run()


def evidence(kube: MemoryKube) -> tuple[dict[str, Obj], dict[str, Obj]]:
    """(each Job's seal, each shard ConfigMap by name, without what differs between two runs: UIDs, versions)."""
    seals = {n: j["status"]["evidence"] for n, j in kube.of_kind("Job").items()}
    cms = {n: cm for n, cm in kube.of_kind("ConfigMap").items()
           if (cm["metadata"].get("labels") or {}).get(shards.LABEL_EVIDENCE) == shards.EVIDENCE_ROWS}
    return seals, strip(cms)


def test_a_dcgm_run_seals_every_job_and_writes_the_shards_its_seal_names():
    kube = cluster()
    result = certify(kube)
    seals, cms = evidence(kube)
    assert len(seals) == 2 and all(s["rows"] == 32 and s["shards"] == 1 and "partial" not in s for s in seals.values())
    for job, seal in seals.items():
        cm = cms[shards.shard_name(job, 1, 1)]
        assert shards.ANNOTATION_SHA256 in cm["metadata"]["annotations"]
        assert cm["metadata"]["annotations"][shards.ANNOTATION_SHA256] == seal["sha256"][0]
        assert len(list(shards.decode(shards.shard_bytes(cm) or b""))) == 32
    assert len(cms) == 2
    workflow = kube.of_kind("Workflow")["cert-diagnostics-dcgm-level2"]
    assert workflow["status"]["evidence"] == {"rows": 64, "shards": 2, "jobs": 2, "truncated": 0, "final": True}
    # dcgmi exited 0 on both nodes; the evidence fails BAD, naming GPU 3, its test and DCGM's message and code.
    category = result["categories"][0]
    assert (result["phase"], category["succeeded_nodes"]) == ("Failed", ["gpu-node-000"])
    assert category["failed_nodes"] == [{"name": BAD, "reason": "WorkloadFailed", "message": (
        "GPU 3: memory failed: A memory mismatch was detected on GPU 3, but no error was reported by CUDA or NVML. "
        "(DCGM error 12)")}]


def test_killed_after_any_write_the_resumed_run_ends_with_the_same_seals_and_shard_bytes():
    whole = cluster()
    expected = strip(verdict(certify(whole)))
    end = outcome(whole)
    seals, cms = evidence(whole)
    assert whole.writes > 20 and len(cms) == 2
    for k in range(whole.writes):
        kube = cluster()
        assert strip(verdict(resumed(kube, k, certify))) == expected, f"killed after write {k}"
        assert evidence(kube) == (seals, cms), f"killed after write {k}"
        assert outcome(kube) == end, f"killed after write {k}"
