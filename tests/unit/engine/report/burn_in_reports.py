"""A CertReport with a GEMM burn-in category (issue 41's `burnIn`, and the per-GPU evidence its rows give) for the
renderers' tests: 4 nodes of 8 H100 NVL GPUs, BF16, 22 windows of 30 s (the first 60 s warm-up, with a spike),
under a provisional floor of 490 TFLOPS. gpu-node-001 is healthy; gpu-node-002's GPU 5 runs at 0.9x and fails the
node-median rule; gpu-node-003's GPU 2 throttles (hw_thermal) from window 8, failing the throttle and node-median
rules and warning below the provisional floor; gpu-node-004 runs every GPU under a lowered power limit (0.85x).
The fleet rule names the slow GPUs and the slow node."""
from __future__ import annotations

import statistics
from typing import Any

from tests.unit.engine.report.gpu_reports import category, verdict

PRODUCT, FLOOR, WINDOWS, WARMUP_WINDOWS = "NVIDIA-H100-NVL", 490.0, 22, 2
NODES = ("gpu-node-001", "gpu-node-002", "gpu-node-003", "gpu-node-004")
KEY = "compute/gemm-burn-in"
SLOW_GPU, THROTTLED_GPU = ("gpu-node-002", 5), ("gpu-node-003", 2)
POWER_NODE = "gpu-node-004"


def series(node: str, index: int) -> list[list[float]]:
    """[window, TFLOPS] of one GPU: about 600 with a 2-3% spread, a boost spike in window 0, then its fault."""
    out = []
    for window in range(WINDOWS):
        value = 600 + (index - 3.5) * 2 + ((window * 7 + index * 3) % 5 - 2) * 0.8
        value = 640.0 if window == 0 else value
        if (node, index) == SLOW_GPU:
            value *= 0.9
        if (node, index) == THROTTLED_GPU and window >= 8:
            value *= 0.7
        if node == POWER_NODE:
            value *= 0.85
        out.append([window, round(value, 1)])
    return out


def steady_median(points: list[list[float]]) -> float:
    return round(statistics.median(v for w, v in points if w >= WARMUP_WINDOWS), 1)


def findings(node: str, index: int, median: float, node_median: float) -> list[dict[str, str]]:
    below = round((1 - median / node_median) * 100, 1)
    node_rule = {"rule": "node-median", "outcome": "fail",
                 "message": f"node-median: median {median} TFLOPS is {below}% below the node median {node_median} "
                            f"in windows {8 if (node, index) == THROTTLED_GPU else 2}-21 (fail above 5%)"}
    if (node, index) == SLOW_GPU:
        return [node_rule]
    if (node, index) == THROTTLED_GPU:
        return [{"rule": "throttle", "outcome": "fail",
                 "message": "throttle: hw_thermal active in windows 8-21 (a hardware throttle reason fails)"},
                node_rule,
                {"rule": "floor", "outcome": "warn",
                 "message": f"floor: median {median} TFLOPS is below the floor {FLOOR} of {PRODUCT} BF16 (provisional: "
                            f"warns, never fails)"}]
    if node == POWER_NODE:
        return [{"rule": "power-limit", "outcome": "fail",
                 "message": "power-limit: power limit 340.0 W is below the SKU's default 400.0 W in every window"}]
    return []


def burn_in() -> dict[str, Any]:
    """The category's `burnIn`, as issue 41's contract gives it."""
    nodes, every = [], []
    for node in NODES:
        figures = {i: series(node, i) for i in range(8)}
        medians = {i: steady_median(p) for i, p in figures.items()}
        node_median = round(statistics.median(medians.values()), 1)
        every += medians.values()
        gpus = []
        for index in range(8):
            found = findings(node, index, medians[index], node_median)
            outcome = "fail" if any(f["outcome"] == "fail" for f in found) else "warn" if found else "pass"
            gpus.append({"index": index, "uuid": f"GPU-{node}-{index}", "median": medians[index], "outcome": outcome,
                         "series": figures[index], "findings": found})
        nodes.append({"node": node, "median": node_median, "gpus": gpus})
    fleet = round(statistics.median(every), 1)
    slow = []
    for node in nodes:
        if node["median"] / fleet < 0.95:
            slow.append({"node": node["node"], "index": None, "ratio": round(node["median"] / fleet, 3),
                         "message": f"node median {node['median']} TFLOPS is {node['median'] / fleet:.2f}x the "
                                    f"fleet median {fleet} of {PRODUCT} (slow below 0.95x)"})
        slow += [{"node": node["node"], "index": g["index"], "ratio": round(g["median"] / fleet, 3),
                  "message": f"median {g['median']} TFLOPS is {g['median'] / fleet:.2f}x the fleet median {fleet} "
                             f"of {PRODUCT} (slow below 0.92x)"}
                 for g in node["gpus"] if g["median"] / fleet < 0.92]
    return {"dtype": "bf16", "windowSeconds": 30.0, "warmupSeconds": 60.0,
            "floor": {"tflops": FLOOR, "provisional": True}, "nodes": nodes, "fleet": {"median": fleet, "slow": slow}}


def evidence(found: dict[str, Any]) -> dict[str, Any]:
    """The per-GPU evidence of the same run: each GPU's verdict with its GEMM findings as `gemm` failures."""
    gpus = [{"node": n["node"], "index": g["index"], "uuid": g["uuid"], "outcome": g["outcome"],
             "lackingEvidence": False, "missing": False,
             "failures": [{"test": "gemm", "outcome": f["outcome"], "detail": f["message"]} for f in g["findings"]]}
            for n in found["nodes"] for g in n["gpus"]]
    return {"state": "final", "rows": len(gpus) * WINDOWS, "shards": 1, "truncated": 0, "partial": [], "gpus": gpus}


def burn_in_report() -> dict[str, Any]:
    found = burn_in()
    failed = {n["node"]: next(f["message"] for g in n["gpus"] for f in g["findings"] if f["outcome"] == "fail")
              for n in found["nodes"] if any(g["outcome"] == "fail" for g in n["gpus"])}
    cat = category(KEY, "Failed", {n: verdict("Failed", "HardwareFailureDetected", failed[n]) if n in failed
                                   else verdict("Passed") for n in NODES}, evidence(found))
    cat["burnIn"] = found
    return {"title": "Certification Report", "name": "cert-b", "created": "2026-12-01T10:00:00Z", "platform": "aws",
            "gpu": "h100", "gpuProduct": PRODUCT, "totalNodes": len(NODES), "excludedNodes": [],
            "exclusionReason": "", "categories": [cat],
            "failedNodes": [{"name": n, "reason": "HardwareFailureDetected", "message": m} for n, m in failed.items()],
            "result": "FAILED", "nodeResults": [], "remedies": []}
