"""The text `nvidia-smi -q` prints, read into the snapshot's GPUs, driver and CUDA versions (what users who saved
only that have).

The layout: the `==============NVSMI LOG==============` banner, `Label : value` lines of the node (Driver Version,
CUDA Version, Attached GPUs), then one block per GPU opened by `GPU <bus id>`, its lines indented by four spaces per
level (a section is a label without a value). The labels of each value across driver generations (Clocks Throttle
Reasons, renamed Clocks Event Reasons in R535; Power Readings with Power Limit and Enforced Power Limit, split into
GPU Power Readings with Current Power Limit; the ECC counters of nvsmi_fields) are those of the XML elements.

Strict: a file that does not open with the banner is refused at its first line; a line of the node that is neither
`Label : value` nor `GPU <bus id>`, or a value that does not read, is refused with its line number.
"""
from __future__ import annotations

import re
from typing import Any, Optional

from .config_snapshot import available, integer
from .dcgm_results import UnreadableOutput
from .nvsmi_fields import Layout, Path, Tree, read_gpu

FORMAT = "nvidia-smi-q"
_BANNER = re.compile(r"=+\s*NVSMI LOG\s*=+")
_GPU = re.compile(r"GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])")
_LINE = re.compile(r"( *)([^:\s][^:]*?)\s*(?::\s?(.*))?")
_LINK = ("PCI", "GPU Link Info")
_VOLATILE = ("ECC Errors", "Volatile")
# The text's throttle reason labels by their XML names (the rest are the label in snake case).
_REASONS = {"idle": "gpu_idle", "display_clock_setting": "display_clocks_setting"}


def _snake(label: str) -> str:
    """A reason's label as its XML element is named: `HW Slowdown` is `hw_slowdown`."""
    return re.sub(r"\W+", "_", label.strip()).lower()


LAYOUT = Layout(
    paths={
        "product": (("Product Name",),), "serial": (("Serial Number",),), "uuid": (("GPU UUID",),),
        "vbios": (("VBIOS Version",),), "pstate": (("Performance State",),), "pci": (("PCI", "Bus Id"),),
        "persistence": (("Persistence Mode",),),
        "ecc_current": (("ECC Mode", "Current"),), "ecc_pending": (("ECC Mode", "Pending"),),
        "remap_pending": (("Remapped Rows", "Pending"),),
        "remap_failure": (("Remapped Rows", "Remapping Failure Occurred"),),
        "retired_pending": (("Retired Pages", "Pending Page Retirement"), ("Retired Pages", "Pending Page Blacklist"),
                            ("Retired Pages", "Pending")),
        "volatile_uncorrectable": ((*_VOLATILE, "Double Bit", "Total"), (*_VOLATILE, "SRAM Uncorrectable"),
                                   (*_VOLATILE, "SRAM Uncorrectable Parity"),
                                   (*_VOLATILE, "SRAM Uncorrectable SEC-DED"), (*_VOLATILE, "DRAM Uncorrectable")),
        "power_limit_w": (("GPU Power Readings", "Current Power Limit"), ("Power Readings", "Enforced Power Limit"),
                          ("Power Readings", "Power Limit")),
        "default_power_limit_w": (("GPU Power Readings", "Default Power Limit"),
                                  ("Power Readings", "Default Power Limit")),
        "pcie_gen": ((*_LINK, "PCIe Generation", "Device Current"), (*_LINK, "PCIe Generation", "Current")),
        "pcie_max_gen": ((*_LINK, "PCIe Generation", "Device Max"), (*_LINK, "PCIe Generation", "Max")),
        "host_max_gen": ((*_LINK, "PCIe Generation", "Host Max"),),
        "pcie_width": ((*_LINK, "Link Width", "Current"),),
        "pcie_max_width": ((*_LINK, "Link Width", "Max"),),
        "throttle": (("Clocks Event Reasons",), ("Clocks Throttle Reasons",)),
    },
    reason_name=lambda label: _REASONS.get(_snake(label), _snake(label)),
)


class _Block:
    """One GPU's lines: the value and line number at each path (the first, where a path repeats), in order."""

    def __init__(self) -> None:
        self.values: dict[Path, tuple[str, int]] = {}
        self.stack: list[tuple[int, str]] = []

    def add(self, indent: int, label: str, value: Optional[str], number: int) -> None:  # noqa: UP045 - module_utils typing
        while self.stack and self.stack[-1][0] >= indent:
            self.stack.pop()
        path = (*(above for _indent, above in self.stack), label)
        self.values.setdefault(path, (value if value is not None else "", number))
        if value is None or not value.strip():
            self.stack.append((indent, label))

    def tree(self) -> Tree:
        def value(path: Path) -> Optional[str]:  # noqa: UP045 - as above
            found = self.values.get(path)
            return found[0] if found else None

        def leaves(path: Path) -> list[tuple[str, str]]:
            return [(key[-1], text) for key, (text, _n) in self.values.items()
                    if key[:len(path)] == path and len(key) > len(path) and text.strip()]

        def where(path: Path) -> str:
            found = self.values.get(path)
            return f"line {found[1]} ({' > '.join(path)})" if found else " > ".join(path)

        return Tree(value, leaves, where)


def read(text: str) -> dict[str, Any]:
    """{"gpus", "driver", "cuda", "attached_gpus"} of an `nvidia-smi -q` output."""
    lines = text.splitlines()
    first = next((n for n, line in enumerate(lines) if line.strip()), 0)
    if not lines or not _BANNER.fullmatch(lines[first].strip()):
        shown = lines[first].strip()[:120] if lines else ""
        raise UnreadableOutput(f"line {first + 1}: cannot read {shown!r} as the NVSMI LOG banner nvidia-smi -q opens with")
    head: dict[str, tuple[str, int]] = {}
    blocks: list[_Block] = []
    for number, line in enumerate(lines[first + 1:], first + 2):
        if not line.strip():
            continue
        found = _LINE.fullmatch(line.expandtabs(4).rstrip())
        gpu = _GPU.fullmatch(line.strip())
        if gpu and not line.startswith(" "):
            blocks.append(_Block())
        elif found and found.group(1):
            if not blocks:
                raise UnreadableOutput(f"line {number}: cannot read {line.strip()[:120]!r}: indented before any GPU block")
            blocks[-1].add(len(found.group(1)), found.group(2), found.group(3), number)
        elif found and found.group(3) is not None:
            head.setdefault(found.group(2), (found.group(3), number))
        else:
            raise UnreadableOutput(f"line {number}: cannot read {line.strip()[:120]!r} as 'Label : value' or "
                                   "'GPU <bus id>'")
    gpus = [read_gpu(i, block.tree(), LAYOUT) for i, block in enumerate(blocks)]
    attached = head.get("Attached GPUs", ("", 0))
    return {"gpus": gpus, "driver": available(head.get("Driver Version", ("",))[0]),
            "cuda": available(head.get("CUDA Version", ("",))[0]),
            "attached_gpus": integer(attached[0], f"line {attached[1]} (Attached GPUs)")}
