"""Goodput log parsing (goodput_log.py), table-driven from data/goodput/."""
from __future__ import annotations

import copy
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.catalog.logprofiles import builtin_profile
from ansible_collections.cre.certification.plugins.module_utils.engine.logs.goodput_log import (
    GoodputParser,
    PendingSave,
    in_warmup,
)
from ansible_collections.cre.certification.plugins.module_utils.engine.logs.log_lines import LogProfileError

DATA = Path(__file__).parents[1] / "data"
WINDOWS = yaml.safe_load((DATA / "goodput" / "windows.yaml").read_text())
PROFILES = yaml.safe_load((DATA / "goodput" / "profiles.yaml").read_text())
# Names the tables use for the dataclass fields.
STEP_KEYS = {"global_step": "step", "step_timing": "timing"}
CHECKPOINT_KEYS = {"save_duration": "save"}


def plain(value: Any) -> Any:
    """Floats to 6 decimals, times to ISO."""
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def record(obj: Any, names: dict[str, str] | None = None) -> dict[str, Any] | None:
    if obj is None:
        return None
    return {(names or {}).get(k, k): plain(v) for k, v in asdict(obj).items()}


def subset(actual: dict[str, Any] | None, expected: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if actual is None or expected is None else {k: actual[k] for k in expected}


def profile_for(case: dict[str, Any]) -> dict[str, Any]:
    profile = builtin_profile(case["profile"]) or copy.deepcopy(WINDOWS["profiles"][case["profile"]])
    profile["spec"].update(case.get("spec", {}))
    profile["spec"]["patterns"].update(case.get("patterns", {}))
    return profile


def log_text(case: dict[str, Any]) -> str:
    if "log" in case:
        return (DATA / "logs" / case["log"]).read_text()
    if "repeat" in case:
        return "".join(case["repeat"]["line"].format(n=n) + "\n" for n in range(1, case["repeat"]["count"] + 1))
    return "".join(line + "\n" for line in case["lines"])


@pytest.mark.parametrize("case", WINDOWS["cases"], ids=lambda c: c["id"])
def test_parse(case):
    carried = case.get("carried_save")
    pending = carried and PendingSave(carried["step"], carried["path"], datetime.fromisoformat(carried["ts"]))
    window = GoodputParser.from_profile(profile_for(case)).parse(log_text(case), case.get("persisted_base"), pending)
    checked = 0
    if "steps" in case:
        steps = [record(s, STEP_KEYS) for s in window.steps]
        assert [subset(a, e) for a, e in zip(steps, case["steps"])] == case["steps"]
        assert len(steps) == len(case["steps"])
        checked += 1
    if "checkpoints" in case:
        points = [record(c, CHECKPOINT_KEYS) for c in window.checkpoints]
        assert [subset(a, e) for a, e in zip(points, case["checkpoints"])] == case["checkpoints"]
        assert len(points) == len(case["checkpoints"])
        checked += 1
    for key, actual in [("last_checkpoint", record(window.last_checkpoint, CHECKPOINT_KEYS)),
                        ("pending_save", record(window.pending_save)), ("restore", record(window.restore))]:
        if key in case:
            assert subset(actual, case[key]) == case[key] and (actual is None) == (case[key] is None), key
            checked += 1
    scalars = {
        "application_start": plain(window.application_start_time), "last_log": plain(window.last_log_timestamp),
        "first_step": window.first_step and window.first_step.global_step,
        "last_step": window.last_step and window.last_step.global_step,
        "log_interval": window.log_interval, "warmup_base": window.warmup_base, "step_count": len(window.steps),
        "steps_head": window.steps[0].global_step if window.steps else None,
    }
    for key, actual in scalars.items():
        if key in case:
            assert actual == case[key], key
            checked += 1
    assert checked, "a case must expect something"


def goodput_profile(case: dict) -> dict:
    return {"metadata": {"name": "p"}, "spec": {"timestamp": {"layout": "2006-01-02"}, "patterns": case["patterns"]}}


@pytest.mark.parametrize("case", [c for c in PROFILES if "error" not in c], ids=lambda c: c["id"])
def test_from_profile_keeps_the_goodput_patterns(case):
    assert set(GoodputParser.from_profile(goodput_profile(case)).patterns) == set(case["patterns"]) - {
        "bandwidthResult", "networkTransport"}


@pytest.mark.parametrize("case", [c for c in PROFILES if "error" in c], ids=lambda c: c["id"])
def test_from_profile_refuses_a_bad_profile(case):
    with pytest.raises(LogProfileError) as err:
        GoodputParser.from_profile(goodput_profile(case))
    assert str(err.value) == case["error"]


def test_profile_settings_are_read():
    parser = GoodputParser.from_profile(builtin_profile("megatron-training"))
    assert (parser.layout, parser.warmup_steps, parser.log_interval) == ("2006-01-02 15:04:05.999999", 10, 10)
    bare = GoodputParser.from_profile({"metadata": {"name": "p"}, "spec": {"timestamp": {"layout": "x"}, "patterns": {}}})
    assert (bare.warmup_steps, bare.log_interval) == (0, 0)


@pytest.mark.parametrize(("step", "base", "warmup_steps", "expected"), [
    (10, 10, 10, True), (19, 10, 10, True), (20, 10, 10, False), (10, None, 10, False), (10, 10, 0, False),
])
def test_in_warmup(step, base, warmup_steps, expected):
    assert in_warmup(step, base, warmup_steps) is expected
