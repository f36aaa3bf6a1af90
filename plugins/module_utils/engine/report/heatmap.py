"""The group bandwidth of one category as a picture: an inline SVG heat map, one row per rack/clique (the node's
group lies in one topology domain) or else per group, one cell per node, coloured by its group's peak busBW.

Pure: a CategoryReport in, SVG text out (every text escaped); no figures, no picture.
"""
from __future__ import annotations

from html import escape

from .text import natural

# Large enough to read: each cell shows its group's figure, and its node, group and figure on hover (`<title>`).
CELL, GAP, LABEL_WIDTH, TOP, COLUMNS = 40, 4, 160, 26, 24
# Low to high: red, amber, green (a diverging scale reads "worse / better" without a legend lookup).
STOPS = ((0.0, (215, 48, 39)), (0.5, (254, 224, 139)), (1.0, (26, 152, 80)))
NO_FIGURE = "#c8c8c8"
SINGLE_NODE_ROW = "one-node groups"


def colour(value: float, low: float, high: float) -> str:
    """The scale's colour for `value` in [low, high] (the middle stop when every group measured the same)."""
    where = 0.5 if high <= low else min(max((value - low) / (high - low), 0.0), 1.0)
    for (at_a, rgb_a), (at_b, rgb_b) in zip(STOPS, STOPS[1:]):
        if where <= at_b:
            share = (where - at_a) / (at_b - at_a)
            red, green, blue = (round(a + (b - a) * share) for a, b in zip(rgb_a, rgb_b))
            return f"#{red:02x}{green:02x}{blue:02x}"
    return "#{:02x}{:02x}{:02x}".format(*STOPS[-1][1])


def rows(category: dict) -> tuple[str, dict[str, list[tuple[str, dict | None]]]]:
    """("rack" or "group", row label -> [(node, its group's bandwidth entry or None)]) for the nodes of measured
    or failed groups. Without topology a row is a group; one-node groups (per-node Jobs) share one row."""
    figures = {entry["groupName"]: entry for entry in category.get("groupBandwidth") or []}
    verdicts = category.get("nodes") or {}
    members = [(node, v) for node, v in verdicts.items() if v.get("group") in figures or v.get("status") == "Failed"]
    by_rack = all(v.get("rack") for _node, v in members)
    sizes: dict[str, int] = {}
    for _node, verdict in members:
        sizes[verdict.get("group", "")] = sizes.get(verdict.get("group", ""), 0) + 1
    out: dict[str, list[tuple[str, dict | None]]] = {}
    for node, verdict in sorted(members, key=lambda item: natural(item[0])):
        group = verdict.get("group", "")
        key = verdict["rack"] if by_rack else (group if sizes[group] > 1 else SINGLE_NODE_ROW)
        out.setdefault(key, []).append((node, figures.get(group)))
    return ("rack" if by_rack else "group"), dict(sorted(out.items(), key=lambda item: natural(item[0])))


def _cell(x: int, y: int, node: str, verdict: dict, entry: dict | None, low: float, high: float) -> str:
    status = verdict.get("status", "")
    if entry is None:
        fill, figure, label = NO_FIGURE, "", "no figure"
    else:
        fill, figure, label = colour(entry["busBW"], low, high), f"{entry['busBW']:.2f}", f"{entry['busBW']:.2f} GB/s"
    below = entry is not None and entry.get("belowMin")
    stroke = ' stroke="#7a0000" stroke-width="2"' if below or status == "Failed" else ""
    title = (f"node {node} · group {verdict.get('group') or '-'} · {label} · {status}"
             + (" · below minimum" if below else ""))
    shown = f"{entry['busBW']:.0f}" if entry is not None else "-"
    return (f'<rect class="cell" x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="{fill}"{stroke} '
            f'data-node="{escape(node)}" data-busbw="{figure}" data-status="{escape(status)}" '
            f'data-group="{escape(verdict.get("group") or "")}"><title>{escape(title)}</title></rect>'
            f'<text class="cell-value" x="{x + CELL / 2}" y="{y + CELL / 2 + 4}" text-anchor="middle" '
            f'pointer-events="none">{shown}</text>')


def heatmap_svg(category: dict) -> str:
    """The heat map of one category, or "" when it measured no group bandwidth."""
    entries = category.get("groupBandwidth") or []
    if not entries:
        return ""
    kind, table = rows(category)
    values = [e["busBW"] for e in entries]
    low, high = min(values), max(values)
    verdicts = category.get("nodes") or {}
    # A row longer than COLUMNS cells wraps onto further lines under its label.
    lines = {label: -(-len(cells) // COLUMNS) for label, cells in table.items()}
    widest = min(COLUMNS, max((len(cells) for cells in table.values()), default=1))
    width = max(LABEL_WIDTH + widest * (CELL + GAP) + GAP, 260)
    height = TOP + sum(lines.values()) * (CELL + GAP) + 34
    parts = [f'<svg class="heatmap" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="busBW per node by {kind}">',
             f'<text x="4" y="17" class="axis">{kind} \u00d7 node (peak busBW, GB/s)</text>']
    line = 0
    for label, cells in table.items():
        y = TOP + line * (CELL + GAP)
        parts.append(f'<text x="4" y="{y + CELL / 2 + 4}" class="row-label">{escape(label)}</text>')
        for column, (node, entry) in enumerate(cells):
            at_y = y + (column // COLUMNS) * (CELL + GAP)
            parts.append(_cell(LABEL_WIDTH + (column % COLUMNS) * (CELL + GAP), at_y, node, verdicts[node], entry,
                               low, high))
        line += lines[label]
    legend_y = TOP + line * (CELL + GAP) + 8
    parts.append(f'<rect x="4" y="{legend_y}" width="12" height="12" fill="{colour(low, low, high)}"/>'
                 f'<text x="20" y="{legend_y + 11}" class="legend">{low:.2f}</text>'
                 f'<rect x="80" y="{legend_y}" width="12" height="12" fill="{colour(high, low, high)}"/>'
                 f'<text x="96" y="{legend_y + 11}" class="legend">{high:.2f}</text>'
                 f'<rect x="160" y="{legend_y}" width="12" height="12" fill="{NO_FIGURE}"/>'
                 f'<text x="176" y="{legend_y + 11}" class="legend">no figure</text>')
    parts.append("</svg>")
    return "".join(parts)
