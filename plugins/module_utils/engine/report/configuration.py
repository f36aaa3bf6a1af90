"""A node-drift category's data (the CertReport category's `configuration`, issue 42) as the report writers say it:
each finding of a node (component, field, expected, observed, severity, remedy) as a line, the findings per node,
the drift table (per field the values and the nodes that hold each, the majority first and marked), the counts as
one line, and the Markdown section.

`configuration`: {nodes: [{node, findings: [{node, component gpu|nic|node, index, uuid, name, field, expected,
observed, outcome fail|warn|pass, remedy, drift: {majority, holders, of} | None}]}], drift: [{field, component,
values: [{value, nodes: [node]}], majority}]}. A finding that passed is no finding here (it is counted, never
listed). Pure: CertReport dicts in, plain values out; a category without `configuration` is no node-drift (None,
no lines). The findings are also evidence rows (test `configuration`); the evidence views leave those rows to these
lines (`without_configuration`) so no finding is told twice.
"""
from __future__ import annotations

from typing import Any

from . import burn_in as bi
from . import gpu_evidence as ge
from .text import md_cell, natural

Obj = dict[str, Any]
TEST = "configuration"  # the evidence rows' test of the node-drift category (failures[].test)
FAIL, WARN = "fail", "warn"
FOLD_AT = 8  # a value held by more nodes than this shows its count; its node list is folded (HTML) or left out (Markdown)


def configuration(category: Obj) -> Obj | None:
    """The category's configuration data, or None when it is no node-drift category."""
    found = category.get("configuration")
    return found if isinstance(found, dict) else None


def component_text(finding: Obj) -> str:
    """`GPU 2`, `NIC mlx5_3/1`, or `node` (a field of the whole node: driver, kernel, GPU count)."""
    component = finding.get("component")
    if component == "gpu" and finding.get("index") is not None:
        return f"GPU {finding['index']}"
    if component == "nic":
        return f"NIC {finding.get('name') or finding.get('index') or '-'}"
    return "node"


def drift_text(finding: Obj) -> str:
    """`majority 28.39.1002 on 7/8 nodes`, or "" for a finding against a fixed value."""
    drift = finding.get("drift")
    if not isinstance(drift, dict):
        return ""
    return f"majority {drift.get('majority')} on {drift.get('holders')}/{drift.get('of')} nodes"


def finding_text(finding: Obj) -> str:
    """`GPU 2 (GPU-…): ecc_current: expected enabled, observed disabled (…drift…); enable ECC: …`."""
    uuid = f" ({finding['uuid']})" if finding.get("component") == "gpu" and finding.get("uuid") else ""
    note = drift_text(finding)
    return (f"{component_text(finding)}{uuid}: {finding.get('field')}: expected {finding.get('expected')}, observed "
            f"{finding.get('observed')}" + (f" ({note})" if note else "") + f"; {finding.get('remedy') or '-'}")


def findings(node: Obj) -> list[Obj]:
    """A node's findings that did not pass, fails before warns, in the order given within each."""
    told = [f for f in node.get("findings") or [] if f.get("outcome") in (FAIL, WARN)]
    return sorted(told, key=lambda f: f.get("outcome") != FAIL)


def nodes(found: Obj) -> list[Obj]:
    """Every node with its outcome (fail, warn, or pass when it has no finding) and its findings, natural order."""
    out = []
    for node in sorted(found.get("nodes") or [], key=lambda n: natural(str(n.get("node")))):
        told = findings(node)
        outcome = told[0]["outcome"] if told else "pass"
        out.append({"node": str(node.get("node")), "outcome": outcome, "findings": told,
                    "checked": len(node.get("findings") or [])})
    return out


def counts_line(found: Obj) -> str:
    """`8 nodes: 4 with a failing finding, 2 with warnings only, 2 without findings; 8 findings (6 fail, 2 warn)`."""
    every = nodes(found)
    by = {o: sum(1 for n in every if n["outcome"] == o) for o in (FAIL, WARN, "pass")}
    told = [f for n in every for f in n["findings"]]
    fails = sum(1 for f in told if f["outcome"] == FAIL)
    return (f"{len(every)} node{'' if len(every) == 1 else 's'}: {by[FAIL]} with a failing finding, {by[WARN]} with "
            f"warnings only, {by['pass']} without findings; {len(told)} finding{'' if len(told) == 1 else 's'} "
            f"({fails} fail, {len(told) - fails} warn)")


