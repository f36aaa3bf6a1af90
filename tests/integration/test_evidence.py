"""Evidence on the simulated cluster (issue 40): a DCGM category ends with a seal on each Job and exactly the shard
ConfigMaps its seal names, their bytes hashing to the seal's sha256s, and the Workflow's totals final.

What the simulated DCGM pods print decides which path this shows: pods that print `dcgmi diag --json` give rows
and shards; pods that print nothing (the simulator before its DCGM output) give a partial seal of no rows on each
Job, lacking evidence (a Warning event) and the node still passing: never zero rows taken for a pass."""
from __future__ import annotations

import base64
import hashlib
import itertools
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from kubernetes import client

from ansible_collections.cre.certification.plugins.module_utils.engine.evidence import shards
from ansible_collections.cre.certification.plugins.module_utils.engine.status import node_results
from tests.ansible_run import ansible_module, run_until
from tools.sim import cluster, faults

from .conftest import Sim
from .seed import NVCRE, items

pytestmark = pytest.mark.clusters(("aws-h100", 2))

NS = "evidence"
_ns = itertools.count()


@pytest.fixture(scope="module")
def dcgm(pooled: Callable[..., Sim]) -> Sim:
    """Two aws-h100 nodes; the diagnostic pods of this module's namespace end after 300 ms."""
    sim = pooled("aws-h100", 2, pod_ms={NS: 300})
    client.CoreV1Api(sim.api).create_namespace({"metadata": {"name": NS}})
    return sim


def test_a_dcgm_run_seals_each_job_and_writes_the_shards_its_seal_names(dcgm: Sim) -> None:
    rc, result = ansible_module("certification_run", {
        "kubeconfig": str(dcgm.kubeconfig), "name": "ev", "namespace": NS,
        "categories": [{"domain": "diagnostics", "variant": "dcgm-level2"}],
        "poll_interval": 0.5, "timeout": 240}, timeout=300)
    assert rc == 0, result
    (category,) = result["categories"]
    jobs = items(dcgm, NS, NVCRE, "jobs")
    assert len(jobs) == 2
    cms = {cm.metadata.name: cm for cm in client.CoreV1Api(dcgm.api).list_namespaced_config_map(
        NS, label_selector=f"{shards.SELECTOR},{shards.LABEL_WORKFLOW}={category['workflow']}").items}
    named = set()
    for job in jobs:
        seal = job["status"]["evidence"]
        name = job["metadata"]["name"]
        assert seal["attempt"] == 1 and seal["shards"] == len(seal["sha256"])
        for k, sha in enumerate(seal["sha256"], start=1):
            cm = cms[shards.shard_name(name, 1, k)]
            data = base64.b64decode(cm.binary_data[shards.DATA_KEY])
            assert hashlib.sha256(data).hexdigest() == sha == cm.metadata.annotations[shards.ANNOTATION_SHA256]
            assert cm.metadata.labels[shards.LABEL_JOB] == name
            named.add(cm.metadata.name)
        if seal["rows"] == 0:  # the pod printed nothing the reader could read: partial, never a silent pass
            assert seal["shards"] == 0 and seal["partial"].startswith("pod "), seal
    assert named == set(cms)  # no shard the seals do not name
    workflow = client.CustomObjectsApi(dcgm.api).get_namespaced_custom_object(
        *NVCRE, NS, "workflows", category["workflow"])
    totals = workflow["status"]["evidence"]
    assert totals["final"] is True and totals["jobs"] == 2 and totals["shards"] == len(cms)
    assert totals["rows"] == sum(j["status"]["evidence"]["rows"] for j in jobs)
    if totals["rows"] == 0:
        # The current simulator prints no DCGM output: each node lacks evidence, warned, and still passes.
        assert category["status"] == "Succeeded" and sorted(category["succeeded_nodes"]) == [
            "gpu-node-000", "gpu-node-001"]
        assert len(totals["partial"]) == 2
        reasons = {e.reason for e in client.CoreV1Api(dcgm.api).list_namespaced_event(NS).items}
        assert "EvidenceLacking" in reasons


FAULTY, HEALTHY = "gpu-node-001", "gpu-node-000"
MISMATCH = "A memory mismatch was detected on GPU 3"


@pytest.fixture
def gpu_3_memory(dcgm: Sim) -> Iterator[str]:
    """A fresh namespace whose DCGM pods end after 300 ms; GPU 3 of FAULTY fails DCGM's `memory` test, and GPU 1
    of HEALTHY fails `targeted_stress`, which level 2 does not run; both cleared afterwards."""
    ns = f"evidence-{next(_ns)}"
    client.CoreV1Api(dcgm.api).create_namespace({"metadata": {"name": ns}})
    cluster.pod_duration(dcgm.name, ns, 300)
    faults.fault(dcgm.name, FAULTY, "dcgm", gpu=3, test="memory")
    faults.fault(dcgm.name, HEALTHY, "dcgm", gpu=1, test="targeted_stress")
    try:
        yield ns
    finally:
        for node in (FAULTY, HEALTHY):
            faults.fault(dcgm.name, node, "none")


def _certify(sim: Sim, ns: str) -> dict:
    return {"kubeconfig": str(sim.kubeconfig), "name": "gpu3", "namespace": ns,
            "categories": [{"domain": "diagnostics", "variant": "dcgm-level2"}], "poll_interval": 0.5, "timeout": 240}


