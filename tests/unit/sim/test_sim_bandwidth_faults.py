"""The simulated nccl-tests figures under the faults only diagnose can localise: a link fault between two
topology domains, and an NVLink fault that shows only over MNNVL (no cluster: pods and nodes as the API
serves them)."""
from __future__ import annotations

import json

import pytest

from tests.unit.sim.nccl_groups import NOW, group, nodes, peak
from tools.sim import faults, profiles
from tools.sim.logs import workload_logs

CLIQUE0, CLIQUE1 = "a1b2c3d4-0000-4000-8000-00000000aws0.0", "a1b2c3d4-0000-4000-8000-00000000aws0.1"
RACK0, RACK1, RACK2 = "nn-3c000000", "nn-3c000001", "nn-3c000002"
LINK = [["topology.k8s.aws/network-node-layer-3", RACK0, RACK1, 0.5]]


@pytest.mark.parametrize(("workers", "expected"), [
    (["gpu-node-000", "gpu-node-007"], 360.0),                  # inside one domain
    (["gpu-node-008", "gpu-node-015"], 360.0),                  # inside the other
    (["gpu-node-007", "gpu-node-008"], 180.0),                  # across the faulty link
    (["gpu-node-000", "gpu-node-008", "gpu-node-016"], 180.0),  # spans it, and a third domain
    (["gpu-node-008", "gpu-node-016"], 360.0),                  # a healthy link
])
def test_link_fault_lowers_only_groups_that_span_both_domains(workers: list[str], expected: float) -> None:
    assert peak(group(workers), nodes("aws-h100", 24, LINK)) == expected


def test_link_fault_leaves_a_loopback_run_alone() -> None:
    pod = group(["gpu-node-007"])[0]
    pod["spec"]["containers"][0] = {"name": "node", "command": ["/usr/local/bin/all_reduce_perf"], "args": ["-g", "8"]}
    assert peak([pod], nodes("aws-h100", 16, LINK)) == 480.0


def test_link_annotations_name_the_peer_on_both_sides_and_go_with_the_link() -> None:
    built = profiles.build_nodes("aws-h100", 24)
    marks = faults.link_annotations(built, [*LINK, ["topology.k8s.aws/network-node-layer-3", RACK1, RACK2, 0.3]])
    key = "topology.k8s.aws/network-node-layer-3"
    assert json.loads(marks["gpu-node-003"] or "") == {f"{key}={RACK1}": 0.5}
    assert json.loads(marks["gpu-node-012"] or "") == {f"{key}={RACK0}": 0.5, f"{key}={RACK2}": 0.3}
    assert json.loads(marks["gpu-node-020"] or "") == {f"{key}={RACK1}": 0.3}
    assert set(faults.link_annotations(built, []).values()) == {None}


@pytest.mark.parametrize(("domain", "peer", "label"), [
    (CLIQUE0, CLIQUE1, profiles.CLIQUE_LABEL),
    (RACK0, RACK2, "topology.k8s.aws/network-node-layer-3"),
    (RACK0, CLIQUE1, None),       # two labels' values: no one link
    (RACK0, "nn-3c000099", None),  # no such domain
])
def test_a_link_is_looked_up_under_the_one_label_that_has_both_domains(domain: str, peer: str,
                                                                       label: str | None) -> None:
    assert faults.domain_label(profiles.build_nodes("aws-gb200", 36), domain, peer) == label


def test_link_fault_between_cliques_lowers_only_groups_across_them() -> None:
    link = [[profiles.CLIQUE_LABEL, CLIQUE0, CLIQUE1, 0.5]]
    on = ["-x", "NCCL_MNNVL_ENABLE=1"]
    assert peak(group(["gpu-node-000", "gpu-node-017"], on), nodes("aws-gb200", 36, link)) == 840.0
    # Across two cliques MNNVL cannot carry the traffic: the network figure, times the link's factor.
    assert peak(group(["gpu-node-017", "gpu-node-018"], on), nodes("aws-gb200", 36, link)) == 200.0
    assert peak(group(["gpu-node-017", "gpu-node-018"], on), nodes("aws-gb200", 36)) == 400.0


def test_nvlink_fault_does_not_show_in_a_group_across_cliques() -> None:
    marks = {"gpu-node-017": {workload_logs.NVLINK_ANNOTATION: "0.25"}}
    pods = group(["gpu-node-017", "gpu-node-018"], ["-x", "NCCL_MNNVL_ENABLE=1"])
    assert peak(pods, nodes("aws-gb200", 36, annotations=marks)) == 400.0


NVLINK = {"gpu-node-005": {workload_logs.NVLINK_ANNOTATION: "0.25"}}
WORKERS = ["gpu-node-004", "gpu-node-005"]


