"""Node drift across clusters (issue 42): per host the nodes with a configuration finding (fail or warn), and per GPU
product the fields whose values differ across the clusters' drift tables (each value with its nodes per host, the
fleet's majority first), so a cluster whose nodes all run other NIC firmware than the rest of the fleet stands out,
though its own report finds no drift.

The drift across clusters is as complete as the clusters' drift tables: a field a cluster's table leaves out (one
that lists only the fields its nodes differ on) is not counted for that cluster. Pure: host -> CertReport in, the
fleet's `configuration` out (None when no report has a node-drift category); ordered by product, component and
field, values by nodes (most first) then natural order, hosts in natural order, so the same reports give the same
bytes.
"""
from __future__ import annotations

from typing import Any

from . import configuration as cfg
from .text import natural

Obj = dict[str, Any]
UNKNOWN_PRODUCT = "unknown product"


def config_nodes(report: Obj | None) -> int | None:
    """The nodes (each once) with a configuration finding in any category; None when no category has one to say."""
    found = [c for c in (report or {}).get("categories") or [] if cfg.configuration(c) is not None]
    if not found:
        return None
    return len({n["node"] for c in found for n in cfg.nodes(cfg.configuration(c) or {}) if n["findings"]})


def _held(reports: dict[str, Obj]) -> dict[tuple[str, str, str], dict[str, dict[str, int]]]:
    """(product, component, field) -> value -> host -> its nodes holding it."""
    out: dict[tuple[str, str, str], dict[str, dict[str, int]]] = {}
    for host in sorted(reports, key=natural):
        product = str(reports[host].get("gpuProduct") or UNKNOWN_PRODUCT)
        for category in reports[host].get("categories") or []:
            for entry in cfg.drift(cfg.configuration(category) or {}):
                values = out.setdefault((product, entry["component"], entry["field"]), {})
                for value in entry["values"]:
                    hosts = values.setdefault(value["value"], {})
                    hosts[host] = hosts.get(host, 0) + value["count"]
    return out


def fleet_configuration(reports: dict[str, Obj]) -> Obj | None:
    """`nodes` (with a configuration finding, over every host that has a node-drift category), `clusters` (those
    hosts) and `drift[]` {product, component, field, majority, of (nodes), clusters, values[] {value, nodes,
    majority, hosts[] {host, nodes}}}: only the fields whose values differ across the fleet."""
    counted = {h: n for h, r in reports.items() if (n := config_nodes(r)) is not None}
    if not counted:
        return None
    drift = []
    for (product, component, field), values in sorted(_held(reports).items()):
        if len(values) < 2:
            continue
        ordered = sorted(values.items(), key=lambda v: (-sum(v[1].values()), natural(v[0])))
        drift.append({"product": product, "component": component, "field": field, "majority": ordered[0][0],
                      "of": sum(sum(h.values()) for h in values.values()),
                      "clusters": len({host for h in values.values() for host in h}),
                      "values": [{"value": value, "nodes": sum(hosts.values()), "majority": value == ordered[0][0],
                                  "hosts": [{"host": h, "nodes": hosts[h]} for h in sorted(hosts, key=natural)]}
                                 for value, hosts in ordered]})
    return {"nodes": sum(counted.values()), "clusters": len(counted), "drift": drift}


def drift_text(entry: Obj) -> str:
    """`NVIDIA-H100-80GB-HBM3 nic.fw: 28.39.1002 (majority) on 14/16 nodes (east 7, west 7); 28.40.1000 on 2/16
    nodes (north 2)`."""
    values = "; ".join(
        f"{v['value']}{' (majority)' if v['majority'] else ''} on {v['nodes']}/{entry['of']} nodes ("
        + ", ".join(f"{h['host']} {h['nodes']}" for h in v["hosts"]) + ")" for v in entry["values"])
    return f"{entry['product']} {entry['field']}: {values}"
