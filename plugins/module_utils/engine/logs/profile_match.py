"""Which LogProfile reads a training log: how many of its lines each profile's trainingStep pattern matches.

Lines are what the goodput parser reads: the text after the kubelet time, each progress-bar update of a line on
its own, every match counted (a redrawn step too), whatever logInterval would keep.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .goodput_log import updates
from .log_lines import compile_regex


def step_matches(text: str, profiles: Iterable[dict[str, Any]]) -> dict[str, int]:
    """Per profile name, in the order given, the lines its trainingStep regex matches (0 without one).
    LogProfileError when a regex does not compile."""
    read = list(updates(text))
    counts: dict[str, int] = {}
    for profile in profiles:
        pattern = ((profile.get("spec") or {}).get("patterns") or {}).get("trainingStep") or {}
        regex = compile_regex(pattern["regex"], "pattern trainingStep: invalid regex") if pattern.get("regex") else None
        counts[profile["metadata"]["name"]] = sum(1 for _prefix, line in read if regex and regex.search(line))
    return counts
