"""`nvidia-smi -q -x` (nvsmi_device_v10 to v13 DTDs) read into the snapshot's GPUs, driver and CUDA versions.

The GPUs are the `<gpu>` blocks in file order (index = position, as nvidia-smi numbers them); `attached_gpus` is
kept apart, so an output that holds fewer blocks than it says is attached is seen (nvsmi_fields says which element
each value comes from in each schema version). Strict: a file that is not XML is refused with the line expat stopped
at, one whose root is not `nvidia_smi_log` with its root, a value that does not read with its element's path.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET  # noqa: S405 - nvidia-smi's own output; expat resolves no external entity
from typing import Any, Optional

from .config_snapshot import available, integer
from .dcgm_results import UnreadableOutput
from .nvsmi_fields import Layout, Path, Tree, read_gpu

FORMAT = "nvidia-smi-xml"
_LINK = ("pci", "pci_gpu_link_info")
_VOLATILE = ("ecc_errors", "volatile")
LAYOUT = Layout(
    paths={
        "product": (("product_name",),), "serial": (("serial",),), "uuid": (("uuid",),),
        "vbios": (("vbios_version",),), "pstate": (("performance_state",),), "pci": (("pci", "pci_bus_id"),),
        "persistence": (("persistence_mode",),),
        "ecc_current": (("ecc_mode", "current_ecc"),), "ecc_pending": (("ecc_mode", "pending_ecc"),),
        "remap_pending": (("remapped_rows", "remapped_row_pending"),),
        "remap_failure": (("remapped_rows", "remapped_row_failure"),),
        "retired_pending": (("retired_pages", "pending_retirement"), ("retired_pages", "pending_blacklist")),
        "volatile_uncorrectable": ((*_VOLATILE, "double_bit", "total"), (*_VOLATILE, "sram_uncorrectable"),
                                   (*_VOLATILE, "sram_uncorrectable_parity"),
                                   (*_VOLATILE, "sram_uncorrectable_secded"), (*_VOLATILE, "dram_uncorrectable")),
        "power_limit_w": (("gpu_power_readings", "current_power_limit"), ("power_readings", "enforced_power_limit"),
                          ("power_readings", "power_limit")),
        "default_power_limit_w": (("gpu_power_readings", "default_power_limit"),
                                  ("power_readings", "default_power_limit")),
        "pcie_gen": ((*_LINK, "pcie_gen", "device_current_link_gen"), (*_LINK, "pcie_gen", "current_link_gen")),
        "pcie_max_gen": ((*_LINK, "pcie_gen", "max_device_link_gen"), (*_LINK, "pcie_gen", "max_link_gen")),
        "host_max_gen": ((*_LINK, "pcie_gen", "max_host_link_gen"),),
        "pcie_width": ((*_LINK, "link_widths", "current_link_width"),),
        "pcie_max_width": ((*_LINK, "link_widths", "max_link_width"),),
        "throttle": (("clocks_event_reasons",), ("clocks_throttle_reasons",)),
    },
    reason_name=lambda tag: tag.replace("clocks_event_reason_", "").replace("clocks_throttle_reason_", ""),
)


def read(text: str) -> dict[str, Any]:
    """{"gpus", "driver", "cuda", "attached_gpus"} of an `nvidia-smi -q -x` output."""
    try:
        root = ET.fromstring(text.lstrip())  # noqa: S314 - see the import
    except ET.ParseError as err:
        line, _col = err.position
        shown = (text.lstrip().splitlines() or [""])[max(line - 1, 0)].strip()[:120]
        raise UnreadableOutput(f"line {line}: cannot read {shown!r} as XML ({str(err).split(':', maxsplit=1)[0]})") from None
    if root.tag != "nvidia_smi_log":
        raise UnreadableOutput(f"the root element is <{root.tag}>, not nvidia-smi's <nvidia_smi_log>")
    gpus = [read_gpu(i, _tree(block, i), LAYOUT) for i, block in enumerate(root.findall("gpu"))]
    for found, block in zip(gpus, root.findall("gpu")):
        found["pci"] = found["pci"] or available(block.get("id"))
    return {"gpus": gpus, "driver": available(root.findtext("driver_version")),
            "cuda": available(root.findtext("cuda_version")),
            "attached_gpus": integer(root.findtext("attached_gpus"), "nvidia_smi_log.attached_gpus")}


def _tree(block: ET.Element, index: int) -> Tree:
    def element(path: Path) -> Optional[ET.Element]:  # noqa: UP045 - ansible-test's pylint reads module_utils as older Python
        return block.find("/".join(path))

    def value(path: Path) -> Optional[str]:  # noqa: UP045 - as above
        found = element(path)
        # An element with children (remapped_rows on an Ampere GPU) has no value of its own.
        return None if found is None or len(found) else (found.text or "")

    def leaves(path: Path) -> list[tuple[str, str]]:
        found = element(path)
        return [] if found is None else [(child.tag, child.text or "") for child in found if not len(child)]

    return Tree(value, leaves, lambda path: ".".join((f"gpu[{index}]", *path)))
