"""CertReport dicts with per-GPU evidence (the `evidence` of a category, issue 40's contract) for the renderers'
tests: gpu-node-1's GPU 3 fails `memory` at level 2 with DCGM's message and its GPU 6 warns `pcie`, gpu-node-2's
GPU 5 lacks evidence (every test skipped), gpu-node-3's GPU 7 is missing from DCGM's output, and level 3's evidence
is partial."""
from __future__ import annotations

from typing import Any

UUID_3 = "GPU-5fa8b9a0-1c2d-4e3f-8a9b-0c1d2e3f4a5b"
MEMORY_MESSAGE = "Found 4 faulty memory elements on GPU 3 (DCGM_FR_FAULTY_MEMORY, error code 62)"
PCIE_MESSAGE = "GPU 6 had PCIe replays: 12 (DCGM_FR_PCI_REPLAY_RATE, error code 24)"
MISSING_MESSAGE = "GPU 7 is missing from the dcgmi diag output: 8 GPUs expected, 7 reported (0, 1, 2, 3, 4, 5, 6)"
PARTIAL = "cert-g-diagnostics-dcgm-level3-group-1-iter-1: the log of pod cert-g-group-1-dcgm could not be read"
LEVEL2, LEVEL3, NCCL = "diagnostics/dcgm-level2", "diagnostics/dcgm-level3", "communication/nccl-all-reduce"


def gpu(node: str, index: int, outcome: str = "pass", failures: list[dict] | None = None, uuid: str | None = None,
        lacking: bool = False, missing: bool = False) -> dict[str, Any]:
    return {"node": node, "index": index, "uuid": uuid if uuid is not None else f"GPU-{node}-{index}",
            "outcome": outcome, "lackingEvidence": lacking, "missing": missing, "failures": failures or []}


def level2_gpus(nodes: int = 4) -> list[dict[str, Any]]:
    """8 GPUs per node: the failing, the lacking and the missing ones among passing ones."""
    out = []
    for n in range(nodes):
        node = f"gpu-node-{n}"
        for index in range(8):
            if (n, index) == (1, 3):
                out.append(gpu(node, 3, "fail", [{"test": "memory", "outcome": "fail", "detail": MEMORY_MESSAGE}],
                               uuid=UUID_3))
            elif (n, index) == (1, 6):
                out.append(gpu(node, 6, "warn", [{"test": "pcie", "outcome": "warn", "detail": PCIE_MESSAGE}]))
            elif (n, index) == (2, 5):
                out.append(gpu(node, 5, "warn", lacking=True))
            elif (n, index) == (3, 7):
                out.append(gpu(node, 7, "fail", [{"test": None, "outcome": "fail", "detail": MISSING_MESSAGE}],
                               uuid="", missing=True))
            else:
                out.append(gpu(node, index))
    return out


def verdict(status: str, reason: str = "", message: str = "") -> dict[str, Any]:
    return {"group": "", "rack": "", "status": status, "reason": reason, "message": message}


def category(key: str, status: str, nodes: dict[str, dict], evidence: dict | None) -> dict[str, Any]:
    domain, variant = key.split("/")
    out: dict[str, Any] = {
        "domain": domain, "variant": variant, "workflow": f"cert-g-{domain}-{variant}", "status": status,
        "failureReason": "1 groups failed across 1 iterations" if status == "Failed" else "", "runtime": "3m0s",
        "testScale": "", "source": "builtin", "nodesPerJob": 1, "jobs": len(nodes), "mnnvl": "", "image": "",
        "failedGroups": [], "cliques": [], "bandwidth": [], "threshold": "", "transport": [], "groupBandwidth": [],
        "domains": [], "iterations": [{"number": 1, "status": status, "duration": "3m0s"}], "nodes": nodes}
    if evidence is not None:
        out["evidence"] = evidence
    return out


def gpu_report(nodes: int = 4) -> dict[str, Any]:
    """Level 2 fails gpu-node-1 (GPU 3, memory) and gpu-node-3 (GPU 7 missing), warns about gpu-node-2's GPU 5;
    level 3 passes on partial evidence; NCCL has no evidence reader."""
    names = [f"gpu-node-{n}" for n in range(nodes)]
    failed = {"gpu-node-1": f"GPU 3 ({UUID_3}): memory failed: {MEMORY_MESSAGE}",
              "gpu-node-3": MISSING_MESSAGE}
    level2 = category(LEVEL2, "Failed", {
        n: verdict("Failed", "HardwareFailureDetected", failed[n]) if n in failed else verdict("Passed")
        for n in names}, {"state": "final", "rows": nodes * 8 * 9, "shards": 1, "truncated": 0, "partial": [],
                          "gpus": level2_gpus(nodes)})
    level3 = category(LEVEL3, "Succeeded", {n: verdict("Passed") for n in names[:2]},
                      {"state": "partial", "rows": 96, "shards": 2, "truncated": 1, "partial": [PARTIAL],
                       "gpus": [gpu("gpu-node-0", i) for i in range(8)]})
    nccl = category(NCCL, "Succeeded", {n: verdict("Passed") for n in names}, None)
    return {"title": "Certification Report", "name": "cert-g", "created": "2026-12-01T10:00:00Z",
            "platform": "aws", "gpu": "h100", "gpuProduct": "NVIDIA-H100-80GB-HBM3", "totalNodes": nodes,
            "excludedNodes": [], "exclusionReason": "", "categories": [level2, level3, nccl],
            "failedNodes": [{"name": n, "reason": "HardwareFailureDetected", "message": m} for n, m in failed.items()],
            "result": "FAILED", "nodeResults": [], "remedies": []}
