"""The simulator's node-drift output (tools/sim/logs/node_drift_output.py) for every profile and every configuration
fault: the collector's own `node-drift/1` format, its XML parses as `nvidia-smi -q -x` (DTD v13) and its JSON as the
collector's files, a healthy node shows nothing wrong, and each fault shows in exactly the element it changes."""
from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime

import pytest

from tools.sim import profiles
from tools.sim.logs import dcgm_output, node_drift_logs
from tools.sim.logs.node_drift_output import FIELDS, Fault, Node, nic_ports, render

WHEN = datetime(2026, 12, 7, 5, 0, tzinfo=UTC)


def _node(profile: str) -> Node:
    return node_drift_logs.node_of(profiles.build_nodes(profile, 1)[0])


def files_of(lines: list[str]) -> dict[str, str]:
    """The files of a node-drift/1 output, its counts checked as a strict reader checks them."""
    assert re.fullmatch(r"node-drift/1 begin node=\S+ time=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", lines[0])
    files, at = {}, 1
    while not lines[at].startswith("node-drift/1 end"):
        name, count = re.fullmatch(r"node-drift/1 file name=(\S+) lines=(\d+)", lines[at]).groups()  # type: ignore
        files[name] = "\n".join(lines[at + 1:at + 1 + int(count)])
        at += 1 + int(count)
    assert lines[at:] == [f"node-drift/1 end files={len(files)}"]
    return files


def _gpus(lines: list[str]) -> list[ET.Element]:
    return ET.fromstring(files_of(lines)["nvidia-smi-q.xml"].split("\n", 2)[2]).findall("gpu")


def _healthy(profile: str) -> list[str]:
    return render(_node(profile), [], WHEN)


@pytest.mark.parametrize("profile", sorted(profiles.PROFILES))
def test_every_profile_prints_the_five_files_of_a_healthy_node(profile: str) -> None:
    node = _node(profile)
    files = files_of(render(node, [], WHEN))
    assert list(files) == ["nvidia-smi-q.xml", "nics.json", "host-pcie.json", "versions.json",
                           "nvidia-smi-nvlink.txt"]
    root = ET.fromstring(files["nvidia-smi-q.xml"].split("\n", 2)[2])
    assert files["nvidia-smi-q.xml"].split("\n")[1] == '<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v13.dtd">'
    gpus = root.findall("gpu")
    assert int(root.findtext("attached_gpus") or 0) == len(gpus) == node.gpus > 0
    assert [g.findtext("uuid") for g in gpus] == [dcgm_output.gpu_uuid(node.name, i) for i in range(node.gpus)]
    for gpu in gpus:
        assert gpu.findtext("ecc_mode/current_ecc") == gpu.findtext("ecc_mode/pending_ecc") == "Enabled"
        assert gpu.findtext("persistence_mode") == "Enabled"
        assert gpu.findtext("remapped_rows/remapped_row_pending") == "No"
        assert gpu.findtext("gpu_power_readings/current_power_limit") == gpu.findtext(
            "gpu_power_readings/default_power_limit")
        link = gpu.find("pci/pci_gpu_link_info")
        assert link is not None and link.findtext("pcie_gen/current_link_gen") == link.findtext(
            "pcie_gen/max_host_link_gen") == link.findtext("pcie_gen/max_device_link_gen")
        assert link.findtext("link_widths/current_link_width") == "16x"
    ports = json.loads(files["nics.json"])
    assert all(p["state"] == "ACTIVE" and p["phys_state"] == "LinkUp" for p in ports)
    host = json.loads(files["host-pcie.json"])
    assert set(host) == {f"0000:{g.get('id', '')[9:].lower()}" for g in gpus} | {p["pci"]["address"] for p in ports}
    assert set(json.loads(files["versions.json"])) == {"driver", "cuda", "kernel"}
    assert "<inactive>" not in files["nvidia-smi-nvlink.txt"]


@pytest.mark.parametrize(("profile", "count", "rate", "fw"), [
    ("aws-h100", 32, "100 Gb/sec (4X EDR)", "0.0.0.0"), ("aws-gb200", 4, "400 Gb/sec (4X NDR)", "0.0.0.0"),
    ("azure-h100", 8, "400 Gb/sec (4X NDR)", "28.39.1002"), ("oci-gb300", 4, "800 Gb/sec (4X XDR)", "40.44.1036"),
    ("onprem-b300", 8, "800 Gb/sec (4X XDR)", "40.44.1036"), ("gcp-h100", 0, "", "")])
