"""report.html: one cluster's CertReport as a self-contained page (inline CSS and SVG, nothing fetched).

Verdict, categories with their figures, the node × category matrix, failed nodes with reasons, each category's
bandwidth table and group-bandwidth heat map. Pure: the report in, HTML text out; every value is escaped.
"""
from __future__ import annotations

from html import escape
from typing import Any

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
svg.heatmap text{font:11px system-ui,sans-serif;fill:#1d1d1d}
"""

STATUS_CLASS = ("Succeeded", "Failed", "Passed", "Skipped", "Pending", "Running", "InProgress")


def esc(value: Any) -> str:
    return escape(str(value), quote=True)


def page(title: str, body: str) -> str:
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{esc(title)}</title>\n'
            f"<style>{STYLE}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n")


def verdict(text: str) -> str:
    return f'<span class="verdict v-{esc(text)}">{esc(text)}</span>'


def status_cell(status: str) -> str:
    css = f' class="s-{status}"' if status in STATUS_CLASS else ""
    return f"<td{css}>{esc(status or '-')}</td>"


def table(headers: list[str], rows: list[list[str]], css: str = "") -> str:
    """`rows` are lists of ready `<td>` cells (so a cell can carry its class); headers are escaped here."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join(f"<tr>{''.join(cells)}</tr>" for cells in rows)
    klass = f' class="{css}"' if css else ""
    return f"<table{klass}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def td(value: Any, numeric: bool = False) -> str:
    text = "-" if value in ("", None) else value
    return f'<td class="num">{esc(text)}</td>' if numeric else f"<td>{esc(text)}</td>"


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


def categories_table(report: dict) -> str:
    rows = [[td(category_key(c)), status_cell(c["status"]), td(c.get("runtime")), td(c.get("nodesPerJob"), True),
             td(c.get("jobs"), True), td(", ".join(c.get("transport") or [])), td(figures(c)),
             td(c.get("failureReason"))] for c in report.get("categories") or []]
    return table(["Category", "Status", "Duration", "Nodes/Job", "Jobs", "Transport", "Measured", "Failure"], rows,
                 "categories")


def matrix(report: dict) -> str:
    """Node × category: each node's verdict in each category (`-` where the category never placed it)."""
    categories = report.get("categories") or []
    nodes = sorted({n for c in categories for n in c.get("nodes") or {}}, key=natural)
    if not nodes:
        return '<p class="none">No node has a verdict yet.</p>'
    rows = [[td(node)] + [status_cell(((c.get("nodes") or {}).get(node) or {}).get("status", "")) for c in categories]
            for node in nodes]
    return table(["Node", *[category_key(c) for c in categories]], rows, "matrix")


def failed_nodes(report: dict) -> str:
    entries = report.get("failedNodes") or []
    if not entries:
        return '<p class="none">Failed nodes: none.</p>'
    rows = [[td(e["name"]), td(e.get("reason")), td(e.get("message"))] for e in entries]
    return table(["Node", "Reason", "Message"], rows, "failed-nodes")


def bandwidth_table(category: dict) -> str:
    rows = [[td(size_text(b["size"]), True), td(f"{b['algBW']:.2f}", True), td(f"{b['busBW']:.2f}", True),
             td(b["samples"], True)] for b in category.get("bandwidth") or []]
    return table(["Size", "AlgBW GB/s", "BusBW GB/s", "Samples"], rows, "bandwidth") if rows else ""


def category_details(report: dict) -> str:
    """Per category with figures: its bandwidth table and its heat map."""
    parts = []
    for category in report.get("categories") or []:
        picture, bandwidth = heatmap_svg(category), bandwidth_table(category)
        if picture or bandwidth:
            parts.append(f"<h3>{esc(category_key(category))}</h3>{bandwidth}{picture}")
    return "".join(parts)


def facts(report: dict) -> str:
    rows = [[td(report.get("platform")), td(report.get("gpu")), td(report.get("totalNodes"), True),
             td(len(report.get("excludedNodes") or []), True), td(report.get("exclusionReason"))]]
    return table(["Platform", "GPU", "Total Nodes", "Excluded Nodes", "Exclusion"], rows, "facts")


def cluster_body(report: dict) -> str:
    """Everything of one cluster's report below its heading."""
    passed = sum(1 for c in report.get("categories") or [] if c["status"] == "Succeeded")
    return (f"<p>Result: {verdict(report['result'])} &nbsp; Categories: {passed}/{len(report.get('categories') or [])}"
            f" passed</p>{facts(report)}<h3>Categories</h3>{categories_table(report)}"
            f"<h3>Node \u00d7 category</h3>{matrix(report)}<h3>Failed nodes</h3>{failed_nodes(report)}"
            f"{category_details(report)}")


def report_html(report: dict) -> str:
    """report.html of one cluster."""
    title = f"{report.get('title') or TITLE}: {report['name']}"
    return page(title, f"<h1>{esc(title)}</h1>\n{cluster_body(report)}")
