"""report.md: a CertReport as Markdown (surroundings.md §3.5): per category its facts, bandwidth table, groups,
nodes, burn-in (its facts, each node's median, every finding with its GPU, rule and numbers, the slow GPUs),
configuration (a node-drift category's findings per node and its drift table) and per-GPU evidence (its state and
the GPUs that warned or failed), then the comparison with earlier runs, the remedies and the Summary."""
from __future__ import annotations

from typing import Any

from ..api.vocabulary import SUCCEEDED as PHASE_SUCCEEDED
from . import burn_in as bi
from . import comparison_text, diagnose_report
from . import configuration as cfg
from . import gpu_evidence as ge
from .text import NODE_FAILED, NODE_PASSED, md_cell, natural, size_text


def _group_rows(cat: dict) -> list[str]:
    """The final iteration's groups that failed or were measured: verdict, reason and figure side by side."""
    rows: dict[str, dict[str, Any]] = {}
    for entry in cat["failedGroups"]:
        rows[entry["name"]] = {"failed": True, "reason": entry["reason"], "figures": []}
    for entry in cat["groupBandwidth"]:
        row = rows.setdefault(entry["groupName"], {"failed": entry["failed"], "reason": "", "figures": []})
        row["figures"].append(f"BusBW {entry['busBW']:.2f} GB/s" + (" (below minimum)" if entry["belowMin"] else ""))
    for entry in cat["domains"]:
        row = rows.setdefault(entry["name"], {"failed": False, "reason": "", "figures": []})
        row["figures"].append(f"Goodput {entry['goodput']:.2f}, {entry['tflops']:.2f} TFLOPs/GPU, "
                              f"step {entry['stepTime']:.2f}s")
    members: dict[str, list[str]] = {}
    for node, verdict in cat["nodes"].items():
        members.setdefault(verdict["group"], []).append(node)
    return [f"| {md_cell(name)} | {md_cell(', '.join(members.get(name, [])) or '-')} | "
            f"{NODE_FAILED if row['failed'] else NODE_PASSED} | {md_cell(row['reason'])} | "
            f"{md_cell('; '.join(row['figures']) or '-')} |" for name, row in sorted(rows.items(), key=lambda i: natural(i[0]))]


def _training_lines(domains: list[dict]) -> list[str]:
    """NVCRE's averages over the category's domains."""
    if not domains:
        return []
    goodput, tflops, step = (sum(d[k] for d in domains) / len(domains) for k in ("goodput", "tflops", "stepTime"))
    return [f"| Avg Runtime Goodput | {goodput:.2f} ({goodput * 100:.0f}%) |", f"| Avg TFLOPs/GPU | {tflops:.2f} |",
            f"| Avg Step Time | {step:.2f}s |"]


def _evidence_lines(cat: dict) -> list[str]:
    """The category's evidence state, its partial reasons, and a row per finding of a GPU that did not pass (node,
    GPU index, UUID, outcome, test, message); nothing for a category without an evidence reader."""
    found = ge.evidence(cat)
    if found is None:
        return []
    counts = ge.counts_line(cat)
    lines = [f"GPU evidence: {ge.state_line(found)}" + (f"; {counts}" if counts else ""), ""]
    lines += [line for why in found.get("partial") or [] for line in (f"Partial: {md_cell(why)}", "")]
    if problems := ge.problems(cat):
        lines += ["| Node | GPU | UUID | Outcome | Test | Message |", "|---|---|---|---|---|---|"]
        lines += [f"| {md_cell(p['node'])} | {p['index']} | {md_cell(p['uuid'] or '-')} | {p['outcome']} "
                  f"| {md_cell(p['test'] or '-')} | {md_cell(p['message'])} |" for p in problems]
        lines.append("")
    return lines


