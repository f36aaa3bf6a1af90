"""fleet.html and report.html in headless Chromium: a non-blank screenshot, and a DOM with the hosts, their
verdicts, the heat-map cells (with their hover text), the bandwidth curves, the trend charts, the "Compared
with" section, the per-GPU grid, the burn-in charts and the node-drift section (drift table and findings). Fails
(never skips) without chromium: `make setup` installs it."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from ansible_collections.cre.certification.plugins.module_utils.driver.fleet import fleet_report
from ansible_collections.cre.certification.plugins.module_utils.engine.report import charts
from ansible_collections.cre.certification.plugins.module_utils.engine.report.html import report_html
from tests.browser import check_fleet, check_page
from tests.unit.engine.report.burn_in_reports import burn_in_report
from tests.unit.engine.report.config_reports import config_report
from tests.unit.engine.report.gpu_reports import MEMORY_MESSAGE, gpu_report

DATA = Path(__file__).parent / "engine" / "data" / "report"
NODES = {"node-0", "node-1", "node-2", "node-3"}
FAIL_RED = "#c62828"  # a failing GPU's cell (html.STYLE's .gpu-fail)
OUTLIER_AMBER = "#fff3e0"  # a value other than the majority in the drift table (html.STYLE's tr.drift-outlier)


def _rgb(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


def test_fleet_and_report_pages_in_chromium(tmp_path: Path) -> None:
    for host, name in (("east", "measured"), ("west", "passed"), ("north", "compared")):
        (tmp_path / host).mkdir()
        shutil.copy(DATA / f"{name}.json", tmp_path / host / "report.json")
    (tmp_path / "dead").mkdir()
    (tmp_path / "dead" / "status.json").write_text(json.dumps({"state": "error", "message": "Connection refused"}))
    fleet_report({"report_dir": [str(tmp_path)], "hosts": [], "dest": None}, False)
    fleet = check_fleet(tmp_path / "fleet.html", tmp_path / "fleet.png",
                        {"east": "FAILED", "west": "PASSED", "dead": "ERROR", "north": "FAILED"},
                        {"east": NODES, "west": set(), "north": NODES | {"node-4", "node-5"}})
    rows = [t.strip() for t in fleet.text if t.strip()]
    assert "vs certification cert-m-2: 3 regressed, 1 missing of 6 compared, 1 refused" in rows
    assert "node-3 (2 of 3)" in rows
    page = tmp_path / "east" / "report.html"
    page.write_text(report_html(json.loads((DATA / "measured.json").read_text())))
    dom = check_page(page, tmp_path / "report.png")
    assert [c["data-node"] for c in dom.having("rect", class_="cell")] == ["node-0", "node-1", "node-2", "node-3"]
    assert "FAILED" in dom.text and len(dom.having("table", class_="matrix")) == 1
    assert "Compared with" not in dom.text and not dom.having("svg", class_="trend")  # an older report: none


def test_compared_report_shows_curves_trend_comparison_and_heatmap_titles(tmp_path: Path) -> None:
    report = json.loads((DATA / "compared.json").read_text())
    page = tmp_path / "report.html"
    page.write_text(report_html(report))
    dom = check_page(page, tmp_path / "report.png", "1280,4200")
    text = [t.strip() for t in dom.text if t.strip()]
    # The bandwidth chart: one curve per group, the failed and the regressed one marked, threshold and baseline.
    curves = dom.having("path", class_="curve")
    assert [(c["data-group"], c["class"]) for c in curves] == [
        ("group-0", "curve curve-passed"), ("group-1", "curve curve-failed"), ("group-2", "curve curve-regressed")]
    assert len(dom.having("line", class_="threshold")) == 1 and len(dom.having("path", class_="baseline")) == 1
    # Drawn, not only present: the regressed curve's orange covers far more than its legend key (about 50 pixels).
    assert dom.colours.get(_rgb(charts.REGRESSED_COLOUR), 0) > 300
    # The trend charts: one per category figure, each point labelled with its certification, oldest first.
    trends = dom.having("svg", class_="trend")
    assert [(t["data-category"], t["data-figure"]) for t in trends] == [
        ("communication/nccl-all-reduce", "groupBusBW"), ("training/nemotron5-8b", "goodput")]
    assert [p["data-certification"] for p in dom.having("circle", class_="trend-point")] == [
        "cert-m-1", "cert-m-2", "cert-m-3", "cert-m-2", "cert-m-3"]
    # The Compared-with section: what it compared with and a row per figure.
    assert "Compared with" in text and "certification cert-m-2 (2026-11-10T08:00:00Z) from configmap cert-m-2-report" in text
    rows = dom.having("tr", class_="figure-row")
    assert [(r["data-group"], r["data-figure"]) for r in rows] == [
        ("", "busBW@1048576"), ("", "busBW@268435456"), ("", "busBW@8589934592"), ("group-0", "groupBusBW"),
        ("group-1", "groupBusBW"), ("group-2", "groupBusBW"), ("group-0", "goodput")]
    assert sum("verdict-regressed" in r["class"].split() for r in rows) == 3
    # The regressions and misses come first, in a table of their own; every figure stays one click away.
    assert len(dom.having("tr", class_="verdict-regressed")) == 6 and len(dom.having("tr", class_="verdict-missing")) == 2
    assert len(dom.having("table", class_="regressions")) == 1 and len(dom.having("details", class_="all-figures")) == 1
    # The heat map: every cell carries its node, group and figure as hover text.
    cells = dom.titled("rect", "cell")
    assert len(cells) == 6
    for attrs, title in cells:
        assert title.startswith(f"node {attrs['data-node']} \u00b7 group {attrs['data-group']} \u00b7 ")
        assert f"{float(attrs['data-busbw']):.2f} GB/s" in title


def test_gpu_grid_shows_the_failing_gpu_with_its_test(tmp_path: Path) -> None:
    """The per-GPU grid renders: gpu-node-1's GPU 3 is a red cell reading `3 memory` (with DCGM's message on hover)
    in the open part of the grid, and turning that GPU's failure into a pass takes its red off the screen."""
    report = gpu_report()
    page = tmp_path / "report.html"
    page.write_text(report_html(report))
    dom = check_page(page, tmp_path / "report.png", "1280,2000")
    cells = [(attrs, i) for i, (tag, attrs) in enumerate(dom.tags) if tag == "td" and attrs.get("data-kind") == "fail"]
    failing = [(attrs, i) for attrs, i in cells if attrs["data-index"] == "3"]
    assert len(failing) == 1 and failing[0][0]["class"] == "gpu gpu-fail"
    assert failing[0][0]["title"].endswith(f"memory failed: {MEMORY_MESSAGE}")
    assert "3 memory" in [t.strip() for t in dom.text]
    # In the open part: after the first grid, before the fold of the nodes whose every GPU passed.
    order = [i for i, (tag, attrs) in enumerate(dom.tags) if tag in ("table", "details")
             and attrs.get("class") in ("gpu-grid", "gpu-passing")]
    assert order[0] < failing[0][1] < order[1]
    shown = [(a["data-index"], a["data-kind"]) for tag, a in dom.tags if tag == "td" and a.get("data-kind") not in
             (None, "pass")]
    assert shown == [("3", "fail"), ("6", "warn"), ("5", "lacking"), ("7", "missing")]  # level 2; level 3 all pass
    red = dom.colours.get(_rgb(FAIL_RED), 0)
    passed = report["categories"][0]["evidence"]["gpus"][11]
    passed.update(outcome="pass", failures=[])
    page.write_text(report_html(report))
    assert red - check_page(page, tmp_path / "passed.png", "1280,2000").colours.get(_rgb(FAIL_RED), 0) > 1000


