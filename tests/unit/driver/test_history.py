"""driver/history.py and driver/annotate.py without a cluster: report files, which earlier reports count, the
repeat-offender window, the node annotations."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ansible_collections.cre.certification.plugins.module_utils.driver import annotate, history
from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError


def _report(name: str, created: str = "", **more: object) -> dict:
    return {"name": name, "created": created, "categories": [], **more}


def test_report_files_reads_files_and_folders_and_dates_old_reports_by_their_mtime(tmp_path: Path) -> None:
    (tmp_path / "fleet" / "east").mkdir(parents=True)
    (tmp_path / "fleet" / "west").mkdir()
    (tmp_path / "fleet" / "east" / "report.json").write_text(json.dumps(_report("e1", "2026-11-01T00:00:00Z")))
    old = tmp_path / "fleet" / "west" / "report.json"
    old.write_text(json.dumps({"name": "w1", "categories": []}))  # an older version: no `created`
    os.utime(old, (1_780_000_000, 1_780_000_000))
    single = tmp_path / "one.json"
    single.write_text(json.dumps(_report("s1", "2026-10-01T00:00:00Z")))
    found = history.report_files([str(tmp_path / "fleet"), str(single)], "history_reports")
    assert [(e.report["name"], e.report["created"]) for e in found] == [
        ("e1", "2026-11-01T00:00:00Z"), ("w1", "2026-05-28T20:26:40Z"), ("s1", "2026-10-01T00:00:00Z")]
    assert found[0].source == str(tmp_path / "fleet" / "east" / "report.json")


@pytest.mark.parametrize("content, problem", [("{", "reading"), ("[1]", "is not a certification report")])
def test_report_files_refuses_what_is_not_a_report_with_the_option_path(
        tmp_path: Path, content: str, problem: str) -> None:
    (tmp_path / "report.json").write_text(content)
    with pytest.raises(InputError) as caught:
        history.report_files([str(tmp_path)], "history_reports")
    assert caught.value.path == "history_reports[0]" and problem in caught.value.rule
    with pytest.raises(InputError) as missing:
        history.report_files([str(tmp_path / "nothing")], "history_reports")
    assert missing.value.path == "history_reports[0]" and "does not exist" in missing.value.rule


def test_earlier_keeps_older_reports_of_other_certifications_newest_first_once() -> None:
    current = _report("c3", "2026-12-01T00:00:00Z")
    found = [history.Earlier(r, src) for r, src in (
        (_report("c1", "2026-10-01T00:00:00Z"), "a"), (_report("c2", "2026-11-01T00:00:00Z"), "b"),
        (_report("c2", "2026-11-01T00:00:00Z"), "b-copy"),      # its snapshot and its kept copy
        (_report("c3", "2026-12-01T00:00:00Z"), "itself"),
        (_report("c4", "2026-12-02T00:00:00Z"), "later"))]
    assert [(e.report["name"], e.source) for e in history.earlier(current, found)] == [("c2", "b"), ("c1", "a")]


@pytest.mark.parametrize("option, window", [
    ({}, (2, 3)), ({"failed": 3, "of": 5}, (3, 5)), ({"failed": 1, "of": 1}, (1, 1))])
def test_repeat_window(option: dict, window: tuple[int, int]) -> None:
    assert history.repeat_window(option) == window


@pytest.mark.parametrize("option", [{"failed": 4, "of": 3}, {"failed": -1, "of": 3}])
def test_repeat_window_refuses_more_failures_than_runs(option: dict) -> None:
    with pytest.raises(InputError) as caught:
        history.repeat_window(option)
    assert caught.value.path == "repeat_offenders.failed"


def test_node_annotations_date_a_pass_and_clear_a_failures_validity() -> None:
    report = _report("c1", "2026-12-01T10:00:00Z", nodeResults=[{"name": "n1", "status": "Passed"},
                                                                {"name": "n2", "status": "Failed"}])
    out = annotate.node_annotations(report, "nvcre", 28)
    assert out["n1"] == {annotate.CERTIFICATION: "nvcre/c1", annotate.CERTIFIED_AT: "2026-12-01T10:00:00Z",
                         annotate.VERDICT: "Passed", annotate.CERTIFIED_UNTIL: "2026-12-29T10:00:00Z"}
    assert out["n2"][annotate.VERDICT] == "Failed" and out["n2"][annotate.CERTIFIED_UNTIL] is None
    assert annotate.node_annotations(_report("old"), "nvcre", 28) == {}  # no creation time, no stamp
