"""report.html: one cluster's CertReport as a self-contained page (inline CSS and SVG, nothing fetched), rendered
from the Jinja2 templates in templates/ (autoescape on).

Verdict, categories with their figures, the "Compared with" section (report["comparison"]), the node × category
matrix, failed nodes with reasons, severities and actions, the remedies, and per category its bandwidth chart,
group-bandwidth heat map, trend charts, bandwidth table, burn-in charts (burn_in_chart: a small chart per node of its
GPUs' TFLOPS over time), configuration (configuration_view: a node-drift category's findings per node and its drift
table) and per-GPU evidence (gpu_grid: the node × GPU grid).
Pure: the report in, HTML text out; `view` turns a report into what the templates show, every picture built by a
pure function that escapes its text.
"""
from __future__ import annotations

from typing import Any

from . import burn_in_chart, charts, comparison_text, configuration_view, gpu_grid, pages
from .certreport import TITLE
from .heatmap import heatmap_svg
from .text import natural, size_text

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1d1d1d;background:#fff}
h1{font-size:22px;margin:0 0 12px}h2{font-size:18px;margin:28px 0 8px}h3{font-size:15px;margin:18px 0 6px}
table{border-collapse:collapse;margin:6px 0 12px}th,td{border:1px solid #d0d0d0;padding:3px 8px;text-align:left}
th{background:#f2f2f2}td.num{text-align:right}
.verdict{display:inline-block;padding:2px 10px;border-radius:4px;font-weight:600;color:#fff}
.v-PASSED,.s-Succeeded,.s-Passed{background:#1a7f37;color:#fff}.v-FAILED,.v-ERROR,.s-Failed{background:#c62828;color:#fff}
.v-INCOMPLETE,.s-Skipped{background:#b26a00;color:#fff}.v-RUNNING,.s-InProgress,.s-Pending,.s-Running{background:#546e7a;color:#fff}
.none{color:#777}.error{color:#c62828;font-weight:600}section.cluster{border-top:3px solid #d0d0d0;margin-top:24px}
.sev-critical{background:#7a0000;color:#fff}.sev-high{background:#c62828;color:#fff}.sev-medium{background:#ef6c00;color:#fff}
.sev-low{background:#fbc02d}.verdict-regressed,.verdict-missing{background:#ffe0b2}td.verdict-ok{background:#c8e6c9}
section.compared-with{border-left:4px solid #6a1b9a;padding-left:10px}.against{font-weight:600}
svg text{font:12px system-ui,sans-serif;fill:#1d1d1d}svg.heatmap text.cell-value{font-size:11px;fill:#111}
svg .trend-title{font-weight:600}div.trends{display:flex;flex-wrap:wrap;gap:12px}
svg.bandwidth-chart,svg.heatmap,svg.trend{display:block;margin:8px 0}
table.gpu-grid td.gpu{min-width:64px;white-space:nowrap;font-size:12px;text-align:center;cursor:help}
.gpu-pass{background:#2e7d32;color:#fff}.gpu-warn{background:#f9a825;color:#1d1d1d}
.gpu-fail{background:#c62828;color:#fff;font-weight:600}.gpu-skip{background:#9e9e9e;color:#fff}
.gpu-none{background:#f5f5f5;color:#777}.gpu-lacking{background-image:repeating-linear-gradient(
45deg,transparent 0 5px,rgba(255,255,255,.6) 5px 10px);font-style:italic}
td.gpu-missing,span.gpu-missing{background:#fff;color:#c62828;border:2px dashed #c62828}
.gpu-legend span.gpu{display:inline-block;padding:1px 8px;margin:0 6px 4px 0;font-size:12px}
div.burn-in-nodes{display:flex;flex-wrap:wrap;gap:8px 20px}
figure.burn-in-node{display:flex;gap:8px;margin:0;align-items:flex-start}
svg.burn-in-chart text{font-size:11px}svg.burn-in-chart .chart-title{font-weight:600;font-size:12px}
ul.burn-in-findings{max-width:420px;margin:18px 0 0;padding-left:16px;font-size:12px}
li.finding-fail{color:#c62828;font-weight:600}li.finding-warn{color:#8a4b00}
.bl{display:inline-block;margin:0 14px 4px 0;font-size:12px}.bl::before{content:"";display:inline-block;width:26px;
height:0;margin-right:5px;vertical-align:middle;border-top:2px solid #90a4ae}.bl-warn::before{border-top-color:#ef6c00}
.bl-fail::before{border-top:3px solid #c62828}.bl-median::before{border-top:2px dotted #1565c0}
.bl-floor::before{border-top:2px dashed #444}
.bl-band::before{height:8px;border:0;background:#bcc8ce}.bl-warmup::before{height:10px;border:0;background:#ececec}
.cfg-fail{background:#c62828;color:#fff;font-weight:600}.cfg-warn{background:#f9a825;color:#1d1d1d}
table.cfg-findings td.node{font-weight:600;vertical-align:top;white-space:nowrap}
table.cfg-findings td.component,table.cfg-findings td.field{white-space:nowrap}tbody.cfg-node{border-top:2px solid #9e9e9e}
td.component[title]{cursor:help}span.drift-note{color:#8a4b00;font-size:12px}
table.drift-table td{vertical-align:top}table.drift-table td.field{font-weight:600}
td.drift-value{font-family:ui-monospace,monospace}
tr.drift-outlier td.drift-value,tr.drift-outlier td.drift-holders{background:#fff3e0;color:#8a4b00;font-weight:600}
span.majority{background:#1a7f37;color:#fff;border-radius:3px;padding:0 5px;margin-left:6px;font:600 11px system-ui}
tbody.drift-field{border-top:2px solid #9e9e9e}td.drift-holders{max-width:640px}
.evidence-final{color:#1a7f37}.evidence-partial{color:#b26a00;font-weight:600}.evidence-missing{color:#c62828;font-weight:600}
"""

Obj = dict[str, Any]


def esc(value: Any) -> str:
    return pages.esc(value)


def category_key(category: dict) -> str:
    return f"{category['domain']}/{category['variant']}"


def figures(category: dict) -> str:
    """Peak busBW over the bandwidth table, and the goodput averages over the category's domains."""
    out = []
    if category.get("bandwidth"):
        out.append(f"BusBW {max(b['busBW'] for b in category['bandwidth']):.2f} GB/s")
    domains = category.get("domains") or []
    if domains:
        goodput = sum(d["goodput"] for d in domains) / len(domains)
        tflops = sum(d["tflops"] for d in domains) / len(domains)
        out.append(f"Goodput {goodput:.2f} ({goodput * 100:.0f}%), {tflops:.2f} TFLOPs/GPU")
    return "; ".join(out)


def _categories(report: Obj) -> list[Obj]:
    return [{"key": category_key(c), "status": c["status"], "runtime": c.get("runtime"),
             "nodesPerJob": c.get("nodesPerJob"), "jobs": c.get("jobs"), "transport": ", ".join(c.get("transport") or []),
             "measured": figures(c), "failure": c.get("failureReason")} for c in report.get("categories") or []]


def _matrix(report: Obj) -> Obj:
    """Node × category: each node's verdict in each category ("" where the category never placed it)."""
    categories = report.get("categories") or []
    nodes = sorted({n for c in categories for n in c.get("nodes") or {}}, key=natural)
    return {"columns": [category_key(c) for c in categories],
            "rows": [(node, [((c.get("nodes") or {}).get(node) or {}).get("status", "") for c in categories])
                     for node in nodes]}


def _details(report: Obj) -> list[Obj]:
    """Per category with figures or evidence: its bandwidth chart, heat map, trend charts, bandwidth table, burn-in
    charts and per-GPU grid."""
    found = comparison_text.comparison(report)
    out = []
    for category in report.get("categories") or []:
        key = category_key(category)
        chart, heatmap = charts.bandwidth_svg(category, key, found), heatmap_svg(category)
        trends, evidence, burn_in = charts.trends(key, found), gpu_grid.grid(category), burn_in_chart.view(category)
        configuration = configuration_view.view(category)
        bandwidth = [{"size": size_text(b["size"]), "algBW": f"{b['algBW']:.2f}", "busBW": f"{b['busBW']:.2f}",
                      "samples": b["samples"]} for b in category.get("bandwidth") or []]
        if chart or heatmap or trends or bandwidth or evidence or burn_in or configuration:
            out.append({"key": key, "chart": pages.markup(chart), "heatmap": pages.markup(heatmap),
                        "trends": [pages.markup(t) for t in trends], "bandwidth": bandwidth, "evidence": evidence,
                        "burnIn": burn_in, "configuration": configuration,
                        "image": category.get("image") or "", "threshold": category.get("threshold") or ""})
    return out


def _comparison(report: Obj) -> Obj | None:
    """The "Compared with" section, or None for a report without a comparison (older versions)."""
    found = comparison_text.comparison(report)
    if found is None:
        return None
    return {"against": comparison_text.against_text(found), "compared": bool(found.get("against")),
            "summary": comparison_text.summary_text(found), "rows": comparison_text.figure_rows(found),
            "refused": [str(e.get("message", "")) for e in found.get("refused") or []],
            "regressed": [{"name": e.get("name", ""), "category": e.get("category", ""), "group": e.get("group", ""),
                           "message": e.get("message", "")} for e in found.get("regressedNodes") or []],
            "offenders": [{"name": e.get("name", ""), "history": comparison_text.offender_text(e)}
                          for e in found.get("repeatOffenders") or []]}


def view(report: Obj) -> Obj:
    """What the templates show of one cluster's report."""
    categories = report.get("categories") or []
    return {
        "result": report["result"], "passed": sum(1 for c in categories if c["status"] == "Succeeded"),
        "total": len(categories), "platform": report.get("platform"), "gpu": report.get("gpu"),
        "gpuProduct": report.get("gpuProduct") or "", "created": report.get("created") or "",
        "totalNodes": report.get("totalNodes"), "excluded": len(report.get("excludedNodes") or []),
        "exclusionReason": report.get("exclusionReason"), "categories": _categories(report),
        "comparison": _comparison(report), "matrix": _matrix(report),
        "failedNodes": [{"name": e["name"], "reason": e.get("reason"), "message": e.get("message"),
                         "severity": e.get("severity") or "", "action": e.get("action") or ""}
                        for e in report.get("failedNodes") or []],
        "remedies": [{"reason": e.get("reason", ""), "severity": e.get("severity", ""), "action": e.get("action", ""),
                      "nodes": ", ".join(e.get("nodes") or [])} for e in report.get("remedies") or []],
        "details": _details(report),
    }


def report_html(report: dict) -> str:
    """report.html of one cluster."""
    title = f"{report.get('title') or TITLE}: {report['name']}"
    return pages.render("report.html.j2", title=title, style=pages.markup(STYLE), report=view(report))