def test_each_platform_has_its_nics(profile: str, count: int, rate: str, fw: str) -> None:
    ports = json.loads(files_of(_healthy(profile))["nics.json"])
    assert len(ports) == count
    assert {(p["rate"], p["fw_ver"]) for p in ports} == ({(rate, fw)} if count else set())


@pytest.mark.parametrize(("profile", "power", "gen", "links"), [
    ("aws-h100", "700.00 W", "5", 18), ("aws-gb200", "1200.00 W", "5", 18), ("oci-gb300", "1400.00 W", "6", 18),
    ("onprem-b300", "1100.00 W", "6", 18)])
def test_each_product_has_its_power_limit_pcie_generation_and_nvlinks(profile: str, power: str, gen: str,
                                                                      links: int) -> None:
    lines = _healthy(profile)
    gpu = _gpus(lines)[0]
    assert gpu.findtext("gpu_power_readings/default_power_limit") == power
    assert gpu.findtext("pci/pci_gpu_link_info/pcie_gen/max_link_gen") == gen
    nvlink = files_of(lines)["nvidia-smi-nvlink.txt"].splitlines()
    assert nvlink[0].startswith("GPU 0: ") and sum(line.startswith("\t Link ") for line in nvlink[:links + 1]) == links


def _changed(profile: str, fault: Fault) -> tuple[dict[str, str], dict[str, str]]:
    return files_of(_healthy(profile)), files_of(render(_node(profile), [fault], WHEN))


# Each GPU field's changes on its GPU (path, healthy, faulty), in the document's order.
GPU_ELEMENT = {
    "ecc-off": [("ecc_mode/current_ecc", "Enabled", "Disabled"), ("ecc_mode/pending_ecc", "Enabled", "Disabled")],
    "ecc-pending": [("ecc_mode/pending_ecc", "Enabled", "Disabled")],
    "remap-pending": [("ecc_errors/aggregate/dram_uncorrectable", "0", "1"), ("remapped_rows/remapped_row_unc", "0", "1"),
                      ("remapped_rows/remapped_row_pending", "No", "Yes")],
    "persistence-off": [("persistence_mode", "Enabled", "Disabled")],
    "pcie-downgraded": [("pci/pci_gpu_link_info/pcie_gen/current_link_gen", "5", "4"),
                        ("pci/pci_gpu_link_info/pcie_gen/device_current_link_gen", "5", "4"),
                        ("pci/pci_gpu_link_info/link_widths/current_link_width", "16x", "8x")],
    "power-limit": [("gpu_power_readings/average_power_draw", "434.00 W", "347.20 W"),
                    ("gpu_power_readings/instant_power_draw", "448.00 W", "358.40 W"),
                    ("gpu_power_readings/current_power_limit", "700.00 W", "560.00 W"),
                    ("gpu_power_readings/requested_power_limit", "700.00 W", "560.00 W")],
    "vbios": [("vbios_version", "96.00.99.00.01", "96.00.99.00.02")],
}


def _elements(gpu: ET.Element) -> dict[str, str]:
    """Every leaf element of a GPU block by its path."""
    out = {}

    def walk(element: ET.Element, path: str) -> None:
        children = list(element)
        if not children:
            out[path] = (element.text or "").strip()
        for child in children:
            walk(child, f"{path}/{child.tag}" if path else child.tag)
    walk(gpu, "")
    return out


@pytest.mark.parametrize("field", sorted(GPU_ELEMENT))
def test_a_gpu_fault_changes_exactly_its_elements_on_its_gpu(field: str) -> None:
    before, after = _changed("aws-h100", Fault(field, 5))
    old = [_elements(g) for g in ET.fromstring(before["nvidia-smi-q.xml"].split("\n", 2)[2]).findall("gpu")]
    new = [_elements(g) for g in ET.fromstring(after["nvidia-smi-q.xml"].split("\n", 2)[2]).findall("gpu")]
    assert old[:5] + old[6:] == new[:5] + new[6:]
    changed = [(path, old[5][path], new[5][path]) for path in old[5] if old[5][path] != new[5][path]]
    assert changed == GPU_ELEMENT[field]
    assert {k: v for k, v in after.items() if k != "nvidia-smi-q.xml"} == {
        k: v for k, v in before.items() if k != "nvidia-smi-q.xml"}


