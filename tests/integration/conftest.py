"""A real local cluster for the tests that need one: started once per test session, always torn down."""
from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from kubernetes import client

from tools.sim import cluster

NODES = 16
ROOT = Path(__file__).resolve().parents[2]


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


def install_crds(kube: client.ApiClient) -> client.CustomObjectsApi:
    """The NVCRE CRDs (crds/*.yaml), installed with server-side apply and Established."""
    api = client.CustomObjectsApi(kube)
    ext = client.ApiextensionsV1Api(kube)
    names = []
    for path in sorted((ROOT / "crds").glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        api.patch_cluster_custom_object("apiextensions.k8s.io", "v1", "customresourcedefinitions",
                                        crd["metadata"]["name"], crd, field_manager="cre-certification-tests",
                                        force=True, _content_type="application/apply-patch+yaml")
        names.append(crd["metadata"]["name"])
    deadline = time.monotonic() + 60
    for name in names:
        while not any(c.type == "Established" and c.status == "True"
                      for c in ext.read_custom_resource_definition(name).status.conditions or []):
            assert time.monotonic() < deadline, f"CRD {name} not Established"
            time.sleep(0.2)
    time.sleep(1)  # discovery of the new kinds
    for path in sorted((ROOT / "logprofiles").glob("*.yaml")):  # the built-in LogProfiles, as roles/crds applies them
        profile = yaml.safe_load(path.read_text())
        api.patch_cluster_custom_object("nvcre.nvidia.com", "v1alpha1", "logprofiles", profile["metadata"]["name"],
                                        profile, field_manager="cre-certification-tests", force=True,
                                        _content_type="application/apply-patch+yaml")
    return api


@pytest.fixture(scope="session")
def crds(kube: client.ApiClient) -> client.CustomObjectsApi:
    return install_crds(kube)


@contextmanager
def own_sim(kind: str, profile: str, nodes: int, pod_ms: int = cluster.stages.DEFAULT_POD_MILLISECONDS) -> Iterator[Sim]:
    """A cluster with the NVCRE CRDs for one module's tests, torn down when they end (so a session never holds
    every module's cluster at once)."""
    name = _name(kind)
    kubeconfig = cluster.up(profile, nodes, name, pod_ms)
    try:
        api = cluster.api(kubeconfig)
        install_crds(api)
        yield Sim(name, kubeconfig, api)
    finally:
        cluster.down(name, missing_ok=True)


@pytest.fixture(scope="module")
def make_sim() -> Iterator[Callable[..., Sim]]:
    """Start more clusters (`kind`, profile, nodes[, pod_ms]) with the NVCRE CRDs installed; torn down when the
    module's tests end, so a session never holds every module's clusters at once (the machine has two cores)."""
    made: list[str] = []

    def make(kind: str, profile: str, nodes: int, pod_ms: int = cluster.stages.DEFAULT_POD_MILLISECONDS) -> Sim:
        name = _name(kind)
        made.append(name)
        kubeconfig = cluster.up(profile, nodes, name, pod_ms)
        api = cluster.api(kubeconfig)
        install_crds(api)
        return Sim(name, kubeconfig, api)

    yield make
    for name in made:
        cluster.down(name, missing_ok=True)


@pytest.fixture(scope="module")
def e2e(make_sim: Callable[[str, str, int], Sim]) -> Sim:
    """A second 16-node aws-gb200 cluster, with the NVCRE CRDs, for a module's end-to-end runs."""
    return make_sim("e2e", "aws-gb200", 16)


@pytest.fixture
def namespace(kube: client.ApiClient, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace per test, deleted afterwards."""
    base = re.sub(r"[^a-z0-9-]+", "-", request.node.name.lower())[:50].strip("-")
    name = f"{base}-{os.getpid() % 10000}"
    core = client.CoreV1Api(kube)
    core.create_namespace({"metadata": {"name": name}})
    yield name
    core.delete_namespace(name)
