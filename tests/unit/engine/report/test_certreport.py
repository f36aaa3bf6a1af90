"""report: CertReport JSON, JUnit XML and Markdown from per-category Workflow data, against golden files."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.report import certreport, junit, markdown

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
    assert junit.junit_xml(got) == path.with_suffix(".xml").read_text()
    assert markdown.markdown(got) == path.with_suffix(".md").read_text()


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_junit_counts(path: Path) -> None:
    """The suite totals agree with the testcases they hold (CI tools trust the attributes)."""
    got = _build(path)[1]
    root = ET.fromstring(junit.junit_xml(got))
    for suite in [root, *root.findall("testsuite")]:
        cases = list(suite.iter("testcase"))
        assert int(suite.get("tests")) == len(cases)
        assert int(suite.get("failures")) == sum(1 for c in cases if c.find("failure") is not None)
        assert int(suite.get("skipped")) == sum(1 for c in cases if c.find("skipped") is not None)


# NVCRE's CertReport fields (surroundings.md §3.5, user-docs §3.8); our additions are listed apart.
REPORT = {"title", "name", "platform", "gpu", "totalNodes", "excludedNodes", "exclusionReason", "categories",
          "failedNodes", "result", "nodeResults"}
REPORT_OURS = {"created", "gpuProduct", "remedies"}
CATEGORY = {"domain", "variant", "status", "failureReason", "runtime", "testScale", "nodesPerJob", "jobs", "mnnvl",
            "failedGroups", "cliques", "domains", "bandwidth", "transport", "groupBandwidth", "iterations"}
OURS = {"workflow", "failureCondition", "nodes", "diagnose", "diagnoseRounds", "image", "threshold", "source",
        "sourcePath"}
REMEDY = {"severity", "action"}  # ours, beside every reason (report/remedies.py)
ITEMS = {"failedNodes": {"name", "reason", "message"}, "nodeResults": {"name", "group", "rack", "status"}}
CATEGORY_ITEMS = {"bandwidth": {"size", "algBW", "busBW", "samples"},
                  "groupBandwidth": {"groupName", "nodes", "busBW", "transport", "belowMin", "failed", "curve"},
                  "domains": {"name", "nodeCount", "goodput", "tflops", "stepTime"},
                  "iterations": {"number", "status", "duration"},
                  "diagnoseRounds": {"round", "stage", "groups", "passed", "failed"}}


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_nvcre_shape(path: Path) -> None:
    """Every case has NVCRE's field names and values: Passed/Failed nodes, Enabled/Disabled MNNVL, a failure log
    object, one failedNodes entry per node, and no reason of our own."""
    got = _build(path)[1]
    assert set(got) == REPORT | REPORT_OURS
    for key, fields in ITEMS.items():
        assert all(set(item) - REMEDY == fields for item in got[key])
    assert all(set(e) == ITEMS["failedNodes"] | REMEDY for e in got["failedNodes"] if e["reason"])
    assert {r["reason"] for r in got["remedies"]} >= {e["reason"] for e in got["failedNodes"]}
    assert {n["status"] for n in got["nodeResults"]} <= {"Passed", "Failed"}
    names = [e["name"] for e in got["failedNodes"]]
    assert names == sorted(set(names))
    for cat in got["categories"]:
        assert CATEGORY <= set(cat) <= CATEGORY | OURS
        for key, fields in CATEGORY_ITEMS.items():
            assert all(set(item) == fields for item in cat.get(key, []))
        assert cat["mnnvl"] in ("Enabled", "Disabled", "")
        for group in cat["failedGroups"]:
            assert set(group) - {"failureLog"} - REMEDY == {"name", "nodeCount", "nodes", "reason"}
            assert REMEDY <= set(group) or not group["reason"]
            assert set(group.get("failureLog", {})) <= {"podName", "nodeName", "exitCode", "reason", "tail"}
        assert "GroupFailed" not in {v["reason"] for v in cat["nodes"].values()}


@pytest.mark.parametrize("seconds, text", [(0, "0s"), (45, "45s"), (60, "1m0s"), (3723, "1h2m3s"), (-5, "0s")])
def test_go_duration(seconds: int, text: str) -> None:
    assert certreport.go_duration(seconds) == text


def test_a_category_with_evidence_carries_it_and_one_without_has_no_key() -> None:
    evidence = {"state": "final", "rows": 24, "shards": 1, "truncated": 0, "partial": [], "gpus": []}
    base = {"domain": "diagnostics", "variant": "dcgm-level2", "workflow": None, "succeeded": [], "failed": [],
            "jobs": {}, "measurements": []}
    report = certreport.build_report("cert", [{**base, "evidence": evidence}, {**base, "variant": "nccl"}])
    assert report["categories"][0]["evidence"] == evidence
    assert "evidence" not in report["categories"][1]
