"""A real local cluster for the tests that need one: started once per test session, always torn down."""
from __future__ import annotations

import functools
import importlib
import json
import os
import re
import socket
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client
from xdist.scheduler import LoadScopeScheduling

from ansible_collections.cre.certification.plugins.module_utils.driver.preflight import missing_kinds
from ansible_collections.cre.certification.plugins.module_utils.kube.rest import Kube
from tools.sim import cluster, reset
from tools.sim.state import ClusterState

from .families import Key, cluster_key, declared, families

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


# The kubelet's 10 s restart back-off, compressed 100 times: a crash-looping pod spends its Job's backoffLimit (6)
# in 3 s instead of 5 minutes. The back-off's own steps are tested at this scale (test_sim_fidelity).
BACKOFF_MS = 100
SIM = ("aws-gb200", NODES)  # the `sim` fixture's cluster, for pytest.mark.clusters


class Pool:
    """The clusters this worker's tests share, one per (profile, nodes, instance), started on first use; each module
    gets its cluster reset (`tools.sim.reset`: no fault, cordon, pod duration or namespace of an earlier module).

    A module declares the clusters it takes (`pytestmark = pytest.mark.clusters(...)`); modules that share one form
    a family, run on one worker one after another (`FamilyScheduling`), and when the worker moves on to another family
    the clusters of the last one are stopped: no cluster idles on the machine once its family is done, and none is
    started twice. Within a family at most LIMIT are alive at once (more only while one user holds them): the least
    recently used one goes first."""

    LIMIT = 3

    def __init__(self) -> None:
        self._sims: OrderedDict[Key, Sim] = OrderedDict()
        self._user: dict[Key, str] = {}

    def enter(self, family: frozenset[Key]) -> None:
        """A module of `family` (its clusters' keys) starts: stop the clusters no module of it takes."""
        for key in [k for k in self._sims if k not in family]:
            cluster.down(self._sims.pop(key).name, missing_ok=True)
            del self._user[key]

    def get(self, user: str, module: str, profile: str, nodes: int, instance: int = 0,
            pod_ms: dict[str, int] | None = None) -> Sim:
        """The shared cluster for `user` (a module or a test of `module`), its namespaces' pod durations set
        (`pod_ms`: namespace -> ms)."""
        key = cluster_key(profile, nodes, instance)
        if key not in family_keys(module):
            pytest.fail(f"{module} takes the pooled cluster {key} without declaring it: add it to the module's "
                        "pytestmark = pytest.mark.clusters(...)", pytrace=False)
        if key in self._sims and self._user[key] != user and not cluster.running(
                self._sims[key].name, ClusterState.load(self._sims[key].name)):
            # A test whose cluster broke (a component it stopped never came back) fails alone: the next user of the
            # cluster gets a new one instead of its corpse.
            cluster.down(self._sims.pop(key).name, missing_ok=True)
            del self._user[key]
        if key in self._sims:
            self._sims.move_to_end(key)
            if self._user[key] != user:
                reset.reset(self._sims[key].name)
        else:
            idle = [k for k in self._sims if self._user[k] != user]  # least recently used first
            for old in idle[:max(0, len(self._sims) - self.LIMIT + 1)]:
                cluster.down(self._sims.pop(old).name, missing_ok=True)
                del self._user[old]
            name = _name(f"{profile}-{nodes}" + (f"-{instance}" if instance else ""))
            kubeconfig = cluster.up(profile, nodes, name, backoff_ms=BACKOFF_MS)
            api = cluster.api(kubeconfig)
            install_crds(api)
            self._sims[key] = Sim(name, kubeconfig, api)
        self._user[key] = user
        for namespace, ms in (pod_ms or {}).items():
            cluster.pod_duration(self._sims[key].name, namespace, ms)
        return self._sims[key]

    def close(self) -> None:
        for sim in self._sims.values():
            cluster.down(sim.name, missing_ok=True)


@pytest.fixture(scope="session")
def pool() -> Iterator[Pool]:
    shared = Pool()
    try:
        yield shared
    finally:
        shared.close()


