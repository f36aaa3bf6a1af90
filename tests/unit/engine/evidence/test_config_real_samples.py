"""The real configuration outputs in data/config/ (sources in each folder's README) read as their .expect.json says,
and their faults found by the golden rules with field, expected and observed."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.catalog.golden_defaults import defaults
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence import (
    golden,
    ibstat,
    ibv_devinfo,
    lspci,
    nvsmi_text,
    nvsmi_xml,
)
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.config_check import (
    check_config_evidence,
)
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.golden import (
    GoldenOptions,
    GoldenParameters,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "config"
SMI = sorted((DATA / "nvidia-smi-xml").glob("*.xml")) + sorted((DATA / "nvidia-smi-q").glob("*.txt"))
_FLAGS = {"Enabled": True, "Disabled": False, "Yes": True, "No": False, "N/A": None}


def _expect(path: Path) -> dict[str, Any]:
    return json.loads(path.with_name(path.name + ".expect.json").read_text())


def _want(gpu: dict[str, Any]) -> dict[str, Any]:
    """The expect file's GPU in the snapshot's keys."""
    def flag(key: str) -> Any:
        return _FLAGS[gpu[key]]

    def count(key: str) -> Any:
        return None if gpu[key] == "N/A" else gpu[key]

    return {"index": gpu["index"], "uuid": gpu["uuid"], "product": gpu["product"], "vbios": gpu["vbios"],
            "pci": gpu["bus_id"], "persistence": flag("persistence_mode"), "ecc_current": flag("ecc_mode_current"),
            "ecc_pending": flag("ecc_mode_pending"), "volatile_uncorrectable": count("volatile_uncorrectable_ecc"),
            "remap_pending": flag("remapped_rows_pending"), "remap_failure": flag("remapped_rows_failure"),
            "retired_pending": flag("retired_pages_pending"), "power_limit_w": gpu["power_limit_w"],
            "default_power_limit_w": gpu["default_power_limit_w"], "pcie_gen": gpu["pcie_gen_current"],
            "pcie_max_gen": gpu.get("pcie_gen_max_device", gpu["pcie_gen_max"]),
            "pcie_width": gpu["pcie_width_current"], "pcie_max_width": gpu["pcie_width_max"],
            "throttle": gpu["active_throttle_reasons"], "pstate": gpu["performance_state"]}


@pytest.mark.parametrize("path", SMI, ids=lambda p: p.name)
def test_nvidia_smi_samples_read_as_expected(path: Path) -> None:
    expect = _expect(path)
    read = (nvsmi_xml if path.suffix == ".xml" else nvsmi_text).read(path.read_text())
    assert (read["driver"], read["cuda"], read["attached_gpus"]) == (
        expect["driver"], expect["cuda"], expect["attached_gpus"])
    assert len(read["gpus"]) == expect["gpu_blocks"]
    for got, want in zip(read["gpus"], expect["gpus"]):
        assert {key: got[key] for key in _want(want)} == _want(want)
        assert got["nvlinks_active"] is None   # nvidia-smi -q prints no NVLink state: not 0


def test_blackwell_host_limit_is_the_hosts_maximum_and_an_idle_slow_link_is_no_fault() -> None:
    path = DATA / "nvidia-smi-xml" / "rtx-pro-6000-blackwell-maxq-590.44.01-v13.xml"
    gpu = nvsmi_xml.read(path.read_text())["gpus"][0]
    assert (gpu["pcie_max_gen"], gpu["host_max_gen"], gpu["pcie_gen"], gpu["pstate"]) == (5, 4, 1, "P8")
    found = golden.findings({"node": "ws", "gpus": [gpu], "nics": []}, defaults(), passes=True)
    assert not [f for f in found if f["field"] == "pcie_gen"]   # idle at P8: the gen is not judged
    ecc = [(f["field"], f["expected"], f["observed"], f["outcome"]) for f in found if f["field"].startswith("ecc")]
    assert ecc == [("ecc_current", "Enabled", "Disabled", "fail"), ("ecc_pending", "Enabled", "Disabled", "fail")]


def _failures(result: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(f["index"], f["name"], f["field"], f["expected"], f["observed"], f["outcome"])
            for f in result["findings"] if f["outcome"] != "pass"]


def _check(path: Path, fmt: str, product: str = "") -> dict[str, Any]:
    return check_config_evidence(path.read_text(), fmt, GoldenOptions("node-1", parameters=GoldenParameters(
        product, "", defaults())))


def test_faults_of_the_nvidia_smi_samples_are_found_with_field_expected_and_observed() -> None:
    a10 = _check(DATA / "nvidia-smi-q" / "a10-535.129.03-row-remap-pending.txt", "nvidia-smi-q")
    assert _failures(a10) == [(0, None, "remap_pending", "No", "Yes", "fail")]
    h100 = _check(DATA / "nvidia-smi-q" / "8x-h100-sxm-535.161.08-hw-power-brake-active.txt", "nvidia-smi-q")
    assert _failures(h100) == [(i, None, "throttle", "none but gpu_idle", "hw_slowdown, hw_power_brake_slowdown",
                                "fail") for i in range(8)]
    a100 = _check(DATA / "nvidia-smi-xml" / "a100-sxm4-80gb-535.54.03-v12.xml", "nvidia-smi-xml",
                  "NVIDIA-A100-SXM4-80GB")
    assert _failures(a100) == [(None, None, "gpu_count", "8", "1 (4 attached)", "fail"),
                               (0, None, "persistence", "Enabled", "Disabled", "warn")]
    assert a100["missing"] == list(range(1, 8)) and a100["outcome"] == "fail"
    p100 = _check(DATA / "nvidia-smi-xml" / "tesla-p100-pcie-510.47.03-v11-aggregate-sbe3.xml", "nvidia-smi-xml")
    # aggregate single-bit ECC 3 is correctable: no finding; only persistence
    assert _failures(p100) == [(0, None, "persistence", "Enabled", "Disabled", "warn")]


def _ports(expect: dict[str, Any], name: str) -> list[tuple[Any, ...]]:
    return [(p[name], p["port"], p["link_layer"]) for p in expect["ports"]]


def test_ibstat_sample_reads_every_port_and_finds_the_three_down() -> None:
    path = DATA / "ibstat" / "h100-node-cx7-some-ports-down-a.txt"
    expect, read = _expect(path), ibstat.read(path.read_text())["nics"]
    assert [(n["device"], n["port"], n["link_layer"]) for n in read] == _ports(expect, "ca")
    assert [(n["state"], n["phys_state"], n["rate_gbps"], n["fw"]) for n in read] == [
        (p["state"].upper(), p["physical_state"], float(p["rate"]), p["firmware"]) for p in expect["ports"]]
    assert _failures(_check(path, "ibstat")) == [
        (1, f"mlx5_{n}/1", "nic.state", "ACTIVE/LinkUp", "DOWN/Disabled", "fail") for n in (2, 7, 8)]


def test_ibv_devinfo_sample_reads_no_rate_and_finds_the_two_down() -> None:
    path = DATA / "ibv_devinfo" / "12x-cx7-mt4129-roce-fw28.43-two-ports-down.txt"
    expect, read = _expect(path), ibv_devinfo.read(path.read_text())["nics"]
    assert [(n["device"], n["port"], n["link_layer"]) for n in read] == _ports(expect, "hca_id")
    assert [(n["state"], n["fw"], n["rate_gbps"]) for n in read] == [
        (p["state"].split()[0].replace("PORT_", ""), p["fw_ver"], None) for p in expect["ports"]]
    assert _failures(_check(path, "ibv_devinfo")) == [
        (1, f"mlx5_{n}/1", "nic.state", "ACTIVE/LinkUp", "DOWN", "fail") for n in (9, 11)]


def test_lspci_grepped_sample_is_a_link_trained_one_generation_low() -> None:
    path = DATA / "lspci" / "cx6-mt4123-ocp3-gen4x16-slot-8gts-downgraded-grep.txt"
    device = _expect(path)["devices"][0]
    read = lspci.read(path.read_text())["nics"][0]
    assert (read["pcie_max_gen"], read["pcie_max_width"], read["pcie_gen"], read["pcie_width"]) == (
        device["lnkcap"]["gen"], device["lnkcap"]["width"], device["lnksta"]["gen"], device["lnksta"]["width"])
    assert _failures(_check(path, "lspci")) == [(None, "device 1", "nic.pcie_gen", "Gen4", "Gen3", "fail")]
