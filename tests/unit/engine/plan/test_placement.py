"""Placement (workflow spec §4 steps 11-12, §6): partitioning, job size, affinity, tolerations."""
from pathlib import Path

import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import WorkflowFailure
from ansible_collections.cre.certification.plugins.module_utils.engine.plan import placement
from ansible_collections.cre.certification.plugins.module_utils.engine.plan.detect import Detection

DATA = Path(__file__).parents[1] / "data" / "placement"


def load(name):
    return yaml.safe_load((DATA / name).read_text())


def names_of(case):
    return case["names"] if "names" in case else [f"node{i:02d}" for i in range(case["count"])]


def labels_of(case):
    return {n: {case["topologyKey"]: d} for d, nodes in (case.get("domains") or {}).items() for n in nodes}


PARTITION = load("partition.yaml")
UNPARTITIONED = [c for c in PARTITION if "error" in c["expect"]]
PARTITIONED = [c for c in PARTITION if "error" not in c["expect"]]


def partition(case: dict) -> list[dict]:
    return placement.partition_nodes(names_of(case), case["npj"], case.get("topologyKey", ""),
                                     case.get("strictDomain", False), labels_of(case))


@pytest.mark.parametrize("case", UNPARTITIONED, ids=[c["id"] for c in UNPARTITIONED])
def test_partition_fails(case):
    with pytest.raises(placement.PartitionFailure, match=f"^{case['expect']['error']}$"):
        partition(case)


@pytest.mark.parametrize("case", PARTITIONED, ids=[c["id"] for c in PARTITIONED])
def test_partition(case):
    groups = partition(case)
    assert groups == case["expect"]["groups"]
    assert set(names_of(case)) == {n for g in groups for n in g["nodes"]}  # every node is covered
    if "statuses" in case["expect"]:
        assert placement.group_statuses(groups, case["topologyKey"], labels_of(case)) == case["expect"]["statuses"]


SIZES = load("nodes_per_job.yaml")
UNSIZED = [c for c in SIZES if "error" in c["expect"]]
SIZED = [c for c in SIZES if "error" not in c["expect"]]


def plan(case: dict) -> tuple[int, list]:
    """The nodes per Job and the groups `case` plans."""
    trainer = {} if case["numNodes"] is None else {"numNodes": case["numNodes"]}
    job_spec = {"workload": {"trainJob": {"trainer": trainer}}}
    orchestration = case.get("orchestration") or {}
    names = [f"node{i:02d}" for i in range(case["nodeCount"])]
    placement.validate_placement(orchestration)
    detection = Detection("aws", "h100", [], [{"metadata": {"name": n}} for n in names])
    npj = placement.nodes_per_job(job_spec, orchestration, detection)
    return placement.plan_groups(names, orchestration, npj)


@pytest.mark.parametrize("case", UNSIZED, ids=[c["id"] for c in UNSIZED])
def test_nodes_per_job_and_groups_fail(case):
    with pytest.raises(WorkflowFailure) as err:
        plan(case)
    assert (err.value.reason, err.value.message) == ("PartitionError", case["expect"]["error"])


@pytest.mark.parametrize("case", SIZED, ids=[c["id"] for c in SIZED])
def test_nodes_per_job_and_groups(case):
    npj, groups = plan(case)
    assert npj == case["expect"]["npj"]
    if "groups" in case["expect"]:
        assert groups == case["expect"]["groups"]


def test_pinned_twelve_by_two_gives_six_jobs_unpinned_one():
    names = [f"node{i:02d}" for i in range(12)]
    assert len(placement.plan_groups(names, {}, 2)[1]) == 6
    assert len(placement.plan_groups(names, {"placement": "Unpinned"}, 2)[1]) == 1


AFFINITY = load("affinity.yaml")


@pytest.mark.parametrize("case", AFFINITY["affinity"], ids=[c["id"] for c in AFFINITY["affinity"]])
def test_node_affinity(case):
    affinity = placement.node_affinity(case["hosts"], case["target"], case["gpuProducts"])
    if case["expect"] is None:
        assert affinity is None
    else:
        terms = affinity["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        assert terms == [{"matchExpressions": case["expect"]}]


@pytest.mark.parametrize("case", AFFINITY["tolerations"], ids=[c["id"] for c in AFFINITY["tolerations"]])
def test_tolerations(case):
    assert placement.job_tolerations(case["target"], case["hasLauncher"], case["unpinned"]) == case["expect"]


@pytest.mark.parametrize("npj,domain_size", [(4, 18), (7, 18), (8, 0)])
def test_ten_thousand_nodes_plan(npj, domain_size):
    """Every node covered at scale; the time is bench/plan.py's to measure."""
    names = [f"node{i:05d}" for i in range(10_000)]
    key = "nvidia.com/gpu.clique" if domain_size else ""
    labels = {n: {key: f"c{i // domain_size}"} for i, n in enumerate(names)} if domain_size else None
    groups = placement.partition_nodes(names, npj, key, labels=labels)
    assert {n for g in groups for n in g["nodes"]} == set(names)
