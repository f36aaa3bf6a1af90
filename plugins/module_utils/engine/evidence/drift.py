"""Drift against the fleet: what has no fixed right value (VBIOS, NIC firmware, driver, kernel, and the PCIe link a
host allows), compared across the nodes of one GPU product in one run; and the report's `configuration`.

For each field, the nodes of a product are compared item by item (the node for driver and kernel, each GPU for
VBIOS and the host's PCIe limit, each NIC port for firmware, per firmware line: a ConnectX-7's 28.x and a
ConnectX-6 Dx's 22.x on one node are two lines, not drift). The majority is the value most items hold, provided the
nodes holding it on every item are more than half of the nodes that report the field; an item with another value is
a finding naming the majority and how many nodes hold it. A host link slower than the fleet's is named; a faster one
is not. No majority (a fleet split in halves, two nodes that differ) names nobody.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any, Optional

from ..api.naming import natural
from .golden import best, product_of, remedy_of
from .golden_profile import Profile, normalize

DRIFT_FIELDS = ("driver", "kernel", "vbios", "nic.fw", "host_max_gen")
_Item = tuple[str, str, Optional[int], Optional[str], Optional[str], str]  # noqa: UP045 - module_utils typing
# (node, component, index, uuid, name, value)


def _items(snapshot: dict[str, Any], name: str) -> Iterator[tuple[str, _Item]]:
    """(group, item) of one node for a field; the group splits values that are not comparable (firmware lines)."""
    node = snapshot.get("node") or ""
    if name in ("driver", "kernel"):
        if snapshot.get(name):
            yield "", (node, "node", None, None, None, str(snapshot[name]))
    elif name == "vbios":
        for g in snapshot.get("gpus") or []:
            if g.get("vbios"):
                yield "", (node, "gpu", g["index"], g.get("uuid"), None, g["vbios"])
    elif name == "host_max_gen":
        for g in snapshot.get("gpus") or []:
            gen = best(g.get("pcie_max_gen"), g.get("host_max_gen"))
            if g.get("host_max_gen") is not None and gen is not None:
                yield "", (node, "gpu", g["index"], g.get("uuid"), None, f"Gen{gen}")
    else:
        for n in snapshot.get("nics") or []:
            if n.get("fw"):
                label = f"{n['device']}/{n['port']}" if n.get("port") is not None else str(n["device"])
                yield str(n["fw"]).split(".", maxsplit=1)[0], (node, "nic", n.get("port"), None, label, str(n["fw"]))


def _products(snapshots: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The snapshots by product (the name their GPUs print, normalized)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for snapshot in snapshots:
        groups.setdefault(normalize(product_of(snapshot) or "unknown"), []).append(snapshot)
    return groups


def majority(items: list[_Item]) -> Optional[tuple[str, int, int, bool]]:  # noqa: UP045 - as above
    """(the value most items hold, the nodes holding it on every item, the nodes reporting the field, whether those
    nodes are more than half); None without items or on a tie."""
    counts = Counter(item[5] for item in items).most_common()
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return None
    value = counts[0][0]
    nodes: dict[str, set[str]] = {}
    for item in items:
        nodes.setdefault(item[0], set()).add(item[5])
    holders = sum(1 for values in nodes.values() if values == {value})
    return value, holders, len(nodes), holders * 2 > len(nodes)


def _majority(items: list[_Item]) -> Optional[tuple[str, int, int]]:  # noqa: UP045 - as above
    """(value, holders, of) of a strict majority, None without one."""
    found = majority(items)
    return found[:3] if found and found[3] else None


def _slower(value: str, majority: str) -> bool:
    return int(value[3:]) < int(majority[3:])


def groups(snapshots: list[dict[str, Any]], name: str) -> Iterator[tuple[str, str, list[_Item]]]:
    """(product, firmware line, items): the comparable items of a field."""
    for product, group in _products(snapshots).items():
        lines: dict[str, list[_Item]] = {}
        for snapshot in group:
            for line, item in _items(snapshot, name):
                lines.setdefault(line, []).append(item)
        for line, items in lines.items():
            yield product, line, items


def findings(snapshots: list[dict[str, Any]], profile: Optional[Profile] = None) -> list[dict[str, Any]]:  # noqa: UP045
    """The drift findings of a run's snapshots (severity `drift` of the profile, warn by default), in node order."""
    outcome = (profile.severity.get("drift") if profile else None) or "warn"
    out = []
    for name in DRIFT_FIELDS:
        for _product, _line, items in groups(snapshots, name):
            found = _majority(items)
            if found is None:
                continue
            value, holders, of = found
            for node, component, index, uuid, label, observed in items:
                if observed == value or (name == "host_max_gen" and not _slower(observed, value)):
                    continue
                out.append({"node": node, "component": component, "index": index, "uuid": uuid, "name": label,
                            "field": name, "expected": value, "observed": observed, "outcome": outcome,
                            "remedy": _remedy(name, value),
                            "drift": {"majority": value, "holders": holders, "of": of}})
    return sorted(out, key=lambda f: (natural(f["node"]), f["field"], f["index"] or 0, f["name"] or ""))


def _remedy(name: str, value: str) -> str:
    if name == "host_max_gen":
        return (f"the host's slot allows less than the fleet's {value}: check the slot's BIOS link speed and the "
                "riser (no GPU fault)")
    return remedy_of(name, {"expected_n": value})


def table(snapshots: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The report's `configuration.drift`: per field (per product and firmware line) where the run's nodes differ,
    each value with the nodes that hold it (natural order), and the majority (None without one)."""
    out = []
    for name in DRIFT_FIELDS:
        for _product, _line, items in groups(snapshots, name):
            values: dict[str, set[str]] = {}
            for item in items:
                values.setdefault(item[5], set()).add(item[0])
            if len(values) < 2:
                continue
            found = _majority(items)
            out.append({"field": name, "component": items[0][1],
                        "values": [{"value": v, "nodes": sorted(nodes, key=natural)}
                                   for v, nodes in sorted(values.items(), key=lambda kv: (-len(kv[1]), kv[0]))],
                        "majority": found[0] if found else None})
    return out


def configuration(snapshots: list[dict[str, Any]], golden_findings: list[dict[str, Any]],
                  profile: Optional[Profile] = None) -> dict[str, Any]:  # noqa: UP045 - as above
    """The report's `configuration` of a node-drift category: each node's findings (the golden profile's, given,
    and the fleet's drift), nodes in natural order, and the drift table."""
    every = [*golden_findings, *findings(snapshots, profile)]
    names = sorted({s.get("node") or "" for s in snapshots} | {f["node"] for f in every}, key=natural)
    return {"nodes": [{"node": n, "findings": [f for f in every if f["node"] == n]} for n in names],
            "drift": table(snapshots)}
