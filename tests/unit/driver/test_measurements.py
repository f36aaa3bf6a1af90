"""The driver keeps what it has read of a pod's log, so the final read fetches only the rest (pure parts)."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.driver.measurements import BandwidthPass, Memory, extend
from ansible_collections.cre.certification.plugins.module_utils.engine.catalog.logprofiles import builtin_profile
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile.measurement import LogRead, Read
from tests.unit.engine.reconcile.bandwidth_objects import LOG, job, measurement, pod

A = "2026-03-02T10:00:05.100000000Z one\n"
B = "2026-03-02T10:00:05.900000000Z two\n"
C = "2026-03-02T10:00:06.200000000Z three\n"
D = "2026-03-02T10:00:06.200000000Z three again\n"


def test_a_window_that_starts_a_second_early_adds_only_new_lines():
    assert extend(A + B, A + B + C) == A + B + C


def test_a_line_of_the_last_known_second_that_is_new_is_kept():
    assert extend(A + B + C, C + D) == A + B + C + D


def test_nothing_known_takes_the_window_whole():
    assert extend("", A + B) == A + B


def test_nothing_new_changes_nothing():
    assert extend(A + B + C, B + C) == A + B + C


class Reading(BandwidthPass):
    """The pass with the log API answered from a string: what each read asked for is kept."""

    def __init__(self, log: str) -> None:
        super().__init__(None, "ns", lambda name: None)  # type: ignore[arg-type]
        self.log, self.asked = log, []

    def read(self, read: Read) -> LogRead:
        self.asked.append(read.since)
        return LogRead(self.log)


def launcher(state: dict[str, Any], restarts: int = 0) -> list[dict[str, Any]]:
    return [{"metadata": {"name": "p"}, "status": {"startTime": "2026-03-02T10:00:05Z", "containerStatuses": [
        {"name": "node", "containerID": "containerd://1", "restartCount": restarts, "state": state}]}}]


ENDED = {"terminated": {"exitCode": 0, "finishedAt": "2026-03-02T10:00:07Z"}}
START = datetime(2026, 3, 2, 10, 0, 5, tzinfo=UTC)


def test_a_log_read_after_its_container_ended_is_not_read_again_at_the_end():
    reading, memory = Reading(A + B + C), Memory()
    assert reading.kept_read(Read("p", "node", START), memory, launcher(ENDED)).text == A + B + C
    assert reading.kept_read(Read("p", "node", None), memory, launcher(ENDED)).text == A + B + C
    assert reading.asked == [START]  # the final read made no request


def test_a_window_cut_at_a_full_page_is_read_again_at_the_end(monkeypatch):
    monkeypatch.setattr("ansible_collections.cre.certification.plugins.module_utils.driver.measurements.PAGE_BYTES",
                        len((A + B).encode()))
    reading, memory = Reading(A + B), Memory()
    reading.kept_read(Read("p", "node", START), memory, launcher(ENDED))
    reading.log = C
    assert reading.kept_read(Read("p", "node", None), memory, launcher(ENDED)).text == A + B + C
    assert len(reading.asked) == 2


def test_a_log_read_while_it_ran_or_before_a_restart_is_read_again_at_the_end():
    running = {"running": {"startedAt": "2026-03-02T10:00:05Z"}}
    for before, after in ((running, launcher(ENDED)), (ENDED, launcher(ENDED, restarts=1)), (ENDED, [])):
        reading, memory = Reading(A + B), Memory()
        reading.kept_read(Read("p", "node", START), memory, launcher(before))
        reading.log = A + B + C + D
        assert reading.kept_read(Read("p", "node", None), memory, after).text == A + B + C + D
        assert len(reading.asked) == 2, (before, after)


def test_the_next_window_starts_where_the_read_went_out_not_where_its_pass_began():
    # A pass's reads wait their turn: this one went out 20 s after its pass began. The next window starts a second
    # before the read, so what the wait covered is not read twice.
    reading = Reading(LOG)
    began = datetime.now(UTC) - timedelta(seconds=20)
    before = datetime.now(UTC)
    reading.reconcile(measurement(), job(), [pod()], builtin_profile("nccl-bandwidth"), "", began)
    anchor = reading.memory["j-bandwidth"].last_fetch
    assert anchor is not None and before <= anchor <= datetime.now(UTC)
    later = anchor + timedelta(seconds=30)
    reading.reconcile(measurement(), job(), [pod()], builtin_profile("nccl-bandwidth"), "", later)
    assert reading.asked[-1] == anchor - timedelta(seconds=1)
