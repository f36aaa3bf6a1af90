"""CertReports for the history tests: the stored ones (written before the history fields) and small new ones."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).parents[1] / "data" / "report"
GPU_PRODUCT = "NVIDIA-H100-80GB-HBM3"
IMAGE = "nvcr.io/nvidia/pytorch:25.01-py3"
NCCL = "communication/nccl-all-reduce"
TRAINING = "training/nemotron5-8b"
PEAK = 8589934592


def stored(name: str) -> dict[str, Any]:
    """A report file of an older version: no created, gpuProduct, image, threshold or curve."""
    return json.loads((DATA / f"{name}.json").read_text())


def _nodes(groups: list[str]) -> dict[str, dict[str, Any]]:
    return {f"{group}-n{i}": {"group": group, "rack": "", "status": "Passed", "reason": "", "message": ""}
            for group in groups for i in range(2)}


def nccl(group_bw: dict[str, float], bandwidth: dict[int, float] | None = None, image: str = IMAGE,
         nodes_per_job: int = 2) -> dict[str, Any]:
    """A bandwidth category: each group's peak busBW (two nodes each, `<group>-n0`, `<group>-n1`) and the combined
    table (size -> busBW; by default the mean of the groups at the peak size)."""
    table = bandwidth if bandwidth is not None else {PEAK: sum(group_bw.values()) / max(len(group_bw), 1)}
    return {"domain": "communication", "variant": "nccl-all-reduce", "status": "Succeeded",
            "nodesPerJob": nodes_per_job, "image": image, "threshold": "value >= 100",
            "bandwidth": [{"size": size, "algBW": bw / 2, "busBW": bw, "samples": 4} for size, bw in table.items()],
            "groupBandwidth": [{"groupName": group, "nodes": [f"{group}-n0", f"{group}-n1"], "busBW": bw,
                                "transport": "IB", "belowMin": False, "failed": False, "curve": [[PEAK, bw]]}
                               for group, bw in group_bw.items()],
            "domains": [], "nodes": _nodes(list(group_bw)), "failedGroups": []}


def training(domains: dict[str, tuple[float, float, float]], image: str = IMAGE) -> dict[str, Any]:
    """A goodput category: group -> (goodput, tflops, stepTime)."""
    return {"domain": "training", "variant": "nemotron5-8b", "status": "Succeeded", "nodesPerJob": 2, "image": image,
            "threshold": "", "bandwidth": [], "groupBandwidth": [],
            "domains": [{"name": group, "nodeCount": 2, "goodput": goodput, "tflops": tflops, "stepTime": step}
                        for group, (goodput, tflops, step) in domains.items()],
            "nodes": _nodes(list(domains)), "failedGroups": []}


def report(name: str, *categories: dict[str, Any], created: str = "2026-11-01T10:00:00Z",
           gpu_product: str = GPU_PRODUCT, failed: tuple[str, ...] = ()) -> dict[str, Any]:
    """A report of this version; `failed` names nodes with a ThresholdViolation record."""
    return {"name": name, "created": created, "platform": "onprem", "gpu": "h100", "gpuProduct": gpu_product,
            "result": "FAILED" if failed else "PASSED", "categories": list(categories),
            "failedNodes": [{"name": node, "reason": "ThresholdViolation", "message": "below"} for node in failed],
            "nodeResults": []}