def _failing_gpus_line(report: dict) -> list[str]:
    """`- Failing GPUs: 2 (gpu-node-1 GPU 3, …)` (`, evidence partial` when not final) when a category has an
    evidence reader."""
    state = ge.report_state(report)
    if state is None:
        return []
    found = ge.failing(report)
    named = ", ".join(f"{node} GPU {index}" for node, index in found)
    return [f"- Failing GPUs: {len(found)}" + (f" ({named})" if named else "")
            + ("" if state == "final" else f", evidence {state}")]


def markdown(report: dict) -> str:
    """Per category its facts, the bandwidth table, its groups with their figures, the diagnose findings, its
    nodes; then the Summary."""
    lines = [f"# {report['title']}: {report['name']}", "",
             "| Platform | GPU | Total Nodes | Excluded Nodes |", "|---|---|---|---|",
             f"| {md_cell(report['platform'] or '-')} | {md_cell(report['gpu'] or '-')} | {report['totalNodes']} "
             f"| {len(report['excludedNodes'])} |", ""]
    if report["exclusionReason"]:
        lines += [f"Excluded: {md_cell(report['exclusionReason'])}", ""]
    for cat in report["categories"]:
        lines += [f"## {cat['domain']}/{cat['variant']}", "", "| Field | Value |", "|---|---|",
                  f"| Workflow | {md_cell(cat['workflow'] or '-')} |", f"| Status | {cat['status']} |"]
        if cat["failureReason"]:
            lines.append(f"| Failure | {md_cell(cat['failureReason'])} |")
        lines += [f"| Duration | {cat['runtime'] or '-'} |", f"| Test Scale | {cat['testScale'] or '-'} |",
                  f"| Nodes/Job | {cat['nodesPerJob']} |", f"| Jobs | {cat['jobs']} |"]
        if cat.get("sourcePath"):
            lines.append(f"| Catalog entry | {md_cell(cat['sourcePath'])} (user) |")
        if cat["mnnvl"]:
            lines.append(f"| MNNVL | {cat['mnnvl']} |")
        if cat["transport"]:
            lines.append(f"| Transport | {md_cell(', '.join(cat['transport']))} |")
        lines += [*_training_lines(cat["domains"]), ""]
        lines += [line for warning in cat.get("warnings") or [] for line in (f"Warning: {md_cell(warning)}", "")]
        if cat["bandwidth"]:
            lines += ["| Size | AlgBW | BusBW | Samples |", "|---|---|---|---|"]
            lines += [f"| {size_text(b['size'])} | {b['algBW']:.2f} GB/s | {b['busBW']:.2f} GB/s | {b['samples']} |"
                      for b in cat["bandwidth"]]
            lines.append("")
        if groups := _group_rows(cat):
            lines += ["| Group | Nodes | Status | Reason | Measured |", "|---|---|---|---|---|", *groups, ""]
        lines += diagnose_report.diagnose_lines(cat)
        if cat["nodes"]:
            lines += ["| Node | Group | Status | Reason | Message |", "|---|---|---|---|---|"]
            lines += [f"| {md_cell(n)} | {md_cell(v['group'] or '-')} | {v['status']} | {md_cell(v['reason'])} "
                      f"| {md_cell(v['message'])} |" for n, v in cat["nodes"].items()]
            lines.append("")
        lines += [*bi.markdown_lines(cat), *cfg.markdown_lines(cat), *_evidence_lines(cfg.evidence_left(cat))]
    lines += [*comparison_text.markdown_lines(report), *comparison_text.remedy_lines(report)]
    passed = sum(1 for c in report["categories"] if c["status"] == PHASE_SUCCEEDED)
    failed_nodes = [e["name"] for e in report["failedNodes"]]
    lines += ["## Summary", "", f"- Categories: {passed}/{len(report['categories'])} passed",
              f"- Failed Nodes: {len(failed_nodes)}" + (f" ({', '.join(failed_nodes)})" if failed_nodes else ""),
              *_failing_gpus_line(report), f"- Result: {report['result']}", ""]
    return "\n".join(lines)
