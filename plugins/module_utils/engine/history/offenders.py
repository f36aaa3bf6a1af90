"""Repeat offenders: nodes that failed in at least k of the last n certifications, the current one included.

A node is named even when it passed this time: a node that keeps failing is the finding, whatever today says.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..api.errors import InputError
from ..api.naming import natural

_FAILED = "Failed"


def _failures(report: Mapping[str, Any]) -> dict[str, set[str]]:
    """node -> its failure reasons in one report: a failed-nodes record, or a Failed node result (no reason)."""
    out: dict[str, set[str]] = {}
    for record in report.get("failedNodes") or []:
        out.setdefault(record.get("name", ""), set()).add(record.get("reason") or "")
    for result in report.get("nodeResults") or []:
        if result.get("status") == _FAILED:
            out.setdefault(result.get("name", ""), set())
    return out


def repeat_offenders(current: Mapping[str, Any], previous: Sequence[Mapping[str, Any]], k: int = 2,
                     n: int = 3) -> list[dict[str, Any]]:
    """``[{name, failed, of, certifications, reasons}]`` over ``current`` and ``previous`` (newest first), most
    failures first; ``certifications`` newest first, ``of`` how many certifications were looked at (at most n)."""
    if not 1 <= k <= n:
        raise InputError("repeat_offenders", f"needs 1 <= k <= n, got k={k}, n={n}")
    window = [current, *previous][:n]
    found: dict[str, dict[str, Any]] = {}
    for report in window:
        for node, reasons in _failures(report).items():
            entry = found.setdefault(node, {"name": node, "certifications": [], "reasons": set()})
            entry["certifications"].append(report.get("name") or "")
            entry["reasons"] |= reasons
    offenders = [{"name": entry["name"], "failed": len(entry["certifications"]), "of": len(window),
                  "certifications": entry["certifications"], "reasons": sorted(entry["reasons"] - {""})}
                 for entry in found.values() if len(entry["certifications"]) >= k]
    return sorted(offenders, key=lambda entry: (-entry["failed"], natural(entry["name"])))
