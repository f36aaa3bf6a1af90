"""charts: bus bandwidth against message size (a curve per group, failed and regressed marked, threshold and
baseline lines, log-scale x) and the trend charts; every text escaped, old reports drawn with what they have."""
from __future__ import annotations

import copy
import json
import math
import re
from pathlib import Path

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.report import charts, heatmap

DATA = Path(__file__).parents[1] / "data" / "report"
COMM, TRAIN = "communication/nccl-all-reduce", "training/nemotron5-8b"


def compared() -> dict:
    return json.loads((DATA / "compared.json").read_text())


def _paths(svg: str, css: str) -> list[tuple[str, list[tuple[float, float]]]]:
    """(class attribute, points) of the paths whose class includes `css`."""
    out = []
    for attrs in re.findall(r"<path ([^>]*)>", svg):
        klass = re.search(r'class="([^"]*)"', attrs)
        if klass and css in klass.group(1).split():
            d = re.search(r' d="([^"]*)"', attrs).group(1)
            out.append((attrs, [(float(a), float(b)) for a, b in re.findall(r"[ML]([-\d.]+) ([-\d.]+)", d)]))
    return out


@pytest.mark.parametrize(("expression", "value"), [
    ("value >= 800", 800.0), ("value > 12.5", 12.5), ("  value>=1e3 ", 1000.0),
    ("value <= 800", None), ("value >= 800 && value < 900", None), ("", None), (None, None), ("value >= x", None)])
def test_threshold_value_reads_only_a_simple_lower_bound(expression, value) -> None:
    assert charts.threshold_value(expression) == value


def test_one_curve_per_group_failed_and_regressed_marked() -> None:
    report = compared()
    category = report["categories"][0]
    svg = charts.bandwidth_svg(category, COMM, report["comparison"])
    curves = _paths(svg, "curve")
    assert [re.search(r'data-group="([^"]*)"', a).group(1) for a, _p in curves] == ["group-0", "group-1", "group-2"]
    assert [re.search(r'class="curve ([^"]*)"', a).group(1) for a, _p in curves] == \
        ["curve-passed", "curve-failed", "curve-regressed"]
    assert f'stroke="{charts.FAILED_COLOUR}"' in curves[1][0] and f'stroke="{charts.REGRESSED_COLOUR}"' in curves[2][0]
    assert [len(points) for _a, points in curves] == [len(e["curve"]) for e in category["groupBandwidth"]]
    for label in ("failed group", "regressed group", "threshold", "baseline"):  # the legend names each mark
        assert f">{label}</text>" in svg


def test_x_is_log_scale_and_labelled_with_sizes_y_in_gbps() -> None:
    report = compared()
    svg = charts.bandwidth_svg(report["categories"][0], COMM, report["comparison"])
    _attrs, points = _paths(svg, "curve")[0]
    sizes = [s for s, _v in report["categories"][0]["groupBandwidth"][0]["curve"]]
    # Sizes four times apart lie equally far apart: x is linear in log2(size).
    steps = {round(b[0] - a[0], 0) for a, b in zip(points, points[1:])}
    ratios = {round(math.log2(b / a), 6) for a, b in zip(sizes, sizes[1:])}
    assert ratios == {2.0} and len(steps) == 1
    ticks = re.findall(r'class="x-tick"[^>]*>([^<]+)<', svg)
    assert ticks == ["32 B", "512 B", "8 KB", "128 KB", "2 MB", "32 MB", "512 MB", "8 GB"]
    assert "bus bandwidth (GB/s)" in svg and "message size (log scale)" in svg
    # The last size sits on the right edge of the plot.
    assert points[-1][0] == charts.WIDTH - charts.RIGHT


def test_threshold_line_sits_at_its_value_and_baseline_follows_the_busbw_figures() -> None:
    report = compared()
    svg = charts.bandwidth_svg(report["categories"][0], COMM, report["comparison"])
    y_of = {float(t): float(y) for y, t in re.findall(r'class="y-tick" x="[^"]*" y="([-\d.]+)"[^>]*>([\d.]+)<', svg)}
    line = re.search(r'<line class="threshold"[^>]* y1="([-\d.]+)"', svg)
    assert line and abs(float(line.group(1)) - (y_of[800.0] - 4)) < 0.2  # tick labels sit 4 px below their value
    assert charts.baseline_points(COMM, report["comparison"]) == [(1048576, 28.0), (268435456, 500.0),
                                                                  (8589934592, 700.0)]
    assert len(_paths(svg, "baseline")[0][1]) == 3 and svg.count('class="baseline-point"') == 3
    assert charts.baseline_points(TRAIN, report["comparison"]) == []
    assert charts.regressed_groups(COMM, report["comparison"]) == {"group-1", "group-2"}


