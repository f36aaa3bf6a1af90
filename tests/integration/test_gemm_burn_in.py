"""`compute/gemm-burn-in` certified on the simulator, live (issue 41): one Job per node, each pod running the harness
with the contract's words prints the whole `gemm-burn-in/1` run at once in compressed time (a 10-minute run ends in
a second), and the certification judges every GPU: on 4 nodes, GPU 5 at 0.9x fails the node-median rule, GPU 2
thermal-throttling from minute 4 fails the throttle rule, a lowered power limit fails the power-limit rule, the
healthy node passes, and the run's own floor (gemm_floors) judges every GPU; the report carries each node's series
and findings, and the HTML draws them."""
from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from kubernetes import client

from ansible_collections.cre.certification.plugins.module_utils.engine.status import node_results
from tests.ansible_run import ansible_module
from tools.sim import faults

from .conftest import Sim

pytestmark = pytest.mark.clusters(("aws-h100", 4))

NS = "burn-in"
HEALTHY, SLOW, THROTTLED, CAPPED = (f"gpu-node-00{i}" for i in range(4))


@pytest.fixture(scope="module")
def h100(pooled: Callable[..., Sim]) -> Sim:
    sim = pooled("aws-h100", 4, pod_ms={NS: 300})
    client.CoreV1Api(sim.api).create_namespace({"metadata": {"name": NS}})
    return sim


@pytest.fixture
def faulty(h100: Sim) -> Iterator[Sim]:
    faults.fault(h100.name, SLOW, "gpu-slow", gpu=5, factor=0.9)
    faults.fault(h100.name, THROTTLED, "gpu-throttle", gpu=2, reason="hw_thermal", after_minutes=4)
    faults.fault(h100.name, CAPPED, "power-limit", gpu=0, factor=0.8)
    try:
        yield h100
    finally:
        for node in (SLOW, THROTTLED, CAPPED):
            faults.fault(h100.name, node, "none")


def test_the_burn_in_names_the_slow_the_throttling_and_the_capped_gpu(faulty: Sim, tmp_path: Path) -> None:
    rc, out = ansible_module("certification_run", {
        "kubeconfig": str(faulty.kubeconfig), "name": "burn", "namespace": NS,
        "categories": [{"domain": "compute", "variant": "gemm-burn-in"}], "poll_interval": 0.5, "timeout": 240,
        "gemm_floors": {"bf16": 700}}, timeout=300)
    assert rc == 0, out
    (category,) = out["categories"]
    assert category["succeeded_nodes"] == [HEALTHY]
    failed = {f["name"]: f["message"] for f in category["failed_nodes"]}
    assert sorted(failed) == [SLOW, THROTTLED, CAPPED]
    # The run's own floor (700, above the 0.9x GPU's 664 and below the others' 737) reached the Job and its verdict.
    assert "GPU 5" in failed[SLOW] and "node-median" in failed[SLOW] and "floor" in failed[SLOW], failed[SLOW]
    assert "GPU 2" in failed[THROTTLED] and "hw_thermal" in failed[THROTTLED], failed[THROTTLED]
    assert "GPU 0" in failed[CAPPED] and "power-limit" in failed[CAPPED], failed[CAPPED]
    # Only the faulty GPU of each node is named (a throttled or capped GPU is slow too: it may break two rules).
    named = {node: {int(p.split()[1].rstrip(":")) for p in m.split("; ") if p.startswith("GPU ")}
             for node, m in failed.items()}
    assert named == {SLOW: {5}, THROTTLED: {2}, CAPPED: {0}}, failed

    rc, result = ansible_module("certification_results", {
        "kubeconfig": str(faulty.kubeconfig), "certification": "burn", "namespace": NS, "history": False,
        "dest": str(tmp_path)})
    assert rc == 0, result.get("msg")
    (reported,) = json.loads((tmp_path / "report.json").read_text())["categories"]
    burn_in = reported["burnIn"]
    assert burn_in["dtype"] == "bf16" and burn_in["floor"] == {"tflops": 700.0, "provisional": False}
    nodes = {n["node"]: n for n in burn_in["nodes"]}
    assert sorted(nodes) == [HEALTHY, SLOW, THROTTLED, CAPPED]
    assert all(len(g["series"]) == 22 for n in nodes.values() for g in n["gpus"])
    rules = {(node, g["index"], f["rule"]) for node, n in nodes.items() for g in n["gpus"] for f in g["findings"]
             if f["outcome"] == "fail"}
    assert {(SLOW, 5, "node-median"), (THROTTLED, 2, "throttle"), (CAPPED, 0, "power-limit")} <= rules
    assert not any(node == HEALTHY for node, _gpu, _rule in rules)
    html = (tmp_path / "report.html").read_text()
    assert "<svg" in html and SLOW in html and "node-median" in html
    # The fleet rule: warnings by default; with burn_in_slow_is_failure, failures that move their nodes.
    slow = {(s["node"], s["index"]) for s in burn_in["fleet"]["slow"]}
    assert (SLOW, 5) in slow and not any(node == HEALTHY for node, _index in slow), slow
    assert all(f["outcome"] == "warn" for n in nodes.values() for g in n["gpus"] for f in g["findings"]
               if f["rule"] == "fleet")
    rc, result = ansible_module("certification_results", {
        "kubeconfig": str(faulty.kubeconfig), "certification": "burn", "namespace": NS, "history": False,
        "dest": str(tmp_path / "strict"), "burn_in_slow_is_failure": True})
    assert rc == 0, result.get("msg")
    (strict,) = json.loads((tmp_path / "strict" / "report.json").read_text())["categories"]
    assert any(f["rule"] == "fleet" and f["outcome"] == "fail" for n in strict["burnIn"]["nodes"] for g in n["gpus"]
               for f in g["findings"])
    workflow = client.CustomObjectsApi(faulty.api).get_namespaced_custom_object(
        "nvcre.nvidia.com", "v1alpha1", NS, "workflows", category["workflow"])
    configmap = client.CoreV1Api(faulty.api).read_namespaced_config_map(
        f"failed-nodes-{workflow['metadata']['uid'][:8]}", NS)
    entries = node_results.read_failed({"binaryData": configmap.binary_data})
    fleet = {e["name"]: e["message"] for e in entries if e["reason"] == "BelowFleetMedian"}
    assert SLOW in fleet and "GPU 5 of gpu-node-001" in fleet[SLOW] and HEALTHY not in fleet, fleet
