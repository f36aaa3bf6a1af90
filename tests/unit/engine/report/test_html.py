"""report.html and its heat map: every value escaped, nothing fetched, missing data shown as missing."""
from __future__ import annotations

import copy
import json
import re
from pathlib import Path

from ansible_collections.cre.certification.plugins.module_utils.engine.report import heatmap, html, textbox

DATA = Path(__file__).parents[1] / "data" / "report"


def report(name: str) -> dict:
    return json.loads((DATA / f"{name}.json").read_text())


def test_page_is_self_contained_and_shows_verdict_matrix_failed_nodes_and_figures() -> None:
    page = html.report_html(report("measured"))
    assert not re.search(r"(src|href)=\"(https?:)?//", page) and "<script" not in page and "@import" not in page
    assert '<span class="verdict v-FAILED">FAILED</span>' in page
    assert page.count('<table class="matrix">') == 1
    assert "<td>node-2</td><td>ThresholdViolation</td>" in page  # failed nodes with reasons
    assert "BusBW 622.62 GB/s" in page and "Goodput 0.68 (68%)" in page
    assert "<td class=\"num\">8 GB</td>" in page  # NVCRE's size units in the bandwidth table


def test_heatmap_rows_are_racks_and_cells_carry_each_nodes_group_figure() -> None:
    category = report("measured")["categories"][0]
    kind, rows = heatmap.rows(category)
    assert kind == "rack"
    assert {label: [(n, e["busBW"] if e else None) for n, e in cells] for label, cells in rows.items()} == \
        {"rack-a": [("node-0", 847.12), ("node-1", 847.12), ("node-2", 400.0), ("node-3", 400.0)]}
    svg = heatmap.heatmap_svg(category)
    cells = re.findall(r'<rect class="cell"[^>]*data-node="([^"]+)" data-busbw="([^"]*)"', svg)
    assert cells == [("node-0", "847.12"), ("node-1", "847.12"), ("node-2", "400.00"), ("node-3", "400.00")]
    assert 'stroke="#7a0000"' in svg  # the group below its minimum is outlined


def test_without_topology_rows_are_groups_and_one_node_groups_share_a_row() -> None:
    category = copy.deepcopy(report("measured")["categories"][0])
    for verdict in category["nodes"].values():
        verdict["rack"] = ""
    category["groupBandwidth"].append({"groupName": "group-9", "nodes": ["node-9"], "busBW": 10.0, "transport": "",
                                       "belowMin": False, "failed": False})
    category["nodes"]["node-9"] = {"group": "group-9", "rack": "", "status": "Passed", "reason": "", "message": ""}
    kind, rows = heatmap.rows(category)
    assert kind == "group" and list(rows) == ["group-0", "group-1", heatmap.SINGLE_NODE_ROW]


def test_colour_scale_runs_low_red_to_high_green_and_is_flat_when_equal() -> None:
    assert heatmap.colour(1, 1, 3) == "#d73027" and heatmap.colour(3, 1, 3) == "#1a9850"
    assert heatmap.colour(5, 5, 5) == heatmap.colour(2, 1, 3) == "#fee08b"


def test_every_value_is_escaped() -> None:
    evil = '<script>alert("x")</script>&'
    built = report("measured")
    built["name"] = evil
    built["failedNodes"][0]["message"] = evil
    category = built["categories"][0]
    category["nodes"][evil] = {**category["nodes"]["node-0"]}
    category["failureReason"] = evil
    page = html.report_html(built)
    assert "<script>" not in page
    # The templates escape with MarkupSafe (&#34;): the name in <title> and <h1>, the message, the failure reason,
    # the node in the matrix.
    assert page.count("&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&amp;") == 5 == page.count(html.esc(evil))
    # The pictures escape with html.escape (&quot;): the heat map's cell.
    assert 'data-node="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;"' in page


def test_missing_data_is_shown_as_missing() -> None:
    built = {"title": "Certification Report", "name": "empty", "platform": "", "gpu": "", "totalNodes": 0,
             "excludedNodes": [], "exclusionReason": "", "categories": [], "failedNodes": [], "result": "RUNNING",
             "nodeResults": []}
    page = html.report_html(built)
    assert "No node has a verdict yet." in page and "Failed nodes: none." in page and "<svg" not in page
    assert heatmap.heatmap_svg({"groupBandwidth": [], "nodes": {}}) == ""


def test_summary_box_is_nvcrectls_summary_with_the_host() -> None:
    box = textbox.summary_box(report("measured"), "east").splitlines()
    assert box[0].startswith("\u256d\u2500 Summary: cert-m (east) ") and box[-1].startswith("\u2570")
    assert [line.strip("\u2502 ").rstrip() for line in box[1:-1]] == [
        "Categories: 1/2 passed", "Failed Nodes: 2", "node-2: ThresholdViolation", "node-3: ThresholdViolation",
        "Result: FAILED"]
    assert len({len(line) for line in box}) == 1  # a closed box
    assert "Failed Nodes: none" in textbox.summary_box(report("passed"))
