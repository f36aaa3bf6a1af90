"""`python -m tools.sim fault NODE --kind config --field F [--gpu N]`: each call adds one configuration fault to the
cluster's state (the node-drift writer reads it), several add up, a repeat adds nothing, `--kind none` clears them,
and anything it cannot take is refused in one line, exit 1, nothing changed (no cluster: the API faked)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.sim.fault_cli import NODE, FakeCore
from tests.unit.sim.fault_cli import fault as _fault
from tools.sim import faults
from tools.sim.logs import node_drift_logs
from tools.sim.logs.node_drift_output import Fault
from tools.sim.state import ClusterState


def test_each_field_lands_on_its_gpu_or_the_node_s_nics_and_none_clears(sim: Path) -> None:
    assert _fault("--kind", "config", "--field", "ecc-off", "--gpu", "3") == 0
    assert _fault("--kind", "config", "--field", "pcie-downgraded") == 0
    assert _fault("--kind", "config", "--field", "nic-fw") == 0
    assert _fault("--kind", "config", "--field", "ecc-off", "--gpu", "3") == 0
    saved = json.loads(sim.read_text())
    assert saved["config_faults"] == {NODE: [{"field": "ecc-off", "gpu": 3}, {"field": "pcie-downgraded", "gpu": 0},
                                             {"field": "nic-fw", "gpu": None}]}
    assert node_drift_logs.config_faults(saved, NODE) == [Fault("ecc-off", 3), Fault("pcie-downgraded", 0),
                                                          Fault("nic-fw")]
    st = ClusterState.load("c")
    assert st.faults == {} and st.gpu_faults == {} and st.dcgm_faults == {}


class _Patchable(FakeCore):
    """The faked API taking the node patches `--kind none` makes."""

    def patch_node(self, name: str, body: dict) -> None:
        self.nodes[name]["metadata"]["labels"].update(body["metadata"]["labels"])

    def patch_node_status(self, name: str, body: dict) -> None:
        self.nodes[name].setdefault("status", {})["conditions"] = body["status"]["conditions"]


def test_none_clears_them(sim: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _fault("--kind", "config", "--field", "vbios", "--gpu", "1") == 0
    monkeypatch.setattr(faults.client, "CoreV1Api", _Patchable)
    monkeypatch.setattr(faults, "_apply_fault_stage", lambda apic, kind, nodes: None)   # no kwok Stage to update
    assert _fault("--kind", "none") == 0
    assert ClusterState.load("c").config_faults == {}


@pytest.mark.parametrize(("args", "message"), [
    (["--kind", "config"], "error: --kind config needs --field F: one of ecc-off, ecc-pending, remap-pending, "
                           "persistence-off, nvlink-down, pcie-downgraded, gpu-missing, power-limit, vbios, "
                           "nic-port-down, nic-fw"),
    (["--kind", "config", "--field", "ecc"], "error: unknown --field 'ecc': must be one of ecc-off, ecc-pending, "
                                             "remap-pending, persistence-off"),
    (["--kind", "config", "--field", "ecc-off", "--gpu", "8"],
     "error: --gpu 8 is out of range for node 'gpu-node-001': it has 8 GPUs (0 to 7)"),
    (["--kind", "config", "--field", "vbios", "--gpu", "-1"],
     "error: --gpu -1 is out of range for node 'gpu-node-001': it has 8 GPUs (0 to 7)"),
    (["--kind", "config", "--field", "nic-port-down", "--gpu", "0"],
     "error: --gpu is not for --field nic-port-down: it is the node's NICs, not a GPU"),
    (["--kind", "config", "--field", "ecc-off", "--factor", "0.5"], "error: --factor is not for --kind config"),
    (["--kind", "config", "--field", "ecc-off", "--test", "memory"], "error: --test is for --kind dcgm only, not "
                                                                     "'config'"),
    (["--kind", "config", "--field", "ecc-off", "--reason", "hw_thermal"],
     "error: --reason is for --kind gpu-throttle only, not 'config'"),
    (["--kind", "slow", "--field", "ecc-off"], "error: --field is for --kind config only, not 'slow'"),
    (["--kind", "none", "--field", "ecc-off"], "error: --field is for --kind config only, not 'none'"),
])
def test_what_it_cannot_take_is_refused_in_one_line_and_nothing_changes(
        sim: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    assert _fault("--kind", "config", "--field", "ecc-off", "--gpu", "1") == 0
    before = sim.read_text()
    assert _fault(*args) == 1
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1
    assert sim.read_text() == before


def test_a_nic_field_on_a_node_without_rdma_nics_is_refused(
        sim: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(faults.client, "CoreV1Api", lambda apic: FakeCore(apic, "gcp-h100"))
    before = sim.read_text()
    assert _fault("--kind", "config", "--field", "nic-fw") == 1
    assert capsys.readouterr().err == ("error: node 'gpu-node-001' has no RDMA NIC (its platform's NICs are not "
                                       "RDMA): --field nic-fw needs one\n")
    assert sim.read_text() == before
    assert _fault("--kind", "config", "--field", "ecc-off") == 0   # its GPUs take faults all the same
