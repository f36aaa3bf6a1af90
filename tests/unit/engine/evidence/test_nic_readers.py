"""ibstat, ibv_devinfo (plain and -v) and lspci -vvv (whole, and grepped) into NIC ports and PCIe links; refusals."""
from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.evidence import ibstat, ibv_devinfo, lspci
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.dcgm_results import UnreadableOutput

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

IBV_VERBOSE = """hca_id:\tmlx5_3
\ttransport:\t\t\tInfiniBand (0)
\tfw_ver:\t\t\t\t28.39.1002
\tnode_guid:\t\t\t946d:ae03:00cd:e72c
\tvendor_part_id:\t\t\t4129
\tdevice_cap_flags:\t\t0x25d7f868
\t\t\t\t\tBAD_PKEY_CNTR
\t\t\t\t\tBAD_QKEY_CNTR
\tphys_port_cnt:\t\t\t1
\t\tport:\t1
\t\t\tstate:\t\t\tPORT_ACTIVE (4)
\t\t\tmax_mtu:\t\t4096 (5)
\t\t\tactive_width:\t\t4X (2)
\t\t\tactive_speed:\t\t100.0 Gbps (128)
\t\t\tphys_state:\t\tLINK_UP (5)
\t\t\tGID[  0]:\t\tfe80:0000:0000:0000:946d:ae03:00cd:e72c
\t\t\tlink_layer:\t\tInfiniBand
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


REFUSED = [
    (ibstat.read, "mlx5_0 port 1 Active\n", "line 1: cannot read 'mlx5_0 port 1 Active': ibstat opens with CA '<name>'"),
    (ibstat.read, "CA 'mlx5_0'\n\tPort 1:\n\t\tState: Sleeping\n",
     "line 3 (State): cannot read 'Sleeping' as a port state"),
    (ibstat.read, "CA 'mlx5_0'\n\tPort 1:\n\t\tRate: fast\n", "line 3 (Rate): cannot read 'fast' as a port rate"),
    (ibstat.read, "CA 'mlx5_0'\n\tCA type: MT4129\n", "no port in the ibstat output"),
    (ibv_devinfo.read, "No IB devices found\n",
     "line 1: cannot read 'No IB devices found' as an ibv_devinfo line (it opens with hca_id:)"),
    (ibv_devinfo.read, "hca_id:\tmlx5_0\n\t\tport:\t1\n\t\t\tstate:\t\tACTIVE\n",
     "line 3 (state): cannot read 'ACTIVE' as a port state (PORT_ACTIVE (4), ...)"),
    (ibv_devinfo.read, IBV_VERBOSE.replace("100.0 Gbps (128)", "fast"), "(active_speed): cannot read 'fast'"),
    (lspci.read, "Speed 16GT/s, Width x16\n", "line 1: cannot read 'Speed 16GT/s, Width x16' as an lspci device header"),
    (lspci.read, "\t\tLnkSta:\tSpeed 3GT/s, Width x16\n",
     "line 1 (LnkSta): cannot read '3GT/s' as a PCIe link speed (2.5 to 128 GT/s)"),
    (lspci.read, "\t\tLnkSta:\tWidth x16\n", "line 1 (LnkSta): cannot read 'Width x16' as 'Speed <n>GT/s, Width x<n>'"),
    (lspci.read, "19:00.0 3D controller: NVIDIA Corporation GH100\n\tSubsystem: NVIDIA\n", "no LnkCap or LnkSta line"),
]


@pytest.mark.parametrize(("read", "doc", "message"), REFUSED)
def test_what_does_not_read_is_refused_with_its_line(read: Any, doc: str, message: str) -> None:
    with pytest.raises(UnreadableOutput) as refused:
        read(doc)
    assert message in str(refused.value)
