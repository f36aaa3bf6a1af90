"""Strategic merge patch and dependency merge, table-driven from data/merge/*.yaml."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.spec import merge

DATA = Path(__file__).parents[1] / "data" / "merge"
SCHEMAS = {"jobTemplate": merge.JOB_TEMPLATE_SCHEMA, "podSpec": merge.POD_SPEC_SCHEMA}


def load(name: str) -> list[dict]:
    return yaml.safe_load((DATA / name).read_text())


STRATEGIC = load("strategic.yaml")


@pytest.mark.parametrize("case", [c for c in STRATEGIC if "error" not in c], ids=lambda c: c["id"])
def test_strategic_merge(case):
    original, patch = copy.deepcopy(case["original"]), copy.deepcopy(case["patch"])
    assert merge.strategic_merge(original, patch, SCHEMAS[case.get("schema", "jobTemplate")]) == case["expect"]
    assert (original, patch) == (case["original"], case["patch"])


@pytest.mark.parametrize("case", [c for c in STRATEGIC if "error" in c], ids=lambda c: c["id"])
def test_strategic_merge_refuses(case):
    original, patch = copy.deepcopy(case["original"]), copy.deepcopy(case["patch"])
    with pytest.raises(merge.MergeError) as err:
        merge.strategic_merge(original, patch, SCHEMAS[case.get("schema", "jobTemplate")])
    assert str(err.value) == case["error"]
    assert (original, patch) == (case["original"], case["patch"])


@pytest.mark.parametrize("case", load("objects.yaml"), ids=lambda c: c["id"])
def test_merge_objects(case):
    base, patch = copy.deepcopy(case["base"]), copy.deepcopy(case["patch"])
    assert merge.merge_objects(base, patch) == case["expect"]
    assert (base, patch) == (case["base"], case["patch"])
