"""`nvidia-smi nvlink -s` read into each GPU's active and total NVLinks (`nvidia-smi -q` prints no NVLink state).

Its layout: `GPU <n>: <name> (UUID: GPU-...)`, then one `Link <l>: <speed> GB/s` line per link, `<inactive>` for a
link that is down. A GPU with no NVLink prints no link line (0 of 0); a GPU whose every link is down prints
`NVML: Unable to retrieve NVLink information as all links are inActive` (0 active, total unknown).

Strict: a file that does not open with a GPU line is refused at its first line, and so is a line of no such form.
"""
from __future__ import annotations

import re
from typing import Any

from .dcgm_results import UnreadableOutput

FORMAT = "nvidia-smi-nvlink"
_GPU = re.compile(r"GPU (\d+): (.*?)(?: \(UUID: (\S+)\))?")
_LINK = re.compile(r"Link (\d+): (?:(\d+(?:\.\d+)?) GB/s|<inactive>)")
_ALL_DOWN = re.compile(r"NVML: Unable to retrieve NVLink information as all links are in[Aa]ctive")


def read(text: str) -> dict[int, dict[str, Any]]:
    """{GPU index: {"uuid", "nvlinks_active", "nvlinks_total"}}."""
    gpus: dict[int, dict[str, Any]] = {}
    current = -1
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        gpu, link = _GPU.fullmatch(stripped), _LINK.fullmatch(stripped)
        if not stripped:
            continue
        if gpu:
            current = int(gpu.group(1))
            gpus[current] = {"uuid": gpu.group(3), "nvlinks_active": 0, "nvlinks_total": 0}
        elif current >= 0 and link:
            gpus[current]["nvlinks_total"] += 1
            gpus[current]["nvlinks_active"] += 1 if link.group(2) else 0
        elif current >= 0 and _ALL_DOWN.fullmatch(stripped):
            gpus[current]["nvlinks_total"] = None
        else:
            raise UnreadableOutput(f"line {number}: cannot read {stripped[:120]!r} as an nvidia-smi nvlink -s line")
    return gpus
