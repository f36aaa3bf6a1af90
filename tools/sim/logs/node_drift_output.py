"""What the node-drift collector (catalog/_lib/harness/node_drift.py) prints on a simulated node: the `node-drift/1`
files (docs/node-drift.md) for the node's product and platform.

- `nvidia-smi-q.xml`: `nvidia-smi -q -x` in DTD v13's layout (as driver 570 prints it), one `<gpu>` block per GPU
  with the elements a configuration check reads (the per-clock tables and process lists left out): UUID and serial
  stable per node and index (the DCGM and burn-in outputs' own), the product's VBIOS, ECC on (current and pending),
  no error counted, no row pending remap, persistence on, the power limit at the product's default
  (`gpu_floors.default_power_w`, catalog/gpu-defaults.yaml), PCIe at the product's generation x16 with the host
  allowing the same, P0 under load, no clock event reason active.
- `nics.json`: the RDMA ports of the node's platform and GPU (`NICS`: count, rate, firmware), all `ACTIVE`/`LinkUp`.
- `host-pcie.json`: each GPU's and NIC's upstream port at the device's own maximum.
- `versions.json`: driver, CUDA, kernel of the platform.
- `nvidia-smi-nvlink.txt`: `nvidia-smi nvlink -s`, every link of the product up at its speed.

Faults (`Fault`, from `sim fault NODE --kind config --field F [--gpu N]`) change exactly one thing each:
`ecc-off` (current and pending ECC Disabled), `ecc-pending` (pending Disabled), `remap-pending` (a row pending
remap after an uncorrectable error), `persistence-off`, `nvlink-down` (the GPU's last link `<inactive>`),
`pcie-downgraded` (the GPU's link at Gen4 x8), `gpu-missing` (the GPU's block and links gone: NVML sees one GPU
less), `power-limit` (the limit at 80% of the default), `vbios` (another VBIOS on the GPU), `nic-port-down` (the
node's first RDMA port DOWN/Disabled), `nic-fw` (every NIC of the node on another firmware).
"""
from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path
from types import ModuleType
from xml.sax.saxutils import escape

from . import dcgm_output

ROOT = Path(__file__).resolve().parents[3]

GPU_FIELDS = ("ecc-off", "ecc-pending", "remap-pending", "persistence-off", "nvlink-down", "pcie-downgraded",
              "gpu-missing", "power-limit", "vbios")
NIC_FIELDS = ("nic-port-down", "nic-fw")
FIELDS = GPU_FIELDS + NIC_FIELDS
DRIVER, CUDA = "570.124.06", "12.8"
DOWNGRADED = (4, 8)   # pcie-downgraded: Gen4 x8
POWER_LIMIT_FAULT = 0.8
DEFAULT_POWER_W = 700.0   # a product the catalog has no default for
GEN_SPEED = {1: "2.5 GT/s PCIe", 2: "5.0 GT/s PCIe", 3: "8.0 GT/s PCIe", 4: "16.0 GT/s PCIe", 5: "32.0 GT/s PCIe",
             6: "64.0 GT/s PCIe"}


@dataclass(frozen=True)
class GpuSpec:
    """What nvidia-smi says of a product: its name, architecture, VBIOS, PCIe generation, NVLinks and their speed."""

    name: str
    architecture: str
    vbios: str
    pcie_gen: int
    nvlinks: int
    nvlink_gbps: float
    part: str


GPUS = {
    "NVIDIA-H100-80GB-HBM3": GpuSpec("NVIDIA H100 80GB HBM3", "Hopper", "96.00.99.00.01", 5, 18, 26.562,
                                     "2330-885-A1"),
    "NVIDIA-GB200": GpuSpec("NVIDIA GB200", "Blackwell", "97.00.0B.00.03", 5, 18, 50.0, "2941-886-A1"),
    "NVIDIA-GB300-NVL72": GpuSpec("NVIDIA GB300", "Blackwell", "97.10.2A.00.01", 6, 18, 50.0, "31C2-886-A1"),
    "NVIDIA-B300-SXM6-AC": GpuSpec("NVIDIA B300 SXM6 AC", "Blackwell", "97.10.1D.00.02", 6, 18, 50.0, "3182-886-A1"),
}
DEFAULT_GPU = GpuSpec("NVIDIA GPU", "Hopper", "96.00.00.00.01", 5, 0, 0.0, "0000-000-A1")


