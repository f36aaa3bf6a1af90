"""Each category's figures over the cluster's certifications, oldest first, for the report's trend chart.

One point per certification that measured the figure: the mean over its groups. Reports of any version work;
a figure a report lacks (absent or unmeasured) gives no point rather than a zero.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import fmean
from typing import Any

from ..api.naming import natural
from .figures import DOMAIN_FIGURES, GROUP_BUS_BW, figures

TREND_FIGURES = (GROUP_BUS_BW, *DOMAIN_FIGURES)


def trend(current: Mapping[str, Any], previous: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``[{category, figure, points: [{certification, created, value}]}]`` over ``previous`` (newest first) and
    ``current``, categories in natural order, figures in TREND_FIGURES order, points oldest first."""
    points: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for report in [*reversed(previous), current]:
        values: dict[tuple[str, str], list[float]] = {}
        for figure in figures(report):
            if figure["figure"] in TREND_FIGURES:
                values.setdefault((figure["key"]["category"], figure["figure"]), []).append(figure["value"])
        for line, measured in values.items():
            points.setdefault(line, []).append({"certification": report.get("name") or "",
                                                "created": report.get("created") or "", "value": fmean(measured)})
    order = sorted(points, key=lambda line: (natural(line[0]), TREND_FIGURES.index(line[1])))
    return [{"category": category, "figure": figure, "points": points[(category, figure)]} for category, figure in order]
