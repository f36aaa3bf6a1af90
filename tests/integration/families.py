"""Families of integration test modules: modules that take a common pooled cluster, directly or through another
module, run on one worker one after another, so that each cluster starts once (see docs/dev/testing.md)."""
from __future__ import annotations

from types import ModuleType

import pytest

Key = tuple[str, int, int]  # a pooled cluster: (profile, nodes, instance)


def cluster_key(profile: str, nodes: int, instance: int = 0) -> Key:
    return (profile, nodes, instance)


def declared(module: ModuleType) -> set[Key]:
    """The pooled clusters a test module declares: its `pytestmark = pytest.mark.clusters(...)`."""
    marks = getattr(module, "pytestmark", [])
    marks = marks if isinstance(marks, list) else [marks]
    return {cluster_key(*key) for mark in marks if isinstance(mark, pytest.MarkDecorator)
            and mark.name == "clusters" for key in mark.args}


def families(modules: dict[str, set[Key]]) -> dict[str, tuple[frozenset[Key], str]]:
    """Module -> (the keys its family takes, the family's name: its first module's short name)."""
    groups: list[tuple[set[str], set[Key]]] = []
    for module in sorted(modules):
        keys = set(modules[module])
        joined = [g for g in groups if g[1] & keys]
        members = {module}.union(*(g[0] for g in joined))
        keys = keys.union(*(g[1] for g in joined))
        groups = [g for g in groups if g not in joined] + [(members, keys)]
    return {m: (frozenset(keys), min(members).rsplit(".", 1)[-1]) for members, keys in groups for m in members}
