"""The fleet report: a row per host from its report and status, the error that stopped a host, merged slices."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.report import fleet, fleet_html, fleet_md

DATA = Path(__file__).parents[1] / "data" / "report"
STARTED, FINISHED = "2026-12-01T10:00:00Z", "2026-12-01T10:02:03Z"


def report(name: str) -> dict:
    return json.loads((DATA / f"{name}.json").read_text())


def reported(**extra) -> dict:
    return {"state": "reported", "started": STARTED, "finished": FINISHED, "timedOut": False, **extra}


def errored(message: str) -> dict:
    return {"state": "error", "started": STARTED, "finished": FINISHED, "task": "Apply the CRDs", "message": message}


@pytest.mark.parametrize(("message", "kind"), [
    ("Task failed: Module failed: HTTPSConnectionPool(host='127.0.0.1', port=1): Max retries exceeded with url: "
     "/version (Caused by NewConnectionError(... [Errno 111] Connection refused))", "unreachable"),
    ("API error 403 Forbidden: certifications.nvcre.nvidia.com is forbidden: User \"ci\" cannot create", "forbidden"),
    ("API error 401 Unauthorized: Unauthorized", "unauthorized"),
    ("connecting to the cluster: Invalid kube-config file. No configuration found.", "unreachable"),
    ("Read timed out. (read timeout=30)", "timed out"),
    ('Unknown certification category: "x/y"', "failed"),
])
def test_error_kind(message: str, kind: str) -> None:
    assert fleet.error_kind(message) == kind


def test_a_reported_host_row() -> None:
    row = fleet.host_row("east", "/r/east", report("failed"), reported())
    assert row == {
        "host": "east", "verdict": "FAILED", "name": "cert-b", "platform": "aws", "gpu": "h100", "totalNodes": 4,
        "categories": [{"category": "communication/nccl-all-reduce", "status": "Failed",
                        "failureReason": row["categories"][0]["failureReason"]},
                       {"category": "inference/dynamo-vllm", "status": "Succeeded", "failureReason": ""}],
        "categoriesPassed": 1, "categoriesTotal": 2,
        "failedNodes": [{"name": "node-1", "reason": "HardwareFailureDetected", "message": "XID 79 on GPU 3"}],
        "failingGpus": None, "gpuEvidence": None,  # no category of this report reads per-GPU evidence
        "configNodes": None,  # nor has a node-drift category
        "duration": "2m3s", "error": None, "folder": "/r/east", "comparison": None, "repeatOffenders": []}
    assert row["categories"][0]["failureReason"]  # the Workflow's Failed message


def test_an_error_hides_the_report_an_earlier_run_left() -> None:
    row = fleet.host_row("dead", "/r/dead", report("passed"), errored("Task failed: Module failed: Connection refused"))
    assert row["verdict"] == fleet.ERROR and row["categories"] == [] and row["failedNodes"] == []
    assert row["error"] == {"kind": "unreachable", "task": "Apply the CRDs", "message": "Connection refused",
                            "hint": fleet.HINTS["unreachable"]}
    assert row["name"] == "cert-a"  # which Certification it was, still


def test_timed_out_keeps_the_report_and_names_the_timeout() -> None:
    row = fleet.host_row("slow", "/r/slow", report("running"), reported(timedOut=True))
    assert row["verdict"] == "RUNNING" and row["error"]["kind"] == fleet.TIMED_OUT and row["categoriesTotal"]
    assert "timed out: the run hit its timeout (certify_timeout) (run the play again" in fleet.summary_line(row)


def test_no_report_and_no_status() -> None:
    row = fleet.host_row("ghost", "/r/ghost", None, None)
    assert row["verdict"] == fleet.ERROR and row["error"]["kind"] == "no report" and row["duration"] == ""


def test_duration_falls_back_to_the_category_runtimes() -> None:
    assert fleet.host_row("a", "/r/a", report("measured"), None)["duration"] == "40m0s"


def test_overall_is_the_worst_and_an_error_fails_the_fleet() -> None:
    rows = [fleet.host_row(h, "/r", report(n), reported()) for h, n in (("a", "passed"), ("b", "incomplete"))]
    assert fleet.build_fleet(rows)["result"] == "INCOMPLETE"
    rows.append(fleet.host_row("c", "/r", report("running"), reported()))
    assert fleet.build_fleet(rows)["result"] == "RUNNING"
    rows.append(fleet.host_row("d", "/r", None, errored("API error 403 Forbidden")))
    built = fleet.build_fleet(rows)
    assert built["result"] == "FAILED" and built["counts"] == {"ERROR": 1, "INCOMPLETE": 1, "PASSED": 1, "RUNNING": 1}


def test_rows_sorted_naturally_and_summary_names_every_host() -> None:
    rows = [fleet.host_row(h, "/r", report("passed"), reported()) for h in ("node-10", "node-2")]
    built = fleet.build_fleet(rows)
    assert [r["host"] for r in built["rows"]] == ["node-2", "node-10"]
    assert fleet.summary(built) == [
        "node-2: PASSED (1/1 categories passed, failed nodes: none, 2m3s)",
        "node-10: PASSED (1/1 categories passed, failed nodes: none, 2m3s)", "Fleet: PASSED (2 clusters)"]


def test_latest_run_wins_across_slices_then_the_later_dir() -> None:
    older, newer = reported(finished="2026-12-01T09:00:00Z"), reported(finished="2026-12-01T11:00:00Z")
    assert fleet.latest([(newer, 0.0, "first"), (older, 99e9, "second")]) == "first"
    assert fleet.latest([(None, 5.0, "first"), (None, 5.0, "second")]) == "second"
    assert fleet.latest([(None, 9.0, "first"), (None, 5.0, "second")]) == "first"


def test_fleet_markdown_and_html_show_every_host_and_escape() -> None:
    evil = "<b>east</b>|"
    reports = {evil: report("measured")}
    rows = [fleet.host_row(evil, "/r", reports[evil], reported()),
            fleet.host_row("dead", "/r", None, errored("Max retries exceeded <oops>"))]
    built = fleet.build_fleet(rows)
    page = fleet_html.fleet_html(built, reports)
    assert "<b>east</b>" not in page and "&lt;b&gt;east&lt;/b&gt;|" in page
    assert "unreachable: Max retries exceeded &lt;oops&gt;" in page
    assert page.count('<section class="cluster"') == 1 and page.count('class="cell"') == 4
    text = fleet_md.fleet_markdown(built, reports)
    assert "| <b>east</b>\\| | FAILED | cert-m | 1/2 |" in text
    assert "| dead | ERROR | - | - | - | - | - | 2m3s | unreachable: Max retries exceeded <oops> |" in text
    assert "| rack-a | node-0 847.12, node-1 847.12, node-2 400.00, node-3 400.00 |" in text
