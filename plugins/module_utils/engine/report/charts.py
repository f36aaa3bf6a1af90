"""The report's pictures as inline SVG: bus bandwidth against message size (one curve per group), and the trend of a
category's figures over the cluster's certifications.

Pure: a CategoryReport (and the report's comparison) in, SVG text out, every text escaped; no figures, no picture.
Reports of older versions lack `curve`, `threshold` and `comparison`: the bandwidth chart then draws the category's
combined table as one curve, without threshold or baseline.
"""
from __future__ import annotations

import math
import re
from html import escape
from typing import Any

from .text import natural, size_text

Obj = dict[str, Any]
WIDTH, HEIGHT = 720, 340
LEFT, RIGHT, TOP, BOTTOM = 64, 170, 16, 48
# Groups that passed take these in turn; failed and regressed ones stand out in red and orange.
PALETTE = ("#1f77b4", "#2ca02c", "#9467bd", "#17becf", "#8c564b", "#7f7f7f", "#bcbd22", "#e377c2")
FAILED_COLOUR, REGRESSED_COLOUR = "#c62828", "#ef6c00"
THRESHOLD_COLOUR, BASELINE_COLOUR = "#444444", "#6a1b9a"
# A threshold the chart can draw: `value >= N` or `value > N` (anything else draws no line).
_THRESHOLD = re.compile(r"^\s*value\s*(>=|>)\s*([0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)\s*$")
BUS_BW_PREFIX = "busBW@"


def threshold_value(expression: Any) -> float | None:
    """N of a category's `value >= N` / `value > N` busBandwidthGBps threshold; None for any other expression."""
    match = _THRESHOLD.match(expression) if isinstance(expression, str) else None
    return float(match.group(2)) if match else None


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def baseline_points(category_key: str, comparison: Obj | None) -> list[tuple[int, float]]:
    """(size, baseline busBW) of the comparison's `busBW@<size>` figures of this category, ascending by size."""
    points = {}
    for entry in (comparison or {}).get("figures") or []:
        figure = str(entry.get("figure", ""))
        if entry.get("category") != category_key or not figure.startswith(BUS_BW_PREFIX):
            continue
        size, base = figure[len(BUS_BW_PREFIX):], _num(entry.get("baseline"))
        if size.isdigit() and int(size) > 0 and base is not None:
            points[int(size)] = base
    return sorted(points.items())


def regressed_groups(category_key: str, comparison: Obj | None) -> set[str]:
    """Groups of this category with a regressed or missing figure."""
    return {str(e.get("group")) for e in (comparison or {}).get("regressions") or []
            if e.get("category") == category_key and e.get("group")}


def _curves(category: Obj) -> list[tuple[str, list[tuple[int, float]], Obj | None]]:
    """(label, points, its groupBandwidth entry) per group with a curve, else the combined table as one curve."""
    out = []
    for entry in category.get("groupBandwidth") or []:
        points = [(int(p[0]), float(p[1])) for p in entry.get("curve") or []
                  if isinstance(p, (list, tuple)) and len(p) == 2 and _num(p[0]) and _num(p[1]) is not None]
        if points:
            out.append((str(entry.get("groupName", "")), sorted(points), entry))
    if out:
        return sorted(out, key=lambda c: natural(c[0]))
    combined = [(int(b["size"]), float(b["busBW"])) for b in category.get("bandwidth") or []
                if _num(b.get("size")) and _num(b.get("busBW")) is not None]
    return [("all groups", combined, None)] if combined else []


def _ticks(high: float) -> list[float]:
    """About five round steps from 0 to at least `high`."""
    if high <= 0:
        return [0.0, 1.0]
    raw = high / 5
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    return [step * i for i in range(int(math.ceil(high / step)) + 1)]


def _size_span(low: int, high: int) -> tuple[int, int, list[int]]:
    """The x axis: the powers of two around `low` and `high` (at least one apart), and at most about nine of the
    powers between them as ticks, the last one always among them."""
    first, last = int(math.floor(math.log2(low))), int(math.ceil(math.log2(high)))
    last = max(last, first + 1)
    step = max(1, math.ceil((last - first) / 8))
    exponents = list(range(last, first - 1, -step))[::-1]
    return first, last, [1 << e for e in exponents]


