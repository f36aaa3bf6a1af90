"""The node-drift collector's pure parts (catalog/_lib/harness/node_drift.py), without a GPU or torch: the
`node-drift/1` format exactly as the issue-42 contract says, the NIC ports, PCI links and upstream ports read from a
fake sysfs tree laid out as the kernel lays it out (symlinks into /sys/devices), and without torch one line, exit 2."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

COLLECTOR = Path(__file__).resolve().parents[4] / "catalog" / "_lib" / "harness" / "node_drift.py"
_SPEC = importlib.util.spec_from_file_location("node_drift_collector", COLLECTOR)
collector = importlib.util.module_from_spec(_SPEC)  # type: ignore[arg-type]
sys.modules["node_drift_collector"] = collector
_SPEC.loader.exec_module(collector)  # type: ignore[union-attr]

XML = """<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v13.dtd">
<nvidia_smi_log>
\t<driver_version>570.124.06</driver_version>
\t<cuda_version>12.8</cuda_version>
\t<attached_gpus>1</attached_gpus>
\t<gpu id="00000000:1B:00.0">
\t</gpu>
</nvidia_smi_log>
"""
ROOT_PORT = "pci0000:00/0000:00:01.0"
GPU_PORT = "pci0000:00/0000:00:03.0"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def _function(sysfs: Path, parent: str, address: str, speed: str, width: str, max_speed: str,
              max_width: str) -> Path:
    """A PCI function under /sys/devices with its link files, and its /sys/bus/pci/devices symlink."""
    device = sysfs / "devices" / parent / address
    for key, value in (("current_link_speed", speed), ("current_link_width", width),
                       ("max_link_speed", max_speed), ("max_link_width", max_width)):
        _write(device / key, value)
    link = sysfs / "bus" / "pci" / "devices" / address
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(device)
    return device


def _port(sysfs: Path, parent: str, speed: str, width: str) -> None:
    _write(sysfs / "devices" / parent / "max_link_speed", speed)
    _write(sysfs / "devices" / parent / "max_link_width", width)


def _rdma(sysfs: Path, name: str, device: Path, fw: str, ports: dict[int, tuple[str, str, str, str]]) -> None:
    """An RDMA device of /sys/class/infiniband: its fw_ver, `device` symlink and ports."""
    base = sysfs / "class" / "infiniband" / name
    _write(base / "fw_ver", fw)
    (base / "device").symlink_to(device)
    for number, (state, phys, rate, layer) in ports.items():
        for key, value in (("state", state), ("phys_state", phys), ("rate", rate), ("link_layer", layer)):
            _write(base / "ports" / str(number) / key, value)


@pytest.fixture
def sysfs(tmp_path: Path) -> Path:
    """Two ConnectX ports (one down, its link at Gen4 x8 on a Gen5 x16 slot) and a GPU behind a Gen5 x16 port."""
    root = tmp_path / "sys"
    _port(root, ROOT_PORT, "32.0 GT/s PCIe", "16")
    _port(root, GPU_PORT, "32.0 GT/s PCIe", "16")
    nic0 = _function(root, ROOT_PORT, "0000:1a:00.0", "32.0 GT/s PCIe", "16", "32.0 GT/s PCIe", "16")
    nic1 = _function(root, ROOT_PORT, "0000:1a:00.1", "16.0 GT/s PCIe", "8", "32.0 GT/s PCIe", "16")
    _function(root, GPU_PORT, "0000:1b:00.0", "32.0 GT/s PCIe", "16", "32.0 GT/s PCIe", "16")
    _write(nic0 / "net" / "ibp26s0" / "dev_port", "0")
    _rdma(root, "mlx5_0", nic0, "28.39.1002", {1: ("4: ACTIVE", "5: LinkUp", "400 Gb/sec (4X NDR)", "InfiniBand")})
    _rdma(root, "mlx5_1", nic1, "28.39.1002", {1: ("1: DOWN", "3: Disabled", "10 Gb/sec (4X SDR)", "InfiniBand")})
    return root


def test_the_format_is_begin_each_file_with_its_line_count_then_end() -> None:
    lines = collector.render("gpu-node-001", 1767225600.0, [("a.json", "[\n  1\n]\n"), ("empty.txt", "")])
    assert lines == ["node-drift/1 begin node=gpu-node-001 time=2026-01-01T00:00:00Z",
                     "node-drift/1 file name=a.json lines=3", "[", "  1", "]",
                     "node-drift/1 file name=empty.txt lines=0",
                     "node-drift/1 end files=2"]


def test_each_rdma_port_is_read_as_sysfs_spells_it(sysfs: Path) -> None:
    ports = collector.nics(sysfs)
    assert ports == [
        {"device": "mlx5_0", "port": 1, "state": "ACTIVE", "phys_state": "LinkUp", "rate": "400 Gb/sec (4X NDR)",
         "fw_ver": "28.39.1002", "netdev": "ibp26s0", "link_layer": "InfiniBand",
         "pci": {"address": "0000:1a:00.0", "current_link_speed": "32.0 GT/s PCIe", "current_link_width": "16",
                 "max_link_speed": "32.0 GT/s PCIe", "max_link_width": "16"}},
        {"device": "mlx5_1", "port": 1, "state": "DOWN", "phys_state": "Disabled", "rate": "10 Gb/sec (4X SDR)",
         "fw_ver": "28.39.1002", "netdev": None, "link_layer": "InfiniBand",
         "pci": {"address": "0000:1a:00.1", "current_link_speed": "16.0 GT/s PCIe", "current_link_width": "8",
                 "max_link_speed": "32.0 GT/s PCIe", "max_link_width": "16"}}]
    assert json.loads(collector.to_json(ports)) == ports


def test_a_node_without_rdma_devices_has_no_ports(tmp_path: Path) -> None:
    assert collector.nics(tmp_path) == []


def test_each_gpu_and_nic_gets_its_upstream_port_s_maximum(sysfs: Path) -> None:
    addresses = collector.gpu_addresses(XML) + ["0000:1a:00.0", "0000:1a:00.1"]
    assert addresses[0] == "0000:1b:00.0"
    assert collector.host_pcie(sysfs, addresses) == {
        address: {"max_link_speed": "32.0 GT/s PCIe", "max_link_width": "16"} for address in addresses}


def test_a_function_on_a_root_bus_or_absent_has_no_host_entry(sysfs: Path) -> None:
    _write(sysfs / "devices" / "pci0000:00" / "0000:00:05.0" / "max_link_width", "16")
    (sysfs / "bus" / "pci" / "devices" / "0000:00:05.0").symlink_to(sysfs / "devices" / "pci0000:00" / "0000:00:05.0")
    assert collector.host_pcie(sysfs, ["0000:00:05.0", "0000:99:00.0"]) == {}


def test_versions_come_from_the_xml_and_the_kernel() -> None:
    assert collector.versions(XML, "6.8.0-1021-aws") == {"driver": "570.124.06", "cuda": "12.8",
                                                         "kernel": "6.8.0-1021-aws"}
    assert collector.versions("not xml", "") == {"driver": None, "cuda": None, "kernel": None}


def test_nvidia_smi_s_bus_id_is_sysfs_s_address() -> None:
    assert collector.sysfs_address("00000000:1B:00.0") == "0000:1b:00.0"
    assert collector.sysfs_address("00000001:C3:00.0") == "0001:c3:00.0"


def test_without_torch_it_says_so_in_one_line_and_exits_2(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    assert collector.main(["--node", "gpu-node-001", "--load-s", "1"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("node-drift: torch is not in the image") and err.count("\n") == 1


def test_without_a_node_name_it_exits_2(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("NODE_NAME", raising=False)
    assert collector.main(["--node", ""]) == 2
    assert capsys.readouterr().err == ("node-drift: no node name: pass --node or set NODE_NAME (the pod's "
                                       "spec.nodeName)\n")


@pytest.mark.parametrize("argv", [["--load-s", "0"], ["--load-s", "-1"], ["--load-s", "x"]])
def test_bad_arguments_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        collector.parser().parse_args(argv)
    assert exc.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("node_drift.py: error: argument --load-s")
