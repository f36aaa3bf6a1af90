"""cluster_summary: nvcrectl cluster info's answers for the simulated profiles."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import WorkflowFailure
from ansible_collections.cre.certification.plugins.module_utils.engine.plan.cluster_summary import summarize
from tools.sim.profiles import build_nodes

CASES = yaml.safe_load((Path(__file__).parents[1] / "data" / "cluster_summary" / "cases.yaml").read_text())


FAILING = [c for c in CASES if "error" in c]
SUMMARIZED = [c for c in CASES if "error" not in c]


def summary(case: dict) -> dict:
    return summarize(build_nodes(case["profile"], case["count"]), case.get("target"), case.get("topology_key", ""))


@pytest.mark.parametrize("case", FAILING, ids=[c["name"] for c in FAILING])
def test_summary_fails(case: dict) -> None:
    with pytest.raises(WorkflowFailure) as err:
        summary(case)
    assert (err.value.reason, err.value.message) == (case["error"]["reason"], case["error"]["message"])


@pytest.mark.parametrize("case", SUMMARIZED, ids=[c["name"] for c in SUMMARIZED])
def test_summary(case: dict) -> None:
    got = summary(case)
    expect = dict(case["expect"])
    topology = expect.pop("topology", None)
    assert {k: got[k] for k in expect} == expect
    assert len(got["nodes"]) == got["total_nodes"]
    if topology:
        assert got["topology"]["key"] == topology["key"]
        assert len(got["topology"]["racks"]) == topology["rack_count"]
        if "first_rack_nodes" in topology:
            assert got["topology"]["racks"][0]["node_count"] == topology["first_rack_nodes"]


def test_an_unlisted_architecture_warns_with_nvcres_defaults_message() -> None:
    nodes = build_nodes("aws-h100", 2)
    for node in nodes:
        node["metadata"]["labels"]["nvidia.com/gpu.product"] = "NVIDIA-H20"
    got = summarize(nodes)
    assert got["gpu_architecture"] == "h20"
    assert ('GPU architecture "h20" has no entry in the catalog\'s GPU defaults, which fall back to gpusPerNode=4 '
            "mlnxPerNode=0 for it; this run is sized at gpusPerNode=4 mlnxPerNode=0. If the nodes differ, set "
            "spec.gpusPerNode and spec.mlnxPerNode (or spec.categories[].options), and file an issue so the "
            "architecture can be added to the catalog.") in got["warnings"]
    assert not [w for w in summarize(build_nodes("aws-h100", 2))["warnings"] if "has no entry" in w]