def _fmt(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def bandwidth_svg(category: Obj, category_key: str, comparison: Obj | None = None) -> str:
    """Bus bandwidth (GB/s) against message size (log scale): a curve per group (failed ones red, regressed ones
    orange), the threshold and the baseline as lines; "" without bandwidth figures."""
    curves = _curves(category)
    if not curves:
        return ""
    limit = threshold_value(category.get("threshold"))
    baseline = baseline_points(category_key, comparison)
    regressed = regressed_groups(category_key, comparison)
    sizes = [s for _label, points, _entry in curves for s, _v in points] + [s for s, _v in baseline]
    values = [v for _label, points, _entry in curves for _s, v in points] + [v for _s, v in baseline]
    values += [limit] if limit is not None else []
    low, high, x_ticks = _size_span(max(1, min(sizes)), max(1, *sizes))
    y_ticks = _ticks(max(values) * 1.05)
    top_value = y_ticks[-1]
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(size: float) -> float:
        return round(LEFT + (math.log2(size) - low) / (high - low) * plot_w, 1)

    def y(value: float) -> float:
        return round(TOP + plot_h - value / top_value * plot_h, 1)

    parts = [f'<svg class="bandwidth-chart" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
             f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" data-category="{escape(category_key)}" '
             f'aria-label="bus bandwidth against message size, {escape(category_key)}">',
             f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="#fafafa" stroke="#bdbdbd"/>']
    for tick in y_ticks:
        parts.append(f'<line class="grid" x1="{LEFT}" x2="{LEFT + plot_w}" y1="{y(tick)}" y2="{y(tick)}" '
                     f'stroke="#e0e0e0"/><text class="y-tick" x="{LEFT - 6}" y="{y(tick) + 4}" '
                     f'text-anchor="end">{_fmt(tick)}</text>')
    for tick in x_ticks:
        parts.append(f'<line class="grid" x1="{x(tick)}" x2="{x(tick)}" y1="{TOP}" y2="{TOP + plot_h}" '
                     f'stroke="#eeeeee"/><text class="x-tick" x="{x(tick)}" y="{TOP + plot_h + 16}" '
                     f'text-anchor="middle">{escape(size_text(tick))}</text>')
    parts.append(f'<text class="axis" x="{LEFT + plot_w / 2}" y="{HEIGHT - 8}" text-anchor="middle">message size '
                 f'(log scale)</text><text class="axis" x="14" y="{TOP + plot_h / 2}" text-anchor="middle" '
                 f'transform="rotate(-90 14 {TOP + plot_h / 2})">bus bandwidth (GB/s)</text>')
    if limit is not None:
        parts.append(f'<line class="threshold" x1="{LEFT}" x2="{LEFT + plot_w}" y1="{y(limit)}" y2="{y(limit)}" '
                     f'stroke="{THRESHOLD_COLOUR}" stroke-width="1.5" stroke-dasharray="6 4">'
                     f"<title>{escape('threshold: ' + str(category.get('threshold')))}</title></line>")
    if baseline:
        path = " ".join(f"{'M' if i == 0 else 'L'}{x(s)} {y(v)}" for i, (s, v) in enumerate(baseline))
        parts.append(f'<path class="baseline" d="{path}" fill="none" stroke="{BASELINE_COLOUR}" stroke-width="1.5" '
                     f'stroke-dasharray="2 3"><title>baseline busBW per message size</title></path>')
        parts += [f'<circle class="baseline-point" cx="{x(s)}" cy="{y(v)}" r="2.5" fill="{BASELINE_COLOUR}">'
                  f"<title>{escape(f'baseline {size_text(s)}: {v:.2f} GB/s')}</title></circle>" for s, v in baseline]
    for index, (label, points, entry) in enumerate(curves):
        failed = bool(entry and entry.get("failed"))
        marked = "failed" if failed else "regressed" if label in regressed else "passed"
        stroke = {"failed": FAILED_COLOUR, "regressed": REGRESSED_COLOUR}.get(marked, PALETTE[index % len(PALETTE)])
        width = "2.5" if marked != "passed" else "1.5"
        path = " ".join(f"{'M' if i == 0 else 'L'}{x(s)} {y(v)}" for i, (s, v) in enumerate(points))
        peak = max(v for _s, v in points)
        title = f"{label}: peak {peak:.2f} GB/s" + ("" if marked == "passed" else f" ({marked})")
        parts.append(f'<path class="curve curve-{marked}" data-group="{escape(label)}" d="{path}" fill="none" '
                     f'stroke="{stroke}" stroke-width="{width}"><title>{escape(title)}</title></path>')
    legend = [("group (passed)", PALETTE[0], ""), ("failed group", FAILED_COLOUR, ""),
              ("regressed group", REGRESSED_COLOUR, "")]
    legend += [("threshold", THRESHOLD_COLOUR, "6 4")] if limit is not None else []
    legend += [("baseline", BASELINE_COLOUR, "2 3")] if baseline else []
    for row, (text, colour, dashes) in enumerate(legend):
        ly = TOP + 10 + row * 18
        dash = f' stroke-dasharray="{dashes}"' if dashes else ""
        parts.append(f'<line class="legend-key" x1="{WIDTH - RIGHT + 14}" x2="{WIDTH - RIGHT + 40}" y1="{ly}" '
                     f'y2="{ly}" stroke="{colour}" stroke-width="2.5"{dash}/><text class="legend" '
                     f'x="{WIDTH - RIGHT + 46}" y="{ly + 4}">{escape(text)}</text>')
    parts.append("</svg>")
    return "".join(parts)


TREND_WIDTH, TREND_HEIGHT = 460, 200
TREND_LEFT, TREND_RIGHT, TREND_TOP, TREND_BOTTOM = 70, 60, 26, 56


def trend_svg(entry: Obj) -> str:
    """One figure of one category over the certifications (oldest first): a line through its points, each labelled
    with its certification; "" without points."""
    points = [(str(p.get("certification", "")), str(p.get("created") or ""), v)
              for p in entry.get("points") or [] if (v := _num(p.get("value"))) is not None]
    if not points:
        return ""
    figure, category = str(entry.get("figure", "")), str(entry.get("category", ""))
    values = [v for _c, _t, v in points]
    low, high = min(values), max(values)
    span = (high - low) or (abs(high) * 0.1) or 1.0
    low, high = low - span * 0.1, high + span * 0.1
    plot_w, plot_h = TREND_WIDTH - TREND_LEFT - TREND_RIGHT, TREND_HEIGHT - TREND_TOP - TREND_BOTTOM

    def x(index: int) -> float:
        return round(TREND_LEFT + (plot_w / 2 if len(points) == 1 else index * plot_w / (len(points) - 1)), 1)

    def y(value: float) -> float:
        return round(TREND_TOP + plot_h - (value - low) / (high - low) * plot_h, 1)

    parts = [f'<svg class="trend" xmlns="http://www.w3.org/2000/svg" width="{TREND_WIDTH}" height="{TREND_HEIGHT}" '
             f'viewBox="0 0 {TREND_WIDTH} {TREND_HEIGHT}" role="img" data-category="{escape(category)}" '
             f'data-figure="{escape(figure)}" aria-label="{escape(f"{figure} of {category} over certifications")}">',
             f'<text class="trend-title" x="{TREND_LEFT}" y="16">{escape(f"{figure} over the certifications")}</text>',
             f'<rect x="{TREND_LEFT}" y="{TREND_TOP}" width="{plot_w}" height="{plot_h}" fill="#fafafa" '
             f'stroke="#bdbdbd"/>']
    digits = max(0, 2 - math.floor(math.log10(high - low)))  # ticks that differ from each other
    for value in (low + (high - low) * i / 4 for i in range(5)):
        parts.append(f'<text class="y-tick" x="{TREND_LEFT - 6}" y="{y(value) + 4}" text-anchor="end">'
                     f"{value:.{digits}f}</text>")
    path = " ".join(f"{'M' if i == 0 else 'L'}{x(i)} {y(v)}" for i, (_c, _t, v) in enumerate(points))
    parts.append(f'<path class="trend-line" d="{path}" fill="none" stroke="#1f77b4" stroke-width="2"/>')
    for index, (name, created, value) in enumerate(points):
        title = f"{name} ({created}): {value:g}" if created else f"{name}: {value:g}"
        parts.append(f'<circle class="trend-point" cx="{x(index)}" cy="{y(value)}" r="4" fill="#1f77b4" '
                     f'data-certification="{escape(name)}"><title>{escape(title)}</title></circle>'
                     f'<text class="trend-label" x="{x(index)}" y="{TREND_TOP + plot_h + 16}" text-anchor="middle">'
                     f"{escape(name if len(name) <= 18 else name[:17] + chr(0x2026))}</text>"
                     f'<text class="trend-date" x="{x(index)}" y="{TREND_TOP + plot_h + 32}" text-anchor="middle">'
                     f"{escape(created[:10])}</text>")
    parts.append("</svg>")
    return "".join(parts)


def trends(category_key: str, comparison: Obj | None) -> list[str]:
    """The trend charts of one category (one per figure), from the comparison's trend."""
    entries = [e for e in (comparison or {}).get("trend") or [] if e.get("category") == category_key]
    return [svg for e in sorted(entries, key=lambda e: str(e.get("figure", ""))) if (svg := trend_svg(e))]
