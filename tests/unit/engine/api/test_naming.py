"""Naming rules (workflow spec §8.1, §10, §13), table-driven from data/naming/cases.yaml."""
from pathlib import Path

import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.api import naming

CASES = yaml.safe_load((Path(__file__).parents[1] / "data" / "naming" / "cases.yaml").read_text())


@pytest.mark.parametrize("case", CASES, ids=[f"{c['fn']}-{i}" for i, c in enumerate(CASES)])
def test_naming(case):
    result = getattr(naming, case["fn"])(*case["args"])
    assert result == case["expect"]
    if case["fn"] in ("truncate", "job_name", "workflow_name", "dependency_copy_name"):
        assert len(result) <= {"truncate": case["args"][-1], "job_name": 35, "workflow_name": 31}.get(case["fn"], 63)
