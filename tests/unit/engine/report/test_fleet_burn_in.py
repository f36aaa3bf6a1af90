"""The burn-in fleet rule across clusters: per GPU product and dtype, the GPUs below 0.92x and the nodes below 0.95x
the fleet median named as slow (warnings with their numbers) in fleet.json, fleet.md and fleet.html."""
from __future__ import annotations

import copy
from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.engine.report import (
    fleet,
    fleet_burn_in,
    fleet_html,
    fleet_md,
)
from tests.unit.engine.report.burn_in_reports import burn_in_report
from tests.unit.engine.report.gpu_reports import gpu_report

FASTER = "NVIDIA-H100-80GB-HBM3"
SLOW_GPU = ("east gpu-node-002 GPU 5: slow: median 542.7 TFLOPS is 0.91x the fleet median 596.0 of NVIDIA-H100-NVL "
            "BF16 across 2 clusters (slow below 0.92x)")
SLOW_NODE = ("west gpu-node-004: slow: node median 510.0 TFLOPS is 0.86x the fleet median 596.0 of NVIDIA-H100-NVL "
             "BF16 across 2 clusters (slow below 0.95x)")


def faster_report() -> dict[str, Any]:
    """Another product, every node healthy and 1.25x faster: judged against its own fleet, never the NVL's."""
    report = burn_in_report()
    report["gpuProduct"] = FASTER
    found = report["categories"][0]["burnIn"]
    healthy = found["nodes"][0]
    found["nodes"] = [copy.deepcopy({**healthy, "node": f"h100-{n}"}) for n in range(4)]
    for node in found["nodes"]:
        node["median"] *= 1.25
        for gpu in node["gpus"]:
            gpu["median"] *= 1.25
    return report


def reports() -> dict[str, dict[str, Any]]:
    return {"west": burn_in_report(), "east": burn_in_report(), "north": faster_report(), "plain": gpu_report()}


def test_slow_gpus_and_nodes_per_product_across_clusters() -> None:
    found = fleet_burn_in.fleet_burn_in(reports())
    assert found is not None
    assert found["groups"] == [
        {"product": FASTER, "dtype": "bf16", "median": 750.0, "gpus": 32, "nodes": 4, "clusters": 1},
        {"product": "NVIDIA-H100-NVL", "dtype": "bf16", "median": 596.0, "gpus": 64, "nodes": 8, "clusters": 2}]
    slow = found["slow"]
    assert {s["host"] for s in slow} == {"east", "west"} and len(slow) == 22  # north's healthy nodes are not slow
    assert [s["text"] for s in slow][0] == SLOW_GPU and SLOW_NODE in [s["text"] for s in slow]
    node = next(s for s in slow if s["index"] is None and s["host"] == "west")
    assert node == {"host": "west", "category": "compute/gemm-burn-in", "node": "gpu-node-004", "index": None,
                    "product": "NVIDIA-H100-NVL", "dtype": "bf16", "median": 510.0, "ratio": 0.8557,
                    "message": SLOW_NODE.split(": slow: ")[1], "text": SLOW_NODE}
    # Just above either limit is not slow: the healthy nodes' GPUs (0.99x to 1.02x) are never named.
    assert not any(s["node"] == "gpu-node-001" for s in slow)


def test_no_burn_in_no_figure_and_a_zero_median() -> None:
    assert fleet_burn_in.fleet_burn_in({"plain": gpu_report()}) is None
    report = burn_in_report()
    for node in report["categories"][0]["burnIn"]["nodes"]:
        node["median"] = None
        for gpu in node["gpus"]:
            gpu["median"] = None
    found = fleet_burn_in.fleet_burn_in({"east": report})
    assert found == {"groups": [{"product": "NVIDIA-H100-NVL", "dtype": "bf16", "median": None, "gpus": 0,
                                 "nodes": 4, "clusters": 1}], "slow": []}
    report = burn_in_report()
    report["categories"][0]["burnIn"]["nodes"][1]["gpus"][3]["median"] = 0.0  # zero is a figure, and slow
    found = fleet_burn_in.fleet_burn_in({"east": report})
    assert found is not None and any(s["node"] == "gpu-node-002" and s["index"] == 3 and s["ratio"] == 0.0
                                     for s in found["slow"])


def test_fleet_json_markdown_and_html_name_the_slow_as_warnings() -> None:
    shown = reports()
    rows = [fleet.host_row(host, f"/r/{host}", report, None) for host, report in shown.items()]
    built = fleet.build_fleet(rows, shown)
    assert built["burnIn"] == fleet_burn_in.fleet_burn_in(shown)
    text = fleet_md.fleet_markdown(built, shown)
    assert "## Burn-in across the clusters" in text
    assert ("- NVIDIA-H100-NVL BF16: fleet median 596.0 TFLOPS over 64 GPUs on 8 nodes in 2 clusters"
            in text.splitlines())
    assert f"- warning: {SLOW_GPU}" in text.splitlines() and f"- warning: {SLOW_NODE}" in text.splitlines()
    page = fleet_html.fleet_html(built, shown)
    assert '<section class="fleet-burn-in">' in page
    assert ("<tr><td>west</td><td>gpu-node-004</td><td class=\"num\">-</td><td class=\"num\">0.856</td><td>node "
            "median 510.0 TFLOPS is 0.86x the fleet median 596.0 of NVIDIA-H100-NVL BF16 across 2 clusters (slow "
            "below 0.95x)</td></tr>") in page
    assert fleet.build_fleet(rows)["burnIn"] is None  # no reports given: nothing to judge


def test_a_fleet_with_nobody_slow_says_so() -> None:
    shown = {"north": faster_report()}
    built = fleet.build_fleet([fleet.host_row("north", "/r/north", shown["north"], None)], shown)
    assert "No GPU or node is slow against the fleet." in fleet_md.fleet_markdown(built, shown)
    assert "No GPU or node is slow against the fleet." in fleet_html.fleet_html(built, shown)
