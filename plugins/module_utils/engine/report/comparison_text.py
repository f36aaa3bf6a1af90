"""The "Compared with" section of the report (Markdown, JUnit properties, and the rows the HTML page shows) from
`report["comparison"]`, and the Remedies section from `report["remedies"]`.

`comparison` (engine/history/compare.py plus the driver's repeatOffenders and trend): `{against: {kind, name,
created, source} | None, rules, enforced, figures: [{category, group, nodes, figure, value, baseline, variance,
rule, verdict}], refused: [{category, figure, key, run, baseline, message}], regressions, regressedNodes: [{name,
category, group, figures, message}], summary: {compared, regressed, missing, refused}, repeatOffenders: [{name,
failed, of, certifications, reasons}], trend}`. A report without the key (older versions) shows nothing; one with
`against` null shows "nothing to compare with yet". Every field may be missing: readers never crash on old files.
Pure: dicts in, lines and dicts out.
"""
from __future__ import annotations

from typing import Any

from .text import md_cell, natural

NOTHING_YET = "Nothing to compare with yet: this is the first certification with figures of its kind."
Obj = dict[str, Any]


def comparison(report: Obj) -> Obj | None:
    """The report's comparison, or None when it has none (older reports)."""
    found = report.get("comparison")
    return found if isinstance(found, dict) else None


def against_text(found: Obj) -> str:
    """`certification cert-1 (2026-11-01T00:00:00Z)`, `baseline fleet-h100 (...)`, or the nothing-yet sentence."""
    against = found.get("against")
    if not against:
        return NOTHING_YET
    created = f" ({against['created']})" if against.get("created") else ""
    source = f" from {against['source']}" if against.get("source") else ""
    return f"{against.get('kind') or 'baseline'} {against.get('name') or '-'}{created}{source}"


def summary_text(found: Obj) -> str:
    summary = found.get("summary") or {}
    text = ", ".join(f"{summary.get(k, 0)} {k}" for k in ("compared", "regressed", "missing", "refused"))
    return text + ("; enforced" if found.get("enforced") else "; reported, not enforced")


def number(value: Any, digits: int = 2) -> str:
    return f"{value:.{digits}f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "-"


def percent(value: Any) -> str:
    return f"{value * 100:+.1f}%" if isinstance(value, (int, float)) and not isinstance(value, bool) else "-"


def figure_rows(found: Obj) -> list[Obj]:
    """The compared figures in order (category, group naturally, figure), each with its cells as text."""
    rows = []
    for entry in found.get("figures") or []:
        rows.append({"category": str(entry.get("category", "")), "group": str(entry.get("group") or ""),
                     "figure": str(entry.get("figure", "")), "value": number(entry.get("value")),
                     "baseline": number(entry.get("baseline")), "variance": percent(entry.get("variance")),
                     "rule": str(entry.get("rule") or ""), "verdict": str(entry.get("verdict") or "")})
    return sorted(rows, key=lambda r: (r["category"], natural(r["group"]), natural(r["figure"])))


def offender_text(entry: Obj) -> str:
    """`failed 2 of the last 3 certifications (cert-1, cert-3): ThresholdViolation`."""
    names = ", ".join(str(c) for c in entry.get("certifications") or [])
    reasons = ", ".join(str(r) for r in entry.get("reasons") or [])
    return (f"failed {entry.get('failed', 0)} of the last {entry.get('of', 0)} certifications"
            + (f" ({names})" if names else "") + (f": {reasons}" if reasons else ""))


def markdown_lines(report: Obj) -> list[str]:
    """`## Compared with`: what, the summary, the figures table, the refused lines, the regressed nodes and the
    repeat offenders; nothing for a report without a comparison."""
    found = comparison(report)
    if found is None:
        return []
    lines = ["## Compared with", "", md_cell(against_text(found)), ""]
    if not found.get("against"):
        return lines + offender_lines(found)
    lines += [f"Figures: {summary_text(found)}", ""]
    if rows := figure_rows(found):
        lines += ["| Category | Group | Figure | Value | Baseline | Variance | Rule | Verdict |",
                  "|---|---|---|---|---|---|---|---|"]
        lines += [f"| {md_cell(r['category'])} | {md_cell(r['group'] or '-')} | {md_cell(r['figure'])} | {r['value']} "
                  f"| {r['baseline']} | {r['variance']} | {md_cell(r['rule'] or '-')} | {md_cell(r['verdict'])} |"
                  for r in rows]
        lines.append("")
    if refused := found.get("refused") or []:
        lines += ["Not compared:", "", *(f"- {md_cell(e.get('message', ''))}" for e in refused), ""]
    if regressed := found.get("regressedNodes") or []:
        lines += ["| Regressed Node | Category | Group | Message |", "|---|---|---|---|"]
        lines += [f"| {md_cell(e.get('name', ''))} | {md_cell(e.get('category', ''))} | {md_cell(e.get('group') or '-')} "
                  f"| {md_cell(e.get('message', ''))} |" for e in regressed]
        lines.append("")
    return lines + offender_lines(found)


def offender_lines(found: Obj) -> list[str]:
    offenders = found.get("repeatOffenders") or []
    if not offenders:
        return []
    return ["| Repeat Offender | History |", "|---|---|",
            *(f"| {md_cell(e.get('name', ''))} | {md_cell(offender_text(e))} |" for e in offenders), ""]


def remedy_lines(report: Obj) -> list[str]:
    """`## Remedies`: per failure reason its severity, the action and the nodes it names (worst first)."""
    remedies = report.get("remedies") or []
    if not remedies:
        return []
    return ["## Remedies", "", "| Reason | Severity | Action | Nodes |", "|---|---|---|---|",
            *(f"| {md_cell(r.get('reason', ''))} | {md_cell(r.get('severity', ''))} | {md_cell(r.get('action', ''))} "
              f"| {md_cell(', '.join(r.get('nodes') or []) or '-')} |" for r in remedies), ""]


def junit_properties(report: Obj, category_key: str, node: str, verdict: Obj) -> dict[str, str]:
    """A node's testcase properties beyond its group and figures: `severity` and `action` of its reason; from the
    comparison `baseline.<figure>` and `variance.<figure>` of its group's figures, `regression` (the message naming
    the regressed figures) and `repeatOffender`."""
    out: dict[str, str] = {}
    if verdict.get("severity"):
        out.update(severity=str(verdict["severity"]), action=str(verdict.get("action", "")))
    found = comparison(report)
    if found is None or not found.get("against") and not found.get("repeatOffenders"):
        return out
    group = verdict.get("group") or ""
    for entry in found.get("figures") or []:
        if entry.get("category") != category_key or not group or entry.get("group") != group:
            continue
        out[f"baseline.{entry.get('figure', '')}"] = number(entry.get("baseline"))
        out[f"variance.{entry.get('figure', '')}"] = number(entry.get("variance"), 4)
    regressed = [e for e in found.get("regressedNodes") or [] if e.get("name") == node and e.get("category") == category_key]
    if regressed:
        out["regression"] = "; ".join(str(e.get("message", "")) for e in regressed)
    offender = next((e for e in found.get("repeatOffenders") or [] if e.get("name") == node), None)
    if offender:
        out["repeatOffender"] = offender_text(offender)
    return out
