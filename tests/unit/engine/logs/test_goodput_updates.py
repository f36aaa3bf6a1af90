"""What goodput_log.py reads beyond NVCRE: progress-bar updates, redraws, records glued to a step line, counters
printed as floats, and the late note of an async save."""
from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.logs.goodput_log import (
    GoodputParser,
    GoodputWindow,
    updates,
)

PROFILE: dict[str, Any] = {"metadata": {"name": "t"}, "spec": {
    "timestamp": {"layout": "2006-01-02 15:04:05"},
    "patterns": {
        "trainingStep": {"regex": r"step=(?P<globalStep>\S+) it=(?P<iteration>\d+) t=(?P<stepTiming>[\d.]+)"},
        "checkpointSave": {"regex": r"save (?P<step>\d+) at (?P<path>\S+)"},
        "checkpointDone": {"regex": r"done (?P<step>\d+)(?: at (?P<path>\S+))?"},
        "checkpointRestore": {"regex": r"restore (?P<path>\S+)"},
    },
}}


def parse(lines: list[str], step_regex: str | None = None) -> GoodputWindow:
    profile = copy.deepcopy(PROFILE)
    if step_regex:
        profile["spec"]["patterns"]["trainingStep"]["regex"] = step_regex
    return GoodputParser.from_profile(profile).parse("".join(line + "\n" for line in lines))


def steps(window: GoodputWindow) -> list[tuple[int, float]]:
    return [(step.global_step, step.step_timing) for step in window.steps]


def test_each_carriage_return_update_is_read_at_its_lines_time():
    window = parse(["2025-01-01T00:00:05Z \rstep=1 it=1 t=2.5\rstep=2 it=2 t=2.0\r  50%| step=3 it=3 t=1.5",
                    "2025-01-01T00:00:09Z step=4 it=4 t=1.0"])
    assert steps(window) == [(1, 2.5), (2, 2.0), (3, 1.5), (4, 1.0)]
    assert [step.ts.second if step.ts else None for step in window.steps] == [5, 5, 5, 9]


def test_updates_keep_the_kubelet_time_for_every_piece():
    at = datetime(2025, 1, 1, 0, 0, 5, tzinfo=UTC)
    assert list(updates("2025-01-01T00:00:05Z a\rb\nc\r\n")) == [(at, "a"), (at, "b"), (None, "c")]


def test_a_redraw_of_the_step_just_read_is_not_a_new_step():
    window = parse(["step=1 it=1 t=9.0", "step=1 it=1 t=9.0", "step=2 it=2 t=3.0", "step=2 it=2 t=3.0",
                    "step=1 it=1 t=4.0"])
    assert steps(window) == [(1, 9.0), (2, 3.0), (1, 4.0)]  # only the step just read is a redraw


def test_a_restore_lets_the_same_step_count_again():
    window = parse(["step=5 it=5 t=1.0", "restore /ck", "step=5 it=5 t=2.0"])
    assert steps(window) == [(5, 1.0), (5, 2.0)]


def test_step_lines_without_a_step_number_all_count():
    window = parse(["t=1.0", "t=1.0", "t=1.0"], step_regex=r"t=(?P<stepTiming>[\d.]+)")
    assert steps(window) == [(0, 1.0), (0, 1.0), (0, 1.0)]


@pytest.mark.parametrize(("printed", "step"), [
    ("49", 49), ("49.00", 49), ("9.000", 9), ("2e+3", 2000), ("1.1e+4", 11000), ("2.5", 7), ("x", 7), ("inf", 7),
])
def test_a_counter_printed_as_a_whole_float_is_that_number(printed, step):
    assert steps(parse([f"step={printed} it=7 t=1.0"])) == [(step, 1.0)]  # else the iteration


def test_a_record_glued_after_a_step_line_is_read_too():
    window = parse(["2025-01-01T00:00:05Z step=3 it=3 t=1.0][NeMo I] save 3 at /ck/3",
                    "2025-01-01T00:00:08Z done 3 save 9 at /never"])
    assert steps(window) == [(3, 1.0)]
    assert [(c.step, c.path, c.save_duration) for c in window.checkpoints] == [(3, "/ck/3", 3.0)]


def test_text_before_a_step_line_is_no_event():
    window = parse(["2025-01-01T00:00:05Z save 3 at /ck/3 step=3 it=3 t=1.0"])
    assert window.pending_save is None and window.checkpoints == []


def test_the_late_note_of_a_recorded_save_adds_no_checkpoint_and_answers_no_open_save():
    window = parse(["2025-01-01T00:00:00Z save 100 at /ck", "2025-01-01T00:00:02Z done 100",
                    "2025-01-01T00:00:30Z save 200 at /ck", "2025-01-01T00:00:31Z done 100 at /ck",
                    "2025-01-01T00:00:34Z done 200 at /ck"])
    assert [(c.step, c.path, c.save_duration) for c in window.checkpoints] == [(100, "/ck", 2.0), (200, "/ck", 4.0)]
    assert window.last_checkpoint == window.checkpoints[-1] and window.pending_save is None


def test_the_late_note_fills_a_missing_path():
    window = parse(["2025-01-01T00:00:00Z save 100 at /ck", "2025-01-01T00:00:02Z done 100 at /done",
                    "2025-01-01T00:00:40Z done 100 at /late"])
    assert [(c.step, c.path) for c in window.checkpoints] == [(100, "/done")]  # a path it has stays
    window = parse(["2025-01-01T00:00:02Z done 100", "2025-01-01T00:00:40Z done 100 at /late"])
    assert [(c.step, c.path, c.save_duration) for c in window.checkpoints] == [(100, "/late", 0.0)]
    assert window.last_checkpoint == window.checkpoints[0]


def test_a_done_line_for_the_open_save_of_the_same_step_completes_it():
    window = parse(["2025-01-01T00:00:00Z save 100 at /ck", "2025-01-01T00:00:02Z done 100",
                    "2025-01-01T00:01:00Z save 100 at /ck", "2025-01-01T00:01:05Z done 100"])
    assert [(c.step, c.save_duration) for c in window.checkpoints] == [(100, 2.0), (100, 5.0)]
