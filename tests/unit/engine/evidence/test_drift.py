"""Drift against the fleet: an outlier named with the majority value and how many nodes hold it; the report's
`configuration`; a golden profile generated from a trusted run."""
from __future__ import annotations

from typing import Any

import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.catalog.golden_defaults import defaults, load_text
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence import drift, golden, node_snapshot
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.golden_generate import generate
from tests.unit.engine.evidence.config_docs import collector, h100s, nics, node_files


def _fleet(count: int = 8, **per_node: dict[str, Any]) -> list[dict[str, Any]]:
    """`count` healthy nodes; per_node: {"n<i>": {gpus, ports, kernel, driver, hosts}}."""
    out = []
    for i in range(count):
        change = per_node.get(f"n{i}", {})
        files = node_files(change.get("gpus", h100s()), change.get("ports", nics()), change.get("hosts"),
                           kernel=change.get("kernel", "6.8.0-1021-azure"), driver=change.get("driver", "570.124.06"))
        out.append(node_snapshot.read(collector(f"gpu-node-{i}", files)))
    return out


def _drift(snapshots: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(f["node"], f["component"], f["index"], f["name"], f["field"], f["expected"], f["observed"], f["outcome"],
             f["drift"]) for f in drift.findings(snapshots)]


def test_one_nic_firmware_outlier_is_named_with_the_majority_and_its_count() -> None:
    fleet = _fleet(n5={"ports": nics(p3={"fw_ver": "28.36.1010"})})
    assert _drift(fleet) == [("gpu-node-5", "nic", 1, "mlx5_3/1", "nic.fw", "28.39.1002", "28.36.1010", "warn",
                              {"majority": "28.39.1002", "holders": 7, "of": 8})]
    found = drift.findings(fleet)[0]
    assert found["remedy"] == "flash the fleet's NIC firmware 28.39.1002 (`mlxfwmanager`)"
    row = golden.rows([found])[0]
    assert (row.component, row.index, row.metric, row.value, row.detail) == (
        "link", 1, "nic.fw", "28.36.1010", "mlx5_3/1: expected 28.39.1002; flash the fleet's NIC firmware 28.39.1002 "
        "(`mlxfwmanager`); drift: majority 28.39.1002 on 7/8 nodes")


def test_vbios_kernel_and_driver_outliers() -> None:
    fleet = _fleet(n1={"gpus": h100s(g6={"vbios": "96.00.61.00.01"})}, n2={"kernel": "6.5.0-1017-azure"},
                   n7={"driver": "570.86.15"})
    assert [(f[0], f[2], f[4], f[5], f[6], f[8]["holders"]) for f in _drift(fleet)] == [
        ("gpu-node-1", 6, "vbios", "96.00.74.00.0D", "96.00.61.00.01", 7),
        ("gpu-node-2", None, "kernel", "6.8.0-1021-azure", "6.5.0-1017-azure", 7),
        ("gpu-node-7", None, "driver", "570.124.06", "570.86.15", 7)]


def test_two_firmware_lines_on_one_node_are_not_drift() -> None:
    ports = nics(10, **{f"p{i}": {"fw_ver": "22.38.1002", "link_layer": "Ethernet"} for i in range(8, 10)})
    assert _drift(_fleet(4, **{f"n{i}": {"ports": ports} for i in range(4)})) == []


def test_a_host_slower_than_the_fleets_is_drift_and_no_gpu_fault() -> None:
    slow = {f"0000:{0x19 + g:02x}:00.0": {"max_link_speed": "16.0 GT/s PCIe", "max_link_width": "16"} for g in range(8)}
    fast = {key: {"max_link_speed": "32.0 GT/s PCIe", "max_link_width": "16"} for key in slow}
    fleet = _fleet(4, n0={"hosts": fast, "gpus": h100s(g0={"gen": 4})}, n1={"hosts": fast}, n2={"hosts": fast},
                   n3={"hosts": {**fast, "0000:19:00.0": slow["0000:19:00.0"]}, "gpus": h100s(g0={"gen": 4})})
    assert [(f[0], f[2], f[4], f[5], f[6]) for f in _drift(fleet)] == [("gpu-node-3", 0, "host_max_gen", "Gen5",
                                                                        "Gen4")]
    # node 3's GPU 0 runs at what its host allows: no golden finding; node 0's at Gen4 of Gen5 is one
    assert [(f["node"], f["field"]) for s in fleet for f in golden.findings(s, defaults(), "NVIDIA-H100-80GB-HBM3")] \
        == [("gpu-node-0", "pcie_gen")]


