"""The node configuration snapshot every configuration reader fills (issue 42's contract), and the value readers
they share.

A snapshot is plain JSON data: `{"node", "gpus": [gpu], "nics": [nic], "driver", "cuda", "kernel"}` with the keys
of GPU_KEYS and NIC_KEYS. None is "not in the output": a missing value is never 0 or false, and a tool's "N/A"
(not available on this GPU) is None too. Two keys beyond the contract's: a GPU's `pstate` (an idle GPU drops its
PCIe link, so a slow link at P8 is no fault) and the node's `attached_gpus` (nvidia-smi's own count, which a
trimmed output contradicts).
"""
from __future__ import annotations

import re
from typing import Any, Optional

from .dcgm_results import UnreadableOutput

GPU_KEYS = ("index", "uuid", "product", "serial", "vbios", "pci", "ecc_current", "ecc_pending", "remap_pending",
            "remap_failure", "volatile_uncorrectable", "retired_pending", "persistence", "power_limit_w",
            "default_power_limit_w", "nvlinks_active", "nvlinks_total", "pcie_gen", "pcie_width", "pcie_max_gen",
            "pcie_max_width", "host_max_gen", "host_max_width", "throttle", "pstate")
NIC_KEYS = ("device", "port", "state", "phys_state", "rate_gbps", "fw", "link_layer", "pcie_gen", "pcie_width",
            "pcie_max_gen", "pcie_max_width", "host_max_gen", "host_max_width")
# What nvidia-smi prints where it has no value: not available, not supported, deprecated (v13), or an error.
NOT_AVAILABLE = re.compile(r"\[?(N/A|Not Supported|Not Available|Unknown Error|Insufficient Permissions|"
                           r"Requested functionality has been deprecated|GPU requires reset|Unknown)\]?", re.I)
# PCIe generation per transfer rate (GT/s), as lspci and sysfs print the speed.
GEN_OF_RATE = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6, 128.0: 7}


def gpu(index: int, **values: Any) -> dict[str, Any]:
    """A GPU of the snapshot: every key, None unless given."""
    return {key: values.get(key, index if key == "index" else None) for key in GPU_KEYS}


def nic(device: str, port: Optional[int], **values: Any) -> dict[str, Any]:  # noqa: UP045 - as below
    """A NIC port of the snapshot: every key, None unless given."""
    return {**{key: values.get(key) for key in NIC_KEYS}, "device": device, "port": port}


def node(name: str, gpus: list[dict[str, Any]], nics: list[dict[str, Any]], **values: Any) -> dict[str, Any]:
    """A node's snapshot; `values`: driver, cuda, kernel, attached_gpus (None unless given)."""
    return {"node": name, "gpus": gpus, "nics": nics, "driver": values.get("driver"), "cuda": values.get("cuda"),
            "kernel": values.get("kernel"), "attached_gpus": values.get("attached_gpus")}


def available(text: Optional[str]) -> Optional[str]:  # noqa: UP045 - ansible-test's pylint reads module_utils as older Python
    """The value as printed, None for empty text or a not-available word."""
    value = (text or "").strip()
    return None if not value or NOT_AVAILABLE.fullmatch(value) else value


def flag(text: Optional[str], where: str, words: tuple[str, str]) -> Optional[bool]:  # noqa: UP045 - as above
    """True for words[0], False for words[1] (any case), None when not available; UnreadableOutput otherwise."""
    value = available(text)
    if value is None:
        return None
    lowered = value.lower()
    if lowered not in (words[0].lower(), words[1].lower()):
        raise UnreadableOutput(f"{where}: cannot read {value!r} as {words[0]} or {words[1]}")
    return lowered == words[0].lower()


def number(text: Optional[str], where: str, unit: str = "") -> Optional[float]:  # noqa: UP045 - as above
    """A figure with an optional unit (`500.00 W`, `16x`, `4`), None when not available."""
    value = available(text)
    if value is None:
        return None
    found = re.fullmatch(rf"(-?\d+(?:\.\d+)?)\s*{re.escape(unit)}", value, re.I) if unit else None
    found = found or re.fullmatch(r"(-?\d+(?:\.\d+)?)", value)
    if not found:
        raise UnreadableOutput(f"{where}: cannot read {value!r} as a number{' of ' + unit if unit else ''}")
    return float(found.group(1))


def integer(text: Optional[str], where: str, unit: str = "") -> Optional[int]:  # noqa: UP045 - as above
    found = number(text, where, unit)
    if found is not None and found != int(found):
        raise UnreadableOutput(f"{where}: {text!r} is not a whole number")
    return None if found is None else int(found)


def gen_of_speed(speed: Optional[str], where: str) -> Optional[int]:  # noqa: UP045 - as above
    """The PCIe generation of a link speed as lspci (`16GT/s`) or sysfs (`32.0 GT/s PCIe`) prints it; None for
    an unknown speed sysfs prints as `Unknown`."""
    value = available(speed)
    if value is None:
        return None
    found = re.fullmatch(r"(\d+(?:\.\d+)?)\s*GT/s(?:\s+PCIe)?(?:\s*\(.*\))?", value)
    if not found or float(found.group(1)) not in GEN_OF_RATE:
        raise UnreadableOutput(f"{where}: cannot read {value!r} as a PCIe link speed (2.5 to 128 GT/s)")
    return GEN_OF_RATE[float(found.group(1))]


def rate_gbps(rate: Optional[str], where: str) -> Optional[float]:  # noqa: UP045 - as above
    """A port's rate in Gb/s from sysfs (`400 Gb/sec (4X NDR)`) or ibstat (`400`)."""
    value = available(rate)
    if value is None:
        return None
    found = re.fullmatch(r"(\d+(?:\.\d+)?)(?:\s*Gb/sec(?:\s*\(.*\))?)?", value)
    if not found:
        raise UnreadableOutput(f"{where}: cannot read {value!r} as a port rate (Gb/sec)")
    return float(found.group(1))
