"""The heartbeat: a line after `interval` quiet seconds, naming elapsed time, running groups, the longest Job."""
from __future__ import annotations

from datetime import UTC, datetime

from ansible_collections.cre.certification.plugins.module_utils.driver.heartbeat import Heartbeat, heartbeat_line

WF = {"status": {"orchestration": {"groups": [
    {"name": "group-0", "phase": "Running", "jobName": "wf-group-0-iter-1", "startTime": "2026-12-01T10:01:00Z"},
    {"name": "group-1", "phase": "Running", "jobName": "wf-group-1-iter-1", "startTime": "2026-12-01T10:00:00Z"},
    {"name": "group-2", "phase": "Succeeded"}]}}}


def test_line() -> None:
    now = datetime(2026, 12, 1, 10, 4, 10, tzinfo=UTC)
    assert heartbeat_line("nvcre/wf", WF, now, 305.7) == (
        "nvcre/wf: still running after 5m5s, 2/3 groups running, longest-running Jobs wf-group-1-iter-1 (4m10s), "
        "wf-group-0-iter-1 (3m10s)")
    one = {"status": {"orchestration": {"groups": WF["status"]["orchestration"]["groups"][1:]}}}
    assert heartbeat_line("nvcre/wf", one, now, 305.7) == (
        "nvcre/wf: still running after 5m5s, 1/2 groups running, longest-running Job wf-group-1-iter-1 (4m10s)")
    assert heartbeat_line("nvcre/wf", {}, now, 2) == "nvcre/wf: still running after 2s, 0/0 groups running"
    done = {"status": {"conditions": [{"type": "Succeeded", "status": "True"}]}}
    assert heartbeat_line("nvcre/wf", done, now, 61) == "nvcre/wf: Succeeded, waiting for the final measurements after 1m1s"


def test_beats_only_after_a_quiet_interval() -> None:
    shown: list[str] = []
    clock = [0.0]
    beat = Heartbeat(shown.append, 300, lambda: clock[0])
    clock[0] = 299
    beat.beat(lambda: "hb")
    beat.show("progress")  # a progress line resets the interval
    clock[0] = 598
    beat.beat(lambda: "hb")
    clock[0] = 599
    beat.beat(lambda: "hb")
    beat.beat(lambda: "hb")
    assert shown == ["progress", "hb"]


def test_at_five_thousand_groups_it_names_the_three_slowest() -> None:
    groups = [{"name": f"group-{i}", "phase": "Running", "jobName": f"wf-group-{i}-iter-1",
               "startTime": f"2026-12-01T10:{i % 60:02d}:00Z"} for i in range(5000)]
    line = heartbeat_line("nvcre/wf", {"status": {"orchestration": {"groups": groups}}},
                          datetime(2026, 12, 1, 11, 0, 0, tzinfo=UTC), 3600)
    assert line == ("nvcre/wf: still running after 1h0m0s, 5000/5000 groups running, longest-running Jobs "
                    "wf-group-0-iter-1 (1h0m0s), wf-group-1020-iter-1 (1h0m0s), wf-group-1080-iter-1 (1h0m0s)")
