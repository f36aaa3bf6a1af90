"""A golden profile from the snapshots of a run the user trusts: per product, the majority of what its nodes hold
(GPUs per node, active NVLinks, power limit, and pinned VBIOS, driver, kernel and NIC firmware per line, each with
how many nodes held it), and, for a platform named, its NIC ports (count, rate, link layer).

A value without a majority (a fleet split in halves) is not pinned: it is listed in `unpinned` with its values, so a
user sees what the run could not settle.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Optional

from .drift import groups, majority
from .golden import product_of
from .golden_profile import API_VERSION, KIND, Catalog, normalize

_PINNED = ("vbios", "driver", "kernel", "nic.fw")


def _node_majority(values: dict[str, Any]) -> Optional[tuple[Any, int, int]]:  # noqa: UP045 - module_utils typing
    """(value, nodes holding it, nodes with a value) of per-node values, None without a strict majority."""
    counts = Counter(v for v in values.values() if v is not None).most_common()
    known = sum(c for _v, c in counts)
    return (counts[0][0], counts[0][1], known) if counts and counts[0][1] * 2 > known else None


def generate(snapshots: list[dict[str, Any]], catalog: Catalog, platform: str = "") -> dict[str, Any]:
    """{"profile": the GoldenProfile, "unpinned": [{product, field, values}]} of `snapshots`."""
    products: dict[str, dict[str, Any]] = {}
    unpinned: list[dict[str, Any]] = []
    by_product: dict[str, list[dict[str, Any]]] = {}
    for snapshot in snapshots:
        by_product.setdefault(normalize(product_of(snapshot) or "unknown"), []).append(snapshot)
    for key, group in sorted(by_product.items()):
        label = catalog.key(key)
        entry: dict[str, Any] = {}
        per_node = {
            "gpus": {s["node"]: len(s.get("gpus") or []) for s in group},
            "nvlinks": {s["node"]: _common([g.get("nvlinks_active") for g in s.get("gpus") or []]) for s in group},
            "powerLimitW": {s["node"]: _common([g.get("power_limit_w") for g in s.get("gpus") or []]) for s in group},
        }
        for name, values in per_node.items():
            found = _node_majority(values)
            if found is not None:
                entry[name] = found[0]
        pins: dict[str, Any] = {}
        for name in _PINNED:
            for _product, _line, items in groups(group, name):
                held = majority(items)
                if held is None or not held[3]:
                    unpinned.append({"product": label, "field": name, "values": sorted({i[5] for i in items})})
                    continue
                pin = {"value": held[0], "nodes": held[1], "of": held[2]}
                if name == "nic.fw":
                    pins.setdefault(name, []).append(pin)
                else:
                    pins[name] = pin
        entry["pinned"] = pins
        products[label] = entry
    profile: dict[str, Any] = {"apiVersion": API_VERSION, "kind": KIND, "products": products}
    if platform:
        profile["nics"] = {platform: _nics(snapshots)}
    return {"profile": profile, "unpinned": unpinned}


def _common(values: list[Any]) -> Any:
    """The value a node's GPUs share, None when they differ or none is known."""
    known = {v for v in values if v is not None}
    return known.pop() if len(known) == 1 else None


def _nics(snapshots: list[dict[str, Any]]) -> dict[str, Any]:
    """The platform's NIC ports: the majority link layer, its ports per node and its active ports' rate."""
    layers = {s["node"]: _layer(s) for s in snapshots}
    layer = _node_majority(layers)
    out: dict[str, Any] = {}
    if layer is not None:
        out["linkLayer"] = layer[0]
        counts = {s["node"]: sum(1 for n in s.get("nics") or [] if n.get("link_layer") == layer[0]) for s in snapshots}
        count = _node_majority(counts)
        rates = {s["node"]: _common([n.get("rate_gbps") for n in s.get("nics") or []
                                     if n.get("link_layer") == layer[0] and n.get("state") == "ACTIVE"])
                 for s in snapshots}
        rate = _node_majority(rates)
        out.update({"count": count[0]} if count else {})
        out.update({"rateGbps": rate[0]} if rate else {})
    return out


def _layer(snapshot: dict[str, Any]) -> Optional[str]:  # noqa: UP045 - as above
    """The link layer most of a node's ports run (InfiniBand on a tie: the fabric, not the management ports)."""
    counts = Counter(n.get("link_layer") for n in snapshot.get("nics") or [] if n.get("link_layer"))
    return max(counts, key=lambda layer: (counts[layer], layer == "InfiniBand")) if counts else None
