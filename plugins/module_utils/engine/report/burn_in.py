"""A burn-in category's data (the CertReport category's `burnIn`, issue 41) as the report writers say it: the
run's facts as one line, every finding (fail and warn) as `gpu-node-002 GPU 5: node-median: median 541.2 TFLOPS is
6.1% below …`, the fleet rule's slow GPUs and nodes as warnings, and the Markdown section.

Pure: CertReport dicts in, plain values out. A category without `burnIn` is no burn-in (None, no lines). The burn-in
findings are the GEMM rows of the per-GPU evidence, said with their rule; the evidence views leave those rows to
them (`without_gemm`) so no finding is told twice.
"""
from __future__ import annotations

from typing import Any

from . import gpu_evidence as ge
from .text import md_cell

Obj = dict[str, Any]
GEMM_TEST = "gemm"  # the evidence rows' test of the burn-in harness (failures[].test)
FAIL, WARN = "fail", "warn"
SLOW_RULE = "slow"  # the fleet rule's name in the lines


def burn_in(category: Obj) -> Obj | None:
    """The category's burn-in data, or None when it is no burn-in."""
    found = category.get("burnIn")
    return found if isinstance(found, dict) else None


def number(value: Any) -> str:
    """`541.2`, or `-` for a figure that is not there (missing is never 0)."""
    return f"{value:.1f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "-"


def seconds_text(value: Any) -> str:
    return f"{value:g} s" if isinstance(value, (int, float)) and not isinstance(value, bool) else "- s"


def floor_text(found: Obj) -> str:
    """`floor 490.0 TFLOPS per GPU (provisional: it warns, never fails)`, `floor 590.0 TFLOPS per GPU`, or that
    there is none."""
    floor = found.get("floor") or {}
    if floor.get("tflops") is None:
        return "no floor for this product and dtype (none judged)"
    return (f"floor {number(floor['tflops'])} TFLOPS per GPU"
            + (" (provisional: it warns, never fails)" if floor.get("provisional") else ""))


def facts_line(found: Obj) -> str:
    """`BF16 GEMM, 30 s windows, the first 60 s dropped as warm-up; floor …; fleet median 598.2 TFLOPS`."""
    fleet = found.get("fleet") or {}
    return (f"{str(found.get('dtype') or '-').upper()} GEMM, {seconds_text(found.get('windowSeconds'))} windows, "
            f"the first {seconds_text(found.get('warmupSeconds'))} dropped as warm-up; {floor_text(found)}; "
            f"fleet median {number(fleet.get('median'))} TFLOPS")


def ruled(rule: str, message: str) -> str:
    """`rule: message`, once: a message that starts with its rule keeps it."""
    return message if message.startswith(f"{rule}:") else f"{rule}: {message}"


def gpu_name(node: str, index: Any) -> str:
    """`gpu-node-002 GPU 5`; the node alone for a finding about the whole node (index None)."""
    return node if index is None else f"{node} GPU {index}"


def findings(found: Obj) -> list[Obj]:
    """Every finding of the run, node by node, GPU by GPU, fails before warns within a GPU: node, index, outcome,
    rule and `text` (`gpu-node-002 GPU 5: node-median: …`)."""
    out = []
    for node in found.get("nodes") or []:
        for gpu in node.get("gpus") or []:
            for finding in sorted(gpu.get("findings") or [], key=lambda f: f.get("outcome") != FAIL):
                rule = str(finding.get("rule") or "")
                out.append({"node": node["node"], "index": gpu["index"], "outcome": str(finding.get("outcome")),
                            "rule": rule, "text": f"{gpu_name(node['node'], gpu['index'])}: "
                                                  f"{ruled(rule, str(finding.get('message') or ''))}"})
    return out


def slow(found: Obj) -> list[Obj]:
    """The fleet rule's slow GPUs and nodes (warnings): node, index (None for the node), ratio, `message`
    (`slow: …`) and `text` (`gpu-node-004 GPU 3: slow: …`)."""
    out = []
    for entry in (found.get("fleet") or {}).get("slow") or []:
        message = ruled(SLOW_RULE, str(entry.get("message") or ""))
        out.append({"node": entry["node"], "index": entry.get("index"), "ratio": entry.get("ratio"),
                    "message": message, "text": f"{gpu_name(entry['node'], entry.get('index'))}: {message}"})
    return out


def said(found: Obj) -> list[tuple[str, str, str]]:
    """(node, outcome, line) of every finding and then every slow GPU or node (a warning); a line below fail starts
    with `warning: `."""
    out = [(f["node"], f["outcome"], f["text"] if f["outcome"] == FAIL else f"warning: {f['text']}")
           for f in findings(found)]
    return out + [(e["node"], WARN, f"warning: {e['text']}") for e in slow(found)]


def node_lines(category: Obj) -> dict[str, tuple[list[str], list[str]]]:
    """node -> (its failing findings' lines, its warnings' lines: warned findings and the fleet rule's slow
    entries)."""
    found = burn_in(category)
    out: dict[str, tuple[list[str], list[str]]] = {}
    for node, outcome, line in said(found) if found is not None else []:
        out.setdefault(node, ([], []))[0 if outcome == FAIL else 1].append(line)
    return out


def without_gemm(category: Obj) -> Obj:
    """The category with its evidence's GEMM findings left out when the burn-in says them; unchanged otherwise."""
    return category if burn_in(category) is None else ge.without_test(category, GEMM_TEST)


def _slowest(node: Obj) -> str:
    figures = [g for g in node.get("gpus") or [] if isinstance(g.get("median"), (int, float))]
    if not figures:
        return "-"
    low = min(figures, key=lambda g: g["median"])
    return f"GPU {low['index']} {number(low['median'])}"


def markdown_lines(category: Obj) -> list[str]:
    """`Burn-in: …` (facts_line), a row per node (its median, slowest GPU, GPUs that did not pass), then every
    finding and every slow GPU or node as a line; nothing for a category that is no burn-in."""
    found = burn_in(category)
    if found is None:
        return []
    lines = [f"Burn-in: {md_cell(facts_line(found))}", "",
             "| Node | Median TFLOPS | Slowest GPU | GPUs not passing |", "|---|---|---|---|"]
    for node in found.get("nodes") or []:
        odd = ", ".join(f"GPU {g['index']} {g.get('outcome')}" for g in node.get("gpus") or []
                        if g.get("outcome") != "pass")
        lines.append(f"| {md_cell(node['node'])} | {number(node.get('median'))} | {_slowest(node)} | "
                     f"{md_cell(odd or '-')} |")
    lines.append("")
    told = [f"- {md_cell(line)}" for _node, _outcome, line in said(found)]
    return lines + told + ([""] if told else [])
