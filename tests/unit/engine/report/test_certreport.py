"""report: CertReport JSON, JUnit XML and Markdown from per-category Workflow data, against golden files."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.report import certreport

DATA = Path(__file__).parents[1] / "data" / "report"
CASES = sorted(DATA.glob("*.yaml"))


def _build(path: Path) -> tuple[dict, dict]:
    case = yaml.safe_load(path.read_text())
    return case, certreport.build_report(case["name"], case["categories"])


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_report(path: Path) -> None:
    case, got = _build(path)
    assert got["result"] == case["expect"]["result"]
    assert certreport.summary(got) == case["expect"]["summary"]
    assert json.loads(path.with_suffix(".json").read_text()) == got
    assert certreport.junit_xml(got) == path.with_suffix(".xml").read_text()
    assert certreport.markdown(got) == path.with_suffix(".md").read_text()


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_junit_counts(path: Path) -> None:
    """The suite totals agree with the testcases they hold (CI tools trust the attributes)."""
    got = _build(path)[1]
    root = ET.fromstring(certreport.junit_xml(got))
    for suite in [root, *root.findall("testsuite")]:
        cases = list(suite.iter("testcase"))
        assert int(suite.get("tests")) == len(cases)
        assert int(suite.get("failures")) == sum(1 for c in cases if c.find("failure") is not None)
        assert int(suite.get("skipped")) == sum(1 for c in cases if c.find("skipped") is not None)


@pytest.mark.parametrize("seconds, text", [(0, "0s"), (45, "45s"), (60, "1m0s"), (3723, "1h2m3s"), (-5, "0s")])
def test_go_duration(seconds: int, text: str) -> None:
    assert certreport.go_duration(seconds) == text