def test_nvlink_down_makes_one_link_of_its_gpu_inactive() -> None:
    before, after = _changed("aws-h100", Fault("nvlink-down", 2))
    old, new = before["nvidia-smi-nvlink.txt"].splitlines(), after["nvidia-smi-nvlink.txt"].splitlines()
    assert [(o, n) for o, n in zip(old, new, strict=True) if o != n] == [
        ("\t Link 17: 26.562 GB/s", "\t Link 17: <inactive>")]
    assert old.index("\t Link 17: 26.562 GB/s", old.index(next(line for line in old if line.startswith("GPU 2: ")))) \
        == new.index("\t Link 17: <inactive>")
    assert {k: v for k, v in after.items() if k != "nvidia-smi-nvlink.txt"} == {
        k: v for k, v in before.items() if k != "nvidia-smi-nvlink.txt"}


def test_gpu_missing_drops_its_block_its_links_and_its_host_port() -> None:
    node = _node("aws-h100")
    before, after = _changed("aws-h100", Fault("gpu-missing", 3))
    root = ET.fromstring(after["nvidia-smi-q.xml"].split("\n", 2)[2])
    assert root.findtext("attached_gpus") == "7"
    uuids = [g.findtext("uuid") for g in root.findall("gpu")]
    assert dcgm_output.gpu_uuid(node.name, 3) not in uuids and len(uuids) == 7
    assert "GPU 3: " not in after["nvidia-smi-nvlink.txt"] and after["nvidia-smi-nvlink.txt"].count("GPU ") == 7
    assert len(json.loads(after["host-pcie.json"])) == len(json.loads(before["host-pcie.json"])) - 1


def test_nic_port_down_downs_the_first_port_only() -> None:
    before, after = _changed("azure-h100", Fault("nic-port-down"))
    old, new = json.loads(before["nics.json"]), json.loads(after["nics.json"])
    assert (new[0]["state"], new[0]["phys_state"]) == ("DOWN", "Disabled") and new[0]["device"] == "mlx5_ib0"
    assert new[1:] == old[1:] and {k: v for k, v in new[0].items() if k not in ("state", "phys_state")} == {
        k: v for k, v in old[0].items() if k not in ("state", "phys_state")}


def test_nic_fw_puts_every_nic_of_the_node_on_other_firmware() -> None:
    before, after = _changed("azure-h100", Fault("nic-fw"))
    old, new = json.loads(before["nics.json"]), json.loads(after["nics.json"])
    assert {p["fw_ver"] for p in new} == {"28.38.1900"} and {p["fw_ver"] for p in old} == {"28.39.1002"}
    assert [{**p, "fw_ver": ""} for p in new] == [{**p, "fw_ver": ""} for p in old]


def test_several_faults_add_up_and_every_field_is_covered() -> None:
    faults = [Fault("ecc-off", 0), Fault("persistence-off", 1), Fault("nic-fw")]
    gpus = _gpus(render(_node("azure-h100"), faults, WHEN))
    assert gpus[0].findtext("ecc_mode/current_ecc") == "Disabled" and gpus[1].findtext("persistence_mode") == "Disabled"
    assert set(GPU_ELEMENT) | {"nvlink-down", "gpu-missing", "nic-port-down", "nic-fw"} == set(FIELDS)


def test_the_uuids_and_output_are_stable_per_node() -> None:
    assert _healthy("aws-h100") == _healthy("aws-h100")
    other = render(Node("gpu-node-999", "NVIDIA-H100-80GB-HBM3", 8, "aws", "h100"), [], WHEN)
    assert _gpus(other)[0].findtext("uuid") != _gpus(_healthy("aws-h100"))[0].findtext("uuid")
    assert nic_ports(Node("n", "NVIDIA-H100-80GB-HBM3", 8, "gcp", "h100"), [Fault("nic-fw")]) == []


@pytest.mark.parametrize(("words", "why"), [
    (["python3", "/opt/cre/node_drift.py", "--load-s", "8"], None),
    (["python3", "/opt/cre/node_drift.py"], None),
    (["python3", "/opt/cre/node_drift.py", "--load-s", "0"],
     "node_drift.py: error: argument --load-s: must be a number above 0, got '0'"),
    (["python3", "/opt/cre/node_drift.py", "--load-s", "x"],
     "node_drift.py: error: argument --load-s: must be a number above 0, got 'x'")])
def test_arguments_the_collector_refuses_end_the_pod_with_2(words: list[str], why: str | None) -> None:
    assert node_drift_logs.refused(words) == why
