"""`python -m tools.sim fault NODE --kind dcgm --gpu N --test TEST`: each call adds one GPU fault to the cluster's
state; anything it cannot take is refused in one line, exit 1, nothing changed (no cluster: the API faked)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.unit.sim.fault_cli import NODE, FakeCore
from tests.unit.sim.fault_cli import fault as _fault
from tools.sim import __main__ as cli
from tools.sim import faults
from tools.sim.state import ClusterState


def test_each_call_adds_one_gpu_fault_and_a_repeat_adds_nothing(sim: Path) -> None:
    assert _fault("--kind", "dcgm", "--gpu", "3", "--test", "memory") == 0
    assert _fault("--kind", "dcgm", "--gpu", "3", "--test", "pcie") == 0
    assert _fault("--kind", "dcgm", "--gpu", "7", "--test", "all-skip") == 0
    assert _fault("--kind", "dcgm", "--gpu", "3", "--test", "memory") == 0
    assert json.loads(sim.read_text())["dcgm_faults"] == {NODE: {"3": ["memory", "pcie"], "7": ["all-skip"]}}
    assert ClusterState.load("c").faults == {}   # a node-level fault is another matter


@pytest.mark.parametrize(("args", "message"), [
    (["--kind", "dcgm", "--gpu", "3", "--test", "gpu_burn"],
     "error: unknown DCGM test 'gpu_burn': must be one of software, memory, diagnostic, nvbandwidth, nccl_tests, "
     "memtest, pulse_test, pcie, memory_bandwidth, targeted_stress, targeted_power, all-skip (DCGM's names in its "
     "JSON)"),
    (["--kind", "dcgm", "--gpu", "8", "--test", "memory"],
     "error: --gpu 8 is out of range for node 'gpu-node-001': it has 8 GPUs (0 to 7)"),
    (["--kind", "dcgm", "--gpu", "-1", "--test", "memory"],
     "error: --gpu -1 is out of range for node 'gpu-node-001': it has 8 GPUs (0 to 7)"),
    (["--kind", "workload", "--gpu", "3"],
     "error: --gpu is for --kind dcgm, config and gpu-slow, gpu-throttle, gpu-degrade, gpu-wrong, power-limit only, "
     "not 'workload'"),
    (["--kind", "none", "--test", "memory"], "error: --test is for --kind dcgm only, not 'none'"),
    (["--kind", "dcgm", "--test", "memory"],
     "error: --kind dcgm needs --gpu N: the index of the GPU on the node (0 to its GPU count - 1)"),
    (["--kind", "dcgm", "--gpu", "3"], "error: --kind dcgm needs --test TEST: one of software, memory, "),
])
def test_what_it_cannot_take_is_refused_in_one_line_and_nothing_changes(
        sim: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    assert _fault("--kind", "dcgm", "--gpu", "1", "--test", "memory") == 0
    before = sim.read_text()
    assert _fault(*args) == 1
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1
    assert sim.read_text() == before


def test_a_test_the_cluster_s_dcgm_does_not_have_is_refused(sim: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = ClusterState.load("c")
    state.dcgm_layout = 3
    state.save()
    before = sim.read_text()
    assert _fault("--kind", "dcgm", "--gpu", "0", "--test", "nvbandwidth") == 1
    assert capsys.readouterr().err == (
        "error: DCGM 3.3.9 (cluster 'c', --dcgm-layout 3) has no test 'nvbandwidth': it runs software, memory, "
        "diagnostic, memtest, pulse_test, pcie, memory_bandwidth, targeted_stress, targeted_power\n")
    assert sim.read_text() == before


def test_a_gb200_node_has_four_gpus(sim: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(faults.client, "CoreV1Api", lambda apic: FakeCore(apic, "aws-gb200"))
    assert _fault("--kind", "dcgm", "--gpu", "4", "--test", "memory") == 1
    assert "it has 4 GPUs (0 to 3)" in capsys.readouterr().err


def test_up_refuses_a_layout_dcgm_never_printed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CRE_SIM_HOME", str(tmp_path))
    assert cli.main(["up", "--profile", "aws-h100", "--nodes", "1", "--name", "c", "--dcgm-layout", "2"]) == 1
    assert capsys.readouterr().err == "error: --dcgm-layout must be 3 (DCGM 3.3.9) or 4 (DCGM 4.5.2), got 2\n"
    assert not (tmp_path / "run").exists()


def test_the_layout_is_recorded_in_the_state_and_4_when_unsaid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRE_SIM_HOME", str(tmp_path))
    ClusterState.path("c").parent.mkdir(parents=True)
    saved: dict[str, Any] = {"name": "c", "profile": "aws-h100", "nodes": 1, "kubeconfig": "k"}
    ClusterState.path("c").write_text(json.dumps(saved))   # a state saved before DCGM faults existed
    state = ClusterState.load("c")
    assert (state.dcgm_layout, state.dcgm_faults) == (4, {})
