"""Goodput arithmetic (goodput.py), table-driven from data/goodput/arithmetic.yaml."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.logs import goodput
from ansible_collections.cre.certification.plugins.module_utils.engine.logs.goodput_log import Step

CASES = yaml.safe_load((Path(__file__).parents[1] / "data" / "goodput" / "arithmetic.yaml").read_text())
T0 = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)


def steps(table: list[list]) -> list[Step]:
    return [Step(global_step=n, step_timing=float(timing), elapsed=0.0, epoch=0, loss=0.0, tflops=float(tflops),
                 warmup=warmup, ts=None if at is None else T0 + timedelta(seconds=at))
            for n, timing, warmup, at, tflops in table]


def ids(table: list[dict]) -> list[str]:
    return [case["id"] for case in table]


@pytest.mark.parametrize("case", CASES["goodput"], ids=ids(CASES["goodput"]))
def test_goodput(case):
    assert goodput.fmt6(goodput.goodput(*map(float, case["args"]))) == goodput.fmt6(case["ratio"])


@pytest.mark.parametrize(("value", "text"), CASES["fmt6"])
def test_fmt6(value, text):
    assert goodput.fmt6(value) == text


@pytest.mark.parametrize("case", CASES["reflag_warmup"], ids=ids(CASES["reflag_warmup"]))
def test_reflag_warmup(case):
    window = steps(case["steps"])
    flagged = goodput.reflag_warmup(window, case["base"], case["warmup_steps"])
    assert [s.warmup for s in flagged] == case["flags"]
    assert [s.global_step for s in flagged] == [s.global_step for s in window]


@pytest.mark.parametrize("case", CASES["last_step_time"], ids=ids(CASES["last_step_time"]))
def test_last_step_time(case):
    when = goodput.last_step_time(steps(case["steps"]))
    assert (when.isoformat() if when else None) == case["time"]


@pytest.mark.parametrize("case", CASES["avg_step_time"], ids=ids(CASES["avg_step_time"]))
def test_avg_step_time(case):
    assert goodput.avg_step_time(steps(case["steps"])) == pytest.approx(case["avg"])


@pytest.mark.parametrize("case", CASES["avg_tflops"], ids=ids(CASES["avg_tflops"]))
def test_avg_tflops(case):
    assert goodput.avg_tflops(steps(case["steps"])) == pytest.approx(case["avg"])


@pytest.mark.parametrize("case", CASES["accumulate_non_warmup"], ids=ids(CASES["accumulate_non_warmup"]))
def test_accumulate_non_warmup(case):
    total, watermark = goodput.accumulate_non_warmup(float(case["total"]), case["watermark"], steps(case["steps"]),
                                                     case["log_interval"])
    assert (pytest.approx(total), watermark) == tuple(case["result"])
