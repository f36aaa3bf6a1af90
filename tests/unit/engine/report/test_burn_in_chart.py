"""A burn-in category in report.html: a chart per node (a line per GPU, the failing one red, the floor dashed and
marked provisional, the node median, the shaded warm-up), findings beside it, passing nodes folded as bands, every
text escaped, and a 1,000-node report that opens on the nodes that matter."""
from __future__ import annotations

import copy
import re

from ansible_collections.cre.certification.plugins.module_utils.engine.report import burn_in_chart as chart
from ansible_collections.cre.certification.plugins.module_utils.engine.report import html
from tests.unit.engine.report.burn_in_reports import burn_in, burn_in_report
from tests.unit.engine.report.gpu_reports import gpu_report


def _paths(svg: str) -> list[tuple[str, str, str]]:
    """(GPU, outcome, stroke) of each GPU's line."""
    return re.findall(r'<path class="gpu-series[^"]*" data-gpu="(\d+)" data-outcome="(\w+)" d="[^"]+" fill="none" '
                      r'stroke="(#[0-9a-f]+)"', svg)


def test_a_node_chart_draws_every_gpu_the_failing_one_red_and_last() -> None:
    found = burn_in()
    svg = chart.node_svg(found, found["nodes"][1], chart.span(found))
    lines = _paths(svg)
    assert len(lines) == 8 and lines[-1] == ("5", "fail", chart.FAIL_COLOUR)  # drawn over the others
    assert {stroke for gpu, _o, stroke in lines if gpu != "5"} == {chart.PASS_COLOUR}
    assert "GPU 5 (GPU-gpu-node-002-5): median 542.7 TFLOPS, fail (node-median)" in svg
    assert '<text class="gpu-label"' in svg and ">GPU 5</text>" in svg
    # Every window, warm-up included: 22 points, the first in the middle of window 0.
    path = re.search(r'data-gpu="5" data-outcome="fail" d="M([^"]+)"', svg)
    assert path and len(path.group(1).split()) == 44


def test_floor_dashed_and_provisional_median_line_and_warm_up_shaded() -> None:
    found = burn_in()
    low, high, seconds = chart.span(found)
    assert seconds == 660 and low < 418.5 and high > 640  # shared: the throttled GPU and the warm-up spike fit
    svg = chart.node_svg(found, found["nodes"][0], (low, high, seconds))
    assert re.search(r'<line class="floor floor-provisional"[^>]*stroke-dasharray="6 4"><title>floor 490.0 TFLOPS per '
                     r'GPU \(provisional: it warns, never fails\)</title>', svg)
    assert ">floor 490.0 provisional</text>" in svg
    assert re.search(r'<line class="node-median"[^>]*><title>node median 600.0 TFLOPS</title>', svg)
    warmup = re.search(r'<rect class="warmup" x="(\d+)" y="\d+" width="([\d.]+)"', svg)
    plot_w = chart.WIDTH - chart.LEFT - chart.RIGHT
    assert warmup and abs(float(warmup.group(2)) - plot_w * 60 / 660) < 0.2


def test_a_floor_that_is_not_provisional_or_not_there() -> None:
    found = burn_in()
    found["floor"] = {"tflops": 590.0, "provisional": False}
    svg = chart.node_svg(found, found["nodes"][0], chart.span(found))
    assert '<line class="floor" ' in svg and ">floor 590.0</text>" in svg
    found["floor"] = {"tflops": None, "provisional": False}
    assert 'class="floor' not in chart.node_svg(found, found["nodes"][0], chart.span(found))


