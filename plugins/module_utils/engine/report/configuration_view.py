"""A node-drift category in report.html: its findings per node (component, field, expected, observed, severity,
remedy) and the drift table (per field each value with the nodes that hold it, the majority marked), what
templates/configuration.html.j2 shows.

Read at 1,000 nodes: the nodes with a failing finding are open; the nodes with warnings only are open while they
are few (WARNED_OPEN) and folded beyond; the nodes without findings are folded to their names. In the drift table
the fields whose nodes differ come first and open, each value's nodes listed, a value held by more than FOLD_AT
nodes (the majority of a large fleet) showing its count with its node list folded; the fields every node agrees on
are folded below. So 3 nodes on other NIC firmware read as one row under a majority of 997.
Pure: dicts in, dicts out (autoescape escapes every text).
"""
from __future__ import annotations

from typing import Any

from . import configuration as cfg

Obj = dict[str, Any]
WARNED_OPEN = 20  # more nodes with warnings only than this are folded


def _row(finding: Obj) -> Obj:
    return {"component": cfg.component_text(finding), "uuid": str(finding.get("uuid") or ""),
            "field": str(finding.get("field")), "expected": str(finding.get("expected")),
            "observed": str(finding.get("observed")), "drift": cfg.drift_text(finding),
            "outcome": finding["outcome"], "remedy": str(finding.get("remedy") or "")}


def _field(entry: Obj) -> Obj:
    return {**entry, "values": [{**v, "held": cfg.holders_text(v, entry["of"]), "folded": v["count"] > cfg.FOLD_AT}
                                for v in entry["values"]]}


def view(category: Obj) -> Obj | None:
    """The configuration section of a category, or None when it is no node-drift category."""
    found = cfg.configuration(category)
    if found is None:
        return None
    every = cfg.nodes(found)
    shown = [{"node": n["node"], "outcome": n["outcome"], "rows": [_row(f) for f in n["findings"]]} for n in every]
    warned = [n for n in shown if n["outcome"] == cfg.WARN]
    table = [_field(e) for e in cfg.drift(found)]
    return {"counts": cfg.counts_line(found), "failing": [n for n in shown if n["outcome"] == cfg.FAIL],
            "warned": warned, "warnedOpen": len(warned) <= WARNED_OPEN,
            "clean": [n["node"] for n in every if n["outcome"] == "pass"],
            "drift": [e for e in table if e["differs"]], "agreeing": [e for e in table if not e["differs"]]}
