"""fleet.md: the fleet table (a row per inventory host), the burn-in across the clusters (each product's fleet
median, the slow GPUs and nodes), the configuration across the clusters (nodes with findings, fields that differ),
then per cluster the change since its last certification,
its repeat offenders, its node × category matrix and its group bandwidth by rack/clique (the heat map's figures,
as text)."""
from __future__ import annotations

from typing import Any

from .comparison_text import offender_lines
from .fleet import ERROR, config_text, fleet_counts, gpus_text, since_text
from .fleet_burn_in import group_text
from .fleet_configuration import drift_text
from .heatmap import rows as heatmap_rows
from .text import md_cell, natural

Obj = dict[str, Any]


def fleet_table(fleet: Obj) -> list[str]:
    lines = ["| Host | Verdict | Certification | Categories | Failed Nodes | Failing GPUs | Configuration findings "
             "| Duration | Error |", "|---|---|---|---|---|---|---|---|---|"]
    for row in fleet["rows"]:
        failed = "; ".join(f"{n['name']}: {n['reason']}" if n["reason"] else n["name"] for n in row["failedNodes"])
        error = f"{row['error']['kind']}: {row['error']['message']}" if row["error"] else ""
        categories = f"{row['categoriesPassed']}/{row['categoriesTotal']}" if row["verdict"] != ERROR else "-"
        lines.append(f"| {md_cell(row['host'])} | {row['verdict']} | {md_cell(row['name'] or '-')} | {categories} "
                     f"| {md_cell(failed or '-')} | {gpus_text(row) or '-'} | {config_text(row) or '-'} "
                     f"| {row['duration'] or '-'} "
                     f"| {md_cell(error or '-')} |")
    return lines


def burn_in_lines(fleet: Obj) -> list[str]:
    """The burn-in across the clusters: each product and dtype's fleet median, then every slow GPU or node as a
    warning; nothing when no report has a burn-in."""
    found = fleet.get("burnIn")
    if not found:
        return []
    lines = ["## Burn-in across the clusters", "", *(f"- {md_cell(group_text(g))}" for g in found["groups"]), ""]
    slow = [f"- warning: {md_cell(s['text'])}" for s in found["slow"]]
    return lines + (slow + [""] if slow else ["No GPU or node is slow against the fleet.", ""])


def configuration_lines(fleet: Obj) -> list[str]:
    """Node drift across the clusters: the nodes with configuration findings, then each field whose values differ
    across the clusters with its values and their nodes per host; nothing when no report has a node-drift
    category."""
    found = fleet.get("configuration")
    if not found:
        return []
    lines = ["## Configuration across the clusters", "",
             f"Nodes with configuration findings: {found['nodes']} in {found['clusters']} "
             f"cluster{'' if found['clusters'] == 1 else 's'}", ""]
    drift = [f"- {md_cell(drift_text(e))}" for e in found["drift"]]
    return lines + (drift + [""] if drift else ["No field differs across the clusters.", ""])


def history_lines(row: Obj, report: Obj) -> list[str]:
    """The change since the cluster's last certification and its repeat offenders (nothing for an older report)."""
    since = since_text(row)
    if not since:
        return []
    return [f"Since the last certification: {md_cell(since)}", "", *offender_lines(report.get("comparison") or {})]


def matrix_lines(report: Obj) -> list[str]:
    categories = report.get("categories") or []
    nodes = sorted({n for c in categories for n in c.get("nodes") or {}}, key=natural)
    if not nodes:
        return []
    keys = [f"{c['domain']}/{c['variant']}" for c in categories]
    lines = [f"| Node | {' | '.join(md_cell(k) for k in keys)} |", "|---" * (len(keys) + 1) + "|"]
    for node in nodes:
        cells = [((c.get("nodes") or {}).get(node) or {}).get("status", "-") for c in categories]
        lines.append(f"| {md_cell(node)} | {' | '.join(cells)} |")
    return [*lines, ""]


def bandwidth_lines(report: Obj) -> list[str]:
    """Per category with group bandwidth: one line per rack/clique (or group) with each node's busBW."""
    lines = []
    for category in report.get("categories") or []:
        if not category.get("groupBandwidth"):
            continue
        kind, table = heatmap_rows(category)
        lines += [f"Group bandwidth of {category['domain']}/{category['variant']} (peak busBW, GB/s):", "",
                  f"| {kind.capitalize()} | Nodes |", "|---|---|"]
        for label, cells in table.items():
            figures = ", ".join(f"{node} {entry['busBW']:.2f}" if entry else f"{node} -" for node, entry in cells)
            lines.append(f"| {md_cell(label)} | {md_cell(figures)} |")
        lines.append("")
    return lines


def fleet_markdown(fleet: Obj, reports: dict[str, Obj]) -> str:
    """`reports`: host -> the CertReport its row shows (hosts stopped by an error have none)."""
    lines = [f"# {fleet['title']}", "", f"Result: {fleet['result']} ({fleet_counts(fleet)})", "",
             *fleet_table(fleet), "", *burn_in_lines(fleet), *configuration_lines(fleet)]
    for row in fleet["rows"]:
        report = reports.get(row["host"])
        if report is None:
            continue
        lines += [f"## {md_cell(row['host'])}: {md_cell(report['name'])} ({report['result']})", "",
                  *history_lines(row, report), *matrix_lines(report), *bandwidth_lines(report)]
    return "\n".join(lines).rstrip("\n") + "\n"
