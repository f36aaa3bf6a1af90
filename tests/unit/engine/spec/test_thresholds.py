"""Performance thresholds (thresholds.py), table-driven from data/thresholds/cases.yaml."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.api import vocabulary
from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError
from ansible_collections.cre.certification.plugins.module_utils.engine.spec import thresholds

CASES = yaml.safe_load((Path(__file__).parents[1] / "data" / "thresholds" / "cases.yaml").read_text())


def ids(table: list[dict]) -> list[str]:
    return [case["id"] for case in table]


def test_registry_order():
    assert thresholds.KEYS == ("busBandwidthGBps", "algBandwidthGBps", "goodputRatio", "avgTFLOPsPerGPU",
                               "avgStepTimeSec")


@pytest.mark.parametrize("case", CASES["unknown_keys"], ids=ids(CASES["unknown_keys"]))
def test_unknown_keys_message(case):
    assert thresholds.unknown_keys_message(case["thresholds"]) == case["message"]


@pytest.mark.parametrize("case", CASES["compile"], ids=ids(CASES["compile"]))
def test_compile_error(case):
    assert thresholds.compile_error(case["expression"]) == case["error"]


@pytest.mark.parametrize("case", CASES["evaluate_all"], ids=ids(CASES["evaluate_all"]))
def test_evaluate_all(case):
    problem = thresholds.evaluate_all(case["thresholds"], case["measured"])
    assert (list(problem) if problem else None) == case["problem"]
    if problem:
        assert problem[0] in (vocabulary.THRESHOLD_VIOLATED, vocabulary.INVALID_THRESHOLD_EXPRESSION)


VALID = [c for c in CASES["validate"] if c["error"] is None]
INVALID = [c for c in CASES["validate"] if c["error"] is not None]


@pytest.mark.parametrize("case", VALID, ids=ids(VALID))
def test_validate_accepts(case):
    thresholds.validate(case["thresholds"], "spec.thresholds")


@pytest.mark.parametrize("case", INVALID, ids=ids(INVALID))
def test_validate_refuses_with_the_path(case):
    with pytest.raises(InputError) as err:
        thresholds.validate(case["thresholds"], "spec.thresholds")
    assert [err.value.path, err.value.rule] == case["error"]
