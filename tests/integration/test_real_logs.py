"""Live runs on logs printed as real tools print them (tools/sim log styles, docs/dev/simulator-fidelity.md): an
MPI launcher behind OpenMPI's `--tag-output` printing an older nccl-tests table is measured to the table's own
busbw, a group whose NCCL fell back to plain TCP on an EFA platform fails with TransportMismatch although its
figure passes the threshold, and so does a GB200 group whose NCCL turned MNNVL off because one node's GPU fabric
was not ready."""
from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator

import pytest
from kubernetes import client

from ansible_collections.cre.certification.plugins.module_utils.engine.api.vocabulary import ANNOTATION_GROUP_NODES
from tools.sim import cluster, faults, profiles

from .conftest import Sim
from .one_category import NODES, certify, failed
from .seed import NVCRE, items

pytestmark = pytest.mark.clusters(("aws-h100", 16), ("aws-gb200", 16))

_ns = itertools.count()
NOMINAL = f'{profiles.GPUS["h100"].nominal_bus_gbps:.2f}'   # what the simulated table prints at its largest size


@pytest.fixture(scope="module")
def h100(pooled: Callable[..., Sim]) -> Sim:
    return pooled("aws-h100", 16)


@pytest.fixture(scope="module")
def gb200(pooled: Callable[..., Sim]) -> Sim:
    return pooled("aws-gb200", 16)


def namespace(sim: Sim) -> str:
    name = f"real-logs-{next(_ns)}"
    client.CoreV1Api(sim.api).create_namespace({"metadata": {"name": name}})
    return name


@pytest.fixture
def ns(h100: Sim) -> Iterator[str]:
    name = namespace(h100)
    yield name
    cluster.log_style(h100.name, name)


def test_tag_output_and_an_older_table_measure_the_tables_busbw(h100: Sim, ns: str) -> None:
    cluster.log_style(h100.name, ns, nccl_prefix="tag-output", nccl_table="no-root")
    category = certify(h100, ns, "nccl-all-reduce", testScale="full-scale", nodesPerJob=4,
                       thresholds={"busBandwidthGBps": "value >= 300.0"})
    assert category["status"] == "Succeeded" and category["succeeded_nodes"] == NODES, category
    measurements = items(h100, ns, NVCRE, "bandwidthmeasurements")
    assert len(measurements) == 4
    for m in measurements:
        status = m["status"]
        assert max(status["results"], key=lambda r: float(r["busBW"]))["busBW"] == NOMINAL, status
        assert "refusedRows" not in status and status["transport"] == ["AWS Libfabric"]


def test_a_group_that_fell_back_to_tcp_fails_with_the_transport_named(h100: Sim, ns: str) -> None:
    cluster.log_style(h100.name, ns, transport="socket")
    category = certify(h100, ns, "nccl-all-reduce", testScale="full-scale", nodesPerJob=8,
                       thresholds={"busBandwidthGBps": "value >= 1.0"})   # the TCP figure passes this
    assert failed(category) == dict.fromkeys(NODES, "TransportMismatch"), category
    message = ("NCCL ran over Socket where EFA (AWS Libfabric) was expected; check that the pods get the network "
               "devices and NCCL's net plugin, or set the category option checkTransport: false")
    assert {f["message"] for f in category["failed_nodes"]} == {message}
    jobs = items(h100, ns, NVCRE, "jobs")
    assert {c["reason"] for j in jobs for c in j["status"]["conditions"]
            if c["type"] == "ValidationFailed" and c["status"] == "True"} == {"TransportMismatch"}


def test_a_gb200_group_without_mnnvl_fails_naming_the_host_whose_fabric_was_not_ready(gb200: Sim) -> None:
    node, ns = "gpu-node-005", namespace(gb200)
    faults.fault(gb200.name, node, "fabric")
    try:
        category = certify(gb200, ns, "nccl-all-reduce", testScale="intra-rack", nodesPerJob=4,
                           thresholds={"busBandwidthGBps": "value >= 300.0"})   # the network figure passes this
    finally:
        faults.fault(gb200.name, node, "none")
    jobs = items(gb200, ns, NVCRE, "jobs")
    (group,) = [j["metadata"]["annotations"][ANNOTATION_GROUP_NODES].split(",") for j in jobs
                if node in j["metadata"]["annotations"][ANNOTATION_GROUP_NODES]]
    assert failed(category) == dict.fromkeys(group, "TransportMismatch"), category
    assert sorted(category["succeeded_nodes"]) == sorted(set(NODES) - set(group))
    (message,) = {f["message"] for f in category["failed_nodes"]}
    assert re.fullmatch(r"NCCL ran over AWS Libfabric with MNNVL 0 where NVLink across the clique \(MNNVL\) was "
                        r"expected; GPU fabric not ready on \S+ \(fabric state 1: not started\); check each node's "
                        r"GPU fabric \(nvidia-smi -q, Fabric State\) and the group's ComputeDomain, or set the "
                        r"category option checkTransport: false", message), message
    statuses = [m["status"] for m in items(gb200, ns, NVCRE, "bandwidthmeasurements")]
    assert [(s["mnnvl"], len(s["fabricNotReady"])) for s in statuses if not s.get("mnnvl", True)] == [(False, 1)]
