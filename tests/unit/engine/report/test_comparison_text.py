"""The "Compared with" section in Markdown, JUnit and HTML, and the fleet's change since the last certification:
shown from report["comparison"], "nothing to compare with yet" when `against` is null, nothing without the key."""
from __future__ import annotations

import copy
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from ansible_collections.cre.certification.plugins.module_utils.engine.report import (
    comparison_text,
    fleet,
    fleet_html,
    fleet_md,
    html,
    junit,
    markdown,
)

DATA = Path(__file__).parents[1] / "data" / "report"
COMM = "communication/nccl-all-reduce"


def load(name: str) -> dict:
    return json.loads((DATA / f"{name}.json").read_text())


def first_time() -> dict:
    """A first certification: nothing to compare with, a repeat offender from the reports before all the same."""
    report = load("compared")
    report["comparison"] = {"against": None, "rules": {}, "enforced": False, "figures": [], "refused": [],
                            "regressions": [], "regressedNodes": [], "summary": {"compared": 0, "regressed": 0,
                                                                                 "missing": 0, "refused": 0},
                            "repeatOffenders": report["comparison"]["repeatOffenders"],
                            "trend": report["comparison"]["trend"][:1]}
    return report


def section(text: str) -> str:
    return text[text.index("## Compared with"):text.index("## Remedies")]


def test_markdown_section_names_what_it_compared_with_and_every_figure() -> None:
    text = section(markdown.markdown(load("compared")))
    assert "certification cert-m-2 (2026-11-10T08:00:00Z) from configmap cert-m-2-report" in text
    assert "Figures: 6 compared, 3 regressed, 1 missing, 1 refused; reported, not enforced" in text
    assert "| communication/nccl-all-reduce | group-1 | groupBusBW | 400.00 | 845.00 | -52.7% | variance >= -0.05 " \
           "| regressed |" in text
    assert "| communication/nccl-all-reduce | - | busBW@268435456 | - | 500.00 | - | variance >= -0.05 | missing |" in text
    assert len(re.findall(r"^\| (communication|training)/", text, re.M)) == 7  # the figures
    assert re.findall(r"^\| (node-\d) \| communication/", text, re.M) == ["node-2", "node-3", "node-4", "node-5"]
    assert "- training/nemotron5-8b tflops: not compared: image differs" in text
    assert "| node-3 | failed 2 of the last 3 certifications (cert-m-1, cert-m-3): ThresholdViolation |" in text
    figures = [line.split(" | ")[2] for line in text.splitlines() if line.startswith(f"| {COMM} |")]
    assert figures == ["busBW@1048576", "busBW@268435456", "busBW@8589934592", "groupBusBW", "groupBusBW",
                       "groupBusBW"]  # sizes in natural order, then the groups'


def test_markdown_nothing_yet_and_nothing_at_all() -> None:
    text = section(markdown.markdown(first_time()))
    assert comparison_text.NOTHING_YET in text and "Figures:" not in text and "| Category | Group |" not in text
    assert "| node-3 | failed 2 of the last 3" in text  # repeat offenders need no baseline
    old = load("measured")
    assert "Compared with" not in markdown.markdown(old)
    assert comparison_text.markdown_lines({"comparison": "garbage"}) == []


def properties(xml: str, suite: str, node: str) -> dict[str, str]:
    root = ET.fromstring(xml)
    case = next(c for s in root.findall("testsuite") if s.get("name") == suite for c in s.findall("testcase")
                if c.get("name") == node)
    return {p.get("name"): p.get("value") for p in case.iter("property")}


def test_junit_properties_per_node() -> None:
    xml = junit.junit_xml(load("compared"))
    node2 = properties(xml, COMM, "node-2")
    assert node2["baseline.groupBusBW"] == "845.00" and node2["variance.groupBusBW"] == "-0.5266"
    assert node2["regression"] == "groupBusBW 400.00 is 52.7% below baseline 845.00 (rule variance >= -0.05)"
    assert node2["severity"] == "high" and "NICs and links" in node2["action"]
    assert "repeatOffender" not in node2
    assert properties(xml, COMM, "node-3")["repeatOffender"].startswith("failed 2 of the last 3 certifications")
    node0 = properties(xml, COMM, "node-0")
    assert node0["baseline.groupBusBW"] == "850.00" and "regression" not in node0 and "severity" not in node0
    assert properties(xml, "training/nemotron5-8b", "node-0")["baseline.goodput"] == "0.70"
    assert not any(k.startswith(("baseline.", "variance.")) for k in properties(xml, "training/nemotron5-8b", "node-2"))
    first = junit.junit_xml(first_time())
    assert properties(first, COMM, "node-3")["repeatOffender"] and "baseline.groupBusBW" not in properties(first, COMM,
                                                                                                           "node-0")
    assert "baseline." not in junit.junit_xml(load("measured"))


