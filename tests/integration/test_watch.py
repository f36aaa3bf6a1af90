"""The driver's watch caches against a real apiserver: a watch broken by an apiserver restart, a 410 Gone that
forces a re-list, and a change made while the watch was down that is still seen.

One 2-node cluster for the module; the informer talks to it through a TCP forwarder that can cut the network.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from ansible_collections.cre.certification.plugins.module_utils.kube.rest import Kube
from ansible_collections.cre.certification.plugins.module_utils.kube.watch import Informer
from tools.sim import cluster

from .conftest import Sim, _name
from .partition import Partition

LABEL = "cre-test/watch"


@pytest.fixture(scope="module")
def small() -> Iterator[Sim]:
    name = _name("watch")
    kubeconfig = cluster.up("aws-gb200", 2, name)
    try:
        yield Sim(name, kubeconfig, cluster.api(kubeconfig))
    finally:
        cluster.down(name, missing_ok=True)


@pytest.fixture
def partition(small: Sim) -> Iterator[Partition]:
    proxy = Partition(small.kubeconfig)
    try:
        yield proxy
    finally:
        proxy.close()


@pytest.fixture
def ns(small: Sim, request: pytest.FixtureRequest) -> Iterator[str]:
    name = f"watch-{request.node.name.split('_')[1]}-{int(time.time() * 1000) % 100000}"
    core = client.CoreV1Api(small.api)
    core.create_namespace({"metadata": {"name": name}})
    yield name
    core.delete_namespace(name)


def configmap(core: client.CoreV1Api, ns: str, name: str, value: str) -> None:
    core.create_namespaced_config_map(ns, {"metadata": {"name": name, "labels": {LABEL: "yes"}},
                                           "data": {"value": value}})


def informer(kubeconfig: Path, ns: str, seen: list[str]) -> Informer:
    kube = Kube(cluster.api(kubeconfig))
    return Informer(kube, "v1", "ConfigMap", ns, labels=LABEL, changed=lambda kind, what, names: seen.append(what))


def eventually(check: Callable[[], Any], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "the cache never caught up"
        time.sleep(0.1)


def values(inf: Informer) -> dict[str, str]:
    return {name: obj["data"]["value"] for name, obj in inf.items().items()}


def test_a_change_made_while_the_watch_was_down_is_still_seen(
        small: Sim, partition: Partition, ns: str, tmp_path: Path) -> None:
    core = client.CoreV1Api(small.api)
    configmap(core, ns, "a", "1")
    seen: list[str] = []
    inf = informer(partition.kubeconfig(tmp_path / "kubeconfig"), ns, seen).start()
    try:
        assert values(inf) == {"a": "1"}  # the initial list
        configmap(core, ns, "b", "1")
        eventually(lambda: values(inf) == {"a": "1", "b": "1"})
        partition.cut()
        core.patch_namespaced_config_map("a", ns, {"data": {"value": "2"}})
        core.delete_namespaced_config_map("b", ns)
        configmap(core, ns, "c", "1")
        # A fixed wait, only to prove what must NOT happen: a change reaching the cut-off informer.
        time.sleep(2)
        assert values(inf) == {"a": "1", "b": "1"}
        partition.heal()
        eventually(lambda: values(inf) == {"a": "2", "c": "1"})
        assert inf.relists == 0 and seen.count("relist") == 0  # resumed from its resourceVersion: events only
        assert inf.error is None
    finally:
        inf.stop()


def test_a_410_gone_forces_a_relist_that_finds_every_change(
        small: Sim, partition: Partition, ns: str, tmp_path: Path) -> None:
    """Cut off, the apiserver restarts: its watch cache begins after the informer's resourceVersion, so the
    resumed watch is answered 410 Gone and the informer lists again; a delete it never had an event for is
    found by comparing the fresh list with the cache."""
    core = client.CoreV1Api(small.api)
    configmap(core, ns, "a", "1")
    configmap(core, ns, "b", "1")
    seen: list[str] = []
    inf = informer(partition.kubeconfig(tmp_path / "kubeconfig"), ns, seen).start()
    try:
        assert values(inf) == {"a": "1", "b": "1"}
        partition.cut()
        cluster.restart(small.name, "apiserver", down_seconds=5)
        core = client.CoreV1Api(cluster.api(small.kubeconfig))
        core.delete_namespaced_config_map("b", ns)
        core.patch_namespaced_config_map("a", ns, {"data": {"value": "3"}})
        partition.heal()
        eventually(lambda: values(inf) == {"a": "3"})
        assert inf.relists >= 1 and "relist" in seen
        assert inf.error is None
    finally:
        inf.stop()


def test_a_watch_broken_by_an_apiserver_restart_resumes(small: Sim, ns: str) -> None:
    core = client.CoreV1Api(small.api)
    seen: list[str] = []
    inf = informer(small.kubeconfig, ns, seen).start()
    try:
        configmap(core, ns, "a", "1")
        eventually(lambda: values(inf) == {"a": "1"})
        cluster.restart(small.name, "apiserver", down_seconds=5)
        core = client.CoreV1Api(cluster.api(small.kubeconfig))
        configmap(core, ns, "b", "1")
        core.patch_namespaced_config_map("a", ns, {"data": {"value": "2"}})
        eventually(lambda: values(inf) == {"a": "2", "b": "1"})
        assert inf.error is None
    finally:
        inf.stop()


def test_stopping_an_informer_whose_watch_has_ended_is_quiet(
        small: Sim, partition: Partition, ns: str, tmp_path: Path) -> None:
    """A run ends by stopping its informers; one whose stream had just ended (its connection back in the pool, the
    next watch not yet open) used to raise urllib3's "Cannot shutdown as connection has already been released to
    the pool", a traceback at the end of a 10,000-node run."""
    inf = informer(partition.kubeconfig(tmp_path / "kubeconfig"), ns, []).start()
    configmap(client.CoreV1Api(small.api), ns, "a", "1")
    eventually(lambda: values(inf) == {"a": "1"})  # an event arrived: the watch is open
    partition.cut()  # the stream breaks; the next watches are refused while the thread backs off
    eventually(lambda: inf.kube.requests["WATCH"] >= 2)  # the broken stream was released before the next began
    inf.stop()
    assert inf.error is None
