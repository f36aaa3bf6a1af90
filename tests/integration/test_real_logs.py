"""Live runs on logs printed as real tools print them (tools/sim log styles, docs/dev/simulator-fidelity.md): an
MPI launcher behind OpenMPI's `--tag-output` printing an older nccl-tests table is measured to the table's own
busbw, and a group whose NCCL fell back to plain TCP on an EFA platform fails with TransportMismatch although its
figure passes the threshold."""
from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import pytest
from kubernetes import client

from tools.sim import cluster, profiles

from .conftest import Sim
from .seed import NVCRE, items
from .test_sim_fidelity import NODES, certify, failed

pytestmark = pytest.mark.clusters(("aws-h100", 16))

_ns = itertools.count()
NOMINAL = f'{profiles.GPUS["h100"].nominal_bus_gbps:.2f}'   # what the simulated table prints at its largest size


@pytest.fixture(scope="module")
def h100(pooled: Callable[..., Sim]) -> Sim:
    return pooled("aws-h100", 16)


@pytest.fixture
def ns(h100: Sim) -> Iterator[str]:
    name = f"real-logs-{next(_ns)}"
    client.CoreV1Api(h100.api).create_namespace({"metadata": {"name": name}})
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
