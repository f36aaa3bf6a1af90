"""The GEMM burn-in's floors and default power limits per GPU product (`products` in catalog/gpu-defaults.yaml).

A product is the node label `nvidia.com/gpu.product` (NVIDIA-H100-80GB-HBM3), or one of its `aliases`; compared
without case, whitespace read as `-` (nvidia-smi's `NVIDIA H100 80GB HBM3` is the same GPU). Its floors are rows by
power limit: the row of the highest `powerW` at or below the GPU's enforced limit judges it (the lowest row when
the limit is below every row; with the limit unknown, the row of the default power limit, or the top row when
that is unknown too). A floor is `(tflops,
provisional)`: None is no figure, and a provisional floor warns, never fails (docs/gemm-burn-in-verdict.md says which rest
on what). A user's floor for the run (`overrides`) replaces ours and is never provisional.

The table is validated once, on first use: a malformed row is one clear error naming its path in the file.
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Optional, Union

from ..api.errors import InputError
from .entries import gpu_defaults_table

DTYPES = ("bf16", "fp8", "tf32", "fp16")
FILE = "catalog/gpu-defaults.yaml"
POWER_TOLERANCE_W = 1.0   # NVML reports milliwatts: a limit within 1 W of a row's is that row
Number = Union[int, float]  # noqa: UP007 - ansible-test's pylint reads module_utils as older Python


@dataclass(frozen=True)
class Floor:
    tflops: Optional[float]  # noqa: UP045 - as above
    provisional: bool = False


@dataclass(frozen=True)
class Product:
    label: str
    name: str
    default_power_w: Optional[float]  # noqa: UP045 - as above
    rows: tuple[tuple[float, dict[str, Floor]], ...]   # (powerW, dtype -> floor), by powerW


def normalize(product: str) -> str:
    """`NVIDIA H100 80GB HBM3` and `nvidia-h100-80gb-hbm3` are the same product."""
    return re.sub(r"\s+", "-", product.strip()).upper()


def _number(value: Any, path: str, nullable: bool = False) -> Optional[float]:  # noqa: UP045 - as above
    if value is None and nullable:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise InputError(f"{FILE} {path}", f"{value!r} is not a positive number{' or null' if nullable else ''}")
    return float(value)


def _floor(value: Any, path: str) -> Floor:
    if not isinstance(value, dict) or set(value) - {"tflops", "provisional"} or "tflops" not in value:
        raise InputError(f"{FILE} {path}", "give {tflops: <number or null>, provisional: <bool>}")
    provisional = value.get("provisional", False)
    if not isinstance(provisional, bool):
        raise InputError(f"{FILE} {path}.provisional", f"{provisional!r} is not true or false")
    return Floor(_number(value["tflops"], f"{path}.tflops", nullable=True), provisional)


def _product(label: str, entry: Any) -> Product:
    path = f"products.{label}"
    if not isinstance(entry, dict) or set(entry) - {"name", "aliases", "defaultPowerW", "floors"}:
        raise InputError(f"{FILE} {path}", "give name, aliases, defaultPowerW and floors, nothing else")
    rows = []
    for i, row in enumerate(entry.get("floors") or []):
        where = f"{path}.floors[{i}]"
        if not isinstance(row, dict) or "powerW" not in row or set(row) - {"powerW", *DTYPES}:
            raise InputError(f"{FILE} {where}", f"give powerW and floors by dtype ({', '.join(DTYPES)})")
        floors = {dtype: _floor(value, f"{where}.{dtype}") for dtype, value in row.items() if dtype != "powerW"}
        rows.append((float(_number(row["powerW"], f"{where}.powerW") or 0), floors))
    if not rows:
        raise InputError(f"{FILE} {path}.floors", "give at least one row")
    rows.sort(key=lambda r: r[0])
    power = _number(entry.get("defaultPowerW"), f"{path}.defaultPowerW", nullable=True)
    return Product(label, str(entry.get("name") or label), power, tuple(rows))


def load(table: Mapping[str, Any]) -> dict[str, Product]:
    """The products of a gpu-defaults table, by every normalized name (label and aliases); InputError naming the
    first malformed field, or a name two products share."""
    products = table.get("products", {})
    if not isinstance(products, dict):
        raise InputError(f"{FILE} products", "give a map of GPU product to its floors")
    out: dict[str, Product] = {}
    for label, entry in products.items():
        product = _product(str(label), entry)
        for name in [str(label), *((entry or {}).get("aliases") or [])]:
            key = normalize(str(name))
            if key in out:
                raise InputError(f"{FILE} products.{label}", f"{name!r} is already {out[key].label}'s name")
            out[key] = product
    return out


@lru_cache(maxsize=1)
def products() -> dict[str, Product]:
    return load(gpu_defaults_table())


def product_of(label: str) -> Optional[Product]:  # noqa: UP045 - as above
    """The product a node label names, None when the catalog has no floors for it."""
    return products().get(normalize(label)) if label else None


def default_power_w(product: str) -> Optional[float]:  # noqa: UP045 - as above
    """The SKU's default power limit (W), None when unknown (an unlisted product, or one its OEM configures)."""
    found = product_of(product)
    return found.default_power_w if found else None


