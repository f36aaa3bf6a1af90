"""The figures a CertReport measured, each under the key that says what it may be compared with.

A figure is a dict ``{key: {gpuProduct, platform, category, nodesPerJob, image}, figure, group, nodes, value}``.
Reports written before the history fields existed lack ``gpuProduct`` and ``image``: the key then holds the
report's ``gpu`` and ``""``, so an old report still yields its figures (and differs from a new one by image).
Only positive values are figures: every quantity here is positive when measured, and the report writes 0 where
nothing was measured (a group without a peak, a size whose busBW rounds to 0.00), which must count as no figure.
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from ..api.naming import natural

KEY_FIELDS = ("gpuProduct", "platform", "category", "nodesPerJob", "image")

GROUP_BUS_BW, BUS_BW, GOODPUT, TFLOPS, STEP_TIME = "groupBusBW", "busBW", "goodput", "tflops", "stepTime"
DOMAIN_FIGURES = (GOODPUT, TFLOPS, STEP_TIME)
HIGHER, LOWER = "higher", "lower"
# How errors list the figure names.
FIGURE_NAMES = (GROUP_BUS_BW, f"{BUS_BW}@<sizeBytes>", *DOMAIN_FIGURES)

_BUS_BW_AT = re.compile(rf"{BUS_BW}@[0-9]+")

Figure = dict[str, Any]


def bus_bw_at(size: int) -> str:
    """The name of the combined table's busBW at one message size."""
    return f"{BUS_BW}@{size}"


def is_figure(name: str) -> bool:
    return name in (GROUP_BUS_BW, *DOMAIN_FIGURES) or _BUS_BW_AT.fullmatch(name) is not None


def kind(figure: str) -> str:
    """Which way is better: a step time should shrink, everything else grow."""
    return LOWER if figure == STEP_TIME else HIGHER


def category_name(category: Mapping[str, Any]) -> str:
    return f"{category.get('domain', '')}/{category.get('variant', '')}"


def key(report: Mapping[str, Any], category: Mapping[str, Any]) -> dict[str, Any]:
    """What a category's figures may be compared with; absent fields (older reports) are empty."""
    return {"gpuProduct": report.get("gpuProduct") or report.get("gpu") or "",
            "platform": report.get("platform") or "",
            "category": category_name(category),
            "nodesPerJob": int(category.get("nodesPerJob") or 0),
            "image": category.get("image") or ""}


def _positive(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) and value > 0 else None


def _group_nodes(category: Mapping[str, Any], group: str) -> list[str]:
    """A domains entry names no nodes; the category's node verdicts say which group each node was in."""
    nodes = category.get("nodes") or {}
    return sorted((name for name, verdict in nodes.items() if (verdict or {}).get("group") == group), key=natural)


def _category_figures(report: Mapping[str, Any], category: Mapping[str, Any]) -> list[Figure]:
    measured: list[tuple[str, str, list[str], Any]] = []
    for entry in category.get("groupBandwidth") or []:
        measured.append((GROUP_BUS_BW, entry.get("groupName", ""), list(entry.get("nodes") or []), entry.get("busBW")))
    for row in category.get("bandwidth") or []:
        if isinstance(row.get("size"), int):
            measured.append((bus_bw_at(row["size"]), "", [], row.get("busBW")))
    for domain in category.get("domains") or []:
        nodes = _group_nodes(category, domain.get("name", ""))
        measured += [(name, domain.get("name", ""), nodes, domain.get(name)) for name in DOMAIN_FIGURES]
    category_key = key(report, category)
    return [{"key": dict(category_key), "figure": name, "group": group, "nodes": nodes, "value": value}
            for name, group, nodes, raw in measured if (value := _positive(raw)) is not None]


def figures(report: Mapping[str, Any]) -> list[Figure]:
    """Every figure of the report, in its categories' order."""
    return [figure for category in report.get("categories") or [] for figure in _category_figures(report, category)]
