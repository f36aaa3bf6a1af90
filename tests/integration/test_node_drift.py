"""`configuration/node-drift` certified on the simulator, live (issue 42): one short Job per node, each pod running
the collector prints the whole `node-drift/1` output at once (the XML of `nvidia-smi -q -x`, the RDMA ports, the
host PCIe maxima, the versions, `nvidia-smi nvlink -s`), a configuration fault shows in its node's output in the
element it changes, and the certification fails that node for it (the whole verdict: test_node_drift_verdict.py)."""
from __future__ import annotations

import json
import re
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client

from tests.ansible_run import ansible_module
from tools.sim import faults, stages

from .conftest import Sim

pytestmark = pytest.mark.clusters(("aws-h100", 2))

NS = "node-drift"
NODES = ["gpu-node-000", "gpu-node-001"]
POD_MS = 1500   # a printed pod runs on this long: time enough to read its log before the run ends


@pytest.fixture(scope="module")
def h100(pooled: Callable[..., Sim]) -> Sim:
    sim = pooled("aws-h100", len(NODES), pod_ms={NS: POD_MS})
    client.CoreV1Api(sim.api).create_namespace({"metadata": {"name": NS}})
    return sim


def files_of(log: str) -> dict[str, str]:
    """The files of one node-drift/1 output, its begin, counts and end checked."""
    lines = log.splitlines()
    assert re.fullmatch(r"node-drift/1 begin node=gpu-node-00\d time=\S+Z", lines[0]), lines[0]
    files, at = {}, 1
    while not lines[at].startswith("node-drift/1 end "):
        name, count = re.fullmatch(r"node-drift/1 file name=(\S+) lines=(\d+)", lines[at]).groups()  # type: ignore
        files[name], at = "\n".join(lines[at + 1:at + 1 + int(count)]), at + 1 + int(count)
    assert lines[at:] == [f"node-drift/1 end files={len(files)}"]
    return files


def test_every_node_prints_its_snapshot_and_the_run_ends(h100: Sim) -> None:
    faults.fault(h100.name, NODES[1], "config", gpu=3, config="ecc-off")
    faults.fault(h100.name, NODES[1], "config", config="nic-fw")
    result: dict[str, Any] = {}

    def certify() -> None:
        result["rc"], result["out"] = ansible_module("certification_run", {
            "kubeconfig": str(h100.kubeconfig), "name": "drift", "namespace": NS,
            "categories": [{"domain": "configuration", "variant": "node-drift"}], "poll_interval": 0.5,
            "timeout": 240}, timeout=300)

    run = threading.Thread(target=certify)
    run.start()
    core, logs = client.CoreV1Api(h100.api), {}
    try:
        while run.is_alive():
            for pod in core.list_namespaced_pod(NS).items:
                if stages.NODE_DRIFT_PRINTED in (pod.metadata.annotations or {}) and pod.spec.node_name not in logs:
                    logs[pod.spec.node_name] = (pod, core.read_namespaced_pod_log(pod.metadata.name, NS))
            time.sleep(0.2)
    finally:
        run.join()
        faults.fault(h100.name, NODES[1], "none")
    assert result["rc"] == 0, result["out"]
    (category,) = result["out"]["categories"]
    # ECC off on GPU 3 fails its node; the other firmware alone is drift, which the report judges across the fleet.
    assert category["succeeded_nodes"] == [NODES[0]]
    assert [(f["name"], "GPU 3" in f["message"] and "ecc_current" in f["message"])
            for f in category["failed_nodes"]] == [(NODES[1], True)]
    assert sorted(logs) == NODES
    snapshots = {}
    for node, (pod, log) in logs.items():
        (container,) = pod.spec.containers
        assert [*container.command, *container.args] == ["python3", "/opt/cre/node_drift.py", "--load-s", "8"]
        files = files_of(log)
        assert list(files) == ["nvidia-smi-q.xml", "nics.json", "host-pcie.json", "versions.json",
                               "nvidia-smi-nvlink.txt"]
        gpus = ET.fromstring(files["nvidia-smi-q.xml"].split("\n", 2)[2]).findall("gpu")
        nics = json.loads(files["nics.json"])
        assert len(gpus) == 8 and len(nics) == 32 and json.loads(files["versions.json"])["driver"]
        snapshots[node] = ([g.findtext("ecc_mode/current_ecc") for g in gpus], {n["fw_ver"] for n in nics})
    assert snapshots[NODES[0]] == (["Enabled"] * 8, {"0.0.0.0"})
    assert snapshots[NODES[1]] == (["Enabled"] * 3 + ["Disabled"] + ["Enabled"] * 4, {"0.0.0.1"})
