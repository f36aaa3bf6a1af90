"""Log lines, kubelet timestamps, Go layouts and Go numbers (log_lines.py), table-driven from data/log_lines/."""
from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.logs import log_lines

DATA = Path(__file__).parents[1] / "data" / "log_lines"
TIMESTAMPS = yaml.safe_load((DATA / "timestamps.yaml").read_text())
LAYOUTS = yaml.safe_load((DATA / "layouts.yaml").read_text())
NUMBERS = yaml.safe_load((DATA / "numbers.yaml").read_text())


@pytest.mark.parametrize("case", TIMESTAMPS, ids=lambda c: c["id"])
def test_split_timestamp(case):
    when, rest = log_lines.split_timestamp(case["line"])
    assert (when.isoformat() if when else None, rest) == (case["time"], case["rest"])


@pytest.mark.parametrize("case", LAYOUTS, ids=lambda c: c["id"])
def test_parse_layout(case):
    when = log_lines.parse_layout(case["value"], case["layout"])
    assert (when.isoformat() if when else None) == case["time"]
    assert when is None or when.utcoffset().total_seconds() == 0


@pytest.mark.parametrize(("text", "value"), NUMBERS["int"], ids=repr)
def test_go_int(text, value):
    assert log_lines.go_int(text) == value


@pytest.mark.parametrize(("text", "value"), NUMBERS["float"], ids=repr)
def test_go_float(text, value):
    parsed = log_lines.go_float(text)
    assert (parsed is None) if value is None else math.isclose(parsed, value)


def test_go_float_reads_infinity_and_nan_as_go_does():
    assert log_lines.go_float("+Inf") == math.inf
    assert math.isnan(log_lines.go_float("NaN"))


@pytest.mark.parametrize(("text", "expected"), [
    ("a\nb\n", ["a", "b"]),
    ("a\r\nb", ["a", "b"]),
    ("a\n\nb", ["a", "", "b"]),
    ("a\x0bb\u2028c", ["a\x0bb\u2028c"]),  # only \n ends a line
    ("", []),
])
def test_lines(text, expected):
    assert list(log_lines.lines(text)) == expected


def test_compile_regex_is_ascii_and_words_errors():
    assert not log_lines.compile_regex(r"^\d+$", "x").match("٣")  # an Arabic-Indic digit is no RE2 \d
    with pytest.raises(log_lines.LogProfileError) as err:
        log_lines.compile_regex("(", "pattern trainingStep: invalid regex")
    assert str(err.value) == "pattern trainingStep: invalid regex: missing ), unterminated subpattern at position 0"
