"""`compute/gemm-burn-in` certified on the simulator, live (issue 41): one Job per node, each pod running the harness
with the contract's words prints the whole `gemm-burn-in/1` run at once in compressed time (a 10-minute run ends in
a second), read back with the strict reader (nothing refused, every GPU every window), and the run ends. The
per-GPU verdict inside the certification is wired apart (engine/evidence/sources.py)."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client

from ansible_collections.cre.certification.plugins.module_utils.engine.evidence import gemm_burn_in
from tests.ansible_run import ansible_module
from tools.sim import faults, stages

from .conftest import Sim

pytestmark = pytest.mark.clusters(("aws-h100", 2))

NS = "burn-in"
NODES = ["gpu-node-000", "gpu-node-001"]
POD_MS = 1500   # a printed burn-in pod runs on this long: time enough to read its log before the run ends


@pytest.fixture(scope="module")
def h100(pooled: Callable[..., Sim]) -> Sim:
    sim = pooled("aws-h100", len(NODES), pod_ms={NS: POD_MS})
    client.CoreV1Api(sim.api).create_namespace({"metadata": {"name": NS}})
    return sim


def test_a_burn_in_certification_prints_the_harness_format_on_every_node_and_ends(h100: Sim) -> None:
    faults.fault(h100.name, NODES[1], "gpu-slow", gpu=5, factor=0.9)
    result: dict[str, Any] = {}

    def certify() -> None:
        result["rc"], result["out"] = ansible_module("certification_run", {
            "kubeconfig": str(h100.kubeconfig), "name": "burn", "namespace": NS,
            "categories": [{"domain": "compute", "variant": "gemm-burn-in"}], "poll_interval": 0.5,
            "timeout": 240}, timeout=300)

    run = threading.Thread(target=certify)
    run.start()
    core, logs = client.CoreV1Api(h100.api), {}
    try:
        while run.is_alive():
            for pod in core.list_namespaced_pod(NS).items:
                printed = (pod.metadata.annotations or {}).get(stages.BURN_IN_PRINTED)
                if printed is not None and pod.spec.node_name not in logs:
                    logs[pod.spec.node_name] = (pod, core.read_namespaced_pod_log(pod.metadata.name, NS))
            time.sleep(0.2)
    finally:
        run.join()
        faults.fault(h100.name, NODES[1], "none")
    assert result["rc"] == 0, result["out"]
    (category,) = result["out"]["categories"]
    assert category["status"] == "Succeeded" and sorted(category["succeeded_nodes"]) == NODES
    assert sorted(logs) == NODES
    for node, (pod, log) in logs.items():
        (container,) = pod.spec.containers
        words = [*container.command, *container.args]
        assert words[:2] == ["python3", "/opt/cre/gemm_burn_in.py"] and words[words.index("--product") + 1]
        rows, partial = gemm_burn_in.read_lines(log.splitlines(), node)
        assert partial is None and len(rows) == 8 * 22, (node, partial)   # every GPU, every window, none refused
        assert {(r.index, r.sample) for r in rows} == {(g, w) for g in range(8) for w in range(22)}
    slow = [r.value for r in gemm_burn_in.read_lines(logs[NODES[1]][1].splitlines(), NODES[1])[0]
            if r.index == 5 and (r.sample or 0) >= 2]
    assert max(slow) < 0.95 * 737.5   # the fault on GPU 5 shows in that GPU's figures
