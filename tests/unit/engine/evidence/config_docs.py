"""Builders of nvidia-smi -q outputs (XML per DTD generation, text per driver generation) and node-drift collector
outputs for the configuration tests, from one GPU description, so each layout is checked for the same values."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Gpu:
    """One GPU as the output should print it; None prints N/A."""

    product: str = "NVIDIA H100 80GB HBM3"
    uuid: str = "GPU-0"
    vbios: str = "96.00.74.00.0D"
    bus: str = "00000000:19:00.0"
    persistence: bool = True
    ecc: bool = True
    ecc_pending: bool = True
    volatile: int | None = 0
    remap_pending: bool | None = False
    remap_failure: bool | None = False
    retired_pending: bool | None = None
    power: float = 700.0
    default_power: float = 700.0
    gen: int = 5
    max_gen: int = 5
    host_gen: int = 5
    width: int = 16
    max_width: int = 16
    throttle: tuple[str, ...] = ()
    pstate: str = "P0"
    extra: dict[str, str] = field(default_factory=dict)


REASONS = ("gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown", "hw_thermal_slowdown",
           "hw_power_brake_slowdown", "sync_boost", "sw_thermal_slowdown", "display_clocks_setting")


def _yn(value: bool | None, words: tuple[str, str] = ("Yes", "No")) -> str:
    return "N/A" if value is None else words[0] if value else words[1]


def _on(value: bool) -> str:
    return "Enabled" if value else "Disabled"


def xml(gpus: list[Gpu], schema: str = "v12", attached: int | None = None) -> str:
    """`nvidia-smi -q -x` of `gpus` in the layout of nvsmi_device_<schema>.dtd (v10, v11, v12, v13)."""
    old = schema in ("v10", "v11")
    blocks = []
    for g in gpus:
        reasons_tag = "clocks_throttle_reason" if old else "clocks_event_reason"
        reasons = "".join(f"<{reasons_tag}_{r}>{'Active' if r in g.throttle else 'Not Active'}</{reasons_tag}_{r}>"
                          for r in REASONS)
        if old:
            ecc = (f"<volatile><single_bit><total>0</total></single_bit><double_bit><device_memory>{_n(g.volatile)}"
                   f"</device_memory><total>{_n(g.volatile)}</total></double_bit></volatile>")
            power = (f"<power_readings><power_limit>{g.power:.2f} W</power_limit><default_power_limit>"
                     f"{g.default_power:.2f} W</default_power_limit>"
                     + (f"<enforced_power_limit>{g.power:.2f} W</enforced_power_limit>" if schema == "v11" else "")
                     + "</power_readings>")
            link = f"<max_link_gen>{min(g.max_gen, g.host_gen)}</max_link_gen><current_link_gen>{g.gen}</current_link_gen>"
        else:
            zero = _n(None if g.volatile is None else 0)   # ECC off: every counter N/A
            sram = (f"<sram_uncorrectable_parity>{zero}</sram_uncorrectable_parity><sram_uncorrectable_secded>{zero}"
                    "</sram_uncorrectable_secded>" if schema == "v13" else
                    f"<sram_uncorrectable>{zero}</sram_uncorrectable>")
            ecc = f"<volatile><sram_correctable>0</sram_correctable>{sram}<dram_uncorrectable>{_n(g.volatile)}" \
                  "</dram_uncorrectable></volatile>"
            power = (f"<gpu_power_readings><power_draw>80.00 W</power_draw><current_power_limit>{g.power:.2f} W"
                     f"</current_power_limit><default_power_limit>{g.default_power:.2f} W</default_power_limit>"
                     "</gpu_power_readings><module_power_readings><current_power_limit>N/A</current_power_limit>"
                     "</module_power_readings>")
            link = (f"<max_link_gen>{min(g.max_gen, g.host_gen)}</max_link_gen><current_link_gen>{g.gen}"
                    f"</current_link_gen><device_current_link_gen>{g.gen}</device_current_link_gen>"
                    f"<max_device_link_gen>{g.max_gen}</max_device_link_gen><max_host_link_gen>{g.host_gen}"
                    "</max_host_link_gen>")
        remap = ("<remapped_rows>N/A</remapped_rows>" if g.remap_pending is None else
                 f"<remapped_rows><remapped_row_corr>0</remapped_row_corr><remapped_row_unc>0</remapped_row_unc>"
                 f"<remapped_row_pending>{_yn(g.remap_pending)}</remapped_row_pending><remapped_row_failure>"
                 f"{_yn(g.remap_failure)}</remapped_row_failure></remapped_rows>")
        extra = "".join(f"<{k}>{v}</{k}>" for k, v in g.extra.items())
        blocks.append(
            f'<gpu id="{g.bus}"><product_name>{g.product}</product_name><persistence_mode>{_on(g.persistence)}'
            f"</persistence_mode><serial>1650124031592</serial><uuid>{g.uuid}</uuid><vbios_version>{g.vbios}"
            f"</vbios_version><pci><pci_bus_id>{g.bus}</pci_bus_id><pci_gpu_link_info><pcie_gen>{link}</pcie_gen>"
            f"<link_widths><max_link_width>{g.max_width}x</max_link_width><current_link_width>{g.width}x"
            f"</current_link_width></link_widths></pci_gpu_link_info></pci><performance_state>{g.pstate}"
            f"</performance_state><clocks_{'throttle' if old else 'event'}_reasons>{reasons}"
            f"</clocks_{'throttle' if old else 'event'}_reasons><ecc_mode><current_ecc>{_on(g.ecc)}</current_ecc>"
            f"<pending_ecc>{_on(g.ecc_pending)}</pending_ecc></ecc_mode><ecc_errors>{ecc}</ecc_errors>"
            f"<retired_pages><pending_blacklist>{_yn(g.retired_pending)}</pending_blacklist>"
            + (f"<pending_retirement>{_yn(g.retired_pending)}</pending_retirement>" if schema != "v10" else "")
            + f"</retired_pages>{remap}{power}{extra}</gpu>")
    count = len(gpus) if attached is None else attached
    return (f'<?xml version="1.0" ?>\n<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_{schema}.dtd">\n<nvidia_smi_log>'
            f"<driver_version>570.124.06</driver_version><cuda_version>12.8</cuda_version><attached_gpus>{count}"
            f"</attached_gpus>\n" + "\n".join(blocks) + "\n</nvidia_smi_log>\n")


def _n(value: int | None) -> str:
    return "N/A" if value is None else str(value)


_LABELS = {"gpu_idle": "Idle", "applications_clocks_setting": "Applications Clocks Setting",
           "sw_power_cap": "SW Power Cap", "hw_slowdown": "HW Slowdown", "hw_thermal_slowdown": "HW Thermal Slowdown",
           "hw_power_brake_slowdown": "HW Power Brake Slowdown", "sync_boost": "Sync Boost",
           "sw_thermal_slowdown": "SW Thermal Slowdown", "display_clocks_setting": "Display Clock Setting"}


def _line(depth: int, label: str, value: str | None = None) -> str:
    text = "    " * depth + label
    return text if value is None else f"{text:<42}: {value}"


def text(gpus: list[Gpu], driver: str = "r535") -> str:
    """`nvidia-smi -q` of `gpus` as a driver of generation `driver` prints it (r470: Clocks Throttle Reasons,
    Power Readings, single/double bit ECC; r535: Clocks Event Reasons, GPU Power Readings, SRAM/DRAM counters)."""
    old = driver == "r470"
    lines = ["", "==============NVSMI LOG==============", "", _line(0, "Timestamp", "Wed Jul 31 11:22:39 2024"),
             _line(0, "Driver Version", "570.124.06"), _line(0, "CUDA Version", "12.8"), "",
             _line(0, "Attached GPUs", str(len(gpus)))]
    for g in gpus:
        lines += [f"GPU {g.bus}", _line(1, "Product Name", g.product), _line(1, "Persistence Mode", _on(g.persistence)),
                  _line(1, "Serial Number", "1650124031592"), _line(1, "GPU UUID", g.uuid),
                  _line(1, "VBIOS Version", g.vbios), _line(1, "PCI"), _line(2, "Bus Id", g.bus),
                  _line(2, "GPU Link Info"), _line(3, "PCIe Generation"),
                  _line(4, "Max", str(min(g.max_gen, g.host_gen))), _line(4, "Current", str(g.gen))]
        if not old:
            lines += [_line(4, "Device Current", str(g.gen)), _line(4, "Device Max", str(g.max_gen)),
                      _line(4, "Host Max", str(g.host_gen))]
        lines += [_line(3, "Link Width"), _line(4, "Max", f"{g.max_width}x"), _line(4, "Current", f"{g.width}x"),
                  _line(1, "Performance State", g.pstate),
                  _line(1, "Clocks Throttle Reasons" if old else "Clocks Event Reasons")]
        for reason in REASONS:
            depth = 3 if reason in ("hw_thermal_slowdown", "hw_power_brake_slowdown") else 2
            lines.append(_line(depth, _LABELS[reason], "Active" if reason in g.throttle else "Not Active"))
        lines += [_line(1, "ECC Mode"), _line(2, "Current", _on(g.ecc)), _line(2, "Pending", _on(g.ecc_pending)),
                  _line(1, "ECC Errors"), _line(2, "Volatile")]
        if old:
            lines += [_line(3, "Single Bit"), _line(4, "Total", "0"), _line(3, "Double Bit"),
                      _line(4, "Device Memory", _n(g.volatile)), _line(4, "Total", _n(g.volatile))]
        else:
            zero = _n(None if g.volatile is None else 0)
            lines += [_line(3, "SRAM Correctable", zero), _line(3, "SRAM Uncorrectable Parity", zero),
                      _line(3, "SRAM Uncorrectable SEC-DED", zero), _line(3, "DRAM Uncorrectable", _n(g.volatile))]
        lines += [_line(1, "Retired Pages"), _line(2, "Pending Page Blacklist", _yn(g.retired_pending))]
        if g.remap_pending is None:
            lines.append(_line(1, "Remapped Rows", "N/A"))
        else:
            lines += [_line(1, "Remapped Rows"), _line(2, "Pending", _yn(g.remap_pending)),
                      _line(2, "Remapping Failure Occurred", _yn(g.remap_failure))]
        if old:
            lines += [_line(1, "Power Readings"), _line(2, "Power Limit", f"{g.power:.2f} W"),
                      _line(2, "Default Power Limit", f"{g.default_power:.2f} W"),
                      _line(2, "Enforced Power Limit", f"{g.power:.2f} W")]
        else:
            lines += [_line(1, "GPU Power Readings"), _line(2, "Current Power Limit", f"{g.power:.2f} W"),
                      _line(2, "Default Power Limit", f"{g.default_power:.2f} W")]
        lines += [_line(1, "Processes", "None"), ""]
    return "\n".join(lines) + "\n"


def nics(count: int = 8, **changes: Any) -> list[dict[str, Any]]:
    """nics.json of `count` healthy NDR ports (`changes`: {index: {key: value}} per port)."""
    ports = []
    for i in range(count):
        port = {"device": f"mlx5_{i}", "port": 1, "state": "4: ACTIVE", "phys_state": "5: LinkUp",
                "rate": "400 Gb/sec (4X NDR)", "fw_ver": "28.39.1002", "netdev": f"ibp{i}s0",
                "link_layer": "InfiniBand",
                "pci": {"address": f"0000:{0x1a + i:02x}:00.0", "current_link_speed": "32.0 GT/s PCIe",
                        "current_link_width": "16", "max_link_speed": "32.0 GT/s PCIe", "max_link_width": "16"}}
        port.update(changes.get(f"p{i}", {}))
        ports.append(port)
    return ports


def collector(node: str, files: dict[str, str]) -> str:
    """A node-drift/1 output of `files` (name -> content), with container noise around it."""
    out = ["+ nvidia-smi -q -x", f"node-drift/1 begin node={node} time=2026-12-07T05:00:00Z"]
    for name, content in files.items():
        lines = content.splitlines()
        out += [f"node-drift/1 file name={name} lines={len(lines)}", *lines]
    out += [f"node-drift/1 end files={len(files)}", "done"]
    return "\n".join(out) + "\n"


def node_files(gpus: list[Gpu], ports: list[dict[str, Any]] | None = None,
               hosts: dict[str, Any] | None = None, kernel: str = "6.8.0-1021-azure",
               driver: str = "570.124.06") -> dict[str, str]:
    """The collector's four files for a node."""
    return {"nvidia-smi-q.xml": xml(gpus), "nics.json": json.dumps(nics() if ports is None else ports, indent=1),
            "host-pcie.json": json.dumps(hosts or {}),
            "versions.json": json.dumps({"driver": driver, "cuda": "12.8", "kernel": kernel})}


def h100s(count: int = 8, **changes: dict[str, Any]) -> list[Gpu]:
    """`count` healthy H100 SXM GPUs; `changes`: {"g<i>": {field: value}}."""
    return [Gpu(uuid=f"GPU-{i}", bus=f"00000000:{0x19 + i:02X}:00.0", **changes.get(f"g{i}", {})) for i in range(count)]


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
