"""Node drift across clusters: each host's nodes with configuration findings, and the fields whose values differ
across the clusters (per GPU product, each value with its nodes per host, the fleet's majority first) in
fleet.json, fleet.md and fleet.html."""
from __future__ import annotations

from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.engine.report import (
    fleet,
    fleet_configuration,
    fleet_html,
    fleet_md,
)
from tests.unit.engine.report.config_reports import DRIVER, FW, OTHER_FW, config_report
from tests.unit.engine.report.gpu_reports import gpu_report

NEWER = "575.51.03"
DRIFT = (f"NVIDIA-H100-80GB-HBM3 driver: {DRIVER} (majority) on 16/24 nodes (east 8, west 8); {NEWER} on 8/24 nodes "
         f"(north 8)")


def north() -> dict[str, Any]:
    """Every node healthy and alike, on a newer driver than the other clusters: no drift in its own report."""
    report = config_report()
    found = report["categories"][0]["configuration"]
    for node in found["nodes"]:
        node["findings"] = []
    found["drift"] = [{"field": "driver", "component": "node", "majority": NEWER,
                       "values": [{"value": NEWER, "nodes": [n["node"] for n in found["nodes"]]}]}]
    return report


def reports() -> dict[str, dict[str, Any]]:
    return {"west": config_report(), "east": config_report(), "north": north(), "plain": gpu_report()}


def test_a_host_counts_its_nodes_with_findings_and_none_without_a_node_drift_category() -> None:
    assert fleet_configuration.config_nodes(config_report()) == 6  # 4 failing, 2 warned; the 2 healthy not counted
    assert fleet_configuration.config_nodes(north()) == 0  # checked and clean: zero, not unknown
    assert fleet_configuration.config_nodes(gpu_report()) is None and fleet_configuration.config_nodes(None) is None
    row = fleet.host_row("east", "/r/east", config_report(), None)
    assert row["configNodes"] == 6 and fleet.config_text(row) == "6 nodes"
    assert ", configuration findings on 6 nodes, " in fleet.summary_line(row)
    assert "configuration" not in fleet.summary_line(fleet.host_row("plain", "/r/p", gpu_report(), None))


def test_fields_that_differ_across_clusters_are_named_with_their_nodes_per_host() -> None:
    found = fleet_configuration.fleet_configuration(reports())
    assert found is not None and (found["nodes"], found["clusters"]) == (12, 3)
    fw, driver = found["drift"]  # by product, component, field
    assert driver == {"product": "NVIDIA-H100-80GB-HBM3", "component": "node", "field": "driver", "majority": DRIVER,
                      "of": 24, "clusters": 3, "values": [
                          {"value": DRIVER, "nodes": 16, "majority": True,
                           "hosts": [{"host": "east", "nodes": 8}, {"host": "west", "nodes": 8}]},
                          {"value": NEWER, "nodes": 8, "majority": False, "hosts": [{"host": "north", "nodes": 8}]}]}
    assert fleet_configuration.drift_text(driver) == DRIFT
    # The firmware outlier of each cluster stays an outlier of the fleet.
    assert [(v["value"], v["nodes"], v["majority"]) for v in fw["values"]] == [(FW, 14, True), (OTHER_FW, 2, False)]


def test_a_field_every_cluster_agrees_on_is_no_drift_and_no_node_drift_category_is_none() -> None:
    found = fleet_configuration.fleet_configuration({"east": north(), "west": north()})
    assert found == {"nodes": 0, "clusters": 2, "drift": []}
    assert fleet_configuration.fleet_configuration({"plain": gpu_report()}) is None
    assert fleet.build_fleet([])["configuration"] is None


def test_fleet_markdown_and_html_show_the_counts_and_the_drift() -> None:
    found = reports()
    rows = [fleet.host_row(h, f"/r/{h}", r, None) for h, r in found.items()]
    built = fleet.build_fleet(rows, found)
    text = fleet_md.fleet_markdown(built, found)
    lines = text.splitlines()
    assert "## Configuration across the clusters" in lines
    assert "Nodes with configuration findings: 12 in 3 clusters" in lines and f"- {DRIFT}" in lines
    assert any(line.startswith("| east | FAILED | cert-c | 0/1 | ") and line.endswith("| 2 | 6 nodes | 3m0s | - |")
               for line in lines)
    assert any(line.startswith("| north | ") and "| 0 nodes |" in line for line in lines)
    assert any(line.startswith("| plain | ") and line.endswith("| - | 9m0s | - |") for line in lines)  # unknown
    page = fleet_html.fleet_html(built, found)
    assert '<td class="config-nodes">6 nodes</td>' in page and '<td class="config-nodes">0 nodes</td>' in page
    assert f'<li data-field="driver">{DRIFT}</li>' in page
    assert "No field differs" not in page
    quiet = {"east": north()}
    page = fleet_html.fleet_html(fleet.build_fleet([fleet.host_row("east", "/r", north(), None)], quiet), quiet)
    assert "No field differs across the clusters." in page
