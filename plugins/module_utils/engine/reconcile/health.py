"""The CEL node-health monitor (surroundings.md §2.3 "Node health", user-docs §2.4).

The expression sees the whole Node as `node`; true means a hardware failure on that node. It is compiled once
(cached by text in `cel`). A node that is gone, or on which the expression errors (a missing label, a
missing field), is simply not flagged: an error is not evidence of a failure. Linear in the nodes.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..api.errors import InputError
from ..spec import cel

EXPRESSION_PATH = "spec.nodeHealthMonitor.cel.expression"
NODE_MESSAGE = "Hardware failure detected by node health check"


def expression(job_spec: dict[str, Any]) -> str:
    """The monitor's expression, or "" when the Job has no monitor (no checks at all)."""
    return (((job_spec.get("nodeHealthMonitor") or {}).get("cel") or {}).get("expression")) or ""


def failing_nodes(expr: str, names: Iterable[str], nodes: dict[str, dict[str, Any]],
                  memo: dict[tuple[str, str], tuple[str, bool]] | None = None) -> list[str]:
    """The names (sorted, distinct) of the nodes on which `expr` is true. `memo` keeps the last verdict per
    (expression, node) with the node's resourceVersion (an object as the API server stored it): a node is
    evaluated again only once it changed."""
    if not expr:
        return []
    try:
        cel.compile_expression(expr, EXPRESSION_PATH)
    except InputError:
        return []  # an expression that does not compile flags nothing (and is not retried per node)
    flagged = []
    for name in sorted(set(names)):
        node = nodes.get(name)
        if node is None:
            continue
        version = str((node.get("metadata") or {}).get("resourceVersion") or "")
        known = memo.get((expr, name)) if memo is not None and version else None
        if known is not None and known[0] == version:
            failing = known[1]
        else:
            failing = _failing(expr, node)
            if memo is not None and version:
                memo[(expr, name)] = (version, failing)
        if failing:
            flagged.append(name)
    return flagged


def _failing(expr: str, node: dict[str, Any]) -> bool:
    try:
        return cel.evaluate_bool(expr, {"node": node}, EXPRESSION_PATH)
    except InputError:
        return False
