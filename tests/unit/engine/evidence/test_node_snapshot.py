"""The node-drift collector's output (node-drift/1) read into the node's snapshot, and its refusals."""
from __future__ import annotations

import json

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.evidence import node_snapshot
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.dcgm_results import UnreadableOutput
from tests.unit.engine.evidence.config_docs import collector, h100s, nics, node_files, xml


def test_the_four_files_make_one_snapshot() -> None:
    hosts = {"0000:19:00.0": {"max_link_speed": "16.0 GT/s PCIe", "max_link_width": "16"},
             "0000:1a:00.0": {"max_link_speed": "32.0 GT/s PCIe", "max_link_width": "16"}}
    snapshot = node_snapshot.read(collector("gpu-node-3", node_files(h100s(2), nics(1), hosts)))
    assert (snapshot["node"], snapshot["time"], snapshot["driver"], snapshot["cuda"], snapshot["kernel"]) == (
        "gpu-node-3", "2026-12-07T05:00:00Z", "570.124.06", "12.8", "6.8.0-1021-azure")
    assert [(g["index"], g["host_max_gen"], g["nvlinks_active"]) for g in snapshot["gpus"]] == [(0, 4, None), (1, 5, None)]
    assert snapshot["nics"] == [{
        "device": "mlx5_0", "port": 1, "state": "ACTIVE", "phys_state": "LinkUp", "rate_gbps": 400.0,
        "fw": "28.39.1002", "link_layer": "InfiniBand", "pcie_gen": 5, "pcie_width": 16, "pcie_max_gen": 5,
        "pcie_max_width": 16, "host_max_gen": 5, "host_max_width": 16}]


def test_the_optional_nvlink_file_fills_each_gpus_links() -> None:
    links = "".join(f"GPU {g}: NVIDIA H100 80GB HBM3 (UUID: GPU-{g})\n"
                    + "".join(f"\t Link {i}: 26.562 GB/s\n" for i in range(18 - g)) for g in range(2))
    files = {**node_files(h100s(2), nics(1)), "nvidia-smi-nvlink.txt": links}
    gpus = node_snapshot.read(collector("n", files))["gpus"]
    assert [(g["nvlinks_active"], g["nvlinks_total"]) for g in gpus] == [(18, 18), (17, 17)]


def _without(name: str) -> dict[str, str]:
    files = node_files(h100s(1), nics(1))
    files.pop(name)
    return files


REFUSED = [
    ("nvidia-smi: command not found\n", "no node-drift/1 begin record: the collector did not run, or printed nothing"),
    (collector("n", _without("nics.json")), "no nics.json in the node-drift/1 output of n"),
    (collector("n", node_files(h100s(1), nics(1))).replace("node-drift/1 end files=4\ndone\n", ""),
     "no node-drift/1 end record: the output of n ends early"),
    (collector("n", {**node_files(h100s(1), nics(1)), "dmesg.txt": "x"}),
     "'dmesg.txt' is not a node-drift/1 file"),
    (collector("n", {**node_files(h100s(1), nics(1)), "versions.json": "{\"driver\": "}),
     "versions.json: line 1: cannot read it as JSON"),
    (collector("n", {**node_files(h100s(1), nics(1)), "nics.json": json.dumps([{"device": "mlx5_0"}])}),
     "nics.json: [0]: give device (a string) and port (an integer) for each NIC port"),
    (collector("n", {**node_files(h100s(1), nics(1, p0={"state": "4 ACTIVE!"}))}),
     "nics.json: [0].state: cannot read '4 ACTIVE!' as a port state"),
    (collector("n", {**node_files(h100s(1), nics(1)), "nvidia-smi-q.xml": xml(h100s(1)).replace(
        "<current_ecc>Enabled", "<current_ecc>On")}),
     "nvidia-smi-q.xml: gpu[0].ecc_mode.current_ecc: cannot read 'On' as Enabled or Disabled"),
]


@pytest.mark.parametrize(("doc", "message"), REFUSED)
def test_what_does_not_read_is_refused_with_its_file_and_line(doc: str, message: str) -> None:
    with pytest.raises(UnreadableOutput) as refused:
        node_snapshot.read(doc)
    assert message in str(refused.value)


def test_a_file_cut_short_is_refused() -> None:
    doc = collector("n", node_files(h100s(1), nics(1)))
    cut = doc[:doc.index("node-drift/1 file name=versions.json")] + "node-drift/1 file name=versions.json lines=9\n{}\n"
    with pytest.raises(UnreadableOutput, match="versions.json declares 9 lines, the output ends after 1"):
        node_snapshot.read(cut)


def test_pci_addresses_of_nvidia_smi_and_sysfs_are_the_same_device() -> None:
    assert node_snapshot.pci_key("00000000:1A:00.0") == node_snapshot.pci_key("0000:1a:00.0") == "0000:1a:00.0"