@pytest.fixture(scope="module", autouse=True)
def _family(pool: Pool, request: pytest.FixtureRequest) -> None:
    """Stops the pooled clusters of the family this worker ran before (a breaker's module stops them all)."""
    pool.enter(family_keys(request.module.__name__))


@pytest.fixture(scope="module")
def pooled(pool: Pool, request: pytest.FixtureRequest) -> Callable[..., Sim]:
    """`pooled(profile, nodes[, instance][, pod_ms={namespace: ms}])`: a shared cluster, reset for this module."""
    return functools.partial(pool.get, request.module.__name__, request.module.__name__)


@pytest.fixture
def shared(pool: Pool, request: pytest.FixtureRequest) -> Callable[..., Sim]:
    """Like `pooled`, for one test: `shared(profile, nodes[, instance][, pod_ms=...])`, reset for this test."""
    return functools.partial(pool.get, request.node.nodeid, request.module.__name__)


@pytest.fixture(scope="module")
def sim(pooled: Callable[..., Sim]) -> Sim:
    """The shared 16-node aws-gb200 cluster (Trainer, JobSet, the NVCRE CRDs), reset for this module."""
    return pooled("aws-gb200", NODES)


@pytest.fixture(scope="module")
def kube(sim: Sim) -> client.ApiClient:
    """An ApiClient for the module's cluster."""
    return sim.api


_HELD: list[socket.socket] = []