@dataclass(frozen=True)
class NicSpec:
    """The RDMA NICs of a platform's GPU node: device name prefix, count, rate, firmware, link layer, PCIe gen."""

    prefix: str
    count: int
    rate: str
    fw: str
    link_layer: str
    pcie_gen: int


# By (platform, GPU kind of tools/sim/profiles): AWS EFA (32 on p5.48xlarge, 4 x 400G on p6e-gb200), Azure ND H100
# v5's 8 x NDR ConnectX-7, OCI GB300's 4 x 800G ConnectX-8 RoCE, on-prem B300's 8 x XDR ConnectX-8 InfiniBand.
# GCP a3-mega's TCPXO NICs are gVNICs without RDMA: none.
NICS = {
    ("aws", "h100"): NicSpec("rdmap", 32, "100 Gb/sec (4X EDR)", "0.0.0.0", "Unspecified", 5),
    ("aws", "gb200"): NicSpec("rdmap", 4, "400 Gb/sec (4X NDR)", "0.0.0.0", "Unspecified", 5),
    ("azure", "h100"): NicSpec("mlx5_ib", 8, "400 Gb/sec (4X NDR)", "28.39.1002", "InfiniBand", 5),
    ("oci", "gb300"): NicSpec("mlx5_", 4, "800 Gb/sec (4X XDR)", "40.44.1036", "Ethernet", 6),
    ("onprem", "b300"): NicSpec("mlx5_", 8, "800 Gb/sec (4X XDR)", "40.44.1036", "InfiniBand", 6),
}
KERNELS = {"aws": "6.8.0-1021-aws", "gcp": "6.6.56+", "azure": "6.8.0-1020-azure", "oci": "6.8.0-1019-oracle",
           "onprem": "6.8.0-51-generic"}
OTHER_FW = {"0.0.0.0": "0.0.0.1", "28.39.1002": "28.38.1900", "40.44.1036": "40.43.2024"}


@dataclass(frozen=True)
class Fault:
    """One configuration fault, as `sim fault --kind config` stored it (`gpu` None for a NIC field)."""

    field: str
    gpu: int | None = None


@dataclass(frozen=True)
class Node:
    """The simulated node the collector runs on."""

    name: str
    product: str
    gpus: int
    platform: str
    kind: str   # the GPU kind of tools/sim/profiles (h100, gb200, ...)


