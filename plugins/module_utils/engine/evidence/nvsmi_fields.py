"""One GPU of `nvidia-smi -q` into the snapshot, whichever way it was printed (XML, text).

Both layouts are trees of named values; a Tree answers the value at a path (None when the path is not in the output)
and the leaves under a path. Each snapshot key has the paths it was printed at across the driver generations, newest
first (XML tags of nvsmi_device_v10 to v13, and the text labels nvidia-smi prints for them):

- power limit: `gpu_power_readings/current_power_limit` (v12+), `power_readings/enforced_power_limit` or
  `power_limit` (v11 and before);
- PCIe: `max_link_gen` is the lesser of the device's and the host's maximum; from R535 `max_device_link_gen`,
  `max_host_link_gen` and `device_current_link_gen` (the device's side) are printed too;
- throttle reasons: `clocks_event_reasons/clocks_event_reason_*` (R535+) or `clocks_throttle_reasons/
  clocks_throttle_reason_*`, named here without the prefix;
- ECC: volatile uncorrectable counts are `double_bit/total` (v11 and before), `sram_uncorrectable` +
  `dram_uncorrectable` (v12), `sram_uncorrectable_parity` + `sram_uncorrectable_secded` + `dram_uncorrectable`
  (Hopper, v13); retired pages pending is `pending_retirement` or `pending_blacklist` (Pascal to Volta; N/A from
  Ampere, where row remapping replaces it); `remapped_rows` is N/A where the GPU has none (before Ampere, and with
  MIG enabled).

nvidia-smi -q prints no NVLink state: `nvlinks_active`/`nvlinks_total` stay None here.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Optional

from .config_snapshot import available, flag, gpu, integer, number

Path = tuple[str, ...]


@dataclass(frozen=True)
class Tree:
    """`value(path)` the text at a path (None when absent), `leaves(path)` the (name, text) pairs under it (nested
    ones too: the text layout nests HW Thermal Slowdown under HW Slowdown), `where(path)` the path as an error names
    it."""

    value: Callable[[Path], Optional[str]]  # noqa: UP045 - ansible-test's pylint reads module_utils as older Python
    leaves: Callable[[Path], list[tuple[str, str]]]
    where: Callable[[Path], str]


@dataclass(frozen=True)
class Layout:
    """The paths of each snapshot key in one layout, newest first, and how a throttle reason's name is spelled."""

    paths: dict[str, tuple[Path, ...]]
    reason_name: Callable[[str], str]
    enabled: tuple[str, str] = ("Enabled", "Disabled")
    yes: tuple[str, str] = ("Yes", "No")
    active: tuple[str, str] = ("Active", "Not Active")


TEXT_KEYS = ("product", "serial", "uuid", "vbios", "pstate")
FLAG_KEYS = {"persistence": "enabled", "ecc_current": "enabled", "ecc_pending": "enabled",
             "remap_pending": "yes", "remap_failure": "yes"}
INT_KEYS = {"pcie_gen": "", "pcie_max_gen": "", "host_max_gen": "", "pcie_width": "x", "pcie_max_width": "x"}
POWER_KEYS = ("power_limit_w", "default_power_limit_w")


def read_gpu(index: int, tree: Tree, layout: Layout) -> dict[str, Any]:
    """GPU `index` of the snapshot from its tree. UnreadableOutput names the path of a value it cannot read."""
    values: dict[str, Any] = {}
    for key in TEXT_KEYS:
        values[key] = available(_first(tree, layout.paths[key])[1])
    for key, words in FLAG_KEYS.items():
        path, text = _first(tree, layout.paths[key])
        values[key] = flag(text, tree.where(path), getattr(layout, words))
    for key, unit in INT_KEYS.items():
        path, text = _first(tree, layout.paths[key])
        values[key] = integer(text, tree.where(path), unit)
    for key in POWER_KEYS:
        path, text = _first(tree, layout.paths[key])
        values[key] = number(text, tree.where(path), "W")
    values["pci"] = available(_first(tree, layout.paths["pci"])[1])
    pending = [flag(tree.value(p), tree.where(p), layout.yes) for p in layout.paths["retired_pending"]]
    values["retired_pending"] = None if all(p is None for p in pending) else any(pending)
    values["volatile_uncorrectable"] = _uncorrectable(tree, layout)
    values["throttle"] = _throttle(tree, layout)
    return gpu(index, **values)


def _first(tree: Tree, paths: tuple[Path, ...]) -> tuple[Path, Optional[str]]:  # noqa: UP045 - as above
    """The first path the output prints a value at (else the first path, None)."""
    for path in paths:
        text = tree.value(path)
        if available(text) is not None:
            return path, text
    return paths[0], None


def _uncorrectable(tree: Tree, layout: Layout) -> Optional[int]:  # noqa: UP045 - as above
    """The volatile uncorrectable ECC count: the sum of the counters the layout prints, None when none is
    available (the GPU has no ECC, or it is off)."""
    counts = [integer(tree.value(p), tree.where(p)) for p in layout.paths["volatile_uncorrectable"]]
    found = [c for c in counts if c is not None]
    return sum(found) if found else None


def _throttle(tree: Tree, layout: Layout) -> Optional[list[str]]:  # noqa: UP045 - as above
    """The active throttle (clocks event) reasons by their XML name; None when the output prints no reasons."""
    for path in layout.paths["throttle"]:
        leaves = tree.leaves(path)
        if leaves:
            active = [(layout.reason_name(name), flag(text, tree.where((*path, name)), layout.active))
                      for name, text in leaves]
            return [name for name, on in active if on]
    return None
