"""Helpers shared by the engine unit tests (imported as tests.unit.engine.helpers)."""
from __future__ import annotations

from typing import Any


def at(obj: Any, dotted: str) -> Any:
    """Value at a dotted path; numeric segments index lists; a missing key gives None."""
    for part in dotted.split("."):
        if isinstance(obj, list):
            obj = obj[int(part)]
        else:
            obj = (obj or {}).get(part)
    return obj
