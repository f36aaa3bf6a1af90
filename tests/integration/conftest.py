"""A real local cluster for the tests that need one: started once per test session, always torn down."""
from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from kubernetes import client

from tools.sim import cluster

NODES = 16


@dataclass
class Sim:
    name: str
    kubeconfig: Path
    api: client.ApiClient


def _name(kind: str) -> str:
    # Unique per xdist worker and run, so parallel sessions never share a cluster.
    return f"t{os.getpid()}-{kind}"


@pytest.fixture(scope="session")
def sim() -> Iterator[Sim]:
    """A 16-node aws-gb200 cluster with Trainer and JobSet."""
    name = _name("gb200")
    kubeconfig = cluster.up("aws-gb200", NODES, name)
    try:
        yield Sim(name, kubeconfig, cluster.api(kubeconfig))
    finally:
        cluster.down(name, missing_ok=True)


@pytest.fixture(scope="session")
def kube(sim: Sim) -> client.ApiClient:
    """An ApiClient for the session cluster."""
    return sim.api


@pytest.fixture
def namespace(kube: client.ApiClient, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace per test, deleted afterwards."""
    base = re.sub(r"[^a-z0-9-]+", "-", request.node.name.lower())[:50].strip("-")
    name = f"{base}-{os.getpid() % 10000}"
    core = client.CoreV1Api(kube)
    core.create_namespace({"metadata": {"name": name}})
    yield name
    core.delete_namespace(name)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """With `-n 2 --dist loadgroup`, every cluster test runs on one worker: one cluster per run, not per worker."""
    for item in items:
        if "tests/integration/" in str(item.fspath):
            item.add_marker(pytest.mark.xdist_group("cluster"))