def floor_for(product: str, dtype: str, power_limit_w: Optional[Number] = None,  # noqa: UP045 - as above
              overrides: Optional[Mapping[str, Any]] = None) -> tuple[Optional[float], bool]:  # noqa: UP045
    """(TFLOPS or None, provisional) for one GPU of `product` at `power_limit_w` (None: its default) running
    `dtype`. `overrides`: the run's own floors, `{dtype: tflops}` for every product or `{product: {dtype: tflops}}`;
    one found wins and is not provisional. An unlisted product or dtype has no floor: (None, False)."""
    own = _override(product, dtype, overrides or {})
    if own is not None:
        return own, False
    found = product_of(product)
    if found is None:
        return None, False
    limit = float(power_limit_w) if power_limit_w else found.default_power_w
    row = found.rows[0][1]
    for power, floors in found.rows:
        if limit is not None and power <= limit + POWER_TOLERANCE_W:
            row = floors
    if limit is None:
        row = found.rows[-1][1]
    floor = row.get(dtype)
    return (floor.tflops, floor.provisional) if floor else (None, False)


def overrides_text(value: Any, path: str) -> str:
    """A run's own floors (`{dtype: tflops}` for every product, `{product: {dtype: tflops}}` for one) checked and
    written as the JSON the Certification, its Workflows and Jobs carry (ANNOTATION_GEMM_FLOORS). InputError with the
    field path for anything else."""
    if not isinstance(value, Mapping):
        raise InputError(path, "give {dtype: TFLOPS} or {product: {dtype: TFLOPS}}")
    for key, floors in value.items():
        for dtype, tflops in (floors.items() if isinstance(floors, Mapping) else [(key, floors)]):
            where = f"{path}.{key}" + (f".{dtype}" if isinstance(floors, Mapping) else "")
            if dtype not in DTYPES:
                raise InputError(where, f"{dtype!r} is not a dtype ({', '.join(DTYPES)})"
                                 + ("" if isinstance(floors, Mapping) else "; a product maps to {dtype: TFLOPS}"))
            if isinstance(tflops, bool) or not isinstance(tflops, (int, float)) or tflops <= 0:
                raise InputError(where, f"{tflops!r} is not a positive number of TFLOPS")
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def overrides_of(text: Optional[str]) -> dict[str, Any]:  # noqa: UP045 - as above
    """The run's own floors from the annotation's JSON ({} without one, or one that does not parse)."""
    try:
        found = json.loads(text) if text else {}
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def _override(product: str, dtype: str, overrides: Mapping[str, Any]) -> Optional[float]:  # noqa: UP045
    value = overrides.get(dtype)
    for name, floors in overrides.items():
        if isinstance(floors, Mapping) and normalize(name) in _names(product):
            value = floors.get(dtype, value)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


def _names(product: str) -> set[str]:
    """A label's normalized names: itself, and every name of the product it is."""
    found = product_of(product)
    names = {normalize(product)}
    if found is not None:
        names |= {key for key, other in products().items() if other is found}
    return names
