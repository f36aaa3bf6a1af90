"""A CertReport with a node-drift category (issue 42's `configuration`, and the per-GPU evidence its rows give) for the
renderers' tests: 8 nodes of 8 H100 GPUs. gpu-node-001's GPU 2 runs with ECC off, gpu-node-002's GPU 5 at PCIe
Gen4 x8, gpu-node-003's NIC port mlx5_3/1 is down, gpu-node-004's GPU 0 has its power limit below the SKU's default
(a warning), gpu-node-005 shows 7 GPUs where 8 belong, gpu-node-006 runs other NIC firmware than the 7 others (a
drift warning), gpu-node-007 and gpu-node-008 are healthy. The drift table also holds the driver every node agrees on.
"""
from __future__ import annotations

from typing import Any

from tests.unit.engine.report.gpu_reports import category, gpu, verdict

KEY = "configuration/node-drift"
NODES = tuple(f"gpu-node-{n:03d}" for n in range(1, 9))
FW, OTHER_FW, DRIVER = "28.39.1002", "28.40.1000", "570.124.06"
ECC_REMEDY = "enable ECC: `nvidia-smi -i 2 -e 1` and reboot"


def finding(node: str, component: str, field: str, expected: str, observed: str, outcome: str, remedy: str,
            index: int | None = None, name: str | None = None, drift: dict | None = None) -> dict[str, Any]:
    return {"node": node, "component": component, "index": index,
            "uuid": f"GPU-{node}-{index}" if component == "gpu" and index is not None else None, "name": name,
            "field": field, "expected": expected, "observed": observed, "outcome": outcome, "remedy": remedy,
            "drift": drift}


FINDINGS: dict[str, list[dict[str, Any]]] = {
    "gpu-node-001": [finding("gpu-node-001", "gpu", "ecc_current", "enabled", "disabled", "fail", ECC_REMEDY, 2)],
    "gpu-node-002": [
        finding("gpu-node-002", "gpu", "pcie_gen", "5", "4", "fail",
                "reseat the GPU or check its riser; the link trains below what both ends support", 5),
        finding("gpu-node-002", "gpu", "pcie_width", "16", "8", "fail",
                "reseat the GPU or check its riser; the link trains below what both ends support", 5)],
    "gpu-node-003": [finding("gpu-node-003", "nic", "nic.state", "ACTIVE/LinkUp", "DOWN/Polling", "fail",
                             "check the cable and the switch port of mlx5_3 port 1", 1, "mlx5_3/1")],
    "gpu-node-004": [finding("gpu-node-004", "gpu", "power_limit_w", "700 W", "600 W", "warn",
                             "restore the default: `nvidia-smi -i 0 -pl 700`", 0)],
    "gpu-node-005": [finding("gpu-node-005", "node", "gpus", "8", "7", "fail",
                             "find the missing GPU: `nvidia-smi -L`, `dmesg | grep -i nvrm`; reseat or replace it")],
    "gpu-node-006": [finding("gpu-node-006", "nic", "nic.fw", FW, OTHER_FW, "warn",
                             f"flash the fleet's firmware {FW} (mlxfwmanager)", 1, "mlx5_0/1",
                             {"majority": FW, "holders": 7, "of": 8})],
}
ECC_LINE = (f"configuration: GPU 2 (GPU-gpu-node-001-2): ecc_current: expected enabled, observed disabled; "
            f"{ECC_REMEDY}")
NIC_LINE = ("configuration: NIC mlx5_3/1: nic.state: expected ACTIVE/LinkUp, observed DOWN/Polling; check the cable "
            "and the switch port of mlx5_3 port 1")
FW_LINE = (f"warning: configuration: NIC mlx5_0/1: nic.fw: expected {FW}, observed {OTHER_FW} (majority {FW} on 7/8 "
           f"nodes); flash the fleet's firmware {FW} (mlxfwmanager)")


def configuration() -> dict[str, Any]:
    """The category's `configuration`, as issue 42's contract gives it (a passed check is a `pass` finding)."""
    nodes = [{"node": n, "findings": FINDINGS.get(n, []) + [
        finding(n, "node", "driver", ">= 550", DRIVER, "pass", "")]} for n in NODES]
    drift = [{"field": "nic.fw", "component": "nic", "majority": FW,
              "values": [{"value": OTHER_FW, "nodes": ["gpu-node-006"]},
                         {"value": FW, "nodes": [n for n in NODES if n != "gpu-node-006"]}]},
             {"field": "driver", "component": "node", "majority": DRIVER, "values": [{"value": DRIVER,
                                                                                      "nodes": list(NODES)}]}]
    return {"nodes": nodes, "drift": drift}


def evidence() -> dict[str, Any]:
    """The per-GPU evidence of the same run: each GPU finding as a `configuration` failure of its GPU."""
    gpus = []
    for node in NODES:
        found = {f["index"]: f for f in FINDINGS.get(node, []) if f["component"] == "gpu"}
        for index in range(7 if node == "gpu-node-005" else 8):
            f = found.get(index)
            gpus.append(gpu(node, index) if f is None else gpu(node, index, f["outcome"], [
                {"test": "configuration", "outcome": f["outcome"], "detail": f"expected {f['expected']}; {f['remedy']}"}]))
    return {"state": "final", "rows": len(gpus) * 20, "shards": 1, "truncated": 0, "partial": [], "gpus": gpus}


def config_report() -> dict[str, Any]:
    failed = {n: f[0] for n, f in FINDINGS.items() if f[0]["outcome"] == "fail"}
    messages = {n: f"{f['field']}: expected {f['expected']}, observed {f['observed']}" for n, f in failed.items()}
    cat = category(KEY, "Failed", {n: verdict("Failed", "ConfigurationDrift", messages[n]) if n in failed
                                   else verdict("Passed") for n in NODES}, evidence())
    cat["configuration"] = configuration()
    return {"title": "Certification Report", "name": "cert-c", "created": "2026-12-07T10:00:00Z", "platform": "aws",
            "gpu": "h100", "gpuProduct": "NVIDIA-H100-80GB-HBM3", "totalNodes": len(NODES), "excludedNodes": [],
            "exclusionReason": "", "categories": [cat],
            "failedNodes": [{"name": n, "reason": "ConfigurationDrift", "message": m} for n, m in messages.items()],
            "result": "FAILED", "nodeResults": [], "remedies": []}


def large_report(nodes: int = 1000, outliers: int = 3) -> dict[str, Any]:
    """`nodes` nodes, the last `outliers` on other NIC firmware (a drift warning each), the rest without findings."""
    names = [f"node-{n}" for n in range(1, nodes + 1)]
    odd = names[-outliers:]
    report = config_report()
    cat = report["categories"][0]
    cat["nodes"] = {n: verdict("Passed") for n in names}
    cat.pop("evidence")
    cat["configuration"] = {
        "nodes": [{"node": n, "findings": [finding(n, "nic", "nic.fw", FW, OTHER_FW, "warn", "flash it", 1, "mlx5_0/1",
                                                   {"majority": FW, "holders": nodes - outliers, "of": nodes})]
                   if n in odd else []} for n in names],
        "drift": [{"field": "nic.fw", "component": "nic", "majority": FW,
                   "values": [{"value": FW, "nodes": names[:-outliers]}, {"value": OTHER_FW, "nodes": odd}]}]}
    report.update(totalNodes=nodes, failedNodes=[], result="PASSED")
    return report
