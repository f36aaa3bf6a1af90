"""fleet.html: the fleet table (a row per inventory host: verdict, categories, failed nodes with reasons, failing
GPUs, duration, the error that stopped it, the change since its last certification and its repeat offenders) with
the fleet's failing GPUs, the burn-in across the clusters (each product's fleet median, the slow GPUs and nodes),
the configuration across the clusters (nodes with findings per host, fields whose values differ),
then per cluster its report body (matrix, figures, pictures, per-GPU grid). Rendered from templates/fleet.html.j2;
self-contained."""
from __future__ import annotations

from typing import Any

from . import pages
from .fleet import ERROR, config_text, gpus_text, offenders_text, since_text
from .fleet_burn_in import group_text
from .fleet_configuration import drift_text
from .html import STYLE, view

Obj = dict[str, Any]


def _anchor(host: str) -> str:
    return "host-" + "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in host)


def _row(row: Obj, reports: dict[str, Obj]) -> Obj:
    return {"host": row["host"], "anchor": _anchor(row["host"]) if row["host"] in reports else "",
            "verdict": row["verdict"], "name": row["name"],
            "categories": ", ".join(f"{c['category']} {c['status']}" for c in row["categories"])
            if row["verdict"] != ERROR else "",
            "failed": "; ".join(f"{n['name']}: {n['reason']}" if n["reason"] else n["name"] for n in row["failedNodes"]),
            "gpus": gpus_text(row), "config": config_text(row), "duration": row["duration"],
            "error": f"{row['error']['kind']}: {row['error']['message']}" if row["error"] else "",
            "since": since_text(row), "offenders": offenders_text(row)}


def fleet_html(fleet: Obj, reports: dict[str, Obj]) -> str:
    """`reports`: host -> the CertReport its row shows."""
    sections = [{"host": row["host"], "anchor": _anchor(row["host"]), "name": reports[row["host"]]["name"],
                 "report": view(reports[row["host"]])} for row in fleet["rows"] if row["host"] in reports]
    return pages.render("fleet.html.j2", title=fleet["title"], style=pages.markup(STYLE), result=fleet["result"],
                        hosts=fleet["hosts"], counts=", ".join(f"{count} {name}" for name, count in fleet["counts"].items()),
                        rows=[_row(row, reports) for row in fleet["rows"]], sections=sections,
                        failing_gpus=fleet.get("failingGpus"), burn_in=_burn_in(fleet),
                        configuration=_configuration(fleet))


def _configuration(fleet: Obj) -> Obj | None:
    found = fleet.get("configuration")
    if not found:
        return None
    return {"nodes": found["nodes"], "clusters": found["clusters"],
            "drift": [{"field": e["field"], "text": drift_text(e)} for e in found["drift"]]}


def _burn_in(fleet: Obj) -> Obj | None:
    found = fleet.get("burnIn")
    if not found:
        return None
    return {"groups": [group_text(g) for g in found["groups"]],
            "slow": [{"host": s["host"], "node": s["node"], "index": "-" if s["index"] is None else s["index"],
                      "ratio": f"{s['ratio']:.3f}", "message": s["message"]} for s in found["slow"]]}