def test_view_opens_the_nodes_that_did_not_pass_and_folds_the_healthy_one_as_a_band() -> None:
    found = chart.view(burn_in_report()["categories"][0])
    assert found is not None and found["provisional"]
    assert [n["node"] for n in found["attention"]] == ["gpu-node-002", "gpu-node-003", "gpu-node-004"]
    assert [n["node"] for n in found["passing"]] == ["gpu-node-001"]
    healthy = str(found["passing"][0]["svg"])
    assert 'class="gpu-band"' in healthy and not _paths(healthy)
    assert "8 GPUs, every one passed: medians 593.0 to 607.0 TFLOPS" in healthy
    throttled = found["attention"][1]
    assert [f["css"] for f in throttled["findings"]] == ["finding-fail", "finding-fail", "finding-warn", "finding-warn"]
    assert throttled["findings"][0]["text"] == ("gpu-node-003 GPU 2: throttle: hw_thermal active in windows 8-21 "
                                                "(a hardware throttle reason fails)")
    assert [(s["node"], s["index"], s["ratio"]) for s in found["slow"]][:3] == [
        ("gpu-node-002", 5, "0.911"), ("gpu-node-003", 2, "0.702"), ("gpu-node-004", "-", "0.856")]
    assert chart.view(gpu_report()["categories"][0]) is None


def test_a_node_only_slow_against_the_fleet_is_open() -> None:
    report = burn_in_report()
    cat = report["categories"][0]
    cat["burnIn"]["fleet"]["slow"] = [{"node": "gpu-node-001", "index": 0, "ratio": 0.91, "message": "0.91x"}]
    found = chart.view(cat)
    assert found is not None and "gpu-node-001" in [n["node"] for n in found["attention"]]


def test_page_shows_the_section_self_contained_without_the_gemm_findings_twice() -> None:
    page = html.report_html(burn_in_report())
    assert not re.search(r"(src|href)=\"(https?:)?//", page) and "<script" not in page and "@import" not in page
    assert page.count('<svg class="burn-in-chart"') == 4 and page.count('<figure class="burn-in-node"') == 4
    assert '<details class="burn-in-passing"><summary>1 node whose every GPU passed the burn-in</summary>' in page
    assert ('<li class="finding-fail">gpu-node-002 GPU 5: node-median: median 542.7 TFLOPS is 9.2% below the node '
            'median 598.0 in windows 2-21 (fail above 5%)</li>') in page
    slow = re.search(r'<table class="burn-in-slow">.*?</table>', page, re.S)
    assert slow and slow.group(0).count("<tr><td>gpu-node-004</td>") == 9
    assert '<table class="gpu-findings">' not in page  # every GPU finding is a GEMM one, told by the charts
    assert '<table class="gpu-grid">' in page  # the grid still shows each GPU's verdict


def test_every_text_is_escaped() -> None:
    evil = '<script>alert("x")</script>&'
    report = burn_in_report()
    found = report["categories"][0]["burnIn"]
    found["nodes"][1]["node"] = evil
    found["nodes"][1]["gpus"][5]["findings"][0]["message"] = evil
    found["nodes"][1]["gpus"][5]["uuid"] = evil
    found["dtype"] = evil
    page = html.report_html(report)
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_a_thousand_nodes_open_on_the_few_that_did_not_pass_and_stay_small() -> None:
    report = burn_in_report()
    found = report["categories"][0]["burnIn"]
    healthy = found["nodes"][0]
    for number in range(5, 1001):
        found["nodes"].append({**copy.deepcopy(healthy), "node": f"gpu-node-{number:04d}"})
    view = chart.view(report["categories"][0])
    assert view is not None and len(view["attention"]) == 3 and len(view["passing"]) == 997
    page = html.report_html(report)
    assert page.count('class="gpu-band"') == 997 and len(page) < 3_000_000


def test_malformed_or_empty_series_draw_no_line_and_no_points_still_give_a_span() -> None:
    found = burn_in()
    node = found["nodes"][1]
    node["gpus"][0]["series"] = [[0, "fast"], [1], None, [2, True]]
    node["gpus"][1]["series"] = []
    svg = chart.node_svg(found, node, chart.span(found))
    assert [gpu for gpu, _o, _s in _paths(svg)] == ["2", "3", "4", "6", "7", "5"]
    empty = {**found, "nodes": [{"node": "n", "median": None, "gpus": []}], "floor": {"tflops": None}}
    assert chart.span(empty) == (0.0, 1.0, 30.0)
    assert "median - TFLOPS" in chart.node_svg(empty, empty["nodes"][0], chart.span(empty))
