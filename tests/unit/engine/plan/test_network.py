"""The network a multi-node NCCL group must use (plan/network.py) and the Job annotation that carries it."""
from __future__ import annotations

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.plan import jobs, network


@pytest.mark.parametrize(("platform", "arch", "detected", "family"), [
    ("aws", "h100", {}, "efa"),
    ("aws", "gb200", {}, "efa"),
    ("gcp", "h100", {"gkeTcpxoNetworks": ["gpu-nic0"]}, "tcpxo"),
    ("gcp", "h100", {}, None),            # no TCPXO networks detected: GCP's plain NICs
    ("gcp", "b200", {}, None),
    ("azure", "h100", {}, "ib"),
    ("oci", "h100", {}, "ib"),
    ("onprem", "h100", {"nicResourceName": "rdma/ib"}, "ib"),
    ("onprem", "h100", {}, None),         # no RDMA NIC detected: nothing to hold the run to
])
def test_expected(platform, arch, detected, family):
    assert network.expected(platform, arch, detected) == family


@pytest.mark.parametrize(("family", "transports", "fails"), [
    ("efa", ["AWS Libfabric"], False),
    ("efa", ["Libfabric"], False),
    ("efa", ["Socket"], True),
    ("efa", ["IB"], True),
    ("ib", ["IB"], False),
    ("ib", ["IBext_v8"], False),
    ("ib", ["IBext_v8", "Socket"], False),   # one rank fell back is not told by this line alone
    ("ib", ["Socket"], True),
    ("tcpxo", ["FasTrak"], False),
    ("tcpxo", ["GPUDirectTCPX"], False),
    ("tcpxo", ["Socket"], True),
    ("efa", [], False),                      # NCCL_DEBUG unset: the log says nothing either way
])
def test_mismatch(family, transports, fails):
    assert (network.mismatch(family, transports) is not None) == fails


def test_the_mismatch_names_both_networks_and_the_way_out():
    assert network.mismatch("efa", ["Socket"]) == (
        "NCCL ran over Socket where EFA (AWS Libfabric) was expected; check that the pods get the network devices "
        "and NCCL's net plugin, or set the category option checkTransport: false")


@pytest.mark.parametrize(("nodes", "annotated"), [(["gpu-node-000", "gpu-node-001"], True), (["gpu-node-000"], False)])
def test_only_a_multi_node_job_carries_the_expected_network(nodes, annotated):
    workflow = {"metadata": {"name": "wf", "namespace": "ns", "annotations": {
        "cre.certification/expected-network": "efa"}}, "spec": {}}
    job = jobs.job_manifest(workflow, {}, {"name": "g0", "nodes": nodes}, "wf-g0", [])
    assert ("cre.certification/expected-network" in job["metadata"]["annotations"]) == annotated
