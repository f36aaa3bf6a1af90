"""nvidia-smi -q -x across its DTD generations and the text -q across driver generations: the same GPU read into the
same snapshot; and one clear line for what any configuration reader cannot read."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.evidence import (
    ibstat,
    ibv_devinfo,
    lspci,
    nvlink_status,
    nvsmi_text,
    nvsmi_xml,
)
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.dcgm_results import UnreadableOutput
from tests.unit.engine.evidence.config_docs import IBV_VERBOSE, Gpu, text, xml

LAYOUTS = [("xml", "v10"), ("xml", "v11"), ("xml", "v12"), ("xml", "v13"), ("text", "r470"), ("text", "r535")]
# What the old layouts (DTD v10/v11, R470 text) do not print: the device's and the host's maximum apart.
OLD = {"v10", "v11", "r470"}


def _read(kind: str, version: str, gpus: list[Gpu]) -> dict[str, Any]:
    return nvsmi_xml.read(xml(gpus, version)) if kind == "xml" else nvsmi_text.read(text(gpus, version))


GPUS = [
    ("healthy", Gpu(), {"ecc_current": True, "ecc_pending": True, "persistence": True, "volatile_uncorrectable": 0,
                        "power_limit_w": 700.0, "default_power_limit_w": 700.0, "pcie_gen": 5, "pcie_width": 16,
                        "throttle": [], "retired_pending": None}),
    ("ecc off, pending off", Gpu(ecc=False, ecc_pending=False), {"ecc_current": False, "ecc_pending": False}),
    ("uncorrectable errors", Gpu(volatile=3), {"volatile_uncorrectable": 3}),
    ("ecc counters N/A", Gpu(volatile=None), {"volatile_uncorrectable": None}),
    ("persistence off", Gpu(persistence=False), {"persistence": False}),
    ("power capped", Gpu(power=560.0), {"power_limit_w": 560.0, "default_power_limit_w": 700.0}),
    ("pcie x8", Gpu(gen=4, width=8), {"pcie_gen": 4, "pcie_width": 8, "pcie_max_width": 16}),
    ("throttled", Gpu(throttle=("hw_slowdown", "hw_power_brake_slowdown", "gpu_idle")),
     {"throttle": ["gpu_idle", "hw_slowdown", "hw_power_brake_slowdown"]}),
    ("retired pages pending", Gpu(retired_pending=True), {"retired_pending": True}),
]


@pytest.mark.parametrize(("kind", "version"), LAYOUTS)
@pytest.mark.parametrize(("case", "gpu", "want"), GPUS, ids=[c[0] for c in GPUS])
def test_every_layout_reads_the_same_values(kind: str, version: str, case: str, gpu: Gpu,
                                            want: dict[str, Any]) -> None:
    read = _read(kind, version, [gpu])
    got = read["gpus"][0]
    assert {key: got[key] for key in want} == want, case
    assert (got["uuid"], got["vbios"], got["pci"], got["product"], read["driver"], read["cuda"]) == (
        "GPU-0", "96.00.74.00.0D", "00000000:19:00.0", "NVIDIA H100 80GB HBM3", "570.124.06", "12.8")


@pytest.mark.parametrize(("kind", "version"), [layout for layout in LAYOUTS if layout[1] not in OLD])
def test_new_layouts_keep_the_device_and_host_maximum_apart(kind: str, version: str) -> None:
    gpu = _read(kind, version, [Gpu(max_gen=5, host_gen=4, gen=4)])["gpus"][0]
    assert (gpu["pcie_max_gen"], gpu["host_max_gen"]) == (5, 4)


@pytest.mark.parametrize(("kind", "version"), [layout for layout in LAYOUTS if layout[1] in OLD])
def test_old_layouts_print_the_lesser_maximum_only(kind: str, version: str) -> None:
    gpu = _read(kind, version, [Gpu(max_gen=5, host_gen=4, gen=4)])["gpus"][0]
    # max_link_gen is the lesser of both ends; the host's own maximum is not printed (None, not 0)
    assert (gpu["pcie_max_gen"], gpu["host_max_gen"]) == (4, None)


@pytest.mark.parametrize(("kind", "version"), LAYOUTS)
def test_the_row_remapper_is_read_in_every_layout(kind: str, version: str) -> None:
    gpu = _read(kind, version, [Gpu(remap_pending=True, remap_failure=True)])["gpus"][0]
    assert (gpu["remap_pending"], gpu["remap_failure"]) == (True, True)


def test_remapped_rows_na_is_none_not_false() -> None:
    gpu = nvsmi_xml.read(xml([Gpu(remap_pending=None)]))["gpus"][0]
    assert (gpu["remap_pending"], gpu["remap_failure"]) == (None, None)


def test_gpu_blocks_are_indexed_in_file_order_and_attached_gpus_kept_apart() -> None:
    read = nvsmi_xml.read(xml([Gpu(uuid="GPU-a"), replace(Gpu(uuid="GPU-b"), bus="00000000:3B:00.0")], attached=4))
    assert [(g["index"], g["uuid"]) for g in read["gpus"]] == [(0, "GPU-a"), (1, "GPU-b")]
    assert read["attached_gpus"] == 4


def test_deprecated_and_unsupported_values_are_none() -> None:
    doc = xml([Gpu()], "v13").replace("<performance_state>P0</performance_state>",
                                      "<performance_state>Requested functionality has been deprecated"
                                      "</performance_state>")
    assert nvsmi_xml.read(doc)["gpus"][0]["pstate"] is None


REFUSED = [
    (nvsmi_xml.read, "CA 'mlx5_0'\n", "line 1: cannot read \"CA 'mlx5_0'\" as XML (syntax error)"),
    (nvsmi_xml.read, "<log><gpu/></log>", "the root element is <log>, not nvidia-smi's <nvidia_smi_log>"),
    (nvsmi_xml.read, xml([Gpu()]).replace("<current_ecc>Enabled", "<current_ecc>Maybe"),
     "gpu[0].ecc_mode.current_ecc: cannot read 'Maybe' as Enabled or Disabled"),
    (nvsmi_xml.read, xml([Gpu()]).replace("700.00 W</current_power_limit>", "lots</current_power_limit>"),
     "gpu[0].gpu_power_readings.current_power_limit: cannot read 'lots' as a number of W"),
    (nvsmi_text.read, "nvidia-smi: command not found\n",
     "line 1: cannot read 'nvidia-smi: command not found' as the NVSMI LOG banner nvidia-smi -q opens with"),
    (nvsmi_text.read, text([Gpu()]).replace("Attached GPUs", "{\"json\"\nAttached GPUs"),
     "line 8: cannot read '{\"json\"' as 'Label : value' or 'GPU <bus id>'"),
    (nvsmi_text.read, text([Gpu()]).replace("Current                           : Enabled",
                                            "Current                           : Yes please"),
     "(ECC Mode > Current): cannot read 'Yes please' as Enabled or Disabled"),
    (nvlink_status.read, "Link 0: 26.562 GB/s\n", "line 1: cannot read 'Link 0: 26.562 GB/s' as an nvidia-smi nvlink"),
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
def test_what_does_not_read_is_refused_with_its_line_or_element(read: Any, doc: str, message: str) -> None:
    with pytest.raises(UnreadableOutput) as refused:
        read(doc)
    assert message in str(refused.value)


def test_nvlink_status_counts_active_links_and_an_all_down_gpu() -> None:
    doc = ("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-a)\n" + "".join(f"\t Link {i}: 26.562 GB/s\n" for i in range(17))
           + "\t Link 17: <inactive>\nGPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-b)\n"
           "\t NVML: Unable to retrieve NVLink information as all links are inActive\n")
    assert nvlink_status.read(doc) == {0: {"uuid": "GPU-a", "nvlinks_active": 17, "nvlinks_total": 18},
                                       1: {"uuid": "GPU-b", "nvlinks_active": 0, "nvlinks_total": None}}