def test_a_fleet_split_in_halves_names_nobody_and_the_table_shows_both() -> None:
    fleet = _fleet(4, n0={"kernel": "6.5"}, n1={"kernel": "6.5"})
    assert _drift(fleet) == []
    assert drift.table(fleet) == [{"field": "kernel", "component": "node", "majority": None, "values": [
        {"value": "6.5", "nodes": ["gpu-node-0", "gpu-node-1"]},
        {"value": "6.8.0-1021-azure", "nodes": ["gpu-node-2", "gpu-node-3"]}]}]


def test_configuration_holds_every_node_in_natural_order_with_its_findings_and_the_drift_table() -> None:
    fleet = _fleet(11, n10={"ports": nics(p0={"fw_ver": "28.36.1010"})}, n2={"gpus": h100s(g1={"ecc": False})})
    findings = [f for s in fleet for f in golden.findings(s, defaults(), "NVIDIA-H100-80GB-HBM3")]
    report = drift.configuration(fleet, findings)
    assert [n["node"] for n in report["nodes"]] == [f"gpu-node-{i}" for i in range(11)]
    assert [(n["node"], [f["field"] for f in n["findings"]]) for n in report["nodes"] if n["findings"]] == [
        ("gpu-node-2", ["ecc_current"]), ("gpu-node-10", ["nic.fw"])]
    assert report["drift"] == [{"field": "nic.fw", "component": "nic", "majority": "28.39.1002", "values": [
        {"value": "28.39.1002", "nodes": [f"gpu-node-{i}" for i in range(11)]},
        {"value": "28.36.1010", "nodes": ["gpu-node-10"]}]}]


def test_a_generated_profile_pins_the_majority_with_counts_and_judges_the_next_run() -> None:
    trusted = _fleet(n3={"kernel": "6.5.0-1017-azure"})
    made = generate(trusted, defaults().catalog, "azure")
    product = made["profile"]["products"]["NVIDIA-H100-80GB-HBM3"]
    assert (product["gpus"], product["powerLimitW"], "nvlinks" in product) == (8, 700.0, False)
    assert product["pinned"] == {"vbios": {"value": "96.00.74.00.0D", "nodes": 8, "of": 8},
                                 "driver": {"value": "570.124.06", "nodes": 8, "of": 8},
                                 "kernel": {"value": "6.8.0-1021-azure", "nodes": 7, "of": 8},
                                 "nic.fw": [{"value": "28.39.1002", "nodes": 8, "of": 8}]}
    assert made["profile"]["nics"] == {"azure": {"linkLayer": "InfiniBand", "count": 8, "rateGbps": 400.0}}
    assert made["unpinned"] == []
    profile = load_text(yaml.safe_dump(made["profile"]), "golden.yaml")
    later = _fleet(2, n1={"ports": nics(p0={"fw_ver": "28.40.1000"})})[1]
    assert [(f["field"], f["expected"], f["observed"], f["outcome"])
            for f in golden.findings(later, profile, "", "azure")] == [
        ("nic.fw", "28.39.1002 (pinned: 8 of 8 nodes)", "28.40.1000", "warn")]


def test_a_field_without_a_majority_is_not_pinned_but_listed() -> None:
    made = generate(_fleet(2, n0={"kernel": "6.5"}), defaults().catalog)
    assert "kernel" not in made["profile"]["products"]["NVIDIA-H100-80GB-HBM3"]["pinned"]
    assert made["unpinned"] == [{"product": "NVIDIA-H100-80GB-HBM3", "field": "kernel",
                                 "values": ["6.5", "6.8.0-1021-azure"]}]
    assert "nics" not in made["profile"]
