"""fleet.html: the fleet table (a row per inventory host: verdict, categories, failed nodes with reasons, duration,
or the error that stopped it), then per cluster its report body (matrix, figures, heat maps). Self-contained."""
from __future__ import annotations

from typing import Any

from .fleet import ERROR
from .html import cluster_body, esc, page, table, td, verdict

Obj = dict[str, Any]


def _anchor(host: str) -> str:
    return "host-" + "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in host)


def fleet_rows(fleet: Obj, reports: dict[str, Obj]) -> str:
    rows = []
    for row in fleet["rows"]:
        host = esc(row["host"])
        link = f'<a href="#{_anchor(row["host"])}">{host}</a>' if row["host"] in reports else host
        failed = "; ".join(f"{n['name']}: {n['reason']}" if n["reason"] else n["name"] for n in row["failedNodes"])
        categories = ", ".join(f"{c['category']} {c['status']}" for c in row["categories"])
        error = (f'<td class="error">{esc(row["error"]["kind"])}: {esc(row["error"]["message"])}</td>'
                 if row["error"] else td(""))
        rows.append([f'<td class="host">{link}</td>', f'<td class="verdict-cell">{verdict(row["verdict"])}</td>',
                     td(row["name"]), td(categories if row["verdict"] != ERROR else ""), td(failed),
                     td(row["duration"]), error])
    return table(["Host", "Verdict", "Certification", "Categories", "Failed nodes", "Duration", "Error"], rows,
                 "fleet")


def fleet_html(fleet: Obj, reports: dict[str, Obj]) -> str:
    """`reports`: host -> the CertReport its row shows."""
    counts = ", ".join(f"{count} {name}" for name, count in fleet["counts"].items())
    sections = "".join(
        f'<section class="cluster" id="{_anchor(row["host"])}" data-host="{esc(row["host"])}">'
        f"<h2>{esc(row['host'])}: {esc(reports[row['host']]['name'])}</h2>{cluster_body(reports[row['host']])}"
        "</section>" for row in fleet["rows"] if row["host"] in reports)
    body = (f"<h1>{esc(fleet['title'])}</h1>\n<p>Fleet: {verdict(fleet['result'])} &nbsp; {fleet['hosts']} clusters"
            f"{' (' + esc(counts) + ')' if counts else ''}</p>\n{fleet_rows(fleet, reports)}\n{sections}")
    return page(fleet["title"], body)