@pytest.mark.parametrize(("args", "env", "expected"), [
    (["-x", "NCCL_MNNVL_ENABLE=1"], [], 210.0),                              # MNNVL on: the NVLink fault shows
    ([], [], 210.0),                                                        # unset: NCCL's default is on
    ([], [{"name": "NCCL_MNNVL_ENABLE", "value": "1"}], 210.0),
    (["-x", "NCCL_MNNVL_ENABLE=0"], [], 400.0),                              # off: the network-only figure
    ([], [{"name": "NCCL_MNNVL_ENABLE", "value": "0"}], 400.0),
    (["-x", "NCCL_MNNVL_ENABLE=1"], [{"name": "NCCL_MNNVL_ENABLE", "value": "0"}], 210.0),  # mpirun -x wins
    (["-x", "NCCL_MNNVL_ENABLE=0"], [{"name": "NCCL_MNNVL_ENABLE", "value": "1"}], 400.0),
])
def test_nvlink_fault_shows_only_while_mnnvl_is_on(args: list[str], env: list[dict], expected: float) -> None:
    assert peak(group(WORKERS, args, env), nodes("aws-gb200", 18, annotations=NVLINK)) == expected


@pytest.mark.parametrize(("mnnvl", "expected"), [("1", 840.0), ("0", 400.0)])
def test_healthy_gb200_groups_print_the_nvl_or_the_network_figure(mnnvl: str, expected: float) -> None:
    pods = group(["gpu-node-000", "gpu-node-001"], ["-x", f"NCCL_MNNVL_ENABLE={mnnvl}"])
    assert peak(pods, nodes("aws-gb200", 18, annotations=NVLINK)) == expected


def test_gb300_nvlink_fault_and_a_slow_node_take_the_lowest_factor() -> None:
    marks = {"gpu-node-001": {workload_logs.NVLINK_ANNOTATION: "0.25"},
             "gpu-node-002": {workload_logs.FACTOR_ANNOTATION: "0.5"}}
    cluster_nodes = nodes("oci-gb300", 18, annotations=marks)
    assert peak(group(["gpu-node-001", "gpu-node-002"], ["-x", "NCCL_MNNVL_ENABLE=1"]), cluster_nodes) == 225.0
    assert peak(group(["gpu-node-001", "gpu-node-002"], ["-x", "NCCL_MNNVL_ENABLE=0"]), cluster_nodes) == 220.0


def test_mnnvl_setting_reads_the_launcher_arguments_before_any_env() -> None:
    assert workload_logs.mnnvl_setting(group(WORKERS, ["--mca", "x", "-x", "NCCL_MNNVL_ENABLE=0"])) == "0"
    assert workload_logs.mnnvl_setting(group(WORKERS, [], [{"name": "NCCL_MNNVL_ENABLE", "value": "2"}])) == "2"
    assert workload_logs.mnnvl_setting(group(WORKERS)) is None


FABRIC = {"gpu-node-005": {workload_logs.FABRIC_ANNOTATION: "1"}}


def mnnvl_lines(pods: list[dict], cluster_nodes: dict[str, dict]) -> list[str]:
    text = workload_logs.cri(workload_logs.table(pods[0], pods, cluster_nodes, NOW) or [], NOW, NOW)
    return [line.split(" stdout F ")[1] for line in text.splitlines() if "MNNVL" in line]


def test_a_fabric_fault_turns_mnnvl_off_silently_for_its_groups_and_the_log_says_so() -> None:
    cluster_nodes = nodes("aws-gb200", 18, annotations=FABRIC)
    pods = group(WORKERS, ["-x", "NCCL_MNNVL_ENABLE=1"])
    assert peak(pods, cluster_nodes) == 400.0     # the network carries it
    assert mnnvl_lines(pods, cluster_nodes) == [
        "node-1:211:211 [0] NCCL INFO MNNVL busId 0x18000 fabric UUID 0.0 cliqueId 0x0 state 1 healthMask 0x0",
        "node-0:211:211 [0] NCCL INFO comm 0x55d0c3a00000 rank 0 nRanks 8 nNodes 2 localRanks 4 localRank 0 MNNVL 0"]
    healthy = group(["gpu-node-000", "gpu-node-001"])
    assert peak(healthy, cluster_nodes) == 840.0
    assert mnnvl_lines(healthy, cluster_nodes) == [
        "node-0:211:211 [0] NCCL INFO comm 0x55d0c3a00000 rank 0 nRanks 8 nNodes 2 localRanks 4 localRank 0 MNNVL 1"]


def test_a_fabric_fault_leaves_a_loopback_run_alone() -> None:
    pod = group(["gpu-node-005"])[0]
    pod["spec"]["containers"][0] = {"name": "node", "command": ["/usr/local/bin/all_reduce_perf"], "args": ["-g", "4"]}
    assert peak([pod], nodes("aws-gb200", 18, annotations=FABRIC)) == 700.0
    assert mnnvl_lines([pod], nodes("aws-gb200", 18, annotations=FABRIC)) == []
