"""`lspci -vvv` read into PCIe links: each device's capability (`LnkCap`) against its status (`LnkSta`).

A device opens with its header (`0000:1a:00.0 3D controller: NVIDIA Corporation ...`, the domain optional); its
`LnkCap:` line gives the device's maximum speed and width, `LnkSta:` the link's current ones (lspci marks them
`(downgraded)` against the capability; `LnkCap2`/`LnkSta2` are other registers and not read). NVIDIA display and 3D
controllers are GPUs, network, Ethernet and InfiniBand controllers NICs; other devices (bridges, storage) are
left out. Users also paste the lines of one device grepped out (`lspci -s 01:00.0 -vvv | grep Width`): without a
header, each `LnkCap` opens a device of its own, named `device <n>`, judged as a NIC's link (the class is unknown).

Strict: an unindented line that is not a device header is refused, and so is a `LnkCap`/`LnkSta` line whose speed
or width does not read; a file without either line is refused.
"""
from __future__ import annotations

import re
from typing import Any, Optional

from .config_snapshot import gen_of_speed, gpu, nic
from .dcgm_results import UnreadableOutput

FORMAT = "lspci"
_HEADER = re.compile(r"((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]) ([^:]+): (.*)")
_LINK = re.compile(r"(LnkCap|LnkSta):\s*(.*)")
_SPEED = re.compile(r"Speed ([^,]+?)(?: \((?:ok|downgraded)\))?(?:,|$)")
_WIDTH = re.compile(r"Width x(\d+)(?: \((?:ok|downgraded)\))?(?:,|$)")
_GPU_CLASSES = ("VGA compatible controller", "3D controller", "Display controller")
_NIC_CLASSES = ("Ethernet controller", "Infiniband controller", "InfiniBand controller", "Network controller")


def read(text: str) -> dict[str, Any]:
    """{"gpus": [gpu], "nics": [port]} of the devices with a link (a NIC's `port` is None: lspci knows none)."""
    devices: list[dict[str, Any]] = []
    current: Optional[dict[str, Any]] = None  # noqa: UP045 - ansible-test's pylint reads module_utils as older Python
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped:
            continue
        header = _HEADER.fullmatch(stripped)
        if not line[0].isspace():
            if not header:
                raise UnreadableOutput(f"line {number}: cannot read {stripped[:120]!r} as an lspci device header")
            current = {"address": header.group(1), "class": header.group(2), "vendor": header.group(3)}
            devices.append(current)
            continue
        link = _LINK.match(stripped)
        if not link:
            continue
        if current is None or (link.group(1) == "LnkCap" and "LnkCap" in current):
            current = {"address": None, "class": "", "vendor": ""}
            devices.append(current)
        current[link.group(1)] = _link(link.group(2), f"line {number} ({link.group(1)})")
    linked = [d for d in devices if "LnkCap" in d or "LnkSta" in d]
    if not linked:
        raise UnreadableOutput("no LnkCap or LnkSta line: give lspci -vvv's output (as root: it hides the link "
                               "registers from other users)")
    return _snapshot_parts(linked)


def _link(text: str, where: str) -> tuple[Optional[int], Optional[int]]:  # noqa: UP045 - as above
    speed, width = _SPEED.search(text), _WIDTH.search(text)
    if not speed or not width:
        raise UnreadableOutput(f"{where}: cannot read {text.strip()[:120]!r} as 'Speed <n>GT/s, Width x<n>'")
    gen = None if speed.group(1).strip().lower() == "unknown" else gen_of_speed(speed.group(1), where)
    return gen, int(width.group(1))


def _snapshot_parts(devices: list[dict[str, Any]]) -> dict[str, Any]:
    gpus: list[dict[str, Any]] = []
    nics: list[dict[str, Any]] = []
    for n, device in enumerate(devices, 1):
        (max_gen, max_width), (gen, width) = device.get("LnkCap", (None, None)), device.get("LnkSta", (None, None))
        link = {"pcie_gen": gen, "pcie_width": width, "pcie_max_gen": max_gen, "pcie_max_width": max_width}
        if device["class"] in _GPU_CLASSES and "NVIDIA" in device["vendor"]:
            gpus.append(gpu(len(gpus), pci=device["address"], **link))
        elif device["class"] in _NIC_CLASSES or not device["class"]:
            nics.append(nic(device["address"] or f"device {n}", None, **link))
    return {"gpus": gpus, "nics": nics}
