"""`configuration/node-drift` judged on the simulator, live (issue 42): on 8 nodes a trusted run gives every node's
snapshot to the results bundle and golden_generate pins its majority values; then, with a different fault on 5
nodes (ECC off, PCIe at Gen4 x8, a NIC port down, a lowered power limit, other NIC firmware), a run against that
profile finds each fault with its field, expected and observed value, and nothing on the 3 healthy nodes; the
firmware outlier is named as drift with the majority value and how many nodes hold it."""
from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from kubernetes import client

from tests.ansible_run import ansible_module
from tools.sim import faults

from .conftest import Sim

pytestmark = pytest.mark.clusters(("aws-h100", 8))

NODES = [f"gpu-node-00{i}" for i in range(8)]
ECC, PCIE, PORT, POWER, FIRMWARE = NODES[1:6]
HEALTHY = [NODES[0], NODES[6], NODES[7]]
FAULTS = {ECC: ("ecc-off", 2), PCIE: ("pcie-downgraded", 5), PORT: ("nic-port-down", None),
          POWER: ("power-limit", 0), FIRMWARE: ("nic-fw", None)}


@pytest.fixture(scope="module")
def h100(pooled: Callable[..., Sim]) -> Sim:
    return pooled("aws-h100", 8)


@pytest.fixture
def namespace(h100: Sim) -> Iterator[str]:
    client.CoreV1Api(h100.api).create_namespace({"metadata": {"name": "drift"}})
    try:
        yield "drift"
    finally:
        for node in FAULTS:
            faults.fault(h100.name, node, "none")


def _certify(sim: Sim, ns: str, name: str, **extra: object) -> dict:
    rc, out = ansible_module("certification_run", {
        "kubeconfig": str(sim.kubeconfig), "name": name, "namespace": ns, "poll_interval": 0.5, "timeout": 240,
        "categories": [{"domain": "configuration", "variant": "node-drift"}], **extra}, timeout=300)
    assert rc == 0, out
    (category,) = out["categories"]
    return category


def _report(sim: Sim, ns: str, name: str, out: Path) -> dict:
    rc, result = ansible_module("certification_results", {
        "kubeconfig": str(sim.kubeconfig), "certification": name, "namespace": ns, "history": False,
        "dest": str(out / "report"), "bundle_dir": str(out / "bundle")})
    assert rc == 0, result.get("msg")
    (category,) = json.loads((out / "report" / "report.json").read_text())["categories"]
    return category


def test_a_trusted_run_pins_the_fleet_and_five_faults_are_each_found(
        h100: Sim, namespace: str, tmp_path: Path) -> None:
    trusted = _certify(h100, namespace, "trusted")
    assert sorted(trusted["succeeded_nodes"]) == NODES, trusted["failed_nodes"]
    _report(h100, namespace, "trusted", tmp_path / "trusted")
    snapshots = tmp_path / "trusted" / "bundle" / "snapshots"
    assert sorted(p.stem for p in snapshots.iterdir()) == NODES
    rc, generated = ansible_module("golden_generate", {"src": [str(snapshots)],
                                                       "dest": str(tmp_path / "golden.yaml")})
    assert rc == 0, generated.get("msg")

    for node, (field, gpu) in FAULTS.items():
        faults.fault(h100.name, node, "config", gpu=gpu, config=field)
    category = _certify(h100, namespace, "faulty", golden_profile=str(tmp_path / "golden.yaml"))
    failed = {f["name"]: f["message"] for f in category["failed_nodes"]}
    assert sorted(failed) == [ECC, PCIE, PORT, POWER], failed
    assert "GPU 2" in failed[ECC] and "ecc_current" in failed[ECC]
    assert "GPU 5" in failed[PCIE] and "pcie" in failed[PCIE]
    assert "nic.state" in failed[PORT] and "GPU 0" in failed[POWER] and "power_limit_w" in failed[POWER]

    reported = _report(h100, namespace, "faulty", tmp_path / "faulty")
    found = {n["node"]: n["findings"] for n in reported["configuration"]["nodes"]}
    assert all(not found.get(node) for node in HEALTHY), {n: found.get(n) for n in HEALTHY}
    fields = {node: {(f["field"], f["index"]) for f in found[node]} for node in FAULTS}
    assert ("ecc_current", 2) in fields[ECC] and any(f == "pcie_gen" and i == 5 for f, i in fields[PCIE])
    assert any(f == "nic.state" for f, _i in fields[PORT]) and ("power_limit_w", 0) in fields[POWER]
    ecc = next(f for f in found[ECC] if f["field"] == "ecc_current")
    assert (ecc["expected"], ecc["observed"], ecc["outcome"]) != (None, None, "pass") and ecc["remedy"]
    (fw,) = [row for row in reported["configuration"]["drift"] if row["field"] == "nic.fw"]
    minority = [v for v in fw["values"] if FIRMWARE in v["nodes"]]
    assert minority and minority[0]["value"] != fw["majority"] and len(minority[0]["nodes"]) == 1, fw
    drifted = [f for f in found[FIRMWARE] if f.get("drift")]
    assert drifted and drifted[0]["drift"]["majority"] == fw["majority"] and drifted[0]["drift"]["holders"] == 7
    html = (tmp_path / "faulty" / "report" / "report.html").read_text()
    assert "nic.fw" in html and FIRMWARE in html
