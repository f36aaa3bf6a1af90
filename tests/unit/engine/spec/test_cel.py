"""CEL evaluation (cel.py), table-driven from data/cel/cases.yaml."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError
from ansible_collections.cre.certification.plugins.module_utils.engine.spec import cel

CASES = yaml.safe_load((Path(__file__).parents[1] / "data" / "cel" / "cases.yaml").read_text())


@pytest.mark.parametrize("case", [c for c in CASES if "error" not in c], ids=lambda c: c["id"])
def test_evaluate_bool(case):
    assert cel.evaluate_bool(case["expr"], case["vars"], "x.expression") is case["result"]


@pytest.mark.parametrize("case", [c for c in CASES if "error" in c], ids=lambda c: c["id"])
def test_evaluate_bool_refuses_with_the_path(case):
    with pytest.raises(InputError) as err:
        cel.evaluate_bool(case["expr"], case["vars"], "x.expression")
    assert str(err.value) == case["error"]


def test_programs_are_compiled_once():
    first = cel.compile_expression("domainCount > 7", "a")
    assert cel.compile_expression("domainCount > 7", "b") is first
    assert cel.compile_expression("domainCount > 8", "a") is not first


def test_when_variables_are_the_specs():
    assert sorted(cel.WHEN_VARIABLES) == ["domainCount", "gpuArchitecture", "platform", "topologyMode", "workloadKind"]
    cel.check_expression('platform == "" && domainCount == 0 && workloadKind == topologyMode', cel.WHEN_VARIABLES, "p")
