"""The per-node × per-GPU grid of report.html: what templates/cluster.html.j2 shows of a category's evidence.

One row per node, one cell per GPU index, the cell's class its GPU's kind (outcome, lacking evidence, missing), its
text the index and the tests that warned or failed, its title (hover) every finding with DCGM's message. Nodes with
a GPU that did not pass come first and open; the nodes whose every GPU passed are folded away below them, so a
1,000-node report opens on the few rows that matter (the DOM still holds every cell). The findings table leaves a
burn-in's GEMM findings to the burn-in charts beside it, and a node-drift category's findings to its configuration
section. Pure: dicts in, dicts out.
"""
from __future__ import annotations

from typing import Any

from . import configuration as cfg
from . import gpu_evidence as ge

Obj = dict[str, Any]
# The legend, in the order a reader meets them: each kind's class and what it means.
LEGEND = (("gpu-pass", "pass"), ("gpu-warn", "warn"), ("gpu-fail", "fail"), ("gpu-skip", "skip (nothing else ran)"),
          ("gpu-warn gpu-lacking", "lacking evidence (striped; red when lacking evidence fails)"),
          ("gpu-fail gpu-missing", "missing from the tool's output"), ("gpu-none", "no row for this index"))


def cell(gpu: Obj | None, node: str, index: int) -> Obj:
    """One GPU's cell; an index the node has no row for (another node has) is a grey `-`."""
    if gpu is None:
        return {"css": "gpu gpu-none", "text": "-", "title": f"{node} GPU {index}: no evidence row", "kind": "none",
                "index": index}
    kind, findings = ge.kind(gpu), ge.findings(gpu)
    css = f"gpu gpu-{gpu.get('outcome') or ge.SKIP}" + (f" gpu-{kind}" if kind in (ge.LACKING, ge.MISSING) else "")
    tests = list(dict.fromkeys(str(f["test"]) for f in findings if f.get("test")))
    label = {ge.LACKING: "lacking", ge.MISSING: "missing"}.get(kind) or (
        tests[0] + (f" +{len(tests) - 1}" if len(tests) > 1 else "") if tests else "")
    title = "\n".join([f"{node} {ge.name(gpu)}: {gpu.get('outcome')}"
                       + (" (lacking evidence)" if kind == ge.LACKING else ""),
                       *(ge.finding_text(f) for f in findings)])
    return {"css": css, "text": f"{gpu['index']} {label}".rstrip(), "title": title, "kind": kind,
            "index": gpu["index"]}


def grid(category: Obj) -> Obj | None:
    """The category's evidence view, or None when its workload has no evidence reader."""
    found = ge.evidence(category)
    if found is None:
        return None
    by_node: dict[str, dict[int, Obj]] = {}
    for gpu in ge.gpus(category):  # already sorted by node (natural order), then index
        by_node.setdefault(gpu["node"], {})[gpu["index"]] = gpu
    columns = sorted({index for gpus in by_node.values() for index in gpus})
    rows: list[Obj] = [{"node": node, "cells": [cell(gpus.get(i), node, i) for i in columns]}
                       for node, gpus in by_node.items()]
    attention: list[Obj] = []
    passing: list[Obj] = []
    for row in rows:
        (passing if all(c["kind"] in (ge.PASS, "none") for c in row["cells"]) else attention).append(row)
    return {"state": str(found.get("state") or "missing"), "line": ge.state_line(found),
            "partial": [str(p) for p in found.get("partial") or []], "counts": ge.counts_line(category),
            "headers": ["Node", *(f"GPU {i}" for i in columns)], "attention": attention, "passing": passing,
            "problems": ge.problems(cfg.evidence_left(category)),
            "legend": [{"css": f"gpu {css}", "text": text} for css, text in LEGEND]}
