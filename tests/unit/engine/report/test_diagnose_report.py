"""The diagnose findings in the report: stages and rounds, suspects, confirmed nodes, infrastructure faults
(spec measurements.md §6.2), in the Markdown section and the JUnit properties and testcases."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.report import certreport, junit, markdown

CASE = yaml.safe_load((Path(__file__).parents[1] / "data" / "report" / "diagnose.yaml").read_text())


def _report() -> dict:
    return certreport.build_report(CASE["name"], CASE["categories"])


def _suite(root: ET.Element, name: str) -> ET.Element:
    return next(s for s in root.findall("testsuite") if s.get("name") == name)


def test_json_keeps_the_status_and_adds_the_rounds_with_their_stages() -> None:
    confirmed, infra = _report()["categories"]
    assert confirmed["diagnose"] == CASE["categories"][0]["workflow"]["status"]["orchestration"]["diagnose"]
    assert [(r["round"], r["stage"], r["passed"], r["failed"]) for r in confirmed["diagnoseRounds"]] == [
        (1, "intra-screening", 1, 1), (2, "intra-screening-no-nvl", 1, 1), (3, "bisection", 1, 1),
        (4, "confirmation", 1, 1)]
    assert [r["stage"] for r in infra["diagnoseRounds"]] == ["intra-screening", "inter-screening", "bisection",
                                                             "cross-boundary"]
    assert infra["diagnoseRounds"][3]["groups"] == ["cross-0-mix0", "cross-0-mix1"]


def test_markdown_names_suspects_confirmed_nodes_and_infrastructure_faults() -> None:
    text = markdown.markdown(_report())
    first, second = text.split("## communication/nccl-alltoall")
    assert "### Diagnose" in first and "### Diagnose" in second
    assert "| Stage | complete |\n| Rounds | 4 |\n| Healthy Nodes | 7 |" in first
    assert "| Suspect Nodes | 2 (node-4, node-5) |" in first
    assert "| No-NVL Suspect Nodes | 4 (node-4, node-5, node-6, node-7) |" in first
    assert "| Confirmed Faulty Nodes | 1 (node-5) |" in first
    assert "| 2 | intra-screening-no-nvl | screen-no-nvl-rack-a, screen-no-nvl-rack-b | 1 | 1 |" in first
    assert "| rack-b (no NVL) | node-4, node-5, node-6, node-7 | Failed |" in first
    assert "| Infrastructure Fault |" not in first
    assert "| Infrastructure Faults | 1 |" in second and "| Confirmed Faulty Nodes | 0 |" in second
    assert "| rack-a/rack-b | cross-boundary | node-0, node-1 | node-2, node-3 |" in second
    # The section sits between the groups and the nodes of its category.
    assert first.index("| Group |") < first.index("### Diagnose") < first.index("| Node |")


def test_junit_carries_the_findings_as_properties_and_each_infrastructure_fault_as_a_failed_case() -> None:
    root = ET.fromstring(junit.junit_xml(_report()))
    suite = _suite(root, "communication/nccl-all-reduce")
    props = {p.get("name"): p.get("value") for p in suite.findall("properties/property")}
    assert props == {"diagnose.stage": "complete", "diagnose.rounds": "4",
                     "diagnose.healthyNodes": "node-0,node-1,node-2,node-3,node-4,node-6,node-7",
                     "diagnose.suspectNodes": "node-4,node-5",
                     "diagnose.noNVLSuspectNodes": "node-4,node-5,node-6,node-7",
                     "diagnose.confirmedNodes": "node-5", "diagnose.infrastructureFaults": "0"}
    roles = {c.get("name"): {p.get("name"): p.get("value") for p in c.iter("property")}.get("diagnose")
             for c in suite.findall("testcase")}
    assert roles["node-5"] == "confirmed" and roles["node-4"] == "healthy"  # a suspect cleared is healthy again
    infra = _suite(root, "communication/nccl-alltoall")
    (case,) = [c for c in infra.findall("testcase") if c.get("name", "").startswith("infrastructure ")]
    assert case.get("name") == "infrastructure rack-a/rack-b"
    failure = case.find("failure")
    assert failure is not None and failure.get("type") == "InfrastructureFault"
    assert failure.get("message") == ("infrastructure fault between [node-0, node-1] and [node-2, node-3] "
                                      "(cross-boundary)")
    assert infra.get("tests") == "5" and infra.get("failures") == "3"


def test_a_running_diagnose_shows_its_stage_and_the_suspects_still_under_suspicion() -> None:
    category = {"domain": "communication", "variant": "nccl-all-reduce", "succeeded": [], "failed": [],
                "workflow": {"metadata": {"name": "w"}, "status": {
                    "conditions": [{"type": "InProgress", "status": "True", "reason": "IterationCompleted",
                                    "message": "Bisection round 3: 2 groups"}],
                    "orchestration": {"currentIteration": 3, "groups": [
                        {"name": "bisect-3-0a", "nodes": ["n4", "n5"], "phase": "Running"},
                        {"name": "bisect-3-0b", "nodes": ["n6", "n7"], "phase": "Pending"}],
                        "diagnose": {"stage": "bisection", "round": 2, "healthyNodes": ["n0"],
                                     "suspectNodes": ["n4", "n5", "n6", "n7"], "noNVLSuspectNodes": ["n6"]}}}}}
    report = certreport.build_report("r", [category])
    assert report["result"] == certreport.RUNNING
    (cat,) = report["categories"]
    assert cat["diagnoseRounds"] == [{"round": 3, "stage": "bisection", "groups": ["bisect-3-0a", "bisect-3-0b"],
                                      "passed": 0, "failed": 0}]
    text = markdown.markdown(report)
    assert "| Stage | bisection |\n| Rounds | 2 |" in text and "| Confirmed Faulty Nodes | 0 |" in text
    roles = {c.get("name"): {p.get("name"): p.get("value") for p in c.iter("property")}.get("diagnose")
             for c in ET.fromstring(junit.junit_xml(report)).iter("testcase")}
    assert roles == {"n4": "suspect", "n5": "suspect", "n6": "no-nvl-suspect", "n7": "suspect"}
