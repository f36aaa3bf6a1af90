"""The golden profiles as files: the shipped defaults (catalog/golden-defaults.yaml) and a user's file over them,
each given the catalog's names of products (gpu_floors' labels and aliases), GPU counts (gpusPerNode of each
product's architecture, per platform) and SKU default power limits (evidence/golden_profile holds the pure rules).
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

try:
    import yaml
except ImportError:  # requirements.py: the face names PyYAML before this is used
    from ...requirements import ABSENT as yaml  # type: ignore[no-redef]

from ..api.errors import InputError
from ..evidence.golden_profile import Catalog, Profile, merged, normalize
from . import gpu_floors
from .entries import gpu_defaults, gpu_defaults_table, normalize_gpu_architecture
from .registry import ROOT

DEFAULTS = ROOT / "golden-defaults.yaml"
SOURCE = "catalog/golden-defaults.yaml"


def _catalog(labels: list[str]) -> Catalog:
    """The catalog's names, counts and power limits for gpu_floors' products and the profile's `labels`."""
    aliases = {name: product.label for name, product in gpu_floors.products().items()}
    platforms = ["", *gpu_defaults_table().get("platformOverrides", {})]
    keys = {aliases.get(normalize(label), normalize(label)) for label in [*aliases.values(), *labels]}
    gpus = {key: {p: gpu_defaults(normalize_gpu_architecture(key), p)[0] for p in platforms} for key in keys}
    power = {product.label: product.default_power_w for product in gpu_floors.products().values()
             if product.default_power_w is not None}
    return Catalog(aliases, gpus, power)


@lru_cache(maxsize=1)
def defaults() -> Profile:
    """The shipped profile, validated once."""
    data = yaml.safe_load(DEFAULTS.read_text(encoding="utf-8"))
    labels = [str(label) for label in (data.get("products") or {})] if isinstance(data, dict) else []
    return merged(data, SOURCE, Profile({}, {}, {}, {}, _catalog(labels)))


def load_text(text: str, source: str) -> Profile:
    """A user's profile (YAML or JSON text) over the shipped one; InputError naming `source` and the field."""
    try:
        data: Any = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise InputError(f"{source}{where}", f"cannot read it as YAML or JSON ({getattr(err, 'problem', None) or err})"
                         ) from None
    base = defaults()
    labels = [str(label) for label in (data.get("products") or {})] if isinstance(data, dict) and \
        isinstance(data.get("products"), dict) else []
    catalog = _catalog([*labels, *base.products])
    return merged(data, source, Profile(base.products, base.nics, base.severity, base.pinned, catalog))


def load_file(path: str) -> Profile:
    """A user's profile file over the shipped one; InputError naming the path."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise InputError(path, f"cannot read the golden profile: {err.strerror}") from None
    return load_text(text, path)
