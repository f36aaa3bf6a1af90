"""The stamps of a simulated nccl-tests table (`workload_logs.cri`): never after the agent wrote the line, never so
far before it that a reader's next window (sinceTime, second precision, 1 s back from its last read) passes it."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tools.sim.logs import workload_logs

START = datetime(2026, 3, 2, 10, 0, 5, 100000, tzinfo=UTC)
LINES = [f"row {i}" for i in range(45)]  # about a table with its NCCL INFO lines: 4.5 s at a row per 100 ms


def stamps(text: str) -> list[datetime]:
    return [datetime.fromisoformat(line.split(" ", 1)[0][:26] + "+00:00") for line in text.splitlines()]


@pytest.mark.parametrize("after", [0.0, 0.2, 0.7, 3.0, 9.0])
def test_no_row_is_stamped_after_its_write_nor_long_before_it(after: float) -> None:
    written = START + timedelta(seconds=after)
    got = stamps(workload_logs.cri(LINES, START, written))
    assert len(got) == len(LINES)
    assert got == sorted(got)
    assert max(got) <= written
    assert min(got) >= written - workload_logs.BACKDATE


def test_rows_due_before_the_write_keep_the_pace_the_rest_come_out_at_the_write() -> None:
    written = START + timedelta(seconds=0.45)
    got = stamps(workload_logs.cri(LINES, START, written))
    assert got[:5] == [START + timedelta(milliseconds=100 * i) for i in range(5)]
    assert set(got[5:]) == {written}


@pytest.mark.parametrize("after", [0.05, 0.5, 1.0, 2.5, 6.0])
def test_a_reader_that_looked_just_before_the_write_sees_every_row_next_time(after: float) -> None:
    """Its last read went out an instant before the write; its next window starts 1 s before that, cut to the
    second (the kubelet's sinceTime): every row of the table is in it."""
    written = START + timedelta(seconds=after)
    last_read = written - timedelta(milliseconds=1)
    since = (last_read - timedelta(seconds=1)).replace(microsecond=0)
    assert all(stamp >= since for stamp in stamps(workload_logs.cri(LINES, START, written)))