def drift(found: Obj) -> list[Obj]:
    """The drift table: per field (in the given order) its component, majority, node count `of`, whether nodes
    differ, and its values, the majority first, then by how many nodes hold each (most first), each with its nodes
    (natural order), their count and whether it is the majority."""
    out = []
    for entry in found.get("drift") or []:
        majority = str(entry.get("majority"))
        held = [(str(v.get("value")), sorted((str(n) for n in v.get("nodes") or []), key=natural))
                for v in entry.get("values") or []]
        held.sort(key=lambda v: (v[0] != majority, -len(v[1]), natural(v[0])))
        out.append({"field": str(entry.get("field")), "component": str(entry.get("component") or ""),
                    "majority": majority, "of": sum(len(n) for _v, n in held), "differs": len(held) > 1,
                    "values": [{"value": v, "nodes": n, "count": len(n), "majority": v == majority} for v, n in held]})
    return out


def holders_text(value: Obj, of: int) -> str:
    """`7/8 nodes`."""
    return f"{value['count']}/{of} node{'' if of == 1 else 's'}"


def node_lines(category: Obj) -> dict[str, tuple[list[str], list[str]]]:
    """node -> (its failing findings' lines, its warnings' lines, each starting with `warning: `)."""
    found = configuration(category)
    out: dict[str, tuple[list[str], list[str]]] = {}
    for node in nodes(found) if found is not None else []:
        for finding in node["findings"]:
            fail = finding["outcome"] == FAIL
            line = f"{TEST}: {finding_text(finding)}"
            out.setdefault(node["node"], ([], []))[0 if fail else 1].append(line if fail else f"warning: {line}")
    return out


def without_configuration(category: Obj) -> Obj:
    """The category with its evidence's configuration findings left out when `configuration` says them."""
    return category if configuration(category) is None else ge.without_test(category, TEST)


def evidence_left(category: Obj) -> Obj:
    """The category's evidence without the findings its burn-in or configuration section says."""
    return without_configuration(bi.without_gemm(category))


def _value_nodes(value: Obj) -> str:
    """The nodes of a value, or their count alone when more than FOLD_AT hold it."""
    return f"{value['count']} nodes" if value["count"] > FOLD_AT else ", ".join(value["nodes"])


def markdown_lines(category: Obj) -> list[str]:
    """`Configuration: <counts>`, a row per finding (node, component, field, expected, observed, severity, remedy),
    then the drift table (a row per field and value, the majority marked); nothing for a category that is no
    node-drift."""
    found = configuration(category)
    if found is None:
        return []
    lines = [f"Configuration: {md_cell(counts_line(found))}", ""]
    told = [(n["node"], f) for n in nodes(found) for f in n["findings"]]
    if told:
        lines += ["| Node | Component | Field | Expected | Observed | Severity | Remedy |", "|---|---|---|---|---|---|---|"]
        for node, f in told:
            note = drift_text(f)
            observed = str(f.get("observed")) + (f" ({note})" if note else "")
            lines.append(f"| {md_cell(node)} | {md_cell(component_text(f))} | {md_cell(f.get('field'))} | "
                         f"{md_cell(f.get('expected'))} | {md_cell(observed)} | {f['outcome']} | "
                         f"{md_cell(f.get('remedy') or '-')} |")
        lines.append("")
    if table := drift(found):
        lines += ["| Field | Component | Value | Held by | Nodes |", "|---|---|---|---|---|"]
        for entry in table:
            for value in entry["values"]:
                mark = " (majority)" if value["majority"] and entry["differs"] else ""
                lines.append(f"| {md_cell(entry['field'])} | {md_cell(entry['component'] or '-')} | "
                             f"{md_cell(value['value'])}{mark} | {holders_text(value, entry['of'])} | "
                             f"{md_cell(_value_nodes(value))} |")
        lines.append("")
    return lines
