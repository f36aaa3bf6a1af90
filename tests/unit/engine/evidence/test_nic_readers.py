"""ibstat, ibv_devinfo (plain and -v) and lspci -vvv (whole, and grepped) into NIC ports and PCIe links (their
refusals: test_nvsmi_readers.py)."""
from __future__ import annotations

from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.engine.evidence import ibstat, ibv_devinfo, lspci
from tests.unit.engine.evidence.config_docs import IBV_VERBOSE

IBSTAT_TWO_PORTS = """CA 'mlx5_0'
\tCA type: MT4123
\tNumber of ports: 2
\tFirmware version: 20.31.1014
\tHardware version: 0
\tNode GUID: 0x1070fd0300aa
\tSystem image GUID: 0x1070fd0300aa
\tPort 1:
\t\tState: Active
\t\tPhysical state: LinkUp
\t\tRate: 200
\t\tBase lid: 12
\t\tLMC: 0
\t\tSM lid: 1
\t\tCapability mask: 0x2651e848
\t\tPort GUID: 0x1070fd0300aa
\t\tLink layer: InfiniBand
\tPort 2:
\t\tState: Initializing
\t\tPhysical state: LinkUp
\t\tRate: 200
\t\tLink layer: InfiniBand
"""

LSPCI_WHOLE = """18:00.0 PCI bridge: Broadcom / LSI PEX890xx PCIe Gen 5 Switch (rev b0)
\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM L1, Exit Latency L1 <4us
\t\tLnkSta:\tSpeed 32GT/s, Width x16
19:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)
\tSubsystem: NVIDIA Corporation Device 16c1
\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM not supported
\t\tLnkCtl:\tASPM Disabled; RCB 64 bytes, Disabled- CommClk+
\t\tLnkSta:\tSpeed 16GT/s (downgraded), Width x8 (downgraded)
\t\tLnkCap2: Supported Link Speeds: 2.5-32GT/s, Crosslink- Retimer+ 2Retimers+ DRS-
\t\tLnkSta2: Current De-emphasis Level: -6dB, EqualizationComplete+
0000:1a:00.0 Infiniband controller: Mellanox Technologies MT2910 Family [ConnectX-7]
\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM not supported
\t\tLnkSta:\tSpeed 32GT/s, Width x16
"""


def _ports(read: dict[str, Any], *keys: str) -> list[tuple[Any, ...]]:
    return [tuple(n[k] for k in keys) for n in read["nics"]]


def test_ibstat_with_two_ports_on_one_ca() -> None:
    assert _ports(ibstat.read(IBSTAT_TWO_PORTS), "device", "port", "state", "phys_state", "rate_gbps", "fw") == [
        ("mlx5_0", 1, "ACTIVE", "LinkUp", 200.0, "20.31.1014"), ("mlx5_0", 2, "INIT", "LinkUp", 200.0, "20.31.1014")]


def test_ibv_devinfo_verbose_gives_the_rate_and_physical_state() -> None:
    assert _ports(ibv_devinfo.read(IBV_VERBOSE), "device", "port", "state", "phys_state", "rate_gbps", "fw",
                  "link_layer") == [("mlx5_3", 1, "ACTIVE", "LinkUp", 400.0, "28.39.1002", "InfiniBand")]


def test_lspci_whole_output_keeps_gpus_and_nics_and_leaves_bridges_out() -> None:
    read = lspci.read(LSPCI_WHOLE)
    assert [(g["index"], g["pci"], g["pcie_max_gen"], g["pcie_max_width"], g["pcie_gen"], g["pcie_width"])
            for g in read["gpus"]] == [(0, "19:00.0", 5, 16, 4, 8)]
    assert _ports(read, "device", "port", "pcie_max_gen", "pcie_gen") == [("0000:1a:00.0", None, 5, 5)]
