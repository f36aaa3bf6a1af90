"""A burn-in category in report.html: per node a small inline SVG of its GPUs' TFLOPS over time, with the floor
(dashed, marked provisional when it is), the node's median and the shaded warm-up, its findings beside it; what
templates/burn_in.html.j2 shows.

One chart per node, one line per GPU: the node-median rule compares a GPU with the other GPUs of its node, so the
slow GPU is the line that sits apart from its seven neighbours on the same axes (eight charts per node would hide
exactly that, and make 8,000 charts of a 1,000-node fleet). Passing GPUs are one quiet grey, so the failing GPU's
red and a warned GPU's orange are the only colours; every chart of the category shares one TFLOPS axis, so a node
that runs slow as a whole (a lowered power limit) sits low against the floor. Nodes with a GPU that did not pass,
a finding or a slow entry come first and open; the others are folded below them, as the per-GPU grid does, each
drawn as the band its GPUs span.
Pure: dicts in, dicts and SVG text out, every text escaped.
"""
from __future__ import annotations

from html import escape
from typing import Any

from . import burn_in as bi
from . import pages

Obj = dict[str, Any]
WIDTH, HEIGHT = 400, 200
LEFT, RIGHT, TOP, BOTTOM = 44, 52, 24, 32
PASS_COLOUR, WARN_COLOUR, FAIL_COLOUR = "#90a4ae", "#ef6c00", "#c62828"
FLOOR_COLOUR, MEDIAN_COLOUR, WARMUP_FILL = "#444444", "#1565c0", "#ececec"
STYLES = {"pass": (PASS_COLOUR, "1.2"), bi.WARN: (WARN_COLOUR, "2"), bi.FAIL: (FAIL_COLOUR, "2.5")}
LABEL_GAP = 11  # a label's height at the chart's 11px font
MINUTE_STEPS = (1, 2, 5, 10, 15, 30, 60, 120)
LEGEND = (("bl-pass", "GPU (passed)"), ("bl-warn", "GPU that warned"), ("bl-fail", "GPU that failed"),
          ("bl-band", "GPUs of a node that passed"),
          ("bl-median", "node median"), ("bl-floor", "floor"), ("bl-warmup", "warm-up (not judged)"))


def _points(gpu: Obj) -> list[tuple[float, float]]:
    """(window, TFLOPS) of the series, windows in order; a malformed pair is no point."""
    out = [(float(p[0]), float(p[1])) for p in gpu.get("series") or []
           if isinstance(p, (list, tuple)) and len(p) == 2
           and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in p)]
    return sorted(out)


def span(found: Obj) -> tuple[float, float, float]:
    """(lowest, highest TFLOPS, seconds) the category's charts share: every point, the floor and the medians."""
    values = [v for n in found.get("nodes") or [] for g in n.get("gpus") or [] for _w, v in _points(g)]
    values += [n["median"] for n in found.get("nodes") or [] if isinstance(n.get("median"), (int, float))]
    floor = (found.get("floor") or {}).get("tflops")
    values += [floor] if isinstance(floor, (int, float)) else []
    windows = [w for n in found.get("nodes") or [] for g in n.get("gpus") or [] for w, _v in _points(g)]
    seconds = (max(windows, default=0) + 1) * _window(found)
    if not values:
        return 0.0, 1.0, seconds
    low, high = min(values), max(values)
    pad = (high - low) * 0.06 or abs(high) * 0.05 or 1.0
    return low - pad, high + pad, seconds


def _window(found: Obj) -> float:
    value = found.get("windowSeconds")
    return float(value) if isinstance(value, (int, float)) and value > 0 else 30.0


def _minute_ticks(seconds: float) -> list[int]:
    minutes = seconds / 60
    step = next((s for s in MINUTE_STEPS if minutes / s <= 6), MINUTE_STEPS[-1])
    return list(range(0, int(minutes) + 1, step))


