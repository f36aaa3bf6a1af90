"""The burn-in fleet rule across clusters (issue 41): over the burn-in categories of every host's report, per GPU
product and dtype, a GPU whose median is below 0.92x the fleet median of its product, or a node whose median is
below 0.95x, is named as slow: a warning, with its numbers. Each cluster's report applies the same rule to its own
nodes; here it spans the clusters, so a cluster that runs slow as a whole stands out too.

Pure: host -> CertReport in, the fleet's `burnIn` out (None when no report has a burn-in); ordered by product and
dtype, then host and node in natural order, then GPU, so the same reports give the same bytes.
"""
from __future__ import annotations

import statistics
from typing import Any

from . import burn_in as bi
from .text import natural

Obj = dict[str, Any]
GPU_RATIO, NODE_RATIO = 0.92, 0.95
UNKNOWN_PRODUCT = "unknown product"


def _figure(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _medians(reports: dict[str, Obj]) -> dict[tuple[str, str], list[Obj]]:
    """(product, dtype) -> every node measured: host, category, node, its median, [(GPU index, median)]."""
    out: dict[tuple[str, str], list[Obj]] = {}
    for host in sorted(reports, key=natural):
        report = reports[host]
        for category in report.get("categories") or []:
            found = bi.burn_in(category)
            if found is None:
                continue
            key = (str(report.get("gpuProduct") or UNKNOWN_PRODUCT), str(found.get("dtype") or "-"))
            for node in found.get("nodes") or []:
                out.setdefault(key, []).append({
                    "host": host, "category": f"{category['domain']}/{category['variant']}", "node": node["node"],
                    "median": _figure(node.get("median")),
                    "gpus": [(g["index"], m) for g in node.get("gpus") or [] if (m := _figure(g.get("median"))) is not None]})
    return out


def _slow(entry: Obj, index: int | None, median: float, fleet: float, product: str, dtype: str,
          clusters: int) -> Obj | None:
    """The slow entry of a GPU (index) or a node (index None), or None when it is not slow."""
    limit = GPU_RATIO if index is not None else NODE_RATIO
    ratio = median / fleet
    if ratio >= limit:
        return None
    what = "median" if index is not None else "node median"
    message = (f"{what} {median:.1f} TFLOPS is {ratio:.2f}x the fleet median {fleet:.1f} of {product} "
               f"{dtype.upper()} across {clusters} cluster{'' if clusters == 1 else 's'} (slow below {limit:.2f}x)")
    return {"host": entry["host"], "category": entry["category"], "node": entry["node"], "index": index,
            "product": product, "dtype": dtype, "median": round(median, 3), "ratio": round(ratio, 4),
            "message": message,
            "text": f"{entry['host']} {bi.gpu_name(entry['node'], index)}: {bi.ruled(bi.SLOW_RULE, message)}"}


def fleet_burn_in(reports: dict[str, Obj]) -> Obj | None:
    """`groups` (product, dtype, the fleet median over every GPU's median, GPUs, nodes and clusters counted) and
    `slow` (host, category, node, index (None for a node), product, dtype, median, ratio, message, text)."""
    measured = _medians(reports)
    if not measured:
        return None
    groups, slow = [], []
    for (product, dtype), entries in sorted(measured.items()):
        figures = [m for e in entries for _i, m in e["gpus"]]
        fleet = statistics.median(figures) if figures else None
        clusters = len({e["host"] for e in entries})
        groups.append({"product": product, "dtype": dtype, "median": None if fleet is None else round(fleet, 3),
                       "gpus": len(figures), "nodes": len(entries), "clusters": clusters})
        if not fleet:  # no figure, or a fleet at zero: no ratio to judge by
            continue
        for entry in entries:
            found = [_slow(entry, None, entry["median"], fleet, product, dtype, clusters)] if entry["median"] is not None else []
            found += [_slow(entry, index, median, fleet, product, dtype, clusters) for index, median in entry["gpus"]]
            slow += [s for s in found if s is not None]
    return {"groups": groups, "slow": slow}


def group_text(group: Obj) -> str:
    """`NVIDIA-H100-NVL BF16: fleet median 598.2 TFLOPS over 32 GPUs on 4 nodes in 2 clusters`."""
    median = "-" if group["median"] is None else f"{group['median']:.1f}"
    return (f"{group['product']} {group['dtype'].upper()}: fleet median {median} TFLOPS over {group['gpus']} GPUs "
            f"on {group['nodes']} nodes in {group['clusters']} cluster{'' if group['clusters'] == 1 else 's'}")
