"""Diagnose's splitting rules (workflow spec §9): bisection of failed node sets and cross-boundary probes.

Both work on node lists in the order they are given (name order from screening), so a rerun splits the same
way. A probe is NVCRE's pendingProbe: two halves that each passed alone although together they failed.
"""
from __future__ import annotations

from typing import Any

MAX_PROBE_ROUNDS = 4

Obj = dict[str, Any]


def group(name: str, nodes: list[str], domains: list[str] | None = None) -> Obj:
    """A Pending GroupStatus of the next round."""
    status: Obj = {"name": name, "nodes": list(nodes), "phase": "Pending"}
    if domains:
        status["domains"] = domains
    return status


def split(nodes: list[str]) -> tuple[list[str], list[str]]:
    """At len/2: the first half is the shorter one when the count is odd."""
    middle = len(nodes) // 2
    return nodes[:middle], nodes[middle:]


def bisect(sets: list[list[str]], round_number: int, min_group_size: int) -> list[tuple[str, list[str]]] | None:
    """`Bisect`: sets of at most minGroupSize kept whole (`bisect-<r>-<i>`), larger ones split into
    `bisect-<r>-<i>a`/`b`; None when no set needs splitting (bisection has converged)."""
    if not any(len(nodes) > min_group_size for nodes in sets):
        return None
    out: list[tuple[str, list[str]]] = []
    for i, nodes in enumerate(sets):
        if len(nodes) <= min_group_size:
            out.append((f"bisect-{round_number}-{i}", nodes))
        else:
            first, second = split(nodes)
            out += [(f"bisect-{round_number}-{i}a", first), (f"bisect-{round_number}-{i}b", second)]
    return out


def siblings(name: str) -> str | None:
    """The stem `bisect-<r>-<i>` of a split half `…a`/`…b`, else None."""
    return name[:-1] if name.startswith("bisect-") and name[-1:] in ("a", "b") else None


def _head(half: list[str]) -> list[str]:
    return half[:max(1, len(half) // 2)]


def _tail(half: list[str]) -> list[str]:
    return half[max(1, len(half) // 2):]


def mixes(probe: Obj) -> list[list[str]]:
    """`mix0` (the first halves of both sides), then `mix1` (the second halves) when both sides have one."""
    half_a, half_b = probe.get("halfA") or [], probe.get("halfB") or []
    out = [_head(half_a) + _head(half_b)]
    if _tail(half_a) and _tail(half_b):
        out.append(_tail(half_a) + _tail(half_b))
    return out


def narrowed(probe: Obj, failed_mix: int) -> tuple[list[str], list[str]]:
    """The half-pair of the one mix that failed."""
    pick = _head if failed_mix == 0 else _tail
    return pick(probe.get("halfA") or []), pick(probe.get("halfB") or [])


def settle(probe: Obj, passed: list[bool]) -> tuple[str, Obj]:
    """What a probe round shows: ("restore", probe) when every mix passed, ("fault", halves) when every mix
    failed or narrowing must stop (4 probe rounds, or halves of two nodes), else ("probe", the narrowed probe)."""
    if all(passed):
        return "restore", probe
    if not any(passed):
        return "fault", probe
    half_a, half_b = narrowed(probe, passed.index(False))
    rounds = int(probe.get("probeRound") or 1)
    narrower = {**probe, "halfA": half_a, "halfB": half_b, "probeRound": rounds + 1}
    if rounds >= MAX_PROBE_ROUNDS or len(half_a) + len(half_b) <= 2:
        return "fault", narrower
    return "probe", narrower