def node_svg(found: Obj, node: Obj, domain: tuple[float, float, float], band: bool = False) -> str:
    """One node's chart: a line per GPU (at the middle of each window), the floor, the node median, the warm-up.
    `band` (a node whose every GPU passed, folded away): its GPUs as one band from the lowest to the highest GPU of
    each window, a fraction of the bytes of eight lines, so a 1,000-node page stays small."""
    low, high, seconds = domain
    window, plot_w, plot_h = _window(found), WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    name = str(node["node"])

    def x(at: float) -> float:
        return round(LEFT + min(at, seconds) / (seconds or 1) * plot_w, 1)

    def y(value: float) -> float:
        return round(TOP + plot_h - (value - low) / ((high - low) or 1) * plot_h, 1)

    parts = [f'<svg class="burn-in-chart" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
             f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" data-node="{escape(name)}" '
             f'aria-label="{escape(f"TFLOPS per GPU over time, {name}")}">',
             f'<text class="chart-title" x="{LEFT}" y="15">{escape(name)}: median {bi.number(node.get("median"))} '
             f'TFLOPS</text>',
             f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="#fafafa" stroke="#bdbdbd"/>']
    warmup = found.get("warmupSeconds")
    if isinstance(warmup, (int, float)) and warmup > 0:
        parts.append(f'<rect class="warmup" x="{LEFT}" y="{TOP}" width="{round(x(warmup) - LEFT, 1)}" '
                     f'height="{plot_h}" fill="{WARMUP_FILL}"><title>{escape(f"warm-up: the first {warmup:g} s, not judged")}'
                     f'</title></rect>')
    for value in (low + (high - low) * i / 3 for i in range(4)):
        parts.append(f'<text class="y-tick" x="{LEFT - 4}" y="{y(value) + 4}" text-anchor="end">{value:.0f}</text>')
    for minute in _minute_ticks(seconds):
        parts.append(f'<text class="x-tick" x="{x(minute * 60)}" y="{TOP + plot_h + 14}" text-anchor="middle">'
                     f'{minute}</text>')
    parts.append(f'<text class="axis" x="{LEFT + plot_w / 2}" y="{HEIGHT - 4}" text-anchor="middle">minutes '
                 f'(TFLOPS per GPU)</text>')
    floor = found.get("floor") or {}
    if isinstance(floor.get("tflops"), (int, float)):
        provisional = bool(floor.get("provisional"))
        label = f"floor {bi.number(floor['tflops'])}" + (" provisional" if provisional else "")
        parts.append(_level("floor" + (" floor-provisional" if provisional else ""), y(floor["tflops"]), FLOOR_COLOUR,
                            "6 4", label, bi.floor_text(found)))
    if isinstance(node.get("median"), (int, float)):
        parts.append(_level("node-median", y(node["median"]), MEDIAN_COLOUR, "2 2", "median",
                            f"node median {bi.number(node['median'])} TFLOPS", right=True))
    # Passing GPUs first, so the warned and the failing ones are drawn over them.
    labels: list[tuple[float, str, int]] = []
    ordered = sorted(node.get("gpus") or [], key=lambda g: (g.get("outcome") == bi.FAIL, g.get("outcome") == bi.WARN))
    for gpu in [] if band else ordered:
        points = _points(gpu)
        if not points:
            continue
        outcome = str(gpu.get("outcome") or "")
        colour, width = STYLES.get(outcome, STYLES["pass"])
        # Whole pixels and the implicit lineto after M: 1,000 nodes of 8 GPUs stay a few MB.
        path = "M" + " ".join(f"{round(x((w + 0.5) * window))} {round(y(v))}" for w, v in points)
        rules = ", ".join(dict.fromkeys(str(f.get("rule")) for f in gpu.get("findings") or []))
        title = (f"GPU {gpu['index']}" + (f" ({gpu['uuid']})" if gpu.get("uuid") else "")
                 + f": median {bi.number(gpu.get('median'))} TFLOPS, {outcome}" + (f" ({rules})" if rules else ""))
        parts.append(f'<path class="gpu-series gpu-series-{escape(outcome)}" data-gpu="{gpu["index"]}" '
                     f'data-outcome="{escape(outcome)}" d="{path}" fill="none" stroke="{colour}" '
                     f'stroke-width="{width}"><title>{escape(title)}</title></path>')
        if outcome in (bi.FAIL, bi.WARN):
            labels.append((y(points[-1][1]) + 4, colour, gpu["index"]))
    parts += _band(node, x, y, window) if band else _labels(labels, LEFT + plot_w + 4)
    parts.append("</svg>")
    return "".join(parts)


def _band(node: Obj, x: Any, y: Any, window: float) -> list[str]:
    """The node's GPUs as one shape: along the highest GPU of each window, back along the lowest."""
    by_window: dict[float, list[float]] = {}
    for gpu in node.get("gpus") or []:
        for at, value in _points(gpu):
            by_window.setdefault(at, []).append(value)
    if not by_window:
        return []
    windows = sorted(by_window)
    edge = [(w, max(by_window[w])) for w in windows] + [(w, min(by_window[w])) for w in reversed(windows)]
    medians = [g["median"] for g in node.get("gpus") or [] if isinstance(g.get("median"), (int, float))]
    title = (f"{len(node.get('gpus') or [])} GPUs, every one passed"
             + (f": medians {bi.number(min(medians))} to {bi.number(max(medians))} TFLOPS" if medians else ""))
    path = "M" + " ".join(f"{round(x((w + 0.5) * window))} {round(y(v))}" for w, v in edge) + "Z"
    return [f'<path class="gpu-band" d="{path}" fill="{PASS_COLOUR}" fill-opacity="0.6" stroke="{PASS_COLOUR}" '
            f'stroke-width="1"><title>{escape(title)}</title></path>']


def _labels(labels: list[tuple[float, str, int]], at: float) -> list[str]:
    """`GPU 5` at the end of each line that did not pass, pushed apart so that none covers another."""
    out, last = [], -1e9
    for where, colour, index in sorted(labels):
        last = max(where, last + LABEL_GAP)
        out.append(f'<text class="gpu-label" x="{at}" y="{last}" fill="{colour}">GPU {index}</text>')
    return out


def _level(css: str, at: float, colour: str, dashes: str, label: str, title: str, right: bool = False) -> str:
    """A horizontal line across the plot with its label above it, at the left (or the right: the floor's and the
    median's labels never sit on each other)."""
    where = f'x="{WIDTH - RIGHT - 4}" text-anchor="end"' if right else f'x="{LEFT + 4}"'
    return (f'<line class="{css}" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{at}" y2="{at}" stroke="{colour}" '
            f'stroke-width="1.5" stroke-dasharray="{dashes}"><title>{escape(title)}</title></line>'
            f'<text class="level-label" {where} y="{at - 3}" fill="{colour}">{escape(label)}</text>')


def _node_view(found: Obj, node: Obj, domain: tuple[float, float, float], slow: list[Obj]) -> Obj:
    told = [{"css": f"finding-{f['outcome']}", "text": f["text"]} for f in bi.findings({"nodes": [node]})]
    told += [{"css": "finding-warn", "text": e["text"]} for e in slow if e["node"] == node["node"]]
    outcomes = {str(g.get("outcome")) for g in node.get("gpus") or []}
    worst = next((o for o in (bi.FAIL, bi.WARN) if o in outcomes), "pass")
    passed = worst == "pass" and not told
    return {"node": node["node"], "outcome": worst, "passed": passed, "findings": told,
            "svg": pages.markup(node_svg(found, node, domain, band=passed))}


def view(category: Obj) -> Obj | None:
    """The burn-in section of a category, or None when it is no burn-in."""
    found = bi.burn_in(category)
    if found is None:
        return None
    domain, slow = span(found), bi.slow(found)
    nodes = [_node_view(found, n, domain, slow) for n in found.get("nodes") or []]
    floor = found.get("floor") or {}
    return {"facts": bi.facts_line(found), "provisional": bool(floor.get("provisional")),
            "legend": [{"css": css, "text": text} for css, text in LEGEND],
            "attention": [n for n in nodes if not n["passed"]], "passing": [n for n in nodes if n["passed"]],
            "slow": [{"node": e["node"], "index": "-" if e["index"] is None else e["index"],
                      "ratio": f"{e['ratio']:.3f}" if isinstance(e.get("ratio"), (int, float)) else "-",
                      "message": e["message"]} for e in slow]}
