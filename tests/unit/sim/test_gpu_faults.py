"""`python -m tools.sim fault NODE --kind gpu-slow|gpu-throttle|gpu-degrade|gpu-wrong|power-limit --gpu N ...`: each
call puts one kind on one GPU in the cluster's state (the burn-in writer reads it), `--kind none` clears them, and
anything it cannot take is refused in one line, exit 1, nothing changed (no cluster: the API faked)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.sim.fault_cli import NODE
from tests.unit.sim.fault_cli import fault as _fault
from tools.sim.logs import burn_in_logs
from tools.sim.logs.burn_in_output import Fault
from tools.sim.state import ClusterState


def test_each_kind_lands_on_its_gpu_the_same_kind_again_replaces_it_and_none_clears(sim: Path) -> None:
    assert _fault("--kind", "gpu-slow", "--gpu", "5", "--factor", "0.9") == 0
    assert _fault("--kind", "gpu-throttle", "--gpu", "2", "--reason", "hw_thermal", "--after-minutes", "4") == 0
    assert _fault("--kind", "gpu-degrade", "--gpu", "3", "--factor", "0.8") == 0
    assert _fault("--kind", "gpu-wrong", "--gpu", "1") == 0
    assert _fault("--kind", "power-limit", "--gpu", "5", "--factor", "0.7") == 0
    assert _fault("--kind", "gpu-slow", "--gpu", "5", "--factor", "0.85") == 0
    saved = json.loads(sim.read_text())
    assert saved["gpu_faults"] == {NODE: {
        "5": {"gpu-slow": {"factor": 0.85}, "power-limit": {"factor": 0.7}},
        "2": {"gpu-throttle": {"reason": "hw_thermal", "after_minutes": 4.0}},
        "3": {"gpu-degrade": {"factor": 0.8}}, "1": {"gpu-wrong": {}}}}
    assert burn_in_logs.gpu_faults(saved, NODE)[5] == [Fault("gpu-slow", 0.85), Fault("power-limit", 0.7)]
    assert burn_in_logs.gpu_faults(saved, NODE)[2] == [Fault("gpu-throttle", reason="hw_thermal", after_minutes=4.0)]
    assert ClusterState.load("c").faults == {} and ClusterState.load("c").dcgm_faults == {}


@pytest.mark.parametrize(("args", "message"), [
    (["--kind", "gpu-slow", "--factor", "0.9"],
     "error: --kind gpu-slow needs --gpu N: the index of the GPU on the node (0 to its GPU count - 1)"),
    (["--kind", "gpu-slow", "--gpu", "5"],
     "error: --kind gpu-slow needs --factor F: the GPU's speed as a fraction of its own, in (0, 1]"),
    (["--kind", "power-limit", "--gpu", "5", "--factor", "1.2"], "error: --factor must be in (0, 1], got 1.2"),
    (["--kind", "gpu-degrade", "--gpu", "8", "--factor", "0.8"],
     "error: --gpu 8 is out of range for node 'gpu-node-001': it has 8 GPUs (0 to 7)"),
    (["--kind", "gpu-throttle", "--gpu", "2"], "error: --kind gpu-throttle needs --reason R: one of hw_slowdown, "
                                               "hw_thermal, hw_power_brake, sw_power_cap\n"),
    (["--kind", "gpu-throttle", "--gpu", "2", "--reason", "hot"], "error: --kind gpu-throttle needs --reason R: "
     "one of hw_slowdown, hw_thermal, hw_power_brake, sw_power_cap, not 'hot'"),
    (["--kind", "gpu-throttle", "--gpu", "2", "--reason", "hw_thermal", "--after-minutes", "-1"],
     "error: --after-minutes must be 0 or more, got -1.0"),
    (["--kind", "gpu-wrong", "--gpu", "1", "--factor", "0.5"],
     "error: --factor is not for --kind gpu-wrong (only gpu-slow, gpu-degrade, power-limit)"),
    (["--kind", "gpu-slow", "--gpu", "1", "--factor", "0.9", "--reason", "hw_thermal"],
     "error: --reason is for --kind gpu-throttle only, not 'gpu-slow'"),
    (["--kind", "slow", "--after-minutes", "3"], "error: --after-minutes is for --kind gpu-throttle only, not 'slow'"),
    (["--kind", "gpu-wrong", "--gpu", "1", "--test", "memory"], "error: --test is for --kind dcgm only, not "
                                                                "'gpu-wrong'"),
])
def test_what_it_cannot_take_is_refused_in_one_line_and_nothing_changes(
        sim: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    assert _fault("--kind", "gpu-wrong", "--gpu", "1") == 0
    before = sim.read_text()
    assert _fault(*args) == 1
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1
    assert sim.read_text() == before
