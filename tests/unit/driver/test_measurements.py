"""The driver keeps what it has read of a pod's log, so the final read fetches only the rest (pure parts)."""
from __future__ import annotations

from ansible_collections.cre.certification.plugins.module_utils.driver.measurements import extend

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
