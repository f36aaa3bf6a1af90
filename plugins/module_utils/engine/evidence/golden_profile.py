"""The golden profile: what each node should be, per GPU product (catalog/golden-defaults.yaml, overridden field by
field by a user's file; docs/golden-configuration.md).

Layout: `{apiVersion: cre.certification/v1, kind: GoldenProfile, products: {<label>: {gpus, nvlinks, minDriver,
minCuda, powerLimitW, pinned}}, nics: {<platform>: {count, rateGbps, linkLayer}}, severity: {<rule>: fail|warn},
pinned: {<field>: <pin>}}`. A pin is what golden_generate writes: `{value, nodes, of}` (the majority value and how
many of the run's nodes held it) or the value alone; `nic.fw` pins a list, one per firmware line (a node's
ConnectX-7 and ConnectX-6 Dx run different lines, 28.x and 22.x). Product pins override the top-level ones.

Pure: `merged` validates parsed data (a bad field is one InputError naming its path in the file) over a base
profile; catalog/golden_defaults reads the files and gives each profile the catalog's names (`aliases`: every
spelling of a product, gpu_floors') and GPU counts (`gpus`: per product and platform, gpu-defaults.yaml).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Optional

from ..api.errors import InputError

API_VERSION = "cre.certification/v1"
KIND = "GoldenProfile"
SEVERITIES = ("fail", "warn")
RULES = ("gpu_count", "ecc_current", "ecc_pending", "remap_pending", "remap_failure", "volatile_uncorrectable",
         "retired_pending", "persistence", "power_limit_w", "nvlinks_active", "pcie_gen", "pcie_width", "driver",
         "cuda", "throttle", "throttle.hw", "nic.count", "nic.state", "nic.phys_state", "nic.rate", "nic.pcie_gen",
         "nic.pcie_width", "pinned", "drift")
PINNABLE = ("vbios", "driver", "kernel", "nic.fw")
_PRODUCT_KEYS = ("gpus", "nvlinks", "minDriver", "minCuda", "powerLimitW", "pinned")
_NIC_KEYS = ("count", "rateGbps", "linkLayer")
_VERSION = re.compile(r"\d+(\.\d+)*")


@dataclass(frozen=True)
class Pin:
    value: str
    nodes: Optional[int] = None  # noqa: UP045 - ansible-test's pylint reads module_utils as older Python
    of: Optional[int] = None  # noqa: UP045 - as above


@dataclass(frozen=True)
class ProductRule:
    label: str
    gpus: Optional[int] = None  # noqa: UP045 - as above
    nvlinks: Optional[int] = None  # noqa: UP045 - as above
    min_driver: Optional[str] = None  # noqa: UP045 - as above
    min_cuda: Optional[str] = None  # noqa: UP045 - as above
    power_limit_w: Optional[float] = None  # noqa: UP045 - as above
    pinned: dict[str, list[Pin]] = field(default_factory=dict)


@dataclass(frozen=True)
class NicRule:
    count: Optional[int] = None  # noqa: UP045 - as above
    rate_gbps: Optional[float] = None  # noqa: UP045 - as above
    link_layer: Optional[str] = None  # noqa: UP045 - as above


@dataclass(frozen=True)
class Catalog:
    """What the catalog knows of products: `aliases` every normalized spelling to its label, `gpus` a product's
    GPUs per node by platform ("" for any), `power_w` its SKU default power limit."""

    aliases: dict[str, str] = field(default_factory=dict)
    gpus: dict[str, dict[str, int]] = field(default_factory=dict)
    power_w: dict[str, float] = field(default_factory=dict)

    def key(self, label: str) -> str:
        """A product's key: its catalog label for any of its names, else the name normalized."""
        name = normalize(label)
        return self.aliases.get(name, name)


@dataclass(frozen=True)
class Profile:
    products: dict[str, ProductRule]
    nics: dict[str, NicRule]
    severity: dict[str, str]
    pinned: dict[str, list[Pin]]
    catalog: Catalog = field(default_factory=Catalog)

    def product(self, label: Optional[str]) -> Optional[ProductRule]:  # noqa: UP045 - as above
        """The rule of a product by its label or any alias, None when the profile has none."""
        return self.products.get(self.catalog.key(label)) if label else None

    def expected_gpus(self, label: Optional[str], platform: str = "") -> Optional[int]:  # noqa: UP045 - as above
        """The product's GPU count: its own `gpus`, else gpusPerNode of its architecture on `platform`; None for a
        product the profile does not list."""
        rule = self.product(label)
        if rule is None:
            return None
        counts = self.catalog.gpus.get(self.catalog.key(rule.label), {})
        return rule.gpus if rule.gpus is not None else counts.get(platform, counts.get(""))

    def power_limit_w(self, label: Optional[str]) -> Optional[float]:  # noqa: UP045 - as above
        """The product's power limit: its own `powerLimitW`, else the SKU default of the catalog."""
        rule = self.product(label)
        if rule is not None and rule.power_limit_w is not None:
            return rule.power_limit_w
        return self.catalog.power_w.get(self.catalog.key(label)) if label else None

    def pins(self, label: Optional[str], name: str) -> list[Pin]:  # noqa: UP045 - as above
        rule = self.product(label)
        return (rule.pinned.get(name) if rule is not None else None) or self.pinned.get(name, [])


def normalize(product: str) -> str:
    """`NVIDIA H100 80GB HBM3` and `nvidia-h100-80gb-hbm3` are the same product (gpu_floors.normalize's rule)."""
    return re.sub(r"\s+", "-", product.strip()).upper()


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def _fail(source: str, path: str, rule: str) -> InputError:
    return InputError(f"{source} {path}".strip(), rule)


