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
    assert (network.mismatch(family, {"transport": transports}) is not None) == fails


def test_the_mismatch_names_both_networks_and_the_way_out():
    assert network.mismatch("efa", {"transport": ["Socket"]}) == (
        "NCCL ran over Socket where EFA (AWS Libfabric) was expected; check that the pods get the network devices "
        "and NCCL's net plugin, or set the category option checkTransport: false")


@pytest.mark.parametrize(("nodes", "annotated"), [(["gpu-node-000", "gpu-node-001"], True), (["gpu-node-000"], False)])
def test_only_a_multi_node_job_carries_the_expected_network(nodes, annotated):
    workflow = {"metadata": {"name": "wf", "namespace": "ns", "annotations": {
        "cre.certification/expected-network": "efa"}}, "spec": {}}
    job = jobs.job_manifest(workflow, {}, {"name": "g0", "nodes": nodes}, "wf-g0", [])
    assert ("cre.certification/expected-network" in job["metadata"]["annotations"]) == annotated


@pytest.mark.parametrize(("arch", "platform", "key", "families"), [
    ("gb200", "aws", "nvidia.com/gpu.clique", ["efa", "mnnvl"]),
    ("gb300", "onprem", "nvidia.com/gpu.clique", ["mnnvl"]),
    ("gb200", "aws", "", ["efa"]),                       # groups not made by clique: some span two
    ("gb200", "oci", "topology.kubernetes.io/zone", ["ib"]),
    ("h100", "aws", "nvidia.com/gpu.clique", ["efa"]),   # no multi-node NVLink
])
def test_a_gb200_workflow_grouped_by_clique_expects_mnnvl(arch, platform, key, families):
    assert network.families(platform, arch, {}, key) == families


@pytest.mark.parametrize(("nodes", "domains", "off", "kept"), [
    (2, 1, False, ["efa", "mnnvl"]),
    (2, 2, False, ["efa"]),            # across two cliques: the network carries it
    (2, 1, True, ["efa"]),             # diagnose's no-NVL re-test (NCCL_MNNVL_ENABLE=0)
    (1, 1, False, []),
])
def test_a_group_keeps_mnnvl_only_inside_one_clique_with_mnnvl_on(nodes, domains, off, kept):
    assert network.for_group(["efa", "mnnvl"], nodes, domains, off) == kept


@pytest.mark.parametrize(("status", "fails"), [
    ({"transport": ["IB"], "mnnvl": True}, False),
    ({"transport": ["IB"]}, False),                   # no communicator line: the log does not say
    ({"transport": ["IB"], "mnnvl": False}, True),
])
def test_mnnvl_mismatch(status, fails):
    assert (network.mismatch("mnnvl", status) is not None) == fails


def test_the_mnnvl_mismatch_names_the_hosts_whose_fabric_was_not_ready():
    status = {"transport": ["IB"], "mnnvl": False, "fabricNotReady": ["w-1 (fabric state 1: not started)"]}
    assert network.mismatch("mnnvl", status) == (
        "NCCL ran over IB with MNNVL 0 where NVLink across the clique (MNNVL) was expected; GPU fabric not ready on "
        "w-1 (fabric state 1: not started); check each node's GPU fabric (nvidia-smi -q, Fabric State) and the "
        "group's ComputeDomain, or set the category option checkTransport: false")


@pytest.mark.parametrize(("env", "domains", "annotation"), [
    ([], ["clique-a"], "ib,mnnvl"),
    ([{"name": "NCCL_MNNVL_ENABLE", "value": "0"}], ["clique-a"], "ib"),
    ([{"name": "NCCL_MNNVL_ENABLE", "value": "1"}], ["clique-a", "clique-b"], "ib"),
])
def test_a_gb200_job_carries_mnnvl_only_inside_one_clique_with_mnnvl_on(env, domains, annotation):
    workflow = {"metadata": {"name": "wf", "namespace": "ns", "annotations": {
        "cre.certification/expected-network": "ib,mnnvl"}}, "spec": {}}
    spec = {"workload": {"trainJob": {"trainer": {"env": env}}}}
    job = jobs.job_manifest(workflow, spec, {"name": "g0", "nodes": ["n0", "n1"], "domains": domains}, "wf-g0", [])
    assert job["metadata"]["annotations"]["cre.certification/expected-network"] == annotation