def test_burn_in_chart_shows_the_failing_gpu_series_and_its_finding(tmp_path: Path) -> None:
    """gpu-node-002's GPU 5 (0.9x, failing node-median) is a red line in its node's chart, in the open part of the
    section, with its finding beside it; the same GPU passing takes its red line off the screen."""
    report = burn_in_report()
    page = tmp_path / "report.html"
    page.write_text(report_html(report))
    dom = check_page(page, tmp_path / "report.png", "1280,2400")
    order = [(tag, attrs) for tag, attrs in dom.tags if (tag, attrs.get("class")) in (
        ("figure", "burn-in-node"), ("path", "gpu-series gpu-series-fail"), ("details", "burn-in-passing"))]
    figures = [attrs.get("data-node") for tag, attrs in order if tag == "figure"]
    assert figures == ["gpu-node-002", "gpu-node-003", "gpu-node-004", "gpu-node-001"]
    # The failing line sits in gpu-node-002's figure, before the fold of the nodes whose every GPU passed.
    assert order[1] == ("path", {"class": "gpu-series gpu-series-fail", "data-gpu": "5", "data-outcome": "fail",
                                 "d": order[1][1]["d"], "fill": "none", "stroke": FAIL_RED, "stroke-width": "2.5"})
    assert [tag for tag, _a in order].index("details") > 1
    text = [t.strip() for t in dom.text if t.strip()]
    assert ("gpu-node-002 GPU 5: node-median: median 542.7 TFLOPS is 9.2% below the node median 598.0 in windows "
            "2-21 (fail above 5%)") in text
    assert "floor 490.0 provisional" in text
    red = dom.colours.get(_rgb(FAIL_RED), 0)
    report["categories"][0]["burnIn"]["nodes"][1]["gpus"][5]["outcome"] = "pass"
    page.write_text(report_html(report))
    assert red - check_page(page, tmp_path / "passed.png", "1280,2400").colours.get(_rgb(FAIL_RED), 0) > 300