def test_no_threshold_no_baseline_and_old_reports_draw_the_combined_table() -> None:
    old = json.loads((DATA / "measured.json").read_text())["categories"][0]
    old.pop("threshold")  # as an older version wrote it: no curve, no threshold
    for entry in old["groupBandwidth"]:
        entry.pop("curve")
    svg = charts.bandwidth_svg(old, COMM, None)
    assert [re.search(r'data-group="([^"]*)"', a).group(1) for a, _p in _paths(svg, "curve")] == ["all groups"]
    assert 'class="threshold"' not in svg and 'class="baseline"' not in svg and ">threshold<" not in svg
    category = copy.deepcopy(compared()["categories"][0])
    category["threshold"] = "value >= 800 && value < 2000"
    assert 'class="threshold"' not in charts.bandwidth_svg(category, COMM, None)
    assert charts.bandwidth_svg({"groupBandwidth": [], "bandwidth": []}, COMM, None) == ""


def test_every_text_in_the_charts_is_escaped() -> None:
    evil = '<script>"x"</script>'
    report = compared()
    category = report["categories"][0]
    category["groupBandwidth"][0]["groupName"] = evil
    category["threshold"] = "value >= 800"
    report["comparison"]["trend"][0]["points"][0]["certification"] = evil
    report["comparison"]["trend"][0]["category"] = COMM
    svgs = [charts.bandwidth_svg(category, evil, report["comparison"]), *charts.trends(COMM, report["comparison"])]
    for svg in svgs:
        assert "<script>" not in svg
    assert "&lt;script&gt;&quot;x&quot;&lt;/script&gt;" in svgs[0] and "&lt;script&gt;" in svgs[1]


def test_trend_points_oldest_first_labelled_with_their_certification() -> None:
    report = compared()
    (svg,) = charts.trends(COMM, report["comparison"])
    assert 'class="trend"' in svg and f'data-category="{COMM}"' in svg and 'data-figure="groupBusBW"' in svg
    assert re.findall(r'data-certification="([^"]+)"', svg) == ["cert-m-1", "cert-m-2", "cert-m-3"]
    assert re.findall(r'class="trend-label"[^>]*>([^<]+)<', svg) == ["cert-m-1", "cert-m-2", "cert-m-3"]
    xs = [float(x) for x in re.findall(r'<circle class="trend-point" cx="([-\d.]+)"', svg)]
    ys = [float(y) for y in re.findall(r'<circle class="trend-point" cx="[-\d.]+" cy="([-\d.]+)"', svg)]
    assert xs == sorted(xs) and ys[2] > ys[0] > ys[1]  # 675.71 lowest (largest y), 847 highest
    assert "<title>cert-m-3 (2026-12-01T08:00:00Z): 675.71</title>" in svg
    assert len(charts.trends(TRAIN, report["comparison"])) == 1
    assert charts.trends(COMM, None) == [] and charts.trend_svg({"points": []}) == ""
    assert charts.trend_svg({"category": COMM, "figure": "f", "points": [{"certification": "a", "value": None}]}) == ""


def test_heatmap_cells_name_node_group_and_figure_on_hover_and_are_large() -> None:
    svg = heatmap.heatmap_svg(compared()["categories"][0])
    titles = re.findall(r'<rect class="cell"[^>]*data-node="([^"]+)"[^>]*><title>([^<]+)</title>', svg)
    assert titles[0] == ("node-0", "node node-0 \u00b7 group group-0 \u00b7 847.12 GB/s \u00b7 Passed")
    assert len(titles) == 6 and all(f"group group-{int(n[-1]) // 2}" in t for n, t in titles)
    assert heatmap.CELL >= 36 and re.findall(r'class="cell-value"[^>]*>([^<]+)<', svg)[:3] == ["847", "847", "400"]


def test_a_long_heatmap_row_wraps() -> None:
    category = copy.deepcopy(compared()["categories"][0])
    nodes = [f"n-{i}" for i in range(heatmap.COLUMNS + 2)]
    category["groupBandwidth"] = [{"groupName": "g", "nodes": nodes, "busBW": 1.0, "belowMin": False, "failed": False}]
    category["nodes"] = {n: {"group": "g", "rack": "r", "status": "Passed"} for n in nodes}
    svg = heatmap.heatmap_svg(category)
    ys = sorted({float(y) for y in re.findall(r'<rect class="cell" x="[^"]*" y="([\d.]+)"', svg)})
    xs = [float(x) for x in re.findall(r'<rect class="cell" x="([\d.]+)"', svg)]
    assert len(ys) == 2 and max(xs) < float(re.search(r'<svg[^>]* width="(\d+)"', svg).group(1))