def _bundle(sim: Sim, ns: str, out: Path) -> dict:
    rc, result = ansible_module("certification_results", {
        "kubeconfig": str(sim.kubeconfig), "certification": "gpu3", "namespace": ns, "history": False,
        "dest": str(out / "report"), "bundle_dir": str(out / "bundle")})
    assert rc == 0, result.get("msg")
    return result


def test_gpu_3_failing_memory_at_level_2_is_named_everywhere_and_bundled(dcgm: Sim, gpu_3_memory: str,
                                                                         tmp_path: Path) -> None:
    ns = gpu_3_memory
    rc, result = ansible_module("certification_run", _certify(dcgm, ns), timeout=300)
    assert rc == 0, result
    (category,) = result["categories"]
    # The node fails with the GPU, the test and DCGM's message; level 2 never runs targeted_stress.
    assert category["succeeded_nodes"] == [HEALTHY]
    (entry,) = category["failed_nodes"]
    assert entry["name"] == FAULTY and entry["reason"] == "WorkloadFailed"
    assert "GPU 3" in entry["message"] and "memory failed" in entry["message"] and MISMATCH in entry["message"]
    workflow = client.CustomObjectsApi(dcgm.api).get_namespaced_custom_object(
        *NVCRE, ns, "workflows", category["workflow"])
    configmap = client.CoreV1Api(dcgm.api).read_namespaced_config_map(
        f"failed-nodes-{workflow['metadata']['uid'][:8]}", ns)
    (stored,) = node_results.read_failed({"binaryData": configmap.binary_data})
    assert stored["message"] == entry["message"]

    _bundle(dcgm, ns, tmp_path)
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    (reported,) = report["categories"]
    evidence = reported["evidence"]
    assert evidence["state"] == "final" and evidence["rows"] == workflow["status"]["evidence"]["rows"] > 0
    failing = [(g["node"], g["index"], [f["test"] for f in g["failures"]]) for g in evidence["gpus"]
               if g["outcome"] != "pass"]
    assert failing == [(FAULTY, 3, ["memory"])]
    assert len(evidence["gpus"]) == 16
    for name in ("junit.xml", "report.md", "report.html"):
        text = (tmp_path / "report" / name).read_text()
        assert "GPU 3" in text and "memory" in text and MISMATCH in text, name
    assert 'class="gpu gpu-fail"' in (tmp_path / "report" / "report.html").read_text()

    bundle_dir = tmp_path / "bundle"
    manifest = json.loads((bundle_dir / "manifest.json").read_text())
    assert manifest["totals"]["rows"] == evidence["rows"]
    rc, found = ansible_module("bundle_read", {"path": str(bundle_dir), "node": FAULTY, "outcome": "fail"})
    assert rc == 0, found.get("msg")
    assert [(r["index"], r["test"], r["workflow"], r["attempt"]) for r in found["rows"]] == [
        (3, "memory", category["workflow"], 1)]
    assert MISMATCH in found["rows"][0]["detail"]
    rows = bundle_dir / "components" / "gpu.ndjson"
    data = bytearray(rows.read_bytes())
    data[len(data) // 2] ^= 0x01
    rows.write_bytes(bytes(data))
    rc, refused = ansible_module("bundle_read", {"path": str(bundle_dir)})
    assert rc != 0 and refused["msg"].startswith(f"path: {bundle_dir}: components/gpu.ndjson has sha256 ")


def test_a_run_killed_between_shard_writes_ends_with_the_same_bundle(dcgm: Sim, gpu_3_memory: str,
                                                                     tmp_path: Path) -> None:
    """Killed (SIGKILL, the task worker too) as its first shard write begins, then run again: exactly the sealed
    rows, and the same evidence files, byte for byte, as a run nobody killed (its own namespace, same faults)."""
    killed = gpu_3_memory
    first = run_until("certification_run", _certify(dcgm, killed),
                      lambda line: line.lstrip().startswith("create ConfigMap") and "-evidence-" in line)
    assert any("-evidence-" in line for line in first), "the run ended before it wrote a shard"
    assert ansible_module("certification_run", _certify(dcgm, killed), timeout=300)[0] == 0
    whole = f"{killed}-whole"
    client.CoreV1Api(dcgm.api).create_namespace({"metadata": {"name": whole}})
    cluster.pod_duration(dcgm.name, whole, 300)
    assert ansible_module("certification_run", _certify(dcgm, whole), timeout=300)[0] == 0

    def files(ns: str, out: Path) -> dict[str, str]:
        manifest = _bundle(dcgm, ns, out)["bundle"]
        again = json.loads((out / "bundle" / "manifest.json").read_text())
        assert {f["path"]: f["sha256"] for f in again["files"]} == {f["path"]: f["sha256"] for f in manifest["files"]}
        return {f["path"]: f["sha256"] for f in manifest["files"] if f["path"] != "results.json"}

    resumed, uninterrupted = files(killed, tmp_path / "killed"), files(whole, tmp_path / "whole")
    assert "components/gpu.ndjson" in resumed and resumed == uninterrupted
    # A second bundle of the same run is the same bytes, results.json included.
    again = _bundle(dcgm, killed, tmp_path / "again")["bundle"]
    assert again["files"] == _bundle(dcgm, killed, tmp_path / "killed")["bundle"]["files"]