def test_configuration_shows_the_drift_table_and_a_finding(tmp_path: Path) -> None:
    """The node-drift section renders: the NIC-firmware outlier is an amber row of the drift table under its
    majority (marked, with its count), and gpu-node-001's ECC finding is a row with its red severity, both in the
    open part of the page; the finding passing takes that red off the screen."""
    report = config_report()
    page = tmp_path / "report.html"
    page.write_text(report_html(report))
    dom = check_page(page, tmp_path / "report.png", "1280,2400")
    rows = [(a["data-value"], a["data-count"], a["class"]) for a in dom.having("tr") if "data-value" in a]
    assert rows[:2] == [("28.39.1002", "7", "drift-majority"), ("28.40.1000", "1", "drift-outlier")]
    text = [t.strip() for t in dom.text if t.strip()]
    assert "majority" in text and "7/8 nodes" in text and "1/8 nodes" in text
    # The outlier's row and the drift table lie outside any fold; so does the failing node's finding.
    folds = [i for i, (tag, a) in enumerate(dom.tags) if tag == "details"]
    outlier = next(i for i, (tag, a) in enumerate(dom.tags) if a.get("data-value") == "28.40.1000")
    ecc = next(i for i, (tag, a) in enumerate(dom.tags) if tag == "tbody" and a.get("data-node") == "gpu-node-001")
    assert outlier < folds[0] < ecc < folds[1]
    assert dom.having("tbody", class_="cfg-node", **{"data-node": "gpu-node-001", "data-outcome": "fail"})
    assert "ecc_current" in text and "enable ECC: `nvidia-smi -i 2 -e 1` and reboot" in text
    # Drawn, not only present: the outlier's amber and the failing severities' red.
    assert dom.colours.get(_rgb(OUTLIER_AMBER), 0) > 1000
    red = dom.colours.get(_rgb(FAIL_RED), 0)
    for node in report["categories"][0]["configuration"]["nodes"]:
        for finding in node["findings"]:
            finding["outcome"] = "pass" if finding["outcome"] == "fail" else finding["outcome"]
    page.write_text(report_html(report))
    assert red - check_page(page, tmp_path / "passed.png", "1280,2400").colours.get(_rgb(FAIL_RED), 0) > 1000