def closed_port() -> int:
    """A local port that refuses connections (a cluster that does not answer): bound but never listening, and held
    for the session, so that no cluster started meanwhile by another worker takes it."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    _HELD.append(sock)
    return int(sock.getsockname()[1])


def install_crds(kube: client.ApiClient) -> client.CustomObjectsApi:
    """The NVCRE CRDs (crds/*.yaml), installed with server-side apply and Established."""
    api = client.CustomObjectsApi(kube)
    ext = client.ApiextensionsV1Api(kube)
    names, kinds, served = [], [], []
    for path in sorted((ROOT / "crds").glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        group, version = crd["spec"]["group"], next(v["name"] for v in crd["spec"]["versions"] if v.get("storage"))
        kinds.append((group, version, crd["spec"]["names"]["plural"]))
        served.append((f"{group}/{version}", crd["spec"]["names"]["kind"]))
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
    wait_discovery(kube, served, True)
    for path in sorted((ROOT / "logprofiles").glob("*.yaml")):  # the built-in LogProfiles, as roles/crds applies them
        profile = yaml.safe_load(path.read_text())
        api.patch_cluster_custom_object("nvcre.nvidia.com", "v1alpha1", "logprofiles", profile["metadata"]["name"],
                                        profile, field_manager="cre-certification-tests", force=True,
                                        _content_type="application/apply-patch+yaml")
    # The first list of a kind the apiserver has just begun to serve waits about a second for its watch cache;
    # later lists, of any namespace or selector, do not. A cluster where NVCRE has been installed for a while has
    # served them long ago: so has this one before a test (or a benchmark's clock) starts.
    with ThreadPoolExecutor(len(kinds)) as pool:
        list(pool.map(lambda kind: api.list_cluster_custom_object(*kind), kinds))
    return api


def wait_discovery(kube: client.ApiClient, kinds: list[tuple[str, str]], served: bool) -> None:
    """Until the API server's discovery serves every (api_version, kind) of `kinds` (`served`) or none of them: it
    follows CRDs a moment after they are Established or gone, and a run's preflight reads it."""
    deadline = time.monotonic() + 60
    while True:
        missing = missing_kinds(Kube(kube), tuple(kinds))
        if len(missing) == (0 if served else len(kinds)):
            return
        assert time.monotonic() < deadline, f"discovery {'lacks' if served else 'still serves'} some of {kinds}"
        time.sleep(0.2)


@pytest.fixture(scope="module")
def crds(kube: client.ApiClient) -> client.CustomObjectsApi:
    return install_crds(kube)


@contextmanager
def own_sim(kind: str, profile: str, nodes: int, pod_ms: int = cluster.stages.DEFAULT_POD_MILLISECONDS) -> Iterator[Sim]:
    """A cluster with the NVCRE CRDs for one module's tests, torn down when they end (so a session never holds
    every module's cluster at once)."""
    name = _name(kind)
    kubeconfig = cluster.up(profile, nodes, name, pod_ms, BACKOFF_MS)
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
        kubeconfig = cluster.up(profile, nodes, name, pod_ms, BACKOFF_MS)
        api = cluster.api(kubeconfig)
        install_crds(api)
        return Sim(name, kubeconfig, api)

    yield make
    for name in made:
        cluster.down(name, missing_ok=True)


@pytest.fixture(scope="module")
def e2e(sim: Sim) -> Sim:
    """The cluster of a module's end-to-end runs: the shared 16-node aws-gb200 one."""
    return sim


@pytest.fixture
def namespace(sim: Sim, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace per test on the module's cluster, deleted afterwards."""
    base = re.sub(r"[^a-z0-9-]+", "-", request.node.name.lower())[:50].strip("-")
    name = f"{base}-{os.getpid() % 10000}"
    core = client.CoreV1Api(sim.api)
    core.create_namespace({"metadata": {"name": name}})
    yield name
    core.delete_namespace(name)


# Each module's seconds in the last green run of tests/suite.py here, else as measured when this file was committed.
SECONDS_FILES = (ROOT / "tests" / "output" / "module_seconds.json", Path(__file__).parent / "module_seconds.json")
# module name -> (the keys of the clusters its family takes, the family's name), set at collection.
FAMILIES: dict[str, tuple[frozenset[Key], str]] = {}


class FamilyScheduling(LoadScopeScheduling):
    """xdist's scheduling by scope, a scope being a family of modules (a module with no pooled cluster is one of
    its own). Scopes go to workers in the collection's order (longest family first)."""

    def __init__(self, config: pytest.Config, log: Any, scopes: dict[str, str]) -> None:
        super().__init__(config, log)
        self.scopes = scopes  # test file (as in node ids) -> family

    def _split_scope(self, nodeid: str) -> str:
        path = nodeid.split("::", 1)[0]
        return self.scopes.get(path, path)


def module_families() -> dict[str, tuple[frozenset[Key], str]]:
    """Every test module here (by module name) -> its family, from the modules' own declarations: the same in the
    xdist controller (which collects nothing) and in every worker, whatever subset of tests it runs."""
    names = [f"{__package__}.{path.stem}" for path in sorted(Path(__file__).parent.glob("test_*.py"))]
    return families({name: declared(importlib.import_module(name)) for name in names})


def family_keys(module: str) -> frozenset[Key]:
    return FAMILIES.get(module, (frozenset(), ""))[0]


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> FamilyScheduling:
    config.option.loadscopereorder = False  # xdist would sort the scopes by their number of tests
    here = Path(__file__).parent.relative_to(config.rootpath)
    return FamilyScheduling(config, log, {f"{here / name.rsplit('.', 1)[1]}.py": family
                                          for name, (_keys, family) in module_families().items()})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The families (see Pool), the longest first, and in each family the longest module first: parallel workers
    take families in this order, so none is left running a long one alone at the end."""
    seconds = next((json.loads(f.read_text()) for f in SECONDS_FILES if f.exists()), {})
    FAMILIES.clear()
    FAMILIES.update(module_families())
    family_seconds: dict[str, float] = {}
    for module, (_keys, family) in FAMILIES.items():
        family_seconds[family] = family_seconds.get(family, 0) + seconds.get(module.rsplit(".", 1)[1], 0)

    def weight(item: pytest.Item) -> tuple[float, str, float, str]:
        module = getattr(getattr(item, "module", None), "__name__", "")
        if module not in FAMILIES:
            return (0, "", 0, "")
        family = FAMILIES[module][1]
        return (-family_seconds[family], family, -seconds.get(module.rsplit(".", 1)[1], 0), module)

    items.sort(key=weight)
