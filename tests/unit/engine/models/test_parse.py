"""Models: valid objects dump to the expected Kubernetes JSON; bad ones raise InputError naming path and rule."""
from __future__ import annotations

import copy
from functools import partial
from pathlib import Path

import jsonpatch
import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine import models
from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError

DATA = Path(__file__).parents[1] / "data" / "models"
PARSE = {"workflow": models.parse_workflow, "job": models.parse_job, "certification": models.parse_certification,
         "logprofile": partial(models.parse, models.LogProfile),
         "bandwidthmeasurement": partial(models.parse, models.BandwidthMeasurement),
         "goodputmeasurement": partial(models.parse, models.GoodputMeasurement)}
BASES = yaml.safe_load((DATA / "bases.yaml").read_text())
VALID = yaml.safe_load((DATA / "valid.yaml").read_text())
INVALID = yaml.safe_load((DATA / "invalid.yaml").read_text())


@pytest.mark.parametrize("case", VALID, ids=[c["name"] for c in VALID])
def test_valid_dump(case):
    parse = PARSE[case["kind"]]
    expected = case.get("dump") or jsonpatch.apply_patch(case["input"], case["dump_patch"])
    dumped = models.dump(parse(copy.deepcopy(case["input"])))
    assert dumped == expected
    # A dump parses back to itself: round trips invent nothing.
    assert models.dump(parse(dumped)) == dumped


@pytest.mark.parametrize("base", sorted(BASES))
def test_bases_are_valid(base):
    assert models.dump(PARSE[base](copy.deepcopy(BASES[base])))["metadata"] == BASES[base]["metadata"]


@pytest.mark.parametrize("case", INVALID, ids=[c["name"] for c in INVALID])
def test_invalid_input(case):
    obj = case["replace"] if "replace" in case else jsonpatch.apply_patch(BASES[case["base"]], case["patch"])
    with pytest.raises(InputError) as err:
        PARSE[case["base"]](obj)
    assert case["error"] in str(err.value)


def test_several_problems_are_joined():
    obj = jsonpatch.apply_patch(BASES["workflow"], [{"op": "add", "path": "/spec/a", "value": 1},
                                                    {"op": "add", "path": "/spec/orchestration/iterations", "value": 0}])
    with pytest.raises(InputError) as err:
        models.parse_workflow(obj)
    assert err.value.path == "spec.orchestration.iterations"
    assert str(err.value) == ("spec.orchestration.iterations: Input should be greater than or equal to 1; "
                              "spec.a: unknown field")


@pytest.mark.parametrize("loc, path", [
    (("spec", "overrides", 2, "jobTemplatePatch", 0, "path"), "spec.overrides[2].jobTemplatePatch[0].path"),
    (("labels", "kai.scheduler/queue", "[key]"), 'labels["kai.scheduler/queue"]'),
    (("status", "orchestration", "groups", 0, "nodes"), "status.orchestration.groups[0].nodes"),
])
def test_field_path(loc, path):
    assert models.field_path(loc) == path


def test_the_models_api_version_type_is_the_vocabularys():
    from typing import get_args

    from ansible_collections.cre.certification.plugins.module_utils.engine.api.vocabulary import API_VERSION
    from ansible_collections.cre.certification.plugins.module_utils.engine.models.common import ApiVersion

    assert get_args(ApiVersion) == (API_VERSION,)