def _int(value: Any, source: str, path: str) -> Optional[int]:  # noqa: UP045 - as above
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _fail(source, path, f"{value!r} is not a count (a whole number, 0 or more, or null)")
    return value


def _positive(value: Any, source: str, path: str) -> Optional[float]:  # noqa: UP045 - as above
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise _fail(source, path, f"{value!r} is not a positive number (or null)")
    return float(value)


def _version(value: Any, source: str, path: str) -> Optional[str]:  # noqa: UP045 - as above
    if value is None:
        return None
    if not isinstance(value, str) or not _VERSION.fullmatch(value):
        raise _fail(source, path, f"{value!r} is not a version (dotted numbers, quoted: \"570.124.06\")")
    return value


def _map(value: Any, source: str, path: str, what: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _fail(source, path, f"give a map of {what}")
    return value


def _pins(value: Any, source: str, path: str) -> dict[str, list[Pin]]:
    out: dict[str, list[Pin]] = {}
    for name, pin in _map(value, source, path, "field to its pinned value").items():
        if name not in PINNABLE:
            raise _fail(source, f"{path}.{name}", f"is not a pinnable field ({', '.join(PINNABLE)})")
        items = pin if isinstance(pin, list) and name == "nic.fw" else [pin]
        out[name] = [_pin(item, source, f"{path}.{name}") for item in items]
    return out


def _pin(value: Any, source: str, path: str) -> Pin:
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return Pin(str(value))
    if not isinstance(value, dict) or "value" not in value or set(value) - {"value", "nodes", "of"}:
        raise _fail(source, path, "give the value, or {value, nodes, of}")
    return Pin(str(value["value"]), _int(value.get("nodes"), source, f"{path}.nodes"),
               _int(value.get("of"), source, f"{path}.of"))


def _product(label: str, value: Any, source: str, base: Optional[ProductRule]) -> ProductRule:  # noqa: UP045
    path = f"products.{label}"
    entry = _map(value, source, path, f"{', '.join(_PRODUCT_KEYS)}")
    unknown = set(entry) - set(_PRODUCT_KEYS)
    if unknown:
        raise _fail(source, f"{path}.{sorted(unknown)[0]}", f"is not a product field ({', '.join(_PRODUCT_KEYS)})")
    base = base or ProductRule(label)
    return ProductRule(
        base.label,
        _int(entry["gpus"], source, f"{path}.gpus") if "gpus" in entry else base.gpus,
        _int(entry["nvlinks"], source, f"{path}.nvlinks") if "nvlinks" in entry else base.nvlinks,
        _version(entry["minDriver"], source, f"{path}.minDriver") if "minDriver" in entry else base.min_driver,
        _version(entry["minCuda"], source, f"{path}.minCuda") if "minCuda" in entry else base.min_cuda,
        _positive(entry["powerLimitW"], source, f"{path}.powerLimitW") if "powerLimitW" in entry
        else base.power_limit_w,
        {**base.pinned, **_pins(entry.get("pinned"), source, f"{path}.pinned")})


def _nic(platform: str, value: Any, source: str, base: Optional[NicRule]) -> NicRule:  # noqa: UP045 - as above
    path = f"nics.{platform}"
    entry = _map(value, source, path, f"{', '.join(_NIC_KEYS)}")
    unknown = set(entry) - set(_NIC_KEYS)
    if unknown:
        raise _fail(source, f"{path}.{sorted(unknown)[0]}", f"is not a NIC field ({', '.join(_NIC_KEYS)})")
    base = base or NicRule()
    layer = entry.get("linkLayer", base.link_layer)
    if layer is not None and layer not in ("InfiniBand", "Ethernet"):
        raise _fail(source, f"{path}.linkLayer", f"{layer!r} is not InfiniBand or Ethernet")
    return NicRule(_int(entry["count"], source, f"{path}.count") if "count" in entry else base.count,
                   _positive(entry["rateGbps"], source, f"{path}.rateGbps") if "rateGbps" in entry else base.rate_gbps,
                   layer)


def merged(data: Any, source: str, base: Profile) -> Profile:
    """`data` (a profile's parsed YAML/JSON) over `base`. InputError with the field path, prefixed by `source`
    (the file)."""
    if not isinstance(data, dict):
        raise _fail(source, "", f"is not a GoldenProfile: give a map with apiVersion {API_VERSION}, kind {KIND}")
    for key, want in (("apiVersion", API_VERSION), ("kind", KIND)):
        if data.get(key) != want:
            raise _fail(source, key, f"{data.get(key)!r} is not {want!r}")
    unknown = set(data) - {"apiVersion", "kind", "products", "nics", "severity", "pinned"}
    if unknown:
        raise _fail(source, sorted(unknown)[0], "is not a GoldenProfile field (products, nics, severity, pinned)")
    products = dict(base.products)
    for label, value in _map(data.get("products"), source, "products", "GPU product to its rules").items():
        key = base.catalog.key(str(label))
        products[key] = _product(str(label), value, source, products.get(key))
    nics = dict(base.nics)
    for platform, value in _map(data.get("nics"), source, "nics", "platform to its NIC ports").items():
        nics[str(platform)] = _nic(str(platform), value, source, nics.get(str(platform)))
    severity = dict(base.severity)
    for rule, value in _map(data.get("severity"), source, "severity", "rule to fail or warn").items():
        if rule not in RULES:
            raise _fail(source, f"severity.{rule}", f"is not a rule ({', '.join(RULES)})")
        if value not in SEVERITIES:
            raise _fail(source, f"severity.{rule}", f"{value!r} is not fail or warn")
        severity[rule] = value
    return Profile(products, nics, severity, {**base.pinned, **_pins(data.get("pinned"), source, "pinned")},
                   base.catalog)
