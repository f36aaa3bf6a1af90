"""The built-in LogProfiles (measurements.md §1.6): our own objects in `logprofiles/<name>.yaml` at the collection root.

NVCRE ships them with its Helm chart; with no chart to install we carry them as data, under the same names, so a
Workflow written for NVCRE finds the profiles it refers to.
"""
from __future__ import annotations

import copy
from functools import lru_cache
from pathlib import Path
from typing import Any

try:
    import yaml
except ImportError:  # requirements.py: no face runs without it
    from ...requirements import ABSENT as yaml  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[4] / "logprofiles"


@lru_cache(maxsize=1)
def _profiles() -> dict[str, dict[str, Any]]:
    loaded = (yaml.safe_load(path.read_text(encoding="utf-8")) for path in sorted(ROOT.glob("*.yaml")))
    return {profile["metadata"]["name"]: profile for profile in loaded}


def builtin_profiles() -> list[dict[str, Any]]:
    """Every built-in LogProfile object, by name (copies: callers may change them)."""
    return [copy.deepcopy(_profiles()[name]) for name in sorted(_profiles())]


def builtin_profile(name: str) -> dict[str, Any] | None:
    """The built-in LogProfile called `name` (a copy), or None."""
    profile = _profiles().get(name)
    return copy.deepcopy(profile) if profile is not None else None
