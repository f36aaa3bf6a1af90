"""The simulator's unit tests: `sim`, a cluster `c` of 2 H100 nodes as `up` leaves its state file, its API faked
(the fault CLI's tests: tests/unit/sim/fault_cli.py drives the CLI against it)."""
from __future__ import annotations

from pathlib import Path

import pytest
from kubernetes import client

from tests.unit.sim.fault_cli import FakeCore
from tools.sim import faults
from tools.sim.state import ClusterState


@pytest.fixture
def sim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cluster `c` of 2 H100 nodes as `up` leaves its state file, its API faked; returns that file."""
    monkeypatch.setenv("CRE_SIM_HOME", str(tmp_path))
    ClusterState.path("c").parent.mkdir(parents=True)
    ClusterState(name="c", profile="aws-h100", nodes=2, kubeconfig=str(tmp_path / "kubeconfig.yaml")).save()
    monkeypatch.setattr(faults, "api", lambda kubeconfig: client.ApiClient())
    monkeypatch.setattr(faults.client, "CoreV1Api", FakeCore)
    return ClusterState.path("c")