def test_html_compared_with_section_rows_refused_offenders() -> None:
    page = html.report_html(load("compared"))
    block = page[page.index('<section class="compared-with">'):page.index("</section>")]
    assert "certification cert-m-2 (2026-11-10T08:00:00Z)" in block
    assert block.count('<tr class="figure-row') == 7 and block.count("verdict-regressed") >= 3
    assert '<tr class="figure-row verdict-missing" data-group="" data-figure="busBW@268435456">' in block
    assert '<li>training/nemotron5-8b tflops: not compared: image differs' in block
    assert '<table class="regressed-nodes">' in block and '<table class="repeat-offenders">' in block
    assert "<td>node-3</td><td>failed 2 of the last 3 certifications" in block
    # The pictures and what the category ran with.
    assert page.count('<svg class="bandwidth-chart"') == 1 and page.count('<svg class="trend"') == 2
    assert "Image: <code>nvcr.io/nvidia/pytorch:25.01-py3</code>" in page and "Threshold: <code>value &gt;= 800</code>" in page
    assert "<td>NVIDIA-GB200</td>" in page and "<td>2026-12-01T08:00:00Z</td>" in page
    assert '<td class="sev-high">high</td>' in page and '<table class="remedies">' in page


def test_html_nothing_yet_and_nothing_at_all() -> None:
    page = html.report_html(first_time())
    assert comparison_text.NOTHING_YET in page and '<table class="compared">' not in page
    assert '<table class="repeat-offenders">' in page and page.count('<svg class="trend"') == 1
    old = html.report_html(load("measured"))
    assert "Compared with" not in old and '<svg class="trend"' not in old
    assert old.count('<svg class="bandwidth-chart"') == 1  # the combined table, drawn


def test_fleet_shows_the_change_since_the_last_certification_and_repeat_offenders() -> None:
    reports = {"north": load("compared"), "south": first_time(), "east": load("measured")}
    rows = [fleet.host_row(host, f"/r/{host}", report, None) for host, report in reports.items()]
    built = fleet.build_fleet(rows)
    north = next(r for r in built["rows"] if r["host"] == "north")
    assert north["comparison"] == {"against": reports["north"]["comparison"]["against"],
                                   "summary": {"compared": 6, "regressed": 3, "missing": 1, "refused": 1}}
    assert north["repeatOffenders"] == [{"name": "node-3", "failed": 2, "of": 3,
                                         "certifications": ["cert-m-1", "cert-m-3"], "reasons": ["ThresholdViolation"]}]
    assert fleet.since_text(north) == "vs certification cert-m-2: 3 regressed, 1 missing of 6 compared, 1 refused"
    assert fleet.since_text(next(r for r in built["rows"] if r["host"] == "south")) == "nothing to compare with yet"
    east = next(r for r in built["rows"] if r["host"] == "east")
    assert east["comparison"] is None and fleet.since_text(east) == "" and fleet.offenders_text(east) == ""
    text = fleet_md.fleet_markdown(built, reports)
    assert "Since the last certification: vs certification cert-m-2: 3 regressed, 1 missing of 6 compared" in text
    assert "Since the last certification: nothing to compare with yet" in text
    assert text.count("| node-3 | failed 2 of the last 3 certifications") == 2
    page = fleet_html.fleet_html(built, reports)
    assert '<td class="since">vs certification cert-m-2: 3 regressed' in page
    assert '<td class="offenders">node-3 (2 of 3)</td>' in page
    assert page.count('<section class="compared-with">') == 2


def test_readers_never_crash_on_partial_comparisons() -> None:
    report = copy.deepcopy(load("compared"))
    report["comparison"] = {"against": {"kind": "baseline"}, "figures": [{"figure": "groupBusBW"}],
                            "repeatOffenders": [{}], "trend": [{"category": COMM}], "regressions": [{}]}
    assert "baseline -" in markdown.markdown(report)
    assert "Compared with" in html.report_html(report)
    assert junit.junit_xml(report).startswith("<?xml")
    row = fleet.host_row("h", "/r/h", report, None)
    assert fleet.since_text(row) == "vs baseline -: 0 regressed, 0 missing of 0 compared, 0 refused"
