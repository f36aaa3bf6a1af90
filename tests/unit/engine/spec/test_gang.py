"""Gang-scheduling contract (workflow spec §5), table-driven from data/gang/cases.yaml over data/gang/_base.yaml."""
import copy
from pathlib import Path

import jsonpatch
import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import WorkflowFailure
from ansible_collections.cre.certification.plugins.module_utils.engine.spec import gang

DATA = Path(__file__).parents[1] / "data" / "gang"
BASE = yaml.safe_load((DATA / "_base.yaml").read_text())
CASES = yaml.safe_load((DATA / "cases.yaml").read_text())


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_gang_contract(case):
    doc = jsonpatch.apply_patch(BASE, case["patch"])
    stored = copy.deepcopy(doc)
    expect = case["expect"]
    if "error" in expect:
        with pytest.raises(WorkflowFailure) as err:
            gang.validate_resolved_job_template(doc["jobSpec"], doc["dependencies"], doc.get("gangScheduler"),
                                                case.get("group"))
        assert err.value.reason == "GangSchedulingConflict"
        assert err.value.message == expect["error"]
    else:
        working = gang.validate_resolved_job_template(doc["jobSpec"], doc["dependencies"], doc.get("gangScheduler"))
        assert (working.get("workloadMetadata") or {}).get("labels") == expect["labels"]
    assert doc == stored  # the stored spec is never patched, the runtime never repaired