@cache
def collector() -> ModuleType:
    """The collector itself (its pure parts import without torch): the simulated output is its own format."""
    spec = importlib.util.spec_from_file_location("node_drift_collector", ROOT / "catalog/_lib/harness/node_drift.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@cache
def default_power_w(product: str) -> float:
    """The product's SKU default power limit from the catalog's GPU defaults (the verdict's own table)."""
    if str(ROOT / ".collections") not in sys.path:   # the agent and the CLI run from the repository root
        sys.path.insert(0, str(ROOT / ".collections"))
    from ansible_collections.cre.certification.plugins.module_utils.engine.catalog import gpu_floors  # noqa: PLC0415
    return gpu_floors.default_power_w(product) or DEFAULT_POWER_W


def _has(faults: list[Fault], name: str, gpu: int | None = None) -> bool:
    return any(f.field == name and f.gpu == gpu for f in faults)


def bus_id(gpu: int) -> str:
    """GPU `gpu`'s PCI bus as nvidia-smi prints it (an HGX board's 8 GPUs on their own switches)."""
    return f"00000000:{0x18 + 0x10 * gpu:02X}:00.0"


def nic_address(index: int) -> str:
    return f"0000:{0x0c + 0x10 * index:02x}:00.0"


def _vbios(spec: GpuSpec, other: bool) -> str:
    """The product's VBIOS, or (the `vbios` fault) the same with its last field bumped."""
    head, last = spec.vbios.rsplit(".", 1)
    return f"{head}.{int(last, 16) + 1:02X}" if other else spec.vbios


def _gpu_xml(node: Node, gpu: int, spec: GpuSpec, faults: list[Fault]) -> list[str]:
    """One `<gpu>` block of DTD v13 (the elements a configuration check reads, in the DTD's order)."""
    default_w = default_power_w(node.product)
    limit_w = default_w * (POWER_LIMIT_FAULT if _has(faults, "power-limit", gpu) else 1.0)
    gen, width = DOWNGRADED if _has(faults, "pcie-downgraded", gpu) else (spec.pcie_gen, 16)
    ecc_current = "Disabled" if _has(faults, "ecc-off", gpu) else "Enabled"
    ecc_pending = "Disabled" if _has(faults, "ecc-off", gpu) or _has(faults, "ecc-pending", gpu) else "Enabled"
    remap = _has(faults, "remap-pending", gpu)
    bus = bus_id(gpu)
    reasons = ("gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown", "hw_thermal_slowdown",
               "hw_power_brake_slowdown", "sync_boost", "sw_thermal_slowdown", "display_clocks_setting")
    return [
        f'\t<gpu id="{bus}">',
        f"\t\t<product_name>{escape(spec.name)}</product_name>",
        "\t\t<product_brand>NVIDIA</product_brand>",
        f"\t\t<product_architecture>{spec.architecture}</product_architecture>",
        "\t\t<display_mode>Disabled</display_mode>",
        "\t\t<display_active>Disabled</display_active>",
        f"\t\t<persistence_mode>{'Disabled' if _has(faults, 'persistence-off', gpu) else 'Enabled'}"
        "</persistence_mode>",
        "\t\t<addressing_mode>None</addressing_mode>",
        "\t\t<mig_mode>", "\t\t\t<current_mig>Disabled</current_mig>", "\t\t\t<pending_mig>Disabled</pending_mig>",
        "\t\t</mig_mode>",
        "\t\t<mig_devices>", "\t\t\tNone", "\t\t</mig_devices>",
        "\t\t<accounting_mode>Disabled</accounting_mode>",
        f"\t\t<serial>{dcgm_output.serial(node.name, gpu)}</serial>",
        f"\t\t<uuid>{dcgm_output.gpu_uuid(node.name, gpu)}</uuid>",
        f"\t\t<minor_number>{gpu}</minor_number>",
        f"\t\t<vbios_version>{_vbios(spec, _has(faults, 'vbios', gpu))}</vbios_version>",
        "\t\t<multigpu_board>No</multigpu_board>",
        f"\t\t<board_id>0x{0x1800 + 0x1000 * gpu:x}</board_id>",
        f"\t\t<gpu_part_number>{spec.part}</gpu_part_number>",
        "\t\t<gpu_recovery_action>None</gpu_recovery_action>",
        "\t\t<pci>",
        f"\t\t\t<pci_bus>{bus[9:11]}</pci_bus>", "\t\t\t<pci_device>00</pci_device>",
        "\t\t\t<pci_domain>0000</pci_domain>",
        f"\t\t\t<pci_bus_id>{bus}</pci_bus_id>",
        "\t\t\t<pci_gpu_link_info>",
        "\t\t\t\t<pcie_gen>",
        f"\t\t\t\t\t<max_link_gen>{spec.pcie_gen}</max_link_gen>",
        f"\t\t\t\t\t<current_link_gen>{gen}</current_link_gen>",
        f"\t\t\t\t\t<device_current_link_gen>{gen}</device_current_link_gen>",
        f"\t\t\t\t\t<max_device_link_gen>{spec.pcie_gen}</max_device_link_gen>",
        f"\t\t\t\t\t<max_host_link_gen>{spec.pcie_gen}</max_host_link_gen>",
        "\t\t\t\t</pcie_gen>",
        "\t\t\t\t<link_widths>",
        "\t\t\t\t\t<max_link_width>16x</max_link_width>",
        f"\t\t\t\t\t<current_link_width>{width}x</current_link_width>",
        "\t\t\t\t</link_widths>",
        "\t\t\t</pci_gpu_link_info>",
        "\t\t\t<replay_counter>0</replay_counter>",
        "\t\t</pci>",
        "\t\t<fan_speed>N/A</fan_speed>",
        "\t\t<performance_state>P0</performance_state>",
        "\t\t<clocks_event_reasons>",
        *(f"\t\t\t<clocks_event_reason_{r}>Not Active</clocks_event_reason_{r}>" for r in reasons),
        "\t\t</clocks_event_reasons>",
        "\t\t<ecc_mode>",
        f"\t\t\t<current_ecc>{ecc_current}</current_ecc>",
        f"\t\t\t<pending_ecc>{ecc_pending}</pending_ecc>",
        "\t\t</ecc_mode>",
        "\t\t<ecc_errors>",
        *(line for scope in ("volatile", "aggregate") for line in (
            f"\t\t\t<{scope}>",
            "\t\t\t\t<sram_correctable>0</sram_correctable>",
            "\t\t\t\t<sram_uncorrectable_parity>0</sram_uncorrectable_parity>",
            "\t\t\t\t<sram_uncorrectable_secded>0</sram_uncorrectable_secded>",
            "\t\t\t\t<dram_correctable>0</dram_correctable>",
            f"\t\t\t\t<dram_uncorrectable>{1 if remap and scope == 'aggregate' else 0}</dram_uncorrectable>",
            f"\t\t\t</{scope}>")),
        "\t\t</ecc_errors>",
        "\t\t<retired_pages>",
        "\t\t\t<multiple_single_bit_retirement>", "\t\t\t\t<retired_count>N/A</retired_count>",
        "\t\t\t\t<retired_pagelist>N/A</retired_pagelist>", "\t\t\t</multiple_single_bit_retirement>",
        "\t\t\t<double_bit_retirement>", "\t\t\t\t<retired_count>N/A</retired_count>",
        "\t\t\t\t<retired_pagelist>N/A</retired_pagelist>", "\t\t\t</double_bit_retirement>",
        "\t\t\t<pending_blacklist>N/A</pending_blacklist>",
        "\t\t\t<pending_retirement>N/A</pending_retirement>",
        "\t\t</retired_pages>",
        "\t\t<remapped_rows>",
        "\t\t\t<remapped_row_corr>0</remapped_row_corr>",
        f"\t\t\t<remapped_row_unc>{1 if remap else 0}</remapped_row_unc>",
        f"\t\t\t<remapped_row_pending>{'Yes' if remap else 'No'}</remapped_row_pending>",
        "\t\t\t<remapped_row_failure>No</remapped_row_failure>",
        "\t\t</remapped_rows>",
        "\t\t<temperature>", f"\t\t\t<gpu_temp>{52 + gpu % 5} C</gpu_temp>", "\t\t</temperature>",
        "\t\t<gpu_power_readings>",
        f"\t\t\t<average_power_draw>{limit_w * 0.62:.2f} W</average_power_draw>",
        f"\t\t\t<instant_power_draw>{limit_w * 0.64:.2f} W</instant_power_draw>",
        f"\t\t\t<current_power_limit>{limit_w:.2f} W</current_power_limit>",
        f"\t\t\t<requested_power_limit>{limit_w:.2f} W</requested_power_limit>",
        f"\t\t\t<default_power_limit>{default_w:.2f} W</default_power_limit>",
        f"\t\t\t<min_power_limit>{default_w * 0.3:.2f} W</min_power_limit>",
        f"\t\t\t<max_power_limit>{default_w:.2f} W</max_power_limit>",
        "\t\t</gpu_power_readings>",
        "\t\t<fabric>",
        f"\t\t\t<state>{'Completed' if node.kind.startswith('gb') else 'N/A'}</state>",
        f"\t\t\t<status>{'Success' if node.kind.startswith('gb') else 'N/A'}</status>",
        "\t\t</fabric>",
        "\t</gpu>",
    ]


def present(node: Node, faults: list[Fault]) -> list[int]:
    """The indices of the GPUs NVML sees (`gpu-missing` drops one)."""
    return [gpu for gpu in range(node.gpus) if not _has(faults, "gpu-missing", gpu)]


def smi_xml(node: Node, faults: list[Fault], when: datetime) -> str:
    spec = GPUS.get(node.product, DEFAULT_GPU)
    gpus = present(node, faults)
    lines = ['<?xml version="1.0" ?>', '<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v13.dtd">', "<nvidia_smi_log>",
             f"\t<timestamp>{when.strftime('%a %b %d %H:%M:%S %Y')}</timestamp>",
             f"\t<driver_version>{DRIVER}</driver_version>", f"\t<cuda_version>{CUDA}</cuda_version>",
             f"\t<attached_gpus>{len(gpus)}</attached_gpus>"]
    for gpu in gpus:
        lines += _gpu_xml(node, gpu, spec, faults)
    return "\n".join([*lines, "", "</nvidia_smi_log>"]) + "\n"


def nvlink_text(node: Node, faults: list[Fault]) -> str:
    """`nvidia-smi nvlink -s`: per GPU its header, then each link's speed or `<inactive>` (empty without NVLink)."""
    spec = GPUS.get(node.product, DEFAULT_GPU)
    lines = []
    for gpu in present(node, faults) if spec.nvlinks else []:
        lines.append(f"GPU {gpu}: {spec.name} (UUID: {dcgm_output.gpu_uuid(node.name, gpu)})")
        for link in range(spec.nvlinks):
            down = _has(faults, "nvlink-down", gpu) and link == spec.nvlinks - 1
            lines.append(f"\t Link {link}: {'<inactive>' if down else f'{spec.nvlink_gbps:.3f} GB/s'}")
    return "".join(line + "\n" for line in lines)


def nic_ports(node: Node, faults: list[Fault]) -> list[dict]:
    """nics.json: one ACTIVE port per NIC of the platform (`nic-port-down`: the first DOWN; `nic-fw`: all on
    other firmware)."""
    nic = NICS.get((node.platform, node.kind))
    if nic is None:
        return []
    fw = OTHER_FW.get(nic.fw, nic.fw + ".1") if _has(faults, "nic-fw") else nic.fw
    speed = GEN_SPEED[nic.pcie_gen]
    ports = []
    for index in range(nic.count):
        down = index == 0 and _has(faults, "nic-port-down")
        ports.append({
            "device": f"{nic.prefix}{index}", "port": 1, "state": "DOWN" if down else "ACTIVE",
            "phys_state": "Disabled" if down else "LinkUp", "rate": nic.rate, "fw_ver": fw,
            "netdev": f"ib{index}" if nic.link_layer == "InfiniBand" else f"rdma{index}",
            "link_layer": nic.link_layer,
            "pci": {"address": nic_address(index), "current_link_speed": speed, "current_link_width": "16",
                    "max_link_speed": speed, "max_link_width": "16"}})
    return ports


def host_pcie(node: Node, faults: list[Fault], ports: list[dict]) -> dict[str, dict[str, str]]:
    """Every GPU's and NIC's upstream port, at the device's own maximum (the slot limits nothing)."""
    gpu_speed = GEN_SPEED[GPUS.get(node.product, DEFAULT_GPU).pcie_gen]
    out = {collector().sysfs_address(bus_id(gpu)): {"max_link_speed": gpu_speed, "max_link_width": "16"}
           for gpu in present(node, faults)}
    for port in ports:
        out[port["pci"]["address"]] = {"max_link_speed": port["pci"]["max_link_speed"], "max_link_width": "16"}
    return out


def render(node: Node, faults: list[Fault], when: datetime) -> list[str]:
    """The collector's stdout lines on the node."""
    ports = nic_ports(node, faults)
    versions = {"driver": DRIVER, "cuda": CUDA, "kernel": KERNELS.get(node.platform, KERNELS["onprem"])}
    out = collector()
    files = [(out.XML_FILE, smi_xml(node, faults, when)), (out.NICS_FILE, out.to_json(ports)),
             (out.HOST_PCIE_FILE, out.to_json(host_pcie(node, faults, ports))),
             (out.VERSIONS_FILE, out.to_json(versions)), (out.NVLINK_FILE, nvlink_text(node, faults))]
    return out.render(node.name, when.timestamp(), files)
